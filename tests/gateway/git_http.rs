//! git itself through svcgate: `git clone` and a push of several megabytes over HTTP, against a backend that serves
//! a real repository with `git http-backend` behind a small CGI server written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::convert::Infallible;
use std::net::SocketAddr;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use crate::common::{within, TestGateway};
use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{combinators::BoxBody, BodyExt, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::unix::pipe;
use tokio::net::TcpListener;

type CgiBody = BoxBody<Bytes, std::io::Error>;

/// What the backend saw of one request: method, path and query, and its framing headers.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    target: String,
    content_length: Option<String>,
    transfer_encoding: Option<String>,
}

/// A CGI server that runs `git http-backend` once per request on the repositories under `root`.
async fn git_backend(root: PathBuf, home: PathBuf) -> (SocketAddr, Arc<Mutex<Vec<Seen>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let root = root.clone();
            let home = home.clone();
            let log = Arc::clone(&log);
            tokio::spawn(async move {
                let service = service_fn(move |request: Request<Incoming>| {
                    let (root, home, log) = (root.clone(), home.clone(), Arc::clone(&log));
                    async move { Ok::<_, Infallible>(cgi(request, &root, &home, &log).await) }
                });
                let _ = auto::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    (address, seen)
}

fn header(request: &Request<Incoming>, name: &str) -> Option<String> {
    request
        .headers()
        .get(name)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned)
}

/// Runs one request through `git http-backend` (RFC 3875): the request's body is streamed to its standard input,
/// its standard output is parsed for the CGI header section (with `Status:`) and the rest streamed back.
async fn cgi(
    request: Request<Incoming>,
    root: &Path,
    home: &Path,
    log: &Mutex<Vec<Seen>>,
) -> Response<CgiBody> {
    log.lock().unwrap().push(Seen {
        method: request.method().to_string(),
        target: request.uri().to_string(),
        content_length: header(&request, "content-length"),
        transfer_encoding: header(&request, "transfer-encoding"),
    });
    let mut command = Command::new("git");
    command
        .arg("http-backend")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GATEWAY_INTERFACE", "CGI/1.1")
        .env("SERVER_PROTOCOL", "HTTP/1.1")
        .env("GIT_PROJECT_ROOT", root)
        .env("GIT_HTTP_EXPORT_ALL", "1")
        .env("REMOTE_USER", "tester")
        .env("REMOTE_ADDR", "127.0.0.1")
        .env("REQUEST_METHOD", request.method().as_str())
        .env("PATH_INFO", request.uri().path())
        .env("QUERY_STRING", request.uri().query().unwrap_or(""));
    // Without CONTENT_LENGTH (a chunked request) http-backend reads its input to the end.
    for (variable, name) in [
        ("CONTENT_TYPE", "content-type"),
        ("CONTENT_LENGTH", "content-length"),
        ("HTTP_CONTENT_ENCODING", "content-encoding"),
        ("HTTP_GIT_PROTOCOL", "git-protocol"),
    ] {
        if let Some(value) = header(&request, name) {
            command.env(variable, value);
        }
    }
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("git http-backend");
    // The pipes are read and written by the runtime; waiting for the process takes a blocking thread.
    let mut stdin = pipe::Sender::from_owned_fd(OwnedFd::from(child.stdin.take().unwrap())).unwrap();
    let mut body = request.into_body();
    tokio::spawn(async move {
        while let Some(Ok(frame)) = body.frame().await {
            if let Ok(data) = frame.into_data() {
                if stdin.write_all(&data).await.is_err() {
                    return;
                }
            }
        }
        // Dropping stdin ends the CGI's input.
    });
    let mut stdout =
        BufReader::new(pipe::Receiver::from_owned_fd(OwnedFd::from(child.stdout.take().unwrap())).unwrap());
    let mut response = Response::builder();
    let mut status = StatusCode::OK;
    loop {
        let mut line = String::new();
        if stdout.read_line(&mut line).await.unwrap() == 0 {
            break;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':').expect("a CGI header line");
        let value = value.trim();
        if name.eq_ignore_ascii_case("status") {
            status = value[..3].parse().unwrap();
        } else {
            response = response.header(name, value);
        }
    }
    let stream = futures_util::stream::unfold(Some((stdout, child)), |state| async move {
        let (mut stdout, mut child) = state?;
        let mut buffer = vec![0u8; 64 * 1024];
        match stdout.read(&mut buffer).await {
            Ok(0) => {
                let _ = tokio::task::spawn_blocking(move || child.wait()).await;
                None
            }
            Ok(read) => {
                buffer.truncate(read);
                Some((Ok(Frame::data(Bytes::from(buffer))), Some((stdout, child))))
            }
            Err(error) => Some((Err(error), None)),
        }
    });
    response
        .status(status)
        .body(StreamBody::new(stream).boxed())
        .unwrap()
}

/// A `git` command in `dir`, isolated from the machine's configuration (its own HOME, no system config, never a
/// prompt).
fn git_command(dir: &Path, home: &Path, args: &[&str]) -> Command {
    let mut command = Command::new("git");
    command
        .args(args)
        .current_dir(dir)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_AUTHOR_NAME", "Tester")
        .env("GIT_AUTHOR_EMAIL", "tester@example.com")
        .env("GIT_COMMITTER_NAME", "Tester")
        .env("GIT_COMMITTER_EMAIL", "tester@example.com")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE");
    command
}

/// Runs a git command on a blocking thread, at most two minutes.
async fn run(mut command: Command, what: &str) -> std::process::Output {
    within(120, what, tokio::task::spawn_blocking(move || command.output()))
        .await
        .unwrap()
        .unwrap()
}

/// Runs `git` with `args` in `dir`; panics with its output on failure, else answers it.
async fn git(dir: &Path, home: &Path, args: &[&str]) -> String {
    let output = run(git_command(dir, home, args), &format!("git {args:?}")).await;
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        output.status.success(),
        "git {args:?} failed: {}\n{stderr}",
        output.status
    );
    String::from_utf8_lossy(&output.stdout).into_owned() + &stderr
}

#[tokio::test]
async fn git_clones_and_pushes_several_megabytes_through_svcgate() {
    let temp = tempfile::tempdir().unwrap();
    let (home, root, seed) = (
        temp.path().join("home"),
        temp.path().join("repos"),
        temp.path().join("seed"),
    );
    for dir in [&home, &root, &seed] {
        std::fs::create_dir_all(dir).unwrap();
    }
    let bare = root.join("group/project.git");
    std::fs::create_dir_all(&bare).unwrap();
    git(
        &bare,
        &home,
        &["init", "--quiet", "--bare", "--initial-branch=main"],
    )
    .await;
    git(&bare, &home, &["config", "http.receivepack", "true"]).await;
    git(&seed, &home, &["init", "--quiet", "--initial-branch=main"]).await;
    std::fs::write(seed.join("README.md"), "# project\n").unwrap();
    git(&seed, &home, &["add", "README.md"]).await;
    git(&seed, &home, &["commit", "--quiet", "-m", "first"]).await;
    git(&seed, &home, &["push", "--quiet", bare.to_str().unwrap(), "main"]).await;

    let (backend, seen) = git_backend(root.clone(), home.clone()).await;
    let gateway = TestGateway::start(&format!("http://{backend}")).await;
    let url = format!("{}/group/project.git", gateway.url());

    git(temp.path(), &home, &["clone", "--quiet", &url, "first"]).await;
    let first = temp.path().join("first");
    assert_eq!(
        std::fs::read_to_string(first.join("README.md")).unwrap(),
        "# project\n"
    );

    // Random bytes do not compress: the pack is as large as the file, far above the post buffer, so git sends it
    // chunked, as it does every large push.
    let large: Vec<u8> = (0..6 << 20).map(|_| fastrand::u8(..)).collect();
    std::fs::write(first.join("large.bin"), &large).unwrap();
    git(&first, &home, &["add", "large.bin"]).await;
    git(&first, &home, &["commit", "--quiet", "-m", "large file"]).await;
    let pushed = git(&first, &home, &["rev-parse", "HEAD"]).await;
    let trace = temp.path().join("push-trace");
    let mut push = git_command(
        &first,
        &home,
        &["-c", "http.postBuffer=65536", "push", "origin", "main"],
    );
    push.env("GIT_TRACE_CURL", &trace)
        .env("GIT_TRACE_CURL_NO_DATA", "1");
    let output = run(push, "git push").await;
    assert!(
        output.status.success(),
        "git push failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );

    // The push's pack went through svcgate as a stream: the backend got it chunked, not buffered into a length.
    let receive_pack: Vec<Seen> = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|seen| seen.method == "POST" && seen.target.ends_with("/git-receive-pack"))
        .cloned()
        .collect();
    assert!(
        !receive_pack.is_empty(),
        "no receive-pack request reached the backend"
    );
    let last = receive_pack.last().unwrap();
    assert_eq!(last.transfer_encoding.as_deref(), Some("chunked"), "{last:?}");
    assert!(last.content_length.is_none(), "{last:?}");
    // git asks `Expect: 100-continue` only of servers that offer Negotiate authentication (passthrough.rs tests the
    // expectation on a raw socket); if it asked here, svcgate's interim answer must have come back.
    let trace = std::fs::read_to_string(&trace).unwrap_or_default();
    if trace.contains("Expect: 100-continue") {
        assert!(trace.contains("HTTP/1.1 100 Continue"), "{trace}");
    }

    git(temp.path(), &home, &["clone", "--quiet", &url, "second"]).await;
    let second = temp.path().join("second");
    assert_eq!(std::fs::read(second.join("large.bin")).unwrap(), large);
    assert_eq!(git(&second, &home, &["rev-parse", "HEAD"]).await, pushed);
    gateway.stop().await;
}

//! svcgate served as a real process, the one way tests run it so: `svcgate serve` spawned from the test binary on
//! a free loopback port (as a replica, against one PostgreSQL database and one `secret_key`, in front of
//! svc-sim); ready when it logs that it listens, stopped by process id (the end of its log printed when the test
//! fails meanwhile). Also a database on a cluster of the test's own, readiness and a polling wait, which every
//! replica test needs.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::io::BufRead;
use std::net::SocketAddr;
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Request, StatusCode};
use http_body_util::Empty;
use hyper_util::rt::TokioIo;
use serde_json::Value;
use svc_sim::DemoSeed;

use super::postgres::Postgres;

/// The `secret_key` every replica of a test shares.
pub const KEY: &str = "5f0c6a8e2d4b1f3a9c7e5d2b0a8f6e4c2a0b9d8c7e6f5a4b3c2d1e0f9a8b7c6d";

/// One svcgate process: its address, its log (stderr, kept whole), stopped by pid.
pub struct Replica {
    pub name: &'static str,
    pub child: Child,
    pub address: SocketAddr,
    pub log: Arc<Mutex<String>>,
}

impl Replica {
    /// Starts `svcgate serve` on a free loopback port against `backend` and `database_url`, with `SVCGATE_*`
    /// variables from `env`; waits until it listens.
    pub async fn start(
        name: &'static str,
        backend: &str,
        database_url: &str,
        env: &[(&str, &str)],
    ) -> Replica {
        let env = [&[("SVCGATE_SECRET_KEY", KEY)], env].concat();
        Self::serve(
            name,
            &["--backend", backend, "--database-url", database_url],
            &env,
        )
        .await
    }

    /// Starts `svcgate serve` on a free loopback port against `backend`, keeping its store (SQLite) in
    /// `data_dir`, with `SVCGATE_*` variables from `env`; waits until it listens.
    pub async fn start_on_sqlite(
        name: &'static str,
        backend: &str,
        data_dir: &std::path::Path,
        env: &[(&str, &str)],
    ) -> Replica {
        let data_dir = data_dir.display().to_string();
        let env = [&[("SVCGATE_SECRET_KEY", KEY)], env].concat();
        Self::serve(name, &["--backend", backend, "--data-dir", &data_dir], &env).await
    }

    /// Starts `svcgate serve` with `args` on a free loopback port, logging JSON to a pipe this test reads, with
    /// `SVCGATE_*` variables from `env` only (none inherited); waits until it listens.
    pub async fn serve(name: &'static str, args: &[&str], env: &[(&str, &str)]) -> Replica {
        let mut command = super::process::command();
        for (variable, _) in std::env::vars() {
            if variable.starts_with("SVCGATE_") {
                command.env_remove(variable);
            }
        }
        command
            .arg("serve")
            .args(args)
            .args(["--listen", "127.0.0.1:0", "--log-format", "json"])
            .env("SVCGATE_WORKER_THREADS", "2")
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = command.spawn().unwrap();
        let stderr = child.stderr.take().unwrap();
        let log = Arc::new(Mutex::new(String::new()));
        let (found, listening) = tokio::sync::oneshot::channel::<SocketAddr>();
        let kept = Arc::clone(&log);
        std::thread::spawn(move || {
            let mut found = Some(found);
            // Read to the end, so the process never blocks on a full pipe.
            for line in std::io::BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Ok(entry) = serde_json::from_str::<Value>(&line) {
                    if entry["message"] == "listening" {
                        if let (Some(found), Some(address)) = (found.take(), entry["address"].as_str()) {
                            found.send(address.parse().unwrap()).ok();
                        }
                    }
                }
                let mut log = kept.lock().unwrap();
                log.push_str(&line);
                log.push('\n');
            }
        });
        let address = match tokio::time::timeout(Duration::from_secs(60), listening).await {
            Ok(Ok(address)) => address,
            _ => panic!("replica {name} did not listen: {}", log.lock().unwrap()),
        };
        Replica {
            name,
            child,
            address,
            log,
        }
    }

    /// The replica's base URL.
    pub fn url(&self) -> String {
        format!("http://{}", self.address)
    }

    /// Sends `signal` (as `kill` spells it, e.g. `-TERM`) to the process.
    pub fn signal(&self, signal: &str) {
        let status = super::process::signal(self.child.id(), signal);
        assert!(status.success(), "kill {signal} {}", self.name);
    }

    /// The process's peak resident memory so far (`VmHWM` in `/proc/<pid>/status`), in bytes.
    pub fn peak_resident_bytes(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let line = status.lines().find(|line| line.starts_with("VmHWM:")).unwrap();
        let kilobytes: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
        kilobytes * 1024
    }

    /// Waits (at most `limit`) for the process to exit; answers whether it exited successfully.
    pub async fn exited(&mut self, limit: Duration) -> bool {
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.success();
            }
            assert!(
                started.elapsed() < limit,
                "replica {} did not exit within {limit:?}: {}",
                self.name,
                self.log.lock().unwrap()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// Lines of a replica's log shown when a test fails while it runs.
const LOG_LINES_ON_FAILURE: usize = 40;

impl Drop for Replica {
    fn drop(&mut self) {
        if std::thread::panicking() {
            if let Ok(log) = self.log.lock() {
                let lines: Vec<&str> = log.lines().collect();
                let tail = &lines[lines.len().saturating_sub(LOG_LINES_ON_FAILURE)..];
                eprintln!(
                    "replica {} ({}), last lines of its log:\n{}",
                    self.name,
                    self.address,
                    tail.join("\n")
                );
            }
        }
        if matches!(self.child.try_wait(), Ok(None)) {
            drop(self.child.kill());
            drop(self.child.wait());
        }
    }
}

/// A generic integration made on `replica` by the demo project's owner: its path and key.
pub async fn integration(replica: &Replica, demo: &DemoSeed) -> (String, String) {
    let made = super::send_json(
        http::Method::POST,
        &format!(
            "{}/-/svcgate/api/projects/{}/integrations",
            replica.url(),
            demo.project_id
        ),
        &demo.token,
        serde_json::json!({"type": "generic", "active": true}),
    )
    .await;
    assert_eq!(made.status, StatusCode::CREATED, "{:?}", made.body);
    let made = made.json();
    let url: http::Uri = made["url"].as_str().unwrap().parse().unwrap();
    (url.path().to_owned(), made["token"].as_str().unwrap().to_owned())
}

/// A cluster of its own and an empty database on it.
pub async fn database() -> (Postgres, String) {
    let cluster = tokio::task::spawn_blocking(Postgres::start).await.unwrap();
    let url = cluster.database("svcgate").await;
    (cluster, url)
}

/// Polls `check` every 20 ms until it holds, for at most `limit` (from the call); answers how long it took.
pub async fn until(limit: Duration, what: &str, mut check: impl AsyncFnMut() -> bool) -> Duration {
    let started = Instant::now();
    loop {
        if check().await {
            return started.elapsed();
        }
        assert!(
            started.elapsed() < limit,
            "{what} did not happen within {limit:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Readiness of the replica at `address` on a connection of its own: `None` when no connection can be made (not
/// listening).
pub async fn readiness(address: SocketAddr) -> Option<StatusCode> {
    let stream = tokio::net::TcpStream::connect(address).await.ok()?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .ok()?;
    tokio::spawn(connection);
    let request = Request::get("/-/svcgate/ready")
        .header("host", address.to_string())
        .body(Empty::<Bytes>::new())
        .unwrap();
    // A connection accepted just before the listener closed may be closed unanswered: not ready either.
    let response = sender.send_request(request).await.ok()?;
    Some(response.status())
}

//! Passthrough over real sockets: client → svcgate → an origin that echoes what it received. Its own test
//! binary: the multi-gigabyte download bounds the growth of this process's resident memory, which the hundreds
//! of tests of a suite running beside it would disturb.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use common::origin::Origin;
use common::{send, within, TestGateway};
use http::{Method, Request, StatusCode};
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

#[tokio::test]
async fn method_path_and_query_reach_the_backend_byte_for_byte() {
    let origin = Origin::start().await;
    let gateway = TestGateway::start(&origin.url()).await;
    let target = "/group%2Fproject/-/raw/a%20b;c?q=a%2Bb&x=%7E&empty=&dup=1&dup=2";
    let answer = send(
        Method::PATCH,
        &format!("{}{target}", gateway.url()),
        &[("private-token", "secret"), ("x-custom", "kept")],
        Some(("text/plain", b"payload".to_vec())),
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK);
    let echo = answer.json();
    assert_eq!(echo["method"], "PATCH");
    assert_eq!(echo["target"], target);
    assert_eq!(echo["body"], "payload");
    assert_eq!(echo["headers"]["private-token"], "secret");
    assert_eq!(echo["headers"]["x-custom"], "kept");
    assert_eq!(echo["headers"]["host"], origin.address.to_string());
    assert_eq!(echo["headers"]["x-forwarded-for"], "127.0.0.1");
    assert_eq!(echo["headers"]["x-forwarded-proto"], "http");
    assert_eq!(echo["headers"]["x-forwarded-host"], gateway.address.to_string());
    let request_id = echo["headers"]["x-request-id"].as_str().unwrap();
    assert_eq!(answer.header("x-request-id"), Some(request_id));
    assert_eq!(answer.header("x-origin"), Some("yes"));
    gateway.stop().await;
}

#[tokio::test]
async fn hop_by_hop_headers_are_not_forwarded_and_request_ids_are_kept() {
    let origin = Origin::start().await;
    let gateway = TestGateway::start(&origin.url()).await;
    let answer = send(
        Method::GET,
        &format!("{}/api/v4/projects", gateway.url()),
        &[
            ("connection", "keep-alive, x-hop"),
            ("x-hop", "1"),
            ("keep-alive", "timeout=5"),
            ("x-request-id", "client-chosen-1"),
        ],
        None,
    )
    .await;
    let echo = answer.json();
    assert!(echo["headers"].get("x-hop").is_none(), "{echo}");
    assert!(echo["headers"].get("keep-alive").is_none(), "{echo}");
    assert_eq!(echo["headers"]["x-request-id"], "client-chosen-1");
    assert_eq!(answer.header("x-request-id"), Some("client-chosen-1"));
    gateway.stop().await;
}

#[tokio::test]
async fn the_first_bytes_arrive_before_the_backend_has_produced_the_rest() {
    let origin = Origin::start().await;
    let gateway = TestGateway::start(&origin.url()).await;
    let client: Client<_, http_body_util::Empty<Bytes>> = Client::builder(TokioExecutor::new()).build_http();
    let response = client
        .request(
            Request::get(format!("{}/gated", gateway.url()))
                .body(http_body_util::Empty::new())
                .unwrap(),
        )
        .await
        .unwrap();
    let mut body = response.into_body();
    let first = within(5, "first frame", body.frame()).await.unwrap().unwrap();
    assert_eq!(first.into_data().unwrap(), Bytes::from_static(b"first;"));
    // Only now may the origin produce the rest.
    origin.gate.notify_one();
    let rest = within(5, "rest", body.collect()).await.unwrap().to_bytes();
    assert_eq!(rest, Bytes::from_static(b"rest"));
    gateway.stop().await;
}

fn resident_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|line| line.starts_with("VmRSS:"))
        .and_then(|line| line.split_whitespace().nth(1))
        .and_then(|kib| kib.parse().ok())
        .unwrap_or(0)
}

const TWO_GIB: u64 = 2 << 30;
/// Growth allowed while gigabytes stream through (client, gateway and origin share this process).
const MEMORY_BOUND_KIB: u64 = 64 * 1024;

#[tokio::test]
async fn a_multi_gigabyte_download_streams_with_bounded_memory() {
    let origin = Origin::start().await;
    let gateway = TestGateway::start(&origin.url()).await;
    let client: Client<_, http_body_util::Empty<Bytes>> = Client::builder(TokioExecutor::new()).build_http();
    let before = resident_kib();
    let response = client
        .request(
            Request::get(format!("{}/bytes?n={TWO_GIB}", gateway.url()))
                .body(http_body_util::Empty::new())
                .unwrap(),
        )
        .await
        .unwrap();
    let mut body = response.into_body();
    let mut received: u64 = 0;
    let mut peak = before;
    while let Some(frame) = within(60, "download frame", body.frame()).await {
        if let Ok(data) = frame.unwrap().into_data() {
            received += data.len() as u64;
            if received % (64 << 20) < data.len() as u64 {
                peak = peak.max(resident_kib());
            }
        }
    }
    assert_eq!(received, TWO_GIB);
    assert!(
        peak - before < MEMORY_BOUND_KIB,
        "resident memory grew by {} KiB",
        peak - before
    );
    gateway.stop().await;
}

#[tokio::test]
async fn a_multi_gigabyte_upload_streams_with_bounded_memory() {
    let origin = Origin::start().await;
    let gateway = TestGateway::start(&origin.url()).await;
    let chunk = Bytes::from(vec![b'y'; 256 * 1024]);
    let chunks = TWO_GIB / chunk.len() as u64;
    let stream = futures_util::stream::iter(
        (0..chunks).map(move |_| Ok::<_, std::convert::Infallible>(Frame::data(chunk.clone()))),
    );
    let client: Client<_, StreamBody<_>> = Client::builder(TokioExecutor::new()).build_http();
    let before = resident_kib();
    let sampler = tokio::spawn(async move {
        let mut peak = 0;
        for _ in 0..600 {
            peak = peak.max(resident_kib());
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        peak
    });
    let response = within(
        120,
        "upload",
        client.request(
            Request::post(format!("{}/count", gateway.url()))
                .body(StreamBody::new(stream))
                .unwrap(),
        ),
    )
    .await
    .unwrap();
    let counted = response.into_body().collect().await.unwrap().to_bytes();
    sampler.abort();
    assert_eq!(counted, Bytes::from(TWO_GIB.to_string()));
    let after = resident_kib();
    assert!(
        after.saturating_sub(before) < MEMORY_BOUND_KIB,
        "resident memory grew by {} KiB",
        after - before
    );
    gateway.stop().await;
}

#[tokio::test]
async fn an_unreachable_backend_is_a_502_in_the_error_shape() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = closed.local_addr().unwrap();
    drop(closed);
    let gateway = TestGateway::start(&format!("http://{address}")).await;
    let answer = send(
        Method::GET,
        &format!("{}/api/v4/projects", gateway.url()),
        &[],
        None,
    )
    .await;
    assert_eq!(answer.status, StatusCode::BAD_GATEWAY);
    assert!(answer.json()["message"].as_str().unwrap().starts_with("502"));
    gateway.stop().await;
}

#[tokio::test]
async fn a_backend_over_its_timeout_is_a_504_in_the_error_shape() {
    let origin = Origin::start().await;
    let gateway = TestGateway::start_with(&origin.url(), |raw| {
        raw.backend_timeout = Some("300ms".to_owned())
    })
    .await;
    let answer = send(Method::GET, &format!("{}/sleep", gateway.url()), &[], None).await;
    assert_eq!(answer.status, StatusCode::GATEWAY_TIMEOUT);
    assert!(answer.json()["message"].as_str().unwrap().starts_with("504"));
    gateway.stop().await;
}

#[tokio::test]
async fn a_late_head_on_a_reused_connection_is_a_504_soon_after_the_timeout_and_the_pool_goes_on() {
    let origin = Origin::start().await;
    let gateway = TestGateway::start_with(&origin.url(), |raw| {
        raw.backend_timeout = Some("400ms".to_owned())
    })
    .await;
    let version = format!("{}/api/v4/version", gateway.url());
    assert_eq!(
        send(Method::GET, &version, &[], None).await.status,
        StatusCode::OK
    );
    let started = std::time::Instant::now();
    let answer = send(Method::GET, &format!("{}/sleep", gateway.url()), &[], None).await;
    let waited = started.elapsed();
    assert_eq!(answer.status, StatusCode::GATEWAY_TIMEOUT);
    assert!(answer.json()["message"].as_str().unwrap().starts_with("504"));
    assert!(
        waited >= std::time::Duration::from_millis(400) && waited < std::time::Duration::from_millis(1500),
        "the 504 came after {waited:?}"
    );
    // The late connection was closed, not put back: the next request goes out on a new one.
    assert_eq!(
        send(Method::GET, &version, &[], None).await.status,
        StatusCode::OK
    );
    assert_eq!(origin.connections.load(Ordering::SeqCst), 2);
    gateway.stop().await;
}

#[tokio::test]
async fn backend_connections_are_pooled_and_reused() {
    let origin = Origin::start().await;
    let gateway = TestGateway::start(&origin.url()).await;
    for _ in 0..10 {
        let answer = send(
            Method::GET,
            &format!("{}/api/v4/version", gateway.url()),
            &[],
            None,
        )
        .await;
        assert_eq!(answer.status, StatusCode::OK);
    }
    assert_eq!(origin.connections.load(Ordering::SeqCst), 1);
    gateway.stop().await;
}

#[tokio::test]
async fn a_connection_whose_chunked_answer_was_read_to_its_end_is_reused() {
    let origin = Origin::start().await;
    let gateway = TestGateway::start(&origin.url()).await;
    for _ in 0..3 {
        // `/bytes` streams without a length: chunked, its end known only when it comes.
        let answer = send(
            Method::GET,
            &format!("{}/bytes?n=300000", gateway.url()),
            &[],
            None,
        )
        .await;
        assert_eq!(answer.status, StatusCode::OK);
        assert_eq!(answer.body.len(), 300_000);
    }
    assert_eq!(origin.connections.load(Ordering::SeqCst), 1);
    gateway.stop().await;
}

#[tokio::test]
async fn backend_connections_idle_past_the_pool_idle_timeout_are_closed() {
    let origin = Origin::start().await;
    let gateway = TestGateway::start_with(&origin.url(), |raw| {
        raw.backend_pool_idle_timeout = Some("200ms".to_owned())
    })
    .await;
    let version = format!("{}/api/v4/version", gateway.url());
    assert_eq!(
        send(Method::GET, &version, &[], None).await.status,
        StatusCode::OK
    );
    assert_eq!(
        send(Method::GET, &version, &[], None).await.status,
        StatusCode::OK
    );
    assert_eq!(origin.connections.load(Ordering::SeqCst), 1, "reused while fresh");
    // Closed between 200 and 250 ms after its last answer.
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert_eq!(
        send(Method::GET, &version, &[], None).await.status,
        StatusCode::OK
    );
    assert_eq!(
        origin.connections.load(Ordering::SeqCst),
        2,
        "a new connection after the idle one closed"
    );
    gateway.stop().await;
}

/// An origin that answers one request per connection and then closes it: with `Connection: close` when
/// `announced`, silently after 50 ms otherwise (as a server whose keep-alive timeout is shorter than svcgate's).
async fn one_answer_origin(announced: bool) -> (std::net::SocketAddr, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let connections = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&connections);
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            counted.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                read_head(&mut stream).await;
                let close = if announced { "connection: close\r\n" } else { "" };
                let answer = format!("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n{close}\r\nok");
                let _ = tokio::io::AsyncWriteExt::write_all(&mut stream, answer.as_bytes()).await;
                tokio::time::sleep(Duration::from_millis(50)).await;
            });
        }
    });
    (address, connections)
}

#[tokio::test]
async fn a_backend_that_closes_each_connection_after_one_answer_costs_no_request() {
    for announced in [true, false] {
        let (address, connections) = one_answer_origin(announced).await;
        let gateway = TestGateway::start(&format!("http://{address}")).await;
        for round in 0..5 {
            let answer = send(
                Method::GET,
                &format!("{}/api/v4/version", gateway.url()),
                &[],
                None,
            )
            .await;
            let text = String::from_utf8_lossy(&answer.body);
            assert_eq!(
                answer.status,
                StatusCode::OK,
                "announced {announced}, round {round}: {text}"
            );
            assert_eq!(text, "ok");
            // Past the origin's 50 ms: the pooled connection is closed by the time the next request comes.
            tokio::time::sleep(Duration::from_millis(150)).await;
        }
        assert_eq!(connections.load(Ordering::SeqCst), 5, "announced {announced}");
        gateway.stop().await;
    }
}

#[tokio::test]
async fn a_connection_still_carrying_an_upload_the_backend_answered_early_is_not_given_the_next_request() {
    // The origin answers each request as soon as its head arrives, reads no body, and keeps the connection open.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                read_head(&mut stream).await;
                let answer = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";
                let _ = tokio::io::AsyncWriteExt::write_all(&mut stream, answer).await;
                tokio::time::sleep(Duration::from_secs(10)).await;
            });
        }
    });
    let gateway = TestGateway::start_with(&format!("http://{address}"), |raw| {
        raw.backend_timeout = Some("5s".to_owned())
    })
    .await;
    // A client starts a 1 MiB upload, sends 10 bytes of it and stalls.
    let mut uploader = tokio::net::TcpStream::connect(gateway.address).await.unwrap();
    let head = "POST /upload HTTP/1.1\r\nhost: svcgate\r\ncontent-length: 1048576\r\n\r\n0123456789";
    tokio::io::AsyncWriteExt::write_all(&mut uploader, head.as_bytes())
        .await
        .unwrap();
    read_head(&mut uploader).await;
    // The next request goes out on another connection at once, not behind the stalled upload.
    let answer = within(
        3,
        "an answer beside the stalled upload",
        send(
            Method::GET,
            &format!("{}/api/v4/version", gateway.url()),
            &[],
            None,
        ),
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK);
    drop(uploader);
    gateway.stop().await;
}

#[tokio::test]
async fn http2_prior_knowledge_clients_are_served() {
    let origin = Origin::start().await;
    let gateway = TestGateway::start(&origin.url()).await;
    let client: Client<_, http_body_util::Empty<Bytes>> = Client::builder(TokioExecutor::new())
        .http2_only(true)
        .build_http();
    let response = client
        .request(
            Request::get(format!("{}/api/v4/projects?x=1", gateway.url()))
                .body(http_body_util::Empty::new())
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(response.version(), http::Version::HTTP_2);
    let body = response.into_body().collect().await.unwrap().to_bytes();
    let echo: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(echo["target"], "/api/v4/projects?x=1");
    assert_eq!(echo["headers"]["x-forwarded-host"], gateway.address.to_string());
    gateway.stop().await;
}

#[tokio::test]
async fn shutdown_lets_an_in_flight_request_finish_and_refuses_new_connections() {
    let origin = Origin::start().await;
    let gateway = TestGateway::start(&origin.url()).await;
    let address = gateway.address;
    let client: Client<_, http_body_util::Empty<Bytes>> = Client::builder(TokioExecutor::new()).build_http();
    let response = within(
        5,
        "the gated answer's head",
        client.request(
            Request::get(format!("{}/gated", gateway.url()))
                .body(http_body_util::Empty::new())
                .unwrap(),
        ),
    )
    .await
    .unwrap();
    let mut body = response.into_body();
    // The first bytes have arrived: the request is in flight, and stays so until the origin's gate opens.
    let first = within(5, "first frame", body.frame()).await.unwrap().unwrap();
    assert_eq!(first.into_data().unwrap(), Bytes::from_static(b"first;"));
    let stopping = tokio::spawn(gateway.stop());
    within(5, "new connections refused", async {
        while tokio::net::TcpStream::connect(address).await.is_ok() {
            tokio::task::yield_now().await;
        }
    })
    .await;
    origin.gate.notify_one();
    let rest = within(10, "the in-flight answer", body.collect())
        .await
        .unwrap()
        .to_bytes();
    assert_eq!(rest, Bytes::from_static(b"rest"));
    within(10, "shutdown", stopping).await.unwrap();
}

#[tokio::test]
async fn the_backend_sees_its_own_authority_as_host_unless_preserve_host_is_on() {
    let origin = Origin::start().await;
    for (preserve, expected) in [
        (false, origin.address.to_string()),
        (true, "gate.example:8443".to_owned()),
    ] {
        let gateway = TestGateway::start_with(&origin.url(), |raw| raw.preserve_host = Some(preserve)).await;
        let answer = send(
            Method::GET,
            &format!("{}/group/project", gateway.url()),
            &[("host", "gate.example:8443")],
            None,
        )
        .await;
        assert_eq!(answer.status, StatusCode::OK);
        let echo = answer.json();
        assert_eq!(
            echo["headers"]["host"],
            expected.as_str(),
            "preserve_host = {preserve}"
        );
        assert_eq!(echo["headers"]["x-forwarded-host"], "gate.example:8443");
        gateway.stop().await;
    }
}

#[tokio::test]
async fn preserve_host_sends_the_authority_of_an_http2_request_and_refuses_a_host_that_is_no_host() {
    let origin = Origin::start().await;
    let gateway = TestGateway::start_with(&origin.url(), |raw| raw.preserve_host = Some(true)).await;
    let client: Client<_, http_body_util::Empty<Bytes>> = Client::builder(TokioExecutor::new())
        .http2_only(true)
        .build_http();
    let response = client
        .request(
            Request::get(format!("{}/group/project", gateway.url()))
                .body(http_body_util::Empty::new())
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(response.version(), http::Version::HTTP_2);
    let body = response.into_body().collect().await.unwrap().to_bytes();
    let echo: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(echo["headers"]["host"], gateway.address.to_string());

    let answer = send(
        Method::GET,
        &format!("{}/group/project", gateway.url()),
        &[("host", "gate.example/elsewhere")],
        None,
    )
    .await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    gateway.stop().await;
}

/// Reads one response head (up to the blank line) from a raw connection.
async fn read_head(stream: &mut tokio::net::TcpStream) -> String {
    use tokio::io::AsyncReadExt;
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        let mut byte = [0u8; 1];
        let read = within(10, "a response head", stream.read(&mut byte))
            .await
            .unwrap();
        assert_eq!(
            read,
            1,
            "connection closed after {:?}",
            String::from_utf8_lossy(&head)
        );
        head.push(byte[0]);
    }
    String::from_utf8(head).unwrap()
}

fn expect_request_head(length: usize) -> String {
    format!(
        "POST /group/project.git/git-receive-pack HTTP/1.1\r\nHost: gate.example\r\n\
         Content-Type: application/x-git-receive-pack-request\r\nContent-Length: {length}\r\n\
         Expect: 100-continue\r\nConnection: close\r\n\r\n"
    )
}

#[tokio::test]
async fn expect_100_continue_is_answered_by_svcgate_and_the_body_then_streams_to_the_backend() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let origin = Origin::start().await;
    let gateway = TestGateway::start(&origin.url()).await;
    let body = vec![b'z'; 4 << 20];
    let mut stream = tokio::net::TcpStream::connect(gateway.address).await.unwrap();
    stream
        .write_all(expect_request_head(body.len()).as_bytes())
        .await
        .unwrap();
    // Nothing of the body is sent before the interim answer, as a waiting client does.
    let interim = read_head(&mut stream).await;
    assert!(interim.starts_with("HTTP/1.1 100 Continue\r\n"), "{interim}");
    stream.write_all(&body).await.unwrap();
    let head = read_head(&mut stream).await;
    assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
    let mut rest = Vec::new();
    within(10, "the answer's body", stream.read_to_end(&mut rest))
        .await
        .unwrap();
    let echo: serde_json::Value = serde_json::from_slice(&rest).unwrap();
    assert_eq!(echo["method"], "POST");
    assert_eq!(echo["body"].as_str().unwrap().len(), body.len());
    assert!(echo["headers"].get("expect").is_none(), "Expect is not forwarded");
    assert_eq!(echo["headers"]["content-length"], body.len().to_string());
    gateway.stop().await;
}

#[tokio::test]
async fn expect_100_continue_with_an_unreachable_backend_gets_the_502_before_sending_the_body() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = closed.local_addr().unwrap();
    drop(closed);
    let gateway = TestGateway::start(&format!("http://{address}")).await;
    let mut stream = tokio::net::TcpStream::connect(gateway.address).await.unwrap();
    tokio::io::AsyncWriteExt::write_all(&mut stream, expect_request_head(1 << 20).as_bytes())
        .await
        .unwrap();
    let head = read_head(&mut stream).await;
    assert!(head.starts_with("HTTP/1.1 502 Bad Gateway\r\n"), "{head}");
    gateway.stop().await;
}

/// An origin that answers every request with the start of a chunked body, then closes its connection mid-body.
async fn aborting_origin() -> std::net::SocketAddr {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buffer = [0u8; 1024];
                while !head.windows(4).any(|window| window == b"\r\n\r\n") {
                    match stream.read(&mut buffer).await {
                        Ok(0) | Err(_) => return,
                        Ok(read) => head.extend_from_slice(&buffer[..read]),
                    }
                }
                let start = b"HTTP/1.1 200 OK\r\ncontent-type: application/octet-stream\r\n\
                              transfer-encoding: chunked\r\n\r\n10\r\nfirst sixteen b.\r\n";
                if stream.write_all(start).await.is_ok() {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                // Dropped here: the body stops after its first chunk, without the last one.
            });
        }
    });
    address
}

/// Sends `request` on a raw connection and reads until the connection ends: the bytes received, and how it
/// ended (`Ok` for a clean end of stream).
async fn read_until_closed(gateway: std::net::SocketAddr, request: &str) -> (Vec<u8>, std::io::Result<()>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(gateway).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut received = Vec::new();
    let mut buffer = [0u8; 4096];
    let end = within(10, "the end of the connection", async {
        loop {
            match stream.read(&mut buffer).await {
                Ok(0) => return Ok(()),
                Ok(read) => received.extend_from_slice(&buffer[..read]),
                Err(error) => return Err(error),
            }
        }
    })
    .await;
    (received, end)
}

#[tokio::test]
async fn an_http_1_0_client_of_a_download_the_backend_aborted_gets_a_reset_not_a_clean_end() {
    let origin = aborting_origin().await;
    let gateway = TestGateway::start(&format!("http://{origin}")).await;
    let (received, end) = read_until_closed(
        gateway.address,
        "GET /group/project/-/archive/main.tar.gz HTTP/1.0\r\nHost: gate.example\r\n\r\n",
    )
    .await;
    let text = String::from_utf8_lossy(&received);
    // Close-delimited: the body's end would be the connection's end.
    assert!(text.starts_with("HTTP/1.0 200 OK\r\n"), "{text}");
    assert!(!text.to_ascii_lowercase().contains("transfer-encoding"), "{text}");
    assert!(!text.to_ascii_lowercase().contains("content-length"), "{text}");
    assert!(text.ends_with("first sixteen b."), "{text}");
    match end {
        Err(error) => assert_eq!(error.kind(), std::io::ErrorKind::ConnectionReset, "{error}"),
        Ok(()) => panic!("the cut download ended cleanly: {text}"),
    }
    gateway.stop().await;
}

#[tokio::test]
async fn an_http_1_1_client_closing_after_a_download_the_backend_aborted_gets_a_reset_not_a_clean_end() {
    let origin = aborting_origin().await;
    let gateway = TestGateway::start(&format!("http://{origin}")).await;
    let (received, end) = read_until_closed(
        gateway.address,
        "GET /group/project/-/archive/main.tar.gz HTTP/1.1\r\nHost: gate.example\r\nConnection: close\r\n\r\n",
    )
    .await;
    let text = String::from_utf8_lossy(&received);
    assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{text}");
    assert!(text.contains("first sixteen b."), "{text}");
    match end {
        Err(error) => assert_eq!(error.kind(), std::io::ErrorKind::ConnectionReset, "{error}"),
        Ok(()) => panic!("the cut download ended cleanly: {text}"),
    }
    gateway.stop().await;
}

/// svcgate is no forward proxy: a `CONNECT` is refused in the service's error shape, never passed on to the
/// backend (where it went as `CONNECT /`), and the client's connection goes on serving.
#[tokio::test]
async fn a_connect_request_is_a_405_that_never_reaches_the_backend() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let origin = Origin::start().await;
    let gateway = TestGateway::start(&origin.url()).await;
    let mut stream = tokio::net::TcpStream::connect(gateway.address).await.unwrap();
    stream
        .write_all(b"CONNECT elsewhere.example:443 HTTP/1.1\r\nHost: elsewhere.example:443\r\n\r\n")
        .await
        .unwrap();
    let head = read_head(&mut stream).await;
    assert!(head.starts_with("HTTP/1.1 405 Method Not Allowed\r\n"), "{head}");
    let head = head.to_ascii_lowercase();
    assert!(
        head.contains("\r\nallow: get, head, post, put, patch, delete, options\r\n"),
        "{head}"
    );
    let length: usize = head
        .split("\r\n")
        .find_map(|line| line.strip_prefix("content-length: "))
        .unwrap()
        .parse()
        .unwrap();
    let mut body = vec![0; length];
    within(10, "the refusal's body", stream.read_exact(&mut body))
        .await
        .unwrap();
    let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(body, serde_json::json!({"message": "405 Method Not Allowed"}));
    assert_eq!(
        origin.connections.load(Ordering::SeqCst),
        0,
        "the backend was not called"
    );

    stream
        .write_all(b"GET /after HTTP/1.1\r\nHost: gate.example\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let head = read_head(&mut stream).await;
    assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
    gateway.stop().await;
}

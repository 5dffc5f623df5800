//! svcgate under abuse, over real sockets (client → svcgate → svc-sim): what a client invents gets a clear
//! answer in the service's error shape, reaches the backend only when it should, and leaves no state behind.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::common::{get, TestGateway};
use http::StatusCode;

async fn sim_and_gateway() -> (svc_sim::SimHandle, TestGateway, String) {
    let (sim, demo, gateway) = common::sim::with_gateway().await;
    (sim, gateway, demo.token)
}

#[tokio::test]
async fn a_v3_path_with_dot_segments_is_refused_and_never_forwarded() {
    let (sim, gateway, token) = sim_and_gateway().await;
    for path in [
        "/api/v3/projects/1/../../user",
        "/api/v3/projects/./1",
        "/api/v3/projects/%2e%2E/1/issues",
        "/api/v3/projects/1/issues/%2E",
    ] {
        sim.clear_requests();
        let answer = get(&format!("{}{path}", gateway.url()), &token).await;
        assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{path}");
        assert!(
            answer.json()["message"].as_str().is_some(),
            "{path}: {:?}",
            answer.body
        );
        assert!(sim.requests().is_empty(), "{path} reached the backend");
    }
}

#[tokio::test]
async fn an_issue_id_beyond_64_bits_is_not_found_at_once() {
    let (sim, gateway, token) = sim_and_gateway().await;
    for id in [
        "9223372036854775808",
        "18446744073709551616",
        "99999999999999999999999",
    ] {
        sim.clear_requests();
        let answer = get(
            &format!("{}/api/v3/projects/1/issues/{id}", gateway.url()),
            &token,
        )
        .await;
        assert_eq!(answer.status, StatusCode::NOT_FOUND, "{id}");
        assert_eq!(answer.json()["message"], "404 Not found", "{id}");
        assert!(sim.requests().is_empty(), "{id} caused a backend call");
    }
}

#[tokio::test]
async fn a_labels_filter_past_the_call_budget_is_refused_before_any_backend_call() {
    let (sim, gateway, token) = sim_and_gateway().await;
    let labels: Vec<String> = (0..500).map(|n| format!("l{n}")).collect();
    sim.clear_requests();
    let answer = get(
        &format!("{}/api/v3/issues?labels={}", gateway.url(), labels.join(",")),
        &token,
    )
    .await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    let message = answer.json()["message"].as_str().unwrap().to_owned();
    assert!(message.contains("labels is too long"), "{message}");
    assert!(message.contains("max_backend_calls_per_request"), "{message}");
    assert!(
        !sim.requests()
            .iter()
            .any(|request| request.path.ends_with("/issues")),
        "the filter reached the backend"
    );
}

/// Adds five issues to the demo project of `sim`.
async fn five_more_issues(sim: &svc_sim::SimHandle, demo: &svc_sim::DemoSeed) {
    for n in 0..5 {
        let created = common::send_json(
            http::Method::POST,
            &format!("{}/api/v4/projects/{}/issues", sim.url(), demo.project_id),
            &demo.token,
            serde_json::json!({"title": format!("fan-out {n}")}),
        )
        .await;
        assert!(created.status.is_success());
    }
}

/// The V3 list of the demo project's issues, `per_page` a page, as the demo user reads it through `gateway`.
async fn issues_page(gateway: &TestGateway, demo: &svc_sim::DemoSeed, per_page: u32) -> common::Answer {
    get(
        &format!(
            "{}/api/v3/projects/{}/issues?per_page={per_page}",
            gateway.url(),
            demo.project_id
        ),
        &demo.token,
    )
    .await
}

#[tokio::test]
async fn every_fan_out_counts_against_the_call_budget() {
    let (sim, demo) = common::sim::with_demo().await;
    let gateway =
        TestGateway::start_with(&sim.url(), |raw| raw.max_backend_calls_per_request = Some(3)).await;
    five_more_issues(&sim, &demo).await;
    // A labels filter of four: one list read per label.
    let answer = get(
        &format!("{}/api/v3/issues?labels=a,b,c,d", gateway.url()),
        &demo.token,
    )
    .await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert!(answer.json()["message"]
        .as_str()
        .unwrap()
        .contains("labels is too long"));
    // Item completion with GraphQL: the list and one batched request, within three calls.
    sim.clear_requests();
    let answer = issues_page(&gateway, &demo, 20).await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    assert_eq!(sim.requests().len(), 2);
    gateway.stop().await;

    // Without GraphQL, the list plus one call per issue is more than three calls.
    let sim = common::sim::start_with(svc_sim::SimOptions {
        graphql: false,
        ..svc_sim::SimOptions::default()
    })
    .await;
    let demo = sim.seed_demo();
    five_more_issues(&sim, &demo).await;
    let gateway =
        TestGateway::start_with(&sim.url(), |raw| raw.max_backend_calls_per_request = Some(3)).await;
    let answer = issues_page(&gateway, &demo, 20).await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{:?}", answer.body);
    assert!(answer.json()["message"]
        .as_str()
        .unwrap()
        .contains("more than 3 backend calls"));
    // A request within the budget still works.
    let answer = issues_page(&gateway, &demo, 1).await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
}

/// Reads from `stream` until the server closes it; panics if it stays open past `within`.
async fn closed_by_server(stream: &mut tokio::net::TcpStream, within: std::time::Duration) {
    use tokio::io::AsyncReadExt;
    let mut buffer = [0u8; 1024];
    let deadline = tokio::time::Instant::now() + within;
    loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut buffer)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return,
            Ok(Ok(_)) => continue,
            Err(_) => panic!("the connection was still open after {within:?}"),
        }
    }
}

#[tokio::test]
async fn silent_connections_past_the_cap_cannot_lock_out_the_health_check_and_are_closed() {
    use std::time::Duration;
    use tokio::io::AsyncWriteExt;
    let sim = common::sim::start().await;
    let gateway = TestGateway::start_with(&sim.url(), |raw| {
        raw.max_connections = Some(40);
        raw.client_header_timeout = Some("2s".to_owned());
        raw.client_idle_timeout = Some("3s".to_owned());
    })
    .await;
    let mut silent = Vec::new();
    for n in 0..70 {
        let mut stream = tokio::net::TcpStream::connect(gateway.address).await.unwrap();
        if n % 7 == 0 {
            // Only the HTTP/2 preface and an empty SETTINGS frame, then nothing.
            stream
                .write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04\0\0\0\0\0")
                .await
                .unwrap();
        } else if n % 7 == 1 {
            // One byte of a request head, then nothing.
            stream.write_all(b"G").await.unwrap();
        }
        silent.push(stream);
    }
    let health = common::within(1, "health past the connection cap", async {
        get(&format!("{}/-/svcgate/health", gateway.url()), "").await
    })
    .await;
    assert_eq!(health.status, StatusCode::OK);
    for stream in &mut silent {
        closed_by_server(stream, Duration::from_secs(4)).await;
    }
    let metrics = get(&format!("{}/-/svcgate/metrics", gateway.url()), "").await;
    let text = String::from_utf8_lossy(&metrics.body).into_owned();
    assert!(
        text.contains("svcgate_client_connections_closed_total{reason=\"evicted\"}"),
        "{text}"
    );
    assert!(
        text.contains("svcgate_client_connections_closed_total{reason=\"no_request\"}"),
        "{text}"
    );
}

#[tokio::test]
async fn an_http2_connection_with_no_open_stream_is_closed_after_the_idle_timeout() {
    use std::time::{Duration, Instant};
    let sim = common::sim::start().await;
    let gateway = TestGateway::start_with(&sim.url(), |raw| {
        raw.client_idle_timeout = Some("1s".to_owned());
    })
    .await;
    let stream = tokio::net::TcpStream::connect(gateway.address).await.unwrap();
    let (mut sender, connection) = hyper::client::conn::http2::handshake(
        hyper_util::rt::TokioExecutor::new(),
        hyper_util::rt::TokioIo::new(stream),
    )
    .await
    .unwrap();
    let driven = tokio::spawn(connection);
    let request = http::Request::get(format!("{}/-/svcgate/health", gateway.url()))
        .body(http_body_util::Empty::<bytes::Bytes>::new())
        .unwrap();
    let answer = sender.send_request(request).await.unwrap();
    assert_eq!(answer.status(), StatusCode::OK);
    drop(answer);
    let idle_from = Instant::now();
    let ended = tokio::time::timeout(Duration::from_secs(5), driven).await;
    assert!(ended.is_ok(), "the idle HTTP/2 connection stayed open");
    assert!(
        idle_from.elapsed() >= Duration::from_millis(900),
        "closed before the idle timeout"
    );
}

/// A backend that answers every request with a JSON head, one byte of body, and then nothing.
async fn stalling_backend() -> std::net::SocketAddr {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buffer = [0u8; 4096];
                while !head.windows(4).any(|window| window == b"\r\n\r\n") {
                    match stream.read(&mut buffer).await {
                        Ok(0) | Err(_) => return,
                        Ok(read) => head.extend_from_slice(&buffer[..read]),
                    }
                }
                let answer =
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n[";
                if stream.write_all(answer).await.is_ok() {
                    tokio::time::sleep(std::time::Duration::from_secs(60)).await;
                }
            });
        }
    });
    address
}

#[tokio::test]
async fn a_backend_that_stalls_inside_a_body_being_reshaped_is_a_timeout_not_a_hang() {
    let backend = stalling_backend().await;
    let gateway = TestGateway::start_with(&format!("http://{backend}"), |raw| {
        raw.backend_timeout = Some("1s".to_owned());
    })
    .await;
    let started = std::time::Instant::now();
    let answer = common::within(5, "the V3 answer", async {
        get(&format!("{}/api/v3/projects", gateway.url()), "a-token").await
    })
    .await;
    assert_eq!(answer.status, StatusCode::GATEWAY_TIMEOUT, "{:?}", answer.body);
    assert!(answer.json()["message"].as_str().is_some());
    assert!(started.elapsed() < std::time::Duration::from_secs(4));
}

#[tokio::test]
async fn a_client_that_stops_reading_is_disconnected_after_the_write_timeout() {
    use std::time::Duration;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let origin = common::origin::Origin::start().await;
    let gateway = TestGateway::start_with(&origin.url(), |raw| {
        raw.client_write_timeout = Some("1s".to_owned());
    })
    .await;
    let total: u64 = 256 << 20;
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut stream = socket.connect(gateway.address).await.unwrap();
    stream
        .write_all(format!("GET /bytes?n={total} HTTP/1.1\r\nhost: svcgate\r\n\r\n").as_bytes())
        .await
        .unwrap();
    // Read nothing for longer than the write timeout.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let mut received: u64 = 0;
    let mut buffer = vec![0u8; 1 << 16];
    let ended = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => break,
                Ok(read) => received += read as u64,
            }
        }
    })
    .await;
    assert!(ended.is_ok(), "the connection stayed open");
    assert!(
        received < total,
        "the whole body arrived: the stalled client was not cut"
    );
}

/// The resident memory of this process (the test and the gateway it runs), in bytes.
fn resident_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|line| line.starts_with("VmRSS:")).unwrap();
    let kilobytes: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kilobytes * 1024
}

#[tokio::test]
async fn alert_bodies_held_by_one_key_stay_within_the_budget_and_other_senders_get_through() {
    use std::time::Duration;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let world = common::alerts::AlertWorld::with(|raw| {
        // One key's share (alert_integration_budget_bytes, 16 MiB) is half of this budget.
        raw.alert_memory_budget_bytes = Some(32 << 20);
        raw.body_read_timeout = Some("4s".to_owned());
        // Premium: several HTTP integrations on one project.
        raw.edition = Some("premium".to_owned());
    })
    .await;
    let attacked = world
        .integration(serde_json::json!({"type": "http", "name": "Attacked", "active": true}))
        .await;
    let other = world
        .integration(serde_json::json!({"type": "http", "name": "Other", "active": true}))
        .await;
    let target = attacked["url"].as_str().unwrap().to_owned();
    let path = target.splitn(4, '/').nth(3).unwrap().to_owned();
    let key = attacked["token"].as_str().unwrap().to_owned();
    let before = resident_bytes();
    // 400 connections each announce 1 MiB and send half of it, then hold the connection open.
    let mut held = Vec::new();
    let mut refused = 0;
    let half = vec![b' '; 512 << 10];
    for _ in 0..400 {
        let mut stream = tokio::net::TcpStream::connect(world.gateway.address)
            .await
            .unwrap();
        let head = format!(
            "POST /{path} HTTP/1.1\r\nhost: svcgate\r\nauthorization: Bearer {key}\r\n\
             content-type: application/json\r\ncontent-length: {}\r\n\r\n",
            1 << 20
        );
        stream.write_all(head.as_bytes()).await.unwrap();
        if stream.write_all(&half).await.is_err() {
            refused += 1;
            continue;
        }
        held.push(stream);
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let grown = resident_bytes().saturating_sub(before);
    // One key's share (16 MiB) plus buffers and bookkeeping for 400 connections; 400 half bodies would be 200 MiB.
    assert!(grown < 64 << 20, "resident memory grew by {} MiB", grown >> 20);
    // Another integration's sender gets through while the attack holds its share.
    let answer = common::alerts::post_alert(
        other["url"].as_str().unwrap(),
        other["token"].as_str().unwrap(),
        &serde_json::json!({"title": "real trouble"}),
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    // Past the stall timeout every stalled request has its answer: 408 for the bodies being read, 503 with
    // Retry-After (in the intake's shape) for those over the key's share; their bytes are given back.
    tokio::time::sleep(Duration::from_secs(5)).await;
    let (mut timed_out, mut busy) = (0, 0);
    for stream in &mut held {
        let mut answer = vec![0u8; 4096];
        if let Ok(Ok(read)) = tokio::time::timeout(Duration::from_millis(50), stream.read(&mut answer)).await
        {
            let text = String::from_utf8_lossy(&answer[..read]).to_lowercase();
            if text.starts_with("http/1.1 408") {
                timed_out += 1;
            } else if text.starts_with("http/1.1 503") {
                assert!(text.contains("retry-after: 1"), "{text}");
                assert!(text.contains("\"error\":\"busy\""), "{text}");
                busy += 1;
            }
        }
    }
    assert!(timed_out >= 16, "{timed_out} bodies timed out");
    assert!(
        busy + refused >= 300,
        "only {busy} answered 503 and {refused} were refused"
    );
    drop(held);
    let answer = common::alerts::post_alert(&target, &key, &serde_json::json!({"title": "after"})).await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
}

#[tokio::test]
async fn invented_routes_and_tokens_grow_no_report_rows_no_metric_series_and_no_repeated_lookups() {
    let (sim, gateway, _) = sim_and_gateway().await;
    sim.clear_requests();
    // 300 distinct invented paths, 100 distinct invented tokens, each token sent three times at once.
    let mut sends = Vec::new();
    for n in 0..300u32 {
        let url = format!("{}/api/v3/nothing-{n}/x{}/y", gateway.url(), n * 7);
        let token = format!("invented-token-{}", n % 100);
        sends.push(tokio::spawn(async move { get(&url, &token).await.status }));
    }
    for send in sends {
        assert!(send.await.unwrap().is_client_error());
    }
    let report = get(&format!("{}/-/svcgate/api/v3-usage", gateway.url()), "root-token")
        .await
        .json();
    let routes: Vec<&str> = report["routes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|route| route["route"].as_str().unwrap())
        .collect();
    assert_eq!(routes, ["(no rule)"], "{report}");
    let metrics = get(&format!("{}/-/svcgate/metrics", gateway.url()), "").await;
    let text = String::from_utf8_lossy(&metrics.body).into_owned();
    let series = text
        .lines()
        .filter(|line| line.starts_with("svcgate_requests_total{") && line.contains("kind=\"rewrite\""))
        .count();
    assert!(series <= 3, "{series} request series:\n{text}");
    assert!(!text.contains("nothing-"), "an invented path became a label");
    let user_lookups = sim
        .requests()
        .iter()
        .filter(|request| request.path == "/api/v4/user")
        .filter(|request| {
            request
                .headers
                .iter()
                .any(|(name, value)| name == "private-token" && value.starts_with("invented-token-"))
        })
        .count();
    assert!(user_lookups <= 100, "{user_lookups} lookups for 100 tokens");
}

/// Sends raw bytes to the gateway and reads its answer until it closes (or 5 s pass).
async fn raw_exchange(address: std::net::SocketAddr, request: &[u8]) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    stream.write_all(request).await.unwrap();
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), stream.read_to_end(&mut answer)).await;
    String::from_utf8_lossy(&answer).into_owned()
}

#[tokio::test]
async fn a_chunk_size_that_overflows_on_passthrough_is_the_clients_400() {
    let origin = common::origin::Origin::start().await;
    let gateway = TestGateway::start(&origin.url()).await;
    let answer = raw_exchange(
        gateway.address,
        b"POST /count HTTP/1.1\r\nhost: svcgate\r\ntransfer-encoding: chunked\r\n\r\n\
          FFFFFFFFFFFFFFFFFFFFFF\r\nabc\r\n0\r\n\r\n",
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(answer.contains("{\"message\":"), "{answer}");
}

#[tokio::test]
async fn refusals_of_the_http_layer_carry_the_services_error_shape() {
    let sim = common::sim::start().await;
    let gateway = TestGateway::start(&sim.url()).await;
    let huge_header = format!(
        "GET /api/v4/version HTTP/1.1\r\nhost: svcgate\r\nx-big: {}\r\n\r\n",
        "a".repeat(1 << 20)
    );
    for (request, status) in [
        (b"GET /\x01 nonsense\r\n\r\n".to_vec(), "400"),
        (huge_header.into_bytes(), "431"),
    ] {
        let answer = raw_exchange(gateway.address, &request).await;
        assert!(answer.starts_with(&format!("HTTP/1.1 {status}")), "{answer}");
        let body = answer.split("\r\n\r\n").nth(1).unwrap_or_default();
        let json: serde_json::Value = serde_json::from_str(body).unwrap_or_else(|_| panic!("{answer}"));
        assert!(json["message"].as_str().unwrap().starts_with(status), "{answer}");
    }
}

#[tokio::test]
async fn alert_times_outside_1970_to_9999_or_a_days_offset_fall_back_with_a_warning() {
    let world = common::alerts::AlertWorld::new().await;
    let made = world
        .integration(serde_json::json!({"type": "generic", "active": true}))
        .await;
    let (url, key) = (made["url"].as_str().unwrap(), made["token"].as_str().unwrap());
    for (start_time, end_time) in [
        ("1969-07-20T20:17:00Z", "+10000-01-01T00:00:00Z"),
        ("2026-11-22T10:00:00+25:00", "0001-01-01T00:00:00Z"),
    ] {
        let answer = common::alerts::post_alert(
            url,
            key,
            &serde_json::json!({"title": format!("times {start_time}"), "start_time": start_time, "end_time": end_time}),
        )
        .await;
        assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
        let entry = &answer.json()[0];
        assert_eq!(entry["outcome"], "created", "{entry}");
        let warnings = entry["warnings"].to_string();
        assert!(warnings.contains("time of receipt was used"), "{warnings}");
        assert!(warnings.contains("was not resolved"), "{warnings}");
    }
}

#[tokio::test]
async fn a_fresh_data_directory_and_its_store_files_are_private_to_svcgates_user() {
    use std::os::unix::fs::PermissionsExt;
    let sim = common::sim::start().await;
    let parent = tempfile::tempdir().unwrap();
    let data_dir = parent.path().join("fresh");
    let gateway = TestGateway::start_in(&sim.url(), &data_dir, |_| {}).await;
    let health = get(&format!("{}/-/svcgate/health", gateway.url()), "").await;
    assert_eq!(health.status, StatusCode::OK);
    let mode = |name: &str| {
        std::fs::metadata(data_dir.join(name))
            .unwrap()
            .permissions()
            .mode()
            & 0o777
    };
    assert_eq!(mode(""), 0o700);
    for file in ["svcgate.db", "svcgate.db-wal", "svcgate.db-shm", "secret.key"] {
        assert_eq!(mode(file), 0o600, "{file}");
    }
    gateway.stop().await;
}

/// What a raw connection received until the server answered or closed it: the response head, if any.
async fn response_head(read: &mut tokio::net::tcp::OwnedReadHalf) -> Option<String> {
    use tokio::io::AsyncReadExt;
    let mut head = Vec::new();
    let mut buffer = [0u8; 2048];
    while !head.windows(4).any(|window| window == b"\r\n\r\n") {
        match read.read(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(count) => head.extend_from_slice(&buffer[..count]),
        }
    }
    (!head.is_empty()).then(|| String::from_utf8_lossy(&head).to_lowercase())
}

#[tokio::test]
async fn stalled_bodies_on_one_key_lose_their_hold_within_seconds_and_a_new_alert_on_that_key_gets_through() {
    use std::time::{Duration, Instant};
    use tokio::io::AsyncWriteExt;
    let (sim, demo) = common::sim::with_demo().await;
    let data_dir = tempfile::tempdir().unwrap();
    // svcgate as its own process, with the default settings, so that its memory is its own.
    let gateway =
        common::replicas::Replica::start_on_sqlite("gateway", &sim.url(), data_dir.path(), &[]).await;
    let made = common::send_json(
        http::Method::POST,
        &format!(
            "{}/-/svcgate/api/projects/{}/integrations",
            gateway.url(),
            demo.project_id
        ),
        &demo.token,
        serde_json::json!({"type": "generic", "active": true}),
    )
    .await;
    assert_eq!(made.status, StatusCode::CREATED, "{:?}", made.body);
    let integration = made.json();
    let url = integration["url"].as_str().unwrap().to_owned();
    let key = integration["token"].as_str().unwrap().to_owned();
    let path = url.splitn(4, '/').nth(3).unwrap().to_owned();
    // 300 connections on the key each declare 1 MiB, send about 1 MB of it at once, then stop.
    let head = format!(
        "POST /{path} HTTP/1.1\r\nhost: svcgate\r\nauthorization: Bearer {key}\r\n\
         content-type: application/json\r\ncontent-length: {}\r\n\r\n",
        1 << 20
    );
    let started = Instant::now();
    let mut senders = Vec::new();
    for _ in 0..300 {
        let stream = tokio::net::TcpStream::connect(gateway.address).await.unwrap();
        let head = head.clone();
        senders.push(tokio::spawn(async move {
            let (mut read, mut write) = stream.into_split();
            let sending = tokio::spawn(async move {
                let body = vec![b' '; 1_000_000];
                if write.write_all(head.as_bytes()).await.is_ok() {
                    drop(write.write_all(&body).await);
                }
                // Never finishes the body; holds the connection open until the answer has been read.
                tokio::time::sleep(Duration::from_secs(60)).await;
                drop(write);
            });
            let answer = tokio::time::timeout(Duration::from_secs(20), response_head(&mut read)).await;
            sending.abort();
            answer.ok().flatten()
        }));
    }
    // A small alert on the same key, on a fresh connection, 3 s later.
    tokio::time::sleep(Duration::from_secs(3).saturating_sub(started.elapsed())).await;
    let sent = Instant::now();
    let answer = tokio::time::timeout(
        Duration::from_secs(5),
        common::alerts::post_alert(&url, &key, &serde_json::json!({"title": "real trouble"})),
    )
    .await
    .expect("the alert was not answered within 5 s");
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    let waited = sent.elapsed();
    // Every stalled sender has an answer: 408 for the bodies being read, 503 with Retry-After for those over the
    // key's share.
    let (mut timed_out, mut busy) = (0, 0);
    for sender in senders {
        let head = sender.await.unwrap();
        let head = head.expect("a stalled sender got no answer");
        if head.starts_with("http/1.1 408") {
            timed_out += 1;
        } else if head.starts_with("http/1.1 503") {
            assert!(head.contains("retry-after: 1"), "{head}");
            busy += 1;
        } else {
            panic!("a stalled sender was answered {head}");
        }
    }
    assert!(timed_out >= 1, "{timed_out} timed out, {busy} busy");
    assert_eq!(timed_out + busy, 300);
    let peak = gateway.peak_resident_bytes();
    assert!(
        peak < 200 << 20,
        "svcgate's resident memory peaked at {} MiB",
        peak >> 20
    );
    eprintln!(
        "alert answered {waited:?} after it was sent; {timed_out} × 408, {busy} × 503; peak RSS {} MiB",
        peak >> 20
    );
}

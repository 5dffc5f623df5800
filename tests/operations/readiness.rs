//! Readiness as a load balancer reads it, over real sockets: it fails from the moment shutdown begins while the
//! listener stays open for `shutdown_delay` and in-flight requests complete, and it does not fail when the backend
//! is down (the backend's state is reported beside, and alert intake keeps answering); it fails while the data
//! disk is full, and passes again a second after space is freed. The backend probe behind it keeps to one pooled
//! backend connection.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use crate::common::alerts::{post_alert, AlertWorld};
use crate::common::origin::Origin;
use crate::common::{get, within, TestGateway};
use bytes::Bytes;
use http::StatusCode;
use http_body_util::{BodyExt, Empty};
use hyper_util::rt::TokioIo;
use serde_json::json;

/// Readiness of the gateway at `base`, on a connection of its own; `None` when no connection can be made.
async fn readiness(base: &str) -> Option<(StatusCode, serde_json::Value)> {
    let address = base.trim_start_matches("http://");
    let stream = tokio::net::TcpStream::connect(address).await.ok()?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .ok()?;
    tokio::spawn(connection);
    let request = http::Request::get(format!("{base}/-/svcgate/ready"))
        .header("host", address)
        .body(Empty::<Bytes>::new())
        .unwrap();
    let response = sender.send_request(request).await.ok()?;
    let status = response.status();
    let body = response.into_body().collect().await.ok()?.to_bytes();
    Some((status, serde_json::from_slice(&body).unwrap()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readiness_fails_at_shutdown_before_the_listener_closes_while_in_flight_requests_complete() {
    let origin = Origin::start().await;
    let mut gateway = TestGateway::start_with(&origin.url(), |raw| {
        raw.shutdown_delay = Some("2s".to_owned());
        raw.shutdown_grace = Some("10s".to_owned());
    })
    .await;
    let base = gateway.url();
    let (status, body) = readiness(&base).await.unwrap();
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["draining"], json!(false));
    assert_eq!(body["store"], json!("ok"));

    // A request in flight: the origin has sent its head and first bytes and holds the rest until released.
    let stream = tokio::net::TcpStream::connect(gateway.address).await.unwrap();
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(connection);
    let request = http::Request::get(format!("{base}/gated"))
        .header("host", gateway.address.to_string())
        .body(Empty::<Bytes>::new())
        .unwrap();
    let response = within(5, "the in-flight response head", sender.send_request(request))
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let mut in_flight = response.into_body();
    let first = within(5, "the first bytes", in_flight.frame())
        .await
        .unwrap()
        .unwrap()
        .into_data()
        .unwrap();
    assert_eq!(&first[..], b"first;");

    let signalled = Instant::now();
    gateway.begin_stop();
    // Readiness fails while new connections are still accepted and served…
    let draining = within(5, "readiness answering 503", async {
        loop {
            match readiness(&base).await {
                Some((StatusCode::SERVICE_UNAVAILABLE, body)) => break body,
                Some(_) => tokio::time::sleep(Duration::from_millis(10)).await,
                None => panic!("the listener closed before readiness failed"),
            }
        }
    })
    .await;
    assert_eq!(draining["draining"], json!(true), "{draining}");
    assert_eq!(draining["store"], json!("ok"), "{draining}");
    let failed_after = signalled.elapsed();
    // …until `shutdown_delay` is over, when the listener closes.
    within(10, "the listener closing", async {
        while tokio::net::TcpStream::connect(gateway.address).await.is_ok() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    let closed_after = signalled.elapsed();
    assert!(
        closed_after >= Duration::from_millis(1900),
        "the listener closed {closed_after:?} after the signal, before shutdown_delay"
    );
    assert!(failed_after < closed_after);

    // The request in flight still completes.
    origin.gate.notify_one();
    let rest = within(5, "the rest of the in-flight body", in_flight.collect())
        .await
        .unwrap()
        .to_bytes();
    assert_eq!(&rest[..], b"rest");
    within(15, "the gateway stopping", gateway.stop()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backend_that_is_down_is_reported_but_readiness_and_alert_intake_stay_up() {
    let world = AlertWorld::new().await;
    let created = world
        .integration(json!({"type": "generic", "active": true}))
        .await;
    let (url, key) = (
        created["url"].as_str().unwrap().to_owned(),
        created["token"].as_str().unwrap().to_owned(),
    );
    let base = world.gateway.url();
    within(10, "the backend reported up", async {
        loop {
            let (status, body) = readiness(&base).await.unwrap();
            assert_eq!(status, StatusCode::OK, "{body}");
            if body["backend"] == json!("ok") {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    let metrics =
        String::from_utf8(get(&format!("{base}/-/svcgate/metrics"), "").await.body.to_vec()).unwrap();
    assert!(metrics.contains("svcgate_backend_up 1"), "{metrics}");

    // The backend goes away: within a probe interval readiness says so, and stays 200.
    world.sim.shutdown();
    let body = within(15, "the backend reported failing", async {
        loop {
            let (status, body) = readiness(&base).await.unwrap();
            assert_eq!(status, StatusCode::OK, "{body}");
            if body["backend"].as_str().unwrap().starts_with("failing: ") {
                break body;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    assert_eq!(body["store"], json!("ok"));
    assert_eq!(body["draining"], json!(false));
    let metrics =
        String::from_utf8(get(&format!("{base}/-/svcgate/metrics"), "").await.body.to_vec()).unwrap();
    assert!(metrics.contains("svcgate_backend_up 0"), "{metrics}");

    // Alert intake does not need the backend.
    let answer = post_alert(
        &url,
        &key,
        &json!({"title": "backend down", "fingerprint": "backend"}),
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    assert_eq!(answer.json()[0]["outcome"], json!("created"));
}

/// A small file system of the test's own (tmpfs, as root), unmounted when dropped.
struct SmallDisk {
    dir: tempfile::TempDir,
}

impl SmallDisk {
    fn mount(size: &str) -> SmallDisk {
        let dir = tempfile::tempdir().unwrap();
        let status = std::process::Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size},mode=0700"),
                "svcgate-test",
            ])
            .arg(dir.path())
            .status()
            .unwrap();
        assert!(status.success(), "mounting a tmpfs needs root (CI runs as root)");
        SmallDisk { dir }
    }

    /// Writes a file until the file system is full.
    fn fill(&self) -> std::path::PathBuf {
        use std::io::Write;
        let filler = self.dir.path().join("filler");
        let mut file = std::fs::File::create(&filler).unwrap();
        let chunk = vec![0u8; 1 << 20];
        while file.write_all(&chunk).is_ok() {}
        filler
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        drop(
            std::process::Command::new("umount")
                .arg("-l")
                .arg(self.dir.path())
                .status(),
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readiness_fails_while_the_data_disk_is_full_and_recovers_without_a_restart() {
    let disk = SmallDisk::mount("48m");
    let data_dir = disk.dir.path().join("store");
    let world = AlertWorld::with(|raw| {
        raw.data_dir = Some(data_dir.clone());
        raw.ready_min_free_bytes = Some(8 << 20);
    })
    .await;
    let base = world.gateway.url();
    let made = world
        .integration(json!({"type": "generic", "active": true}))
        .await;
    let (url, key) = (made["url"].as_str().unwrap(), made["token"].as_str().unwrap());
    assert_eq!(
        post_alert(url, key, &json!({"title": "before"})).await.status,
        StatusCode::OK
    );
    assert_eq!(readiness(&base).await.unwrap().0, StatusCode::OK);

    // Full: readiness says so, whatever a one-row write would still manage.
    let filler = disk.fill();
    let (status, body) = readiness(&base).await.unwrap();
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert!(
        body["store"].as_str().unwrap().contains("ready_min_free_bytes"),
        "{body}"
    );

    // Space freed: ready again a second later, before any alert is written and without a restart.
    std::fs::remove_file(&filler).unwrap();
    tokio::time::sleep(Duration::from_secs(1)).await;
    let (status, body) = readiness(&base).await.unwrap();
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        post_alert(url, key, &json!({"title": "after"})).await.status,
        StatusCode::OK
    );
}

/// The backend probe behind readiness reads its small answer to the end, so the next probe reuses the pooled
/// connection: a probe every few seconds costs the backend no new connection (nor, over TLS, a handshake) each time.
#[tokio::test]
async fn backend_probes_reuse_one_pooled_connection() {
    let origin = Origin::start().await;
    let gateway = TestGateway::start(&origin.url()).await;
    let base = gateway.url();
    within(10, "the first probe's finding", async {
        while readiness(&base).await.unwrap().1["backend"] != json!("ok") {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    // The next readiness request after the probe interval starts a second probe.
    tokio::time::sleep(svcgate::server::internal::BACKEND_PROBE_INTERVAL + Duration::from_millis(200)).await;
    let (status, _) = readiness(&base).await.unwrap();
    assert_eq!(status, StatusCode::OK);
    let requests = || origin.requests.load(std::sync::atomic::Ordering::SeqCst);
    within(5, "the second probe's request", async {
        while requests() < 2 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert_eq!(requests(), 2, "one request a probe");
    assert_eq!(
        origin.connections.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "both probes went over one backend connection"
    );
    gateway.stop().await;
}

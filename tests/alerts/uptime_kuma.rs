//! A real sender: Uptime Kuma (from npm, installed by `./test.sh`) with two Webhook notifications, one posting its
//! JSON preset and one its multipart/form-data preset (the same JSON as the form's `data` field), each to an HTTP
//! Endpoint of svcgate whose payload format is `uptime_kuma`, and an HTTP monitor of a small target this test
//! stops and restarts. Their test messages are answered and ignored; the monitor going down triggers an alert at
//! each endpoint, mapped as `formats/uptime_kuma.toml` says, and coming back up resolves both.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use crate::common::alerts::{alerts, AlertWorld};
use crate::common::uptime_kuma::{start_uptime_kuma, UptimeKuma};

/// The monitored target: a loopback port answering `200 OK` (closing each connection) until stopped, and again
/// on the same port once restarted.
struct Target {
    port: u16,
    serving: Option<JoinHandle<()>>,
}

impl Target {
    async fn start() -> Target {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        Target {
            port,
            serving: Some(tokio::spawn(serve(listener))),
        }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/health", self.port)
    }

    /// Closes the port: connections are refused until [`Target::restart`].
    async fn stop(&mut self) {
        if let Some(serving) = self.serving.take() {
            serving.abort();
            let _ = serving.await;
        }
    }

    async fn restart(&mut self) {
        let listener = TcpListener::bind(("127.0.0.1", self.port)).await.unwrap();
        self.serving = Some(tokio::spawn(serve(listener)));
    }
}

impl Drop for Target {
    fn drop(&mut self) {
        if let Some(serving) = self.serving.take() {
            serving.abort();
        }
    }
}

/// Answers each connection's request with `200 OK` and closes it, one at a time, so that stopping the task
/// leaves nothing of the target open.
async fn serve(listener: TcpListener) {
    loop {
        let Ok((mut stream, _)) = listener.accept().await else {
            continue;
        };
        let mut request = Vec::new();
        let mut chunk = [0_u8; 1024];
        let read = tokio::time::timeout(Duration::from_secs(5), async {
            while !request.windows(4).any(|window| window == b"\r\n\r\n") {
                match stream.read(&mut chunk).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => request.extend_from_slice(&chunk[..n]),
                }
            }
        })
        .await;
        if read.is_ok() {
            let _ = stream
                .write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
                .await;
            let _ = stream.shutdown().await;
        }
    }
}

/// Waits up to 60 s (Uptime Kuma checks every 20 s at the most often) until the alerts satisfy `check`.
async fn wait_for(
    world: &AlertWorld,
    kuma: &UptimeKuma,
    what: &str,
    check: impl Fn(&[Value]) -> bool,
) -> Vec<Value> {
    let started = Instant::now();
    loop {
        let listed = alerts(world).await;
        if check(&listed) {
            return listed;
        }
        if started.elapsed() > Duration::from_secs(60) {
            panic!(
                "timed out waiting for {what}; alerts: {listed:?}\nUptime Kuma's log:\n{}",
                kuma.log_tail()
            );
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn uptime_kuma_monitor_going_down_triggers_an_alert_and_coming_back_up_resolves_it_as_json_and_as_a_form(
) {
    let world = AlertWorld::new().await;
    let endpoint =
        |name: &str| json!({"type": "http", "name": name, "payload_format": "uptime_kuma", "active": true});
    let as_json = world.integration(endpoint("Uptime Kuma")).await;
    let as_form = world.integration(endpoint("Uptime Kuma (form)")).await;
    let mut target = Target::start().await;
    let kuma = start_uptime_kuma().await;
    let setup = kuma
        .set_up(
            as_json["url"].as_str().unwrap(),
            as_json["token"].as_str().unwrap(),
            Some((
                as_form["url"].as_str().unwrap(),
                as_form["token"].as_str().unwrap(),
            )),
            &target.url(),
            "Shop API",
            "ci",
        )
        .await;
    // Uptime Kuma counts only a 2xx answer as sent; its test messages carry no heartbeat and make no alert.
    assert_eq!(setup["test"]["msg"], json!("Sent Successfully."), "{setup}");
    assert_eq!(setup["form_test"]["msg"], json!("Sent Successfully."), "{setup}");
    assert!(alerts(&world).await.is_empty());

    // Grouping is per integration: each endpoint keeps an alert of its own for the one monitor.
    target.stop().await;
    let fired = wait_for(
        &world,
        &kuma,
        "the monitor's down alert at both endpoints",
        |alerts| alerts.len() >= 2,
    )
    .await;
    assert_eq!(fired.len(), 2, "{fired:?}");
    let mut from: Vec<&Value> = fired.iter().map(|alert| &alert["integration_id"]).collect();
    from.sort_by_key(|id| id.as_u64());
    let mut endpoints = vec![&as_json["id"], &as_form["id"]];
    endpoints.sort_by_key(|id| id.as_u64());
    assert_eq!(from, endpoints, "one alert from each endpoint, the form's too");
    for alert in &fired {
        assert_eq!(alert["status"], json!("triggered"), "{alert}");
        assert_eq!(alert["title"], json!("Shop API"));
        assert!(
            alert["description"].as_str().unwrap().contains("ECONNREFUSED"),
            "{alert}"
        );
        assert_eq!(alert["severity"], json!("high"));
        assert_eq!(alert["hosts"], json!(["127.0.0.1"]));
        assert_eq!(alert["service"], json!("Shop API"));
        assert_eq!(alert["monitoring_tool"], json!("Uptime Kuma"));
        assert_eq!(alert["environment"], json!("ci"));
        assert!(alert["ended_at"].is_null(), "{alert}");
    }

    target.restart().await;
    let resolved = wait_for(&world, &kuma, "the monitor's up to resolve both", |alerts| {
        alerts
            .iter()
            .filter(|alert| alert["status"] == json!("resolved"))
            .count()
            == 2
    })
    .await;
    assert_eq!(
        resolved.len(),
        2,
        "coming back up resolves the same two alerts: {resolved:?}"
    );
    let iids = |alerts: &[Value]| {
        let mut iids: Vec<u64> = alerts
            .iter()
            .map(|alert| alert["iid"].as_u64().unwrap())
            .collect();
        iids.sort_unstable();
        iids
    };
    assert_eq!(iids(&resolved), iids(&fired));
    for alert in &resolved {
        assert!(alert["ended_at"].is_string(), "{alert}");
    }
}

//! A real sender: Prometheus Alertmanager (Debian's `prometheus-alertmanager`, installed by `./test.sh`) with a
//! webhook receiver pointing at a prometheus integration of svcgate. Alerts pushed into it through its own API
//! arrive in svcgate, are grouped on repeats, and are resolved.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use crate::common::alertmanager::start_alertmanager;
use crate::common::alerts::AlertWorld;
use crate::common::get;
use serde_json::{json, Value};

async fn wait_for(world: &AlertWorld, what: &str, check: impl Fn(&Value) -> bool) -> Value {
    for _ in 0..300 {
        let alerts = get(&world.api("/alerts?status=all"), &world.developer)
            .await
            .json();
        if check(&alerts) {
            return alerts;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("timed out waiting for {what}");
}

fn by_host<'a>(alerts: &'a Value, host: &str) -> Option<&'a Value> {
    alerts
        .as_array()?
        .iter()
        .find(|alert| alert["hosts"] == json!([host]))
}

#[tokio::test]
async fn alertmanager_alerts_arrive_grouped_then_resolved() {
    let world = AlertWorld::new().await;
    let made = world
        .integration(json!({"type": "prometheus", "active": true}))
        .await;
    let manager = start_alertmanager(made["url"].as_str().unwrap(), made["token"].as_str().unwrap()).await;
    let now = time::OffsetDateTime::now_utc();
    let stamp = |t: time::OffsetDateTime| t.format(&time::format_description::well_known::Rfc3339).unwrap();
    let alert = |instance: &str, ends: Option<time::OffsetDateTime>| {
        let mut value = json!({
            "labels": {"alertname": "DiskFull", "instance": instance, "severity": "critical"},
            "annotations": {"summary": format!("Disk full on {instance}")},
            "startsAt": stamp(now),
        });
        if let Some(ends) = ends {
            value["endsAt"] = json!(stamp(ends));
        }
        value
    };
    manager
        .push(&json!([alert("db1", None), alert("db2", None)]))
        .await;
    let arrived = wait_for(&world, "both alerts", |alerts| {
        by_host(alerts, "db1").is_some() && by_host(alerts, "db2").is_some()
    })
    .await;
    let db1 = by_host(&arrived, "db1").unwrap();
    assert_eq!(db1["title"], json!("Disk full on db1"));
    assert_eq!(db1["monitoring_tool"], json!("Prometheus"));
    assert_eq!(db1["severity"], json!("critical"));
    assert_eq!(db1["status"], json!("triggered"));

    // Alertmanager repeats firing alerts every repeat_interval: the repeats are grouped into the same alert.
    wait_for(&world, "a repeat grouped", |alerts| {
        by_host(alerts, "db1").is_some_and(|alert| alert["events"].as_u64().unwrap_or(0) >= 2)
    })
    .await;
    let alerts = get(&world.api("/alerts?status=all"), &world.developer)
        .await
        .json();
    assert_eq!(
        alerts.as_array().unwrap().len(),
        2,
        "repeats never make new alerts"
    );

    let ended = time::OffsetDateTime::now_utc() - time::Duration::seconds(1);
    manager
        .push(&json!([alert("db1", Some(ended)), alert("db2", Some(ended))]))
        .await;
    let resolved = wait_for(&world, "both resolved", |alerts| {
        ["db1", "db2"]
            .iter()
            .all(|host| by_host(alerts, host).is_some_and(|alert| alert["status"] == json!("resolved")))
    })
    .await;
    assert!(by_host(&resolved, "db1").unwrap()["ended_at"].is_string());
}

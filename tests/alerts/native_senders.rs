//! Real senders of native formats: Debian's Prometheus Alertmanager (`prometheus-alertmanager`, installed by
//! `./test.sh`) with its own `pagerduty_configs` (PagerDuty Events API v2, the key as `routing_key` in the body) and
//! `opsgenie_configs` (Opsgenie's Alert API, `Authorization: GenieKey`, closing by alias), each pointed at an HTTP
//! Endpoint of svcgate reading that format. An alert pushed into Alertmanager arrives triggered, mapped as the
//! format says, and its resolution resolves it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use serde_json::{json, Value};

use crate::common::alertmanager::{start_alertmanager_with, Alertmanager};
use crate::common::alerts::AlertWorld;
use crate::common::get;

/// Waits up to 15 s until the demo project's alerts pass `check`; else fails with Alertmanager's log.
async fn wait_for(
    world: &AlertWorld,
    manager: &Alertmanager,
    what: &str,
    check: impl Fn(&[Value]) -> bool,
) -> Vec<Value> {
    let mut alerts = Vec::new();
    for _ in 0..150 {
        alerts = get(&world.api("/alerts?status=all"), &world.developer)
            .await
            .json()
            .as_array()
            .cloned()
            .unwrap_or_default();
        if check(&alerts) {
            return alerts;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!(
        "timed out waiting for {what}; svcgate has {alerts:?}; Alertmanager logged:\n{}",
        manager.log()
    );
}

/// Alertmanager's API body of one DiskFull alert on `db1`, firing, or resolved when `ended` is true.
fn disk_full(started: time::OffsetDateTime, ended: bool) -> Value {
    let stamp = |t: time::OffsetDateTime| t.format(&time::format_description::well_known::Rfc3339).unwrap();
    let mut alert = json!({
        "labels": {"alertname": "DiskFull", "instance": "db1", "job": "node", "severity": "critical"},
        "annotations": {"summary": "Disk full on db1"},
        "startsAt": stamp(started),
    });
    if ended {
        alert["endsAt"] = json!(stamp(
            time::OffsetDateTime::now_utc() - time::Duration::seconds(1)
        ));
    }
    json!([alert])
}

/// Pushes DiskFull firing, waits until svcgate shows it triggered and returns it; then pushes it resolved and waits
/// until svcgate shows that one alert resolved.
async fn fire_then_resolve(world: &AlertWorld, manager: &Alertmanager) -> Value {
    let started = time::OffsetDateTime::now_utc();
    manager.push(&disk_full(started, false)).await;
    let open = wait_for(world, manager, "the alert triggered", |alerts| {
        alerts.iter().any(|alert| alert["status"] == json!("triggered"))
    })
    .await;
    assert_eq!(open.len(), 1, "{open:?}");
    let triggered = open[0].clone();

    manager.push(&disk_full(started, true)).await;
    let resolved = wait_for(world, manager, "the alert resolved", |alerts| {
        alerts.iter().any(|alert| alert["status"] == json!("resolved"))
    })
    .await;
    assert_eq!(
        resolved.len(),
        1,
        "the resolution closes the same alert: {resolved:?}"
    );
    assert_eq!(resolved[0]["iid"], triggered["iid"]);
    assert!(resolved[0]["ended_at"].is_string(), "{resolved:?}");
    triggered
}

#[tokio::test]
async fn alertmanager_pagerduty_configs_trigger_then_resolve_by_dedup_key() {
    let world = AlertWorld::new().await;
    let (url, key) = world.endpoint("pagerduty").await;
    // `url` is Alertmanager's Events API v2 address; send_resolved is on by default. The key travels in the body.
    let receiver = format!(
        "pagerduty_configs:\n  - url: '{url}'\n    routing_key: '{key}'\n{}",
        "    source: '{{ .CommonLabels.instance }}'\n    component: '{{ .CommonLabels.job }}'\n    \
         severity: '{{ .CommonLabels.severity }}'\n"
    );
    let manager = start_alertmanager_with(&receiver).await;
    let alert = fire_then_resolve(&world, &manager).await;
    assert_eq!(alert["title"], json!("[FIRING:1] DiskFull (db1 node critical)"));
    assert_eq!(alert["severity"], json!("critical"));
    assert_eq!(alert["hosts"], json!(["db1"]));
    assert_eq!(alert["service"], json!("node"));
    assert_eq!(alert["monitoring_tool"], json!("Alertmanager"));
}

#[tokio::test]
async fn alertmanager_opsgenie_configs_create_then_close_by_alias() {
    let world = AlertWorld::new().await;
    let (url, key) = world.endpoint("opsgenie").await;
    // Alertmanager appends `v2/alerts` (and `v2/alerts/<alias>/close?identifierType=alias`) to `api_url`, and sends
    // `Authorization: GenieKey <api_key>`. Nothing else is configured: no priority, no entity.
    let receiver = format!("opsgenie_configs:\n  - api_key: '{key}'\n    api_url: '{url}/'\n");
    let manager = start_alertmanager_with(&receiver).await;
    let alert = fire_then_resolve(&world, &manager).await;
    assert_eq!(alert["title"], json!("[FIRING:1] DiskFull (db1 node critical)"));
    assert!(
        alert["description"]
            .as_str()
            .is_some_and(|text| text.starts_with("Disk full on db1\nAlerts Firing:")),
        "{alert:?}"
    );
    assert_eq!(alert["hosts"], json!(["db1"]));
    assert_eq!(alert["service"], json!("node"));
    assert_eq!(alert["monitoring_tool"], json!("Alertmanager"));
    assert_eq!(alert["severity"], json!("critical"));
}

// With `update_alerts: true`, Alertmanager also sends `PUT …/v2/alerts/<alias>/message` and `…/description`
// (Opsgenie's own methods for them): the format's routes take them (`method = "PUT"`), and the close still comes.
#[tokio::test]
async fn alertmanager_opsgenie_configs_updating_alerts_still_close_them() {
    let world = AlertWorld::new().await;
    let (url, key) = world.endpoint("opsgenie").await;
    let receiver =
        format!("opsgenie_configs:\n  - api_key: '{key}'\n    api_url: '{url}/'\n    update_alerts: true\n");
    let manager = start_alertmanager_with(&receiver).await;
    let alert = fire_then_resolve(&world, &manager).await;
    assert_eq!(alert["title"], json!("[FIRING:1] DiskFull (db1 node critical)"));
    assert!(
        !manager.log().contains("Notify for alerts failed"),
        "{}",
        manager.log()
    );
}

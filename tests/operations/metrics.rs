//! svcgate's metrics as ops read them: a real Prometheus (Debian's `prometheus`, installed by `./test.sh`) scrapes
//! a real svcgate process and answers, through its query API, the alerts that were sent; the alerting rules in
//! `deploy/prometheus/` load and evaluate in it; every expression of the Grafana dashboard runs in it; and every
//! metric the rules and the dashboard name is one svcgate exports. The counts read from the store at scrape time
//! (open alerts, the outbox backlog) are checked on SQLite and on two replicas sharing PostgreSQL, and left out
//! when the database is gone.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use crate::common::alerts::{post_alert, AlertWorld};
use crate::common::postgres::Postgres;
use crate::common::prometheus::{Prometheus, RULES};
use crate::common::replicas::{Replica, KEY};
use crate::common::{send, send_json, TestGateway};
use http::{Method, StatusCode};
use serde_json::{json, Value};

const DASHBOARD: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/deploy/grafana/svcgate-dashboard.json"
);

/// One sample of a scrape: its name, labels and value.
#[derive(Debug, Clone)]
struct Sample {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

/// The labels of a sample line, `a="x",b="y"` (values may hold escaped quotes and backslashes).
fn parse_labels(text: &str) -> BTreeMap<String, String> {
    let mut labels = BTreeMap::new();
    let mut rest = text;
    while let Some((name, after)) = rest.split_once("=\"") {
        let mut value = String::new();
        let mut chars = after.char_indices();
        let mut end = after.len();
        while let Some((index, c)) = chars.next() {
            match c {
                '\\' => {
                    if let Some((_, escaped)) = chars.next() {
                        value.push(if escaped == 'n' { '\n' } else { escaped });
                    }
                }
                '"' => {
                    end = index + 1;
                    break;
                }
                other => value.push(other),
            }
        }
        labels.insert(name.trim_start_matches(',').trim().to_owned(), value);
        rest = &after[end..];
    }
    labels
}

/// Every sample of a scrape in the text format.
fn samples(text: &str) -> Vec<Sample> {
    text.lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .map(|line| {
            let (series, value) = line.rsplit_once(' ').unwrap();
            let (name, labels) = match series.split_once('{') {
                Some((name, labels)) => (name, parse_labels(labels.strip_suffix('}').unwrap())),
                None => (series, BTreeMap::new()),
            };
            Sample {
                name: name.to_owned(),
                labels,
                value: value.parse().unwrap(),
            }
        })
        .collect()
}

/// The value of the sample `name` whose labels include `labels`, if any.
fn value(samples: &[Sample], name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    samples
        .iter()
        .find(|sample| {
            sample.name == name
                && labels
                    .iter()
                    .all(|(key, value)| sample.labels.get(*key).map(String::as_str) == Some(*value))
        })
        .map(|sample| sample.value)
}

/// The sample names a scrape can carry, from its `# TYPE` lines: a counter `x` is sampled as `x_total`, a
/// histogram as `x_bucket`, `x_sum` and `x_count`, an info `x` as `x_info`. Families without samples yet (a
/// counter no request has touched) are included: they are exported, with their first event.
fn exported_names(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for line in text.lines() {
        let Some(declared) = line.strip_prefix("# TYPE ") else {
            continue;
        };
        let (name, kind) = declared.split_once(' ').unwrap();
        match kind {
            "counter" => drop(names.insert(format!("{name}_total"))),
            "histogram" => {
                for suffix in ["_bucket", "_sum", "_count"] {
                    names.insert(format!("{name}{suffix}"));
                }
            }
            "info" => drop(names.insert(format!("{name}_info"))),
            _ => drop(names.insert(name.to_owned())),
        }
    }
    names
}

/// Scrapes `/-/svcgate/metrics` of the gateway at `base`.
async fn scrape(base: &str) -> String {
    let answer = send(Method::GET, &format!("{base}/-/svcgate/metrics"), &[], None).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(
        answer.header("content-type"),
        Some("application/openmetrics-text; version=1.0.0; charset=utf-8")
    );
    String::from_utf8(answer.body.to_vec()).unwrap()
}

/// Scrapes until `check` holds on the samples (at most 20 s), answering them.
async fn scrape_until(base: &str, what: &str, check: impl Fn(&[Sample]) -> bool) -> Vec<Sample> {
    let started = Instant::now();
    loop {
        let found = samples(&scrape(base).await);
        if check(&found) {
            return found;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{what} not seen in: {found:#?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The metric names a PromQL text mentions (svcgate's own, the process's, and `up`).
fn metric_names(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let bytes = text.as_bytes();
    let mut start = 0;
    while start < bytes.len() {
        let is_name = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
        if !is_name(bytes[start]) {
            start += 1;
            continue;
        }
        let mut end = start;
        while end < bytes.len() && is_name(bytes[end]) {
            end += 1;
        }
        let word = &text[start..end];
        let preceded_by_name_char = start > 0 && (bytes[start - 1] == b'$' || bytes[start - 1] == b'.');
        if !preceded_by_name_char && (word.starts_with("svcgate_") || word.starts_with("process_")) {
            names.insert(word.to_owned());
        }
        start = end;
    }
    names
}

/// Every PromQL expression of the dashboard, from its panels (and rows' panels).
fn dashboard_expressions() -> Vec<String> {
    let dashboard: Value = serde_json::from_str(&std::fs::read_to_string(DASHBOARD).unwrap()).unwrap();
    let mut expressions = Vec::new();
    let mut panels: Vec<&Value> = dashboard["panels"].as_array().unwrap().iter().collect();
    while let Some(panel) = panels.pop() {
        if let Some(inner) = panel["panels"].as_array() {
            panels.extend(inner);
        }
        for target in panel["targets"].as_array().into_iter().flatten() {
            expressions.push(target["expr"].as_str().unwrap().to_owned());
        }
    }
    expressions
}

/// The dashboard's variables as a query sees them with job `svcgate` and every replica chosen.
fn with_dashboard_variables(expression: &str) -> String {
    expression
        .replace("$job", "svcgate")
        .replace("$instance", ".*")
        .replace("$__rate_interval", "1m")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_metric_the_rules_and_dashboard_name_is_one_svcgate_exports() {
    let world = AlertWorld::new().await;
    let exported = exported_names(&scrape(&world.gateway.url()).await);
    let rules = std::fs::read_to_string(RULES).unwrap();
    let mut named = metric_names(&rules);
    let expressions = dashboard_expressions();
    assert!(expressions.len() >= 20, "{expressions:?}");
    for expression in &expressions {
        named.extend(metric_names(expression));
    }
    // What the issue asked the dashboard and rules to show is there.
    for expected in [
        "svcgate_requests_total",
        "svcgate_request_duration_seconds_bucket",
        "svcgate_v3_requests_total",
        "svcgate_v3_active_clients",
        "svcgate_v3_retired_clients_returned_total",
        "svcgate_alerts_received_total",
        "svcgate_alerts_open",
        "svcgate_incident_outbox_backlog",
        "svcgate_incident_outbox_done_total",
        "svcgate_store_commit_duration_seconds_bucket",
        "svcgate_store_commit_batch_size_bucket",
        "svcgate_backend_up",
        "process_cpu_seconds_total",
        "process_resident_memory_bytes",
        "process_open_fds",
    ] {
        assert!(named.contains(expected), "{expected} is not shown: {named:?}");
    }
    let unknown: Vec<&String> = named.difference(&exported).collect();
    assert!(
        unknown.is_empty(),
        "named by the rules or dashboard but not exported: {unknown:?}; exported: {exported:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alerts_are_counted_by_type_and_outcome_and_refusals_by_reason() {
    let world = AlertWorld::new().await;
    let generic = world
        .integration(json!({"type": "generic", "active": true}))
        .await;
    let prometheus = world
        .integration(json!({"type": "prometheus", "active": true}))
        .await;
    let (url, key) = (
        generic["url"].as_str().unwrap(),
        generic["token"].as_str().unwrap(),
    );
    for fingerprint in ["a", "b", "a", "a"] {
        let sent = post_alert(url, key, &json!({"title": "Disk", "fingerprint": fingerprint})).await;
        assert_eq!(sent.status, StatusCode::OK);
    }
    let resolve = json!({"fingerprint": "b", "end_time": "2026-11-22T10:00:00Z"});
    assert_eq!(post_alert(url, key, &resolve).await.status, StatusCode::OK);
    assert_eq!(post_alert(url, key, &resolve).await.status, StatusCode::OK);
    assert_eq!(
        post_alert(url, "wrong-key", &json!({})).await.status,
        StatusCode::UNAUTHORIZED
    );
    let not_json = send(
        Method::POST,
        url,
        &[("authorization", &format!("Bearer {key}"))],
        Some(("application/json", b"{not json".to_vec())),
    )
    .await;
    assert_eq!(not_json.status, StatusCode::BAD_REQUEST);
    // An Alertmanager envelope of two alerts counts two alerts.
    let envelope = json!({"version": "4", "status": "firing", "alerts": [
        {"status": "firing", "labels": {"alertname": "A"}, "startsAt": "2026-11-22T09:00:00Z"},
        {"status": "firing", "labels": {"alertname": "B"}, "startsAt": "2026-11-22T09:00:00Z"}]});
    let sent = post_alert(
        prometheus["url"].as_str().unwrap(),
        prometheus["token"].as_str().unwrap(),
        &envelope,
    )
    .await;
    assert_eq!(sent.status, StatusCode::CREATED);
    // An address no integration has.
    let unknown = format!("{}/nobody/nothing/alerts/notify.json", world.gateway.url());
    assert_eq!(
        post_alert(&unknown, key, &json!({})).await.status,
        StatusCode::NOT_FOUND
    );

    let found = samples(&scrape(&world.gateway.url()).await);
    let received = |integration_type: &str, outcome: &str, reason: &str| {
        value(
            &found,
            "svcgate_alerts_received_total",
            &[
                ("integration_type", integration_type),
                ("outcome", outcome),
                ("reason", reason),
            ],
        )
    };
    assert_eq!(received("generic", "created", ""), Some(2.0));
    assert_eq!(received("generic", "grouped", ""), Some(2.0));
    assert_eq!(received("generic", "resolved", ""), Some(1.0));
    assert_eq!(received("generic", "no_open_alert", ""), Some(1.0));
    assert_eq!(received("generic", "refused", "unauthorized"), Some(1.0));
    assert_eq!(received("generic", "refused", "invalid_json"), Some(1.0));
    assert_eq!(received("generic", "refused", "not_found"), Some(1.0));
    assert_eq!(received("prometheus", "created", ""), Some(2.0));
    let series = found
        .iter()
        .filter(|sample| sample.name == "svcgate_alerts_received_total")
        .count();
    assert_eq!(series, 8, "{found:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_alerts_the_outbox_and_store_commits_are_read_when_scraped() {
    let world = AlertWorld::new().await;
    let base = world.gateway.url();
    let settings = send_json(
        Method::PUT,
        &world.api("/alert_settings"),
        &world.maintainer,
        json!({"create_incident": true}),
    )
    .await;
    assert_eq!(settings.status, StatusCode::OK, "{:?}", settings.body);
    let generic = world
        .integration(json!({"type": "generic", "active": true}))
        .await;
    let (url, key) = (
        generic["url"].as_str().unwrap(),
        generic["token"].as_str().unwrap(),
    );
    for (fingerprint, severity) in [("a", "high"), ("b", "high"), ("c", "low"), ("a", "high")] {
        let alert = json!({"title": "Disk", "fingerprint": fingerprint, "severity": severity});
        assert_eq!(post_alert(url, key, &alert).await.status, StatusCode::OK);
    }
    // No service_token is configured: each incident call fails, and waits in the outbox for its retry.
    let found = scrape_until(&base, "three failed incident calls", |found| {
        value(
            found,
            "svcgate_incident_outbox_failures_total",
            &[("kind", "create_incident")],
        )
        .is_some_and(|failures| failures >= 3.0)
    })
    .await;
    let open =
        |found: &[Sample], severity: &str| value(found, "svcgate_alerts_open", &[("severity", severity)]);
    assert_eq!(open(&found, "high"), Some(2.0));
    assert_eq!(open(&found, "low"), Some(1.0));
    assert_eq!(open(&found, "critical"), Some(0.0));
    assert_eq!(value(&found, "svcgate_incident_outbox_backlog", &[]), Some(3.0));
    assert_eq!(value(&found, "svcgate_store_gauges_up", &[]), Some(1.0));
    assert_eq!(
        value(
            &found,
            "svcgate_incident_outbox_done_total",
            &[("kind", "create_incident")]
        ),
        Some(0.0)
    );
    // Each alert was one write of a commit; other writes (the settings, the integration) commit too.
    let commits = value(&found, "svcgate_store_commit_duration_seconds_count", &[]).unwrap();
    let writes = value(&found, "svcgate_store_commit_batch_size_sum", &[]).unwrap();
    assert!(
        commits >= 1.0 && writes >= 4.0,
        "{commits} commits, {writes} writes"
    );
    assert_eq!(
        value(&found, "svcgate_store_commit_batch_size_count", &[]),
        Some(commits)
    );

    // Resolving and acknowledging change the counts at the next scrape; acknowledged alerts are still open.
    let resolve = json!({"fingerprint": "c", "end_time": "2026-11-22T10:00:00Z"});
    assert_eq!(post_alert(url, key, &resolve).await.status, StatusCode::OK);
    let acknowledged = send_json(
        Method::PUT,
        &world.api("/alerts/1"),
        &world.developer,
        json!({"status": "acknowledged"}),
    )
    .await;
    assert_eq!(acknowledged.status, StatusCode::OK, "{:?}", acknowledged.body);
    let found = samples(&scrape(&base).await);
    assert_eq!(open(&found, "high"), Some(2.0));
    assert_eq!(open(&found, "low"), Some(0.0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn replicas_on_one_postgresql_report_the_same_whole_open_alert_counts() {
    let cluster = tokio::task::spawn_blocking(Postgres::start).await.unwrap();
    let url = cluster.database("svcgate").await;
    let shared = |raw: &mut svcgate::config::RawConfig| {
        raw.database_url = Some(url.clone());
        raw.secret_key = Some(KEY.to_owned());
    };
    let world = AlertWorld::with(shared).await;
    let second = TestGateway::start_with(&world.sim.url(), shared).await;
    let generic = world
        .integration(json!({"type": "generic", "active": true}))
        .await;
    let path: http::Uri = generic["url"].as_str().unwrap().parse().unwrap();
    let key = generic["token"].as_str().unwrap();
    let first_address = format!("{}{}", world.gateway.url(), path.path());
    let second_address = format!("{}{}", second.url(), path.path());
    // The second replica learns of the integration from the first's change notice.
    let started = Instant::now();
    loop {
        let alert = json!({"fingerprint": "on-second", "severity": "medium"});
        if post_alert(&second_address, key, &alert).await.status == StatusCode::OK {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the second replica never took the key"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    for fingerprint in ["x", "y", "on-second"] {
        let alert = json!({"fingerprint": fingerprint, "severity": "medium"});
        assert_eq!(
            post_alert(&first_address, key, &alert).await.status,
            StatusCode::OK
        );
    }
    for base in [world.gateway.url(), second.url()] {
        let found = samples(&scrape(&base).await);
        assert_eq!(
            value(&found, "svcgate_alerts_open", &[("severity", "medium")]),
            Some(3.0),
            "{base}: {found:#?}"
        );
        assert_eq!(value(&found, "svcgate_incident_outbox_backlog", &[]), Some(0.0));
    }
    // Each replica observes its own writer's commits: the first committed three events, the second one.
    let first = samples(&scrape(&world.gateway.url()).await);
    let second_samples = samples(&scrape(&second.url()).await);
    assert_eq!(
        value(&first, "svcgate_store_commit_batch_size_sum", &[]),
        Some(3.0)
    );
    assert_eq!(
        value(&second_samples, "svcgate_store_commit_batch_size_sum", &[]),
        Some(1.0)
    );

    // The database goes away: a scrape still answers, at once, without the store's counts (not stale ones), and
    // says so.
    tokio::task::spawn_blocking(move || drop(cluster)).await.unwrap();
    let started = Instant::now();
    let found = samples(&scrape(&second.url()).await);
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(value(&found, "svcgate_store_gauges_up", &[]), Some(0.0));
    assert_eq!(
        value(&found, "svcgate_alerts_open", &[("severity", "medium")]),
        None
    );
    assert_eq!(value(&found, "svcgate_incident_outbox_backlog", &[]), None);
    assert!(value(&found, "process_resident_memory_bytes", &[]).is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_prometheus_scrapes_svcgate_and_reads_back_the_alerts_it_was_sent() {
    let (sim, demo) = common::sim::with_demo().await;
    let data_dir = tempfile::tempdir().unwrap();
    let data = data_dir.path().display().to_string();
    let svcgate = Replica::serve("svcgate", &["--backend", &sim.url(), "--data-dir", &data], &[]).await;
    let made = send_json(
        Method::POST,
        &format!(
            "{}/-/svcgate/api/projects/{}/integrations",
            svcgate.url(),
            demo.project_id
        ),
        &demo.token,
        json!({"type": "http", "name": "Disk alerts", "active": true}),
    )
    .await;
    assert_eq!(made.status, StatusCode::CREATED, "{:?}", made.body);
    let made = made.json();
    let path: http::Uri = made["url"].as_str().unwrap().parse().unwrap();
    let url = format!("{}{}", svcgate.url(), path.path());
    let key = made["token"].as_str().unwrap();
    for (fingerprint, severity) in [("db1", "high"), ("db2", "high"), ("db3", "low"), ("db1", "high")] {
        let alert = json!({"title": "Disk full", "fingerprint": fingerprint, "severity": severity});
        assert_eq!(post_alert(&url, key, &alert).await.status, StatusCode::OK);
    }
    let resolve = json!({"fingerprint": "db2", "end_time": "2026-11-22T10:00:00Z"});
    assert_eq!(post_alert(&url, key, &resolve).await.status, StatusCode::OK);
    for _ in 0..2 {
        assert_eq!(
            post_alert(&url, "wrong-key", &json!({})).await.status,
            StatusCode::UNAUTHORIZED
        );
    }

    let prometheus = Prometheus::start(&svcgate.address.to_string()).await;
    let received = |outcome: &str, reason: &str| {
        format!(
            "svcgate_alerts_received_total{{job=\"svcgate\", integration_type=\"http\", outcome=\"{outcome}\", reason=\"{reason}\"}}"
        )
    };
    assert_eq!(
        prometheus.value_until(&received("created", ""), 3.0).await,
        Some(3.0),
        "svcgate's log: {}",
        svcgate.log.lock().unwrap()
    );
    assert_eq!(
        prometheus.value_until(&received("grouped", ""), 1.0).await,
        Some(1.0)
    );
    assert_eq!(
        prometheus.value_until(&received("resolved", ""), 1.0).await,
        Some(1.0)
    );
    assert_eq!(
        prometheus
            .value_until(&received("refused", "unauthorized"), 2.0)
            .await,
        Some(2.0)
    );
    assert_eq!(
        prometheus
            .value_until("svcgate_alerts_open{job=\"svcgate\", severity=\"high\"}", 1.0)
            .await,
        Some(1.0)
    );
    assert_eq!(
        prometheus
            .value_until("svcgate_alerts_open{job=\"svcgate\", severity=\"low\"}", 1.0)
            .await,
        Some(1.0)
    );
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(
        prometheus
            .value_until(&format!("svcgate_build_info{{version=\"{version}\"}}"), 1.0)
            .await,
        Some(1.0)
    );
    assert_eq!(
        prometheus.value_until("up{job=\"svcgate\"}", 1.0).await,
        Some(1.0)
    );
    // The process metrics are svcgate's own: its start within the last minutes, some memory and descriptors.
    let now = time::OffsetDateTime::now_utc().unix_timestamp() as f64;
    let start = prometheus
        .value_when("process_start_time_seconds{job=\"svcgate\"}", |_| true)
        .await
        .unwrap();
    assert!(
        start <= now + 1.0 && start > now - 600.0,
        "start {start}, now {now}"
    );
    for (expression, low, high) in [
        ("process_resident_memory_bytes{job=\"svcgate\"}", 1e6, 1e9),
        ("process_open_fds{job=\"svcgate\"}", 5.0, 10_000.0),
        ("process_max_fds{job=\"svcgate\"}", 64.0, f64::MAX),
        ("process_cpu_seconds_total{job=\"svcgate\"}", 0.0, 600.0),
    ] {
        let seen = prometheus.value_when(expression, |_| true).await.unwrap();
        assert!(seen > low && seen < high, "{expression} = {seen}");
    }

    // The alerting rules loaded and evaluate without error; none fires against a healthy svcgate (once it has
    // been scraped: before that, SvcgateDown is rightly pending, as no target has answered yet).
    let started = Instant::now();
    let groups = loop {
        let rules: Value = serde_json::from_slice(
            &send(
                Method::GET,
                &format!("{}/api/v1/rules", prometheus.url),
                &[],
                None,
            )
            .await
            .body,
        )
        .unwrap();
        let groups = rules["data"]["groups"].clone();
        let evaluated = groups[0]["rules"].as_array().is_some_and(|rules| {
            rules
                .iter()
                .all(|rule| rule["health"] == "ok" && rule["state"] == "inactive")
        });
        if evaluated || started.elapsed() > Duration::from_secs(20) {
            break groups;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    let rules = groups[0]["rules"].as_array().unwrap();
    let names: Vec<&str> = rules.iter().map(|rule| rule["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "SvcgateDown",
            "SvcgateBackendUnreachable",
            "SvcgateOutboxStuck",
            "SvcgateStoreSlow",
            "SvcgateRefusalsRising",
            "SvcgateV3RetiredClientReturned"
        ]
    );
    for rule in rules {
        assert_eq!(rule["health"], "ok", "{rule}");
        assert_eq!(rule["state"], "inactive", "{rule}");
    }

    // Every expression of the dashboard runs, and those about what was sent answer data.
    for expression in dashboard_expressions() {
        let expression = with_dashboard_variables(&expression);
        let answer = prometheus.query(&expression).await;
        assert_eq!(answer["status"], "success", "{expression}: {answer}");
    }
    let by_outcome = prometheus
        .query("sum by (outcome) (svcgate_alerts_received_total{job=\"svcgate\"})")
        .await;
    assert_eq!(by_outcome["data"]["result"].as_array().map(Vec::len), Some(4));
}

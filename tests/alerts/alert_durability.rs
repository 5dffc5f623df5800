//! An acknowledged alert is on disk: the gateway process is killed (SIGKILL) while senders are posting, and
//! every alert that was answered 2xx is in the store after a restart. A store refuses a secret key other than the
//! one it was set up with.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::alerts::post_alert;
use serde_json::json;

struct Started {
    child: Child,
    alert_url: String,
    key: String,
}

/// Starts `svcgate serve --dev` on `data_dir` and reads its banner (the rest of its output is drained).
fn start(data_dir: &std::path::Path) -> Started {
    let mut child = common::process::command()
        .args(["serve", "--dev", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(data_dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut alert_url = String::new();
    let mut key = String::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        if let Some(rest) = line.strip_prefix("Demo alert integration: ") {
            let (url, found) = rest.split_once(", key: ").unwrap();
            alert_url = url.to_owned();
            key = found.trim().to_owned();
            break;
        }
    }
    std::thread::spawn(move || for _ in lines {});
    assert!(
        !alert_url.is_empty(),
        "the banner names the demo alert integration"
    );
    Started {
        child,
        alert_url,
        key,
    }
}

/// Alerts acknowledged before the kill: well past the 50 the test needs to prove anything.
const STORM_BEFORE_KILL: usize = 100;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_acknowledged_alert_survives_a_kill_during_a_storm() {
    let data = tempfile::tempdir().unwrap();
    let mut running = start(data.path());
    let acknowledged = Arc::new(Mutex::new(HashSet::new()));
    // Said once the storm has had enough alerts acknowledged to prove something; the kill comes then, mid-storm.
    let enough = Arc::new(tokio::sync::Notify::new());
    let senders: Vec<_> = (0..16)
        .map(|sender| {
            let (url, key, acknowledged, enough) = (
                running.alert_url.clone(),
                running.key.clone(),
                Arc::clone(&acknowledged),
                Arc::clone(&enough),
            );
            tokio::spawn(async move {
                for n in 0.. {
                    let title = format!("s{sender}-{n}");
                    let client =
                        hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
                            .build_http::<http_body_util::Full<bytes::Bytes>>();
                    let request = http::Request::post(&url)
                        .header("authorization", format!("Bearer {key}"))
                        .header("content-type", "application/json")
                        .body(http_body_util::Full::new(bytes::Bytes::from(
                            json!({"title": title, "fingerprint": title}).to_string(),
                        )))
                        .unwrap();
                    match tokio::time::timeout(Duration::from_secs(5), client.request(request)).await {
                        Ok(Ok(response)) if response.status().is_success() => {
                            let mut acknowledged = acknowledged.lock().unwrap();
                            acknowledged.insert(title);
                            if acknowledged.len() == STORM_BEFORE_KILL {
                                enough.notify_one();
                            }
                        }
                        Ok(Ok(_)) => {}
                        _ => return,
                    }
                }
            })
        })
        .collect();
    tokio::time::timeout(Duration::from_secs(60), enough.notified())
        .await
        .expect("the storm got too few alerts acknowledged");
    common::process::signal(running.child.id(), "-KILL");
    running.child.wait().unwrap();
    for sender in senders {
        sender.await.unwrap();
    }
    let acknowledged = acknowledged.lock().unwrap().clone();
    assert!(
        acknowledged.len() > 50,
        "the storm sent too little to prove anything: {}",
        acknowledged.len()
    );

    // A restart opens the store the kill left behind, and still receives.
    let mut restarted = start(data.path());
    let answer = post_alert(
        &restarted.alert_url,
        &restarted.key,
        &json!({"title": "after the restart"}),
    )
    .await;
    assert_eq!(answer.status, http::StatusCode::OK);
    common::process::signal(restarted.child.id(), "-TERM");
    restarted.child.wait().unwrap();

    let connection = rusqlite::Connection::open(data.path().join("svcgate.db")).unwrap();
    let mut statement = connection.prepare("SELECT title FROM alerts").unwrap();
    let stored: HashSet<String> = statement
        .query_map([], |row| row.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let lost: Vec<&String> = acknowledged
        .iter()
        .filter(|title| !stored.contains(*title))
        .collect();
    assert!(
        lost.is_empty(),
        "{} of {} acknowledged alerts were lost: {lost:?}",
        lost.len(),
        acknowledged.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_refuses_to_start_with_another_secret_key_and_starts_with_its_own() {
    let data = tempfile::tempdir().unwrap();
    let mut first = start(data.path());
    common::process::signal(first.child.id(), "-TERM");
    first.child.wait().unwrap();

    // The store was set up with the key svcgate made in its data directory; another key would leave every sealed
    // integration key unreadable, so svcgate says so and does not start.
    let refused = common::process::command()
        .args(["serve", "--dev", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(data.path())
        .env("SVCGATE_SECRET_KEY", "ab".repeat(32))
        .stdout(Stdio::null())
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        said.contains("does not match the key this store was set up with"),
        "{said}"
    );

    // Given the store's own key explicitly, it starts, and the integration made before still takes alerts.
    let own_key = std::fs::read_to_string(data.path().join("secret.key")).unwrap();
    let mut child = common::process::command()
        .args(["serve", "--dev", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(data.path())
        .env("SVCGATE_SECRET_KEY", own_key.trim())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let banner = lines
        .by_ref()
        .map_while(Result::ok)
        .find_map(|line| line.strip_prefix("Demo alert integration: ").map(str::to_owned))
        .expect("svcgate started with the store's own key");
    std::thread::spawn(move || for _ in lines {});
    let (url, key) = banner.split_once(", key: ").unwrap();
    assert_eq!(key.trim(), first.key, "the sealed integration key was opened");
    let answer = post_alert(url, key.trim(), &json!({"title": "same key"})).await;
    common::process::signal(child.id(), "-TERM");
    child.wait().unwrap();
    assert_eq!(answer.status, http::StatusCode::OK);
}

/// An integration row of a kind this build does not know (a newer replica's, or one kept after a rollback) stays
/// inactive: it must not be read as Generic and take the project's Generic address from the real integration.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_integration_of_an_unknown_kind_does_not_take_another_kinds_address() {
    let data = tempfile::tempdir().unwrap();
    let mut first = start(data.path());
    common::process::signal(first.child.id(), "-TERM");
    first.child.wait().unwrap();

    let connection = rusqlite::Connection::open(data.path().join("svcgate.db")).unwrap();
    let generic: i64 = connection
        .query_row("SELECT id FROM integrations WHERE type = 'generic'", [], |row| {
            row.get(0)
        })
        .unwrap();
    connection
        .execute(
            "INSERT INTO integrations (id, project_id, project_path, type, name, active, endpoint_identifier, \
             token_nonce, token_ciphertext, api_url, payload_example, payload_attribute_mapping, created_at, \
             updated_at, one_per_project) \
             SELECT id + 1000, project_id, project_path, 'pagerduty', 'PagerDuty', 1, NULL, token_nonce, \
             token_ciphertext, NULL, NULL, NULL, created_at, updated_at, 1 FROM integrations WHERE id = ?1",
            [generic],
        )
        .unwrap();
    drop(connection);

    let mut restarted = start(data.path());
    let answer = post_alert(
        &restarted.alert_url,
        &restarted.key,
        &json!({"title": "to the real generic integration"}),
    )
    .await;
    assert_eq!(answer.status, http::StatusCode::OK);
    common::process::signal(restarted.child.id(), "-TERM");
    restarted.child.wait().unwrap();

    let connection = rusqlite::Connection::open(data.path().join("svcgate.db")).unwrap();
    let received_by: i64 = connection
        .query_row(
            "SELECT integration_id FROM alerts WHERE title = 'to the real generic integration'",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(received_by, generic, "the alert went to the unknown kind's row");
}

//! `svcgate store copy`: a single node's SQLite store moved into PostgreSQL keeps working there: the same
//! integration address and key, the same alerts (a repeat groups into the copied open alert), iids that continue;
//! a key other than the store's is refused.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use crate::common::alerts::{post_alert, AlertWorld};
use crate::common::postgres::Postgres;
use crate::common::TestGateway;
use http::StatusCode;
use serde_json::json;

fn copy(data_dir: &std::path::Path, url: &str) -> std::process::Output {
    common::process::command()
        .args(["store", "copy", "--data-dir"])
        .arg(data_dir)
        .args(["--database-url", url])
        .env_remove("SVCGATE_SECRET_KEY")
        .output()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_sqlite_store_copied_into_postgresql_keeps_its_integrations_alerts_and_keys() {
    let cluster = tokio::task::spawn_blocking(Postgres::start).await.unwrap();
    let url = cluster.database("moved").await;
    // The store lives in a directory of the test's, so that it outlasts the first gateway.
    let store_dir = tempfile::tempdir().unwrap();
    let kept = store_dir.path().to_path_buf();
    let world = AlertWorld::with(|raw| raw.data_dir = Some(kept)).await;
    let created = world
        .integration(json!({"type": "generic", "active": true}))
        .await;
    let key = created["token"].as_str().unwrap().to_owned();
    let path: http::Uri = created["url"].as_str().unwrap().parse().unwrap();
    let address = |gateway: &TestGateway| format!("{}{}", gateway.url(), path.path());
    for fingerprint in ["disk", "disk", "cpu"] {
        let sent = post_alert(
            &address(&world.gateway),
            &key,
            &json!({"title": fingerprint, "fingerprint": fingerprint}),
        )
        .await;
        assert_eq!(sent.status, StatusCode::OK);
    }
    let AlertWorld {
        sim,
        demo,
        gateway,
        developer,
        ..
    } = world;
    let data_dir = store_dir.path().to_path_buf();
    let secret_key = std::fs::read_to_string(data_dir.join("secret.key")).unwrap();
    gateway.stop().await;

    // Another key than the store's is refused before anything is written: its sealed keys could not be opened.
    let refused = tokio::task::spawn_blocking({
        let (data_dir, url) = (data_dir.clone(), url.clone());
        move || {
            common::process::command()
                .args(["store", "copy", "--data-dir"])
                .arg(&data_dir)
                .args(["--database-url", &url])
                .env("SVCGATE_SECRET_KEY", "cd".repeat(32))
                .output()
                .unwrap()
        }
    })
    .await
    .unwrap();
    assert!(!refused.status.success());
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("is not the one"), "{said}");

    let copied = tokio::task::spawn_blocking({
        let (data_dir, url) = (data_dir.clone(), url.clone());
        move || copy(&data_dir, &url)
    })
    .await
    .unwrap();
    let printed = String::from_utf8_lossy(&copied.stdout);
    assert!(
        copied.status.success(),
        "{printed}{}",
        String::from_utf8_lossy(&copied.stderr)
    );
    assert!(
        printed.contains("integrations: 1 rows") && printed.contains("alerts: 2 rows"),
        "{printed}"
    );

    let moved = TestGateway::start_with(&sim.url(), |raw| {
        raw.data_dir = None;
        raw.database_url = Some(url.clone());
        raw.secret_key = Some(secret_key.trim().to_owned());
    })
    .await;
    let repeat = post_alert(
        &address(&moved),
        &key,
        &json!({"title": "disk", "fingerprint": "disk"}),
    )
    .await;
    assert_eq!(repeat.status, StatusCode::OK, "the copied key still works");
    assert_eq!(repeat.json()[0]["outcome"], "grouped");
    assert_eq!(repeat.json()[0]["events"], 3);
    let new = post_alert(
        &address(&moved),
        &key,
        &json!({"title": "net", "fingerprint": "net"}),
    )
    .await;
    assert_eq!(new.json()[0]["iid"], 3, "iids continue after the copied ones");
    let listed = common::get(
        &format!(
            "{}/-/svcgate/api/projects/{}/alerts",
            moved.url(),
            demo.project_id
        ),
        &developer,
    )
    .await;
    assert_eq!(listed.json().as_array().unwrap().len(), 3);

    // A second copy never merges into a database that holds data.
    let again = tokio::task::spawn_blocking(move || copy(&data_dir, &url))
        .await
        .unwrap();
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("empty database"));
}

//! Two svcgate processes on one PostgreSQL database and one `secret_key`, each on its own port, in front of one
//! svc-sim: what one replica does, the other honours — alerts sent to both at once group into one, an integration
//! created, re-keyed or deactivated on one is honoured by the other within a second, a page session made on one
//! is known to the other and ended on both, connections PostgreSQL ended are replaced before the next alert. Each
//! test has its own PostgreSQL cluster. (Every store operation is also checked against both stores in
//! `store_contract.rs`.)
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use std::time::Duration;

use crate::common::alerts::{post_alert, Members};
use crate::common::postgres::Postgres;
use crate::common::replicas::{database, until, Replica};
use crate::common::send_json;
use http::{Method, StatusCode};
use serde_json::{json, Value};
use svc_sim::{DemoSeed, SimHandle};

/// Two replica processes on one database of a cluster of the test's own, in front of one simulator whose demo
/// project has a member of every role. Dropped in field order: the replicas are stopped before the simulator and
/// the cluster.
struct Pair {
    first: Replica,
    second: Replica,
    demo: DemoSeed,
    members: Members,
    /// The database both replicas use.
    url: String,
    _sim: SimHandle,
    _cluster: Postgres,
}

impl Pair {
    /// Starts the cluster, the simulator and the two replicas (one after the other, as a rolling start would).
    async fn start() -> Pair {
        let (cluster, url) = database().await;
        let (sim, demo) = common::sim::with_demo().await;
        let members = Members::add(&sim, &demo).await;
        let first = Replica::start("first", &sim.url(), &url, &[]).await;
        let second = Replica::start("second", &sim.url(), &url, &[]).await;
        Pair {
            first,
            second,
            demo,
            members,
            url,
            _sim: sim,
            _cluster: cluster,
        }
    }

    /// The management API address of the demo project on `replica`.
    fn api(&self, replica: &Replica, rest: &str) -> String {
        format!(
            "{}/-/svcgate/api/projects/{}{rest}",
            replica.url(),
            self.demo.project_id
        )
    }

    /// Creates a generic integration on `replica` as the Maintainer and answers it (with `url` and `token`).
    async fn integration(&self, replica: &Replica) -> Value {
        let answer = send_json(
            Method::POST,
            &self.api(replica, "/integrations"),
            &self.members.maintainer,
            json!({"type": "generic", "active": true}),
        )
        .await;
        assert_eq!(answer.status, StatusCode::CREATED, "{:?}", answer.body);
        answer.json()
    }
}

/// The receiving address `integration` has on `replica` (the path is the same on every replica).
fn address_on(replica: &Replica, integration: &Value) -> String {
    let url: http::Uri = integration["url"].as_str().unwrap().parse().unwrap();
    format!("{}{}", replica.url(), url.path())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_integration_changed_on_one_replica_is_honoured_by_the_other_within_a_second() {
    let pair = Pair::start().await;
    let payload = json!({"title": "disk full", "fingerprint": "disk"});

    // Created on the first replica: the second accepts its key.
    let created = pair.integration(&pair.first).await;
    let id = created["id"].as_u64().unwrap();
    let on_second = address_on(&pair.second, &created);
    let key = created["token"].as_str().unwrap().to_owned();
    let accepted = until(
        Duration::from_secs(1),
        "the second replica accepting a new key",
        async || post_alert(&on_second, &key, &payload).await.status == StatusCode::OK,
    )
    .await;

    // Re-keyed on the first: the second refuses the old key and accepts the new one.
    let reset = send_json(
        Method::POST,
        &pair.api(&pair.first, &format!("/integrations/{id}/reset_token")),
        &pair.members.maintainer,
        json!(null),
    )
    .await;
    assert_eq!(reset.status, StatusCode::OK);
    let new_key = reset.json()["token"].as_str().unwrap().to_owned();
    let rotated = until(
        Duration::from_secs(1),
        "the second replica refusing a rotated key",
        async || post_alert(&on_second, &key, &payload).await.status == StatusCode::UNAUTHORIZED,
    )
    .await;
    assert_eq!(
        post_alert(&on_second, &new_key, &payload).await.status,
        StatusCode::OK
    );

    // Deactivated on the first: the second no longer receives at that address.
    let off = send_json(
        Method::PUT,
        &pair.api(&pair.first, &format!("/integrations/{id}")),
        &pair.members.maintainer,
        json!({"active": false}),
    )
    .await;
    assert_eq!(off.status, StatusCode::OK);
    let deactivated = until(
        Duration::from_secs(1),
        "the second replica refusing a deactivated integration",
        async || post_alert(&on_second, &new_key, &payload).await.status == StatusCode::NOT_FOUND,
    )
    .await;
    eprintln!(
        "honoured by the other replica after: creation {accepted:?}, key reset {rotated:?}, deactivation \
         {deactivated:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn alerts_sent_to_both_replicas_at_once_group_into_one_open_alert() {
    let pair = Pair::start().await;
    let created = pair.integration(&pair.first).await;
    let key = created["token"].as_str().unwrap().to_owned();
    let on_first = address_on(&pair.first, &created);
    let on_second = address_on(&pair.second, &created);
    until(
        Duration::from_secs(1),
        "the second replica knowing the integration",
        async || post_alert(&on_second, "wrong", &json!({})).await.status == StatusCode::UNAUTHORIZED,
    )
    .await;

    let payload = json!({"title": "API latency", "fingerprint": "latency-p99"});
    let sends = (0..400).map(|n| {
        let address = if n % 2 == 0 { &on_first } else { &on_second };
        post_alert(address, &key, &payload)
    });
    let answers = futures_util::future::join_all(sends).await;
    for answer in &answers {
        assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    }

    let listed = common::get(
        &pair.api(&pair.second, "/alerts?status=open"),
        &pair.members.developer,
    )
    .await;
    assert_eq!(listed.status, StatusCode::OK);
    let alerts = listed.json();
    assert_eq!(alerts.as_array().unwrap().len(), 1, "{alerts}");
    assert_eq!(alerts[0]["events"], 400);
    assert_eq!(alerts[0]["iid"], 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn replicas_whose_connections_postgresql_ended_take_new_ones_and_store_the_next_alerts() {
    let pair = Pair::start().await;
    let created = pair.integration(&pair.first).await;
    let key = created["token"].as_str().unwrap().to_owned();
    let on_first = address_on(&pair.first, &created);
    let on_second = address_on(&pair.second, &created);
    for (n, address) in [&on_first, &on_second].into_iter().enumerate() {
        let answer = post_alert(address, &key, &json!({"title": format!("before {n}")})).await;
        assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    }

    // Every connection of both replicas (their alert writers' kept ones too) is ended by the server, as a
    // restart or an administrator would.
    let (client, connection) = tokio_postgres::connect(&pair.url, tokio_postgres::NoTls)
        .await
        .unwrap();
    let task = tokio::spawn(connection);
    let ended = client
        .query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE datname = current_database() AND pid <> pg_backend_pid()",
            &[],
        )
        .await
        .unwrap();
    assert!(ended.len() >= 4, "{} connections ended", ended.len());
    tokio::time::sleep(Duration::from_millis(300)).await;

    for (n, address) in [&on_first, &on_second].into_iter().enumerate() {
        let answer = post_alert(address, &key, &json!({"title": format!("after {n}")})).await;
        assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    }
    let titles = client
        .query("SELECT title FROM alerts ORDER BY iid", &[])
        .await
        .unwrap();
    let titles: Vec<String> = titles.iter().map(|row| row.get(0)).collect();
    assert_eq!(titles, ["before 0", "before 1", "after 0", "after 1"]);
    drop(client);
    drop(task.await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn signing_in_on_one_replica_works_on_the_other_and_signing_out_ends_it_on_both() {
    let pair = Pair::start().await;
    let signed_in = common::sign_in(&pair.first.url(), &pair.members.maintainer).await;
    assert_eq!(signed_in.status, StatusCode::SEE_OTHER);
    let session = signed_in.cookie();

    let page = |base: String| {
        let session = session.clone();
        async move {
            common::send(
                Method::GET,
                &format!("{base}/-/svcgate/projects"),
                &[("cookie", &session)],
                None,
            )
            .await
        }
    };
    let on_second = page(pair.second.url()).await;
    assert_eq!(
        on_second.status,
        StatusCode::OK,
        "the second replica knows the session"
    );
    assert!(String::from_utf8_lossy(&on_second.body).contains("maintainer"));

    // Signed out through the second replica (its form's CSRF token is the session's own).
    let csrf = on_second.csrf();
    let out = common::send(
        Method::POST,
        &format!("{}/-/svcgate/sign_out", pair.second.url()),
        &[("cookie", &session)],
        Some((
            "application/x-www-form-urlencoded",
            format!("csrf={csrf}").into_bytes(),
        )),
    )
    .await;
    assert_eq!(out.status, StatusCode::SEE_OTHER);
    for replica in [&pair.first, &pair.second] {
        let after = page(replica.url()).await;
        assert_eq!(
            after.status,
            StatusCode::SEE_OTHER,
            "signed out on the {} replica too",
            replica.name
        );
        assert_eq!(after.header("location"), Some("/-/svcgate/sign_in"));
    }
}

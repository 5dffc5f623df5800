//! `svcgate v3 report --database-url`: the migration report read from PostgreSQL without a running gateway, and
//! without migrating: a database whose schema is older than the binary is refused and left as it is.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use crate::common::postgres::Postgres;
use crate::common::TestGateway;
use http::{Method, StatusCode};

const SECRET_KEY: &str = "5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a";

fn report(url: &str) -> std::process::Output {
    common::process::command()
        .args(["v3", "report", "--format", "json", "--database-url", url])
        .env("SVCGATE_SECRET_KEY", SECRET_KEY)
        .env_remove("SVCGATE_BACKEND")
        .output()
        .unwrap()
}

async fn newest_migration(url: &str) -> (i64, i64) {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls).await.unwrap();
    let task = tokio::spawn(connection);
    let row = client
        .query_one("SELECT max(version), count(*) FROM schema_migrations", &[])
        .await
        .unwrap();
    let answer = (row.get(0), row.get(1));
    drop(client);
    drop(task.await);
    answer
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn svcgate_v3_report_reads_postgresql_without_migrating_it() {
    let cluster = tokio::task::spawn_blocking(Postgres::start).await.unwrap();
    let url = cluster.database("report").await;
    let (sim, demo) = common::sim::with_demo().await;
    let gateway = TestGateway::start_with(&sim.url(), |raw| {
        raw.data_dir = None;
        raw.database_url = Some(url.clone());
        raw.secret_key = Some(SECRET_KEY.to_owned());
    })
    .await;
    let called = common::send(
        Method::GET,
        &format!("{}/api/v3/projects", gateway.url()),
        &[("private-token", &demo.token), ("user-agent", "legacy-tool/1.0")],
        None,
    )
    .await;
    assert_eq!(called.status, StatusCode::OK);
    // The usage API writes the counts gathered so far.
    common::get(&format!("{}/-/svcgate/api/v3-usage", gateway.url()), "root-token").await;
    gateway.stop().await;

    let read = tokio::task::spawn_blocking({
        let url = url.clone();
        move || report(&url)
    })
    .await
    .unwrap();
    assert!(read.status.success(), "{}", String::from_utf8_lossy(&read.stderr));
    let json: serde_json::Value = serde_json::from_slice(&read.stdout).unwrap();
    assert_eq!(json["clients"][0]["product"], "legacy-tool", "{json}");

    // An older schema: refused with a message, and not migrated.
    let (known, _) = newest_migration(&url).await;
    {
        let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
            .await
            .unwrap();
        let task = tokio::spawn(connection);
        client
            .execute("DELETE FROM schema_migrations WHERE version = $1", &[&known])
            .await
            .unwrap();
        drop(client);
        drop(task.await);
    }
    let refused = tokio::task::spawn_blocking({
        let url = url.clone();
        move || report(&url)
    })
    .await
    .unwrap();
    assert!(!refused.status.success());
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("older than this svcgate's"), "{said}");
    assert_eq!(
        newest_migration(&url).await.0,
        known - 1,
        "the report does not migrate"
    );
}

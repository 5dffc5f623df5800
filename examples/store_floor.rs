//! The alert store's ceiling on this machine, without HTTP or JSON: how many alerts a second the store can make
//! durable, and how many SQLite itself can, with and without a persistent unique index on the fingerprint (how
//! svcgate held "one open alert per fingerprint" before the in-memory table of `store/open_alerts.rs`). Row 5 of
//! `bench/run` is bounded by these figures; see `bench/RESULTS.md`.
//!
//! `cargo run --release --example store_floor [seconds]` (default 5 s per measurement).

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use rusqlite::{params, Connection};
use sha2::{Digest, Sha256};
use svcgate::store::{AlertEvent, SqliteStore, Store};

/// Concurrent senders, as in `bench/run`'s row 5.
const SENDERS: u64 = 50;
/// A generic payload of about 1 KB, as `bench/alerts.lua` sends.
const DESCRIPTION_LINE: &str = "Checkout latency above the objective on the primary cluster. ";

fn main() -> anyhow::Result<()> {
    let seconds = std::env::args()
        .nth(1)
        .map(|text| text.parse::<u64>())
        .transpose()
        .context("seconds must be a whole number")?
        .unwrap_or(5);
    let duration = Duration::from_secs(seconds);
    let description = DESCRIPTION_LINE.repeat(9);

    let stored = store_rate(duration, &description)?;
    println!("svcgate's store, {SENDERS} concurrent callers, 10% repeats: {stored:.0} alerts/s");
    for with_index in [true, false] {
        let rate = sqlite_rate(duration, &description, with_index)?;
        let index = if with_index { "with" } else { "without" };
        println!(
            "SQLite alone, commits of {SENDERS} rows, {index} a unique fingerprint index: {rate:.0} rows/s"
        );
    }
    Ok(())
}

/// Alert events per second through [`SqliteStore`]'s writer thread and group commit.
fn store_rate(duration: Duration, description: &str) -> anyhow::Result<f64> {
    let dir = tempfile::tempdir()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let store = Arc::new(SqliteStore::open(dir.path())?);
        let started = Instant::now();
        let senders = (0..SENDERS).map(|sender| {
            let store = Arc::clone(&store);
            let description = description.to_owned();
            tokio::spawn(async move {
                let mut sent = 0u64;
                while started.elapsed() < duration {
                    sent += 1;
                    // One in ten names one of 20 shared fingerprints: those group into open alerts.
                    let fingerprint = if sent % 10 == 0 {
                        format!("repeat-{}", sent % 20)
                    } else {
                        format!("{sender}-{sent}")
                    };
                    let event = AlertEvent {
                        project_id: 1,
                        integration_id: 1,
                        fingerprint: Some(fingerprint_hex(fingerprint.as_bytes())),
                        ended_at: None,
                        title: format!("High error rate on checkout ({fingerprint})"),
                        description: Some(description.clone()),
                        severity: "high".to_owned(),
                        service: Some("checkout".to_owned()),
                        monitoring_tool: Some("bench".to_owned()),
                        hosts_json: r#"["web-1","web-2"]"#.to_owned(),
                        environment: Some("production".to_owned()),
                        started_at: "2026-11-22T10:00:00Z".to_owned(),
                        payload_json: format!(r#"{{"title":"{fingerprint}","description":"{description}"}}"#),
                        now: "2026-11-22T10:00:01Z".to_owned(),
                    };
                    if store.alert_event(event).await.is_err() {
                        break;
                    }
                }
                sent
            })
        });
        let mut total = 0;
        for sender in futures_util::future::join_all(senders).await {
            total += sender?;
        }
        Ok(total as f64 / started.elapsed().as_secs_f64())
    })
}

/// Rows per second committed by SQLite alone (WAL, `synchronous = FULL`, the store's checkpoint interval),
/// in commits of [`SENDERS`] rows of an alert's size.
fn sqlite_rate(duration: Duration, description: &str, with_index: bool) -> anyhow::Result<f64> {
    let dir = tempfile::tempdir()?;
    let connection = Connection::open(dir.path().join("floor.db"))?;
    connection.pragma_update(None, "journal_mode", "WAL")?;
    connection.pragma_update(None, "synchronous", "FULL")?;
    connection.pragma_update(None, "wal_autocheckpoint", 256)?;
    connection.execute_batch(
        "CREATE TABLE alerts (id INTEGER PRIMARY KEY, project_id INTEGER NOT NULL, iid INTEGER NOT NULL,
            fingerprint TEXT, status TEXT NOT NULL, title TEXT NOT NULL, description TEXT, payload TEXT NOT NULL,
            created_at TEXT NOT NULL, UNIQUE (project_id, iid));
         CREATE INDEX alerts_by_project_status ON alerts (project_id, status);",
    )?;
    if with_index {
        connection.execute_batch(
            "CREATE UNIQUE INDEX alerts_one_open ON alerts (project_id, fingerprint)
                WHERE status != 'resolved' AND fingerprint IS NOT NULL;",
        )?;
    }
    let payload = format!(r#"{{"title":"High error rate on checkout","description":"{description}"}}"#);
    let mut rows = 0u64;
    let started = Instant::now();
    while started.elapsed() < duration {
        let transaction = connection.unchecked_transaction()?;
        {
            let mut insert = transaction.prepare_cached(
                "INSERT INTO alerts (project_id, iid, fingerprint, status, title, description, payload, created_at)
                 VALUES (1, ?1, ?2, 'triggered', 'High error rate on checkout', ?3, ?4, '2026-11-22T10:00:00Z')",
            )?;
            for _ in 0..SENDERS {
                rows += 1;
                insert.execute(params![
                    rows,
                    fingerprint_hex(&rows.to_le_bytes()),
                    description,
                    payload
                ])?;
            }
        }
        transaction.commit()?;
    }
    Ok(rows as f64 / started.elapsed().as_secs_f64())
}

/// A SHA-256 fingerprint as 64 hex digits, as the intake stores them.
fn fingerprint_hex(input: &[u8]) -> String {
    Sha256::digest(input)
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

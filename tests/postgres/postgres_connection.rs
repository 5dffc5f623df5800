//! svcgate and its PostgreSQL connection, with a real server, as processes: TLS as libpq's `sslmode` does it
//! (plaintext refused by default, `verify-full` checking the host name), and every wait bounded when the database
//! freezes (SIGSTOP), when the path to it silently drops its bytes (a failover, a lost NAT entry: a relay here),
//! and when it refuses connections. In each fault an alert sent 1 s in is answered 503 with `Retry-After` within
//! 15 s, saying whether it may be stored; readiness asked 1 s in answers 503 within 5 s; failures are logged as a
//! few counted lines, not one per alert; intake works again within 30 s of the fault's end; and every alert that was
//! acknowledged is stored.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::alerts::post_alert;
use crate::common::postgres::Postgres;
use crate::common::replicas::{database, integration, readiness, until, Replica};
use http::StatusCode;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Every alert title stored in the database at `url`.
async fn stored_titles(url: &str) -> BTreeSet<String> {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls).await.unwrap();
    let task = tokio::spawn(connection);
    let rows = client.query("SELECT title FROM alerts", &[]).await.unwrap();
    drop(client);
    drop(task.await);
    rows.iter().map(|row| row.get::<_, String>(0)).collect()
}

/// A TCP relay in front of the database that can, like a failed-over address or a lost NAT entry, start dropping
/// the bytes of every connection it carries without closing any (a connection that met the fault stays dead
/// after it), and can refuse connections outright.
struct Relay {
    address: SocketAddr,
    dropping: Arc<AtomicBool>,
    accepting: Mutex<Option<tokio::task::JoinHandle<()>>>,
    target: SocketAddr,
}

impl Relay {
    async fn start(target: SocketAddr) -> Relay {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let dropping = Arc::new(AtomicBool::new(false));
        let accepting = tokio::spawn(Relay::accept(listener, target, Arc::clone(&dropping)));
        Relay {
            address,
            dropping,
            accepting: Mutex::new(Some(accepting)),
            target,
        }
    }

    async fn accept(listener: TcpListener, target: SocketAddr, dropping: Arc<AtomicBool>) {
        while let Ok((client, _)) = listener.accept().await {
            let dropping = Arc::clone(&dropping);
            tokio::spawn(async move {
                let Ok(server) = TcpStream::connect(target).await else {
                    return;
                };
                let dead = Arc::new(AtomicBool::new(false));
                let (client_read, client_write) = client.into_split();
                let (server_read, server_write) = server.into_split();
                tokio::spawn(Relay::pump(
                    client_read,
                    server_write,
                    Arc::clone(&dropping),
                    Arc::clone(&dead),
                ));
                tokio::spawn(Relay::pump(server_read, client_write, dropping, dead));
            });
        }
    }

    /// Copies one direction; once the fault is on, reads and discards everything, for good.
    async fn pump(
        mut from: tokio::net::tcp::OwnedReadHalf,
        mut to: tokio::net::tcp::OwnedWriteHalf,
        dropping: Arc<AtomicBool>,
        dead: Arc<AtomicBool>,
    ) {
        let mut buffer = vec![0; 64 * 1024];
        loop {
            let read = match from.read(&mut buffer).await {
                Ok(0) | Err(_) => return,
                Ok(read) => read,
            };
            if dropping.load(Ordering::SeqCst) {
                dead.store(true, Ordering::SeqCst);
            }
            if dead.load(Ordering::SeqCst) {
                continue;
            }
            if to.write_all(&buffer[..read]).await.is_err() {
                return;
            }
        }
    }

    fn url(&self) -> String {
        format!("postgres://svcgate@{}/svcgate?sslmode=disable", self.address)
    }

    /// Starts dropping bytes: connections stay open, nothing arrives either way.
    fn drop_bytes(&self) {
        self.dropping.store(true, Ordering::SeqCst);
    }

    /// Stops accepting: new connections are refused (connections already made stay as they are).
    fn refuse(&self) {
        if let Some(accepting) = self.accepting.lock().unwrap().take() {
            accepting.abort();
        }
    }

    /// Ends the fault for new connections; those that met it stay dead.
    async fn heal(&self) {
        self.dropping.store(false, Ordering::SeqCst);
        let mut accepting = self.accepting.lock().unwrap();
        if accepting.is_none() {
            let listener = std::net::TcpListener::bind(self.address).unwrap();
            listener.set_nonblocking(true).unwrap();
            let listener = TcpListener::from_std(listener).unwrap();
            *accepting = Some(tokio::spawn(Relay::accept(
                listener,
                self.target,
                Arc::clone(&self.dropping),
            )));
        }
    }
}

/// The database fault a test puts svcgate through.
#[derive(Clone, Copy, Debug)]
enum Fault {
    /// Every PostgreSQL process stopped (SIGSTOP), then continued.
    Frozen,
    /// The relay drops every byte of the connections it carries.
    SilentPath,
    /// The relay refuses connections (and drops the bytes of those already made).
    Refused,
}

/// Sends SIGSTOP or SIGCONT to the server and every session process of it.
fn signal_cluster(cluster: &Postgres, signal: &str) {
    let postmaster = cluster.pid().to_string();
    // Stopped first and continued last, the postmaster starts no session in between.
    if signal == "-STOP" {
        assert!(Command::new("kill")
            .args([signal, &postmaster])
            .status()
            .unwrap()
            .success());
    }
    drop(
        Command::new("pkill")
            .args([signal, "-P", &postmaster])
            .stderr(Stdio::null())
            .status(),
    );
    if signal == "-CONT" {
        assert!(Command::new("kill")
            .args([signal, &postmaster])
            .status()
            .unwrap()
            .success());
    }
}

/// Readiness of the replica at `address`, with how long its answer took.
async fn timed_readiness(address: SocketAddr) -> (Option<StatusCode>, Duration) {
    let started = Instant::now();
    let status = tokio::time::timeout(Duration::from_secs(30), readiness(address))
        .await
        .ok()
        .flatten();
    (status, started.elapsed())
}

/// One alert's answer, with how long it took: status, `Retry-After`, message.
async fn timed_alert(url: &str, key: &str, title: &str) -> (StatusCode, Option<String>, String, Duration) {
    let started = Instant::now();
    let answer = tokio::time::timeout(
        Duration::from_secs(60),
        post_alert(url, key, &json!({"title": title})),
    )
    .await
    .expect("an alert got no answer within 60 s");
    let message = serde_json::from_slice::<Value>(&answer.body)
        .ok()
        .and_then(|body| body["message"].as_str().map(str::to_owned))
        .unwrap_or_default();
    (
        answer.status,
        answer.header("retry-after").map(str::to_owned),
        message,
        started.elapsed(),
    )
}

async fn svcgate_through_a_database_fault(fault: Fault) {
    let (sim, demo) = common::sim::with_demo().await;
    let (cluster, direct_url) = database().await;
    let relay = Relay::start(format!("127.0.0.1:{}", cluster.port()).parse().unwrap()).await;
    let url = match fault {
        Fault::Frozen => direct_url.clone(),
        Fault::SilentPath | Fault::Refused => relay.url(),
    };
    let replica = Replica::start("faults", &sim.url(), &url, &[]).await;
    let (path, key) = integration(&replica, &demo).await;
    let alerts = format!("{}{path}", replica.url());

    // A sender that keeps sending, one alert after another on fresh connections, through the whole test; what it
    // got acknowledged must all be stored in the end.
    let acknowledged = Arc::new(Mutex::new(Vec::<String>::new()));
    let sending = Arc::new(AtomicBool::new(true));
    let background = {
        let (acknowledged, sending, alerts, key) = (
            Arc::clone(&acknowledged),
            Arc::clone(&sending),
            alerts.clone(),
            key.clone(),
        );
        tokio::spawn(async move {
            let mut count = 0;
            while sending.load(Ordering::SeqCst) {
                count += 1;
                let title = format!("steady {count}");
                let (status, ..) = timed_alert(&alerts, &key, &title).await;
                if status.is_success() {
                    acknowledged.lock().unwrap().push(title);
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
    };
    let (status, ..) = timed_alert(&alerts, &key, "before the fault").await;
    assert_eq!(status, StatusCode::OK);
    // The sender's first acknowledgement comes before the fault, so that the check at the end has something to
    // check whatever the host's speed (a slow host once had the sender's every alert fall inside the fault).
    until(
        Duration::from_secs(10),
        "the sender's first acknowledged alert",
        async || !acknowledged.lock().unwrap().is_empty(),
    )
    .await;

    match fault {
        Fault::Frozen => signal_cluster(&cluster, "-STOP"),
        Fault::SilentPath => relay.drop_bytes(),
        Fault::Refused => {
            relay.refuse();
            relay.drop_bytes();
        }
    }
    let fault_began = Instant::now();
    tokio::time::sleep(Duration::from_secs(1)).await;
    let address = replica.address;
    let ready = tokio::spawn(timed_readiness(address));
    let (alerts_1s, key_1s) = (alerts.clone(), key.clone());
    let alert = tokio::spawn(async move { timed_alert(&alerts_1s, &key_1s, "one second in").await });

    let (ready_status, ready_took) = ready.await.unwrap();
    assert_eq!(
        ready_status,
        Some(StatusCode::SERVICE_UNAVAILABLE),
        "{fault:?}: readiness 1 s into the fault"
    );
    assert!(
        ready_took < Duration::from_secs(5),
        "{fault:?}: readiness took {ready_took:?}"
    );
    let (status, retry_after, message, took) = alert.await.unwrap();
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{fault:?}: {message}");
    assert!(retry_after.is_some(), "{fault:?}: no Retry-After");
    assert!(
        took < Duration::from_secs(15),
        "{fault:?}: the alert took {took:?}"
    );
    if let Fault::Refused = fault {
        // Nothing reached the database: the sender is not told it may be stored.
        assert!(message.contains("was not stored"), "{fault:?}: {message}");
    } else {
        assert!(
            message.contains("was not stored") || message.contains("may or may not be stored"),
            "{fault:?}: {message}"
        );
    }

    // The fault lasts 8 s in all.
    tokio::time::sleep(Duration::from_secs(8).saturating_sub(fault_began.elapsed())).await;
    match fault {
        Fault::Frozen => signal_cluster(&cluster, "-CONT"),
        Fault::SilentPath | Fault::Refused => relay.heal().await,
    }
    let healed = Instant::now();
    until(
        Duration::from_secs(30),
        "intake works again after the fault",
        async || {
            matches!(
                timed_alert(&alerts, &key, "after the fault").await,
                (StatusCode::OK, ..)
            )
        },
    )
    .await;
    assert!(healed.elapsed() < Duration::from_secs(30));
    until(Duration::from_secs(10), "readiness after the fault", async || {
        readiness(address).await == Some(StatusCode::OK)
    })
    .await;
    // And one more after it, so that alerts acknowledged after the fault are checked too.
    let before_healing = acknowledged.lock().unwrap().len();
    until(
        Duration::from_secs(10),
        "the sender's alerts acknowledged after the fault",
        async || acknowledged.lock().unwrap().len() > before_healing,
    )
    .await;
    sending.store(false, Ordering::SeqCst);
    background.await.unwrap();

    // Every acknowledged alert is stored.
    let stored = stored_titles(&direct_url).await;
    let acknowledged = acknowledged.lock().unwrap().clone();
    assert!(!acknowledged.is_empty());
    for title in &acknowledged {
        assert!(
            stored.contains(title),
            "{fault:?}: acknowledged alert {title} is not stored"
        );
    }
    // Failures were logged as a few counted lines, not one per alert.
    let log = replica.log.lock().unwrap().clone();
    let failure_lines = log
        .lines()
        .filter(|line| line.contains("alerts the store could not take"))
        .count();
    assert!(
        (1..=3).contains(&failure_lines),
        "{fault:?}: {failure_lines} lines of alert failures in 8 s of fault:\n{log}"
    );
    drop(cluster);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frozen_database_gets_bounded_answers_and_intake_recovers_without_losing_an_acknowledged_alert() {
    svcgate_through_a_database_fault(Fault::Frozen).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_path_that_silently_drops_bytes_gets_bounded_answers_and_intake_recovers_on_new_connections() {
    svcgate_through_a_database_fault(Fault::SilentPath).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_connection_is_answered_not_stored_and_intake_recovers() {
    svcgate_through_a_database_fault(Fault::Refused).await;
}

/// A CA and a certificate it signed for `localhost`, as PEM: (CA, server certificate, server key).
fn certificates() -> (String, String, String) {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let server_key = rcgen::KeyPair::generate().unwrap();
    let server = rcgen::CertificateParams::new(vec!["localhost".to_owned()])
        .unwrap()
        .signed_by(&server_key, &ca, &ca_key)
        .unwrap();
    (ca.pem(), server.pem(), server_key.serialize_pem())
}

/// Runs `svcgate serve` against `database_url`, which it must refuse: answers what it printed before it exited.
async fn refused(backend: &str, database_url: &str) -> String {
    let mut child = common::process::command()
        .args(["serve", "--backend", backend, "--database-url", database_url])
        .args(["--listen", "127.0.0.1:0"])
        .env("SVCGATE_SECRET_KEY", common::replicas::KEY)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(20) {
            drop(child.kill());
            drop(child.wait());
            panic!("svcgate did not refuse {database_url} within 20 s");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    stderr
}

/// Whether every session of database `svcgate` but the asking one is encrypted, and there is at least one.
async fn sessions_encrypted(cluster: &Postgres) -> bool {
    let (client, connection) = tokio_postgres::connect(&cluster.url("postgres"), tokio_postgres::NoTls)
        .await
        .unwrap();
    let task = tokio::spawn(connection);
    let row = client
        .query_one(
            "SELECT count(*), count(*) FILTER (WHERE s.ssl) FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid)
             WHERE a.datname = 'svcgate'",
            &[],
        )
        .await
        .unwrap();
    drop(client);
    drop(task.await);
    let (all, encrypted): (i64, i64) = (row.get(0), row.get(1));
    all > 0 && all == encrypted
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_tls_is_refused_at_start_unless_the_url_says_sslmode_disable() {
    let (sim, _demo) = common::sim::with_demo().await;
    let (cluster, _) = database().await;
    let plain = format!("postgres://svcgate@127.0.0.1:{}/svcgate", cluster.port());
    let stderr = refused(&sim.url(), &plain).await;
    let lines: Vec<&str> = stderr.lines().filter(|line| !line.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "one line: {stderr}");
    assert!(lines[0].contains("sslmode=disable"), "{stderr}");
    assert!(lines[0].len() < 300, "{stderr}");

    let replica = Replica::start("plaintext", &sim.url(), &format!("{plain}?sslmode=disable"), &[]).await;
    assert_eq!(readiness(replica.address).await, Some(StatusCode::OK));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_to_the_database_checks_what_each_sslmode_asks() {
    let (sim, _demo) = common::sim::with_demo().await;
    let (ca, cert, key) = certificates();
    let cluster = tokio::task::spawn_blocking(move || Postgres::start_with_tls(&cert, &key))
        .await
        .unwrap();
    cluster.database("svcgate").await;
    let dir = tempfile::tempdir().unwrap();
    let ca_path = dir.path().join("ca.pem");
    std::fs::write(&ca_path, ca).unwrap();
    let ca_path = ca_path.display().to_string();
    let port = cluster.port();
    let url = |host: &str, mode: &str| {
        format!("postgres://svcgate@{host}:{port}/svcgate?sslmode={mode}&sslrootcert={ca_path}")
    };

    // verify-full: the chain and the name hold.
    let replica = Replica::start("verify-full", &sim.url(), &url("localhost", "verify-full"), &[]).await;
    assert_eq!(readiness(replica.address).await, Some(StatusCode::OK));
    assert!(
        sessions_encrypted(&cluster).await,
        "svcgate's sessions are not all encrypted"
    );
    drop(replica);

    // verify-full, another name: refused.
    let stderr = refused(&sim.url(), &url("127.0.0.1", "verify-full")).await;
    assert!(
        stderr.contains("certificate") || stderr.contains("TLS"),
        "{stderr}"
    );

    // verify-ca: the chain alone.
    let replica = Replica::start("verify-ca", &sim.url(), &url("127.0.0.1", "verify-ca"), &[]).await;
    drop(replica);

    // The default (require) with no roots named: encrypted, the certificate not checked.
    let default_mode = format!("postgres://svcgate@127.0.0.1:{port}/svcgate");
    let replica = Replica::start("require", &sim.url(), &default_mode, &[]).await;
    assert!(sessions_encrypted(&cluster).await);
    drop(replica);

    // verify-ca against roots that did not sign it: refused.
    let other = tempfile::tempdir().unwrap();
    let (other_ca, ..) = certificates();
    let other_path = other.path().join("other.pem");
    std::fs::write(&other_path, other_ca).unwrap();
    let stderr = refused(
        &sim.url(),
        &format!(
            "postgres://svcgate@localhost:{port}/svcgate?sslmode=verify-ca&sslrootcert={}",
            other_path.display()
        ),
    )
    .await;
    assert!(
        stderr.contains("certificate") || stderr.contains("TLS"),
        "{stderr}"
    );
}

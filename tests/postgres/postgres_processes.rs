//! Two svcgate processes on one PostgreSQL, in front of one svc-sim, stopped by process id the way an orchestrator
//! stops them: SIGTERM under load loses no request of a client that retries on the other replica, SIGKILL under
//! load loses no acknowledged alert, the incident outbox makes exactly one incident per alert when the replica
//! making the calls is killed mid-run, and both replicas become ready when they start at once on an empty database.
//! Each test has its own PostgreSQL cluster.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use std::collections::{BTreeMap, BTreeSet};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::alerts::ADMIN;
use crate::common::replicas::{database, integration, readiness, until, Replica};
use crate::common::{get, send_json};
use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::{json, Value};

/// A client of both replicas, as a load balancer that retries a failed request elsewhere would be.
#[derive(Clone)]
struct Sender {
    client: Client<hyper_util::client::legacy::connect::HttpConnector, Full<Bytes>>,
    replicas: [SocketAddr; 2],
    path: String,
    key: String,
}

/// What happened to one alert: where it was answered 200 (if it was) and how many tries failed first.
struct Sent {
    acknowledged_by: Option<usize>,
    failures: usize,
}

impl Sender {
    fn new(replicas: [SocketAddr; 2], path: String, key: String) -> Sender {
        Sender {
            client: Client::builder(TokioExecutor::new()).build_http(),
            replicas,
            path,
            key,
        }
    }

    /// One try on replica `index`: the status, or why there was none.
    async fn try_send(&self, index: usize, payload: &Value) -> Result<StatusCode, String> {
        let request = Request::post(format!("http://{}{}", self.replicas[index], self.path))
            .header("authorization", format!("Bearer {}", self.key))
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(payload.to_string())))
            .unwrap();
        let response = tokio::time::timeout(Duration::from_secs(10), self.client.request(request))
            .await
            .map_err(|_| "no answer within 10 s".to_owned())?
            .map_err(|error| error.to_string())?;
        let status = response.status();
        drop(response.into_body().collect().await);
        Ok(status)
    }

    /// Sends `payload` to replica `first`, and on a failure to the other one, alternating, up to 20 tries.
    async fn send(&self, first: usize, payload: &Value) -> Sent {
        let mut failures = 0;
        for attempt in 0..20 {
            let index = (first + attempt) % 2;
            match self.try_send(index, payload).await {
                Ok(StatusCode::OK) => {
                    return Sent {
                        acknowledged_by: Some(index),
                        failures,
                    }
                }
                Ok(_) | Err(_) => failures += 1,
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        Sent {
            acknowledged_by: None,
            failures,
        }
    }
}

/// Every alert's title in the database, with its event count (the fingerprint is stored hashed).
async fn stored_titles(database_url: &str) -> BTreeMap<String, i64> {
    let (client, connection) = tokio_postgres::connect(database_url, tokio_postgres::NoTls)
        .await
        .unwrap();
    let task = tokio::spawn(connection);
    let rows = client
        .query("SELECT title, events FROM alerts", &[])
        .await
        .unwrap();
    drop(client);
    drop(task.await);
    rows.iter()
        .map(|row| (row.get::<_, String>(0), row.get::<_, i64>(1)))
        .collect()
}

/// Load: `workers` senders each send alerts of distinct fingerprints, alternating the first replica, until `stop`
/// is set (at most 5,000 each). `acknowledged` counts the alerts answered 200 so far.
async fn load(
    sender: &Sender,
    workers: usize,
    stop: Arc<AtomicBool>,
    acknowledged: Arc<AtomicUsize>,
) -> Vec<(String, Sent)> {
    let tasks: Vec<_> = (0..workers)
        .map(|worker| {
            let sender = sender.clone();
            let acknowledged = Arc::clone(&acknowledged);
            let stop = Arc::clone(&stop);
            tokio::spawn(async move {
                let mut sent = Vec::new();
                for n in 0..5000 {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let fingerprint = format!("load-{worker}-{n}");
                    let payload =
                        json!({"title": format!("alert {fingerprint}"), "fingerprint": fingerprint});
                    let outcome = sender.send((worker + n) % 2, &payload).await;
                    if outcome.acknowledged_by.is_some() {
                        acknowledged.fetch_add(1, Ordering::SeqCst);
                    }
                    sent.push((fingerprint, outcome));
                }
                sent
            })
        })
        .collect();
    let mut all = Vec::new();
    for task in tasks {
        all.extend(task.await.unwrap());
    }
    all
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sigterm_under_load_fails_readiness_first_and_a_retrying_client_loses_nothing() {
    let started = Instant::now();
    let (cluster, url) = database().await;
    let (sim, demo) = common::sim::with_demo().await;
    let env = [
        ("SVCGATE_SHUTDOWN_DELAY", "2s"),
        ("SVCGATE_SHUTDOWN_GRACE", "10s"),
    ];
    let mut first = Replica::start("first", &sim.url(), &url, &env).await;
    let second = Replica::start("second", &sim.url(), &url, &env).await;
    let (path, key) = integration(&first, &demo).await;
    let sender = Sender::new([first.address, second.address], path, key);
    until(
        Duration::from_secs(5),
        "the second replica knowing the integration",
        async || sender.try_send(1, &json!({"title": "warm-up"})).await == Ok(StatusCode::OK),
    )
    .await;

    // Readiness of the first replica, watched from before the signal until it stops listening.
    let first_address = first.address;
    let signalled = Arc::new(AtomicBool::new(false));
    let watched = Arc::clone(&signalled);
    let watcher = tokio::spawn(async move {
        let mut unready_at = None;
        let started = Instant::now();
        loop {
            let state = readiness(first_address).await;
            match state {
                Some(StatusCode::OK) => {
                    assert!(unready_at.is_none(), "readiness came back after it had failed")
                }
                Some(_) => {
                    assert!(
                        watched.load(Ordering::SeqCst),
                        "readiness failed before the signal"
                    );
                    unready_at.get_or_insert_with(Instant::now);
                }
                None if watched.load(Ordering::SeqCst) => return (unready_at, Instant::now()),
                None => {}
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "the first replica never stopped listening"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    });

    let acknowledged = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let running = tokio::spawn({
        let sender = sender.clone();
        let (stop, acknowledged) = (Arc::clone(&stop), Arc::clone(&acknowledged));
        async move { load(&sender, 8, stop, acknowledged).await }
    });
    until(Duration::from_secs(30), "500 alerts answered", async || {
        acknowledged.load(Ordering::SeqCst) >= 500
    })
    .await;
    let acknowledged_before = acknowledged.load(Ordering::SeqCst);
    signalled.store(true, Ordering::SeqCst);
    let term_sent = Instant::now();
    first.signal("-TERM");
    // The load goes on through the delay, the listener's closing and the drain, until the replica has exited.
    let (unready_at, closed_at) = tokio::time::timeout(Duration::from_secs(30), watcher)
        .await
        .expect("the readiness watcher ended")
        .unwrap();
    assert!(
        first.exited(Duration::from_secs(30)).await,
        "exit status after SIGTERM: {}",
        first.log.lock().unwrap()
    );
    let after_exit = acknowledged.load(Ordering::SeqCst);
    until(
        Duration::from_secs(30),
        "200 more alerts answered by the other replica",
        async || acknowledged.load(Ordering::SeqCst) >= after_exit + 200,
    )
    .await;
    stop.store(true, Ordering::SeqCst);
    let sent = running.await.unwrap();

    let unready_at = unready_at.expect("readiness answered 503 before the listener closed");
    assert!(unready_at < closed_at);
    let failed: Vec<&String> = sent
        .iter()
        .filter(|(_, outcome)| outcome.acknowledged_by.is_none())
        .map(|(fingerprint, _)| fingerprint)
        .collect();
    assert!(failed.is_empty(), "alerts never answered 200: {failed:?}");
    let retried: usize = sent.iter().map(|(_, outcome)| outcome.failures).sum();
    let stored = stored_titles(&url).await;
    for (fingerprint, _) in &sent {
        assert!(
            stored.contains_key(&format!("alert {fingerprint}")),
            "{fingerprint} acknowledged but not stored"
        );
    }
    eprintln!(
        "SIGTERM: {} alerts, {acknowledged_before} before the signal, readiness 503 after {:?}, listener closed \
         after {:?}, {retried} tries failed and were retried; {:?} in all",
        sent.len(),
        unready_at - term_sent,
        closed_at - term_sent,
        started.elapsed()
    );
    drop(second);
    drop(cluster);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sigkill_under_load_loses_no_acknowledged_alert() {
    let started = Instant::now();
    let (cluster, url) = database().await;
    let (sim, demo) = common::sim::with_demo().await;
    let mut first = Replica::start("first", &sim.url(), &url, &[]).await;
    let second = Replica::start("second", &sim.url(), &url, &[]).await;
    let (path, key) = integration(&first, &demo).await;
    let sender = Sender::new([first.address, second.address], path, key);
    until(
        Duration::from_secs(5),
        "the second replica knowing the integration",
        async || sender.try_send(1, &json!({"title": "warm-up"})).await == Ok(StatusCode::OK),
    )
    .await;

    let acknowledged = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let running = tokio::spawn({
        let sender = sender.clone();
        let (stop, acknowledged) = (Arc::clone(&stop), Arc::clone(&acknowledged));
        async move { load(&sender, 8, stop, acknowledged).await }
    });
    until(Duration::from_secs(30), "500 alerts answered", async || {
        acknowledged.load(Ordering::SeqCst) >= 500
    })
    .await;
    first.signal("-KILL");
    assert!(!first.exited(Duration::from_secs(10)).await);
    let after_kill = acknowledged.load(Ordering::SeqCst);
    until(
        Duration::from_secs(30),
        "500 more alerts answered by the other replica",
        async || acknowledged.load(Ordering::SeqCst) >= after_kill + 500,
    )
    .await;
    stop.store(true, Ordering::SeqCst);
    let sent = running.await.unwrap();

    let stored = stored_titles(&url).await;
    let by_first = sent
        .iter()
        .filter(|(_, outcome)| outcome.acknowledged_by == Some(0))
        .count();
    let retried: usize = sent.iter().map(|(_, outcome)| outcome.failures).sum();
    for (fingerprint, outcome) in &sent {
        assert!(
            outcome.acknowledged_by.is_some(),
            "{fingerprint} was never answered 200"
        );
        let events = stored.get(&format!("alert {fingerprint}")).copied().unwrap_or(0);
        assert!(
            events >= 1,
            "{fingerprint} was answered 200 but is not in PostgreSQL"
        );
    }
    assert!(
        by_first > 0,
        "the killed replica acknowledged nothing: the test proved nothing"
    );
    assert_eq!(readiness(second.address).await, Some(StatusCode::OK));
    eprintln!(
        "SIGKILL: {} alerts acknowledged ({by_first} by the killed replica), all in PostgreSQL; {retried} tries \
         failed and were retried; {:?} in all",
        sent.len(),
        started.elapsed()
    );
    drop(cluster);
}

/// An HTTP proxy in front of the simulator for one replica, which holds the answer to every issue creation for
/// `hold` after the simulator made the issue: a replica killed meanwhile has had its incident made without
/// learning so. `made` counts the issues made through it.
struct HoldingProxy {
    address: SocketAddr,
    made: Arc<AtomicUsize>,
}

impl HoldingProxy {
    async fn start(backend: String, hold: Duration) -> HoldingProxy {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let made = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&made);
        let client: Client<_, Full<Bytes>> = Client::builder(TokioExecutor::new()).build_http();
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let (client, backend, counted) = (client.clone(), backend.clone(), Arc::clone(&counted));
                tokio::spawn(async move {
                    let service =
                        hyper::service::service_fn(move |request: Request<hyper::body::Incoming>| {
                            let (client, backend, counted) =
                                (client.clone(), backend.clone(), Arc::clone(&counted));
                            async move {
                                let (parts, body) = request.into_parts();
                                let body = body
                                    .collect()
                                    .await
                                    .map(|body| body.to_bytes())
                                    .unwrap_or_default();
                                let target = parts.uri.path_and_query().map_or("/", |target| target.as_str());
                                let mut forwarded = Request::builder()
                                    .method(parts.method.clone())
                                    .uri(format!("{backend}{target}"));
                                for (name, value) in &parts.headers {
                                    if name != http::header::HOST {
                                        forwarded = forwarded.header(name, value);
                                    }
                                }
                                let answer = client.request(forwarded.body(Full::new(body)).unwrap()).await;
                                let Ok(answer) = answer else {
                                    let mut failed = Response::new(Full::new(Bytes::new()));
                                    *failed.status_mut() = StatusCode::BAD_GATEWAY;
                                    return Ok::<_, Infallible>(failed);
                                };
                                let (parts_back, body_back) = answer.into_parts();
                                let body_back = body_back
                                    .collect()
                                    .await
                                    .map(|body| body.to_bytes())
                                    .unwrap_or_default();
                                if parts.method == Method::POST
                                    && parts.uri.path().ends_with("/issues")
                                    && parts_back.status == StatusCode::CREATED
                                {
                                    counted.fetch_add(1, Ordering::SeqCst);
                                    tokio::time::sleep(hold).await;
                                }
                                Ok(Response::from_parts(parts_back, Full::new(body_back)))
                            }
                        });
                    drop(
                        hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                            .serve_connection(TokioIo::new(stream), service)
                            .await,
                    );
                });
            }
        });
        HoldingProxy { address, made }
    }

    fn url(&self) -> String {
        format!("http://{}", self.address)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_outbox_makes_one_incident_per_alert_when_the_replica_making_them_is_killed() {
    let started = Instant::now();
    let (cluster, url) = database().await;
    let (sim, demo) = common::sim::with_demo().await;
    let hold = Duration::from_millis(150);
    let proxies = [
        HoldingProxy::start(sim.url(), hold).await,
        HoldingProxy::start(sim.url(), hold).await,
    ];
    // A short lease, so that the survivor takes the dead replica's call over soon; it must exceed backend_timeout.
    let env = [
        ("SVCGATE_SERVICE_TOKEN", ADMIN),
        ("SVCGATE_OUTBOX_LEASE", "3s"),
        ("SVCGATE_BACKEND_TIMEOUT", "2s"),
    ];
    let mut replicas = [
        Some(Replica::start("first", &proxies[0].url(), &url, &env).await),
        Some(Replica::start("second", &proxies[1].url(), &url, &env).await),
    ];
    let first = replicas[0].as_ref().unwrap();
    let api = format!("{}/-/svcgate/api/projects/{}", first.url(), demo.project_id);
    let settings = send_json(
        Method::PUT,
        &format!("{api}/alert_settings"),
        &demo.token,
        json!({"create_incident": true, "auto_close_incident": false}),
    )
    .await;
    assert_eq!(settings.status, StatusCode::OK, "{:?}", settings.body);
    let (path, key) = integration(first, &demo).await;
    let sender = Sender::new([first.address, replicas[1].as_ref().unwrap().address], path, key);

    const ALERTS: usize = 20;
    for n in 0..ALERTS {
        let payload = json!({"title": format!("outage {n}"), "fingerprint": format!("outage-{n}")});
        let sent = sender.send(n % 2, &payload).await;
        assert!(sent.acknowledged_by.is_some(), "alert {n} not acknowledged");
    }

    // Kill whichever replica is making the calls as soon as it has made two: its second incident exists on the
    // backend, its answer held by the proxy, and the replica never learns of it.
    let mut killed = None;
    until(
        Duration::from_secs(30),
        "a replica making incidents",
        async || {
            killed = proxies
                .iter()
                .position(|proxy| proxy.made.load(Ordering::SeqCst) >= 2);
            killed.is_some()
        },
    )
    .await;
    let killed = killed.unwrap();
    let mut victim = replicas[killed].take().unwrap();
    victim.signal("-KILL");
    assert!(!victim.exited(Duration::from_secs(10)).await);
    let made_by_victim = proxies[killed].made.load(Ordering::SeqCst);
    let survivor = replicas[1 - killed].as_ref().unwrap();

    // The survivor takes the killed replica's claimed calls over once their lease runs out.
    let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    let connection = tokio::spawn(connection);
    until(
        Duration::from_secs(60),
        "every alert having its incident",
        async || {
            let row = client
                .query_one(
                    "SELECT count(*) FILTER (WHERE incident_iid IS NOT NULL), count(*) FROM alerts",
                    &[],
                )
                .await
                .unwrap();
            row.get::<_, i64>(0) == ALERTS as i64 && row.get::<_, i64>(1) == ALERTS as i64
        },
    )
    .await;
    let rows = client
        .query("SELECT title, incident_iid FROM alerts ORDER BY iid", &[])
        .await
        .unwrap();
    let linked: BTreeMap<String, i64> = rows
        .iter()
        .map(|row| (row.get::<_, String>(0), row.get::<_, i64>(1)))
        .collect();
    drop(client);
    drop(connection.await);

    let issues = get(
        &format!(
            "{}/api/v4/projects/{}/issues?labels=incident&per_page=100",
            sim.url(),
            demo.project_id
        ),
        ADMIN,
    )
    .await
    .json();
    let issues = issues.as_array().unwrap();
    let titles: Vec<&str> = issues
        .iter()
        .map(|issue| issue["title"].as_str().unwrap())
        .collect();
    let distinct: BTreeSet<&str> = titles.iter().copied().collect();
    assert_eq!(titles.len(), ALERTS, "incidents on the backend: {titles:?}");
    assert_eq!(distinct.len(), ALERTS, "an alert has two incidents: {titles:?}");
    for issue in issues {
        let title = issue["title"].as_str().unwrap().trim_start_matches("Incident: ");
        assert_eq!(
            linked.get(title).copied(),
            issue["iid"].as_i64(),
            "{title} is not linked to its incident"
        );
    }
    eprintln!(
        "outbox: {ALERTS} alerts, replica {} killed after making {made_by_victim} incidents, the survivor made {}; \
         one incident each; {:?} in all",
        victim.name,
        proxies[1 - killed].made.load(Ordering::SeqCst),
        started.elapsed()
    );
    assert_eq!(readiness(survivor.address).await, Some(StatusCode::OK));
    drop(cluster);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_replicas_started_at_once_on_an_empty_database_both_become_ready() {
    let started = Instant::now();
    let (cluster, url) = database().await;
    let (sim, demo) = common::sim::with_demo().await;
    let backend = sim.url();
    let (first, second) = tokio::join!(
        Replica::start("first", &backend, &url, &[]),
        Replica::start("second", &backend, &url, &[])
    );
    for replica in [&first, &second] {
        until(Duration::from_secs(30), "readiness", async || {
            readiness(replica.address).await == Some(StatusCode::OK)
        })
        .await;
    }
    // One schema, usable from both: an integration made on one takes alerts on the other.
    let (path, key) = integration(&first, &demo).await;
    let sender = Sender::new([first.address, second.address], path, key);
    until(
        Duration::from_secs(5),
        "the second replica taking an alert",
        async || {
            sender
                .try_send(1, &json!({"title": "hello", "fingerprint": "hello"}))
                .await
                == Ok(StatusCode::OK)
        },
    )
    .await;
    eprintln!("simultaneous start: both ready; {:?} in all", started.elapsed());
    drop(cluster);
}

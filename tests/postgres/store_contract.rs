//! One contract, two stores: every test here runs against the embedded SQLite store and against PostgreSQL (a
//! throwaway cluster per test, `tests/common/postgres.rs`). Then what only PostgreSQL promises: several
//! replicas sharing one database, each a store of its own on it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use crate::common::postgres::Postgres;
use svcgate::store::{
    AlertEvent, AlertQuery, AlertSettings, IdKind, IdRecord, IntegrationRecord, PostgresOptions,
    PostgresStore, SqliteStore, Store, StoreError, UsageDelta, OUTBOX_LEASE,
};

/// A store under test, with what keeps it alive.
struct Subject {
    store: Arc<dyn Store>,
    _sqlite_dir: Option<tempfile::TempDir>,
    _postgres: Option<Postgres>,
}

async fn sqlite() -> Subject {
    let dir = tempfile::tempdir().unwrap();
    Subject {
        store: Arc::new(SqliteStore::open(dir.path()).unwrap()),
        _sqlite_dir: Some(dir),
        _postgres: None,
    }
}

fn options(url: String) -> PostgresOptions {
    PostgresOptions {
        url,
        pool_size: 8,
        ca_bundle: None,
        // More than the default, so the contracts also hold with events spread over several writers.
        alert_writers: 4,
        limits: svcgate::store::DatabaseLimits::default(),
    }
}

async fn postgres() -> Subject {
    let cluster = tokio::task::spawn_blocking(Postgres::start).await.unwrap();
    let url = cluster.database("contract").await;
    Subject {
        store: Arc::new(PostgresStore::connect(&options(url)).await.unwrap()),
        _sqlite_dir: None,
        _postgres: Some(cluster),
    }
}

/// Runs one contract test against both stores, as two tests named `<name>_sqlite` and `<name>_postgres`.
macro_rules! contract {
    ($name:ident) => {
        mod $name {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                let subject = super::sqlite().await;
                super::$name(subject.store.as_ref()).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                let subject = super::postgres().await;
                super::$name(subject.store.as_ref()).await;
            }
        }
    };
}

const NOW: &str = "2026-11-24T10:00:00.000Z";

fn event(project_id: u64, fingerprint: Option<&str>, ended_at: Option<&str>) -> AlertEvent {
    AlertEvent {
        project_id,
        integration_id: 1,
        fingerprint: fingerprint.map(str::to_owned),
        ended_at: ended_at.map(str::to_owned),
        title: format!("disk full {}", fingerprint.unwrap_or("-")),
        description: Some("the disk is full".to_owned()),
        severity: "critical".to_owned(),
        service: Some("db".to_owned()),
        monitoring_tool: None,
        hosts_json: "[\"web-1\"]".to_owned(),
        environment: Some("production".to_owned()),
        started_at: NOW.to_owned(),
        payload_json: "{\"title\":\"disk full\"}".to_owned(),
        now: NOW.to_owned(),
    }
}

fn integration(project_id: u64, kind: &str) -> IntegrationRecord {
    IntegrationRecord {
        id: 0,
        project_id,
        project_path: format!("group/project-{project_id}"),
        kind: kind.to_owned(),
        name: kind.to_owned(),
        active: true,
        endpoint_identifier: (kind == "http").then(|| format!("{project_id:016x}")),
        token_nonce: vec![1; 12],
        token_ciphertext: vec![2; 32],
        api_url: None,
        payload_example: None,
        payload_attribute_mapping: None,
        created_at: NOW.to_owned(),
        updated_at: NOW.to_owned(),
        one_per_project: kind != "http",
        payload_format: if kind == "http" { "grafana" } else { "generic" }.to_owned(),
        pending_confirmation: (kind == "http").then(|| "https://sns.example/confirm?token=t".to_owned()),
    }
}

fn query(project_id: u64) -> AlertQuery {
    AlertQuery {
        project_id,
        statuses: Vec::new(),
        severity: None,
        environment: None,
        search: None,
        sort_by: "started_at",
        descending: true,
        page: 1,
        per_page: 20,
    }
}

async fn integrations_are_kept_changed_and_deleted_with_their_payload_format_and_pending_confirmation(
    store: &dyn Store,
) {
    let generic = store.integration_insert(integration(7, "generic")).await.unwrap();
    let http = store.integration_insert(integration(7, "http")).await.unwrap();
    assert_ne!(generic.id, http.id);
    assert!(matches!(
        store.integration_insert(integration(7, "generic")).await,
        Err(StoreError::Conflict(_))
    ));
    let mut renamed = http.clone();
    renamed.name = "Renamed".to_owned();
    renamed.active = false;
    renamed.token_ciphertext = vec![9; 32];
    renamed.payload_format = "datadog".to_owned();
    // The confirmation address a sender asked for is kept as given, then forgotten.
    assert!(http.pending_confirmation.is_some());
    renamed.pending_confirmation = None;
    store.integration_update(renamed.clone()).await.unwrap();
    let all = store.integrations().await.unwrap();
    assert_eq!(all, vec![generic.clone(), renamed.clone()]);
    // The confirmation alone is set, the rest of the row left as it is.
    let address = "https://sns.example/confirm".to_owned();
    store
        .integration_confirmation(http.id, Some(address.clone()))
        .await
        .unwrap();
    renamed.pending_confirmation = Some(address);
    assert_eq!(
        store.integrations().await.unwrap(),
        vec![generic.clone(), renamed]
    );
    store.integration_delete(http.id).await.unwrap();
    // A deleted integration keeps none.
    store
        .integration_confirmation(http.id, Some("https://sns.example/again".to_owned()))
        .await
        .unwrap();
    assert_eq!(store.integrations().await.unwrap(), vec![generic]);
}
contract!(integrations_are_kept_changed_and_deleted_with_their_payload_format_and_pending_confirmation);

async fn repeats_group_and_an_end_time_resolves(store: &dyn Store) {
    let first = store.alert_event(event(7, Some("f1"), None)).await.unwrap();
    assert_eq!(first.outcome, "created");
    let first_alert = first.alert.unwrap();
    assert_eq!((first_alert.iid, first_alert.events), (1, 1));

    let again = store.alert_event(event(7, Some("f1"), None)).await.unwrap();
    assert_eq!(again.outcome, "grouped");
    let grouped = again.alert.unwrap();
    assert_eq!((grouped.id, grouped.iid, grouped.events), (first_alert.id, 1, 2));

    let other = store.alert_event(event(7, Some("f2"), None)).await.unwrap();
    assert_eq!((other.outcome, other.alert.unwrap().iid), ("created", 2));

    let resolved = store
        .alert_event(event(7, Some("f1"), Some("2026-11-24T11:00:00.000Z")))
        .await
        .unwrap();
    assert_eq!(resolved.outcome, "resolved");
    assert_eq!(resolved.alert.unwrap().status, "resolved");
    let nothing = store
        .alert_event(event(7, Some("f1"), Some("2026-11-24T11:00:00.000Z")))
        .await
        .unwrap();
    assert_eq!(
        (nothing.outcome, nothing.alert.is_none()),
        ("no_open_alert", true)
    );

    // After the resolve, the fingerprint opens a new alert with the next iid.
    let reopened = store.alert_event(event(7, Some("f1"), None)).await.unwrap();
    assert_eq!((reopened.outcome, reopened.alert.unwrap().iid), ("created", 3));
    // Without a fingerprint nothing groups; another project counts its own iids.
    for _ in 0..2 {
        let lone = store.alert_event(event(7, None, None)).await.unwrap();
        assert_eq!(lone.outcome, "created");
    }
    let elsewhere = store.alert_event(event(8, Some("f1"), None)).await.unwrap();
    assert_eq!(elsewhere.alert.unwrap().iid, 1);

    let stored = store.alert(7, 1).await.unwrap().unwrap();
    assert_eq!(stored.status, "resolved");
    assert_eq!(stored.ended_at.as_deref(), Some("2026-11-24T11:00:00.000Z"));
    assert_eq!(stored.events, 2);
    assert_eq!(stored.hosts_json, "[\"web-1\"]");
}
contract!(repeats_group_and_an_end_time_resolves);

async fn concurrent_repeats_make_one_open_alert(store: &dyn Store) {
    let sends = (0..200).map(|_| store.alert_event(event(7, Some("storm"), None)));
    let outcomes = futures_util::future::join_all(sends).await;
    let created = outcomes
        .iter()
        .filter(|outcome| outcome.as_ref().unwrap().outcome == "created")
        .count();
    assert_eq!(created, 1);
    let page = store.alerts(query(7)).await.unwrap();
    assert_eq!(page.total, 1);
    assert_eq!(page.alerts[0].events, 200);
}
contract!(concurrent_repeats_make_one_open_alert);

async fn a_status_change_cannot_reopen_a_second_open_alert(store: &dyn Store) {
    store.alert_event(event(7, Some("f"), None)).await.unwrap();
    let resolved = store
        .alert_status(7, 1, "resolved".to_owned(), NOW.to_owned())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (resolved.status.as_str(), resolved.ended_at.as_deref()),
        ("resolved", Some(NOW))
    );
    store.alert_event(event(7, Some("f"), None)).await.unwrap();
    assert!(matches!(
        store
            .alert_status(7, 1, "triggered".to_owned(), NOW.to_owned())
            .await,
        Err(StoreError::Conflict(_))
    ));
    let acknowledged = store
        .alert_status(7, 2, "acknowledged".to_owned(), NOW.to_owned())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (acknowledged.status.as_str(), acknowledged.ended_at),
        ("acknowledged", None)
    );
    assert!(store
        .alert_status(7, 99, "resolved".to_owned(), NOW.to_owned())
        .await
        .unwrap()
        .is_none());
}
contract!(a_status_change_cannot_reopen_a_second_open_alert);

async fn lists_filter_count_and_sort(store: &dyn Store) {
    for (fingerprint, severity) in [("a", "low"), ("b", "critical"), ("c", "medium")] {
        let mut alert = event(7, Some(fingerprint), None);
        alert.severity = severity.to_owned();
        alert.title = format!("Title {fingerprint}");
        store.alert_event(alert).await.unwrap();
    }
    store
        .alert_status(7, 3, "resolved".to_owned(), NOW.to_owned())
        .await
        .unwrap();
    let mut by_severity = query(7);
    by_severity.sort_by = "severity_rank";
    let page = store.alerts(by_severity).await.unwrap();
    let severities: Vec<&str> = page.alerts.iter().map(|alert| alert.severity.as_str()).collect();
    assert_eq!(severities, ["critical", "medium", "low"]);
    assert_eq!(page.counts.get("triggered"), Some(&2));
    assert_eq!(page.counts.get("resolved"), Some(&1));

    let mut open = query(7);
    open.statuses = vec!["triggered".to_owned()];
    open.search = Some("TITLE B".to_owned());
    let page = store.alerts(open).await.unwrap();
    assert_eq!((page.total, page.alerts[0].title.as_str()), (1, "Title b"));

    let mut paged = query(7);
    paged.sort_by = "title";
    paged.descending = false;
    paged.per_page = 2;
    paged.page = 2;
    let page = store.alerts(paged).await.unwrap();
    assert_eq!(
        (page.total, page.alerts.len(), page.alerts[0].title.as_str()),
        (3, 1, "Title c")
    );

    let environments = store.alerts_by_environment(7).await.unwrap();
    assert_eq!(environments.len(), 2, "open alerts that name an environment");
}
contract!(lists_filter_count_and_sort);

/// Turns on incident creation and closing for `project`.
async fn incidents_on(store: &dyn Store, project: u64) {
    store
        .alert_settings_put(
            project,
            AlertSettings {
                create_incident: true,
                auto_close_incident: true,
            },
        )
        .await
        .unwrap();
}

async fn incidents_are_queued_claimed_once_and_closed(store: &dyn Store) {
    incidents_on(store, 7).await;
    assert!(store.alert_settings(7).await.unwrap().create_incident);
    assert_eq!(store.alert_settings(8).await.unwrap(), AlertSettings::default());
    let created = store.alert_event(event(7, Some("f"), None)).await.unwrap();
    let alert_id = created.alert.unwrap().id;

    let due = store.outbox_due(NOW.to_owned(), OUTBOX_LEASE, 10).await.unwrap();
    assert_eq!(due.len(), 1);
    assert_eq!(
        (due[0].kind.as_str(), due[0].alert.id),
        ("create_incident", alert_id)
    );
    // Claimed: not due again within its lease, due again once the lease has run out.
    assert!(store
        .outbox_due(NOW.to_owned(), OUTBOX_LEASE, 10)
        .await
        .unwrap()
        .is_empty());
    let after_lease = "2026-11-24T10:05:00.000Z".to_owned();
    let taken_over = store
        .outbox_due(after_lease.clone(), OUTBOX_LEASE, 10)
        .await
        .unwrap();
    assert_eq!(taken_over.len(), 1);

    assert!(store
        .outbox_done(
            taken_over[0].id,
            taken_over[0].claim.clone(),
            alert_id,
            Some(42),
            after_lease.clone()
        )
        .await
        .unwrap());
    assert_eq!(store.alert(7, 1).await.unwrap().unwrap().incident_iid, Some(42));
    let states = store.outbox_of(alert_id).await.unwrap();
    assert_eq!(states.len(), 1);
    assert!(states[0].done_at.is_some());

    store
        .alert_event(event(7, Some("f"), Some("2026-11-24T10:06:00.000Z")))
        .await
        .unwrap();
    let due = store
        .outbox_due("2026-11-24T10:07:00.000Z".to_owned(), OUTBOX_LEASE, 10)
        .await
        .unwrap();
    assert_eq!(due.len(), 1);
    assert_eq!(due[0].kind, "close_incident");
    assert!(store
        .outbox_retry(
            due[0].id,
            due[0].claim.clone(),
            "2026-11-24T10:09:00.000Z".to_owned(),
            "502".to_owned(),
        )
        .await
        .unwrap());
    assert!(store
        .outbox_due("2026-11-24T10:08:00.000Z".to_owned(), OUTBOX_LEASE, 10)
        .await
        .unwrap()
        .is_empty());
    let retried = store
        .outbox_due("2026-11-24T10:09:00.000Z".to_owned(), OUTBOX_LEASE, 10)
        .await
        .unwrap();
    assert_eq!(retried[0].attempts, 1);
}
contract!(incidents_are_queued_claimed_once_and_closed);

/// A replica whose claim's lease ran out before it recorded its outcome (a slow store, a paused process) changes
/// nothing: the replica that took the call over holds it, and only its outcome is recorded.
async fn an_outcome_recorded_after_the_call_was_taken_over_changes_nothing(store: &dyn Store) {
    incidents_on(store, 7).await;
    let created = store.alert_event(event(7, Some("f"), None)).await.unwrap();
    let alert_id = created.alert.unwrap().id;
    let first = store.outbox_due(NOW.to_owned(), OUTBOX_LEASE, 10).await.unwrap();
    let after_lease = "2026-11-24T10:05:00.000Z";
    let second = store
        .outbox_due(after_lease.to_owned(), OUTBOX_LEASE, 10)
        .await
        .unwrap();
    assert_eq!((first.len(), second.len()), (1, 1));
    assert_eq!(first[0].id, second[0].id);
    assert_ne!(first[0].claim, second[0].claim);

    // The first claimant's late failure neither counts an attempt nor moves the call's next attempt.
    assert!(!store
        .outbox_retry(
            first[0].id,
            first[0].claim.clone(),
            "2026-11-24T10:05:01.000Z".to_owned(),
            "timed out".to_owned(),
        )
        .await
        .unwrap());
    assert!(
        store
            .outbox_due("2026-11-24T10:05:30.000Z".to_owned(), OUTBOX_LEASE, 10)
            .await
            .unwrap()
            .is_empty(),
        "the second claim still holds the call"
    );
    // Nor does its late success record its incident.
    assert!(!store
        .outbox_done(
            first[0].id,
            first[0].claim.clone(),
            alert_id,
            Some(41),
            after_lease.to_owned(),
        )
        .await
        .unwrap());
    assert_eq!(store.alert(7, 1).await.unwrap().unwrap().incident_iid, None);
    let states = store.outbox_of(alert_id).await.unwrap();
    assert_eq!((states[0].attempts, states[0].done_at.is_none()), (0, true));
    assert_eq!(states[0].next_attempt_at, second[0].claim);

    // The claimant that holds the call records its outcome, once.
    let done = |iid| {
        store.outbox_done(
            second[0].id,
            second[0].claim.clone(),
            alert_id,
            Some(iid),
            after_lease.to_owned(),
        )
    };
    assert!(done(42).await.unwrap());
    assert!(!done(43).await.unwrap(), "a call is done once");
    assert_eq!(store.alert(7, 1).await.unwrap().unwrap().incident_iid, Some(42));
}
contract!(an_outcome_recorded_after_the_call_was_taken_over_changes_nothing);

/// An alert keeps the payload that resolved it, the latest, for its page to show.
async fn a_resolved_alert_keeps_the_resolving_payload(store: &dyn Store) {
    let created = store.alert_event(event(7, Some("f"), None)).await.unwrap();
    let iid = created.alert.unwrap().iid;
    let mut resolving = event(7, Some("f"), Some(NOW));
    resolving.payload_json = "{\"title\":\"disk full\",\"state\":\"recovered\"}".to_owned();
    store.alert_event(resolving).await.unwrap();
    let alert = store.alert(7, iid).await.unwrap().unwrap();
    assert_eq!(alert.status, "resolved");
    assert_eq!(
        alert.payload_json,
        "{\"title\":\"disk full\",\"state\":\"recovered\"}"
    );
}

contract!(a_resolved_alert_keeps_the_resolving_payload);

async fn finished_incident_calls_are_swept_and_pending_ones_kept(store: &dyn Store) {
    incidents_on(store, 7).await;
    let done = store.alert_event(event(7, Some("done"), None)).await.unwrap();
    let later = store.alert_event(event(7, Some("later"), None)).await.unwrap();
    let pending = store.alert_event(event(7, Some("pending"), None)).await.unwrap();
    let (done_id, later_id, pending_id) = (
        done.alert.unwrap().id,
        later.alert.unwrap().id,
        pending.alert.unwrap().id,
    );
    let due = store.outbox_due(NOW.to_owned(), OUTBOX_LEASE, 10).await.unwrap();
    for (alert_id, at) in [
        (done_id, "2026-11-24T10:05:00.000Z"),
        (later_id, "2026-11-24T10:06:00.000Z"),
    ] {
        let call = due.iter().find(|item| item.alert.id == alert_id).unwrap();
        store
            .outbox_done(
                call.id,
                call.claim.clone(),
                alert_id,
                Some(40 + alert_id),
                at.to_owned(),
            )
            .await
            .unwrap();
    }
    let sweep = |before: &str, limit: u32| store.outbox_sweep(before.to_owned(), limit);

    // Not finished before the cut: kept.
    assert_eq!(sweep("2026-11-24T10:05:00.000Z", 100).await.unwrap(), 0);
    assert_eq!(store.outbox_of(done_id).await.unwrap().len(), 1);
    // Finished before it: removed, at most `limit` at a time, the oldest first; the incident stays on its alert.
    // A pending call stays whatever the cut.
    assert_eq!(sweep("2099-01-01T00:00:00.000Z", 1).await.unwrap(), 1);
    assert!(store.outbox_of(done_id).await.unwrap().is_empty());
    assert_eq!(store.outbox_of(later_id).await.unwrap().len(), 1);
    assert_eq!(sweep("2099-01-01T00:00:00.000Z", 1).await.unwrap(), 1);
    assert!(store.outbox_of(later_id).await.unwrap().is_empty());
    assert_eq!(store.outbox_of(pending_id).await.unwrap().len(), 1);
    assert_eq!(
        store.alert(7, 1).await.unwrap().unwrap().incident_iid,
        Some(40 + done_id)
    );
    assert_eq!(sweep("2099-01-01T00:00:00.000Z", 100).await.unwrap(), 0);
}
contract!(finished_incident_calls_are_swept_and_pending_ones_kept);

async fn ids_are_never_given_twice_and_a_deleted_integration_keeps_its_name(store: &dyn Store) {
    // An integration deleted, then another made: a new id, and the old one still names the deleted one.
    let first = store.integration_insert(integration(9, "generic")).await.unwrap();
    let mut received = event(9, Some("before"), None);
    received.integration_id = first.id;
    let alert = store.alert_event(received).await.unwrap().alert.unwrap();
    store.integration_delete(first.id).await.unwrap();
    let second = store.integration_insert(integration(9, "generic")).await.unwrap();
    assert!(second.id > first.id, "id {} given again", first.id);
    assert_eq!(store.integrations().await.unwrap(), vec![second.clone()]);
    let named = store.integration_named(first.id).await.unwrap().unwrap();
    assert_eq!((named.name.as_str(), named.deleted), ("generic", true));
    assert!(!store.integration_named(second.id).await.unwrap().unwrap().deleted);
    assert_eq!(store.integration_named(second.id + 100).await.unwrap(), None);
    let stored = store.alert(9, alert.iid).await.unwrap().unwrap();
    assert_eq!(stored.integration_id, Some(first.id));
    // A deleted integration cannot be changed back.
    let mut revived = first.clone();
    revived.active = true;
    store.integration_update(revived).await.ok();
    assert_eq!(store.integrations().await.unwrap(), vec![second]);

    // An incident call finished and swept: the next call takes a new id.
    incidents_on(store, 9).await;
    let first_alert = store
        .alert_event(event(9, Some("first call"), None))
        .await
        .unwrap()
        .alert
        .unwrap();
    let due = store.outbox_due(NOW.to_owned(), OUTBOX_LEASE, 10).await.unwrap();
    let first = due.iter().find(|item| item.alert.id == first_alert.id).unwrap();
    let first_call = first.id;
    store
        .outbox_done(
            first_call,
            first.claim.clone(),
            first_alert.id,
            Some(1),
            NOW.to_owned(),
        )
        .await
        .unwrap();
    assert_eq!(
        store
            .outbox_sweep("2099-01-01T00:00:00.000Z".to_owned(), 100)
            .await
            .unwrap(),
        1
    );
    let next_alert = store
        .alert_event(event(9, Some("next call"), None))
        .await
        .unwrap()
        .alert
        .unwrap();
    let due = store.outbox_due(NOW.to_owned(), OUTBOX_LEASE, 10).await.unwrap();
    let next_call = due.iter().find(|item| item.alert.id == next_alert.id).unwrap().id;
    assert!(next_call > first_call, "outbox id {first_call} given again");
    // Alert numbers go on after the alerts before them.
    assert!(next_alert.iid > first_alert.iid && first_alert.iid > alert.iid);
}
contract!(ids_are_never_given_twice_and_a_deleted_integration_keeps_its_name);

async fn failing_incident_calls_are_listed_per_integration_newest_first(store: &dyn Store) {
    incidents_on(store, 7).await;
    store.alert_event(event(7, Some("a"), None)).await.unwrap();
    store.alert_event(event(7, Some("b"), None)).await.unwrap();
    let other = AlertEvent {
        integration_id: 2,
        ..event(7, Some("c"), None)
    };
    store.alert_event(other).await.unwrap();
    assert!(
        store.outbox_failures(1, 20).await.unwrap().is_empty(),
        "calls not yet tried are not failures"
    );
    let due = store.outbox_due(NOW.to_owned(), OUTBOX_LEASE, 10).await.unwrap();
    assert_eq!(due.len(), 3);
    for item in &due {
        store
            .outbox_retry(
                item.id,
                item.claim.clone(),
                "2026-11-24T10:01:00.000Z".to_owned(),
                format!("the backend answered 401 for {}", item.alert.iid),
            )
            .await
            .unwrap();
    }
    let failures = store.outbox_failures(1, 20).await.unwrap();
    let seen: Vec<(u64, &str, u64, &str)> = failures
        .iter()
        .map(|failure| {
            (
                failure.alert_iid,
                failure.kind.as_str(),
                failure.attempts,
                failure.last_error.as_str(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            (2, "create_incident", 1, "the backend answered 401 for 2"),
            (1, "create_incident", 1, "the backend answered 401 for 1"),
        ],
        "integration 1's failures, newest first"
    );
    assert_eq!(failures[0].alert_title, "disk full b");
    assert_eq!(failures[0].next_attempt_at, "2026-11-24T10:01:00.000Z");
    assert_eq!(
        store.outbox_failures(1, 1).await.unwrap().len(),
        1,
        "at most the limit"
    );
    assert_eq!(store.outbox_failures(2, 20).await.unwrap().len(), 1);

    // A call that then succeeds (claimed again once due) is no longer a failure.
    let due = store
        .outbox_due("2026-11-24T10:02:00.000Z".to_owned(), OUTBOX_LEASE, 10)
        .await
        .unwrap();
    let first = due.iter().find(|item| item.alert.iid == 1).unwrap();
    store
        .outbox_done(
            first.id,
            first.claim.clone(),
            first.alert.id,
            Some(5),
            "2026-11-24T10:02:00.000Z".to_owned(),
        )
        .await
        .unwrap();
    let left: Vec<u64> = store
        .outbox_failures(1, 20)
        .await
        .unwrap()
        .iter()
        .map(|failure| failure.alert_iid)
        .collect();
    assert_eq!(left, [2]);
}
contract!(failing_incident_calls_are_listed_per_integration_newest_first);

async fn sessions_ids_and_usage_are_kept(store: &dyn Store) {
    store
        .session_put("hash".to_owned(), "sealed".to_owned(), Some(5))
        .await
        .unwrap();
    assert_eq!(
        store.session_get("hash".to_owned()).await.unwrap().as_deref(),
        Some("sealed")
    );
    assert_eq!(store.session_get("other".to_owned()).await.unwrap(), None);

    let record = IdRecord {
        kind: IdKind::Issue,
        id: 1042,
        project_id: 7,
        iid: 3,
    };
    store.id_record(vec![record]).await.unwrap();
    let found = store.id_lookup(IdKind::Issue, 1042).await.unwrap().unwrap();
    assert_eq!((found.project_id, found.iid), (7, 3));
    assert!(store
        .id_lookup(IdKind::MergeRequest, 1042)
        .await
        .unwrap()
        .is_none());

    let delta = |client: &str, last_seen: &str| UsageDelta {
        route: "GET /projects/:id/issues".to_owned(),
        since: "9.0".to_owned(),
        client: client.to_owned(),
        user_agent: "tool/1".to_owned(),
        calls: 2,
        errors: 1,
        first_seen: NOW.to_owned(),
        last_seen: last_seen.to_owned(),
    };
    store
        .usage_add(
            vec![delta("alice", NOW), delta("bob", "2026-11-24T10:01:00.000Z")],
            10,
        )
        .await
        .unwrap();
    store.usage_add(vec![delta("alice", NOW)], 10).await.unwrap();
    let rows = store.usage().await.unwrap();
    let alice = rows.iter().find(|row| row.client == "alice").unwrap();
    assert_eq!((alice.calls, alice.errors), (4, 2));
    // Over the cap, the least recent client folds into `others`.
    store
        .usage_add(vec![delta("carol", "2026-11-24T10:02:00.000Z")], 2)
        .await
        .unwrap();
    let clients: Vec<String> = store
        .usage()
        .await
        .unwrap()
        .into_iter()
        .map(|row| row.client)
        .collect();
    assert!(clients.contains(&"others".to_owned()), "{clients:?}");
    assert!(!clients.contains(&"alice".to_owned()), "{clients:?}");
    // A user named `others` is a client like any other: it counts toward the cap, so the least recent client folds.
    store
        .usage_add(vec![delta("others", "2026-11-24T10:03:00.000Z")], 2)
        .await
        .unwrap();
    let rows = store.usage().await.unwrap();
    assert!(
        rows.iter()
            .any(|row| row.client == "others" && row.user_agent == "tool/1"),
        "{rows:?}"
    );
    assert!(!rows.iter().any(|row| row.client == "bob"), "{rows:?}");
    store.ping().await.unwrap();
}
contract!(sessions_ids_and_usage_are_kept);

/// Two replicas on one database: each its own store, its own pool and its own writer.
async fn two_replicas(cluster: &Postgres) -> (PostgresStore, PostgresStore) {
    let url = cluster.database("replicas").await;
    let (one, other) = (options(url.clone()), options(url));
    let (first, second) = tokio::join!(PostgresStore::connect(&one), PostgresStore::connect(&other));
    (first.unwrap(), second.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_sending_one_fingerprint_at_once_make_one_open_alert() {
    let cluster = tokio::task::spawn_blocking(Postgres::start).await.unwrap();
    let (first, second) = two_replicas(&cluster).await;
    let sends = (0..400).map(|n| {
        let store: &dyn Store = if n % 2 == 0 { &first } else { &second };
        store.alert_event(event(7, Some("storm"), None))
    });
    let outcomes = futures_util::future::join_all(sends).await;
    assert!(outcomes.iter().all(Result::is_ok));
    let page = first.alerts(query(7)).await.unwrap();
    assert_eq!(page.total, 1, "one open alert");
    assert_eq!(page.alerts[0].events, 400);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_creating_at_once_give_iids_without_gaps_or_duplicates() {
    let cluster = tokio::task::spawn_blocking(Postgres::start).await.unwrap();
    let (first, second) = two_replicas(&cluster).await;
    // Both replicas create in projects 7 and 8 at once, each batch taking both projects' counters.
    let sends = (0..300).map(|n| {
        let store: &dyn Store = if n % 2 == 0 { &first } else { &second };
        store.alert_event(event(7 + n % 3 / 2, Some(&format!("f{n}")), None))
    });
    let outcomes = futures_util::future::join_all(sends).await;
    assert!(outcomes.iter().all(Result::is_ok), "no deadlock, no failure");
    for project in [7, 8] {
        let mut all = query(project);
        all.per_page = 500;
        all.sort_by = "started_at";
        let page = second.alerts(all).await.unwrap();
        let mut iids: Vec<u64> = page.alerts.iter().map(|alert| alert.iid).collect();
        iids.sort_unstable();
        let expected: Vec<u64> = (1..=page.total).collect();
        assert_eq!(iids, expected, "project {project}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_claim_each_incident_call_once() {
    let cluster = tokio::task::spawn_blocking(Postgres::start).await.unwrap();
    let (first, second) = two_replicas(&cluster).await;
    first
        .alert_settings_put(
            7,
            AlertSettings {
                create_incident: true,
                auto_close_incident: true,
            },
        )
        .await
        .unwrap();
    for n in 0..40 {
        first
            .alert_event(event(7, Some(&format!("f{n}")), None))
            .await
            .unwrap();
    }
    let (a, b) = tokio::join!(
        first.outbox_due(NOW.to_owned(), OUTBOX_LEASE, 100),
        second.outbox_due(NOW.to_owned(), OUTBOX_LEASE, 100)
    );
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(a.len() + b.len(), 40);
    let mut ids: Vec<u64> = a.iter().chain(&b).map(|item| item.id).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 40, "no call claimed by both replicas");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_starting_at_once_on_an_empty_database_migrate_once() {
    let cluster = tokio::task::spawn_blocking(Postgres::start).await.unwrap();
    let url = cluster.database("fresh").await;
    let all: Vec<PostgresOptions> = (0..4).map(|_| options(url.clone())).collect();
    let starts = all.iter().map(PostgresStore::connect);
    for started in futures_util::future::join_all(starts).await {
        started.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_with_another_secret_key_is_refused() {
    let cluster = tokio::task::spawn_blocking(Postgres::start).await.unwrap();
    let (first, second) = two_replicas(&cluster).await;
    first.check_key("aaaa").await.unwrap();
    first.check_key("aaaa").await.unwrap();
    let refused = second.check_key("bbbb").await.unwrap_err();
    assert!(matches!(refused, StoreError::KeyMismatch { .. }));
    assert!(refused.to_string().contains("same secret_key"), "{refused}");
}

async fn page_sessions_are_found_until_they_expire_or_end(store: &dyn Store) {
    let session = |id: &str, expires_at: &str| svcgate::store::PageSessionRecord {
        id_hash: id.to_owned(),
        sealed_token: "sealed".to_owned(),
        username: "demo".to_owned(),
        csrf: "c".repeat(32),
        expires_at: expires_at.to_owned(),
        sealed_refresh_token: None,
        token_expires_at: None,
    };
    store
        .page_session_put(session("live", "2026-11-24T11:00:00.000Z"))
        .await
        .unwrap();
    store
        .page_session_put(session("old", "2026-11-24T09:00:00.000Z"))
        .await
        .unwrap();
    let found = store
        .page_session_get("live".to_owned(), NOW.to_owned())
        .await
        .unwrap();
    assert_eq!(found, Some(session("live", "2026-11-24T11:00:00.000Z")));
    assert_eq!(
        store
            .page_session_get("old".to_owned(), NOW.to_owned())
            .await
            .unwrap(),
        None
    );
    assert_eq!(store.page_sessions_sweep(NOW.to_owned()).await.unwrap(), 1);
    store.page_session_delete("live".to_owned()).await.unwrap();
    assert_eq!(
        store
            .page_session_get("live".to_owned(), NOW.to_owned())
            .await
            .unwrap(),
        None
    );
}
contract!(page_sessions_are_found_until_they_expire_or_end);

async fn an_oauth_session_takes_one_refresh_of_its_old_refresh_token(store: &dyn Store) {
    let session = svcgate::store::PageSessionRecord {
        id_hash: "oauth".to_owned(),
        sealed_token: "access-1".to_owned(),
        username: "demo".to_owned(),
        csrf: "c".repeat(32),
        expires_at: "2026-11-24T18:00:00.000Z".to_owned(),
        sealed_refresh_token: Some("refresh-1".to_owned()),
        token_expires_at: Some("2026-11-24T10:01:00.000Z".to_owned()),
    };
    store.page_session_put(session.clone()).await.unwrap();
    let refresh = |old: &str, new: &str| {
        store.page_session_refreshed(
            "oauth".to_owned(),
            old.to_owned(),
            format!("access-{new}"),
            format!("refresh-{new}"),
            "2026-11-24T12:00:00.000Z".to_owned(),
        )
    };
    assert!(refresh("refresh-1", "2").await.unwrap());
    // A second refresh from the same old token (another replica, a moment later) changes nothing.
    assert!(!refresh("refresh-1", "3").await.unwrap());
    let found = store
        .page_session_get("oauth".to_owned(), NOW.to_owned())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (
            found.sealed_token.as_str(),
            found.sealed_refresh_token.as_deref(),
            found.token_expires_at.as_deref()
        ),
        ("access-2", Some("refresh-2"), Some("2026-11-24T12:00:00.000Z"))
    );
    assert_eq!((found.username, found.csrf), (session.username, session.csrf));
}
contract!(an_oauth_session_takes_one_refresh_of_its_old_refresh_token);

async fn one_caller_at_a_time_claims_the_refresh_of_a_session(store: &dyn Store) {
    store
        .page_session_put(svcgate::store::PageSessionRecord {
            id_hash: "claimed".to_owned(),
            sealed_token: "access-1".to_owned(),
            username: "demo".to_owned(),
            csrf: "c".repeat(32),
            expires_at: "2026-11-24T18:00:00.000Z".to_owned(),
            sealed_refresh_token: Some("refresh-1".to_owned()),
            token_expires_at: Some(NOW.to_owned()),
        })
        .await
        .unwrap();
    let claim = |refresh: &str, now: &str| {
        store.page_session_claim_refresh(
            "claimed".to_owned(),
            refresh.to_owned(),
            now.to_owned(),
            "2026-11-24T10:01:00.000Z".to_owned(),
        )
    };
    assert!(claim("refresh-1", NOW).await.unwrap());
    assert!(!claim("refresh-1", NOW).await.unwrap(), "held by the first");
    assert!(
        !claim("refresh-0", "2026-11-24T11:00:00.000Z").await.unwrap(),
        "not its refresh token"
    );
    assert!(
        claim("refresh-1", "2026-11-24T10:02:00.000Z").await.unwrap(),
        "a lapsed claim can be taken over"
    );
    store
        .page_session_release_refresh("claimed".to_owned(), "refresh-1".to_owned())
        .await
        .unwrap();
    assert!(claim("refresh-1", NOW).await.unwrap(), "released");
    assert!(store
        .page_session_refreshed(
            "claimed".to_owned(),
            "refresh-1".to_owned(),
            "access-2".to_owned(),
            "refresh-2".to_owned(),
            "2026-11-24T12:00:00.000Z".to_owned(),
        )
        .await
        .unwrap());
    assert!(claim("refresh-2", NOW).await.unwrap(), "a refresh ends the claim");
}
contract!(one_caller_at_a_time_claims_the_refresh_of_a_session);

async fn a_refused_refresh_ends_the_session_only_while_its_token_is_the_refused_one(store: &dyn Store) {
    store
        .page_session_put(svcgate::store::PageSessionRecord {
            id_hash: "refused".to_owned(),
            sealed_token: "access-1".to_owned(),
            username: "demo".to_owned(),
            csrf: "c".repeat(32),
            expires_at: "2026-11-24T18:00:00.000Z".to_owned(),
            sealed_refresh_token: Some("refresh-1".to_owned()),
            token_expires_at: Some(NOW.to_owned()),
        })
        .await
        .unwrap();
    // Another replica refreshed the session (refresh-1 → refresh-2) while this one's refresh was refused.
    assert!(store
        .page_session_refreshed(
            "refused".to_owned(),
            "refresh-1".to_owned(),
            "access-2".to_owned(),
            "refresh-2".to_owned(),
            "2026-11-24T12:00:00.000Z".to_owned(),
        )
        .await
        .unwrap());
    let end = |refresh: &str| store.page_session_end_refused("refused".to_owned(), refresh.to_owned());
    assert!(
        !end("refresh-1").await.unwrap(),
        "the newer token keeps the session"
    );
    assert!(store
        .page_session_get("refused".to_owned(), NOW.to_owned())
        .await
        .unwrap()
        .is_some());
    assert!(end("refresh-2").await.unwrap(), "its own token refused ends it");
    assert!(store
        .page_session_get("refused".to_owned(), NOW.to_owned())
        .await
        .unwrap()
        .is_none());
    assert!(!end("refresh-2").await.unwrap(), "and it is gone");
}
contract!(a_refused_refresh_ends_the_session_only_while_its_token_is_the_refused_one);

async fn a_pending_oauth_sign_in_is_taken_once_and_not_after_it_expires(store: &dyn Store) {
    let pending = |hash: &str, expires_at: &str| svcgate::store::OAuthStateRecord {
        state_hash: hash.to_owned(),
        sealed_verifier: "sealed-verifier".to_owned(),
        return_to: "/-/svcgate/projects/1/alerts/2".to_owned(),
        expires_at: expires_at.to_owned(),
    };
    assert!(store
        .oauth_state_put(pending("live", "2026-11-24T10:10:00.000Z"), NOW.to_owned(), 100)
        .await
        .unwrap());
    assert!(store
        .oauth_state_put(
            pending("lapsed", "2026-11-24T09:59:00.000Z"),
            "2026-11-24T09:00:00.000Z".to_owned(),
            100,
        )
        .await
        .unwrap());
    let take = |hash: &str| store.oauth_state_take(hash.to_owned(), NOW.to_owned());
    assert_eq!(
        take("live").await.unwrap(),
        Some(pending("live", "2026-11-24T10:10:00.000Z"))
    );
    assert_eq!(take("live").await.unwrap(), None, "a state is good once");
    assert_eq!(take("lapsed").await.unwrap(), None, "an expired state is refused");
    assert_eq!(take("unknown").await.unwrap(), None);
}
contract!(a_pending_oauth_sign_in_is_taken_once_and_not_after_it_expires);

async fn pending_oauth_sign_ins_stop_at_their_limit_until_some_expire(store: &dyn Store) {
    let pending = |hash: &str, expires_at: &str| svcgate::store::OAuthStateRecord {
        state_hash: hash.to_owned(),
        sealed_verifier: "sealed-verifier".to_owned(),
        return_to: "/-/svcgate/projects".to_owned(),
        expires_at: expires_at.to_owned(),
    };
    let put = |hash: &str, expires_at: &str, now: &str| {
        store.oauth_state_put(pending(hash, expires_at), now.to_owned(), 2)
    };
    assert!(put("a", "2026-11-24T10:05:00.000Z", NOW).await.unwrap());
    assert!(put("b", "2026-11-24T10:10:00.000Z", NOW).await.unwrap());
    assert!(
        !put("c", "2026-11-24T10:10:00.000Z", NOW).await.unwrap(),
        "two are pending: the third is not kept"
    );
    assert_eq!(
        store
            .oauth_state_take("c".to_owned(), NOW.to_owned())
            .await
            .unwrap(),
        None,
        "and nothing of it was written"
    );
    assert!(
        put("d", "2026-11-24T10:20:00.000Z", "2026-11-24T10:06:00.000Z")
            .await
            .unwrap(),
        "once one has expired there is room again"
    );
    assert!(store
        .oauth_state_take("b".to_owned(), NOW.to_owned())
        .await
        .unwrap()
        .is_some());
    assert!(
        put("e", "2026-11-24T10:20:00.000Z", NOW).await.unwrap(),
        "a finished sign-in makes room"
    );
}
contract!(pending_oauth_sign_ins_stop_at_their_limit_until_some_expire);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_count_each_other_as_live_and_sqlite_counts_itself() {
    let cluster = tokio::task::spawn_blocking(Postgres::start).await.unwrap();
    let (first, second) = two_replicas(&cluster).await;
    assert_eq!(first.replica_heartbeat("a".to_owned()).await.unwrap(), 1);
    assert_eq!(second.replica_heartbeat("b".to_owned()).await.unwrap(), 2);
    assert_eq!(
        first.replica_heartbeat("a".to_owned()).await.unwrap(),
        2,
        "a beat again is not a new replica"
    );
    let alone = sqlite().await;
    assert_eq!(alone.store.replica_heartbeat("a".to_owned()).await.unwrap(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alerts_are_acknowledged_only_with_synchronous_commit_on_whatever_the_database_default() {
    let cluster = tokio::task::spawn_blocking(Postgres::start).await.unwrap();
    let url = cluster.database("durable").await;
    let (client, connection) = tokio_postgres::connect(&cluster.url("postgres"), tokio_postgres::NoTls)
        .await
        .unwrap();
    let task = tokio::spawn(connection);
    client
        .batch_execute("ALTER DATABASE durable SET synchronous_commit = off")
        .await
        .unwrap();
    drop(client);
    drop(task.await);
    let store = PostgresStore::connect(&options(url)).await.unwrap();
    let setting = store.setting("synchronous_commit").await.unwrap();
    assert_eq!(setting, "on");
}

/// One fingerprint's events sent together apply in the order they were sent; across fingerprints only the numbers'
/// set is promised (a replica writes different fingerprints in parallel transactions).
async fn events_sent_together_apply_in_the_order_they_were_sent(store: &dyn Store) {
    let end = "2026-11-24T10:30:00.000Z";
    let sends = [
        event(7, Some("f"), None),
        event(7, Some("f"), None),
        event(7, Some("f"), Some(end)),
        event(7, Some("f"), None),
        event(7, None, Some(end)),
        event(7, Some("g"), None),
    ]
    .map(|sent| store.alert_event(sent));
    let outcomes: Vec<(&str, Option<u64>, Option<u64>)> = futures_util::future::join_all(sends)
        .await
        .into_iter()
        .map(|outcome| {
            let outcome = outcome.unwrap();
            let alert = outcome.alert.as_ref();
            (
                outcome.outcome,
                alert.map(|alert| alert.iid),
                alert.map(|alert| alert.events),
            )
        })
        .collect();
    let iid = |index: usize| outcomes[index].1.unwrap_or(0);
    let (first, second, other) = (iid(0), iid(3), iid(5));
    assert_eq!(
        outcomes,
        [
            ("created", Some(first), Some(1)),
            ("grouped", Some(first), Some(2)),
            ("resolved", Some(first), Some(2)),
            ("created", Some(second), Some(1)),
            ("no_open_alert", None, None),
            ("created", Some(other), Some(1)),
        ]
    );
    assert!(
        first < second,
        "one fingerprint's alerts are numbered in the order they came"
    );
    let mut numbers = [first, second, other];
    numbers.sort_unstable();
    assert_eq!(numbers, [1, 2, 3], "numbers without gaps or duplicates");
}
contract!(events_sent_together_apply_in_the_order_they_were_sent);

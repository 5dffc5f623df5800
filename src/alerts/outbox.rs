//! The incident outbox: creates and closes incidents (issues on the backend, through V4, with svcgate's service
//! token) for the alerts whose lifecycle asked for it, retrying with back-off across restarts until accepted.
//!
//! The lifecycle writes an outbox row in the same transaction as the alert change, so no incident call is lost
//! when the gateway stops; this worker polls the due rows.
//!
//! A call may have reached the backend without its outcome being recorded: the process died (SIGKILL) after the
//! backend created the issue, or the answer timed out. The call is then made again (by this process after its
//! back-off, or by another replica once the claim's lease ran out), so creating an incident first looks for an
//! issue already made for the alert (its description links the alert's page, the same path on every replica)
//! and reuses it: one incident per alert, whatever failed in between.

use std::sync::Arc;
use std::time::{Duration, Instant};

use http::{HeaderValue, Method, Request};
use serde_json::{json, Value};

use crate::backend::upstream::Upstream;
use crate::http::body;
use crate::store::{OutboxItem, Store};
use crate::telemetry::Metrics;
use crate::util::time_format::format_time;

/// How often the worker looks for due calls.
const POLL: Duration = Duration::from_millis(500);
/// The most calls one drain makes before the worker looks at its other work (the sweep) again.
const DRAIN_BATCH: usize = 50;
/// The longest wait between two attempts.
const MAX_BACKOFF_SECONDS: u64 = 300;
/// How often finished calls older than `keep_done` are removed (and once at start).
const SWEEP_EVERY: Duration = Duration::from_secs(3600);
/// The most finished calls one statement removes: a long-grown outbox is removed in many short steps, between
/// which alerts are written.
const SWEEP_BATCH: u32 = 1000;

/// The outbox's options: whose token it calls with, and how long claims and finished calls last.
#[derive(Debug, Clone)]
pub struct OutboxSettings {
    /// svcgate's own backend token (`service_token`); without it no incident call can be made.
    pub service_token: Option<String>,
    /// How long a claimed call stays this process's before another replica may take it over (`outbox_lease`).
    pub lease: Duration,
    /// How long finished calls are kept (`outbox_keep_done`).
    pub keep_done: Duration,
}

/// What the worker needs.
pub struct Outbox {
    /// The store holding the outbox.
    pub store: Arc<dyn Store>,
    /// The backend.
    pub upstream: Arc<Upstream>,
    /// The gateway's public base URL, for links to alert pages.
    pub public_url: String,
    /// The token, lease and keeping time.
    pub settings: OutboxSettings,
    /// Where accepted and failed calls are counted.
    pub metrics: Arc<Metrics>,
}

/// The shortest `outbox_lease` (in whole seconds) in which an incident call always fits before it is cut: a search
/// and a create, each cut at `backend_timeout`, within the three quarters of the lease an attempt is given.
pub fn lease_for(backend_timeout: Duration) -> Duration {
    let exact = backend_timeout.saturating_mul(2).saturating_mul(4) / 3;
    Duration::from_secs(exact.as_secs() + u64::from(exact.subsec_nanos() > 0))
}

impl Outbox {
    /// Runs until the task is dropped.
    pub async fn run(self) {
        let backend_timeout = self.upstream.backend_timeout();
        if self.settings.lease < lease_for(backend_timeout) {
            tracing::warn!(
                outbox_lease = %humantime::format_duration(self.settings.lease),
                backend_timeout = %humantime::format_duration(backend_timeout),
                enough = %humantime::format_duration(lease_for(backend_timeout)),
                "outbox: an incident call (a search and a create, each cut at backend_timeout) may outlast three \
                 quarters of outbox_lease, where it is cut and tried again; an outbox_lease of `enough` leaves \
                 it room"
            );
        }
        let mut next_sweep = Instant::now();
        loop {
            if Instant::now() >= next_sweep {
                self.sweep().await;
                next_sweep = Instant::now() + SWEEP_EVERY;
            }
            self.drain().await;
            tokio::time::sleep(POLL).await;
        }
    }

    /// Removes the calls that finished more than `keep_done` ago: the incident stays linked from its alert, and
    /// calls still pending are kept however old. Every replica sweeps; removing twice removes nothing more.
    pub async fn sweep(&self) {
        let keep = time::Duration::try_from(self.settings.keep_done).unwrap_or(time::Duration::MAX);
        let Some(before) = time::OffsetDateTime::now_utc().checked_sub(keep) else {
            return;
        };
        let before = format_time(before);
        let mut removed = 0;
        loop {
            match self.store.outbox_sweep(before.clone(), SWEEP_BATCH).await {
                Ok(step) => {
                    removed += step;
                    if step < u64::from(SWEEP_BATCH) {
                        break;
                    }
                }
                Err(error) => {
                    tracing::warn!(%error, "outbox: could not remove finished calls");
                    break;
                }
            }
        }
        if removed > 0 {
            tracing::info!(removed, "outbox: finished incident calls removed");
        }
    }

    /// Makes the calls that are due now, at most [`DRAIN_BATCH`] of them, each under a claim of its own.
    pub async fn drain(&self) {
        for _ in 0..DRAIN_BATCH {
            let now = time::OffsetDateTime::now_utc();
            let claimed = Instant::now();
            // One call a claim, so that each has the whole of its lease: claimed together, the last of a batch
            // would have only what the calls before it left. Incident calls are few; the claims cost a store
            // round trip each.
            let item = match self
                .store
                .outbox_due(format_time(now), self.settings.lease, 1)
                .await
            {
                Ok(due) => match due.into_iter().next() {
                    Some(item) => item,
                    None => return,
                },
                Err(error) => {
                    tracing::warn!(%error, "outbox: could not read due calls");
                    return;
                }
            };
            self.make(item, claimed).await;
        }
    }

    /// Makes one claimed call and records its outcome under its claim.
    async fn make(&self, item: OutboxItem, claimed: Instant) {
        // The claim is this process's for `lease` from about `claimed`: an attempt (a search and a create, each
        // cut at `backend_timeout`) is cut a quarter of the lease before the claim runs out (room for the
        // outcome's write and for replicas' clocks that differ), so that no other replica has taken the call
        // over while this one still waits on it. A cut attempt is retried like a failed one; a create the
        // backend applied all the same is found by the next search.
        let left = (self.settings.lease * 3 / 4).saturating_sub(claimed.elapsed());
        let result = tokio::time::timeout(left, self.attempt(&item))
            .await
            .unwrap_or_else(|_| {
                Err(format!(
                    "not finished within the claim's lease (outbox_lease, {}); tried again",
                    humantime::format_duration(self.settings.lease)
                ))
            });
        self.metrics.outbox_call(&item.kind, result.is_ok());
        let now = time::OffsetDateTime::now_utc();
        // The outcome is recorded only under this claim: when the outcome's write comes after the lease (a
        // slow store, a paused process), another replica may have taken the call over, and its claim stands.
        let stored = match result {
            Ok(incident_iid) => {
                tracing::info!(kind = %item.kind, alert = item.alert.id, "incident call accepted");
                self.store
                    .outbox_done(
                        item.id,
                        item.claim.clone(),
                        item.alert.id,
                        incident_iid,
                        format_time(now),
                    )
                    .await
            }
            Err(error) => {
                let wait = 2u64
                    .saturating_pow(u32::try_from(item.attempts.min(16)).unwrap_or(16))
                    .min(MAX_BACKOFF_SECONDS);
                let next = now + time::Duration::seconds(i64::try_from(wait).unwrap_or(300));
                tracing::warn!(kind = %item.kind, alert = item.alert.id, %error, retry_in_seconds = wait, "incident call failed");
                self.store
                    .outbox_retry(item.id, item.claim.clone(), format_time(next), error)
                    .await
            }
        };
        match stored {
            Ok(true) => {}
            Ok(false) => tracing::warn!(
                kind = %item.kind,
                alert = item.alert.id,
                "outbox: the claim's lease (outbox_lease) ran out before the outcome was recorded; \
                 the replica that took the call over records its own"
            ),
            Err(error) => tracing::warn!(%error, "outbox: could not record the outcome"),
        }
    }

    async fn call(&self, method: Method, path: &str, body: Option<Value>) -> Result<Value, String> {
        let token = self
            .settings
            .service_token
            .as_deref()
            .ok_or("no service_token is configured, so svcgate cannot call the backend")?;
        let mut request = match body {
            Some(body) => Request::new(body::full(body.to_string())),
            None => Request::new(body::empty()),
        };
        *request.method_mut() = method;
        *request.uri_mut() = self.upstream.uri(path).map_err(|error| error.to_string())?;
        let headers = request.headers_mut();
        headers.insert(
            http::header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        headers.insert(
            "private-token",
            HeaderValue::from_str(token).map_err(|error| error.to_string())?,
        );
        // The whole call, head and body, within `backend_timeout`: what `lease_for` counts on.
        let timeout = self.upstream.backend_timeout();
        let whole = async {
            let response = self
                .upstream
                .send(request)
                .await
                .map_err(|error| error.to_string())?;
            let status = response.status();
            let bytes = self
                .upstream
                .read_body(response.into_body(), 1 << 20)
                .await
                .map_err(|error| error.to_string())?
                .0;
            Ok::<_, String>((status, bytes))
        };
        let (status, bytes) = tokio::time::timeout(timeout, whole).await.map_err(|_| {
            format!(
                "no whole answer within backend_timeout ({})",
                humantime::format_duration(timeout)
            )
        })??;
        if !status.is_success() {
            return Err(format!(
                "the backend answered {status}: {}",
                String::from_utf8_lossy(&bytes)
            ));
        }
        serde_json::from_slice(&bytes).map_err(|error| error.to_string())
    }

    async fn attempt(&self, item: &OutboxItem) -> Result<Option<u64>, String> {
        let alert = &item.alert;
        let project = alert.project_id;
        match item.kind.as_str() {
            "create_incident" => {
                let page = format!("/-/svcgate/projects/{project}/alerts/{}", alert.iid);
                if let Some(iid) = self.incident_made_for(project, &page).await? {
                    tracing::info!(
                        alert = alert.id,
                        incident = iid,
                        "incident already made; reusing it"
                    );
                    return Ok(Some(iid));
                }
                let link = format!("{}{page}", self.public_url);
                let mut lines = vec![format!("Alert [#{}]({link}): **{}**", alert.iid, alert.title)];
                let fields = [
                    ("Severity", Some(alert.severity.clone())),
                    ("Start time", Some(alert.started_at.clone())),
                    ("Service", alert.service.clone()),
                    ("Monitoring tool", alert.monitoring_tool.clone()),
                    ("Environment", alert.environment.clone()),
                    ("Description", alert.description.clone()),
                ];
                for (name, value) in fields {
                    if let Some(value) = value {
                        lines.push(format!("- **{name}:** {value}"));
                    }
                }
                let issue = self
                    .call(
                        Method::POST,
                        &format!("/api/v4/projects/{project}/issues"),
                        Some(json!({"title": format!("Incident: {}", alert.title), "description": lines.join("\n"), "labels": "incident"})),
                    )
                    .await?;
                issue
                    .get("iid")
                    .and_then(Value::as_u64)
                    .map(Some)
                    .ok_or_else(|| "the created issue has no iid".to_owned())
            }
            "close_incident" => {
                let Some(iid) = alert.incident_iid else {
                    return Ok(None);
                };
                self.call(
                    Method::PUT,
                    &format!("/api/v4/projects/{project}/issues/{iid}"),
                    Some(json!({"state_event": "close"})),
                )
                .await?;
                Ok(None)
            }
            other => Err(format!("unknown outbox call {other}")),
        }
    }

    /// The iid of an incident issue of `project` whose description links the alert page `page` (`…/alerts/7`
    /// followed by the link's closing parenthesis, so alert 7 never matches alert 70), if one was made before.
    async fn incident_made_for(&self, project: u64, page: &str) -> Result<Option<u64>, String> {
        let pairs = [
            ("labels", "incident"),
            ("in", "description"),
            ("search", page),
            ("per_page", "100"),
        ]
        .map(|(name, value)| (name.to_owned(), value.to_owned()));
        let path = crate::util::url_parts::with_query(&format!("/api/v4/projects/{project}/issues"), &pairs);
        let found = self.call(Method::GET, &path, None).await?;
        let link_end = format!("{page})");
        Ok(found.as_array().into_iter().flatten().find_map(|issue| {
            let description = issue.get("description").and_then(Value::as_str)?;
            if description.contains(&link_end) {
                issue.get("iid").and_then(Value::as_u64)
            } else {
                None
            }
        }))
    }
}

//! The incident outbox: creates and closes incidents (issues on the backend, through V4, with svcgate's service
//! token) for the alerts whose lifecycle asked for it, retrying with back-off across restarts until accepted.
//!
//! The lifecycle writes an outbox row in the same transaction as the alert change, so no incident call is lost
//! when the gateway stops; this worker polls the due rows.

use std::sync::Arc;
use std::time::Duration;

use http::{HeaderValue, Method, Request};
use serde_json::{json, Value};

use crate::body;
use crate::store::{OutboxItem, Store};
use crate::time_format::format_time;
use crate::upstream::Upstream;

/// How often the worker looks for due calls.
const POLL: Duration = Duration::from_millis(500);
/// The longest wait between two attempts.
const MAX_BACKOFF_SECONDS: u64 = 300;

/// What the worker needs.
pub struct Outbox {
    /// The store holding the outbox.
    pub store: Arc<dyn Store>,
    /// The backend.
    pub upstream: Arc<Upstream>,
    /// svcgate's own backend token.
    pub service_token: Option<String>,
    /// The gateway's public base URL, for links to alert pages.
    pub public_url: String,
}

impl Outbox {
    /// Runs until the task is dropped.
    pub async fn run(self) {
        loop {
            self.drain().await;
            tokio::time::sleep(POLL).await;
        }
    }

    /// Makes every call that is due now.
    pub async fn drain(&self) {
        let now = time::OffsetDateTime::now_utc();
        let due = match self.store.outbox_due(format_time(now), 50).await {
            Ok(due) => due,
            Err(error) => {
                tracing::warn!(%error, "outbox: could not read due calls");
                return;
            }
        };
        for item in due {
            let result = self.attempt(&item).await;
            let now = time::OffsetDateTime::now_utc();
            let stored = match result {
                Ok(incident_iid) => {
                    tracing::info!(kind = %item.kind, alert = item.alert.id, "incident call accepted");
                    self.store
                        .outbox_done(item.id, item.alert.id, incident_iid, format_time(now))
                        .await
                }
                Err(error) => {
                    let wait = 2u64
                        .saturating_pow(u32::try_from(item.attempts.min(16)).unwrap_or(16))
                        .min(MAX_BACKOFF_SECONDS);
                    let next = now + time::Duration::seconds(i64::try_from(wait).unwrap_or(300));
                    tracing::warn!(kind = %item.kind, alert = item.alert.id, %error, retry_in_seconds = wait, "incident call failed");
                    self.store.outbox_retry(item.id, format_time(next), error).await
                }
            };
            if let Err(error) = stored {
                tracing::warn!(%error, "outbox: could not record the outcome");
            }
        }
    }

    async fn call(&self, method: Method, path: &str, body: Value) -> Result<Value, String> {
        let token = self
            .service_token
            .as_deref()
            .ok_or("no service_token is configured, so svcgate cannot call the backend")?;
        let mut request = Request::new(body::full(body.to_string()));
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
                let link = format!(
                    "{}/-/svcgate/projects/{project}/alerts/{}",
                    self.public_url, alert.iid
                );
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
                        json!({"title": format!("Incident: {}", alert.title), "description": lines.join("\n"), "labels": "incident"}),
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
                    json!({"state_event": "close"}),
                )
                .await?;
                Ok(None)
            }
            other => Err(format!("unknown outbox call {other}")),
        }
    }
}

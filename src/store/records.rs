//! The records both stores share: what the [`Store`](super::Store) trait takes and answers (integrations, alerts
//! and their events, incident settings and calls, sessions, global ids, V3 usage). Plain data: this file uses
//! nothing of the store's, and every other file of the store may use it.

use std::collections::BTreeMap;

/// An alert integration as stored (its token encrypted).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IntegrationRecord {
    /// Id.
    pub id: u64,
    /// The backend project.
    pub project_id: u64,
    /// The project's full path at creation (the receiving address).
    pub project_path: String,
    /// `generic`, `http`, `prometheus` or `opsgenie`.
    pub kind: String,
    /// Name.
    pub name: String,
    /// Whether it receives alerts.
    pub active: bool,
    /// 16 hex digits (http only).
    pub endpoint_identifier: Option<String>,
    /// AES-GCM nonce of the token.
    pub token_nonce: Vec<u8>,
    /// The encrypted token.
    pub token_ciphertext: Vec<u8>,
    /// Opsgenie's alert list.
    pub api_url: Option<String>,
    /// A sample payload (http).
    pub payload_example: Option<String>,
    /// The custom mapping as JSON text (http).
    pub payload_attribute_mapping: Option<String>,
    /// Creation time.
    pub created_at: String,
    /// Last change.
    pub updated_at: String,
    /// Whether a project may have only one live integration of this kind (the kind's line says; the store refuses a
    /// second one).
    pub one_per_project: bool,
    /// The name of the format its payloads are read in (`generic` unless chosen; chosen for Generic and HTTP
    /// Endpoint integrations only).
    pub payload_format: String,
    /// The address a sender asked to be opened to confirm its subscription (SNS's `SubscribeURL`), kept for a
    /// maintainer until the sender's first notification.
    pub pending_confirmation: Option<String>,
}

/// What names an integration to the people reading its alerts: kept after it is deleted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IntegrationName {
    /// Its name.
    pub name: String,
    /// `generic`, `http`, `prometheus` or `opsgenie`.
    pub kind: String,
    /// Whether it was deleted.
    pub deleted: bool,
}

/// One incoming alert, normalised, as the lifecycle needs it.
#[derive(Debug, Clone)]
pub struct AlertEvent {
    /// The project.
    pub project_id: u64,
    /// The integration it came through.
    pub integration_id: u64,
    /// The grouping key, if any.
    pub fingerprint: Option<String>,
    /// When set, this event resolves (`ended_at`).
    pub ended_at: Option<String>,
    /// Title.
    pub title: String,
    /// Description.
    pub description: Option<String>,
    /// Severity name.
    pub severity: String,
    /// Service.
    pub service: Option<String>,
    /// Monitoring tool.
    pub monitoring_tool: Option<String>,
    /// Hosts as a JSON array.
    pub hosts_json: String,
    /// Environment name.
    pub environment: Option<String>,
    /// Start time.
    pub started_at: String,
    /// The raw payload as JSON.
    pub payload_json: String,
    /// Receipt time.
    pub now: String,
}

/// A stored alert.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlertRecord {
    /// Id.
    pub id: u64,
    /// Project.
    pub project_id: u64,
    /// Per-project number.
    pub iid: u64,
    /// The integration.
    pub integration_id: Option<u64>,
    /// Grouping key.
    pub fingerprint: Option<String>,
    /// `triggered`, `acknowledged`, `resolved` or `ignored`.
    pub status: String,
    /// Title.
    pub title: String,
    /// Description.
    pub description: Option<String>,
    /// Severity.
    pub severity: String,
    /// Service.
    pub service: Option<String>,
    /// Monitoring tool.
    pub monitoring_tool: Option<String>,
    /// Hosts as a JSON array.
    pub hosts_json: String,
    /// Environment.
    pub environment: Option<String>,
    /// Start.
    pub started_at: String,
    /// End, when resolved.
    pub ended_at: Option<String>,
    /// Occurrences.
    pub events: u64,
    /// Last occurrence.
    pub last_event_at: String,
    /// The first payload as JSON.
    pub payload_json: String,
    /// The backend issue standing for the incident.
    pub incident_iid: Option<u64>,
    /// Creation time.
    pub created_at: String,
    /// Last change.
    pub updated_at: String,
}

/// What one event did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventOutcome {
    /// `created`, `grouped`, `resolved` or `no_open_alert`.
    pub outcome: &'static str,
    /// The alert it touched.
    pub alert: Option<TouchedAlert>,
}

/// The columns of an alert that an event's answer and its follow-ups need: reading back the whole row (payload
/// and description included) for every incoming alert cost the store's writer thread for nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TouchedAlert {
    /// Id.
    pub id: u64,
    /// Project.
    pub project_id: u64,
    /// Per-project number.
    pub iid: u64,
    /// `triggered`, `acknowledged`, `resolved` or `ignored`.
    pub status: String,
    /// Title.
    pub title: String,
    /// Events grouped into it.
    pub events: u64,
    /// The incident opened for it.
    pub incident_iid: Option<u64>,
}

/// Filters, order and page of an alert list.
#[derive(Debug, Clone)]
pub struct AlertQuery {
    /// The project.
    pub project_id: u64,
    /// Statuses to list (empty: all).
    pub statuses: Vec<String>,
    /// Severity filter.
    pub severity: Option<String>,
    /// Environment filter.
    pub environment: Option<String>,
    /// Case-insensitive substring of title, description, service, monitoring tool or hosts.
    pub search: Option<String>,
    /// Column to sort by (one of [`SORTABLE`]).
    pub sort_by: &'static str,
    /// Descending order.
    pub descending: bool,
    /// 1-based page.
    pub page: u64,
    /// Items a page.
    pub per_page: u64,
}

/// Columns an alert list may be sorted by.
pub const SORTABLE: [&str; 6] = [
    "started_at",
    "severity_rank",
    "title",
    "events",
    "status",
    "last_event_at",
];

/// One page of alerts, the total matching, and counts per status (ignoring the status filter).
#[derive(Debug, Clone)]
pub struct AlertPage {
    /// The page.
    pub alerts: Vec<AlertRecord>,
    /// How many match.
    pub total: u64,
    /// Count per status.
    pub counts: BTreeMap<String, u64>,
}

/// Incident settings of a project.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AlertSettings {
    /// Create an incident for each new alert.
    pub create_incident: bool,
    /// Close the incident when its alert resolves.
    pub auto_close_incident: bool,
}

impl Default for AlertSettings {
    fn default() -> Self {
        AlertSettings {
            create_incident: false,
            auto_close_incident: true,
        }
    }
}

/// A pending incident call.
#[derive(Debug, Clone)]
pub struct OutboxItem {
    /// Id.
    pub id: u64,
    /// `create_incident` or `close_incident`.
    pub kind: String,
    /// Attempts so far.
    pub attempts: u64,
    /// The alert it is about.
    pub alert: AlertRecord,
    /// The claim: the end of its lease, as the claim wrote it on the call. Its outcome is recorded only while the
    /// call still carries it, so a replica whose lease ran out never overwrites the one that took the call over.
    pub claim: String,
}

/// The state of an alert's incident calls, for its page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboxState {
    /// Kind.
    pub kind: String,
    /// Attempts so far.
    pub attempts: u64,
    /// The last error.
    pub last_error: Option<String>,
    /// When it succeeded.
    pub done_at: Option<String>,
    /// Next attempt.
    pub next_attempt_at: String,
}

/// An incident call that has failed and is still being retried, with the alert it is about (for the pages).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboxFailure {
    /// `create_incident` or `close_incident`.
    pub kind: String,
    /// Attempts so far.
    pub attempts: u64,
    /// What the last attempt answered.
    pub last_error: String,
    /// When it is tried again.
    pub next_attempt_at: String,
    /// The alert's per-project number.
    pub alert_iid: u64,
    /// The alert's title.
    pub alert_title: String,
}

/// A signed-in page session as stored: found by the hash of its cookie, so the cookie itself is never stored, with
/// the person's backend token sealed by the secret key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageSessionRecord {
    /// SHA-256 of the cookie's value, in hex.
    pub id_hash: String,
    /// The person's backend token, sealed (`SecretBox::seal_text`).
    pub sealed_token: String,
    /// Their username.
    pub username: String,
    /// The token each of their forms carries.
    pub csrf: String,
    /// When the session ends (the store's time text).
    pub expires_at: String,
    /// The backend's refresh token, sealed, for a session signed in through OAuth.
    pub sealed_refresh_token: Option<String>,
    /// When the backend's access token expires (the store's time text), for a session signed in through OAuth.
    pub token_expires_at: Option<String>,
}

/// A pending OAuth sign-in, between the redirect to the backend and its callback.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthStateRecord {
    /// SHA-256 of the `state` value, in hex.
    pub state_hash: String,
    /// The PKCE code verifier, sealed.
    pub sealed_verifier: String,
    /// The local path to go to once signed in.
    pub return_to: String,
    /// When the sign-in attempt lapses (the store's time text).
    pub expires_at: String,
}

/// What an issue or merge request global id stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct IdRecord {
    /// `issue` or `merge_request`.
    pub kind: IdKind,
    /// The global id.
    pub id: u64,
    /// The project it belongs to.
    pub project_id: u64,
    /// Its iid within the project.
    pub iid: u64,
}

/// The two kinds of object V3 names by global id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IdKind {
    /// An issue.
    Issue,
    /// A merge request.
    MergeRequest,
}

impl IdKind {
    /// The name stored in the database and used in rules.
    pub fn as_str(self) -> &'static str {
        match self {
            IdKind::Issue => "issue",
            IdKind::MergeRequest => "merge_request",
        }
    }

    /// The kind a name stands for.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "issue" => Some(IdKind::Issue),
            "merge_request" => Some(IdKind::MergeRequest),
            _ => None,
        }
    }
}

/// The client row that holds the folded least recent clients of a route.
pub const OTHERS: &str = "others";

/// Counts to add for one route, client and user agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageDelta {
    /// The route template.
    pub route: String,
    /// The release of the rule (empty for the prefix change).
    pub since: String,
    /// The caller's username (or `anonymous`, `unknown`).
    pub client: String,
    /// The `User-Agent`.
    pub user_agent: String,
    /// Calls.
    pub calls: u64,
    /// Error answers (status ≥ 400).
    pub errors: u64,
    /// First call in this batch.
    pub first_seen: String,
    /// Last call in this batch.
    pub last_seen: String,
}

/// One stored row.
pub type UsageRow = UsageDelta;

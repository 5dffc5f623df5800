//! The page templates (askama, compiled in, HTML-escaped) and the small view types they show.

use askama::Template;

use super::format::{TimeView, TreeNode};

/// The signed-in person, in the page header.
pub struct UserView {
    /// Username.
    pub username: String,
    /// The token every form carries.
    pub csrf: String,
    /// Whether they administer the svc server (the header links the V3 usage page).
    pub admin: bool,
}

/// The project a page is about, in the navigation.
pub struct ProjectView {
    /// Full path.
    pub path: String,
    /// `/-/svcgate/projects/:id`.
    pub base: String,
    /// The navigation's section the page belongs to.
    pub section: Section,
    /// Whether the page is the section's own page (`aria-current="page"`), not one inside it (`"true"`).
    pub section_page: bool,
}

/// A section of the project navigation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    /// The alert list and the alerts' pages.
    Alerts,
    /// The environments dashboard.
    Environments,
    /// Settings › Operations and the integrations' pages.
    Settings,
}

impl ProjectView {
    /// The `aria-current` attribute of the navigation link to `section` (`""` when it is not the current one).
    pub fn current(&self, section: &str) -> &'static str {
        let this = match section {
            "alerts" => Section::Alerts,
            "environments" => Section::Environments,
            _ => Section::Settings,
        };
        match (this == self.section, self.section_page) {
            (false, _) => "",
            (true, true) => " aria-current=\"page\"",
            (true, false) => " aria-current=\"true\"",
        }
    }
}

/// The sign-in page.
#[derive(Template)]
#[template(path = "sign_in.html")]
pub struct SignIn {
    /// Layout.
    pub user: Option<UserView>,
    /// Layout.
    pub project: Option<ProjectView>,
    /// Layout.
    pub notice: Option<String>,
    /// Layout.
    pub error: Option<String>,
    /// The double-submit CSRF token.
    pub csrf: String,
    /// Whether signing in through the svc server (OAuth) is offered.
    pub oauth: bool,
    /// The page to go to once signed in ("" for the project list).
    pub return_to: String,
}

/// A project in the list.
pub struct ProjectLink {
    /// Id.
    pub id: u64,
    /// Full path.
    pub path: String,
}

/// The projects page.
#[derive(Template)]
#[template(path = "projects.html")]
pub struct Projects {
    /// Layout.
    pub user: Option<UserView>,
    /// Layout.
    pub project: Option<ProjectView>,
    /// Layout.
    pub notice: Option<String>,
    /// Layout.
    pub error: Option<String>,
    /// The caller's projects.
    pub projects: Vec<ProjectLink>,
}

/// A status tab of the alert list.
pub struct Tab {
    /// Filter value.
    pub status: &'static str,
    /// Label.
    pub label: &'static str,
    /// How many alerts.
    pub count: u64,
    /// Link.
    pub href: String,
    /// Whether it is the tab in view.
    pub current: bool,
}

/// One alert in a list.
pub struct AlertRow {
    /// Per-project number.
    pub iid: u64,
    /// Severity name (for the CSS class).
    pub severity: String,
    /// Severity as words.
    pub severity_label: String,
    /// A shape that tells severities apart without colour.
    pub icon: &'static str,
    /// Start time.
    pub started: TimeView,
    /// Title.
    pub title: String,
    /// Link to the alert page.
    pub href: String,
    /// Occurrences.
    pub events: u64,
    /// Occurrences in words (`1 event`).
    pub events_text: String,
    /// Status.
    pub status: String,
    /// Status as a word with a capital, for its badge.
    pub status_label: String,
    /// Environment.
    pub environment: String,
    /// The linked incident: its address on the backend and its number.
    pub incident: Option<(String, u64)>,
}

/// What an empty alert list says, so that it tells the truth about why it is empty.
pub enum EmptyState {
    /// The project has no alert and no active integration: how to send a first one.
    FirstAlert {
        /// Whether the person may create integrations (Maintainer).
        can_configure: bool,
        /// Whether integrations exist, none of them active.
        inactive_only: bool,
    },
    /// Integrations are active but nothing was received yet.
    Waiting {
        /// The active integrations' names.
        receiving: Vec<String>,
    },
    /// An incident-alerting tool (Opsgenie) is active: alerts live there.
    Opsgenie {
        /// Its address.
        link: String,
    },
    /// The project has alerts, none in this tab.
    Tab {
        /// The sentence for the tab.
        text: String,
    },
    /// A search or severity filter matches nothing.
    NoMatch {
        /// What was filtered on, in words.
        text: String,
        /// The same tab without filters.
        clear_href: String,
    },
}

impl EmptyState {
    /// A short name for tests and styling (`data-empty`).
    pub fn kind(&self) -> &'static str {
        match self {
            EmptyState::FirstAlert { .. } => "first-alert",
            EmptyState::Waiting { .. } => "waiting",
            EmptyState::Opsgenie { .. } => "opsgenie",
            EmptyState::Tab { .. } => "tab",
            EmptyState::NoMatch { .. } => "no-match",
        }
    }
}

/// The Alert Management list.
#[derive(Template)]
#[template(path = "alerts.html")]
pub struct Alerts {
    /// Layout.
    pub user: Option<UserView>,
    /// Layout.
    pub project: Option<ProjectView>,
    /// Layout.
    pub notice: Option<String>,
    /// Layout.
    pub error: Option<String>,
    /// Project path for the title.
    pub project_path: String,
    /// The link to Opsgenie, when an Opsgenie integration is active.
    pub opsgenie: Option<String>,
    /// Status tabs.
    pub tabs: Vec<Tab>,
    /// Current status filter.
    pub status: String,
    /// Current search.
    pub search: String,
    /// Current sort.
    pub sort: String,
    /// Sort choices.
    pub sorts: Vec<(String, String)>,
    /// Current severity filter (empty: every severity).
    pub severity: String,
    /// Severity choices `(value, label)`, the first one "every severity".
    pub severities: Vec<(String, String)>,
    /// Rows.
    pub rows: Vec<AlertRow>,
    /// What the list says when it has no row.
    pub empty: Option<EmptyState>,
    /// Link to the settings page (empty state).
    pub settings_href: String,
    /// Page number.
    pub page: u64,
    /// Pages.
    pub pages: u64,
    /// Previous page link.
    pub previous: Option<String>,
    /// Next page link.
    pub next: Option<String>,
}

/// One alert's page.
#[derive(Template)]
#[template(path = "alert.html")]
pub struct AlertPage {
    /// Layout.
    pub user: Option<UserView>,
    /// Layout.
    pub project: Option<ProjectView>,
    /// Layout.
    pub notice: Option<String>,
    /// Layout.
    pub error: Option<String>,
    /// Back link.
    pub list_href: String,
    /// Per-project number.
    pub iid: u64,
    /// Title.
    pub title: String,
    /// Status.
    pub status: String,
    /// Status as a word with a capital, for its badge.
    pub status_label: String,
    /// Severity name.
    pub severity: String,
    /// Severity words.
    pub severity_label: String,
    /// Severity shape.
    pub icon: &'static str,
    /// Occurrences in words (`1 event`).
    pub events: String,
    /// Start.
    pub started: TimeView,
    /// End.
    pub ended: Option<TimeView>,
    /// Last occurrence.
    pub last_event: TimeView,
    /// Description.
    pub description: String,
    /// Service.
    pub service: String,
    /// Monitoring tool.
    pub monitoring_tool: String,
    /// Hosts.
    pub hosts: String,
    /// Environment.
    pub environment: String,
    /// Fingerprint.
    pub fingerprint: String,
    /// The payload's other keys, as a tree.
    pub custom: Vec<TreeNode>,
    /// The raw payload, formatted.
    pub payload: String,
    /// Status form target.
    pub status_action: String,
    /// CSRF token.
    pub csrf: String,
    /// The statuses offered.
    pub statuses: Vec<String>,
    /// Incident link.
    pub incident_link: Option<String>,
    /// Incident number.
    pub incident_iid: String,
    /// The incident calls, described.
    pub calls: Vec<String>,
    /// The integration that received it: its name, and "(deleted)" once it is.
    pub integration: String,
}

/// An integration in the settings list.
pub struct IntegrationRow {
    /// Id.
    pub id: u64,
    /// Name.
    pub name: String,
    /// Type, for people.
    pub type_name: String,
    /// The format its payloads are read in (empty when it receives none).
    pub payload_format: String,
    /// Whether it is active.
    pub active: bool,
    /// Link to its page.
    pub href: String,
}

/// What the create form holds (kept when it is shown again with an error).
#[derive(Default)]
pub struct IntegrationForm {
    /// Type.
    pub kind: String,
    /// Name.
    pub name: String,
    /// Active.
    pub active: bool,
    /// Sample payload.
    pub payload_example: String,
    /// Opsgenie API URL.
    pub api_url: String,
    /// Payload format.
    pub payload_format: String,
}

/// A payload format as a form's select offers it.
pub struct FormatOption {
    /// Its name (the option's value).
    pub name: String,
    /// What it is, in one line (the option's text after the name).
    pub description: String,
    /// Whether it is the one chosen.
    pub selected: bool,
}

/// Which integration types show each field of the add form: type names separated by spaces (the form's
/// `data-types`, which its script reads), and whether the type the form is drawn with shows it.
#[derive(Debug, Clone, Default)]
pub struct FormFields {
    /// Every type (the name).
    pub all: String,
    /// The types with a sample payload.
    pub payload: String,
    /// The types with an API URL.
    pub api_url: String,
    /// The types that receive alerts (the test button).
    pub receiving: String,
    /// The types with a payload format to choose.
    pub payload_format: String,
    /// The drawn type has a sample payload.
    pub payload_shown: bool,
    /// The drawn type has an API URL.
    pub api_url_shown: bool,
    /// The drawn type receives alerts.
    pub receiving_shown: bool,
    /// The drawn type has a payload format to choose.
    pub payload_format_shown: bool,
}

/// Settings › Operations › Alerts.
#[derive(Template)]
#[template(path = "settings.html")]
pub struct Settings {
    /// Layout.
    pub user: Option<UserView>,
    /// Layout.
    pub project: Option<ProjectView>,
    /// Layout.
    pub notice: Option<String>,
    /// Layout.
    pub error: Option<String>,
    /// `…/settings/operations`.
    pub base: String,
    /// CSRF token.
    pub csrf: String,
    /// Integrations.
    pub integrations: Vec<IntegrationRow>,
    /// Integrations that receive alerts (for the test box).
    pub receiving: Vec<IntegrationRow>,
    /// Integration types that may be added to the project, `(value, label)`; empty when none may.
    pub types: Vec<(String, String)>,
    /// The create form's values.
    pub form: IntegrationForm,
    /// Which types show which fields of the create form.
    pub fields: FormFields,
    /// The payload formats the create form offers.
    pub formats: Vec<FormatOption>,
    /// The test box's payload.
    pub test_payload: String,
    /// The id of the field the error is about (`aria-invalid`, described by the error), or `""`.
    pub invalid: &'static str,
    /// Incident setting.
    pub create_incident: bool,
    /// Incident setting.
    pub auto_close_incident: bool,
    /// Whether `service_token` is set (without it no incident can be created).
    pub service_token_set: bool,
}

/// One integration's page.
#[derive(Template)]
#[template(path = "integration.html")]
pub struct IntegrationPage {
    /// Layout.
    pub user: Option<UserView>,
    /// Layout.
    pub project: Option<ProjectView>,
    /// Layout.
    pub notice: Option<String>,
    /// Layout.
    pub error: Option<String>,
    /// Back link.
    pub settings_href: String,
    /// Name.
    pub name: String,
    /// Type, for people.
    pub type_name: String,
    /// Address, when active.
    pub url: Option<String>,
    /// Key, when active.
    pub key: String,
    /// Whether it receives alerts.
    pub receives: bool,
    /// Active.
    pub active: bool,
    /// HTTP Endpoint.
    pub is_http: bool,
    /// Opsgenie.
    pub is_opsgenie: bool,
    /// Sample payload.
    pub payload_example: String,
    /// Opsgenie API URL.
    pub api_url: String,
    /// The format its payloads are read in and its description, when it reads any.
    pub payload_format: Option<(String, String)>,
    /// The payload formats the edit form offers (empty for kinds that have no choice of one).
    pub formats: Vec<FormatOption>,
    /// The sender's setup in a few lines, from the format's file, the address filled in (when active).
    pub setup: Option<String>,
    /// The format's senders put the key in the address's query string, which proxies log.
    pub key_in_address: bool,
    /// A subscription confirmation address its sender asked to be opened (SNS), for a maintainer.
    pub pending_confirmation: Option<String>,
    /// What "Save and test" read from the sample, before any alert was created.
    pub preview: Option<PreviewView>,
    /// Edit form target.
    pub edit_action: String,
    /// Delete confirmation link.
    pub delete_href: String,
    /// Reset confirmation link.
    pub reset_href: String,
    /// CSRF token.
    pub csrf: String,
    /// Incident calls for this integration's alerts that failed and are still retried.
    pub failures: Vec<FailureRow>,
    /// The id of the field the error is about (`aria-invalid`, described by the error), or `""`.
    pub invalid: &'static str,
    /// Whether `service_token` is set.
    pub service_token_set: bool,
}

/// A failing incident call, as the integration's page lists it.
pub struct FailureRow {
    /// What the call does, in words.
    pub what: String,
    /// The alert's number.
    pub alert_iid: u64,
    /// The alert's title.
    pub alert_title: String,
    /// The alert's page.
    pub alert_href: String,
    /// `3 attempts`.
    pub attempts: String,
    /// What the backend (or svcgate) answered last.
    pub last_error: String,
    /// When it is tried again.
    pub next_attempt: TimeView,
}

/// A confirmation before a change that cannot be undone (reset a key, delete an integration); works without
/// JavaScript.
#[derive(Template)]
#[template(path = "confirm.html")]
pub struct Confirm {
    /// Layout.
    pub user: Option<UserView>,
    /// Layout.
    pub project: Option<ProjectView>,
    /// Layout.
    pub notice: Option<String>,
    /// Layout.
    pub error: Option<String>,
    /// The question.
    pub heading: String,
    /// What happens.
    pub text: String,
    /// The confirm button's id.
    pub button_id: &'static str,
    /// The confirm button's words.
    pub button: &'static str,
    /// Form target.
    pub action: String,
    /// Cancel link.
    pub back: String,
    /// CSRF token.
    pub csrf: String,
}

/// Open alerts of one environment.
pub struct EnvironmentGroup {
    /// Environment name.
    pub name: String,
    /// Its open alerts, most severe first.
    pub rows: Vec<AlertRow>,
}

/// The environments dashboard.
#[derive(Template)]
#[template(path = "environments.html")]
pub struct Environments {
    /// Layout.
    pub user: Option<UserView>,
    /// Layout.
    pub project: Option<ProjectView>,
    /// Layout.
    pub notice: Option<String>,
    /// Layout.
    pub error: Option<String>,
    /// Groups.
    pub groups: Vec<EnvironmentGroup>,
    /// The alert field that names an environment (`svc_environment_name`).
    pub environment_field: &'static str,
}

/// A page with a heading and a sentence (forbidden, not found, errors).
#[derive(Template)]
#[template(path = "message.html")]
pub struct Message {
    /// Layout.
    pub user: Option<UserView>,
    /// Layout.
    pub project: Option<ProjectView>,
    /// Layout.
    pub notice: Option<String>,
    /// Layout.
    pub error: Option<String>,
    /// The section's id (`forbidden`, `not-found`, `failure`).
    pub section_id: &'static str,
    /// Heading.
    pub heading: String,
    /// Text.
    pub text: String,
}

/// The icon and words of a severity: shapes that differ, so colour is never the only signal.
pub fn severity_view(severity: &str) -> (&'static str, String) {
    let icon = match severity {
        "critical" => "⬣",
        "high" => "▲",
        "medium" => "◆",
        "low" => "▼",
        "info" => "●",
        _ => "○",
    };
    let mut label = severity.to_owned();
    if let Some(first) = label.get_mut(0..1) {
        first.make_ascii_uppercase();
    }
    (icon, label)
}

/// The V3 usage page (admins).
#[derive(Template)]
#[template(path = "v3_usage.html")]
pub struct V3Usage {
    /// Layout.
    pub user: Option<UserView>,
    /// Layout.
    pub project: Option<ProjectView>,
    /// Layout.
    pub notice: Option<String>,
    /// Layout.
    pub error: Option<String>,
    /// How many clients and routes are still active.
    pub summary: crate::rewrite::retirement::Summary,
    /// Routes by the chosen order.
    pub routes: Vec<crate::rewrite::usage::RouteUsage>,
}

impl V3Usage {
    /// `1 client`, `2 clients`.
    pub fn clients(&self, count: &usize) -> String {
        super::format::plural(*count as u64, "client", "clients")
    }

    /// `1 route`, `2 routes`.
    pub fn routes(&self, count: &usize) -> String {
        super::format::plural(*count as u64, "route", "routes")
    }

    /// The retirement period in words: `30 days`, `12 hours`, `90 seconds`.
    pub fn period(&self) -> String {
        let seconds = self.summary.period_seconds;
        if seconds % 86_400 == 0 {
            super::format::plural(seconds / 86_400, "day", "days")
        } else if seconds % 3_600 == 0 {
            super::format::plural(seconds / 3_600, "hour", "hours")
        } else {
            super::format::plural(seconds, "second", "seconds")
        }
    }

    /// `1 call`, `2 calls`.
    pub fn calls(&self, count: &u64) -> String {
        super::format::plural(*count, "call", "calls")
    }

    /// `1 error`, `2 errors`.
    pub fn errors(&self, count: &u64) -> String {
        super::format::plural(*count, "error", "errors")
    }

    /// A time as the pages show it.
    pub fn time(&self, iso: &str) -> TimeView {
        super::format::time_view(iso)
    }
}

/// What a sample payload maps to, shown after "Save and test" (nothing is stored).
pub struct PreviewView {
    /// What the reading came to, in words.
    pub note: String,
    /// One row per alert the sample holds.
    pub rows: Vec<PreviewRow>,
}

/// One alert of a previewed sample, as the intake would store it.
pub struct PreviewRow {
    /// `fires` or `resolves`.
    pub action: &'static str,
    /// Title.
    pub title: String,
    /// Severity.
    pub severity: &'static str,
    /// Start time.
    pub started: String,
    /// End time, when it resolves.
    pub ended: String,
    /// Hosts, comma-separated.
    pub hosts: String,
    /// Service.
    pub service: String,
    /// Environment.
    pub environment: String,
    /// Monitoring tool.
    pub monitoring_tool: String,
    /// The start of the hashed fingerprint repeats group by, or `none`.
    pub fingerprint: String,
    /// What was defaulted or cut.
    pub warnings: String,
}

/// The V3 clients page (admins): every client of V3 with its migration summary.
#[derive(Template)]
#[template(path = "v3_clients.html")]
pub struct V3Clients {
    /// Layout.
    pub user: Option<UserView>,
    /// Layout.
    pub project: Option<ProjectView>,
    /// Layout.
    pub notice: Option<String>,
    /// Layout.
    pub error: Option<String>,
    /// The clients, most called first.
    pub clients: Vec<crate::rewrite::migration::ClientSummary>,
    /// The calls folded into others (no client's), per route.
    pub folded: Vec<(String, u64)>,
}

impl V3Clients {
    /// A time as the pages show it.
    pub fn time(&self, iso: &str) -> TimeView {
        super::format::time_view(iso)
    }
}

/// One V3 client's migration report (admins).
#[derive(Template)]
#[template(path = "v3_client.html")]
pub struct V3Client {
    /// Layout.
    pub user: Option<UserView>,
    /// Layout.
    pub project: Option<ProjectView>,
    /// Layout.
    pub notice: Option<String>,
    /// Layout.
    pub error: Option<String>,
    /// The report.
    pub client: crate::rewrite::migration::ClientReport,
}

impl V3Client {
    /// A time as the pages show it.
    pub fn time(&self, iso: &str) -> TimeView {
        super::format::time_view(iso)
    }

    /// `1 V3 call`, `2 V3 calls`.
    pub fn count(&self, count: &u64, one: &str, many: &str) -> String {
        super::format::plural(*count, one, many)
    }

    /// The route's V4 request, `GET /api/v4/…`, or a dash when there is none.
    pub fn v4(&self, advice: &crate::rewrite::migration::RouteAdvice) -> String {
        match (&advice.v4_method, &advice.v4_path) {
            (Some(method), Some(path)) => format!("{method} {path}"),
            _ => "—".to_owned(),
        }
    }
}

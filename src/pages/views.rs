//! The page templates (askama, compiled in, HTML-escaped) and the small view types they show.

use askama::Template;

/// The signed-in person, in the page header.
pub struct UserView {
    /// Username.
    pub username: String,
    /// The token every form carries.
    pub csrf: String,
}

/// The project a page is about, in the navigation.
pub struct ProjectView {
    /// Full path.
    pub path: String,
    /// `/-/svcgate/projects/:id`.
    pub base: String,
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
    /// Exact start time.
    pub started_at: String,
    /// Start time relative to now.
    pub started_relative: String,
    /// Title.
    pub title: String,
    /// Link to the alert page.
    pub href: String,
    /// Occurrences.
    pub events: u64,
    /// Status.
    pub status: String,
    /// Environment.
    pub environment: String,
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
    /// Rows.
    pub rows: Vec<AlertRow>,
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
    /// Severity name.
    pub severity: String,
    /// Severity words.
    pub severity_label: String,
    /// Severity shape.
    pub icon: &'static str,
    /// Occurrences.
    pub events: u64,
    /// Start.
    pub started_at: String,
    /// End.
    pub ended_at: String,
    /// Last occurrence.
    pub last_event_at: String,
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
    /// The payload's other keys, as JSON text.
    pub custom: Vec<(String, String)>,
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
}

/// An integration in the settings list.
pub struct IntegrationRow {
    /// Id.
    pub id: u64,
    /// Name.
    pub name: String,
    /// Type, for people.
    pub type_name: String,
    /// `enabled` or `disabled`.
    pub status: String,
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
    /// Integration types offered.
    pub types: Vec<(String, String)>,
    /// The create form's values.
    pub form: IntegrationForm,
    /// The test box's payload.
    pub test_payload: String,
    /// Incident setting.
    pub create_incident: bool,
    /// Incident setting.
    pub auto_close_incident: bool,
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
    /// Edit form target.
    pub edit_action: String,
    /// Delete form target.
    pub delete_action: String,
    /// Reset confirmation link.
    pub reset_href: String,
    /// CSRF token.
    pub csrf: String,
}

/// The key reset confirmation.
#[derive(Template)]
#[template(path = "confirm_reset.html")]
pub struct ConfirmReset {
    /// Layout.
    pub user: Option<UserView>,
    /// Layout.
    pub project: Option<ProjectView>,
    /// Layout.
    pub notice: Option<String>,
    /// Layout.
    pub error: Option<String>,
    /// Integration name.
    pub name: String,
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
    /// Routes by the chosen order.
    pub routes: Vec<crate::usage::RouteUsage>,
}

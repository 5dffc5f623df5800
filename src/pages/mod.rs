//! The people-facing pages under `/-/svcgate/`: sign-in, the Alert Management list, alert pages,
//! Settings › Operations › Alerts and the environments dashboard.
//!
//! Server-rendered HTML from askama templates (`templates/`), working without JavaScript (one small script adds
//! copy buttons). Every page asks the backend, with the signed-in person's token, what they may do, and reads and
//! changes alerts and integrations through the same operations as the management API ([`manage`]), so the pages
//! enforce the same roles. A failed operation is shown by `error_page`, the pages' one mapping of a
//! [`ManageError`]. Every form carries the session's CSRF token; sign-in uses a double-submit cookie.
//!
//! May use every layer below it (see `lib.rs`): both features, the backend, telemetry, the store, the helpers.

pub mod format;
pub mod oauth;
pub mod routes;
pub mod session;
pub mod sign_in;
pub mod views;

use std::sync::Arc;
use std::time::Duration;

use askama::Template;
use http::{HeaderValue, Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use serde_json::Value;

use self::format::{plural, status_label, time_view};
use self::oauth::OAuthClient;
use self::session::{Session, Sessions};
use self::views::*;
use crate::alerts::integrations::Kind;
use crate::alerts::manage::{
    self, AlertListParams, IntegrationFields, ManageError, NewIntegration, SettingsChanges,
};
use crate::alerts::AlertService;
use crate::backend::access::{ProjectAccess, Role};
use crate::http::body::{self, Body};
use crate::rewrite::usage::UsageRecorder;
use crate::store::AlertRecord;
use crate::store::Store;
use crate::util::secret::SecretBox;
use crate::util::url_parts::{encode_pairs, parse_pairs};

/// The prefix of the pages.
pub const PREFIX: &str = "/-/svcgate/";
/// The largest form a page accepts.
const MAX_FORM_BYTES: usize = 1 << 20;

type Page = Response<Body>;

/// The message line a re-rendered page shows.
enum Flash {
    /// None, or the notice named in the query (after a redirect).
    FromQuery,
    /// A success message.
    Notice(String),
    /// An error message about one field of the form (the field's id): the field is marked invalid and described
    /// by the message.
    FieldError(String, &'static str),
}

/// What the pages share.
pub struct Pages {
    sessions: Sessions,
    store: Arc<dyn Store>,
    secret: Arc<SecretBox>,
    oauth: Option<Arc<OAuthClient>>,
    /// Most OAuth sign-ins pending at once (`oauth_pending_sign_ins`).
    pending_sign_ins: u64,
}

/// The limits of signing in through the svc server's OAuth.
#[derive(Debug, Clone, Copy)]
pub struct SignInLimits {
    /// How long before an OAuth token expires it is refreshed (`oauth_refresh_margin`).
    pub refresh_margin: Duration,
    /// How long a replica waits before it tries a failed refresh again (`oauth_refresh_retry`).
    pub refresh_retry: Duration,
    /// The longest one refresh call to the server may take, connection, head and body; the claim on a refresh
    /// lasts a little longer (see `session.rs`).
    pub refresh_timeout: Duration,
    /// Most sign-ins pending at once (`oauth_pending_sign_ins`).
    pub pending_sign_ins: u64,
}

/// The request in hand.
struct Call<'a> {
    method: Method,
    path: String,
    query: Vec<(String, String)>,
    headers: http::HeaderMap,
    form: Vec<(String, String)>,
    secure: bool,
    service: &'a AlertService,
    usage: &'a UsageRecorder,
    origin: String,
}

impl Call<'_> {
    /// The request's path and query, as the browser asked for them.
    fn path_and_query(&self) -> String {
        if self.query.is_empty() {
            self.path.clone()
        } else {
            format!("{}?{}", self.path, encode_pairs(&self.query))
        }
    }

    fn query(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    fn field(&self, name: &str) -> Option<&str> {
        self.form
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    fn checked(&self, name: &str) -> bool {
        self.field(name).is_some()
    }
}

fn render(status: StatusCode, page: &impl Template) -> Page {
    match page.render() {
        Ok(html) => {
            let mut response = Response::new(body::full(html));
            *response.status_mut() = status;
            response.headers_mut().insert(
                http::header::CONTENT_TYPE,
                HeaderValue::from_static("text/html; charset=utf-8"),
            );
            // No external requests, no framing, no inline script: the pages need none of them.
            response.headers_mut().insert(
                http::header::CONTENT_SECURITY_POLICY,
                HeaderValue::from_static("default-src 'self'; frame-ancestors 'none'; form-action 'self'"),
            );
            response
        }
        Err(error) => crate::alerts::api::error_response(&ManageError::Internal(format!(
            "a page could not be rendered: {error}"
        ))),
    }
}

fn redirect(location: &str) -> Page {
    let mut response = Response::new(body::empty());
    *response.status_mut() = StatusCode::SEE_OTHER;
    if let Ok(value) = HeaderValue::from_str(location) {
        response.headers_mut().insert(http::header::LOCATION, value);
    }
    response
}

/// The pages' icon (`<link rel="icon">` in every page), also what `serve --dev` answers `/favicon.ico` with.
pub fn icon() -> Page {
    asset("image/svg+xml", include_str!("../../templates/icon.svg"))
}

fn asset(content_type: &'static str, text: &'static str) -> Page {
    let mut response = Response::new(body::full(text));
    response
        .headers_mut()
        .insert(http::header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response.headers_mut().insert(
        http::header::CACHE_CONTROL,
        HeaderValue::from_static("max-age=3600"),
    );
    response
}

fn user_view(session: &Session) -> Option<UserView> {
    Some(UserView {
        username: session.username.clone(),
        csrf: session.csrf.clone(),
        admin: session.admin,
    })
}

/// The id of the add and edit forms' field an invalid request names (`""` for none of them).
fn field_id(error: &ManageError) -> &'static str {
    match error.field() {
        Some("name") => "name",
        Some("api_url") => "api_url",
        Some("payload_example") => "payload_example",
        Some("type") => "type",
        _ => "",
    }
}

fn message(
    session: Option<&Session>,
    status: StatusCode,
    id: &'static str,
    heading: &str,
    text: &str,
) -> Page {
    render(
        status,
        &Message {
            user: session.and_then(user_view),
            project: None,
            notice: None,
            error: None,
            section_id: id,
            heading: heading.to_owned(),
            text: text.to_owned(),
        },
    )
}

/// The page for a failed operation: the error's status and message (for a refused role, the role it needs).
fn error_page(session: Option<&Session>, error: &ManageError) -> Page {
    error.log();
    let status = error.status();
    let (id, heading) = match error {
        ManageError::FormExpired => ("failure", "Form expired"),
        ManageError::TooLarge => ("failure", "Too large"),
        _ if status == StatusCode::FORBIDDEN => ("forbidden", "Not allowed"),
        _ if status == StatusCode::NOT_FOUND => ("not-found", "Not found"),
        _ => ("failure", "That did not work"),
    };
    let text = match error {
        ManageError::Forbidden { needs } => format!("This needs the {} role on this project.", needs.name()),
        other => other.message(),
    };
    message(session, status, id, heading, &text)
}

/// After a change: on to `then` when it was made, else the error's page.
fn done<T>(session: &Session, outcome: Result<T, ManageError>, then: &str) -> Page {
    match outcome {
        Ok(_) => redirect(then),
        Err(error) => error_page(Some(session), &error),
    }
}

/// The integration id of a path segment.
fn integration_id(id: &str) -> Result<u64, ManageError> {
    id.parse().map_err(|_| ManageError::IntegrationNotFound)
}

fn notice_text(code: Option<&str>) -> Option<String> {
    let text = match code? {
        "saved" => "The integration was saved.",
        "created" => "The integration was saved. Give its address and key to the senders.",
        "tested" => "The integration was saved and the test alert was sent.",
        "status" => "The alert's status was changed.",
        "key-reset" => "The key was reset: give the new key to the senders.",
        "deleted" => "The integration was deleted.",
        "incidents" => "The incident settings were saved.",
        _ => return None,
    };
    Some(text.to_owned())
}

/// One alert as a list shows it; `incident` makes the address of an incident from its number.
fn alert_row(alert: &AlertRecord, base: &str, incident: &dyn Fn(u64) -> String) -> AlertRow {
    let (icon, severity_label) = severity_view(&alert.severity);
    AlertRow {
        iid: alert.iid,
        severity: alert.severity.clone(),
        severity_label,
        icon,
        started: time_view(&alert.started_at),
        title: alert.title.clone(),
        href: format!("{base}/alerts/{}", alert.iid),
        events: alert.events,
        events_text: plural(alert.events, "event", "events"),
        status: alert.status.clone(),
        status_label: status_label(&alert.status),
        environment: alert.environment.clone().unwrap_or_default(),
        incident: alert.incident_iid.map(|iid| (incident(iid), iid)),
    }
}

/// The severity filter's choices: every severity first, then each from the most severe.
fn severity_choices() -> Vec<(String, String)> {
    let mut choices = vec![(String::new(), "Every severity".to_owned())];
    choices.extend(crate::alerts::normalized::Severity::ALL.iter().map(|severity| {
        let (_, label) = severity_view(severity.as_str());
        (severity.as_str().to_owned(), label)
    }));
    choices
}

impl Pages {
    /// Pages with sessions lasting `session_ttl`, signing in through `oauth` when it is set up (OAuth tokens
    /// refreshed `refresh_margin` before they expire, one replica at a time for at most `refresh_lease`) and by
    /// personal access token always.
    pub fn new(
        session_ttl: Duration,
        store: Arc<dyn Store>,
        secret: Arc<SecretBox>,
        oauth: Option<OAuthClient>,
        limits: SignInLimits,
    ) -> Self {
        let oauth = oauth.map(Arc::new);
        Pages {
            sessions: Sessions::new(
                session_ttl,
                Arc::clone(&store),
                Arc::clone(&secret),
                oauth.clone(),
                limits.refresh_margin,
                limits.refresh_timeout,
                limits.refresh_retry,
            ),
            store,
            secret,
            oauth,
            pending_sign_ins: limits.pending_sign_ins,
        }
    }

    /// Answers one page request.
    pub async fn handle(
        &self,
        service: &AlertService,
        usage: &UsageRecorder,
        request: Request<Incoming>,
        secure: bool,
        origin: String,
    ) -> Page {
        let (parts, incoming) = request.into_parts();
        let form = if parts.method == Method::POST {
            match Limited::new(incoming, MAX_FORM_BYTES).collect().await {
                Ok(collected) => parse_pairs(&collected.to_bytes()),
                Err(_) => return error_page(None, &ManageError::TooLarge),
            }
        } else {
            Vec::new()
        };
        let call = Call {
            method: parts.method.clone(),
            path: parts.uri.path().to_owned(),
            query: parse_pairs(parts.uri.query().unwrap_or("").as_bytes()),
            headers: parts.headers,
            form,
            secure,
            service,
            usage,
            origin,
        };
        self.route(&call).await
    }

    async fn route(&self, call: &Call<'_>) -> Page {
        let segments = routes::segments(call.path.strip_prefix(PREFIX).unwrap_or(""));
        match (&call.method, segments.as_slice()) {
            (&Method::GET, ["assets", "style.css"]) => {
                return asset("text/css", include_str!("../../templates/style.css"))
            }
            (&Method::GET, ["assets", "app.js"]) => {
                return asset("text/javascript", include_str!("../../templates/app.js"))
            }
            (&Method::GET, ["assets", "icon.svg"]) => return icon(),
            (&Method::GET, ["sign_in"]) => return self.sign_in_form(call, None),
            (&Method::POST, ["sign_in"]) => return self.sign_in(call).await,
            (&Method::GET, ["oauth", "start"]) => return self.oauth_start(call).await,
            (&Method::GET, ["oauth", "callback"]) => return self.oauth_callback(call).await,
            _ => {}
        }
        if !routes::exists(&call.method, &segments) {
            // Not a page: the 404 page, for a signed-out browser too (signing in would not make it one).
            let session = self.sessions.of(&call.headers).await;
            return error_page(session.as_ref(), &ManageError::NoRoute);
        }
        let Some(mut session) = self.sessions.of(&call.headers).await else {
            // A signed-out person who followed a link comes back to it after signing in.
            let wanted = (call.method == Method::GET).then(|| call.path_and_query());
            return redirect(&sign_in::sign_in_address(wanted.as_deref()));
        };
        if call.method == Method::POST && call.field("csrf") != Some(session.csrf.as_str()) {
            return error_page(Some(&session), &ManageError::FormExpired);
        }
        // Admins get a link to the V3 usage page in the header, and only they may open it; the answer is cached
        // with the caller's rights.
        session.admin = match session.credentials() {
            Some(credentials) => matches!(call.service.access.user(&credentials).await, Ok((_, true))),
            None => false,
        };
        match (&call.method, segments.as_slice()) {
            (&Method::GET, [""]) => redirect("/-/svcgate/projects"),
            (&Method::POST, ["sign_out"]) => self.sign_out(call).await,
            (&Method::GET, ["projects"]) => self.projects(call, &session).await,
            (&Method::GET, ["admin", "v3-usage"]) => self.v3_usage(call, &session, false).await,
            (&Method::GET, ["admin", "v3-usage.csv"]) => self.v3_usage(call, &session, true).await,
            (_, ["projects", project, rest @ ..]) => {
                let project = crate::util::url_parts::decode(project);
                let credentials = match session.credentials() {
                    Some(credentials) => credentials,
                    None => return redirect("/-/svcgate/sign_in"),
                };
                let access = match call.service.access.project(&credentials, &project).await {
                    Ok(access) => access,
                    Err(error) => return error_page(Some(&session), &error.into()),
                };
                self.project_page(call, &session, &access, rest).await
            }
            _ => error_page(Some(&session), &ManageError::NoRoute),
        }
    }

    async fn project_page(
        &self,
        call: &Call<'_>,
        session: &Session,
        access: &ProjectAccess,
        rest: &[&str],
    ) -> Page {
        let base = format!("/-/svcgate/projects/{}", access.project_id);
        match (&call.method, rest) {
            (&Method::GET, ["alerts"]) => self.alert_list(call, session, access, &base).await,
            (&Method::GET, ["alerts", iid]) => self.alert_page(call, session, access, &base, iid).await,
            (&Method::POST, ["alerts", iid, "status"]) => {
                let changed =
                    manage::change_status(call.service, access, iid.parse().ok(), call.field("status")).await;
                done(session, changed, &format!("{base}/alerts/{iid}?notice=status"))
            }
            (&Method::GET, ["environments"]) => self.environments(call, session, access, &base).await,
            (_, ["settings", "operations", more @ ..]) => {
                // Every form of Settings › Operations needs the Maintainer role, the test alert's too.
                if let Err(error) = manage::require(access, Role::Maintainer) {
                    return error_page(Some(session), &error);
                }
                self.settings_page(call, session, access, &base, more).await
            }
            _ => error_page(Some(session), &ManageError::NoRoute),
        }
    }

    async fn settings_page(
        &self,
        call: &Call<'_>,
        session: &Session,
        access: &ProjectAccess,
        base: &str,
        rest: &[&str],
    ) -> Page {
        let settings = format!("{base}/settings/operations");
        match (&call.method, rest) {
            (&Method::GET, []) => {
                self.settings(
                    call,
                    session,
                    access,
                    base,
                    Flash::FromQuery,
                    IntegrationForm::default(),
                    String::new(),
                )
                .await
            }
            (&Method::POST, ["integrations"]) => self.create_integration(call, session, access, base).await,
            (&Method::POST, ["test"]) => self.test_alert(call, session, access, base).await,
            (&Method::POST, ["incidents"]) => {
                let changes = SettingsChanges {
                    create_incident: Some(call.checked("create_incident")),
                    auto_close_incident: Some(call.checked("auto_close_incident")),
                };
                let saved = manage::update_incident_settings(call.service, access, changes).await;
                done(session, saved, &format!("{settings}?notice=incidents"))
            }
            (&Method::GET, ["integrations", id]) => {
                self.integration_page(call, session, access, base, id, None).await
            }
            (&Method::POST, ["integrations", id]) => {
                let fields = IntegrationFields {
                    name: Some(call.field("name").unwrap_or("").to_owned()),
                    active: Some(call.checked("active")),
                    api_url: call.field("api_url").map(str::to_owned),
                    payload_example: call.field("payload_example").map(str::to_owned),
                    payload_attribute_mapping: None,
                };
                let updated = match integration_id(id) {
                    Ok(id) => manage::update_integration(call.service, access, id, fields).await,
                    Err(error) => Err(error),
                };
                match updated {
                    Ok(_) => redirect(&format!("{settings}/integrations/{id}?notice=saved")),
                    Err(error) => {
                        error.log();
                        let field = field_id(&error);
                        self.integration_page(call, session, access, base, id, Some((error.message(), field)))
                            .await
                    }
                }
            }
            (&Method::GET, ["integrations", id, "reset_token"]) => {
                let integration =
                    match integration_id(id).and_then(|id| manage::integration(call.service, access, id)) {
                        Ok(integration) => integration,
                        Err(error) => return error_page(Some(session), &error),
                    };
                render(
                    StatusCode::OK,
                    &Confirm {
                        user: user_view(session),
                        project: Some(project_view(access, base, Section::Settings, false)),
                        notice: None,
                        error: None,
                        heading: format!("Reset the key of “{}”?", integration.record.name),
                        text: "Senders using the current key will be refused (401) until they are given the new one."
                            .to_owned(),
                        button_id: "confirm-reset",
                        button: "Reset key",
                        action: format!("{settings}/integrations/{id}/reset_token"),
                        back: format!("{settings}/integrations/{id}"),
                        csrf: session.csrf.clone(),
                    },
                )
            }
            (&Method::GET, ["integrations", id, "delete"]) => {
                let integration =
                    match integration_id(id).and_then(|id| manage::integration(call.service, access, id)) {
                        Ok(integration) => integration,
                        Err(error) => return error_page(Some(session), &error),
                    };
                let text = if integration.kind == Kind::Opsgenie {
                    "The link to Opsgenie goes away. Alerts already received stay.".to_owned()
                } else {
                    "Its address and key stop working at once, and cannot be brought back: a new integration \
                     gets a new address and key. Alerts already received stay."
                        .to_owned()
                };
                render(
                    StatusCode::OK,
                    &Confirm {
                        user: user_view(session),
                        project: Some(project_view(access, base, Section::Settings, false)),
                        notice: None,
                        error: None,
                        heading: format!("Delete the integration “{}”?", integration.record.name),
                        text,
                        button_id: "confirm-delete",
                        button: "Delete integration",
                        action: format!("{settings}/integrations/{id}/delete"),
                        back: format!("{settings}/integrations/{id}"),
                        csrf: session.csrf.clone(),
                    },
                )
            }
            (&Method::POST, ["integrations", id, "reset_token"]) => {
                let reset = match integration_id(id) {
                    Ok(id) => manage::reset_key(call.service, access, id).await,
                    Err(error) => Err(error),
                };
                done(
                    session,
                    reset,
                    &format!("{settings}/integrations/{id}?notice=key-reset"),
                )
            }
            (&Method::POST, ["integrations", id, "delete"]) => {
                let deleted = match integration_id(id) {
                    Ok(id) => manage::delete_integration(call.service, access, id).await,
                    Err(error) => Err(error),
                };
                done(session, deleted, &format!("{settings}?notice=deleted"))
            }
            _ => error_page(Some(session), &ManageError::NoRoute),
        }
    }

    async fn v3_usage(&self, call: &Call<'_>, session: &Session, as_csv: bool) -> Page {
        if !session.admin {
            return error_page(Some(session), &ManageError::AdminOnly);
        }
        let rows = match call.usage.report().await {
            Ok(rows) => rows,
            Err(error) => return error_page(Some(session), &error.into()),
        };
        let routes = crate::rewrite::usage::by_route(
            rows,
            call.query("sort").unwrap_or("calls"),
            time::OffsetDateTime::now_utc(),
        );
        if as_csv {
            return match crate::rewrite::usage::csv(&routes) {
                Ok(text) => {
                    let mut response = Response::new(body::full(text));
                    response.headers_mut().insert(
                        http::header::CONTENT_TYPE,
                        HeaderValue::from_static("text/csv; charset=utf-8"),
                    );
                    response.headers_mut().insert(
                        http::header::CONTENT_DISPOSITION,
                        HeaderValue::from_static("attachment; filename=\"svcgate-v3-usage.csv\""),
                    );
                    response
                }
                Err(error) => error_page(
                    Some(session),
                    &ManageError::Internal(format!("the V3 usage CSV could not be written: {error}")),
                ),
            };
        }
        render(
            StatusCode::OK,
            &V3Usage {
                user: user_view(session),
                project: None,
                notice: None,
                error: None,
                routes,
            },
        )
    }

    async fn projects(&self, call: &Call<'_>, session: &Session) -> Page {
        let Some(credentials) = session.credentials() else {
            return redirect("/-/svcgate/sign_in");
        };
        let projects = match call.service.access.projects(&credentials).await {
            Ok(projects) => projects,
            Err(error) => return error_page(Some(session), &error.into()),
        };
        render(
            StatusCode::OK,
            &Projects {
                user: user_view(session),
                project: None,
                notice: None,
                error: None,
                projects: projects
                    .into_iter()
                    .map(|(id, path)| ProjectLink { id, path })
                    .collect(),
            },
        )
    }

    async fn alert_list(
        &self,
        call: &Call<'_>,
        session: &Session,
        access: &ProjectAccess,
        base: &str,
    ) -> Page {
        let params = AlertListParams::from_pairs(&call.query);
        let listed = match manage::alert_query(access.project_id, &params, "open") {
            Ok(query) => {
                let (page, per_page, severity) = (query.page, query.per_page, query.severity.clone());
                manage::alerts(call.service, access, query)
                    .await
                    .map(|result| (page, per_page, severity.unwrap_or_default(), result))
            }
            Err(error) => Err(error),
        };
        let (page, per_page, severity, result) = match listed {
            Ok(listed) => listed,
            Err(error) => return error_page(Some(session), &error),
        };
        let intake = match manage::intake_summary(call.service, access) {
            Ok(intake) => intake,
            Err(error) => return error_page(Some(session), &error),
        };
        let status = call
            .query("status")
            .filter(|value| !value.is_empty())
            .unwrap_or("open")
            .to_owned();
        let search = call.query("search").unwrap_or("").to_owned();
        let sort = call
            .query("sort")
            .filter(|value| !value.is_empty())
            .unwrap_or("started_at_desc")
            .to_owned();
        let count = |name: &str| result.counts.get(name).copied().unwrap_or(0);
        // Every link of the list keeps its filters; `filtered: false` drops the search and severity.
        let link = |status: &str, page: u64, filtered: bool| {
            let mut pairs = vec![("status".to_owned(), status.to_owned())];
            if filtered && !search.is_empty() {
                pairs.push(("search".to_owned(), search.clone()));
            }
            if filtered && !severity.is_empty() {
                pairs.push(("severity".to_owned(), severity.clone()));
            }
            pairs.push(("sort".to_owned(), sort.clone()));
            if page > 1 {
                pairs.push(("page".to_owned(), page.to_string()));
            }
            format!("{base}/alerts?{}", encode_pairs(&pairs))
        };
        let all: u64 = result.counts.values().sum();
        let tabs = [
            ("open", "Open", count("triggered") + count("acknowledged")),
            ("triggered", "Triggered", count("triggered")),
            ("acknowledged", "Acknowledged", count("acknowledged")),
            ("resolved", "Resolved", count("resolved")),
            ("all", "All", all),
        ]
        .into_iter()
        .map(|(value, label, count)| Tab {
            status: value,
            label,
            count,
            href: link(value, 1, true),
            current: value == status,
        })
        .collect();
        let pages = result.total.div_ceil(per_page).max(1);
        let filtered = !search.is_empty() || !severity.is_empty();
        let empty = result.alerts.is_empty().then(|| {
            if filtered {
                let mut words = Vec::new();
                if !severity.is_empty() {
                    words.push(format!("the severity {}", severity_view(&severity).1));
                }
                if !search.is_empty() {
                    words.push(format!("“{search}”"));
                }
                EmptyState::NoMatch {
                    text: words.join(" and "),
                    clear_href: link(&status, 1, false),
                }
            } else if let Some(link) = intake.opsgenie.clone() {
                EmptyState::Opsgenie { link }
            } else if all > 0 || status == "ignored" {
                // The project has alerts, only none in this tab: say what the tab's emptiness means.
                let text = match status.as_str() {
                    "open" => "No open alert: nothing is triggered or acknowledged right now.",
                    "triggered" => "No triggered alert: every open alert has been acknowledged.",
                    "acknowledged" => "No acknowledged alert: no one has taken an open alert in hand.",
                    "resolved" => "No resolved alert yet.",
                    _ => "No alert has this status.",
                };
                EmptyState::Tab {
                    text: text.to_owned(),
                }
            } else if !intake.receiving.is_empty() {
                EmptyState::Waiting {
                    receiving: intake.receiving.clone(),
                }
            } else {
                EmptyState::FirstAlert {
                    can_configure: access.role >= Role::Maintainer,
                    inactive_only: intake.any,
                }
            }
        });
        let incident = |iid: u64| manage::incident_url(call.service, access, iid);
        render(
            StatusCode::OK,
            &Alerts {
                user: user_view(session),
                project: Some(project_view(access, base, Section::Alerts, true)),
                notice: None,
                error: None,
                project_path: access.project_path.clone(),
                opsgenie: intake.opsgenie,
                tabs,
                status: status.clone(),
                search: search.clone(),
                sort: sort.clone(),
                sorts: [
                    ("started_at_desc", "Newest first"),
                    ("started_at_asc", "Oldest first"),
                    ("severity_desc", "Most severe first"),
                    ("events_desc", "Most events first"),
                    ("title_asc", "Title"),
                    ("status_asc", "Status"),
                ]
                .iter()
                .map(|(value, label)| ((*value).to_owned(), (*label).to_owned()))
                .collect(),
                severity: severity.clone(),
                severities: severity_choices(),
                rows: result
                    .alerts
                    .iter()
                    .map(|alert| alert_row(alert, base, &incident))
                    .collect(),
                empty,
                settings_href: format!("{base}/settings/operations"),
                page,
                pages,
                previous: (page > 1).then(|| link(&status, page - 1, true)),
                next: (page < pages).then(|| link(&status, page + 1, true)),
            },
        )
    }

    async fn alert_page(
        &self,
        call: &Call<'_>,
        session: &Session,
        access: &ProjectAccess,
        base: &str,
        iid: &str,
    ) -> Page {
        let detail = match iid.parse::<u64>() {
            Ok(number) => manage::alert(call.service, access, number).await,
            Err(_) => Err(ManageError::AlertNotFound),
        };
        let detail = match detail {
            Ok(detail) => detail,
            Err(error) => return error_page(Some(session), &error),
        };
        let alert = &detail.alert;
        let text = |value: &Option<String>| value.clone().unwrap_or_default();
        let (icon, severity_label) = severity_view(&alert.severity);
        let known = [
            "title",
            "description",
            "start_time",
            "end_time",
            "service",
            "monitoring_tool",
            "hosts",
            "severity",
            "fingerprint",
            crate::alerts::normalized::Attribute::EnvironmentName.key(),
        ];
        // The payload is the sender's own JSON: its keys are data, shown as they came.
        let custom = detail
            .payload
            .as_object()
            .map(|fields| format::tree(fields.iter().filter(|(key, _)| !known.contains(&key.as_str()))))
            .unwrap_or_default();
        let calls = detail
            .calls
            .iter()
            .map(|call| {
                let kind = if call.kind == "create_incident" {
                    "Open the incident"
                } else {
                    "Close the incident"
                };
                match (&call.done_at, &call.last_error) {
                    (Some(_), _) => format!("{kind}: done"),
                    (None, error) => format!(
                        "{kind}: pending after {}{}",
                        plural(call.attempts, "attempt", "attempts"),
                        error
                            .as_deref()
                            .map(|error| format!(" (last error: {error})"))
                            .unwrap_or_default()
                    ),
                }
            })
            .collect();
        let hosts: Vec<String> = serde_json::from_str(&alert.hosts_json).unwrap_or_default();
        render(
            StatusCode::OK,
            &AlertPage {
                user: user_view(session),
                project: Some(project_view(access, base, Section::Alerts, false)),
                notice: notice_text(call.query("notice")),
                error: None,
                list_href: format!("{base}/alerts"),
                iid: alert.iid,
                title: alert.title.clone(),
                status: alert.status.clone(),
                status_label: status_label(&alert.status),
                severity: alert.severity.clone(),
                severity_label,
                icon,
                events: plural(alert.events, "event", "events"),
                started: time_view(&alert.started_at),
                ended: alert.ended_at.as_deref().map(time_view),
                last_event: time_view(&alert.last_event_at),
                description: text(&alert.description),
                service: text(&alert.service),
                monitoring_tool: text(&alert.monitoring_tool),
                hosts: hosts.join(", "),
                environment: text(&alert.environment),
                fingerprint: text(&alert.fingerprint),
                custom,
                payload: serde_json::to_string_pretty(&detail.payload).unwrap_or_default(),
                status_action: format!("{base}/alerts/{iid}/status"),
                csrf: session.csrf.clone(),
                statuses: manage::STATUSES
                    .iter()
                    .map(|status| (*status).to_owned())
                    .collect(),
                incident_link: detail.incident_url.clone(),
                incident_iid: alert.incident_iid.map(|iid| iid.to_string()).unwrap_or_default(),
                calls,
                integration: match &detail.integration {
                    Some((_, named)) if named.deleted => format!("{} (deleted)", named.name),
                    Some((_, named)) => named.name.clone(),
                    None => String::new(),
                },
            },
        )
    }

    #[expect(
        clippy::too_many_arguments,
        reason = "the page is re-rendered with the form as the person left it"
    )]
    async fn settings(
        &self,
        call: &Call<'_>,
        session: &Session,
        access: &ProjectAccess,
        base: &str,
        flash: Flash,
        form: IntegrationForm,
        test_payload: String,
    ) -> Page {
        let mut invalid = "";
        let (notice, error) = match flash {
            Flash::FromQuery => (notice_text(call.query("notice")), None),
            Flash::Notice(text) => (Some(text), None),
            Flash::FieldError(text, field) => {
                invalid = field;
                (None, Some(text))
            }
        };
        let settings_base = format!("{base}/settings/operations");
        let listed = match manage::integrations(call.service, access) {
            Ok(listed) => listed,
            Err(error) => return error_page(Some(session), &error),
        };
        let incident = match manage::incident_settings(call.service, access).await {
            Ok(incident) => incident,
            Err(error) => return error_page(Some(session), &error),
        };
        let integrations: Vec<IntegrationRow> = listed
            .iter()
            .map(|integration| IntegrationRow {
                id: integration.record.id,
                name: integration.record.name.clone(),
                type_name: integration.kind.label().to_owned(),
                active: integration.record.active,
                href: format!("{settings_base}/integrations/{}", integration.record.id),
            })
            .collect();
        let receiving = listed
            .iter()
            .filter(|integration| integration.kind != Kind::Opsgenie && integration.record.active)
            .map(|integration| IntegrationRow {
                id: integration.record.id,
                name: integration.record.name.clone(),
                type_name: integration.kind.label().to_owned(),
                active: true,
                href: String::new(),
            })
            .collect();
        let existing: Vec<Kind> = listed.iter().map(|integration| integration.kind).collect();
        let addable = manage::addable_kinds(&existing, call.service.config.edition);
        let mut form = form;
        if !matches!(Kind::parse(&form.kind), Some(kind) if addable.contains(&kind)) {
            form.kind = addable
                .first()
                .map(|kind| kind.as_str().to_owned())
                .unwrap_or_default();
        }
        render(
            if error.is_some() {
                StatusCode::BAD_REQUEST
            } else {
                StatusCode::OK
            },
            &Settings {
                user: user_view(session),
                project: Some(project_view(access, base, Section::Settings, true)),
                notice,
                error,
                base: settings_base,
                csrf: session.csrf.clone(),
                integrations,
                receiving,
                types: addable
                    .iter()
                    .map(|kind| (kind.as_str().to_owned(), kind.label().to_owned()))
                    .collect(),
                invalid,
                form,
                test_payload: if test_payload.is_empty() {
                    "{\n  \"title\": \"Test alert\",\n  \"severity\": \"low\"\n}".to_owned()
                } else {
                    test_payload
                },
                create_incident: incident.create_incident,
                auto_close_incident: incident.auto_close_incident,
                service_token_set: call.service.config.service_token_set,
            },
        )
    }

    async fn create_integration(
        &self,
        call: &Call<'_>,
        session: &Session,
        access: &ProjectAccess,
        base: &str,
    ) -> Page {
        let form = IntegrationForm {
            kind: call.field("type").unwrap_or("http").to_owned(),
            name: call.field("name").unwrap_or("").trim().to_owned(),
            active: call.checked("active"),
            payload_example: call.field("payload_example").unwrap_or("").to_owned(),
            api_url: call.field("api_url").unwrap_or("").trim().to_owned(),
        };
        // Without JavaScript the form shows the fields of the type it was drawn with; this button draws it again
        // for the type chosen, keeping what was typed, and saves nothing.
        if call.field("action") == Some("choose_type") {
            return self
                .settings(call, session, access, base, Flash::FromQuery, form, String::new())
                .await;
        }
        let kind = match NewIntegration::kind_of(Some(&form.kind)) {
            Ok(kind) => kind,
            Err(error) => {
                return self
                    .settings(
                        call,
                        session,
                        access,
                        base,
                        Flash::FieldError(error.message(), "type"),
                        form,
                        String::new(),
                    )
                    .await
            }
        };
        // Fields of the other types may still hold text typed before the type was changed: they are not sent.
        let sample = if kind == Kind::Http {
            form.payload_example.clone()
        } else {
            String::new()
        };
        let api_url = if kind == Kind::Opsgenie {
            form.api_url.clone()
        } else {
            String::new()
        };
        if !sample.trim().is_empty() && serde_json::from_str::<serde::de::IgnoredAny>(&sample).is_err() {
            return self
                .settings(
                    call,
                    session,
                    access,
                    base,
                    Flash::FieldError(
                        "The sample payload is not valid JSON; nothing was saved.".to_owned(),
                        "payload_example",
                    ),
                    form,
                    String::new(),
                )
                .await;
        }
        let non_empty = |text: &str| (!text.trim().is_empty()).then(|| text.to_owned());
        let new = NewIntegration {
            kind,
            fields: IntegrationFields {
                name: non_empty(&form.name),
                active: Some(form.active),
                api_url: non_empty(&api_url),
                payload_example: non_empty(&sample),
                payload_attribute_mapping: None,
            },
        };
        let created = match manage::create_integration(call.service, access, new).await {
            Ok(created) => created,
            Err(error) => {
                error.log();
                // A clash with the project's integrations (one of a kind, Premium only) is about the type chosen.
                let field = match &error {
                    ManageError::Conflict(_) | ManageError::NeedsPremium(_) => "type",
                    other => field_id(other),
                };
                return self
                    .settings(
                        call,
                        session,
                        access,
                        base,
                        Flash::FieldError(error.message(), field),
                        form,
                        String::new(),
                    )
                    .await;
            }
        };
        // Either way the person lands on the new integration's page, which shows its address and key (once
        // active): that is what they need next.
        let id = created.record.id.to_string();
        let page = format!("{base}/settings/operations/integrations/{id}");
        if call.field("action") != Some("save_and_test") {
            return redirect(&format!("{page}?notice=created"));
        }
        match manage::test_alert(call.service, access, created.record.id, None).await {
            Ok(_) => redirect(&format!("{page}?notice=tested")),
            Err(error) => {
                error.log();
                let error = format!(
                    "The integration was saved, but the test alert failed: {}",
                    error.message()
                );
                self.integration_page(call, session, access, base, &id, Some((error, "")))
                    .await
            }
        }
    }

    async fn test_alert(
        &self,
        call: &Call<'_>,
        session: &Session,
        access: &ProjectAccess,
        base: &str,
    ) -> Page {
        let id = call.field("integration_id").unwrap_or("");
        let payload = call.field("payload").unwrap_or("").to_owned();
        let tested = match integration_id(id) {
            Ok(id) => manage::test_alert(call.service, access, id, Some(payload.clone())).await,
            Err(error) => Err(error),
        };
        // The page is shown in place (no redirect), so the tested payload stays in the box.
        let flash = match tested {
            Ok(_) => Flash::Notice("The test alert was received.".to_owned()),
            Err(error) => {
                error.log();
                // An inactive integration is the choice of integration; anything else is the payload's fault.
                let field = match error {
                    ManageError::Conflict(_) => "test-integration",
                    _ => "test-payload",
                };
                Flash::FieldError(format!("The test alert was refused: {}", error.message()), field)
            }
        };
        self.settings(
            call,
            session,
            access,
            base,
            flash,
            IntegrationForm::default(),
            payload,
        )
        .await
    }

    async fn integration_page(
        &self,
        call: &Call<'_>,
        session: &Session,
        access: &ProjectAccess,
        base: &str,
        id: &str,
        error: Option<(String, &'static str)>,
    ) -> Page {
        let (error, invalid) = match error {
            Some((text, field)) => (Some(text), field),
            None => (None, ""),
        };
        let integration =
            match integration_id(id).and_then(|id| manage::integration(call.service, access, id)) {
                Ok(integration) => integration,
                Err(error) => return error_page(Some(session), &error),
            };
        let record = &integration.record;
        let failures = match manage::incident_failures(call.service, access, record.id).await {
            Ok(failures) => failures,
            Err(error) => return error_page(Some(session), &error),
        };
        // The address and key are shown only while the integration is active, as the API shows them.
        let address = record.active.then(|| integration.path()).flatten();
        let settings = format!("{base}/settings/operations");
        render(
            if error.is_some() {
                StatusCode::BAD_REQUEST
            } else {
                StatusCode::OK
            },
            &IntegrationPage {
                user: user_view(session),
                project: Some(project_view(access, base, Section::Settings, false)),
                notice: if error.is_some() {
                    None
                } else {
                    notice_text(call.query("notice"))
                },
                error,
                settings_href: settings.clone(),
                name: record.name.clone(),
                type_name: integration.kind.label().to_owned(),
                key: if address.is_some() {
                    integration.token().to_owned()
                } else {
                    String::new()
                },
                url: address.map(|path| format!("{}{path}", call.origin)),
                receives: integration.kind != Kind::Opsgenie,
                active: record.active,
                is_http: integration.kind == Kind::Http,
                is_opsgenie: integration.kind == Kind::Opsgenie,
                payload_example: record
                    .payload_example
                    .as_deref()
                    .and_then(|text| serde_json::from_str::<Value>(text).ok())
                    .map(|value| serde_json::to_string_pretty(&value).unwrap_or_default())
                    .unwrap_or_default(),
                api_url: record.api_url.clone().unwrap_or_default(),
                edit_action: format!("{settings}/integrations/{id}"),
                delete_href: format!("{settings}/integrations/{id}/delete"),
                reset_href: format!("{settings}/integrations/{id}/reset_token"),
                csrf: session.csrf.clone(),
                failures: failures
                    .into_iter()
                    .map(|failure| FailureRow {
                        what: if failure.kind == "create_incident" {
                            "Opening the incident".to_owned()
                        } else {
                            "Closing the incident".to_owned()
                        },
                        alert_iid: failure.alert_iid,
                        alert_title: failure.alert_title,
                        alert_href: format!("{base}/alerts/{}", failure.alert_iid),
                        attempts: plural(failure.attempts, "attempt", "attempts"),
                        last_error: failure.last_error,
                        next_attempt: time_view(&failure.next_attempt_at),
                    })
                    .collect(),
                service_token_set: call.service.config.service_token_set,
                invalid,
            },
        )
    }

    async fn environments(
        &self,
        call: &Call<'_>,
        session: &Session,
        access: &ProjectAccess,
        base: &str,
    ) -> Page {
        let incident = |iid: u64| manage::incident_url(call.service, access, iid);
        let groups = match manage::environments(call.service, access).await {
            Ok(groups) => groups
                .into_iter()
                .map(|group| EnvironmentGroup {
                    rows: group
                        .alerts
                        .iter()
                        .map(|alert| alert_row(alert, base, &incident))
                        .collect(),
                    name: group.name,
                })
                .collect(),
            Err(error) => return error_page(Some(session), &error),
        };
        render(
            StatusCode::OK,
            &Environments {
                user: user_view(session),
                project: Some(project_view(access, base, Section::Environments, true)),
                notice: None,
                error: None,
                groups,
                environment_field: crate::alerts::normalized::Attribute::EnvironmentName.key(),
            },
        )
    }
}

/// The project in the navigation; the page is in `section`, and is the section's own page when `section_page`.
fn project_view(access: &ProjectAccess, base: &str, section: Section, section_page: bool) -> ProjectView {
    ProjectView {
        path: access.project_path.clone(),
        base: base.to_owned(),
        section,
        section_page,
    }
}

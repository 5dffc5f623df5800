//! The people-facing pages under `/-/svcgate/`: sign-in, the Alert Management list, alert pages,
//! Settings › Operations › Alerts and the environments dashboard.
//!
//! Server-rendered HTML from askama templates (`templates/`), working without JavaScript (one small script adds
//! copy buttons). Every page asks the backend, with the signed-in person's token, what they may do, and every
//! change goes through the same operations as the management API ([`api::call`]), so the pages enforce the same
//! roles. Every form carries the session's CSRF token; sign-in uses a double-submit cookie.

pub mod session;
pub mod views;

use std::time::Duration;

use askama::Template;
use http::{HeaderValue, Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use serde_json::{json, Map, Value};

use self::session::{cookie, set_cookie, Session, Sessions, COOKIE, CSRF_COOKIE};
use self::views::*;
use crate::access::{Credentials, ProjectAccess, Role};
use crate::alerts::api::{self, alert_query, ApiRequest};
use crate::alerts::integrations::Kind;
use crate::alerts::AlertService;
use crate::body::{self, Body};
use crate::secret::random_hex;
use crate::store::AlertRecord;
use crate::url_parts::{encode_pairs, parse_pairs};
use crate::usage::UsageRecorder;

/// The prefix of the pages.
pub const PREFIX: &str = "/-/svcgate/";
/// The largest form a page accepts.
const MAX_FORM_BYTES: usize = 1 << 20;
/// How long the sign-in form's CSRF cookie lives.
const SIGN_IN_WINDOW: Duration = Duration::from_secs(3600);

type Page = Response<Body>;

/// The message line a re-rendered page shows.
enum Flash {
    /// None, or the notice named in the query (after a redirect).
    FromQuery,
    /// A success message.
    Notice(String),
    /// An error message.
    Error(String),
}

/// What the pages share.
pub struct Pages {
    sessions: Sessions,
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
        Err(error) => {
            tracing::error!(%error, "page could not be rendered");
            body::error_response(StatusCode::INTERNAL_SERVER_ERROR, "500 Internal Server Error")
        }
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
    })
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

fn notice_text(code: Option<&str>) -> Option<String> {
    let text = match code? {
        "saved" => "The integration was saved.",
        "tested" => "The integration was saved and the test alert was sent.",
        "status" => "The alert's status was changed.",
        "key-reset" => "The key was reset: give the new key to the senders.",
        "deleted" => "The integration was deleted.",
        "incidents" => "The incident settings were saved.",
        _ => return None,
    };
    Some(text.to_owned())
}

fn relative(time: &str) -> String {
    let Some(then) = crate::time_format::parse_time(time) else {
        return time.to_owned();
    };
    let seconds = (time::OffsetDateTime::now_utc() - then).whole_seconds();
    match seconds {
        i64::MIN..=59 => "just now".to_owned(),
        60..=3599 => format!("{} min ago", seconds / 60),
        3600..=86_399 => format!("{} h ago", seconds / 3600),
        _ => format!("{} days ago", seconds / 86_400),
    }
}

fn alert_row(alert: &AlertRecord, base: &str) -> AlertRow {
    let (icon, severity_label) = severity_view(&alert.severity);
    AlertRow {
        iid: alert.iid,
        severity: alert.severity.clone(),
        severity_label,
        icon,
        started_at: alert.started_at.clone(),
        started_relative: relative(&alert.started_at),
        title: alert.title.clone(),
        href: format!("{base}/alerts/{}", alert.iid),
        events: alert.events,
        status: alert.status.clone(),
        environment: alert.environment.clone().unwrap_or_default(),
    }
}

impl Pages {
    /// Pages with sessions lasting `session_ttl`.
    pub fn new(session_ttl: Duration) -> Self {
        Pages {
            sessions: Sessions::new(session_ttl),
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
                Err(_) => {
                    return message(
                        None,
                        StatusCode::PAYLOAD_TOO_LARGE,
                        "failure",
                        "Too large",
                        "The form is larger than 1 MiB.",
                    )
                }
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
        let rest = call.path.strip_prefix(PREFIX).unwrap_or("").trim_end_matches('/');
        let segments: Vec<&str> = rest.split('/').collect();
        match (&call.method, segments.as_slice()) {
            (&Method::GET, ["assets", "style.css"]) => {
                return asset("text/css", include_str!("../../templates/style.css"))
            }
            (&Method::GET, ["assets", "app.js"]) => {
                return asset("text/javascript", include_str!("../../templates/app.js"))
            }
            (&Method::GET, ["sign_in"]) => return self.sign_in_form(call, None),
            (&Method::POST, ["sign_in"]) => return self.sign_in(call).await,
            _ => {}
        }
        let Some(session) = self.sessions.of(&call.headers) else {
            return redirect("/-/svcgate/sign_in");
        };
        if call.method == Method::POST && call.field("csrf") != Some(session.csrf.as_str()) {
            return message(
                Some(&session),
                StatusCode::FORBIDDEN,
                "failure",
                "Form expired",
                "The form was not sent from a current page of yours. Go back, reload it and try again.",
            );
        }
        match (&call.method, segments.as_slice()) {
            (&Method::GET, [""]) => redirect("/-/svcgate/projects"),
            (&Method::POST, ["sign_out"]) => self.sign_out(call),
            (&Method::GET, ["projects"]) => self.projects(call, &session).await,
            (&Method::GET, ["admin", "v3-usage"]) => self.v3_usage(call, &session, false).await,
            (&Method::GET, ["admin", "v3-usage.csv"]) => self.v3_usage(call, &session, true).await,
            (_, ["projects", project, rest @ ..]) => {
                let project = crate::url_parts::decode(project);
                let credentials = match Credentials::from_token(&session.token) {
                    Some(credentials) => credentials,
                    None => return redirect("/-/svcgate/sign_in"),
                };
                let access = match call.service.access.project(&credentials, &project).await {
                    Ok(access) => access,
                    Err(error) => {
                        let failure = api::access_failure(&error);
                        return message(
                            Some(&session),
                            failure.status,
                            "not-found",
                            "Not available",
                            &failure.message,
                        );
                    }
                };
                self.project_page(call, &session, &access, rest).await
            }
            _ => message(
                Some(&session),
                StatusCode::NOT_FOUND,
                "not-found",
                "Not found",
                "There is no page here.",
            ),
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
                let status = call.field("status").unwrap_or("");
                self.act(
                    call,
                    session,
                    access,
                    Method::PUT,
                    &format!("alerts/{iid}"),
                    json!({"status": status}),
                    &format!("{base}/alerts/{iid}?notice=status"),
                )
                .await
            }
            (&Method::GET, ["environments"]) => self.environments(call, session, access, &base).await,
            (_, ["settings", "operations", more @ ..]) => {
                if access.role < Role::Maintainer {
                    return message(
                        Some(session),
                        StatusCode::FORBIDDEN,
                        "forbidden",
                        "Not allowed",
                        "Settings › Operations needs the Maintainer role on this project.",
                    );
                }
                self.settings_page(call, session, access, &base, more).await
            }
            _ => message(
                Some(session),
                StatusCode::NOT_FOUND,
                "not-found",
                "Not found",
                "There is no page here.",
            ),
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
                let body = json!({"create_incident": call.checked("create_incident"), "auto_close_incident": call.checked("auto_close_incident")});
                self.act(
                    call,
                    session,
                    access,
                    Method::PUT,
                    "alert_settings",
                    body,
                    &format!("{settings}?notice=incidents"),
                )
                .await
            }
            (&Method::GET, ["integrations", id]) => {
                self.integration_page(call, session, access, base, id).await
            }
            (&Method::POST, ["integrations", id]) => {
                let mut body = Map::new();
                body.insert("name".to_owned(), Value::from(call.field("name").unwrap_or("")));
                body.insert("active".to_owned(), Value::Bool(call.checked("active")));
                for name in ["payload_example", "api_url"] {
                    if let Some(value) = call.field(name) {
                        body.insert(name.to_owned(), Value::from(value));
                    }
                }
                let (code, answer) = self
                    .operation(
                        call,
                        access,
                        Method::PUT,
                        &format!("integrations/{id}"),
                        Value::Object(body),
                    )
                    .await;
                if code.is_success() {
                    redirect(&format!("{settings}/integrations/{id}?notice=saved"))
                } else {
                    self.integration_page_with(call, session, access, base, id, Some(error_text(&answer)))
                        .await
                }
            }
            (&Method::GET, ["integrations", id, "reset_token"]) => {
                let (code, answer) = self
                    .operation(
                        call,
                        access,
                        Method::GET,
                        &format!("integrations/{id}"),
                        Value::Null,
                    )
                    .await;
                if !code.is_success() {
                    return self.failure(session, code, &answer);
                }
                render(
                    StatusCode::OK,
                    &ConfirmReset {
                        user: user_view(session),
                        project: Some(project_view(access, base)),
                        notice: None,
                        error: None,
                        name: answer["name"].as_str().unwrap_or_default().to_owned(),
                        action: format!("{settings}/integrations/{id}/reset_token"),
                        back: format!("{settings}/integrations/{id}"),
                        csrf: session.csrf.clone(),
                    },
                )
            }
            (&Method::POST, ["integrations", id, "reset_token"]) => {
                self.act(
                    call,
                    session,
                    access,
                    Method::POST,
                    &format!("integrations/{id}/reset_token"),
                    Value::Null,
                    &format!("{settings}/integrations/{id}?notice=key-reset"),
                )
                .await
            }
            (&Method::POST, ["integrations", id, "delete"]) => {
                self.act(
                    call,
                    session,
                    access,
                    Method::DELETE,
                    &format!("integrations/{id}"),
                    Value::Null,
                    &format!("{settings}?notice=deleted"),
                )
                .await
            }
            _ => message(
                Some(session),
                StatusCode::NOT_FOUND,
                "not-found",
                "Not found",
                "There is no page here.",
            ),
        }
    }

    /// Runs a management operation and, when it succeeds, sends the person to `then`; else shows why not.
    #[expect(
        clippy::too_many_arguments,
        reason = "one call site per form; a struct would only rename them"
    )]
    async fn act(
        &self,
        call: &Call<'_>,
        session: &Session,
        access: &ProjectAccess,
        method: Method,
        rest: &str,
        body: Value,
        then: &str,
    ) -> Page {
        let (code, answer) = self.operation(call, access, method, rest, body).await;
        if code.is_success() {
            redirect(then)
        } else {
            self.failure(session, code, &answer)
        }
    }

    /// Runs a management operation as the signed-in person.
    async fn operation(
        &self,
        call: &Call<'_>,
        access: &ProjectAccess,
        method: Method,
        rest: &str,
        body: Value,
    ) -> (StatusCode, Value) {
        let request = ApiRequest {
            method: &method,
            rest,
            query: Vec::new(),
            body,
            access: access.clone(),
            origin: call.origin.clone(),
        };
        api::call(call.service, request).await
    }

    fn failure(&self, session: &Session, status: StatusCode, answer: &Value) -> Page {
        let id = if status == StatusCode::FORBIDDEN {
            "forbidden"
        } else {
            "failure"
        };
        message(
            Some(session),
            status,
            id,
            "That did not work",
            &error_text(answer),
        )
    }

    fn sign_in_form(&self, call: &Call<'_>, error: Option<String>) -> Page {
        let csrf = cookie(&call.headers, CSRF_COOKIE)
            .filter(|value| value.len() == 32)
            .or_else(|| random_hex(16).ok())
            .unwrap_or_default();
        let mut page = render(
            if error.is_some() {
                StatusCode::UNAUTHORIZED
            } else {
                StatusCode::OK
            },
            &SignIn {
                user: None,
                project: None,
                notice: None,
                error,
                csrf: csrf.clone(),
            },
        );
        if let Ok(value) = HeaderValue::from_str(&set_cookie(CSRF_COOKIE, &csrf, SIGN_IN_WINDOW, call.secure))
        {
            page.headers_mut().append(http::header::SET_COOKIE, value);
        }
        page
    }

    async fn sign_in(&self, call: &Call<'_>) -> Page {
        let expected = cookie(&call.headers, CSRF_COOKIE);
        if expected.is_none() || call.field("csrf").map(str::to_owned) != expected {
            return self.sign_in_form(
                call,
                Some("The sign-in form expired; please try again.".to_owned()),
            );
        }
        let token = call.field("token").unwrap_or("").trim().to_owned();
        let Some(credentials) = Credentials::from_token(&token).filter(|_| !token.is_empty()) else {
            return self.sign_in_form(call, Some("Enter a personal access token.".to_owned()));
        };
        let username = match call.service.access.user(&credentials).await {
            Ok((username, _)) => username,
            Err(crate::access::AccessError::Backend(_)) => {
                return self.sign_in_form(
                    call,
                    Some("The svc server could not be asked; try again shortly.".to_owned()),
                )
            }
            Err(_) => {
                return self.sign_in_form(call, Some("The svc server did not accept this token.".to_owned()))
            }
        };
        let Some(id) = self.sessions.open(token, username) else {
            return self.sign_in_form(call, Some("The session could not be opened.".to_owned()));
        };
        let mut page = redirect("/-/svcgate/projects");
        if let Ok(value) = HeaderValue::from_str(&set_cookie(COOKIE, &id, self.sessions.ttl(), call.secure)) {
            page.headers_mut().append(http::header::SET_COOKIE, value);
        }
        page
    }

    fn sign_out(&self, call: &Call<'_>) -> Page {
        self.sessions.close(&call.headers);
        let mut page = redirect("/-/svcgate/sign_in");
        if let Ok(value) = HeaderValue::from_str(&set_cookie(COOKIE, "", Duration::ZERO, call.secure)) {
            page.headers_mut().append(http::header::SET_COOKIE, value);
        }
        page
    }

    async fn v3_usage(&self, call: &Call<'_>, session: &Session, as_csv: bool) -> Page {
        let admin = match Credentials::from_token(&session.token) {
            Some(credentials) => matches!(call.service.access.user(&credentials).await, Ok((_, true))),
            None => false,
        };
        if !admin {
            return message(
                Some(session),
                StatusCode::FORBIDDEN,
                "forbidden",
                "Not allowed",
                "V3 usage is for administrators of the svc server.",
            );
        }
        let rows = match call.usage.report().await {
            Ok(rows) => rows,
            Err(_) => {
                return message(
                    Some(session),
                    StatusCode::SERVICE_UNAVAILABLE,
                    "failure",
                    "Not available",
                    "The store could not be read.",
                )
            }
        };
        let routes = crate::usage::by_route(
            rows,
            call.query("sort").unwrap_or("calls"),
            time::OffsetDateTime::now_utc(),
        );
        if as_csv {
            return match crate::usage::csv(&routes) {
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
                Err(_) => message(
                    Some(session),
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "failure",
                    "Not available",
                    "The CSV could not be written.",
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
        let Some(credentials) = Credentials::from_token(&session.token) else {
            return redirect("/-/svcgate/sign_in");
        };
        let projects = match call.service.access.projects(&credentials).await {
            Ok(projects) => projects,
            Err(error) => {
                let failure = api::access_failure(&error);
                return message(
                    Some(session),
                    failure.status,
                    "failure",
                    "Not available",
                    &failure.message,
                );
            }
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
        if access.role < Role::Developer {
            return message(
                Some(session),
                StatusCode::FORBIDDEN,
                "forbidden",
                "Not allowed",
                "Alerts need the Developer role on this project.",
            );
        }
        let lookup = |name: &str| {
            call.query(name)
                .filter(|value| !value.is_empty())
                .map(str::to_owned)
        };
        let query = match alert_query(access.project_id, &lookup, "open") {
            Ok(query) => query,
            Err(text) => {
                return message(
                    Some(session),
                    StatusCode::BAD_REQUEST,
                    "failure",
                    "Cannot list alerts",
                    &text,
                )
            }
        };
        let (page, per_page) = (query.page, query.per_page);
        let result = match call.service.store.alerts(query).await {
            Ok(result) => result,
            Err(_) => {
                return message(
                    Some(session),
                    StatusCode::SERVICE_UNAVAILABLE,
                    "failure",
                    "Not available",
                    "The store could not be read.",
                )
            }
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
        let link = |status: &str, page: u64| {
            let mut pairs = vec![("status".to_owned(), status.to_owned())];
            if !search.is_empty() {
                pairs.push(("search".to_owned(), search.clone()));
            }
            pairs.push(("sort".to_owned(), sort.clone()));
            if page > 1 {
                pairs.push(("page".to_owned(), page.to_string()));
            }
            format!("{base}/alerts?{}", encode_pairs(&pairs))
        };
        let tabs = [
            ("open", "Open", count("triggered") + count("acknowledged")),
            ("triggered", "Triggered", count("triggered")),
            ("acknowledged", "Acknowledged", count("acknowledged")),
            ("resolved", "Resolved", count("resolved")),
            ("all", "All", result.counts.values().sum()),
        ]
        .into_iter()
        .map(|(value, label, count)| Tab {
            status: value,
            label,
            count,
            href: link(value, 1),
            current: value == status,
        })
        .collect();
        let pages = result.total.div_ceil(per_page).max(1);
        let opsgenie = call
            .service
            .registry
            .of_project(access.project_id)
            .into_iter()
            .find(|integration| integration.kind == Kind::Opsgenie && integration.record.active)
            .and_then(|integration| integration.record.api_url.clone());
        render(
            StatusCode::OK,
            &Alerts {
                user: user_view(session),
                project: Some(project_view(access, base)),
                notice: None,
                error: None,
                project_path: access.project_path.clone(),
                opsgenie,
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
                rows: result.alerts.iter().map(|alert| alert_row(alert, base)).collect(),
                settings_href: format!("{base}/settings/operations"),
                page,
                pages,
                previous: (page > 1).then(|| link(&status, page - 1)),
                next: (page < pages).then(|| link(&status, page + 1)),
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
        let (code, alert) = self
            .operation(call, access, Method::GET, &format!("alerts/{iid}"), Value::Null)
            .await;
        if !code.is_success() {
            return self.failure(session, code, &alert);
        }
        let text = |name: &str| alert.get(name).and_then(Value::as_str).unwrap_or("").to_owned();
        let severity = text("severity");
        let (icon, severity_label) = severity_view(&severity);
        let payload = alert.get("payload").cloned().unwrap_or(Value::Null);
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
        let custom = payload
            .as_object()
            .map(|fields| {
                fields
                    .iter()
                    .filter(|(key, _)| !known.contains(&key.as_str()))
                    .map(|(key, value)| (key.clone(), value.to_string()))
                    .collect()
            })
            .unwrap_or_default();
        let calls = alert["incident"]["calls"]
            .as_array()
            .map(|calls| {
                calls
                    .iter()
                    .map(|call| {
                        let kind = if call["kind"] == json!("create_incident") {
                            "Open the incident"
                        } else {
                            "Close the incident"
                        };
                        match call["state"].as_str() {
                            Some("done") => format!("{kind}: done"),
                            _ => format!(
                                "{kind}: pending after {} attempt(s){}",
                                call["attempts"],
                                call["last_error"]
                                    .as_str()
                                    .map(|error| format!(" (last error: {error})"))
                                    .unwrap_or_default()
                            ),
                        }
                    })
                    .collect()
            })
            .unwrap_or_default();
        render(
            StatusCode::OK,
            &AlertPage {
                user: user_view(session),
                project: Some(project_view(access, base)),
                notice: notice_text(call.query("notice")),
                error: None,
                list_href: format!("{base}/alerts"),
                iid: alert["iid"].as_u64().unwrap_or(0),
                title: text("title"),
                status: text("status"),
                severity,
                severity_label,
                icon,
                events: alert["events"].as_u64().unwrap_or(0),
                started_at: text("started_at"),
                ended_at: text("ended_at"),
                last_event_at: text("last_event_at"),
                description: text("description"),
                service: text("service"),
                monitoring_tool: text("monitoring_tool"),
                hosts: alert["hosts"]
                    .as_array()
                    .map(|hosts| {
                        hosts
                            .iter()
                            .filter_map(Value::as_str)
                            .collect::<Vec<_>>()
                            .join(", ")
                    })
                    .unwrap_or_default(),
                environment: text("environment"),
                fingerprint: text("fingerprint"),
                custom,
                payload: serde_json::to_string_pretty(&payload).unwrap_or_default(),
                status_action: format!("{base}/alerts/{iid}/status"),
                csrf: session.csrf.clone(),
                statuses: api::STATUSES.iter().map(|status| (*status).to_owned()).collect(),
                incident_link: alert["incident"]["url"].as_str().map(str::to_owned),
                incident_iid: alert["incident_iid"]
                    .as_u64()
                    .map(|iid| iid.to_string())
                    .unwrap_or_default(),
                calls,
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
        let (notice, error) = match flash {
            Flash::FromQuery => (notice_text(call.query("notice")), None),
            Flash::Notice(text) => (Some(text), None),
            Flash::Error(text) => (None, Some(text)),
        };
        let settings_base = format!("{base}/settings/operations");
        let integrations: Vec<IntegrationRow> = call
            .service
            .registry
            .of_project(access.project_id)
            .iter()
            .map(|integration| IntegrationRow {
                id: integration.record.id,
                name: integration.record.name.clone(),
                type_name: integration.kind.label().to_owned(),
                status: if integration.record.active {
                    "enabled"
                } else {
                    "disabled"
                }
                .to_owned(),
                href: format!("{settings_base}/integrations/{}", integration.record.id),
            })
            .collect();
        let receiving = call
            .service
            .registry
            .of_project(access.project_id)
            .iter()
            .filter(|integration| integration.kind != Kind::Opsgenie && integration.record.active)
            .map(|integration| IntegrationRow {
                id: integration.record.id,
                name: integration.record.name.clone(),
                type_name: integration.kind.label().to_owned(),
                status: "enabled".to_owned(),
                href: String::new(),
            })
            .collect();
        let incident = call
            .service
            .store
            .alert_settings(access.project_id)
            .await
            .unwrap_or_default();
        let mut form = form;
        if form.kind.is_empty() {
            form.kind = "http".to_owned();
        }
        render(
            if error.is_some() {
                StatusCode::BAD_REQUEST
            } else {
                StatusCode::OK
            },
            &Settings {
                user: user_view(session),
                project: Some(project_view(access, base)),
                notice,
                error,
                base: settings_base,
                csrf: session.csrf.clone(),
                integrations,
                receiving,
                types: [
                    ("http", "HTTP Endpoint"),
                    ("generic", "Generic"),
                    ("prometheus", "Prometheus"),
                    ("opsgenie", "Opsgenie"),
                ]
                .iter()
                .map(|(value, label)| ((*value).to_owned(), (*label).to_owned()))
                .collect(),
                form,
                test_payload: if test_payload.is_empty() {
                    "{\n  \"title\": \"Test alert\",\n  \"severity\": \"low\"\n}".to_owned()
                } else {
                    test_payload
                },
                create_incident: incident.create_incident,
                auto_close_incident: incident.auto_close_incident,
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
        let mut body = Map::new();
        body.insert("type".to_owned(), Value::from(form.kind.clone()));
        body.insert("active".to_owned(), Value::Bool(form.active));
        if !form.name.is_empty() {
            body.insert("name".to_owned(), Value::from(form.name.clone()));
        }
        if !form.payload_example.trim().is_empty() {
            if serde_json::from_str::<Value>(&form.payload_example).is_err() {
                return self
                    .settings(
                        call,
                        session,
                        access,
                        base,
                        Flash::Error("The sample payload is not valid JSON; nothing was saved.".to_owned()),
                        form,
                        String::new(),
                    )
                    .await;
            }
            body.insert(
                "payload_example".to_owned(),
                Value::from(form.payload_example.clone()),
            );
        }
        if !form.api_url.is_empty() {
            body.insert("api_url".to_owned(), Value::from(form.api_url.clone()));
        }
        let (code, created) = self
            .operation(call, access, Method::POST, "integrations", Value::Object(body))
            .await;
        if !code.is_success() {
            return self
                .settings(
                    call,
                    session,
                    access,
                    base,
                    Flash::Error(error_text(&created)),
                    form,
                    String::new(),
                )
                .await;
        }
        let settings = format!("{base}/settings/operations");
        if call.field("action") != Some("save_and_test") {
            return redirect(&format!("{settings}?notice=saved"));
        }
        let id = created["id"].as_u64().unwrap_or(0);
        let (code, tested) = self
            .operation(
                call,
                access,
                Method::POST,
                &format!("integrations/{id}/test"),
                Value::Null,
            )
            .await;
        if code.is_success() {
            redirect(&format!("{settings}?notice=tested"))
        } else {
            let error = format!(
                "The integration was saved, but the test alert failed: {}",
                error_text(&tested)
            );
            self.settings(
                call,
                session,
                access,
                base,
                Flash::Error(error),
                IntegrationForm::default(),
                String::new(),
            )
            .await
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
        let (code, answer) = self
            .operation(
                call,
                access,
                Method::POST,
                &format!("integrations/{id}/test"),
                Value::from(payload.clone()),
            )
            .await;
        // The page is shown in place (no redirect), so the tested payload stays in the box.
        let flash = if code.is_success() {
            Flash::Notice("The test alert was received.".to_owned())
        } else {
            Flash::Error(format!("The test alert was refused: {}", error_text(&answer)))
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
    ) -> Page {
        self.integration_page_with(call, session, access, base, id, None)
            .await
    }

    async fn integration_page_with(
        &self,
        call: &Call<'_>,
        session: &Session,
        access: &ProjectAccess,
        base: &str,
        id: &str,
        error: Option<String>,
    ) -> Page {
        let (code, integration) = self
            .operation(
                call,
                access,
                Method::GET,
                &format!("integrations/{id}"),
                Value::Null,
            )
            .await;
        if !code.is_success() {
            return self.failure(session, code, &integration);
        }
        let text = |name: &str| {
            integration
                .get(name)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        };
        let kind = text("type");
        let settings = format!("{base}/settings/operations");
        render(
            if error.is_some() {
                StatusCode::BAD_REQUEST
            } else {
                StatusCode::OK
            },
            &IntegrationPage {
                user: user_view(session),
                project: Some(project_view(access, base)),
                notice: if error.is_some() {
                    None
                } else {
                    notice_text(call.query("notice"))
                },
                error,
                settings_href: settings.clone(),
                name: text("name"),
                type_name: text("type_name"),
                url: integration.get("url").and_then(Value::as_str).map(str::to_owned),
                key: text("token"),
                receives: kind != "opsgenie",
                active: integration["active"] == json!(true),
                is_http: kind == "http",
                is_opsgenie: kind == "opsgenie",
                payload_example: integration
                    .get("payload_example")
                    .filter(|value| !value.is_null())
                    .map(|value| serde_json::to_string_pretty(value).unwrap_or_default())
                    .unwrap_or_default(),
                api_url: text("api_url"),
                edit_action: format!("{settings}/integrations/{id}"),
                delete_action: format!("{settings}/integrations/{id}/delete"),
                reset_href: format!("{settings}/integrations/{id}/reset_token"),
                csrf: session.csrf.clone(),
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
        if access.role < Role::Developer {
            return message(
                Some(session),
                StatusCode::FORBIDDEN,
                "forbidden",
                "Not allowed",
                "Alerts need the Developer role on this project.",
            );
        }
        let alerts = call
            .service
            .store
            .alerts_by_environment(access.project_id)
            .await
            .unwrap_or_default();
        let mut groups: Vec<EnvironmentGroup> = Vec::new();
        for alert in &alerts {
            let name = alert.environment.clone().unwrap_or_default();
            let row = alert_row(alert, base);
            match groups.iter_mut().find(|group| group.name == name) {
                Some(group) => group.rows.push(row),
                None => groups.push(EnvironmentGroup {
                    name,
                    rows: vec![row],
                }),
            }
        }
        render(
            StatusCode::OK,
            &Environments {
                user: user_view(session),
                project: Some(project_view(access, base)),
                notice: None,
                error: None,
                groups,
                environment_field: crate::alerts::normalized::Attribute::EnvironmentName.key(),
            },
        )
    }
}

fn project_view(access: &ProjectAccess, base: &str) -> ProjectView {
    ProjectView {
        path: access.project_path.clone(),
        base: base.to_owned(),
    }
}

fn error_text(answer: &Value) -> String {
    answer
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("the operation failed")
        .to_owned()
}

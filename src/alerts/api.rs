//! The management JSON API of alert integrations and alerts (section 8 of the alert contract), under
//! `/-/svcgate/api/projects/:project/…`: HTTP in and out around [`super::manage`].
//!
//! A request is read (its body at most [`MAX_BODY_BYTES`]), its caller's standing on the project asked of the
//! backend (through [`AccessChecker`](crate::backend::access::AccessChecker), cached), its body read into the operation's
//! typed input, and the operation's typed result written out as JSON by a `Serialize` struct below.
//! [`error_response`] is the one place where a [`ManageError`] becomes an answer. A body's field types are checked
//! here, before the operation checks the caller's role, as the service's own API validates parameters first.

use std::sync::Arc;

use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use serde::Serialize;
use serde_json::{json, Map, Value};

use super::apply::AnswerEntry;
use super::integrations::Integration;
use super::manage::{
    self, AlertDetail, AlertListParams, EnvironmentAlerts, IntegrationFields, ManageError, NewIntegration,
    SettingsChanges,
};
use super::AlertService;
use crate::backend::access::{Credentials, ProjectAccess};
use crate::http::body::{json_response, Body};
use crate::store::{AlertRecord, AlertSettings, OutboxState};
use crate::util::url_parts::decode;

/// The prefix of the alert management API.
pub const PREFIX: &str = "/-/svcgate/api/projects/";

/// The largest body a management request may have (1 MiB).
pub const MAX_BODY_BYTES: usize = 1 << 20;

type Answer = Response<Body>;

/// The answer for a failed management request: `{"message": …}` with the error's status. A refused test alert
/// also carries the intake's `error` code.
pub fn error_response(error: &ManageError) -> Answer {
    error.log();
    let body = match error {
        ManageError::TestRefused(refused) => json!({"message": refused.to_string(), "error": refused.code()}),
        other => json!({"message": other.message()}),
    };
    json_response(error.status(), &body)
}

/// Splits `/-/svcgate/api/projects/:project/rest` into the decoded project and the rest.
pub fn split_path(path: &str) -> Option<(String, &str)> {
    let after = path.strip_prefix(PREFIX)?;
    let (project, rest) = after.split_once('/').unwrap_or((after, ""));
    (!project.is_empty()).then(|| (decode(project), rest))
}

/// Reads a management request's JSON body: `Null` when it is empty.
pub async fn read_body(incoming: Incoming) -> Result<Value, ManageError> {
    let bytes = Limited::new(incoming, MAX_BODY_BYTES)
        .collect()
        .await
        .map_err(|_| ManageError::TooLarge)?
        .to_bytes();
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Value::Null);
    }
    crate::util::plain_value::from_slice(&bytes)
        .map_err(|error| ManageError::invalid(format!("the body is not valid JSON: {error}")))
}

/// Answers one management request; `origin` is the gateway's base URL for receiving addresses.
pub async fn handle(service: &AlertService, request: Request<Incoming>, origin: String) -> Answer {
    let (parts, incoming) = request.into_parts();
    let answer = async {
        let body = read_body(incoming).await?;
        let (project, rest) = split_path(parts.uri.path()).ok_or(ManageError::NoRoute)?;
        let credentials = Credentials::from_headers(&parts.headers).ok_or(ManageError::Unauthenticated)?;
        let access = service.access.project(&credentials, &project).await?;
        let query = crate::util::url_parts::parse_pairs(parts.uri.query().unwrap_or("").as_bytes());
        let request = ApiRequest {
            rest: rest.trim_end_matches('/'),
            query,
            body,
            access,
            origin,
        };
        route(service, &parts.method, &request).await
    };
    answer.await.unwrap_or_else(|error| error_response(&error))
}

/// The request in hand: about which project, with which body, from whom.
struct ApiRequest<'a> {
    /// The path after the project segment (`integrations/3`).
    rest: &'a str,
    /// Query pairs.
    query: Vec<(String, String)>,
    /// The parsed JSON body (`Null` when none).
    body: Value,
    /// The caller's standing on the project.
    access: ProjectAccess,
    /// The gateway's base URL for addresses.
    origin: String,
}

async fn route(
    service: &AlertService,
    method: &Method,
    request: &ApiRequest<'_>,
) -> Result<Answer, ManageError> {
    let access = &request.access;
    let segments: Vec<&str> = request.rest.split('/').collect();
    match (method, segments.as_slice()) {
        (&Method::GET, ["integrations"]) => {
            let list = manage::integrations(service, access)?;
            let shown: Vec<IntegrationJson<'_>> = list
                .iter()
                .map(|integration| IntegrationJson::of(integration, &request.origin, false))
                .collect();
            ok(&shown)
        }
        (&Method::POST, ["integrations"]) => {
            let body = object(&request.body)?;
            let new = NewIntegration {
                kind: NewIntegration::kind_of(text_field(body, "type")?.as_deref())?,
                fields: integration_fields(body)?,
            };
            let created = manage::create_integration(service, access, new).await?;
            Ok(json_response(
                StatusCode::CREATED,
                &IntegrationJson::of(&created, &request.origin, true),
            ))
        }
        (&Method::GET, ["integrations", id]) => {
            let integration = manage::integration(service, access, integration_id(id)?)?;
            ok(&IntegrationJson::of(&integration, &request.origin, true))
        }
        (&Method::PUT, ["integrations", id]) => {
            let fields = integration_fields(object(&request.body)?)?;
            let updated = manage::update_integration(service, access, integration_id(id)?, fields).await?;
            ok(&IntegrationJson::of(&updated, &request.origin, true))
        }
        (&Method::DELETE, ["integrations", id]) => {
            manage::delete_integration(service, access, integration_id(id)?).await?;
            let mut answer = Response::new(crate::http::body::empty());
            *answer.status_mut() = StatusCode::NO_CONTENT;
            Ok(answer)
        }
        (&Method::POST, ["integrations", id, "reset_token"]) => {
            let updated = manage::reset_key(service, access, integration_id(id)?).await?;
            ok(&IntegrationJson::of(&updated, &request.origin, true))
        }
        (&Method::POST, ["integrations", id, "test"]) => {
            let payload = match &request.body {
                Value::Null => None,
                Value::String(text) => Some(text.clone()),
                other => Some(other.to_string()),
            };
            let entries = manage::test_alert(service, access, integration_id(id)?, payload).await?;
            ok(&TestJson {
                message: "The test alert was received.",
                alerts: &entries,
            })
        }
        (&Method::GET, ["alerts"]) => list_alerts(service, request).await,
        (&Method::GET, ["alerts", iid]) => {
            let iid = iid.parse::<u64>().map_err(|_| ManageError::AlertNotFound)?;
            let detail = manage::alert(service, access, iid).await?;
            ok(&AlertDetailJson::of(&detail))
        }
        (&Method::PUT, ["alerts", iid]) => {
            let status = request.body.get("status").and_then(Value::as_str);
            let changed = manage::change_status(service, access, iid.parse::<u64>().ok(), status).await?;
            ok(&AlertJson::of(&changed))
        }
        (&Method::GET, ["alert_settings"]) => ok(&SettingsJson::of(
            manage::incident_settings(service, access).await?,
        )),
        (&Method::PUT, ["alert_settings"]) => {
            let changes = SettingsChanges {
                create_incident: flag(request.body.get("create_incident"), "create_incident")?,
                auto_close_incident: flag(request.body.get("auto_close_incident"), "auto_close_incident")?,
            };
            let settings = manage::update_incident_settings(service, access, changes).await?;
            ok(&SettingsJson::of(settings))
        }
        (&Method::GET, ["environments"]) => {
            let groups = manage::environments(service, access).await?;
            let shown: Vec<EnvironmentJson<'_>> = groups.iter().map(EnvironmentJson::of).collect();
            ok(&shown)
        }
        _ => Err(ManageError::NoRoute),
    }
}

/// A 200 answer with `value` as its JSON body.
fn ok<T: Serialize>(value: &T) -> Result<Answer, ManageError> {
    Ok(json_response(StatusCode::OK, value))
}

fn integration_id(id: &str) -> Result<u64, ManageError> {
    id.parse::<u64>().map_err(|_| ManageError::IntegrationNotFound)
}

fn object(body: &Value) -> Result<&Map<String, Value>, ManageError> {
    body.as_object()
        .ok_or_else(|| ManageError::invalid("the body must be a JSON object"))
}

fn text_field(body: &Map<String, Value>, name: &str) -> Result<Option<String>, ManageError> {
    match body.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.trim().to_owned())),
        Some(_) => Err(ManageError::invalid(format!("\"{name}\" must be a string"))),
    }
}

fn flag(value: Option<&Value>, name: &str) -> Result<Option<bool>, ManageError> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(flag)) => Ok(Some(*flag)),
        Some(_) => Err(ManageError::invalid(format!("\"{name}\" must be true or false"))),
    }
}

/// The fields of a create or update body; a sample payload may be given as JSON text or as JSON itself.
fn integration_fields(body: &Map<String, Value>) -> Result<IntegrationFields, ManageError> {
    let present = |name: &str| body.get(name).filter(|value| !value.is_null());
    Ok(IntegrationFields {
        name: text_field(body, "name")?,
        active: flag(body.get("active"), "active")?,
        api_url: text_field(body, "api_url")?,
        payload_example: present("payload_example").map(|example| match example {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        }),
        payload_attribute_mapping: present("payload_attribute_mapping").cloned(),
        payload_format: text_field(body, "payload_format")?,
    })
}

async fn list_alerts(service: &AlertService, request: &ApiRequest<'_>) -> Result<Answer, ManageError> {
    let params = AlertListParams::from_pairs(&request.query);
    let query = manage::alert_query(request.access.project_id, &params, "all")?;
    let (page, per_page) = (query.page, query.per_page);
    let result = manage::alerts(service, &request.access, query).await?;
    let total_pages = result.total.div_ceil(per_page).max(1);
    let shown: Vec<AlertJson<'_>> = result.alerts.iter().map(AlertJson::of).collect();
    let mut answer = json_response(StatusCode::OK, &shown);
    let count = |status: &str| result.counts.get(status).copied().unwrap_or(0);
    let page_or_empty = |present: bool, page: u64| if present { page.to_string() } else { String::new() };
    let headers = [
        ("x-total", result.total.to_string()),
        ("x-total-pages", total_pages.to_string()),
        ("x-page", page.to_string()),
        ("x-per-page", per_page.to_string()),
        ("x-next-page", page_or_empty(page < total_pages, page + 1)),
        ("x-prev-page", page_or_empty(page > 1, page.saturating_sub(1))),
        (
            "x-count-open",
            (count("triggered") + count("acknowledged")).to_string(),
        ),
        ("x-count-triggered", count("triggered").to_string()),
        ("x-count-acknowledged", count("acknowledged").to_string()),
        ("x-count-resolved", count("resolved").to_string()),
        ("x-count-ignored", count("ignored").to_string()),
        ("x-count-all", result.counts.values().sum::<u64>().to_string()),
    ];
    for (name, value) in headers {
        if let Ok(value) = http::HeaderValue::from_str(&value) {
            answer.headers_mut().insert(name, value);
        }
    }
    Ok(answer)
}

/// Reads stored JSON text back as a value for an answer (`null` when absent or unreadable).
fn stored_json(text: Option<&str>) -> Option<Value> {
    text.and_then(|text| serde_json::from_str::<Value>(text).ok())
}

/// An integration as the API shows it; the address and key only when asked for and active.
#[derive(Serialize)]
struct IntegrationJson<'a> {
    id: u64,
    project_id: u64,
    #[serde(rename = "type")]
    kind: &'static str,
    type_name: &'static str,
    name: &'a str,
    active: bool,
    status: &'static str,
    endpoint_identifier: Option<&'a str>,
    api_url: Option<&'a str>,
    payload_example: Option<Value>,
    payload_attribute_mapping: Option<Value>,
    payload_format: Option<&'a str>,
    created_at: &'a str,
    updated_at: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    token: Option<&'a str>,
}

impl<'a> IntegrationJson<'a> {
    fn of(integration: &'a Arc<Integration>, origin: &str, with_secrets: bool) -> Self {
        let record = &integration.record;
        let address = (with_secrets && record.active)
            .then(|| integration.path())
            .flatten();
        IntegrationJson {
            id: record.id,
            project_id: record.project_id,
            kind: integration.kind.as_str(),
            type_name: integration.kind.label(),
            name: &record.name,
            active: record.active,
            status: if record.active { "enabled" } else { "disabled" },
            endpoint_identifier: record.endpoint_identifier.as_deref(),
            api_url: record.api_url.as_deref(),
            payload_example: stored_json(record.payload_example.as_deref()),
            payload_attribute_mapping: stored_json(record.payload_attribute_mapping.as_deref()),
            payload_format: integration.payload_format(),
            created_at: &record.created_at,
            updated_at: &record.updated_at,
            token: address.as_ref().map(|_| integration.token()),
            url: address.map(|path| format!("{origin}{path}")),
        }
    }
}

/// An alert as the API shows it.
#[derive(Serialize)]
struct AlertJson<'a> {
    iid: u64,
    title: &'a str,
    description: Option<&'a str>,
    severity: &'a str,
    status: &'a str,
    started_at: &'a str,
    ended_at: Option<&'a str>,
    events: u64,
    last_event_at: &'a str,
    service: Option<&'a str>,
    monitoring_tool: Option<&'a str>,
    hosts: Value,
    environment: Option<&'a str>,
    fingerprint: Option<&'a str>,
    integration_id: Option<u64>,
    incident_iid: Option<u64>,
    created_at: &'a str,
    updated_at: &'a str,
}

impl<'a> AlertJson<'a> {
    fn of(alert: &'a AlertRecord) -> Self {
        AlertJson {
            iid: alert.iid,
            title: &alert.title,
            description: alert.description.as_deref(),
            severity: &alert.severity,
            status: &alert.status,
            started_at: &alert.started_at,
            ended_at: alert.ended_at.as_deref(),
            events: alert.events,
            last_event_at: &alert.last_event_at,
            service: alert.service.as_deref(),
            monitoring_tool: alert.monitoring_tool.as_deref(),
            hosts: stored_json(Some(&alert.hosts_json)).unwrap_or(Value::Array(Vec::new())),
            environment: alert.environment.as_deref(),
            fingerprint: alert.fingerprint.as_deref(),
            integration_id: alert.integration_id,
            incident_iid: alert.incident_iid,
            created_at: &alert.created_at,
            updated_at: &alert.updated_at,
        }
    }
}

/// An alert with its payload and incident.
#[derive(Serialize)]
struct AlertDetailJson<'a> {
    #[serde(flatten)]
    alert: AlertJson<'a>,
    payload: &'a Value,
    incident: IncidentJson<'a>,
    /// The integration that received it, deleted or not (`null` when it is unknown).
    integration: Option<ReceivedByJson<'a>>,
}

/// The integration an alert came through.
#[derive(Serialize)]
struct ReceivedByJson<'a> {
    id: u64,
    name: &'a str,
    #[serde(rename = "type")]
    kind: &'a str,
    deleted: bool,
}

/// The incident of an alert and the outbox's calls for it.
#[derive(Serialize)]
struct IncidentJson<'a> {
    iid: Option<u64>,
    url: Option<&'a str>,
    calls: Vec<CallJson<'a>>,
}

/// One incident call of the outbox.
#[derive(Serialize)]
struct CallJson<'a> {
    kind: &'a str,
    attempts: u64,
    state: &'static str,
    last_error: Option<&'a str>,
    done_at: Option<&'a str>,
    next_attempt_at: &'a str,
}

impl<'a> CallJson<'a> {
    fn of(call: &'a OutboxState) -> Self {
        CallJson {
            kind: &call.kind,
            attempts: call.attempts,
            state: if call.done_at.is_some() { "done" } else { "pending" },
            last_error: call.last_error.as_deref(),
            done_at: call.done_at.as_deref(),
            next_attempt_at: &call.next_attempt_at,
        }
    }
}

impl<'a> AlertDetailJson<'a> {
    fn of(detail: &'a AlertDetail) -> Self {
        AlertDetailJson {
            alert: AlertJson::of(&detail.alert),
            payload: &detail.payload,
            incident: IncidentJson {
                iid: detail.alert.incident_iid,
                url: detail.incident_url.as_deref(),
                calls: detail.calls.iter().map(CallJson::of).collect(),
            },
            integration: detail.integration.as_ref().map(|(id, named)| ReceivedByJson {
                id: *id,
                name: &named.name,
                kind: &named.kind,
                deleted: named.deleted,
            }),
        }
    }
}

/// A project's incident settings.
#[derive(Serialize)]
struct SettingsJson {
    create_incident: bool,
    auto_close_incident: bool,
}

impl SettingsJson {
    fn of(settings: AlertSettings) -> Self {
        SettingsJson {
            create_incident: settings.create_incident,
            auto_close_incident: settings.auto_close_incident,
        }
    }
}

/// The open alerts of one environment.
#[derive(Serialize)]
struct EnvironmentJson<'a> {
    environment: &'a str,
    open_alerts: Vec<AlertJson<'a>>,
}

impl<'a> EnvironmentJson<'a> {
    fn of(group: &'a EnvironmentAlerts) -> Self {
        EnvironmentJson {
            environment: &group.name,
            open_alerts: group.alerts.iter().map(AlertJson::of).collect(),
        }
    }
}

/// The answer to a test alert that was taken in.
#[derive(Serialize)]
struct TestJson<'a> {
    message: &'static str,
    alerts: &'a [AnswerEntry],
}

//! The management JSON API of alert integrations and alerts (section 8 of the alert contract), under
//! `/-/svcgate/api/projects/:project/…`.
//!
//! Every route asks the backend who the caller is and what they may do on the project (through
//! [`AccessChecker`](crate::access::AccessChecker), cached), and enforces the role of the contract's table:
//! Maintainer for integrations and incident settings, Developer for alerts and test alerts.

use std::sync::Arc;

use http::{HeaderMap, Method, Response, StatusCode};
use serde_json::{json, Map, Value};

use super::integrations::{Integration, Kind};
use super::mapping::AttributeMapping;
use super::AlertService;
use crate::access::{AccessError, Credentials, ProjectAccess, Role};
use crate::body::{error_response, json_response, Body};
use crate::config::Edition;
use crate::secret::random_hex;
use crate::store::{AlertQuery, AlertRecord, AlertSettings, IntegrationRecord, StoreError};
use crate::time_format::format_time;
use crate::url_parts::decode;

/// The prefix of the alert management API.
pub const PREFIX: &str = "/-/svcgate/api/projects/";

/// The largest page of alerts.
const MAX_PER_PAGE: u64 = 100;

type Answer = Response<Body>;

/// Why a management operation was refused: a status and a message for people.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The HTTP status the API answers with.
    pub status: StatusCode,
    /// What went wrong, for the API's `message` and the pages' error line.
    pub message: String,
}

impl From<Failure> for Answer {
    fn from(failure: Failure) -> Answer {
        error_response(failure.status, &failure.message)
    }
}

fn fail(status: StatusCode, message: &str) -> Failure {
    Failure {
        status,
        message: message.to_owned(),
    }
}

fn forbidden() -> Failure {
    fail(StatusCode::FORBIDDEN, "403 Forbidden")
}

/// The failure for an access error.
pub fn access_failure(error: &AccessError) -> Failure {
    match error {
        AccessError::Unauthenticated => fail(StatusCode::UNAUTHORIZED, "401 Unauthorized"),
        AccessError::ProjectNotFound => fail(StatusCode::NOT_FOUND, "404 Project Not Found"),
        AccessError::Backend(_) => fail(
            StatusCode::BAD_GATEWAY,
            "502 Bad Gateway: the backend could not be asked",
        ),
    }
}

fn store_error(error: &StoreError) -> Failure {
    tracing::error!(%error, "alert management: store failed");
    fail(
        StatusCode::SERVICE_UNAVAILABLE,
        "503 Service Unavailable: the store could not be used",
    )
}

/// Refuses callers below `role`.
pub fn require(access: &ProjectAccess, role: Role) -> Result<(), Failure> {
    if access.role >= role {
        Ok(())
    } else {
        Err(forbidden())
    }
}

/// The request in hand: who asks, about which project, with which body.
pub struct ApiRequest<'a> {
    /// Method.
    pub method: &'a Method,
    /// The path after the project segment (`/integrations/3`).
    pub rest: &'a str,
    /// Query pairs.
    pub query: Vec<(String, String)>,
    /// The parsed JSON body (`Null` when none).
    pub body: Value,
    /// The caller's standing on the project.
    pub access: ProjectAccess,
    /// The gateway's base URL for addresses.
    pub origin: String,
}

impl ApiRequest<'_> {
    fn query(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
            .filter(|value| !value.is_empty())
    }

    fn require(&self, role: Role) -> Result<(), Failure> {
        require(&self.access, role)
    }
}

/// Splits `/-/svcgate/api/projects/:project/rest` into the decoded project and the rest.
pub fn split_path(path: &str) -> Option<(String, &str)> {
    let after = path.strip_prefix(PREFIX)?;
    let (project, rest) = after.split_once('/').unwrap_or((after, ""));
    (!project.is_empty()).then(|| (decode(project), rest))
}

/// Answers one management request (the caller already identified).
pub async fn handle(
    service: &AlertService,
    method: &Method,
    path: &str,
    headers: &HeaderMap,
    query: Vec<(String, String)>,
    body: Value,
    origin: String,
) -> Answer {
    let Some((project, rest)) = split_path(path) else {
        return fail(StatusCode::NOT_FOUND, "404 Not Found").into();
    };
    let Some(credentials) = Credentials::from_headers(headers) else {
        return fail(StatusCode::UNAUTHORIZED, "401 Unauthorized").into();
    };
    let access = match service.access.project(&credentials, &project).await {
        Ok(access) => access,
        Err(error) => return access_failure(&error).into(),
    };
    let request = ApiRequest {
        method,
        rest: rest.trim_end_matches('/'),
        query,
        body,
        access,
        origin,
    };
    route(service, request).await.unwrap_or_else(Answer::from)
}

/// Runs one management operation for a caller whose access is known, answering its status and JSON body: the
/// pages use the same operations, role checks included, as the API.
pub async fn call(service: &AlertService, request: ApiRequest<'_>) -> (StatusCode, Value) {
    let answer = route(service, request).await.unwrap_or_else(Answer::from);
    let status = answer.status();
    (
        status,
        crate::body::read_json(answer).await.unwrap_or(Value::Null),
    )
}

async fn route(service: &AlertService, request: ApiRequest<'_>) -> Result<Answer, Failure> {
    let segments: Vec<&str> = request.rest.split('/').collect();
    match (request.method, segments.as_slice()) {
        (&Method::GET, ["integrations"]) => list_integrations(service, &request),
        (&Method::POST, ["integrations"]) => create_integration(service, &request).await,
        (&Method::GET, ["integrations", id]) => read_integration(service, &request, id),
        (&Method::PUT, ["integrations", id]) => update_integration(service, &request, id).await,
        (&Method::DELETE, ["integrations", id]) => delete_integration(service, &request, id).await,
        (&Method::POST, ["integrations", id, "reset_token"]) => reset_token(service, &request, id).await,
        (&Method::POST, ["integrations", id, "test"]) => test_alert(service, &request, id).await,
        (&Method::GET, ["alerts"]) => list_alerts(service, &request).await,
        (&Method::GET, ["alerts", iid]) => read_alert(service, &request, iid).await,
        (&Method::PUT, ["alerts", iid]) => update_alert(service, &request, iid).await,
        (&Method::GET, ["alert_settings"]) => read_settings(service, &request).await,
        (&Method::PUT, ["alert_settings"]) => update_settings(service, &request).await,
        (&Method::GET, ["environments"]) => environments(service, &request).await,
        _ => Err(fail(StatusCode::NOT_FOUND, "404 Not Found")),
    }
}

/// An integration as the API shows it; `with_secrets` adds the address and key (only when active).
pub fn integration_json(integration: &Integration, origin: &str, with_secrets: bool) -> Value {
    let record = &integration.record;
    let mut value = json!({
        "id": record.id,
        "project_id": record.project_id,
        "type": integration.kind.as_str(),
        "type_name": integration.kind.label(),
        "name": record.name,
        "active": record.active,
        "status": if record.active { "enabled" } else { "disabled" },
        "endpoint_identifier": record.endpoint_identifier,
        "api_url": record.api_url,
        "payload_example": record.payload_example.as_deref().and_then(|text| serde_json::from_str::<Value>(text).ok()),
        "payload_attribute_mapping": record.payload_attribute_mapping.as_deref().and_then(|text| serde_json::from_str::<Value>(text).ok()),
        "created_at": record.created_at,
        "updated_at": record.updated_at,
    });
    if with_secrets && record.active {
        if let Value::Object(fields) = &mut value {
            if let Some(path) = integration.path() {
                fields.insert("url".to_owned(), Value::from(format!("{origin}{path}")));
                fields.insert("token".to_owned(), Value::from(integration.token()));
            }
        }
    }
    value
}

fn find(service: &AlertService, request: &ApiRequest<'_>, id: &str) -> Result<Arc<Integration>, Failure> {
    id.parse::<u64>()
        .ok()
        .and_then(|id| service.registry.get(id))
        .filter(|integration| integration.record.project_id == request.access.project_id)
        .ok_or_else(|| fail(StatusCode::NOT_FOUND, "404 Integration Not Found"))
}

fn list_integrations(service: &AlertService, request: &ApiRequest<'_>) -> Result<Answer, Failure> {
    request.require(Role::Maintainer)?;
    let list: Vec<Value> = service
        .registry
        .of_project(request.access.project_id)
        .iter()
        .map(|integration| integration_json(integration, &request.origin, false))
        .collect();
    Ok(json_response(StatusCode::OK, &Value::Array(list)))
}

fn read_integration(service: &AlertService, request: &ApiRequest<'_>, id: &str) -> Result<Answer, Failure> {
    request.require(Role::Maintainer)?;
    let integration = find(service, request, id)?;
    Ok(json_response(
        StatusCode::OK,
        &integration_json(&integration, &request.origin, true),
    ))
}

fn text_field(body: &Map<String, Value>, name: &str) -> Result<Option<String>, Failure> {
    match body.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.trim().to_owned())),
        Some(_) => Err(fail(
            StatusCode::BAD_REQUEST,
            &format!("400 (Bad request) \"{name}\" must be a string"),
        )),
    }
}

/// Checks and normalises the fields a create or update may set, into `record`.
fn apply_fields(
    record: &mut IntegrationRecord,
    kind: Kind,
    body: &Map<String, Value>,
    creating: bool,
) -> Result<(), Failure> {
    if let Some(name) = text_field(body, "name")? {
        if name.is_empty() || name.chars().count() > 255 {
            return Err(fail(
                StatusCode::BAD_REQUEST,
                "400 (Bad request) \"name\" must be 1 to 255 characters",
            ));
        }
        record.name = name;
    } else if creating && kind == Kind::Http {
        return Err(fail(
            StatusCode::BAD_REQUEST,
            "400 (Bad request) \"name\" is required for an HTTP Endpoint",
        ));
    }
    match body.get("active") {
        None | Some(Value::Null) => {}
        Some(Value::Bool(active)) => record.active = *active,
        Some(_) => {
            return Err(fail(
                StatusCode::BAD_REQUEST,
                "400 (Bad request) \"active\" must be true or false",
            ))
        }
    }
    if let Some(url) = text_field(body, "api_url")? {
        if kind != Kind::Opsgenie {
            return Err(fail(
                StatusCode::BAD_REQUEST,
                "400 (Bad request) \"api_url\" is only for Opsgenie",
            ));
        }
        if !(url.starts_with("https://") || url.starts_with("http://")) {
            return Err(fail(
                StatusCode::BAD_REQUEST,
                "400 (Bad request) \"api_url\" must be an http(s) address",
            ));
        }
        record.api_url = Some(url);
    } else if creating && kind == Kind::Opsgenie {
        return Err(fail(
            StatusCode::BAD_REQUEST,
            "400 (Bad request) \"api_url\" is required for Opsgenie",
        ));
    }
    if let Some(example) = body.get("payload_example").filter(|value| !value.is_null()) {
        if kind != Kind::Http {
            return Err(fail(
                StatusCode::BAD_REQUEST,
                "400 (Bad request) \"payload_example\" is only for HTTP Endpoints",
            ));
        }
        let text = match example {
            Value::String(text) => {
                serde_json::from_str::<Value>(text).map_err(|error| {
                    fail(
                        StatusCode::BAD_REQUEST,
                        &format!("400 (Bad request) \"payload_example\" is not valid JSON: {error}"),
                    )
                })?;
                text.clone()
            }
            other => other.to_string(),
        };
        record.payload_example = Some(text);
    }
    if let Some(mapping) = body
        .get("payload_attribute_mapping")
        .filter(|value| !value.is_null())
    {
        if kind != Kind::Http {
            return Err(fail(
                StatusCode::BAD_REQUEST,
                "400 (Bad request) \"payload_attribute_mapping\" is only for HTTP Endpoints",
            ));
        }
        AttributeMapping::from_json(mapping).map_err(|error| {
            fail(
                StatusCode::BAD_REQUEST,
                &format!("400 (Bad request) \"payload_attribute_mapping\": {error}"),
            )
        })?;
        record.payload_attribute_mapping = Some(mapping.to_string());
    }
    Ok(())
}

/// Opsgenie excludes every other active integration of the project, and the other way round.
fn check_exclusivity(service: &AlertService, record: &IntegrationRecord, kind: Kind) -> Result<(), Failure> {
    if !record.active {
        return Ok(());
    }
    let others = service.registry.of_project(record.project_id);
    let clash = others.iter().find(|other| {
        other.record.id != record.id
            && other.record.active
            && ((kind == Kind::Opsgenie) || other.kind == Kind::Opsgenie)
    });
    match clash {
        Some(other) => Err(fail(
            StatusCode::CONFLICT,
            &format!(
                "409 Conflict: while an Opsgenie integration is active no other alert integration may be; \
                 disable the {} integration \"{}\" first",
                other.kind.label(),
                other.record.name
            ),
        )),
        None => Ok(()),
    }
}

async fn create_integration(service: &AlertService, request: &ApiRequest<'_>) -> Result<Answer, Failure> {
    request.require(Role::Maintainer)?;
    let Value::Object(body) = &request.body else {
        return Err(fail(
            StatusCode::BAD_REQUEST,
            "400 (Bad request) the body must be a JSON object",
        ));
    };
    let kind = text_field(body, "type")?
        .as_deref()
        .and_then(Kind::parse)
        .ok_or_else(|| {
            fail(
                StatusCode::BAD_REQUEST,
                "400 (Bad request) \"type\" must be generic, http, prometheus or opsgenie",
            )
        })?;
    if service.config.edition == Edition::Free {
        let existing_http = service
            .registry
            .of_project(request.access.project_id)
            .iter()
            .filter(|i| i.kind == Kind::Http)
            .count();
        if kind == Kind::Opsgenie || (kind == Kind::Http && existing_http >= 1) {
            return Err(fail(
                StatusCode::FORBIDDEN,
                &format!(
                    "403 Forbidden: {} needs the Premium edition (this instance runs edition = \"free\")",
                    if kind == Kind::Opsgenie {
                        "an Opsgenie integration"
                    } else {
                        "a second HTTP Endpoint"
                    }
                ),
            ));
        }
    }
    let (token, nonce, ciphertext) = new_sealed_token(service)?;
    let now = format_time(time::OffsetDateTime::now_utc());
    let mut record = IntegrationRecord {
        id: 0,
        project_id: request.access.project_id,
        project_path: request.access.project_path.clone(),
        kind: kind.as_str().to_owned(),
        name: kind.label().to_owned(),
        active: false,
        endpoint_identifier: match kind {
            Kind::Http => Some(
                random_hex(8).map_err(|error| fail(StatusCode::INTERNAL_SERVER_ERROR, &error.to_string()))?,
            ),
            _ => None,
        },
        token_nonce: nonce,
        token_ciphertext: ciphertext,
        api_url: None,
        payload_example: None,
        payload_attribute_mapping: None,
        created_at: now.clone(),
        updated_at: now,
    };
    apply_fields(&mut record, kind, body, true)?;
    check_exclusivity(service, &record, kind)?;
    let stored = match service.store.integration_insert(record).await {
        Ok(stored) => stored,
        Err(StoreError::Conflict(_)) => {
            return Err(fail(
                StatusCode::CONFLICT,
                &format!(
                    "409 Conflict: this project already has a {} integration",
                    kind.label()
                ),
            ))
        }
        Err(error) => return Err(store_error(&error)),
    };
    let integration = service.to_integration(stored, token);
    service.registry.put(integration.clone());
    Ok(json_response(
        StatusCode::CREATED,
        &integration_json(&integration, &request.origin, true),
    ))
}

async fn update_integration(
    service: &AlertService,
    request: &ApiRequest<'_>,
    id: &str,
) -> Result<Answer, Failure> {
    request.require(Role::Maintainer)?;
    let integration = find(service, request, id)?;
    let Value::Object(body) = &request.body else {
        return Err(fail(
            StatusCode::BAD_REQUEST,
            "400 (Bad request) the body must be a JSON object",
        ));
    };
    let mut record = integration.record.clone();
    apply_fields(&mut record, integration.kind, body, false)?;
    check_exclusivity(service, &record, integration.kind)?;
    save(service, request, record, integration.token().to_owned()).await
}

/// Stores a changed integration, puts it in the registry and answers it with its address and key.
async fn save(
    service: &AlertService,
    request: &ApiRequest<'_>,
    mut record: IntegrationRecord,
    token: String,
) -> Result<Answer, Failure> {
    record.updated_at = format_time(time::OffsetDateTime::now_utc());
    service
        .store
        .integration_update(record.clone())
        .await
        .map_err(|error| store_error(&error))?;
    let updated = service.to_integration(record, token);
    service.registry.put(updated.clone());
    Ok(json_response(
        StatusCode::OK,
        &integration_json(&updated, &request.origin, true),
    ))
}

/// A new random token and its sealed form: `(token, nonce, ciphertext)`.
fn new_sealed_token(service: &AlertService) -> Result<(String, Vec<u8>, Vec<u8>), Failure> {
    let internal =
        |error: crate::secret::SecretError| fail(StatusCode::INTERNAL_SERVER_ERROR, &error.to_string());
    let token = random_hex(16).map_err(internal)?;
    let (nonce, ciphertext) = service.secret.seal(&token).map_err(internal)?;
    Ok((token, nonce, ciphertext))
}

async fn reset_token(service: &AlertService, request: &ApiRequest<'_>, id: &str) -> Result<Answer, Failure> {
    request.require(Role::Maintainer)?;
    let integration = find(service, request, id)?;
    let (token, nonce, ciphertext) = new_sealed_token(service)?;
    let mut record = integration.record.clone();
    record.token_nonce = nonce;
    record.token_ciphertext = ciphertext;
    save(service, request, record, token).await
}

async fn delete_integration(
    service: &AlertService,
    request: &ApiRequest<'_>,
    id: &str,
) -> Result<Answer, Failure> {
    request.require(Role::Maintainer)?;
    let integration = find(service, request, id)?;
    service
        .store
        .integration_delete(integration.record.id)
        .await
        .map_err(|error| store_error(&error))?;
    service.registry.remove(integration.record.id);
    let mut answer = Response::new(crate::body::empty());
    *answer.status_mut() = StatusCode::NO_CONTENT;
    Ok(answer)
}

async fn test_alert(service: &AlertService, request: &ApiRequest<'_>, id: &str) -> Result<Answer, Failure> {
    request.require(Role::Developer)?;
    let integration = find(service, request, id)?;
    if integration.kind == Kind::Opsgenie {
        return Err(fail(
            StatusCode::BAD_REQUEST,
            "400 (Bad request) Opsgenie integrations receive no alerts",
        ));
    }
    let payload = match &request.body {
        Value::Null => integration
            .record
            .payload_example
            .clone()
            .unwrap_or_else(|| "{}".to_owned()),
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    let answer = service.intake.accept(&integration, payload.as_bytes()).await;
    if answer.status().is_success() {
        let outcome = crate::body::read_json(answer).await.unwrap_or(Value::Null);
        Ok(json_response(
            StatusCode::OK,
            &json!({"message": "The test alert was received.", "alerts": outcome}),
        ))
    } else {
        let status = answer.status();
        let detail = crate::body::read_json(answer).await.unwrap_or(Value::Null);
        let message = detail
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("the test alert was refused")
            .to_owned();
        let status = if status == StatusCode::SERVICE_UNAVAILABLE {
            status
        } else {
            StatusCode::BAD_REQUEST
        };
        Ok(json_response(
            status,
            &json!({"message": message, "error": detail.get("error")}),
        ))
    }
}

/// An alert as the API shows it.
pub fn alert_json(alert: &AlertRecord) -> Value {
    json!({
        "iid": alert.iid,
        "title": alert.title,
        "description": alert.description,
        "severity": alert.severity,
        "status": alert.status,
        "started_at": alert.started_at,
        "ended_at": alert.ended_at,
        "events": alert.events,
        "last_event_at": alert.last_event_at,
        "service": alert.service,
        "monitoring_tool": alert.monitoring_tool,
        "hosts": serde_json::from_str::<Value>(&alert.hosts_json).unwrap_or(Value::Array(Vec::new())),
        "environment": alert.environment,
        "fingerprint": alert.fingerprint,
        "integration_id": alert.integration_id,
        "incident_iid": alert.incident_iid,
        "created_at": alert.created_at,
        "updated_at": alert.updated_at,
    })
}

/// The statuses a list filter names.
pub fn statuses_of(filter: &str) -> Option<Vec<String>> {
    let list: &[&str] = match filter {
        "open" => &["triggered", "acknowledged"],
        "triggered" => &["triggered"],
        "acknowledged" => &["acknowledged"],
        "resolved" => &["resolved"],
        "ignored" => &["ignored"],
        "all" => &[],
        _ => return None,
    };
    Some(list.iter().map(|status| (*status).to_owned()).collect())
}

/// Builds the store query of an alert list from request parameters.
pub fn alert_query(
    project_id: u64,
    query: &dyn Fn(&str) -> Option<String>,
    default_status: &str,
) -> Result<AlertQuery, String> {
    let statuses = statuses_of(query("status").as_deref().unwrap_or(default_status))
        .ok_or("status must be open, triggered, acknowledged, resolved, ignored or all")?;
    let (sort_by, descending) = match query("sort").as_deref().unwrap_or("started_at_desc") {
        "started_at_desc" => ("started_at", true),
        "started_at_asc" => ("started_at", false),
        "severity_desc" => ("severity_rank", true),
        "severity_asc" => ("severity_rank", false),
        "events_desc" => ("events", true),
        "events_asc" => ("events", false),
        "title_asc" => ("title", false),
        "title_desc" => ("title", true),
        "status_asc" => ("status", false),
        "status_desc" => ("status", true),
        _ => {
            return Err(
                "sort must be one of started_at, severity, events, title, status with _asc or _desc"
                    .to_owned(),
            )
        }
    };
    let number = |name: &str, default: u64| match query(name) {
        Some(text) => text
            .parse::<u64>()
            .map_err(|_| format!("{name} must be a whole number")),
        None => Ok(default),
    };
    Ok(AlertQuery {
        project_id,
        statuses,
        severity: query("severity"),
        environment: query("environment"),
        search: query("search"),
        sort_by,
        descending,
        page: number("page", 1)?.max(1),
        per_page: number("per_page", 20)?.clamp(1, MAX_PER_PAGE),
    })
}

async fn list_alerts(service: &AlertService, request: &ApiRequest<'_>) -> Result<Answer, Failure> {
    request.require(Role::Developer)?;
    let lookup = |name: &str| request.query(name).map(str::to_owned);
    let query = alert_query(request.access.project_id, &lookup, "all")
        .map_err(|message| fail(StatusCode::BAD_REQUEST, &format!("400 (Bad request) {message}")))?;
    let (page, per_page) = (query.page, query.per_page);
    let result = service
        .store
        .alerts(query)
        .await
        .map_err(|error| store_error(&error))?;
    let total_pages = result.total.div_ceil(per_page).max(1);
    let body = Value::Array(result.alerts.iter().map(alert_json).collect());
    let mut answer = json_response(StatusCode::OK, &body);
    let count = |status: &str| result.counts.get(status).copied().unwrap_or(0);
    let headers = [
        ("x-total", result.total.to_string()),
        ("x-total-pages", total_pages.to_string()),
        ("x-page", page.to_string()),
        ("x-per-page", per_page.to_string()),
        (
            "x-next-page",
            if page < total_pages {
                (page + 1).to_string()
            } else {
                String::new()
            },
        ),
        (
            "x-prev-page",
            if page > 1 {
                (page - 1).to_string()
            } else {
                String::new()
            },
        ),
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

async fn find_alert(
    service: &AlertService,
    request: &ApiRequest<'_>,
    iid: &str,
) -> Result<AlertRecord, Failure> {
    let iid = iid
        .parse::<u64>()
        .map_err(|_| fail(StatusCode::NOT_FOUND, "404 Alert Not Found"))?;
    service
        .store
        .alert(request.access.project_id, iid)
        .await
        .map_err(|error| store_error(&error))?
        .ok_or_else(|| fail(StatusCode::NOT_FOUND, "404 Alert Not Found"))
}

/// An alert with its payload and incident, for its page and the API.
pub async fn alert_detail(service: &AlertService, alert: &AlertRecord, project_path: &str) -> Value {
    let mut value = alert_json(alert);
    let calls = service.store.outbox_of(alert.id).await.unwrap_or_default();
    if let Value::Object(fields) = &mut value {
        fields.insert(
            "payload".to_owned(),
            // Read as the intake read it: serde_json's own reader would unwrap its `RawValue` token.
            crate::plain_value::from_str(&alert.payload_json).unwrap_or(Value::Null),
        );
        let incident = json!({
            "iid": alert.incident_iid,
            "url": alert.incident_iid.map(|iid| format!("{}/{project_path}/-/issues/{iid}", service.backend_web_url)),
            "calls": calls.iter().map(|call| json!({
                "kind": call.kind,
                "attempts": call.attempts,
                "state": if call.done_at.is_some() { "done" } else { "pending" },
                "last_error": call.last_error,
                "done_at": call.done_at,
                "next_attempt_at": call.next_attempt_at,
            })).collect::<Vec<_>>(),
        });
        fields.insert("incident".to_owned(), incident);
    }
    value
}

async fn read_alert(service: &AlertService, request: &ApiRequest<'_>, iid: &str) -> Result<Answer, Failure> {
    request.require(Role::Developer)?;
    let alert = find_alert(service, request, iid).await?;
    Ok(json_response(
        StatusCode::OK,
        &alert_detail(service, &alert, &request.access.project_path).await,
    ))
}

/// The statuses an alert may be given.
pub const STATUSES: [&str; 4] = ["triggered", "acknowledged", "resolved", "ignored"];

async fn update_alert(
    service: &AlertService,
    request: &ApiRequest<'_>,
    iid: &str,
) -> Result<Answer, Failure> {
    request.require(Role::Developer)?;
    let status = request
        .body
        .get("status")
        .and_then(Value::as_str)
        .filter(|status| STATUSES.contains(status))
        .ok_or_else(|| {
            fail(
                StatusCode::BAD_REQUEST,
                "400 (Bad request) \"status\" must be triggered, acknowledged, resolved or ignored",
            )
        })?;
    let iid = iid
        .parse::<u64>()
        .map_err(|_| fail(StatusCode::NOT_FOUND, "404 Alert Not Found"))?;
    let now = format_time(time::OffsetDateTime::now_utc());
    match service
        .store
        .alert_status(request.access.project_id, iid, status.to_owned(), now)
        .await
    {
        Ok(Some(alert)) => Ok(json_response(StatusCode::OK, &alert_json(&alert))),
        Ok(None) => Err(fail(StatusCode::NOT_FOUND, "404 Alert Not Found")),
        Err(StoreError::Conflict(_)) => Err(fail(
            StatusCode::CONFLICT,
            "409 Conflict: another open alert has the same fingerprint; resolve it first",
        )),
        Err(error) => Err(store_error(&error)),
    }
}

fn settings_json(settings: AlertSettings) -> Value {
    json!({"create_incident": settings.create_incident, "auto_close_incident": settings.auto_close_incident})
}

async fn read_settings(service: &AlertService, request: &ApiRequest<'_>) -> Result<Answer, Failure> {
    request.require(Role::Maintainer)?;
    let settings = service
        .store
        .alert_settings(request.access.project_id)
        .await
        .map_err(|error| store_error(&error))?;
    Ok(json_response(StatusCode::OK, &settings_json(settings)))
}

async fn update_settings(service: &AlertService, request: &ApiRequest<'_>) -> Result<Answer, Failure> {
    request.require(Role::Maintainer)?;
    let mut settings = service
        .store
        .alert_settings(request.access.project_id)
        .await
        .map_err(|error| store_error(&error))?;
    for (name, slot) in [
        ("create_incident", &mut settings.create_incident),
        ("auto_close_incident", &mut settings.auto_close_incident),
    ] {
        match request.body.get(name) {
            None | Some(Value::Null) => {}
            Some(Value::Bool(flag)) => *slot = *flag,
            Some(_) => {
                return Err(fail(
                    StatusCode::BAD_REQUEST,
                    &format!("400 (Bad request) \"{name}\" must be true or false"),
                ))
            }
        }
    }
    service
        .store
        .alert_settings_put(request.access.project_id, settings)
        .await
        .map_err(|error| store_error(&error))?;
    Ok(json_response(StatusCode::OK, &settings_json(settings)))
}

async fn environments(service: &AlertService, request: &ApiRequest<'_>) -> Result<Answer, Failure> {
    request.require(Role::Developer)?;
    let alerts = service
        .store
        .alerts_by_environment(request.access.project_id)
        .await
        .map_err(|error| store_error(&error))?;
    let mut grouped: Vec<(String, Vec<Value>)> = Vec::new();
    for alert in &alerts {
        let environment = alert.environment.clone().unwrap_or_default();
        match grouped.iter_mut().find(|(name, _)| *name == environment) {
            Some((_, list)) => list.push(alert_json(alert)),
            None => grouped.push((environment, vec![alert_json(alert)])),
        }
    }
    let body: Vec<Value> = grouped
        .into_iter()
        .map(|(name, alerts)| json!({"environment": name, "open_alerts": alerts}))
        .collect();
    Ok(json_response(StatusCode::OK, &Value::Array(body)))
}

//! The operations on alert integrations, alerts and incident settings, as plain Rust: typed inputs, typed
//! results, and a [`ManageError`] that knows its status.
//!
//! Both faces of alert management call these functions: the JSON API ([`super::api`]) after reading a request's
//! body into the input types, and the pages ([`crate::pages`]) after reading a form. Each operation checks the
//! caller's role first (the contract's table: Maintainer for integrations and incident settings, Developer for
//! alerts and test alerts), so the two faces cannot disagree on who may do what. The caller's standing on the
//! project ([`ProjectAccess`]) is found by each face from its own credentials (a token header, a session).

use std::sync::Arc;

use serde_json::Value;

use super::apply::AnswerEntry;
use super::format_choices::{FormatChoices, DEFAULT_FORMAT};
use super::intake::IntakeError;
use super::integrations::Integration;
use super::kinds::{self, Kind, Receiving, Refusal};
use super::mapping::AttributeMapping;
use super::normalized::Severity;
use super::AlertService;
use crate::alerts::settings::Edition;
use crate::backend::access::{AccessError, ProjectAccess, Role};
use crate::store::{
    AlertPage, AlertQuery, AlertRecord, AlertSettings, IntegrationRecord, OutboxFailure, OutboxState,
    StoreError,
};
use crate::util::secret::random_hex;
use crate::util::time_format::format_time;

/// The largest page of alerts.
const MAX_PER_PAGE: u64 = 100;
/// The most failing incident calls an integration's page lists.
pub const MAX_FAILURES_SHOWN: u32 = 20;

/// The statuses an alert may be given.
pub const STATUSES: [&str; 4] = ["triggered", "acknowledged", "resolved", "ignored"];

/// Why a management operation did not happen. [`ManageError::status`] and [`ManageError::message`] are what
/// both faces show: the API as `{"message": …}` ([`super::api::error_response`]), the pages as a message page.
#[derive(Debug, thiserror::Error)]
pub enum ManageError {
    /// No credentials, or the backend did not accept them (401).
    #[error("401 Unauthorized")]
    Unauthenticated,
    /// The caller's role on the project is below what the operation needs (403).
    #[error("403 Forbidden")]
    Forbidden {
        /// The role the operation needs.
        needs: Role,
    },
    /// The project does not exist or the caller cannot see it (404).
    #[error("404 Project Not Found")]
    ProjectNotFound,
    /// No such integration in this project (404).
    #[error("404 Integration Not Found")]
    IntegrationNotFound,
    /// No such alert in this project (404).
    #[error("404 Alert Not Found")]
    AlertNotFound,
    /// No such operation (404).
    #[error("404 Not Found")]
    NoRoute,
    /// No V3 client with this id in the usage counts (404).
    #[error("404 Client Not Found")]
    ClientNotFound,
    /// The backend could not be asked who the caller is (502).
    #[error("502 Bad Gateway: the backend could not be asked")]
    Backend,
    /// The request is not acceptable as it is (400); the text names the field and what it must be.
    #[error("400 (Bad request) {0}")]
    Invalid(String),
    /// The body of an API request or a page's form is larger than 1 MiB (413).
    #[error("413 Payload Too Large: management requests are at most 1 MiB")]
    TooLarge,
    /// A page's form does not carry the session's CSRF token (403).
    #[error(
        "403 Forbidden: the form was not sent from a current page of yours; go back, reload it and try again"
    )]
    FormExpired,
    /// The V3 usage report is for administrators of the backend (403).
    #[error("403 Forbidden: V3 usage is for administrators of the svc server")]
    AdminOnly,
    /// The operation needs the Premium edition (403); the text says what needs it.
    #[error("403 Forbidden: {0} needs the Premium edition (this instance runs edition = \"free\")")]
    NeedsPremium(&'static str),
    /// The operation clashes with the project's current state (409); the text says how to resolve it.
    #[error("409 Conflict: {0}")]
    Conflict(String),
    /// The store could not be used (503); the detail is logged, never shown.
    #[error("503 Service Unavailable: the store could not be used")]
    Store(#[source] StoreError),
    /// svcgate itself failed (500); the detail is logged, never shown.
    #[error("500 Internal Server Error")]
    Internal(String),
    /// The intake refused a test alert: 503 when the sender should retry, 400 otherwise.
    #[error("{0}")]
    TestRefused(#[source] IntakeError),
}

impl ManageError {
    /// The status this error is answered with.
    pub fn status(&self) -> http::StatusCode {
        use http::StatusCode;
        match self {
            ManageError::Unauthenticated => StatusCode::UNAUTHORIZED,
            ManageError::Forbidden { .. }
            | ManageError::NeedsPremium(_)
            | ManageError::FormExpired
            | ManageError::AdminOnly => StatusCode::FORBIDDEN,
            ManageError::ProjectNotFound
            | ManageError::IntegrationNotFound
            | ManageError::AlertNotFound
            | ManageError::ClientNotFound
            | ManageError::NoRoute => StatusCode::NOT_FOUND,
            ManageError::Backend => StatusCode::BAD_GATEWAY,
            ManageError::Invalid(_) => StatusCode::BAD_REQUEST,
            ManageError::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            ManageError::Conflict(_) => StatusCode::CONFLICT,
            ManageError::Store(_) => StatusCode::SERVICE_UNAVAILABLE,
            ManageError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
            ManageError::TestRefused(refused) if refused.status() == StatusCode::SERVICE_UNAVAILABLE => {
                StatusCode::SERVICE_UNAVAILABLE
            }
            ManageError::TestRefused(_) => StatusCode::BAD_REQUEST,
        }
    }

    /// What went wrong, for the API's `message` and the pages' text.
    pub fn message(&self) -> String {
        self.to_string()
    }

    /// An invalid request, `400 (Bad request) <text>`.
    pub fn invalid(text: impl Into<String>) -> Self {
        ManageError::Invalid(text.into())
    }

    /// The request field an invalid request is about: the quoted name its text starts with (`"name" must be …`),
    /// for a form to mark that field.
    pub fn field(&self) -> Option<&str> {
        let ManageError::Invalid(text) = self else {
            return None;
        };
        let rest = text.strip_prefix('"')?;
        rest.split_once('"').map(|(field, _)| field)
    }

    /// Logs what the caller is not shown (store and internal failures); the faces call this as they answer.
    pub fn log(&self) {
        match self {
            ManageError::Store(error) => tracing::error!(%error, "alert management: store failed"),
            ManageError::Internal(detail) => tracing::error!(%detail, "alert management failed"),
            _ => {}
        }
    }
}

impl From<AccessError> for ManageError {
    fn from(error: AccessError) -> Self {
        match error {
            AccessError::Unauthenticated => ManageError::Unauthenticated,
            AccessError::ProjectNotFound => ManageError::ProjectNotFound,
            AccessError::Backend(_) => ManageError::Backend,
        }
    }
}

impl From<StoreError> for ManageError {
    fn from(error: StoreError) -> Self {
        ManageError::Store(error)
    }
}

/// Refuses callers below `role`.
pub fn require(access: &ProjectAccess, role: Role) -> Result<(), ManageError> {
    if access.role >= role {
        Ok(())
    } else {
        Err(ManageError::Forbidden { needs: role })
    }
}

/// The fields a create or update may set; `None` leaves a field as it is.
#[derive(Debug, Default, Clone)]
pub struct IntegrationFields {
    /// The integration's name (1 to 255 characters, trimmed).
    pub name: Option<String>,
    /// Whether it receives alerts.
    pub active: Option<bool>,
    /// Opsgenie's address (Opsgenie only).
    pub api_url: Option<String>,
    /// A sample payload, as JSON text (HTTP Endpoints only).
    pub payload_example: Option<String>,
    /// The custom mapping of payload fields to alert attributes (HTTP Endpoints only).
    pub payload_attribute_mapping: Option<Value>,
    /// The name of the format its payloads are read in (Generic and HTTP Endpoints only).
    pub payload_format: Option<String>,
}

/// A new integration: its kind and first fields.
#[derive(Debug, Clone)]
pub struct NewIntegration {
    /// Generic, HTTP Endpoint, Prometheus or Opsgenie.
    pub kind: Kind,
    /// The fields it starts with.
    pub fields: IntegrationFields,
}

impl NewIntegration {
    /// The kind named `type` (`generic`, `http`, `prometheus`, `opsgenie`), or why not.
    pub fn kind_of(name: Option<&str>) -> Result<Kind, ManageError> {
        name.map(str::trim).and_then(Kind::parse).ok_or_else(|| {
            ManageError::invalid(format!("\"type\" must be {}", super::kinds::names_sentence()))
        })
    }
}

/// A changed incident setting; `None` leaves it as it is.
#[derive(Debug, Default, Clone, Copy)]
pub struct SettingsChanges {
    /// Create an incident for each new alert.
    pub create_incident: Option<bool>,
    /// Close the incident when its alert resolves.
    pub auto_close_incident: Option<bool>,
}

/// An alert with what its page and the API's detail show besides the record.
#[derive(Debug, Clone)]
pub struct AlertDetail {
    /// The stored alert.
    pub alert: AlertRecord,
    /// The payload as the intake read it.
    pub payload: Value,
    /// The incident's address on the backend, when there is one.
    pub incident_url: Option<String>,
    /// The incident calls of the outbox for this alert.
    pub calls: Vec<OutboxState>,
    /// The integration that received it (kept after it is deleted), by id.
    pub integration: Option<(u64, crate::store::IntegrationName)>,
}

/// The open alerts of one environment (the empty name: none given).
#[derive(Debug, Clone)]
pub struct EnvironmentAlerts {
    /// The environment's name.
    pub name: String,
    /// Its open alerts.
    pub alerts: Vec<AlertRecord>,
}

/// The project's integrations.
pub fn integrations(
    service: &AlertService,
    access: &ProjectAccess,
) -> Result<Vec<Arc<Integration>>, ManageError> {
    require(access, Role::Maintainer)?;
    Ok(service.registry.of_project(access.project_id))
}

/// One integration of the project.
pub fn integration(
    service: &AlertService,
    access: &ProjectAccess,
    id: u64,
) -> Result<Arc<Integration>, ManageError> {
    require(access, Role::Maintainer)?;
    find(service, access, id)
}

fn find(service: &AlertService, access: &ProjectAccess, id: u64) -> Result<Arc<Integration>, ManageError> {
    service
        .registry
        .get(id)
        .filter(|integration| integration.record.project_id == access.project_id)
        .ok_or(ManageError::IntegrationNotFound)
}

/// Creates an integration, inactive unless `active` is given, with a new key (and endpoint for HTTP Endpoints).
pub async fn create_integration(
    service: &AlertService,
    access: &ProjectAccess,
    new: NewIntegration,
) -> Result<Arc<Integration>, ManageError> {
    require(access, Role::Maintainer)?;
    let kind = new.kind;
    let existing: Vec<Kind> = service
        .registry
        .of_project(access.project_id)
        .iter()
        .map(|integration| integration.kind)
        .collect();
    // A second one of a kind that is one per project is refused by the store, after the fields are checked.
    if let Err(Refusal::NeedsPremium(what)) = kinds::may_add(kind, &existing, service.config.edition) {
        return Err(ManageError::NeedsPremium(what));
    }
    let (token, nonce, ciphertext) = new_sealed_token(service)?;
    let now = format_time(time::OffsetDateTime::now_utc());
    let endpoint_identifier = match kinds::spec(kind).receiving {
        Receiving::Named => Some(random_hex(8).map_err(|error| ManageError::Internal(error.to_string()))?),
        _ => None,
    };
    let mut record = IntegrationRecord {
        id: 0,
        project_id: access.project_id,
        project_path: access.project_path.clone(),
        kind: kind.as_str().to_owned(),
        name: kind.label().to_owned(),
        active: false,
        endpoint_identifier,
        token_nonce: nonce,
        token_ciphertext: ciphertext,
        api_url: None,
        payload_example: None,
        payload_attribute_mapping: None,
        created_at: now.clone(),
        updated_at: now,
        one_per_project: kind.one_per_project(),
        payload_format: DEFAULT_FORMAT.to_owned(),
        pending_confirmation: None,
    };
    apply_fields(&mut record, kind, new.fields, true, &service.formats)?;
    check_exclusivity(service, &record, kind)?;
    let stored = match service.store.integration_insert(record).await {
        Ok(stored) => stored,
        Err(StoreError::Conflict(_)) => {
            return Err(ManageError::Conflict(format!(
                "this project already has a {} integration",
                kind.label()
            )))
        }
        Err(error) => return Err(error.into()),
    };
    let id = stored.id;
    service.registry.put(service.to_integration(stored, token));
    registered(service, id)
}

/// The kinds of integration a project that has integrations of `existing` kinds may add under `edition`, in the
/// order the add form offers them, as [`kinds::may_add`] says (today: any number of HTTP Endpoints, one on Free;
/// one Generic, one Prometheus, and one Opsgenie on Premium only), as [`create_integration`] allows.
pub fn addable_kinds(existing: &[Kind], edition: Edition) -> Vec<Kind> {
    kinds::in_form_order()
        .into_iter()
        .filter(|kind| kinds::may_add(*kind, existing, edition).is_ok())
        .collect()
}

/// The integration just put in the registry.
fn registered(service: &AlertService, id: u64) -> Result<Arc<Integration>, ManageError> {
    service
        .registry
        .get(id)
        .ok_or_else(|| ManageError::Internal(format!("integration {id} is not in the registry after saving")))
}

/// Changes an integration's fields.
pub async fn update_integration(
    service: &AlertService,
    access: &ProjectAccess,
    id: u64,
    fields: IntegrationFields,
) -> Result<Arc<Integration>, ManageError> {
    require(access, Role::Maintainer)?;
    let integration = find(service, access, id)?;
    let mut record = integration.record.clone();
    apply_fields(&mut record, integration.kind, fields, false, &service.formats)?;
    check_exclusivity(service, &record, integration.kind)?;
    save(service, record, integration.token().to_owned()).await
}

/// Gives an integration a new key; the old one stops working at once.
pub async fn reset_key(
    service: &AlertService,
    access: &ProjectAccess,
    id: u64,
) -> Result<Arc<Integration>, ManageError> {
    require(access, Role::Maintainer)?;
    let integration = find(service, access, id)?;
    let (token, nonce, ciphertext) = new_sealed_token(service)?;
    let mut record = integration.record.clone();
    record.token_nonce = nonce;
    record.token_ciphertext = ciphertext;
    save(service, record, token).await
}

/// Deletes an integration; its alerts stay.
pub async fn delete_integration(
    service: &AlertService,
    access: &ProjectAccess,
    id: u64,
) -> Result<(), ManageError> {
    require(access, Role::Maintainer)?;
    let integration = find(service, access, id)?;
    service.store.integration_delete(integration.record.id).await?;
    service.registry.remove(integration.record.id);
    Ok(())
}

/// Sends a test alert through an integration, as a sender would (the integration's sample payload when `payload`
/// is `None`): the intake's answer entries.
pub async fn test_alert(
    service: &AlertService,
    access: &ProjectAccess,
    id: u64,
    payload: Option<String>,
) -> Result<Vec<AnswerEntry>, ManageError> {
    require(access, Role::Developer)?;
    let integration = find(service, access, id)?;
    if !integration.kind.receives() {
        return Err(ManageError::invalid(format!(
            "{} integrations receive no alerts",
            integration.kind.label()
        )));
    }
    // A switched-off integration refuses its senders (404), so a test alert accepted here would mislead.
    if !integration.record.active {
        return Err(ManageError::Conflict(format!(
            "the integration \"{}\" is inactive, so it receives no alerts, test alerts included; switch it \
             Active first",
            integration.record.name
        )));
    }
    let payload = payload.unwrap_or_else(|| {
        integration
            .record
            .payload_example
            .clone()
            .unwrap_or_else(|| "{}".to_owned())
    });
    service
        .intake
        .accept(&integration, payload.as_bytes())
        .await
        .map_err(ManageError::TestRefused)
}

/// Stores a changed integration and puts it in the registry.
async fn save(
    service: &AlertService,
    mut record: IntegrationRecord,
    token: String,
) -> Result<Arc<Integration>, ManageError> {
    record.updated_at = format_time(time::OffsetDateTime::now_utc());
    let id = record.id;
    service.store.integration_update(record.clone()).await?;
    service.registry.put(service.to_integration(record, token));
    registered(service, id)
}

/// A new random token and its sealed form: `(token, nonce, ciphertext)`.
fn new_sealed_token(service: &AlertService) -> Result<(String, Vec<u8>, Vec<u8>), ManageError> {
    let internal = |error: crate::util::secret::SecretError| ManageError::Internal(error.to_string());
    let token = random_hex(16).map_err(internal)?;
    let (nonce, ciphertext) = service.secret.seal(&token).map_err(internal)?;
    Ok((token, nonce, ciphertext))
}

/// Checks and normalises the fields a create or update may set, into `record`; `formats` are the payload formats
/// on offer.
fn apply_fields(
    record: &mut IntegrationRecord,
    kind: Kind,
    fields: IntegrationFields,
    creating: bool,
    formats: &FormatChoices,
) -> Result<(), ManageError> {
    let fields_of_kind = kind.fields();
    if let Some(name) = fields.name.map(|name| name.trim().to_owned()) {
        if name.is_empty() || name.chars().count() > 255 {
            return Err(ManageError::invalid("\"name\" must be 1 to 255 characters"));
        }
        record.name = name;
    } else if creating && fields_of_kind.name_required {
        return Err(ManageError::invalid(format!(
            "\"name\" is required for an {}",
            kind.label()
        )));
    }
    if let Some(active) = fields.active {
        record.active = active;
    }
    if let Some(url) = fields.api_url.map(|url| url.trim().to_owned()) {
        if !fields_of_kind.api_url {
            return Err(ManageError::invalid(format!(
                "\"api_url\" is only for {}",
                only_for(|fields| fields.api_url, "")
            )));
        }
        if !(url.starts_with("https://") || url.starts_with("http://")) {
            return Err(ManageError::invalid("\"api_url\" must be an http(s) address"));
        }
        record.api_url = Some(url);
    } else if creating && fields_of_kind.api_url {
        return Err(ManageError::invalid(format!(
            "\"api_url\" is required for {}",
            kind.label()
        )));
    }
    if let Some(example) = fields.payload_example {
        if !fields_of_kind.custom_payload {
            return Err(ManageError::invalid(format!(
                "\"payload_example\" is only for {}",
                only_for(|fields| fields.custom_payload, "s")
            )));
        }
        serde_json::from_str::<serde::de::IgnoredAny>(&example).map_err(|error| {
            ManageError::invalid(format!("\"payload_example\" is not valid JSON: {error}"))
        })?;
        record.payload_example = Some(example);
    }
    if let Some(mapping) = fields.payload_attribute_mapping {
        if !fields_of_kind.custom_payload {
            return Err(ManageError::invalid(format!(
                "\"payload_attribute_mapping\" is only for {}",
                only_for(|fields| fields.custom_payload, "s")
            )));
        }
        AttributeMapping::from_json(&mapping)
            .map_err(|error| ManageError::invalid(format!("\"payload_attribute_mapping\": {error}")))?;
        record.payload_attribute_mapping = Some(mapping.to_string());
    }
    if let Some(format) = fields.payload_format.map(|format| format.trim().to_owned()) {
        apply_payload_format(record, kind, format, formats)?;
    }
    Ok(())
}

/// Gives `record` the payload format `format`: one on offer, for a kind that takes one. Naming the format the
/// record has already, or the fixed one of a kind that has no choice (Prometheus: `alertmanager`), changes
/// nothing, so that an integration as the API shows it may be sent back as it is.
fn apply_payload_format(
    record: &mut IntegrationRecord,
    kind: Kind,
    format: String,
    formats: &FormatChoices,
) -> Result<(), ManageError> {
    if !kind.fields().payload_format {
        if kind.fixed_format() == Some(format.as_str()) {
            return Ok(());
        }
        let reads = kind
            .fixed_format()
            .map(|fixed| format!("; {} integrations always read {fixed}", kind.label()))
            .unwrap_or_default();
        return Err(ManageError::invalid(format!(
            "\"payload_format\" is only for {} integrations{reads}",
            only_for(|fields| fields.payload_format, "")
        )));
    }
    if format != record.payload_format && !formats.contains(&format) {
        return Err(ManageError::invalid(format!(
            "\"payload_format\" must be one of the formats svcgate knows: {}",
            formats.names_sentence()
        )));
    }
    record.payload_format = format;
    Ok(())
}

/// The labels of the kinds whose integrations have a field (`has`), each with `plural` appended, joined by "or":
/// "Opsgenie", "HTTP Endpoints".
fn only_for(has: fn(&kinds::Fields) -> bool, plural: &str) -> String {
    let labels: Vec<String> = kinds::KINDS
        .iter()
        .filter(|spec| has(&spec.fields))
        .map(|spec| format!("{}{plural}", spec.label))
        .collect();
    labels.join(" or ")
}

/// Opsgenie excludes every other active integration of the project, and the other way round.
fn check_exclusivity(
    service: &AlertService,
    record: &IntegrationRecord,
    kind: Kind,
) -> Result<(), ManageError> {
    if !record.active {
        return Ok(());
    }
    let others = service.registry.of_project(record.project_id);
    let clash = others.iter().find(|other| {
        other.record.id != record.id
            && other.record.active
            && (kinds::spec(kind).exclusive || kinds::spec(other.kind).exclusive)
    });
    match clash {
        Some(other) => Err(ManageError::Conflict(format!(
            "while an {} integration is active no other alert integration may be; \
             disable the {} integration \"{}\" first",
            if kinds::spec(kind).exclusive {
                kind
            } else {
                other.kind
            }
            .label(),
            other.kind.label(),
            other.record.name
        ))),
        None => Ok(()),
    }
}

/// The parameters of an alert list, as both faces take them from a query string.
#[derive(Debug, Clone, Default)]
pub struct AlertListParams {
    /// `open`, `triggered`, `acknowledged`, `resolved`, `ignored` or `all`.
    pub status: Option<String>,
    /// Only this severity.
    pub severity: Option<String>,
    /// Only this environment.
    pub environment: Option<String>,
    /// A case-insensitive substring.
    pub search: Option<String>,
    /// `<column>_asc` or `<column>_desc`.
    pub sort: Option<String>,
    /// 1-based page (text, checked here).
    pub page: Option<String>,
    /// Alerts per page (text, checked here).
    pub per_page: Option<String>,
}

impl AlertListParams {
    /// The parameters found in query pairs; empty values count as absent.
    pub fn from_pairs(pairs: &[(String, String)]) -> Self {
        let get = |name: &str| {
            pairs
                .iter()
                .find(|(key, _)| key == name)
                .map(|(_, value)| value.clone())
                .filter(|value| !value.is_empty())
        };
        AlertListParams {
            status: get("status"),
            severity: get("severity"),
            environment: get("environment"),
            search: get("search"),
            sort: get("sort"),
            page: get("page"),
            per_page: get("per_page"),
        }
    }
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

/// The store query of an alert list; `default_status` applies when none is given (`all` for the API, `open` for
/// the pages).
pub fn alert_query(
    project_id: u64,
    params: &AlertListParams,
    default_status: &str,
) -> Result<AlertQuery, ManageError> {
    let statuses = statuses_of(params.status.as_deref().unwrap_or(default_status)).ok_or_else(|| {
        ManageError::invalid("status must be open, triggered, acknowledged, resolved, ignored or all")
    })?;
    let (sort_by, descending) = match params.sort.as_deref().unwrap_or("started_at_desc") {
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
            return Err(ManageError::invalid(
                "sort must be one of started_at, severity, events, title, status with _asc or _desc",
            ))
        }
    };
    let number = |name: &str, given: &Option<String>, default: u64| match given {
        Some(text) => text
            .parse::<u64>()
            .map_err(|_| ManageError::invalid(format!("{name} must be a whole number"))),
        None => Ok(default),
    };
    let severity = match params.severity.as_deref() {
        Some(text) => Some(
            Severity::parse(text)
                .map(|severity| severity.as_str().to_owned())
                .ok_or_else(|| {
                    ManageError::invalid("severity must be critical, high, medium, low, info or unknown")
                })?,
        ),
        None => None,
    };
    Ok(AlertQuery {
        project_id,
        statuses,
        severity,
        environment: params.environment.clone(),
        search: params.search.clone(),
        sort_by,
        descending,
        page: number("page", &params.page, 1)?.max(1),
        per_page: number("per_page", &params.per_page, 20)?.clamp(1, MAX_PER_PAGE),
    })
}

/// A page of the project's alerts with the counts per status.
pub async fn alerts(
    service: &AlertService,
    access: &ProjectAccess,
    query: AlertQuery,
) -> Result<AlertPage, ManageError> {
    require(access, Role::Developer)?;
    Ok(service.store.alerts(query).await?)
}

/// One alert with its payload and incident.
pub async fn alert(
    service: &AlertService,
    access: &ProjectAccess,
    iid: u64,
) -> Result<AlertDetail, ManageError> {
    require(access, Role::Developer)?;
    let alert = service
        .store
        .alert(access.project_id, iid)
        .await?
        .ok_or(ManageError::AlertNotFound)?;
    let calls = service.store.outbox_of(alert.id).await.unwrap_or_default();
    let integration = match alert.integration_id {
        Some(id) => service
            .store
            .integration_named(id)
            .await?
            .map(|named| (id, named)),
        None => None,
    };
    // Read as the intake read it: serde_json's own reader would unwrap its `RawValue` token.
    let payload = crate::util::plain_value::from_str(&alert.payload_json).unwrap_or(Value::Null);
    let incident_url = alert
        .incident_iid
        .map(|incident| incident_url(service, access, incident));
    Ok(AlertDetail {
        alert,
        payload,
        incident_url,
        calls,
        integration,
    })
}

/// The address of incident `iid` (an issue of the project) on the backend's web pages.
pub fn incident_url(service: &AlertService, access: &ProjectAccess, iid: u64) -> String {
    format!(
        "{}/{}/-/issues/{iid}",
        service.backend_web_url, access.project_path
    )
}

/// What a person on the alert list needs to know about where the project's alerts come from.
#[derive(Debug, Clone, Default)]
pub struct IntakeSummary {
    /// Names of the active integrations that receive alerts.
    pub receiving: Vec<String>,
    /// The incident-alerting tool's (Opsgenie's) address, when such an integration is active: alerts live there.
    pub opsgenie: Option<String>,
    /// Whether the project has any integration at all (active or not).
    pub any: bool,
}

/// Where the project's alerts come from (Developer: the alert list shows it; no keys or addresses).
pub fn intake_summary(service: &AlertService, access: &ProjectAccess) -> Result<IntakeSummary, ManageError> {
    require(access, Role::Developer)?;
    let integrations = service.registry.of_project(access.project_id);
    Ok(IntakeSummary {
        receiving: integrations
            .iter()
            .filter(|integration| integration.kind.receives() && integration.record.active)
            .map(|integration| integration.record.name.clone())
            .collect(),
        opsgenie: integrations
            .iter()
            .find(|integration| integration.kind.fields().api_url && integration.record.active)
            .and_then(|integration| integration.record.api_url.clone()),
        any: !integrations.is_empty(),
    })
}

/// The incident calls for an integration's alerts that failed and are still retried, newest first.
pub async fn incident_failures(
    service: &AlertService,
    access: &ProjectAccess,
    id: u64,
) -> Result<Vec<OutboxFailure>, ManageError> {
    require(access, Role::Maintainer)?;
    let integration = find(service, access, id)?;
    Ok(service
        .store
        .outbox_failures(integration.record.id, MAX_FAILURES_SHOWN)
        .await?)
}

/// Gives an alert a status (one of [`STATUSES`]).
pub async fn change_status(
    service: &AlertService,
    access: &ProjectAccess,
    iid: Option<u64>,
    status: Option<&str>,
) -> Result<AlertRecord, ManageError> {
    require(access, Role::Developer)?;
    let status = status.filter(|status| STATUSES.contains(status)).ok_or_else(|| {
        ManageError::invalid("\"status\" must be triggered, acknowledged, resolved or ignored")
    })?;
    let iid = iid.ok_or(ManageError::AlertNotFound)?;
    let now = format_time(time::OffsetDateTime::now_utc());
    match service
        .store
        .alert_status(access.project_id, iid, status.to_owned(), now)
        .await
    {
        Ok(Some(alert)) => Ok(alert),
        Ok(None) => Err(ManageError::AlertNotFound),
        Err(StoreError::Conflict(_)) => Err(ManageError::Conflict(
            "another open alert has the same fingerprint; resolve it first".to_owned(),
        )),
        Err(error) => Err(error.into()),
    }
}

/// The project's incident settings.
pub async fn incident_settings(
    service: &AlertService,
    access: &ProjectAccess,
) -> Result<AlertSettings, ManageError> {
    require(access, Role::Maintainer)?;
    Ok(service.store.alert_settings(access.project_id).await?)
}

/// Changes the project's incident settings.
pub async fn update_incident_settings(
    service: &AlertService,
    access: &ProjectAccess,
    changes: SettingsChanges,
) -> Result<AlertSettings, ManageError> {
    require(access, Role::Maintainer)?;
    let mut settings = service.store.alert_settings(access.project_id).await?;
    if let Some(create) = changes.create_incident {
        settings.create_incident = create;
    }
    if let Some(close) = changes.auto_close_incident {
        settings.auto_close_incident = close;
    }
    service
        .store
        .alert_settings_put(access.project_id, settings)
        .await?;
    Ok(settings)
}

/// The project's open alerts grouped by environment, in the store's order.
pub async fn environments(
    service: &AlertService,
    access: &ProjectAccess,
) -> Result<Vec<EnvironmentAlerts>, ManageError> {
    require(access, Role::Developer)?;
    let alerts = service.store.alerts_by_environment(access.project_id).await?;
    let mut grouped: Vec<EnvironmentAlerts> = Vec::new();
    for alert in alerts {
        let name = alert.environment.clone().unwrap_or_default();
        match grouped.iter_mut().find(|group| group.name == name) {
            Some(group) => group.alerts.push(alert),
            None => grouped.push(EnvironmentAlerts {
                name,
                alerts: vec![alert],
            }),
        }
    }
    Ok(grouped)
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::StatusCode;

    #[test]
    fn each_error_answers_with_its_own_status() {
        let refused_busy = IntakeError::Busy("full".to_owned());
        let refused_payload = IntakeError::Unreadable;
        let table: Vec<(ManageError, StatusCode)> = vec![
            (ManageError::Unauthenticated, StatusCode::UNAUTHORIZED),
            (
                ManageError::Forbidden {
                    needs: Role::Maintainer,
                },
                StatusCode::FORBIDDEN,
            ),
            (
                ManageError::NeedsPremium("an Opsgenie integration"),
                StatusCode::FORBIDDEN,
            ),
            (ManageError::FormExpired, StatusCode::FORBIDDEN),
            (ManageError::AdminOnly, StatusCode::FORBIDDEN),
            (ManageError::ProjectNotFound, StatusCode::NOT_FOUND),
            (ManageError::IntegrationNotFound, StatusCode::NOT_FOUND),
            (ManageError::AlertNotFound, StatusCode::NOT_FOUND),
            (ManageError::NoRoute, StatusCode::NOT_FOUND),
            (ManageError::Backend, StatusCode::BAD_GATEWAY),
            (
                ManageError::invalid("\"name\" must be a string"),
                StatusCode::BAD_REQUEST,
            ),
            (ManageError::TooLarge, StatusCode::PAYLOAD_TOO_LARGE),
            (ManageError::Conflict("x".to_owned()), StatusCode::CONFLICT),
            (
                ManageError::Store(StoreError::Unavailable("closed".to_owned())),
                StatusCode::SERVICE_UNAVAILABLE,
            ),
            (
                ManageError::Internal("bug".to_owned()),
                StatusCode::INTERNAL_SERVER_ERROR,
            ),
            // A test alert the intake could not take now is retried later; any other refusal is the payload's.
            (
                ManageError::TestRefused(refused_busy),
                StatusCode::SERVICE_UNAVAILABLE,
            ),
            (ManageError::TestRefused(refused_payload), StatusCode::BAD_REQUEST),
        ];
        for (error, status) in table {
            assert_eq!(error.status(), status, "{error:?}");
            assert!(
                error.message().starts_with(status.as_str()) || matches!(error, ManageError::TestRefused(_)),
                "the message of {error:?} starts with its status: {}",
                error.message()
            );
        }
    }

    #[test]
    fn the_add_form_offers_only_kinds_that_can_be_added() {
        use Kind::{Generic, Http, Opsgenie, Prometheus};
        let table: [(&[Kind], Edition, &[Kind]); 6] = [
            (&[], Edition::Premium, &[Http, Generic, Prometheus, Opsgenie]),
            (&[Http, Generic], Edition::Premium, &[Http, Prometheus, Opsgenie]),
            (&[Generic, Prometheus, Opsgenie], Edition::Premium, &[Http]),
            (&[], Edition::Free, &[Http, Generic, Prometheus]),
            (&[Http, Generic], Edition::Free, &[Prometheus]),
            (&[Http, Generic, Prometheus], Edition::Free, &[]),
        ];
        for (existing, edition, offered) in table {
            assert_eq!(
                addable_kinds(existing, edition),
                offered,
                "{existing:?} {edition:?}"
            );
        }
    }

    #[test]
    fn an_invalid_request_names_its_field() {
        assert_eq!(
            ManageError::invalid("\"payload_example\" is not valid JSON: x").field(),
            Some("payload_example")
        );
        assert_eq!(
            ManageError::invalid("Opsgenie integrations receive no alerts").field(),
            None
        );
        assert_eq!(ManageError::AlertNotFound.field(), None);
    }

    #[test]
    fn internal_detail_is_never_in_the_message() {
        let error = ManageError::Store(StoreError::Unavailable("disk I/O error at page 7".to_owned()));
        assert!(!error.message().contains("page 7"));
        let error = ManageError::Internal("secret key file unreadable".to_owned());
        assert_eq!(error.message(), "500 Internal Server Error");
    }

    #[test]
    fn an_alert_list_query_takes_its_defaults_and_refuses_what_it_cannot_read() {
        let params = AlertListParams::from_pairs(&[("status".to_owned(), String::new())]);
        let query = alert_query(7, &params, "open").unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(query.statuses, ["triggered", "acknowledged"]);
        assert_eq!((query.sort_by, query.descending), ("started_at", true));
        assert_eq!((query.page, query.per_page), (1, 20));

        let pairs = |name: &str, value: &str| vec![(name.to_owned(), value.to_owned())];
        let big = alert_query(7, &AlertListParams::from_pairs(&pairs("per_page", "5000")), "all");
        assert_eq!(big.map(|query| query.per_page).ok(), Some(MAX_PER_PAGE));
        let critical = alert_query(
            7,
            &AlertListParams::from_pairs(&pairs("severity", "CRITICAL")),
            "all",
        );
        assert_eq!(
            critical.ok().and_then(|query| query.severity).as_deref(),
            Some("critical")
        );
        for (name, value) in [
            ("status", "closed"),
            ("sort", "age_desc"),
            ("page", "two"),
            ("severity", "dire"),
        ] {
            let refused = alert_query(7, &AlertListParams::from_pairs(&pairs(name, value)), "all");
            assert!(
                matches!(refused, Err(ManageError::Invalid(_))),
                "{name}={value} is refused"
            );
        }
    }
}

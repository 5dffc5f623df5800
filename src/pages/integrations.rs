//! Settings › Operations › Alerts and the integrations' pages: the list of integrations with the form that adds
//! one (drawn again for the type chosen, without JavaScript) and the test alert, the incident settings, and one
//! integration's page with its address and key, its edit form, its key reset and its deletion (each asked to
//! confirm first).

use http::StatusCode;
use serde_json::Value;

use super::call::Call;
use super::format::{plural, time_view};
use super::render::{done, error_page, notice_text, project_view, redirect, render, user_view, Page};
use super::session::Session;
use super::views::{
    Confirm, FailureRow, FormFields, FormatOption, IntegrationForm, IntegrationPage, IntegrationRow,
    PreviewRow, PreviewView, Section, Settings,
};
use super::Pages;
use crate::alerts::format_choices::{FormatChoices, DEFAULT_FORMAT};
use crate::alerts::formats::{AuthScheme, Reading};
use crate::alerts::integrations::Integration;
use crate::alerts::kinds::Kind;
use crate::alerts::manage::{self, IntegrationFields, ManageError, NewIntegration, SettingsChanges};
use crate::alerts::normalized::NormalizedAlert;
use crate::alerts::AlertService;
use crate::backend::access::ProjectAccess;
use crate::util::time_format::format_time;

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

/// The id of the add and edit forms' field an invalid request names (`""` for none of them).
fn field_id(error: &ManageError) -> &'static str {
    match error.field() {
        Some("name") => "name",
        Some("api_url") => "api_url",
        Some("payload_example") => "payload_example",
        Some("payload_format") => "payload_format",
        Some("type") => "type",
        _ => "",
    }
}

/// The integration id of a path segment.
fn integration_id(id: &str) -> Result<u64, ManageError> {
    id.parse().map_err(|_| ManageError::IntegrationNotFound)
}

impl Pages {
    /// Settings › Operations with `form` and `test_payload` as the person left them and `flash` as its message.
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
                payload_format: integration.payload_format().unwrap_or_default().to_owned(),
                active: integration.record.active,
                href: format!("{settings_base}/integrations/{}", integration.record.id),
            })
            .collect();
        let receiving = listed
            .iter()
            .filter(|integration| integration.kind.receives() && integration.record.active)
            .map(|integration| IntegrationRow {
                id: integration.record.id,
                name: integration.record.name.clone(),
                type_name: integration.kind.label().to_owned(),
                payload_format: String::new(),
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
                fields: form_fields(&form.kind),
                formats: format_options(&call.service.formats, &form.payload_format),
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

    /// Adds an integration from the form (or draws the form again for the type chosen).
    pub(super) async fn create_integration(
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
            payload_format: call.field("payload_format").unwrap_or("").trim().to_owned(),
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
        let sample = if kind.fields().custom_payload {
            form.payload_example.clone()
        } else {
            String::new()
        };
        let api_url = if kind.fields().api_url {
            form.api_url.clone()
        } else {
            String::new()
        };
        let payload_format = if kind.fields().payload_format {
            form.payload_format.clone()
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
                payload_format: non_empty(&payload_format),
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
        // A sender's own format is previewed: what its sample maps to, before any alert is created.
        if created
            .payload_format()
            .is_some_and(|name| name != DEFAULT_FORMAT)
            && created.kind.fields().payload_format
        {
            let preview = preview_of(call.service, &created);
            return self
                .integration_page(call, session, access, base, &id, Shown::Preview(preview))
                .await;
        }
        match manage::test_alert(call.service, access, created.record.id, None).await {
            Ok(_) => redirect(&format!("{page}?notice=tested")),
            Err(error) => {
                error.log();
                let error = format!(
                    "The integration was saved, but the test alert failed: {}",
                    error.message()
                );
                self.integration_page(call, session, access, base, &id, Shown::Error(error, ""))
                    .await
            }
        }
    }

    /// Sends a test alert to an integration and shows the outcome in place.
    pub(super) async fn test_alert(
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

    /// An integration's page, with a refused edit's message or a sample's preview when `shown` has one.
    pub(super) async fn integration_page(
        &self,
        call: &Call<'_>,
        session: &Session,
        access: &ProjectAccess,
        base: &str,
        id: &str,
        shown: Shown,
    ) -> Page {
        let (error, invalid, preview) = match shown {
            Shown::Error(text, field) => (Some(text), field, None),
            Shown::Preview(preview) => (None, "", Some(preview)),
            Shown::Plain => (None, "", None),
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
        let url = address.as_ref().map(|path| format!("{}{path}", call.origin));
        let format = integration
            .payload_format()
            .and_then(|name| call.service.intake.catalog().get(name));
        let setup = format.as_ref().and_then(|format| {
            let shown = url.as_deref().unwrap_or("(the Webhook URL, once Active)");
            format.setup(&[("address", shown)])
        });
        let key_in_address = format.as_ref().is_some_and(|format| {
            format
                .auth_schemes()
                .iter()
                .any(|scheme| matches!(scheme, AuthScheme::Query { .. }))
        });
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
                url,
                receives: integration.kind.receives(),
                active: record.active,
                is_http: integration.kind.fields().custom_payload,
                is_opsgenie: integration.kind.fields().api_url,
                payload_example: record
                    .payload_example
                    .as_deref()
                    .and_then(|text| serde_json::from_str::<Value>(text).ok())
                    .map(|value| serde_json::to_string_pretty(&value).unwrap_or_default())
                    .unwrap_or_default(),
                api_url: record.api_url.clone().unwrap_or_default(),
                payload_format: integration.payload_format().map(|name| {
                    let description = call
                        .service
                        .formats
                        .get(name)
                        .map_or(NOT_ON_OFFER, |choice| choice.description.as_str());
                    (name.to_owned(), description.to_owned())
                }),
                formats: if integration.kind.fields().payload_format {
                    format_options(&call.service.formats, &record.payload_format)
                } else {
                    Vec::new()
                },
                setup,
                key_in_address,
                // Only an https address is ever kept (the intake refuses others); checked again before it is a link.
                pending_confirmation: record
                    .pending_confirmation
                    .clone()
                    .filter(|link| link.starts_with("https://")),
                preview,
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

    /// Settings › Operations as it first shows: the notice named in the query, an empty form to add an integration.
    pub(super) async fn settings_page(
        &self,
        call: &Call<'_>,
        session: &Session,
        access: &ProjectAccess,
        base: &str,
    ) -> Page {
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

    /// Saves the incident settings (the two checkboxes of Settings › Operations).
    pub(super) async fn save_incident_settings(
        &self,
        call: &Call<'_>,
        session: &Session,
        access: &ProjectAccess,
        base: &str,
    ) -> Page {
        let settings = format!("{base}/settings/operations");
        let changes = SettingsChanges {
            create_incident: Some(call.checked("create_incident")),
            auto_close_incident: Some(call.checked("auto_close_incident")),
        };
        let saved = manage::update_incident_settings(call.service, access, changes).await;
        done(session, saved, &format!("{settings}?notice=incidents"))
    }

    /// Saves an integration's edit form; a refused change shows the integration's page again with the error.
    pub(super) async fn update_integration(
        &self,
        call: &Call<'_>,
        session: &Session,
        access: &ProjectAccess,
        base: &str,
        id: &str,
    ) -> Page {
        let settings = format!("{base}/settings/operations");
        let fields = IntegrationFields {
            name: Some(call.field("name").unwrap_or("").to_owned()),
            active: Some(call.checked("active")),
            api_url: call.field("api_url").map(str::to_owned),
            payload_example: call.field("payload_example").map(str::to_owned),
            payload_attribute_mapping: None,
            payload_format: call.field("payload_format").map(str::to_owned),
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
                self.integration_page(
                    call,
                    session,
                    access,
                    base,
                    id,
                    Shown::Error(error.message(), field),
                )
                .await
            }
        }
    }

    /// Asks to confirm resetting an integration's key.
    pub(super) fn confirm_reset_key(
        &self,
        call: &Call<'_>,
        session: &Session,
        access: &ProjectAccess,
        base: &str,
        id: &str,
    ) -> Page {
        let settings = format!("{base}/settings/operations");
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

    /// Asks to confirm deleting an integration.
    pub(super) fn confirm_delete(
        &self,
        call: &Call<'_>,
        session: &Session,
        access: &ProjectAccess,
        base: &str,
        id: &str,
    ) -> Page {
        let settings = format!("{base}/settings/operations");
        let integration =
            match integration_id(id).and_then(|id| manage::integration(call.service, access, id)) {
                Ok(integration) => integration,
                Err(error) => return error_page(Some(session), &error),
            };
        let text = if !integration.kind.receives() {
            format!(
                "The link to {} goes away. Alerts already received stay.",
                integration.kind.label()
            )
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

    /// Resets an integration's key, then shows its page with the new one.
    pub(super) async fn reset_key(
        &self,
        call: &Call<'_>,
        session: &Session,
        access: &ProjectAccess,
        base: &str,
        id: &str,
    ) -> Page {
        let settings = format!("{base}/settings/operations");
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

    /// Deletes an integration, then goes back to Settings › Operations.
    pub(super) async fn delete_integration(
        &self,
        call: &Call<'_>,
        session: &Session,
        access: &ProjectAccess,
        base: &str,
        id: &str,
    ) -> Page {
        let settings = format!("{base}/settings/operations");
        let deleted = match integration_id(id) {
            Ok(id) => manage::delete_integration(call.service, access, id).await,
            Err(error) => Err(error),
        };
        done(session, deleted, &format!("{settings}?notice=deleted"))
    }
}
/// What a page says of a stored format svcgate no longer offers (an operator's format file was removed).
const NOT_ON_OFFER: &str = "not among the formats svcgate knows now";

/// The options of a payload format select with `chosen` selected (the default when empty); a chosen format no
/// longer on offer is listed first, so that saving the form unchanged keeps it.
fn format_options(formats: &FormatChoices, chosen: &str) -> Vec<FormatOption> {
    let chosen = if chosen.is_empty() { DEFAULT_FORMAT } else { chosen };
    let mut options: Vec<FormatOption> = Vec::new();
    if !formats.contains(chosen) {
        options.push(FormatOption {
            name: chosen.to_owned(),
            description: NOT_ON_OFFER.to_owned(),
            selected: true,
        });
    }
    options.extend(formats.iter().map(|choice| FormatOption {
        name: choice.name.clone(),
        description: choice.description.clone(),
        selected: choice.name == chosen,
    }));
    options
}

/// Which types show which fields of the add form, from each kind's line in [`crate::alerts::kinds::KINDS`];
/// `drawn` is the type the form is drawn with.
fn form_fields(drawn: &str) -> FormFields {
    let kinds = crate::alerts::kinds::in_form_order();
    let names = |shows: fn(Kind) -> bool| {
        kinds
            .iter()
            .filter(|kind| shows(**kind))
            .map(|kind| kind.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    };
    // A type not listed (none may be added) shows no payload or API URL, and the test button, as before.
    let drawn_shows = |shows: fn(Kind) -> bool| Kind::parse(drawn).is_some_and(shows);
    let payload: fn(Kind) -> bool = |kind| kind.fields().custom_payload;
    let api_url: fn(Kind) -> bool = |kind| kind.fields().api_url;
    let payload_format: fn(Kind) -> bool = |kind| kind.fields().payload_format;
    FormFields {
        all: names(|_| true),
        payload: names(payload),
        api_url: names(api_url),
        receiving: names(Kind::receives),
        payload_format: names(payload_format),
        payload_shown: drawn_shows(payload),
        api_url_shown: drawn_shows(api_url),
        receiving_shown: Kind::parse(drawn).map_or(true, Kind::receives),
        payload_format_shown: drawn_shows(payload_format),
    }
}
/// What an integration's page shows besides the integration.
pub(super) enum Shown {
    /// Nothing more.
    Plain,
    /// A refused edit's message and the id of the field it is about (`""` for none).
    Error(String, &'static str),
    /// What "Save and test" read from the sample.
    Preview(PreviewView),
}

/// What an integration's sample payload maps to through its format (nothing stored): its alerts, or why none.
fn preview_of(service: &AlertService, integration: &Integration) -> PreviewView {
    let Some(sample) = integration.record.payload_example.as_deref() else {
        return PreviewView {
            note: "The integration was saved. Give it a sample payload (Edit, Sample payload) to see what it maps \
                   to; no alert was created."
                .to_owned(),
            rows: Vec::new(),
        };
    };
    match service.intake.preview(integration, sample.as_bytes()) {
        Ok(Reading::Alerts(alerts)) => PreviewView {
            note: format!(
                "The integration was saved. Its sample maps to {} alert{}, shown here; no alert was created.",
                alerts.len(),
                if alerts.len() == 1 { "" } else { "s" }
            ),
            rows: alerts.iter().map(preview_row).collect(),
        },
        Ok(Reading::Confirmation { subscribe_url }) => PreviewView {
            note: format!(
                "The integration was saved. The sample is a subscription confirmation ({subscribe_url}): a \
                 delivery like it is kept for a maintainer to open; no alert was created."
            ),
            rows: Vec::new(),
        },
        Ok(Reading::Ignored { reason }) => PreviewView {
            note: format!(
                "The integration was saved. The sample carries no alert ({reason}); no alert was created."
            ),
            rows: Vec::new(),
        },
        Err(error) => PreviewView {
            note: format!("The integration was saved, but its sample would be refused: {error}"),
            rows: Vec::new(),
        },
    }
}

/// One previewed alert, for the page.
fn preview_row(alert: &NormalizedAlert) -> PreviewRow {
    let text = |value: &Option<String>| value.clone().unwrap_or_default();
    PreviewRow {
        action: if alert.is_resolve() { "resolves" } else { "fires" },
        title: alert.title.clone(),
        severity: alert.severity.as_str(),
        started: format_time(alert.started_at),
        ended: alert.ended_at.map(format_time).unwrap_or_default(),
        hosts: alert.hosts.join(", "),
        service: text(&alert.service),
        environment: text(&alert.environment),
        monitoring_tool: text(&alert.monitoring_tool),
        fingerprint: alert.fingerprint.as_deref().map_or_else(
            || "none".to_owned(),
            |hash| format!("{}…", &hash[..hash.len().min(12)]),
        ),
        warnings: alert.warnings.join("; "),
    }
}

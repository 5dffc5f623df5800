//! The alert pages: the Alert Management list (status tabs, search, severity filter, sort, pages, and what an
//! empty list means), one alert's page and its status change, and the environments dashboard (open alerts
//! grouped by environment).

use http::StatusCode;

use super::call::Call;
use super::format::{self, plural, status_label, time_view};
use super::render::{done, error_page, notice_text, project_view, render, user_view, Page};
use super::session::Session;
use super::views::{
    severity_view, AlertPage, AlertRow, Alerts, EmptyState, EnvironmentGroup, Environments, Section, Tab,
};
use super::Pages;
use crate::alerts::manage::{self, AlertListParams, ManageError};
use crate::backend::access::{ProjectAccess, Role};
use crate::store::AlertRecord;
use crate::util::url_parts::encode_pairs;

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
    /// The Alert Management list.
    pub(super) async fn alert_list(
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

    /// One alert's page.
    pub(super) async fn alert_page(
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

    /// The environments dashboard.
    pub(super) async fn environments(
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

    /// Changes an alert's status from its page, then shows the alert again.
    pub(super) async fn change_status(
        &self,
        call: &Call<'_>,
        session: &Session,
        access: &ProjectAccess,
        base: &str,
        iid: &str,
    ) -> Page {
        let changed =
            manage::change_status(call.service, access, iid.parse().ok(), call.field("status")).await;
        done(session, changed, &format!("{base}/alerts/{iid}?notice=status"))
    }
}

//! The V3 migration report: for each legacy client, the V3 routes it still calls and exactly what to change.
//!
//! A client is a user and a product ([`super::clients`]): the usage rows of one user whose user agents differ only
//! in their versions are one client, with its versions listed. Each route it called comes with a [`RouteAdvice`]:
//! the V4 request that replaces it and what changes in the answer, read from the same [`Rule`] data the gateway
//! runs, and with an example built by [`explain`](super::explain::explain) (the plan the live pipeline carries
//! out) for a sample request of the route's template, so the report cannot drift from what the gateway does.
//! Nothing but route templates, counts and times goes in: no token, no body. The report has at most one entry per
//! stored usage row, so its size follows the usage caps (`usage_max_clients_per_route`, the pending-count bound).
//!
//! Renderers: JSON (the types serialize), [`markdown`] (one client, to paste into an issue) and [`csv`].

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Serialize;

use super::clients::{agent, client_id, is_retired};
use super::explain::{explain, procedure_text};
use super::rule::{Converter, Rule, Segment};
use super::shape::{FieldConverter, Source};
use super::table::RuleTable;
use super::usage::NO_RULE;
use crate::store::{IdKind, UsageRow};

/// How a V3 route changes in V4.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    /// A rule translates it: see the advice.
    Rule,
    /// The same route under `/api/v4` (no rule names it, or its rule is a checked pass-through).
    PrefixOnly,
    /// The bucket of failed calls to paths no rule names: nothing to translate, the calls failed.
    FailedUnknownPaths,
    /// GitHub-compatibility routes, which stay under `/api/v3` on the server itself.
    GithubCompat,
    /// A rule template the current rule table no longer has.
    NoLongerInTable,
}

/// A V3 field of the answer that V4 names differently.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldRename {
    /// The V3 name.
    pub v3: String,
    /// The V4 field it comes from.
    pub v4: String,
    /// How the value differs, when it does (`visibility_level`: V4's string `visibility`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub converted: Option<String>,
}

/// A status V4 answers where V3 answered another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct StatusChange {
    /// What V4 answers.
    pub v4: u16,
    /// What V3 answered.
    pub v3: u16,
}

/// What changes in the answer.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct AnswerChange {
    /// The V3 entity the gateway shapes the answer as, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entity: Option<String>,
    /// V3 fields V4 names differently.
    pub fields_renamed: Vec<FieldRename>,
    /// V3 fields V4 does not have (the gateway filled them with a constant).
    pub fields_removed: Vec<String>,
    /// Statuses V4 answers differently.
    pub status: Vec<StatusChange>,
    /// Pagination differences.
    pub pagination: Vec<String>,
    /// Other differences of the answer, one sentence each.
    pub notes: Vec<String>,
}

/// A sample request of the route and the V4 calls the gateway plans for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Example {
    /// The V3 request (`GET /api/v3/projects/1/issues/1234`).
    pub v3: String,
    /// The V4 calls known before any answer, as `svcgate translate` prints them.
    pub v4: Vec<String>,
}

/// What one V3 route becomes in V4: shared by the report's JSON, Markdown and CSV.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RouteAdvice {
    /// How the route changes.
    pub change: Change,
    /// One sentence: what to do.
    pub summary: String,
    /// The V4 method, when there is a V4 request.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub v4_method: Option<String>,
    /// The V4 path template (`/api/v4/projects/:id/issues/:issue_iid`), when there is a V4 request.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub v4_path: Option<String>,
    /// Whether V4 has the route at another path or method.
    pub moved: bool,
    /// The release that changed the route (`9.0`), for rules.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    /// The section of the translation reference, for rules.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub section: Option<String>,
    /// Changes to make in the request, one sentence each (parameters renamed or converted, ids, added ones).
    pub request: Vec<String>,
    /// When V4 has no single equivalent call: what the gateway does instead, for the client to do.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instead: Option<String>,
    /// What changes in the answer.
    pub answer: AnswerChange,
    /// A sample request and the gateway's plan for it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub example: Option<Example>,
}

/// One route a client called.
#[derive(Debug, Clone, Serialize)]
pub struct RouteReport {
    /// The route as the usage counts name it (`GET /projects/:id/issues`).
    pub route: String,
    /// Calls.
    pub calls: u64,
    /// Error answers.
    pub errors: u64,
    /// First call.
    pub first_call: String,
    /// Last call.
    pub last_call: String,
    /// What to change.
    pub advice: RouteAdvice,
}

/// One client's migration report.
#[derive(Debug, Clone, Serialize)]
pub struct ClientReport {
    /// The client id ([`client_id`]).
    pub id: String,
    /// The user (or `anonymous`, `unknown`, `others`).
    pub user: String,
    /// The `User-Agent` without its versions.
    pub product: String,
    /// The versions seen, sorted (empty when the agent names none).
    pub versions: Vec<String>,
    /// Calls over all routes.
    pub calls: u64,
    /// Error answers over all routes.
    pub errors: u64,
    /// First call.
    pub first_call: String,
    /// Last call.
    pub last_call: String,
    /// No call for `v3_client_retired_after`.
    pub retired: bool,
    /// Its routes, most called first.
    pub routes: Vec<RouteReport>,
}

/// A client in the list: the report without its routes, with their count.
#[derive(Debug, Clone, Serialize)]
pub struct ClientSummary {
    /// The client id.
    pub id: String,
    /// The user.
    pub user: String,
    /// The `User-Agent` without its versions.
    pub product: String,
    /// The versions seen.
    pub versions: Vec<String>,
    /// Calls.
    pub calls: u64,
    /// Error answers.
    pub errors: u64,
    /// First call.
    pub first_call: String,
    /// Last call.
    pub last_call: String,
    /// No call for `v3_client_retired_after`.
    pub retired: bool,
    /// How many routes it called.
    pub routes: usize,
}

impl ClientReport {
    /// The client without its routes.
    pub fn summary(&self) -> ClientSummary {
        ClientSummary {
            id: self.id.clone(),
            user: self.user.clone(),
            product: self.product.clone(),
            versions: self.versions.clone(),
            calls: self.calls,
            errors: self.errors,
            first_call: self.first_call.clone(),
            last_call: self.last_call.clone(),
            retired: self.retired,
            routes: self.routes.len(),
        }
    }

    /// Whether `wanted` names this client: its id, or its user.
    pub fn is_named(&self, wanted: &str) -> bool {
        self.id == wanted || self.user == wanted
    }
}

/// Groups usage rows into clients, each with its routes and their advice; clients most called first.
pub fn report(
    rows: &[UsageRow],
    table: &RuleTable,
    now: time::OffsetDateTime,
    retired_after: Duration,
) -> Vec<ClientReport> {
    let mut clients: BTreeMap<String, ClientReport> = BTreeMap::new();
    let mut advice: BTreeMap<&str, RouteAdvice> = BTreeMap::new();
    for row in rows {
        let agent = agent(&row.user_agent);
        let id = client_id(&row.client, &agent.product);
        let client = clients.entry(id.clone()).or_insert_with(|| ClientReport {
            id,
            user: row.client.clone(),
            product: agent.product.clone(),
            versions: Vec::new(),
            calls: 0,
            errors: 0,
            first_call: row.first_seen.clone(),
            last_call: row.last_seen.clone(),
            retired: false,
            routes: Vec::new(),
        });
        if !agent.version.is_empty() && !client.versions.contains(&agent.version) {
            client.versions.push(agent.version);
        }
        client.calls += row.calls;
        client.errors += row.errors;
        client.first_call = client.first_call.clone().min(row.first_seen.clone());
        client.last_call = client.last_call.clone().max(row.last_seen.clone());
        match client.routes.iter_mut().find(|route| route.route == row.route) {
            Some(route) => {
                route.calls += row.calls;
                route.errors += row.errors;
                route.first_call = route.first_call.clone().min(row.first_seen.clone());
                route.last_call = route.last_call.clone().max(row.last_seen.clone());
            }
            None => {
                let advice = advice
                    .entry(row.route.as_str())
                    .or_insert_with(|| route_advice(table, &row.route))
                    .clone();
                client.routes.push(RouteReport {
                    route: row.route.clone(),
                    calls: row.calls,
                    errors: row.errors,
                    first_call: row.first_seen.clone(),
                    last_call: row.last_seen.clone(),
                    advice,
                });
            }
        }
    }
    let mut clients: Vec<ClientReport> = clients.into_values().collect();
    for client in &mut clients {
        client.versions.sort();
        client.retired = is_retired(&client.last_call, now, retired_after);
        client
            .routes
            .sort_by(|a, b| b.calls.cmp(&a.calls).then_with(|| a.route.cmp(&b.route)));
    }
    clients.sort_by(|a, b| b.calls.cmp(&a.calls).then_with(|| a.id.cmp(&b.id)));
    clients
}

/// The advice for a route as the usage counts name it: a rule template, `METHOD /path (no rule)`, [`NO_RULE`] or
/// `github-compat`.
pub fn route_advice(table: &RuleTable, route: &str) -> RouteAdvice {
    if route == NO_RULE {
        return plain(
            Change::FailedUnknownPaths,
            "failed calls to paths no rule names (typos, invented or removed routes), counted together: the \
             backend answered them with an error, so there is nothing to translate; find the failing calls in the \
             client's own logs",
            None,
        );
    }
    if route == "github-compat" {
        return plain(
            Change::GithubCompat,
            "GitHub-compatibility route: it stays at /api/v3 on the server itself; nothing to change",
            None,
        );
    }
    let Some((method, template)) = route.split_once(' ') else {
        return plain(Change::NoLongerInTable, "not a route the gateway names", None);
    };
    if let Some(path) = template.strip_suffix(" (no rule)") {
        return plain(
            Change::PrefixOnly,
            "no change but the prefix: call the same path under /api/v4",
            Some((method, format!("/api/v4{path}"))),
        );
    }
    match table
        .rules()
        .iter()
        .find(|rule| rule.v3.method.as_str() == method && rule.v3.template == template)
    {
        Some(rule) if rule.is_passthrough() => {
            let mut advice = plain(
                Change::PrefixOnly,
                "no change but the prefix: call the same path under /api/v4",
                Some((method, format!("/api/v4{template}"))),
            );
            advice.since = Some(rule.since.clone());
            advice.section = Some(rule.section.clone());
            advice
        }
        Some(rule) => rule_advice(table, rule),
        None => plain(
            Change::NoLongerInTable,
            "the current rule table has no rule for this route any more: check it with `svcgate translate`",
            None,
        ),
    }
}

fn plain(change: Change, summary: &str, v4: Option<(&str, String)>) -> RouteAdvice {
    let (v4_method, v4_path) = match v4 {
        Some((method, path)) => (Some(method.to_owned()), Some(path)),
        None => (None, None),
    };
    RouteAdvice {
        change,
        summary: summary.to_owned(),
        v4_method,
        v4_path,
        moved: false,
        since: None,
        section: None,
        request: Vec::new(),
        instead: None,
        answer: AnswerChange::default(),
        example: None,
    }
}

/// The V4 route of a rule as `(method, /api/v4/template)`.
pub fn v4_route(rule: &Rule) -> (String, String) {
    (rule.v4.method.to_string(), format!("/api/v4{}", rule.v4.template))
}

/// Whether V4 has the route at another method or path: parameter names (`:issue_id` → `:issue_iid`) do not count.
fn is_moved(rule: &Rule) -> bool {
    let same_segment = |pair: (&Segment, &Segment)| match pair {
        (Segment::Literal(v3), Segment::Literal(v4)) => v3 == v4,
        (Segment::Param(_), Segment::Param(_)) | (Segment::Rest(_), Segment::Rest(_)) => true,
        _ => false,
    };
    rule.v3.method != rule.v4.method
        || rule.v3.segments.len() != rule.v4.segments.len()
        || !rule.v3.segments.iter().zip(&rule.v4.segments).all(same_segment)
}

fn rule_advice(table: &RuleTable, rule: &Rule) -> RouteAdvice {
    let (v4_method, v4_path) = v4_route(rule);
    let moved = is_moved(rule);
    let summary = match (rule.procedure, moved) {
        (Some(_), _) => format!(
            "call {v4_method} {v4_path}; where V4 has no single equivalent call, take the steps under \"instead\""
        ),
        (None, true) => format!("moved: call {v4_method} {v4_path}"),
        (None, false) => format!("same route under /api/v4 ({v4_method} {v4_path}); see the changes below"),
    };
    RouteAdvice {
        change: Change::Rule,
        summary,
        v4_method: Some(v4_method),
        v4_path: Some(v4_path),
        moved,
        since: Some(rule.since.clone()),
        section: Some(rule.section.clone()),
        request: request_changes(rule),
        instead: rule
            .procedure
            .map(|procedure| procedure_text(procedure).to_owned()),
        answer: answer_change(table, rule),
        example: example(table, rule),
    }
}

fn kind_name(kind: IdKind) -> &'static str {
    match kind {
        IdKind::Issue => "issue",
        IdKind::MergeRequest => "merge request",
    }
}

fn converter_text(converter: Converter) -> &'static str {
    match converter {
        Converter::VisibilityLevel => "0/10/20 become private/internal/public",
        Converter::PublicFlag => "true becomes public, false private",
        Converter::Negate => "the boolean negated",
        Converter::SkipConfirmation => "confirm=false becomes skip_confirmation=true",
    }
}

/// What to change in the request: ids, parameters renamed or converted, parameters added, dropped or moved into
/// the path, required ones.
pub fn request_changes(rule: &Rule) -> Vec<String> {
    let mut changes = Vec::new();
    for (param, kind) in &rule.ids {
        changes.push(format!(
            "{param} was the {kind}'s global id: V4 takes its iid (the `iid` field) as {}",
            Rule::iid_param(param),
            kind = kind_name(*kind)
        ));
    }
    for conversion in &rule.conversions {
        let mut text = match conversion.with {
            Some(converter) if conversion.from == conversion.to => {
                format!("parameter {}: {}", conversion.from, converter_text(converter))
            }
            Some(converter) => format!(
                "parameter {} becomes {} ({})",
                conversion.from,
                conversion.to,
                converter_text(converter)
            ),
            None => format!("parameter {} is renamed {}", conversion.from, conversion.to),
        };
        if let Some(unless) = &conversion.unless {
            text.push_str(&format!(" (ignored when {unless} is given)"));
        }
        changes.push(text);
    }
    for (name, value) in &rule.add_query {
        let value = match value.strip_prefix(':') {
            Some(param) => format!("the value of :{param}"),
            None => value.clone(),
        };
        changes.push(format!("add {name}={value} to the query (V3 implied it)"));
    }
    for (name, value) in &rule.add_body {
        changes.push(format!("add {name}={value} to the body (V3 implied it)"));
    }
    for (name, value) in &rule.drop_if {
        changes.push(format!("leave out {name}={value} (V4 does not take it)"));
    }
    for name in &rule.path_from_request {
        changes.push(format!(
            "parameter {name} moves into the path (URL-encoded), as :{name}"
        ));
    }
    if rule
        .v3
        .segments
        .iter()
        .any(|segment| matches!(segment, Segment::Rest(_)))
    {
        changes.push("a path with slashes in the last segment is URL-encoded in V4 (%2F)".to_owned());
    }
    changes
}

fn field_converter_text(source: &Source) -> Option<String> {
    match source {
        Source::From(_, Some(FieldConverter::VisibilityLevel)) => {
            Some("V4's private/internal/public where V3 gave 0/10/20".to_owned())
        }
        Source::From(_, Some(FieldConverter::VisibilityIsPublic)) => {
            Some("V4's \"public\" where V3 gave true, anything else false".to_owned())
        }
        _ => None,
    }
}

/// What changes in the answer: the rule's response shape (renamed and removed fields), status map, pagination.
pub fn answer_change(table: &RuleTable, rule: &Rule) -> AnswerChange {
    let mut answer = AnswerChange {
        entity: rule.response.clone(),
        ..AnswerChange::default()
    };
    let mut entities: Vec<&str> = rule.response.iter().map(String::as_str).collect();
    entities.extend(rule.response_when.iter().map(|(_, entity)| entity.as_str()));
    entities.extend(rule.response_anonymous.as_deref());
    for entity in entities {
        for field in table.shapes().fields(entity) {
            match &field.source {
                Source::From(v4, _) if v4 != &field.name => {
                    if !answer.fields_renamed.iter().any(|known| known.v3 == field.name) {
                        answer.fields_renamed.push(FieldRename {
                            v3: field.name.clone(),
                            v4: v4.clone(),
                            converted: field_converter_text(&field.source),
                        });
                    }
                }
                Source::From(_, Some(_)) => {
                    if !answer.fields_renamed.iter().any(|known| known.v3 == field.name) {
                        answer.fields_renamed.push(FieldRename {
                            v3: field.name.clone(),
                            v4: field.name.clone(),
                            converted: field_converter_text(&field.source),
                        });
                    }
                }
                Source::Const(_) => {
                    if !answer.fields_removed.contains(&field.name) {
                        answer.fields_removed.push(field.name.clone());
                    }
                }
                Source::Same | Source::From(..) => {}
            }
        }
    }
    answer.status = rule
        .status
        .iter()
        .map(|(v4, v3)| StatusChange { v4: *v4, v3: *v3 })
        .collect();
    if rule.page_base == 0 {
        answer
            .pagination
            .push("V4 pages start at 1 where V3's started at 0: add one to page".to_owned());
    }
    if rule.collect_all_pages {
        answer.pagination.push(
            "V3 answered the whole list; V4 answers pages (per_page up to 100): follow X-Next-Page or the Link header"
                .to_owned(),
        );
    }
    if rule.prefetch {
        answer.notes.push(
            "V3 answered the resource itself; V4 answers without it: GET it first if you need it".to_owned(),
        );
    }
    if let Some(path) = &rule.refetch {
        answer.notes.push(format!(
            "V3 answered the resource; V4 answers a status: GET /api/v4{path} after the call if you need it"
        ));
    }
    if let Some(template) = &rule.answer {
        answer.notes.push(format!(
            "V3 answered {template} (\":name\" the parameter); V4's answer differs"
        ));
    }
    if let Some(fetch) = &rule.item_fetch {
        let what = if fetch.fields.is_empty() {
            "the whole item".to_owned()
        } else {
            fetch.fields.join(", ")
        };
        answer.notes.push(format!(
            "V4's list items lack {what}: read GET /api/v4{} per item if you need it",
            fetch.path
        ));
    }
    if let Some(embed) = &rule.embed {
        answer.notes.push(format!(
            "V4's items lack `{}`: read GET /api/v4{} once",
            embed.field, embed.path
        ));
    }
    if let Some((status, message)) = &rule.unseen {
        answer.notes.push(format!(
            "an id the caller may not see: V3 answered {status} {{\"message\":\"{message}\"}}, V4 answers its own 404"
        ));
    }
    answer
}

/// A V3 request of the rule's template with sample values: `1` for each parameter, `1234` for global ids, `a/b`
/// for a rest of the path, and the parameters the V4 path takes from the request.
pub fn sample_request(rule: &Rule) -> String {
    let mut path = String::from(super::V3_PREFIX);
    for segment in &rule.v3.segments {
        path.push('/');
        match segment {
            Segment::Literal(text) => path.push_str(text),
            Segment::Param(name) if rule.ids.iter().any(|(param, _)| param == name) => path.push_str("1234"),
            Segment::Param(_) => path.push('1'),
            Segment::Rest(_) => path.push_str("a/b"),
        }
    }
    let query: Vec<String> = rule
        .path_from_request
        .iter()
        .map(|name| format!("{name}=x"))
        .collect();
    if query.is_empty() {
        format!("{} {path}", rule.v3.method)
    } else {
        format!("{} {path}?{}", rule.v3.method, query.join("&"))
    }
}

/// The example: the sample request explained as `svcgate translate` explains it, global ids resolved to iid 7.
pub fn example(table: &RuleTable, rule: &Rule) -> Option<Example> {
    let request = sample_request(rule);
    let resolved: Vec<(String, u64)> = rule.ids.iter().map(|(param, _)| (param.clone(), 7)).collect();
    let explanation = explain(table, &request, None, &resolved).ok()?;
    Some(Example {
        v3: request,
        v4: explanation
            .calls
            .iter()
            .map(|call| format!("{} {}", call.method, call.target))
            .collect(),
    })
}

/// The output formats of `svcgate v3 report`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Each client's Markdown, one after another.
    Markdown,
    /// `{"clients": [...]}`, each client's full report.
    Json,
    /// One line per client and route.
    Csv,
}

/// Why a report cannot be given.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// No client has this id or user.
    #[error("no V3 client {0:?} in the usage counts: give a client id or a user (the JSON or CSV report lists them)")]
    UnknownClient(String),
    /// The CSV could not be written.
    #[error("writing the CSV: {0}")]
    Csv(#[from] csv::Error),
    /// The JSON could not be written.
    #[error("writing the JSON: {0}")]
    Json(#[from] serde_json::Error),
}

/// The clients `wanted` names (its id, or every client of that user), or all of them without `wanted`.
pub fn select(clients: Vec<ClientReport>, wanted: Option<&str>) -> Result<Vec<ClientReport>, ReportError> {
    let Some(wanted) = wanted else {
        return Ok(clients);
    };
    let chosen: Vec<ClientReport> = clients
        .into_iter()
        .filter(|client| client.is_named(wanted))
        .collect();
    if chosen.is_empty() {
        return Err(ReportError::UnknownClient(wanted.to_owned()));
    }
    Ok(chosen)
}

/// The reports in `format`.
pub fn render(clients: &[ClientReport], format: Format) -> Result<String, ReportError> {
    match format {
        Format::Markdown => Ok(clients.iter().map(markdown).collect::<Vec<_>>().join("\n")),
        Format::Json => Ok(serde_json::to_string_pretty(
            &serde_json::json!({ "clients": clients }),
        )?),
        Format::Csv => Ok(csv(clients)?),
    }
}

fn plural(count: u64, one: &str, many: &str) -> String {
    format!("{count} {}", if count == 1 { one } else { many })
}

fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

/// One client's report as Markdown, to paste into an issue: a heading, a table of routes, then each route's change.
pub fn markdown(client: &ClientReport) -> String {
    let mut out = String::new();
    let versions = if client.versions.is_empty() {
        String::new()
    } else {
        format!(" (versions {})", client.versions.join(", "))
    };
    out.push_str(&format!(
        "## V3 migration: {} — {}{versions}\n\n",
        cell(&client.user),
        cell(&client.product)
    ));
    out.push_str(&format!(
        "Client `{}`: {} ({}) from {} to {}{}. Every route below must move to V4 before V3 is switched off.\n\n",
        client.id,
        plural(client.calls, "V3 call", "V3 calls"),
        plural(client.errors, "error", "errors"),
        client.first_call,
        client.last_call,
        if client.retired { "; retired (no recent call)" } else { "" }
    ));
    out.push_str("| V3 route | Calls | Errors | First call | Last call | V4 request |\n");
    out.push_str("|---|---:|---:|---|---|---|\n");
    for route in &client.routes {
        let v4 = match (&route.advice.v4_method, &route.advice.v4_path) {
            (Some(method), Some(path)) => format!("`{method} {path}`"),
            _ => "—".to_owned(),
        };
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} | {} |\n",
            cell(&route.route),
            route.calls,
            route.errors,
            route.first_call,
            route.last_call,
            cell(&v4)
        ));
    }
    for route in &client.routes {
        out.push_str(&format!("\n### `{}`\n\n", cell(&route.route)));
        out.push_str(&advice_markdown(&route.advice));
    }
    out
}

impl RouteAdvice {
    /// What to change, one sentence each (`Request: …`, `Instead: …`, `Answer: …`, `Status: …`): the lines the
    /// Markdown report lists and `svcgate translate` prints under "migration".
    pub fn changes(&self) -> Vec<String> {
        let mut lines: Vec<String> = Vec::new();
        for change in &self.request {
            lines.push(format!("Request: {change}."));
        }
        if let Some(instead) = &self.instead {
            lines.push(format!("Instead: {instead}."));
        }
        let answer = &self.answer;
        for rename in &answer.fields_renamed {
            match &rename.converted {
                Some(how) => lines.push(format!("Answer: `{}` is V4's `{}` ({how})", rename.v3, rename.v4)),
                None => lines.push(format!("Answer: `{}` is V4's `{}`", rename.v3, rename.v4)),
            }
        }
        if !answer.fields_removed.is_empty() {
            lines.push(format!(
                "Answer: V4 has no {}",
                answer
                    .fields_removed
                    .iter()
                    .map(|field| format!("`{field}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        for status in &answer.status {
            lines.push(format!(
                "Status: V4 answers {} where V3 answered {}",
                status.v4, status.v3
            ));
        }
        for text in answer.pagination.iter().chain(&answer.notes) {
            lines.push(format!("Answer: {text}"));
        }
        lines
    }
}

/// The advice for one request as `svcgate translate` takes it (`METHOD /api/v3/path[?query]`): the route the
/// usage counts would name it by, and its [`route_advice`]. `None` when the text is not a V3 request.
pub fn request_advice(table: &RuleTable, request_line: &str) -> Option<RouteAdvice> {
    let (method, target) = request_line.trim().split_once(' ')?;
    let method: http::Method = method.to_ascii_uppercase().parse().ok()?;
    let path = target.trim().split('?').next()?.strip_prefix(super::V3_PREFIX)?;
    let path = super::fold_empty_segments(path);
    let route = if super::is_github_compat(&path) {
        "github-compat".to_owned()
    } else {
        match table.find(&method, &path) {
            Some(matched) => format!("{} {}", matched.rule.v3.method, matched.rule.v3.template),
            None => super::usage::route_of_path(method.as_str(), &path),
        }
    };
    Some(route_advice(table, &route))
}

fn advice_markdown(advice: &RouteAdvice) -> String {
    let mut out = format!("{}.\n", advice.summary);
    if let (Some(since), Some(section)) = (&advice.since, &advice.section) {
        out.push_str(&format!(
            "\nChanged in {since} (translation reference §{section}).\n"
        ));
    }
    let mut bullets = advice.changes();
    if let Some(example) = &advice.example {
        let calls = if example.v4.is_empty() {
            "the steps under Instead".to_owned()
        } else {
            example
                .v4
                .iter()
                .map(|call| format!("`{call}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        bullets.push(format!("Example: `{}` → {calls}", example.v3));
    }
    if !bullets.is_empty() {
        out.push('\n');
        for bullet in bullets {
            out.push_str(&format!("- {}\n", cell(&bullet)));
        }
    }
    out
}

/// The reports as CSV, one line per client and route.
pub fn csv(clients: &[ClientReport]) -> Result<String, csv::Error> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record([
        "client_id",
        "user",
        "product",
        "versions",
        "retired",
        "route",
        "calls",
        "errors",
        "first_call",
        "last_call",
        "change",
        "v4_request",
        "request_changes",
        "answer_changes",
    ])?;
    for client in clients {
        for route in &client.routes {
            let advice = &route.advice;
            let v4 = match (&advice.v4_method, &advice.v4_path) {
                (Some(method), Some(path)) => format!("{method} {path}"),
                _ => String::new(),
            };
            let mut request = advice.request.clone();
            request.extend(advice.instead.iter().map(|text| format!("instead: {text}")));
            let answer = &advice.answer;
            let answer_text: Vec<String> = answer
                .fields_renamed
                .iter()
                .map(|rename| format!("{} is {}", rename.v3, rename.v4))
                .chain(answer.fields_removed.iter().map(|field| format!("no {field}")))
                .chain(
                    answer
                        .status
                        .iter()
                        .map(|status| format!("{} for {}", status.v4, status.v3)),
                )
                .chain(answer.pagination.iter().cloned())
                .chain(answer.notes.iter().cloned())
                .collect();
            let change = serde_json::to_value(advice.change)
                .ok()
                .and_then(|value| value.as_str().map(str::to_owned))
                .unwrap_or_default();
            writer.write_record([
                client.id.as_str(),
                client.user.as_str(),
                client.product.as_str(),
                &client.versions.join(" "),
                if client.retired { "yes" } else { "no" },
                route.route.as_str(),
                &route.calls.to_string(),
                &route.errors.to_string(),
                route.first_call.as_str(),
                route.last_call.as_str(),
                &change,
                &v4,
                &request.join("; "),
                &answer_text.join("; "),
            ])?;
        }
    }
    let bytes = writer.into_inner().map_err(|error| error.into_error())?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn table() -> RuleTable {
        RuleTable::builtin().unwrap()
    }

    fn row(route: &str, client: &str, user_agent: &str, calls: u64, last_seen: &str) -> UsageRow {
        UsageRow {
            route: route.to_owned(),
            since: "9.0".to_owned(),
            client: client.to_owned(),
            user_agent: user_agent.to_owned(),
            calls,
            errors: 1,
            first_seen: "2026-11-01T00:00:00.000Z".to_owned(),
            last_seen: last_seen.to_owned(),
        }
    }

    fn now() -> time::OffsetDateTime {
        time::macros::datetime!(2026-11-27 12:00 UTC)
    }

    const THIRTY_DAYS: Duration = Duration::from_secs(30 * 86_400);

    /// The V4 method and path (no query) of the call the gateway makes for the rule's sample request, from
    /// `explain`: the call after the pre-fetch, or (for a procedure, whose calls depend on answers) the rule line.
    fn explained_route(table: &RuleTable, rule: &Rule) -> (String, String) {
        let request = sample_request(rule);
        let resolved: Vec<(String, u64)> = rule.ids.iter().map(|(param, _)| (param.clone(), 7)).collect();
        let explanation = explain(table, &request, None, &resolved).unwrap();
        let main = explanation.calls.get(usize::from(rule.prefetch));
        match (rule.procedure, main) {
            (None, Some(call)) => {
                let path = call.target.split('?').next().unwrap_or_default().to_owned();
                (call.method.to_string(), path)
            }
            _ => {
                let line = explanation
                    .lines
                    .iter()
                    .find(|line| line.starts_with("rule: "))
                    .unwrap();
                let v4 = line.split(" → ").nth(1).unwrap();
                let v4 = v4.split(" (since").next().unwrap();
                let (method, template) = v4.split_once(' ').unwrap();
                (method.to_owned(), format!("/api/v4{template}"))
            }
        }
    }

    /// The advice's V4 template with the sample values the plan filled in: `1`, iid 7, `a%2Fb`, moved params `x`.
    fn filled(rule: &Rule, template: &str) -> String {
        let iids: Vec<String> = rule.ids.iter().map(|(param, _)| Rule::iid_param(param)).collect();
        template
            .split('/')
            .map(|segment| {
                if let Some(name) = segment.strip_prefix(':') {
                    if iids.iter().any(|iid| iid == name) {
                        "7".to_owned()
                    } else if rule.path_from_request.iter().any(|moved| moved == name) {
                        "x".to_owned()
                    } else {
                        "1".to_owned()
                    }
                } else if segment.starts_with('*') {
                    "a%2Fb".to_owned()
                } else {
                    segment.to_owned()
                }
            })
            .collect::<Vec<_>>()
            .join("/")
    }

    #[test]
    fn every_rule_advises_the_v4_request_translate_plans() {
        let table = table();
        assert!(table.rules().len() > 100);
        for rule in table.rules() {
            let route = format!("{} {}", rule.v3.method, rule.v3.template);
            let advice = route_advice(&table, &route);
            let (method, path) = (advice.v4_method.clone().unwrap(), advice.v4_path.clone().unwrap());
            let (explained_method, explained_path) = explained_route(&table, rule);
            assert_eq!(method, explained_method, "{route}");
            if rule.procedure.is_some() {
                assert_eq!(path, explained_path, "{route}");
            } else {
                assert_eq!(filled(rule, &path), explained_path, "{route}");
            }
            if rule.is_passthrough() {
                assert_eq!(advice.change, Change::PrefixOnly, "{route}");
            } else {
                assert_eq!(advice.change, Change::Rule, "{route}");
                assert!(advice.example.is_some(), "{route}");
            }
            for (param, _) in &rule.ids {
                assert!(
                    advice
                        .request
                        .iter()
                        .any(|text| text.contains(&Rule::iid_param(param))),
                    "{route}: {param}"
                );
            }
            for (v4, v3) in &rule.status {
                assert!(
                    advice.answer.status.contains(&StatusChange { v4: *v4, v3: *v3 }),
                    "{route}"
                );
            }
            assert_eq!(advice.instead.is_some(), rule.procedure.is_some(), "{route}");
        }
    }

    #[test]
    fn answers_name_renamed_and_removed_fields_and_pagination() {
        let table = table();
        let commits = route_advice(&table, "GET /projects/:id/repository/commits");
        assert!(commits
            .answer
            .pagination
            .iter()
            .any(|text| text.contains("add one to page")));
        let projects = route_advice(&table, "GET /projects");
        assert!(
            projects
                .answer
                .fields_renamed
                .iter()
                .any(|rename| rename.v3 == "visibility_level"),
            "{:?}",
            projects.answer
        );
        assert!(projects
            .request
            .iter()
            .any(|text| text.contains("membership=true")));
        assert!(!route_advice(&table, "PUT /projects/:id/issues/:issue_id").moved);
        let star = route_advice(&table, "DELETE /projects/:id/star");
        assert!(star.moved);
        assert_eq!(star.v4_path.as_deref(), Some("/api/v4/projects/:id/unstar"));
    }

    #[test]
    fn routes_without_a_rule_change_only_the_prefix_and_failures_say_so() {
        let table = table();
        let user = route_advice(&table, "GET /user (no rule)");
        assert_eq!(user.change, Change::PrefixOnly);
        assert_eq!(user.v4_path.as_deref(), Some("/api/v4/user"));
        assert!(user.summary.starts_with("no change but the prefix"));
        let failed = route_advice(&table, NO_RULE);
        assert_eq!(failed.change, Change::FailedUnknownPaths);
        assert!(failed.v4_path.is_none());
        assert_eq!(
            route_advice(&table, "GET /gone/:id").change,
            Change::NoLongerInTable
        );
    }

    #[test]
    fn translate_s_request_gets_the_advice_of_the_route_it_counts_under() {
        let table = table();
        let issue = request_advice(&table, "GET /api/v3/projects/1/issues/2?x=1").unwrap();
        assert_eq!(
            issue.v4_path.as_deref(),
            Some("/api/v4/projects/:id/issues/:issue_iid")
        );
        assert!(issue.changes()[0].starts_with("Request: issue_id was the issue's global id"));
        assert_eq!(
            request_advice(&table, "GET /api/v3/user").unwrap().change,
            Change::PrefixOnly
        );
        assert!(request_advice(&table, "projects").is_none());
    }

    #[test]
    fn versions_of_one_product_group_into_one_client() {
        let rows = vec![
            row(
                "GET /projects",
                "alice",
                "python-gitlab/3.15.0",
                3,
                "2026-11-26T00:00:00.000Z",
            ),
            row(
                "GET /projects",
                "alice",
                "python-gitlab/3.14.0",
                2,
                "2026-11-20T00:00:00.000Z",
            ),
            row(
                "GET /user (no rule)",
                "alice",
                "python-gitlab/3.14.0",
                1,
                "2026-11-20T00:00:00.000Z",
            ),
            row(
                "GET /projects",
                "bob",
                "curl/8.5.0",
                1,
                "2026-09-01T00:00:00.000Z",
            ),
        ];
        let clients = report(&rows, &table(), now(), THIRTY_DAYS);
        assert_eq!(clients.len(), 2);
        let alice = &clients[0];
        assert_eq!(alice.id, client_id("alice", "python-gitlab"));
        assert_eq!(alice.versions, ["3.14.0", "3.15.0"]);
        assert_eq!(alice.calls, 6);
        assert_eq!(alice.routes.len(), 2);
        assert_eq!(alice.routes[0].route, "GET /projects");
        assert_eq!(alice.routes[0].calls, 5);
        assert_eq!(alice.routes[0].errors, 2);
        assert_eq!(alice.last_call, "2026-11-26T00:00:00.000Z");
        assert!(!alice.retired);
        assert!(clients[1].retired, "bob's last call was in September");
        assert_eq!(alice.summary().routes, 2);
        let markdown = markdown(alice);
        assert!(markdown.starts_with("## V3 migration: alice — python-gitlab (versions 3.14.0, 3.15.0)"));
        assert!(markdown.contains("| `GET /projects` | 5 | 2 |"));
        assert!(markdown.contains("### `GET /user (no rule)`\n\nno change but the prefix"));
        let csv = csv(&clients).unwrap();
        assert_eq!(csv.lines().count(), 1 + 3);
        assert!(csv.contains("alice,python-gitlab,3.14.0 3.15.0,no,GET /projects,5,2,"));
    }

    #[test]
    fn the_report_is_bounded_by_the_usage_rows() {
        let rows: Vec<UsageRow> = (0..2_000)
            .map(|n| {
                row(
                    if n % 2 == 0 { "GET /projects" } else { NO_RULE },
                    &format!("user{}", n % 10),
                    &format!("tool/{n}.0"),
                    1,
                    "2026-11-26T00:00:00.000Z",
                )
            })
            .collect();
        let clients = report(&rows, &table(), now(), THIRTY_DAYS);
        assert_eq!(clients.len(), 10);
        for client in &clients {
            assert!(client.routes.len() <= 2);
            assert_eq!(client.versions.len(), 200);
        }
        assert!(clients.iter().map(|client| client.routes.len()).sum::<usize>() <= rows.len());
    }

    #[test]
    fn a_client_is_chosen_by_id_or_user_and_an_unknown_one_is_refused() {
        let rows = vec![
            row(
                "GET /projects",
                "alice",
                "python-gitlab/3.15.0",
                3,
                "2026-11-26T00:00:00.000Z",
            ),
            row(
                "GET /projects",
                "alice",
                "curl/8.5.0",
                1,
                "2026-11-26T00:00:00.000Z",
            ),
            row(
                "GET /projects",
                "bob",
                "curl/8.5.0",
                1,
                "2026-11-26T00:00:00.000Z",
            ),
        ];
        let clients = report(&rows, &table(), now(), THIRTY_DAYS);
        assert_eq!(select(clients.clone(), Some("alice")).unwrap().len(), 2);
        let id = client_id("bob", "curl");
        assert_eq!(select(clients.clone(), Some(&id)).unwrap()[0].user, "bob");
        assert_eq!(select(clients.clone(), None).unwrap().len(), 3);
        assert!(matches!(
            select(clients.clone(), Some("carol")),
            Err(ReportError::UnknownClient(_))
        ));
        let json: serde_json::Value = serde_json::from_str(&render(&clients, Format::Json).unwrap()).unwrap();
        assert_eq!(json["clients"].as_array().unwrap().len(), 3);
        assert_eq!(
            render(&clients, Format::Markdown)
                .unwrap()
                .matches("## V3 migration: ")
                .count(),
            3
        );
    }
}

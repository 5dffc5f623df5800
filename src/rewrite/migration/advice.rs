//! What one V3 route becomes in V4 ([`RouteAdvice`]): the V4 request, the changes to the request and to the
//! answer, read from the route's [`Rule`], and an example planned by [`explain`] (the plan the gateway carries
//! out). The migration report gives it per route; `svcgate translate` prints its changes for one request.

use std::collections::BTreeSet;

use serde::Serialize;

use super::procedures::{procedure_advice, ProcedureKind};
use crate::rewrite::explain::explain;
use crate::rewrite::rule::{Converter, Rule, Segment};
use crate::rewrite::shape::{FieldConverter, Source};
use crate::rewrite::table::RuleTable;
use crate::rewrite::usage::NO_RULE;
use crate::store::IdKind;

/// How a V3 route changes in V4.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    /// A rule translates it: see the advice.
    Rule,
    /// The same route under `/api/v4` (no rule names it, or its rule is a checked pass-through).
    PrefixOnly,
    /// The bucket of failed calls that matched no rule (a typo, a removed route, or a prefix-only route that
    /// failed).
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
    /// For a route the gateway serves with a procedure: whether V4 replaced, removed or changed it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<ProcedureKind>,
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

/// The advice for a route as the usage counts name it: a rule template, `METHOD /path (no rule)`, [`NO_RULE`] or
/// `github-compat`.
pub fn route_advice(table: &RuleTable, route: &str) -> RouteAdvice {
    if route == NO_RULE {
        return plain(
            Change::FailedUnknownPaths,
            "failed calls that matched no rule, counted together: a route with a typo, a route V4 removed, or a \
             route that passes with only the prefix changed and failed; the backend answered each with an error. \
             Find them in the client's own logs and check each with `svcgate translate`",
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
        kind: None,
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
    let mut advice = RouteAdvice {
        change: Change::Rule,
        summary: if moved {
            format!("moved: call {v4_method} {v4_path}")
        } else {
            format!("same route under /api/v4 ({v4_method} {v4_path}); see the changes below")
        },
        v4_method: Some(v4_method),
        v4_path: Some(v4_path),
        moved,
        kind: None,
        since: Some(rule.since.clone()),
        section: Some(rule.section.clone()),
        request: request_changes(rule),
        instead: None,
        answer: answer_change(table, rule),
        example: example(table, rule),
    };
    if let Some(procedure) = rule.procedure {
        let client = procedure_advice(rule, procedure);
        advice.moved = advice.v4_path.as_deref() != Some(client.path.as_str())
            || advice.v4_method.as_deref() != Some(client.method.as_str())
            || moved;
        advice.kind = Some(client.kind);
        advice.summary = client.summary;
        advice.v4_method = Some(client.method);
        advice.v4_path = Some(client.path);
        advice.instead = Some(client.instead);
        advice.request.extend(client.request);
    }
    advice
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

/// Whether a nested field holds a list: the entities name lists in the plural (`projects`, `shared_with_groups`),
/// objects in the singular (`namespace`, `note`), `statistics` being an object.
fn is_list(name: &str) -> bool {
    name.ends_with('s') && name != "statistics"
}

/// Adds the renamed and removed fields of `entity` to `answer`, named by their path (`projects[].public`,
/// `statistics.build_artifacts_size`) under the V3 and V4 prefixes, and follows nested entities once each.
fn nested_fields<'t>(
    table: &'t RuleTable,
    entity: &'t str,
    prefixes: (&str, &str),
    visited: &mut BTreeSet<&'t str>,
    answer: &mut AnswerChange,
) {
    if !visited.insert(entity) {
        return;
    }
    let (v3_prefix, v4_prefix) = prefixes;
    for field in table.shapes().fields(entity) {
        let v3 = format!("{v3_prefix}{}", field.name);
        let v4_name = match &field.source {
            Source::From(v4, _) => v4.as_str(),
            Source::Same | Source::Const(_) => field.name.as_str(),
        };
        let v4 = format!("{v4_prefix}{v4_name}");
        match &field.source {
            Source::From(_, converter) if v4 != v3 || converter.is_some() => {
                if !answer.fields_renamed.iter().any(|known| known.v3 == v3) {
                    answer.fields_renamed.push(FieldRename {
                        converted: field_converter_text(&field.source),
                        v3,
                        v4: v4.clone(),
                    });
                }
            }
            Source::Const(_) => {
                if !answer.fields_removed.contains(&v3) {
                    answer.fields_removed.push(v3.clone());
                }
            }
            Source::Same | Source::From(..) => {}
        }
        if let Some(nested) = &field.entity {
            let separator = if is_list(&field.name) { "[]." } else { "." };
            let v3_nested = format!("{v3_prefix}{}{separator}", field.name);
            let v4_nested = format!("{v4_prefix}{v4_name}{separator}");
            nested_fields(table, nested, (&v3_nested, &v4_nested), visited, answer);
        }
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
    let mut visited = BTreeSet::new();
    for entity in entities {
        nested_fields(table, entity, ("", ""), &mut visited, &mut answer);
    }
    if let Some(embed) = &rule.embed {
        if let Some(entity) = &embed.entity {
            let prefix = format!("{}.", embed.field);
            nested_fields(table, entity, (&prefix, &prefix), &mut visited, &mut answer);
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
    let mut path = String::from(crate::rewrite::V3_PREFIX);
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
    let path = target
        .trim()
        .split('?')
        .next()?
        .strip_prefix(crate::rewrite::V3_PREFIX)?;
    let path = crate::rewrite::fold_empty_segments(path);
    let route = if crate::rewrite::is_github_compat(&path) {
        "github-compat".to_owned()
    } else {
        match table.find(&method, &path) {
            Some(matched) => format!("{} {}", matched.rule.v3.method, matched.rule.v3.template),
            None => crate::rewrite::usage::route_of_path(method.as_str(), &path),
        }
    };
    Some(route_advice(table, &route))
}

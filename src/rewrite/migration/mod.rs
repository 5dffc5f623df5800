//! The V3 migration report: for each legacy client, the V3 routes it still calls and exactly what to change.
//!
//! A client is a user and a product ([`super::clients`]): the usage rows of one user whose user agents differ only
//! in their versions are one client, with its versions listed. Each route it called comes with a [`RouteAdvice`]:
//! the V4 request that replaces it and what changes in the answer, read from the same [`Rule`](super::rule::Rule) data the gateway
//! runs, and with an example built by [`explain`](super::explain::explain) (the plan the live pipeline carries
//! out) for a sample request of the route's template, so the report cannot drift from what the gateway does.
//! Nothing but route templates, counts and times goes in: no token, no body. The report has at most one entry per
//! stored usage row, so its size follows the usage caps (`usage_max_clients_per_route`, the pending-count bound).
//!
//! Files: this one (clients and their routes), `advice.rs` (a route's [`RouteAdvice`]), `procedures.rs` (the
//! client-facing advice for routes the gateway serves with a procedure) and `render.rs` (JSON,
//! [`markdown`] and [`csv`]).

mod advice;
mod procedures;
mod render;

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Serialize;

pub use self::advice::{
    answer_change, example, request_advice, request_changes, route_advice, sample_request, v4_route,
    AnswerChange, Change, Example, FieldRename, RouteAdvice, StatusChange,
};
pub use self::procedures::{procedure_advice, ProcedureAdvice, ProcedureKind};
pub use self::render::{csv, markdown, render, select, Format, ReportError};
use super::clients::{agent, client_id, is_retired};
use super::table::RuleTable;
use crate::store::UsageRow;

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

/// What the report and the list both say of a client.
#[derive(Debug, Clone, Serialize)]
pub struct ClientFacts {
    /// The client id ([`client_id`]).
    pub id: String,
    /// The user (or `anonymous`, or `unknown` for credentials the backend refused).
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
}

/// One client's migration report.
#[derive(Debug, Clone, Serialize)]
pub struct ClientReport {
    /// Who the client is and how it called, over all routes.
    #[serde(flatten)]
    pub facts: ClientFacts,
    /// Its routes, most called first.
    pub routes: Vec<RouteReport>,
}

/// A client in the list: the report without its routes, with their count.
#[derive(Debug, Clone, Serialize)]
pub struct ClientSummary {
    /// Who the client is and how it called, over all routes.
    #[serde(flatten)]
    pub facts: ClientFacts,
    /// How many routes it called.
    pub routes: usize,
}

impl ClientReport {
    /// The client without its routes.
    pub fn summary(&self) -> ClientSummary {
        ClientSummary {
            facts: self.facts.clone(),
            routes: self.routes.len(),
        }
    }

    /// Whether `wanted` names this client: its id, or its user.
    pub fn is_named(&self, wanted: &str) -> bool {
        self.facts.id == wanted || self.facts.user == wanted
    }
}

/// Whether a usage row folds many callers rather than counting one client: the store's `others` (the least recent
/// clients of a route, with an empty user agent) and the overflow of the pending counts (`unknown`, `(many)`).
pub fn is_folded(row: &UsageRow) -> bool {
    crate::rewrite::clients::is_folded(&row.client, &row.user_agent)
}

/// The calls folded into others (see [`is_folded`]), per route: counted, but no client's.
pub fn folded(rows: &[UsageRow]) -> BTreeMap<String, u64> {
    let mut folded: BTreeMap<String, u64> = BTreeMap::new();
    for row in rows.iter().filter(|row| is_folded(row)) {
        *folded.entry(row.route.clone()).or_default() += row.calls;
    }
    folded
}

/// Groups usage rows into clients, each with its routes and their advice; clients most called first. Rows that
/// fold many callers ([`is_folded`]) are no client and are left out: [`folded`] counts them.
pub fn report(
    rows: &[UsageRow],
    table: &RuleTable,
    now: time::OffsetDateTime,
    retired_after: Duration,
) -> Vec<ClientReport> {
    let mut clients: BTreeMap<String, ClientReport> = BTreeMap::new();
    let mut advice: BTreeMap<&str, RouteAdvice> = BTreeMap::new();
    for row in rows.iter().filter(|row| !is_folded(row)) {
        let agent = agent(&row.user_agent);
        let id = client_id(&row.client, &agent.product);
        let client = clients.entry(id.clone()).or_insert_with(|| ClientReport {
            facts: ClientFacts {
                id,
                user: row.client.clone(),
                product: agent.product.clone(),
                versions: Vec::new(),
                calls: 0,
                errors: 0,
                first_call: row.first_seen.clone(),
                last_call: row.last_seen.clone(),
                retired: false,
            },
            routes: Vec::new(),
        });
        let facts = &mut client.facts;
        if !agent.version.is_empty() && !facts.versions.contains(&agent.version) {
            facts.versions.push(agent.version);
        }
        facts.calls += row.calls;
        facts.errors += row.errors;
        facts.first_call = facts.first_call.clone().min(row.first_seen.clone());
        facts.last_call = facts.last_call.clone().max(row.last_seen.clone());
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
        client.facts.versions.sort();
        client.facts.retired = is_retired(&client.facts.last_call, now, retired_after);
        client
            .routes
            .sort_by(|a, b| b.calls.cmp(&a.calls).then_with(|| a.route.cmp(&b.route)));
    }
    clients.sort_by(|a, b| {
        b.facts
            .calls
            .cmp(&a.facts.calls)
            .then_with(|| a.facts.id.cmp(&b.facts.id))
    });
    clients
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::rewrite::clients::{MANY_AGENTS, UNKNOWN};
    use crate::rewrite::explain::explain;
    use crate::rewrite::rule::Rule;
    use crate::rewrite::usage::NO_RULE;
    use crate::store::OTHERS;

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
    /// `explain`: the call after the pre-fetch. Not for procedures, whose calls depend on answers.
    fn explained_route(table: &RuleTable, rule: &Rule) -> (String, String) {
        let request = sample_request(rule);
        let resolved: Vec<(String, u64)> = rule.ids.iter().map(|(param, _)| (param.clone(), 7)).collect();
        let explanation = explain(table, &request, None, &resolved).unwrap();
        let call = explanation.calls.get(usize::from(rule.prefetch)).unwrap();
        let path = call.target.split('?').next().unwrap_or_default().to_owned();
        (call.method.to_string(), path)
    }

    /// Every route the gateway serves with a procedure, and what a migrated client calls instead, written by hand
    /// from the translation reference: V3 route, V4 method, V4 path, kind.
    const PROCEDURE_ROUTES: &[(&str, &str, &str, ProcedureKind)] = {
        use ProcedureKind::{Changed, Removed, Replaced};
        &[
            ("GET /projects/all", "GET", "/api/v4/projects", Replaced),
            ("PUT /projects/:id", "PUT", "/api/v4/projects/:id", Changed),
            ("GET /issues", "GET", "/api/v4/issues", Changed),
            (
                "GET /projects/:id/issues",
                "GET",
                "/api/v4/projects/:id/issues",
                Changed,
            ),
            (
                "POST /projects/:id/issues/:issue_id/award_emoji",
                "POST",
                "/api/v4/projects/:id/issues/:issue_iid/award_emoji",
                Changed,
            ),
            (
                "POST /projects/:id/issues/:issue_id/notes/:note_id/award_emoji",
                "POST",
                "/api/v4/projects/:id/issues/:issue_iid/notes/:note_id/award_emoji",
                Changed,
            ),
            (
                "POST /projects/:id/merge_requests/:merge_request_id/award_emoji",
                "POST",
                "/api/v4/projects/:id/merge_requests/:merge_request_iid/award_emoji",
                Changed,
            ),
            (
                "POST /projects/:id/merge_requests/:merge_request_id/notes/:note_id/award_emoji",
                "POST",
                "/api/v4/projects/:id/merge_requests/:merge_request_iid/notes/:note_id/award_emoji",
                Changed,
            ),
            (
                "POST /projects/:id/snippets/:snippet_id/award_emoji",
                "POST",
                "/api/v4/projects/:id/snippets/:snippet_id/award_emoji",
                Changed,
            ),
            (
                "POST /projects/:id/snippets/:snippet_id/notes/:note_id/award_emoji",
                "POST",
                "/api/v4/projects/:id/snippets/:snippet_id/notes/:note_id/award_emoji",
                Changed,
            ),
            ("DELETE /todos", "POST", "/api/v4/todos/mark_as_done", Replaced),
            (
                "GET /projects/:id/repository/commits/:sha/builds",
                "GET",
                "/api/v4/projects/:id/pipelines?sha=:sha",
                Replaced,
            ),
            (
                "POST /projects/:id/trigger/builds",
                "POST",
                "/api/v4/projects/:id/trigger/pipeline",
                Replaced,
            ),
            (
                "POST /projects/:id/ref/:ref/trigger/builds",
                "POST",
                "/api/v4/projects/:id/ref/:ref/trigger/pipeline",
                Replaced,
            ),
            (
                "GET /projects/:id/triggers/:token",
                "GET",
                "/api/v4/projects/:id/triggers/:trigger_id",
                Changed,
            ),
            (
                "DELETE /projects/:id/triggers/:token",
                "DELETE",
                "/api/v4/projects/:id/triggers/:trigger_id",
                Changed,
            ),
            (
                "DELETE /projects/:id/labels",
                "DELETE",
                "/api/v4/projects/:id/labels",
                Changed,
            ),
            (
                "POST /projects/:id/members",
                "POST",
                "/api/v4/projects/:id/members",
                Changed,
            ),
            (
                "PUT /projects/:id/members/:user_id",
                "PUT",
                "/api/v4/projects/:id/members/:user_id",
                Changed,
            ),
            (
                "DELETE /projects/:id/members/:user_id",
                "DELETE",
                "/api/v4/projects/:id/members/:user_id",
                Changed,
            ),
            (
                "POST /groups/:id/members",
                "POST",
                "/api/v4/groups/:id/members",
                Changed,
            ),
            (
                "PUT /groups/:id/members/:user_id",
                "PUT",
                "/api/v4/groups/:id/members/:user_id",
                Changed,
            ),
            (
                "PUT /snippets/:snippet_id",
                "PUT",
                "/api/v4/snippets/:snippet_id",
                Changed,
            ),
            (
                "DELETE /snippets/:snippet_id",
                "DELETE",
                "/api/v4/snippets/:snippet_id",
                Changed,
            ),
            ("POST /session", "POST", "/oauth/token", Removed),
            (
                "PUT /projects/:id/merge_requests/:merge_request_id",
                "PUT",
                "/api/v4/projects/:id/merge_requests/:merge_request_iid",
                Changed,
            ),
            (
                "PUT /projects/:id/merge_request/:merge_request_id",
                "PUT",
                "/api/v4/projects/:id/merge_requests/:merge_request_iid",
                Changed,
            ),
        ]
    };

    #[test]
    fn procedure_routes_advise_what_a_migrated_client_calls() {
        let table = table();
        let mut seen = std::collections::BTreeSet::new();
        for rule in table.rules().iter().filter(|rule| rule.procedure.is_some()) {
            let route = format!("{} {}", rule.v3.method, rule.v3.template);
            let (_, method, path, kind) = PROCEDURE_ROUTES
                .iter()
                .find(|(v3, ..)| *v3 == route)
                .unwrap_or_else(|| panic!("{route}: not in the expected table"));
            let advice = route_advice(&table, &route);
            assert_eq!(advice.v4_method.as_deref(), Some(*method), "{route}");
            assert_eq!(advice.v4_path.as_deref(), Some(*path), "{route}");
            assert_eq!(advice.kind, Some(*kind), "{route}");
            let instead = advice.instead.clone().unwrap();
            assert!(
                !instead.contains("svcgate") && !instead.is_empty(),
                "{route}: {instead}"
            );
            seen.insert(route);
        }
        assert_eq!(
            seen.len(),
            PROCEDURE_ROUTES.len(),
            "a route of the table has no procedure rule"
        );
        let session = route_advice(&table, "POST /session");
        assert!(
            session.summary.contains("personal access token"),
            "{}",
            session.summary
        );
        assert!(!session.v4_path.unwrap().starts_with("/api/v4"));
        let builds = route_advice(&table, "GET /projects/:id/repository/commits/:sha/builds");
        assert!(builds.instead.unwrap().contains("/pipelines/:pipeline_id/jobs"));
        let trigger = route_advice(&table, "DELETE /projects/:id/triggers/:token");
        assert!(trigger
            .request
            .iter()
            .any(|text| text.contains(":token becomes the trigger's id")));
        assert!(trigger
            .instead
            .unwrap()
            .contains("GET /api/v4/projects/:id/triggers"));
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
            // Procedure rules: checked against a hand-written table above.
            if rule.procedure.is_none() {
                let (explained_method, explained_path) = explained_route(&table, rule);
                assert_eq!(method, explained_method, "{route}");
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
    fn nested_entities_name_their_renamed_and_removed_fields_by_path() {
        let table = table();
        let group = route_advice(&table, "GET /groups/:id");
        let renamed: Vec<&str> = group
            .answer
            .fields_renamed
            .iter()
            .map(|rename| rename.v3.as_str())
            .collect();
        assert!(renamed.contains(&"projects[].public"), "{renamed:?}");
        assert!(
            renamed.contains(&"statistics.build_artifacts_size"),
            "{renamed:?}"
        );
        let artifacts = group
            .answer
            .fields_renamed
            .iter()
            .find(|rename| rename.v3 == "statistics.build_artifacts_size")
            .unwrap();
        assert_eq!(artifacts.v4, "statistics.job_artifacts_size");
        // Each entity is followed once: `shared_projects` are projects already described under `projects[]`.
        assert!(
            !renamed.iter().any(|name| name.starts_with("shared_projects[]")),
            "{renamed:?}"
        );
        assert!(group
            .changes()
            .iter()
            .any(|line| line.contains("`projects[].public`")));
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
        assert_eq!(alice.facts.id, client_id("alice", "python-gitlab"));
        assert_eq!(alice.facts.versions, ["3.14.0", "3.15.0"]);
        assert_eq!(alice.facts.calls, 6);
        assert_eq!(alice.routes.len(), 2);
        assert_eq!(alice.routes[0].route, "GET /projects");
        assert_eq!(alice.routes[0].calls, 5);
        assert_eq!(alice.routes[0].errors, 2);
        assert_eq!(alice.facts.last_call, "2026-11-26T00:00:00.000Z");
        assert!(!alice.facts.retired);
        assert!(clients[1].facts.retired, "bob's last call was in September");
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
    fn the_json_of_a_client_and_of_the_list_keeps_its_keys_in_order() {
        let rows = [row(
            "GET /projects",
            "alice",
            "python-gitlab/3.15.0",
            3,
            "2026-11-26T00:00:00.000Z",
        )];
        let clients = report(&rows, &table(), now(), THIRTY_DAYS);
        let keys = |value: serde_json::Value| -> Vec<String> {
            value.as_object().unwrap().keys().cloned().collect()
        };
        let facts = [
            "id",
            "user",
            "product",
            "versions",
            "calls",
            "errors",
            "first_call",
            "last_call",
            "retired",
            "routes",
        ];
        assert_eq!(keys(serde_json::to_value(&clients[0]).unwrap()), facts);
        assert_eq!(keys(serde_json::to_value(clients[0].summary()).unwrap()), facts);
        assert_eq!(serde_json::to_value(clients[0].summary()).unwrap()["routes"], 1);
    }

    #[test]
    fn calls_folded_into_others_are_no_client_and_are_counted_per_route() {
        let rows = vec![
            row(
                "GET /projects",
                "alice",
                "curl/8.5.0",
                3,
                "2026-11-26T00:00:00.000Z",
            ),
            row("GET /projects", OTHERS, "", 4, "2026-11-26T00:00:00.000Z"),
            row(
                "GET /projects",
                UNKNOWN,
                MANY_AGENTS,
                2,
                "2026-11-26T00:00:00.000Z",
            ),
            row("GET /user (no rule)", OTHERS, "", 1, "2026-11-26T00:00:00.000Z"),
            row(
                "GET /user (no rule)",
                UNKNOWN,
                "curl/8.5.0",
                1,
                "2026-11-26T00:00:00.000Z",
            ),
        ];
        let clients = report(&rows, &table(), now(), THIRTY_DAYS);
        let users: Vec<&str> = clients.iter().map(|client| client.facts.user.as_str()).collect();
        assert_eq!(
            users,
            ["alice", "unknown"],
            "refused credentials with a user agent stay a client"
        );
        assert!(select(clients.clone(), Some(OTHERS)).is_err());
        assert!(!csv(&clients).unwrap().contains("others"));
        let folded = folded(&rows);
        assert_eq!(folded.get("GET /projects"), Some(&6));
        assert_eq!(folded.get("GET /user (no rule)"), Some(&1));
    }

    /// The Markdown outside code spans (where nothing is read as markup).
    fn outside_code_spans(markdown: &str) -> String {
        markdown.split('`').step_by(2).collect::<Vec<_>>().join(" ")
    }

    /// Whether `needle` occurs in `text` without a backslash before it.
    fn unescaped(text: &str, needle: &str) -> bool {
        text.match_indices(needle)
            .any(|(at, _)| at == 0 || text.as_bytes()[at - 1] != b'\\')
    }

    #[test]
    fn a_user_agent_s_markup_is_no_link_image_mention_or_comment_in_the_markdown() {
        let agent = "x [docs](https://evil) ![](https://t/px) @all <!--";
        let rows = vec![
            row("GET /projects", "alice", agent, 2, "2026-11-26T00:00:00.000Z"),
            row(
                "GET /projects",
                "alice",
                &format!("{agent}/1.0"),
                1,
                "2026-11-26T00:00:00.000Z",
            ),
            row(
                "GET /a`b](x) (no rule)",
                "alice",
                agent,
                1,
                "2026-11-26T00:00:00.000Z",
            ),
        ];
        for client in report(&rows, &table(), now(), THIRTY_DAYS) {
            let markdown = markdown(&client);
            let prose = outside_code_spans(&markdown);
            assert!(!prose.contains("]("), "{markdown}");
            assert!(!prose.contains("<!--"), "{markdown}");
            assert!(!unescaped(&prose, "["), "{markdown}");
            assert!(!unescaped(&prose, "!"), "{markdown}");
            assert!(!unescaped(&prose, "@all"), "{markdown}");
            assert!(!unescaped(&prose, "<"), "{markdown}");
            assert!(markdown.contains("### `GET /ab](x) (no rule)`"), "{markdown}");
        }
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
            assert_eq!(client.facts.versions.len(), 200);
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
        assert_eq!(select(clients.clone(), Some(&id)).unwrap()[0].facts.user, "bob");
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

//! `svcgate translate`: what the gateway would do with one V3 request, without doing it.
//!
//! It prints the [`plan`](super::plan) that the live pipeline carries out, built by the same function from a
//! request given on the command line; ids that need the index or the backend are named, or resolved when the
//! caller provides them.

use bytes::Bytes;
use http::{HeaderValue, Method};

use super::plan::{plan, Call};
use super::request::V3Request;
use super::rule::{Procedure, Rule};
use super::table::RuleTable;
use super::{fold_empty_segments, is_github_compat, V3_PREFIX};
use crate::store::IdKind;

/// A request body given on the command line: its content type and bytes, as a client would send them.
#[derive(Debug, Clone)]
pub struct BodyInput {
    /// The `Content-Type`.
    pub content_type: HeaderValue,
    /// The body.
    pub bytes: Bytes,
}

impl BodyInput {
    /// `--body JSON`: the text as given, sent as `application/json`.
    pub fn json(text: &str) -> Self {
        BodyInput {
            content_type: HeaderValue::from_static("application/json"),
            bytes: Bytes::from(text.to_owned()),
        }
    }

    /// `--form name=value …`: the pairs form-encoded.
    pub fn form(pairs: &[(String, String)]) -> Self {
        BodyInput {
            content_type: HeaderValue::from_static("application/x-www-form-urlencoded"),
            bytes: Bytes::from(crate::util::url_parts::encode_pairs(pairs)),
        }
    }
}

/// A global id the request names, which must become an iid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdNeeded {
    /// The V3 path parameter.
    pub param: String,
    /// Issue or merge request.
    pub kind: IdKind,
    /// The global id as given.
    pub id: String,
    /// The project as given (`:id`).
    pub project: String,
}

/// What the gateway would do.
#[derive(Debug, Clone)]
pub struct Explanation {
    /// Whether a rule matched (otherwise the request passes with the prefix change).
    pub matched: bool,
    /// The explanation, line by line.
    pub lines: Vec<String>,
    /// The V4 calls of the plan (empty when no rule matched).
    pub calls: Vec<Call>,
}

/// Why a request cannot be explained.
#[derive(Debug, thiserror::Error)]
pub enum ExplainError {
    /// Not `METHOD /api/v3/…`.
    #[error("give the request as 'METHOD /api/v3/path[?query]', e.g. 'GET /api/v3/projects'")]
    BadRequestLine,
    /// A parameter cannot be converted (the gateway would answer 400).
    #[error("the gateway would answer 400: {0}")]
    BadParameter(String),
}

fn split(request_line: &str) -> Result<(Method, String, String), ExplainError> {
    let (method, target) = request_line
        .trim()
        .split_once(' ')
        .ok_or(ExplainError::BadRequestLine)?;
    let method: Method = method
        .to_ascii_uppercase()
        .parse()
        .map_err(|_| ExplainError::BadRequestLine)?;
    let target = target.trim();
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let rest = path.strip_prefix(V3_PREFIX).ok_or(ExplainError::BadRequestLine)?;
    let path = fold_empty_segments(rest);
    // The gateway refuses these before any rule is looked at; translate says the same.
    if super::has_dot_segment(&path) {
        return Err(ExplainError::BadParameter(
            "a path segment may not be . or .. (plain or percent-encoded)".to_owned(),
        ));
    }
    Ok((method, path, query.to_owned()))
}

/// The global ids a request names (to resolve them before [`explain`]).
pub fn ids_needed(table: &RuleTable, request_line: &str) -> Result<Vec<IdNeeded>, ExplainError> {
    let (method, path, _) = split(request_line)?;
    let Some(matched) = table.find(&method, &path) else {
        return Ok(Vec::new());
    };
    let value = |name: &str| {
        matched
            .params
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.clone())
            .unwrap_or_default()
    };
    Ok(matched
        .rule
        .ids
        .iter()
        .map(|(param, kind)| IdNeeded {
            param: param.clone(),
            kind: *kind,
            id: value(param),
            project: value("id"),
        })
        .collect())
}

fn kind_name(kind: IdKind) -> &'static str {
    match kind {
        IdKind::Issue => "issue",
        IdKind::MergeRequest => "merge request",
    }
}

/// What a procedure does, in one sentence (also the migration report's "what to do instead").
pub(crate) fn procedure_text(procedure: Procedure) -> &'static str {
    match procedure {
        Procedure::MemberConflict => {
            "sends the POST; a 409 (already a member) becomes 201 with GET …/members/:user_id; a 400 about the access level becomes 422"
        }
        Procedure::MemberAccessLevel => "sends the call; a 400 about the access level becomes 422 `Access level is not known`",
        Procedure::MemberRevoke => {
            "GETs the member first; a non-member answers 200 {\"message\":\"Access revoked\",\"id\":…}; else DELETE and answer the member"
        }
        Procedure::LabelsOr => {
            "with several labels: one V4 query per label over every page, merged by id, sorted, paginated by svcgate"
        }
        Procedure::TodosMarkAll => "counts the pending to-dos (X-Total) and marks them done (one by one with filters); answers the count",
        Procedure::CommitBuilds => "GETs the commit, its pipelines (every page) and their jobs; answers them newest first, paginated",
        Procedure::TriggerRequest => "triggers the pipeline; answers {\"id\": <pipeline id>, \"variables\": …}",
        Procedure::TriggerByToken => "finds the trigger by token in GET …/triggers (every page), then uses its id",
        Procedure::MergeRequestUpdate => "with state_event=merge: PUT the other fields, then PUT …/merge",
        Procedure::LabelDelete => "finds the label by name (every page), DELETE …/labels?name=…, answers the label",
        Procedure::AdminOnly => "GET /user first: 403 unless the caller is an admin",
        Procedure::SessionLogin => "POST /oauth/token (password grant), GET /user; answers the user with an issued private_token",
        Procedure::OwnerRenames => {
            "with a name: GET /user and the project; 403 unless the caller owns it (or is an admin); then the PUT"
        }
        Procedure::OwnSnippet => "GET /user and the snippet: 404 `Snippet Not Found` unless the caller wrote it; then the call",
        Procedure::NoSelfVote => {
            "with a thumbsup/thumbsdown (+1/-1): GET the awardable and /user; 404 `Award Emoji Not Found` on the caller's own; then the POST"
        }
    }
}

/// `fetched` is the path pre-fetched and the path read after the call, when the rule has them.
fn answer_lines(
    rule: &Rule,
    table: &RuleTable,
    fetched: (Option<&str>, Option<&str>),
    lines: &mut Vec<String>,
) {
    let (prefetched_path, refetched_path) = fetched;
    lines.push("answer:".to_owned());
    if rule.status.is_empty() {
        lines.push("  status: as the backend answers".to_owned());
    }
    for (from, to) in &rule.status {
        lines.push(format!("  status: {from} → {to}"));
    }
    if let Some(path) = prefetched_path {
        lines.push(format!(
            "  body: the resource fetched first (GET {path}), since V3 answered it"
        ));
    }
    if let Some(path) = refetched_path {
        lines.push(format!(
            "  body: the resource read once the call succeeded (GET {path}), since V3 answered it"
        ));
    }
    if let Some(answer) = &rule.answer {
        lines.push(format!(
            "  body: synthesised {answer} (\":name\" takes the parameter)"
        ));
    }
    if rule.collect_all_pages {
        lines.push("  body: every V4 page gathered into one array (V3 answered the whole list); no pagination headers".to_owned());
    }
    if let Some(fetch) = &rule.item_fetch {
        let what = if fetch.fields.is_empty() {
            "the whole item".to_owned()
        } else {
            fetch.fields.join(", ")
        };
        match fetch.graphql {
            Some(collection) => lines.push(format!(
                "  items completed ({what}) by one POST /api/graphql over the projects' {} (items it lacks, or \
                 all when the backend refuses GraphQL, with GET /api/v4{} each)",
                collection.field(),
                fetch.path
            )),
            None => lines.push(format!(
                "  each item completed with GET /api/v4{} ({what})",
                fetch.path
            )),
        }
    }
    if let Some(embed) = &rule.embed {
        lines.push(format!(
            "  `{}` of each item set from GET /api/v4{}",
            embed.field, embed.path
        ));
    }
    for (param, entity) in &rule.response_when {
        let fields = table.shapes().field_names(entity).join(", ");
        lines.push(format!("  shape when {param} is true: V3 {entity} ({fields})"));
    }
    if let Some(entity) = &rule.response_anonymous {
        let fields = table.shapes().field_names(entity).join(", ");
        lines.push(format!("  shape for an anonymous caller: V3 {entity} ({fields})"));
    }
    if let Some((status, message)) = &rule.unseen {
        lines.push(format!(
            "  a known id the backend will not show the caller: {status} {{\"message\":\"{message}\"}}"
        ));
    }
    if let Some(name) = rule.requires.first() {
        lines.push(format!(
            "  required: {} (else 400 {{\"error\":\"{name} is missing\"}})",
            rule.requires.join(", ")
        ));
    }
    match &rule.response {
        Some(entity) => {
            let fields = table.shapes().field_names(entity).join(", ");
            lines.push(format!("  shape: V3 {entity} ({fields})"));
        }
        None if rule.answer.is_none() => lines.push("  shape: the V4 body as it is".to_owned()),
        None => {}
    }
    if rule.page_base == 0 {
        lines.push("  pagination: V3 pages start at 0 (page headers and Link shifted by one)".to_owned());
    }
}

/// Explains one request; `resolved` gives iids for ids already looked up (`param → iid`).
pub fn explain(
    table: &RuleTable,
    request_line: &str,
    body: Option<BodyInput>,
    resolved: &[(String, u64)],
) -> Result<Explanation, ExplainError> {
    let (method, path, query) = split(request_line)?;
    let mut lines = vec![format!(
        "{method} {V3_PREFIX}{path}{}",
        if query.is_empty() {
            String::new()
        } else {
            format!("?{query}")
        }
    )];
    if is_github_compat(&path) {
        lines.push("GitHub-compatibility route: forwarded to the backend's /api/v3 unchanged".to_owned());
        return Ok(Explanation {
            matched: true,
            lines,
            calls: Vec::new(),
        });
    }
    let Some(matched) = table.find(&method, &path) else {
        lines.push("no rule: the request passes through with the prefix change".to_owned());
        lines.push(format!(
            "  {method} /api/v4{path}{}",
            if query.is_empty() {
                String::new()
            } else {
                format!("?{query}")
            }
        ));
        return Ok(Explanation {
            matched: false,
            lines,
            calls: Vec::new(),
        });
    };
    let rule = matched.rule;
    let mut params = matched.params.clone();
    lines.push(format!(
        "rule: {} {} → {} {} (since {}, §{}, {})",
        rule.v3.method,
        rule.v3.template,
        rule.v4.method,
        rule.v4.template,
        rule.since,
        rule.section,
        rule.origin
    ));
    for (param, kind) in &rule.ids {
        let raw = params
            .iter()
            .find(|(key, _)| key == param)
            .map(|(_, value)| value.clone())
            .unwrap_or_default();
        let iid_param = Rule::iid_param(param);
        match resolved.iter().find(|(name, _)| name == param) {
            Some((_, iid)) => {
                lines.push(format!(
                    "ids: {param} {raw} is a global {} id → iid {iid}",
                    kind_name(*kind)
                ));
                params.push((iid_param, iid.to_string()));
            }
            None => {
                lines.push(format!(
                    "ids: {param} {raw} is a global {} id; svcgate looks up its iid (its index, else the backend's project list); give --backend and --token to resolve it",
                    kind_name(*kind)
                ));
                params.push((iid_param, format!("{{iid of {} {raw}}}", kind_name(*kind))));
            }
        }
    }
    let body = body.map(|body| (body.content_type, body.bytes));
    let request = V3Request::given(&query, body, &rule.conversions, rule.reads_body())
        .map_err(|error| ExplainError::BadParameter(error.to_string()))?;
    let plan = plan(rule, params, request).map_err(|error| ExplainError::BadParameter(error.to_string()))?;
    let calls = plan.calls();
    lines.push("V4 request(s):".to_owned());
    let mut listed = calls.iter();
    if plan.prefetch.is_some() {
        if let Some(call) = listed.next() {
            lines.push(format!("  {} {}  (pre-fetch)", call.method, call.target));
        }
    }
    if let Some(procedure) = rule.procedure {
        lines.push(format!(
            "  procedure {}: {}",
            procedure.name(),
            procedure_text(procedure)
        ));
    }
    for call in listed {
        if rule.collect_all_pages {
            lines.push(format!(
                "  {} {}, then page 2, 3, … until the last page",
                call.method, call.target
            ));
        } else {
            lines.push(format!("  {} {}", call.method, call.target));
        }
        match &call.body {
            Some((content_type, text)) if content_type.is_empty() => lines.push(format!("  body: {text}")),
            Some((content_type, text)) => lines.push(format!("  body ({content_type}): {text}")),
            None => {}
        }
    }
    let prefetched = plan.prefetch.as_ref().map(|prefetch| prefetch.path.as_str());
    answer_lines(rule, table, (prefetched, plan.refetch.as_deref()), &mut lines);
    Ok(Explanation {
        matched: true,
        lines,
        calls,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// A request, its body, the ids already resolved, whether a rule matches, and what the text must say.
    type Case = (
        &'static str,
        Option<BodyInput>,
        Vec<(String, u64)>,
        bool,
        Vec<&'static str>,
    );

    fn table() -> RuleTable {
        RuleTable::builtin().unwrap()
    }

    fn text(request: &str, body: Option<BodyInput>, resolved: &[(String, u64)]) -> (bool, String) {
        let explanation = explain(&table(), request, body, resolved).unwrap();
        (explanation.matched, explanation.lines.join("\n"))
    }

    #[test]
    fn a_table_of_requests_is_explained() {
        let cases: Vec<Case> = vec![
            (
                "PUT /api/v3/projects/5/issues/1234",
                Some(BodyInput::json(r#"{"title": "x"}"#)),
                vec![],
                true,
                vec![
                    "since 9.0, §2.2",
                    "issue_id 1234 is a global issue id; svcgate looks up",
                    "PUT /api/v4/projects/5/issues/{iid of issue 1234}",
                    "shape: V3 issue",
                ],
            ),
            (
                "PUT /api/v3/projects/5/issues/1234",
                None,
                vec![("issue_id".to_owned(), 7)],
                true,
                vec!["→ iid 7", "PUT /api/v4/projects/5/issues/7"],
            ),
            (
                "DELETE /api/v3/projects/5/star",
                None,
                vec![],
                true,
                vec!["POST /api/v4/projects/5/unstar", "status: 201 → 200"],
            ),
            (
                "POST /api/v3/projects/5/merge_requests/1234/cancel_merge_when_build_succeeds",
                None,
                vec![("merge_request_id".to_owned(), 3)],
                true,
                vec![
                    "POST /api/v4/projects/5/merge_requests/3/cancel_merge_when_pipeline_succeeds\n  GET /api/v4/projects/5/merge_requests/3",
                    "body: the resource read once the call succeeded (GET /api/v4/projects/5/merge_requests/3)",
                    "shape: V3 merge_request",
                ],
            ),
            (
                "POST /api/v3/projects",
                Some(BodyInput::form(&[
                    ("name".into(), "x".into()),
                    ("visibility_level".into(), "10".into()),
                ])),
                vec![],
                true,
                vec!["body (application/x-www-form-urlencoded): name=x&visibility=internal"],
            ),
            (
                "GET /api/v3/projects/1/repository/commits?page=0",
                None,
                vec![],
                true,
                vec![
                    "GET /api/v4/projects/1/repository/commits?page=1",
                    "V3 pages start at 0",
                ],
            ),
            (
                "DELETE /api/v3/projects/1/repository/files?file_path=a/b.rb&branch_name=main",
                None,
                vec![],
                true,
                vec![
                    "DELETE /api/v4/projects/1/repository/files/a%2Fb.rb?branch=main",
                    "synthesised",
                ],
            ),
            (
                "GET /api/v3/projects/1/repository/branches",
                None,
                vec![],
                true,
                vec!["per_page=100&page=1, then page 2, 3, …", "every V4 page gathered"],
            ),
            (
                "DELETE /api/v3/projects/1/issues/9",
                None,
                vec![("issue_id".to_owned(), 3)],
                true,
                vec![
                    "GET /api/v4/projects/1/issues/3  (pre-fetch)",
                    "status: 204 → 200",
                ],
            ),
            (
                "GET /api/v3/user",
                None,
                vec![],
                false,
                vec!["prefix change", "GET /api/v4/user"],
            ),
        ];
        for (request, body, resolved, matched, expected) in cases {
            let (was_matched, text) = text(request, body, &resolved);
            assert_eq!(was_matched, matched, "{request}");
            for part in expected {
                assert!(text.contains(part), "{request}: missing {part:?} in\n{text}");
            }
        }
    }

    #[test]
    fn ids_to_resolve_are_named_and_bad_input_is_refused() {
        let needed = ids_needed(&table(), "GET /api/v3/projects/5/merge_requests/2001/changes").unwrap();
        assert_eq!(
            needed,
            vec![IdNeeded {
                param: "merge_request_id".into(),
                kind: IdKind::MergeRequest,
                id: "2001".into(),
                project: "5".into()
            }]
        );
        assert!(explain(&table(), "projects", None, &[]).is_err());
        assert!(explain(&table(), "GET /api/v4/projects", None, &[]).is_err());
        assert!(matches!(
            explain(&table(), "GET /api/v3/projects/5/../1", None, &[]),
            Err(ExplainError::BadParameter(_))
        ));
        let bad = explain(
            &table(),
            "POST /api/v3/projects",
            Some(BodyInput::json(r#"{"visibility_level": 3}"#)),
            &[],
        );
        assert!(matches!(bad, Err(ExplainError::BadParameter(_))));
    }
}

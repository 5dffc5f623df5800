//! The backend's GraphQL, where it saves V3 answers backend requests: a list's per-item fields in one batched
//! request ([`GraphqlState::complete`]) and a global id's project and iid in one request ([`GraphqlState::locate`]).
//!
//! Both are asked with the caller's own credentials (the headers of their [`Caller`]), so what they see is what the
//! backend lets them see; each request counts against `max_backend_calls_per_request` like any backend call. There
//! is no capability probe: the first real request tries GraphQL. When the backend has none or refuses the query
//! (404, a validation error, an answer that is not GraphQL's), that is remembered for `graphql_retry_after` and the
//! callers fall back to their per-item requests or bisection; a 5xx or a timeout is remembered for a minute at most;
//! 401, 403 and 429 are the caller's, not the backend's, and fall back for that request only. A query refused for
//! its complexity is split into smaller batches, and the size that fits is remembered.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http::StatusCode;
use serde_json::{json, Map, Value};

use super::backend::Caller;
use super::rule::GraphqlCollection;
use crate::http::error::GatewayError;
use crate::store::IdKind;
use crate::telemetry::Metrics;

/// The backend's GraphQL endpoint.
pub const ENDPOINT: &str = "/api/graphql";

/// The longest a backend error or timeout keeps GraphQL off (an outage should not double every list's requests).
const ERROR_RETRY: Duration = Duration::from_secs(60);

/// Items one GraphQL request names at most: the page size a connection answers in full.
const MAX_ITEMS: usize = 100;

/// Rounds of complexity splitting one list may take before the rest falls back.
const MAX_SPLITS: usize = 4;

/// One list item as GraphQL names it: its project's id and its iid (as text: GraphQL's `ID` and `String`).
pub type ItemKey = (u64, String);

/// What one GraphQL request came to.
#[derive(Debug, PartialEq)]
enum Answer {
    /// Executed: the `data` object.
    Data(Map<String, Value>),
    /// Refused for its complexity: the query's score and the backend's limit.
    Complexity {
        /// The query's complexity as the backend counted it.
        score: u64,
        /// The backend's limit.
        max: u64,
    },
    /// The backend has no GraphQL or cannot run the query: remembered for `graphql_retry_after`.
    Refused,
    /// A backend error or timeout: remembered briefly.
    Error,
    /// Refused for this caller (401, 403, 429): not remembered.
    Denied,
}

/// Where a global id was found, as the backend's GraphQL answered.
#[derive(Debug, PartialEq, Eq)]
pub enum Located {
    /// The record, and its project's full path (from `reference(full: true)`) when the answer gave one.
    Found {
        /// The project's id.
        project_id: u64,
        /// The record's iid.
        iid: u64,
        /// The project's full path.
        project_path: Option<String>,
    },
    /// No such record for this caller (absent, or one they may not see).
    NotFound,
    /// GraphQL did not answer: look it up another way.
    Unanswered,
}

/// The per-backend GraphQL state: whether to ask, and how many items a request may name.
pub struct GraphqlState {
    /// Until when GraphQL is not asked (the backend refused it).
    refused_until: Mutex<Option<Instant>>,
    /// How long a refusal is remembered.
    retry_after: Duration,
    /// Items per request the backend's complexity limit allowed (0: no limit met yet).
    max_batch: AtomicUsize,
    /// The global id app word (`gid://WORD/Issue/1`), the identifier word.
    word: String,
    metrics: Arc<Metrics>,
}

impl GraphqlState {
    /// State for a backend whose global ids read `gid://{word}/…`, remembering refusals for `retry_after`.
    pub fn new(word: &str, retry_after: Duration, metrics: Arc<Metrics>) -> Self {
        GraphqlState {
            refused_until: Mutex::new(None),
            retry_after,
            max_batch: AtomicUsize::new(0),
            word: word.to_owned(),
            metrics,
        }
    }

    /// Whether GraphQL may be asked for this caller now: not refused recently, and no `sudo` (GraphQL answers as
    /// the token's own user, never the one `sudo` names).
    fn usable(&self, caller: &Caller<'_>, kind: &'static str) -> bool {
        let refused = self
            .refused_until
            .lock()
            .ok()
            .and_then(|until| *until)
            .is_some_and(|until| Instant::now() < until);
        let usable = !refused && !caller.headers.contains_key("sudo");
        if !usable {
            self.metrics.graphql(kind, "skipped");
        }
        usable
    }

    /// Keeps GraphQL off for `period`.
    fn refuse_for(&self, period: Duration) {
        if let Ok(mut until) = self.refused_until.lock() {
            *until = Instant::now().checked_add(period);
        }
    }

    /// Items one request may name now.
    fn batch_size(&self) -> usize {
        match self.max_batch.load(Ordering::Relaxed) {
            0 => MAX_ITEMS,
            size => size.min(MAX_ITEMS),
        }
    }

    /// Remembers that requests of `fits` items fit the backend's complexity limit (never growing the figure).
    fn shrink_batch(&self, fits: usize) {
        let _ = self
            .max_batch
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |old| {
                Some(if old == 0 { fits } else { old.min(fits) })
            });
    }

    /// Sends one query and judges the answer; counts and remembers the outcome.
    async fn ask(
        &self,
        caller: &Caller<'_>,
        kind: &'static str,
        query: &str,
        variables: Value,
    ) -> Result<Answer, GatewayError> {
        let payload = json!({ "query": query, "variables": variables });
        let answer = match caller.post_json(ENDPOINT, &payload).await {
            Ok((parts, bytes)) => judge(parts.status, &bytes),
            Err(error @ (GatewayError::TooManyBackendCalls { .. } | GatewayError::Busy(_))) => {
                return Err(error)
            }
            Err(error) => {
                tracing::debug!(%error, "GraphQL request failed");
                Answer::Error
            }
        };
        let outcome = match &answer {
            Answer::Data(_) => "ok",
            Answer::Complexity { .. } => "split",
            Answer::Refused => {
                tracing::info!(
                    retry_after = ?self.retry_after,
                    "the backend refused GraphQL; using per-item requests until the retry time"
                );
                self.refuse_for(self.retry_after);
                "refused"
            }
            Answer::Error => {
                self.refuse_for(self.retry_after.min(ERROR_RETRY));
                "error"
            }
            Answer::Denied => "denied",
        };
        self.metrics.graphql(kind, outcome);
        Ok(answer)
    }

    /// The `fields` (V4 names) of each item in `keys`, asked in as few requests as the backend accepts, at most
    /// `concurrency` at once. Items the answer lacks (deleted or hidden since the list was read), and all of them
    /// when GraphQL is refused, are left out: the caller fetches those one by one.
    pub async fn complete(
        &self,
        caller: &Caller<'_>,
        collection: GraphqlCollection,
        fields: &[String],
        keys: &[ItemKey],
        concurrency: usize,
    ) -> Result<HashMap<ItemKey, Map<String, Value>>, GatewayError> {
        let mut found = HashMap::new();
        if keys.is_empty() || !self.usable(caller, "completion") {
            return Ok(found);
        }
        let mut pending: Vec<ItemKey> = keys.to_vec();
        for _ in 0..MAX_SPLITS {
            let size = self.batch_size();
            let chunks: Vec<&[ItemKey]> = pending.chunks(size).collect();
            let mut retry = Vec::new();
            let mut stop = false;
            for wave in chunks.chunks(concurrency.max(1)) {
                let asked = wave.iter().map(|chunk| async move {
                    let (query, variables) = completion_query(&self.word, collection, fields, chunk);
                    let answer = self.ask(caller, "completion", &query, variables).await;
                    (*chunk, answer)
                });
                for (chunk, answer) in futures_util::future::join_all(asked).await {
                    match answer? {
                        Answer::Data(data) => {
                            found.extend(read_completion(&data, collection, fields, chunk.len()))
                        }
                        Answer::Complexity { score, max } => {
                            // A single item that does not fit cannot be split: it is fetched on its own.
                            if chunk.len() > 1 {
                                let fits = fitting_batch(chunk.len(), score, max).min(chunk.len() - 1);
                                self.shrink_batch(fits);
                                retry.extend_from_slice(chunk);
                            }
                        }
                        Answer::Refused | Answer::Error | Answer::Denied => stop = true,
                    }
                }
                if stop {
                    return Ok(found);
                }
            }
            if retry.is_empty() {
                break;
            }
            pending = retry;
        }
        Ok(found)
    }

    /// The project and iid of global id `id` of `kind`, in one request.
    pub async fn locate(&self, caller: &Caller<'_>, kind: IdKind, id: u64) -> Result<Located, GatewayError> {
        if !self.usable(caller, "id") {
            return Ok(Located::Unanswered);
        }
        let (field, model) = match kind {
            IdKind::Issue => ("issue", "Issue"),
            IdKind::MergeRequest => ("mergeRequest", "MergeRequest"),
        };
        let query = format!("query($id:{model}ID!){{{field}(id:$id){{iid projectId reference(full:true)}}}}");
        let variables = json!({ "id": format!("gid://{}/{model}/{id}", self.word) });
        match self.ask(caller, "id", &query, variables).await? {
            Answer::Data(data) => Ok(read_located(data.get(field))),
            _ => Ok(Located::Unanswered),
        }
    }
}

/// Judges one GraphQL answer by its status and body.
fn judge(status: StatusCode, bytes: &[u8]) -> Answer {
    match status {
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN | StatusCode::TOO_MANY_REQUESTS => {
            return Answer::Denied
        }
        status if status.is_server_error() || status == StatusCode::REQUEST_TIMEOUT => return Answer::Error,
        status if !status.is_success() => return Answer::Refused,
        _ => {}
    }
    let Ok(Value::Object(mut body)) = serde_json::from_slice::<Value>(bytes) else {
        return Answer::Refused;
    };
    if let Some(Value::Object(data)) = body.remove("data") {
        return Answer::Data(data);
    }
    let messages = body
        .get("errors")
        .and_then(Value::as_array)
        .map(|errors| {
            errors
                .iter()
                .filter_map(|error| error.get("message").and_then(Value::as_str))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    if let Some((score, max)) = messages.iter().find_map(|message| complexity_of(message)) {
        return Answer::Complexity { score, max };
    }
    if let Some(message) = messages.first() {
        tracing::warn!(message, "the backend's GraphQL refused svcgate's query");
    }
    Answer::Refused
}

/// The score and limit of a complexity refusal: `Query has complexity of 603, which exceeds max complexity of 250`.
fn complexity_of(message: &str) -> Option<(u64, u64)> {
    let rest = message.strip_prefix("Query has complexity of ")?;
    let (score, rest) = rest.split_once(',')?;
    let max = rest.trim().strip_prefix("which exceeds max complexity of ")?;
    let max = max.trim_end_matches('.').trim();
    Some((score.trim().parse().ok()?, max.parse().ok()?))
}

/// Items per request that should fit under `max` when `items` scored `score`: proportionally, with a tenth to
/// spare for the query's fixed part; at least one.
fn fitting_batch(items: usize, score: u64, max: u64) -> usize {
    if score == 0 {
        return 1;
    }
    let items = u64::try_from(items).unwrap_or(u64::MAX);
    let fits = items.saturating_mul(max).saturating_mul(9) / score.saturating_mul(10);
    usize::try_from(fits).unwrap_or(1).max(1)
}

/// The query and variables completing `keys`: one alias per project, by id (`projects(ids:, first: 1)`), each
/// asking its items by iid.
fn completion_query(
    word: &str,
    collection: GraphqlCollection,
    fields: &[String],
    keys: &[ItemKey],
) -> (String, Value) {
    let mut projects: Vec<(u64, Vec<&str>)> = Vec::new();
    for (project_id, iid) in keys {
        match projects.iter_mut().find(|(id, _)| id == project_id) {
            Some((_, iids)) => iids.push(iid),
            None => projects.push((*project_id, vec![iid])),
        }
    }
    let selection: Vec<&str> = std::iter::once("iid")
        .chain(
            fields
                .iter()
                .filter_map(|field| GraphqlCollection::node_field(field)),
        )
        .collect();
    let selection = selection.join(" ");
    let mut declarations = Vec::with_capacity(projects.len() * 2);
    let mut aliases = String::new();
    let mut variables = Map::new();
    for (index, (project_id, iids)) in projects.iter().enumerate() {
        declarations.push(format!("$p{index}:[ID!],$i{index}:[String!]"));
        aliases.push_str(&format!(
            "p{index}:projects(ids:$p{index},first:1){{nodes{{id {}(iids:$i{index},first:{}){{nodes{{{selection}}}}}}}}}",
            collection.field(),
            iids.len()
        ));
        variables.insert(
            format!("p{index}"),
            json!([format!("gid://{word}/Project/{project_id}")]),
        );
        variables.insert(format!("i{index}"), json!(iids));
    }
    (
        format!("query({}){{{aliases}}}", declarations.join(",")),
        Value::Object(variables),
    )
}

/// A GraphQL `ID`, `String` or `Int` as text (an iid is `ID!` on issues, `String!` on merge requests).
fn text_of(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        _ => None,
    }
}

/// The project id in a project's global id (`gid://svc/Project/5` → 5).
fn project_id_of(gid: &str) -> Option<u64> {
    gid.rsplit_once("/Project/")?.1.parse().ok()
}

/// The items the `data` of a [`completion_query`] gave, each with its fields under their V4 names. A node that
/// lacks one of the fields is left out (fetched one by one).
fn read_completion(
    data: &Map<String, Value>,
    collection: GraphqlCollection,
    fields: &[String],
    capacity: usize,
) -> HashMap<ItemKey, Map<String, Value>> {
    let mut found = HashMap::with_capacity(capacity);
    for alias in data.values() {
        let Some(project) = alias
            .get("nodes")
            .and_then(Value::as_array)
            .and_then(|nodes| nodes.first())
        else {
            continue;
        };
        let Some(project_id) = project.get("id").and_then(Value::as_str).and_then(project_id_of) else {
            continue;
        };
        let nodes = project
            .get(collection.field())
            .and_then(|connection| connection.get("nodes"))
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        for node in nodes {
            let Some(iid) = node.get("iid").and_then(text_of) else {
                continue;
            };
            let completed: Option<Map<String, Value>> = fields
                .iter()
                .map(|field| {
                    let value = node.get(GraphqlCollection::node_field(field)?)?;
                    Some((field.clone(), value.clone()))
                })
                .collect();
            if let Some(completed) = completed {
                found.insert((project_id, iid), completed);
            }
        }
    }
    found
}

/// What `issue(id:)` or `mergeRequest(id:)` answered: `null` is no record for this caller.
fn read_located(record: Option<&Value>) -> Located {
    match record {
        None => Located::Unanswered,
        Some(Value::Null) => Located::NotFound,
        Some(record) => {
            let iid = record
                .get("iid")
                .and_then(text_of)
                .and_then(|iid| iid.parse().ok());
            let project_id = record
                .get("projectId")
                .and_then(text_of)
                .and_then(|id| id.parse().ok());
            let project_path = record
                .get("reference")
                .and_then(Value::as_str)
                .and_then(|reference| reference.rfind(['#', '!']).map(|at| reference[..at].to_owned()));
            match (project_id, iid) {
                (Some(project_id), Some(iid)) => Located::Found {
                    project_id,
                    iid,
                    project_path,
                },
                _ => Located::Unanswered,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_completion_query_has_one_alias_per_project_by_id() {
        let keys = vec![(5, "1".to_owned()), (7, "3".to_owned()), (5, "2".to_owned())];
        let (query, variables) = completion_query(
            "svc",
            GraphqlCollection::Issues,
            &["subscribed".to_owned()],
            &keys,
        );
        assert_eq!(
            query,
            "query($p0:[ID!],$i0:[String!],$p1:[ID!],$i1:[String!]){\
             p0:projects(ids:$p0,first:1){nodes{id issues(iids:$i0,first:2){nodes{iid subscribed}}}}\
             p1:projects(ids:$p1,first:1){nodes{id issues(iids:$i1,first:1){nodes{iid subscribed}}}}}"
        );
        assert_eq!(
            variables,
            json!({"p0": ["gid://svc/Project/5"], "i0": ["1", "2"], "p1": ["gid://svc/Project/7"], "i1": ["3"]})
        );
        let (query, _) = completion_query(
            "svc",
            GraphqlCollection::MergeRequests,
            &["subscribed".to_owned()],
            &keys[..1],
        );
        assert!(query.contains("mergeRequests(iids:$i0,first:1)"), "{query}");
    }

    #[test]
    fn an_answer_gives_each_listed_node_and_leaves_out_the_rest() {
        let data = json!({
            "p0": {"nodes": [{"id": "gid://svc/Project/5", "issues": {"nodes": [
                {"iid": "1", "subscribed": true},
                {"iid": "2"},
            ]}}]},
            "p1": {"nodes": []},
        });
        let Value::Object(data) = data else { unreachable!() };
        let found = read_completion(&data, GraphqlCollection::Issues, &["subscribed".to_owned()], 2);
        assert_eq!(found.len(), 1);
        assert_eq!(found[&(5, "1".to_owned())]["subscribed"], json!(true));
    }

    #[test]
    fn answers_are_judged_by_status_and_shape() {
        let ok = judge(StatusCode::OK, br#"{"data":{"issue":null}}"#);
        assert!(matches!(ok, Answer::Data(_)));
        assert_eq!(
            judge(
                StatusCode::OK,
                br#"{"errors":[{"message":"Query has complexity of 603, which exceeds max complexity of 250"}]}"#
            ),
            Answer::Complexity {
                score: 603,
                max: 250
            }
        );
        assert_eq!(
            judge(
                StatusCode::OK,
                br#"{"errors":[{"message":"Field 'x' doesn't exist on type 'Query'"}]}"#
            ),
            Answer::Refused
        );
        assert_eq!(
            judge(StatusCode::NOT_FOUND, br#"{"message":"404 Not Found"}"#),
            Answer::Refused
        );
        assert_eq!(judge(StatusCode::OK, b"<html>"), Answer::Refused);
        assert_eq!(judge(StatusCode::OK, b"{}"), Answer::Refused);
        assert_eq!(judge(StatusCode::UNAUTHORIZED, b"{}"), Answer::Denied);
        assert_eq!(judge(StatusCode::TOO_MANY_REQUESTS, b""), Answer::Denied);
        assert_eq!(judge(StatusCode::BAD_GATEWAY, b""), Answer::Error);
    }

    #[test]
    fn a_complexity_refusal_gives_a_batch_that_fits() {
        assert_eq!(fitting_batch(100, 603, 250), 37);
        assert_eq!(fitting_batch(1, 603, 250), 1);
        assert_eq!(fitting_batch(3, 0, 250), 1);
    }

    #[test]
    fn a_located_record_names_its_project() {
        let record = json!({"iid": "12", "projectId": 5, "reference": "group/proj#12"});
        assert_eq!(
            read_located(Some(&record)),
            Located::Found {
                project_id: 5,
                iid: 12,
                project_path: Some("group/proj".to_owned())
            }
        );
        let record = json!({"iid": "3", "projectId": 5, "reference": "a/b!3"});
        assert!(matches!(
            read_located(Some(&record)),
            Located::Found { project_path: Some(path), .. } if path == "a/b"
        ));
        assert_eq!(read_located(Some(&Value::Null)), Located::NotFound);
        assert_eq!(read_located(None), Located::Unanswered);
    }
}

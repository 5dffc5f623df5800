//! svcgate's completion query and its complexity, as the service scores it: the query text and variables for a
//! batch of list items ([`completion_query`]), its score by GitLab's rule ([`query_score`]), and the cutting of a
//! list into requests that fit the backend's complexity limit and the service's query length limit ([`chunk_keys`]).

use serde_json::{json, Map, Value};

use super::{ItemKey, MAX_ITEMS};
use crate::rewrite::rule::GraphqlCollection;

/// The score of `queryComplexity{limit score}`, which completion queries select: 1 for each field.
pub(super) const QUERY_COMPLEXITY_SCORE: u64 = 3;

/// The selection that asks the backend for the caller's complexity limit and the query's score.
pub(super) const QUERY_COMPLEXITY: &str = "queryComplexity{limit score}";

/// What one request of a completion may hold: items, and the complexity score they may add up to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Budget {
    /// Items per request.
    pub(super) items: usize,
    /// The backend's complexity limit for the caller's kind.
    pub(super) score: u64,
    /// What [`query_score`]'s estimates are multiplied by (the backend's reports, at least 1).
    pub(super) factor: f64,
}

impl Budget {
    /// Whether a query [`query_score`] estimates at `estimate` fits, corrected by the factor.
    pub(super) fn fits(&self, estimate: u64) -> bool {
        estimate as f64 * self.factor <= self.score as f64
    }
}

/// Items per request that should fit under `max` when `items` scored `score`: proportionally, with a tenth to
/// spare for the query's fixed part; at least one.
pub(super) fn fitting_batch(items: usize, score: u64, max: u64) -> usize {
    if score == 0 {
        return 1;
    }
    let items = u64::try_from(items).unwrap_or(u64::MAX);
    let fits = items.saturating_mul(max).saturating_mul(9) / score.saturating_mul(10);
    usize::try_from(fits).unwrap_or(1).max(1)
}

/// The node fields a completion of `fields` selects: `iid` and those with a GraphQL name.
pub(super) fn selection_of(fields: &[String]) -> String {
    let selection: Vec<&str> = std::iter::once("iid")
        .chain(
            fields
                .iter()
                .filter_map(|field| GraphqlCollection::node_field(field)),
        )
        .collect();
    selection.join(" ")
}

/// The query text [`completion_query`] spends on its `index`th project asking `count` items: its variable
/// declarations and its alias.
pub(super) fn project_part(
    index: usize,
    collection: GraphqlCollection,
    selection: &str,
    count: usize,
) -> (String, String) {
    (
        format!("$p{index}:[ID!],$i{index}:[String!]"),
        format!(
            "p{index}:projects(ids:$p{index},first:1){{nodes{{id {}(iids:$i{index},first:{count}){{nodes{{{selection}}}}}}}}}",
            collection.field()
        ),
    )
}

/// The complexity score of one item's node fields `selection`, as the service counts them: `subscribed` 5 (it
/// is computed per item), any other field 1.
pub(super) fn item_score(selection: &str) -> u64 {
    selection
        .split_whitespace()
        .map(|field| if field == "subscribed" { 5 } else { 1 })
        .sum()
}

/// The complexity score of one project's alias asking node fields `selection`, by GitLab's rule for
/// resolver-backed connections (`BaseField#field_resolver_complexity`), not graphql-ruby's `first` × children:
/// the collection costs `nodes` (1) and `selection` once, plus its resolver's 1 and 1 for its defaulted `sort`,
/// and nothing per item (they are named by `iids`); `projects(ids:, first: 1)` costs `nodes` (1), `id` (1) and
/// the collection, plus its resolver's 1 and 1 for its defaulted `sort` (`id_desc`), grown by 1% for its one
/// item, rounded down: 13 for `iid subscribed`.
pub(super) fn alias_score(selection: &str) -> u64 {
    let collection = 1 + item_score(selection) + 2;
    let projects = 1 + 1 + collection + 2;
    projects + projects / 100
}

/// The complexity score of a [`completion_query`] for `keys` with node fields `selection`, as the service counts
/// it: `queryComplexity{limit score}`, then each project's alias ([`alias_score`]), whatever its item count.
pub(super) fn query_score(keys: &[ItemKey], selection: &str) -> u64 {
    let mut projects: Vec<u64> = Vec::new();
    for (project, _) in keys {
        if !projects.contains(project) {
            projects.push(*project);
        }
    }
    let count = u64::try_from(projects.len()).unwrap_or(u64::MAX);
    QUERY_COMPLEXITY_SCORE.saturating_add(alias_score(selection).saturating_mul(count))
}

/// `keys` cut into requests of at most `limits.items` items whose score ([`query_score`]) stays within
/// `limits.score` and whose query text stays within `max_chars` (each project adds its own alias, so many projects
/// make a long and costly query even with few items).
pub(super) fn chunk_keys(
    keys: &[ItemKey],
    limits: Budget,
    max_chars: usize,
    collection: GraphqlCollection,
    selection: &str,
) -> Vec<Vec<ItemKey>> {
    // `query(){queryComplexity{limit}}`, and a project's part with the largest `first:` it can have.
    let fixed = 9 + QUERY_COMPLEXITY.len();
    let cost = |index: usize| {
        let (declarations, alias) = project_part(index, collection, selection, MAX_ITEMS);
        declarations.len() + 1 + alias.len()
    };
    let size = limits.items.max(1);
    let per_project = alias_score(selection);
    let mut chunks = Vec::new();
    let mut chunk: Vec<ItemKey> = Vec::new();
    let mut projects: Vec<u64> = Vec::new();
    let mut chars = fixed;
    let mut score = QUERY_COMPLEXITY_SCORE;
    for key in keys {
        let new_project = !projects.contains(&key.0);
        let full = chunk.len() >= size
            || (new_project && !limits.fits(score + per_project))
            || (new_project && chars + cost(projects.len()) > max_chars);
        if full && !chunk.is_empty() {
            chunks.push(std::mem::take(&mut chunk));
            projects.clear();
            chars = fixed;
            score = QUERY_COMPLEXITY_SCORE;
        }
        if !projects.contains(&key.0) {
            chars += cost(projects.len());
            score += per_project;
            projects.push(key.0);
        }
        chunk.push(key.clone());
    }
    if !chunk.is_empty() {
        chunks.push(chunk);
    }
    chunks
}

/// The query and variables completing `keys` with the node fields `selection`, and how many aliases it has: one
/// alias per project, by id (`projects(ids:, first: 1)`), each asking its items by iid; and
/// `queryComplexity { limit score }`, the caller's complexity limit and the query's score, when `ask_limit`.
pub(super) fn completion_query(
    word: &str,
    collection: GraphqlCollection,
    selection: &str,
    keys: &[ItemKey],
    ask_limit: bool,
) -> (String, Value, usize) {
    let mut projects: Vec<(u64, Vec<&str>)> = Vec::new();
    for (project_id, iid) in keys {
        match projects.iter_mut().find(|(id, _)| id == project_id) {
            Some((_, iids)) => iids.push(iid),
            None => projects.push((*project_id, vec![iid])),
        }
    }
    let mut declarations = Vec::with_capacity(projects.len());
    let mut aliases = String::new();
    let mut variables = Map::new();
    for (index, (project_id, iids)) in projects.iter().enumerate() {
        let (declaration, alias) = project_part(index, collection, selection, iids.len());
        declarations.push(declaration);
        aliases.push_str(&alias);
        variables.insert(
            format!("p{index}"),
            json!([format!("gid://{word}/Project/{project_id}")]),
        );
        variables.insert(format!("i{index}"), json!(iids));
    }
    let limit = if ask_limit { QUERY_COMPLEXITY } else { "" };
    (
        format!("query({}){{{limit}{aliases}}}", declarations.join(",")),
        Value::Object(variables),
        projects.len(),
    )
}

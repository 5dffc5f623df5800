//! The named procedures: the few V3 behaviours that need several backend calls with control flow.
//!
//! Each takes the translated [`Exchange`] and the client's request, and returns an [`Outcome`] that goes through
//! the same answer building as every other rule (status remap, shapes, pagination headers). Each has its own
//! tests in `tests/gateway/procedures.rs`.

use std::collections::HashMap;

use http::{Method, StatusCode};
use serde_json::{json, Map, Value};

use super::exchange::{paginate, relay_error, Exchange, Outcome};
use super::request::{V3Body, V3Request};
use super::rule::Procedure;
use super::sessions::Sessions;
use crate::http::error::GatewayError;
use crate::util::url_parts::with_query;

/// What procedures may use besides the exchange.
pub struct ProcedureEnv<'a> {
    /// Password-login sessions.
    pub sessions: &'a Sessions,
}

/// Runs `procedure` for `exchange`.
pub async fn run(
    procedure: Procedure,
    exchange: &Exchange<'_>,
    request: V3Request,
    env: &ProcedureEnv<'_>,
) -> Result<Outcome, GatewayError> {
    match procedure {
        Procedure::MemberConflict => member_write(exchange, request, true).await,
        Procedure::MemberAccessLevel => member_write(exchange, request, false).await,
        Procedure::MemberRevoke => member_revoke(exchange, request).await,
        Procedure::LabelsOr => labels_or(exchange, request).await,
        Procedure::TodosMarkAll => todos_mark_all(exchange).await,
        Procedure::CommitBuilds => commit_builds(exchange).await,
        Procedure::TriggerRequest => trigger_request(exchange, request).await,
        Procedure::TriggerByToken => trigger_by_token(exchange, request).await,
        Procedure::MergeRequestUpdate => merge_request_update(exchange, request).await,
        Procedure::LabelDelete => label_delete(exchange, request).await,
        Procedure::AdminOnly => admin_only(exchange, request).await,
        Procedure::SessionLogin => env.sessions.login(exchange, request).await,
        Procedure::OwnerRenames => owner_renames(exchange, request).await,
        Procedure::OwnSnippet => own_snippet(exchange, request).await,
        Procedure::NoSelfVote => no_self_vote(exchange, request).await,
    }
}

/// Reads a backend answer into a JSON outcome.
async fn read(exchange: &Exchange<'_>, outcome: Outcome) -> Result<(StatusCode, Value), GatewayError> {
    match outcome {
        Outcome::Stream(response) => {
            let answer = exchange.caller.read_json(response).await?;
            Ok((answer.status, answer.body))
        }
        Outcome::Json { status, body, .. } => Ok((status, body)),
    }
}

fn mentions_access_level(body: &Value) -> bool {
    body.get("message")
        .map(|message| message.to_string().contains("access_level"))
        .unwrap_or(false)
}

/// Member create or update: V3 answered 422 `Access level is not known` where V4 answers 400; for project
/// members (`existing_is_created`), an existing member was 201 with that member where V4 answers 409.
async fn member_write(
    exchange: &Exchange<'_>,
    request: V3Request,
    existing_is_created: bool,
) -> Result<Outcome, GatewayError> {
    let user_id = request.number_param("user_id");
    let (status, body) = read(exchange, exchange.send(request).await?).await?;
    if status == StatusCode::BAD_REQUEST && mentions_access_level(&body) {
        return Ok(Outcome::json(
            StatusCode::UNPROCESSABLE_ENTITY,
            json!({"message": "Access level is not known"}),
        ));
    }
    if existing_is_created && status == StatusCode::CONFLICT {
        if let Some(user_id) = user_id {
            let member = exchange
                .caller
                .get_json(&format!("{}/{user_id}", exchange.v4_path))
                .await?;
            return Ok(Outcome::json(StatusCode::CREATED, member.body));
        }
    }
    Ok(Outcome::json(status, body))
}

/// `DELETE /projects/:id/members/:user_id`: the member is answered (V4 answers 204); a user who is not a member is
/// 200 `{"message":"Access revoked","id":…}` as V3 answered.
async fn member_revoke(exchange: &Exchange<'_>, request: V3Request) -> Result<Outcome, GatewayError> {
    let member = match exchange.caller.get_json(&exchange.v4_path).await {
        Ok(answer) => answer.body,
        Err(GatewayError::Relay { status, .. }) if status == StatusCode::NOT_FOUND => {
            let user_id = exchange
                .param("user_id")
                .and_then(|id| id.parse::<u64>().ok())
                .map_or(Value::Null, Value::from);
            return Ok(Outcome::json(
                StatusCode::OK,
                json!({"message": "Access revoked", "id": user_id}),
            ));
        }
        Err(error) => return Err(error),
    };
    let (status, body) = read(exchange, exchange.send(request).await?).await?;
    if !status.is_success() {
        return Ok(Outcome::json(status, body));
    }
    Ok(Outcome::json(StatusCode::OK, member))
}

fn query_value<'a>(query: &'a [(String, String)], name: &str) -> Option<&'a str> {
    query
        .iter()
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.as_str())
}

/// V3 issue lists matched any of several labels; V4 matches all. One V4 query per label (every page), merged by
/// id, sorted as asked, and paginated here.
async fn labels_or(exchange: &Exchange<'_>, request: V3Request) -> Result<Outcome, GatewayError> {
    let mut labels: Vec<String> = query_value(&exchange.query, "labels")
        .unwrap_or("")
        .split(',')
        .map(str::trim)
        .filter(|label| !label.is_empty())
        .map(str::to_owned)
        .collect();
    labels.sort();
    labels.dedup();
    if labels.len() < 2 {
        return exchange.send(request).await;
    }
    // One list read per label at least: refuse at once a filter that cannot fit the call budget.
    if labels.len() > exchange.caller.max_calls as usize {
        return Err(GatewayError::TooManyBackendCalls {
            limit: exchange.caller.max_calls,
            param: Some("labels".to_owned()),
        });
    }
    let mut merged: HashMap<u64, Value> = HashMap::new();
    for label in &labels {
        let mut query: Vec<(String, String)> = exchange
            .query
            .iter()
            .filter(|(name, _)| name != "labels")
            .cloned()
            .collect();
        query.push(("labels".to_owned(), label.clone()));
        for item in exchange.collect_pages(&exchange.v4_path, &query).await? {
            if let Some(id) = item.get("id").and_then(Value::as_u64) {
                merged.insert(id, item);
            }
        }
        if merged.len() > exchange.max_collected {
            return Err(GatewayError::CollectionTooLarge(exchange.max_collected));
        }
    }
    let order_by = match query_value(&exchange.query, "order_by") {
        Some("updated_at") => "updated_at",
        _ => "created_at",
    };
    let ascending = query_value(&exchange.query, "sort") == Some("asc");
    let mut items: Vec<Value> = merged.into_values().collect();
    items.sort_by(|a, b| {
        let key = |item: &Value| {
            (
                item.get(order_by)
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned(),
                item.get("id").and_then(Value::as_u64).unwrap_or(0),
            )
        };
        let ordering = key(a).cmp(&key(b));
        if ascending {
            ordering
        } else {
            ordering.reverse()
        }
    });
    let (headers, body) = paginate(items, &exchange.query, &exchange.v4_path);
    Ok(Outcome::Json {
        status: StatusCode::OK,
        headers,
        body,
    })
}

/// V3's numeric to-do actions (`action_id`) and V4's names for them (`action`).
const TODO_ACTIONS: [(&str, &str); 7] = [
    ("1", "assigned"),
    ("2", "mentioned"),
    ("3", "build_failed"),
    ("4", "marked"),
    ("5", "approval_required"),
    ("6", "unmergeable"),
    ("7", "directly_addressed"),
];

/// `DELETE /todos`: V3 answered 200 with how many pending to-dos it marked done. Without filters, count them and
/// mark all at once; with filters (V4's "mark all" takes none), mark each matching to-do.
async fn todos_mark_all(exchange: &Exchange<'_>) -> Result<Outcome, GatewayError> {
    let mut filters: Vec<(String, String)> = Vec::new();
    for (name, value) in &exchange.query {
        match name.as_str() {
            "action_id" => {
                let action = TODO_ACTIONS
                    .iter()
                    .find(|(id, _)| id == value)
                    .map_or(value.as_str(), |(_, action)| action);
                filters.push(("action".to_owned(), action.to_owned()));
            }
            "author_id" | "project_id" | "type" => filters.push((name.clone(), value.clone())),
            _ => {}
        }
    }
    filters.push(("state".to_owned(), "pending".to_owned()));
    if filters.len() == 1 {
        let counted = exchange
            .caller
            .get_json(&with_query(
                "/api/v4/todos",
                &[
                    ("state".into(), "pending".into()),
                    ("per_page".into(), "1".into()),
                ],
            ))
            .await?;
        let count = super::backend::header_number(&counted.headers, "x-total").unwrap_or(0);
        let response = exchange
            .caller
            .send(Method::POST, "/api/v4/todos/mark_as_done", None)
            .await?;
        if !response.status().is_success() {
            return exchange.relay(response).await;
        }
        return Ok(Outcome::json(StatusCode::OK, Value::from(count)));
    }
    let todos = exchange.collect_pages("/api/v4/todos", &filters).await?;
    let mut marked = 0u64;
    for todo in todos {
        let Some(id) = todo.get("id").and_then(Value::as_u64) else {
            continue;
        };
        let response = exchange
            .caller
            .send(Method::POST, &format!("/api/v4/todos/{id}/mark_as_done"), None)
            .await?;
        if response.status().is_success() {
            marked += 1;
        }
    }
    Ok(Outcome::json(StatusCode::OK, Value::from(marked)))
}

/// `GET …/commits/:sha/builds` (removed in V4): the jobs of every pipeline of the commit, newest first,
/// paginated here.
async fn commit_builds(exchange: &Exchange<'_>) -> Result<Outcome, GatewayError> {
    let project = exchange.raw_param("id").unwrap_or_default();
    let sha = exchange.raw_param("sha").unwrap_or_default();
    let commit = exchange
        .caller
        .get_json(&format!("/api/v4/projects/{project}/repository/commits/{sha}"))
        .await?;
    let full_sha = commit
        .body
        .get("id")
        .and_then(Value::as_str)
        .unwrap_or(sha)
        .to_owned();
    let pipelines = exchange
        .collect_pages(
            &format!("/api/v4/projects/{project}/pipelines"),
            &[("sha".to_owned(), full_sha)],
        )
        .await?;
    let scopes: Vec<(String, String)> = exchange
        .query
        .iter()
        .filter(|(name, _)| name == "scope" || name == "scope[]")
        .map(|(_, value)| ("scope[]".to_owned(), value.clone()))
        .collect();
    let mut jobs = Vec::new();
    for pipeline in pipelines {
        let Some(id) = pipeline.get("id").and_then(Value::as_u64) else {
            continue;
        };
        jobs.extend(
            exchange
                .collect_pages(
                    &format!("/api/v4/projects/{project}/pipelines/{id}/jobs"),
                    &scopes,
                )
                .await?,
        );
        if jobs.len() > exchange.max_collected {
            return Err(GatewayError::CollectionTooLarge(exchange.max_collected));
        }
    }
    jobs.sort_by_key(|job| std::cmp::Reverse(job.get("id").and_then(Value::as_u64).unwrap_or(0)));
    let (headers, body) = paginate(jobs, &exchange.query, &exchange.v4_path);
    Ok(Outcome::Json {
        status: StatusCode::OK,
        headers,
        body,
    })
}

/// The `variables` the client sent, as a JSON object (JSON body, or `variables[KEY]=value` form pairs).
fn request_variables(request: &V3Request) -> Value {
    let mut variables = Map::new();
    let mut from_pairs = |pairs: &[(String, String)]| {
        for (name, value) in pairs {
            if let Some(key) = name
                .strip_prefix("variables[")
                .and_then(|rest| rest.strip_suffix(']'))
            {
                variables.insert(key.to_owned(), Value::from(value.as_str()));
            }
        }
    };
    from_pairs(&request.query);
    match &request.body {
        V3Body::Json(object) => {
            if let Some(Value::Object(given)) = object.get("variables") {
                for (key, value) in given {
                    variables.insert(key.clone(), value.clone());
                }
            }
        }
        V3Body::Form(pairs) => from_pairs(pairs),
        _ => {}
    }
    Value::Object(variables)
}

/// `POST …/trigger/builds`: V4 answers the pipeline; V3 answered a trigger request `{id, variables}`. V4 does not
/// expose the trigger request's id, so the pipeline's id stands in for it.
async fn trigger_request(exchange: &Exchange<'_>, request: V3Request) -> Result<Outcome, GatewayError> {
    let variables = request_variables(&request);
    let (status, body) = read(exchange, exchange.send(request).await?).await?;
    if !status.is_success() {
        return Ok(Outcome::json(status, body));
    }
    let id = body.get("id").cloned().unwrap_or(Value::Null);
    Ok(Outcome::json(
        StatusCode::CREATED,
        json!({"id": id, "variables": variables}),
    ))
}

/// Triggers addressed by token (V3) rather than id (V4): the token is found in the project's trigger list. `GET`
/// answers the trigger; `DELETE` deletes it by id and answers the trigger as V3 did.
async fn trigger_by_token(exchange: &Exchange<'_>, request: V3Request) -> Result<Outcome, GatewayError> {
    let token = exchange.param("token").unwrap_or_default();
    let project = exchange.raw_param("id").unwrap_or_default();
    let triggers = exchange
        .collect_pages(&format!("/api/v4/projects/{project}/triggers"), &[])
        .await?;
    let Some(trigger) = triggers
        .into_iter()
        .find(|trigger| trigger.get("token").and_then(Value::as_str) == Some(token.as_str()))
    else {
        return Ok(Outcome::json(
            StatusCode::NOT_FOUND,
            json!({"message": "404 Trigger Not Found"}),
        ));
    };
    let id = trigger.get("id").and_then(Value::as_u64).unwrap_or(0);
    let path = format!("/api/v4/projects/{project}/triggers/{id}");
    if exchange.rule.v4.method == Method::DELETE {
        let response = exchange
            .caller
            .send(Method::DELETE, &path, request.into_payload())
            .await?;
        if !response.status().is_success() {
            return exchange.relay(response).await;
        }
        return Ok(Outcome::json(StatusCode::OK, trigger));
    }
    let answer = exchange.caller.get_json(&path).await?;
    Ok(Outcome::json(answer.status, answer.body))
}

/// `PUT …/merge_requests/:id` with `state_event=merge`, which V4 refuses: apply the other changes, then merge.
async fn merge_request_update(
    exchange: &Exchange<'_>,
    mut request: V3Request,
) -> Result<Outcome, GatewayError> {
    if request.param("state_event") != Some("merge") {
        return exchange.send(request).await;
    }
    request.take_param("state_event");
    if request.has_params() {
        let response = exchange
            .caller
            .send(Method::PUT, &exchange.v4_path, request.into_payload())
            .await?;
        if !response.status().is_success() {
            return exchange.relay(response).await;
        }
    }
    let response = exchange
        .caller
        .send(Method::PUT, &format!("{}/merge", exchange.v4_path), None)
        .await?;
    let (status, body) = read(exchange, Outcome::Stream(response)).await?;
    Ok(Outcome::json(status, body))
}

/// `DELETE /projects/:id/labels?name=`: V3 answered the deleted label.
async fn label_delete(exchange: &Exchange<'_>, request: V3Request) -> Result<Outcome, GatewayError> {
    let name = request.param("name").unwrap_or_default().to_owned();
    let labels = exchange.collect_pages(&exchange.v4_path, &[]).await?;
    let Some(label) = labels
        .into_iter()
        .find(|label| label.get("name").and_then(Value::as_str) == Some(name.as_str()))
    else {
        return Ok(Outcome::json(
            StatusCode::NOT_FOUND,
            json!({"message": "404 Label Not Found"}),
        ));
    };
    let response = exchange
        .caller
        .send(
            Method::DELETE,
            &with_query(&exchange.v4_path, &[("name".to_owned(), name)]),
            None,
        )
        .await?;
    if !response.status().is_success() {
        return exchange.relay(response).await;
    }
    Ok(Outcome::json(StatusCode::OK, label))
}

/// `GET /projects/all`: V3 answered 403 to non-admins; V4's `GET /projects` answers everyone.
async fn admin_only(exchange: &Exchange<'_>, request: V3Request) -> Result<Outcome, GatewayError> {
    let user = exchange.caller.get_json("/api/v4/user").await?;
    if user.body.get("is_admin").and_then(Value::as_bool) != Some(true) {
        return Err(relay_error(
            StatusCode::FORBIDDEN,
            bytes::Bytes::from_static(br#"{"message":"403 Forbidden"}"#),
        ));
    }
    exchange.send(request).await
}

/// A V3 refusal: `status` with `{"message": message}`.
fn refusal(status: StatusCode, message: &str) -> GatewayError {
    relay_error(
        status,
        bytes::Bytes::from(serde_json::to_vec(&json!({ "message": message })).unwrap_or_default()),
    )
}

/// The caller as the backend sees them (`GET /user`): their id and whether they are an admin.
async fn current_user(exchange: &Exchange<'_>) -> Result<(Option<u64>, bool), GatewayError> {
    let user = exchange.caller.get_json("/api/v4/user").await?.body;
    Ok((
        user.get("id").and_then(Value::as_u64),
        user.get("is_admin").and_then(Value::as_bool) == Some(true),
    ))
}

/// The access level at `pointer` of a project's `permissions` (`/project_access/access_level`).
fn access_level(project: &Value, pointer: &str) -> u64 {
    project
        .pointer(&format!("/permissions{pointer}/access_level"))
        .and_then(Value::as_u64)
        .unwrap_or(0)
}

/// The refusal of a body svcgate cannot read (multipart) where V3's answer depends on `param` in it.
fn unchecked(param: &str, check: &str) -> GatewayError {
    GatewayError::BadRequest(format!(
        "svcgate cannot read `{param}` in this body to check {check} as V3 did; send a form or JSON body"
    ))
}

/// `PUT /projects/:id`: V3 checked `:rename_project` when `name` was given, which only owners (and admins) had
/// (v3 projects.rb, `authorize! :rename_project, user_project if attrs[:name].present?`): a master's rename is
/// 403. `name` counts in any form (`{"name": 42}` too); a non-owner's body svcgate cannot read is refused. Other
/// changes go through as V4 takes them.
async fn owner_renames(exchange: &Exchange<'_>, request: V3Request) -> Result<Outcome, GatewayError> {
    let renames = request.present_param("name").is_some();
    if renames || request.body_unread() {
        let (user_id, admin) = current_user(exchange).await?;
        if !admin {
            let project_path = format!(
                "/api/v4/projects/{}",
                exchange.raw_param("id").unwrap_or_default()
            );
            let project = exchange.caller.get_json(&project_path).await?.body;
            const OWNER: u64 = 50;
            let owns_namespace =
                user_id.is_some() && project.pointer("/owner/id").and_then(Value::as_u64) == user_id;
            let owner = owns_namespace
                || access_level(&project, "/project_access") >= OWNER
                || access_level(&project, "/group_access") >= OWNER;
            if !owner && renames {
                return Err(refusal(StatusCode::FORBIDDEN, "403 Forbidden"));
            }
            if !owner {
                return Err(unchecked("name", "V3's owner-only rename"));
            }
        }
    }
    exchange.send(request).await
}

/// `PUT`/`DELETE /snippets/:snippet_id`: V3 found the snippet among the caller's own
/// (`snippets_for_current_user.find_by(id:)`, v3 snippets.rb), so another user's snippet, even a public one or
/// an admin's call, was 404 `Snippet Not Found`.
async fn own_snippet(exchange: &Exchange<'_>, request: V3Request) -> Result<Outcome, GatewayError> {
    let not_found = || refusal(StatusCode::NOT_FOUND, "404 Snippet Not Found");
    // V3's PUT validated `at_least_one_of :title, :file_name, :content, :visibility_level` before its lookup
    // (v3 snippets.rb; snippets_spec "returns 400 for missing parameters"). `visibility` is the converted
    // `visibility_level`. A body svcgate did not read is left to the backend.
    const EDITABLE: [&str; 5] = ["title", "file_name", "content", "visibility_level", "visibility"];
    if exchange.rule.v4.method == Method::PUT && EDITABLE.iter().all(|name| request.sent(name) == Some(false))
    {
        let message = "title, file_name, content, visibility_level are missing, at least one parameter must be provided";
        return Err(relay_error(
            StatusCode::BAD_REQUEST,
            bytes::Bytes::from(serde_json::to_vec(&json!({ "error": message })).unwrap_or_default()),
        ));
    }
    let (user_id, _) = current_user(exchange).await?;
    let path = format!(
        "/api/v4/snippets/{}",
        exchange.raw_param("snippet_id").unwrap_or_default()
    );
    let snippet = match exchange.caller.get_json(&path).await {
        Ok(answer) => answer.body,
        Err(GatewayError::Relay { status, .. })
            if status == StatusCode::NOT_FOUND || status == StatusCode::FORBIDDEN =>
        {
            return Err(not_found())
        }
        Err(error) => return Err(error),
    };
    if user_id.is_none() || snippet.pointer("/author/id").and_then(Value::as_u64) != user_id {
        return Err(not_found());
    }
    exchange.send(request).await
}

/// Whether an award name is a vote as V3's `Awardable#awardable_votes?` read it after normalising the
/// `+1`/`-1` aliases.
fn is_vote(name: &str) -> bool {
    matches!(name.trim(), "thumbsup" | "thumbsdown" | "+1" | "-1")
}

/// Award emoji `POST`s: V3 refused a thumbsup or thumbsdown on what the caller wrote (`can_award_awardable?`,
/// `Awardable#user_can_award?`, v3 award_emoji.rb) with 404 `Award Emoji Not Found`; other emoji, and votes on
/// what others wrote, go through. An award on one's own awardable in a body svcgate cannot read is refused. An
/// awardable the caller may not read (403, 404) is left to V4's answer to the award; any other failure of its
/// read is the answer.
async fn no_self_vote(exchange: &Exchange<'_>, request: V3Request) -> Result<Outcome, GatewayError> {
    let vote = request.present_param("name").is_some_and(|name| is_vote(&name));
    let unread = request.body_unread();
    if vote || unread {
        let awardable_path = exchange
            .v4_path
            .strip_suffix("/award_emoji")
            .unwrap_or(&exchange.v4_path)
            .to_owned();
        match exchange.caller.get_json(&awardable_path).await {
            Ok(awardable) => {
                let (user_id, _) = current_user(exchange).await?;
                let own = user_id.is_some()
                    && awardable.body.pointer("/author/id").and_then(Value::as_u64) == user_id;
                if own && vote {
                    return Err(refusal(StatusCode::NOT_FOUND, "404 Award Emoji Not Found"));
                }
                if own {
                    return Err(unchecked("name", "V3's refusal of a vote on one's own work"));
                }
            }
            // An awardable the caller cannot read is V4's own answer to the call below.
            Err(GatewayError::Relay { status, .. })
                if status == StatusCode::NOT_FOUND || status == StatusCode::FORBIDDEN => {}
            Err(error) => return Err(error),
        }
    }
    exchange.send(request).await
}

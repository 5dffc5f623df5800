//! What a migrated client does for a route the gateway serves with a [`Procedure`]: the V4 request it sends and
//! what it must now do itself. A procedure rule's V4 template names what the gateway starts from, not always a
//! call a client should make (`POST /session` → the root `/oauth/token`, commit builds → a route V4 does not have),
//! so the advice for these routes is written here per procedure, client-facing, after the translation reference
//! (§2.8, §2.12, §4.1, §5.1, §5.2, §5.4).

use serde::Serialize;

use crate::rewrite::rule::{Procedure, Rule};

/// How V4 treats a route the gateway serves with a procedure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProcedureKind {
    /// V4 has another call (or calls) for it.
    Replaced,
    /// V4's API has no such call: use what the advice names instead.
    Removed,
    /// The same V4 call, with a change to the request or to how the answer is read.
    Changed,
}

/// The client-facing advice for a procedure rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcedureAdvice {
    /// Replaced, removed or changed.
    pub kind: ProcedureKind,
    /// The V4 method.
    pub method: String,
    /// The V4 path template, with `/api/v4` (or without it when the call is not part of the API).
    pub path: String,
    /// One sentence: what to call.
    pub summary: String,
    /// What the client must now do itself.
    pub instead: String,
    /// Changes to the request, one sentence each.
    pub request: Vec<String>,
}

/// The advice for `rule`, which the gateway serves with `procedure`.
pub fn procedure_advice(rule: &Rule, procedure: Procedure) -> ProcedureAdvice {
    let (method, path) = (rule.v4.method.to_string(), format!("/api/v4{}", rule.v4.template));
    let changed = |instead: &str| ProcedureAdvice {
        kind: ProcedureKind::Changed,
        summary: format!("call {method} {path}, and handle what V4 answers differently (see \"instead\")"),
        method: method.clone(),
        path: path.clone(),
        instead: instead.to_owned(),
        request: Vec::new(),
    };
    let replaced = |instead: &str| ProcedureAdvice {
        kind: ProcedureKind::Replaced,
        summary: format!("replaced: call {method} {path}"),
        method: method.clone(),
        path: path.clone(),
        instead: instead.to_owned(),
        request: Vec::new(),
    };
    match procedure {
        Procedure::MemberConflict => changed(
            "V4 answers 409 {\"message\":\"Member already exists\"} for a user who is already a member (V3 answered \
             201 with that member): treat 409 as done, and GET /api/v4/projects/:id/members/:user_id if you need the \
             member; an unknown access_level is 400 with validation messages (V3: 422)",
        ),
        Procedure::MemberAccessLevel => changed(
            "an unknown access_level is 400 with validation messages in V4 (V3: 422 `Access level is not known`): \
             check for 400",
        ),
        Procedure::MemberRevoke => changed(
            "V4 answers 204 with no body (V3 answered the member): GET /api/v4/projects/:id/members/:user_id first if \
             you need it; a user who is not a member is 404 in V4 (V3: 200 `Access revoked`), so treat 404 as done",
        ),
        Procedure::LabelsOr => changed(
            "V4's labels=a,b matches items with all the labels (V3: any of them): for any of several labels, query \
             once per label and merge the answers by id (then sort and page them yourself)",
        ),
        Procedure::TodosMarkAll => replaced(
            "V4 answers 204 with no count (V3 answered how many it marked) and takes no filters: if you need the \
             count, read X-Total of GET /api/v4/todos?state=pending first; to mark only some (V3's filters), list \
             them with GET /api/v4/todos and POST /api/v4/todos/:id/mark_as_done for each",
        ),
        Procedure::CommitBuilds => {
            let project = rule
                .v4
                .template
                .strip_suffix("/repository/commits/:sha/builds")
                .unwrap_or("/projects/:id");
            ProcedureAdvice {
                kind: ProcedureKind::Replaced,
                method: "GET".to_owned(),
                path: format!("/api/v4{project}/pipelines?sha=:sha"),
                summary: format!(
                    "removed in V4: list the commit's pipelines with GET /api/v4{project}/pipelines?sha=:sha (the \
                     full sha), then each pipeline's jobs"
                ),
                instead: format!(
                    "for each pipeline, GET /api/v4{project}/pipelines/:pipeline_id/jobs (with scope[] to filter); \
                     V4 calls builds jobs; merge the lists, newest (highest id) first, and page them yourself"
                ),
                request: vec!["`scope` becomes `scope[]` on each pipeline's jobs".to_owned()],
            }
        }
        Procedure::TriggerRequest => replaced(
            "V4 answers the pipeline it created (201; its `id` is the pipeline's) where V3 answered a trigger request \
             {id, variables}: read the pipeline",
        ),
        Procedure::TriggerByToken => {
            let path = path.replace(":token", ":trigger_id");
            ProcedureAdvice {
                kind: ProcedureKind::Changed,
                summary: format!("call {method} {path}: V4 takes the trigger's id, not its token"),
                method: method.clone(),
                instead: format!(
                    "find the id in GET /api/v4{}/triggers (the item whose `token` is yours; keep the id){}",
                    rule.v4.template.strip_suffix("/triggers/:token").unwrap_or("/projects/:id"),
                    if method == "DELETE" {
                        "; V4 answers 204 with no body (V3 answered the trigger)"
                    } else {
                        ""
                    }
                ),
                path,
                request: vec![":token becomes the trigger's id (:trigger_id)".to_owned()],
            }
        }
        Procedure::MergeRequestUpdate => changed(
            "V4's update does not merge: send the other fields with this PUT, then PUT \
             /api/v4/projects/:id/merge_requests/:merge_request_iid/merge to merge",
        ),
        Procedure::LabelDelete => changed(
            "V4 answers 204 with no body (V3 answered the label): read it from GET /api/v4/projects/:id/labels first \
             if you need it",
        ),
        Procedure::AdminOnly => replaced(
            "V4's list answers every project the caller can see (all of them for an admin) and never 403: if only \
             admins should list all projects, check `is_admin` in GET /api/v4/user yourself",
        ),
        Procedure::SessionLogin => ProcedureAdvice {
            kind: ProcedureKind::Removed,
            method: "POST".to_owned(),
            path: "/oauth/token".to_owned(),
            summary: "removed: authenticate with a personal access token (PRIVATE-TOKEN header) instead of logging \
                      in with a password; or get an OAuth token with POST /oauth/token at the server's root (no \
                      /api/v4 prefix)"
                .to_owned(),
            instead: "create a personal access token (user settings, scope api) and send it as PRIVATE-TOKEN, or \
                      POST /oauth/token with grant_type=password, username and password and send \
                      `Authorization: Bearer <access_token>`; there is no private_token to read from a login answer"
                .to_owned(),
            request: vec!["login or email becomes username (OAuth password grant only)".to_owned()],
        },
        Procedure::OwnerRenames => changed(
            "V4 lets a maintainer rename the project (V3 allowed only its owner or an admin): nothing to do, unless \
             your client relied on the 403",
        ),
        Procedure::OwnSnippet => changed(
            "V4 finds any snippet the caller may see, and changes it if the caller may (V3 looked among the caller's \
             own only, 404 for another's): if the client must touch only its own, compare the snippet's author.id \
             with GET /api/v4/user first",
        ),
        Procedure::NoSelfVote => changed(
            "V4 accepts a thumbsup or thumbsdown on the caller's own item (V3 answered 404 `Award Emoji Not Found`): \
             if the client must not vote on its own, compare the item's author.id with GET /api/v4/user first",
        ),
    }
}

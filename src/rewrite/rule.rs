//! The compiled rule: one V3 route that differs from V4, and everything the gateway does about it.
//!
//! A [`Rule`] is plain data built by the loader from `rules/*.toml`; nothing here performs I/O.

use http::Method;

use crate::store::IdKind;

/// One segment of a path template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    /// Text matched and emitted as is.
    Literal(String),
    /// `:name`: one path segment.
    Param(String),
    /// `*name`: the rest of the path, slashes included (emitted URL-encoded on the V4 side).
    Rest(String),
}

/// A method and path template, as written in a rule (`PUT /projects/:id/issues/:issue_id`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// The method.
    pub method: Method,
    /// The template as written, relative to the API prefix.
    pub template: String,
    /// The template's segments.
    pub segments: Vec<Segment>,
}

impl Route {
    /// Parses `METHOD /path/:param/*rest`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let (method, template) = text
            .trim()
            .split_once(' ')
            .ok_or_else(|| format!("{text:?} is not `METHOD /path`"))?;
        // Only the methods an API route can have: `GETT` is a typo, never an extension method.
        let method = match method {
            "GET" => Method::GET,
            "HEAD" => Method::HEAD,
            "POST" => Method::POST,
            "PUT" => Method::PUT,
            "PATCH" => Method::PATCH,
            "DELETE" => Method::DELETE,
            "OPTIONS" => Method::OPTIONS,
            _ => {
                return Err(format!(
                    "{method:?} is not an HTTP method (GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS)"
                ))
            }
        };
        let template = template.trim();
        if !template.starts_with('/') {
            return Err(format!("path {template:?} must start with /"));
        }
        let mut segments = Vec::new();
        let parts: Vec<&str> = template[1..].split('/').collect();
        for (position, part) in parts.iter().enumerate() {
            if let Some(name) = part.strip_prefix(':') {
                check_name(name)?;
                segments.push(Segment::Param(name.to_owned()));
            } else if let Some(name) = part.strip_prefix('*') {
                check_name(name)?;
                if position + 1 != parts.len() {
                    return Err(format!("*{name} must be the last segment"));
                }
                segments.push(Segment::Rest(name.to_owned()));
            } else if part.is_empty() {
                return Err(format!("path {template:?} has an empty segment"));
            } else {
                segments.push(Segment::Literal((*part).to_owned()));
            }
        }
        Ok(Route {
            method,
            template: template.to_owned(),
            segments,
        })
    }

    /// Names of the template's parameters, in order.
    pub fn params(&self) -> impl Iterator<Item = &str> {
        self.segments.iter().filter_map(|segment| match segment {
            Segment::Param(name) | Segment::Rest(name) => Some(name.as_str()),
            Segment::Literal(_) => None,
        })
    }

    /// The template in the router's syntax (`{param}`, `{*rest}`).
    pub fn router_path(&self) -> String {
        let mut path = String::new();
        for segment in &self.segments {
            path.push('/');
            match segment {
                Segment::Literal(text) => path.push_str(text),
                Segment::Param(name) => {
                    path.push('{');
                    path.push_str(name);
                    path.push('}');
                }
                Segment::Rest(name) => {
                    path.push_str("{*");
                    path.push_str(name);
                    path.push('}');
                }
            }
        }
        path
    }
}

/// Whether a parameter value is true as V3's parameter coercion read booleans (`true`, `1`, `yes`, `on`, `t`, `y`,
/// any case).
pub fn is_true(value: &str) -> bool {
    matches!(
        value.trim().to_ascii_lowercase().as_str(),
        "true" | "1" | "yes" | "on" | "t" | "y"
    )
}

/// Refuses a parameter name that is not letters, digits and `_`.
pub(crate) fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return Err(format!("parameter name {name:?} must be letters, digits and _"));
    }
    Ok(())
}

/// A named conversion of a parameter's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Converter {
    /// `0`/`10`/`20` → `private`/`internal`/`public` (each item of an array too).
    VisibilityLevel,
    /// `true` → `public`, `false` → `private` (never internal).
    PublicFlag,
    /// A boolean negated.
    Negate,
    /// `confirm` → `skip_confirmation`: `false` becomes `true`; `true` is dropped (V4's default).
    SkipConfirmation,
}

impl Converter {
    /// The converter a rule file names.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "visibility_level" => Some(Converter::VisibilityLevel),
            "public_flag" => Some(Converter::PublicFlag),
            "negate" => Some(Converter::Negate),
            "skip_confirmation" => Some(Converter::SkipConfirmation),
            _ => None,
        }
    }
}

/// Per-item fetches that complete a V4 list (`subscribed` in issue lists, full pipelines).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemFetch {
    /// The V4 path of one item; `{field}` takes the item's field, `:param` the request's path parameter.
    pub path: String,
    /// Fields copied from the fetched item; empty means the fetched item replaces the listed one.
    pub fields: Vec<String>,
    /// The GraphQL collection that completes every item in one request (`graphql = "issues"`), if any.
    pub graphql: Option<GraphqlCollection>,
}

/// A project's GraphQL collection that can complete list items in one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GraphqlCollection {
    /// `Project.issues(iids:)`.
    Issues,
    /// `Project.mergeRequests(iids:)`.
    MergeRequests,
}

impl GraphqlCollection {
    /// The collection as a rule file names it.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "issues" => Some(GraphqlCollection::Issues),
            "merge_requests" => Some(GraphqlCollection::MergeRequests),
            _ => None,
        }
    }

    /// The name a rule file gives it.
    pub fn name(self) -> &'static str {
        match self {
            GraphqlCollection::Issues => "issues",
            GraphqlCollection::MergeRequests => "merge_requests",
        }
    }

    /// The `Project` field that lists it.
    pub fn field(self) -> &'static str {
        match self {
            GraphqlCollection::Issues => "issues",
            GraphqlCollection::MergeRequests => "mergeRequests",
        }
    }

    /// The GraphQL name of a V4 field this collection's nodes carry, for the fields a completion may ask.
    pub fn node_field(v4_field: &str) -> Option<&'static str> {
        match v4_field {
            "subscribed" => Some("subscribed"),
            "title" => Some("title"),
            "confidential" => Some("confidential"),
            "web_url" => Some("webUrl"),
            _ => None,
        }
    }
}

impl ItemFetch {
    /// The fields this fetch completes, taken from a fetched item (`null` where it has none).
    pub fn completion(&self, fetched: &serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
        self.fields
            .iter()
            .map(|field| {
                (
                    field.clone(),
                    fetched.get(field).cloned().unwrap_or(serde_json::Value::Null),
                )
            })
            .collect()
    }
}

/// One fetch whose answer is put into every item (the full V3 project inside environments).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Embed {
    /// The field set on each item.
    pub field: String,
    /// The V4 path fetched once; `:param` takes the request's path parameter.
    pub path: String,
    /// The V3 entity the fetched value is shaped as.
    pub entity: Option<String>,
}

/// One parameter conversion: `from` is replaced by `to` with its value converted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conversion {
    /// The V3 parameter.
    pub from: String,
    /// The V4 parameter.
    pub to: String,
    /// The value conversion, if any (a plain rename has none).
    pub with: Option<Converter>,
    /// Drop `from` instead when this parameter is also present.
    pub unless: Option<String>,
}

/// The named procedures: behaviours that need several backend calls with control flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Procedure {
    /// `POST /projects/:id/members`: a 409 for an existing member becomes 201 with that member; a bad access
    /// level is V3's 422.
    MemberConflict,
    /// `POST /groups/:id/members`, `PUT …/members/:user_id`: a bad access level is V3's 422.
    MemberAccessLevel,
    /// `DELETE /projects/:id/members/:user_id`: a non-member is 200 `{"message":"Access revoked","id":…}`.
    MemberRevoke,
    /// Issue lists: several labels match any of them (one V4 query per label, merged, paginated here).
    LabelsOr,
    /// `DELETE /todos`: mark the caller's pending to-dos done and answer how many.
    TodosMarkAll,
    /// `GET …/commits/:sha/builds`: the jobs of every pipeline of the commit.
    CommitBuilds,
    /// `POST …/trigger/builds`: trigger a pipeline, answer a V3 trigger request.
    TriggerRequest,
    /// Triggers addressed by token: find the trigger's id first.
    TriggerByToken,
    /// `PUT …/merge_requests/:id` with `state_event=merge`: update, then merge.
    MergeRequestUpdate,
    /// `DELETE /projects/:id/labels?name=`: find the label, delete it, answer it.
    LabelDelete,
    /// `GET /projects/all`: admins only, as in V3.
    AdminOnly,
    /// `POST /session`: password login through the backend's OAuth password grant.
    SessionLogin,
    /// `PUT /projects/:id` with a `name`: renaming was owner-only in V3 (403 for a master).
    OwnerRenames,
    /// `PUT`/`DELETE /snippets/:snippet_id`: V3 looked up the caller's own snippets only (404 for another's).
    OwnSnippet,
    /// Award emoji: a thumbsup or thumbsdown on one's own issue, merge request, snippet or note was V3's 404.
    NoSelfVote,
}

/// Every procedure with the name rule files use.
const PROCEDURES: [(Procedure, &str); 15] = [
    (Procedure::MemberConflict, "member_conflict"),
    (Procedure::MemberAccessLevel, "member_access_level"),
    (Procedure::MemberRevoke, "member_revoke"),
    (Procedure::LabelsOr, "labels_or"),
    (Procedure::TodosMarkAll, "todos_mark_all"),
    (Procedure::CommitBuilds, "commit_builds"),
    (Procedure::TriggerRequest, "trigger_request"),
    (Procedure::TriggerByToken, "trigger_by_token"),
    (Procedure::MergeRequestUpdate, "merge_request_update"),
    (Procedure::LabelDelete, "label_delete"),
    (Procedure::AdminOnly, "admin_only"),
    (Procedure::SessionLogin, "session_login"),
    (Procedure::OwnerRenames, "owner_renames"),
    (Procedure::OwnSnippet, "own_snippet"),
    (Procedure::NoSelfVote, "no_self_vote"),
];

impl Procedure {
    /// The procedure a rule file names.
    pub fn parse(name: &str) -> Option<Self> {
        PROCEDURES
            .iter()
            .find(|(_, known)| *known == name)
            .map(|(procedure, _)| *procedure)
    }

    /// The name rule files use.
    pub fn name(self) -> &'static str {
        PROCEDURES
            .iter()
            .find(|(procedure, _)| *procedure == self)
            .map_or("?", |(_, name)| name)
    }
}

/// A compiled rule.
#[derive(Debug, Clone)]
pub struct Rule {
    /// The V3 route it matches.
    pub v3: Route,
    /// The V4 route it sends.
    pub v4: Route,
    /// The release that made the change (`8.17`, `9.0`).
    pub since: String,
    /// The section of the translation reference it implements.
    pub section: String,
    /// Where the rule was written (`rules/9.0.toml:12`).
    pub origin: String,
    /// Parameter conversions, applied to query, form and JSON bodies alike.
    pub conversions: Vec<Conversion>,
    /// Query parameters added to the V4 request unless the client sent them (`:param` takes a path parameter).
    pub add_query: Vec<(String, String)>,
    /// Parameters added to the V4 body unless the client sent them.
    pub add_body: Vec<(String, serde_json::Value)>,
    /// Parameters left out when they have this value (`state=all` on milestones).
    pub drop_if: Vec<(String, String)>,
    /// The values V3 accepted for a query parameter (Grape's `values:`); any other is answered 400
    /// `{"error":"<name> does not have a valid value"}` before the backend is asked.
    pub values: Vec<(String, Vec<String>)>,
    /// Request parameters (query or body) that become V4 path segments, URL-encoded, removed from the request.
    pub path_from_request: Vec<String>,
    /// Path parameters holding a global id, and what they name; the V4 template uses `<name minus _id>_iid`.
    pub ids: Vec<(String, IdKind)>,
    /// Status remaps, V4 → V3.
    pub status: Vec<(u16, u16)>,
    /// The V3 entity shape of the response (applied to each item of a list).
    pub response: Option<String>,
    /// `(parameter, entity)`: the shape used instead of `response` when that boolean request parameter is true
    /// (`simple=true` project lists).
    pub response_when: Vec<(String, String)>,
    /// The shape used instead of `response` when the caller sent no credential: V3 presented some project reads
    /// to anonymous callers as `BasicProjectDetails` (`current_user ? ProjectWithAccess : BasicProjectDetails`).
    pub response_anonymous: Option<String>,
    /// V3's answer (status, message) when the global id names a record the backend will not show the caller
    /// (its 404 about the issue or merge request): `403 Forbidden` where V3 found the record and then refused.
    pub unseen: Option<(u16, String)>,
    /// Request parameters V3 required: without one, V3's validation answer (400 `{"error":"<name> is missing"}`)
    /// before any backend call.
    pub requires: Vec<String>,
    /// Gather every V4 page into one array.
    pub collect_all_pages: bool,
    /// The V3 route's first page number (0 for commits), when it differs from V4's 1.
    pub page_base: u8,
    /// GET the resource before the call and answer with it (DELETEs that answered 200 with a body in V3).
    pub prefetch: bool,
    /// The resource pre-fetched when it is not the rule's own V4 path (`/projects/:id` for `DELETE …/fork`).
    pub prefetch_path: Option<String>,
    /// With `prefetch_path` naming a list: the path parameter whose value is the `id` of the item to answer.
    pub prefetch_find: Option<String>,
    /// A synthesised V3 body; string values `:param` take the (decoded) request parameter.
    pub answer: Option<serde_json::Value>,
    /// Per-item fetches that complete a list.
    pub item_fetch: Option<ItemFetch>,
    /// One fetch put into every item.
    pub embed: Option<Embed>,
    /// A named procedure that runs the call instead of the plain flow.
    pub procedure: Option<Procedure>,
    /// The V4 path (`:param` takes a path parameter of the V4 route) read after a successful call and answered,
    /// under the call's own status, instead of the call's answer: for V4 actions that answer a status object
    /// (`{"status":"success"}`) where V3 answered the resource they acted on.
    pub refetch: Option<String>,
}

impl Rule {
    /// The V4 name of a translated id parameter: `issue_id` → `issue_iid`.
    pub fn iid_param(name: &str) -> String {
        match name.strip_suffix("_id") {
            Some(stem) => format!("{stem}_iid"),
            None => format!("{name}_iid"),
        }
    }

    /// Whether the request's body must be read to be rewritten.
    pub fn rewrites_params(&self) -> bool {
        !self.conversions.is_empty()
            || !self.add_body.is_empty()
            || !self.drop_if.is_empty()
            || !self.path_from_request.is_empty()
    }

    /// Whether the request body is read (to rewrite its parameters, or because a procedure or answer uses them)
    /// rather than streamed on unread.
    pub fn reads_body(&self) -> bool {
        self.rewrites_params()
            || self.procedure.is_some()
            || self.answer.is_some()
            || !self.requires.is_empty()
    }

    /// The V3 entity of the answer, given the request's query and whether the caller is anonymous: the first
    /// `response_when` whose parameter is true, else `response_anonymous` for an anonymous caller, else `response`.
    pub fn response_for(&self, query: &[(String, String)], anonymous: bool) -> Option<&str> {
        self.response_when
            .iter()
            .find(|(param, _)| query.iter().any(|(name, value)| name == param && is_true(value)))
            .map(|(_, entity)| entity.as_str())
            .or(self.response_anonymous.as_deref().filter(|_| anonymous))
            .or(self.response.as_deref())
    }

    /// Whether the answer is read and rebuilt rather than streamed back.
    pub fn rebuilds_answer(&self) -> bool {
        self.response.is_some()
            || !self.response_when.is_empty()
            || self.response_anonymous.is_some()
            || self.prefetch
            || self.answer.is_some()
            || self.item_fetch.is_some()
            || self.embed.is_some()
            || self.refetch.is_some()
    }

    /// Whether the rule changes nothing but the prefix: an explicit pass-through entry.
    pub fn is_passthrough(&self) -> bool {
        self.v3.template == self.v4.template
            && self.v3.method == self.v4.method
            && self.ids.is_empty()
            && self.add_query.is_empty()
            && self.status.is_empty()
            && !self.rewrites_params()
            && !self.rebuilds_answer()
            && !self.collect_all_pages
            && self.page_base == 1
            && self.procedure.is_none()
            && self.requires.is_empty()
    }

    /// The V3 status for a V4 status.
    pub fn v3_status(&self, v4: u16) -> u16 {
        self.status
            .iter()
            .find(|(from, _)| *from == v4)
            .map_or(v4, |(_, to)| *to)
    }

    /// One line for `svcgate rules list`.
    pub fn describe(&self) -> String {
        let v4 = if self.is_passthrough() {
            "(pass through)".to_owned()
        } else {
            format!("{:<7} {}", self.v4.method.as_str(), self.v4.template)
        };
        let procedure = self
            .procedure
            .map(|procedure| format!(" [{}]", procedure.name()))
            .unwrap_or_default();
        format!(
            "{:<7} {:<62} → {:<70} since {:<5} §{}{procedure}",
            self.v3.method.as_str(),
            self.v3.template,
            v4,
            self.since,
            self.section
        )
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn routes_parse_params_and_rest() {
        let route = Route::parse("DELETE /projects/:id/repository/branches/*branch").unwrap();
        assert_eq!(route.method, Method::DELETE);
        assert_eq!(route.params().collect::<Vec<_>>(), ["id", "branch"]);
        assert_eq!(
            route.router_path(),
            "/projects/{id}/repository/branches/{*branch}"
        );
    }

    #[test]
    fn malformed_routes_are_refused() {
        for text in [
            "/projects",
            "G(T /x",
            "GET projects",
            "GET /a//b",
            "GET /*rest/more",
            "GET /:bad-name",
        ] {
            assert!(Route::parse(text).is_err(), "{text}");
        }
    }

    #[test]
    fn id_params_get_their_iid_names() {
        assert_eq!(Rule::iid_param("issue_id"), "issue_iid");
        assert_eq!(Rule::iid_param("merge_request_id"), "merge_request_iid");
    }
}

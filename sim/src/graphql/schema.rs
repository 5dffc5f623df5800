//! The GraphQL schema svc-sim answers: the service's names (`Query.project`, `projects`, `issue`, `mergeRequest`,
//! `currentUser`, `metadata`, `queryComplexity`; `Project`, `Issue`, `MergeRequest` and their connections) and
//! their resolvers.
//! Resolvers lock the store briefly, apply V4's visibility rules (`api::issues::visible`,
//! `api::merge_requests::readable`, `Store::can_read_project`) and copy what they answer into plain nodes.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use async_graphql::{Context, Enum, Object, Result as GqlResult, Scalar, ScalarType, Value};

use super::connection::{connection, connection_complexity, resolver_complexity, Page};
use super::gid::{self, Model};
use crate::api::{issues, merge_requests};
use crate::handle::{lock, Shared};
use crate::store::{Issue, MergeRequest, Project, Store};

/// What every resolver needs: the simulator, the authenticated caller, and the query's complexity and limit.
pub struct Viewer {
    /// The simulator's state.
    pub shared: Arc<Shared>,
    /// The caller (None when anonymous).
    pub caller: Option<u64>,
    /// This caller's complexity limit.
    pub limit: usize,
    /// This query's complexity, as validation counted it.
    pub score: AtomicUsize,
}

fn viewer<'a>(ctx: &Context<'a>) -> GqlResult<&'a Viewer> {
    ctx.data::<Viewer>()
}

/// The schema type.
pub type SimSchema =
    async_graphql::Schema<Query, async_graphql::EmptyMutation, async_graphql::EmptySubscription>;

macro_rules! gid_scalar {
    ($ty:ident, $name:literal, $doc:literal) => {
        #[doc = $doc]
        #[derive(Debug, Clone)]
        pub struct $ty(pub String);

        #[Scalar(name = $name)]
        impl ScalarType for $ty {
            fn parse(value: Value) -> async_graphql::InputValueResult<Self> {
                match value {
                    Value::String(s) => Ok($ty(s)),
                    other => Err(async_graphql::InputValueError::expected_type(other)),
                }
            }

            fn to_value(&self) -> Value {
                Value::String(self.0.clone())
            }
        }
    };
}

gid_scalar!(
    IssueId,
    "IssueID",
    "A global id of an issue, `gid://svc/Issue/1000`."
);
gid_scalar!(
    MergeRequestId,
    "MergeRequestID",
    "A global id of a merge request."
);

/// `IssuableState`, `IssueState` and `MergeRequestState` share their values; `merged` is a merge request's only.
#[derive(Enum, Copy, Clone, Debug, PartialEq, Eq)]
#[graphql(rename_items = "lowercase")]
pub enum IssuableState {
    /// Open.
    Opened,
    /// Closed.
    Closed,
    /// Locked.
    Locked,
    /// Any state (filters only).
    All,
}

/// A merge request's state.
#[derive(Enum, Copy, Clone, Debug, PartialEq, Eq)]
#[graphql(rename_items = "lowercase")]
pub enum MergeRequestState {
    /// Open.
    Opened,
    /// Closed without merging.
    Closed,
    /// Locked.
    Locked,
    /// Merged.
    Merged,
    /// Any state (filters only).
    All,
}

impl IssuableState {
    fn of(state: &str) -> IssuableState {
        match state {
            "closed" => IssuableState::Closed,
            "locked" => IssuableState::Locked,
            _ => IssuableState::Opened,
        }
    }

    fn admits(self, state: &str) -> bool {
        self == IssuableState::All || self == IssuableState::of(state)
    }
}

impl MergeRequestState {
    fn of(state: &str) -> MergeRequestState {
        match state {
            "closed" => MergeRequestState::Closed,
            "locked" => MergeRequestState::Locked,
            "merged" => MergeRequestState::Merged,
            _ => MergeRequestState::Opened,
        }
    }

    fn admits(self, state: &str) -> bool {
        self == MergeRequestState::All || self == MergeRequestState::of(state)
    }
}

/// An order of a list of issues or merge requests.
trait SortKey: Copy {
    /// The sort key of an item created and updated at these times (with its id to break ties): whether
    /// descending, the time, the id.
    fn key(self, created: i64, updated: i64, id: u64) -> (bool, i64, u64);
}

macro_rules! sort_enum {
    ($ty:ident, $name:literal) => {
        /// Orders of a list, as the service names them; newest created first by default.
        #[derive(Enum, Copy, Clone, Debug, PartialEq, Eq)]
        #[graphql(name = $name, rename_items = "SCREAMING_SNAKE_CASE")]
        pub enum $ty {
            /// Newest created first.
            CreatedDesc,
            /// Oldest created first.
            CreatedAsc,
            /// Latest updated first.
            UpdatedDesc,
            /// Least recently updated first.
            UpdatedAsc,
        }

        impl SortKey for $ty {
            fn key(self, created: i64, updated: i64, id: u64) -> (bool, i64, u64) {
                match self {
                    $ty::CreatedDesc => (true, created, id),
                    $ty::CreatedAsc => (false, created, id),
                    $ty::UpdatedDesc => (true, updated, id),
                    $ty::UpdatedAsc => (false, updated, id),
                }
            }
        }
    };
}

sort_enum!(IssueSort, "IssueSort");
sort_enum!(MergeRequestSort, "MergeRequestSort");

/// Sorts by `key`'s time and id, descending when it says so.
fn sort_items<T>(items: &mut [T], key: impl Fn(&T) -> (bool, i64, u64)) {
    items.sort_by(|a, b| {
        let (desc, ta, ia) = key(a);
        let (_, tb, ib) = key(b);
        let order = (ta, ia).cmp(&(tb, ib));
        if desc {
            order.reverse()
        } else {
            order
        }
    });
}

/// The root query type.
pub struct Query;

#[Object]
impl Query {
    /// The signed-in user; null when anonymous.
    async fn current_user(&self, ctx: &Context<'_>) -> GqlResult<Option<CurrentUser>> {
        let v = viewer(ctx)?;
        let store = lock(&v.shared.store);
        Ok(v.caller
            .and_then(|uid| store.users.get(&uid))
            .map(|u| CurrentUser {
                id: async_graphql::ID(gid::format(&store.identifier_word, Model::User, u.id)),
                username: u.username.clone(),
                name: u.name.clone(),
            }))
    }

    /// The server's version (as `GET /version`).
    async fn metadata(&self) -> Metadata {
        Metadata
    }

    /// This query's complexity and the caller's limit.
    async fn query_complexity(&self, ctx: &Context<'_>) -> GqlResult<Option<QueryComplexity>> {
        let v = viewer(ctx)?;
        let int = |n: usize| i32::try_from(n).ok();
        Ok(Some(QueryComplexity {
            limit: int(v.limit),
            score: int(v.score.load(Ordering::Relaxed)),
        }))
    }

    /// A project by full path; null when absent or not readable by the caller.
    async fn project(
        &self,
        ctx: &Context<'_>,
        full_path: async_graphql::ID,
    ) -> GqlResult<Option<ProjectNode>> {
        let v = viewer(ctx)?;
        let store = lock(&v.shared.store);
        Ok(store
            .project_by_full_path(&full_path)
            .and_then(|id| store.projects.get(&id))
            .filter(|p| store.can_read_project(p, v.caller))
            .map(|p| ProjectNode::of(&store, p)))
    }

    /// Projects by global id (those the caller cannot read are left out), newest first.
    #[graphql(
        complexity = "connection_complexity(child_complexity, resolver_complexity(true, false), first, false)"
    )]
    async fn projects(
        &self,
        ctx: &Context<'_>,
        ids: Option<Vec<async_graphql::ID>>,
        first: Option<i32>,
        after: Option<String>,
    ) -> GqlResult<Option<ProjectConnection>> {
        let v = viewer(ctx)?;
        let store = lock(&v.shared.store);
        let wanted = match ids {
            None => None,
            Some(ids) => Some(
                ids.iter()
                    .map(|raw| gid::parse_argument(&store.identifier_word, raw, Model::Project))
                    .collect::<Result<Vec<Option<u64>>, String>>()?,
            ),
        };
        let found: Vec<ProjectNode> = store
            .projects
            .values()
            .rev()
            .filter(|p| wanted.as_ref().map_or(true, |ids| ids.contains(&Some(p.id))))
            .filter(|p| store.can_read_project(p, v.caller))
            .map(|p| ProjectNode::of(&store, p))
            .collect();
        Ok(Some(ProjectConnection(Page::new(
            found,
            first,
            after.as_deref(),
        )?)))
    }

    /// An issue by global id; null when absent or not visible to the caller.
    async fn issue(&self, ctx: &Context<'_>, id: IssueId) -> GqlResult<Option<IssueNode>> {
        let v = viewer(ctx)?;
        let store = lock(&v.shared.store);
        let Some(id) = gid::parse_id(&store.identifier_word, &id.0, Model::Issue)? else {
            return Ok(None);
        };
        Ok(store
            .issues
            .get(&id)
            .filter(|i| issues::visible(&store, v.caller, i))
            .map(|i| IssueNode::of(&store, i, v.caller)))
    }

    /// A merge request by global id; null when absent or not readable by the caller.
    async fn merge_request(
        &self,
        ctx: &Context<'_>,
        id: MergeRequestId,
    ) -> GqlResult<Option<MergeRequestNode>> {
        let v = viewer(ctx)?;
        let store = lock(&v.shared.store);
        let Some(id) = gid::parse_id(&store.identifier_word, &id.0, Model::MergeRequest)? else {
            return Ok(None);
        };
        Ok(store
            .merge_requests
            .get(&id)
            .filter(|m| mr_visible(&store, v.caller, m))
            .map(|m| MergeRequestNode::of(&store, m, v.caller)))
    }
}

fn mr_visible(store: &Store, caller: Option<u64>, m: &MergeRequest) -> bool {
    store
        .projects
        .get(&m.project_id)
        .is_some_and(|p| merge_requests::readable(store, caller, p))
}

/// `CurrentUser`.
#[derive(async_graphql::SimpleObject)]
pub struct CurrentUser {
    /// Global id.
    id: async_graphql::ID,
    /// Username.
    username: String,
    /// Display name.
    name: String,
}

/// `QueryComplexity`: a query's complexity and the limit it is held to (each field costs 1).
#[derive(async_graphql::SimpleObject)]
pub struct QueryComplexity {
    /// The caller's complexity limit.
    limit: Option<i32>,
    /// This query's complexity score.
    score: Option<i32>,
}

/// `Metadata`: what clients probe to learn the server's version.
pub struct Metadata;

#[Object]
impl Metadata {
    /// The version, as `GET /version` reports it.
    async fn version(&self) -> &'static str {
        crate::api::version::VERSION
    }

    /// The revision, as `GET /version` reports it.
    async fn revision(&self) -> &'static str {
        crate::api::version::REVISION
    }
}

/// A project as GraphQL answers it.
#[derive(Debug, Clone)]
pub struct ProjectNode {
    id: u64,
    gid: String,
    full_path: String,
    path: String,
    name: String,
    web_url: String,
}

impl ProjectNode {
    fn of(store: &Store, p: &Project) -> ProjectNode {
        let full_path = store.project_full_path(p);
        ProjectNode {
            id: p.id,
            gid: gid::format(&store.identifier_word, Model::Project, p.id),
            web_url: format!("{}/{full_path}", store.base_url),
            full_path,
            path: p.path.clone(),
            name: p.name.clone(),
        }
    }
}

#[Object(name = "Project")]
impl ProjectNode {
    /// Global id.
    async fn id(&self) -> async_graphql::ID {
        async_graphql::ID(self.gid.clone())
    }

    /// `namespace/path`.
    async fn full_path(&self) -> async_graphql::ID {
        async_graphql::ID(self.full_path.clone())
    }

    /// The last path segment.
    async fn path(&self) -> &str {
        &self.path
    }

    /// Display name.
    async fn name(&self) -> &str {
        &self.name
    }

    /// The project's page.
    async fn web_url(&self) -> Option<&str> {
        Some(&self.web_url)
    }

    /// The project's issues the caller can see, newest first unless `sort` says otherwise; `iids: []` answers none.
    // `sort` counts whether given or not: the service's issue lists default it (`created_desc`).
    #[graphql(
        complexity = "connection_complexity(child_complexity, resolver_complexity(true, false), first, iids.is_some() || iid.is_some())"
    )]
    #[allow(clippy::too_many_arguments)] // one per argument of the service's field
    async fn issues(
        &self,
        ctx: &Context<'_>,
        iids: Option<Vec<String>>,
        iid: Option<String>,
        state: Option<IssuableState>,
        sort: Option<IssueSort>,
        first: Option<i32>,
        after: Option<String>,
    ) -> GqlResult<Option<IssueConnection>> {
        let v = viewer(ctx)?;
        let store = lock(&v.shared.store);
        let wanted = wanted_iids(iids, iid);
        let state = state.unwrap_or(IssuableState::All);
        let found: Vec<&Issue> = store
            .issues
            .values()
            .filter(|i| i.project_id == self.id)
            .filter(|i| wanted.as_ref().map_or(true, |w| w.contains(&i.iid)))
            .filter(|i| state.admits(&i.state))
            .filter(|i| issues::visible(&store, v.caller, i))
            .collect();
        let sort = sort.unwrap_or(IssueSort::CreatedDesc);
        let node = |i: &Issue| IssueNode::of(&store, i, v.caller);
        let page = page_of(found, sort, node, first, after.as_deref())?;
        Ok(Some(IssueConnection(page)))
    }

    /// The project's merge requests, newest first unless `sort` says otherwise, when the caller may read them; `iids: []` answers none.
    // `sort` counts whether given or not: the service's merge request lists default it (`created_desc`).
    #[graphql(
        complexity = "connection_complexity(child_complexity, resolver_complexity(true, false), first, iids.is_some())"
    )]
    async fn merge_requests(
        &self,
        ctx: &Context<'_>,
        iids: Option<Vec<String>>,
        state: Option<MergeRequestState>,
        sort: Option<MergeRequestSort>,
        first: Option<i32>,
        after: Option<String>,
    ) -> GqlResult<Option<MergeRequestConnection>> {
        let v = viewer(ctx)?;
        let store = lock(&v.shared.store);
        let readable = store
            .projects
            .get(&self.id)
            .is_some_and(|p| merge_requests::readable(&store, v.caller, p));
        let wanted = wanted_iids(iids, None);
        let state = state.unwrap_or(MergeRequestState::All);
        let found: Vec<&MergeRequest> = store
            .merge_requests
            .values()
            .filter(|_| readable)
            .filter(|m| m.project_id == self.id)
            .filter(|m| wanted.as_ref().map_or(true, |w| w.contains(&m.iid)))
            .filter(|m| state.admits(&m.state))
            .collect();
        let sort = sort.unwrap_or(MergeRequestSort::CreatedDesc);
        let node = |m: &MergeRequest| MergeRequestNode::of(&store, m, v.caller);
        let page = page_of(found, sort, node, first, after.as_deref())?;
        Ok(Some(MergeRequestConnection(page)))
    }

    /// One issue by iid; null when absent or not visible.
    async fn issue(&self, ctx: &Context<'_>, iid: String) -> GqlResult<Option<IssueNode>> {
        let v = viewer(ctx)?;
        let store = lock(&v.shared.store);
        let Ok(iid) = iid.trim().parse::<u64>() else {
            return Ok(None);
        };
        Ok(store
            .issue_by_iid(self.id, iid)
            .and_then(|id| store.issues.get(&id))
            .filter(|i| issues::visible(&store, v.caller, i))
            .map(|i| IssueNode::of(&store, i, v.caller)))
    }

    /// One merge request by iid; null when absent or not readable.
    async fn merge_request(&self, ctx: &Context<'_>, iid: String) -> GqlResult<Option<MergeRequestNode>> {
        let v = viewer(ctx)?;
        let store = lock(&v.shared.store);
        let Ok(iid) = iid.trim().parse::<u64>() else {
            return Ok(None);
        };
        Ok(store
            .merge_request_by_iid(self.id, iid)
            .and_then(|id| store.merge_requests.get(&id))
            .filter(|m| mr_visible(&store, v.caller, m))
            .map(|m| MergeRequestNode::of(&store, m, v.caller)))
    }
}

/// The iids a filter names: `iids` (unparsable ones match nothing) and `iid`; None when neither is given.
fn wanted_iids(iids: Option<Vec<String>>, iid: Option<String>) -> Option<Vec<u64>> {
    if iids.is_none() && iid.is_none() {
        return None;
    }
    let parsed = iids
        .into_iter()
        .flatten()
        .chain(iid)
        .filter_map(|s| s.trim().parse::<u64>().ok());
    Some(parsed.collect())
}

/// What issues and merge requests share, as their nodes and lists read it.
trait Issuable {
    /// The model their global ids name.
    const MODEL: Model;
    /// The path segment of their pages (`issues`, `merge_requests`).
    const PAGES: &'static str;
    /// The fields both have.
    fn fields(&self) -> IssuableFields<'_>;
}

/// The fields issues and merge requests both have.
struct IssuableFields<'a> {
    id: u64,
    iid: u64,
    project_id: u64,
    title: &'a str,
    subscribers: &'a std::collections::BTreeSet<u64>,
    created_at: i64,
    updated_at: i64,
}

macro_rules! issuable {
    ($ty:ty, $model:expr, $pages:literal) => {
        impl Issuable for $ty {
            const MODEL: Model = $model;
            const PAGES: &'static str = $pages;

            fn fields(&self) -> IssuableFields<'_> {
                IssuableFields {
                    id: self.id,
                    iid: self.iid,
                    project_id: self.project_id,
                    title: &self.title,
                    subscribers: &self.subscribers,
                    created_at: self.created_at,
                    updated_at: self.updated_at,
                }
            }
        }
    };
}

issuable!(Issue, Model::Issue, "issues");
issuable!(MergeRequest, Model::MergeRequest, "merge_requests");

/// What issue and merge request nodes share, copied under the store lock.
#[derive(Debug, Clone)]
struct NodeCommon {
    gid: String,
    iid: u64,
    project_id: u64,
    project_path: String,
    title: String,
    subscribed: bool,
    web_url: String,
}

impl NodeCommon {
    /// The shared part of `record`'s node, as `caller` sees it.
    fn of<R: Issuable>(store: &Store, record: &R, caller: Option<u64>) -> NodeCommon {
        let r = record.fields();
        let project_path = store
            .projects
            .get(&r.project_id)
            .map(|p| store.project_full_path(p))
            .unwrap_or_default();
        NodeCommon {
            gid: gid::format(&store.identifier_word, R::MODEL, r.id),
            iid: r.iid,
            project_id: r.project_id,
            web_url: format!("{}/{project_path}/{}/{}", store.base_url, R::PAGES, r.iid),
            project_path,
            title: r.title.to_owned(),
            subscribed: caller.is_some_and(|uid| r.subscribers.contains(&uid)),
        }
    }
}

/// The page `first` and `after` ask of `found` in order `sort`, each made a node by `node`.
fn page_of<R: Issuable, N: Clone>(
    mut found: Vec<&R>,
    sort: impl SortKey,
    node: impl Fn(&R) -> N,
    first: Option<i32>,
    after: Option<&str>,
) -> GqlResult<Page<N>> {
    sort_items(&mut found, |r| {
        let r = r.fields();
        sort.key(r.created_at, r.updated_at, r.id)
    });
    Page::new(found.into_iter().map(node).collect(), first, after)
}

/// An issue as GraphQL answers it, copied under the store lock.
#[derive(Debug, Clone)]
pub struct IssueNode {
    common: NodeCommon,
    state: IssuableState,
    confidential: bool,
}

impl IssueNode {
    fn of(store: &Store, i: &Issue, caller: Option<u64>) -> IssueNode {
        IssueNode {
            common: NodeCommon::of(store, i, caller),
            state: IssuableState::of(&i.state),
            confidential: i.confidential,
        }
    }
}

#[Object(name = "Issue")]
impl IssueNode {
    /// Global id.
    async fn id(&self) -> async_graphql::ID {
        async_graphql::ID(self.common.gid.clone())
    }

    /// The id within its project.
    async fn iid(&self) -> async_graphql::ID {
        async_graphql::ID(self.common.iid.to_string())
    }

    /// Title.
    async fn title(&self) -> &str {
        &self.common.title
    }

    /// State.
    async fn state(&self) -> IssuableState {
        self.state
    }

    /// The project's id.
    async fn project_id(&self) -> u64 {
        self.common.project_id
    }

    /// Whether the caller is subscribed (false when anonymous).
    #[graphql(complexity = 5)]
    async fn subscribed(&self) -> bool {
        self.common.subscribed
    }

    /// Whether the issue is confidential.
    async fn confidential(&self) -> bool {
        self.confidential
    }

    /// The issue's page.
    async fn web_url(&self) -> &str {
        &self.common.web_url
    }

    /// `#iid`, or with `full` `namespace/path#iid`.
    async fn reference(&self, #[graphql(default = false)] full: bool) -> String {
        if full {
            format!("{}#{}", self.common.project_path, self.common.iid)
        } else {
            format!("#{}", self.common.iid)
        }
    }
}

/// A merge request as GraphQL answers it, copied under the store lock.
#[derive(Debug, Clone)]
pub struct MergeRequestNode {
    common: NodeCommon,
    state: MergeRequestState,
}

impl MergeRequestNode {
    fn of(store: &Store, m: &MergeRequest, caller: Option<u64>) -> MergeRequestNode {
        MergeRequestNode {
            common: NodeCommon::of(store, m, caller),
            state: MergeRequestState::of(&m.state),
        }
    }
}

#[Object(name = "MergeRequest")]
impl MergeRequestNode {
    /// Global id.
    async fn id(&self) -> async_graphql::ID {
        async_graphql::ID(self.common.gid.clone())
    }

    /// The id within its project.
    async fn iid(&self) -> String {
        self.common.iid.to_string()
    }

    /// Title.
    async fn title(&self) -> &str {
        &self.common.title
    }

    /// State.
    async fn state(&self) -> MergeRequestState {
        self.state
    }

    /// The target project's id.
    async fn project_id(&self) -> u64 {
        self.common.project_id
    }

    /// The target project.
    async fn project(&self, ctx: &Context<'_>) -> GqlResult<ProjectNode> {
        let v = viewer(ctx)?;
        let store = lock(&v.shared.store);
        store
            .projects
            .get(&self.common.project_id)
            .map(|p| ProjectNode::of(&store, p))
            .ok_or_else(|| "The project is gone".into())
    }

    /// Whether the caller is subscribed (false when anonymous).
    #[graphql(complexity = 5)]
    async fn subscribed(&self) -> bool {
        self.common.subscribed
    }

    /// The merge request's page.
    async fn web_url(&self) -> Option<&str> {
        Some(&self.common.web_url)
    }

    /// `!iid`, or with `full` `namespace/path!iid`.
    async fn reference(&self, #[graphql(default = false)] full: bool) -> String {
        if full {
            format!("{}!{}", self.common.project_path, self.common.iid)
        } else {
            format!("!{}", self.common.iid)
        }
    }
}

connection!(
    IssueConnection,
    "IssueConnection",
    IssueEdge,
    "IssueEdge",
    IssueNode
);
connection!(
    MergeRequestConnection,
    "MergeRequestConnection",
    MergeRequestEdge,
    "MergeRequestEdge",
    MergeRequestNode
);
connection!(
    ProjectConnection,
    "ProjectConnection",
    ProjectEdge,
    "ProjectEdge",
    ProjectNode
);

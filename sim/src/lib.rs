//! svc-sim: an in-memory simulator of the svc V4 HTTP API, the backend that the svcgate gateway is tested and
//! demoed against.
//!
//! Request path through the crate: `server` (sockets, body limit, recording) → `dispatch` (parameters, routing,
//! authentication) → `api::*` handlers (one module per resource, using `context::Ctx`) → `store` (the data) and
//! `entities` (V4 JSON shapes) → `reply`/`error` back to `server`.

mod api;
mod archive;
mod auth;
mod bench;
mod context;
mod dispatch;
mod entities;
mod error;
mod graphql;
mod handle;
mod multipart;
mod pagination;
mod params;
mod reply;
mod router;
mod seed;
mod server;
mod sha;
mod store;
mod time;

pub use bench::{TOKEN as BENCH_TOKEN, USERNAME as BENCH_USERNAME};
pub use handle::{RecordedRequest, SimHandle, SimStats};
pub use seed::{DemoSeed, USERNAME as DEMO_USERNAME};
pub use server::{spawn, spawn_with};
pub use store::oauth::Application as OAuthApplication;

/// The brand word used in route and field names unless [`SimOptions::identifier_word`] says otherwise.
pub const DEFAULT_IDENTIFIER_WORD: &str = "svc";

/// How to start a simulator with [`spawn_with`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimOptions {
    /// Token that authenticates as the root administrator (user 1); default `root-token`.
    pub root_token: String,
    /// The brand word in route and field names that carry it, e.g. `svc` in `/templates/svc_ci_ymls`; default
    /// [`DEFAULT_IDENTIFIER_WORD`].
    pub identifier_word: String,
    /// An OAuth application registered from the start (more can be added with
    /// [`SimHandle::register_oauth_application`]).
    pub oauth_application: Option<OAuthApplication>,
    /// Lifetime of the OAuth access tokens the provider issues, in seconds; default 7200, as the service's.
    pub oauth_token_lifetime_secs: u64,
    /// The only user the OAuth authorize page offers; when `None` it asks which user to sign in as.
    pub oauth_sign_in_as: Option<String>,
    /// The user the OAuth authorize page chooses at first (the others stay offered); when `None`, the first.
    pub oauth_preselect: Option<String>,
    /// The address people and clients reach the server at, named in `web_url`, `http_url_to_repo` and the other
    /// addresses of its answers; when `None`, the listening address (`http://127.0.0.1:PORT`).
    pub external_url: Option<String>,
    /// Whether `/api/graphql` answers GraphQL (default true); when false it answers V4's 404, as a server
    /// without GraphQL does.
    pub graphql: bool,
    /// The GraphQL complexity limit for every caller, instead of the service's own (the default, `None`: 200 for
    /// anonymous callers, 250 for signed-in ones, 300 for administrators). Costlier queries are refused with the
    /// service's message.
    pub graphql_max_complexity: Option<usize>,
    /// How long every API request (V4 and GraphQL) waits before it is answered, without holding the store, so
    /// that concurrent requests overlap: a backend that takes this long per request. Default zero.
    pub delay: std::time::Duration,
    /// Whether the request log keeps every request or only counts them (see [`RecordRequests`]).
    pub record_requests: RecordRequests,
    /// Insert the benchmark data before listening: user `bench` (token [`BENCH_TOKEN`]) and projects
    /// `bench/i1k`, `bench/i100k` and `bench/mr`.
    pub bench_seed: bool,
}

/// What the simulator keeps of the requests it receives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RecordRequests {
    /// Every request, for [`SimHandle::requests`] (the default).
    #[default]
    All,
    /// Only the counts of [`SimHandle::stats`] and `GET /-/sim/stats`: no growth under load.
    Count,
}

impl Default for SimOptions {
    fn default() -> SimOptions {
        SimOptions {
            root_token: "root-token".into(),
            identifier_word: DEFAULT_IDENTIFIER_WORD.into(),
            oauth_application: None,
            oauth_token_lifetime_secs: 7200,
            oauth_sign_in_as: None,
            oauth_preselect: None,
            external_url: None,
            graphql: true,
            graphql_max_complexity: None,
            delay: std::time::Duration::ZERO,
            record_requests: RecordRequests::All,
            bench_seed: false,
        }
    }
}

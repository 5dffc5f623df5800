//! The public handle to a running simulator: its address, the request log, test helpers that create users and
//! demo data directly in the store, and shutdown.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::watch;

use crate::dispatch::RawRequest;
use crate::router::Router;
use crate::seed::{seed_demo, DemoSeed};
use crate::store::users::NewUser;
use crate::store::{Store, TokenKind};

/// One request as the simulator received it.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    /// Method, e.g. `GET`.
    pub method: String,
    /// Raw path exactly as received, percent-encoding preserved.
    pub path: String,
    /// Raw query string, if any.
    pub query: Option<String>,
    /// Headers with lowercase names.
    pub headers: Vec<(String, String)>,
    /// Body bytes.
    pub body: Vec<u8>,
}

/// How many requests the simulator has received (`GET /-/sim/stats`, [`SimHandle::stats`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct SimStats {
    /// Every request received, the stats route's own excepted.
    pub requests: u64,
    /// Those to `/api/graphql`.
    pub graphql: u64,
}

/// State shared by the server task and every handle.
pub(crate) struct Shared {
    /// The simulated service state.
    pub(crate) store: Mutex<Store>,
    /// Every request received, in order.
    pub(crate) requests: Mutex<Vec<RecordedRequest>>,
    /// The compiled route table.
    pub(crate) router: Router,
    /// The GraphQL schema; `None` when GraphQL is off.
    pub(crate) graphql: Option<crate::graphql::schema::SimSchema>,
    /// The complexity limit every GraphQL caller gets instead of the service's per-kind ones, when set.
    pub(crate) graphql_max_complexity: Option<usize>,
    /// What each API request waits before it is answered.
    pub(crate) delay: Duration,
    /// Whether `requests` keeps the requests or they are only counted.
    pub(crate) record: crate::RecordRequests,
    /// Requests received.
    pub(crate) count: AtomicU64,
    /// Requests to `/api/graphql` received.
    pub(crate) graphql_count: AtomicU64,
}

impl Shared {
    /// A fresh store with only root, and the compiled routes.
    pub(crate) fn new(base_url: &str, options: &crate::SimOptions) -> Shared {
        let mut store = Store::new(base_url, &options.root_token);
        store.identifier_word.clone_from(&options.identifier_word);
        store.oauth.token_lifetime_secs = options.oauth_token_lifetime_secs;
        store.oauth.sign_in_as.clone_from(&options.oauth_sign_in_as);
        store.oauth.preselect.clone_from(&options.oauth_preselect);
        if let Some(app) = &options.oauth_application {
            store
                .oauth
                .applications
                .insert(app.client_id.clone(), app.clone());
        }
        Shared {
            store: Mutex::new(store),
            requests: Mutex::new(Vec::new()),
            router: Router::new(crate::api::all()),
            graphql: options.graphql.then(crate::graphql::build),
            graphql_max_complexity: options.graphql_max_complexity,
            delay: options.delay,
            record: options.record_requests,
            count: AtomicU64::new(0),
            graphql_count: AtomicU64::new(0),
        }
    }

    /// The request counts.
    pub(crate) fn stats(&self) -> SimStats {
        SimStats {
            requests: self.count.load(Ordering::Relaxed),
            graphql: self.graphql_count.load(Ordering::Relaxed),
        }
    }

    /// Counts a request and, unless only counting, appends it to the log.
    pub(crate) fn record(&self, req: &RawRequest) {
        self.count.fetch_add(1, Ordering::Relaxed);
        if req.path == crate::graphql::PATH {
            self.graphql_count.fetch_add(1, Ordering::Relaxed);
        }
        if self.record == crate::RecordRequests::Count {
            return;
        }
        lock(&self.requests).push(RecordedRequest {
            method: req.method.to_string(),
            path: req.path.clone(),
            query: req.query.clone(),
            headers: req.headers.clone(),
            body: req.body.clone(),
        });
    }
}

/// Locks a mutex, recovering the data if a previous holder panicked.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A running simulator.
#[derive(Clone)]
pub struct SimHandle {
    addr: SocketAddr,
    shared: Arc<Shared>,
    shutdown: Arc<watch::Sender<bool>>,
}

impl SimHandle {
    /// Wraps the server state and its shutdown switch.
    pub(crate) fn new(addr: SocketAddr, shared: Arc<Shared>, shutdown: watch::Sender<bool>) -> SimHandle {
        SimHandle {
            addr,
            shared,
            shutdown: Arc::new(shutdown),
        }
    }

    /// The listening address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared.requests).clone()
    }

    /// How many requests were received so far (all of them, and those to `/api/graphql`).
    pub fn stats(&self) -> SimStats {
        self.shared.stats()
    }

    /// Inserts the benchmark data (see [`crate::SimOptions::bench_seed`]) unless it is there.
    pub fn seed_bench(&self) {
        crate::bench::seed_bench(&mut lock(&self.shared.store));
    }

    /// Forgets the recorded requests.
    pub fn clear_requests(&self) {
        lock(&self.shared.requests).clear();
    }

    /// Creates (or reuses) a user and returns its id and a new personal access token.
    pub fn create_user(&self, username: &str, admin: bool) -> (u64, String) {
        let mut store = lock(&self.shared.store);
        let id = match store.user_by_username(username) {
            Some(u) => u.id,
            None => store.insert_user(NewUser {
                username: username.to_string(),
                name: username.to_string(),
                email: format!("{username}@example.com"),
                password: Some("password".into()),
                is_admin: admin,
            }),
        };
        let mut scopes = vec!["api".to_string(), "read_user".to_string()];
        if admin {
            scopes.push("sudo".into());
        }
        let token = store
            .insert_token(id, "test", scopes, TokenKind::Personal, None)
            .token
            .clone();
        (id, token)
    }

    /// Registers (or replaces, by client id) an OAuth application with the provider.
    pub fn register_oauth_application(&self, application: crate::OAuthApplication) {
        lock(&self.shared.store)
            .oauth
            .applications
            .insert(application.client_id.clone(), application);
    }

    /// Creates the demo user, group, project, commits, issues and note (reusing them when present).
    pub fn seed_demo(&self) -> DemoSeed {
        seed_demo(&mut lock(&self.shared.store))
    }

    /// Stops accepting connections and ends the server task; open connections finish their current request.
    pub fn shutdown(&self) {
        self.shutdown.send_replace(true);
    }
}

impl std::fmt::Debug for SimHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimHandle").field("addr", &self.addr).finish()
    }
}

//! Wiring for `svcgate serve`: loads the rules, opens the store, starts the simulator in dev mode, serves.

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context;
use tokio::net::TcpListener;

use crate::alerts::outbox::Outbox;
use crate::config::Config;
use crate::rewrite::table::RuleTable;
use crate::server::{self, Gateway};
use crate::store::{PostgresStore, SqliteStore, Store};

/// The token of the simulator's admin user in dev mode.
pub const DEV_ROOT_TOKEN: &str = "svcgate-dev-root-token";

/// A running gateway: its address, and in dev mode the simulator and demo data behind it.
pub struct Running {
    /// The gateway's listening address.
    pub address: SocketAddr,
    /// The simulator, in dev mode.
    pub simulator: Option<svc_sim::SimHandle>,
    /// The demo data, in dev mode.
    pub demo: Option<svc_sim::DemoSeed>,
    /// Keeps a temporary data directory alive as long as the gateway runs.
    pub temporary_data_dir: Option<tempfile::TempDir>,
    /// The gateway.
    pub gateway: Arc<Gateway>,
    /// In dev mode: the demo alert integration's path and key.
    pub demo_alerts: Option<(String, String)>,
    listener: TcpListener,
    outbox_task: tokio::task::JoinHandle<()>,
    usage_task: tokio::task::JoinHandle<()>,
}

/// Prepares everything `serve` needs, binding the listener, without serving yet.
pub async fn prepare(config: &Config) -> anyhow::Result<Running> {
    crate::util::identifier::set(&config.rewrite.identifier_word).context("identifier_word")?;
    let table = RuleTable::load(
        config.rewrite.rules_dir.as_deref(),
        &config.rewrite.identifier_word,
    )
    .context("rules")?;
    // The gateway's listener first: in dev mode the simulator names the gateway's address in its answers.
    let listener = TcpListener::bind(config.server.listen)
        .await
        .with_context(|| format!("listening on {}", config.server.listen))?;
    let address = listener.local_addr()?;
    let scheme = if config.server.tls.is_some() {
        "https"
    } else {
        "http"
    };
    let public_url = config
        .server
        .public_url
        .clone()
        .unwrap_or_else(|| format!("{scheme}://{address}"));
    let (backend, simulator, demo) = match &config.backend.url {
        Some(url) => (url.clone(), None, None),
        None => {
            let listener = TcpListener::bind("127.0.0.1:0")
                .await
                .context("binding the dev simulator")?;
            // The simulator serves the same identifier word as the gateway, as the server it stands for would. Its
            // answers name the gateway's address (`web_url`, `http_url_to_repo`, …), as a real server's name its
            // external URL: the simulator's own port is an internal detail no client should be sent to. Its OAuth
            // page chooses the demo user at first.
            let options = svc_sim::SimOptions {
                root_token: DEV_ROOT_TOKEN.to_owned(),
                identifier_word: config.rewrite.identifier_word.clone(),
                oauth_preselect: Some(svc_sim::DEMO_USERNAME.to_owned()),
                external_url: Some(public_url.trim_end_matches('/').to_owned()),
                ..svc_sim::SimOptions::default()
            };
            let simulator = svc_sim::spawn_with(listener, options)
                .await
                .context("starting the dev simulator")?;
            let demo = simulator.seed_demo();
            let url: http::Uri = simulator.url().parse().context("simulator address")?;
            (url, Some(simulator), Some(demo))
        }
    };
    let (data_dir, temporary_data_dir) = match &config.store.data_dir {
        Some(dir) => (dir.clone(), None),
        None => {
            let dir = tempfile::Builder::new()
                .prefix("svcgate-dev-")
                .tempdir()
                .context("creating a temporary data directory")?;
            (dir.path().to_path_buf(), Some(dir))
        }
    };
    let dev_config;
    let config = match &simulator {
        Some(simulator) => {
            dev_config = dev_setup(config, simulator, &public_url)?;
            &dev_config
        }
        None => config,
    };
    let store = open_store(config, &data_dir).await?;
    let gateway = Gateway::build(config, &backend, store, table, &data_dir).await?;
    let outbox = Outbox {
        store: Arc::clone(&gateway.store),
        upstream: Arc::clone(&gateway.upstream),
        public_url: public_url.clone(),
        settings: config.outbox.clone(),
        metrics: Arc::clone(&gateway.metrics),
    };
    let outbox_task = tokio::spawn(outbox.run());
    let usage_task = tokio::spawn(Arc::clone(&gateway.usage).run(config.usage.flush_interval));
    let demo_alerts = match &demo {
        Some(demo) => Some(
            gateway
                .alerts
                .ensure_demo(demo.project_id, &demo.project_path)
                .await
                .context("creating the demo alert integration")?,
        ),
        None => None,
    };
    Ok(Running {
        address,
        simulator,
        demo,
        temporary_data_dir,
        gateway,
        demo_alerts,
        listener,
        outbox_task,
        usage_task,
    })
}

/// What dev mode sets up so that every feature can be tried against the simulator: svcgate is registered as an
/// OAuth application there (its redirect URI at the gateway's address), so that signing in through the server works
/// out of the box, unless OAuth is configured; and incidents are opened with the simulator's admin token, unless a
/// `service_token` is configured.
fn dev_setup(config: &Config, simulator: &svc_sim::SimHandle, public_url: &str) -> anyhow::Result<Config> {
    let mut config = config.clone();
    if config.pages.oauth.is_none() {
        let settings = crate::pages::oauth::OAuthSettings {
            client_id: "svcgate-dev".to_owned(),
            client_secret: crate::util::secret::random_hex(24).context("making the dev OAuth secret")?,
            scopes: "read_api".to_owned(),
        };
        simulator.register_oauth_application(svc_sim::OAuthApplication {
            name: "svcgate".to_owned(),
            client_id: settings.client_id.clone(),
            secret: settings.client_secret.clone(),
            redirect_uri: crate::pages::oauth::OAuthClient::redirect_uri(public_url),
            scopes: vec!["api".to_owned(), "read_api".to_owned(), "read_user".to_owned()],
        });
        config.pages.oauth = Some(settings);
    }
    if config.outbox.service_token.is_none() {
        config.outbox.service_token = Some(DEV_ROOT_TOKEN.to_owned());
        config.alerts.service_token_set = true;
    }
    Ok(config)
}

impl Running {
    /// Serves until SIGTERM or SIGINT, then drains within the grace period.
    pub async fn serve(self, config: &Config) -> anyhow::Result<()> {
        self.serve_until(config, server::shutdown_signal()).await
    }

    /// Serves until `shutdown` completes, then drains: readiness fails at once, the listener closes after
    /// `shutdown_delay`, in-flight requests have `shutdown_grace` to finish.
    pub async fn serve_until(
        self,
        config: &Config,
        shutdown: impl std::future::Future<Output = ()>,
    ) -> anyhow::Result<()> {
        let tls = match &config.server.tls {
            Some(tls) => Some(server::tls_acceptor(tls).context("TLS")?),
            None => None,
        };
        let usage = Arc::clone(&self.gateway.usage);
        server::serve(
            self.listener,
            tls,
            self.gateway,
            shutdown,
            server::Shutdown {
                delay: config.server.shutdown_delay,
                grace: config.server.shutdown_grace,
            },
            config.server.connection_limits,
        )
        .await;
        self.outbox_task.abort();
        self.usage_task.abort();
        // Counts gathered since the last batch are written before the gateway exits.
        usage.flush().await;
        if let Some(simulator) = &self.simulator {
            simulator.shutdown();
        }
        tracing::info!("stopped");
        Ok(())
    }

    /// The lines `serve --dev` prints so a newcomer can try the gateway at once.
    pub fn dev_banner(&self, config: &Config) -> Option<String> {
        let demo = self.demo.as_ref()?;
        let scheme = if config.server.tls.is_some() {
            "https"
        } else {
            "http"
        };
        let listening = format!("{scheme}://{}", self.address);
        // Where it listens and where people reach it differ behind a proxy: both are said, each for what it is.
        let (base, where_line) = match &config.server.public_url {
            Some(public) => {
                let public = public.trim_end_matches('/').to_owned();
                let line = format!("svcgate is listening on {listening}, reached at {public}");
                (public, line)
            }
            None => (listening.clone(), format!("svcgate is listening on {listening}")),
        };
        let backend = self
            .simulator
            .as_ref()
            .map(svc_sim::SimHandle::url)
            .unwrap_or_default();
        Some(format!(
            "{where_line}\n\
             backend: the built-in svc simulator at {backend} (admin token {DEV_ROOT_TOKEN})\n\
             demo user: {user}, token: {token}\n\
             demo project: {project} (id {project_id})\n\
             \n\
             Pages (alerts, integrations): {base}/-/svcgate/\n\
             Sign in there with \"Sign in with svc\" ({user} is chosen on the simulator's page), or by pasting the demo \
             user's token ({token}) as the personal access token.\n\
             \n\
             Try a V3 call:\n  curl -H 'PRIVATE-TOKEN: {token}' {base}/api/v3/projects\n\
             {alerts}",
            alerts = match &self.demo_alerts {
                Some((path, key)) => format!(
                    "\nDemo alert integration: {base}{path}, key: {key}\n\
                     Send an alert:\n  curl -H 'Authorization: Bearer {key}' -H 'Content-Type: application/json' \
                     -d '{{\"title\": \"Disk full\", \"severity\": \"high\"}}' {base}{path}\n\
                     Incidents: tick \"Create an incident for each new alert\" under Settings › Operations of the demo \
                     project; svcgate opens them on the simulator (with its admin token unless service_token is set).\n"
                ),
                None => String::new(),
            },
            user = demo.username,
            token = demo.token,
            project = demo.project_path,
            project_id = demo.project_id,
        ))
    }
}

/// Resolves the global ids a `translate` request names on `backend`, with `token`: `(param, iid)` pairs.
pub async fn resolve_ids(
    backend: &str,
    token: &str,
    needed: &[crate::rewrite::explain::IdNeeded],
) -> anyhow::Result<Vec<(String, u64)>> {
    use crate::backend::context::RequestContext;
    use crate::backend::upstream::ClientInfo;
    use crate::rewrite::backend::Caller;
    use crate::rewrite::ids::IdIndex;

    let config = Config::from_raw(crate::config::RawConfig {
        backend: Some(backend.to_owned()),
        dev: Some(true),
        ..crate::config::RawConfig::default()
    })?;
    let url = config.backend.url.clone().context("backend")?;
    let metrics = crate::telemetry::Metrics::new();
    let upstream = crate::backend::upstream::Upstream::new(&config.backend, &url, Arc::clone(&metrics))?;
    // A throw-away store: translate must leave no state behind.
    let scratch = tempfile::tempdir()?;
    let store = Arc::new(SqliteStore::open(scratch.path())?);
    let graphql = Arc::new(crate::rewrite::graphql::GraphqlState::new(
        &crate::util::identifier::names().word,
        config.rewrite.graphql_retry_after,
        Arc::clone(&metrics),
    ));
    let index = IdIndex::new(store, metrics, graphql, 1000, config.rewrite.id_lookup_max_pages);
    let context = RequestContext::new(
        crate::telemetry::RequestId::fixed("translate"),
        ClientInfo::new(std::net::IpAddr::from([127, 0, 0, 1]), "http"),
    );
    let mut headers = http::HeaderMap::new();
    headers.insert(
        "private-token",
        http::HeaderValue::from_str(token).context("token")?,
    );
    let caller = Caller {
        upstream: &upstream,
        headers,
        context: &context,
        max_body: config.rewrite.max_body,
        max_calls: config.rewrite.max_backend_calls,
    };
    let mut resolved = Vec::new();
    for id in needed {
        let record = index
            .resolve(id.kind, &id.id, &id.project, &caller)
            .await
            .map_err(|error| anyhow::anyhow!("{} {}: {}", id.param, id.id, error.client_message()))?;
        resolved.push((id.param.clone(), record.iid));
    }
    Ok(resolved)
}

/// The store `config` names: PostgreSQL shared by replicas (`database_url`), else SQLite in `data_dir`. A key
/// (`secret_key`, or SQLite's `secret.key` file) that is not the one the store was set up with is refused here,
/// before svcgate serves anything.
async fn open_store(config: &Config, data_dir: &std::path::Path) -> anyhow::Result<Arc<dyn Store>> {
    let Some(database) = &config.store.database else {
        let store = SqliteStore::open(data_dir)
            .with_context(|| format!("opening the store in {}", data_dir.display()))?
            .with_min_free_bytes(config.store.min_free_bytes);
        let key = crate::util::secret::load_key(config.alerts.secret_key, data_dir)
            .context("loading the secret key")?;
        store
            .check_key(&crate::util::secret::key_fingerprint(&key))
            .await
            .context("checking the secret key against the store")?;
        return Ok(Arc::new(store));
    };
    let store = PostgresStore::connect(database)
        .await
        .context("connecting to PostgreSQL (database_url)")?;
    if let Some(key) = &config.alerts.secret_key {
        store
            .check_key(&crate::util::secret::key_fingerprint(key))
            .await
            .context("checking secret_key against the database")?;
    }
    Ok(Arc::new(store))
}

/// `svcgate v3 report`: the V3 migration report of `client` (an id or a user; every client without it) in
/// `format`, read from the store `config` names (SQLite in `data_dir`, or PostgreSQL) without a running gateway,
/// against the rule table the gateway runs (`rules_dir`). An unknown client is a `migration::ReportError` inside
/// the error.
pub async fn v3_report(
    config: &Config,
    client: Option<&str>,
    format: crate::rewrite::migration::Format,
) -> anyhow::Result<String> {
    use crate::rewrite::migration;
    crate::util::identifier::set(&config.rewrite.identifier_word).context("identifier_word")?;
    let table = RuleTable::load(
        config.rewrite.rules_dir.as_deref(),
        &config.rewrite.identifier_word,
    )
    .context("rules")?;
    // Read only: no migration and no writer, so a cron job on a newer binary leaves a running gateway's store as
    // it is (a schema older than this build is refused with a message).
    let rows = match (&config.store.database, &config.store.data_dir) {
        (Some(database), _) => crate::store::read_usage::postgres(database)
            .await
            .context("reading the V3 usage counts from PostgreSQL (database_url)")?,
        (None, Some(data_dir)) => crate::store::read_usage::sqlite(data_dir)
            .with_context(|| format!("reading the V3 usage counts in {}", data_dir.display()))?,
        (None, None) => anyhow::bail!("give the store: --data-dir (SQLite) or --database-url (PostgreSQL)"),
    };
    let clients = migration::report(
        &rows,
        &table,
        time::OffsetDateTime::now_utc(),
        config.usage.client_retired_after,
    );
    let chosen = migration::select(clients, client)?;
    Ok(migration::render(&chosen, format)?)
}

//! Configuration: one validated [`Config`] built from three layers.
//!
//! Precedence, lowest first: the TOML file (`--config FILE`), `SVCGATE_*` environment variables, command-line
//! flags. Each layer is parsed into the same all-`Option` [`RawConfig`]; the layers are merged and then validated
//! once, so that every error names the option it is about in one line. Parsing takes strings and maps, never the
//! process environment directly, so tests touch neither disk nor the environment.
//!
//! This folder owns the options and nothing of what they configure: the `options!` table below (each option's
//! name, kind, default and description), reading the layers, and validating them into [`Config`], which is made
//! of the components' own settings types: [`ServerSettings`] (here, as `server` sits above `config`),
//! [`BackendConfig`], [`StoreSettings`], [`RewriteSettings`], [`UsageSettings`], [`AlertConfig`],
//! [`OutboxSettings`], [`PageSettings`] and [`LogSettings`]; only `dev` and `worker_threads`, the wiring's own, are
//! fields of [`Config`] itself.
//!
//! Adding an option takes three steps:
//!
//! 1. its line in `options!`: name, kind, default and description (it is then read from the file and from its
//!    `SVCGATE_*` variable; a command-line flag is added in `main.rs` only for the few options that have one);
//! 2. its field in its component's settings type, set from `options.<name>` where [`Config::from_raw`] builds that
//!    type (each is built there once, in full, so the compiler points at the line to write);
//! 3. its row in `docs/configuration.md`, showing its default (`tests/operations/cli.rs` fails until it has one).
//!
//! Files: `macros.rs` (what `options!` expands to), `kind.rs` (how each kind of option is written and checked),
//! `tests.rs`. May use every layer below it (see `lib.rs`); no component uses `config` except the wiring above
//! it ([`crate::server`], [`crate::app`]), which takes the whole [`Config`].

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;

use crate::alerts::outbox::OutboxSettings;
use crate::alerts::settings::{AlertConfig, Edition};
use crate::backend::upstream::BackendConfig;
use crate::http::connections::{Limits, ServerTls};
use crate::pages::{PageSettings, SignInLimits};
use crate::rewrite::shape::ShapeMode;
use crate::rewrite::usage::UsageSettings;
use crate::rewrite::RewriteSettings;
use crate::store::StoreSettings;
use crate::telemetry::{LogFormat, LogSettings};

/// A configuration error: always one line that names the option or file at fault.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The TOML file could not be read.
    #[error("config file {path}: {source}")]
    Read {
        /// The file's path.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The TOML file is malformed or names an unknown option.
    #[error("config file {path}: {message}")]
    File {
        /// The file's path.
        path: String,
        /// The parser's message, made one line.
        message: String,
    },
    /// A key of the TOML file names no option.
    #[error("unknown option `{key}` in {path} line {line}{}", removed_or_closest(key, "`", *suggestion, "`"))]
    UnknownOption {
        /// The file's path.
        path: String,
        /// The key as written.
        key: String,
        /// The line it is on, from 1.
        line: usize,
        /// The option closest to it, if one is close.
        suggestion: Option<&'static str>,
    },
    /// An `SVCGATE_*` environment variable names no option.
    #[error("environment variable {name} names no svcgate option{}", removed_or_closest(&name.trim_start_matches("SVCGATE_").to_ascii_lowercase(), "SVCGATE_", suggestion.map(str::to_ascii_uppercase).as_deref(), ""))]
    UnknownEnv {
        /// The variable's name.
        name: String,
        /// The option closest to it, if one is close.
        suggestion: Option<&'static str>,
    },
    /// An option has a value that cannot be used.
    #[error("option `{option}`: {message}")]
    Invalid {
        /// The option's name as written in the TOML file.
        option: &'static str,
        /// What is wrong with its value.
        message: String,
    },
}

#[macro_use]
mod macros;

options! {
    /// Address to listen on.
    listen: Address = "127.0.0.1:8080",
    /// Base URL of the V4 backend (required unless `dev`).
    backend: HttpUrl,
    /// Directory of the embedded store (required unless `dev` or `database_url`).
    data_dir: Path,
    /// `postgres://…`: keep state in PostgreSQL, shared by every replica, instead of the embedded store.
    database_url: Text,
    /// Connections to PostgreSQL each replica keeps at most.
    database_pool_size: Count = 16,
    /// Transactions of incoming alerts each replica keeps in flight on PostgreSQL (a fingerprint's alerts stay in one).
    database_alert_writers: Count = 1,
    /// PEM CA certificates trusted for PostgreSQL's TLS certificate (besides the system's).
    database_ca_bundle: Path,
    /// Longest a new PostgreSQL connection may take: TCP, TLS and the start-up exchange.
    database_connect_timeout: NonzeroDuration = "5s",
    /// Longest one PostgreSQL operation (a read, a write, a batch of alerts) may take, its wait for a connection
    /// included; one that overruns is abandoned and its connection dropped.
    database_timeout: NonzeroDuration = "5s",
    /// Idle time before TCP keepalive probes start on PostgreSQL connections (then every half of it, three at most).
    database_tcp_keepalive: NonzeroDuration = "10s",
    /// Longest data sent to PostgreSQL may stay unacknowledged before the kernel drops the connection.
    database_tcp_user_timeout: NonzeroDuration = "15s",
    /// Longest a readiness check waits for the store's answer before it answers 503.
    ready_timeout: NonzeroDuration = "3s",
    /// Free space readiness asks of the SQLite data directory's file system (below it, alerts may not fit).
    ready_min_free_bytes: Count = 64 << 20,
    /// Public base URL of the gateway, used in addresses it shows.
    public_url: BaseUrl,
    /// Addresses and CIDR ranges of the proxies in front of svcgate whose `X-Forwarded-Proto` is believed.
    trusted_proxies: ProxyList,
    /// Start the in-process simulator as the backend.
    dev: Flag = false,
    /// PEM certificate chain for serving TLS.
    tls_cert: Path,
    /// PEM private key for serving TLS.
    tls_key: Path,
    /// Extra PEM CA bundle trusted for the backend.
    backend_ca_bundle: Path,
    /// PEM client certificate presented to the backend.
    backend_client_cert: Path,
    /// PEM private key of the backend client certificate.
    backend_client_key: Path,
    /// Time allowed to connect to the backend.
    backend_connect_timeout: NonzeroDuration = "5s",
    /// Time allowed for the backend to answer with a response head.
    backend_timeout: NonzeroDuration = "60s",
    /// How long idle backend connections are kept in the pool.
    backend_pool_idle_timeout: NonzeroDuration = "90s",
    /// Send the client's `Host` to the backend instead of the backend's own authority.
    preserve_host: Flag = false,
    /// How long an upgraded connection (WebSocket) may carry no bytes before it is closed.
    upgrade_idle_timeout: NonzeroDuration = "10m",
    /// Grace period for in-flight requests at shutdown (0s: none, they are cut at once).
    shutdown_grace: Duration = "30s",
    /// Pause between SIGTERM and closing the listener, readiness answering 503, so a load balancer stops sending
    /// (0s: none).
    shutdown_delay: Duration = "0s",
    /// Most client connections open at once (default: from the open-file limit, which it must stay below).
    max_connections: Count,
    /// Time a new connection has to send its first complete request head.
    client_header_timeout: NonzeroDuration = "30s",
    /// Time a connection may stay open with no request in progress.
    client_idle_timeout: NonzeroDuration = "60s",
    /// Time a write to a client may make no progress.
    client_write_timeout: NonzeroDuration = "60s",
    /// Time a body read whole may take to arrive.
    body_read_timeout: NonzeroDuration = "30s",
    /// `text` or `json` log lines.
    log_format: LogFormat = "text",
    /// Log filter in `tracing` syntax.
    log_level: Text = "info",
    /// Directory of rule files replacing the built-in table.
    rules_dir: Path,
    /// The server's brand word in route and field names.
    identifier_word: Word = crate::util::identifier::DEFAULT_WORD,
    /// `strict` or `tolerant` V3 response shapes.
    response_shapes: ShapeMode = "strict",
    /// Largest whole collection gathered from V4 pages.
    max_collected_items: Count = 10_000,
    /// Cap on the backend calls one client request may cause. The default is a full V3 page (100 items) each
    /// completed by one call, plus the list itself and a few lookups: a lower cap would refuse ordinary lists.
    max_backend_calls_per_request: Count32 = 110,
    /// Largest V4 response body buffered for reshaping.
    max_rewrite_body_bytes: Count = 64 << 20,
    /// Bytes of V3 request bodies and V4 answers held in memory at once, all requests together.
    rewrite_memory_budget_bytes: Count = 256 << 20,
    /// Entries of the in-memory id ↔ iid cache.
    id_cache_entries: Count = 100_000,
    /// Pages the id ↔ iid lookup may read from the backend on a miss.
    id_lookup_max_pages: Count32 = 50,
    /// Per-item backend fetches a list may run at once.
    item_fetch_concurrency: Count = 8,
    /// How long svcgate uses per-item requests and bisection, without asking again, once the backend refused
    /// GraphQL (no `/api/graphql`, a query it cannot run).
    graphql_retry_after: NonzeroDuration = "10m",
    /// Token the gateway uses for its own backend calls.
    service_token: Text,
    /// How long a replica owns an incident call it claimed before another may take it over.
    outbox_lease: NonzeroDuration = "3m",
    /// How long finished incident calls are kept before they are removed.
    outbox_keep_done: NonzeroDuration = "30d",
    /// `free` or `premium` alert features.
    edition: Edition = "premium",
    /// 64 hex digits: the key that encrypts integration tokens (else a key file in the data directory).
    secret_key: Key,
    /// A file holding `secret_key` (a systemd credential, a mounted Secret); not both.
    secret_key_file: Path,
    /// Largest alert payload.
    alert_max_body_bytes: Count = 1 << 20,
    /// Largest alert payload read before its key is checked, for formats whose key travels in the body.
    alert_key_in_body_max_bytes: Count = 64 << 10,
    /// Alert payloads read at once before their key is checked (the key is in the body), all integrations together.
    alert_key_in_body_max_concurrent: Count = 16,
    /// Bytes of alert bodies held in memory at once, all requests together.
    alert_memory_budget_bytes: Count = 64 << 20,
    /// Alert requests read at once, all integrations together.
    alert_max_concurrent: Count = 256,
    /// Bytes of alert bodies the requests of one integration hold in memory at once.
    alert_integration_budget_bytes: Count = 16 << 20,
    /// Time an alert body may bring no byte before it is refused (408) and its bytes given back.
    alert_body_stall_timeout: NonzeroDuration = "2s",
    /// Deepest JSON nesting of an alert payload.
    alert_max_depth: Count = 64,
    /// Alerts per second one integration may send (0: no limit).
    alert_rate_limit: Rate = 0,
    /// Alerts one integration may send at once above its rate.
    alert_rate_burst: Count32 = 50,
    /// Directory of alert format files adding to (or replacing, by name) the built-in ones.
    alert_formats_dir: Path,
    /// How long a caller's rights, as the backend reported them, are reused (0s: never).
    access_cache_ttl: Duration = "60s",
    /// Most callers whose access answers are kept (least recently used go first).
    access_cache_entries: Count = 10_000,
    /// How long a page session lasts after sign-in.
    session_ttl: NonzeroDuration = "8h",
    /// Application id of svcgate registered on the svc server: people sign in to the pages through it (OAuth 2).
    oauth_client_id: Text,
    /// Secret of that application (required with `oauth_client_id`).
    oauth_client_secret: Text,
    /// Scopes svcgate asks for at sign-in, space-separated (the pages only read the API).
    oauth_scopes: Text = "read_api",
    /// How long before a signed-in person's OAuth token expires the pages refresh it (0s: once it has expired).
    oauth_refresh_margin: Duration = "60s",
    /// After a refresh that failed for a passing reason (the server unreachable, slow, 429, 5xx), how long a replica
    /// waits before it tries that session's refresh again, keeping the current token meanwhile.
    oauth_refresh_retry: NonzeroDuration = "30s",
    /// Most sign-ins through the svc server that may be pending (started, not yet finished or expired) at once;
    /// past it, starting one answers 503 until some finish or expire.
    oauth_pending_sign_ins: Count = 10_000,
    /// Threads of the async runtime (default: one per core).
    worker_threads: Count,
    /// How often V3 usage counts are written to the store.
    usage_flush_interval: NonzeroDuration = "10s",
    /// Clients kept per V3 route in the usage counts (the least recent are folded into `others`).
    usage_max_clients_per_route: Count = 50,
    /// How long a V3 client (a user and its `User-Agent`'s product) may go without a call before the migration
    /// report marks it retired.
    v3_client_retired_after: NonzeroDuration = "30d",
    /// Longest a metrics scrape waits for the store's counts (open alerts, outbox backlog) before leaving them out.
    metrics_store_timeout: NonzeroDuration = "2s",
}

impl RawConfig {
    /// Parses one TOML document; `origin` names it in errors. A key that names no option is reported with its
    /// line and the closest option, rather than the parser's list of every option.
    pub fn from_toml(text: &str, origin: &str) -> Result<Self, ConfigError> {
        let file_error = |error: toml::de::Error| ConfigError::File {
            path: origin.to_owned(),
            message: one_line(&error.to_string()),
        };
        let keys: BTreeMap<toml::Spanned<String>, serde::de::IgnoredAny> =
            toml::from_str(text).map_err(file_error)?;
        if let Some(key) = keys
            .keys()
            .find(|key| !OPTIONS.iter().any(|info| info.name == key.get_ref()))
        {
            let before = text.get(..key.span().start).unwrap_or(text);
            return Err(ConfigError::UnknownOption {
                path: origin.to_owned(),
                key: key.get_ref().clone(),
                line: before.matches('\n').count() + 1,
                suggestion: closest_option(key.get_ref()),
            });
        }
        toml::from_str(text).map_err(file_error)
    }

    /// Reads and parses a TOML file.
    pub fn from_file(path: &std::path::Path) -> Result<Self, ConfigError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: shown.clone(),
            source,
        })?;
        Self::from_toml(&text, &shown)
    }

    /// Builds a layer from `SVCGATE_*` variables; any other variable is ignored, an unknown `SVCGATE_*` is an error.
    pub fn from_env<I: IntoIterator<Item = (String, String)>>(vars: I) -> Result<Self, ConfigError> {
        let mut table = toml::Table::new();
        for (name, value) in vars {
            let Some(option) = name.strip_prefix("SVCGATE_") else {
                continue;
            };
            let key = option.to_ascii_lowercase();
            let Some(info) = OPTIONS.iter().find(|info| info.name == key) else {
                return Err(ConfigError::UnknownEnv {
                    suggestion: closest_option(&key),
                    name,
                });
            };
            let value = match info.written {
                Written::Text => toml::Value::String(value),
                Written::Flag => {
                    toml::Value::Boolean(parse_flag(&value).ok_or_else(|| ConfigError::Invalid {
                        option: info.name,
                        message: format!("{name}={value:?} is not true or false"),
                    })?)
                }
                Written::Number => toml::Value::Integer(value.parse().map_err(|_| ConfigError::Invalid {
                    option: info.name,
                    message: format!("{name}={value:?} is not a whole number"),
                })?),
            };
            table.insert(key, value);
        }
        RawConfig::deserialize(table).map_err(|error| ConfigError::File {
            path: "environment".to_owned(),
            message: one_line(&error.to_string()),
        })
    }
}

/// How an option's value is written in TOML and in its environment variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Written {
    Text,
    Flag,
    Number,
}

/// One option as declared: its name, how its value is written, its description and its default.
#[derive(Debug, Clone, Copy)]
pub struct OptionInfo {
    name: &'static str,
    written: Written,
    doc: &'static str,
    default: fn() -> Option<String>,
}

impl OptionInfo {
    /// The option's name, as written in the TOML file (upper case after `SVCGATE_` in the environment).
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// How its value is written: `text`, `boolean` or `number`.
    pub fn kind(&self) -> &'static str {
        match self.written {
            Written::Text => "text",
            Written::Flag => "boolean",
            Written::Number => "number",
        }
    }

    /// Its one-line description (the doc comment of its declaration).
    pub fn doc(&self) -> String {
        one_line(self.doc)
    }

    /// Its default as the README writes it (`30s`, `10000`, `false`), or `None` if it has none or a computed one.
    pub fn default(&self) -> Option<String> {
        (self.default)()
    }
}

/// Every option, in declaration order.
pub fn options() -> &'static [OptionInfo] {
    OPTIONS
}

mod kind;

/// How alike a mistyped name and an option must be for the option to be suggested: the Jaro similarity clap uses
/// for mistyped flags, with clap's threshold.
const SUGGESTION_SIMILARITY: f64 = 0.7;

/// The option whose name is most like `written`, if one is alike enough to be what was meant.
fn closest_option(written: &str) -> Option<&'static str> {
    OPTIONS
        .iter()
        .map(|info| (strsim::jaro(written, info.name), info.name))
        .filter(|(similarity, _)| *similarity > SUGGESTION_SIMILARITY)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, name)| name)
}

/// Options of earlier releases that are gone, each with what replaced it.
const REMOVED_OPTIONS: &[(&str, &str)] = &[
    (
        "alert_max_concurrent_per_integration",
        "each integration's senders are bounded by alert_integration_budget_bytes and half of alert_max_concurrent",
    ),
    (
        "item_fetch_cache_ttl",
        "V3 lists complete `subscribed` in one GraphQL request per list (more only for lists spanning many projects) \
         and always show current values; nothing is cached",
    ),
];

/// For an option of an earlier release, `; it was removed: <what replaced it>`; else [`did_you_mean`].
fn removed_or_closest(written: &str, before: &str, suggestion: Option<&str>, after: &str) -> String {
    match REMOVED_OPTIONS.iter().find(|(name, _)| *name == written) {
        Some((_, instead)) => format!("; it was removed ({instead}): drop it"),
        None => did_you_mean(before, suggestion, after),
    }
}

/// `; did you mean <before><name><after>?` when there is a suggestion, else nothing.
fn did_you_mean(before: &str, suggestion: Option<&str>, after: &str) -> String {
    suggestion.map_or_else(String::new, |name| {
        format!("; did you mean {before}{name}{after}?")
    })
}

fn parse_flag(value: &str) -> Option<bool> {
    match value.to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" | "" => Some(false),
        _ => None,
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The validated configuration the gateway runs with: each component's settings, and the wiring's own options.
#[derive(Debug, Clone)]
pub struct Config {
    /// The front door's settings: where it listens, TLS, client connections, shutdown, readiness and metrics.
    pub server: ServerSettings,
    /// Backend connection settings; `url` is `None` only with `dev`, where the simulator provides it.
    pub backend: BackendConfig,
    /// Which store to open: SQLite in a directory, or PostgreSQL shared by replicas.
    pub store: StoreSettings,
    /// V3 translation settings, the rule table's included.
    pub rewrite: RewriteSettings,
    /// V3 usage counts.
    pub usage: UsageSettings,
    /// Alert settings.
    pub alerts: AlertConfig,
    /// The incident outbox.
    pub outbox: OutboxSettings,
    /// The browser pages: sessions and signing in.
    pub pages: PageSettings,
    /// Logging.
    pub log: LogSettings,
    /// Run with the in-process simulator (the wiring's own option).
    pub dev: bool,
    /// Runtime threads; `None` means one per core (the wiring's own option).
    pub worker_threads: Option<usize>,
}

/// The settings of the front door ([`crate::server`]), which sits above `config` and so has its type here.
#[derive(Debug, Clone)]
pub struct ServerSettings {
    /// Listening address.
    pub listen: SocketAddr,
    /// TLS for clients, if configured.
    pub tls: Option<ServerTls>,
    /// Public base URL, if configured.
    pub public_url: Option<String>,
    /// Peers whose `X-Forwarded-Proto` says how the client reached them (empty: nobody's).
    pub trusted_proxies: Vec<ipnet::IpNet>,
    /// Bounds on client connections: how many, and how long one may send nothing.
    pub connection_limits: Limits,
    /// Grace period for in-flight requests at shutdown.
    pub shutdown_grace: Duration,
    /// Pause between the shutdown signal and closing the listener, readiness failing meanwhile.
    pub shutdown_delay: Duration,
    /// Longest a readiness check waits for the store.
    pub ready_timeout: Duration,
    /// Longest a metrics scrape waits for the store's counts.
    pub metrics_store_timeout: Duration,
}

impl Config {
    /// Validates a merged layer, applying defaults.
    pub fn from_raw(raw: RawConfig) -> Result<Self, ConfigError> {
        let options = Checked::from_raw(raw)?;
        relations(&options)?;
        let dev = options.dev;
        let url = match options.backend {
            Some(url) => Some(url),
            None if dev => None,
            None => {
                return Err(invalid(
                    "backend",
                    "is required (the V4 server's base URL), or use --dev",
                ))
            }
        };
        let secret_key = secret_key(options.secret_key, options.secret_key_file.as_deref())?;
        let database = match options.database_url {
            Some(url) if url.starts_with("postgres://") || url.starts_with("postgresql://") => {
                if secret_key.is_none() {
                    return Err(invalid(
                        "secret_key",
                        "is required with database_url: every replica must seal integration keys with the same key",
                    ));
                }
                Some(crate::store::PostgresOptions {
                    url,
                    // Each writer keeps a connection; at least two more serve reads, the outbox and the heartbeat.
                    pool_size: options
                        .database_pool_size
                        .max(options.database_alert_writers.saturating_add(2)),
                    ca_bundle: options.database_ca_bundle,
                    alert_writers: options.database_alert_writers.max(1),
                    limits: crate::store::DatabaseLimits {
                        connect_timeout: options.database_connect_timeout,
                        operation_timeout: options.database_timeout,
                        keepalive: options.database_tcp_keepalive,
                        tcp_user_timeout: options.database_tcp_user_timeout,
                    },
                })
            }
            Some(_) => {
                return Err(invalid(
                    "database_url",
                    "must be a postgres:// or postgresql:// URL",
                ))
            }
            None => None,
        };
        if options.data_dir.is_none() && database.is_none() && !dev {
            return Err(invalid(
                "data_dir",
                "is required (where the store lives), or set database_url, or use --dev",
            ));
        }
        let tls = match (options.tls_cert, options.tls_key) {
            (Some(cert), Some(key)) => Some(ServerTls { cert, key }),
            (None, None) => None,
            (Some(_), None) => return Err(invalid("tls_key", "is required when tls_cert is set")),
            (None, Some(_)) => return Err(invalid("tls_cert", "is required when tls_key is set")),
        };
        let client_identity = match (options.backend_client_cert, options.backend_client_key) {
            (Some(cert), Some(key)) => Some((cert, key)),
            (None, None) => None,
            (Some(_), None) => {
                return Err(invalid(
                    "backend_client_key",
                    "is required when backend_client_cert is set",
                ))
            }
            (None, Some(_)) => {
                return Err(invalid(
                    "backend_client_cert",
                    "is required when backend_client_key is set",
                ))
            }
        };
        let oauth = match (options.oauth_client_id, options.oauth_client_secret) {
            (Some(client_id), Some(client_secret)) => Some(crate::pages::oauth::OAuthSettings {
                client_id,
                client_secret,
                scopes: options.oauth_scopes,
            }),
            (None, None) => None,
            (Some(_), None) => {
                return Err(invalid(
                    "oauth_client_secret",
                    "is required when oauth_client_id is set",
                ))
            }
            (None, Some(_)) => {
                return Err(invalid(
                    "oauth_client_id",
                    "is required when oauth_client_secret is set",
                ))
            }
        };
        let connection_limits = Limits {
            max_connections: max_connections(options.max_connections)?,
            header_timeout: options.client_header_timeout,
            idle_timeout: options.client_idle_timeout,
            write_timeout: options.client_write_timeout,
        };
        Ok(Config {
            server: ServerSettings {
                listen: options.listen,
                tls,
                public_url: options.public_url.clone(),
                trusted_proxies: options.trusted_proxies.unwrap_or_default(),
                connection_limits,
                shutdown_grace: options.shutdown_grace,
                shutdown_delay: options.shutdown_delay,
                ready_timeout: options.ready_timeout,
                metrics_store_timeout: options.metrics_store_timeout,
            },
            backend: BackendConfig {
                url,
                ca_bundle: options.backend_ca_bundle,
                client_identity,
                connect_timeout: options.backend_connect_timeout,
                timeout: options.backend_timeout,
                pool_idle_timeout: options.backend_pool_idle_timeout,
                preserve_host: options.preserve_host,
                memory_budget_bytes: options.rewrite_memory_budget_bytes,
                upgrade_idle_timeout: options.upgrade_idle_timeout,
            },
            store: StoreSettings {
                data_dir: options.data_dir,
                database,
                min_free_bytes: options.ready_min_free_bytes as u64,
            },
            rewrite: RewriteSettings {
                rules_dir: options.rules_dir,
                identifier_word: options.identifier_word,
                shapes: options.response_shapes,
                max_body: options.max_rewrite_body_bytes,
                max_collected: options.max_collected_items,
                item_fetch_concurrency: options.item_fetch_concurrency,
                graphql_retry_after: options.graphql_retry_after,
                id_cache_entries: options.id_cache_entries,
                id_lookup_max_pages: options.id_lookup_max_pages,
                public_url: options.public_url,
                max_backend_calls: options.max_backend_calls_per_request,
                body_read_timeout: options.body_read_timeout,
            },
            usage: UsageSettings {
                flush_interval: options.usage_flush_interval,
                max_clients_per_route: options.usage_max_clients_per_route,
                client_retired_after: options.v3_client_retired_after,
                store_timeout: options.database_timeout,
            },
            alerts: AlertConfig {
                service_token_set: options.service_token.is_some(),
                edition: options.edition,
                secret_key,
                max_body_bytes: options.alert_max_body_bytes as u64,
                key_in_body_max_bytes: options.alert_key_in_body_max_bytes as u64,
                key_in_body_max_concurrent: options.alert_key_in_body_max_concurrent,
                max_depth: options.alert_max_depth,
                rate_limit: options.alert_rate_limit,
                rate_burst: options.alert_rate_burst,
                formats_dir: options.alert_formats_dir,
                access_cache_ttl: options.access_cache_ttl,
                access_cache_entries: options.access_cache_entries,
                memory_budget_bytes: options.alert_memory_budget_bytes,
                max_concurrent: options.alert_max_concurrent,
                integration_budget_bytes: options.alert_integration_budget_bytes,
                body_stall_timeout: options.alert_body_stall_timeout,
                body_read_timeout: options.body_read_timeout,
            },
            outbox: OutboxSettings {
                service_token: options.service_token,
                lease: options.outbox_lease,
                keep_done: options.outbox_keep_done,
            },
            pages: PageSettings {
                session_ttl: options.session_ttl,
                oauth,
                sign_in: SignInLimits {
                    refresh_margin: options.oauth_refresh_margin,
                    refresh_retry: options.oauth_refresh_retry,
                    // A refresh is one call to the backend: a response head and a body, each within the backend
                    // timeout. The whole call is cut there, and the claim on it (derived in session.rs) outlasts it.
                    refresh_timeout: options.backend_timeout.saturating_mul(2),
                    pending_sign_ins: u64::try_from(options.oauth_pending_sign_ins).unwrap_or(u64::MAX),
                },
            },
            log: LogSettings {
                format: options.log_format,
                level: options.log_level,
            },
            dev,
            worker_threads: options.worker_threads,
        })
    }

    /// Builds the configuration from a file (optional), environment variables and flags, in that precedence.
    pub fn load(
        file: Option<&std::path::Path>,
        env: impl IntoIterator<Item = (String, String)>,
        flags: RawConfig,
    ) -> Result<Self, ConfigError> {
        let from_file = match file {
            Some(path) => RawConfig::from_file(path)?,
            None => RawConfig::default(),
        };
        let merged = from_file.overlay(RawConfig::from_env(env)?).overlay(flags);
        Config::from_raw(merged)
    }
}

/// Checks the relations between options that the README states, each option valid on its own already. The error
/// names the option whose README row states the relation, with both values.
fn relations(options: &Checked) -> Result<(), ConfigError> {
    let shown = |duration: Duration| humantime::format_duration(duration).to_string();
    if options.outbox_lease <= options.backend_timeout {
        return Err(invalid(
            "outbox_lease",
            &format!(
                "{} must be longer than backend_timeout ({}): another replica would take over a call still waiting \
                 for the backend",
                shown(options.outbox_lease),
                shown(options.backend_timeout)
            ),
        ));
    }
    if options.outbox_keep_done < options.outbox_lease {
        return Err(invalid(
            "outbox_keep_done",
            &format!(
                "{} must be at least outbox_lease ({}): a call is kept while another replica may still be making it",
                shown(options.outbox_keep_done),
                shown(options.outbox_lease)
            ),
        ));
    }
    if options.alert_max_body_bytes > options.alert_memory_budget_bytes {
        return Err(invalid(
            "alert_max_body_bytes",
            &format!(
                "{} must be at most alert_memory_budget_bytes ({}): a payload larger than the whole budget could \
                 never be read",
                options.alert_max_body_bytes, options.alert_memory_budget_bytes
            ),
        ));
    }
    if options.alert_integration_budget_bytes < options.alert_max_body_bytes {
        return Err(invalid(
            "alert_integration_budget_bytes",
            &format!(
                "{} must be at least alert_max_body_bytes ({}): a payload of the largest size must fit one \
                 integration's share",
                options.alert_integration_budget_bytes, options.alert_max_body_bytes
            ),
        ));
    }
    if options.max_rewrite_body_bytes > options.rewrite_memory_budget_bytes {
        return Err(invalid(
            "max_rewrite_body_bytes",
            &format!(
                "{} must be at most rewrite_memory_budget_bytes ({}): a body larger than the whole budget could \
                 never be read",
                options.max_rewrite_body_bytes, options.rewrite_memory_budget_bytes
            ),
        ));
    }
    Ok(())
}

fn invalid(option: &'static str, message: &str) -> ConfigError {
    ConfigError::Invalid {
        option,
        message: message.to_owned(),
    }
}

/// The key from `secret_key` or read from `secret_key_file` (surrounding white space ignored), never both: two
/// sources that could disagree would leave it unclear which key seals the tokens.
fn secret_key(
    value: Option<[u8; 32]>,
    file: Option<&std::path::Path>,
) -> Result<Option<[u8; 32]>, ConfigError> {
    let Some(path) = file else {
        return Ok(value);
    };
    if value.is_some() {
        return Err(invalid(
            "secret_key_file",
            "set either secret_key or secret_key_file, not both",
        ));
    }
    let text = std::fs::read_to_string(path)
        .map_err(|error| invalid("secret_key_file", &format!("{}: {error}", path.display())))?;
    <kind::Key as kind::Kind>::check("secret_key_file", text)
        .map(Some)
        .map_err(|_| {
            invalid(
                "secret_key_file",
                &format!("{}: must hold 64 hexadecimal digits (32 bytes)", path.display()),
            )
        })
}

/// The client connection cap: the declared one, which must stay below the process's open-file limit (shared with
/// backend connections and the store), or one derived from that limit.
fn max_connections(declared: Option<usize>) -> Result<usize, ConfigError> {
    let Some(cap) = declared else {
        return Ok(crate::http::connections::default_max_connections());
    };
    if let Some(limit) = crate::http::connections::open_file_limit() {
        if cap as u64 >= limit {
            return Err(invalid(
                "max_connections",
                &format!("{cap} must be below this process's open-file limit ({limit}); raise `ulimit -n` or lower it"),
            ));
        }
    }
    Ok(cap)
}

/// The options as `name → kind` for the README's reference table and its test.
pub fn option_names() -> BTreeMap<&'static str, &'static str> {
    OPTIONS.iter().map(|info| (info.name(), info.kind())).collect()
}

#[cfg(test)]
mod tests;

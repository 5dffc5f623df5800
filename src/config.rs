//! Configuration: one validated [`Config`] built from three layers.
//!
//! Precedence, lowest first: the TOML file (`--config FILE`), `SVCGATE_*` environment variables, command-line
//! flags. Each layer is parsed into the same all-`Option` [`RawConfig`]; the layers are merged and then validated
//! once, so that every error names the option it is about in one line. Parsing takes strings and maps, never the
//! process environment directly, so tests touch neither disk nor the environment.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;

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
    /// An `SVCGATE_*` environment variable names no option.
    #[error("environment variable {0} names no svcgate option")]
    UnknownEnv(String),
    /// An option has a value that cannot be used.
    #[error("option `{option}`: {message}")]
    Invalid {
        /// The option's name as written in the TOML file.
        option: &'static str,
        /// What is wrong with its value.
        message: String,
    },
}

/// Every option, all optional: one layer of configuration before defaults are applied.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawConfig {
    /// Address to listen on.
    pub listen: Option<String>,
    /// Base URL of the V4 backend.
    pub backend: Option<String>,
    /// Directory of the embedded store.
    pub data_dir: Option<PathBuf>,
    /// Public base URL of the gateway, used in addresses it shows.
    pub public_url: Option<String>,
    /// Start the in-process simulator as the backend.
    pub dev: Option<bool>,
    /// PEM certificate chain for serving TLS.
    pub tls_cert: Option<PathBuf>,
    /// PEM private key for serving TLS.
    pub tls_key: Option<PathBuf>,
    /// Extra PEM CA bundle trusted for the backend.
    pub backend_ca_bundle: Option<PathBuf>,
    /// PEM client certificate presented to the backend.
    pub backend_client_cert: Option<PathBuf>,
    /// PEM private key of the backend client certificate.
    pub backend_client_key: Option<PathBuf>,
    /// Time allowed to connect to the backend.
    pub backend_connect_timeout: Option<String>,
    /// Time allowed for the backend to answer with a response head.
    pub backend_timeout: Option<String>,
    /// How long idle backend connections are kept in the pool.
    pub backend_pool_idle_timeout: Option<String>,
    /// Send the client's `Host` to the backend instead of the backend's own authority.
    pub preserve_host: Option<bool>,
    /// How long an upgraded connection (WebSocket) may carry no bytes before it is closed.
    pub upgrade_idle_timeout: Option<String>,
    /// Grace period for in-flight requests at shutdown.
    pub shutdown_grace: Option<String>,
    /// Most client connections open at once.
    pub max_connections: Option<u64>,
    /// Time a new connection has to send its first complete request head.
    pub client_header_timeout: Option<String>,
    /// Time a connection may stay open with no request in progress.
    pub client_idle_timeout: Option<String>,
    /// Time a write to a client may make no progress.
    pub client_write_timeout: Option<String>,
    /// Time a body read whole may take to arrive.
    pub body_read_timeout: Option<String>,
    /// `text` or `json` log lines.
    pub log_format: Option<String>,
    /// Log filter in `tracing` syntax.
    pub log_level: Option<String>,
    /// Directory of rule files replacing the built-in table.
    pub rules_dir: Option<PathBuf>,
    /// The server's brand word in route and field names.
    pub identifier_word: Option<String>,
    /// `strict` or `tolerant` V3 response shapes.
    pub response_shapes: Option<String>,
    /// Largest whole collection gathered from V4 pages.
    pub max_collected_items: Option<u64>,
    /// Cap on the backend calls one client request may cause.
    pub max_backend_calls_per_request: Option<u64>,
    /// Largest V4 response body buffered for reshaping.
    pub max_rewrite_body_bytes: Option<u64>,
    /// Bytes of V3 request bodies and V4 answers held in memory at once, all requests together.
    pub rewrite_memory_budget_bytes: Option<u64>,
    /// Entries of the in-memory id ↔ iid cache.
    pub id_cache_entries: Option<u64>,
    /// Pages the id ↔ iid lookup may read from the backend on a miss.
    pub id_lookup_max_pages: Option<u64>,
    /// Per-item backend fetches a list may run at once.
    pub item_fetch_concurrency: Option<u64>,
    /// How long per-item completions (`subscribed` in lists) are reused.
    pub item_fetch_cache_ttl: Option<String>,
    /// Token the gateway uses for its own backend calls.
    pub service_token: Option<String>,
    /// `free` or `premium` alert features.
    pub edition: Option<String>,
    /// 64 hex digits: the key that encrypts integration tokens (else a key file in the data directory).
    pub secret_key: Option<String>,
    /// Largest alert payload.
    pub alert_max_body_bytes: Option<u64>,
    /// Bytes of alert bodies held in memory at once, all requests together.
    pub alert_memory_budget_bytes: Option<u64>,
    /// Alert requests read at once, all integrations together.
    pub alert_max_concurrent: Option<u64>,
    /// Alert requests read at once for one integration.
    pub alert_max_concurrent_per_integration: Option<u64>,
    /// Deepest JSON nesting of an alert payload.
    pub alert_max_depth: Option<u64>,
    /// Alerts per second one integration may send (0: no limit).
    pub alert_rate_limit: Option<u64>,
    /// Alerts one integration may send at once above its rate.
    pub alert_rate_burst: Option<u64>,
    /// How long a caller's rights, as the backend reported them, are reused.
    pub access_cache_ttl: Option<String>,
    /// Most callers whose access answers are kept (least recently used go first).
    pub access_cache_entries: Option<u64>,
    /// How long a page session lasts after sign-in.
    pub session_ttl: Option<String>,
    /// Threads of the async runtime (default: one per core).
    pub worker_threads: Option<u64>,
    /// How often V3 usage counts are written to the store.
    pub usage_flush_interval: Option<String>,
    /// Clients kept per V3 route in the usage counts (the least recent are folded into `others`).
    pub usage_max_clients_per_route: Option<u64>,
}

macro_rules! merge_fields {
    ($low:expr, $high:expr, $($field:ident),* $(,)?) => {
        RawConfig { $($field: $high.$field.or($low.$field),)* }
    };
}

impl RawConfig {
    /// Parses one TOML document; `origin` names it in errors.
    pub fn from_toml(text: &str, origin: &str) -> Result<Self, ConfigError> {
        toml::from_str(text).map_err(|error| ConfigError::File {
            path: origin.to_owned(),
            message: one_line(&error.to_string()),
        })
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
            let Some(kind) = option_kind(&key) else {
                return Err(ConfigError::UnknownEnv(name));
            };
            let value = match kind {
                Kind::Text => toml::Value::String(value),
                Kind::Flag => {
                    toml::Value::Boolean(parse_flag(&value).ok_or_else(|| ConfigError::Invalid {
                        option: option_name(&key),
                        message: format!("{name}={value:?} is not true or false"),
                    })?)
                }
                Kind::Number => toml::Value::Integer(value.parse().map_err(|_| ConfigError::Invalid {
                    option: option_name(&key),
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

    /// Returns this layer with every option that `higher` sets taken from `higher`.
    pub fn overlay(self, higher: RawConfig) -> RawConfig {
        merge_fields!(
            self,
            higher,
            listen,
            backend,
            data_dir,
            public_url,
            dev,
            tls_cert,
            tls_key,
            backend_ca_bundle,
            backend_client_cert,
            backend_client_key,
            backend_connect_timeout,
            backend_timeout,
            backend_pool_idle_timeout,
            preserve_host,
            upgrade_idle_timeout,
            shutdown_grace,
            max_connections,
            client_header_timeout,
            client_idle_timeout,
            client_write_timeout,
            body_read_timeout,
            log_format,
            log_level,
            rules_dir,
            identifier_word,
            response_shapes,
            max_collected_items,
            max_backend_calls_per_request,
            max_rewrite_body_bytes,
            rewrite_memory_budget_bytes,
            id_cache_entries,
            id_lookup_max_pages,
            item_fetch_concurrency,
            item_fetch_cache_ttl,
            service_token,
            edition,
            secret_key,
            alert_max_body_bytes,
            alert_memory_budget_bytes,
            alert_max_concurrent,
            alert_max_concurrent_per_integration,
            alert_max_depth,
            alert_rate_limit,
            alert_rate_burst,
            access_cache_ttl,
            access_cache_entries,
            session_ttl,
            worker_threads,
            usage_flush_interval,
            usage_max_clients_per_route,
        )
    }
}

enum Kind {
    Text,
    Flag,
    Number,
}

/// The options and the kind of value each takes; the one list the environment layer checks names against.
const OPTIONS: &[(&str, Kind)] = &[
    ("listen", Kind::Text),
    ("backend", Kind::Text),
    ("data_dir", Kind::Text),
    ("public_url", Kind::Text),
    ("dev", Kind::Flag),
    ("tls_cert", Kind::Text),
    ("tls_key", Kind::Text),
    ("backend_ca_bundle", Kind::Text),
    ("backend_client_cert", Kind::Text),
    ("backend_client_key", Kind::Text),
    ("backend_connect_timeout", Kind::Text),
    ("backend_timeout", Kind::Text),
    ("backend_pool_idle_timeout", Kind::Text),
    ("preserve_host", Kind::Flag),
    ("upgrade_idle_timeout", Kind::Text),
    ("shutdown_grace", Kind::Text),
    ("max_connections", Kind::Number),
    ("client_header_timeout", Kind::Text),
    ("client_idle_timeout", Kind::Text),
    ("client_write_timeout", Kind::Text),
    ("body_read_timeout", Kind::Text),
    ("log_format", Kind::Text),
    ("log_level", Kind::Text),
    ("rules_dir", Kind::Text),
    ("identifier_word", Kind::Text),
    ("response_shapes", Kind::Text),
    ("max_collected_items", Kind::Number),
    ("max_backend_calls_per_request", Kind::Number),
    ("max_rewrite_body_bytes", Kind::Number),
    ("rewrite_memory_budget_bytes", Kind::Number),
    ("id_cache_entries", Kind::Number),
    ("id_lookup_max_pages", Kind::Number),
    ("item_fetch_concurrency", Kind::Number),
    ("item_fetch_cache_ttl", Kind::Text),
    ("service_token", Kind::Text),
    ("edition", Kind::Text),
    ("secret_key", Kind::Text),
    ("alert_max_body_bytes", Kind::Number),
    ("alert_memory_budget_bytes", Kind::Number),
    ("alert_max_concurrent", Kind::Number),
    ("alert_max_concurrent_per_integration", Kind::Number),
    ("alert_max_depth", Kind::Number),
    ("alert_rate_limit", Kind::Number),
    ("alert_rate_burst", Kind::Number),
    ("access_cache_ttl", Kind::Text),
    ("access_cache_entries", Kind::Number),
    ("session_ttl", Kind::Text),
    ("worker_threads", Kind::Number),
    ("usage_flush_interval", Kind::Text),
    ("usage_max_clients_per_route", Kind::Number),
];

fn option_kind(key: &str) -> Option<&'static Kind> {
    OPTIONS
        .iter()
        .find(|(name, _)| *name == key)
        .map(|(_, kind)| kind)
}

fn option_name(key: &str) -> &'static str {
    OPTIONS
        .iter()
        .find(|(name, _)| *name == key)
        .map_or("?", |(name, _)| name)
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

/// How V3 responses are shaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShapeMode {
    /// Exactly the V3 fields, in V3 names.
    Strict,
    /// The V3 fields added, the V4 fields kept.
    Tolerant,
}

/// Log line format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    /// Human-readable key=value lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// TLS material for serving clients.
#[derive(Debug, Clone)]
pub struct ServerTls {
    /// PEM certificate chain.
    pub cert: PathBuf,
    /// PEM private key.
    pub key: PathBuf,
}

/// How the gateway reaches its backend.
#[derive(Debug, Clone)]
pub struct BackendConfig {
    /// Base URL (`http://` or `https://`), without a trailing slash.
    pub url: Option<http::Uri>,
    /// Extra CA bundle to trust besides the system roots.
    pub ca_bundle: Option<PathBuf>,
    /// Client certificate and key presented to the backend.
    pub client_identity: Option<(PathBuf, PathBuf)>,
    /// Connect timeout.
    pub connect_timeout: Duration,
    /// Time to the response head.
    pub timeout: Duration,
    /// Idle time before a pooled connection is closed.
    pub pool_idle_timeout: Duration,
    /// Whether forwarded requests carry the client's `Host` rather than the backend's authority.
    pub preserve_host: bool,
    /// How long an upgraded connection may carry no bytes in either direction before it is closed.
    pub upgrade_idle_timeout: Duration,
    /// Bytes of V3 request bodies and backend answers held in memory at once, all requests together.
    pub memory_budget_bytes: usize,
}

/// The validated configuration the gateway runs with.
#[derive(Debug, Clone)]
pub struct Config {
    /// Listening address.
    pub listen: SocketAddr,
    /// Backend connection settings; `url` is `None` only with `dev`, where the simulator provides it.
    pub backend: BackendConfig,
    /// Store directory; `None` means a temporary one (only allowed with `dev`).
    pub data_dir: Option<PathBuf>,
    /// Public base URL, if configured.
    pub public_url: Option<String>,
    /// Run with the in-process simulator.
    pub dev: bool,
    /// TLS for clients, if configured.
    pub tls: Option<ServerTls>,
    /// Grace period for in-flight requests at shutdown.
    pub shutdown_grace: Duration,
    /// Bounds on client connections: how many, and how long one may send nothing.
    pub connection_limits: crate::connections::Limits,
    /// Log format.
    pub log_format: LogFormat,
    /// Log filter.
    pub log_level: String,
    /// Rule directory replacing the built-in table.
    pub rules_dir: Option<PathBuf>,
    /// The server's brand word in route and field names (`svc` in `svc_ci_ymls`).
    pub identifier_word: String,
    /// Response shaping mode.
    pub shapes: ShapeMode,
    /// Cap on whole collections gathered from pages.
    pub max_collected_items: usize,
    /// Cap on the backend calls one client request may cause (labels, item completion, pages, id lookups).
    pub max_backend_calls_per_request: u32,
    /// Time a client body read whole may take to arrive.
    pub body_read_timeout: Duration,
    /// Cap on a buffered V4 body that is being reshaped.
    pub max_rewrite_body_bytes: usize,
    /// Entries of the in-memory id cache.
    pub id_cache_entries: usize,
    /// Pages the id lookup may read on a miss.
    pub id_lookup_max_pages: u32,
    /// Per-item backend fetches a list may run at once.
    pub item_fetch_concurrency: usize,
    /// How long per-item completions are reused.
    pub item_fetch_cache_ttl: Duration,
    /// Token for the gateway's own backend calls.
    pub service_token: Option<String>,
    /// Alert settings.
    pub alerts: AlertConfig,
    /// How long a page session lasts.
    pub session_ttl: Duration,
    /// Runtime threads; `None` means one per core.
    pub worker_threads: Option<usize>,
    /// How often V3 usage counts are written.
    pub usage_flush_interval: Duration,
    /// Clients kept per V3 route.
    pub usage_max_clients_per_route: usize,
}

/// The alert tier.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edition {
    /// Generic and Prometheus integrations, no grouping without a fingerprint.
    Free,
    /// Several HTTP Endpoints, Opsgenie, grouping.
    Premium,
}

/// Alert intake limits and settings.
#[derive(Debug, Clone)]
pub struct AlertConfig {
    /// The tier.
    pub edition: Edition,
    /// The integration token key, if configured (else the key file).
    pub secret_key: Option<[u8; 32]>,
    /// Largest payload.
    pub max_body_bytes: u64,
    /// Deepest JSON nesting.
    pub max_depth: usize,
    /// Alerts per second per integration; `None` means no limit.
    pub rate_limit: Option<u32>,
    /// Burst above the rate.
    pub rate_burst: u32,
    /// How long access answers are reused.
    pub access_cache_ttl: Duration,
    /// Most callers (tokens) whose access answers and usage names are kept; least recently used go first.
    pub access_cache_entries: usize,
    /// Bytes of alert bodies held at once, all requests together.
    pub memory_budget_bytes: usize,
    /// Alert requests read at once, all integrations together.
    pub max_concurrent: usize,
    /// Alert requests read at once for one integration.
    pub max_concurrent_per_integration: usize,
    /// Time an alert body may take to arrive.
    pub body_read_timeout: Duration,
}

impl Config {
    /// Validates a merged layer, applying defaults.
    pub fn from_raw(raw: RawConfig) -> Result<Self, ConfigError> {
        let dev = raw.dev.unwrap_or(false);
        let listen_text = raw.listen.unwrap_or_else(|| "127.0.0.1:8080".to_owned());
        let listen = listen_text.parse().map_err(|_| ConfigError::Invalid {
            option: "listen",
            message: format!("{listen_text:?} is not an address like 127.0.0.1:8080"),
        })?;
        let url = match raw.backend {
            Some(text) => Some(parse_backend(&text)?),
            None if dev => None,
            None => {
                return Err(ConfigError::Invalid {
                    option: "backend",
                    message: "is required (the V4 server's base URL), or use --dev".to_owned(),
                })
            }
        };
        if raw.data_dir.is_none() && !dev {
            return Err(ConfigError::Invalid {
                option: "data_dir",
                message: "is required (where the store lives), or use --dev".to_owned(),
            });
        }
        let tls = match (raw.tls_cert, raw.tls_key) {
            (Some(cert), Some(key)) => Some(ServerTls { cert, key }),
            (None, None) => None,
            (Some(_), None) => return Err(invalid("tls_key", "is required when tls_cert is set")),
            (None, Some(_)) => return Err(invalid("tls_cert", "is required when tls_key is set")),
        };
        let client_identity = match (raw.backend_client_cert, raw.backend_client_key) {
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
        let public_url = match raw.public_url {
            Some(text) => {
                if !(text.starts_with("http://") || text.starts_with("https://")) {
                    return Err(invalid("public_url", "must start with http:// or https://"));
                }
                Some(text.trim_end_matches('/').to_owned())
            }
            None => None,
        };
        let identifier_word = raw
            .identifier_word
            .unwrap_or_else(|| crate::identifier::DEFAULT_WORD.to_owned());
        crate::identifier::check(&identifier_word)
            .map_err(|error| invalid("identifier_word", &error.to_string()))?;
        let log_format = match raw.log_format.as_deref().unwrap_or("text") {
            "text" => LogFormat::Text,
            "json" => LogFormat::Json,
            other => return Err(invalid("log_format", &format!("{other:?} is not text or json"))),
        };
        let shapes = match raw.response_shapes.as_deref().unwrap_or("strict") {
            "strict" => ShapeMode::Strict,
            "tolerant" => ShapeMode::Tolerant,
            other => {
                return Err(invalid(
                    "response_shapes",
                    &format!("{other:?} is not strict or tolerant"),
                ))
            }
        };
        let body_read_timeout = nonzero_duration("body_read_timeout", raw.body_read_timeout.clone(), "30s")?;
        let connection_limits = connection_limits(
            raw.max_connections,
            raw.client_header_timeout.clone(),
            raw.client_idle_timeout.clone(),
            raw.client_write_timeout.clone(),
        )?;
        Ok(Config {
            listen,
            backend: BackendConfig {
                url,
                ca_bundle: raw.backend_ca_bundle,
                client_identity,
                connect_timeout: duration("backend_connect_timeout", raw.backend_connect_timeout, "5s")?,
                timeout: duration("backend_timeout", raw.backend_timeout, "60s")?,
                pool_idle_timeout: duration(
                    "backend_pool_idle_timeout",
                    raw.backend_pool_idle_timeout,
                    "90s",
                )?,
                preserve_host: raw.preserve_host.unwrap_or(false),
                memory_budget_bytes: positive(
                    "rewrite_memory_budget_bytes",
                    raw.rewrite_memory_budget_bytes,
                    256 << 20,
                )?,
                upgrade_idle_timeout: nonzero_duration(
                    "upgrade_idle_timeout",
                    raw.upgrade_idle_timeout,
                    "10m",
                )?,
            },
            data_dir: raw.data_dir,
            public_url,
            dev,
            tls,
            shutdown_grace: duration("shutdown_grace", raw.shutdown_grace, "30s")?,
            connection_limits,
            log_format,
            log_level: raw.log_level.unwrap_or_else(|| "info".to_owned()),
            rules_dir: raw.rules_dir,
            identifier_word,
            shapes,
            max_collected_items: positive("max_collected_items", raw.max_collected_items, 10_000)?,
            // A full V3 page (100 items) each completed by one call, plus the list itself and a few lookups: a
            // lower cap would refuse ordinary lists.
            max_backend_calls_per_request: u32::try_from(positive(
                "max_backend_calls_per_request",
                raw.max_backend_calls_per_request,
                110,
            )?)
            .map_err(|_| invalid("max_backend_calls_per_request", "is too large"))?,
            max_rewrite_body_bytes: positive("max_rewrite_body_bytes", raw.max_rewrite_body_bytes, 64 << 20)?,
            body_read_timeout,
            id_cache_entries: positive("id_cache_entries", raw.id_cache_entries, 100_000)?,
            id_lookup_max_pages: u32::try_from(positive("id_lookup_max_pages", raw.id_lookup_max_pages, 50)?)
                .map_err(|_| invalid("id_lookup_max_pages", "is too large"))?,
            item_fetch_concurrency: positive("item_fetch_concurrency", raw.item_fetch_concurrency, 8)?,
            item_fetch_cache_ttl: duration("item_fetch_cache_ttl", raw.item_fetch_cache_ttl, "30s")?,
            service_token: raw.service_token,
            alerts: AlertConfig {
                edition: match raw.edition.as_deref().unwrap_or("premium") {
                    "premium" => Edition::Premium,
                    "free" => Edition::Free,
                    other => return Err(invalid("edition", &format!("{other:?} is not free or premium"))),
                },
                secret_key: match raw.secret_key {
                    Some(text) => Some(parse_key(&text)?),
                    None => None,
                },
                max_body_bytes: positive("alert_max_body_bytes", raw.alert_max_body_bytes, 1 << 20)? as u64,
                max_depth: positive("alert_max_depth", raw.alert_max_depth, 64)?,
                rate_limit: match raw.alert_rate_limit.unwrap_or(0) {
                    0 => None,
                    rate => {
                        Some(u32::try_from(rate).map_err(|_| invalid("alert_rate_limit", "is too large"))?)
                    }
                },
                rate_burst: u32::try_from(positive("alert_rate_burst", raw.alert_rate_burst, 50)?)
                    .map_err(|_| invalid("alert_rate_burst", "is too large"))?,
                access_cache_ttl: duration("access_cache_ttl", raw.access_cache_ttl, "60s")?,
                access_cache_entries: positive("access_cache_entries", raw.access_cache_entries, 10_000)?,
                memory_budget_bytes: positive(
                    "alert_memory_budget_bytes",
                    raw.alert_memory_budget_bytes,
                    64 << 20,
                )?,
                max_concurrent: positive("alert_max_concurrent", raw.alert_max_concurrent, 256)?,
                max_concurrent_per_integration: positive(
                    "alert_max_concurrent_per_integration",
                    raw.alert_max_concurrent_per_integration,
                    16,
                )?,
                body_read_timeout,
            },
            session_ttl: duration("session_ttl", raw.session_ttl, "8h")?,
            usage_flush_interval: duration("usage_flush_interval", raw.usage_flush_interval, "10s")?,
            usage_max_clients_per_route: positive(
                "usage_max_clients_per_route",
                raw.usage_max_clients_per_route,
                50,
            )?,
            worker_threads: match raw.worker_threads {
                Some(count) => Some(positive("worker_threads", Some(count), 1)?),
                None => None,
            },
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

fn invalid(option: &'static str, message: &str) -> ConfigError {
    ConfigError::Invalid {
        option,
        message: message.to_owned(),
    }
}

fn parse_key(text: &str) -> Result<[u8; 32], ConfigError> {
    let text = text.trim();
    let bad = || invalid("secret_key", "must be 64 hexadecimal digits (32 bytes)");
    if text.len() != 64 {
        return Err(bad());
    }
    let mut key = [0u8; 32];
    for (index, byte) in key.iter_mut().enumerate() {
        *byte =
            u8::from_str_radix(text.get(index * 2..index * 2 + 2).ok_or_else(bad)?, 16).map_err(|_| bad())?;
    }
    Ok(key)
}

fn parse_backend(text: &str) -> Result<http::Uri, ConfigError> {
    let trimmed = text.trim_end_matches('/');
    let uri: http::Uri = trimmed
        .parse()
        .map_err(|_| invalid("backend", &format!("{text:?} is not a URL")))?;
    match uri.scheme_str() {
        Some("http") | Some("https") if uri.authority().is_some() => Ok(uri),
        _ => Err(invalid(
            "backend",
            &format!("{text:?} must be an http:// or https:// URL with a host"),
        )),
    }
}

fn duration(option: &'static str, value: Option<String>, default: &str) -> Result<Duration, ConfigError> {
    let text = value.unwrap_or_else(|| default.to_owned());
    humantime::parse_duration(&text)
        .map_err(|_| invalid(option, &format!("{text:?} is not a duration like 30s or 500ms")))
}

fn nonzero_duration(
    option: &'static str,
    value: Option<String>,
    default: &str,
) -> Result<Duration, ConfigError> {
    let parsed = duration(option, value, default)?;
    if parsed.is_zero() {
        return Err(invalid(option, "must be longer than 0s"));
    }
    Ok(parsed)
}

/// The client connection limits; `max_connections` must stay below the process's open-file limit, which it
/// shares with backend connections and the store.
fn connection_limits(
    max_connections: Option<u64>,
    header_timeout: Option<String>,
    idle_timeout: Option<String>,
    write_timeout: Option<String>,
) -> Result<crate::connections::Limits, ConfigError> {
    let max_connections = match max_connections {
        Some(0) => return Err(invalid("max_connections", "must be greater than 0")),
        Some(cap) => {
            if let Some(limit) = crate::connections::open_file_limit() {
                if cap >= limit {
                    return Err(invalid(
                        "max_connections",
                        &format!("{cap} must be below this process's open-file limit ({limit}); raise `ulimit -n` or lower it"),
                    ));
                }
            }
            usize::try_from(cap).map_err(|_| invalid("max_connections", "is too large"))?
        }
        None => crate::connections::default_max_connections(),
    };
    Ok(crate::connections::Limits {
        max_connections,
        header_timeout: nonzero_duration("client_header_timeout", header_timeout, "30s")?,
        idle_timeout: nonzero_duration("client_idle_timeout", idle_timeout, "60s")?,
        write_timeout: nonzero_duration("client_write_timeout", write_timeout, "60s")?,
    })
}

fn positive(option: &'static str, value: Option<u64>, default: u64) -> Result<usize, ConfigError> {
    let number = value.unwrap_or(default);
    if number == 0 {
        return Err(invalid(option, "must be greater than 0"));
    }
    usize::try_from(number).map_err(|_| invalid(option, "is too large"))
}

/// The options as `name → kind` for the README's reference table and its test.
pub fn option_names() -> BTreeMap<&'static str, &'static str> {
    OPTIONS
        .iter()
        .map(|(name, kind)| {
            let kind = match kind {
                Kind::Text => "text",
                Kind::Flag => "boolean",
                Kind::Number => "number",
            };
            (*name, kind)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn file_then_environment_then_flags_in_rising_precedence() {
        let file = RawConfig::from_toml(
            "listen = \"127.0.0.1:1\"\nbackend = \"http://file\"\ndata_dir = \"/d\"\nlog_format = \"json\"",
            "t.toml",
        )
        .unwrap();
        let environment = RawConfig::from_env(env(&[
            ("SVCGATE_LISTEN", "127.0.0.1:2"),
            ("SVCGATE_BACKEND", "http://env"),
            ("PATH", "/bin"),
        ]))
        .unwrap();
        let flags = RawConfig {
            listen: Some("127.0.0.1:3".to_owned()),
            ..RawConfig::default()
        };
        let config = Config::from_raw(file.overlay(environment).overlay(flags)).unwrap();
        assert_eq!(config.listen.port(), 3);
        assert_eq!(config.backend.url.unwrap().host(), Some("env"));
        assert_eq!(config.log_format, LogFormat::Json);
    }

    #[test]
    fn unknown_file_option_is_named_in_one_line() {
        let error = RawConfig::from_toml("lisen = \"x\"", "gate.toml")
            .unwrap_err()
            .to_string();
        assert!(error.contains("gate.toml"), "{error}");
        assert!(error.contains("lisen"), "{error}");
        assert!(!error.contains('\n'), "{error}");
    }

    #[test]
    fn unknown_environment_option_is_named() {
        let error = RawConfig::from_env(env(&[("SVCGATE_LISTN", "x")]))
            .unwrap_err()
            .to_string();
        assert_eq!(
            error,
            "environment variable SVCGATE_LISTN names no svcgate option"
        );
    }

    #[test]
    fn bad_values_name_their_option() {
        let cases = [
            ("listen = \"nowhere\"", "listen"),
            ("backend = \"ftp://x\"", "backend"),
            ("backend_timeout = \"soon\"", "backend_timeout"),
            ("response_shapes = \"loose\"", "response_shapes"),
            ("max_collected_items = 0", "max_collected_items"),
            ("upgrade_idle_timeout = \"0s\"", "upgrade_idle_timeout"),
            ("upgrade_idle_timeout = \"forever\"", "upgrade_idle_timeout"),
            ("tls_cert = \"/c.pem\"", "tls_key"),
        ];
        for (text, option) in cases {
            let raw = RawConfig::from_toml(&format!("dev = true\n{text}"), "t.toml").unwrap();
            let error = Config::from_raw(raw).unwrap_err().to_string();
            assert!(
                error.starts_with(&format!("option `{option}`")),
                "{text}: {error}"
            );
        }
    }

    #[test]
    fn backend_and_data_dir_are_required_unless_dev() {
        let error = Config::from_raw(RawConfig::default()).unwrap_err().to_string();
        assert!(error.contains("`backend`"), "{error}");
        let dev = RawConfig {
            dev: Some(true),
            ..RawConfig::default()
        };
        assert!(Config::from_raw(dev).is_ok());
    }

    #[test]
    fn environment_flags_and_numbers_are_typed() {
        let raw = RawConfig::from_env(env(&[
            ("SVCGATE_DEV", "true"),
            ("SVCGATE_MAX_COLLECTED_ITEMS", "5"),
        ]))
        .unwrap();
        let config = Config::from_raw(raw).unwrap();
        assert!(config.dev);
        assert_eq!(config.max_collected_items, 5);
        let error = RawConfig::from_env(env(&[("SVCGATE_DEV", "maybe")]))
            .unwrap_err()
            .to_string();
        assert!(error.starts_with("option `dev`"), "{error}");
    }

    #[test]
    fn passthrough_options_default_and_parse() {
        let config = Config::from_raw(RawConfig {
            dev: Some(true),
            ..RawConfig::default()
        })
        .unwrap();
        assert!(!config.backend.preserve_host);
        assert_eq!(config.backend.upgrade_idle_timeout, Duration::from_secs(600));
        let raw = RawConfig::from_env(env(&[
            ("SVCGATE_DEV", "1"),
            ("SVCGATE_PRESERVE_HOST", "true"),
            ("SVCGATE_UPGRADE_IDLE_TIMEOUT", "90s"),
        ]))
        .unwrap();
        let config = Config::from_raw(raw).unwrap();
        assert!(config.backend.preserve_host);
        assert_eq!(config.backend.upgrade_idle_timeout, Duration::from_secs(90));
    }

    #[test]
    fn every_option_is_accepted_by_the_file_layer() {
        for (name, kind) in option_names() {
            let value = match kind {
                "boolean" => "true".to_owned(),
                "number" => "1".to_owned(),
                _ => "\"x\"".to_owned(),
            };
            RawConfig::from_toml(&format!("{name} = {value}"), "t.toml").unwrap();
        }
    }
}

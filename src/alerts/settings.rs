//! The alert intake's settings: the tier and the limits on what senders may make svcgate hold, as the
//! configuration reads them from its options.

use std::time::Duration;

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
    /// Largest payload read before its key is checked (formats whose key travels in the body: PagerDuty's).
    pub key_in_body_max_bytes: u64,
    /// Bodies read at once before their key is checked, all integrations together.
    pub key_in_body_max_concurrent: usize,
    /// Deepest JSON nesting.
    pub max_depth: usize,
    /// Alerts per second per integration; `None` means no limit.
    pub rate_limit: Option<u32>,
    /// Burst above the rate.
    pub rate_burst: u32,
    /// The operator's directory of alert format files (`alert_formats_dir`), read with the built-in ones.
    pub formats_dir: Option<std::path::PathBuf>,
    /// How long access answers are reused.
    pub access_cache_ttl: Duration,
    /// Most callers (tokens) whose access answers and usage names are kept; least recently used go first.
    pub access_cache_entries: usize,
    /// Bytes of alert bodies held at once, all requests together.
    pub memory_budget_bytes: usize,
    /// Alert requests read at once, all integrations together.
    pub max_concurrent: usize,
    /// Bytes of alert bodies one integration's requests hold at once.
    pub integration_budget_bytes: usize,
    /// Time an alert body may bring no byte.
    pub body_stall_timeout: Duration,
    /// Time an alert body may take to arrive.
    pub body_read_timeout: Duration,
    /// Whether `service_token` is set, without which no incident can be created (the settings page warns).
    pub service_token_set: bool,
}

//! Metric names, one place for all of them.

/// Requests answered, by route kind, rule and status.
pub const REQUESTS: &str = "svcgate_requests";
/// Time from request head to response head, by route kind.
pub const REQUEST_DURATION: &str = "svcgate_request_duration_seconds";
/// Time the backend took to answer one call.
pub const BACKEND_DURATION: &str = "svcgate_backend_request_duration_seconds";
/// Id ↔ iid lookups by where they were answered.
pub const ID_INDEX_LOOKUPS: &str = "svcgate_id_index_lookups";
/// GraphQL requests svcgate made for V3 answers (list completions, id lookups), by kind and outcome; exposed with
/// `_total`.
pub const GRAPHQL: &str = "svcgate_graphql";
/// V3 requests by route template, the rule's release and status class.
pub const V3_REQUESTS: &str = "svcgate_v3_requests";
/// Client connections closed or refused by the connection limits, by reason.
pub const CONNECTIONS_CLOSED: &str = "svcgate_client_connections_closed";
/// 1 when the backend answered the last readiness probe, else 0.
pub const BACKEND_UP: &str = "svcgate_backend_up";
/// Alerts received on the intake, by integration type and outcome (refused ones by reason); exposed with
/// `_total`.
pub const ALERTS_RECEIVED: &str = "svcgate_alerts_received";
/// Open alerts (triggered or acknowledged) by severity, counted in the store at scrape time.
pub const ALERTS_OPEN: &str = "svcgate_alerts_open";
/// Incident calls waiting in the outbox (not yet accepted by the backend), counted in the store at scrape time.
pub const OUTBOX_BACKLOG: &str = "svcgate_incident_outbox_backlog";
/// Incident calls the backend accepted, by kind; exposed with `_total`.
pub const OUTBOX_DONE: &str = "svcgate_incident_outbox_done";
/// Incident calls that failed and wait for a retry, by kind; exposed with `_total`.
pub const OUTBOX_FAILURES: &str = "svcgate_incident_outbox_failures";
/// V3 clients (a user and a product) with a call within `v3_client_retired_after`, counted in the store at scrape
/// time; no per-client label.
pub const V3_ACTIVE_CLIENTS: &str = "svcgate_v3_active_clients";
/// Calls from a V3 client that was retired, each return counted once; exposed with `_total`.
pub const V3_RETIRED_CLIENTS_RETURNED: &str = "svcgate_v3_retired_clients_returned";
/// 1 when the scrape-time counts (open alerts, outbox backlog, active V3 clients) were read from the store, else 0.
pub const STORE_GAUGES_UP: &str = "svcgate_store_gauges_up";
/// Time one batch of store writes took, from its transaction's start to its durable commit.
pub const STORE_COMMIT_DURATION: &str = "svcgate_store_commit_duration_seconds";
/// Writes (alert events, for PostgreSQL) one store commit carried.
pub const STORE_COMMIT_BATCH_SIZE: &str = "svcgate_store_commit_batch_size";
/// The running build; exposed as `svcgate_build_info{version}` with the value 1.
pub const BUILD: &str = "svcgate_build";
/// CPU time (user and system) the process used; exposed with `_total`.
pub const PROCESS_CPU: &str = "process_cpu_seconds";
/// Resident memory of the process.
pub const PROCESS_RESIDENT_MEMORY: &str = "process_resident_memory_bytes";
/// Virtual memory of the process.
pub const PROCESS_VIRTUAL_MEMORY: &str = "process_virtual_memory_bytes";
/// File descriptors the process holds open.
pub const PROCESS_OPEN_FDS: &str = "process_open_fds";
/// The process's soft limit on open file descriptors.
pub const PROCESS_MAX_FDS: &str = "process_max_fds";
/// When the process started, in seconds since the Unix epoch.
pub const PROCESS_START_TIME: &str = "process_start_time_seconds";

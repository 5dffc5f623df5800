//! svcgate: a V3 → V4 compatibility gateway and alert intake in front of an svc server.
//!
//! Request flow: [`server`] accepts and dispatches; [`rewrite`] translates `/api/v3` requests by the rule table;
//! [`backend::passthrough`] streams everything else to the svc server through [`backend::upstream`], and
//! [`backend::tunnel`] carries the connections it upgrades; [`store`] keeps durable state; [`alerts`] terminates
//! alert webhooks and serves their management API, asking [`backend::access`] what callers may do, with
//! [`store::lifecycle`] deciding what each alert does; [`pages`] are the browser's; [`telemetry`] logs and counts.
//! [`config`] reads the options into each component's settings, [`app`] wires it all up.
//!
//! # Layout
//!
//! The modules form layers, listed here from the bottom up. A module may use the layers below its own and never
//! one above (`layers.rs` checks every `crate::` path in `src/`, and that no two top-level modules use each
//! other, directly or round a longer circle; nor do two files of one folder). Modules sharing a layer do not use each other.
//!
//! 1. [`util`]: neutral helpers (times, secrets, URL pieces, JSON read as spelled, the brand word, certificates).
//! 2. [`http`]: the HTTP wire on either side: the body type, body budgets, the gateway's errors, client
//!    connections.
//! 3. [`store`]: durable state, on SQLite or PostgreSQL, and the alert lifecycle decision it carries out.
//! 4. [`telemetry`]: logs, metrics (some counted in the store at scrape time), the process's own metrics.
//! 5. [`backend`]: talking to the svc server: the pooled client, passthrough, tunnels, callers' access, the
//!    per-request context.
//! 6. [`rewrite`] and [`alerts`]: the two features, V3 translation (with V3 usage) and the alert intake.
//! 7. [`pages`]: the browser pages, over both features.
//! 8. [`config`]: the options table, read and validated into each component's settings type.
//! 9. [`server`]: listeners, dispatch, and the gateway's own routes (health, readiness, metrics).
//! 10. [`app`]: wiring for `svcgate serve`.

pub mod alerts;
pub mod app;
pub mod backend;
pub mod config;
pub mod http;
#[cfg(test)]
mod layers;
pub mod pages;
pub mod rewrite;
pub mod server;
pub mod store;
pub mod telemetry;
pub mod util;

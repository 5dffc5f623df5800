//! svcgate: a V3 → V4 compatibility gateway and alert intake in front of an svc server.
//!
//! Request flow: [`server`] accepts and dispatches; [`rewrite`] translates `/api/v3` requests by the rule table;
//! [`passthrough`] streams everything else to the backend through [`upstream`], and [`tunnel`] carries the
//! connections it upgrades; [`store`] keeps durable state; [`alerts`] terminates alert webhooks and serves their
//! management API, asking [`access`] what callers may do, with [`lifecycle`] deciding what each alert does;
//! [`telemetry`] logs and counts, with [`process_metrics`] for the process's own. [`config`] builds the one validated configuration, [`app`] wires it all up.
//! Neutral helpers any part may use: [`time_format`] (times in and out), [`secret`] (sealing and random tokens),
//! [`url_parts`] (query pairs and path segments).

pub mod aborts;
pub mod access;
pub mod alerts;
pub mod answer_cache;
pub mod app;
pub mod body;
pub mod budget;
pub mod config;
pub mod connections;
pub mod context;
pub mod error;
pub mod forwarded;
pub mod identifier;
pub mod internal;
pub mod lifecycle;
pub mod logsink;
pub mod pages;
pub mod passthrough;
pub mod plain_value;
pub mod process_metrics;
pub mod refusals;
pub mod rewrite;
pub mod secret;
pub mod server;
pub mod store;
pub mod telemetry;
pub mod time_format;
pub mod tunnel;
pub mod upstream;
pub mod url_parts;
pub mod usage;

//! Talking to the svc server: the pooled client, the streaming passthrough and the tunnels of upgraded
//! connections, who a caller is and what they may do (asked of the server and cached), and the per-request
//! context every stage that calls the server shares.
//!
//! May use: [`crate::util`], [`crate::http`], [`crate::store`], [`crate::telemetry`].

pub mod access;
pub mod answer_cache;
pub mod context;
pub mod passthrough;
pub mod pool;
pub mod tunnel;
pub mod upstream;

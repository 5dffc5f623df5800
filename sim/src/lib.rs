//! svc-sim: an in-memory simulator of the svc V4 HTTP API, the backend that the svcgate gateway is tested and
//! demoed against.
//!
//! Request path through the crate: `server` (sockets, body limit, recording) → `dispatch` (parameters, routing,
//! authentication) → `api::*` handlers (one module per resource, using `context::Ctx`) → `store` (the data) and
//! `entities` (V4 JSON shapes) → `reply`/`error` back to `server`.

mod api;
mod archive;
mod auth;
mod context;
mod dispatch;
mod entities;
mod error;
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

pub use handle::{RecordedRequest, SimHandle};
pub use seed::DemoSeed;
pub use server::spawn;

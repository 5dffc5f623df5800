//! The HTTP wire as svcgate handles it on either side: the one body type, the memory budget for bodies read
//! whole, the gateway's errors and how they are answered, and the client connections (limits, aborts, refusals
//! hyper writes itself, the scheme a TLS proxy reports).
//!
//! May use: [`crate::util`]. Nothing here knows the backend, the store or any feature.

pub mod aborts;
pub mod body;
pub mod budget;
pub mod connections;
pub mod error;
pub mod forwarded;
pub mod refusals;

//! Neutral helpers any part of svcgate may use: times, secrets, URL pieces, JSON read as spelled, the brand word,
//! PEM files for TLS, an operator's directory of TOML files.
//!
//! May use: nothing of the crate. Each file here stands alone, so that no part takes such a helper from another
//! part.

pub mod identifier;
pub mod plain_value;
pub mod secret;
pub mod time_format;
pub mod tls;
pub mod toml_files;
pub mod url_parts;

//! The V3 path/query matcher and rewriter, through `explain`: the same table lookup, id handling, parameter
//! conversion and plan that the live pipeline carries out, without a backend.
//!
//! Input: the first line is the request line (`METHOD /api/v3/path?query`); after it, one byte names the body
//! and the rest is the body:
//! `j` JSON, `f` form (raw `application/x-www-form-urlencoded`), `p` form pairs (`name=value` lines, encoded by
//! `BodyInput::form`), `r` a content type on the first line then the body; anything else, no body. The same
//! letters in upper case also resolve every global id the request names (`ids_needed`) to an iid, as
//! `svcgate translate --backend` does; in lower case they stay unresolved.
//!
//! Checks: no panic, with the built-in rule table.
#![no_main]

use std::sync::OnceLock;

use bytes::Bytes;
use http::HeaderValue;
use libfuzzer_sys::fuzz_target;
use svcgate::rewrite::explain::{explain, ids_needed, BodyInput};
use svcgate::rewrite::table::RuleTable;

fn table() -> &'static RuleTable {
    static TABLE: OnceLock<RuleTable> = OnceLock::new();
    TABLE.get_or_init(|| match RuleTable::builtin() {
        Ok(table) => table,
        Err(error) => panic!("the built-in rule table does not load: {error:?}"),
    })
}

fn body(kind: u8, bytes: &[u8]) -> Option<BodyInput> {
    let raw = |content_type: &'static str| BodyInput {
        content_type: HeaderValue::from_static(content_type),
        bytes: Bytes::copy_from_slice(bytes),
    };
    match kind.to_ascii_lowercase() {
        b'j' => Some(raw("application/json")),
        b'f' => Some(raw("application/x-www-form-urlencoded")),
        b'p' => {
            let text = String::from_utf8_lossy(bytes);
            let pairs: Vec<(String, String)> = text
                .lines()
                .map(|line| {
                    let (name, value) = line.split_once('=').unwrap_or((line, ""));
                    (name.to_owned(), value.to_owned())
                })
                .collect();
            Some(BodyInput::form(&pairs))
        }
        b'r' => {
            let (content_type, rest) = match bytes.iter().position(|&byte| byte == b'\n') {
                Some(at) => (&bytes[..at], &bytes[at + 1..]),
                None => (bytes, &[][..]),
            };
            Some(BodyInput {
                content_type: HeaderValue::from_bytes(content_type).ok()?,
                bytes: Bytes::copy_from_slice(rest),
            })
        }
        _ => None,
    }
}

fuzz_target!(|data: &[u8]| {
    let table = table();
    let (line, rest) = match data.iter().position(|&byte| byte == b'\n') {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (data, &[][..]),
    };
    let request_line = String::from_utf8_lossy(line);
    let (kind, body_bytes) = match rest {
        [kind, body @ ..] => (*kind, body),
        [] => (b'-', &[][..]),
    };
    let resolved: Vec<(String, u64)> = match ids_needed(table, &request_line) {
        Ok(needed) if kind.is_ascii_uppercase() => needed
            .into_iter()
            .zip(1u64..)
            .map(|(id, iid)| (id.param, iid))
            .collect(),
        _ => Vec::new(),
    };
    let body = body(kind, body_bytes);
    if let Ok(explanation) = explain(table, &request_line, body, &resolved) {
        assert!(!explanation.lines.is_empty());
        assert!(explanation.matched || explanation.calls.is_empty());
    }
});

//! The alert payload reader: a body as a monitoring tool posts it to an integration.
//!
//! Input: byte 0 holds flags (bit 0: Premium edition, bit 1: a custom attribute mapping), byte 1 the nesting
//! limit (`alert_max_depth`; above `PARSER_MAX_DEPTH` it is capped as the code documents), then the body. With
//! the mapping flag, the body is split at its first NUL byte: the mapping's JSON, then the payload. ASCII seeds
//! read well: `0@{...}` is Free, no mapping, depth 64.
//!
//! Checks: no panic in `read_generic`, `parse_json` + `normalize_generic`, `AttributeMapping::from_json` and
//! `normalize_prometheus`; `read_generic` answers exactly as `parse_json` then `normalize_generic` (its
//! documented contract); every normalized alert keeps the documented limits.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use svcgate::alerts::generic::{normalize_generic, read_generic};
use svcgate::alerts::mapping::AttributeMapping;
use svcgate::alerts::normalized::{
    Edition, NormalizedAlert, DESCRIPTION_MAX_CHARS, HOSTS_MAX_CHARS, SHORT_TEXT_MAX_CHARS, TITLE_MAX_CHARS,
};
use svcgate::alerts::payload::{parse_json, PayloadError};
use svcgate::alerts::prometheus::normalize_prometheus;
use time::macros::datetime;
use time::OffsetDateTime;

const RECEIVED: OffsetDateTime = datetime!(2026-11-22 10:00:00 UTC);

fn check_limits(alert: &NormalizedAlert) {
    let chars = |text: &Option<String>| text.as_ref().map_or(0, |text| text.chars().count());
    assert!(!alert.title.is_empty() && alert.title.chars().count() <= TITLE_MAX_CHARS);
    assert!(chars(&alert.description) <= DESCRIPTION_MAX_CHARS);
    assert!(chars(&alert.service) <= SHORT_TEXT_MAX_CHARS);
    assert!(chars(&alert.monitoring_tool) <= SHORT_TEXT_MAX_CHARS);
    assert!(alert.hosts.iter().map(|host| host.chars().count()).sum::<usize>() <= HOSTS_MAX_CHARS);
    assert!(alert.hosts.iter().all(|host| !host.is_empty()));
    if let Some(fingerprint) = &alert.fingerprint {
        assert_eq!(fingerprint.len(), 64);
        assert!(fingerprint
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));
    }
    assert!(alert.started_at.offset().is_utc());
    assert!(alert.ended_at.is_none_or(|t| t.offset().is_utc()));
}

fuzz_target!(|data: &[u8]| {
    let [flags, depth, rest @ ..] = data else {
        return;
    };
    let edition = if flags & 1 == 1 {
        Edition::Premium
    } else {
        Edition::Free
    };
    let max_depth = usize::from(*depth);
    let (mapping, body) = if flags & 2 == 2 {
        let (mapping_text, body) = match rest.iter().position(|&byte| byte == 0) {
            Some(at) => (&rest[..at], &rest[at + 1..]),
            None => (rest, &[][..]),
        };
        let mapping = serde_json::from_slice::<Value>(mapping_text)
            .ok()
            .and_then(|value| AttributeMapping::from_json(&value).ok());
        (mapping, body)
    } else {
        (None, rest)
    };

    // Generic and HTTP Endpoint integrations.
    let lean = read_generic(body, max_depth, RECEIVED, edition, mapping.as_ref());
    let parsed = parse_json(body, max_depth);
    let whole = parsed
        .clone()
        .and_then(|(value, text)| normalize_generic(&value, text, RECEIVED, edition, mapping.as_ref()));
    assert_eq!(
        lean, whole,
        "read_generic differs from parse_json + normalize_generic"
    );
    if let Ok(alert) = &whole {
        check_limits(alert);
        if edition == Edition::Premium {
            assert!(alert.fingerprint.is_some());
        }
    }

    // Prometheus integrations: the same parse, then the Alertmanager envelope.
    if let Ok((value, _)) = parsed {
        let elements = value.get("alerts").and_then(Value::as_array).map(Vec::len);
        match normalize_prometheus(&value, RECEIVED, edition) {
            Ok(alerts) => {
                assert_eq!(Some(alerts.len()), elements);
                for alert in &alerts {
                    assert!(alert.fingerprint.is_some());
                    check_limits(alert);
                }
            }
            Err(PayloadError::NotAnEnvelope(reason)) => assert!(!reason.is_empty()),
            Err(other) => panic!("normalize_prometheus answered {other:?}"),
        }
    }
});

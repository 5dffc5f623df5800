//! Helpers and property strategies shared by the tests of the alert model's files: a fixed time of receipt,
//! normalising a value as a generic or Prometheus payload, and random JSON values, keys and mappings.

#![allow(clippy::unwrap_used)]

use proptest::prelude::*;
use serde_json::{json, Value};
use time::macros::datetime;
use time::OffsetDateTime;

use super::generic::normalize_generic;
use super::mapping::{AttributeMapping, MappedPath, PathSegment};
use super::normalized::*;
use super::payload::PayloadError;
use super::prometheus::normalize_prometheus;
use crate::util::plain_value;

pub(super) const RECEIVED: OffsetDateTime = datetime!(2026-11-22 10:00:00 UTC);

/// `normalize_generic` of `payload` received as its compact text.
pub(super) fn normalize(
    payload: &Value,
    edition: Edition,
    mapping: Option<&AttributeMapping>,
) -> Result<NormalizedAlert, PayloadError> {
    normalize_generic(payload, &payload.to_string(), RECEIVED, edition, mapping)
}

pub(super) fn generic(payload: Value) -> NormalizedAlert {
    normalize(&payload, Edition::Premium, None).unwrap()
}

pub(super) fn generic_on(edition: Edition, payload: Value) -> NormalizedAlert {
    normalize(&payload, edition, None).unwrap()
}

pub(super) fn mapped(mapping: Value, payload: Value) -> NormalizedAlert {
    let mapping = AttributeMapping::from_json(&mapping).unwrap();
    normalize(&payload, Edition::Premium, Some(&mapping)).unwrap()
}

pub(super) fn payload_value(alert: &NormalizedAlert) -> Value {
    plain_value::from_str(&alert.payload).unwrap()
}

pub(super) fn prometheus(alerts: Value) -> Vec<NormalizedAlert> {
    let envelope = json!({"version": "4", "status": "firing", "alerts": alerts});
    normalize_prometheus(&envelope, RECEIVED, Edition::Free).unwrap()
}

pub(super) fn nested_arrays(depth: usize) -> String {
    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
}

pub(super) fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (-4_000i32..4_000).prop_map(|n| Value::from(f64::from(n) / 8.0)),
        ".{0,300}".prop_map(Value::String),
        Just(json!("2026-11-22T10:00:00Z")),
        Just(json!("resolved")),
    ];
    leaf.prop_recursive(5, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..8)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
        ]
    })
}

/// Mostly the keys the rules read, so that the properties exercise them with values of every type.
pub(super) fn key() -> impl Strategy<Value = String> {
    let known: Vec<&'static str> = Attribute::ALL
        .map(Attribute::key)
        .into_iter()
        .chain([
            "alerts",
            "labels",
            "annotations",
            "status",
            "startsAt",
            "endsAt",
            "instance",
            "alertname",
            // serde_json's own `Value` reader gives this key a meaning; payloads must not.
            "$serde_json::private::RawValue",
        ])
        .collect();
    prop_oneof![prop::sample::select(known).prop_map(str::to_owned), "[a-z]{0,4}"]
}

pub(super) fn mapping() -> impl Strategy<Value = Option<AttributeMapping>> {
    let segment = prop_oneof![
        key().prop_map(PathSegment::Key),
        (0usize..3).prop_map(PathSegment::Index)
    ];
    let entry = (
        prop::sample::select(Attribute::ALL.to_vec()),
        prop::collection::vec(segment, 1..4),
    );
    prop::option::of(prop::collection::vec(entry, 0..6).prop_map(|entries| {
        let mut mapping = AttributeMapping::default();
        for (attribute, path) in entries {
            let kind = attribute.allowed_types()[0];
            mapping.insert(attribute, MappedPath { path, kind }).unwrap();
        }
        mapping
    }))
}

pub(super) fn check_invariants(alert: &NormalizedAlert) -> Result<(), TestCaseError> {
    prop_assert!(alert.title.chars().count() <= TITLE_MAX_CHARS);
    prop_assert!(!alert.title.is_empty());
    prop_assert!(alert.description.as_ref().map_or(0, |d| d.chars().count()) <= DESCRIPTION_MAX_CHARS);
    prop_assert!(alert.service.as_ref().map_or(0, |d| d.chars().count()) <= SHORT_TEXT_MAX_CHARS);
    prop_assert!(alert.monitoring_tool.as_ref().map_or(0, |d| d.chars().count()) <= SHORT_TEXT_MAX_CHARS);
    prop_assert!(alert.hosts.iter().map(|h| h.chars().count()).sum::<usize>() <= HOSTS_MAX_CHARS);
    prop_assert!(alert.hosts.iter().all(|h| !h.is_empty()));
    if let Some(fp) = &alert.fingerprint {
        prop_assert_eq!(fp.len(), 64);
        prop_assert!(fp
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));
    }
    prop_assert!(alert.started_at.offset().is_utc());
    prop_assert!(alert.ended_at.map_or(true, |t| t.offset().is_utc()));
    Ok(())
}

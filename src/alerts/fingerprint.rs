//! Alert fingerprints: the canonical JSON text of a value and its SHA-256 (contract section 4, "Fingerprint").
//!
//! The canonical text is `serde_json`'s compact text of the value with every object's keys sorted recursively
//! (by Unicode code point, which is the byte order of their UTF-8 form). Hashing the JSON text instead of a
//! string's bare contents is what keeps `["ab","c"]` and `"abc"` apart.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// The SHA-256, as 64 lowercase hex digits, of the canonical JSON text of `value`.
pub fn fingerprint_of(value: &Value) -> String {
    let digest = Sha256::digest(canonical_json(value).as_bytes());
    hex::encode(digest)
}

/// The canonical JSON text of `value`: object keys sorted recursively, no insignificant white space.
pub fn canonical_json(value: &Value) -> String {
    // serde_json writes the text (escaping included); only the key order is ours to fix.
    serde_json::to_string(&sorted(value)).unwrap_or_default()
}

/// The value with every object's keys in code-point order (the map keeps insertion order).
fn sorted(value: &Value) -> Value {
    match value {
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            Value::Object(
                entries
                    .into_iter()
                    .map(|(key, item)| (key.clone(), sorted(item)))
                    .collect(),
            )
        }
        other => other.clone(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn canonical_text_table() {
        let cases = [
            (json!(null), "null"),
            (json!(true), "true"),
            (json!(12), "12"),
            (json!(-3), "-3"),
            (json!(1.5), "1.5"),
            (json!("a\"b\\c\n\u{1}"), "\"a\\\"b\\\\c\\n\\u0001\""),
            (json!(["ab", "c"]), "[\"ab\",\"c\"]"),
            (
                json!({"b": 1, "a": {"d": [1, 2], "c": null}}),
                "{\"a\":{\"c\":null,\"d\":[1,2]},\"b\":1}",
            ),
            (json!({}), "{}"),
            (json!([]), "[]"),
        ];
        for (value, want) in cases {
            assert_eq!(canonical_json(&value), want, "for {value}");
        }
    }

    #[test]
    fn fingerprint_is_sha256_of_the_canonical_text() {
        // SHA-256 of the three bytes `"a"` (quotes included).
        assert_eq!(
            fingerprint_of(&json!("a")),
            "ac8d8342bbb2362d13f0a559a3621bb407011368895164b628a54f7fc33fc43c"
        );
        assert_eq!(fingerprint_of(&json!("a")), hex::encode(Sha256::digest(b"\"a\"")));
    }

    #[test]
    fn array_and_concatenated_string_do_not_collide() {
        assert_ne!(fingerprint_of(&json!(["ab", "c"])), fingerprint_of(&json!("abc")));
        assert_ne!(
            fingerprint_of(&json!(["ab", "c"])),
            fingerprint_of(&json!(["a", "bc"]))
        );
        assert_ne!(fingerprint_of(&json!(1)), fingerprint_of(&json!("1")));
    }

    #[test]
    fn fingerprint_is_64_lowercase_hex() {
        let fp = fingerprint_of(&json!({"x": [1, "y"]}));
        assert_eq!(fp.len(), 64);
        assert!(fp.chars().all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c)));
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            // Quarters are exact in binary: `serde_json` without `float_roundtrip` may read other floats back
            // one ulp off, which the round-trip property would mistake for a canonical-text bug.
            (-4_000i32..4_000).prop_map(|n| Value::from(f64::from(n) / 4.0)),
            ".*".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::vec(("[a-e]{0,3}", inner), 0..6)
                    .prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
            ]
        })
    }

    /// Rebuilds `value` with every object's keys inserted in an order shuffled by `seed` (Fisher-Yates driven by
    /// a small linear congruential generator, so a failing case is reproducible from its seed).
    fn reinsert(value: &Value, seed: u64) -> Value {
        match value {
            Value::Array(items) => Value::Array(items.iter().map(|v| reinsert(v, seed)).collect()),
            Value::Object(map) => {
                let mut entries: Vec<(&String, &Value)> = map.iter().collect();
                let mut state = seed;
                for i in (1..entries.len()).rev() {
                    state = state
                        .wrapping_mul(6_364_136_223_846_793_005)
                        .wrapping_add(1_442_695_040_888_963_407);
                    let j = usize::try_from((state >> 33) % (i as u64 + 1)).unwrap();
                    entries.swap(i, j);
                }
                Value::Object(
                    entries
                        .into_iter()
                        .map(|(k, v)| (k.clone(), reinsert(v, state)))
                        .collect(),
                )
            }
            other => other.clone(),
        }
    }

    proptest! {
        #[test]
        fn stable_under_key_insertion_order(value in json_value(), seed in any::<u64>()) {
            let shuffled = reinsert(&value, seed);
            prop_assert_eq!(&shuffled, &value);
            prop_assert_eq!(fingerprint_of(&shuffled), fingerprint_of(&value));
        }

        #[test]
        fn canonical_text_parses_back_to_the_same_value(value in json_value()) {
            let text = canonical_json(&value);
            let back: Value = serde_json::from_str(&text).unwrap();
            prop_assert_eq!(back, value);
        }

        #[test]
        fn strings_escape_like_serde_json(text in ".*") {
            prop_assert_eq!(canonical_json(&Value::String(text.clone())), serde_json::to_string(&text).unwrap());
        }

        #[test]
        fn split_strings_never_collide_with_their_concatenation(a in ".{0,8}", b in ".{0,8}") {
            let joined = format!("{a}{b}");
            prop_assert_ne!(fingerprint_of(&serde_json::json!([a, b])), fingerprint_of(&Value::String(joined)));
        }
    }
}

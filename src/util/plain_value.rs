//! JSON from clients (alert payloads, V3 request bodies, management API bodies) read into `serde_json::Value`s
//! exactly as it is spelled.
//!
//! svcgate builds serde_json with its `raw_value` feature (the V3 rewrite keeps member texts as `RawValue`s).
//! With it, serde_json's own `Value` reader treats an object whose first key is `$serde_json::private::RawValue`
//! as an embedded document: it parses that member's string as new JSON, with a fresh recursion limit, and puts
//! the result in the object's place. A client could so make a body mean something other than what it says, and
//! nest values past the parser's depth limit, one fresh limit per level of string. This reader is serde_json's
//! `Value` reader without that token: every key is a key.
//!
//! `raw_value` kept (2026-11-24): 304 µs CPU per V3 list against 1,236 over a `Value` tree (bench/RESULTS.md).

use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// A `Value` read without serde_json's `RawValue` token.
pub struct PlainValue(pub Value);

impl<'de> Deserialize<'de> for PlainValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(PlainVisitor).map(PlainValue)
    }
}

struct PlainVisitor;

impl<'de> Visitor<'de> for PlainVisitor {
    type Value = Value;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("any valid JSON value")
    }

    fn visit_bool<E>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    fn visit_f64<E>(self, value: f64) -> Result<Value, E> {
        Ok(Number::from_f64(value).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, value: &str) -> Result<Value, E> {
        Ok(Value::String(value.to_owned()))
    }

    fn visit_string<E>(self, value: String) -> Result<Value, E> {
        Ok(Value::String(value))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        PlainValue::deserialize(deserializer).map(|PlainValue(value)| value)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(PlainValue(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut members = Map::new();
        // A repeated key keeps its first place and its last value, as serde_json's reader does.
        while let Some((key, PlainValue(value))) = map.next_entry::<String, PlainValue>()? {
            members.insert(key, value);
        }
        Ok(Value::Object(members))
    }
}

/// Reads `text` as one JSON value.
pub fn from_str(text: &str) -> serde_json::Result<Value> {
    serde_json::from_str::<PlainValue>(text).map(|PlainValue(value)| value)
}

/// Reads `bytes` as one JSON value.
pub fn from_slice(bytes: &[u8]) -> serde_json::Result<Value> {
    serde_json::from_slice::<PlainValue>(bytes).map(|PlainValue(value)| value)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    const TOKEN: &str = "$serde_json::private::RawValue";

    #[test]
    fn the_raw_value_token_is_a_key_like_any_other() {
        let text = format!(r#"{{"{TOKEN}":"{{\"title\":\"x\"}}","n":1}}"#);
        let value = from_str(&text).unwrap();
        assert_eq!(value[TOKEN], r#"{"title":"x"}"#);
        assert_eq!(value["n"], 1);
        // serde_json's own reader would have read the string as the document.
        assert!(serde_json::from_str::<Value>(&text).is_err());
    }

    #[test]
    fn values_read_as_serde_json_reads_them() {
        let texts = [
            r#"{"a":[1,-2,3.5,1e300,18446744073709551615,null,true,"s\u00e9"],"b":{},"a":{"c":[]}}"#,
            r#"[]"#,
            r#""text""#,
            r#"-0"#,
        ];
        for text in texts {
            assert_eq!(
                from_str(text).unwrap(),
                serde_json::from_str::<Value>(text).unwrap()
            );
            assert_eq!(
                from_slice(text.as_bytes()).unwrap(),
                serde_json::from_slice::<Value>(text.as_bytes()).unwrap()
            );
        }
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert_eq!(
            from_str(&deep).unwrap_err().to_string(),
            serde_json::from_str::<Value>(&deep).unwrap_err().to_string()
        );
    }
}

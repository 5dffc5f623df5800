//! A generic payload's top-level members, read without building a `serde_json::Value` for all of it.
//!
//! Normalizing a generic payload without a custom mapping reads only the values under the attributes' default
//! keys. Building the whole payload as a `Value` first (every key a `String` hashed into a map, every value
//! allocated, all of it dropped again) was the largest part of the intake's own work per alert. Here the same
//! serde_json parser reads and checks every byte, with the same errors, positions and recursion limit, but only
//! the attributes' values become `Value`s; the other members are only measured for how deep they nest, so the
//! depth limit holds exactly as for the whole `Value` (see [`super::payload::parse_json`]). One difference, on
//! purpose: when a key appears twice, the whole `Value` keeps the last value only, so an earlier value nested
//! too deep went unnoticed; here every value counts, as the stored text holds them all.

use std::fmt;

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;

use super::normalized::Attribute;
use super::payload::{json_error, nesting_depth, PayloadError, PARSER_MAX_DEPTH};
use crate::util::plain_value::PlainValue;

/// The values under the attributes' default keys, indexed by `Attribute as usize`; the last duplicate wins.
pub type ByKey = [Option<Value>; Attribute::ALL.len()];

/// Reads `text`'s top-level members, refusing JSON errors and nesting deeper than `max_depth` as
/// [`super::payload::parse_json`] does. Answers the attributes' values of an object, or `None` for valid JSON of
/// another type, which the caller reads whole to say what it is.
pub fn read(text: &str, max_depth: usize) -> Result<Option<ByKey>, PayloadError> {
    let limit = max_depth.min(PARSER_MAX_DEPTH);
    match serde_json::from_str::<Top>(text) {
        Err(error) => Err(json_error(&error, limit)),
        Ok(Top(None)) => Ok(None),
        // The object itself is one level.
        Ok(Top(Some(object))) if 1 + object.depth > limit => Err(PayloadError::TooDeep { limit }),
        Ok(Top(Some(object))) => Ok(Some(object.by_key)),
    }
}

/// The top level of a payload: an object, or `None` for anything else (read and checked all the same).
struct Top(Option<Object>);

/// A top-level object: its attributes' values, and how deep its members' values nest.
struct Object {
    by_key: ByKey,
    depth: usize,
}

impl<'de> Deserialize<'de> for Top {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(TopVisitor)
    }
}

struct TopVisitor;

impl<'de> Visitor<'de> for TopVisitor {
    type Value = Top;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Top, A::Error> {
        let mut by_key: ByKey = Default::default();
        let mut depth = 0;
        while let Some(Key(attribute)) = map.next_key()? {
            match attribute {
                Some(attribute) => {
                    let PlainValue(value) = map.next_value()?;
                    depth = depth.max(nesting_depth(&value));
                    by_key[attribute as usize] = Some(value);
                }
                None => {
                    let Depth(nested) = map.next_value()?;
                    depth = depth.max(nested);
                }
            }
        }
        Ok(Top(Some(Object { by_key, depth })))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Top, A::Error> {
        // Read as `Depth`, not `IgnoredAny`: serde_json skips ignored values by another path, which places some
        // errors (a control character in a string) elsewhere than reading the value does.
        while seq.next_element::<Depth>()?.is_some() {}
        Ok(Top(None))
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Top, E> {
        Ok(Top(None))
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Top, E> {
        Ok(Top(None))
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Top, E> {
        Ok(Top(None))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Top, E> {
        Ok(Top(None))
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Top, E> {
        Ok(Top(None))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Top, E> {
        Ok(Top(None))
    }
}

/// A member's key: the attribute it names, if any. Read without allocating.
struct Key(Option<Attribute>);

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_str(KeyVisitor)
    }
}

struct KeyVisitor;

impl Visitor<'_> for KeyVisitor {
    type Value = Key;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a key")
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<Key, E> {
        Ok(Key(Attribute::from_key(key)))
    }
}

/// How many levels of arrays and objects a value nests (a scalar: 0), as `payload::nesting_depth` counts them.
struct Depth(usize);

impl<'de> Deserialize<'de> for Depth {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(DepthVisitor)
    }
}

struct DepthVisitor;

impl<'de> Visitor<'de> for DepthVisitor {
    type Value = Depth;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a JSON value")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Depth, A::Error> {
        let mut deepest = 0;
        while let Some(Depth(depth)) = seq.next_element()? {
            deepest = deepest.max(depth);
        }
        Ok(Depth(1 + deepest))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Depth, A::Error> {
        let mut deepest = 0;
        // Keys may be `IgnoredAny`: serde_json reads every key as a string, whatever the type asks.
        while let Some((IgnoredAny, Depth(depth))) = map.next_entry()? {
            deepest = deepest.max(depth);
        }
        Ok(Depth(1 + deepest))
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Depth, E> {
        Ok(Depth(0))
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Depth, E> {
        Ok(Depth(0))
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Depth, E> {
        Ok(Depth(0))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Depth, E> {
        Ok(Depth(0))
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Depth, E> {
        Ok(Depth(0))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Depth, E> {
        Ok(Depth(0))
    }
}

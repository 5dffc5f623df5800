//! Borrowed JSON objects: a V4 answer read as its members' names and raw value texts, without a value tree.
//!
//! Reshaping a V4 list into V3 keeps most values as they are and drops the rest, so parsing every string and
//! number into a [`serde_json::Value`] and serialising it again is wasted work. A [`RawObject`] keeps each member's
//! value as the slice of the answer it came from ([`RawValue`]); [`Shapes`](super::shape::Shapes) copies the
//! slices it keeps and parses only what it converts.

use std::borrow::Cow;
use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// A JSON object's members in document order, their values unparsed.
#[derive(Debug, Default)]
pub struct RawObject<'a> {
    members: Vec<(Cow<'a, str>, &'a RawValue)>,
}

impl<'a> RawObject<'a> {
    /// The raw value of member `name`; the last one when the name repeats (as a parser keeping one would).
    pub fn get(&self, name: &str) -> Option<&'a RawValue> {
        // Lengths and first bytes rule out almost every member before a full comparison.
        let wanted = name.as_bytes();
        self.members
            .iter()
            .rev()
            .find(|(member, _)| {
                let member = member.as_bytes();
                member.len() == wanted.len() && member.first() == wanted.first() && member == wanted
            })
            .map(|(_, value)| *value)
    }

    /// Member `name` parsed into a value.
    pub fn value(&self, name: &str) -> Option<Value> {
        self.get(name)
            .and_then(|raw| serde_json::from_str(raw.get()).ok())
    }

    /// The object as a value tree (for the rare path that needs one).
    pub fn to_map(&self) -> Map<String, Value> {
        self.members
            .iter()
            .map(|(name, raw)| {
                let value = serde_json::from_str(raw.get()).unwrap_or(Value::Null);
                (name.clone().into_owned(), value)
            })
            .collect()
    }

    /// Member `name` as an unsigned integer.
    pub fn number(&self, name: &str) -> Option<u64> {
        self.get(name).and_then(|raw| raw.get().parse().ok())
    }
}

/// Whether a raw value is JSON `null`.
pub fn is_null(raw: &RawValue) -> bool {
    raw.get() == "null"
}

/// A member name, borrowed from the input unless it holds escapes.
struct Name<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Name<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct NameVisitor;
        impl<'de> Visitor<'de> for NameVisitor {
            type Value = Name<'de>;
            fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
                formatter.write_str("a member name")
            }
            fn visit_borrowed_str<E>(self, text: &'de str) -> Result<Self::Value, E> {
                Ok(Name(Cow::Borrowed(text)))
            }
            fn visit_str<E>(self, text: &str) -> Result<Self::Value, E> {
                Ok(Name(Cow::Owned(text.to_owned())))
            }
        }
        deserializer.deserialize_str(NameVisitor)
    }
}

impl<'de> Deserialize<'de> for RawObject<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ObjectVisitor;
        impl<'de> Visitor<'de> for ObjectVisitor {
            type Value = RawObject<'de>;
            fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
                formatter.write_str("a JSON object")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
                // V4 issues and merge requests have about 40 members.
                let mut members = Vec::with_capacity(map.size_hint().unwrap_or(48));
                while let Some((Name(name), value)) = map.next_entry::<Name<'de>, &'de RawValue>()? {
                    members.push((name, value));
                }
                Ok(RawObject { members })
            }
        }
        deserializer.deserialize_map(ObjectVisitor)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn members_keep_their_text_and_the_last_repeat_wins() {
        let text = r#"{"id": 1.50, "name": "a\"b", "n\u0061me": "second", "nested": {"x": [1, 2]}}"#;
        let object: RawObject = serde_json::from_str(text).unwrap();
        assert_eq!(object.get("id").unwrap().get(), "1.50");
        assert_eq!(object.get("name").unwrap().get(), r#""second""#);
        assert_eq!(object.get("nested").unwrap().get(), r#"{"x": [1, 2]}"#);
        assert_eq!(object.value("nested").unwrap()["x"][1], 2);
        assert!(object.get("missing").is_none());
    }

    #[test]
    fn a_list_of_objects_reads_in_one_pass_and_non_objects_are_refused() {
        let list: Vec<RawObject> = serde_json::from_str(r#"[{"iid": 7}, {"iid": 8, "x": null}]"#).unwrap();
        assert_eq!(list[1].number("iid"), Some(8));
        assert!(is_null(list[1].get("x").unwrap()));
        assert!(serde_json::from_str::<Vec<RawObject>>("[1]").is_err());
    }
}

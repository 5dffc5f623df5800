//! Borrowed JSON objects: a V4 answer read as its members' names and raw value texts, without a value tree.
//!
//! Reshaping a V4 list into V3 keeps most values as they are and drops the rest, so parsing every string and
//! number into a [`serde_json::Value`] and serialising it again is wasted work. A [`RawObject`] keeps each member's
//! value as the slice of the answer it came from ([`RawValue`]); the reshaping (`shape.rs`, which uses this module)
//! copies the slices it keeps and parses only what it converts.

use std::borrow::Cow;
use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// A JSON object's members in document order, their values unparsed.
#[derive(Debug, Default)]
pub struct RawObject<'a> {
    members: Vec<(Cow<'a, str>, &'a RawValue)>,
    /// No member name repeats, so a name found at a position is the only one of that name.
    unique: bool,
}

impl<'a> RawObject<'a> {
    /// The raw value of member `name`; the last one when the name repeats (as a parser keeping one would).
    pub fn get(&self, name: &str) -> Option<&'a RawValue> {
        self.position_of(name).map(|position| self.members[position].1)
    }

    /// Where the last member called `name` is.
    fn position_of(&self, name: &str) -> Option<usize> {
        // Lengths and first bytes rule out almost every member before a full comparison.
        let wanted = name.as_bytes();
        self.members.iter().rposition(|(member, _)| {
            let member = member.as_bytes();
            member.len() == wanted.len() && member.first() == wanted.first() && member == wanted
        })
    }

    /// [`RawObject::get`], looking first at position `hint` and leaving there the position it found `name` at.
    ///
    /// The items of a V4 list have their members in the same order, so a hint carried from one item to the next
    /// finds each member at once instead of comparing it with every name.
    pub fn get_hinted(&self, name: &str, hint: &mut usize) -> Option<&'a RawValue> {
        if self.unique {
            if let Some((member, value)) = self.members.get(*hint) {
                if member == name {
                    return Some(*value);
                }
            }
        }
        let position = self.position_of(name)?;
        *hint = position;
        Some(self.members[position].1)
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

/// One of 256 buckets for a member name, from its length and its first and last bytes.
fn name_bucket(name: &[u8]) -> usize {
    let first = usize::from(name.first().copied().unwrap_or(0));
    let last = usize::from(name.last().copied().unwrap_or(0));
    (name.len().wrapping_mul(37) ^ first.wrapping_mul(7) ^ last.wrapping_mul(13)) % 256
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
                let mut members: Vec<(Cow<'de, str>, &'de RawValue)> =
                    Vec::with_capacity(map.size_hint().unwrap_or(48));
                // Names seen, by a 256-way bucket of their length and end bytes: only a name whose bucket is taken
                // is compared with the earlier ones.
                let mut seen = [0u64; 4];
                let mut unique = true;
                while let Some((Name(name), value)) = map.next_entry::<Name<'de>, &'de RawValue>()? {
                    if unique {
                        let bucket = name_bucket(name.as_bytes());
                        let bit = 1u64 << (bucket % 64);
                        let word = &mut seen[bucket / 64];
                        if *word & bit != 0 && members.iter().any(|(earlier, _)| *earlier == name) {
                            unique = false;
                        }
                        *word |= bit;
                    }
                    members.push((name, value));
                }
                Ok(RawObject { members, unique })
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
    fn a_hinted_lookup_finds_what_a_plain_one_finds_whatever_the_hint() {
        let texts = [
            r#"{"a": 1, "b": 2, "c": 3}"#,
            r#"{"c": 3, "a": 1, "b": 2}"#,
            r#"{"a": 1, "b": 2, "a": 4}"#,
            r#"{"b": 2, "\u0061": 5, "a": 6}"#,
            r#"{}"#,
        ];
        for text in texts {
            let object: RawObject = serde_json::from_str(text).unwrap();
            for name in ["a", "b", "c", "d"] {
                for start in 0..5 {
                    let mut hint = start;
                    let hinted = object.get_hinted(name, &mut hint).map(RawValue::get);
                    assert_eq!(
                        hinted,
                        object.get(name).map(RawValue::get),
                        "{text} {name} from {start}"
                    );
                }
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn a_hinted_lookup_agrees_with_a_plain_one_for_any_names_and_hints(
            names in proptest::collection::vec("[a-c]{0,2}|id|iid", 0..12),
            wanted in "[a-c]{0,2}|id|iid",
            hints in proptest::collection::vec(0usize..14, 1..4),
        ) {
            let members: Vec<String> = names
                .iter()
                .enumerate()
                .map(|(index, name)| format!("{}: {index}", serde_json::to_string(name).unwrap()))
                .collect();
            let text = format!("{{{}}}", members.join(", "));
            let object: RawObject = serde_json::from_str(&text).unwrap();
            let expected = object.get(&wanted).map(RawValue::get);
            for start in hints {
                let mut hint = start;
                proptest::prop_assert_eq!(object.get_hinted(&wanted, &mut hint).map(RawValue::get), expected);
                // The hint left behind finds it again.
                proptest::prop_assert_eq!(object.get_hinted(&wanted, &mut hint).map(RawValue::get), expected);
            }
        }
    }

    #[test]
    fn a_list_of_objects_reads_in_one_pass_and_non_objects_are_refused() {
        let list: Vec<RawObject> = serde_json::from_str(r#"[{"iid": 7}, {"iid": 8, "x": null}]"#).unwrap();
        assert_eq!(list[1].number("iid"), Some(8));
        assert!(is_null(list[1].get("x").unwrap()));
        assert!(serde_json::from_str::<Vec<RawObject>>("[1]").is_err());
    }
}

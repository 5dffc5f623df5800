//! Custom attribute mappings of an HTTP Endpoint (contract `alerts.md` section 6): for some attributes, the path
//! of the sender's payload to read them from, validated when the mapping is saved, and the path operations that
//! reading and grouping use.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::normalized::{type_name, Attribute};

impl Attribute {
    /// The mapping types this attribute accepts. Times may also be mapped as `string` (a string holding a time);
    /// `hosts` and `fingerprint` as a single string or an array.
    pub fn allowed_types(self) -> &'static [MappingType] {
        match self {
            Attribute::StartTime | Attribute::EndTime => &[MappingType::Datetime, MappingType::String],
            Attribute::Hosts | Attribute::Fingerprint => &[MappingType::String, MappingType::Array],
            _ => &[MappingType::String],
        }
    }
}

/// The declared type of a mapped value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MappingType {
    /// `string`.
    String,
    /// `datetime`.
    Datetime,
    /// `array`.
    Array,
}

impl MappingType {
    /// The name used in `payload_attribute_mapping`.
    pub fn as_str(self) -> &'static str {
        match self {
            MappingType::String => "string",
            MappingType::Datetime => "datetime",
            MappingType::Array => "array",
        }
    }

    fn parse(text: &str) -> Option<MappingType> {
        [MappingType::String, MappingType::Datetime, MappingType::Array]
            .into_iter()
            .find(|t| t.as_str() == text)
    }
}

/// One step of a path into a payload.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PathSegment {
    /// An object key.
    Key(String),
    /// A 0-based array index.
    Index(usize),
}

impl From<&PathSegment> for Value {
    fn from(segment: &PathSegment) -> Value {
        match segment {
            PathSegment::Key(key) => Value::String(key.clone()),
            PathSegment::Index(index) => Value::from(*index),
        }
    }
}

/// Where one attribute is read from, and as what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MappedPath {
    /// Keys and indexes from the payload's root; never empty.
    pub path: Vec<PathSegment>,
    /// The declared type, one of the attribute's [`Attribute::allowed_types`].
    pub kind: MappingType,
}

/// A custom mapping of an HTTP Endpoint (section 6): for some attributes, the path of the sender's payload to read
/// them from. Reading applies the attribute's own rule to whatever value is found, so a sender whose value
/// changes type is still handled, with a warning, never rejected; the declared type is validated against the
/// attribute and kept for the settings page.
///
/// Deserialises from the JSON `payload_attribute_mapping` object, e.g.
/// `{"title": {"path": ["alert", "name"], "type": "string"}}`; a `null` entry means "not mapped".
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(try_from = "Map<String, Value>", into = "Map<String, Value>")]
pub struct AttributeMapping {
    entries: BTreeMap<Attribute, MappedPath>,
}

/// Why a `payload_attribute_mapping` is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MappingError {
    /// The mapping is not a JSON object.
    #[error("payload_attribute_mapping must be a JSON object")]
    NotAnObject,
    /// A key that is not a mappable attribute.
    #[error("'{0}' cannot be mapped; the attributes are {list}", list = attribute_list())]
    UnknownAttribute(String),
    /// An entry that is not an object.
    #[error("the mapping of {attribute} must be an object {{\"path\": [...], \"type\": \"...\"}}")]
    NotAnEntry {
        /// The attribute's key.
        attribute: &'static str,
    },
    /// An entry with a key other than `path` and `type`.
    #[error("the mapping of {attribute} has an unknown key '{key}'; only path and type are allowed")]
    UnknownEntryKey {
        /// The attribute's key.
        attribute: &'static str,
        /// The unknown key.
        key: String,
    },
    /// A missing, empty or malformed path.
    #[error("the path of {attribute} {reason}")]
    BadPath {
        /// The attribute's key.
        attribute: &'static str,
        /// What is wrong, as the end of a sentence.
        reason: String,
    },
    /// A missing type or one that is not `string`, `datetime` or `array`.
    #[error("the type of {attribute} must be one of string, datetime, array")]
    BadType {
        /// The attribute's key.
        attribute: &'static str,
    },
    /// A type the attribute does not accept.
    #[error("{attribute} cannot be mapped as {kind}; use {allowed}")]
    TypeNotAllowed {
        /// The attribute's key.
        attribute: &'static str,
        /// The refused type.
        kind: &'static str,
        /// The accepted types, `or`-separated.
        allowed: String,
    },
}

fn attribute_list() -> String {
    Attribute::ALL.map(Attribute::key).join(", ")
}

impl AttributeMapping {
    /// Validates a `payload_attribute_mapping` JSON value.
    pub fn from_json(value: &Value) -> Result<AttributeMapping, MappingError> {
        match value {
            Value::Object(map) => AttributeMapping::try_from(map.clone()),
            _ => Err(MappingError::NotAnObject),
        }
    }

    /// Where `attribute` is read from, if it is mapped.
    pub fn get(&self, attribute: Attribute) -> Option<&MappedPath> {
        self.entries.get(&attribute)
    }

    /// Maps `attribute`, checking the path is not empty and the type is one the attribute accepts.
    pub fn insert(&mut self, attribute: Attribute, mapped: MappedPath) -> Result<(), MappingError> {
        if mapped.path.is_empty() {
            return Err(bad_path(attribute, "must not be empty"));
        }
        check_type(attribute, mapped.kind)?;
        self.entries.insert(attribute, mapped);
        Ok(())
    }

    /// The mapped attributes, in the contract's order.
    pub fn iter(&self) -> impl Iterator<Item = (Attribute, &MappedPath)> {
        self.entries
            .iter()
            .map(|(attribute, mapped)| (*attribute, mapped))
    }

    /// Whether nothing is mapped.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

impl TryFrom<Map<String, Value>> for AttributeMapping {
    type Error = MappingError;

    fn try_from(map: Map<String, Value>) -> Result<Self, Self::Error> {
        let mut mapping = AttributeMapping::default();
        for (key, entry) in &map {
            let attribute =
                Attribute::from_key(key).ok_or_else(|| MappingError::UnknownAttribute(key.clone()))?;
            if let Some(mapped) = parse_entry(attribute, entry)? {
                mapping.insert(attribute, mapped)?;
            }
        }
        Ok(mapping)
    }
}

impl From<AttributeMapping> for Map<String, Value> {
    fn from(mapping: AttributeMapping) -> Self {
        let mut out = Map::new();
        for (attribute, mapped) in mapping.iter() {
            let mut entry = Map::new();
            entry.insert(
                "path".to_owned(),
                Value::Array(mapped.path.iter().map(Value::from).collect()),
            );
            entry.insert("type".to_owned(), Value::String(mapped.kind.as_str().to_owned()));
            out.insert(attribute.key().to_owned(), Value::Object(entry));
        }
        out
    }
}

fn parse_entry(attribute: Attribute, entry: &Value) -> Result<Option<MappedPath>, MappingError> {
    let entry = match entry {
        Value::Null => return Ok(None),
        Value::Object(entry) => entry,
        _ => {
            return Err(MappingError::NotAnEntry {
                attribute: attribute.key(),
            })
        }
    };
    if let Some(key) = entry.keys().find(|k| *k != "path" && *k != "type") {
        return Err(MappingError::UnknownEntryKey {
            attribute: attribute.key(),
            key: key.clone(),
        });
    }
    let path = parse_path(attribute, entry.get("path"))?;
    let kind = entry
        .get("type")
        .and_then(Value::as_str)
        .and_then(MappingType::parse)
        .ok_or(MappingError::BadType {
            attribute: attribute.key(),
        })?;
    Ok(Some(MappedPath { path, kind }))
}

fn parse_path(attribute: Attribute, path: Option<&Value>) -> Result<Vec<PathSegment>, MappingError> {
    let items = match path {
        Some(Value::Array(items)) => items,
        Some(_) => return Err(bad_path(attribute, "must be an array of keys and indexes")),
        None => return Err(bad_path(attribute, "is missing")),
    };
    items
        .iter()
        .enumerate()
        .map(|(position, item)| match item {
            Value::String(key) => Ok(PathSegment::Key(key.clone())),
            Value::Number(n) => n
                .as_u64()
                .and_then(|i| usize::try_from(i).ok())
                .map(PathSegment::Index)
                .ok_or_else(|| bad_path(attribute, &format!("has {n} at {position}, not an array index"))),
            other => Err(bad_path(
                attribute,
                &format!("has {} at {position}, not a key or an index", type_name(other)),
            )),
        })
        .collect()
}

fn bad_path(attribute: Attribute, reason: &str) -> MappingError {
    MappingError::BadPath {
        attribute: attribute.key(),
        reason: reason.to_owned(),
    }
}

fn check_type(attribute: Attribute, kind: MappingType) -> Result<(), MappingError> {
    let allowed = attribute.allowed_types();
    if allowed.contains(&kind) {
        return Ok(());
    }
    Err(MappingError::TypeNotAllowed {
        attribute: attribute.key(),
        kind: kind.as_str(),
        allowed: allowed
            .iter()
            .map(|t| t.as_str())
            .collect::<Vec<_>>()
            .join(" or "),
    })
}

/// The value at `path` inside `root`: keys step into objects, indexes into arrays.
pub fn value_at<'a>(root: &'a Value, path: &[PathSegment]) -> Option<&'a Value> {
    path.iter().try_fold(root, |node, segment| match (segment, node) {
        (PathSegment::Key(key), Value::Object(map)) => map.get(key),
        (PathSegment::Index(index), Value::Array(items)) => items.get(*index),
        _ => None,
    })
}

/// Takes the value at `path` out of `root` for grouping: an object key is removed, an array element becomes
/// `null` so that the other indexes keep their meaning, and trailing `null`s are dropped so that an array that
/// only gains the element on a recovery (`[start]` then `[start, end]`) groups with its firing form.
pub(super) fn blank_at(root: &mut Value, path: &[PathSegment]) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let parent = parents
        .iter()
        .try_fold(root, |node, segment| match (segment, node) {
            (PathSegment::Key(key), Value::Object(map)) => map.get_mut(key),
            (PathSegment::Index(index), Value::Array(items)) => items.get_mut(*index),
            _ => None,
        });
    match (last, parent) {
        (PathSegment::Key(key), Some(Value::Object(map))) => {
            map.shift_remove(key);
        }
        (PathSegment::Index(index), Some(Value::Array(items))) => {
            if let Some(item) = items.get_mut(*index) {
                *item = Value::Null;
            }
            while items.last().is_some_and(Value::is_null) {
                items.pop();
            }
        }
        _ => {}
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::alerts::normalized::*;
    use serde_json::json;
    use serde_json::Value;

    #[test]
    fn mapping_deserialises_and_round_trips() {
        let json = json!({
            "title": {"path": ["alert", "name"], "type": "string"},
            "start_time": {"path": ["alert", "times", 0], "type": "datetime"},
            "hosts": {"path": ["targets"], "type": "array"},
            "fingerprint": {"path": ["id"], "type": "string"},
            "severity": null
        });
        let mapping: AttributeMapping = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(mapping, AttributeMapping::from_json(&json).unwrap());
        assert_eq!(
            mapping.get(Attribute::StartTime),
            Some(&MappedPath {
                path: vec![
                    PathSegment::Key("alert".into()),
                    PathSegment::Key("times".into()),
                    PathSegment::Index(0)
                ],
                kind: MappingType::Datetime,
            })
        );
        assert_eq!(mapping.get(Attribute::Severity), None);
        assert_eq!(mapping.iter().count(), 4);
        let back = serde_json::to_value(&mapping).unwrap();
        let again: AttributeMapping = serde_json::from_value(back).unwrap();
        assert_eq!(again, mapping);
        assert!(AttributeMapping::default().is_empty());
    }

    #[test]
    fn mapping_validation_errors() {
        let cases: Vec<(Value, MappingError)> = vec![
            (json!([]), MappingError::NotAnObject),
            (
                json!({"colour": {"path": ["c"], "type": "string"}}),
                MappingError::UnknownAttribute("colour".into()),
            ),
            (
                json!({"title": "name"}),
                MappingError::NotAnEntry { attribute: "title" },
            ),
            (
                json!({"title": {"path": ["a"], "type": "string", "default": "x"}}),
                MappingError::UnknownEntryKey {
                    attribute: "title",
                    key: "default".into(),
                },
            ),
            (
                json!({"title": {"type": "string"}}),
                MappingError::BadPath {
                    attribute: "title",
                    reason: "is missing".into(),
                },
            ),
            (
                json!({"title": {"path": [], "type": "string"}}),
                MappingError::BadPath {
                    attribute: "title",
                    reason: "must not be empty".into(),
                },
            ),
            (
                json!({"title": {"path": "a.b", "type": "string"}}),
                MappingError::BadPath {
                    attribute: "title",
                    reason: "must be an array of keys and indexes".into(),
                },
            ),
            (
                json!({"title": {"path": ["a", -1], "type": "string"}}),
                MappingError::BadPath {
                    attribute: "title",
                    reason: "has -1 at 1, not an array index".into(),
                },
            ),
            (
                json!({"title": {"path": ["a", 1.5], "type": "string"}}),
                MappingError::BadPath {
                    attribute: "title",
                    reason: "has 1.5 at 1, not an array index".into(),
                },
            ),
            (
                json!({"title": {"path": [{"k": 1}], "type": "string"}}),
                MappingError::BadPath {
                    attribute: "title",
                    reason: "has an object at 0, not a key or an index".into(),
                },
            ),
            (
                json!({"title": {"path": ["a"]}}),
                MappingError::BadType { attribute: "title" },
            ),
            (
                json!({"title": {"path": ["a"], "type": "number"}}),
                MappingError::BadType { attribute: "title" },
            ),
            (
                json!({"title": {"path": ["a"], "type": "array"}}),
                MappingError::TypeNotAllowed {
                    attribute: "title",
                    kind: "array",
                    allowed: "string".into(),
                },
            ),
            (
                json!({"end_time": {"path": ["a"], "type": "array"}}),
                MappingError::TypeNotAllowed {
                    attribute: "end_time",
                    kind: "array",
                    allowed: "datetime or string".into(),
                },
            ),
            (
                json!({"hosts": {"path": ["a"], "type": "datetime"}}),
                MappingError::TypeNotAllowed {
                    attribute: "hosts",
                    kind: "datetime",
                    allowed: "string or array".into(),
                },
            ),
        ];
        for (json, want) in cases {
            assert_eq!(
                AttributeMapping::from_json(&json),
                Err(want.clone()),
                "for {json}"
            );
            if json.is_object() {
                let via_serde = serde_json::from_value::<AttributeMapping>(json.clone()).unwrap_err();
                assert_eq!(via_serde.to_string(), want.to_string());
            }
        }
        let listed = MappingError::UnknownAttribute("colour".into()).to_string();
        assert!(listed.contains("svc_environment_name"), "{listed}");
    }

    #[test]
    fn mapping_insert_validates() {
        let mut mapping = AttributeMapping::default();
        let empty = MappedPath {
            path: vec![],
            kind: MappingType::String,
        };
        assert!(mapping.insert(Attribute::Title, empty).is_err());
        let wrong = MappedPath {
            path: vec![PathSegment::Index(0)],
            kind: MappingType::Datetime,
        };
        assert!(mapping.insert(Attribute::Service, wrong).is_err());
        let good = MappedPath {
            path: vec![PathSegment::Key("s".into())],
            kind: MappingType::String,
        };
        assert!(mapping.insert(Attribute::Service, good).is_ok());
        assert!(!mapping.is_empty());
    }

    #[test]
    fn attribute_keys_round_trip() {
        for attribute in Attribute::ALL {
            assert_eq!(Attribute::from_key(attribute.key()), Some(attribute));
            assert!(!attribute.allowed_types().is_empty());
        }
        assert_eq!(Attribute::from_key("environment"), None);
    }

    #[test]
    fn value_at_and_blank_at() {
        let root = json!({"a": [{"b": 1}, 2], "c": "x"});
        let path = |segments: &[PathSegment]| segments.to_vec();
        let key = |k: &str| PathSegment::Key(k.to_owned());
        let cases: Vec<(Vec<PathSegment>, Option<Value>)> = vec![
            (path(&[key("a"), PathSegment::Index(0), key("b")]), Some(json!(1))),
            (path(&[key("a"), PathSegment::Index(1)]), Some(json!(2))),
            (path(&[key("a"), PathSegment::Index(2)]), None),
            (path(&[key("a"), key("0")]), None),
            (path(&[key("c"), PathSegment::Index(0)]), None),
            (path(&[]), Some(root.clone())),
        ];
        for (p, want) in cases {
            assert_eq!(value_at(&root, &p).cloned(), want, "{p:?}");
        }
        let mut blanked = root.clone();
        blank_at(&mut blanked, &[key("a"), PathSegment::Index(0)]);
        blank_at(&mut blanked, &[key("c")]);
        blank_at(&mut blanked, &[key("missing"), key("deeper")]);
        assert_eq!(blanked, json!({"a": [null, 2]}));
    }
}

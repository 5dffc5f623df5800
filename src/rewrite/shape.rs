//! V3 entity shapes: which fields a V3 resource has, in order, and how each is computed from the V4 one.
//!
//! Shapes are data (`rules/entities.toml`); [`Shapes::apply`] is a pure function from a V4 JSON value to the V3
//! one. Strict mode emits exactly the V3 fields; tolerant mode keeps the V4 body and adds the V3 fields.
//! [`Shapes::write_raw`] is strict mode over a [`RawObject`], serialized with serde_json straight from the V4
//! member texts (copied as `RawValue`s, parsed only where converted or reshaped): the fast path of lists.
//! Borrowed reading kept (2026-11-24): 304 µs CPU per V3 list against 1,236 over a `Value` tree (bench/RESULTS.md).

use std::cell::RefCell;
use std::collections::HashMap;

use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::raw::{is_null, RawObject};

/// How V3 responses are shaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShapeMode {
    /// Exactly the V3 fields, in V3 names.
    Strict,
    /// The V3 fields added, the V4 fields kept.
    Tolerant,
}

/// A named conversion of a field's value on the way back to V3.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldConverter {
    /// `"private"`/`"internal"`/`"public"` → `0`/`10`/`20`.
    VisibilityLevel,
    /// `"public"` → `true`, anything else → `false`.
    VisibilityIsPublic,
}

impl FieldConverter {
    /// The converter a shape names.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "visibility_level" => Some(FieldConverter::VisibilityLevel),
            "visibility_is_public" => Some(FieldConverter::VisibilityIsPublic),
            _ => None,
        }
    }

    fn apply(self, value: &Value) -> Value {
        match self {
            FieldConverter::VisibilityLevel if value.is_array() => Value::Array(
                value
                    .as_array()
                    .map(|items| items.iter().map(|item| self.apply(item)).collect())
                    .unwrap_or_default(),
            ),
            FieldConverter::VisibilityLevel => match value.as_str() {
                Some("private") => Value::from(0),
                Some("internal") => Value::from(10),
                Some("public") => Value::from(20),
                _ => Value::Null,
            },
            FieldConverter::VisibilityIsPublic => Value::Bool(value.as_str() == Some("public")),
        }
    }
}

/// Where a V3 field's value comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// The V4 field of the same name.
    Same,
    /// Another V4 field, optionally converted.
    From(String, Option<FieldConverter>),
    /// A constant.
    Const(Value),
}

/// One V3 field.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// The V3 name.
    pub name: String,
    /// Where its value comes from.
    pub source: Source,
    /// Left out when the V4 source is absent (instead of `null`).
    pub optional: bool,
    /// A nested shape applied to the value (or to each item of an array value).
    pub entity: Option<String>,
}

/// A V3 entity shape.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Shape {
    /// The fields, in V3 order.
    pub fields: Vec<Field>,
}

/// Every shape, by name.
#[derive(Debug, Clone, Default)]
pub struct Shapes {
    /// Each name's place in `shapes`. Looked up once per answer and per object the general path reshapes, with
    /// names from the rule table: a fast hasher, not SipHash.
    index: HashMap<String, usize, foldhash::fast::RandomState>,
    /// The shapes, with what the raw writer needs of each prepared.
    shapes: Vec<PreparedShape>,
}

/// A shape with what the raw writer needs of it: nested shapes by index.
#[derive(Debug, Clone)]
struct PreparedShape {
    /// The shape itself.
    shape: Shape,
    /// Each field's nested shape, when it names one that exists.
    entities: Vec<Option<usize>>,
}

impl PreparedShape {
    fn new(shape: Shape, index: &HashMap<String, usize, foldhash::fast::RandomState>) -> Self {
        let entities = shape
            .fields
            .iter()
            .map(|field| {
                field
                    .entity
                    .as_ref()
                    .and_then(|entity| index.get(entity).copied())
            })
            .collect();
        PreparedShape { shape, entities }
    }
}

/// Where [`Shapes::write_raw`] found each field of each shape in the last object it wrote: the items of one list
/// share their member order, so the next item's members are found at once. One per answer.
#[derive(Debug, Default)]
pub struct MemberHints {
    /// Per shape, per field: a member position.
    positions: Vec<Vec<usize>>,
}

impl MemberHints {
    /// Takes out the positions of shape `index`, at least `fields` of them; [`MemberHints::put_back`] returns them.
    /// A shape nested in itself so starts its own.
    fn take(&mut self, index: usize, fields: usize) -> Vec<usize> {
        if self.positions.len() <= index {
            self.positions.resize_with(index + 1, Vec::new);
        }
        let mut positions = std::mem::take(&mut self.positions[index]);
        if positions.len() < fields {
            positions.resize(fields, 0);
        }
        positions
    }

    fn put_back(&mut self, index: usize, positions: Vec<usize>) {
        self.positions[index] = positions;
    }
}

impl Shapes {
    /// Builds the set from named shapes.
    pub fn new(shapes: HashMap<String, Shape>) -> Self {
        let named: Vec<(String, Shape)> = shapes.into_iter().collect();
        let index = named
            .iter()
            .enumerate()
            .map(|(position, (name, _))| (name.clone(), position))
            .collect();
        let shapes = named
            .into_iter()
            .map(|(_, shape)| PreparedShape::new(shape, &index))
            .collect();
        Shapes { index, shapes }
    }

    fn get(&self, name: &str) -> Option<&Shape> {
        self.index.get(name).map(|&position| &self.shapes[position].shape)
    }

    /// Whether a shape of this name exists.
    pub fn contains(&self, name: &str) -> bool {
        self.index.contains_key(name)
    }

    /// The V3 field names of a shape, in order.
    pub fn field_names(&self, name: &str) -> Vec<&str> {
        self.get(name)
            .map(|shape| shape.fields.iter().map(|field| field.name.as_str()).collect())
            .unwrap_or_default()
    }

    /// The V3 fields of a shape, in order (none for an unknown name).
    pub fn fields(&self, name: &str) -> &[Field] {
        self.get(name).map_or(&[], |shape| shape.fields.as_slice())
    }

    /// The shape names, sorted.
    pub fn names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.index.keys().map(String::as_str).collect();
        names.sort_unstable();
        names
    }

    /// Reshapes a V4 value (an object, or an array of objects) into the V3 entity `name`.
    pub fn apply(&self, name: &str, value: Value, mode: ShapeMode) -> Value {
        let Some(shape) = self.get(name) else {
            return value;
        };
        match value {
            Value::Array(items) => Value::Array(
                items
                    .into_iter()
                    .map(|item| self.apply_one(shape, item, mode))
                    .collect(),
            ),
            other => self.apply_one(shape, other, mode),
        }
    }

    fn apply_one(&self, shape: &Shape, value: Value, mode: ShapeMode) -> Value {
        let Value::Object(source) = value else {
            return value;
        };
        let mut out = match mode {
            ShapeMode::Strict => Map::with_capacity(shape.fields.len()),
            ShapeMode::Tolerant => source.clone(),
        };
        for field in &shape.fields {
            let computed = match &field.source {
                Source::Same => source.get(&field.name).cloned(),
                Source::From(from, None) => source.get(from).cloned(),
                Source::From(from, Some(converter)) => source.get(from).map(|value| converter.apply(value)),
                Source::Const(constant) => Some(constant.clone()),
            };
            let computed = match (computed, &field.entity) {
                (Some(value), Some(entity)) if !value.is_null() => Some(self.apply(entity, value, mode)),
                (computed, _) => computed,
            };
            match computed {
                Some(value) => {
                    out.insert(field.name.clone(), value);
                }
                None if field.optional => {}
                None => {
                    out.insert(field.name.clone(), Value::Null);
                }
            }
        }
        Value::Object(out)
    }
}

/// A V3 field's value found by the raw writer: a slice of the V4 text, or a computed value.
enum Found<'a> {
    Raw(&'a RawValue),
    Computed(Value),
    Given(&'a Value),
}

impl Shapes {
    /// Writes the strict V3 form of one V4 object to `out` as JSON text. `given` holds fields that take the
    /// place of the object's own (completions fetched per item); `hints` carries member positions from one
    /// object of an answer to the next. The same result as [`Shapes::apply`] in strict mode, without parsing the
    /// values it only copies.
    pub fn write_raw(
        &self,
        name: &str,
        object: &RawObject<'_>,
        given: &Map<String, Value>,
        hints: &mut MemberHints,
        out: &mut Vec<u8>,
    ) {
        let written = match self.index.get(name) {
            Some(&index) => {
                let cell = RefCell::new(std::mem::take(hints));
                let written = serde_json::to_writer(
                    &mut *out,
                    &Shaped {
                        shapes: self,
                        index,
                        object,
                        given,
                        hints: &cell,
                    },
                );
                *hints = cell.into_inner();
                written
            }
            None => {
                // No shape: the object as it came (members in order, the given fields in their place).
                let mut map = object.to_map();
                map.extend(given.iter().map(|(key, value)| (key.clone(), value.clone())));
                serde_json::to_writer(&mut *out, &map)
            }
        };
        // Writing into a Vec cannot fail, and neither can these values' serialization.
        drop(written);
    }

    /// A computed value in V3 form: reshaped when the field names an entity.
    fn computed(&self, entity: Option<&str>, value: Value) -> Value {
        match entity {
            Some(entity) if !value.is_null() => self.apply(entity, value, ShapeMode::Strict),
            _ => value,
        }
    }
}

/// One V4 object in the strict V3 form of the shape at `index`, serialized field by field.
struct Shaped<'s, 'o> {
    shapes: &'s Shapes,
    index: usize,
    object: &'s RawObject<'o>,
    given: &'s Map<String, Value>,
    hints: &'s RefCell<MemberHints>,
}

impl Serialize for Shaped<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let prepared = &self.shapes.shapes[self.index];
        let shape = &prepared.shape;
        let mut positions = self.hints.borrow_mut().take(self.index, shape.fields.len());
        let mut map = serializer.serialize_map(None)?;
        for (position, field) in shape.fields.iter().enumerate() {
            let hint = &mut positions[position];
            let mut lookup = |key: &str| match given_field(self.given, key) {
                Some(value) => Some(Found::Given(value)),
                None => self.object.get_hinted(key, hint).map(Found::Raw),
            };
            let found = match &field.source {
                Source::Same => lookup(&field.name),
                Source::From(from, None) => lookup(from),
                Source::From(from, Some(converter)) => lookup(from).map(|found| {
                    Found::Computed(match found {
                        Found::Raw(raw) => {
                            converter.apply(&serde_json::from_str(raw.get()).unwrap_or(Value::Null))
                        }
                        Found::Given(value) => converter.apply(value),
                        Found::Computed(value) => converter.apply(&value),
                    })
                }),
                Source::Const(constant) => Some(Found::Given(constant)),
            };
            if found.is_none() && field.optional {
                continue;
            }
            map.serialize_key(&field.name)?;
            let entity = field.entity.as_deref();
            match (found, prepared.entities[position]) {
                (None, _) => map.serialize_value(&Value::Null)?,
                (Some(Found::Raw(raw)), Some(index)) if !is_null(raw) => map.serialize_value(&RawEntity {
                    shapes: self.shapes,
                    index,
                    raw,
                    hints: self.hints,
                })?,
                (Some(Found::Raw(raw)), _) => map.serialize_value(raw)?,
                (Some(Found::Given(value)), _) => {
                    map.serialize_value(&self.shapes.computed(entity, value.clone()))?
                }
                (Some(Found::Computed(value)), _) => {
                    map.serialize_value(&self.shapes.computed(entity, value))?
                }
            }
        }
        self.hints.borrow_mut().put_back(self.index, positions);
        map.end()
    }
}

/// A nested entity from the V4 text: an object, or an array of them, in the shape at `index`; anything else as
/// it is.
struct RawEntity<'s> {
    shapes: &'s Shapes,
    index: usize,
    raw: &'s RawValue,
    hints: &'s RefCell<MemberHints>,
}

impl<'s> RawEntity<'s> {
    /// One object of the entity, in its shape.
    fn shaped<'a, 'o>(&'a self, object: &'a RawObject<'o>, given: &'a Map<String, Value>) -> Shaped<'a, 'o> {
        Shaped {
            shapes: self.shapes,
            index: self.index,
            object,
            given,
            hints: self.hints,
        }
    }
}

impl Serialize for RawEntity<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let text = self.raw.get();
        let empty = Map::new();
        if text.starts_with('{') {
            if let Ok(object) = serde_json::from_str::<RawObject>(text) {
                return self.shaped(&object, &empty).serialize(serializer);
            }
        } else if let Ok(items) = serde_json::from_str::<Vec<&RawValue>>(text) {
            let mut seq = serializer.serialize_seq(Some(items.len()))?;
            for item in items {
                match serde_json::from_str::<RawObject>(item.get()) {
                    Ok(object) => seq.serialize_element(&self.shaped(&object, &empty))?,
                    // Not an object (null, or anything else): as it is, like `apply` leaves it.
                    Err(_) => seq.serialize_element(item)?,
                }
            }
            return seq.end();
        }
        self.raw.serialize(serializer)
    }
}

/// A given field by name: most items are given one or two fields, fewer than hashing a name costs to look up.
fn given_field<'v>(given: &'v Map<String, Value>, key: &str) -> Option<&'v Value> {
    if given.len() <= 4 {
        given
            .iter()
            .find(|(name, _)| name.as_str() == key)
            .map(|(_, value)| value)
    } else {
        given.get(key)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn shapes() -> Shapes {
        let field = |name: &str, source: Source, optional: bool, entity: Option<&str>| Field {
            name: name.to_owned(),
            source,
            optional,
            entity: entity.map(str::to_owned),
        };
        let mut map = HashMap::new();
        map.insert(
            "thing".to_owned(),
            Shape {
                fields: vec![
                    field("id", Source::Same, false, None),
                    field(
                        "visibility_level",
                        Source::From("visibility".to_owned(), Some(FieldConverter::VisibilityLevel)),
                        false,
                        None,
                    ),
                    field("owner", Source::Same, true, None),
                    field("flag?", Source::Const(json!(false)), false, None),
                    field("missing", Source::Same, false, None),
                    field("child", Source::Same, true, Some("thing")),
                ],
            },
        );
        Shapes::new(map)
    }

    #[test]
    fn strict_mode_emits_exactly_the_v3_fields_in_order() {
        let v4 = json!({"visibility": "internal", "id": 3, "extra": 1, "child": {"id": 4, "visibility": "public"}});
        let v3 = shapes().apply("thing", v4, ShapeMode::Strict);
        assert_eq!(
            serde_json::to_string(&v3).unwrap(),
            r#"{"id":3,"visibility_level":10,"flag?":false,"missing":null,"child":{"id":4,"visibility_level":20,"flag?":false,"missing":null}}"#
        );
    }

    #[test]
    fn tolerant_mode_keeps_v4_fields_and_adds_v3_ones() {
        let v3 = shapes().apply(
            "thing",
            json!([{"id": 1, "visibility": "private", "extra": true}]),
            ShapeMode::Tolerant,
        );
        assert_eq!(v3[0]["extra"], json!(true));
        assert_eq!(v3[0]["visibility"], json!("private"));
        assert_eq!(v3[0]["visibility_level"], json!(0));
    }

    /// The raw writer's answer, parsed back.
    fn written(shapes: &Shapes, name: &str, v4: &Value, given: &Map<String, Value>) -> Value {
        let text = serde_json::to_string(v4).unwrap();
        let object: RawObject = serde_json::from_str(&text).unwrap();
        let mut out = Vec::new();
        shapes.write_raw(name, &object, given, &mut MemberHints::default(), &mut out);
        serde_json::from_slice(&out).unwrap()
    }

    #[test]
    fn the_raw_writer_keeps_order_nests_converts_and_lets_given_fields_win() {
        let v4 = json!({"visibility": "internal", "id": 3, "extra": 1, "child": [{"id": 4, "visibility": "public"}, null]});
        let mut given = Map::new();
        given.insert("id".to_owned(), json!(99));
        let text = serde_json::to_string(&v4).unwrap();
        let object: RawObject = serde_json::from_str(&text).unwrap();
        let mut out = Vec::new();
        shapes().write_raw("thing", &object, &given, &mut MemberHints::default(), &mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"{"id":99,"visibility_level":10,"flag?":false,"missing":null,"child":[{"id":4,"visibility_level":20,"flag?":false,"missing":null},null]}"#
        );
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            (-4_000i32..4_000).prop_map(|n| Value::from(f64::from(n) / 8.0)),
            ".{0,40}".prop_map(Value::String),
            prop_oneof![Just("private"), Just("internal"), Just("public")].prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                prop::collection::vec((key(), inner), 0..8)
                    .prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
            ]
        })
    }

    /// Mostly the keys the test shape reads, so that every source meets values of every type.
    fn key() -> impl Strategy<Value = String> {
        prop_oneof![
            prop_oneof![
                Just("id"),
                Just("visibility"),
                Just("owner"),
                Just("child"),
                Just("missing"),
                Just("flag?")
            ]
            .prop_map(str::to_owned),
            "[a-z\\\"é]{0,6}",
        ]
    }

    proptest! {
        #[test]
        fn the_raw_writer_answers_what_strict_apply_answers(
            pairs in prop::collection::vec((key(), json_value()), 0..10),
            given in prop::collection::vec((key(), json_value()), 0..2),
        ) {
            let v4: Map<String, Value> = pairs.into_iter().collect();
            let given: Map<String, Value> = given.into_iter().collect();
            let mut merged = v4.clone();
            merged.extend(given.clone());
            let expected = shapes().apply("thing", Value::Object(merged), ShapeMode::Strict);
            prop_assert_eq!(written(&shapes(), "thing", &Value::Object(v4), &given), expected);
        }
    }

    proptest! {
        #[test]
        fn a_list_written_with_shared_hints_answers_what_strict_apply_answers_item_by_item(
            items in prop::collection::vec(prop::collection::vec((key(), json_value()), 0..8), 1..5),
        ) {
            let shapes = shapes();
            let mut hints = MemberHints::default();
            let given = Map::new();
            for pairs in items {
                let v4: Map<String, Value> = pairs.into_iter().collect();
                let expected = shapes.apply("thing", Value::Object(v4.clone()), ShapeMode::Strict);
                let text = serde_json::to_string(&v4).unwrap();
                let object: RawObject = serde_json::from_str(&text).unwrap();
                let mut out = Vec::new();
                shapes.write_raw("thing", &object, &given, &mut hints, &mut out);
                prop_assert_eq!(serde_json::from_slice::<Value>(&out).unwrap(), expected);
            }
        }
    }

    /// A member name as JSON text, sometimes with its first character written as a `\u` escape (which svcgate
    /// reads as an owned name rather than a borrowed one).
    fn written_key(name: &str, escaped: bool) -> String {
        match name.chars().next() {
            Some(first) if escaped && u32::from(first) < 0x10000 => {
                let rest: String = serde_json::to_string(&name[first.len_utf8()..]).unwrap();
                format!("\"\\u{:04x}{}", u32::from(first), &rest[1..])
            }
            _ => serde_json::to_string(name).unwrap(),
        }
    }

    proptest! {
        #[test]
        fn repeated_and_escaped_member_names_and_many_given_fields_answer_what_strict_apply_answers(
            items in prop::collection::vec(
                prop::collection::vec((key(), any::<bool>(), json_value()), 0..10),
                1..4,
            ),
            given in prop::collection::vec((key(), json_value()), 0..7),
        ) {
            let shapes = shapes();
            let mut hints = MemberHints::default();
            let given: Map<String, Value> = given.into_iter().collect();
            for members in items {
                // Written by hand, so that names may repeat (the last one wins) and be escaped.
                let text = format!(
                    "{{{}}}",
                    members
                        .iter()
                        .map(|(name, escaped, value)| format!("{}:{}", written_key(name, *escaped), value))
                        .collect::<Vec<_>>()
                        .join(",")
                );
                let mut merged: Map<String, Value> = serde_json::from_str(&text).unwrap();
                merged.extend(given.clone());
                let expected = shapes.apply("thing", Value::Object(merged), ShapeMode::Strict);
                let object: RawObject = serde_json::from_str(&text).unwrap();
                let mut out = Vec::new();
                shapes.write_raw("thing", &object, &given, &mut hints, &mut out);
                prop_assert_eq!(serde_json::from_slice::<Value>(&out).unwrap(), expected);
            }
        }
    }

    #[test]
    fn unknown_shapes_and_non_objects_pass_unchanged() {
        assert_eq!(
            shapes().apply("nope", json!({"a": 1}), ShapeMode::Strict),
            json!({"a": 1})
        );
        assert_eq!(
            shapes().apply("thing", json!(true), ShapeMode::Strict),
            json!(true)
        );
    }
}

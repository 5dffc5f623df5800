//! V3 entity shapes: which fields a V3 resource has, in order, and how each is computed from the V4 one.
//!
//! Shapes are data (`rules/entities.toml`); [`Shapes::apply`] is a pure function from a V4 JSON value to the V3
//! one. Strict mode emits exactly the V3 fields; tolerant mode keeps the V4 body and adds the V3 fields.

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::config::ShapeMode;

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
    shapes: HashMap<String, Shape>,
}

impl Shapes {
    /// Builds the set from named shapes.
    pub fn new(shapes: HashMap<String, Shape>) -> Self {
        Shapes { shapes }
    }

    /// Whether a shape of this name exists.
    pub fn contains(&self, name: &str) -> bool {
        self.shapes.contains_key(name)
    }

    /// The V3 field names of a shape, in order.
    pub fn field_names(&self, name: &str) -> Vec<&str> {
        self.shapes
            .get(name)
            .map(|shape| shape.fields.iter().map(|field| field.name.as_str()).collect())
            .unwrap_or_default()
    }

    /// The shape names, sorted.
    pub fn names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.shapes.keys().map(String::as_str).collect();
        names.sort_unstable();
        names
    }

    /// Reshapes a V4 value (an object, or an array of objects) into the V3 entity `name`.
    pub fn apply(&self, name: &str, value: Value, mode: ShapeMode) -> Value {
        let Some(shape) = self.shapes.get(name) else {
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
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

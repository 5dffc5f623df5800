//! Request parameters merged from the query string and the body (JSON, form-encoded or multipart), with typed accessors
//! that turn bad input into the service's 400 errors. Rails-style names are understood: `labels[]=a` builds an
//! array, `actions[][file_path]=x` builds an array of objects, `hash[key]=v` builds an object.

use serde_json::{Map, Value};

use crate::error::ApiError;

/// All parameters of one request except the path parameters.
#[derive(Debug, Default, Clone)]
pub struct Params {
    map: Map<String, Value>,
}

impl Params {
    /// Parses the query string and the body; the body wins on a name clash.
    pub fn parse(query: Option<&str>, content_type: Option<&str>, body: &[u8]) -> Result<Params, ApiError> {
        let mut params = Params::default();
        if let Some(q) = query {
            params.merge_form(q.as_bytes());
        }
        let ct = content_type.unwrap_or("").to_ascii_lowercase();
        let trimmed = body.iter().position(|b| !b.is_ascii_whitespace());
        if trimmed.is_none() {
            return Ok(params);
        }
        if ct.starts_with("application/json")
            || (ct.is_empty() && body.get(trimmed.unwrap_or(0)) == Some(&b'{'))
        {
            let value: Value = serde_json::from_slice(body)
                .map_err(|_| ApiError::BadRequest("400 (Bad request) invalid JSON body".into()))?;
            match value {
                Value::Object(obj) => params.map.extend(obj),
                _ => {
                    return Err(ApiError::BadRequest(
                        "400 (Bad request) the JSON body must be an object".into(),
                    ))
                }
            }
        } else if ct.starts_with("multipart/form-data") {
            let parts = content_type
                .and_then(crate::multipart::boundary)
                .and_then(|b| crate::multipart::parse(body, &b))
                .ok_or_else(|| ApiError::BadRequest("400 (Bad request) invalid multipart body".into()))?;
            for (key, value) in parts {
                match value {
                    Value::String(s) => params.insert_form(&key, s),
                    other => {
                        params.map.insert(key, other);
                    }
                }
            }
        } else if ct.starts_with("application/x-www-form-urlencoded") || ct.is_empty() {
            params.merge_form(body);
        }
        Ok(params)
    }

    fn merge_form(&mut self, raw: &[u8]) {
        for (key, value) in form_urlencoded::parse(raw) {
            self.insert_form(&key, value.into_owned());
        }
    }

    fn insert_form(&mut self, key: &str, value: String) {
        if let Some(base) = key.strip_suffix("[]") {
            if !base.contains('[') {
                let entry = self
                    .map
                    .entry(base.to_string())
                    .or_insert_with(|| Value::Array(Vec::new()));
                if !entry.is_array() {
                    *entry = Value::Array(Vec::new());
                }
                if let Value::Array(list) = entry {
                    list.push(Value::String(value));
                }
                return;
            }
        }
        if let Some((base, rest)) = key.split_once("[][") {
            if let Some(field) = rest.strip_suffix(']') {
                let entry = self
                    .map
                    .entry(base.to_string())
                    .or_insert_with(|| Value::Array(Vec::new()));
                if !entry.is_array() {
                    *entry = Value::Array(Vec::new());
                }
                if let Value::Array(list) = entry {
                    let start_new = match list.last() {
                        Some(Value::Object(obj)) => obj.contains_key(field),
                        _ => true,
                    };
                    if start_new {
                        list.push(Value::Object(Map::new()));
                    }
                    if let Some(Value::Object(obj)) = list.last_mut() {
                        obj.insert(field.to_string(), Value::String(value));
                    }
                }
                return;
            }
        }
        // Rack reads `hash[key][]=v` as an array under `key` of the object `hash`.
        if let Some((base, rest)) = key.split_once('[') {
            if let Some(field) = rest.strip_suffix("][]").filter(|f| !f.contains(['[', ']'])) {
                let entry = self
                    .map
                    .entry(base.to_string())
                    .or_insert_with(|| Value::Object(Map::new()));
                if !entry.is_object() {
                    *entry = Value::Object(Map::new());
                }
                if let Value::Object(obj) = entry {
                    let list = obj
                        .entry(field.to_string())
                        .or_insert_with(|| Value::Array(Vec::new()));
                    if !list.is_array() {
                        *list = Value::Array(Vec::new());
                    }
                    if let Value::Array(list) = list {
                        list.push(Value::String(value));
                    }
                }
                return;
            }
        }
        if let Some((base, rest)) = key.split_once('[') {
            if let Some(field) = rest.strip_suffix(']') {
                let entry = self
                    .map
                    .entry(base.to_string())
                    .or_insert_with(|| Value::Object(Map::new()));
                if !entry.is_object() {
                    *entry = Value::Object(Map::new());
                }
                if let Value::Object(obj) = entry {
                    obj.insert(field.to_string(), Value::String(value));
                }
                return;
            }
        }
        self.map.insert(key.to_string(), Value::String(value));
    }

    /// The raw value, `None` when absent or null.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.map.get(name).filter(|v| !v.is_null())
    }

    /// The names of every parameter sent.
    pub fn names(&self) -> Vec<String> {
        self.map.keys().cloned().collect()
    }

    /// Whether the parameter was sent at all (even as null).
    pub fn has(&self, name: &str) -> bool {
        self.map.contains_key(name)
    }

    /// A scalar as a string.
    pub fn str(&self, name: &str) -> Option<String> {
        match self.get(name)? {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            Value::Bool(b) => Some(b.to_string()),
            _ => None,
        }
    }

    /// A required string; missing gives `400 "name" not given`.
    pub fn required_str(&self, name: &str) -> Result<String, ApiError> {
        self.str(name).ok_or_else(|| ApiError::Missing(name.to_string()))
    }

    /// A required, non-blank string: absent is a parameter error (`name is missing`), blank fails the model's
    /// validation (`{"message": {"name": ["can't be blank"]}}`), as on the service.
    pub fn required_nonblank(&self, name: &str) -> Result<String, ApiError> {
        match self.str(name) {
            Some(s) if !s.trim().is_empty() => Ok(s),
            Some(_) => Err(ApiError::validation(name, "can't be blank")),
            None => Err(ApiError::Missing(name.to_string())),
        }
    }

    /// A boolean coerced as V4's Grape `Boolean` parameters are (dry-types `Params::Bool`): JSON true/false, 1/0,
    /// or exactly one of the strings in [`TRUE_WORDS`] and [`FALSE_WORDS`] (so `y` is true and `tRUE` is refused).
    pub fn bool(&self, name: &str) -> Result<Option<bool>, ApiError> {
        let Some(value) = self.get(name) else {
            return Ok(None);
        };
        let parsed = match value {
            Value::Bool(b) => Some(*b),
            Value::Number(n) => match n.as_i64() {
                Some(1) => Some(true),
                Some(0) => Some(false),
                _ => None,
            },
            Value::String(s) if TRUE_WORDS.contains(&s.as_str()) => Some(true),
            Value::String(s) if FALSE_WORDS.contains(&s.as_str()) => Some(false),
            _ => None,
        };
        parsed
            .map(Some)
            .ok_or_else(|| ApiError::Invalid(name.to_string()))
    }

    /// A boolean with a default.
    pub fn flag(&self, name: &str, default: bool) -> Result<bool, ApiError> {
        Ok(self.bool(name)?.unwrap_or(default))
    }

    /// A non-negative integer.
    pub fn u64(&self, name: &str) -> Result<Option<u64>, ApiError> {
        let Some(value) = self.get(name) else {
            return Ok(None);
        };
        let parsed = match value {
            Value::Number(n) => n.as_u64(),
            Value::String(s) => s.trim().parse().ok(),
            _ => None,
        };
        parsed
            .map(Some)
            .ok_or_else(|| ApiError::Invalid(name.to_string()))
    }

    /// Grape's `at_least_one_of`: 400 `{"error": "a, b are missing, at least one parameter must be provided"}`
    /// unless one of `names` was sent.
    pub fn at_least_one_of(&self, names: &[&str]) -> Result<(), ApiError> {
        if names.iter().any(|n| self.has(n)) {
            return Ok(());
        }
        Err(ApiError::Param(format!(
            "{} are missing, at least one parameter must be provided",
            names.join(", ")
        )))
    }

    /// A required non-negative integer.
    pub fn required_u64(&self, name: &str) -> Result<u64, ApiError> {
        self.u64(name)?.ok_or_else(|| ApiError::Missing(name.to_string()))
    }

    /// A list of strings: a JSON array, `name[]` values, or a comma-separated string.
    pub fn list(&self, name: &str) -> Option<Vec<String>> {
        let items = match self.get(name)? {
            Value::Array(items) => items
                .iter()
                .filter_map(|v| match v {
                    Value::String(s) => Some(s.clone()),
                    Value::Number(n) => Some(n.to_string()),
                    _ => None,
                })
                .flat_map(|s| split_commas(&s))
                .collect(),
            Value::String(s) => split_commas(s),
            Value::Number(n) => vec![n.to_string()],
            _ => Vec::new(),
        };
        Some(items)
    }

    /// A list of integers (array, `name[]` or comma-separated).
    pub fn u64_list(&self, name: &str) -> Result<Option<Vec<u64>>, ApiError> {
        let Some(items) = self.list(name) else {
            return Ok(None);
        };
        items
            .iter()
            .map(|s| s.trim().parse().map_err(|_| ApiError::Invalid(name.to_string())))
            .collect::<Result<Vec<u64>, _>>()
            .map(Some)
    }

    /// An array of objects (e.g. commit `actions`).
    pub fn objects(&self, name: &str) -> Option<Vec<Map<String, Value>>> {
        match self.get(name)? {
            Value::Array(items) => Some(items.iter().filter_map(|v| v.as_object().cloned()).collect()),
            Value::Object(obj) => Some(obj.values().filter_map(|v| v.as_object().cloned()).collect()),
            _ => None,
        }
    }
}

/// The strings V4 takes as true for a `Boolean` parameter (dry-types `Coercions::Params::TRUE_VALUES`, which
/// Grape's `PrimitiveCoercer` uses for `Boolean`); the match is exact.
pub const TRUE_WORDS: [&str; 14] = [
    "1", "on", "On", "ON", "t", "true", "True", "TRUE", "T", "y", "yes", "Yes", "YES", "Y",
];

/// The strings V4 takes as false for a `Boolean` parameter (dry-types `Coercions::Params::FALSE_VALUES`).
pub const FALSE_WORDS: [&str; 14] = [
    "0", "off", "Off", "OFF", "f", "false", "False", "FALSE", "F", "n", "no", "No", "NO", "N",
];

fn split_commas(s: &str) -> Vec<String> {
    s.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn query_and_form_arrays() {
        let p = Params::parse(
            Some("labels[]=a&labels[]=b&state=opened"),
            Some("application/x-www-form-urlencoded"),
            b"actions[][action]=create&actions[][file_path]=a&actions[][action]=delete&actions[][file_path]=b&x[y]=1",
        )
        .unwrap();
        assert_eq!(p.list("labels").unwrap(), vec!["a", "b"]);
        assert_eq!(p.str("state").as_deref(), Some("opened"));
        let actions = p.objects("actions").unwrap();
        assert_eq!(actions.len(), 2);
        assert_eq!(actions[1]["file_path"], json!("b"));
        assert_eq!(p.get("x").unwrap(), &json!({"y": "1"}));
    }

    #[test]
    fn json_body_and_booleans() {
        let p = Params::parse(
            None,
            Some("application/json"),
            br#"{"a": true, "b": "false", "c": 1, "d": "maybe", "ids": [1, "2"]}"#,
        )
        .unwrap();
        assert_eq!(p.bool("a").unwrap(), Some(true));
        assert_eq!(p.bool("b").unwrap(), Some(false));
        assert_eq!(p.bool("c").unwrap(), Some(true));
        assert!(p.bool("d").is_err());
        assert_eq!(p.u64_list("ids").unwrap(), Some(vec![1, 2]));
        assert!(Params::parse(None, Some("application/json"), b"{").is_err());
    }
}

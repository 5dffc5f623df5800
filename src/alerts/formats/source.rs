//! Sources: where a format reads a value, compiled from the file and evaluated against one delivery.
//!
//! A source is a path (`$.alerts`, `@.labels.severity`, `header.sentry-hook-resource`, `route.alias`,
//! `M.AlarmName`), a constant, a composite (`all`, `template`), or an array of sources tried in order (a
//! fallback chain). Modifiers then apply in a fixed order: `parse = "json"`, `regex`, `split`, `kv`, `get`,
//! `to_text`. Evaluation yields an owned JSON value, or nothing when the value is absent (`null`, `""`, `[]`, a
//! missing key, a regex that does not match).

use regex::Regex;
use serde_json::{Map, Value};

use super::times::TimeFormat;
use crate::alerts::normalized::present;
use crate::alerts::payload::parse_json;

/// Where a path starts.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Root {
    /// `$`: the whole body.
    Body,
    /// `@`: the current element of the list, or the body when there is no list.
    Current,
    /// `header.NAME`: a request header (names are case-insensitive).
    Header(String),
    /// `query.NAME`: a query parameter of the receiving address.
    Query(String),
    /// `route.NAME`: a named segment of the matched address suffix.
    Route(String),
    /// A name bound by `[let]`.
    Let(String),
}

/// One step of a path.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Step {
    /// `.key`.
    Key(String),
    /// `[N]`.
    Index(usize),
    /// `[*]`: the rest of the path on every element, present results collected in an array.
    Each,
    /// `[field=value]`: the first element whose `field` (a key, or an index of a pair) reads `value`.
    Find { field: String, value: String },
}

/// A compiled path.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Path {
    /// As written, for messages.
    pub text: String,
    pub root: Root,
    pub steps: Vec<Step>,
}

/// What a source starts from.
#[derive(Debug, Clone)]
pub(super) enum Base {
    Path(Path),
    Const(Value),
    /// Every source's value in an array (`null` for an absent one); absent when all are.
    All(Vec<Chain>),
    /// Text with `{path}` placeholders; absent when every placeholder is.
    Template(Vec<Piece>),
}

/// A piece of a template.
#[derive(Debug, Clone)]
pub(super) enum Piece {
    Text(String),
    Path(Path),
}

/// One source with its modifiers.
#[derive(Debug, Clone)]
pub(super) struct Source {
    pub base: Base,
    pub parse_json: bool,
    pub regex: Option<Regex>,
    pub split: Option<String>,
    pub kv: Option<String>,
    pub get: Option<String>,
    pub to_text: bool,
    /// How a time field reads this value.
    pub time: TimeFormat,
}

/// Sources tried in order: the first present value wins.
#[derive(Debug, Clone, Default)]
pub(super) struct Chain(pub Vec<Source>);

/// What paths are evaluated against.
pub(super) struct Scope<'a> {
    pub body: &'a Value,
    pub current: &'a Value,
    pub headers: &'a http::HeaderMap,
    pub query: &'a [(String, String)],
    pub route: &'a [(String, String)],
    pub lets: &'a [(String, Option<Value>)],
    pub max_depth: usize,
}

impl Source {
    /// A human name for warnings: the path (without a leading `@.`) or the kind of source.
    pub fn name(&self) -> String {
        match &self.base {
            Base::Path(path) => path.text.strip_prefix("@.").unwrap_or(&path.text).to_owned(),
            Base::Const(_) => "the constant".to_owned(),
            Base::All(_) => "the composite value".to_owned(),
            Base::Template(_) => "the template".to_owned(),
        }
    }

    /// The source's value, modifiers applied; `None` when absent.
    pub fn eval(&self, scope: &Scope<'_>) -> Option<Value> {
        let mut value = match &self.base {
            Base::Path(path) => path.eval(scope)?,
            Base::Const(value) => value.clone(),
            Base::All(chains) => {
                let items: Vec<Value> = chains
                    .iter()
                    .map(|chain| chain.eval(scope).unwrap_or(Value::Null))
                    .collect();
                if items.iter().all(Value::is_null) {
                    return None;
                }
                Value::Array(items)
            }
            Base::Template(pieces) => {
                let mut text = String::new();
                let mut any = false;
                for piece in pieces {
                    match piece {
                        Piece::Text(part) => text.push_str(part),
                        Piece::Path(path) => {
                            if let Some(value) = path.eval(scope) {
                                any = true;
                                text.push_str(&scalar_text(&value).unwrap_or_else(|| value.to_string()));
                            }
                        }
                    }
                }
                if !any {
                    return None;
                }
                Value::String(text)
            }
        };
        if self.parse_json {
            let text = value.as_str()?;
            value = parse_json(text.as_bytes(), scope.max_depth).ok()?.0;
        }
        if let Some(regex) = &self.regex {
            let text = scalar_text(&value)?;
            let captures = regex.captures(&text)?;
            let found = captures.get(1).or_else(|| captures.get(0))?;
            value = Value::String(found.as_str().to_owned());
        }
        if let Some(separator) = &self.split {
            if let Value::String(text) = &value {
                value = Value::Array(
                    text.split(separator.as_str())
                        .map(str::trim)
                        .filter(|piece| !piece.is_empty())
                        .map(|piece| Value::String(piece.to_owned()))
                        .collect(),
                );
            }
        }
        if let Some(separator) = &self.kv {
            value = key_values(&value, separator);
        }
        if let Some(key) = &self.get {
            value = get(&value, key)?;
        }
        if self.to_text && !value.is_string() {
            value = Value::String(value.to_string());
        }
        present(Some(&value)).cloned()
    }
}

impl Chain {
    /// The first present value.
    pub fn eval(&self, scope: &Scope<'_>) -> Option<Value> {
        self.0.iter().find_map(|source| source.eval(scope))
    }

    /// The first present value with the name of the source that gave it, for warnings.
    pub fn eval_named(&self, scope: &Scope<'_>) -> Option<(String, Value)> {
        self.0
            .iter()
            .find_map(|source| source.eval(scope).map(|value| (source.name(), value)))
    }
}

impl Path {
    /// The value at this path, if present.
    pub fn eval(&self, scope: &Scope<'_>) -> Option<Value> {
        self.locate(scope).filter(|value| present(Some(value)).is_some())
    }

    /// The value at this path as it is, even when it counts as absent (`[]` for a list with no element). Only
    /// the value found is copied, never the body it is found in.
    pub fn locate(&self, scope: &Scope<'_>) -> Option<Value> {
        match &self.root {
            Root::Body => walk(scope.body, &self.steps),
            Root::Current => walk(scope.current, &self.steps),
            Root::Header(name) => {
                let text = scope.headers.get(name.as_str())?.to_str().ok()?;
                walk(&Value::String(text.to_owned()), &self.steps)
            }
            Root::Query(name) => walk(&Value::String(lookup(scope.query, name)?.to_owned()), &self.steps),
            Root::Route(name) => walk(&Value::String(lookup(scope.route, name)?.to_owned()), &self.steps),
            Root::Let(name) => {
                let bound = scope
                    .lets
                    .iter()
                    .find(|(bound, _)| bound == name)
                    .and_then(|(_, value)| value.as_ref())?;
                walk(bound, &self.steps)
            }
        }
    }

    /// Replaces the string this path (from `$`, by keys only) names in `value` with `"[redacted]"`; whether it
    /// did.
    pub fn blank(&self, value: &mut Value) -> bool {
        if !matches!(self.root, Root::Body | Root::Current) {
            return false;
        }
        let mut at = value;
        for step in &self.steps {
            let Step::Key(key) = step else {
                return false;
            };
            match at.get_mut(key.as_str()) {
                Some(next) => at = next,
                None => return false,
            }
        }
        if !at.is_string() {
            return false;
        }
        *at = Value::String("[redacted]".to_owned());
        true
    }

    /// Whether the path reads the request rather than the body.
    pub fn reads_request(&self) -> bool {
        matches!(self.root, Root::Header(_) | Root::Query(_) | Root::Route(_))
    }
}

fn lookup<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.as_str())
}

/// Follows `steps` from `value`; the value found is returned even when it counts as absent.
fn walk(value: &Value, steps: &[Step]) -> Option<Value> {
    let mut here = value;
    for (at, step) in steps.iter().enumerate() {
        here = match step {
            Step::Key(key) => here.as_object()?.get(key)?,
            Step::Index(index) => here.as_array()?.get(*index)?,
            Step::Find { field, value } => here
                .as_array()?
                .iter()
                .find(|item| member(item, field).and_then(scalar_text).as_deref() == Some(value))?,
            Step::Each => {
                let rest = &steps[at + 1..];
                let items: Vec<Value> = here
                    .as_array()?
                    .iter()
                    .filter_map(|item| walk(item, rest).and_then(|found| present(Some(&found)).cloned()))
                    .collect();
                return Some(Value::Array(items));
            }
        };
    }
    Some(here.clone())
}

/// An object's key, or an array's index given as digits.
fn member<'a>(value: &'a Value, field: &str) -> Option<&'a Value> {
    match value {
        Value::Object(map) => map.get(field),
        Value::Array(items) => items.get(field.parse::<usize>().ok()?),
        _ => None,
    }
}

/// A string, number or boolean as text; `None` for null, arrays and objects.
pub(super) fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        Value::Bool(flag) => Some(flag.to_string()),
        _ => None,
    }
}

/// `"k:v"` items (a string or an array of strings) as an object; items without the separator are skipped.
fn key_values(value: &Value, separator: &str) -> Value {
    let items: Vec<&str> = match value {
        Value::String(text) => vec![text.as_str()],
        Value::Array(items) => items.iter().filter_map(Value::as_str).collect(),
        other => return other.clone(),
    };
    let mut map = Map::new();
    for item in items {
        if let Some((key, value)) = item.split_once(separator) {
            map.insert(key.trim().to_owned(), Value::String(value.trim().to_owned()));
        }
    }
    Value::Object(map)
}

/// An object's key, or the second item of the `[key, value]` pair whose first item is `key`.
fn get(value: &Value, key: &str) -> Option<Value> {
    match value {
        Value::Object(map) => map.get(key).cloned(),
        Value::Array(items) => items.iter().find_map(|item| {
            let pair = item.as_array()?;
            (pair.first()?.as_str()? == key).then(|| pair.get(1).cloned())?
        }),
        _ => None,
    }
}

//! The checker: one format file's text into a [`Format`], or every problem found in it as `file:line: message`,
//! each saying what was expected. Paths, sources, maps, routes and auth schemes are all checked here, so a format
//! that loads never fails for a reason its file could have shown.

use std::collections::BTreeSet;

use regex::Regex;
use serde_json::Value;
use toml::Spanned;

use super::format::{
    AuthScheme, Condition, Fields, Format, Mapping, Origin, Outcome, Route, Segment, SeverityOutcome,
    ValueMap, Variant, When,
};
use super::schema::{RawAuth, RawFields, RawFile, RawMapping, RawReceive, RawRoute, RawState, RawValueMap};
use super::source::{Base, Chain, Path, Piece, Root, Source, Step};
use super::times::TimeFormat;
use crate::alerts::normalized::Severity;

/// The 1-based line of a byte offset.
pub(super) fn line_of(text: &str, offset: usize) -> usize {
    text.get(..offset)
        .map_or(1, |before| before.matches('\n').count() + 1)
}

/// Collects `file:line: message` errors for one file.
struct Errors<'a> {
    file: &'a str,
    text: &'a str,
    found: Vec<String>,
}

impl Errors<'_> {
    fn at(&mut self, span: std::ops::Range<usize>, message: impl std::fmt::Display) {
        let line = line_of(self.text, span.start);
        self.found.push(format!("{}:{line}: {message}", self.file));
    }
}

/// Compiles one format file. `file` names it in messages; `name` is the format's name.
pub(super) fn compile_file(
    file: &str,
    name: &str,
    text: &str,
    origin: Origin,
) -> Result<Format, Vec<String>> {
    let mut errors = Errors {
        file,
        text,
        found: Vec::new(),
    };
    let raw: RawFile = match toml::from_str(text) {
        Ok(raw) => raw,
        Err(error) => {
            let line = error.span().map_or(1, |span| line_of(text, span.start));
            return Err(vec![format!("{file}:{line}: {}", error.message().trim())]);
        }
    };
    let description = match &raw.description {
        Some(text) if !text.get_ref().trim().is_empty() => text.get_ref().trim().to_owned(),
        Some(text) => {
            errors.at(
                text.span(),
                "description: expected one line saying which sender posts this format",
            );
            String::new()
        }
        None => {
            errors.at(
                0..0,
                "expected a `description = \"…\"` line saying which sender posts this format",
            );
            String::new()
        }
    };
    let setup = raw.setup.as_ref().map(|text| text.get_ref().trim().to_owned());
    let receive = raw.receive.as_ref();
    let default_receive = RawReceive::default();
    let protocol = compile_receive(receive.unwrap_or(&default_receive), &mut errors);
    let top = raw.mapping();
    let base = compile_mapping(&top, &mut errors);
    let mut variants = Vec::new();
    let mut names = BTreeSet::new();
    for variant in &raw.variant {
        let span = variant.span();
        let raw_variant = variant.get_ref();
        if !names.insert(raw_variant.name.clone()) {
            errors.at(
                span.clone(),
                format!("variant {:?} is defined twice", raw_variant.name),
            );
        }
        let mut conditions = Vec::new();
        for condition in raw_variant.when.conditions() {
            if condition.missing && condition.is.is_some() {
                errors.at(
                    span.clone(),
                    format!(
                        "variant {:?}: when: give `is` or `missing`, not both",
                        raw_variant.name
                    ),
                );
                continue;
            }
            match parse_path(&condition.path, &[]) {
                Ok(path) => conditions.push(Condition {
                    path,
                    is: condition.is.clone(),
                    missing: condition.missing,
                }),
                Err(message) => errors.at(
                    span.clone(),
                    format!("variant {:?}: when.path: {message}", raw_variant.name),
                ),
            }
        }
        let when = (!conditions.is_empty()).then_some(When { any: conditions });
        let mapping = compile_mapping(&raw_variant.mapping().over(&top), &mut errors);
        if let (Some(when), Some(mapping)) = (when, mapping) {
            variants.push(Variant {
                name: raw_variant.name.clone(),
                when,
                mapping,
            });
        }
    }
    // A variant compiles the top level's keys again: say each problem once.
    let mut seen = BTreeSet::new();
    errors.found.retain(|error| seen.insert(error.clone()));
    match (protocol, base) {
        (Some(protocol), Some(base)) if errors.found.is_empty() => Ok(Format {
            name: name.to_owned(),
            description,
            setup,
            origin,
            success_status: protocol.success_status,
            json_whatever_content_type: protocol.json_whatever_content_type,
            form_field: protocol.form_field,
            key_in_body: protocol.key_in_body,
            auth: protocol.auth,
            answer: protocol.answer,
            routes: protocol.routes,
            confirm_hosts: protocol.confirm_hosts,
            base,
            variants,
        }),
        _ => Err(errors.found),
    }
}

struct Protocol {
    success_status: http::StatusCode,
    json_whatever_content_type: bool,
    form_field: Option<String>,
    key_in_body: Option<Path>,
    auth: Vec<AuthScheme>,
    answer: Option<Value>,
    routes: Vec<Route>,
    confirm_hosts: Vec<String>,
}

fn compile_receive(raw: &RawReceive, errors: &mut Errors<'_>) -> Option<Protocol> {
    let before = errors.found.len();
    let success_status = match &raw.success_status {
        None => http::StatusCode::OK,
        Some(status) => match *status.get_ref() {
            200 => http::StatusCode::OK,
            201 => http::StatusCode::CREATED,
            202 => http::StatusCode::ACCEPTED,
            other => {
                errors.at(
                    status.span(),
                    format!("success_status: expected 200, 201 or 202, not {other}"),
                );
                http::StatusCode::OK
            }
        },
    };
    let key_in_body = raw
        .key_in_body
        .as_ref()
        .and_then(|path| match parse_path(path.get_ref(), &[]) {
            Ok(parsed) if parsed.root == Root::Body => Some(parsed),
            Ok(_) => {
                errors.at(
                    path.span(),
                    "key_in_body: expected a path from the body's root, starting with `$.`",
                );
                None
            }
            Err(message) => {
                errors.at(path.span(), format!("key_in_body: {message}"));
                None
            }
        });
    let mut auth = vec![AuthScheme::Bearer];
    for entry in &raw.auth {
        match compile_auth(entry.get_ref()) {
            Ok(scheme) => auth.push(scheme),
            Err(message) => errors.at(entry.span(), format!("auth: {message}")),
        }
    }
    let answer = raw
        .answer
        .as_ref()
        .and_then(|answer| match serde_json::to_value(answer.get_ref()) {
            Ok(value) if value.is_object() => Some(value),
            _ => {
                errors.at(
                    answer.span(),
                    "answer: expected a table (the JSON object answered on success)",
                );
                None
            }
        });
    let mut routes = Vec::new();
    let mut suffixes = BTreeSet::new();
    for route in &raw.route {
        let raw_route = route.get_ref();
        if !suffixes.insert(raw_route.suffix.clone()) {
            errors.at(
                route.span(),
                format!("route {:?} is listed twice", raw_route.suffix),
            );
        }
        let state = match raw_route
            .state
            .as_deref()
            .map(|name| (name, Outcome::parse(name)))
        {
            None => None,
            Some((_, Some(outcome))) => Some(outcome),
            Some((name, None)) => {
                errors.at(
                    route.span(),
                    format!("route state: expected fire, resolve or ignore, not {name:?}"),
                );
                None
            }
        };
        let put = raw_route.method.as_deref() == Some("PUT");
        let lookup = compile_lookup(raw_route, state);
        if let Err(message) = &lookup {
            errors.at(route.span(), format!("route {:?}: {message}", raw_route.suffix));
        }
        match parse_suffix(&raw_route.suffix) {
            Ok(segments) => {
                let lookup = match lookup {
                    Ok(true) => check_lookup_segments(&segments)
                        .map_err(|message| {
                            errors.at(route.span(), format!("route {:?}: {message}", raw_route.suffix));
                        })
                        .is_ok(),
                    _ => false,
                };
                routes.push(Route {
                    segments,
                    state,
                    lookup,
                    put,
                });
            }
            Err(message) => errors.at(
                route.span(),
                format!("route suffix {:?}: {message}", raw_route.suffix),
            ),
        }
    }
    let form_field = raw.form_field.as_ref().and_then(|field| {
        let name = field.get_ref();
        if name.is_empty() {
            errors.at(field.span(), "form_field: expected a field name");
            None
        } else if raw.key_in_body.is_some() {
            // The key would have to be found in a form before the form's sender is known: not offered.
            errors.at(
                field.span(),
                "form_field: a format whose key travels in the body (key_in_body) takes no forms",
            );
            None
        } else {
            Some(name.clone())
        }
    });
    (errors.found.len() == before).then_some(Protocol {
        success_status,
        json_whatever_content_type: raw.json_whatever_content_type,
        form_field,
        key_in_body,
        auth,
        answer,
        routes,
        confirm_hosts: raw
            .confirm_hosts
            .iter()
            .map(|host| host.trim_matches('.').to_ascii_lowercase())
            .collect(),
    })
}

/// Whether a route is a lookup: `method = "GET"` goes with `lookup = true`, and a lookup decides no state
/// (`POST`, the default, and `PUT` are deliveries).
fn compile_lookup(raw: &RawRoute, state: Option<Outcome>) -> Result<bool, String> {
    let get = match raw.method.as_deref() {
        None | Some("POST") | Some("PUT") => false,
        Some("GET") => true,
        Some(other) => return Err(format!("method: expected POST, PUT or GET, not {other:?}")),
    };
    match (get, raw.lookup) {
        (false, false) => Ok(false),
        (true, true) if state.is_none() => Ok(true),
        (true, true) => Err("a lookup decides no state; remove state".to_owned()),
        (true, false) => Err("a GET route is a lookup: add lookup = true".to_owned()),
        (false, true) => Err("a lookup is a GET route: add method = \"GET\"".to_owned()),
    }
}

/// A lookup's suffix names the request id in its last segment, `{request_id}`, and nothing else.
fn check_lookup_segments(segments: &[Segment]) -> Result<(), String> {
    let named: Vec<&str> = segments
        .iter()
        .filter_map(|segment| match segment {
            Segment::Named(name) => Some(name.as_str()),
            Segment::Literal(_) => None,
        })
        .collect();
    match (named.as_slice(), segments.last()) {
        (["request_id"], Some(Segment::Named(_))) => Ok(()),
        _ => Err("a lookup's suffix ends in {request_id}, its only named segment".to_owned()),
    }
}

fn compile_auth(raw: &RawAuth) -> Result<AuthScheme, String> {
    match (&raw.header, &raw.query, &raw.scheme) {
        (Some(header), None, scheme) => {
            let name = http::HeaderName::from_bytes(header.as_bytes())
                .map_err(|_| format!("{header:?} is not a header name"))?;
            if let Some(word) = scheme {
                if word.is_empty() || !word.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
                    return Err(format!("scheme {word:?}: expected one word such as GenieKey"));
                }
                if word.eq_ignore_ascii_case("bearer") && name == http::header::AUTHORIZATION {
                    return Err("Bearer is always accepted; list only other schemes".to_owned());
                }
            }
            Ok(AuthScheme::Header {
                name,
                scheme: scheme.clone(),
            })
        }
        (None, Some(query), None) if !query.is_empty() => Ok(AuthScheme::Query { name: query.clone() }),
        _ => Err(
            "expected { header = \"NAME\" } (with an optional scheme = \"WORD\") or { query = \"NAME\" }"
                .to_owned(),
        ),
    }
}

/// `""`, or `/`-separated segments, each literal text or a whole `{name}`.
fn parse_suffix(text: &str) -> Result<Vec<Segment>, String> {
    if text.is_empty() {
        return Ok(Vec::new());
    }
    let rest = text
        .strip_prefix('/')
        .ok_or("expected \"\" or a suffix starting with /")?;
    let mut segments = Vec::new();
    let mut names = BTreeSet::new();
    for part in rest.split('/') {
        if part.is_empty() {
            return Err("expected no empty segment and no trailing /".to_owned());
        }
        if let Some(name) = part.strip_prefix('{').and_then(|inner| inner.strip_suffix('}')) {
            if !is_identifier(name) {
                return Err(format!(
                    "segment {part:?}: expected {{name}} with a name of letters, digits and _"
                ));
            }
            if !names.insert(name.to_owned()) {
                return Err(format!("the segment name {name:?} is used twice"));
            }
            segments.push(Segment::Named(name.to_owned()));
        } else if part.contains(['{', '}', '?', '#']) {
            return Err(format!(
                "segment {part:?}: expected literal text or a whole {{name}}"
            ));
        } else {
            segments.push(Segment::Literal(part.to_owned()));
        }
    }
    Ok(segments)
}

fn is_identifier(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn compile_mapping(raw: &RawMapping, errors: &mut Errors<'_>) -> Option<Mapping> {
    let before = errors.found.len();
    let mut lets = Vec::new();
    let mut let_names: Vec<String> = Vec::new();
    for (name, value) in raw.lets.iter().flatten() {
        if !is_identifier(name) || matches!(name.as_str(), "header" | "query" | "route") {
            errors.at(
                value.span(),
                format!(
                    "let {name:?}: expected a name of letters, digits and _, other than header, query, route"
                ),
            );
            continue;
        }
        // A `let` may use the roots and the names bound before it (in name order, as TOML tables are read).
        match compile_chain(value.get_ref(), &let_names, false) {
            Ok(chain) => lets.push((name.clone(), chain)),
            Err(message) => errors.at(value.span(), format!("let {name}: {message}")),
        }
        let_names.push(name.clone());
    }
    let names = &let_names;
    let list = raw
        .list
        .as_ref()
        .and_then(|list| match parse_path(list.get_ref(), names) {
            Ok(path) if path.reads_request() => {
                errors.at(list.span(), "list: expected a path into the body");
                None
            }
            Ok(path) => Some(path),
            Err(message) => {
                errors.at(list.span(), format!("list: {message}"));
                None
            }
        });
    let mut require = Vec::new();
    if let Some(paths) = &raw.require {
        for text in paths.get_ref() {
            match parse_path(text, names) {
                Ok(path) => require.push(path),
                Err(message) => errors.at(paths.span(), format!("require {text:?}: {message}")),
            }
        }
    }
    let default_fields = RawFields::default();
    let raw_fields = raw.fields.as_ref().map_or(&default_fields, Spanned::get_ref);
    let fields = compile_fields(raw_fields, names, errors);
    let severity = match &raw.severity {
        Some(severity) => compile_severity(severity, names, errors),
        None => ValueMap {
            from: Chain::default(),
            map: Vec::new(),
            missing: None,
            other: None,
        },
    };
    let (state, state_default) = match &raw.state {
        Some(state) => compile_state(state, names, errors),
        None => (Vec::new(), Outcome::Fire),
    };
    let confirm = raw.confirm.as_ref().and_then(|confirm| {
        compile_chain(confirm.get_ref(), names, false)
            .map_err(|message| errors.at(confirm.span(), format!("confirm: {message}")))
            .ok()
    });
    let ignore = raw.ignore.as_ref().map(|reason| reason.get_ref().clone());
    (errors.found.len() == before).then_some(Mapping {
        list,
        require,
        lets,
        fields,
        severity,
        state,
        state_default,
        confirm,
        ignore,
    })
}

fn compile_fields(raw: &RawFields, names: &[String], errors: &mut Errors<'_>) -> Fields {
    let mut one = |field: &Option<Spanned<toml::Value>>, key: &str, times: bool| -> Chain {
        let Some(value) = field else {
            return Chain::default();
        };
        match compile_chain(value.get_ref(), names, times) {
            Ok(chain) => chain,
            Err(message) => {
                errors.at(value.span(), format!("fields.{key}: {message}"));
                Chain::default()
            }
        }
    };
    Fields {
        title: one(&raw.title, "title", false),
        description: one(&raw.description, "description", false),
        start: one(&raw.start, "start", true),
        end: one(&raw.end, "end", true),
        hosts: one(&raw.hosts, "hosts", false),
        service: one(&raw.service, "service", false),
        monitoring_tool: one(&raw.monitoring_tool, "monitoring_tool", false),
        environment: one(&raw.environment, "environment", false),
        fingerprint: one(&raw.fingerprint, "fingerprint", false),
    }
}

fn severity_outcome(name: &str) -> Option<SeverityOutcome> {
    if name == "ignore" {
        return Some(SeverityOutcome::Ignore);
    }
    Severity::ALL
        .into_iter()
        .find(|severity| severity.as_str() == name)
        .map(SeverityOutcome::Is)
}

const SEVERITY_HINT: &str = "critical, high, medium, low, info, unknown or ignore";
const OUTCOME_HINT: &str = "fire, resolve or ignore";

fn compile_severity(
    raw: &Spanned<RawValueMap>,
    names: &[String],
    errors: &mut Errors<'_>,
) -> ValueMap<SeverityOutcome> {
    compile_value_map(raw, names, errors, "severity", severity_outcome, SEVERITY_HINT)
}

fn compile_state(
    raw: &Spanned<RawState>,
    names: &[String],
    errors: &mut Errors<'_>,
) -> (Vec<ValueMap<Outcome>>, Outcome) {
    let state = raw.get_ref();
    let mut rules = Vec::new();
    if state.from.is_some() || !state.map.is_empty() {
        let inline = Spanned::new(
            raw.span(),
            RawValueMap {
                from: state.from.clone(),
                map: state.map.clone(),
                missing: None,
                other: None,
            },
        );
        rules.push(compile_value_map(
            &inline,
            names,
            errors,
            "state",
            Outcome::parse,
            OUTCOME_HINT,
        ));
    }
    for rule in &state.rule {
        rules.push(compile_value_map(
            rule,
            names,
            errors,
            "state.rule",
            Outcome::parse,
            OUTCOME_HINT,
        ));
    }
    let default = match &state.default {
        None => Outcome::Fire,
        Some(name) => Outcome::parse(name.get_ref()).unwrap_or_else(|| {
            errors.at(
                name.span(),
                format!("state.default: expected {OUTCOME_HINT}, not {:?}", name.get_ref()),
            );
            Outcome::Fire
        }),
    };
    (rules, default)
}

fn compile_value_map<T: Copy>(
    raw: &Spanned<RawValueMap>,
    names: &[String],
    errors: &mut Errors<'_>,
    what: &str,
    parse: fn(&str) -> Option<T>,
    hint: &str,
) -> ValueMap<T> {
    let map_raw = raw.get_ref();
    let from = match &map_raw.from {
        Some(from) => compile_chain(from.get_ref(), names, false).unwrap_or_else(|message| {
            errors.at(from.span(), format!("{what}.from: {message}"));
            Chain::default()
        }),
        // A constant severity: `missing` alone.
        None if map_raw.missing.is_some() && map_raw.map.is_empty() && map_raw.other.is_none() => {
            Chain::default()
        }
        None => {
            errors.at(
                raw.span(),
                format!("{what}: expected `from`, the source of the sender's value (or `missing` alone, a constant)"),
            );
            Chain::default()
        }
    };
    let mut map: Vec<(String, T)> = Vec::new();
    for (word, outcome) in &map_raw.map {
        let key = word.trim().to_lowercase();
        match parse(outcome.get_ref()) {
            Some(_) if map.iter().any(|(known, _)| *known == key) => errors.at(
                outcome.span(),
                format!("{what}.map: {word:?} is given twice (words are compared ignoring case)"),
            ),
            Some(value) => map.push((key, value)),
            None => errors.at(
                outcome.span(),
                format!("{what}.map.{word}: expected {hint}, not {:?}", outcome.get_ref()),
            ),
        }
    }
    let mut outcome = |given: &Option<Spanned<String>>, key: &str| -> Option<T> {
        let given = given.as_ref()?;
        let parsed = parse(given.get_ref());
        if parsed.is_none() {
            errors.at(
                given.span(),
                format!("{what}.{key}: expected {hint}, not {:?}", given.get_ref()),
            );
        }
        parsed
    };
    let missing = outcome(&map_raw.missing, "missing");
    let other = outcome(&map_raw.other, "other");
    ValueMap {
        from,
        map,
        missing,
        other,
    }
}

const SOURCE_HINT: &str =
    "expected a path (\"$.a.b\", \"@.labels.severity\"), an array of sources tried in order, \
     or a table with one of path, const, all, template";

/// A source or an array of sources. `times`: whether the field reads times (only those may say `time`).
pub(super) fn compile_chain(value: &toml::Value, names: &[String], times: bool) -> Result<Chain, String> {
    match value {
        toml::Value::Array(items) => {
            if items.is_empty() {
                return Err(format!("{SOURCE_HINT}; the array is empty"));
            }
            items
                .iter()
                .map(|item| match item {
                    toml::Value::Array(_) => {
                        Err("arrays of sources do not nest; list the sources in one array".to_owned())
                    }
                    other => compile_source(other, names, times),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Chain)
        }
        other => compile_source(other, names, times).map(|source| Chain(vec![source])),
    }
}

const SOURCE_KEYS: &[&str] = &[
    "path", "const", "all", "template", "parse", "regex", "split", "kv", "get", "to_text", "time",
];

fn compile_source(value: &toml::Value, names: &[String], times: bool) -> Result<Source, String> {
    let plain = |base| Source {
        base,
        parse_json: false,
        regex: None,
        split: None,
        kv: None,
        get: None,
        to_text: false,
        time: TimeFormat::Iso,
    };
    let table = match value {
        toml::Value::String(text) => return parse_path(text, names).map(|path| plain(Base::Path(path))),
        toml::Value::Table(table) => table,
        _ => return Err(SOURCE_HINT.to_owned()),
    };
    if let Some(unknown) = table.keys().find(|key| !SOURCE_KEYS.contains(&key.as_str())) {
        return Err(format!(
            "unknown key {unknown:?} in a source; expected {}",
            SOURCE_KEYS.join(", ")
        ));
    }
    let bases: Vec<&str> = ["path", "const", "all", "template"]
        .into_iter()
        .filter(|key| table.contains_key(*key))
        .collect();
    let base = match bases.as_slice() {
        ["path"] => Base::Path(parse_path(string_key(table, "path")?, names)?),
        ["const"] => {
            Base::Const(serde_json::to_value(&table["const"]).map_err(|error| format!("const: {error}"))?)
        }
        ["all"] => match &table["all"] {
            toml::Value::Array(items) if !items.is_empty() => Base::All(
                items
                    .iter()
                    .map(|item| compile_chain(item, names, false))
                    .collect::<Result<_, _>>()?,
            ),
            _ => return Err("all: expected a non-empty array of sources".to_owned()),
        },
        ["template"] => Base::Template(parse_template(string_key(table, "template")?, names)?),
        _ => {
            return Err(format!(
                "{SOURCE_HINT}; give exactly one of path, const, all, template"
            ))
        }
    };
    let mut source = plain(base);
    if let Some(parse) = table.get("parse") {
        if parse.as_str() != Some("json") {
            return Err("parse: expected \"json\" (the value is JSON inside a string)".to_owned());
        }
        source.parse_json = true;
    }
    if table.contains_key("regex") {
        let pattern = string_key(table, "regex")?;
        let regex = Regex::new(pattern).map_err(|error| format!("regex: {error}"))?;
        if regex.captures_len() > 2 {
            return Err("regex: expected at most one capture group (its text is the value)".to_owned());
        }
        source.regex = Some(regex);
    }
    if table.contains_key("split") {
        source.split = Some(non_empty_key(table, "split")?);
    }
    if table.contains_key("kv") {
        source.kv = Some(non_empty_key(table, "kv")?);
    }
    if table.contains_key("get") {
        source.get = Some(non_empty_key(table, "get")?);
    }
    if let Some(flag) = table.get("to_text") {
        source.to_text = flag.as_bool().ok_or("to_text: expected true or false")?;
    }
    if table.contains_key("time") {
        if !times {
            return Err("time: only the start and end fields read times".to_owned());
        }
        let name = string_key(table, "time")?;
        source.time = TimeFormat::parse(name)
            .ok_or_else(|| format!("time: expected iso, epoch_s or epoch_ms, not {name:?}"))?;
    }
    Ok(source)
}

fn string_key<'a>(table: &'a toml::value::Table, key: &str) -> Result<&'a str, String> {
    table
        .get(key)
        .and_then(toml::Value::as_str)
        .ok_or_else(|| format!("{key}: expected a string"))
}

fn non_empty_key(table: &toml::value::Table, key: &str) -> Result<String, String> {
    let text = string_key(table, key)?;
    if text.is_empty() {
        return Err(format!("{key}: expected a non-empty string"));
    }
    Ok(text.to_owned())
}

/// `"{@.event} on {@.resource}"`; `{{` and `}}` are not special: templates hold paths only.
fn parse_template(text: &str, names: &[String]) -> Result<Vec<Piece>, String> {
    let mut pieces = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        if open > 0 {
            pieces.push(Piece::Text(rest[..open].to_owned()));
        }
        let after = &rest[open + 1..];
        let close = after
            .find('}')
            .ok_or_else(|| format!("template: expected }} after {{ in {text:?}"))?;
        pieces.push(Piece::Path(
            parse_path(&after[..close], names).map_err(|message| format!("template: {message}"))?,
        ));
        rest = &after[close + 1..];
    }
    if !rest.is_empty() {
        pieces.push(Piece::Text(rest.to_owned()));
    }
    if !pieces.iter().any(|piece| matches!(piece, Piece::Path(_))) {
        return Err("template: expected at least one {path}; use const for fixed text".to_owned());
    }
    Ok(pieces)
}

const PATH_HINT: &str =
    "expected a path starting with $ (the body), @ (the alert), header.NAME, query.NAME, \
     route.NAME or a let name";

/// Parses `$.a.b[0][*][name=x].c`, `@`, `header.x-y`, `query.token`, `route.alias`, `NAME.x`.
pub(super) fn parse_path(text: &str, names: &[String]) -> Result<Path, String> {
    let trimmed = text.trim();
    if trimmed != text || text.is_empty() {
        return Err(format!("{PATH_HINT}, not {text:?}"));
    }
    for (prefix, make) in [
        ("header.", Root::Header as fn(String) -> Root),
        ("query.", Root::Query),
        ("route.", Root::Route),
    ] {
        if let Some(name) = text.strip_prefix(prefix) {
            if name.is_empty() {
                return Err(format!("{text:?}: expected a name after {prefix}"));
            }
            let name = if prefix == "header." {
                name.to_ascii_lowercase()
            } else {
                name.to_owned()
            };
            if prefix == "header." && http::HeaderName::from_bytes(name.as_bytes()).is_err() {
                return Err(format!("{text:?}: {name:?} is not a header name"));
            }
            return Ok(Path {
                text: text.to_owned(),
                root: make(name),
                steps: Vec::new(),
            });
        }
    }
    let root_end = text.find(['.', '[']).unwrap_or(text.len());
    let root = match &text[..root_end] {
        "$" => Root::Body,
        "@" => Root::Current,
        name if names.iter().any(|known| known == name) => Root::Let(name.to_owned()),
        other => return Err(format!("{PATH_HINT}, not {other:?} in {text:?}")),
    };
    let mut steps = Vec::new();
    let mut rest = &text[root_end..];
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(['.', '[']).unwrap_or(after.len());
            let key = &after[..end];
            if key.is_empty() {
                return Err(format!("{text:?}: expected a key after ."));
            }
            steps.push(Step::Key(key.to_owned()));
            rest = &after[end..];
        } else if let Some(after) = rest.strip_prefix('[') {
            let close = after
                .find(']')
                .ok_or_else(|| format!("{text:?}: expected ] after ["))?;
            let inner = &after[..close];
            let step = if inner == "*" {
                Step::Each
            } else if let Ok(index) = inner.parse::<usize>() {
                Step::Index(index)
            } else if let Some((field, value)) = inner.split_once('=') {
                if field.is_empty() {
                    return Err(format!("{text:?}: expected [field=value] with a field"));
                }
                Step::Find {
                    field: field.to_owned(),
                    value: value.to_owned(),
                }
            } else {
                return Err(format!(
                    "{text:?}: expected [N], [*] or [field=value], not [{inner}]"
                ));
            };
            steps.push(step);
            rest = &after[close + 1..];
        } else {
            return Err(format!("{text:?}: expected . or [ at {rest:?}"));
        }
    }
    Ok(Path {
        text: text.to_owned(),
        root,
        steps,
    })
}

//! A compiled format: its mapping (what [`super::reader`] applies to a body) and its protocol side, the answers
//! the intake asks of it: which address suffixes it accepts, where the sender's key may travel, which status and
//! body a successful delivery is answered with.

use std::path::PathBuf;

use serde_json::Value;

use super::source::{Chain, Path};
use crate::alerts::normalized::Severity;

/// Where a format comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// Read by svcgate's own code (`generic`).
    Code,
    /// A file built into the binary (`formats/NAME.toml`).
    BuiltIn,
    /// A file of the operator's directory.
    File(PathBuf),
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Code => f.write_str("built-in (code)"),
            Origin::BuiltIn => f.write_str("built-in"),
            Origin::File(path) => write!(f, "{}", path.display()),
        }
    }
}

/// A way the sender's key may be presented, besides `Authorization: Bearer`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthScheme {
    /// `Authorization: Bearer <key>`; every format accepts it.
    Bearer,
    /// A header: its whole value, or after `scheme ` (`Authorization: GenieKey <key>`).
    Header {
        /// The header's name, lowercase.
        name: http::HeaderName,
        /// The word before the key, compared case-insensitively; `None` when the value is the key.
        scheme: Option<String>,
    },
    /// A query parameter of the receiving address (`?token=<key>`).
    Query {
        /// The parameter's name.
        name: String,
    },
}

impl AuthScheme {
    /// The key this scheme finds in a request, if the request presents one this way (not yet compared: the
    /// caller compares it with the integration's key in constant time).
    pub fn presented_key(&self, headers: &http::HeaderMap, query: Option<&str>) -> Option<String> {
        match self {
            AuthScheme::Bearer => scheme_value(headers, &http::header::AUTHORIZATION, Some("Bearer")),
            AuthScheme::Header { name, scheme } => scheme_value(headers, name, scheme.as_deref()),
            AuthScheme::Query { name } => form_urlencoded::parse(query?.as_bytes())
                .find(|(key, _)| key == name)
                .map(|(_, value)| value.into_owned())
                .filter(|value| !value.is_empty()),
        }
    }
}

/// A header's value, after `scheme ` (compared ignoring case) when a scheme is given.
fn scheme_value(headers: &http::HeaderMap, name: &http::HeaderName, scheme: Option<&str>) -> Option<String> {
    let value = headers.get(name)?.to_str().ok()?.trim();
    let key = match scheme {
        None => value,
        Some(scheme) => {
            let (word, rest) = value.split_once(' ')?;
            if !word.eq_ignore_ascii_case(scheme) {
                return None;
            }
            rest.trim()
        }
    };
    (!key.is_empty()).then(|| key.to_owned())
}

/// What a delivery's state decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Outcome {
    Fire,
    Resolve,
    Ignore,
}

impl Outcome {
    pub fn parse(name: &str) -> Option<Outcome> {
        match name {
            "fire" => Some(Outcome::Fire),
            "resolve" => Some(Outcome::Resolve),
            "ignore" => Some(Outcome::Ignore),
            _ => None,
        }
    }
}

/// A severity, or "ignore the event".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SeverityOutcome {
    Is(Severity),
    Ignore,
}

/// A map of the sender's words (lowercase, trimmed) to outcomes.
#[derive(Debug, Clone)]
pub(super) struct ValueMap<T> {
    pub from: Chain,
    pub map: Vec<(String, T)>,
    pub missing: Option<T>,
    pub other: Option<T>,
}

impl<T: Copy> ValueMap<T> {
    /// The outcome of a word, if the map names it.
    pub fn lookup(&self, word: &str) -> Option<T> {
        let word = word.trim().to_lowercase();
        self.map
            .iter()
            .find(|(key, _)| *key == word)
            .map(|(_, outcome)| *outcome)
    }
}

/// The normalised fields, each a chain of sources (empty when not mapped).
#[derive(Debug, Clone, Default)]
pub(super) struct Fields {
    pub title: Chain,
    pub description: Chain,
    pub start: Chain,
    pub end: Chain,
    pub hosts: Chain,
    pub service: Chain,
    pub monitoring_tool: Chain,
    pub environment: Chain,
    pub fingerprint: Chain,
}

/// How a body becomes alerts: the file's top level, or one variant over it.
#[derive(Debug, Clone)]
pub(super) struct Mapping {
    pub list: Option<Path>,
    pub require: Vec<Path>,
    pub lets: Vec<(String, Chain)>,
    pub fields: Fields,
    pub severity: ValueMap<SeverityOutcome>,
    pub state: Vec<ValueMap<Outcome>>,
    pub state_default: Outcome,
    pub confirm: Option<Chain>,
    pub ignore: Option<String>,
}

/// When a variant applies: any of its conditions holds.
#[derive(Debug, Clone)]
pub(super) struct When {
    pub any: Vec<Condition>,
}

/// One condition of a variant.
#[derive(Debug, Clone)]
pub(super) struct Condition {
    pub path: Path,
    /// The value is one of these words (ignoring case); `None`: the value is present.
    pub is: Option<Vec<String>>,
    /// The value is absent.
    pub missing: bool,
}

/// A sub-format.
#[derive(Debug, Clone)]
pub(super) struct Variant {
    pub name: String,
    pub when: When,
    pub mapping: Mapping,
}

/// An accepted address suffix.
#[derive(Debug, Clone)]
pub(super) struct Route {
    /// Its segments after the leading `/`: literal text or `{name}`.
    pub segments: Vec<Segment>,
    pub state: Option<Outcome>,
    /// A `GET` route answering the status of a request id svcgate issued (`lookup = true`).
    pub lookup: bool,
    /// A delivery sent with `PUT` rather than `POST` (`method = "PUT"`: Opsgenie's updates of a message).
    pub put: bool,
}

/// A segment of a route suffix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Segment {
    Literal(String),
    Named(String),
}

/// A sender's native format, compiled from its file.
#[derive(Debug)]
pub struct Format {
    pub(super) name: String,
    pub(super) description: String,
    pub(super) setup: Option<String>,
    pub(super) origin: Origin,
    pub(super) success_status: http::StatusCode,
    pub(super) json_whatever_content_type: bool,
    pub(super) form_field: Option<String>,
    pub(super) key_in_body: Option<Path>,
    pub(super) auth: Vec<AuthScheme>,
    pub(super) answer: Option<Value>,
    pub(super) routes: Vec<Route>,
    pub(super) confirm_hosts: Vec<String>,
    pub(super) base: Mapping,
    pub(super) variants: Vec<Variant>,
}

impl Format {
    /// The format's name (its file's name without `.toml`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// One line saying which sender posts it.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The sender's setup in a few lines, for the integration page: the file's `setup` with `{address}` (and any
    /// other `{name}` of `vars`) filled in; `None` when the file has none.
    pub fn setup(&self, vars: &[(&str, &str)]) -> Option<String> {
        self.setup.as_deref().map(|text| fill_text(text, vars))
    }

    /// Where the format comes from.
    pub fn origin(&self) -> &Origin {
        &self.origin
    }

    /// Whether the receiving address followed by `suffix` (`""`, `"/alert"`, `"/v2/alerts/abc/close"`) is one this
    /// format's senders post to.
    pub fn accepts_suffix(&self, suffix: &str) -> bool {
        self.route_of(suffix).is_some()
    }

    /// Whether a delivery with `method` (`POST`, or `PUT` where the route says so) to `suffix` is one this
    /// format's senders make.
    pub fn accepts_delivery(&self, method: &http::Method, suffix: &str) -> bool {
        match self.route_of(suffix) {
            Some((route, _)) if route.put => method == http::Method::PUT,
            Some(_) => method == http::Method::POST,
            None => false,
        }
    }

    /// The route a delivery (a `POST`) to `suffix` matches, with its named segments.
    pub(super) fn route_of(&self, suffix: &str) -> Option<(&Route, Vec<(String, String)>)> {
        self.matching_route(suffix, false)
    }

    /// Whether the format's senders look up the request ids it answers deliveries with (a `lookup` route).
    pub fn has_lookup(&self) -> bool {
        self.routes.iter().any(|route| route.lookup)
    }

    /// The request id a `GET` to `suffix` looks up, when `suffix` is the format's lookup route.
    pub fn lookup_id(&self, suffix: &str) -> Option<String> {
        let (_, named) = self.matching_route(suffix, true)?;
        named
            .into_iter()
            .find(|(name, _)| name == "request_id")
            .map(|(_, value)| value)
    }

    /// The route of the kind asked (a lookup or a delivery) that `suffix` matches, with its named segments.
    fn matching_route(&self, suffix: &str, lookup: bool) -> Option<(&Route, Vec<(String, String)>)> {
        let suffix = suffix.strip_suffix('/').unwrap_or(suffix);
        if self.routes.is_empty() {
            return (suffix.is_empty() && !lookup).then(|| (&EMPTY_ROUTE, Vec::new()));
        }
        let parts: Vec<&str> = if suffix.is_empty() {
            Vec::new()
        } else {
            suffix.strip_prefix('/')?.split('/').collect()
        };
        self.routes.iter().find_map(|route| {
            if route.lookup != lookup || route.segments.len() != parts.len() {
                return None;
            }
            let mut named = Vec::new();
            for (segment, part) in route.segments.iter().zip(&parts) {
                match segment {
                    Segment::Literal(text) if text == part => {}
                    Segment::Named(name) if !part.is_empty() => {
                        let decoded = percent_encoding::percent_decode_str(part).decode_utf8_lossy();
                        named.push((name.clone(), decoded.into_owned()));
                    }
                    _ => return None,
                }
            }
            Some((route, named))
        })
    }

    /// The sender's key when it travels in the body (PagerDuty's `routing_key`): a string at the format's
    /// `key_in_body` path, read from a JSON body.
    pub fn key_in_body(&self, body: &[u8]) -> Option<String> {
        let path = self.key_in_body.as_ref()?;
        let value: Value = serde_json::from_slice(body).ok()?;
        let headers = http::HeaderMap::new();
        let scope = super::source::Scope {
            body: &value,
            current: &value,
            headers: &headers,
            query: &[],
            route: &[],
            lets: &[],
            max_depth: crate::alerts::payload::DEFAULT_MAX_DEPTH,
        };
        path.eval(&scope)?.as_str().map(str::to_owned)
    }

    /// Whether `address` may be kept as a subscription confirmation for a maintainer to open: an `https://`
    /// address whose host is one of the file's `confirm_hosts` or under one (none listed: none may).
    pub fn confirmation_allowed(&self, address: &str) -> bool {
        let Ok(uri) = address.parse::<http::Uri>() else {
            return false;
        };
        let host = uri.host().unwrap_or_default().to_ascii_lowercase();
        uri.scheme_str() == Some("https")
            && uri
                .authority()
                .is_some_and(|authority| !authority.as_str().contains('@'))
            && self
                .confirm_hosts
                .iter()
                .any(|allowed| host == *allowed || host.ends_with(&format!(".{allowed}")))
    }

    /// `payload` (an alert's stored JSON text) with the sender's key blanked where the body carries it, so that
    /// no stored payload holds a key; unchanged for a format whose key is not in the body, or text not JSON.
    pub fn without_key(&self, payload: &str) -> String {
        let Some(path) = &self.key_in_body else {
            return payload.to_owned();
        };
        let Ok(mut value) = serde_json::from_str::<Value>(payload) else {
            return payload.to_owned();
        };
        if !path.blank(&mut value) {
            return payload.to_owned();
        }
        serde_json::to_string(&value).unwrap_or_else(|_| payload.to_owned())
    }

    /// Whether the sender's key may travel in the body.
    pub fn has_key_in_body(&self) -> bool {
        self.key_in_body.is_some()
    }

    /// How the key may be presented: Bearer first, then the format's own schemes.
    pub fn auth_schemes(&self) -> &[AuthScheme] {
        &self.auth
    }

    /// The status of a successful delivery: 200, 201 or 202, as the sender needs.
    pub fn success_status(&self) -> http::StatusCode {
        self.success_status
    }

    /// The body a sender expects on success, when it expects one of its own (PagerDuty, Alerta, Opsgenie):
    /// the file's `answer` with each `{name}` placeholder of its strings replaced by the value of `vars`
    /// (`dedup_key`, `request_id`, `id`…; an unknown name becomes empty). `None`: the intake's usual answer.
    pub fn answer_body(&self, vars: &[(&str, &str)]) -> Option<Value> {
        self.answer.as_ref().map(|answer| fill(answer, vars))
    }

    /// Whether the body is read as JSON whatever its `Content-Type` says (SNS labels it text).
    pub fn body_is_json_whatever_content_type(&self) -> bool {
        self.json_whatever_content_type
    }

    /// The field of a `multipart/form-data` body that holds the JSON (Uptime Kuma's form preset: `data`), if the
    /// format's senders may post a form.
    pub fn form_field(&self) -> Option<&str> {
        self.form_field.as_deref()
    }

    /// The names of the format's variants, in the order they are tried.
    pub fn variant_names(&self) -> Vec<&str> {
        self.variants
            .iter()
            .map(|variant| variant.name.as_str())
            .collect()
    }

    /// The mapping for a delivery: the first variant whose condition holds, else the top level.
    pub(super) fn mapping_for(&self, scope: &super::source::Scope<'_>) -> &Mapping {
        self.variants
            .iter()
            .find(|variant| variant.when.holds(scope))
            .map_or(&self.base, |variant| &variant.mapping)
    }
}

static EMPTY_ROUTE: Route = Route {
    segments: Vec::new(),
    state: None,
    lookup: false,
    put: false,
};

impl When {
    fn holds(&self, scope: &super::source::Scope<'_>) -> bool {
        self.any.iter().any(|condition| condition.holds(scope))
    }
}

impl Condition {
    fn holds(&self, scope: &super::source::Scope<'_>) -> bool {
        let value = self.path.eval(scope);
        if self.missing {
            return value.is_none();
        }
        let Some(value) = value else {
            return false;
        };
        match &self.is {
            None => true,
            Some(words) => super::source::scalar_text(&value)
                .is_some_and(|text| words.iter().any(|word| word.eq_ignore_ascii_case(text.trim()))),
        }
    }
}

/// `answer` with its `{name}` placeholders filled.
fn fill(value: &Value, vars: &[(&str, &str)]) -> Value {
    match value {
        Value::String(text) => Value::String(fill_text(text, vars)),
        Value::Array(items) => Value::Array(items.iter().map(|item| fill(item, vars)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, item)| (key.clone(), fill(item, vars)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn fill_text(text: &str, vars: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let name_len = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        if name_len > 0 && after[name_len..].starts_with('}') {
            let name = &after[..name_len];
            if let Some((_, value)) = vars.iter().find(|(key, _)| *key == name) {
                out.push_str(value);
            }
            rest = &after[name_len + 1..];
        } else {
            // Not a placeholder (`{"Authorization": …}` in a setup text): kept as written.
            out.push('{');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

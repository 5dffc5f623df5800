//! V3's authentication: which routes turned anonymous callers away, and where a V3 caller's credential may be.
//!
//! Most V3 modules opened with `before { authenticate! }` (`rules/v3-auth.toml` lists them, one entry per module or
//! route group): an anonymous call got 401 before its route ran, even on a public project. V3 read the caller's
//! token from the `PRIVATE-TOKEN` header or from the merged parameters (`private_token`, or OAuth's
//! `access_token`): the query string, or a form or JSON body, for every method. [`lift_credentials`] moves a token
//! found in the query or body into the header the backend reads, so that every later backend call carries it.

use bytes::Bytes;
use http::header::{HeaderMap, HeaderValue, CONTENT_LENGTH, CONTENT_TYPE};
use http::{Method, Request};
use serde::Deserialize;
use serde_json::Value;
use toml::Spanned;

use super::loader::LoadError;
use crate::body::{self, Body};
use crate::budget::BodyBudget;
use crate::context::RequestContext;
use crate::error::GatewayError;
use crate::url_parts::{encode_pairs, parse_pairs};

/// One segment of an auth route's path.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    /// This exact text.
    Literal(String),
    /// Any one segment (`:name`).
    Param,
    /// Any number of segments, none included (a final `*`).
    Rest,
}

/// One entry of the authentication table.
#[derive(Debug, Clone)]
pub struct AuthRoute {
    /// The methods it covers; `None` is any.
    methods: Option<Vec<Method>>,
    segments: Vec<Segment>,
    /// Whether V3 authenticated the caller before the route ran.
    pub authenticate: bool,
    /// The V3 code it follows.
    pub source: String,
    /// `file:line` of the entry.
    pub origin: String,
    /// The entry as written (`GET /projects/:id`).
    pub v3: String,
}

impl AuthRoute {
    /// Parses `"GET,POST /projects/:id/issues/*"`.
    fn parse(v3: &str) -> Result<(Option<Vec<Method>>, Vec<Segment>), String> {
        let (methods, path) = v3
            .trim()
            .split_once(' ')
            .ok_or_else(|| format!("auth route {v3:?} must be \"METHODS /path\""))?;
        let methods = if methods == "*" {
            None
        } else {
            let mut parsed = Vec::new();
            for name in methods.split(',') {
                let method = Method::from_bytes(name.trim().as_bytes())
                    .map_err(|_| format!("auth route {v3:?}: unknown method {name:?}"))?;
                parsed.push(method);
            }
            Some(parsed)
        };
        let path = path.trim();
        if !path.starts_with('/') {
            return Err(format!("auth route {v3:?}: the path must start with /"));
        }
        let parts: Vec<&str> = path.split('/').filter(|part| !part.is_empty()).collect();
        let mut segments = Vec::with_capacity(parts.len());
        for (index, part) in parts.iter().enumerate() {
            segments.push(match *part {
                "*" if index + 1 == parts.len() => Segment::Rest,
                "*" => return Err(format!("auth route {v3:?}: * may only end the path")),
                part if part.starts_with(':') && part.len() > 1 => Segment::Param,
                part => Segment::Literal(part.to_owned()),
            });
        }
        Ok((methods, segments))
    }

    fn matches(&self, method: &Method, path: &[&str]) -> bool {
        if let Some(methods) = &self.methods {
            if !methods.contains(method) {
                return false;
            }
        }
        let mut rest = path;
        for segment in &self.segments {
            match segment {
                Segment::Rest => return true,
                Segment::Param => match rest.split_first() {
                    Some((_, tail)) => rest = tail,
                    None => return false,
                },
                Segment::Literal(text) => match rest.split_first() {
                    Some((first, tail)) if first == text => rest = tail,
                    _ => return false,
                },
            }
        }
        rest.is_empty()
    }
}

/// The authentication table: the first entry matching a request decides.
#[derive(Debug, Clone, Default)]
pub struct AuthTable {
    routes: Vec<AuthRoute>,
}

#[derive(Deserialize)]
struct AuthFile {
    #[serde(default)]
    auth: Vec<Spanned<RawAuth>>,
}

/// An `[[auth]]` entry as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawAuth {
    v3: String,
    authenticate: bool,
    source: String,
}

fn line_of(text: &str, offset: usize) -> usize {
    text.get(..offset)
        .map_or(1, |before| before.matches('\n').count() + 1)
}

impl AuthTable {
    /// The `[[auth]]` entries of rule files given as `(name, contents)`, in file order.
    pub fn compile(sources: &[(String, String)]) -> Result<Self, LoadError> {
        let mut routes = Vec::new();
        let mut errors = Vec::new();
        for (name, text) in sources {
            // Syntax errors are reported by the rule loader, which reads the same files.
            let Ok(file) = toml::from_str::<AuthFile>(text) else {
                continue;
            };
            for raw in file.auth {
                let origin = format!("{name}:{}", line_of(text, raw.span().start));
                let raw = raw.into_inner();
                match AuthRoute::parse(&raw.v3) {
                    Ok((methods, segments)) => routes.push(AuthRoute {
                        methods,
                        segments,
                        authenticate: raw.authenticate,
                        source: raw.source,
                        origin,
                        v3: raw.v3,
                    }),
                    Err(message) => errors.push(format!("{origin}: {message}")),
                }
            }
        }
        if errors.is_empty() {
            Ok(AuthTable { routes })
        } else {
            Err(LoadError(errors))
        }
    }

    /// The entry deciding a V3 request (`path` relative to `/api/v3`), if any.
    pub fn find(&self, method: &Method, path: &str) -> Option<&AuthRoute> {
        let segments: Vec<&str> = path.split('/').filter(|part| !part.is_empty()).collect();
        self.routes.iter().find(|route| route.matches(method, &segments))
    }

    /// Whether V3 turned an anonymous caller of this route away with 401.
    pub fn requires_authentication(&self, method: &Method, path: &str) -> bool {
        self.find(method, path).is_some_and(|route| route.authenticate)
    }

    /// Every entry, in file order.
    pub fn routes(&self) -> &[AuthRoute] {
        &self.routes
    }
}

/// Whether the request's headers carry a credential: a non-empty `PRIVATE-TOKEN`, or `Authorization`.
pub fn has_credentials(headers: &HeaderMap) -> bool {
    headers
        .get("private-token")
        .is_some_and(|value| !value.as_bytes().iter().all(u8::is_ascii_whitespace))
        || headers
            .get(http::header::AUTHORIZATION)
            .is_some_and(|value| !value.is_empty())
}

/// A credential found among the parameters: `(header name, header value)`.
fn credential_header(name: &str, value: &str) -> Option<(&'static str, HeaderValue)> {
    let value = value.trim();
    if value.is_empty() {
        return None;
    }
    match name {
        "private_token" => HeaderValue::from_str(value)
            .ok()
            .map(|value| ("private-token", value)),
        "access_token" => HeaderValue::from_str(&format!("Bearer {value}"))
            .ok()
            .map(|value| ("authorization", value)),
        _ => None,
    }
}

/// The names V3 read a token from, in V3's order (`private_token` before OAuth's `access_token`).
const TOKEN_PARAMS: [&str; 2] = ["private_token", "access_token"];

/// Takes the token parameters out of form pairs, answering the header the first one becomes.
fn take_from_pairs(pairs: &mut Vec<(String, String)>) -> Option<(&'static str, HeaderValue)> {
    let found = TOKEN_PARAMS.iter().find_map(|wanted| {
        pairs
            .iter()
            .find(|(name, _)| name == wanted)
            .and_then(|(name, value)| credential_header(name, value))
    });
    if found.is_some() {
        pairs.retain(|(name, _)| !TOKEN_PARAMS.contains(&name.as_str()));
    }
    found
}

fn media_type(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(CONTENT_TYPE)?.to_str().ok()?;
    Some(value.split(';').next().unwrap_or("").trim().to_ascii_lowercase())
}

/// Moves a V3 caller's token from the query or a form or JSON body into the header the backend reads
/// (`PRIVATE-TOKEN` for `private_token`, `Authorization: Bearer` for `access_token`), taking it out of where it was.
///
/// A request that already carries a credential header is left as it is. A body is read only when it is a form or
/// JSON object of a declared length within `max_body`; others (multipart uploads, streamed bodies) are streamed
/// on unread.
pub async fn lift_credentials(
    request: Request<Body>,
    budget: &BodyBudget,
    max_body: usize,
    context: &RequestContext,
) -> Result<Request<Body>, GatewayError> {
    if has_credentials(request.headers()) {
        return Ok(request);
    }
    let (mut parts, incoming) = request.into_parts();

    if let Some(query) = parts.uri.query() {
        let mut pairs = parse_pairs(query.as_bytes());
        if let Some((name, value)) = take_from_pairs(&mut pairs) {
            let rest = encode_pairs(&pairs);
            let path = parts.uri.path();
            let target = if rest.is_empty() {
                path.to_owned()
            } else {
                format!("{path}?{rest}")
            };
            parts.uri = target
                .parse()
                .map_err(|_| GatewayError::BadRequest("request target".to_owned()))?;
            parts.headers.insert(name, value);
            return Ok(Request::from_parts(parts, incoming));
        }
    }

    let media = media_type(&parts.headers);
    let is_form = media.as_deref() == Some("application/x-www-form-urlencoded");
    let is_json = media
        .as_deref()
        .is_some_and(|media| media == "application/json" || media.ends_with("+json"));
    let declared = parts
        .headers
        .get(CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.trim().parse::<u64>().ok());
    let readable = matches!(declared, Some(length) if length > 0 && length <= max_body as u64);
    if !(is_form || is_json) || !readable {
        return Ok(Request::from_parts(parts, incoming));
    }
    let (bytes, held) = budget
        .read(incoming, declared, max_body)
        .await
        .map_err(|error| GatewayError::BadRequest(format!("the request body could not be read: {error}")))?;
    context.hold(held);
    let (found, rewritten) = if is_form {
        let mut pairs = parse_pairs(&bytes);
        let found = take_from_pairs(&mut pairs);
        (found, Bytes::from(encode_pairs(&pairs)))
    } else {
        match serde_json::from_slice::<Value>(&bytes) {
            Ok(Value::Object(mut object)) => {
                let found = TOKEN_PARAMS.iter().find_map(|wanted| {
                    object
                        .get(*wanted)
                        .and_then(Value::as_str)
                        .and_then(|value| credential_header(wanted, value))
                });
                if found.is_some() {
                    for name in TOKEN_PARAMS {
                        object.remove(name);
                    }
                }
                let text = serde_json::to_vec(&Value::Object(object)).unwrap_or_default();
                (found, Bytes::from(text))
            }
            _ => (None, bytes.clone()),
        }
    };
    let body = match found {
        Some((name, value)) => {
            parts.headers.insert(name, value);
            parts
                .headers
                .insert(CONTENT_LENGTH, HeaderValue::from(rewritten.len()));
            rewritten
        }
        None => bytes,
    };
    Ok(Request::from_parts(parts, body::full(body)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> AuthTable {
        AuthTable::compile(&[("t.toml".to_owned(), text.to_owned())]).unwrap_or_default()
    }

    #[test]
    fn the_first_matching_entry_decides_and_a_final_star_matches_any_rest() {
        let table = table(
            r#"
[[auth]]
v3 = "GET /projects/:id/repository/commits/:sha/blob"
authenticate = false
source = "repositories.rb"

[[auth]]
v3 = "* /projects/:id/repository/commits/*"
authenticate = true
source = "commits.rb"

[[auth]]
v3 = "PUT,DELETE /projects/:id"
authenticate = true
source = "projects.rb"
"#,
        );
        assert!(!table.requires_authentication(&Method::GET, "/projects/1/repository/commits/abc/blob"));
        assert!(table.requires_authentication(&Method::GET, "/projects/1/repository/commits"));
        assert!(table.requires_authentication(&Method::POST, "/projects/1/repository/commits/a/comments"));
        assert!(table.requires_authentication(&Method::DELETE, "/projects/1"));
        assert!(!table.requires_authentication(&Method::GET, "/projects/1"));
        assert!(!table.requires_authentication(&Method::PUT, "/projects/1/other"));
    }

    #[test]
    fn malformed_entries_are_refused_with_their_line() {
        let error = AuthTable::compile(&[(
            "t.toml".to_owned(),
            "[[auth]]\nv3 = \"GET projects\"\nauthenticate = true\nsource = \"x\"\n".to_owned(),
        )])
        .err()
        .map(|error| error.to_string())
        .unwrap_or_default();
        assert!(error.starts_with("t.toml:1:"), "{error}");
    }

    #[test]
    fn token_parameters_become_headers_and_leave_the_pairs() {
        let mut pairs = vec![
            ("name".to_owned(), "x".to_owned()),
            ("private_token".to_owned(), "abc".to_owned()),
        ];
        let found = take_from_pairs(&mut pairs);
        assert_eq!(found.map(|(name, _)| name), Some("private-token"));
        assert_eq!(pairs.len(), 1);
        let mut pairs = vec![("access_token".to_owned(), "oauth".to_owned())];
        let found = take_from_pairs(&mut pairs);
        assert_eq!(
            found,
            Some(("authorization", HeaderValue::from_static("Bearer oauth")))
        );
    }
}

//! V3's authentication: which routes turned anonymous callers away, and where a V3 caller's credential may be.
//!
//! Most V3 modules opened with `before { authenticate! }` (`rules/v3-auth.toml` lists them, one entry per module or
//! route group): an anonymous call got 401 before its route ran, even on a public project. V3 read the caller's
//! token from the `PRIVATE-TOKEN` header or from the merged parameters (`private_token`, or OAuth's
//! `access_token` and `bearer_token`): the query string, or a form or JSON body, for every method.
//! [`lift_from_query`] and [`lift_from_body`] move a token found there into the header the backend reads, so that
//! every later backend call carries it. svcgate answers 401 only when a request provably has no credential; a
//! `Cookie` or a body it does not open is left to the backend.

use bytes::Bytes;
use http::header::{HeaderMap, HeaderValue, CONTENT_LENGTH, CONTENT_TYPE};
use http::uri::{PathAndQuery, Uri};
use http::Method;
use serde::Deserialize;
use serde_json::Value;
use toml::Spanned;

use super::loader::LoadError;
use crate::http::error::GatewayError;
use crate::util::url_parts::{encode_pairs, parse_pairs};

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

    /// Whether V3 turned an anonymous caller of this route away with 401. A CORS preflight (`OPTIONS`) never is;
    /// `HEAD` is answered as `GET` (Rack served HEAD through the GET route).
    pub fn requires_authentication(&self, method: &Method, path: &str) -> bool {
        if method == Method::OPTIONS {
            return false;
        }
        let method = if method == Method::HEAD {
            &Method::GET
        } else {
            method
        };
        self.find(method, path).is_some_and(|route| route.authenticate)
    }

    /// Every entry, in file order.
    pub fn routes(&self) -> &[AuthRoute] {
        &self.routes
    }
}

/// Whether the request's headers carry a credential, or may: a non-empty `PRIVATE-TOKEN`, `Authorization`, or a
/// `Cookie` (V3 accepted the web session through warden; only the backend can tell whether it is signed in).
pub fn has_credentials(headers: &HeaderMap) -> bool {
    headers
        .get("private-token")
        .is_some_and(|value| !value.as_bytes().iter().all(u8::is_ascii_whitespace))
        || headers
            .get(http::header::AUTHORIZATION)
            .is_some_and(|value| !value.is_empty())
        || headers
            .get(http::header::COOKIE)
            .is_some_and(|value| !value.as_bytes().iter().all(u8::is_ascii_whitespace))
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
        "access_token" | "bearer_token" => HeaderValue::from_str(&format!("Bearer {value}"))
            .ok()
            .map(|value| ("authorization", value)),
        _ => None,
    }
}

/// The names V3 read a token from, in V3's order: `private_token`, then OAuth's `access_token` and Doorkeeper's
/// `bearer_token` (`from_access_token_param`, `from_bearer_param`).
const TOKEN_PARAMS: [&str; 3] = ["private_token", "access_token", "bearer_token"];

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

/// Replaces the query of `uri` (none when `query` is empty), keeping its scheme, authority and path, so that an
/// HTTP/2 request keeps its host.
pub(crate) fn set_query(uri: &mut Uri, query: &str) -> Result<(), GatewayError> {
    let target = if query.is_empty() {
        uri.path().to_owned()
    } else {
        format!("{}?{query}", uri.path())
    };
    let mut parts = uri.clone().into_parts();
    parts.path_and_query = Some(
        target
            .parse::<PathAndQuery>()
            .map_err(|_| GatewayError::BadRequest("request target".to_owned()))?,
    );
    *uri = Uri::from_parts(parts).map_err(|_| GatewayError::BadRequest("request target".to_owned()))?;
    Ok(())
}

/// Moves a token in the query (`private_token`, `access_token`, `bearer_token`) into the header the backend reads
/// (`PRIVATE-TOKEN`, or `Authorization: Bearer`), taking it out of the query; answers whether it moved one. A
/// request that already carries a credential header, or whose query holds no token, is left byte for byte.
pub fn lift_from_query(parts: &mut http::request::Parts) -> Result<bool, GatewayError> {
    if has_credentials(&parts.headers) {
        return Ok(false);
    }
    let Some(query) = parts.uri.query() else {
        return Ok(false);
    };
    let mut pairs = parse_pairs(query.as_bytes());
    let Some((name, value)) = take_from_pairs(&mut pairs) else {
        return Ok(false);
    };
    set_query(&mut parts.uri, &encode_pairs(&pairs))?;
    parts.headers.insert(name, value);
    Ok(true)
}

/// What svcgate can learn of a request's body without the backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyKind {
    /// None (no length and no transfer coding, or `Content-Length: 0`): it holds no token.
    Absent,
    /// A form or JSON body of a declared length within the limit: svcgate may open it.
    Readable(u64),
    /// A body svcgate does not open (multipart, streamed, too large, other types): it may hold a token.
    Unopened,
}

/// Classifies the body of a request whose headers are `headers`, `max_body` being the largest svcgate reads.
pub fn body_kind(headers: &HeaderMap, max_body: usize) -> BodyKind {
    let declared = headers
        .get(CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.trim().parse::<u64>().ok());
    let chunked = headers.contains_key(http::header::TRANSFER_ENCODING);
    if !chunked && declared.unwrap_or(0) == 0 {
        return BodyKind::Absent;
    }
    let media = media_type(headers);
    let openable = media.as_deref().is_some_and(|media| {
        media == "application/x-www-form-urlencoded"
            || media == "application/json"
            || media.ends_with("+json")
    });
    match declared {
        Some(length) if openable && !chunked && length <= max_body as u64 => BodyKind::Readable(length),
        _ => BodyKind::Unopened,
    }
}

/// Takes a token out of a form or JSON body read whole, putting it in the header the backend reads and updating
/// `Content-Length`; answers the body to send on and whether a token moved. Other bodies are left as they are.
pub fn lift_from_body(parts: &mut http::request::Parts, bytes: Bytes) -> (Bytes, bool) {
    let media = media_type(&parts.headers);
    let found = if media.as_deref() == Some("application/x-www-form-urlencoded") {
        let mut pairs = parse_pairs(&bytes);
        take_from_pairs(&mut pairs).map(|found| (found, Bytes::from(encode_pairs(&pairs))))
    } else {
        match serde_json::from_slice::<Value>(&bytes) {
            Ok(Value::Object(mut object)) => {
                let found = TOKEN_PARAMS.iter().find_map(|wanted| {
                    object
                        .get(*wanted)
                        .and_then(Value::as_str)
                        .and_then(|value| credential_header(wanted, value))
                });
                found.map(|found| {
                    for name in TOKEN_PARAMS {
                        object.remove(name);
                    }
                    let text = serde_json::to_vec(&Value::Object(object)).unwrap_or_default();
                    (found, Bytes::from(text))
                })
            }
            _ => None,
        }
    };
    match found {
        Some(((name, value), rewritten)) => {
            parts.headers.insert(name, value);
            parts
                .headers
                .insert(CONTENT_LENGTH, HeaderValue::from(rewritten.len()));
            (rewritten, true)
        }
        None => (bytes, false),
    }
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

    fn parts_of(target: &str) -> http::request::Parts {
        let (parts, ()) = http::Request::get(target)
            .body(())
            .map(http::Request::into_parts)
            .unwrap_or_else(|_| http::Request::new(()).into_parts());
        parts
    }

    #[test]
    fn lifting_a_query_token_keeps_the_scheme_and_authority_of_an_http2_target() {
        let mut parts = parts_of("https://gateway.example/api/v3/projects?bearer_token=abc&page=2");
        assert!(matches!(lift_from_query(&mut parts), Ok(true)));
        assert_eq!(
            parts.uri.to_string(),
            "https://gateway.example/api/v3/projects?page=2"
        );
        assert_eq!(
            parts.headers.get("authorization"),
            Some(&HeaderValue::from_static("Bearer abc"))
        );
    }

    #[test]
    fn a_query_without_a_token_is_left_byte_for_byte() {
        let target = "/api/v3/projects?search=a%7eb&x=y+z&empty&scope%5B%5D=pending";
        let mut parts = parts_of(target);
        assert!(matches!(lift_from_query(&mut parts), Ok(false)));
        assert_eq!(parts.uri.to_string(), target);
    }
}

//! Signed-in page sessions: a random id in an `HttpOnly`, `SameSite=Strict` cookie, the personal access token
//! it stands for kept server-side, in memory, with an expiry and a CSRF token for every form.
//!
//! Sessions live in memory on purpose: a restart signs people out rather than keeping their backend tokens in
//! another place on disk.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use http::HeaderMap;
use sha2::{Digest, Sha256};

use crate::secret::random_hex;

/// The session cookie's name.
pub const COOKIE: &str = "svcgate_session";
/// The sign-in form's CSRF cookie (a double-submit token, before there is a session).
pub const CSRF_COOKIE: &str = "svcgate_csrf";

/// One signed-in person.
#[derive(Debug, Clone)]
pub struct Session {
    /// Their personal access token on the backend.
    pub token: String,
    /// Their username.
    pub username: String,
    /// The token every form of theirs carries.
    pub csrf: String,
    expires: Instant,
}

/// Every open session, by the hash of its id.
pub struct Sessions {
    ttl: Duration,
    open: Mutex<HashMap<String, Session>>,
}

fn hash(id: &str) -> String {
    hex::encode(Sha256::digest(id.as_bytes()))
}

/// A cookie's value from the request headers.
pub fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(http::header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value.to_owned())
}

/// A `Set-Cookie` value: `HttpOnly`, `SameSite=Strict`, path-limited, `Secure` over TLS.
pub fn set_cookie(name: &str, value: &str, max_age: Duration, secure: bool) -> String {
    format!(
        "{name}={value}; Path=/-/svcgate/; HttpOnly; SameSite=Strict; Max-Age={}{}",
        max_age.as_secs(),
        if secure { "; Secure" } else { "" }
    )
}

impl Sessions {
    /// Sessions that expire `ttl` after sign-in.
    pub fn new(ttl: Duration) -> Self {
        Sessions {
            ttl,
            open: Mutex::new(HashMap::new()),
        }
    }

    /// How long a session lasts.
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// Opens a session; answers its id (the cookie's value).
    pub fn open(&self, token: String, username: String) -> Option<String> {
        let id = random_hex(32).ok()?;
        let csrf = random_hex(16).ok()?;
        let mut open = self.open.lock().ok()?;
        let now = Instant::now();
        open.retain(|_, session| session.expires > now);
        open.insert(
            hash(&id),
            Session {
                token,
                username,
                csrf,
                expires: now + self.ttl,
            },
        );
        Some(id)
    }

    /// The live session of a request, if any.
    pub fn of(&self, headers: &HeaderMap) -> Option<Session> {
        let id = cookie(headers, COOKIE)?;
        let open = self.open.lock().ok()?;
        open.get(&hash(&id))
            .filter(|session| session.expires > Instant::now())
            .cloned()
    }

    /// Ends the session of a request.
    pub fn close(&self, headers: &HeaderMap) {
        if let (Some(id), Ok(mut open)) = (cookie(headers, COOKIE), self.open.lock()) {
            open.remove(&hash(&id));
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn sessions_are_found_by_cookie_and_end_on_close() {
        let sessions = Sessions::new(Duration::from_secs(60));
        let id = sessions.open("t".into(), "demo".into()).unwrap();
        let mut headers = HeaderMap::new();
        headers.insert(
            http::header::COOKIE,
            format!("other=1; {COOKIE}={id}").parse().unwrap(),
        );
        assert_eq!(sessions.of(&headers).unwrap().username, "demo");
        sessions.close(&headers);
        assert!(sessions.of(&headers).is_none());
    }

    #[test]
    fn expired_sessions_are_not_found() {
        let sessions = Sessions::new(Duration::from_millis(0));
        let id = sessions.open("t".into(), "demo".into()).unwrap();
        let mut headers = HeaderMap::new();
        headers.insert(http::header::COOKIE, format!("{COOKIE}={id}").parse().unwrap());
        assert!(sessions.of(&headers).is_none());
    }

    #[test]
    fn cookies_are_strict_http_only_and_secure_over_tls() {
        let value = set_cookie(COOKIE, "x", Duration::from_secs(10), true);
        assert!(
            value.contains("HttpOnly") && value.contains("SameSite=Strict") && value.ends_with("; Secure")
        );
        assert!(!set_cookie(COOKIE, "x", Duration::from_secs(10), false).contains("Secure"));
    }
}

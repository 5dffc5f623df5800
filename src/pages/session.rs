//! Signed-in page sessions: a random id in an `HttpOnly`, `SameSite=Strict` cookie; the personal access token it
//! stands for, an expiry and a CSRF token for every form are kept in the store, so that every replica on a shared
//! store knows every session and a restart signs nobody out.
//!
//! The store holds the hash of the cookie's value, never the value, and the token sealed with the secret key;
//! expired sessions are swept whenever a session is opened.

use std::sync::Arc;
use std::time::Duration;

use http::HeaderMap;
use sha2::{Digest, Sha256};

use crate::secret::{random_hex, SecretBox};
use crate::store::{PageSessionRecord, Store};
use crate::time_format::format_time;

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
}

/// Every open session, kept in the store.
pub struct Sessions {
    ttl: Duration,
    store: Arc<dyn Store>,
    secret: Arc<SecretBox>,
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

fn now() -> time::OffsetDateTime {
    time::OffsetDateTime::now_utc()
}

impl Sessions {
    /// Sessions that expire `ttl` after sign-in, kept in `store`, tokens sealed by `secret`.
    pub fn new(ttl: Duration, store: Arc<dyn Store>, secret: Arc<SecretBox>) -> Self {
        Sessions { ttl, store, secret }
    }

    /// How long a session lasts.
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// Opens a session; answers its id (the cookie's value), or `None` when it could not be kept.
    pub async fn open(&self, token: String, username: String) -> Option<String> {
        let id = random_hex(32).ok()?;
        let csrf = random_hex(16).ok()?;
        let sealed_token = self.secret.seal_text(&token).ok()?;
        let now = now();
        if let Err(error) = self.store.page_sessions_sweep(format_time(now)).await {
            tracing::warn!(%error, "expired page sessions could not be swept");
        }
        let record = PageSessionRecord {
            id_hash: hash(&id),
            sealed_token,
            username,
            csrf,
            expires_at: format_time(now + self.ttl),
        };
        match self.store.page_session_put(record).await {
            Ok(()) => Some(id),
            Err(error) => {
                tracing::error!(%error, "a page session could not be stored");
                None
            }
        }
    }

    /// The live session of a request, if any.
    pub async fn of(&self, headers: &HeaderMap) -> Option<Session> {
        let id = cookie(headers, COOKIE)?;
        let record = self
            .store
            .page_session_get(hash(&id), format_time(now()))
            .await
            .ok()
            .flatten()?;
        Some(Session {
            token: self.secret.open_text(&record.sealed_token).ok()?,
            username: record.username,
            csrf: record.csrf,
        })
    }

    /// Ends the session of a request.
    pub async fn close(&self, headers: &HeaderMap) {
        if let Some(id) = cookie(headers, COOKIE) {
            if let Err(error) = self.store.page_session_delete(hash(&id)).await {
                tracing::error!(%error, "a page session could not be ended");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn sessions(dir: &tempfile::TempDir, ttl: Duration) -> Sessions {
        let store = Arc::new(crate::store::SqliteStore::open(dir.path()).unwrap());
        Sessions::new(ttl, store, Arc::new(SecretBox::new([7; 32])))
    }

    fn with_cookie(id: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(
            http::header::COOKIE,
            format!("other=1; {COOKIE}={id}").parse().unwrap(),
        );
        headers
    }

    #[tokio::test]
    async fn sessions_are_found_by_cookie_and_end_on_close() {
        let dir = tempfile::tempdir().unwrap();
        let sessions = sessions(&dir, Duration::from_secs(60));
        let id = sessions.open("t".into(), "demo".into()).await.unwrap();
        let headers = with_cookie(&id);
        let found = sessions.of(&headers).await.unwrap();
        assert_eq!((found.username.as_str(), found.token.as_str()), ("demo", "t"));
        sessions.close(&headers).await;
        assert!(sessions.of(&headers).await.is_none());
    }

    #[tokio::test]
    async fn a_session_outlives_the_process_that_opened_it_but_not_its_expiry() {
        let dir = tempfile::tempdir().unwrap();
        let id = sessions(&dir, Duration::from_secs(60))
            .open("t".into(), "demo".into())
            .await
            .unwrap();
        let reopened = sessions(&dir, Duration::from_secs(60));
        assert_eq!(reopened.of(&with_cookie(&id)).await.unwrap().username, "demo");

        let expired = sessions(&dir, Duration::from_millis(0));
        let id = expired.open("t".into(), "demo".into()).await.unwrap();
        assert!(expired.of(&with_cookie(&id)).await.is_none());
    }

    #[tokio::test]
    async fn the_store_holds_neither_the_cookie_nor_the_token_in_the_clear() {
        let dir = tempfile::tempdir().unwrap();
        let sessions = sessions(&dir, Duration::from_secs(60));
        let id = sessions.open("glpat-secret".into(), "demo".into()).await.unwrap();
        let record = sessions
            .store
            .page_session_get(hash(&id), format_time(now()))
            .await
            .unwrap()
            .unwrap();
        assert_ne!(record.id_hash, id);
        assert!(!record.sealed_token.contains("glpat-secret"));
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

//! Signed-in page sessions: a random id in an `HttpOnly`, `SameSite=Strict` cookie; the backend token it stands
//! for, an expiry and a CSRF token for every form are kept in the store, so that every replica on a shared store
//! knows every session and a restart signs nobody out.
//!
//! The store holds the hash of the cookie's value, never the value, and the tokens sealed with the secret key;
//! expired sessions are swept whenever a session is opened. A session signed in through the backend's OAuth also
//! keeps its refresh token and its access token's expiry: shortly before that expiry (`oauth_refresh_margin`) the
//! next request refreshes it, once per session however many requests arrive together: one lock per session in
//! this process, and between replicas a claim in the session row (held for at most the refresh lease, longer than a
//! call to the server may take: the call is cut at `refresh_timeout`, the claim lasts `REFRESH_LEASE_SLACK` more)
//! that the others wait on, so a refresh token is never spent twice. If the provider refuses the refresh token
//! itself (`invalid_grant`, or `invalid_client`: RFC 6749 §5.2), the session ends, but only if its refresh token is
//! still the refused one (another replica may have refreshed it meanwhile), and the person signs in again; any
//! other failure (unreachable, slow, 429, another error code) is taken as passing: the current token is used until
//! it expires and the next request tries again. Signing out revokes the OAuth tokens on the backend.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http::HeaderMap;
use sha2::{Digest, Sha256};

use super::oauth::{OAuthClient, OAuthError, Tokens};
use crate::backend::access::Credentials;
use crate::store::{PageSessionRecord, Store};
use crate::util::secret::{random_hex, SecretBox};
use crate::util::time_format::{format_time, parse_time};

/// The session cookie's name.
pub const COOKIE: &str = "svcgate_session";
/// The sign-in form's CSRF cookie (a double-submit token, before there is a session).
pub const CSRF_COOKIE: &str = "svcgate_csrf";
/// How often a request waiting for another replica's refresh of its session looks again.
const REFRESH_POLL: Duration = Duration::from_millis(100);
/// How much longer than one refresh call a claim on it lasts: time to store the new tokens before another replica
/// may take the refresh over (with the refresh token just spent).
const REFRESH_LEASE_SLACK: Duration = Duration::from_secs(5);

/// One signed-in person.
#[derive(Debug, Clone)]
pub struct Session {
    /// Their token on the backend: a personal access token, or an OAuth access token.
    pub token: String,
    /// Their username.
    pub username: String,
    /// The token every form of theirs carries.
    pub csrf: String,
    /// Whether the token is an OAuth access token (sent as a bearer token).
    pub oauth: bool,
    /// Whether they administer the svc server: not stored, asked of the server (cached) for each page.
    pub admin: bool,
}

impl Session {
    /// The credentials the backend takes this session's token in.
    pub fn credentials(&self) -> Option<Credentials> {
        if self.oauth {
            Credentials::bearer(&self.token)
        } else {
            Credentials::from_token(&self.token)
        }
    }
}

/// Every open session, kept in the store.
pub struct Sessions {
    ttl: Duration,
    store: Arc<dyn Store>,
    secret: Arc<SecretBox>,
    oauth: Option<Arc<OAuthClient>>,
    refresh_margin: Duration,
    /// The longest one refresh call to the provider may take.
    refresh_timeout: Duration,
    /// How long a replica holds the refresh of a session it claimed (others wait for it that long at most).
    refresh_lease: Duration,
    /// One lock per session being refreshed, by id hash.
    refreshing: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    /// How long this replica waits before it tries a failed refresh again.
    refresh_retry: Duration,
    /// Sessions whose refresh failed for a passing reason, by id hash: not tried again before this instant.
    retry_after: Mutex<HashMap<String, std::time::Instant>>,
}

/// The hash a cookie's (or state's) value is stored under.
pub fn hash(id: &str) -> String {
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
    /// Sessions that expire `ttl` after sign-in, kept in `store`, tokens sealed by `secret`; OAuth sessions are
    /// refreshed through `oauth` `refresh_margin` before their access token expires, one refresh call cut at
    /// `refresh_timeout` and held by one replica a little longer than that, a failed one tried again after
    /// `refresh_retry`.
    pub fn new(
        ttl: Duration,
        store: Arc<dyn Store>,
        secret: Arc<SecretBox>,
        oauth: Option<Arc<OAuthClient>>,
        refresh_margin: Duration,
        refresh_timeout: Duration,
        refresh_retry: Duration,
    ) -> Self {
        Sessions {
            ttl,
            store,
            secret,
            oauth,
            refresh_margin,
            refresh_timeout,
            refresh_lease: refresh_timeout.saturating_add(REFRESH_LEASE_SLACK),
            refreshing: Mutex::new(HashMap::new()),
            refresh_retry,
            retry_after: Mutex::new(HashMap::new()),
        }
    }

    /// How long a session lasts.
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// Opens a session for a pasted personal access token; answers its id (the cookie's value), or `None` when it
    /// could not be kept.
    pub async fn open(&self, token: String, username: String) -> Option<String> {
        self.open_with(token, None, None, username).await
    }

    /// Opens a session for tokens issued by the backend's OAuth provider.
    pub async fn open_oauth(&self, tokens: Tokens, username: String) -> Option<String> {
        // A token without an expiry is taken to last as long as the session; its expiry also marks the session
        // as an OAuth one, whose token is sent as a bearer token.
        let expires_at = expiry(tokens.expires_in.unwrap_or(self.ttl.as_secs()));
        self.open_with(
            tokens.access_token,
            tokens.refresh_token,
            Some(expires_at),
            username,
        )
        .await
    }

    async fn open_with(
        &self,
        token: String,
        refresh_token: Option<String>,
        token_expires_at: Option<String>,
        username: String,
    ) -> Option<String> {
        let id = random_hex(32).ok()?;
        let csrf = random_hex(16).ok()?;
        let sealed_token = self.secret.seal_text(&token).ok()?;
        let sealed_refresh_token = match refresh_token {
            Some(refresh) => Some(self.secret.seal_text(&refresh).ok()?),
            None => None,
        };
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
            sealed_refresh_token,
            token_expires_at,
        };
        match self.store.page_session_put(record).await {
            Ok(()) => Some(id),
            Err(error) => {
                tracing::error!(%error, "a page session could not be stored");
                None
            }
        }
    }

    /// The live session of a request, if any, its OAuth token refreshed first when it is about to expire.
    pub async fn of(&self, headers: &HeaderMap) -> Option<Session> {
        let id = cookie(headers, COOKIE)?;
        let id_hash = hash(&id);
        let mut record = self.get(&id_hash).await?;
        if self.needs_refresh(&record) {
            // The last refresh failed a moment ago: a token that still works is used, the server left alone. An
            // expired one is refreshed at once, wait or not.
            if !self.waiting_to_retry(&id_hash) || self.expired(&record) {
                record = self.refresh(&id_hash).await?;
            }
        }
        Some(Session {
            token: self.secret.open_text(&record.sealed_token).ok()?,
            username: record.username,
            csrf: record.csrf,
            oauth: record.token_expires_at.is_some(),
            admin: false,
        })
    }

    async fn get(&self, id_hash: &str) -> Option<PageSessionRecord> {
        match self
            .store
            .page_session_get(id_hash.to_owned(), format_time(now()))
            .await
        {
            Ok(found) => found,
            Err(error) => {
                tracing::error!(%error, "a page session could not be read");
                None
            }
        }
    }

    /// Whether this session's last refresh failed less than `refresh_retry` ago.
    fn waiting_to_retry(&self, id_hash: &str) -> bool {
        let mut retry_after = self
            .retry_after
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        match retry_after.get(id_hash) {
            Some(until) if std::time::Instant::now() < *until => true,
            Some(_) => {
                retry_after.remove(id_hash);
                false
            }
            None => false,
        }
    }

    /// Notes that this session's refresh failed for a passing reason, forgetting the waits already over.
    fn retry_later(&self, id_hash: &str) {
        let now = std::time::Instant::now();
        let mut retry_after = self
            .retry_after
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        retry_after.retain(|_, until| *until > now);
        retry_after.insert(id_hash.to_owned(), now + self.refresh_retry);
    }

    fn needs_refresh(&self, record: &PageSessionRecord) -> bool {
        record
            .token_expires_at
            .as_deref()
            .and_then(parse_time)
            .is_some_and(|expires| expires - now() <= self.refresh_margin)
    }

    /// Refreshes a session's OAuth tokens, once however many requests ask together; `None` when the session ends.
    async fn refresh(&self, id_hash: &str) -> Option<PageSessionRecord> {
        let lock = {
            let mut refreshing = self
                .refreshing
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            Arc::clone(refreshing.entry(id_hash.to_owned()).or_default())
        };
        let outcome = {
            let _held = lock.lock().await;
            self.refresh_locked(id_hash).await
        };
        self.refreshing
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .remove(id_hash);
        outcome
    }

    async fn refresh_locked(&self, id_hash: &str) -> Option<PageSessionRecord> {
        let deadline = tokio::time::Instant::now() + self.refresh_lease;
        loop {
            // Another request (or replica) may have refreshed it while this one waited.
            let current = self.get(id_hash).await?;
            // Refreshed meanwhile, or its refresh failed meanwhile (a request queued behind it does not ask again).
            if !self.needs_refresh(&current) || (self.waiting_to_retry(id_hash) && !self.expired(&current)) {
                return Some(current);
            }
            let Some(sealed_refresh) = current.sealed_refresh_token.clone() else {
                return self.end(id_hash, "the session has no refresh token").await;
            };
            let now = now();
            let claimed = self
                .store
                .page_session_claim_refresh(
                    id_hash.to_owned(),
                    sealed_refresh.clone(),
                    format_time(now),
                    format_time(now + self.refresh_lease),
                )
                .await;
            match claimed {
                Ok(true) => return self.refresh_claimed(id_hash, current, sealed_refresh).await,
                Ok(false) => {}
                Err(error) => {
                    tracing::error!(%error, "the refresh of a page session could not be claimed");
                    return (!self.expired(&current)).then_some(current);
                }
            }
            // Another replica is refreshing this session: wait for its result (or for its claim to lapse).
            if tokio::time::Instant::now() >= deadline {
                return (!self.expired(&current)).then_some(current);
            }
            tokio::time::sleep(REFRESH_POLL).await;
        }
    }

    /// Refreshes a session whose refresh this caller has claimed.
    async fn refresh_claimed(
        &self,
        id_hash: &str,
        current: PageSessionRecord,
        sealed_refresh: String,
    ) -> Option<PageSessionRecord> {
        let Some(client) = &self.oauth else {
            return self
                .end_refused(id_hash, sealed_refresh, "OAuth sign-in is no longer configured")
                .await;
        };
        let Ok(refresh_token) = self.secret.open_text(&sealed_refresh) else {
            return self
                .end_refused(id_hash, sealed_refresh, "the refresh token could not be opened")
                .await;
        };
        let refreshed = tokio::time::timeout(self.refresh_timeout, client.refresh(&refresh_token))
            .await
            .unwrap_or_else(|_| {
                Err(OAuthError::Unreachable(format!(
                    "no answer within {:?}",
                    self.refresh_timeout
                )))
            });
        let tokens = match refreshed {
            Ok(tokens) => tokens,
            Err(error) if ends_session(&error) => {
                return self
                    .end_refused(id_hash, sealed_refresh, &error.to_string())
                    .await
            }
            Err(error) => {
                tracing::warn!(%error, "an OAuth token could not be refreshed; the current one is kept meanwhile");
                self.retry_later(id_hash);
                if let Err(error) = self
                    .store
                    .page_session_release_refresh(id_hash.to_owned(), sealed_refresh)
                    .await
                {
                    tracing::error!(%error, "the refresh of a page session could not be released");
                }
                // A token that still works is used a little longer; a request after `refresh_retry` tries again.
                return (!self.expired(&current)).then_some(current);
            }
        };
        let (Ok(sealed_token), Some(Ok(sealed_refresh_token))) = (
            self.secret.seal_text(&tokens.access_token),
            tokens
                .refresh_token
                .as_deref()
                .or(Some(refresh_token.as_str()))
                .map(|refresh| self.secret.seal_text(refresh)),
        ) else {
            let issued = [
                Some(tokens.access_token.as_str()),
                tokens.refresh_token.as_deref(),
            ];
            revoke(
                client,
                issued.into_iter().flatten(),
                "an unkept refreshed OAuth token",
            )
            .await;
            return self
                .end_refused(id_hash, sealed_refresh, "the new tokens could not be sealed")
                .await;
        };
        let token_expires_at = expiry(tokens.expires_in.unwrap_or(self.ttl.as_secs()));
        match self
            .store
            .page_session_refreshed(
                id_hash.to_owned(),
                sealed_refresh,
                sealed_token.clone(),
                sealed_refresh_token.clone(),
                token_expires_at.clone(),
            )
            .await
        {
            Ok(true) => Some(PageSessionRecord {
                sealed_token,
                sealed_refresh_token: Some(sealed_refresh_token),
                token_expires_at: Some(token_expires_at),
                ..current
            }),
            Ok(false) => {
                // Signed out meanwhile (on any replica), or another refresh won: nobody will ever use the tokens
                // just issued, so they are revoked rather than left valid on the server.
                let issued = [
                    Some(tokens.access_token.as_str()),
                    tokens.refresh_token.as_deref(),
                ];
                revoke(
                    client,
                    issued.into_iter().flatten(),
                    "an unused refreshed OAuth token",
                )
                .await;
                self.get(id_hash).await
            }
            Err(error) => {
                tracing::error!(%error, "a refreshed page session could not be stored");
                None
            }
        }
    }

    /// Ends a session whose token cannot be refreshed.
    async fn end(&self, id_hash: &str, reason: &str) -> Option<PageSessionRecord> {
        tracing::info!(
            reason,
            "a page session ended: its OAuth token could not be refreshed"
        );
        if let Err(error) = self.store.page_session_delete(id_hash.to_owned()).await {
            tracing::error!(%error, "a page session could not be ended");
        }
        None
    }

    /// Ends a session whose refresh with `sealed_refresh` could not be made for good, unless another refresh
    /// replaced that token meanwhile (then the session goes on with the newer one).
    async fn end_refused(
        &self,
        id_hash: &str,
        sealed_refresh: String,
        reason: &str,
    ) -> Option<PageSessionRecord> {
        match self
            .store
            .page_session_end_refused(id_hash.to_owned(), sealed_refresh)
            .await
        {
            Ok(true) => {
                tracing::info!(
                    reason,
                    "a page session ended: its OAuth token could not be refreshed"
                );
                None
            }
            Ok(false) => self.get(id_hash).await,
            Err(error) => {
                tracing::error!(%error, "a page session could not be ended");
                None
            }
        }
    }

    fn expired(&self, record: &PageSessionRecord) -> bool {
        record
            .token_expires_at
            .as_deref()
            .and_then(parse_time)
            .map_or(true, |expires| expires <= now())
    }

    /// Ends the session of a request, revoking its OAuth tokens on the backend.
    pub async fn close(&self, headers: &HeaderMap) {
        let Some(id) = cookie(headers, COOKIE) else {
            return;
        };
        let id_hash = hash(&id);
        let record = self.get(&id_hash).await;
        if let Err(error) = self.store.page_session_delete(id_hash).await {
            tracing::error!(%error, "a page session could not be ended");
        }
        let (Some(record), Some(client)) = (record, &self.oauth) else {
            return;
        };
        if record.token_expires_at.is_none() {
            return;
        }
        // The refresh token first, then the access token: either revokes both on the service, but a provider
        // that revokes only the one named is covered too.
        let tokens: Vec<String> = [
            record.sealed_refresh_token.as_deref(),
            Some(record.sealed_token.as_str()),
        ]
        .into_iter()
        .flatten()
        .filter_map(|sealed| self.secret.open_text(sealed).ok())
        .collect();
        revoke(
            client,
            tokens.iter().map(String::as_str),
            "an OAuth token at sign-out",
        )
        .await;
    }
}

/// Revokes `tokens` on the provider in order, logging (as `what`) those it would not revoke.
async fn revoke<'a>(client: &OAuthClient, tokens: impl Iterator<Item = &'a str>, what: &str) {
    for token in tokens {
        if let Err(error) = client.revoke(token).await {
            tracing::warn!(%error, what, "an OAuth token could not be revoked");
        }
    }
}

/// Whether a failed refresh means the refresh token will never work again (RFC 6749 §5.2: the grant or the
/// client was refused), so the session ends; every other failure is taken as passing.
fn ends_session(error: &OAuthError) -> bool {
    matches!(error, OAuthError::Refused { code, .. } if code == "invalid_grant" || code == "invalid_client")
}

/// The store's time text `seconds` from now.
fn expiry(seconds: u64) -> String {
    format_time(now() + Duration::from_secs(seconds))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn sessions(dir: &tempfile::TempDir, ttl: Duration) -> Sessions {
        let store = Arc::new(crate::store::SqliteStore::open(dir.path()).unwrap());
        Sessions::new(
            ttl,
            store,
            Arc::new(SecretBox::new([7; 32])),
            None,
            Duration::from_secs(60),
            Duration::from_secs(65),
            Duration::from_secs(30),
        )
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
    fn only_a_refused_grant_or_client_ends_a_session() {
        let refused = |status: u16, code: &str| OAuthError::Refused {
            status: http::StatusCode::from_u16(status).unwrap(),
            code: code.to_owned(),
        };
        assert!(ends_session(&refused(400, "invalid_grant")));
        assert!(ends_session(&refused(401, "invalid_client")));
        for passing in [
            refused(429, "slow_down"),
            refused(429, "unknown"),
            refused(400, "invalid_request"),
            refused(403, "unknown"),
            OAuthError::Unreachable("timed out".to_owned()),
            OAuthError::BadAnswer("no access_token".to_owned()),
        ] {
            assert!(!ends_session(&passing), "{passing}");
        }
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

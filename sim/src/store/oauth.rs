//! The OAuth 2 provider's state: registered applications, authorization codes (with their PKCE challenge),
//! refresh tokens and the expiry of the access tokens it issued. Access tokens themselves are ordinary
//! [`Token`](super::Token)s of kind `OAuth`, so the V4 API accepts them like personal tokens until they expire or
//! are revoked.

use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasher, Hasher};

use super::{Store, TokenKind};
use crate::sha::{base64_encode, sha256};
use crate::time::{now_millis, Millis};

/// How long an authorization code may wait for its exchange (the provider's 10 minutes).
pub const CODE_LIFETIME_MS: Millis = 10 * 60 * 1000;

/// An application registered with the provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Application {
    /// Display name on the authorize page.
    pub name: String,
    /// Public client id (`uid`).
    pub client_id: String,
    /// Client secret.
    pub secret: String,
    /// The one registered redirect URI; authorize and token requests must name it exactly.
    pub redirect_uri: String,
    /// Scopes the application may ask for.
    pub scopes: Vec<String>,
}

/// An authorization code waiting for its exchange.
#[derive(Debug, Clone)]
struct Grant {
    client_id: String,
    user_id: u64,
    redirect_uri: String,
    scopes: Vec<String>,
    code_challenge: Option<String>,
    expires_at: Millis,
}

/// A refresh token and what it renews.
#[derive(Debug, Clone)]
struct Refresh {
    client_id: String,
    user_id: u64,
    scopes: Vec<String>,
    access_token_id: u64,
}

/// An access and refresh token pair just issued.
#[derive(Debug, Clone)]
pub struct Issued {
    /// The access token.
    pub access_token: String,
    /// Its refresh token.
    pub refresh_token: String,
    /// Seconds until the access token expires.
    pub expires_in: u64,
    /// Its scopes.
    pub scopes: Vec<String>,
}

/// Why a token request is refused (the RFC 6749 error codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Unknown client or wrong secret.
    InvalidClient,
    /// Unknown, expired, used or mismatched code or refresh token, or a wrong PKCE verifier.
    InvalidGrant,
}

/// The provider's state.
#[derive(Debug)]
pub struct OAuthState {
    /// Applications by client id.
    pub applications: BTreeMap<String, Application>,
    /// Lifetime of issued access tokens, in seconds.
    pub token_lifetime_secs: u64,
    /// The user the authorize page offers alone, if set (else it asks which user).
    pub sign_in_as: Option<String>,
    /// The user the authorize page chooses at first, if set (else the first one offered).
    pub preselect: Option<String>,
    grants: HashMap<String, Grant>,
    refresh: HashMap<String, Refresh>,
    access_expiry: HashMap<u64, Millis>,
    counter: u64,
    seed: u64,
}

impl Default for OAuthState {
    fn default() -> Self {
        OAuthState {
            applications: BTreeMap::new(),
            token_lifetime_secs: 7200,
            sign_in_as: None,
            preselect: None,
            grants: HashMap::new(),
            refresh: HashMap::new(),
            access_expiry: HashMap::new(),
            counter: 0,
            seed: std::collections::hash_map::RandomState::new()
                .build_hasher()
                .finish(),
        }
    }
}

/// `BASE64URL(SHA256(verifier))`, the S256 code challenge of a verifier.
pub fn s256_challenge(verifier: &str) -> String {
    base64_encode(&sha256(verifier.as_bytes()))
        .trim_end_matches('=')
        .replace('+', "-")
        .replace('/', "_")
}

impl OAuthState {
    /// A new unguessable secret with `prefix` (hash of a per-process random seed, a counter and the time).
    fn secret(&mut self, prefix: &str) -> String {
        self.counter += 1;
        let digest = sha256(format!("{}:{}:{}", self.seed, self.counter, now_millis()).as_bytes());
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        format!("{prefix}{}", &hex[..40])
    }

    /// Whether the access token with this id was issued here and has expired by `now`.
    pub fn expired(&self, token_id: u64, now: Millis) -> bool {
        self.access_expiry.get(&token_id).is_some_and(|at| *at <= now)
    }

    /// The application for a client id whose secret is `secret`.
    pub fn client(&self, client_id: &str, secret: &str) -> Result<&Application, Refusal> {
        self.applications
            .get(client_id)
            .filter(|app| !secret.is_empty() && app.secret == secret)
            .ok_or(Refusal::InvalidClient)
    }

    /// Stores an authorization code for `user_id` and answers it.
    pub fn grant(
        &mut self,
        client_id: &str,
        user_id: u64,
        redirect_uri: &str,
        scopes: Vec<String>,
        code_challenge: Option<String>,
    ) -> String {
        let code = self.secret("");
        let now = now_millis();
        self.grants.retain(|_, grant| grant.expires_at > now);
        self.grants.insert(
            code.clone(),
            Grant {
                client_id: client_id.to_owned(),
                user_id,
                redirect_uri: redirect_uri.to_owned(),
                scopes,
                code_challenge,
                expires_at: now + CODE_LIFETIME_MS,
            },
        );
        code
    }
}

impl Store {
    fn issue(&mut self, client_id: &str, user_id: u64, scopes: Vec<String>) -> Issued {
        let access = self.oauth.secret("svcoat-");
        let token_id = self
            .insert_token(
                user_id,
                "oauth",
                scopes.clone(),
                TokenKind::OAuth,
                Some(access.clone()),
            )
            .id;
        let lifetime = self.oauth.token_lifetime_secs;
        let expires_at = now_millis().saturating_add(i64::try_from(lifetime).unwrap_or(i64::MAX / 2) * 1000);
        self.oauth.access_expiry.insert(token_id, expires_at);
        let refresh_token = self.oauth.secret("svcort-");
        self.oauth.refresh.insert(
            refresh_token.clone(),
            Refresh {
                client_id: client_id.to_owned(),
                user_id,
                scopes: scopes.clone(),
                access_token_id: token_id,
            },
        );
        Issued {
            access_token: access,
            refresh_token,
            expires_in: lifetime,
            scopes,
        }
    }

    /// Exchanges an authorization code (single use) for tokens, checking the client, redirect URI and PKCE
    /// verifier.
    pub fn oauth_exchange_code(
        &mut self,
        client_id: &str,
        code: &str,
        redirect_uri: &str,
        verifier: Option<&str>,
    ) -> Result<Issued, Refusal> {
        let grant = self.oauth.grants.remove(code).ok_or(Refusal::InvalidGrant)?;
        let verified = match (&grant.code_challenge, verifier) {
            (None, _) => true,
            (Some(challenge), Some(verifier)) => s256_challenge(verifier) == *challenge,
            (Some(_), None) => false,
        };
        if grant.client_id != client_id
            || grant.redirect_uri != redirect_uri
            || grant.expires_at <= now_millis()
            || !verified
        {
            return Err(Refusal::InvalidGrant);
        }
        let active = self
            .users
            .get(&grant.user_id)
            .is_some_and(|user| user.state == "active");
        if !active {
            return Err(Refusal::InvalidGrant);
        }
        Ok(self.issue(client_id, grant.user_id, grant.scopes))
    }

    /// Renews tokens with a refresh token; the old access and refresh tokens stop working (rotation).
    pub fn oauth_refresh(&mut self, client_id: &str, refresh_token: &str) -> Result<Issued, Refusal> {
        let belongs = self
            .oauth
            .refresh
            .get(refresh_token)
            .is_some_and(|refresh| refresh.client_id == client_id);
        if !belongs {
            return Err(Refusal::InvalidGrant);
        }
        let refresh = self
            .oauth
            .refresh
            .remove(refresh_token)
            .ok_or(Refusal::InvalidGrant)?;
        if let Some(old) = self.tokens.get_mut(&refresh.access_token_id) {
            old.revoked = true;
        }
        Ok(self.issue(client_id, refresh.user_id, refresh.scopes))
    }

    /// Revokes an access or refresh token of `client_id` and its partner; unknown tokens are ignored (RFC 7009).
    pub fn oauth_revoke(&mut self, client_id: &str, token: &str) {
        let by_refresh = self
            .oauth
            .refresh
            .get(token)
            .filter(|refresh| refresh.client_id == client_id)
            .map(|refresh| refresh.access_token_id);
        let by_access = self
            .tokens
            .values()
            .find(|t| t.kind == TokenKind::OAuth && t.token == token)
            .map(|t| t.id)
            .filter(|id| {
                self.oauth
                    .refresh
                    .values()
                    .any(|refresh| refresh.access_token_id == *id && refresh.client_id == client_id)
            });
        let Some(access_id) = by_refresh.or(by_access) else {
            return;
        };
        if let Some(access) = self.tokens.get_mut(&access_id) {
            access.revoked = true;
        }
        self.oauth
            .refresh
            .retain(|_, refresh| refresh.access_token_id != access_id);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_s256_challenge_matches_rfc_7636_appendix_b() {
        assert_eq!(
            s256_challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }
}

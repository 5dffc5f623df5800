//! The pages' OAuth 2 client: svcgate is an application registered on the svc server, and people sign in to the
//! pages with the authorization code grant and PKCE (S256) against the server's provider.
//!
//! This module owns the talk with the provider: the authorize address the browser is sent to, and the
//! server-to-server calls of `POST /oauth/token` (code exchange, refresh) and `POST /oauth/revoke`, which go to
//! the backend over svcgate's own backend connection. The flow around them (state, cookies, sessions) is
//! `sign_in.rs` and `session.rs`.

use std::sync::Arc;

use base64::Engine;
use http::{HeaderValue, Method, Request, StatusCode};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::backend::upstream::Upstream;
use crate::http::body;
use crate::util::secret::{random_hex, SecretError};
use crate::util::url_parts::encode_pairs;

/// The path of the callback the provider redirects to, under the gateway's public address.
pub const CALLBACK_PATH: &str = "/-/svcgate/oauth/callback";
/// The largest answer of the provider read.
const MAX_ANSWER_BYTES: usize = 64 << 10;

/// svcgate's registration on the svc server.
#[derive(Clone, PartialEq, Eq)]
pub struct OAuthSettings {
    /// The application id (`oauth_client_id`).
    pub client_id: String,
    /// The application secret (`oauth_client_secret`).
    pub client_secret: String,
    /// The scopes asked for, space-separated (`oauth_scopes`).
    pub scopes: String,
}

impl std::fmt::Debug for OAuthSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthSettings")
            .field("client_id", &self.client_id)
            .field("client_secret", &"…")
            .field("scopes", &self.scopes)
            .finish()
    }
}

/// Why a call to the provider did not give tokens.
#[derive(Debug, thiserror::Error)]
pub enum OAuthError {
    /// The server could not be reached or did not answer in time.
    #[error("the svc server could not be reached: {0}")]
    Unreachable(String),
    /// The provider refused, with its RFC 6749 error code (`invalid_grant`, `invalid_client`, …).
    #[error("the svc server refused: {code} ({status})")]
    Refused {
        /// The HTTP status.
        status: StatusCode,
        /// The `error` field, or `unknown`.
        code: String,
    },
    /// The answer was not a token answer.
    #[error("the svc server's answer could not be read: {0}")]
    BadAnswer(String),
    /// No random numbers for a verifier.
    #[error("{0}")]
    Random(#[from] SecretError),
}

/// Tokens the provider issued.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tokens {
    /// The access token (a bearer token for the V4 API).
    pub access_token: String,
    /// The refresh token, if one was issued.
    pub refresh_token: Option<String>,
    /// Seconds until the access token expires, if it does.
    pub expires_in: Option<u64>,
}

/// A PKCE verifier and its S256 challenge.
#[derive(Debug, Clone)]
pub struct Pkce {
    /// The verifier, kept (sealed) until the callback.
    pub verifier: String,
    /// `BASE64URL(SHA256(verifier))`, sent with the authorization request.
    pub challenge: String,
}

/// The S256 code challenge of a verifier.
pub fn challenge_of(verifier: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

impl Pkce {
    /// A new verifier (64 hex characters from 32 random bytes, within RFC 7636's 43–128) and its challenge.
    pub fn new() -> Result<Self, SecretError> {
        let verifier = random_hex(32)?;
        Ok(Pkce {
            challenge: challenge_of(&verifier),
            verifier,
        })
    }
}

/// Talks to the svc server's OAuth provider for svcgate's application.
pub struct OAuthClient {
    settings: OAuthSettings,
    upstream: Arc<Upstream>,
}

impl OAuthClient {
    /// A client for the application `settings`, calling the provider over `upstream`.
    pub fn new(settings: OAuthSettings, upstream: Arc<Upstream>) -> Self {
        OAuthClient { settings, upstream }
    }

    /// The callback address for a gateway whose public base URL is `origin`.
    pub fn redirect_uri(origin: &str) -> String {
        format!("{}{CALLBACK_PATH}", origin.trim_end_matches('/'))
    }

    /// Where the browser is sent to approve the sign-in. It is `/oauth/authorize` on the gateway's own address
    /// (`origin`), which passes through to the server like every page of the server's web interface, so the
    /// browser needs no second address for the server.
    pub fn authorize_url(&self, origin: &str, state: &str, challenge: &str) -> String {
        let query = encode_pairs(&[
            ("client_id".to_owned(), self.settings.client_id.clone()),
            ("redirect_uri".to_owned(), Self::redirect_uri(origin)),
            ("response_type".to_owned(), "code".to_owned()),
            ("state".to_owned(), state.to_owned()),
            ("scope".to_owned(), self.settings.scopes.clone()),
            ("code_challenge".to_owned(), challenge.to_owned()),
            ("code_challenge_method".to_owned(), "S256".to_owned()),
        ]);
        format!("{}/oauth/authorize?{query}", origin.trim_end_matches('/'))
    }

    /// Exchanges an authorization code and its PKCE verifier for tokens.
    pub async fn exchange_code(
        &self,
        code: &str,
        origin: &str,
        verifier: &str,
    ) -> Result<Tokens, OAuthError> {
        self.token(&[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", &Self::redirect_uri(origin)),
            ("code_verifier", verifier),
        ])
        .await
    }

    /// Renews tokens with a refresh token (which the provider then retires: refresh tokens rotate).
    pub async fn refresh(&self, refresh_token: &str) -> Result<Tokens, OAuthError> {
        self.token(&[("grant_type", "refresh_token"), ("refresh_token", refresh_token)])
            .await
    }

    /// Revokes an access or refresh token.
    pub async fn revoke(&self, token: &str) -> Result<(), OAuthError> {
        let (status, answer) = self.post("/oauth/revoke", &[("token", token)]).await?;
        if status.is_success() {
            Ok(())
        } else {
            Err(refused(status, &answer))
        }
    }

    async fn token(&self, pairs: &[(&str, &str)]) -> Result<Tokens, OAuthError> {
        let (status, answer) = self.post("/oauth/token", pairs).await?;
        if !status.is_success() {
            return Err(refused(status, &answer));
        }
        let access_token = answer
            .get("access_token")
            .and_then(Value::as_str)
            .filter(|token| !token.is_empty())
            .ok_or_else(|| OAuthError::BadAnswer("no access_token".to_owned()))?;
        Ok(Tokens {
            access_token: access_token.to_owned(),
            refresh_token: answer
                .get("refresh_token")
                .and_then(Value::as_str)
                .filter(|token| !token.is_empty())
                .map(str::to_owned),
            expires_in: answer.get("expires_in").and_then(Value::as_u64),
        })
    }

    /// POSTs a form with the client's id and secret to the provider, answering the status and JSON body.
    async fn post(&self, path: &str, pairs: &[(&str, &str)]) -> Result<(StatusCode, Value), OAuthError> {
        let mut form: Vec<(String, String)> = pairs
            .iter()
            .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
            .collect();
        form.push(("client_id".to_owned(), self.settings.client_id.clone()));
        form.push(("client_secret".to_owned(), self.settings.client_secret.clone()));
        let mut request = Request::new(body::full(encode_pairs(&form)));
        *request.method_mut() = Method::POST;
        *request.uri_mut() = self
            .upstream
            .uri(path)
            .map_err(|error| OAuthError::Unreachable(error.to_string()))?;
        request.headers_mut().insert(
            http::header::CONTENT_TYPE,
            HeaderValue::from_static("application/x-www-form-urlencoded"),
        );
        request
            .headers_mut()
            .insert(http::header::ACCEPT, HeaderValue::from_static("application/json"));
        let response = self
            .upstream
            .send(request)
            .await
            .map_err(|error| OAuthError::Unreachable(error.to_string()))?;
        let status = response.status();
        let (bytes, _held) = self
            .upstream
            .read_body(response.into_body(), MAX_ANSWER_BYTES)
            .await
            .map_err(|error| OAuthError::Unreachable(error.to_string()))?;
        if status.is_server_error() {
            return Err(OAuthError::Unreachable(format!("{path} answered {status}")));
        }
        Ok((status, serde_json::from_slice(&bytes).unwrap_or(Value::Null)))
    }
}

fn refused(status: StatusCode, answer: &Value) -> OAuthError {
    OAuthError::Refused {
        status,
        code: answer
            .get("error")
            .and_then(Value::as_str)
            .unwrap_or("unknown")
            .to_owned(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_s256_challenge_matches_rfc_7636_appendix_b() {
        assert_eq!(
            challenge_of("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }

    #[test]
    fn verifiers_are_fresh_and_within_the_rfc_length() {
        let (first, second) = (Pkce::new().unwrap(), Pkce::new().unwrap());
        assert_ne!(first.verifier, second.verifier);
        assert!((43..=128).contains(&first.verifier.len()));
        assert_eq!(first.challenge, challenge_of(&first.verifier));
    }
}

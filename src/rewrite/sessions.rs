//! Password login for V3 clients (`POST /session`, decision 6 of the translation reference).
//!
//! V3 clients logged in with a password and then sent the returned `private_token`. Current backends have no
//! such tokens, so svcgate asks the backend's OAuth password grant for an access token, issues its own token
//! (`svcg3_` + 40 hex digits from the OS random source), keeps only its SHA-256 hash with the access token —
//! encrypted with the same AES-256-GCM key as integration tokens — in the store, and on every later V3 request
//! that carries an issued token swaps it for `Authorization: Bearer`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use http::header::{HeaderMap, HeaderValue};
use http::{Method, StatusCode};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::exchange::{Exchange, Outcome};
use super::request::V3Request;
use crate::http::body;
use crate::http::error::GatewayError;
use crate::store::Store;
use crate::util::secret::SecretBox;
use crate::util::url_parts::{encode_pairs, parse_pairs};

/// The prefix of every token svcgate issues, so that ordinary tokens never cost a lookup.
pub const TOKEN_PREFIX: &str = "svcg3_";

/// Issued sessions: a memory cache in front of the store.
pub struct Sessions {
    store: Arc<dyn Store>,
    secret: Arc<SecretBox>,
    cache: Mutex<HashMap<String, String>>,
}

fn hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

fn new_token() -> Result<String, GatewayError> {
    let mut bytes = [0u8; 20];
    getrandom::getrandom(&mut bytes)
        .map_err(|error| GatewayError::Internal(format!("random source: {error}")))?;
    Ok(format!("{TOKEN_PREFIX}{}", hex::encode(bytes)))
}

fn unauthorized() -> Outcome {
    Outcome::json(StatusCode::UNAUTHORIZED, json!({"message": "401 Unauthorized"}))
}

impl Sessions {
    /// Sessions kept in `store`.
    pub fn new(store: Arc<dyn Store>, secret: Arc<SecretBox>) -> Self {
        Sessions {
            store,
            secret,
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// `POST /session`: `login` or `email`, and `password`.
    pub async fn login(&self, exchange: &Exchange<'_>, request: V3Request) -> Result<Outcome, GatewayError> {
        let login = request
            .param("login")
            .or_else(|| request.param("email"))
            .map(str::to_owned);
        let password = request.param("password").map(str::to_owned);
        let (Some(login), Some(password)) = (login, password) else {
            return Ok(Outcome::json(
                StatusCode::BAD_REQUEST,
                json!({"message": "400 (Bad request) \"login\" or \"email\", and \"password\" are required"}),
            ));
        };
        let form = encode_pairs(&[
            ("grant_type".to_owned(), "password".to_owned()),
            ("username".to_owned(), login),
            ("password".to_owned(), password),
        ]);
        let response = exchange
            .caller
            .send(
                Method::POST,
                "/oauth/token",
                Some((
                    HeaderValue::from_static("application/x-www-form-urlencoded"),
                    body::full(form),
                )),
            )
            .await?;
        if !response.status().is_success() {
            return Ok(unauthorized());
        }
        let grant = exchange.caller.read_json(response).await?;
        let Some(access_token) = grant
            .body
            .get("access_token")
            .and_then(Value::as_str)
            .map(str::to_owned)
        else {
            return Ok(unauthorized());
        };
        let mut headers = exchange.caller.headers.clone();
        headers.remove(http::header::AUTHORIZATION);
        headers.remove("private-token");
        let bearer = HeaderValue::from_str(&format!("Bearer {access_token}"))
            .map_err(|_| GatewayError::BadBackendAnswer("unusable access token".to_owned()))?;
        headers.insert(http::header::AUTHORIZATION, bearer);
        let caller = super::backend::Caller {
            upstream: exchange.caller.upstream,
            headers,
            context: exchange.caller.context,
            max_body: exchange.caller.max_body,
            max_calls: exchange.caller.max_calls,
        };
        let mut user = caller.get_json("/api/v4/user").await?.body;
        let token = new_token()?;
        let user_id = user.get("id").and_then(Value::as_u64);
        self.store
            .session_put(
                hash(&token),
                self.secret
                    .seal_text(&access_token)
                    .map_err(|error| GatewayError::Internal(format!("sealing the session: {error}")))?,
                user_id,
            )
            .await
            .map_err(|error| GatewayError::Internal(format!("storing the session: {error}")))?;
        if let Ok(mut cache) = self.cache.lock() {
            cache.insert(hash(&token), access_token);
        }
        if let Value::Object(fields) = &mut user {
            fields.insert("private_token".to_owned(), Value::from(token));
        }
        Ok(Outcome::json(StatusCode::CREATED, user))
    }

    async fn access_token(&self, token: &str) -> Option<String> {
        let key = hash(token);
        if let Some(found) = self.cache.lock().ok().and_then(|cache| cache.get(&key).cloned()) {
            return Some(found);
        }
        let sealed = self.store.session_get(key.clone()).await.ok().flatten()?;
        let found = self.secret.open_text(&sealed).ok()?;
        if let Ok(mut cache) = self.cache.lock() {
            cache.insert(key, found.clone());
        }
        Some(found)
    }

    /// Swaps an issued token (in `PRIVATE-TOKEN` or `private_token`) for the backend's bearer token. Returns the
    /// request target without `private_token` when the query changed.
    pub async fn translate(&self, headers: &mut HeaderMap, query: Option<&str>) -> Option<String> {
        if let Some(token) = headers
            .get("private-token")
            .and_then(|value| value.to_str().ok())
            .filter(|token| token.starts_with(TOKEN_PREFIX))
            .map(str::to_owned)
        {
            if let Some(access) = self.access_token(&token).await {
                headers.remove("private-token");
                if let Ok(value) = HeaderValue::from_str(&format!("Bearer {access}")) {
                    headers.insert(http::header::AUTHORIZATION, value);
                }
            }
            return None;
        }
        let pairs = parse_pairs(query?.as_bytes());
        let token = pairs
            .iter()
            .find(|(name, value)| name == "private_token" && value.starts_with(TOKEN_PREFIX))
            .map(|(_, value)| value.clone())?;
        let access = self.access_token(&token).await?;
        if let Ok(value) = HeaderValue::from_str(&format!("Bearer {access}")) {
            headers.insert(http::header::AUTHORIZATION, value);
        }
        let rest: Vec<(String, String)> = pairs
            .into_iter()
            .filter(|(name, _)| name != "private_token")
            .collect();
        Some(encode_pairs(&rest))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issued_tokens_are_prefixed_random_hex() {
        let (Ok(a), Ok(b)) = (new_token(), new_token()) else {
            panic!("no random source");
        };
        assert!(a.starts_with(TOKEN_PREFIX) && a.len() == TOKEN_PREFIX.len() + 40);
        assert_ne!(a, b);
        assert_eq!(hash(&a).len(), 64);
    }
}

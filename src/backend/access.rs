//! Who is calling and what they may do on a project, as the backend says, cached for a short time.
//!
//! The caller's own credentials (`PRIVATE-TOKEN`, `Authorization: Bearer`, or a signed-in page session's
//! token) are sent to the backend: `GET /user` tells who they are and whether they are an admin,
//! `GET /projects/:project` their access level. Answers are cached by a hash of the token for
//! `access_cache_ttl`, so a busy page or API client costs two backend calls a minute, not two a request; at most
//! `access_cache_entries` callers are kept, and concurrent requests with one token share one lookup
//! ([`AnswerCache`]).

use std::sync::Arc;
use std::time::Duration;

use http::{HeaderMap, HeaderValue, Method, Request, StatusCode};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::backend::answer_cache::AnswerCache;
use crate::backend::upstream::Upstream;
use crate::http::body;

/// Access levels, as the service numbers them, plus the instance admin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role {
    /// No access.
    None,
    /// Guest (10).
    Guest,
    /// Reporter (20).
    Reporter,
    /// Developer (30).
    Developer,
    /// Maintainer (40).
    Maintainer,
    /// Owner (50).
    Owner,
    /// Instance administrator.
    Admin,
}

impl Role {
    /// The role of a numeric access level.
    pub fn from_level(level: u64) -> Self {
        match level {
            50.. => Role::Owner,
            40..=49 => Role::Maintainer,
            30..=39 => Role::Developer,
            20..=29 => Role::Reporter,
            10..=19 => Role::Guest,
            _ => Role::None,
        }
    }

    /// The role's name.
    pub fn name(self) -> &'static str {
        match self {
            Role::None => "none",
            Role::Guest => "Guest",
            Role::Reporter => "Reporter",
            Role::Developer => "Developer",
            Role::Maintainer => "Maintainer",
            Role::Owner => "Owner",
            Role::Admin => "Admin",
        }
    }
}

/// A caller's standing on one project.
#[derive(Debug, Clone)]
pub struct ProjectAccess {
    /// Their role.
    pub role: Role,
    /// The project's numeric id.
    pub project_id: u64,
    /// The project's full path.
    pub project_path: String,
    /// The caller's username.
    pub username: String,
}

/// Why access could not be established.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AccessError {
    /// No credentials, or the backend refused them.
    #[error("401 Unauthorized")]
    Unauthenticated,
    /// The project does not exist or the caller cannot see it.
    #[error("404 Project Not Found")]
    ProjectNotFound,
    /// The backend could not be asked.
    #[error("the backend could not be asked: {0}")]
    Backend(String),
}

/// The credentials a caller presented.
#[derive(Debug, Clone)]
pub struct Credentials {
    header: (&'static str, HeaderValue),
    key: String,
}

impl Credentials {
    /// The caller's credentials from request headers (`PRIVATE-TOKEN` or `Authorization: Bearer`).
    pub fn from_headers(headers: &HeaderMap) -> Option<Self> {
        if let Some(value) = headers.get("private-token").filter(|value| !value.is_empty()) {
            return Some(Self::new("private-token", value.clone()));
        }
        let value = headers.get(http::header::AUTHORIZATION)?;
        let text = value.to_str().ok()?;
        let token = text
            .strip_prefix("Bearer ")
            .or_else(|| text.strip_prefix("bearer "))?;
        (!token.trim().is_empty()).then(|| Self::new("authorization", value.clone()))
    }

    /// Credentials from a personal access token (a signed-in page session).
    pub fn from_token(token: &str) -> Option<Self> {
        HeaderValue::from_str(token)
            .ok()
            .map(|value| Self::new("private-token", value))
    }

    /// Credentials from an OAuth access token, sent as `Authorization: Bearer` (the backend takes OAuth tokens
    /// only as bearer tokens).
    pub fn bearer(token: &str) -> Option<Self> {
        HeaderValue::from_str(&format!("Bearer {token}"))
            .ok()
            .map(|value| Self::new("authorization", value))
    }

    /// A hash of the credentials, to key caches and counts by (never the token itself).
    pub fn key(&self) -> &str {
        &self.key
    }

    /// Credentials from a `private_token` query parameter.
    pub fn from_query(query: Option<&str>) -> Option<Self> {
        let pairs = crate::util::url_parts::parse_pairs(query?.as_bytes());
        let token = pairs
            .into_iter()
            .find(|(name, value)| name == "private_token" && !value.is_empty())?
            .1;
        Self::from_token(&token)
    }

    fn new(name: &'static str, value: HeaderValue) -> Self {
        let key = hex::encode(Sha256::digest(value.as_bytes()));
        Credentials {
            header: (name, value),
            key,
        }
    }
}

/// Who a token belongs to, `(username, is_admin)`, or why not.
type UserAnswer = Result<(String, bool), AccessError>;

/// Asks the backend about callers and remembers the answers for a while.
pub struct AccessChecker {
    upstream: Arc<Upstream>,
    /// Who each token is, by its hash.
    users: AnswerCache<String, UserAnswer>,
    /// Each token's access to a project, by its hash and the project.
    projects: AnswerCache<(String, String), Result<ProjectAccess, AccessError>>,
}

impl AccessChecker {
    /// A checker asking `upstream`, keeping at most `entries` answers of each kind for `ttl`.
    pub fn new(upstream: Arc<Upstream>, ttl: Duration, entries: usize) -> Self {
        AccessChecker {
            upstream,
            users: AnswerCache::new(entries, ttl),
            projects: AnswerCache::new(entries, ttl),
        }
    }

    async fn get(&self, credentials: &Credentials, path: &str) -> Result<(StatusCode, Value), AccessError> {
        let mut request = Request::new(body::empty());
        *request.method_mut() = Method::GET;
        *request.uri_mut() = self
            .upstream
            .uri(path)
            .map_err(|error| AccessError::Backend(error.to_string()))?;
        request
            .headers_mut()
            .insert(credentials.header.0, credentials.header.1.clone());
        let response = self
            .upstream
            .send(request)
            .await
            .map_err(|error| AccessError::Backend(error.to_string()))?;
        let status = response.status();
        let bytes = self
            .upstream
            .read_body(response.into_body(), 1 << 20)
            .await
            .map_err(|error| AccessError::Backend(error.to_string()))?
            .0;
        Ok((status, serde_json::from_slice(&bytes).unwrap_or(Value::Null)))
    }

    /// Who the caller is: `(username, is_admin)`.
    pub async fn user(&self, credentials: &Credentials) -> Result<(String, bool), AccessError> {
        let key = credentials.key.clone();
        let answer = self
            .users
            .get_or_ask(key.clone(), || self.ask_user(credentials))
            .await;
        // A backend failure says nothing about the token: the next request asks again.
        if matches!(answer, Err(AccessError::Backend(_))) {
            self.users.forget(&key);
        }
        answer
    }

    async fn ask_user(&self, credentials: &Credentials) -> UserAnswer {
        match self.get(credentials, "/api/v4/user").await? {
            (status, body) if status.is_success() => Ok((
                body.get("username")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                body.get("is_admin").and_then(Value::as_bool).unwrap_or(false),
            )),
            (StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN, _) => Err(AccessError::Unauthenticated),
            (status, _) => Err(AccessError::Backend(format!("GET /user answered {status}"))),
        }
    }

    /// The projects the caller is a member of: `(id, full path)`, the first 100 by recent activity.
    pub async fn projects(&self, credentials: &Credentials) -> Result<Vec<(u64, String)>, AccessError> {
        match self
            .get(
                credentials,
                "/api/v4/projects?membership=true&simple=true&per_page=100&order_by=last_activity_at",
            )
            .await?
        {
            (status, Value::Array(items)) if status.is_success() => Ok(items
                .iter()
                .filter_map(|item| {
                    Some((
                        item.get("id")?.as_u64()?,
                        item.get("path_with_namespace")?.as_str()?.to_owned(),
                    ))
                })
                .collect()),
            (StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN, _) => Err(AccessError::Unauthenticated),
            (status, _) => Err(AccessError::Backend(format!("GET /projects answered {status}"))),
        }
    }

    /// The caller's access to `project` (a numeric id or a full path, not encoded).
    pub async fn project(
        &self,
        credentials: &Credentials,
        project: &str,
    ) -> Result<ProjectAccess, AccessError> {
        let key = (credentials.key.clone(), project.to_owned());
        let answer = self
            .projects
            .get_or_ask(key.clone(), || self.ask_project(credentials, project))
            .await;
        if matches!(answer, Err(AccessError::Backend(_))) {
            self.projects.forget(&key);
        }
        answer
    }

    async fn ask_project(
        &self,
        credentials: &Credentials,
        project: &str,
    ) -> Result<ProjectAccess, AccessError> {
        let (username, admin) = self.user(credentials).await?;
        let encoded = crate::util::url_parts::encode_segment(project);
        match self
            .get(credentials, &format!("/api/v4/projects/{encoded}"))
            .await?
        {
            (status, body) if status.is_success() => {
                let level = |kind: &str| {
                    body.pointer(&format!("/permissions/{kind}/access_level"))
                        .and_then(Value::as_u64)
                };
                let level = level("project_access").max(level("group_access")).unwrap_or(0);
                Ok(ProjectAccess {
                    role: if admin {
                        Role::Admin
                    } else {
                        Role::from_level(level)
                    },
                    project_id: body.get("id").and_then(Value::as_u64).unwrap_or(0),
                    project_path: body
                        .get("path_with_namespace")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                    username,
                })
            }
            (StatusCode::NOT_FOUND | StatusCode::FORBIDDEN, _) => Err(AccessError::ProjectNotFound),
            (StatusCode::UNAUTHORIZED, _) => Err(AccessError::Unauthenticated),
            (status, _) => Err(AccessError::Backend(format!("GET /projects answered {status}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn access_levels_map_to_roles() {
        assert_eq!(Role::from_level(20), Role::Reporter);
        assert_eq!(Role::from_level(30), Role::Developer);
        assert_eq!(Role::from_level(40), Role::Maintainer);
        assert_eq!(Role::from_level(50), Role::Owner);
        assert!(Role::Admin > Role::Owner && Role::Maintainer > Role::Developer);
    }

    #[test]
    fn credentials_come_from_either_header_and_never_from_an_empty_one() {
        let mut headers = HeaderMap::new();
        assert!(Credentials::from_headers(&headers).is_none());
        headers.insert("private-token", HeaderValue::from_static(""));
        assert!(Credentials::from_headers(&headers).is_none());
        headers.insert(
            http::header::AUTHORIZATION,
            HeaderValue::from_static("Bearer abc"),
        );
        assert!(Credentials::from_headers(&headers).is_some());
    }
}

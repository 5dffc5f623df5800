//! The per-request context handed to every handler: the store, the parameters, the authenticated caller, and
//! the lookups with permission checks that most handlers share (project by id or path, group, levels).

use percent_encoding::percent_decode_str;
use serde_json::Value;

use crate::error::ApiError;
use crate::pagination::{paginate, LinkBase, PageRequest};
use crate::params::Params;
use crate::reply::Reply;
use crate::store::{access, Project, Store, Visibility};

/// Everything a handler needs.
pub struct Ctx<'a> {
    /// The simulated service state.
    pub store: &'a mut Store,
    /// Query and body parameters.
    pub params: Params,
    /// Decoded path parameters.
    pub path: Vec<(String, String)>,
    /// The effective caller after `sudo` (None when anonymous).
    pub caller: Option<u64>,
    /// Request origin and path for `Link` headers.
    pub link: LinkBase,
}

impl Ctx<'_> {
    /// A decoded path parameter ("" when absent).
    pub fn path_param(&self, name: &str) -> &str {
        self.path
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
            .unwrap_or("")
    }

    /// A numeric path parameter; anything else is `404 <what> Not Found`.
    pub fn path_u64(&self, name: &str, what: &'static str) -> Result<u64, ApiError> {
        self.path_param(name)
            .parse()
            .map_err(|_| ApiError::NotFound(what))
    }

    /// A path parameter V4 declares `type: Integer`: anything else is a 400 `<name> is invalid`, as Grape's
    /// parameter validation answers before the endpoint runs.
    pub fn path_integer(&self, name: &str) -> Result<u64, ApiError> {
        self.path_param(name)
            .parse()
            .map_err(|_| ApiError::Invalid(name.to_string()))
    }

    /// The caller's id, or 401.
    pub fn user_id(&self) -> Result<u64, ApiError> {
        self.caller.ok_or(ApiError::Unauthorized)
    }

    /// Whether the caller is an administrator.
    pub fn is_admin(&self) -> bool {
        self.caller
            .and_then(|id| self.store.users.get(&id))
            .is_some_and(|u| u.is_admin)
    }

    /// The caller's id when an administrator; 401 when anonymous, 403 otherwise.
    pub fn require_admin(&self) -> Result<u64, ApiError> {
        let uid = self.user_id()?;
        if self.is_admin() {
            Ok(uid)
        } else {
            Err(ApiError::Forbidden)
        }
    }

    /// The project named by the `id` path parameter (number or full path) that the caller can see.
    pub fn project_id(&self) -> Result<u64, ApiError> {
        let raw = self.path_param("id");
        let found = match raw.parse::<u64>() {
            Ok(id) => self.store.projects.contains_key(&id).then_some(id),
            Err(_) => self.store.project_by_full_path(raw),
        };
        found
            .filter(|id| {
                self.store
                    .projects
                    .get(id)
                    .is_some_and(|p| self.store.can_read_project(p, self.caller))
            })
            .ok_or(ApiError::NotFound("Project"))
    }

    /// A project by id (404 when gone).
    pub fn project(&self, id: u64) -> Result<&Project, ApiError> {
        self.store.projects.get(&id).ok_or(ApiError::NotFound("Project"))
    }

    /// The caller's effective level in a project (0 for anonymous or non-members).
    pub fn level(&self, project_id: u64) -> u8 {
        match (self.caller, self.store.projects.get(&project_id)) {
            (Some(uid), Some(p)) => self.store.effective_level(p, uid),
            _ => 0,
        }
    }

    /// 401 when anonymous, 403 when the caller's level is below `min`.
    pub fn require_level(&self, project_id: u64, min: u8) -> Result<u64, ApiError> {
        let uid = self.user_id()?;
        if self.level(project_id) >= min {
            Ok(uid)
        } else {
            Err(ApiError::Forbidden)
        }
    }

    /// The group named by the `id` path parameter (number or full path) that the caller can see.
    pub fn group_id(&self) -> Result<u64, ApiError> {
        let raw = self.path_param("id");
        let found = match raw.parse::<u64>() {
            Ok(id) => Some(id),
            Err(_) => self.store.namespace_by_full_path(raw),
        };
        found
            .filter(|id| {
                self.store.namespaces.get(id).is_some_and(|ns| ns.is_group()) && self.can_read_group(*id)
            })
            .ok_or(ApiError::NotFound("Group"))
    }

    /// Whether the caller can see a group.
    pub fn can_read_group(&self, group_id: u64) -> bool {
        let Some(ns) = self.store.namespaces.get(&group_id) else {
            return false;
        };
        match (ns.visibility, self.caller) {
            (Visibility::Public, _) | (Visibility::Internal, Some(_)) => true,
            (_, Some(uid)) => {
                self.is_admin()
                    || self.store.namespace_level(group_id, uid).is_some()
                    || self
                        .store
                        .projects
                        .values()
                        .any(|p| p.namespace_id == group_id && self.store.effective_level(p, uid) > 0)
            }
            (_, None) => false,
        }
    }

    /// The caller's level in a group (admins count above Owner).
    pub fn group_level(&self, group_id: u64) -> u8 {
        if self.is_admin() {
            return access::ADMIN;
        }
        self.caller
            .and_then(|uid| self.store.namespace_level(group_id, uid))
            .unwrap_or(0)
    }

    /// Answers a list with pagination.
    pub fn paginate(&self, items: Vec<Value>) -> Result<Reply, ApiError> {
        Ok(paginate(
            items,
            PageRequest::from_params(&self.params)?,
            &self.link,
        ))
    }

    /// The `sort` parameter: true for descending (the default unless `default_desc` is false).
    pub fn sort_desc(&self, default_desc: bool) -> Result<bool, ApiError> {
        match self.params.str("sort").as_deref() {
            None => Ok(default_desc),
            Some("desc") => Ok(true),
            Some("asc") => Ok(false),
            Some(_) => Err(ApiError::Invalid("sort".into())),
        }
    }
}

/// Percent-decodes a path segment.
pub fn decode(segment: &str) -> String {
    percent_decode_str(segment).decode_utf8_lossy().into_owned()
}

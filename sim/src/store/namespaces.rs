//! Namespaces: each user's personal namespace and the groups (a group is a namespace of kind `group`, and its
//! id is its namespace id). Groups may be nested through `parent_id`.

use super::members::{level_in, Member};
use super::{bump, Store, Visibility};

/// Whose namespace this is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NamespaceKind {
    /// A user's personal namespace.
    User(u64),
    /// A group.
    Group,
}

/// A namespace or group.
#[derive(Debug, Clone)]
pub struct Namespace {
    /// Id (the group id for groups).
    pub id: u64,
    /// Display name.
    pub name: String,
    /// Path segment.
    pub path: String,
    /// User or group.
    pub kind: NamespaceKind,
    /// Parent group.
    pub parent_id: Option<u64>,
    /// Description (groups).
    pub description: String,
    /// Visibility (groups).
    pub visibility: Visibility,
    /// Direct group members.
    pub members: Vec<Member>,
    /// LFS flag (groups).
    pub lfs_enabled: bool,
    /// Access-request flag (groups).
    pub request_access_enabled: bool,
}

impl Namespace {
    /// Whether this is a group.
    pub fn is_group(&self) -> bool {
        self.kind == NamespaceKind::Group
    }
}

const MAX_DEPTH: usize = 20;

impl Store {
    /// Creates a namespace.
    pub fn insert_namespace(
        &mut self,
        name: &str,
        path: &str,
        kind: NamespaceKind,
        parent_id: Option<u64>,
        visibility: Visibility,
    ) -> u64 {
        let id = bump(&mut self.seq.namespace);
        self.namespaces.insert(
            id,
            Namespace {
                id,
                name: name.to_string(),
                path: path.to_string(),
                kind,
                parent_id,
                description: String::new(),
                visibility,
                members: Vec::new(),
                lfs_enabled: true,
                request_access_enabled: false,
            },
        );
        id
    }

    /// `parent/child` path of a namespace.
    pub fn namespace_full_path(&self, id: u64) -> String {
        self.namespace_chain(id)
            .iter()
            .rev()
            .map(|ns| ns.path.as_str())
            .collect::<Vec<_>>()
            .join("/")
    }

    /// `Parent / Child` name of a namespace.
    pub fn namespace_full_name(&self, id: u64) -> String {
        self.namespace_chain(id)
            .iter()
            .rev()
            .map(|ns| ns.name.as_str())
            .collect::<Vec<_>>()
            .join(" / ")
    }

    /// The namespace and its ancestors, innermost first.
    pub fn namespace_chain(&self, id: u64) -> Vec<&Namespace> {
        let mut chain = Vec::new();
        let mut next = Some(id);
        while let Some(current) = next {
            if chain.len() >= MAX_DEPTH {
                break;
            }
            match self.namespaces.get(&current) {
                Some(ns) => {
                    chain.push(ns);
                    next = ns.parent_id;
                }
                None => break,
            }
        }
        chain
    }

    /// Finds a namespace by full path, case-insensitively.
    pub fn namespace_by_full_path(&self, path: &str) -> Option<u64> {
        let wanted = path.trim_matches('/');
        self.namespaces
            .keys()
            .copied()
            .find(|id| self.namespace_full_path(*id).eq_ignore_ascii_case(wanted))
    }

    /// The highest level of `user_id` in a group or its ancestors; the owner of a user namespace counts as Owner.
    pub fn namespace_level(&self, ns_id: u64, user_id: u64) -> Option<u8> {
        self.namespace_chain(ns_id)
            .iter()
            .filter_map(|ns| match ns.kind {
                NamespaceKind::User(owner) if owner == user_id => Some(super::access::OWNER),
                NamespaceKind::User(_) => None,
                NamespaceKind::Group => level_in(&ns.members, user_id),
            })
            .max()
    }
}

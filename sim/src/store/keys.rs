//! SSH keys: deploy keys (linked to projects, with a per-link `can_push`) and users' own keys, which share one id
//! sequence and one uniqueness rule as in the service; and users' secondary e-mail addresses.

use std::collections::BTreeMap;

use super::Store;
use crate::time::Millis;

/// An SSH public key: a deploy key when `user_id` is None, else a user's key.
#[derive(Debug, Clone)]
pub struct SshKey {
    /// Id.
    pub id: u64,
    /// The owning user (None for deploy keys).
    pub user_id: Option<u64>,
    /// Title.
    pub title: String,
    /// The public key text.
    pub key: String,
    /// Creation time.
    pub created_at: Millis,
    /// Write access given when the deploy key was created.
    pub can_push: bool,
}

/// A user's secondary e-mail address.
#[derive(Debug, Clone)]
pub struct Email {
    /// Id.
    pub id: u64,
    /// Owner.
    pub user_id: u64,
    /// Address.
    pub email: String,
}

const KEY_TYPES: &[&str] = &[
    "ssh-rsa",
    "ssh-dss",
    "ssh-ed25519",
    "ecdsa-sha2-nistp256",
    "ecdsa-sha2-nistp384",
    "ecdsa-sha2-nistp521",
];

/// Whether a text looks like an OpenSSH public key: a known type, then base64 data, then an optional comment.
pub fn valid_public_key(key: &str) -> bool {
    let mut parts = key.split_whitespace();
    let (Some(kind), Some(data)) = (parts.next(), parts.next()) else {
        return false;
    };
    KEY_TYPES.contains(&kind)
        && data.len() >= 16
        && data
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+/=".contains(c))
}

/// The comparable part of a key (type and data, without the comment).
pub fn key_identity(key: &str) -> String {
    key.split_whitespace().take(2).collect::<Vec<_>>().join(" ")
}

impl Store {
    /// The key with the same type and data as `key`, if any (user or deploy key).
    pub fn key_by_text(&self, key: &str) -> Option<&SshKey> {
        let wanted = key_identity(key);
        self.ssh_keys.values().find(|k| key_identity(&k.key) == wanted)
    }

    /// Stores a key; returns its id.
    pub fn insert_key(&mut self, user_id: Option<u64>, title: &str, key: &str, can_push: bool) -> u64 {
        let id = self.next_id("key");
        let created_at = self.now();
        self.ssh_keys.insert(
            id,
            SshKey {
                id,
                user_id,
                title: title.to_string(),
                key: key.trim().to_string(),
                created_at,
                can_push,
            },
        );
        id
    }

    /// The projects a deploy key is linked to, with each link's `can_push`.
    pub fn deploy_key_projects(&self, key_id: u64) -> BTreeMap<u64, bool> {
        self.deploy_key_links
            .iter()
            .filter(|((_, k), _)| *k == key_id)
            .map(|((p, _), push)| (*p, *push))
            .collect()
    }

    /// Removes a project's link to a deploy key, and the key itself once no project uses it.
    pub fn unlink_deploy_key(&mut self, project_id: u64, key_id: u64) {
        self.deploy_key_links.remove(&(project_id, key_id));
        if self.deploy_key_projects(key_id).is_empty() {
            self.ssh_keys.remove(&key_id);
        }
    }

    /// Whether an e-mail address is used by any user, as primary or secondary address.
    pub fn email_taken(&self, email: &str) -> bool {
        self.users.values().any(|u| u.email.eq_ignore_ascii_case(email))
            || self.emails.values().any(|e| e.email.eq_ignore_ascii_case(email))
    }
}

//! Users and their access tokens (personal, impersonation and OAuth).

use super::{bump, NamespaceKind, Store, Visibility};
use crate::sha::sha1_hex;
use crate::time::Millis;

/// A user account.
#[derive(Debug, Clone)]
pub struct User {
    /// Id.
    pub id: u64,
    /// Unique login name.
    pub username: String,
    /// Display name.
    pub name: String,
    /// Unique e-mail.
    pub email: String,
    /// `active` or `blocked`.
    pub state: String,
    /// Administrator flag.
    pub is_admin: bool,
    /// Creation time.
    pub created_at: Millis,
    /// Password for the OAuth password grant.
    pub password: Option<String>,
    /// The user's personal namespace.
    pub namespace_id: u64,
    /// How many projects the user may create.
    pub projects_limit: u64,
    /// Whether the user may create groups.
    pub can_create_group: bool,
    /// Profile texts by field (`bio`, `location`, `skype`, `linkedin`, `twitter`, `website_url`,
    /// `organization`).
    pub profile: std::collections::BTreeMap<String, String>,
    /// Whether the user is external.
    pub external: bool,
    /// External sign-in identities as `(provider, extern_uid)`, oldest first, one per provider.
    pub identities: Vec<(String, String)>,
}

/// The free-text profile fields of a user.
pub const PROFILE_FIELDS: &[&str] = &[
    "bio",
    "location",
    "skype",
    "linkedin",
    "twitter",
    "website_url",
    "organization",
];

/// What kind of token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenKind {
    /// A personal access token.
    Personal,
    /// An impersonation token made by an admin.
    Impersonation,
    /// An OAuth access token (password grant, or an application's authorization code).
    OAuth,
}

/// An access token.
#[derive(Debug, Clone)]
pub struct Token {
    /// Id.
    pub id: u64,
    /// Owner.
    pub user_id: u64,
    /// Name given at creation.
    pub name: String,
    /// The secret.
    pub token: String,
    /// Scopes (`api`, `read_user`, `sudo`, …).
    pub scopes: Vec<String>,
    /// Kind.
    pub kind: TokenKind,
    /// Revoked tokens do not authenticate.
    pub revoked: bool,
    /// Creation time.
    pub created_at: Millis,
    /// Optional expiry date (`YYYY-MM-DD`).
    pub expires_at: Option<String>,
}

/// Fields for a new user.
#[derive(Debug, Clone)]
pub struct NewUser {
    /// Login name.
    pub username: String,
    /// Display name.
    pub name: String,
    /// E-mail.
    pub email: String,
    /// Password, if any.
    pub password: Option<String>,
    /// Admin flag.
    pub is_admin: bool,
}

/// Scopes a token may carry.
pub const SCOPES: &[&str] = &[
    "api",
    "read_user",
    "read_api",
    "read_repository",
    "write_repository",
    "read_registry",
    "sudo",
];

impl Store {
    /// Creates a user and its personal namespace; the caller checks uniqueness first.
    pub fn insert_user(&mut self, new: NewUser) -> u64 {
        let id = bump(&mut self.seq.user);
        let created_at = self.now();
        let namespace_id = self.insert_namespace(
            &new.username,
            &new.username,
            NamespaceKind::User(id),
            None,
            Visibility::Private,
        );
        self.users.insert(
            id,
            User {
                id,
                username: new.username,
                name: new.name,
                email: new.email,
                state: "active".into(),
                is_admin: new.is_admin,
                created_at,
                password: new.password,
                namespace_id,
                projects_limit: 100_000,
                can_create_group: true,
                profile: std::collections::BTreeMap::new(),
                external: false,
                identities: Vec::new(),
            },
        );
        id
    }

    /// Creates a token for `user_id`; `secret` is generated when not given.
    pub fn insert_token(
        &mut self,
        user_id: u64,
        name: &str,
        scopes: Vec<String>,
        kind: TokenKind,
        secret: Option<String>,
    ) -> &Token {
        let id = bump(&mut self.seq.token);
        let created_at = self.now();
        let token = secret.unwrap_or_else(|| {
            let digest = sha1_hex(format!("{id}:{user_id}:{name}:{created_at}").as_bytes());
            format!("svcpat-{}", &digest[..20])
        });
        self.tokens.entry(id).or_insert(Token {
            id,
            user_id,
            name: name.to_string(),
            token,
            scopes,
            kind,
            revoked: false,
            created_at,
            expires_at: None,
        })
    }

    /// The user a token secret belongs to, if the token is valid (whatever the user's state).
    pub fn token_owner(&self, secret: &str) -> Option<&User> {
        self.tokens
            .values()
            .find(|t| !t.revoked && t.token == secret)
            .filter(|t| !self.oauth.expired(t.id, crate::time::now_millis()))
            .and_then(|t| self.users.get(&t.user_id))
    }

    /// Finds a user by username, case-insensitively.
    pub fn user_by_username(&self, username: &str) -> Option<&User> {
        self.users
            .values()
            .find(|u| u.username.eq_ignore_ascii_case(username))
    }

    /// Finds a user by id or username (the `sudo` and `:id` forms).
    pub fn user_by_id_or_username(&self, key: &str) -> Option<&User> {
        match key.parse::<u64>() {
            Ok(id) => self.users.get(&id),
            Err(_) => self.user_by_username(key),
        }
    }
}

//! Memberships of users in projects and groups, and the access-level constants.

/// Access levels.
pub mod access {
    /// Guest.
    pub const GUEST: u8 = 10;
    /// Reporter.
    pub const REPORTER: u8 = 20;
    /// Developer.
    pub const DEVELOPER: u8 = 30;
    /// Maintainer.
    pub const MAINTAINER: u8 = 40;
    /// Owner.
    pub const OWNER: u8 = 50;
    /// What an administrator counts as in permission checks (above every member).
    pub const ADMIN: u8 = 60;

    /// Whether `level` is a valid member level; project members cannot be Owner.
    pub fn is_valid(level: u64, allow_owner: bool) -> bool {
        matches!(level, 10 | 20 | 30 | 40) || (allow_owner && level == 50)
    }
}

/// One user's membership.
#[derive(Debug, Clone)]
pub struct Member {
    /// The member.
    pub user_id: u64,
    /// Access level.
    pub access_level: u8,
    /// Optional expiry date (`YYYY-MM-DD`).
    pub expires_at: Option<String>,
}

/// The level of `user_id` in a member list.
pub fn level_in(members: &[Member], user_id: u64) -> Option<u8> {
    members
        .iter()
        .find(|m| m.user_id == user_id)
        .map(|m| m.access_level)
}

/// Where a membership or an access request belongs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum MemberSource {
    /// A project.
    Project(u64),
    /// A group.
    Group(u64),
}

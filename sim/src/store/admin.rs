//! Project–group links (projects shared with groups).

/// A group shared with another group (`POST /groups/:id/share`).
#[derive(Debug, Clone)]
pub struct GroupShare {
    /// Access level the members of the other group get.
    pub group_access: u8,
    /// Expiry date.
    pub expires_at: Option<String>,
}

/// A project shared with a group.
#[derive(Debug, Clone)]
pub struct GroupLink {
    /// Id.
    pub id: u64,
    /// Project.
    pub project_id: u64,
    /// Group.
    pub group_id: u64,
    /// Access level granted.
    pub group_access: u8,
    /// Expiry date.
    pub expires_at: Option<String>,
}

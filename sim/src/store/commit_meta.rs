//! Data attached to commits and tags: commit comments, commit statuses and tags with their releases.

use crate::time::Millis;

/// A comment on a commit.
#[derive(Debug, Clone)]
pub struct CommitComment {
    /// Project.
    pub project_id: u64,
    /// Full commit id.
    pub sha: String,
    /// Text.
    pub note: String,
    /// File path for a line comment.
    pub path: Option<String>,
    /// Line number for a line comment.
    pub line: Option<u64>,
    /// `new` or `old`.
    pub line_type: Option<String>,
    /// Author.
    pub author_id: u64,
    /// Creation time.
    pub created_at: Millis,
}

/// An external commit status.
#[derive(Debug, Clone)]
pub struct CommitStatus {
    /// Id.
    pub id: u64,
    /// Project.
    pub project_id: u64,
    /// Full commit id.
    pub sha: String,
    /// Ref.
    pub ref_name: Option<String>,
    /// `pending`, `running`, `success`, `failed`, `canceled`.
    pub status: String,
    /// Context name.
    pub name: String,
    /// Link.
    pub target_url: Option<String>,
    /// Description.
    pub description: Option<String>,
    /// Coverage.
    pub coverage: Option<f64>,
    /// Author.
    pub author_id: u64,
    /// Creation time.
    pub created_at: Millis,
    /// Start time.
    pub started_at: Option<Millis>,
    /// Finish time.
    pub finished_at: Option<Millis>,
}

/// A tag.
#[derive(Debug, Clone)]
pub struct Tag {
    /// Target commit.
    pub commit: String,
    /// Annotation message (annotated tags).
    pub message: Option<String>,
    /// Release notes; a tag with notes has a release.
    pub release: Option<String>,
    /// Creation time.
    pub created_at: Millis,
    /// The release's name (the tag name when None).
    pub release_name: Option<String>,
    /// Who made the release.
    pub release_author: Option<u64>,
    /// When the release was made.
    pub release_created_at: Option<Millis>,
    /// The release's asset links.
    pub release_links: Vec<ReleaseLink>,
}

/// An asset link of a release.
#[derive(Debug, Clone)]
pub struct ReleaseLink {
    /// Id.
    pub id: u64,
    /// Name.
    pub name: String,
    /// Address.
    pub url: String,
    /// `other`, `runbook`, `image` or `package`.
    pub link_type: String,
}

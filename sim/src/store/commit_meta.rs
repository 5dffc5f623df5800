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
    /// Release notes.
    pub release: Option<String>,
    /// Creation time.
    pub created_at: Millis,
}

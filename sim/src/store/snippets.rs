//! Project and personal snippets.

use super::{Store, Visibility};
use crate::time::Millis;

/// A snippet; `project_id` is None for personal snippets.
#[derive(Debug, Clone)]
pub struct Snippet {
    /// Id.
    pub id: u64,
    /// Owning project (None for a personal snippet).
    pub project_id: Option<u64>,
    /// Title.
    pub title: String,
    /// File name.
    pub file_name: String,
    /// Content.
    pub content: String,
    /// Description.
    pub description: Option<String>,
    /// Visibility.
    pub visibility: Visibility,
    /// Author.
    pub author_id: u64,
    /// Creation time.
    pub created_at: Millis,
    /// Last update time.
    pub updated_at: Millis,
}

/// Fields for a new snippet.
#[derive(Debug, Clone)]
pub struct NewSnippet {
    /// Owning project.
    pub project_id: Option<u64>,
    /// Title.
    pub title: String,
    /// File name.
    pub file_name: String,
    /// Content.
    pub content: String,
    /// Description.
    pub description: Option<String>,
    /// Visibility.
    pub visibility: Visibility,
    /// Author.
    pub author_id: u64,
}

impl Store {
    /// Creates a snippet; returns its id.
    pub fn insert_snippet(&mut self, new: NewSnippet) -> u64 {
        let id = self.next_id("snippet");
        let now = self.now();
        self.snippets.insert(
            id,
            Snippet {
                id,
                project_id: new.project_id,
                title: new.title,
                file_name: new.file_name,
                content: new.content,
                description: new.description,
                visibility: new.visibility,
                author_id: new.author_id,
                created_at: now,
                updated_at: now,
            },
        );
        id
    }
}

//! Project and personal snippets, each with one or more files; the first file is the one the single-file
//! fields (`file_name`, `content`, `/raw`) speak of.

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
    /// Files, in the order given; never empty.
    pub files: Vec<SnippetFile>,
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

/// One file of a snippet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnippetFile {
    /// Path of the file in the snippet.
    pub path: String,
    /// Content.
    pub content: String,
}

impl Snippet {
    /// The first file's name (the single-file `file_name`).
    pub fn file_name(&self) -> &str {
        self.files.first().map_or("", |f| f.path.as_str())
    }

    /// The first file's content (what `/raw` returns).
    pub fn content(&self) -> &str {
        self.files.first().map_or("", |f| f.content.as_str())
    }
}

/// Fields for a new snippet.
#[derive(Debug, Clone)]
pub struct NewSnippet {
    /// Owning project.
    pub project_id: Option<u64>,
    /// Title.
    pub title: String,
    /// Files (at least one).
    pub files: Vec<SnippetFile>,
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
                files: new.files,
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

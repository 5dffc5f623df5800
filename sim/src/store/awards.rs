//! Award emoji on issues, merge requests, snippets and notes, and to-do items.

use super::{NoteableKind, Store};
use crate::time::Millis;

/// What an award emoji is attached to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AwardableKind {
    /// An issue.
    Issue,
    /// A merge request.
    MergeRequest,
    /// A snippet.
    Snippet,
    /// A note.
    Note,
}

impl AwardableKind {
    /// The `awardable_type` string.
    pub fn as_str(self) -> &'static str {
        match self {
            AwardableKind::Issue => "Issue",
            AwardableKind::MergeRequest => "MergeRequest",
            AwardableKind::Snippet => "Snippet",
            AwardableKind::Note => "Note",
        }
    }
}

/// An award emoji.
#[derive(Debug, Clone)]
pub struct AwardEmoji {
    /// Id.
    pub id: u64,
    /// Emoji name, e.g. `thumbsup`.
    pub name: String,
    /// Who awarded it.
    pub user_id: u64,
    /// Creation time.
    pub created_at: Millis,
    /// Last update time.
    pub updated_at: Millis,
    /// Kind of the awarded item.
    pub kind: AwardableKind,
    /// Global id of the awarded item.
    pub awardable_id: u64,
}

/// A to-do item of a user.
#[derive(Debug, Clone)]
pub struct Todo {
    /// Id.
    pub id: u64,
    /// Whose to-do it is.
    pub user_id: u64,
    /// Project of the target.
    pub project_id: u64,
    /// Who caused it.
    pub author_id: u64,
    /// Action code: 1 assigned, 2 mentioned, 3 build_failed, 4 marked, 5 approval_required, 6 unmergeable,
    /// 7 directly_addressed.
    pub action: u8,
    /// Issue or merge request.
    pub target_kind: NoteableKind,
    /// Global id of the target.
    pub target_id: u64,
    /// `pending` or `done`.
    pub state: String,
    /// Body text (the target title).
    pub body: String,
    /// Creation time.
    pub created_at: Millis,
}

/// The `action_name` of a to-do action code.
pub fn todo_action_name(action: u8) -> &'static str {
    match action {
        1 => "assigned",
        2 => "mentioned",
        3 => "build_failed",
        4 => "marked",
        5 => "approval_required",
        6 => "unmergeable",
        _ => "directly_addressed",
    }
}

impl Store {
    /// Creates an award emoji; returns its id.
    pub fn insert_award(&mut self, kind: AwardableKind, awardable_id: u64, user_id: u64, name: &str) -> u64 {
        let id = self.next_id("award");
        let now = self.now();
        self.awards.insert(
            id,
            AwardEmoji {
                id,
                name: name.to_string(),
                user_id,
                created_at: now,
                updated_at: now,
                kind,
                awardable_id,
            },
        );
        id
    }

    /// The `thumbsup` and `thumbsdown` awards of an item: V4's `upvotes` and `downvotes`
    /// (`app/models/concerns/awardable.rb`, `award_emoji.upvotes`/`downvotes`).
    pub fn votes(&self, kind: AwardableKind, awardable_id: u64) -> (usize, usize) {
        let count = |name: &str| {
            self.awards
                .values()
                .filter(|a| a.kind == kind && a.awardable_id == awardable_id && a.name == name)
                .count()
        };
        (count("thumbsup"), count("thumbsdown"))
    }

    /// Creates a pending to-do for `user_id` about an issue or merge request; returns its id.
    pub fn insert_todo(
        &mut self,
        user_id: u64,
        author_id: u64,
        action: u8,
        target_kind: NoteableKind,
        target_id: u64,
    ) -> Option<u64> {
        let (project_id, body) = match target_kind {
            NoteableKind::Issue => self
                .issues
                .get(&target_id)
                .map(|i| (i.project_id, i.title.clone()))?,
            NoteableKind::MergeRequest => self
                .merge_requests
                .get(&target_id)
                .map(|m| (m.project_id, m.title.clone()))?,
            NoteableKind::Snippet => return None,
        };
        let id = self.next_id("todo");
        let now = self.now();
        self.todos.insert(
            id,
            Todo {
                id,
                user_id,
                project_id,
                author_id,
                action,
                target_kind,
                target_id,
                state: "pending".into(),
                body,
                created_at: now,
            },
        );
        Some(id)
    }
}

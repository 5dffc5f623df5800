//! Notes (comments) on issues, merge requests and snippets; creating one records a `commented on` event. System
//! notes (`system: true`) are the service's own record of a state change ("closed", "reopened", "merged", …), as
//! V4's `SystemNoteService` writes them; they record no event.

use super::{bump, Store};
use crate::time::Millis;

/// What a note is attached to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoteableKind {
    /// An issue.
    Issue,
    /// A merge request.
    MergeRequest,
    /// A snippet.
    Snippet,
}

impl NoteableKind {
    /// The `noteable_type` string.
    pub fn as_str(self) -> &'static str {
        match self {
            NoteableKind::Issue => "Issue",
            NoteableKind::MergeRequest => "MergeRequest",
            NoteableKind::Snippet => "Snippet",
        }
    }
}

/// A note.
#[derive(Debug, Clone)]
pub struct Note {
    /// Id.
    pub id: u64,
    /// Markdown body.
    pub body: String,
    /// Author.
    pub author_id: u64,
    /// Creation time.
    pub created_at: Millis,
    /// Last update time.
    pub updated_at: Millis,
    /// System notes are made by the service.
    pub system: bool,
    /// Issue or merge request.
    pub noteable_kind: NoteableKind,
    /// Global id of the issue or merge request.
    pub noteable_id: u64,
    /// Its iid.
    pub noteable_iid: u64,
    /// Project.
    pub project_id: u64,
    /// The discussion (thread) the note belongs to: 40 hex digits; a note made outside the discussions API is a
    /// discussion of its own.
    pub discussion_id: String,
    /// Made through the discussions API (`DiscussionNote`) rather than as an individual note.
    pub in_discussion: bool,
    /// Resolved (merge request discussion notes only).
    pub resolved: bool,
    /// Who resolved it.
    pub resolved_by: Option<u64>,
}

impl Store {
    /// Creates a note; returns its id.
    pub fn insert_note(
        &mut self,
        kind: NoteableKind,
        noteable_id: u64,
        author_id: u64,
        body: String,
        created_at: Option<Millis>,
    ) -> Option<u64> {
        let id = self.add_note(kind, noteable_id, author_id, body, created_at, false)?;
        let (project_id, target_title) = match kind {
            NoteableKind::Issue => self
                .issues
                .get(&noteable_id)
                .map(|i| (i.project_id, i.title.clone()))?,
            NoteableKind::MergeRequest => self
                .merge_requests
                .get(&noteable_id)
                .map(|m| (m.project_id, m.title.clone()))?,
            NoteableKind::Snippet => self
                .snippets
                .get(&noteable_id)
                .map(|s| (s.project_id.unwrap_or(0), s.title.clone()))?,
        };
        self.record_event(super::events::NewEvent {
            project_id,
            author_id,
            action_name: "commented on".into(),
            target_id: Some(id),
            target_type: Some("Note".into()),
            target_title: Some(target_title),
            note_id: Some(id),
            ..Default::default()
        });
        Some(id)
    }

    /// Creates a system note (V4 `SystemNoteService`'s `create_note`: `system: true`, no event); returns its id.
    pub fn insert_system_note(
        &mut self,
        kind: NoteableKind,
        noteable_id: u64,
        author_id: u64,
        body: impl Into<String>,
    ) -> Option<u64> {
        self.add_note(kind, noteable_id, author_id, body.into(), None, true)
    }

    fn add_note(
        &mut self,
        kind: NoteableKind,
        noteable_id: u64,
        author_id: u64,
        body: String,
        created_at: Option<Millis>,
        system: bool,
    ) -> Option<u64> {
        let (project_id, noteable_iid) = match kind {
            NoteableKind::Issue => self.issues.get(&noteable_id).map(|i| (i.project_id, i.iid))?,
            NoteableKind::MergeRequest => self
                .merge_requests
                .get(&noteable_id)
                .map(|m| (m.project_id, m.iid))?,
            NoteableKind::Snippet => self
                .snippets
                .get(&noteable_id)
                .map(|s| (s.project_id.unwrap_or(0), 0))?,
        };
        let now = match created_at {
            Some(at) => {
                self.observe_time(at);
                at
            }
            None => self.now(),
        };
        let id = bump(&mut self.seq.note);
        self.notes.insert(
            id,
            Note {
                id,
                body,
                author_id,
                created_at: now,
                updated_at: now,
                system,
                noteable_kind: kind,
                noteable_id,
                noteable_iid,
                project_id,
                discussion_id: crate::sha::sha1_hex(format!("discussion:{id}").as_bytes()),
                in_discussion: false,
                resolved: false,
                resolved_by: None,
            },
        );
        if let Some(p) = self.projects.get_mut(&project_id) {
            p.last_activity_at = p.last_activity_at.max(now);
        }
        Some(id)
    }

    /// Number of user (non-system) notes on an issue or merge request.
    pub fn user_notes_count(&self, kind: NoteableKind, noteable_id: u64) -> usize {
        self.notes
            .values()
            .filter(|n| n.noteable_kind == kind && n.noteable_id == noteable_id && !n.system)
            .count()
    }
}

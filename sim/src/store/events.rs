//! Activity events (`GET /projects/:id/events`, `GET /users/:id/events`), recorded where V4's
//! `EventCreateService` records them: a project's creation ("created"), an issue or merge request opened, closed,
//! reopened (shown as "opened", as `Event#action_name` does) or merged (shown as "accepted"), a note, a member
//! joining or leaving a project, and every push, including commits made through the API.

use super::Store;
use crate::time::Millis;

/// A push's summary (`push_data`).
#[derive(Debug, Clone)]
pub struct PushData {
    /// Number of commits pushed.
    pub commit_count: usize,
    /// `pushed`, `created` or `removed`.
    pub action: String,
    /// `branch` or `tag`.
    pub ref_type: String,
    /// Old head (None when created).
    pub commit_from: Option<String>,
    /// New head (None when removed).
    pub commit_to: Option<String>,
    /// Branch or tag name.
    pub ref_name: String,
    /// Title of the new head commit.
    pub commit_title: Option<String>,
}

/// An event.
#[derive(Debug, Clone)]
pub struct Event {
    /// Id.
    pub id: u64,
    /// Project.
    pub project_id: u64,
    /// Who did it.
    pub author_id: u64,
    /// `opened`, `closed`, `commented on`, `pushed to`, `created`, …
    pub action_name: String,
    /// The action as the `action` filter names it (`Event::ACTIONS`' keys): `created`, `closed`, `reopened`,
    /// `pushed`, `commented`, `merged`, `joined`, `left`, …
    pub action: String,
    /// Target global id.
    pub target_id: Option<u64>,
    /// Target iid.
    pub target_iid: Option<u64>,
    /// `Issue`, `MergeRequest`, `Note`, `Milestone`, …
    pub target_type: Option<String>,
    /// Target title.
    pub target_title: Option<String>,
    /// The note for note events.
    pub note_id: Option<u64>,
    /// The push for push events.
    pub push: Option<PushData>,
    /// When.
    pub created_at: Millis,
}

/// What to record.
#[derive(Debug, Clone, Default)]
pub struct NewEvent {
    /// Project.
    pub project_id: u64,
    /// Author.
    pub author_id: u64,
    /// Action name.
    pub action_name: String,
    /// The action key; when empty, the one `action_name` implies.
    pub action: String,
    /// Target global id.
    pub target_id: Option<u64>,
    /// Target iid.
    pub target_iid: Option<u64>,
    /// Target type.
    pub target_type: Option<String>,
    /// Target title.
    pub target_title: Option<String>,
    /// The note for note events.
    pub note_id: Option<u64>,
    /// The push for push events.
    pub push: Option<PushData>,
}

impl Store {
    /// Records an event.
    pub fn record_event(&mut self, new: NewEvent) -> u64 {
        let id = self.next_id("event");
        let now = self.now();
        let action = if new.action.is_empty() {
            action_of(&new.action_name).to_string()
        } else {
            new.action
        };
        self.events.insert(
            id,
            Event {
                id,
                project_id: new.project_id,
                author_id: new.author_id,
                action_name: new.action_name,
                action,
                target_id: new.target_id,
                target_iid: new.target_iid,
                target_type: new.target_type,
                target_title: new.target_title,
                note_id: new.note_id,
                push: new.push,
                created_at: now,
            },
        );
        id
    }

    /// Records an issue or merge request event: `action` is `created`, `closed`, `reopened` or `merged`, shown
    /// (V4 `Event#action_name`) as "opened", "closed", "opened" and "accepted".
    pub fn record_issuable_event(
        &mut self,
        kind: super::NoteableKind,
        id: u64,
        author_id: u64,
        action: &str,
    ) {
        let found = match kind {
            super::NoteableKind::Issue => self
                .issues
                .get(&id)
                .map(|i| (i.project_id, i.iid, i.title.clone(), "Issue")),
            super::NoteableKind::MergeRequest => self
                .merge_requests
                .get(&id)
                .map(|m| (m.project_id, m.iid, m.title.clone(), "MergeRequest")),
            super::NoteableKind::Snippet => None,
        };
        let Some((project_id, iid, title, target_type)) = found else {
            return;
        };
        let action_name = match action {
            "closed" => "closed",
            "merged" => "accepted",
            _ => "opened",
        };
        self.record_event(NewEvent {
            project_id,
            author_id,
            action_name: action_name.into(),
            action: action.into(),
            target_id: Some(id),
            target_iid: Some(iid),
            target_type: Some(target_type.into()),
            target_title: Some(title),
            ..Default::default()
        });
    }

    /// Records a project event without a target: `created` (the project), `joined` or `left` (a member).
    pub fn record_project_event(&mut self, project_id: u64, author_id: u64, action: &str) {
        self.record_event(NewEvent {
            project_id,
            author_id,
            action_name: action.into(),
            action: action.into(),
            ..Default::default()
        });
    }

    /// Records a push of `count` commits to a branch, and starts the merge request pipelines of the open merge
    /// requests from that branch when its new head has a CI configuration file.
    pub fn record_push(
        &mut self,
        project_id: u64,
        author_id: u64,
        branch: &str,
        from: Option<String>,
        to: Option<String>,
    ) {
        let (count, title) = match (self.projects.get(&project_id), to.as_deref()) {
            (Some(p), Some(to)) => {
                // A new branch other than the default counts only the commits the default branch lacks
                // (`GitPushService#push_commits`: `commits_between(default_branch, newrev)`).
                let default_head = p
                    .repo
                    .branches
                    .get(&p.default_branch)
                    .filter(|_| from.is_none() && branch != p.default_branch)
                    .map(|b| b.commit.clone());
                let base: std::collections::BTreeSet<String> = default_head
                    .map(|head| p.repo.history(&head).iter().map(|c| c.id.clone()).collect())
                    .unwrap_or_default();
                let count = p
                    .repo
                    .history(to)
                    .iter()
                    .take_while(|c| Some(c.id.as_str()) != from.as_deref())
                    .filter(|c| !base.contains(&c.id))
                    .count();
                let title = p.repo.commits.get(to).map(|c| c.title().to_string());
                (count, title)
            }
            _ => (0, None),
        };
        if to.is_some() {
            self.start_pipelines_for_push(project_id, branch, author_id);
        }
        let action = match (&from, &to) {
            (None, _) => "created",
            (_, None) => "removed",
            _ => "pushed",
        };
        let action_name = if action == "pushed" {
            "pushed to"
        } else if action == "created" {
            "pushed new"
        } else {
            "deleted"
        };
        self.record_event(NewEvent {
            project_id,
            author_id,
            action_name: action_name.into(),
            push: Some(PushData {
                commit_count: count,
                action: action.into(),
                ref_type: "branch".into(),
                commit_from: from,
                commit_to: to,
                ref_name: branch.to_string(),
                commit_title: title,
            }),
            ..Default::default()
        });
    }
}

/// The `action` key an action name stands for (V4 `Event#action_name` read backwards).
fn action_of(action_name: &str) -> &str {
    match action_name {
        "opened" => "created",
        "accepted" => "merged",
        "commented on" => "commented",
        "pushed to" | "pushed new" | "deleted" => "pushed",
        other => other,
    }
}

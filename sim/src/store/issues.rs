//! Issues: global ids from one sequence starting at 1000, iids per project starting at 1.

use std::collections::BTreeSet;

use super::{bump, Store};
use crate::time::Millis;

/// An issue.
#[derive(Debug, Clone)]
pub struct Issue {
    /// Global id.
    pub id: u64,
    /// Per-project id.
    pub iid: u64,
    /// Project.
    pub project_id: u64,
    /// Title.
    pub title: String,
    /// Description.
    pub description: Option<String>,
    /// `opened` or `closed`.
    pub state: String,
    /// Creation time.
    pub created_at: Millis,
    /// Last update time.
    pub updated_at: Millis,
    /// Close time.
    pub closed_at: Option<Millis>,
    /// Who closed it.
    pub closed_by: Option<u64>,
    /// Label titles.
    pub labels: Vec<String>,
    /// Milestone.
    pub milestone_id: Option<u64>,
    /// Assignees.
    pub assignee_ids: Vec<u64>,
    /// Author.
    pub author_id: u64,
    /// Due date (`YYYY-MM-DD`).
    pub due_date: Option<String>,
    /// Confidential flag.
    pub confidential: bool,
    /// Discussion lock.
    pub discussion_locked: Option<bool>,
    /// Subscribed users.
    pub subscribers: BTreeSet<u64>,
    /// Time estimate in seconds.
    pub time_estimate: u64,
    /// Time spent in seconds.
    pub total_time_spent: u64,
}

impl Store {
    /// Creates an issue with the next global id and project iid; returns the global id.
    pub fn insert_issue(
        &mut self,
        project_id: u64,
        author_id: u64,
        title: String,
        created_at: Option<Millis>,
    ) -> Option<u64> {
        let now = match created_at {
            Some(at) => {
                self.observe_time(at);
                at
            }
            None => self.now(),
        };
        let project = self.projects.get_mut(&project_id)?;
        project.last_issue_iid += 1;
        project.last_activity_at = now;
        let iid = project.last_issue_iid;
        let id = bump(&mut self.seq.issue);
        self.issues.insert(
            id,
            Issue {
                id,
                iid,
                project_id,
                title,
                description: None,
                state: "opened".into(),
                created_at: now,
                updated_at: now,
                closed_at: None,
                closed_by: None,
                labels: Vec::new(),
                milestone_id: None,
                assignee_ids: Vec::new(),
                author_id,
                due_date: None,
                confidential: false,
                discussion_locked: None,
                subscribers: BTreeSet::from([author_id]),
                time_estimate: 0,
                total_time_spent: 0,
            },
        );
        self.record_event(super::events::NewEvent {
            project_id,
            author_id,
            action_name: "opened".into(),
            target_id: Some(id),
            target_iid: Some(iid),
            target_type: Some("Issue".into()),
            target_title: self.issues.get(&id).map(|i| i.title.clone()),
            ..Default::default()
        });
        Some(id)
    }

    /// Finds an issue by project and iid.
    pub fn issue_by_iid(&self, project_id: u64, iid: u64) -> Option<u64> {
        self.issues
            .values()
            .find(|i| i.project_id == project_id && i.iid == iid)
            .map(|i| i.id)
    }
}

//! Merge requests: global ids from their own sequence starting at 2000, iids per project starting at 1.

use std::collections::BTreeSet;

use super::{bump, Store};
use crate::time::Millis;

/// A merge request.
#[derive(Debug, Clone)]
pub struct MergeRequest {
    /// Global id.
    pub id: u64,
    /// Per-project id.
    pub iid: u64,
    /// Target project.
    pub project_id: u64,
    /// Source project.
    pub source_project_id: u64,
    /// Title.
    pub title: String,
    /// Description.
    pub description: Option<String>,
    /// `opened`, `closed`, `merged` or `locked`.
    pub state: String,
    /// Source branch.
    pub source_branch: String,
    /// Target branch.
    pub target_branch: String,
    /// Author.
    pub author_id: u64,
    /// Assignee.
    pub assignee_id: Option<u64>,
    /// Label titles.
    pub labels: Vec<String>,
    /// Milestone.
    pub milestone_id: Option<u64>,
    /// Creation time.
    pub created_at: Millis,
    /// Last update time.
    pub updated_at: Millis,
    /// Merge time.
    pub merged_at: Option<Millis>,
    /// Who merged it.
    pub merged_by: Option<u64>,
    /// Close time.
    pub closed_at: Option<Millis>,
    /// Who closed it.
    pub closed_by: Option<u64>,
    /// Merge when pipeline succeeds.
    pub merge_when_pipeline_succeeds: bool,
    /// Remove the source branch on merge (author's wish).
    pub should_remove_source_branch: Option<bool>,
    /// Remove the source branch on merge (forced).
    pub force_remove_source_branch: Option<bool>,
    /// Squash on merge.
    pub squash: bool,
    /// Discussion lock.
    pub discussion_locked: Option<bool>,
    /// Allow maintainers of the target to push to the source.
    pub allow_maintainer_to_push: bool,
    /// Merge commit once merged.
    pub merge_commit_sha: Option<String>,
    /// Source head at merge or close time.
    pub frozen_sha: Option<String>,
    /// Subscribed users.
    pub subscribers: BTreeSet<u64>,
    /// Time estimate in seconds.
    pub time_estimate: u64,
    /// Time spent in seconds.
    pub total_time_spent: u64,
}

/// Fields for a new merge request.
#[derive(Debug, Clone)]
pub struct NewMergeRequest {
    /// Target project.
    pub project_id: u64,
    /// Author.
    pub author_id: u64,
    /// Title.
    pub title: String,
    /// Source branch.
    pub source_branch: String,
    /// Target branch.
    pub target_branch: String,
}

impl Store {
    /// Creates a merge request; returns its global id.
    pub fn insert_merge_request(&mut self, new: NewMergeRequest) -> Option<u64> {
        let now = self.now();
        let project = self.projects.get_mut(&new.project_id)?;
        project.last_mr_iid += 1;
        project.last_activity_at = now;
        let iid = project.last_mr_iid;
        let id = bump(&mut self.seq.merge_request);
        self.merge_requests.insert(
            id,
            MergeRequest {
                id,
                iid,
                project_id: new.project_id,
                source_project_id: new.project_id,
                title: new.title,
                description: None,
                state: "opened".into(),
                source_branch: new.source_branch,
                target_branch: new.target_branch,
                author_id: new.author_id,
                assignee_id: None,
                labels: Vec::new(),
                milestone_id: None,
                created_at: now,
                updated_at: now,
                merged_at: None,
                merged_by: None,
                closed_at: None,
                closed_by: None,
                merge_when_pipeline_succeeds: false,
                should_remove_source_branch: None,
                force_remove_source_branch: None,
                squash: false,
                discussion_locked: None,
                allow_maintainer_to_push: false,
                merge_commit_sha: None,
                frozen_sha: None,
                subscribers: BTreeSet::from([new.author_id]),
                time_estimate: 0,
                total_time_spent: 0,
            },
        );
        self.record_event(super::events::NewEvent {
            project_id: new.project_id,
            author_id: new.author_id,
            action_name: "opened".into(),
            target_id: Some(id),
            target_iid: Some(iid),
            target_type: Some("MergeRequest".into()),
            target_title: self.merge_requests.get(&id).map(|m| m.title.clone()),
            ..Default::default()
        });
        Some(id)
    }

    /// Finds a merge request by project and iid.
    pub fn merge_request_by_iid(&self, project_id: u64, iid: u64) -> Option<u64> {
        self.merge_requests
            .values()
            .find(|m| m.project_id == project_id && m.iid == iid)
            .map(|m| m.id)
    }
}

//! Project labels and milestones. Labels named on issues and merge requests are created on first use.

use super::{bump, Store};
use crate::time::Millis;

/// A project label.
#[derive(Debug, Clone)]
pub struct Label {
    /// Id.
    pub id: u64,
    /// Project.
    pub project_id: u64,
    /// Title.
    pub name: String,
    /// `#rrggbb`.
    pub color: String,
    /// Description.
    pub description: Option<String>,
    /// Priority.
    pub priority: Option<u64>,
    /// Subscribed users.
    pub subscribers: std::collections::BTreeSet<u64>,
}

/// A project milestone.
#[derive(Debug, Clone)]
pub struct Milestone {
    /// Id.
    pub id: u64,
    /// Per-project id.
    pub iid: u64,
    /// Project.
    pub project_id: u64,
    /// Title.
    pub title: String,
    /// Description.
    pub description: Option<String>,
    /// `active` or `closed`.
    pub state: String,
    /// Creation time.
    pub created_at: Millis,
    /// Last update time.
    pub updated_at: Millis,
    /// Due date.
    pub due_date: Option<String>,
    /// Start date.
    pub start_date: Option<String>,
}

const COLORS: &[&str] = &["#428bca", "#d9534f", "#5cb85c", "#f0ad4e", "#8e44ad", "#34495e"];

impl Store {
    /// Makes sure each label title exists in the project.
    pub fn ensure_labels(&mut self, project_id: u64, titles: &[String]) {
        for title in titles {
            let exists = self
                .labels
                .values()
                .any(|l| l.project_id == project_id && l.name == *title);
            if !exists {
                self.insert_label(project_id, title, None, None);
            }
        }
    }

    /// Creates a label; returns its id.
    pub fn insert_label(
        &mut self,
        project_id: u64,
        name: &str,
        color: Option<String>,
        description: Option<String>,
    ) -> u64 {
        let id = bump(&mut self.seq.label);
        let color = color.unwrap_or_else(|| {
            COLORS
                .get(usize::try_from(id).unwrap_or(0) % COLORS.len())
                .copied()
                .unwrap_or("#428bca")
                .to_string()
        });
        self.labels.insert(
            id,
            Label {
                id,
                project_id,
                name: name.to_string(),
                color,
                description,
                priority: None,
                subscribers: std::collections::BTreeSet::new(),
            },
        );
        id
    }

    /// Creates a milestone; returns its id.
    pub fn insert_milestone(&mut self, project_id: u64, title: &str) -> u64 {
        let id = bump(&mut self.seq.milestone);
        let now = self.now();
        let iid = self
            .milestones
            .values()
            .filter(|m| m.project_id == project_id)
            .map(|m| m.iid)
            .max()
            .unwrap_or(0)
            + 1;
        self.milestones.insert(
            id,
            Milestone {
                id,
                iid,
                project_id,
                title: title.to_string(),
                description: None,
                state: "active".into(),
                created_at: now,
                updated_at: now,
                due_date: None,
                start_date: None,
            },
        );
        id
    }
}

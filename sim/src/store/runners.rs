//! CI runners: creating them, and which ones a user may see and manage. The `Runner` record lives in `ci`.

use std::collections::BTreeSet;

use super::{access, Runner, Store};
use crate::sha::sha1_hex;

/// Fields for a new runner.
#[derive(Debug, Clone)]
pub struct NewRunner {
    /// Description.
    pub description: String,
    /// Shared runners serve every project.
    pub is_shared: bool,
    /// Projects a specific runner is enabled for.
    pub project_ids: BTreeSet<u64>,
    /// Tags.
    pub tag_list: Vec<String>,
}

impl Store {
    /// Registers a runner (active, online); returns its id.
    pub fn insert_runner(&mut self, new: NewRunner) -> u64 {
        let id = self.next_id("runner");
        let now = self.now();
        self.runners.insert(
            id,
            Runner {
                id,
                description: new.description,
                active: true,
                is_shared: new.is_shared,
                name: "svc-runner".into(),
                tag_list: new.tag_list,
                run_untagged: true,
                locked: false,
                token: sha1_hex(format!("runner:{id}:{now}").as_bytes())
                    .get(..20)
                    .unwrap_or_default()
                    .to_string(),
                project_ids: new.project_ids,
                contacted_at: Some(now),
            },
        );
        id
    }

    /// Whether `user_id` manages a specific runner: Maintainer+ in one of its projects.
    pub fn owns_runner(&self, runner: &Runner, user_id: u64) -> bool {
        !runner.is_shared
            && runner.project_ids.iter().any(|pid| {
                self.projects
                    .get(pid)
                    .is_some_and(|p| self.effective_level(p, user_id) >= access::MAINTAINER)
            })
    }
}

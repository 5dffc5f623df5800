//! CI: pipelines and their jobs, triggers, variables, environments, deployments and runners.

use std::collections::BTreeMap;

use super::Store;
use crate::time::Millis;

/// A pipeline. Its status is derived from its jobs.
#[derive(Debug, Clone)]
pub struct Pipeline {
    /// Id.
    pub id: u64,
    /// Project.
    pub project_id: u64,
    /// Commit.
    pub sha: String,
    /// Branch or tag.
    pub ref_name: String,
    /// Previous head of the ref.
    pub before_sha: String,
    /// Whether `ref_name` is a tag.
    pub tag: bool,
    /// Who started it.
    pub user_id: u64,
    /// `push`, `web`, `trigger`, `api`.
    pub source: String,
    /// Creation time.
    pub created_at: Millis,
    /// Last update time.
    pub updated_at: Millis,
    /// Variables given by a trigger.
    pub variables: BTreeMap<String, String>,
}

/// A job artifact archive.
#[derive(Debug, Clone)]
pub struct Artifact {
    /// File name.
    pub filename: String,
    /// Bytes.
    pub data: Vec<u8>,
}

/// A job.
#[derive(Debug, Clone)]
pub struct Job {
    /// Id.
    pub id: u64,
    /// Project.
    pub project_id: u64,
    /// Pipeline.
    pub pipeline_id: u64,
    /// Name.
    pub name: String,
    /// Stage.
    pub stage: String,
    /// `created`, `pending`, `running`, `success`, `failed`, `canceled`, `skipped`, `manual`.
    pub status: String,
    /// Who started it.
    pub user_id: u64,
    /// Creation time.
    pub created_at: Millis,
    /// Start time.
    pub started_at: Option<Millis>,
    /// Finish time.
    pub finished_at: Option<Millis>,
    /// Log text.
    pub trace: String,
    /// Artifacts archive.
    pub artifacts: Option<Artifact>,
    /// Whether the artifacts are kept.
    pub artifacts_kept: bool,
    /// Runner that ran it.
    pub runner_id: Option<u64>,
    /// Coverage percentage.
    pub coverage: Option<f64>,
}

/// A pipeline trigger.
#[derive(Debug, Clone)]
pub struct Trigger {
    /// Id.
    pub id: u64,
    /// Project.
    pub project_id: u64,
    /// Secret token.
    pub token: String,
    /// Description.
    pub description: String,
    /// Owner.
    pub owner_id: Option<u64>,
    /// Creation time.
    pub created_at: Millis,
    /// Last update time.
    pub updated_at: Millis,
    /// Last use.
    pub last_used: Option<Millis>,
}

/// Who a CI variable belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum VariableOwner {
    /// The whole instance (`/admin/ci/variables`).
    Instance,
    /// A group.
    Group(u64),
    /// A project.
    Project(u64),
}

/// A CI variable (of a project, a group or the instance).
#[derive(Debug, Clone)]
pub struct Variable {
    /// Value.
    pub value: String,
    /// Only on protected refs.
    pub protected: bool,
    /// Masked in job logs.
    pub masked: bool,
    /// Masked and hidden: its value is never shown again after creation.
    pub hidden: bool,
    /// Description.
    pub description: Option<String>,
}

/// An environment.
#[derive(Debug, Clone)]
pub struct Environment {
    /// Id.
    pub id: u64,
    /// Project.
    pub project_id: u64,
    /// Name.
    pub name: String,
    /// Slug.
    pub slug: String,
    /// External URL.
    pub external_url: Option<String>,
    /// `available` or `stopped`.
    pub state: String,
}

/// A deployment.
#[derive(Debug, Clone)]
pub struct Deployment {
    /// Id.
    pub id: u64,
    /// Per-project id.
    pub iid: u64,
    /// Project.
    pub project_id: u64,
    /// Environment.
    pub environment_id: u64,
    /// Ref.
    pub ref_name: String,
    /// Commit.
    pub sha: String,
    /// Who deployed.
    pub user_id: u64,
    /// The deploying job.
    pub job_id: Option<u64>,
    /// Creation time.
    pub created_at: Millis,
}

/// A runner.
#[derive(Debug, Clone)]
pub struct Runner {
    /// Id.
    pub id: u64,
    /// Description.
    pub description: String,
    /// Active flag.
    pub active: bool,
    /// Shared runners serve every project.
    pub is_shared: bool,
    /// Name.
    pub name: String,
    /// Tags.
    pub tag_list: Vec<String>,
    /// Whether it picks up untagged jobs.
    pub run_untagged: bool,
    /// Whether it is locked to its current projects.
    pub locked: bool,
    /// Authentication token.
    pub token: String,
    /// Projects a specific runner is enabled for.
    pub project_ids: std::collections::BTreeSet<u64>,
    /// Last contact.
    pub contacted_at: Option<Millis>,
}

impl Store {
    /// Creates a pipeline with a `build` job (succeeded, with artifacts) and a `test` job (pending); returns
    /// its id.
    pub fn insert_pipeline(
        &mut self,
        project_id: u64,
        ref_name: &str,
        sha: &str,
        user_id: u64,
        source: &str,
        variables: BTreeMap<String, String>,
    ) -> u64 {
        let id = self.insert_bare_pipeline(project_id, ref_name, sha, user_id, source, variables);
        let now = self.now();
        let runner = self.runners.values().find(|r| r.is_shared).map(|r| r.id);
        let build = self.insert_job(id, "build", "build", "success", user_id);
        if let Some(job) = self.jobs.get_mut(&build) {
            job.started_at = Some(now);
            job.finished_at = Some(now + 1000);
            job.runner_id = runner;
            job.trace = format!(
                "Running with svc-runner\nChecking out {} as {ref_name}...\n$ make build\nJob succeeded\n",
                &sha.get(..8).unwrap_or(sha)
            );
            job.artifacts = Some(Artifact {
                filename: "artifacts.zip".into(),
                data: format!("artifacts of job {build}\n").into_bytes(),
            });
        }
        self.insert_job(id, "test", "test", "pending", user_id);
        id
    }

    /// The pipeline record alone, without jobs; returns its id.
    fn insert_bare_pipeline(
        &mut self,
        project_id: u64,
        ref_name: &str,
        sha: &str,
        user_id: u64,
        source: &str,
        variables: BTreeMap<String, String>,
    ) -> u64 {
        let id = self.next_id("pipeline");
        let now = self.now();
        let (tag, before) = self
            .projects
            .get(&project_id)
            .map(|p| {
                let tag = p.repo.tags.contains_key(ref_name) && !p.repo.branches.contains_key(ref_name);
                let before = p
                    .repo
                    .commits
                    .get(sha)
                    .and_then(|c| c.parent_ids.first().cloned())
                    .unwrap_or_else(|| "0".repeat(40));
                (tag, before)
            })
            .unwrap_or((false, "0".repeat(40)));
        self.pipelines.insert(
            id,
            Pipeline {
                id,
                project_id,
                sha: sha.to_string(),
                ref_name: ref_name.to_string(),
                before_sha: before,
                tag,
                user_id,
                source: source.to_string(),
                created_at: now,
                updated_at: now,
                variables,
            },
        );
        id
    }

    /// The merge request pipeline the service starts when a merge request is opened, or its source branch
    /// gets new commits, and the source head has a `.<identifier_word>-ci.yml` file at the repository root: a
    /// `merge_request_event` pipeline for the head commit on `refs/merge-requests/<iid>/head`, with one job,
    /// named after the file's first top-level key that is not a global keyword, that stays running (no runner
    /// ever finishes it). Returns the pipeline's id, or `None` when there is no such file or the head already
    /// has its merge request pipeline.
    pub fn start_merge_request_pipeline(&mut self, merge_request_id: u64, user_id: u64) -> Option<u64> {
        let m = self.merge_requests.get(&merge_request_id)?;
        if m.state != "opened" {
            return None;
        }
        let (project_id, iid) = (m.project_id, m.iid);
        let source = self.projects.get(&m.source_project_id)?;
        let head = source.repo.resolve(&m.source_branch)?;
        let file = format!(".{}-ci.yml", self.identifier_word);
        let config = String::from_utf8_lossy(head.tree.get(&file)?).into_owned();
        let sha = head.id.clone();
        let ref_name = format!("refs/merge-requests/{iid}/head");
        let exists = self
            .pipelines
            .values()
            .any(|p| p.project_id == project_id && p.sha == sha && p.ref_name == ref_name);
        if exists {
            return None;
        }
        let job_name = first_job_name(&config).unwrap_or("test").to_string();
        let id = self.insert_bare_pipeline(
            project_id,
            &ref_name,
            &sha,
            user_id,
            "merge_request_event",
            BTreeMap::new(),
        );
        let now = self.now();
        let runner = self.runners.values().find(|r| r.is_shared).map(|r| r.id);
        let job = self.insert_job(id, &job_name, "test", "running", user_id);
        if let Some(job) = self.jobs.get_mut(&job) {
            job.started_at = Some(now);
            job.runner_id = runner;
            job.trace = format!(
                "Running with svc-runner\nChecking out {} as {ref_name}...\n",
                &sha.get(..8).unwrap_or(&sha)
            );
        }
        Some(id)
    }

    /// Starts the merge request pipelines of the open merge requests whose source branch is `branch` of
    /// `project_id` (after a push to it).
    pub fn start_pipelines_for_push(&mut self, project_id: u64, branch: &str, user_id: u64) {
        let ids: Vec<u64> = self
            .merge_requests
            .values()
            .filter(|m| m.state == "opened" && m.source_project_id == project_id && m.source_branch == branch)
            .map(|m| m.id)
            .collect();
        for id in ids {
            self.start_merge_request_pipeline(id, user_id);
        }
    }

    /// The newest pipeline of a merge request's current source head (what the service shows as its
    /// `head_pipeline`).
    pub fn merge_request_head_pipeline(&self, m: &super::MergeRequest) -> Option<&Pipeline> {
        let sha = crate::entities::merge_request::source_sha(self, m)?;
        self.pipelines
            .values()
            .filter(|p| p.project_id == m.project_id && p.sha == sha)
            .max_by_key(|p| p.id)
    }

    /// Adds a job to a pipeline; returns its id.
    pub fn insert_job(
        &mut self,
        pipeline_id: u64,
        name: &str,
        stage: &str,
        status: &str,
        user_id: u64,
    ) -> u64 {
        let id = self.next_id("job");
        let now = self.now();
        let project_id = self
            .pipelines
            .get(&pipeline_id)
            .map(|p| p.project_id)
            .unwrap_or(0);
        self.jobs.insert(
            id,
            Job {
                id,
                project_id,
                pipeline_id,
                name: name.to_string(),
                stage: stage.to_string(),
                status: status.to_string(),
                user_id,
                created_at: now,
                started_at: None,
                finished_at: None,
                trace: String::new(),
                artifacts: None,
                artifacts_kept: false,
                runner_id: None,
                coverage: None,
            },
        );
        id
    }

    /// A pipeline's status, derived from its jobs (manual jobs do not count).
    pub fn pipeline_status(&self, pipeline_id: u64) -> &'static str {
        let statuses: Vec<&str> = self
            .jobs
            .values()
            .filter(|j| j.pipeline_id == pipeline_id && j.status != "manual")
            .map(|j| j.status.as_str())
            .collect();
        let any = |s: &str| statuses.contains(&s);
        if statuses.is_empty() {
            "skipped"
        } else if any("running") {
            "running"
        } else if any("pending") || any("created") {
            if any("success") || any("failed") {
                "running"
            } else {
                "pending"
            }
        } else if any("failed") {
            "failed"
        } else if any("canceled") {
            "canceled"
        } else if statuses.iter().all(|s| *s == "skipped") {
            "skipped"
        } else {
            "success"
        }
    }

    /// (started, finished) of a pipeline from its jobs.
    pub fn pipeline_times(&self, pipeline_id: u64) -> (Option<Millis>, Option<Millis>) {
        let jobs: Vec<_> = self
            .jobs
            .values()
            .filter(|j| j.pipeline_id == pipeline_id && j.status != "manual")
            .collect();
        let started = jobs.iter().filter_map(|j| j.started_at).min();
        let finished = if jobs.iter().all(|j| j.finished_at.is_some()) {
            jobs.iter().filter_map(|j| j.finished_at).max()
        } else {
            None
        };
        (started, finished)
    }
}

/// The first top-level key of a CI configuration that names a job: not indented, not a comment, not a global
/// keyword and not hidden (`.name`). Only the keys are looked at; the configuration is not otherwise read.
fn first_job_name(config: &str) -> Option<&str> {
    const GLOBAL: [&str; 11] = [
        "stages",
        "variables",
        "default",
        "include",
        "workflow",
        "image",
        "services",
        "before_script",
        "after_script",
        "cache",
        "spec",
    ];
    config
        .lines()
        .filter(|line| !line.starts_with([' ', '\t', '#', '-']))
        .filter_map(|line| line.split_once(':'))
        .map(|(key, _)| key.trim().trim_matches(['"', '\'']))
        .find(|key| !key.is_empty() && !key.starts_with('.') && !GLOBAL.contains(key))
}

#[cfg(test)]
mod tests {
    use super::first_job_name;

    #[test]
    fn the_first_job_key_names_the_job() {
        let config =
            "\n# CI\nstages:\n  - test\n.hidden:\n  script: x\ntest:\n  script:\n    - sleep 24h\nlint:\n";
        assert_eq!(first_job_name(config), Some("test"));
        assert_eq!(first_job_name("variables:\n  A: b\n"), None);
    }
}

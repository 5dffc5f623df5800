//! Projects: settings, membership, stars and the repository they own.

use std::collections::{BTreeMap, BTreeSet};

use super::members::Member;
use super::repo::Repository;
use super::{access, bump, NamespaceKind, Store, Visibility};
use crate::sha::sha1_hex;
use crate::time::Millis;

/// Boolean project settings with their defaults; POST and PUT accept each of these names.
pub const FLAGS: &[(&str, bool)] = &[
    ("issues_enabled", true),
    ("merge_requests_enabled", true),
    ("jobs_enabled", true),
    ("wiki_enabled", true),
    ("snippets_enabled", true),
    ("resolve_outdated_diff_discussions", false),
    ("container_registry_enabled", true),
    ("shared_runners_enabled", true),
    ("lfs_enabled", true),
    ("public_jobs", true),
    ("only_allow_merge_if_pipeline_succeeds", false),
    ("only_allow_merge_if_all_discussions_are_resolved", false),
    ("request_access_enabled", false),
    ("printing_merge_request_link_enabled", true),
];

/// A project.
#[derive(Debug, Clone)]
pub struct Project {
    /// Id.
    pub id: u64,
    /// Display name.
    pub name: String,
    /// Path segment.
    pub path: String,
    /// Owning namespace.
    pub namespace_id: u64,
    /// Description.
    pub description: String,
    /// Visibility.
    pub visibility: Visibility,
    /// Creation time.
    pub created_at: Millis,
    /// Last activity time.
    pub last_activity_at: Millis,
    /// Creator.
    pub creator_id: u64,
    /// Default branch name.
    pub default_branch: String,
    /// Boolean settings (see [`FLAGS`]).
    pub flags: BTreeMap<&'static str, bool>,
    /// Archived flag.
    pub archived: bool,
    /// Users who starred the project.
    pub starrers: BTreeSet<u64>,
    /// Direct members.
    pub members: Vec<Member>,
    /// The git repository.
    pub repo: Repository,
    /// Last issue iid handed out.
    pub last_issue_iid: u64,
    /// Last merge request iid handed out.
    pub last_mr_iid: u64,
    /// Source of a fork.
    pub forked_from: Option<u64>,
    /// Tags (topics).
    pub tag_list: Vec<String>,
    /// Runner registration token.
    pub runners_token: String,
    /// CI configuration path.
    pub ci_config_path: Option<String>,
    /// `merge`, `rebase_merge` or `ff`.
    pub merge_method: String,
}

impl Project {
    /// A boolean setting.
    pub fn flag(&self, name: &str) -> bool {
        self.flags
            .get(name)
            .copied()
            .or_else(|| FLAGS.iter().find(|(n, _)| *n == name).map(|(_, d)| *d))
            .unwrap_or(false)
    }
}

/// Fields for a new project.
#[derive(Debug, Clone)]
pub struct NewProject {
    /// Name.
    pub name: String,
    /// Path.
    pub path: String,
    /// Namespace.
    pub namespace_id: u64,
    /// Creator.
    pub creator_id: u64,
    /// Description.
    pub description: String,
    /// Visibility.
    pub visibility: Visibility,
    /// Default branch.
    pub default_branch: String,
    /// Whether the repository starts with a commit holding README.md; otherwise it is empty (no branch).
    pub initialize_with_readme: bool,
}

impl Store {
    /// Creates a project, its repository empty or (with `initialize_with_readme`) with an initial commit holding
    /// README.md on the default branch; the creator becomes a direct member (Owner in a personal namespace,
    /// Maintainer in a group where they are not already Maintainer+).
    pub fn insert_project(&mut self, new: NewProject) -> u64 {
        let id = bump(&mut self.seq.project);
        let created_at = self.now();
        let (author_name, author_email) = self
            .users
            .get(&new.creator_id)
            .map(|u| (u.name.clone(), u.email.clone()))
            .unwrap_or_default();
        let mut repo = Repository::default();
        if new.initialize_with_readme {
            let readme = format!("# {}\n\n{}\n", new.name, new.description);
            let mut tree = super::repo::Tree::new();
            tree.insert("README.md".into(), readme.into_bytes());
            let sha = repo.commit(
                None,
                tree,
                "Initial commit",
                &author_name,
                &author_email,
                created_at,
            );
            repo.set_branch(&new.default_branch, &sha, true);
        }
        let ns_is_group = self
            .namespaces
            .get(&new.namespace_id)
            .is_some_and(|ns| ns.kind == NamespaceKind::Group);
        let inherited = self.namespace_level(new.namespace_id, new.creator_id);
        let mut members = Vec::new();
        let (level, needed) = if ns_is_group {
            (access::MAINTAINER, inherited.unwrap_or(0) < access::MAINTAINER)
        } else {
            (access::OWNER, true)
        };
        if needed {
            members.push(Member {
                user_id: new.creator_id,
                access_level: level,
                expires_at: None,
            });
        }
        self.projects.insert(
            id,
            Project {
                id,
                name: new.name,
                path: new.path,
                namespace_id: new.namespace_id,
                description: new.description,
                visibility: new.visibility,
                created_at,
                last_activity_at: created_at,
                creator_id: new.creator_id,
                default_branch: new.default_branch,
                flags: FLAGS.iter().map(|(n, d)| (*n, *d)).collect(),
                archived: false,
                starrers: BTreeSet::new(),
                members,
                repo,
                last_issue_iid: 0,
                last_mr_iid: 0,
                forked_from: None,
                tag_list: Vec::new(),
                runners_token: sha1_hex(format!("runners:{id}:{created_at}").as_bytes())[..20].to_string(),
                ci_config_path: None,
                merge_method: "merge".into(),
            },
        );
        // V4 `Projects::CreateService#after_create_actions`: `event_service.create_project`.
        self.record_project_event(id, new.creator_id, "created");
        id
    }

    /// `namespace/path` of a project.
    pub fn project_full_path(&self, project: &Project) -> String {
        format!(
            "{}/{}",
            self.namespace_full_path(project.namespace_id),
            project.path
        )
    }

    /// An issue's reference as `Issue#to_reference(from)` writes it: `#iid` in its own project, `path#iid` from
    /// another project of its namespace, `namespace/path#iid` from elsewhere.
    pub fn issue_reference(&self, issue_id: u64, from_project: u64) -> String {
        let Some(issue) = self.issues.get(&issue_id) else {
            return String::new();
        };
        let Some(project) = self.projects.get(&issue.project_id) else {
            return String::new();
        };
        let from_ns = self.projects.get(&from_project).map(|p| p.namespace_id);
        let base = if from_ns != Some(project.namespace_id) {
            self.project_full_path(project)
        } else if from_project != project.id {
            project.path.clone()
        } else {
            String::new()
        };
        format!("{base}#{}", issue.iid)
    }

    /// Finds a project by full path, case-insensitively.
    pub fn project_by_full_path(&self, path: &str) -> Option<u64> {
        let wanted = path.trim_matches('/');
        self.projects
            .values()
            .find(|p| self.project_full_path(p).eq_ignore_ascii_case(wanted))
            .map(|p| p.id)
    }

    /// The direct member level and the inherited (group or namespace owner) level of a user.
    pub fn project_levels(&self, project: &Project, user_id: u64) -> (Option<u8>, Option<u8>) {
        (
            super::members::level_in(&project.members, user_id),
            self.namespace_level(project.namespace_id, user_id),
        )
    }

    /// The level a user effectively has in a project: admins count above Owner.
    pub fn effective_level(&self, project: &Project, user_id: u64) -> u8 {
        if self.users.get(&user_id).is_some_and(|u| u.is_admin) {
            return access::ADMIN;
        }
        let (direct, inherited) = self.project_levels(project, user_id);
        let shared = self
            .group_links
            .values()
            .filter(|l| l.project_id == project.id)
            .filter_map(|l| {
                self.namespace_level(l.group_id, user_id)
                    .map(|level| level.min(l.group_access))
            })
            .max();
        direct.max(inherited).max(shared).unwrap_or(0)
    }

    /// Whether `user` (None for anonymous) may see the project.
    pub fn can_read_project(&self, project: &Project, user: Option<u64>) -> bool {
        match (project.visibility, user) {
            (Visibility::Public, _) => true,
            (Visibility::Internal, Some(_)) => true,
            (_, Some(uid)) => self.effective_level(project, uid) > 0,
            (_, None) => false,
        }
    }
}

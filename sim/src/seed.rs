//! Demo data: user `demo` with a token, group `demo-group` (demo is Owner), project `demo-group/demo-project`
//! (public, default branch `main` with three commits, an issue board `Development`), two issues and a note, a finished pipeline on `main` with
//! a manual `deploy` job, a `production` environment with one deployment, and two runners: a shared one (which
//! ran the pipeline's `build` job) and a specific one enabled for the project. Calling it again reuses what
//! exists.

use serde_json::json;

use crate::store::projects::NewProject;
use crate::store::repo::apply_actions;
use crate::store::runners::NewRunner;
use crate::store::users::NewUser;
use crate::store::{
    access, Deployment, Environment, Member, NamespaceKind, NoteableKind, Store, TokenKind, Visibility,
};

/// What `seed_demo` created.
#[derive(Debug, Clone)]
pub struct DemoSeed {
    /// The demo user's id.
    pub user_id: u64,
    /// `demo`.
    pub username: String,
    /// A personal access token of the demo user.
    pub token: String,
    /// The demo project's id.
    pub project_id: u64,
    /// `demo-group/demo-project`.
    pub project_path: String,
    /// The demo group's id.
    pub group_id: u64,
}

/// The demo user's username.
pub const USERNAME: &str = "demo";
const GROUP: &str = "demo-group";
const PROJECT: &str = "demo-project";

/// Creates the demo data, or returns the existing one.
pub fn seed_demo(store: &mut Store) -> DemoSeed {
    let user_id = match store.user_by_username(USERNAME) {
        Some(u) => u.id,
        None => store.insert_user(NewUser {
            username: USERNAME.into(),
            name: "Demo User".into(),
            email: "demo@example.com".into(),
            password: Some("demo-password".into()),
            is_admin: false,
        }),
    };
    let token = match store
        .tokens
        .values()
        .find(|t| t.user_id == user_id && t.name == "demo" && !t.revoked)
    {
        Some(t) => t.token.clone(),
        None => store
            .insert_token(
                user_id,
                "demo",
                vec!["api".into(), "read_user".into()],
                TokenKind::Personal,
                None,
            )
            .token
            .clone(),
    };
    let group_id = match store.namespace_by_full_path(GROUP) {
        Some(id) => id,
        None => {
            let id = store.insert_namespace(
                "Demo Group",
                GROUP,
                NamespaceKind::Group,
                None,
                Visibility::Public,
            );
            if let Some(ns) = store.namespaces.get_mut(&id) {
                ns.description = "A group for trying svcgate".into();
                ns.members.push(Member {
                    user_id,
                    access_level: access::OWNER,
                    expires_at: None,
                });
            }
            id
        }
    };
    if !store.runners.values().any(|r| r.is_shared) {
        store.insert_runner(NewRunner {
            description: "shared-runner-1".into(),
            is_shared: true,
            project_ids: Default::default(),
            tag_list: vec!["docker".into(), "linux".into()],
        });
    }
    let project_path = format!("{GROUP}/{PROJECT}");
    let project_id = match store.project_by_full_path(&project_path) {
        Some(id) => id,
        None => create_project(store, user_id, group_id),
    };
    if !store
        .runners
        .values()
        .any(|r| r.project_ids.contains(&project_id))
    {
        store.insert_runner(NewRunner {
            description: "demo-project-runner".into(),
            is_shared: false,
            project_ids: [project_id].into_iter().collect(),
            tag_list: vec!["demo".into()],
        });
    }
    DemoSeed {
        user_id,
        username: USERNAME.into(),
        token,
        project_id,
        project_path,
        group_id,
    }
}

fn create_project(store: &mut Store, user_id: u64, group_id: u64) -> u64 {
    let pid = store.insert_project(NewProject {
        name: "Demo Project".into(),
        path: PROJECT.into(),
        namespace_id: group_id,
        creator_id: user_id,
        description: "A demo project served by svc-sim".into(),
        visibility: Visibility::Public,
        default_branch: "main".into(),
        initialize_with_readme: true,
    });
    store.insert_board(pid, "Development");
    let commits = [
        (
            "Add the application skeleton",
            json!([
                {"action": "create", "file_path": "src/main.rs", "content": "fn main() {\n    println!(\"hello\");\n}\n"},
                {"action": "create", "file_path": "Cargo.toml", "content": "[package]\nname = \"demo\"\nversion = \"0.1.0\"\n"}
            ]),
        ),
        (
            "Document the project",
            json!([
                {"action": "create", "file_path": "docs/guide.md", "content": "# Guide\n\nRun `cargo run`.\n"},
                {"action": "update", "file_path": "README.md", "content": "# Demo Project\n\nSee docs/guide.md.\n"}
            ]),
        ),
    ];
    let (name, email) = store
        .users
        .get(&user_id)
        .map(|u| (u.name.clone(), u.email.clone()))
        .unwrap_or_default();
    for (message, actions) in commits {
        let actions: Vec<_> = actions
            .as_array()
            .map(|a| a.iter().filter_map(|v| v.as_object().cloned()).collect())
            .unwrap_or_default();
        let now = store.now();
        let Some(project) = store.projects.get_mut(&pid) else {
            return pid;
        };
        let Some(head) = project.repo.resolve("main").cloned() else {
            return pid;
        };
        if let Ok(tree) = apply_actions(&head.tree, &actions) {
            let sha = project
                .repo
                .commit(Some(head.id), tree, message, &name, &email, now);
            project.repo.set_branch("main", &sha, true);
        }
    }
    let issues = [
        (
            "Crash when the config file is missing",
            "bug",
            "Start without `config.toml` and it panics.",
        ),
        ("Add a dark theme", "feature", "Many users asked for one."),
    ];
    let mut first = None;
    for (title, label, description) in issues {
        if let Some(id) = store.insert_issue(pid, user_id, title.into(), None) {
            store.ensure_labels(pid, &[label.to_string()]);
            if let Some(issue) = store.issues.get_mut(&id) {
                issue.labels = vec![label.into()];
                issue.description = Some(description.into());
            }
            first = first.or(Some(id));
        }
    }
    if let Some(head) = store
        .projects
        .get(&pid)
        .and_then(|p| p.repo.resolve("main"))
        .map(|c| c.id.clone())
    {
        let pipeline = store.insert_pipeline(pid, "main", &head, user_id, "push", Default::default());
        let now = store.now();
        for job in store.jobs.values_mut().filter(|j| j.pipeline_id == pipeline) {
            job.status = "success".into();
            job.started_at = Some(now);
            job.finished_at = Some(now + 2000);
        }
        let deploy = store.insert_job(pipeline, "deploy", "deploy", "manual", user_id);
        let env = store.next_id("environment");
        store.environments.insert(
            env,
            Environment {
                id: env,
                project_id: pid,
                name: "production".into(),
                slug: "production".into(),
                external_url: Some("https://demo.example.com".into()),
                state: "available".into(),
            },
        );
        let dep = store.next_id("deployment");
        store.deployments.insert(
            dep,
            Deployment {
                id: dep,
                iid: 1,
                project_id: pid,
                environment_id: env,
                ref_name: "main".into(),
                sha: head,
                user_id,
                job_id: Some(deploy),
                created_at: now,
            },
        );
    }
    if let Some(issue) = first {
        store.insert_note(
            NoteableKind::Issue,
            issue,
            user_id,
            "I can reproduce this on main.".into(),
            None,
        );
    }
    pid
}

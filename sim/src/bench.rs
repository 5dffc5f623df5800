//! Benchmark data (`--bench-seed`), written straight into the store before the simulator listens: user `bench`
//! (private token `bench-token`), projects `bench/i1k` (1,000 issues), `bench/i100k` (100,000 issues) and
//! `bench/mr` (100 open merge requests), `bench` a Developer of each and subscribed to every 10th issue and merge
//! request. Issues and merge requests are root's, so `bench` is subscribed to nothing else.

use crate::store::merge_requests::NewMergeRequest;
use crate::store::projects::NewProject;
use crate::store::users::NewUser;
use crate::store::{access, Member, Store, TokenKind, Visibility};

/// The bench user's username.
pub const USERNAME: &str = "bench";
/// The bench user's private token.
pub const TOKEN: &str = "bench-token";
/// `bench` is subscribed to the issues and merge requests whose iid is a multiple of this.
const SUBSCRIBED_EVERY: u64 = 10;

/// Creates the bench data; a store that already has user `bench` is left alone.
pub fn seed_bench(store: &mut Store) {
    if store.user_by_username(USERNAME).is_some() {
        return;
    }
    let bench = store.insert_user(NewUser {
        username: USERNAME.into(),
        name: "Bench".into(),
        email: "bench@example.com".into(),
        password: None,
        is_admin: false,
    });
    store.insert_token(
        bench,
        "bench",
        vec!["api".into(), "read_api".into()],
        TokenKind::Personal,
        Some(TOKEN.into()),
    );
    let root = 1;
    let i1k = project(store, bench, root, "i1k", false);
    let i100k = project(store, bench, root, "i100k", false);
    let mr = project(store, bench, root, "mr", true);
    for (pid, count) in [(i1k, 1_000), (i100k, 100_000)] {
        for n in 1..=count {
            let Some(id) = store.insert_issue(pid, root, format!("Bench issue {n}"), None) else {
                continue;
            };
            if let Some(issue) = store.issues.get_mut(&id) {
                if issue.iid % SUBSCRIBED_EVERY == 0 {
                    issue.subscribers.insert(bench);
                }
            }
        }
    }
    let head = store
        .projects
        .get(&mr)
        .and_then(|p| p.repo.branches.get("main"))
        .map(|b| b.commit.clone());
    for n in 1..=100 {
        let branch = format!("bench-{n}");
        if let (Some(project), Some(head)) = (store.projects.get_mut(&mr), head.as_deref()) {
            project.repo.set_branch(&branch, head, false);
        }
        let Some(id) = store.insert_merge_request(NewMergeRequest {
            project_id: mr,
            author_id: root,
            title: format!("Bench merge request {n}"),
            source_branch: branch,
            target_branch: "main".into(),
        }) else {
            continue;
        };
        if let Some(m) = store.merge_requests.get_mut(&id) {
            if m.iid % SUBSCRIBED_EVERY == 0 {
                m.subscribers.insert(bench);
            }
        }
    }
}

/// A private project `bench/<path>` created by root, with `bench` a Developer.
fn project(store: &mut Store, bench: u64, root: u64, path: &str, readme: bool) -> u64 {
    let namespace_id = store.users.get(&bench).map_or(0, |u| u.namespace_id);
    let id = store.insert_project(NewProject {
        name: path.into(),
        path: path.into(),
        namespace_id,
        creator_id: root,
        description: String::new(),
        visibility: Visibility::Private,
        default_branch: "main".into(),
        initialize_with_readme: readme,
    });
    if let Some(p) = store.projects.get_mut(&id) {
        p.members.push(Member {
            user_id: bench,
            access_level: access::DEVELOPER,
            expires_at: None,
        });
    }
    id
}

//! End-to-end tests of behaviours where the simulator follows the real service closely: empty repositories and
//! their first commit, `owned=true`, merge statuses, labels by name, multi-file snippets and the identifier word.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use http::{Method, StatusCode};
use serde_json::{json, Value};

mod common;
use common::*;

/// Creates a user and returns (id, token).
async fn user(sim: &svc_sim::SimHandle, name: &str) -> (u64, String) {
    let body = json!({"email": format!("{name}@example.com"), "username": name, "name": name, "password": "secret123"});
    let u = ok(sim, Method::POST, "/api/v4/users", ROOT, Some(body)).await;
    let id = u["id"].as_u64().unwrap();
    let t = ok(
        sim,
        Method::POST,
        &format!("/api/v4/users/{id}/personal_access_tokens"),
        ROOT,
        Some(json!({"name": "t", "scopes": ["api"]})),
    )
    .await;
    (id, t["token"].as_str().unwrap().to_string())
}

#[tokio::test]
async fn a_new_repository_is_empty_until_its_first_commit_names_the_default_branch() {
    let sim = start().await;
    let p = ok(
        &sim,
        Method::POST,
        "/api/v4/projects",
        ROOT,
        Some(json!({"name": "empty"})),
    )
    .await;
    let pid = p["id"].as_u64().unwrap();
    assert_eq!(p["empty_repo"], true);
    assert_eq!(
        p["default_branch"],
        Value::Null,
        "V4 shows no default branch before the first"
    );
    let branches = ok(
        &sim,
        Method::GET,
        &format!("/api/v4/projects/{pid}/repository/branches"),
        ROOT,
        None,
    )
    .await;
    assert_eq!(branches, json!([]));
    let r = call(
        &sim,
        Method::GET,
        &format!("/api/v4/projects/{pid}/repository/files/README.md?ref=main"),
        Some(ROOT),
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);

    // The files API's first commit creates its branch and makes it the default.
    let r = call(
        &sim,
        Method::POST,
        &format!("/api/v4/projects/{pid}/repository/files/notes.txt"),
        Some(ROOT),
        Some(json!({"branch": "trunk", "content": "hi", "commit_message": "first"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let p = ok(&sim, Method::GET, &format!("/api/v4/projects/{pid}"), ROOT, None).await;
    assert_eq!(
        (p["default_branch"].clone(), p["empty_repo"].clone()),
        (json!("trunk"), json!(false))
    );
    let b = ok(
        &sim,
        Method::GET,
        &format!("/api/v4/projects/{pid}/repository/branches/trunk"),
        ROOT,
        None,
    )
    .await;
    assert_eq!(b["default"], true);
    let commits = ok(
        &sim,
        Method::GET,
        &format!("/api/v4/projects/{pid}/repository/commits"),
        ROOT,
        None,
    )
    .await;
    assert_eq!(commits.as_array().unwrap().len(), 1);
    assert_eq!(commits[0]["parent_ids"], json!([]));

    // So does the commits API's.
    let q = ok(
        &sim,
        Method::POST,
        "/api/v4/projects",
        ROOT,
        Some(json!({"name": "empty2"})),
    )
    .await;
    let qid = q["id"].as_u64().unwrap();
    let c = call(
        &sim,
        Method::POST,
        &format!("/api/v4/projects/{qid}/repository/commits"),
        Some(ROOT),
        Some(json!({"branch": "develop", "commit_message": "first", "actions": [{"action": "create", "file_path": "a", "content": "a"}]})),
    )
    .await;
    assert_eq!(c.status, StatusCode::CREATED, "{}", c.body);
    let q = ok(&sim, Method::GET, &format!("/api/v4/projects/{qid}"), ROOT, None).await;
    assert_eq!(q["default_branch"], "develop");

    // initialize_with_readme gives the default branch a first commit holding README.md.
    let r = ok(
        &sim,
        Method::POST,
        "/api/v4/projects",
        ROOT,
        Some(json!({"name": "readme", "initialize_with_readme": true})),
    )
    .await;
    let rid = r["id"].as_u64().unwrap();
    assert_eq!(r["empty_repo"], false);
    let f = ok(
        &sim,
        Method::GET,
        &format!("/api/v4/projects/{rid}/repository/files/README.md?ref=main"),
        ROOT,
        None,
    )
    .await;
    assert_eq!(f["file_name"], "README.md");
}

#[tokio::test]
async fn owned_projects_include_those_of_groups_the_caller_owns() {
    let sim = start().await;
    let (bob, bob_token) = user(&sim, "bob").await;
    let g = ok(
        &sim,
        Method::POST,
        "/api/v4/groups",
        &bob_token,
        Some(json!({"name": "Bobs", "path": "bobs"})),
    )
    .await;
    let gid = g["id"].as_u64().unwrap();
    let in_group = ok(
        &sim,
        Method::POST,
        "/api/v4/projects",
        &bob_token,
        Some(json!({"name": "grouped", "namespace_id": gid})),
    )
    .await;
    let own = ok(
        &sim,
        Method::POST,
        "/api/v4/projects",
        &bob_token,
        Some(json!({"name": "mine"})),
    )
    .await;
    // A group where bob is only a Developer: its projects are not his.
    let other = ok(
        &sim,
        Method::POST,
        "/api/v4/groups",
        ROOT,
        Some(json!({"name": "Others", "path": "others"})),
    )
    .await;
    let oid = other["id"].as_u64().unwrap();
    ok(
        &sim,
        Method::POST,
        &format!("/api/v4/groups/{oid}/members"),
        ROOT,
        Some(json!({"user_id": bob, "access_level": 30})),
    )
    .await;
    let theirs = ok(
        &sim,
        Method::POST,
        "/api/v4/projects",
        ROOT,
        Some(json!({"name": "theirs", "namespace_id": oid})),
    )
    .await;
    let listed = ok(&sim, Method::GET, "/api/v4/projects?owned=true", &bob_token, None).await;
    let mut ids: Vec<u64> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_u64().unwrap())
        .collect();
    ids.sort_unstable();
    let mut want = vec![in_group["id"].as_u64().unwrap(), own["id"].as_u64().unwrap()];
    want.sort_unstable();
    assert_eq!(ids, want);
    let member = ok(
        &sim,
        Method::GET,
        "/api/v4/projects?membership=true",
        &bob_token,
        None,
    )
    .await;
    assert!(member.as_array().unwrap().iter().any(|p| p["id"] == theirs["id"]));
}

#[tokio::test]
async fn merge_requests_carry_a_detailed_merge_status() {
    let sim = start().await;
    let p = ok(
        &sim,
        Method::POST,
        "/api/v4/projects",
        ROOT,
        Some(json!({"name": "mr", "initialize_with_readme": true})),
    )
    .await;
    let pid = p["id"].as_u64().unwrap();
    let base = format!("/api/v4/projects/{pid}");
    for branch in ["feature", "gone"] {
        ok(
            &sim,
            Method::POST,
            &format!("{base}/repository/files/{branch}.txt"),
            ROOT,
            Some(json!({"branch": branch, "start_branch": "main", "content": "x", "commit_message": branch})),
        )
        .await;
    }
    let open =
        |source: &str, title: &str| json!({"source_branch": source, "target_branch": "main", "title": title});
    let m = ok(
        &sim,
        Method::POST,
        &format!("{base}/merge_requests"),
        ROOT,
        Some(open("feature", "Feature")),
    )
    .await;
    assert_eq!(
        (m["merge_status"].clone(), m["detailed_merge_status"].clone()),
        (json!("can_be_merged"), json!("mergeable"))
    );
    let d = ok(
        &sim,
        Method::POST,
        &format!("{base}/merge_requests"),
        ROOT,
        Some(open("gone", "Draft: later")),
    )
    .await;
    assert_eq!(d["detailed_merge_status"], "draft_status");
    ok(
        &sim,
        Method::PUT,
        &format!("{base}/merge_requests/{}", d["iid"]),
        ROOT,
        Some(json!({"title": "Later"})),
    )
    .await;
    let r = call(
        &sim,
        Method::DELETE,
        &format!("{base}/repository/branches/gone"),
        Some(ROOT),
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);
    let d = ok(
        &sim,
        Method::GET,
        &format!("{base}/merge_requests/{}", d["iid"]),
        ROOT,
        None,
    )
    .await;
    assert_eq!(
        (d["merge_status"].clone(), d["detailed_merge_status"].clone()),
        (json!("cannot_be_merged"), json!("broken_status"))
    );
    let list = ok(
        &sim,
        Method::GET,
        &format!("{base}/merge_requests?state=opened"),
        ROOT,
        None,
    )
    .await;
    assert!(list
        .as_array()
        .unwrap()
        .iter()
        .all(|m| m["detailed_merge_status"].is_string()));
    let merged = ok(
        &sim,
        Method::PUT,
        &format!("{base}/merge_requests/{}/merge", m["iid"]),
        ROOT,
        None,
    )
    .await;
    assert_eq!(merged["detailed_merge_status"], "not_open");
}

#[tokio::test]
async fn labels_are_read_updated_and_deleted_by_id_or_name() {
    let sim = start().await;
    let p = ok(
        &sim,
        Method::POST,
        "/api/v4/projects",
        ROOT,
        Some(json!({"name": "labels"})),
    )
    .await;
    let base = format!("/api/v4/projects/{}/labels", p["id"]);
    let l = ok(
        &sim,
        Method::POST,
        &base,
        ROOT,
        Some(json!({"name": "needs: review", "color": "#778899"})),
    )
    .await;
    let by_name = ok(
        &sim,
        Method::GET,
        &format!("{base}/needs%3A%20review"),
        ROOT,
        None,
    )
    .await;
    assert_eq!(by_name["id"], l["id"]);
    let by_id = ok(&sim, Method::GET, &format!("{base}/{}", l["id"]), ROOT, None).await;
    assert_eq!(by_id["name"], "needs: review");
    let renamed = ok(
        &sim,
        Method::PUT,
        &format!("{base}/needs%3A%20review"),
        ROOT,
        Some(json!({"new_name": "Label:that requires:encoding"})),
    )
    .await;
    assert_eq!(renamed["name"], "Label:that requires:encoding");
    let r = call(
        &sim,
        Method::GET,
        &format!("{base}/needs%3A%20review"),
        Some(ROOT),
        None,
    )
    .await;
    assert_eq!(
        (r.status, r.body.clone()),
        (StatusCode::NOT_FOUND, json!({"message": "404 Label Not Found"}))
    );
    let r = call(
        &sim,
        Method::DELETE,
        &format!("{base}/{}", l["id"]),
        Some(ROOT),
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);
    assert_eq!(ok(&sim, Method::GET, &base, ROOT, None).await, json!([]));
}

#[tokio::test]
async fn snippets_hold_several_files() {
    let sim = start().await;
    let files =
        json!([{"file_path": "a.py", "content": "import a"}, {"file_path": "dir/b.txt", "content": "bee"}]);
    let r = call(
        &sim,
        Method::POST,
        "/api/v4/snippets",
        Some(ROOT),
        Some(json!({"title": "two", "files": files, "visibility": "private"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let id = r.body["id"].as_u64().unwrap();
    assert_eq!(r.body["file_name"], "a.py");
    let paths: Vec<&str> = r.body["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["a.py", "dir/b.txt"]);
    let raw = call(
        &sim,
        Method::GET,
        &format!("/api/v4/snippets/{id}/raw"),
        Some(ROOT),
        None,
    )
    .await;
    assert_eq!(raw.raw, b"import a");
    let raw = call(
        &sim,
        Method::GET,
        &format!("/api/v4/snippets/{id}/files/main/dir%2Fb.txt/raw"),
        Some(ROOT),
        None,
    )
    .await;
    assert_eq!((raw.status, raw.raw), (StatusCode::OK, b"bee".to_vec()));

    // Update: rename the first file with file_name, and change the files with actions.
    let u = ok(
        &sim,
        Method::PUT,
        &format!("/api/v4/snippets/{id}"),
        ROOT,
        Some(json!({"file_name": "first.py", "files": [
            {"action": "delete", "file_path": "dir/b.txt"},
            {"action": "create", "file_path": "c.md", "content": "sea"}
        ]})),
    )
    .await;
    let paths: Vec<&str> = u["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["first.py", "c.md"]);
    let raw = call(
        &sim,
        Method::GET,
        &format!("/api/v4/snippets/{id}/raw"),
        Some(ROOT),
        None,
    )
    .await;
    assert_eq!(raw.raw, b"import a");
    let all = ok(&sim, Method::GET, "/api/v4/snippets/all", ROOT, None).await;
    assert_eq!(all.as_array().unwrap().len(), 1);

    // Project snippets take files too; files and content together are refused.
    let p = ok(
        &sim,
        Method::POST,
        "/api/v4/projects",
        ROOT,
        Some(json!({"name": "snips"})),
    )
    .await;
    let r = call(
        &sim,
        Method::POST,
        &format!("/api/v4/projects/{}/snippets", p["id"]),
        Some(ROOT),
        Some(json!({"title": "p", "visibility": "private", "files": [{"file_path": "foo.py", "content": "initial content"}]})),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    assert_eq!(r.body["file_name"], "foo.py");
    let r = call(
        &sim,
        Method::POST,
        "/api/v4/snippets",
        Some(ROOT),
        Some(json!({"title": "x", "content": "y", "files": [{"file_path": "z", "content": "z"}]})),
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn the_identifier_word_names_the_ci_template_routes() {
    let sim = start().await;
    let r = call(
        &sim,
        Method::GET,
        "/api/v4/templates/svc_ci_ymls/Ruby",
        Some(ROOT),
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::OK);
    let options = svc_sim::SimOptions {
        identifier_word: "acme".into(),
        ..svc_sim::SimOptions::default()
    };
    let acme = start_with(options).await;
    let r = call(
        &acme,
        Method::GET,
        "/api/v4/templates/acme_ci_ymls?per_page=100",
        Some(ROOT),
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(r.body.as_array().unwrap().len() > 20);
    let r = call(
        &acme,
        Method::GET,
        "/api/v4/templates/acme_ci_ymls/Nodejs",
        Some(ROOT),
        None,
    )
    .await;
    assert_eq!(r.body["name"], "Nodejs");
    let r = call(
        &acme,
        Method::GET,
        "/api/v4/templates/acme_ci_ymls/Nope",
        Some(ROOT),
        None,
    )
    .await;
    assert_eq!(r.body, json!({"message": "404 acme_ci_yml Not Found"}));
    let r = call(
        &acme,
        Method::GET,
        "/api/v4/templates/svc_ci_ymls",
        Some(ROOT),
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_branch_made_in_an_empty_repository_starts_from_a_new_default_branch() {
    let sim = start().await;
    let p = ok(
        &sim,
        Method::POST,
        "/api/v4/projects",
        ROOT,
        Some(json!({"name": "e"})),
    )
    .await;
    let base = format!("/api/v4/projects/{}", p["id"]);
    let b = ok(
        &sim,
        Method::POST,
        &format!("{base}/repository/branches"),
        ROOT,
        Some(json!({"branch": "my.branch.name", "ref": "main"})),
    )
    .await;
    assert_eq!(b["name"], "my.branch.name");
    assert_eq!(b["commit"]["title"], "Add README.md");
    let main = ok(
        &sim,
        Method::GET,
        &format!("{base}/repository/branches/main"),
        ROOT,
        None,
    )
    .await;
    assert_eq!(main["commit"]["id"], b["commit"]["id"]);
    let raw = call(
        &sim,
        Method::GET,
        &format!("{base}/repository/files/README.md/raw"),
        Some(ROOT),
        None,
    )
    .await;
    assert_eq!((raw.status, raw.raw.len()), (StatusCode::OK, 0));
}

#[tokio::test]
async fn files_carry_identifier_headers_and_blame() {
    let sim = start().await;
    let p = ok(
        &sim,
        Method::POST,
        "/api/v4/projects",
        ROOT,
        Some(json!({"name": "f"})),
    )
    .await;
    let base = format!("/api/v4/projects/{}/repository", p["id"]);
    ok(
        &sim,
        Method::POST,
        &format!("{base}/files/docs%2Fa.txt"),
        ROOT,
        Some(json!({"branch": "main", "content": "one\ntwo\n", "commit_message": "add"})),
    )
    .await;
    for method in [Method::GET, Method::HEAD] {
        let r = call(
            &sim,
            method,
            &format!("{base}/files/docs%2Fa.txt?ref=main"),
            Some(ROOT),
            None,
        )
        .await;
        assert_eq!(r.status, StatusCode::OK);
        assert_eq!(header(&r, "x-svc-file-path"), "docs/a.txt");
        assert_eq!(header(&r, "x-svc-file-name"), "a.txt");
        assert_eq!(header(&r, "x-svc-size"), "8");
        assert_eq!(header(&r, "x-svc-ref"), "main");
    }
    // raw defaults to the default branch.
    let r = call(
        &sim,
        Method::GET,
        &format!("{base}/files/docs%2Fa.txt/raw"),
        Some(ROOT),
        None,
    )
    .await;
    assert_eq!(r.raw, b"one\ntwo\n");
    let blame = ok(
        &sim,
        Method::GET,
        &format!("{base}/files/docs%2Fa.txt/blame?ref=main"),
        ROOT,
        None,
    )
    .await;
    assert_eq!(blame[0]["lines"], json!(["one", "two"]));
    assert_eq!(blame[0]["commit"]["message"], "add");
    // zip archives are zip files.
    let r = call(
        &sim,
        Method::GET,
        &format!("{base}/archive.zip"),
        Some(ROOT),
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(&r.raw[..4], b"PK\x03\x04");
    assert_eq!(&r.raw[r.raw.len() - 22..r.raw.len() - 18], b"PK\x05\x06");
    assert!(r.raw.windows(10).any(|w| w == b"docs/a.txt"));
}

#[tokio::test]
async fn participants_closing_merge_requests_and_an_explicit_keep_of_the_source_branch() {
    let sim = start().await;
    let (_, bob_token) = user(&sim, "bob").await;
    let p = ok(
        &sim,
        Method::POST,
        "/api/v4/projects",
        ROOT,
        Some(json!({"name": "pm", "initialize_with_readme": true, "visibility": "public"})),
    )
    .await;
    let base = format!("/api/v4/projects/{}", p["id"]);
    let issue = ok(
        &sim,
        Method::POST,
        &format!("{base}/issues"),
        ROOT,
        Some(json!({"title": "bug"})),
    )
    .await;
    let iid = issue["iid"].as_u64().unwrap();
    ok(
        &sim,
        Method::POST,
        &format!("{base}/issues/{iid}/notes"),
        &bob_token,
        Some(json!({"body": "me too"})),
    )
    .await;
    let people = ok(
        &sim,
        Method::GET,
        &format!("{base}/issues/{iid}/participants"),
        ROOT,
        None,
    )
    .await;
    let names: Vec<&str> = people
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["username"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["root", "bob"]);

    ok(
        &sim,
        Method::POST,
        &format!("{base}/repository/files/fix.txt"),
        ROOT,
        Some(json!({"branch": "fix", "start_branch": "main", "content": "x", "commit_message": "fix"})),
    )
    .await;
    let mr = ok(
        &sim,
        Method::POST,
        &format!("{base}/merge_requests"),
        ROOT,
        Some(json!({"source_branch": "fix", "target_branch": "main", "title": "Fix", "description": format!("Closes #{iid}"), "remove_source_branch": true})),
    )
    .await;
    let closing = ok(
        &sim,
        Method::GET,
        &format!("{base}/issues/{iid}/closed_by"),
        ROOT,
        None,
    )
    .await;
    assert_eq!(closing[0]["iid"], mr["iid"]);
    let related = ok(
        &sim,
        Method::GET,
        &format!("{base}/issues/{iid}/related_merge_requests"),
        ROOT,
        None,
    )
    .await;
    assert_eq!(related.as_array().unwrap().len(), 1);
    let people = ok(
        &sim,
        Method::GET,
        &format!("{base}/merge_requests/{}/participants", mr["iid"]),
        ROOT,
        None,
    )
    .await;
    assert_eq!(people[0]["username"], "root");

    // The merge request asks for its source branch to go, but the merge says to keep it.
    ok(
        &sim,
        Method::PUT,
        &format!("{base}/merge_requests/{}/merge", mr["iid"]),
        ROOT,
        Some(json!({"should_remove_source_branch": false})),
    )
    .await;
    let r = call(
        &sim,
        Method::GET,
        &format!("{base}/repository/branches/fix"),
        Some(ROOT),
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::OK);
}

#[tokio::test]
async fn commits_revert_cherry_pick_refs_merge_base_and_all_branches() {
    let sim = start().await;
    let p = ok(
        &sim,
        Method::POST,
        "/api/v4/projects",
        ROOT,
        Some(json!({"name": "c"})),
    )
    .await;
    let base = format!("/api/v4/projects/{}/repository", p["id"]);
    let first = ok(
        &sim,
        Method::POST,
        &format!("{base}/commits"),
        ROOT,
        Some(json!({"branch": "main", "commit_message": "one", "actions": [{"action": "create", "file_path": "a", "content": "a"}]})),
    )
    .await;
    let side = ok(
        &sim,
        Method::POST,
        &format!("{base}/commits"),
        ROOT,
        Some(json!({"branch": "side", "start_branch": "main", "commit_message": "two", "actions": [{"action": "create", "file_path": "b", "content": "b"}]})),
    )
    .await;
    let main_only = ok(&sim, Method::GET, &format!("{base}/commits"), ROOT, None).await;
    let all = ok(&sim, Method::GET, &format!("{base}/commits?all=true"), ROOT, None).await;
    assert_eq!(
        (main_only.as_array().unwrap().len(), all.as_array().unwrap().len()),
        (1, 2)
    );
    assert_eq!(all[0]["id"], side["id"]);

    let refs = ok(
        &sim,
        Method::GET,
        &format!("{base}/commits/{}/refs", first["id"].as_str().unwrap()),
        ROOT,
        None,
    )
    .await;
    assert_eq!(
        refs,
        json!([{"type": "branch", "name": "main"}, {"type": "branch", "name": "side"}])
    );
    let mb = ok(
        &sim,
        Method::GET,
        &format!("{base}/merge_base?refs[]=main&refs[]=side"),
        ROOT,
        None,
    )
    .await;
    assert_eq!(mb["id"], first["id"]);
    let r = call(
        &sim,
        Method::GET,
        &format!("{base}/merge_base?refs[]=main"),
        Some(ROOT),
        None,
    )
    .await;
    assert_eq!(
        (r.status, r.body.clone()),
        (
            StatusCode::BAD_REQUEST,
            json!({"message": "Provide at least 2 refs"})
        )
    );
    let r = call(
        &sim,
        Method::GET,
        &format!("{base}/commits/{}/signature", first["id"].as_str().unwrap()),
        Some(ROOT),
        None,
    )
    .await;
    assert_eq!(r.body, json!({"message": "404 Signature Not Found"}));

    let picked = ok(
        &sim,
        Method::POST,
        &format!("{base}/commits/{}/cherry_pick", side["id"].as_str().unwrap()),
        ROOT,
        Some(json!({"branch": "main"})),
    )
    .await;
    assert_eq!(
        picked["message"],
        format!(
            "two\n\n(cherry picked from commit {})",
            side["id"].as_str().unwrap()
        )
    );
    let reverted = ok(
        &sim,
        Method::POST,
        &format!("{base}/commits/{}/revert", picked["id"].as_str().unwrap()),
        ROOT,
        Some(json!({"branch": "main"})),
    )
    .await;
    assert_eq!(
        reverted["message"],
        format!(
            "Revert \"two\"\n\nThis reverts commit {}",
            picked["id"].as_str().unwrap()
        )
    );
    let r = call(
        &sim,
        Method::POST,
        &format!("{base}/commits/{}/revert", picked["id"].as_str().unwrap()),
        Some(ROOT),
        Some(json!({"branch": "main"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    let tree = ok(&sim, Method::GET, &format!("{base}/tree"), ROOT, None).await;
    assert_eq!(tree.as_array().unwrap().len(), 1);
    let snap = call(
        &sim,
        Method::GET,
        &format!("/api/v4/projects/{}/snapshot", p["id"]),
        Some(ROOT),
        None,
    )
    .await;
    assert_eq!(snap.status, StatusCode::OK);
}

#[tokio::test]
async fn users_keys_tokens_variables_deploy_keys_namespaces_integrations_and_rebase() {
    let sim = start().await;
    let (bob, _) = user(&sim, "bob").await;
    let key = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQDZAjAX8vTiHD7Yi3 bob@host";
    let k = ok(
        &sim,
        Method::POST,
        &format!("/api/v4/users/{bob}/keys"),
        ROOT,
        Some(json!({"title": "k", "key": key})),
    )
    .await;
    let got = ok(
        &sim,
        Method::GET,
        &format!("/api/v4/users/{bob}/keys/{}", k["id"]),
        ROOT,
        None,
    )
    .await;
    assert_eq!(got["title"], "k");

    // Blocking twice answers null, unblocking an active user false.
    let block = format!("/api/v4/users/{bob}/block");
    assert_eq!(
        call(&sim, Method::POST, &block, Some(ROOT), None).await.body,
        json!(true)
    );
    assert_eq!(
        call(&sim, Method::POST, &block, Some(ROOT), None).await.body,
        Value::Null
    );
    let unblock = format!("/api/v4/users/{bob}/unblock");
    assert_eq!(
        call(&sim, Method::POST, &unblock, Some(ROOT), None).await.body,
        json!(true)
    );
    assert_eq!(
        call(&sim, Method::POST, &unblock, Some(ROOT), None).await.body,
        json!(false)
    );

    let tokens = format!("/api/v4/users/{bob}/impersonation_tokens");
    let t = ok(
        &sim,
        Method::POST,
        &tokens,
        ROOT,
        Some(json!({"name": "imp", "scopes": ["api"]})),
    )
    .await;
    let r = call(
        &sim,
        Method::DELETE,
        &format!("{tokens}/{}", t["id"]),
        Some(ROOT),
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);
    assert_eq!(
        ok(&sim, Method::GET, &format!("{tokens}?state=active"), ROOT, None).await,
        json!([])
    );
    let inactive = ok(&sim, Method::GET, &format!("{tokens}?state=inactive"), ROOT, None).await;
    assert_eq!(inactive[0]["id"], t["id"]);

    let p = ok(
        &sim,
        Method::POST,
        "/api/v4/projects",
        ROOT,
        Some(json!({"name": "v", "initialize_with_readme": true})),
    )
    .await;
    let base = format!("/api/v4/projects/{}", p["id"]);
    let v = ok(
        &sim,
        Method::POST,
        &format!("{base}/variables"),
        ROOT,
        Some(json!({"key": "K", "value": "secret_value", "masked_and_hidden": true})),
    )
    .await;
    assert_eq!(
        (v["value"].clone(), v["hidden"].clone(), v["masked"].clone()),
        (Value::Null, json!(true), json!(true))
    );
    let v = ok(
        &sim,
        Method::PUT,
        &format!("{base}/variables/K"),
        ROOT,
        Some(json!({"description": "d"})),
    )
    .await;
    assert_eq!(
        (v["value"].clone(), v["description"].clone()),
        (Value::Null, json!("d"))
    );

    let dk = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQDFdRyjJQh+1niBpXqE2I8dzjG deploy@host";
    let r = call(
        &sim,
        Method::POST,
        "/api/v4/deploy_keys",
        Some(ROOT),
        Some(json!({"title": "d", "key": dk})),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let listed = ok(&sim, Method::GET, "/api/v4/deploy_keys", ROOT, None).await;
    assert!(listed.as_array().unwrap().iter().any(|k| k["id"] == r.body["id"]));
    let r = call(
        &sim,
        Method::POST,
        "/api/v4/deploy_keys",
        Some(ROOT),
        Some(json!({"title": "d", "key": dk})),
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);

    let e = ok(&sim, Method::GET, "/api/v4/namespaces/root/exists", ROOT, None).await;
    assert_eq!(e, json!({"exists": true, "suggests": ["root1"]}));
    let e = ok(&sim, Method::GET, "/api/v4/namespaces/nobody/exists", ROOT, None).await;
    assert_eq!(e["exists"], false);

    let i = ok(
        &sim,
        Method::PUT,
        &format!("{base}/integrations/emails-on-push"),
        ROOT,
        Some(json!({"recipients": "a@example.com"})),
    )
    .await;
    assert_eq!(
        (i["active"].clone(), i["slug"].clone()),
        (json!(true), json!("emails-on-push"))
    );
    let list = ok(&sim, Method::GET, &format!("{base}/services"), ROOT, None).await;
    assert_eq!(list[0]["slug"], "emails-on-push");

    // Rebase replays the source branch's commits on the moved target.
    for (branch, file) in [("topic", "t.txt"), ("main", "m.txt")] {
        ok(
            &sim,
            Method::POST,
            &format!("{base}/repository/files/{file}"),
            ROOT,
            Some(json!({"branch": branch, "start_branch": "main", "content": file, "commit_message": file})),
        )
        .await;
    }
    let mr = ok(
        &sim,
        Method::POST,
        &format!("{base}/merge_requests"),
        ROOT,
        Some(json!({"source_branch": "topic", "target_branch": "main", "title": "T"})),
    )
    .await;
    let r = call(
        &sim,
        Method::PUT,
        &format!("{base}/merge_requests/{}/rebase", mr["iid"]),
        Some(ROOT),
        None,
    )
    .await;
    assert_eq!(
        (r.status, r.body.clone()),
        (StatusCode::ACCEPTED, json!({"rebase_in_progress": true}))
    );
    let tree = ok(
        &sim,
        Method::GET,
        &format!("{base}/repository/tree?ref=topic"),
        ROOT,
        None,
    )
    .await;
    let mut names: Vec<&str> = tree
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["README.md", "m.txt", "t.txt"]);
}

#[tokio::test]
async fn events_markdown_statistics_and_activities() {
    let sim = start().await;
    let p = ok(
        &sim,
        Method::POST,
        "/api/v4/projects",
        ROOT,
        Some(json!({"name": "ev"})),
    )
    .await;
    ok(
        &sim,
        Method::POST,
        &format!("/api/v4/projects/{}/repository/files/a", p["id"]),
        ROOT,
        Some(json!({"branch": "main", "content": "a", "commit_message": "a"})),
    )
    .await;
    let events = ok(&sim, Method::GET, "/api/v4/events", ROOT, None).await;
    assert!(!events.as_array().unwrap().is_empty());
    let r = call(
        &sim,
        Method::POST,
        "/api/v4/markdown",
        Some(ROOT),
        Some(json!({"text": "a <b>\n\nc"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(
        r.body["html"],
        "<p dir=\"auto\">a &lt;b&gt;</p>\n<p dir=\"auto\">c</p>"
    );
    let r = call(
        &sim,
        Method::POST,
        "/api/v4/markdown",
        Some(ROOT),
        Some(json!({"text": "x", "project": "nobody/nothing"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    let s = ok(&sim, Method::GET, "/api/v4/application/statistics", ROOT, None).await;
    assert_eq!(
        (s["projects"].clone(), s["users"].clone()),
        (json!("1"), json!("1"))
    );
    let a = ok(
        &sim,
        Method::GET,
        "/api/v4/user/activities?from=2019-01-01",
        ROOT,
        None,
    )
    .await;
    assert_eq!(a[0]["username"], "root");
}

#[tokio::test]
async fn subgroups_group_shares_memberships_and_member_filters() {
    let sim = start().await;
    let (bob, _) = user(&sim, "bob").await;
    let g = |name: &str, parent: Option<&Value>| {
        let mut body = json!({"name": name, "path": name});
        if let Some(p) = parent {
            body["parent_id"] = p["id"].clone();
        }
        body
    };
    let top = ok(&sim, Method::POST, "/api/v4/groups", ROOT, Some(g("top", None))).await;
    let mid = ok(
        &sim,
        Method::POST,
        "/api/v4/groups",
        ROOT,
        Some(g("mid", Some(&top))),
    )
    .await;
    let low = ok(
        &sim,
        Method::POST,
        "/api/v4/groups",
        ROOT,
        Some(g("low", Some(&mid))),
    )
    .await;
    let other = ok(&sim, Method::POST, "/api/v4/groups", ROOT, Some(g("other", None))).await;
    let subs = ok(
        &sim,
        Method::GET,
        &format!("/api/v4/groups/{}/subgroups", top["id"]),
        ROOT,
        None,
    )
    .await;
    assert_eq!(subs.as_array().unwrap().len(), 1);
    assert_eq!(subs[0]["id"], mid["id"]);
    let all = ok(
        &sim,
        Method::GET,
        &format!("/api/v4/groups/{}/descendant_groups", top["id"]),
        ROOT,
        None,
    )
    .await;
    assert_eq!(all.as_array().unwrap().len(), 2);
    let listed = ok(
        &sim,
        Method::GET,
        &format!(
            "/api/v4/groups?skip_groups[]={}&skip_groups[]={}",
            mid["id"], low["id"]
        ),
        ROOT,
        None,
    )
    .await;
    let ids: Vec<&Value> = listed.as_array().unwrap().iter().map(|g| &g["id"]).collect();
    assert_eq!(ids, [&other["id"], &top["id"]]);

    let share = format!("/api/v4/groups/{}/share", other["id"]);
    let r = call(
        &sim,
        Method::POST,
        &share,
        Some(ROOT),
        Some(json!({"group_id": top["id"], "group_access": 30})),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    assert_eq!(r.body["shared_with_groups"][0]["group_id"], top["id"]);
    assert_eq!(r.body["shared_with_groups"][0]["group_access_level"], 30);
    let r = call(
        &sim,
        Method::DELETE,
        &format!("{share}/{}", top["id"]),
        Some(ROOT),
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);
    let shown = ok(
        &sim,
        Method::GET,
        &format!("/api/v4/groups/{}", other["id"]),
        ROOT,
        None,
    )
    .await;
    assert_eq!(shown["shared_with_groups"], json!([]));

    ok(
        &sim,
        Method::POST,
        &format!("/api/v4/groups/{}/members", top["id"]),
        ROOT,
        Some(json!({"user_id": bob, "access_level": 50})),
    )
    .await;
    let m = ok(
        &sim,
        Method::GET,
        &format!("/api/v4/users/{bob}/memberships"),
        ROOT,
        None,
    )
    .await;
    assert_eq!(
        m,
        json!([{"source_id": top["id"], "source_name": "top", "source_type": "Namespace", "access_level": 50}])
    );
    let m = ok(
        &sim,
        Method::GET,
        &format!("/api/v4/users/{bob}/memberships?type=Project"),
        ROOT,
        None,
    )
    .await;
    assert_eq!(m, json!([]));
    let r = call(
        &sim,
        Method::GET,
        &format!("/api/v4/users/{bob}/memberships?type=Invalid"),
        Some(ROOT),
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    let members = ok(
        &sim,
        Method::GET,
        &format!(
            "/api/v4/groups/{}/members?user_ids[]={bob}&user_ids[]=99999",
            top["id"]
        ),
        ROOT,
        None,
    )
    .await;
    assert_eq!(members.as_array().unwrap().len(), 1);
    assert_eq!(members[0]["id"], bob);
}

#[tokio::test]
async fn projects_move_between_namespaces_list_their_groups_and_users_set_a_status() {
    let sim = start().await;
    let top = ok(
        &sim,
        Method::POST,
        "/api/v4/groups",
        ROOT,
        Some(json!({"name": "top", "path": "top"})),
    )
    .await;
    let sub = ok(
        &sim,
        Method::POST,
        "/api/v4/groups",
        ROOT,
        Some(json!({"name": "sub", "path": "sub", "parent_id": top["id"]})),
    )
    .await;
    let p = ok(
        &sim,
        Method::POST,
        "/api/v4/projects",
        ROOT,
        Some(json!({"name": "mover"})),
    )
    .await;
    let base = format!("/api/v4/projects/{}", p["id"]);
    assert_eq!(
        ok(&sim, Method::GET, &format!("{base}/groups"), ROOT, None).await,
        json!([])
    );
    let moved = ok(
        &sim,
        Method::PUT,
        &format!("{base}/transfer"),
        ROOT,
        Some(json!({"namespace": sub["id"]})),
    )
    .await;
    assert_eq!(moved["path_with_namespace"], "top/sub/mover");
    let groups = ok(&sim, Method::GET, &format!("{base}/groups"), ROOT, None).await;
    let mut ids: Vec<u64> = groups
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["id"].as_u64().unwrap())
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, [top["id"].as_u64().unwrap(), sub["id"].as_u64().unwrap()]);
    let back = ok(
        &sim,
        Method::PUT,
        &format!("{base}/transfer"),
        ROOT,
        Some(json!({"namespace": "root"})),
    )
    .await;
    assert_eq!(back["namespace"]["path"], "root");
    let r = call(
        &sim,
        Method::PUT,
        &format!("{base}/transfer"),
        Some(ROOT),
        Some(json!({"namespace": "nowhere"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);

    let s = ok(&sim, Method::GET, "/api/v4/user/status", ROOT, None).await;
    assert_eq!(
        (s["emoji"].clone(), s["message"].clone()),
        (Value::Null, Value::Null)
    );
    ok(
        &sim,
        Method::PUT,
        "/api/v4/user/status",
        ROOT,
        Some(json!({"emoji": "thumbsup", "message": "a <b>"})),
    )
    .await;
    let s = ok(&sim, Method::GET, "/api/v4/users/root/status", ROOT, None).await;
    assert_eq!(
        (
            s["emoji"].clone(),
            s["message"].clone(),
            s["message_html"].clone()
        ),
        (json!("thumbsup"), json!("a <b>"), json!("a &lt;b&gt;"))
    );
}

#[tokio::test]
async fn discussions_thread_notes_and_resolve_on_merge_requests() {
    let sim = start().await;
    let p = ok(
        &sim,
        Method::POST,
        "/api/v4/projects",
        ROOT,
        Some(json!({"name": "d", "initialize_with_readme": true})),
    )
    .await;
    let base = format!("/api/v4/projects/{}", p["id"]);
    let issue = ok(
        &sim,
        Method::POST,
        &format!("{base}/issues"),
        ROOT,
        Some(json!({"title": "i"})),
    )
    .await;
    let issue_base = format!("{base}/issues/{}", issue["iid"]);
    ok(
        &sim,
        Method::POST,
        &format!("{issue_base}/notes"),
        ROOT,
        Some(json!({"body": "lone"})),
    )
    .await;
    let d = ok(
        &sim,
        Method::POST,
        &format!("{issue_base}/discussions"),
        ROOT,
        Some(json!({"body": "start"})),
    )
    .await;
    assert_eq!(d["individual_note"], false);
    assert_eq!(d["notes"][0]["type"], "DiscussionNote");
    let did = d["id"].as_str().unwrap().to_string();
    let n = ok(
        &sim,
        Method::POST,
        &format!("{issue_base}/discussions/{did}/notes"),
        ROOT,
        Some(json!({"body": "reply"})),
    )
    .await;
    let note_path = format!("{issue_base}/discussions/{did}/notes/{}", n["id"]);
    ok(
        &sim,
        Method::PUT,
        &note_path,
        ROOT,
        Some(json!({"body": "edited"})),
    )
    .await;
    let list = ok(
        &sim,
        Method::GET,
        &format!("{issue_base}/discussions"),
        ROOT,
        None,
    )
    .await;
    assert_eq!(list.as_array().unwrap().len(), 2);
    assert_eq!(list[0]["individual_note"], true);
    assert_eq!(list[1]["notes"][1]["body"], "edited");
    // The thread's notes are notes of the issue too.
    let notes = ok(&sim, Method::GET, &format!("{issue_base}/notes"), ROOT, None).await;
    assert_eq!(notes.as_array().unwrap().len(), 3);
    let r = call(
        &sim,
        Method::PUT,
        &note_path,
        Some(ROOT),
        Some(json!({"resolved": true})),
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    let r = call(&sim, Method::DELETE, &note_path, Some(ROOT), None).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);

    ok(
        &sim,
        Method::POST,
        &format!("{base}/repository/branches"),
        ROOT,
        Some(json!({"branch": "f", "ref": "main"})),
    )
    .await;
    let mr = ok(
        &sim,
        Method::POST,
        &format!("{base}/merge_requests"),
        ROOT,
        Some(json!({"source_branch": "f", "target_branch": "main", "title": "m"})),
    )
    .await;
    let mr_base = format!("{base}/merge_requests/{}", mr["iid"]);
    let d = ok(
        &sim,
        Method::POST,
        &format!("{mr_base}/discussions"),
        ROOT,
        Some(json!({"body": "fix this"})),
    )
    .await;
    assert_eq!(
        (
            d["notes"][0]["resolvable"].clone(),
            d["notes"][0]["resolved"].clone()
        ),
        (json!(true), json!(false))
    );
    let did = d["id"].as_str().unwrap();
    let note = ok(
        &sim,
        Method::PUT,
        &format!("{mr_base}/discussions/{did}/notes/{}", d["notes"][0]["id"]),
        ROOT,
        Some(json!({"resolved": true})),
    )
    .await;
    assert_eq!(
        (note["resolved"].clone(), note["resolved_by"]["username"].clone()),
        (json!(true), json!("root"))
    );
    let thread = ok(
        &sim,
        Method::PUT,
        &format!("{mr_base}/discussions/{did}"),
        ROOT,
        Some(json!({"resolved": false})),
    )
    .await;
    assert_eq!(thread["notes"][0]["resolved"], false);
    let r = call(
        &sim,
        Method::GET,
        &format!("{mr_base}/discussions/{}", "0".repeat(40)),
        Some(ROOT),
        None,
    )
    .await;
    assert_eq!(r.body, json!({"message": "404 Discussion Not Found"}));
}

#[tokio::test]
async fn releases_live_on_tags_with_their_asset_links() {
    let sim = start().await;
    let p = ok(
        &sim,
        Method::POST,
        "/api/v4/projects",
        ROOT,
        Some(json!({"name": "rel", "initialize_with_readme": true})),
    )
    .await;
    let base = format!("/api/v4/projects/{}", p["id"]);
    let r = ok(
        &sim,
        Method::POST,
        &format!("{base}/releases"),
        ROOT,
        Some(json!({"name": "Demo", "tag_name": "v1.0", "description": "notes", "ref": "main"})),
    )
    .await;
    assert_eq!(
        (r["name"].clone(), r["tag_name"].clone(), r["description"].clone()),
        (json!("Demo"), json!("v1.0"), json!("notes"))
    );
    // The tag was made from ref and carries the release.
    let tag = ok(
        &sim,
        Method::GET,
        &format!("{base}/repository/tags/v1.0"),
        ROOT,
        None,
    )
    .await;
    assert_eq!(tag["release"]["description"], "notes");
    let again = call(
        &sim,
        Method::POST,
        &format!("{base}/releases"),
        Some(ROOT),
        Some(json!({"tag_name": "v1.0", "ref": "main"})),
    )
    .await;
    assert_eq!(again.status, StatusCode::CONFLICT);
    let unnamed = ok(
        &sim,
        Method::POST,
        &format!("{base}/releases"),
        ROOT,
        Some(json!({"tag_name": "v2.0", "description": "two", "ref": "main"})),
    )
    .await;
    assert_eq!(unnamed["name"], "v2.0");
    assert_eq!(
        ok(&sim, Method::GET, &format!("{base}/releases"), ROOT, None)
            .await
            .as_array()
            .unwrap()
            .len(),
        2
    );
    let u = ok(
        &sim,
        Method::PUT,
        &format!("{base}/releases/v1.0"),
        ROOT,
        Some(json!({"description": "better"})),
    )
    .await;
    assert_eq!(u["description"], "better");

    let l = ok(
        &sim,
        Method::POST,
        &format!("{base}/releases/v1.0/assets/links"),
        ROOT,
        Some(json!({"name": "bin", "url": "https://example.com/bin"})),
    )
    .await;
    assert_eq!(l["link_type"], "other");
    let shown = ok(&sim, Method::GET, &format!("{base}/releases/v1.0"), ROOT, None).await;
    assert_eq!(shown["assets"]["links"][0]["url"], "https://example.com/bin");
    let r = call(
        &sim,
        Method::DELETE,
        &format!("{base}/releases/v1.0/assets/links/{}", l["id"]),
        Some(ROOT),
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::OK);

    let r = call(
        &sim,
        Method::DELETE,
        &format!("{base}/releases/v2.0"),
        Some(ROOT),
        None,
    )
    .await;
    assert_eq!(
        (r.status, r.body["tag_name"].clone()),
        (StatusCode::OK, json!("v2.0"))
    );
    let r = call(
        &sim,
        Method::GET,
        &format!("{base}/releases/v2.0"),
        Some(ROOT),
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    let tag = ok(
        &sim,
        Method::GET,
        &format!("{base}/repository/tags/v2.0"),
        ROOT,
        None,
    )
    .await;
    assert_eq!(tag["release"], Value::Null);
}

#[tokio::test]
async fn parameter_errors_answer_error_and_the_rest_message() {
    let sim = start().await;
    let p = ok(
        &sim,
        Method::POST,
        "/api/v4/projects",
        ROOT,
        Some(json!({"name": "errs"})),
    )
    .await;
    let base = format!("/api/v4/projects/{}", p["id"]);
    let r = call(
        &sim,
        Method::POST,
        &format!("{base}/issues"),
        Some(ROOT),
        Some(json!({})),
    )
    .await;
    assert_eq!(
        (r.status, r.body),
        (StatusCode::BAD_REQUEST, json!({"error": "title is missing"}))
    );
    let r = call(
        &sim,
        Method::POST,
        &format!("{base}/issues"),
        Some(ROOT),
        Some(json!({"title": " "})),
    )
    .await;
    assert_eq!(
        (r.status, r.body),
        (
            StatusCode::BAD_REQUEST,
            json!({"message": {"title": ["can't be blank"]}})
        )
    );
    let r = call(
        &sim,
        Method::GET,
        "/api/v4/projects?visibility=secret",
        Some(ROOT),
        None,
    )
    .await;
    assert_eq!(
        (r.status, r.body),
        (StatusCode::BAD_REQUEST, json!({"error": "visibility is invalid"}))
    );
    ok(
        &sim,
        Method::POST,
        &format!("{base}/labels"),
        ROOT,
        Some(json!({"name": "l", "color": "#000000"})),
    )
    .await;
    let r = call(
        &sim,
        Method::PUT,
        &format!("{base}/labels/l"),
        Some(ROOT),
        Some(json!({})),
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(r.body["error"]
        .as_str()
        .unwrap()
        .ends_with("at least one parameter must be provided"));
    let r = call(&sim, Method::GET, &format!("{base}/issues/999"), Some(ROOT), None).await;
    assert_eq!(
        (r.status, r.body),
        (StatusCode::NOT_FOUND, json!({"message": "404 Issue Not Found"}))
    );
}

#[tokio::test]
async fn administrators_look_keys_up_by_id_or_fingerprint() {
    let sim = start().await;
    let (bob, _) = user(&sim, "bob").await;
    // The key blob is "ssh-rsa" framed as in a real key; its SHA-256 fingerprint is computed independently.
    let blob = "AAAAB3NzaC1yc2E=";
    let key = format!("ssh-rsa {blob} bob@host");
    let k = ok(
        &sim,
        Method::POST,
        &format!("/api/v4/users/{bob}/keys"),
        ROOT,
        Some(json!({"title": "k", "key": key})),
    )
    .await;
    let by_id = ok(
        &sim,
        Method::GET,
        &format!("/api/v4/keys/{}", k["id"]),
        ROOT,
        None,
    )
    .await;
    assert_eq!(by_id["user"]["username"], "bob");
    let fp = by_id["fingerprint_sha256"].as_str().unwrap().to_string();
    assert_eq!(fp, "SHA256:zBURJC4mpQ6j/DLIDJakTQANmGP4cn9OftElBH5WBrg");
    let by_fp = ok(
        &sim,
        Method::GET,
        &format!(
            "/api/v4/keys?fingerprint={}",
            fp.replace(':', "%3A").replace('/', "%2F").replace('+', "%2B")
        ),
        ROOT,
        None,
    )
    .await;
    assert_eq!(by_fp["id"], k["id"]);
    let (_, bob_token) = user(&sim, "carol").await;
    let r = call(
        &sim,
        Method::GET,
        &format!("/api/v4/keys/{}", k["id"]),
        Some(&bob_token),
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn protected_branch_rules_match_patterns_and_govern_pushes() {
    let sim = start().await;
    let (dev, dev_token) = user(&sim, "dev").await;
    let p = ok(
        &sim,
        Method::POST,
        "/api/v4/projects",
        ROOT,
        Some(json!({"name": "pb", "initialize_with_readme": true})),
    )
    .await;
    let base = format!("/api/v4/projects/{}", p["id"]);
    ok(
        &sim,
        Method::POST,
        &format!("{base}/members"),
        ROOT,
        Some(json!({"user_id": dev, "access_level": 30})),
    )
    .await;
    ok(
        &sim,
        Method::POST,
        &format!("{base}/repository/branches"),
        ROOT,
        Some(json!({"branch": "1-stable", "ref": "main"})),
    )
    .await;
    let rule = ok(
        &sim,
        Method::POST,
        &format!("{base}/protected_branches"),
        ROOT,
        Some(json!({"name": "*-stable", "allow_force_push": false})),
    )
    .await;
    assert_eq!(rule["push_access_levels"][0]["access_level"], 40);
    let b = ok(
        &sim,
        Method::GET,
        &format!("{base}/repository/branches/1-stable"),
        ROOT,
        None,
    )
    .await;
    assert_eq!(b["protected"], true);
    let write = json!({"branch": "1-stable", "content": "x", "commit_message": "x"});
    let r = call(
        &sim,
        Method::POST,
        &format!("{base}/repository/files/x.txt"),
        Some(&dev_token),
        Some(write.clone()),
    )
    .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    let r = call(
        &sim,
        Method::POST,
        &format!("{base}/protected_branches"),
        Some(ROOT),
        Some(json!({"name": "*-stable"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::CONFLICT);

    let rule_path = format!("{base}/protected_branches/%2A-stable");
    let u = ok(
        &sim,
        Method::PATCH,
        &rule_path,
        ROOT,
        Some(json!({"allow_force_push": true, "push_access_level": 30})),
    )
    .await;
    assert_eq!(
        (
            u["allow_force_push"].clone(),
            u["push_access_levels"][0]["access_level"].clone()
        ),
        (json!(true), json!(30))
    );
    let r = call(
        &sim,
        Method::POST,
        &format!("{base}/repository/files/x.txt"),
        Some(&dev_token),
        Some(write),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    // main is protected by its first commit and listed as such.
    let list = ok(
        &sim,
        Method::GET,
        &format!("{base}/protected_branches"),
        ROOT,
        None,
    )
    .await;
    let names: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["*-stable", "main"]);
    let r = call(&sim, Method::DELETE, &rule_path, Some(ROOT), None).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);
    let b = ok(
        &sim,
        Method::GET,
        &format!("{base}/repository/branches/1-stable"),
        ROOT,
        None,
    )
    .await;
    assert_eq!(b["protected"], false);
}

#[tokio::test]
async fn groups_and_the_instance_have_ci_variables_too() {
    let sim = start().await;
    let (_, dev_token) = user(&sim, "dev").await;
    let g = ok(
        &sim,
        Method::POST,
        "/api/v4/groups",
        ROOT,
        Some(json!({"name": "vg", "path": "vg"})),
    )
    .await;
    for base in [
        format!("/api/v4/groups/{}/variables", g["id"]),
        "/api/v4/admin/ci/variables".to_string(),
    ] {
        let v = ok(
            &sim,
            Method::POST,
            &base,
            ROOT,
            Some(json!({"key": "K", "value": "v1"})),
        )
        .await;
        assert_eq!(v["value"], "v1");
        let r = call(
            &sim,
            Method::POST,
            &base,
            Some(ROOT),
            Some(json!({"key": "K", "value": "v1"})),
        )
        .await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST);
        ok(
            &sim,
            Method::PUT,
            &format!("{base}/K"),
            ROOT,
            Some(json!({"value": "v2"})),
        )
        .await;
        assert_eq!(
            ok(&sim, Method::GET, &format!("{base}/K"), ROOT, None).await["value"],
            "v2"
        );
        assert_eq!(
            ok(&sim, Method::GET, &base, ROOT, None)
                .await
                .as_array()
                .unwrap()
                .len(),
            1
        );
        // A private group is not even visible to a stranger; the instance's variables are for administrators.
        let r = call(&sim, Method::GET, &base, Some(&dev_token), None).await;
        let refused = if base.starts_with("/api/v4/groups") {
            StatusCode::NOT_FOUND
        } else {
            StatusCode::FORBIDDEN
        };
        assert_eq!(r.status, refused);
        let r = call(&sim, Method::DELETE, &format!("{base}/K"), Some(ROOT), None).await;
        assert_eq!(r.status, StatusCode::NO_CONTENT);
    }
    // A project's variables are its own.
    let p = ok(
        &sim,
        Method::POST,
        "/api/v4/projects",
        ROOT,
        Some(json!({"name": "vp"})),
    )
    .await;
    ok(
        &sim,
        Method::POST,
        "/api/v4/admin/ci/variables",
        ROOT,
        Some(json!({"key": "I", "value": "i"})),
    )
    .await;
    let list = ok(
        &sim,
        Method::GET,
        &format!("/api/v4/projects/{}/variables", p["id"]),
        ROOT,
        None,
    )
    .await;
    assert_eq!(list, json!([]));
}

#[tokio::test]
async fn a_ci_file_on_the_source_branch_starts_a_merge_request_pipeline_that_holds_auto_merge() {
    let sim = start().await;
    let p = ok(
        &sim,
        Method::POST,
        "/api/v4/projects",
        ROOT,
        Some(json!({"name": "mrci", "initialize_with_readme": true})),
    )
    .await;
    let pid = p["id"].as_u64().unwrap();
    let base = format!("/api/v4/projects/{pid}");
    let config = "stages:\n  - test\ntest:\n  rules:\n    - if: '$CI_PIPELINE_SOURCE == \"merge_request_event\"'\n  script:\n    - sleep 24h\n";
    ok(
        &sim,
        Method::POST,
        &format!("{base}/repository/files/.svc-ci.yml"),
        ROOT,
        Some(json!({"branch": "ci", "start_branch": "main", "content": config, "commit_message": "CI"})),
    )
    .await;
    // Without the file, no pipeline.
    ok(
        &sim,
        Method::POST,
        &format!("{base}/repository/files/plain.txt"),
        ROOT,
        Some(json!({"branch": "plain", "start_branch": "main", "content": "x", "commit_message": "plain"})),
    )
    .await;
    let open = |source: &str| json!({"source_branch": source, "target_branch": "main", "title": source});
    let plain = ok(
        &sim,
        Method::POST,
        &format!("{base}/merge_requests"),
        ROOT,
        Some(open("plain")),
    )
    .await;
    assert_eq!(plain["pipeline"], Value::Null);
    assert_eq!(plain["head_pipeline"], Value::Null);

    let m = ok(
        &sim,
        Method::POST,
        &format!("{base}/merge_requests"),
        ROOT,
        Some(open("ci")),
    )
    .await;
    let iid = m["iid"].as_u64().unwrap();
    let pipelines = ok(&sim, Method::GET, &format!("{base}/pipelines"), ROOT, None).await;
    let pipelines = pipelines.as_array().unwrap();
    assert_eq!(pipelines.len(), 1);
    assert_eq!(pipelines[0]["source"], "merge_request_event");
    assert_eq!(pipelines[0]["status"], "running");
    assert_eq!(pipelines[0]["sha"], m["sha"]);
    assert_eq!(pipelines[0]["ref"], format!("refs/merge-requests/{iid}/head"));
    assert_eq!(m["head_pipeline"]["id"], pipelines[0]["id"]);
    assert_eq!(m["pipeline"]["status"], "running");
    let jobs = ok(
        &sim,
        Method::GET,
        &format!("{base}/pipelines/{}/jobs", pipelines[0]["id"]),
        ROOT,
        None,
    )
    .await;
    let names: Vec<&str> = jobs
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["test"]);
    assert_eq!(jobs[0]["status"], "running");

    // Auto-merge is set, not merged, while the pipeline runs.
    let merged = ok(
        &sim,
        Method::PUT,
        &format!("{base}/merge_requests/{iid}/merge"),
        ROOT,
        Some(json!({"merge_when_pipeline_succeeds": true})),
    )
    .await;
    assert_eq!(merged["state"], "opened");
    assert_eq!(merged["merge_when_pipeline_succeeds"], true);
    assert_eq!(merged["merged_at"], Value::Null);

    // Cancelling answers the auto-merge service's result, 201.
    let cancel = format!("{base}/merge_requests/{iid}/cancel_merge_when_pipeline_succeeds");
    let r = call(&sim, Method::POST, &cancel, Some(ROOT), None).await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(r.body, json!({"status": "success"}));
    let shown = ok(
        &sim,
        Method::GET,
        &format!("{base}/merge_requests/{iid}"),
        ROOT,
        None,
    )
    .await;
    assert_eq!(shown["merge_when_pipeline_succeeds"], false);
    let r = call(&sim, Method::POST, &cancel, Some(ROOT), None).await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(r.body["status"], "error");
    assert_eq!(r.body["http_status"], 406);

    // A guest who is not the author may not cancel.
    let (guest, guest_token) = user(&sim, "ciguest").await;
    ok(
        &sim,
        Method::POST,
        &format!("{base}/members"),
        ROOT,
        Some(json!({"user_id": guest, "access_level": 10})),
    )
    .await;
    // In this private project a Guest cannot read merge requests at all (V4's `find_merge_request_with_access`
    // authorizes `read_merge_request` first): 403. Where they can read them, cancelling is `unauthorized!`.
    let r = call(&sim, Method::POST, &cancel, Some(&guest_token), None).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    ok(
        &sim,
        Method::PUT,
        &base,
        ROOT,
        Some(json!({"visibility": "public"})),
    )
    .await;
    let r = call(&sim, Method::POST, &cancel, Some(&guest_token), None).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);

    // A new commit on the source branch starts a pipeline for the new head.
    ok(
        &sim,
        Method::POST,
        &format!("{base}/repository/files/more.txt"),
        ROOT,
        Some(json!({"branch": "ci", "content": "y", "commit_message": "more"})),
    )
    .await;
    let shown = ok(
        &sim,
        Method::GET,
        &format!("{base}/merge_requests/{iid}"),
        ROOT,
        None,
    )
    .await;
    let pipelines = ok(&sim, Method::GET, &format!("{base}/pipelines"), ROOT, None).await;
    assert_eq!(pipelines.as_array().unwrap().len(), 2);
    assert_eq!(shown["head_pipeline"]["sha"], shown["sha"]);
    assert_eq!(shown["head_pipeline"]["id"], pipelines[0]["id"]);
}

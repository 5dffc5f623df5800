//! End-to-end tests of the records a real V4 server keeps as a side effect of other requests: system notes on
//! state changes, project events, and an access request settled by adding the requester as a member. Each test
//! names the V4 code or spec it follows.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use http::{Method, StatusCode};
use serde_json::{json, Value};

mod common;
use common::*;

/// The notes of an issue or merge request, oldest first: (body, system, author username).
async fn notes(sim: &svc_sim::SimHandle, path: &str) -> Vec<(String, bool, String)> {
    let list = ok(sim, Method::GET, &format!("{path}/notes?sort=asc"), ROOT, None).await;
    list.as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["body"].as_str().unwrap().to_string(),
                n["system"].as_bool().unwrap(),
                n["author"]["username"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The events at `path` (with its query), oldest first.
async fn events(sim: &svc_sim::SimHandle, path: &str) -> Vec<Value> {
    let sep = if path.contains('?') { '&' } else { '?' };
    let list = ok(
        sim,
        Method::GET,
        &format!("{path}{sep}sort=asc&per_page=100"),
        ROOT,
        None,
    )
    .await;
    list.as_array().unwrap().clone()
}

fn names(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| {
            format!(
                "{} {}",
                e["action_name"].as_str().unwrap(),
                e["target_type"].as_str().unwrap_or("-")
            )
        })
        .collect()
}

/// V4 `app/services/issues/close_service.rb` and `reopen_service.rb` write `SystemNoteService.change_status`,
/// whose text (`app/services/system_notes/issuables_service.rb`, `change_status`: "closed", "reopened") is the
/// new status; `SystemNoteService`'s notes are `system: true` and `lib/api/notes.rb` lists them with the user's
/// notes (`spec/requests/api/notes_spec.rb` reads `system` from `Entities::Note`). They are not user notes:
/// `user_notes_count` stays 0, and they record no "commented on" event (only `Notes::CreateService` does).
#[tokio::test]
async fn closing_and_reopening_an_issue_adds_system_notes_the_notes_api_lists() {
    let sim = start().await;
    let pid = project_id(&sim, ROOT, "notes", Some("public")).await;
    let p = format!("/api/v4/projects/{pid}");
    ok(
        &sim,
        Method::POST,
        &format!("{p}/issues"),
        ROOT,
        Some(json!({"title": "bug"})),
    )
    .await;
    let one = format!("{p}/issues/1");
    ok(
        &sim,
        Method::POST,
        &format!("{one}/notes"),
        ROOT,
        Some(json!({"body": "looking"})),
    )
    .await;
    let closed = ok(
        &sim,
        Method::PUT,
        &one,
        ROOT,
        Some(json!({"state_event": "close"})),
    )
    .await;
    assert_eq!(closed["state"], "closed");
    // Closing again changes nothing and writes nothing.
    ok(
        &sim,
        Method::PUT,
        &one,
        ROOT,
        Some(json!({"state_event": "close"})),
    )
    .await;
    ok(
        &sim,
        Method::PUT,
        &one,
        ROOT,
        Some(json!({"state_event": "reopen"})),
    )
    .await;
    let root = "root".to_string();
    assert_eq!(
        notes(&sim, &one).await,
        vec![
            ("looking".to_string(), false, root.clone()),
            ("closed".to_string(), true, root.clone()),
            ("reopened".to_string(), true, root.clone()),
        ]
    );
    // The default order is newest first.
    let newest = ok(&sim, Method::GET, &format!("{one}/notes"), ROOT, None).await;
    assert_eq!(newest[0]["body"], "reopened");
    assert_eq!(newest[0]["noteable_type"], "Issue");
    assert_eq!(newest[0]["noteable_iid"], 1);
    let issue = ok(&sim, Method::GET, &one, ROOT, None).await;
    assert_eq!(issue["user_notes_count"], 1);
    let comments = events(&sim, &format!("{p}/events?action=commented")).await;
    assert_eq!(comments.len(), 1, "{comments:?}");
}

/// V4 `app/services/merge_requests/close_service.rb`, `reopen_service.rb` and `post_merge_service.rb` write
/// `SystemNoteService.change_status` with the new state: "closed", "reopened", "merged". Merging into the default
/// branch first closes the issues the description closes (`PostMergeService#close_issues` →
/// `Issues::CloseService` with the merge request as `closed_via`), whose note is "closed via merge request !1"
/// (`change_status`: `body << " via #{source.gfm_reference(project)}"`; `Mentionable#gfm_reference`: "merge
/// request !1").
#[tokio::test]
async fn closing_reopening_and_merging_a_merge_request_add_system_notes() {
    let sim = start().await;
    let pid = project_id(&sim, ROOT, "mr-notes", Some("public")).await;
    let p = format!("/api/v4/projects/{pid}");
    ok(
        &sim,
        Method::POST,
        &format!("{p}/issues"),
        ROOT,
        Some(json!({"title": "bug"})),
    )
    .await;
    ok(
        &sim,
        Method::POST,
        &format!("{p}/repository/files/a.txt"),
        ROOT,
        Some(json!({"branch": "fix", "start_branch": "main", "content": "a", "commit_message": "fix"})),
    )
    .await;
    ok(
        &sim,
        Method::POST,
        &format!("{p}/merge_requests"),
        ROOT,
        Some(json!({"title": "Fix", "source_branch": "fix", "target_branch": "main", "description": "Closes #1"})),
    )
    .await;
    let one = format!("{p}/merge_requests/1");
    ok(
        &sim,
        Method::PUT,
        &one,
        ROOT,
        Some(json!({"state_event": "close"})),
    )
    .await;
    ok(
        &sim,
        Method::PUT,
        &one,
        ROOT,
        Some(json!({"state_event": "reopen"})),
    )
    .await;
    let merged = ok(&sim, Method::PUT, &format!("{one}/merge"), ROOT, None).await;
    assert_eq!(merged["state"], "merged");
    let bodies: Vec<(String, bool)> = notes(&sim, &one)
        .await
        .into_iter()
        .map(|(b, s, _)| (b, s))
        .collect();
    assert_eq!(
        bodies,
        vec![
            ("closed".to_string(), true),
            ("reopened".to_string(), true),
            ("merged".to_string(), true),
        ]
    );
    let issue = ok(&sim, Method::GET, &format!("{p}/issues/1"), ROOT, None).await;
    assert_eq!(issue["state"], "closed");
    let bodies: Vec<(String, bool)> = notes(&sim, &format!("{p}/issues/1"))
        .await
        .into_iter()
        .map(|(b, s, _)| (b, s))
        .collect();
    assert_eq!(bodies, vec![("closed via merge request !1".to_string(), true)]);
    let mr = ok(&sim, Method::GET, &one, ROOT, None).await;
    assert_eq!(mr["user_notes_count"], 0);
}

/// V4 `app/services/event_create_service.rb` records `create_project` (`Projects::CreateService`),
/// `join_project` (`ProjectMember#post_create_hook`, by the new member), `leave_project`
/// (`ProjectMember#post_destroy_hook`), `open_issue`/`close_issue`/`reopen_issue`, `open_mr`/`close_mr`/
/// `reopen_mr`/`merge_mr`, and `push` (`GitPushService`, for every change of a branch: commits made through the
/// files and commits APIs, a merge's commit and source branch removal, a branch created or deleted). `app/models/event.rb` `action_name` shows them as "created", "joined", "left", "opened", "closed",
/// "opened" (a reopening), "accepted" (a merge), "pushed new" and "pushed to"; `lib/api/entities/event.rb` gives
/// `target_type`, `target_iid`, `target_title` and `author_username`; `EventsFinder#by_action` filters on the
/// action (`Event::ACTIONS`' keys: `reopened`, `merged`, `joined`, …). `spec/requests/api/events_spec.rb` reads
/// them from `GET /projects/:id/events` and `GET /users/:id/events`.
#[tokio::test]
async fn project_events_record_creation_members_issue_and_merge_request_states_and_pushes() {
    let sim = start().await;
    let pid = project_id(&sim, ROOT, "events", Some("public")).await;
    let p = format!("/api/v4/projects/{pid}");
    let (dev, dev_token) = sim.create_user("dev", false);
    ok(
        &sim,
        Method::POST,
        &format!("{p}/members"),
        ROOT,
        Some(json!({"user_id": dev, "access_level": 30})),
    )
    .await;
    let (leaver, _) = sim.create_user("leaver", false);
    ok(
        &sim,
        Method::POST,
        &format!("{p}/members"),
        ROOT,
        Some(json!({"user_id": leaver, "access_level": 20})),
    )
    .await;
    ok(&sim, Method::DELETE, &format!("{p}/members/{leaver}"), ROOT, None).await;
    ok(
        &sim,
        Method::POST,
        &format!("{p}/issues"),
        &dev_token,
        Some(json!({"title": "bug"})),
    )
    .await;
    ok(
        &sim,
        Method::PUT,
        &format!("{p}/issues/1"),
        ROOT,
        Some(json!({"state_event": "close"})),
    )
    .await;
    ok(
        &sim,
        Method::PUT,
        &format!("{p}/issues/1"),
        ROOT,
        Some(json!({"state_event": "reopen"})),
    )
    .await;
    ok(
        &sim,
        Method::POST,
        &format!("{p}/repository/files/a.txt"),
        &dev_token,
        Some(json!({"branch": "fix", "start_branch": "main", "content": "a", "commit_message": "add a"})),
    )
    .await;
    ok(
        &sim,
        Method::POST,
        &format!("{p}/repository/commits"),
        &dev_token,
        Some(json!({"branch": "fix", "commit_message": "add b",
            "actions": [{"action": "create", "file_path": "b.txt", "content": "b"}]})),
    )
    .await;
    ok(
        &sim,
        Method::POST,
        &format!("{p}/merge_requests"),
        &dev_token,
        Some(json!({"title": "Fix", "source_branch": "fix", "target_branch": "main"})),
    )
    .await;
    let mr = format!("{p}/merge_requests/1");
    ok(
        &sim,
        Method::PUT,
        &mr,
        ROOT,
        Some(json!({"state_event": "close"})),
    )
    .await;
    ok(
        &sim,
        Method::PUT,
        &mr,
        ROOT,
        Some(json!({"state_event": "reopen"})),
    )
    .await;
    ok(
        &sim,
        Method::PUT,
        &format!("{mr}/merge"),
        ROOT,
        Some(json!({"should_remove_source_branch": true})),
    )
    .await;
    ok(
        &sim,
        Method::POST,
        &format!("{p}/repository/branches?branch=tmp&ref=main"),
        ROOT,
        None,
    )
    .await;
    ok(
        &sim,
        Method::DELETE,
        &format!("{p}/repository/branches/tmp"),
        ROOT,
        None,
    )
    .await;

    let all = events(&sim, &format!("{p}/events")).await;
    assert_eq!(
        names(&all),
        vec![
            "created -",
            "joined -",
            "joined -",
            "left -",
            "opened Issue",
            "closed Issue",
            "opened Issue",
            "pushed new -",
            "pushed to -",
            "opened MergeRequest",
            "closed MergeRequest",
            "opened MergeRequest",
            "accepted MergeRequest",
            "pushed to -",
            "deleted -",
            "pushed new -",
            "deleted -",
        ]
    );
    assert_eq!(all[0]["author_username"], "root");
    assert_eq!(all[0]["target_id"], Value::Null);
    assert_eq!(all[1]["author_username"], "dev");
    assert_eq!(all[1]["author_id"], dev);
    assert_eq!(all[3]["author_id"], leaver);
    let closed = &all[5];
    assert_eq!(closed["target_iid"], 1);
    assert_eq!(closed["target_title"], "bug");
    assert_eq!(closed["author_username"], "root");
    assert_eq!(all[7]["push_data"]["action"], "created");
    assert_eq!(all[7]["push_data"]["ref"], "fix");
    assert_eq!(all[7]["push_data"]["commit_count"], 1);
    assert_eq!(all[8]["push_data"]["action"], "pushed");
    assert_eq!(all[8]["push_data"]["commit_count"], 1);
    assert_eq!(all[8]["push_data"]["commit_title"], "add b");
    assert_eq!(all[12]["target_title"], "Fix");
    assert_eq!(all[13]["push_data"]["ref"], "main");
    assert_eq!(
        all[13]["push_data"]["commit_title"],
        "Merge branch 'fix' into 'main'"
    );
    assert_eq!(all[14]["push_data"]["ref"], "fix");
    assert_eq!(all[14]["push_data"]["action"], "removed");
    assert_eq!(all[15]["push_data"]["ref"], "tmp");
    assert_eq!(all[15]["push_data"]["commit_count"], 0);
    assert_eq!(all[16]["push_data"]["ref"], "tmp");
    assert_eq!(all[16]["push_data"]["commit_to"], Value::Null);

    let reopened = events(&sim, &format!("{p}/events?action=reopened")).await;
    assert_eq!(names(&reopened), vec!["opened Issue", "opened MergeRequest"]);
    let merged = events(&sim, &format!("{p}/events?action=merged")).await;
    assert_eq!(names(&merged), vec!["accepted MergeRequest"]);
    let created = events(&sim, &format!("{p}/events?action=created")).await;
    assert_eq!(
        names(&created),
        vec!["created -", "opened Issue", "opened MergeRequest"]
    );
    let closed_issues = events(&sim, &format!("{p}/events?action=closed&target_type=issue")).await;
    assert_eq!(names(&closed_issues), vec!["closed Issue"]);
    let pushes = events(&sim, &format!("{p}/events?action=pushed")).await;
    assert_eq!(pushes.len(), 6);

    let by_dev = events(&sim, &format!("/api/v4/users/{dev}/events")).await;
    assert_eq!(
        names(&by_dev),
        vec![
            "joined -",
            "opened Issue",
            "pushed new -",
            "pushed to -",
            "opened MergeRequest"
        ]
    );
}

/// V4 `lib/api/members.rb` (POST `:id/members`) looks for a conflict among `source.members`, which leaves out
/// requesters, then `source.add_user`; `Member.add_user` approves a pending request
/// (`Members::ApproveAccessRequestService`) at the level given. `spec/requests/api/members_spec.rb`, "and new
/// member is already a requester": "transforms the requester into a proper member" (201, `requesters.count` 0,
/// the requester's id and the new `access_level`), for projects and groups.
#[tokio::test]
async fn adding_a_requester_as_a_member_removes_their_access_request() {
    let sim = start().await;
    let pid = project_id(&sim, ROOT, "asked", Some("public")).await;
    let group = ok(
        &sim,
        Method::POST,
        "/api/v4/groups",
        ROOT,
        Some(json!({"name": "team", "path": "team", "visibility": "public"})),
    )
    .await;
    let gid = group["id"].as_u64().unwrap();
    let (asker, asker_token) = sim.create_user("asker", false);
    for source in [format!("/api/v4/projects/{pid}"), format!("/api/v4/groups/{gid}")] {
        let requests = format!("{source}/access_requests");
        ok(&sim, Method::POST, &requests, &asker_token, None).await;
        let listed = ok(&sim, Method::GET, &requests, ROOT, None).await;
        assert_eq!(listed.as_array().unwrap().len(), 1, "{source}");
        let r = call(
            &sim,
            Method::POST,
            &format!("{source}/members"),
            Some(ROOT),
            Some(json!({"user_id": asker, "access_level": 40})),
        )
        .await;
        assert_eq!(r.status, StatusCode::CREATED, "{source}: {}", r.body);
        assert_eq!(r.body["id"], asker);
        assert_eq!(r.body["access_level"], 40);
        let listed = ok(&sim, Method::GET, &requests, ROOT, None).await;
        assert_eq!(listed, json!([]), "{source}");
        let member = ok(
            &sim,
            Method::GET,
            &format!("{source}/members/{asker}"),
            ROOT,
            None,
        )
        .await;
        assert_eq!(member["access_level"], 40);
        // The request is gone: approving it now is a 404.
        let r = call(
            &sim,
            Method::PUT,
            &format!("{requests}/{asker}/approve"),
            Some(ROOT),
            None,
        )
        .await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{source}: {}", r.body);
    }
}

/// V4 `Issuable::CommonSystemNotesService#execute` writes, after the status note, the title
/// (`SystemNoteService.change_title`: "changed title from **{-Old-} title** to **{+New+} title**", marked by
/// `Gitlab::Diff::InlineDiff`), labels (`change_label`: "added ~1 label", by label id), discussion lock
/// (`discussion_lock`: "locked this issue") and milestone (`change_milestone`: "changed milestone to %1") notes;
/// `Issues::UpdateService#handle_changes` then the assignees (`change_issue_assignees`: "assigned to @dev",
/// "unassigned @dev") and confidentiality (`change_issue_confidentiality`: "made the issue confidential") notes.
/// For merge requests `MergeRequests::UpdateService#handle_changes` writes the target branch (`change_branch`:
/// "changed target branch from `main` to `next`") and assignee (`change_assignee`: "assigned to @dev",
/// "removed assignee") notes, and a title that only gains "WIP: " is `handle_merge_request_wip`'s "marked as a
/// **Work In Progress**", not a title change.
#[tokio::test]
async fn updating_fields_writes_the_system_notes_v4_writes() {
    let sim = start().await;
    let pid = project_id(&sim, ROOT, "changes", Some("public")).await;
    let p = format!("/api/v4/projects/{pid}");
    let (dev, _) = sim.create_user("dev", false);
    ok(
        &sim,
        Method::POST,
        &format!("{p}/members"),
        ROOT,
        Some(json!({"user_id": dev, "access_level": 30})),
    )
    .await;
    let milestone = ok(
        &sim,
        Method::POST,
        &format!("{p}/milestones"),
        ROOT,
        Some(json!({"title": "v1"})),
    )
    .await;
    let label = ok(
        &sim,
        Method::POST,
        &format!("{p}/labels"),
        ROOT,
        Some(json!({"name": "bug", "color": "#ff0000"})),
    )
    .await;
    let label_id = label["id"].as_u64().unwrap();
    ok(
        &sim,
        Method::POST,
        &format!("{p}/issues"),
        ROOT,
        Some(json!({"title": "Old title"})),
    )
    .await;
    let one = format!("{p}/issues/1");
    ok(
        &sim,
        Method::PUT,
        &one,
        ROOT,
        Some(
            json!({"title": "New title", "labels": "bug", "milestone_id": milestone["id"],
            "assignee_ids": [dev], "confidential": true, "discussion_locked": true, "state_event": "close"}),
        ),
    )
    .await;
    ok(
        &sim,
        Method::PUT,
        &one,
        ROOT,
        Some(json!({"labels": "", "milestone_id": 0, "assignee_ids": [], "confidential": false})),
    )
    .await;
    // Repeating the current values writes nothing.
    ok(
        &sim,
        Method::PUT,
        &one,
        ROOT,
        Some(json!({"title": "New title", "confidential": false})),
    )
    .await;
    let bodies: Vec<String> = notes(&sim, &one).await.into_iter().map(|(b, _, _)| b).collect();
    assert_eq!(
        bodies,
        vec![
            "closed".to_string(),
            "changed title from **{-Old-} title** to **{+New+} title**".to_string(),
            format!("added ~{label_id} label"),
            "locked this issue".to_string(),
            format!("changed milestone to %{}", milestone["iid"]),
            "assigned to @dev".to_string(),
            "made the issue confidential".to_string(),
            format!("removed ~{label_id} label"),
            "removed milestone".to_string(),
            "unassigned @dev".to_string(),
            "made the issue visible to everyone".to_string(),
        ]
    );

    ok(
        &sim,
        Method::POST,
        &format!("{p}/repository/branches?branch=fix&ref=main"),
        ROOT,
        None,
    )
    .await;
    ok(
        &sim,
        Method::POST,
        &format!("{p}/repository/branches?branch=next&ref=main"),
        ROOT,
        None,
    )
    .await;
    ok(
        &sim,
        Method::POST,
        &format!("{p}/merge_requests"),
        ROOT,
        Some(json!({"title": "Fix", "source_branch": "fix", "target_branch": "main"})),
    )
    .await;
    let mr = format!("{p}/merge_requests/1");
    ok(
        &sim,
        Method::PUT,
        &mr,
        ROOT,
        Some(json!({"title": "WIP: Fix", "target_branch": "next", "assignee_id": dev})),
    )
    .await;
    ok(&sim, Method::PUT, &mr, ROOT, Some(json!({"assignee_id": 0}))).await;
    let bodies: Vec<String> = notes(&sim, &mr).await.into_iter().map(|(b, _, _)| b).collect();
    assert_eq!(
        bodies,
        vec![
            "marked as a **Work In Progress**",
            "changed target branch from `main` to `next`",
            "assigned to @dev",
            "removed assignee",
        ]
    );
}

/// V4 `app/services/issues/move_service.rb`: the new issue is created as the mover (`Issues::CreateService`: their
/// "opened" event), gets copies of the old issue's notes (`rewrite_notes`) and `SystemNoteService.noteable_moved`'s
/// "moved from" note; the old issue gets "moved to" and is closed without a "closed" note (`close_issue`:
/// `system_note: false`). The references are `Issue#to_reference(from)`'s: `path#iid` within a namespace
/// (`Project#to_reference_base`: `cross_project_reference?`), `namespace/path#iid` across namespaces.
#[tokio::test]
async fn moving_an_issue_copies_its_notes_and_writes_moved_notes_with_relative_references() {
    let sim = start().await;
    let from = project_id(&sim, ROOT, "from", Some("public")).await;
    let to = project_id(&sim, ROOT, "to", Some("public")).await;
    let (mover, mover_token) = sim.create_user("mover", false);
    for pid in [from, to] {
        ok(
            &sim,
            Method::POST,
            &format!("/api/v4/projects/{pid}/members"),
            ROOT,
            Some(json!({"user_id": mover, "access_level": 20})),
        )
        .await;
    }
    let old = format!("/api/v4/projects/{from}/issues/1");
    ok(
        &sim,
        Method::POST,
        &format!("/api/v4/projects/{from}/issues"),
        ROOT,
        Some(json!({"title": "bug"})),
    )
    .await;
    ok(
        &sim,
        Method::POST,
        &format!("{old}/notes"),
        ROOT,
        Some(json!({"body": "seen"})),
    )
    .await;
    let moved = ok(
        &sim,
        Method::POST,
        &format!("{old}/move"),
        &mover_token,
        Some(json!({"to_project_id": to})),
    )
    .await;
    let new = format!("/api/v4/projects/{to}/issues/{}", moved["iid"]);
    assert_eq!(
        notes(&sim, &new).await,
        vec![
            ("seen".to_string(), false, "root".to_string()),
            ("moved from from#1".to_string(), true, "mover".to_string()),
        ]
    );
    assert_eq!(
        notes(&sim, &old).await,
        vec![
            ("seen".to_string(), false, "root".to_string()),
            (format!("moved to to#{}", moved["iid"]), true, "mover".to_string()),
        ]
    );
    let opened = events(&sim, &format!("/api/v4/projects/{to}/events?target_type=issue")).await;
    assert_eq!(names(&opened), vec!["opened Issue"]);
    assert_eq!(opened[0]["author_username"], "mover");
    let closed = events(&sim, &format!("/api/v4/projects/{from}/events?action=closed")).await;
    assert_eq!(closed.len(), 1);
    assert_eq!(closed[0]["author_username"], "mover");

    // Across namespaces the reference is the full path.
    let group = ok(
        &sim,
        Method::POST,
        "/api/v4/groups",
        ROOT,
        Some(json!({"name": "team", "path": "team", "visibility": "public"})),
    )
    .await;
    let other = ok(
        &sim,
        Method::POST,
        "/api/v4/projects",
        ROOT,
        Some(json!({"name": "far", "namespace_id": group["id"], "visibility": "public"})),
    )
    .await;
    let moved_again = ok(
        &sim,
        Method::POST,
        &format!("{new}/move"),
        ROOT,
        Some(json!({"to_project_id": other["id"]})),
    )
    .await;
    let last = notes(&sim, &new).await.pop().unwrap();
    assert_eq!(last.0, format!("moved to team/far#{}", moved_again["iid"]));
    let far = format!("/api/v4/projects/{}/issues/{}", other["id"], moved_again["iid"]);
    let first_of_far = notes(&sim, &far).await;
    assert_eq!(
        first_of_far.last().unwrap().0,
        format!("moved from root/to#{}", moved["iid"])
    );
}

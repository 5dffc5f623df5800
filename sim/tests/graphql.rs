//! svc-sim's GraphQL endpoint end to end: the batched completion and id lookup shapes svcgate sends, with golden
//! answers; V4's permissions (anonymous, member, non-member, confidential issues); the service's error shapes
//! (global ids, validation, bad token); its complexity limits per kind of caller, their override and
//! `queryComplexity`; the off switch; and the bench support (delay, counts, seed).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use http::{Method, StatusCode};
use serde_json::{json, Value};
use svc_sim::{RecordRequests, SimHandle, SimOptions};

mod common;
use common::*;

/// The completion query svcgate sends for a V3 list of issues (one alias per project), for a batch of 30: its
/// complexity, 13 (GitLab's resolver rule: items named by iid cost nothing more), is within every caller's limit.
const ISSUES_BATCH: &str = "query($p0:[ID!],$i0:[String!]){p0:projects(ids:$p0,first:1){nodes{id issues(iids:$i0,first:30){nodes{iid subscribed}}}}}";
/// The same for merge requests.
const MRS_BATCH: &str = "query($p0:[ID!],$i0:[String!]){p0:projects(ids:$p0,first:1){nodes{id mergeRequests(iids:$i0,first:30){nodes{iid subscribed}}}}}";
/// svcgate's global id lookups.
const ISSUE_BY_ID: &str = "query($id:IssueID!){issue(id:$id){iid projectId reference(full:true)}}";
const MR_BY_ID: &str = "query($id:MergeRequestID!){mergeRequest(id:$id){iid projectId reference(full:true)}}";

/// A private project `owner/secret` with a README: issue #1 (plain), #2 (confidential), merge request !1.
/// `dev` is a Developer, `guest` a Guest, `outsider` no member; `dev` subscribed to issue #1 and merge request !1.
struct World {
    sim: SimHandle,
    project: u64,
    owner: String,
    dev: String,
    guest: String,
    outsider: String,
    issues: Vec<u64>,
    mr: u64,
}

async fn world_with(options: SimOptions) -> World {
    let sim = start_with(options).await;
    let (_, owner) = sim.create_user("owner", false);
    let (dev_id, dev) = sim.create_user("dev", false);
    let (guest_id, guest) = sim.create_user("guest", false);
    let (_, outsider) = sim.create_user("outsider", false);
    let project = project_id(&sim, &owner, "secret", Some("private")).await;
    add_member(&sim, "projects", project, dev_id, 30).await;
    add_member(&sim, "projects", project, guest_id, 10).await;
    let base = format!("/api/v4/projects/{project}");
    let plain = ok(
        &sim,
        Method::POST,
        &format!("{base}/issues"),
        &owner,
        Some(json!({"title": "Plain"})),
    )
    .await;
    let secret = ok(
        &sim,
        Method::POST,
        &format!("{base}/issues"),
        &owner,
        Some(json!({"title": "Secret", "confidential": true})),
    )
    .await;
    ok(
        &sim,
        Method::POST,
        &format!("{base}/repository/branches"),
        &owner,
        Some(json!({"branch": "feature", "ref": "main"})),
    )
    .await;
    let mr = ok(
        &sim,
        Method::POST,
        &format!("{base}/merge_requests"),
        &owner,
        Some(json!({"title": "Feature", "source_branch": "feature", "target_branch": "main"})),
    )
    .await;
    ok(
        &sim,
        Method::POST,
        &format!("{base}/issues/1/subscribe"),
        &dev,
        None,
    )
    .await;
    ok(
        &sim,
        Method::POST,
        &format!("{base}/merge_requests/1/subscribe"),
        &dev,
        None,
    )
    .await;
    World {
        sim,
        project,
        owner,
        dev,
        guest,
        outsider,
        issues: vec![plain["id"].as_u64().unwrap(), secret["id"].as_u64().unwrap()],
        mr: mr["id"].as_u64().unwrap(),
    }
}

async fn world() -> World {
    world_with(SimOptions::default()).await
}

/// POSTs one GraphQL request as `token` (anonymous when `None`).
async fn gql(sim: &SimHandle, token: Option<&str>, query: &str, variables: Value) -> Resp {
    call(
        sim,
        Method::POST,
        "/api/graphql",
        token,
        Some(json!({"query": query, "variables": variables})),
    )
    .await
}

/// POSTs and expects 200; returns the body.
async fn gql_ok(sim: &SimHandle, token: Option<&str>, query: &str, variables: Value) -> Value {
    let r = gql(sim, token, query, variables).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    r.body
}

fn project_gid(id: u64) -> String {
    format!("gid://svc/Project/{id}")
}

#[tokio::test]
async fn batched_issue_completions_answer_each_visible_iid_with_the_callers_subscription() {
    let w = world().await;
    let vars = json!({"p0": [project_gid(w.project)], "i0": ["1", "2", "99"]});
    let body = gql_ok(&w.sim, Some(&w.dev), ISSUES_BATCH, vars).await;
    assert_eq!(
        body,
        json!({"data": {"p0": {"nodes": [{
            "id": project_gid(w.project),
            "issues": {"nodes": [{"iid": "2", "subscribed": false}, {"iid": "1", "subscribed": true}]},
        }]}}})
    );
    // The author is subscribed to what they opened; iids: [] asks for nothing.
    let vars = json!({"p0": [project_gid(w.project)], "i0": []});
    let body = gql_ok(&w.sim, Some(&w.owner), ISSUES_BATCH, vars).await;
    assert_eq!(body["data"]["p0"]["nodes"][0]["issues"]["nodes"], json!([]));
}

#[tokio::test]
async fn batched_merge_request_completions_answer_each_iid_with_the_callers_subscription() {
    let w = world().await;
    let vars = json!({"p0": [project_gid(w.project)], "i0": ["1", "7"]});
    let dev = gql_ok(&w.sim, Some(&w.dev), MRS_BATCH, vars.clone()).await;
    assert_eq!(
        dev,
        json!({"data": {"p0": {"nodes": [{
            "id": project_gid(w.project),
            "mergeRequests": {"nodes": [{"iid": "1", "subscribed": true}]},
        }]}}})
    );
    // A Guest of a private project reads no merge requests, as over V4 (403 there, none here).
    let guest = gql_ok(&w.sim, Some(&w.guest), MRS_BATCH, vars).await;
    assert_eq!(
        guest["data"]["p0"]["nodes"][0]["mergeRequests"]["nodes"],
        json!([])
    );
}

#[tokio::test]
async fn an_issue_by_global_id_names_its_project_and_iid() {
    let w = world().await;
    let gid = format!("gid://svc/Issue/{}", w.issues[0]);
    let body = gql_ok(&w.sim, Some(&w.dev), ISSUE_BY_ID, json!({"id": gid})).await;
    assert_eq!(
        body,
        json!({"data": {"issue": {"iid": "1", "projectId": w.project, "reference": "owner/secret#1"}}})
    );
    let full = "query($id:IssueID!){issue(id:$id){id title state confidential subscribed webUrl reference}}";
    let body = gql_ok(&w.sim, Some(&w.dev), full, json!({"id": gid})).await;
    assert_eq!(
        body["data"]["issue"],
        json!({
            "id": gid, "title": "Plain", "state": "opened", "confidential": false, "subscribed": true,
            "webUrl": format!("{}/owner/secret/issues/1", w.sim.url()), "reference": "#1",
        })
    );
    // No such issue: null, no error.
    let body = gql_ok(
        &w.sim,
        Some(&w.dev),
        ISSUE_BY_ID,
        json!({"id": "gid://svc/Issue/999999"}),
    )
    .await;
    assert_eq!(body, json!({"data": {"issue": null}}));
}

#[tokio::test]
async fn a_merge_request_by_global_id_names_its_project_and_iid() {
    let w = world().await;
    let gid = format!("gid://svc/MergeRequest/{}", w.mr);
    let body = gql_ok(&w.sim, Some(&w.dev), MR_BY_ID, json!({"id": gid})).await;
    assert_eq!(
        body,
        json!({"data": {"mergeRequest": {"iid": "1", "projectId": w.project, "reference": "owner/secret!1"}}})
    );
    let more =
        "query($id:MergeRequestID!){mergeRequest(id:$id){id title state subscribed project{fullPath}}}";
    let body = gql_ok(&w.sim, Some(&w.dev), more, json!({"id": gid})).await;
    assert_eq!(
        body["data"]["mergeRequest"],
        json!({"id": gid, "title": "Feature", "state": "opened", "subscribed": true,
               "project": {"fullPath": "owner/secret"}})
    );
}

#[tokio::test]
async fn a_project_by_full_path_answers_the_services_fields() {
    let w = world().await;
    let query = r#"{project(fullPath: "owner/secret") {id fullPath name webUrl issue(iid: "1") {title} mergeRequest(iid: "1") {title}
        issues(first: 1) {count nodes {iid} edges {cursor node {iid}} pageInfo {hasNextPage hasPreviousPage startCursor endCursor}}}}"#;
    let body = gql_ok(&w.sim, Some(&w.dev), query, Value::Null).await;
    let project = &body["data"]["project"];
    assert_eq!(project["id"], json!(project_gid(w.project)));
    assert_eq!(project["fullPath"], json!("owner/secret"));
    assert_eq!(project["name"], json!("secret"));
    assert_eq!(project["webUrl"], json!(format!("{}/owner/secret", w.sim.url())));
    assert_eq!(project["issue"], json!({"title": "Plain"}));
    assert_eq!(project["mergeRequest"], json!({"title": "Feature"}));
    // Newest first, one a page, the next page after the end cursor.
    let issues = &project["issues"];
    assert_eq!(issues["count"], json!(2));
    assert_eq!(issues["nodes"], json!([{"iid": "2"}]));
    assert_eq!(issues["pageInfo"]["hasNextPage"], json!(true));
    assert_eq!(issues["pageInfo"]["hasPreviousPage"], json!(false));
    let cursor = issues["pageInfo"]["endCursor"].as_str().unwrap().to_string();
    assert_eq!(issues["edges"][0]["cursor"], json!(cursor));
    let next = "query($after:String){project(fullPath:\"owner/secret\"){issues(first:1,after:$after){nodes{iid} pageInfo{hasNextPage}} oldest: issues(sort: CREATED_ASC, first: 1){nodes{iid}}}}";
    let body = gql_ok(&w.sim, Some(&w.dev), next, json!({"after": cursor})).await;
    assert_eq!(
        body["data"]["project"],
        json!({"issues": {"nodes": [{"iid": "1"}], "pageInfo": {"hasNextPage": false}}, "oldest": {"nodes": [{"iid": "1"}]}})
    );
}

#[tokio::test]
async fn a_private_project_is_null_for_anonymous_and_non_members_and_omitted_from_projects() {
    let w = world().await;
    let query = "query($p:[ID!]){project(fullPath:\"owner/secret\"){fullPath} projects(ids:$p){nodes{fullPath}} currentUser{username}}";
    let vars = json!({"p": [project_gid(w.project)]});
    let member = gql_ok(&w.sim, Some(&w.dev), query, vars.clone()).await;
    assert_eq!(
        member,
        json!({"data": {"project": {"fullPath": "owner/secret"}, "projects": {"nodes": [{"fullPath": "owner/secret"}]},
                        "currentUser": {"username": "dev"}}})
    );
    let outsider = gql_ok(&w.sim, Some(&w.outsider), query, vars.clone()).await;
    assert_eq!(
        outsider,
        json!({"data": {"project": null, "projects": {"nodes": []}, "currentUser": {"username": "outsider"}}})
    );
    let anonymous = gql_ok(&w.sim, None, query, vars).await;
    assert_eq!(
        anonymous,
        json!({"data": {"project": null, "projects": {"nodes": []}, "currentUser": null}})
    );
    let gid = format!("gid://svc/Issue/{}", w.issues[0]);
    for token in [None, Some(w.outsider.as_str())] {
        let body = gql_ok(&w.sim, token, ISSUE_BY_ID, json!({"id": gid})).await;
        assert_eq!(body, json!({"data": {"issue": null}}));
    }
}

#[tokio::test]
async fn a_confidential_issue_is_hidden_from_a_guest_and_shown_to_a_developer() {
    let w = world().await;
    let vars = json!({"p0": [project_gid(w.project)], "i0": ["1", "2"]});
    let guest = gql_ok(&w.sim, Some(&w.guest), ISSUES_BATCH, vars.clone()).await;
    assert_eq!(
        guest["data"]["p0"]["nodes"][0]["issues"]["nodes"],
        json!([{"iid": "1", "subscribed": false}])
    );
    let secret = json!({"id": format!("gid://svc/Issue/{}", w.issues[1])});
    let body = gql_ok(&w.sim, Some(&w.guest), ISSUE_BY_ID, secret.clone()).await;
    assert_eq!(body, json!({"data": {"issue": null}}));
    let body = gql_ok(&w.sim, Some(&w.dev), ISSUE_BY_ID, secret).await;
    assert_eq!(body["data"]["issue"]["iid"], json!("2"));
    // V4 agrees with both answers.
    let r = call(
        &w.sim,
        Method::GET,
        &format!("/api/v4/projects/{}/issues/2", w.project),
        Some(&w.guest),
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn bad_global_ids_are_validation_errors_with_the_services_three_messages() {
    let w = world().await;
    let cases = [
        (
            "gid://gitlab/Issue/1000",
            "\"gid://gitlab/Issue/1000\" is not a Svc Global ID",
        ),
        (
            "gid://svc/Project/1",
            "\"gid://svc/Project/1\" does not represent an instance of Issue",
        ),
        ("1000", "\"1000\" is not a valid Global ID"),
    ];
    for (id, explanation) in cases {
        let r = gql(&w.sim, Some(&w.dev), ISSUE_BY_ID, json!({"id": id})).await;
        assert_eq!(r.status, StatusCode::OK);
        assert!(r.body.get("data").is_none(), "{}", r.body);
        let error = &r.body["errors"][0];
        assert_eq!(
            error["message"],
            json!("Variable $id of type IssueID! was provided invalid value")
        );
        assert_eq!(error["extensions"]["value"], json!(id));
        assert_eq!(
            error["extensions"]["problems"][0]["explanation"],
            json!(explanation)
        );
        // Written in the query, the coercion message is the error's message.
        let literal = format!("{{issue(id: {}) {{iid}}}}", json!(id));
        let r = gql(&w.sim, Some(&w.dev), &literal, Value::Null).await;
        assert!(r.body.get("data").is_none(), "{}", r.body);
        assert_eq!(r.body["errors"][0]["message"], json!(explanation));
    }
}

#[tokio::test]
async fn a_validation_error_has_no_data_and_an_execution_error_has_null_beside_it() {
    let w = world().await;
    let r = gql(
        &w.sim,
        Some(&w.dev),
        "{project(fullPath: \"owner/secret\") {bogus}}",
        Value::Null,
    )
    .await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(
        r.body,
        json!({"errors": [{"message": "Field 'bogus' doesn't exist on type 'Project'",
                           "locations": [{"line": 1, "column": 37}]}]})
    );
    let r = gql(
        &w.sim,
        Some(&w.dev),
        "{project(fullPath: \"owner/secret\") {issues(bogus: 1) {count}}}",
        Value::Null,
    )
    .await;
    assert_eq!(
        r.body["errors"][0]["message"],
        json!("Field 'issues' doesn't accept argument 'bogus'")
    );
    assert!(r.body.get("data").is_none());
    let r = gql(&w.sim, Some(&w.dev), "{project(fullPath: ", Value::Null).await;
    assert!(
        r.body.get("data").is_none() && r.body["errors"][0]["message"].is_string(),
        "{}",
        r.body
    );
    let r = gql(
        &w.sim,
        Some(&w.dev),
        "{projects(ids: [\"gid://svc/Issue/1\"]) {count}}",
        Value::Null,
    )
    .await;
    assert_eq!(r.body["data"], json!({"projects": null}));
    assert_eq!(
        r.body["errors"][0]["message"],
        json!("gid://svc/Issue/1 is not a valid ID for Project.")
    );
    assert_eq!(r.body["errors"][0]["path"], json!(["projects"]));
}

#[tokio::test]
async fn a_token_that_names_no_user_is_401_and_every_v4_way_of_giving_one_works() {
    let w = world().await;
    let r = gql(
        &w.sim,
        Some("no-such-token"),
        "{currentUser{username}}",
        Value::Null,
    )
    .await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    assert_eq!(r.body, json!({"errors": [{"message": "Invalid token"}]}));
    let query = "%7BcurrentUser%7Busername%7D%7D";
    for path in [
        format!("/api/graphql?query={query}&private_token={}", w.dev),
        format!("/api/graphql?query={query}&access_token={}", w.dev),
    ] {
        let r = call(&w.sim, Method::GET, &path, None, None).await;
        assert_eq!(
            r.body,
            json!({"data": {"currentUser": {"username": "dev"}}}),
            "{path}"
        );
    }
}

#[tokio::test]
async fn a_batch_is_answered_in_order_and_get_answers_queries() {
    let w = world().await;
    let batch = json!([
        {"query": "{currentUser{username}}"},
        {"query": "{metadata{version revision}}"},
        {"query": "{nope}"},
    ]);
    let r = call(&w.sim, Method::POST, "/api/graphql", Some(&w.owner), Some(batch)).await;
    assert_eq!(r.body[0], json!({"data": {"currentUser": {"username": "owner"}}}));
    assert_eq!(r.body[1]["data"]["metadata"]["version"], json!("10.8.7"));
    assert!(
        r.body[2].get("data").is_none() && r.body[2]["errors"].is_array(),
        "{}",
        r.body
    );
    let path = "/api/graphql?query=query(%24p%3AID!)%7Bproject(fullPath%3A%24p)%7Bname%7D%7D&variables=%7B%22p%22%3A%22owner%2Fsecret%22%7D";
    let r = call(&w.sim, Method::GET, path, Some(&w.owner), None).await;
    assert_eq!(r.body, json!({"data": {"project": {"name": "secret"}}}));
}

/// svcgate's completion query for `items` issues in each of `aliases` project aliases (all naming project `$p0`),
/// asking the caller's limit and the query's score too. Its complexity, by GitLab's rule, is
/// 3 (`queryComplexity{limit score}`) + 13 per alias, whatever `items`: in an alias, `issues` costs
/// `nodes{iid subscribed}` 1 + 1 + 5, plus its resolver's 1 and 1 for its defaulted `sort`, and nothing per item
/// (named by `iids`), so 9; `projects(first:1)` costs `nodes{id issues}` 1 + 1 + 9, plus its resolver's 1 and 1
/// for its defaulted `sort` (`ProjectSearchArguments`, `id_desc`), grown by 1% (one item): 13.13, rounded down
/// to 13.
fn svcgate_query(field: &str, aliases: usize, items: usize) -> String {
    let alias = |n: usize| {
        format!("p{n}:projects(ids:$p0,first:1){{nodes{{id {field}(iids:$i0,first:{items}){{nodes{{iid subscribed}}}}}}}}")
    };
    let aliases: String = (0..aliases).map(alias).collect();
    format!("query($p0:[ID!],$i0:[String!]){{queryComplexity{{limit score}}{aliases}}}")
}

/// The service's refusal of a query of complexity `score` over `limit`.
fn too_complex(score: usize, limit: usize) -> Value {
    json!({"errors": [{"message": format!("Query has complexity of {score}, which exceeds max complexity of {limit}")}]})
}

#[tokio::test]
async fn each_kind_of_caller_is_held_to_the_services_complexity_limit_with_its_message() {
    let w = world().await;
    let (_, admin) = w.sim.create_user("admin", true);
    let vars = json!({"p0": [project_gid(w.project)], "i0": ["1"]});
    // The most project aliases each kind fits (a score equal to the limit is allowed); one more does not.
    for (who, token, limit, aliases) in [
        ("anonymous", None, 200, 15),
        ("signed in", Some(w.dev.as_str()), 250, 19),
        ("administrator", Some(admin.as_str()), 300, 22),
        ("root", Some(ROOT), 300, 22),
    ] {
        let query = svcgate_query("issues", aliases, 100);
        let fits = gql_ok(&w.sim, token, &query, vars.clone()).await;
        let score = 3 + 13 * aliases;
        assert_eq!(
            fits["data"]["queryComplexity"],
            json!({"limit": limit, "score": score}),
            "{who}"
        );
        let query = svcgate_query("issues", aliases + 1, 100);
        let over = gql(&w.sim, token, &query, vars.clone()).await;
        assert_eq!(over.status, StatusCode::OK, "{who}");
        assert_eq!(over.body, too_complex(score + 13, limit), "{who}");
    }
}

#[tokio::test]
async fn svcgates_query_scores_as_gitlab_counts_it_whatever_the_number_of_iids() {
    let w = world().await;
    let vars = json!({"p0": [project_gid(w.project)], "i0": ["1", "2"]});
    for field in ["issues", "mergeRequests"] {
        for items in [1, 30, 100] {
            let body = gql_ok(
                &w.sim,
                Some(&w.dev),
                &svcgate_query(field, 1, items),
                vars.clone(),
            )
            .await;
            assert_eq!(
                body["data"]["queryComplexity"]["score"],
                json!(16),
                "{field} {items}"
            );
        }
        let body = gql_ok(&w.sim, Some(&w.dev), &svcgate_query(field, 3, 100), vars.clone()).await;
        assert_eq!(
            body["data"]["queryComplexity"]["score"],
            json!(3 + 3 * 13),
            "{field}"
        );
    }
}

/// The score svc-sim gives `fields` (with `queryComplexity{score}`, 2, in front) for `token`.
async fn score_of(sim: &SimHandle, token: &str, fields: &str) -> Value {
    let query = format!("{{queryComplexity{{score}}{fields}}}");
    gql_ok(sim, Some(token), &query, Value::Null).await["data"]["queryComplexity"]["score"].clone()
}

#[tokio::test]
async fn a_list_not_named_by_iid_costs_one_percent_more_per_item_of_its_page() {
    let w = world().await;
    let issues = |arguments: &str| {
        format!("project(fullPath:\"owner/secret\"){{issues{arguments}{{nodes{{iid subscribed}}}}}}")
    };
    // project(fullPath:) 1 + issues: (7 + 2) grown by first%, rounded down. first:30: 9 + 2.7 → 11.
    assert_eq!(
        score_of(&w.sim, &w.dev, &issues("(first:30)")).await,
        json!(2 + 1 + 11)
    );
    // first:100 doubles it: 18.
    assert_eq!(
        score_of(&w.sim, &w.dev, &issues("(first:100)")).await,
        json!(2 + 1 + 18)
    );
    // Without first, the page size (100) counts.
    assert_eq!(score_of(&w.sim, &w.dev, &issues("")).await, json!(2 + 1 + 18));
    // `iid` makes items free as `iids` does: 9.
    assert_eq!(
        score_of(&w.sim, &w.dev, &issues("(iid:\"1\")")).await,
        json!(2 + 1 + 9)
    );
    // projects without first: nodes{id} 2, its resolver 1 and 1 for its defaulted `sort`, doubled: 8.
    assert_eq!(
        score_of(&w.sim, &w.dev, "projects{nodes{id}}").await,
        json!(2 + 8)
    );
}

#[tokio::test]
async fn query_complexity_answers_the_callers_limit_and_the_querys_own_score() {
    let w = world().await;
    let query = "{queryComplexity{limit score}}";
    for (who, token, limit) in [
        ("anonymous", None, 200),
        ("signed in", Some(w.dev.as_str()), 250),
        ("root", Some(ROOT), 300),
    ] {
        let body = gql_ok(&w.sim, token, query, Value::Null).await;
        assert_eq!(
            body,
            json!({"data": {"queryComplexity": {"limit": limit, "score": 3}}}),
            "{who}"
        );
    }
}

#[tokio::test]
async fn the_complexity_override_holds_every_caller_to_one_limit() {
    let w = world_with(SimOptions {
        graphql_max_complexity: Some(1_000),
        ..SimOptions::default()
    })
    .await;
    let vars = json!({"p0": [project_gid(w.project)], "i0": ["1"]});
    for token in [None, Some(w.dev.as_str()), Some(ROOT)] {
        let body = gql_ok(&w.sim, token, &svcgate_query("issues", 50, 100), vars.clone()).await;
        assert_eq!(
            body["data"]["queryComplexity"],
            json!({"limit": 1_000, "score": 653})
        );
    }
    let w = world_with(SimOptions {
        graphql_max_complexity: Some(20),
        ..SimOptions::default()
    })
    .await;
    let r = gql(&w.sim, Some(ROOT), &svcgate_query("issues", 2, 100), vars).await;
    assert_eq!(r.body, too_complex(29, 20));
}

#[tokio::test]
async fn without_graphql_the_endpoint_answers_v4s_404() {
    let w = world_with(SimOptions {
        graphql: false,
        ..SimOptions::default()
    })
    .await;
    let r = gql(&w.sim, Some(&w.dev), "{currentUser{username}}", Value::Null).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    assert_eq!(r.body, json!({"message": "404 Not Found"}));
    // The request is still recorded, so a test can see the fallback's probe.
    assert!(w.sim.requests().iter().any(|q| q.path == "/api/graphql"));
}

#[tokio::test]
async fn a_delay_holds_every_api_request_and_concurrent_ones_overlap() {
    let delay = Duration::from_millis(300);
    let sim = start_with(SimOptions {
        delay,
        ..SimOptions::default()
    })
    .await;
    let started = Instant::now();
    let (a, b, c) = tokio::join!(
        call(&sim, Method::GET, "/api/v4/version", Some(ROOT), None),
        call(&sim, Method::GET, "/api/v4/version", Some(ROOT), None),
        gql(&sim, Some(ROOT), "{currentUser{username}}", Value::Null),
    );
    let took = started.elapsed();
    assert!(a.status.is_success() && b.status.is_success() && c.status.is_success());
    assert!(took >= delay, "answered after {took:?}");
    assert!(
        took < delay * 2,
        "three delayed requests did not overlap: {took:?}"
    );
    let started = Instant::now();
    call(&sim, Method::GET, "/-/sim/stats", None, None).await;
    assert!(started.elapsed() < delay, "the stats route is not delayed");
}

#[tokio::test]
async fn sim_stats_count_requests_and_graphql_ones_even_when_only_counting() {
    for record in [RecordRequests::All, RecordRequests::Count] {
        let sim = start_with(SimOptions {
            record_requests: record,
            ..SimOptions::default()
        })
        .await;
        call(&sim, Method::GET, "/api/v4/version", Some(ROOT), None).await;
        call(&sim, Method::GET, "/api/v4/nope", Some(ROOT), None).await;
        gql(&sim, Some(ROOT), "{currentUser{username}}", Value::Null).await;
        let stats = call(&sim, Method::GET, "/-/sim/stats", None, None).await;
        assert_eq!(stats.body, json!({"requests": 3, "graphql": 1}), "{record:?}");
        let stats = call(&sim, Method::GET, "/-/sim/stats", None, None).await;
        assert_eq!(
            stats.body,
            json!({"requests": 3, "graphql": 1}),
            "the stats route counts itself"
        );
        let kept = sim.requests().len();
        match record {
            RecordRequests::All => assert_eq!(kept, 3),
            RecordRequests::Count => assert_eq!(kept, 0),
        }
        assert_eq!(sim.stats().requests, 3);
    }
}

#[tokio::test]
async fn the_bench_seed_makes_the_bench_user_projects_and_subscriptions() {
    let sim = start_with(SimOptions {
        bench_seed: true,
        ..SimOptions::default()
    })
    .await;
    let token = svc_sim::BENCH_TOKEN;
    let mut ids = Vec::new();
    for path in ["bench%2Fi1k", "bench%2Fi100k", "bench%2Fmr"] {
        let project = ok(
            &sim,
            Method::GET,
            &format!("/api/v4/projects/{path}"),
            token,
            None,
        )
        .await;
        assert_eq!(project["visibility"], json!("private"));
        ids.push(project["id"].as_u64().unwrap());
    }
    let query = r#"{
        i1k: project(fullPath: "bench/i1k") {issues(first: 0) {count}}
        i100k: project(fullPath: "bench/i100k") {issues(iids: ["10", "11", "100000"], first: 3) {count nodes {iid subscribed}}}
        mr: project(fullPath: "bench/mr") {mergeRequests(iids: ["10", "11"], state: opened, first: 2) {count nodes {iid subscribed}}}
    }"#;
    let body = gql_ok(&sim, Some(token), query, Value::Null).await;
    assert_eq!(
        body,
        json!({"data": {
            "i1k": {"issues": {"count": 1000}},
            "i100k": {"issues": {"count": 3, "nodes": [
                {"iid": "100000", "subscribed": true}, {"iid": "11", "subscribed": false}, {"iid": "10", "subscribed": true}]}},
            "mr": {"mergeRequests": {"count": 2, "nodes": [
                {"iid": "11", "subscribed": false}, {"iid": "10", "subscribed": true}]}},
        }})
    );
    let mrs = ok(
        &sim,
        Method::GET,
        &format!(
            "/api/v4/projects/{}/merge_requests?state=opened&per_page=100",
            ids[2]
        ),
        token,
        None,
    )
    .await;
    assert_eq!(mrs.as_array().unwrap().len(), 100);
}

#[tokio::test]
async fn sudo_is_not_honoured_graphql_answers_as_the_tokens_own_user() {
    let w = world().await;
    let r = call(
        &w.sim,
        Method::POST,
        "/api/graphql?sudo=dev",
        Some(ROOT),
        Some(json!({"query": "{currentUser{username}}"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.body, json!({"data": {"currentUser": {"username": "root"}}}));
}

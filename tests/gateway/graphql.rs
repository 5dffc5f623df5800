//! V3 answers built with the backend's GraphQL, over real sockets (client → svcgate → svc-sim): a list's
//! `subscribed` in batched requests (first and repeated call alike, current after a change, across projects),
//! a list of 100 of one project in one request (the service's scoring leaves items named by iid free), lists over
//! many projects cut by projects to the service's complexity limits per kind of caller (200 anonymous, 250 signed
//! in) and to the limit the backend names (higher or lower, one refused request at most), by query length, no
//! split past the call budget;
//! per-item requests when the backend has no GraphQL (remembered: not asked again); and a global id resolved in
//! one request, with bisection when GraphQL is off.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::common::{get, send_json, Answer, TestGateway};
use http::{Method, StatusCode};
use serde_json::{json, Value};
use svc_sim::{DemoSeed, SimHandle, SimOptions};

/// The backend calls the sim received since it was last cleared, as `METHOD path`.
fn calls(sim: &SimHandle) -> Vec<String> {
    sim.requests()
        .iter()
        .map(|request| format!("{} {}", request.method, request.path))
        .collect()
}

/// The GraphQL requests among them, by their bodies.
fn graphql_bodies(sim: &SimHandle) -> Vec<Value> {
    sim.requests()
        .iter()
        .filter(|request| request.path == "/api/graphql")
        .map(|request| serde_json::from_slice(&request.body).unwrap())
        .collect()
}

/// A V3 `GET` of `path` (below `/api/v3`) through `gateway` with `token` (anonymous when empty).
async fn v3(gateway: &TestGateway, path: &str, token: &str) -> Answer {
    let url = format!("{}/api/v3{path}", gateway.url());
    let headers: &[(&str, &str)] = if token.is_empty() {
        &[]
    } else {
        &[("private-token", token)]
    };
    common::send(Method::GET, &url, headers, None).await
}

/// [`v3`], which must answer 200: its JSON.
async fn v3_ok(gateway: &TestGateway, path: &str, token: &str) -> Value {
    let answer = v3(gateway, path, token).await;
    assert_eq!(answer.status, StatusCode::OK, "GET {path}: {:?}", answer.body);
    answer.json()
}

/// svcgate's GraphQL counts by outcome, from its metrics.
async fn graphql_outcomes(gateway: &TestGateway) -> String {
    let metrics = get(&format!("{}/-/svcgate/metrics", gateway.url()), "").await;
    String::from_utf8(metrics.body.to_vec()).unwrap()
}

/// A sim with `options` (its admin token the harness's), seeded with the demo user, group and project.
async fn sim_with(options: SimOptions) -> (SimHandle, DemoSeed) {
    let sim = common::sim::start_with(options).await;
    let demo = sim.seed_demo();
    (sim, demo)
}

/// Creates `count` issues in `project` as the token's user (who is then subscribed to each); their (id, iid).
async fn issues(sim: &SimHandle, token: &str, project: u64, count: usize) -> Vec<(u64, u64)> {
    let mut made = Vec::new();
    for n in 0..count {
        let answer = send_json(
            Method::POST,
            &format!("{}/api/v4/projects/{project}/issues", sim.url()),
            token,
            json!({"title": format!("issue {n}")}),
        )
        .await;
        assert_eq!(answer.status, StatusCode::CREATED, "{:?}", answer.body);
        let issue = answer.json();
        made.push((issue["id"].as_u64().unwrap(), issue["iid"].as_u64().unwrap()));
    }
    made
}

/// Creates `count` merge requests in the demo project, each from a branch of its own.
async fn merge_requests(sim: &SimHandle, demo: &DemoSeed, count: usize) -> Vec<u64> {
    let mut made = Vec::new();
    for n in 0..count {
        let v4 = |path: &str| format!("{}/api/v4/projects/{}{path}", sim.url(), demo.project_id);
        let branch = send_json(
            Method::POST,
            &v4("/repository/branches"),
            &demo.token,
            json!({"branch": format!("feature-{n}"), "ref": "main"}),
        )
        .await;
        assert_eq!(branch.status, StatusCode::CREATED, "{:?}", branch.body);
        let created = send_json(
            Method::POST,
            &v4("/merge_requests"),
            &demo.token,
            json!({"title": format!("Feature {n}"), "source_branch": format!("feature-{n}"), "target_branch": "main"}),
        )
        .await;
        assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
        made.push(created.json()["iid"].as_u64().unwrap());
    }
    made
}

/// `subscribed` of every item of a V3 list answer.
fn subscribed(list: &Value) -> Vec<Value> {
    let items = list.as_array().unwrap();
    assert!(!items.is_empty(), "an empty list");
    items.iter().map(|item| item["subscribed"].clone()).collect()
}

/// `true` for every item of a V3 list answer (the demo user made every issue and merge request of the demo seed
/// and of these tests, and is subscribed to each).
fn all_true(list: &Value) -> Vec<Value> {
    vec![json!(true); list.as_array().unwrap().len()]
}

#[tokio::test]
async fn a_v3_issue_list_costs_two_backend_requests_every_time_and_shows_a_change_made_over_v4_at_once() {
    let (sim, demo) = common::sim::with_demo().await;
    let made = issues(&sim, &demo.token, demo.project_id, 5).await;
    let gateway = TestGateway::start(&sim.url()).await;
    let list = format!("/projects/{}/issues", demo.project_id);
    for call in ["first", "repeated"] {
        sim.clear_requests();
        let items = v3_ok(&gateway, &list, &demo.token).await;
        assert!(items.as_array().unwrap().len() >= made.len(), "{items}");
        assert_eq!(subscribed(&items), all_true(&items), "{call}");
        assert_eq!(
            calls(&sim),
            [
                format!("GET /api/v4/projects/{}/issues", demo.project_id),
                "POST /api/graphql".to_owned()
            ],
            "{call} list"
        );
    }
    let query = &graphql_bodies(&sim)[0];
    assert!(
        query["query"].as_str().unwrap().contains("issues(iids:$i0"),
        "{query}"
    );
    assert_eq!(
        query["variables"]["p0"],
        json!([format!("gid://svc/Project/{}", demo.project_id)])
    );

    let (_, iid) = made[2];
    let unsubscribed = send_json(
        Method::POST,
        &format!(
            "{}/api/v4/projects/{}/issues/{iid}/unsubscribe",
            sim.url(),
            demo.project_id
        ),
        &demo.token,
        json!({}),
    )
    .await;
    assert_eq!(
        unsubscribed.status,
        StatusCode::CREATED,
        "{:?}",
        unsubscribed.body
    );
    let after = v3_ok(&gateway, &list, &demo.token).await;
    let changed = after
        .as_array()
        .unwrap()
        .iter()
        .find(|issue| issue["iid"] == json!(iid))
        .unwrap();
    assert_eq!(
        changed["subscribed"],
        json!(false),
        "a change made over V4 shows at once"
    );
    gateway.stop().await;
}

#[tokio::test]
async fn a_v3_merge_request_list_costs_two_backend_requests_every_time() {
    let (sim, demo) = common::sim::with_demo().await;
    merge_requests(&sim, &demo, 3).await;
    let gateway = TestGateway::start(&sim.url()).await;
    let list = format!("/projects/{}/merge_requests", demo.project_id);
    for call in ["first", "repeated"] {
        sim.clear_requests();
        let items = v3_ok(&gateway, &list, &demo.token).await;
        assert_eq!(subscribed(&items), all_true(&items), "{call}");
        assert_eq!(
            calls(&sim),
            [
                format!("GET /api/v4/projects/{}/merge_requests", demo.project_id),
                "POST /api/graphql".to_owned()
            ],
            "{call} list"
        );
    }
    let query = &graphql_bodies(&sim)[0];
    assert!(
        query["query"].as_str().unwrap().contains("mergeRequests(iids:"),
        "{query}"
    );
    gateway.stop().await;
}

#[tokio::test]
async fn a_list_spanning_two_projects_is_completed_in_one_graphql_request() {
    let (sim, demo) = common::sim::with_demo().await;
    issues(&sim, &demo.token, demo.project_id, 2).await;
    let other = send_json(
        Method::POST,
        &format!("{}/api/v4/projects", sim.url()),
        &demo.token,
        json!({"name": "second"}),
    )
    .await;
    assert_eq!(other.status, StatusCode::CREATED, "{:?}", other.body);
    let other = other.json()["id"].as_u64().unwrap();
    issues(&sim, &demo.token, other, 2).await;
    let gateway = TestGateway::start(&sim.url()).await;

    sim.clear_requests();
    let list = v3_ok(&gateway, "/issues", &demo.token).await;
    let projects: std::collections::BTreeSet<u64> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|issue| issue["project_id"].as_u64().unwrap())
        .collect();
    assert_eq!(projects, [demo.project_id, other].into(), "{list}");
    assert_eq!(subscribed(&list), all_true(&list));
    assert_eq!(
        calls(&sim),
        ["GET /api/v4/issues", "POST /api/graphql"],
        "one GraphQL request for both projects"
    );
    let query = &graphql_bodies(&sim)[0];
    assert!(
        query["variables"].get("p1").is_some(),
        "an alias per project: {query}"
    );
    gateway.stop().await;
}

#[tokio::test]
async fn without_graphql_lists_fetch_each_item_and_the_next_list_does_not_ask_graphql_again() {
    let (sim, demo) = sim_with(SimOptions {
        graphql: false,
        ..SimOptions::default()
    })
    .await;
    let made = issues(&sim, &demo.token, demo.project_id, 3).await;
    let gateway = TestGateway::start(&sim.url()).await;
    let list = format!("/projects/{}/issues", demo.project_id);
    let per_item = |calls: &[String]| {
        calls
            .iter()
            .filter(|call| call.starts_with(&format!("GET /api/v4/projects/{}/issues/", demo.project_id)))
            .count()
    };

    sim.clear_requests();
    let first = v3_ok(&gateway, &list, &demo.token).await;
    let items = first.as_array().unwrap().len();
    assert!(items >= made.len());
    assert_eq!(subscribed(&first), all_true(&first));
    let received = calls(&sim);
    assert_eq!(
        received.len(),
        2 + items,
        "the list, GraphQL's 404, one per item: {received:?}"
    );
    assert_eq!(received[1], "POST /api/graphql");
    assert_eq!(per_item(&received), items, "{received:?}");

    sim.clear_requests();
    let second = v3_ok(&gateway, &list, &demo.token).await;
    assert_eq!(subscribed(&second), all_true(&second));
    let received = calls(&sim);
    assert_eq!(
        received.len(),
        1 + items,
        "the list and one per item: {received:?}"
    );
    assert_eq!(per_item(&received), items, "{received:?}");
    assert!(
        !received.iter().any(|call| call.contains("graphql")),
        "the refusal is remembered: {received:?}"
    );
    let text = graphql_outcomes(&gateway).await;
    assert!(
        text.contains(r#"svcgate_graphql_total{kind="completion",outcome="refused"} 1"#),
        "{text}"
    );
    assert!(
        text.contains(r#"svcgate_graphql_total{kind="completion",outcome="skipped"} 1"#),
        "{text}"
    );
    gateway.stop().await;
}

/// Fills the demo project up to 100 issues, then unsubscribes the demo user from one of them (to see it answered
/// right); answers that one's iid.
async fn hundred_issues(sim: &SimHandle, demo: &DemoSeed) -> u64 {
    let listed = get(
        &format!(
            "{}/api/v4/projects/{}/issues?per_page=100",
            sim.url(),
            demo.project_id
        ),
        &demo.token,
    )
    .await;
    let already = listed.json().as_array().unwrap().len();
    let made = issues(sim, &demo.token, demo.project_id, 100 - already).await;
    let (_, iid) = made[10];
    let unsubscribed = send_json(
        Method::POST,
        &format!(
            "{}/api/v4/projects/{}/issues/{iid}/unsubscribe",
            sim.url(),
            demo.project_id
        ),
        &demo.token,
        json!({}),
    )
    .await;
    assert_eq!(unsubscribed.status, StatusCode::CREATED);
    iid
}

/// Reads the demo project's V3 list of 100 issues through `gateway`: checks every `subscribed` (all but
/// `unsubscribed`'s true) and answers the backend requests it cost and the items each GraphQL request asked,
/// most first.
async fn list_of_hundred(
    sim: &SimHandle,
    gateway: &TestGateway,
    demo: &DemoSeed,
    unsubscribed: u64,
) -> (Vec<String>, Vec<usize>) {
    sim.clear_requests();
    let list = v3_ok(
        gateway,
        &format!("/projects/{}/issues?per_page=100", demo.project_id),
        &demo.token,
    )
    .await;
    let items = list.as_array().unwrap();
    assert_eq!(items.len(), 100);
    let expected: Vec<Value> = items
        .iter()
        .map(|issue| json!(issue["iid"] != json!(unsubscribed)))
        .collect();
    assert_eq!(subscribed(&list), expected);
    let mut batches: Vec<usize> = graphql_bodies(sim)
        .iter()
        .map(|body| {
            assert!(
                body["query"]
                    .as_str()
                    .unwrap()
                    .contains("queryComplexity{limit score}"),
                "{body}"
            );
            body["variables"]["i0"].as_array().unwrap().len()
        })
        .collect();
    // Concurrent requests arrive in any order.
    batches.sort_unstable_by(|a, b| b.cmp(a));
    (calls(sim), batches)
}

#[tokio::test]
async fn a_list_of_100_issues_costs_two_backend_requests_first_call_and_repeated_none_refused() {
    let (sim, demo) = common::sim::with_demo().await;
    let unsubscribed = hundred_issues(&sim, &demo).await;
    let gateway = TestGateway::start(&sim.url()).await;
    for call in ["first", "repeated"] {
        let (received, batches) = list_of_hundred(&sim, &gateway, &demo, unsubscribed).await;
        assert_eq!(
            received,
            [
                format!("GET /api/v4/projects/{}/issues", demo.project_id),
                "POST /api/graphql".to_owned()
            ],
            "{call}: the list and one GraphQL request (items named by iid cost the service nothing more)"
        );
        assert_eq!(batches, [100], "{call}");
    }
    let text = graphql_outcomes(&gateway).await;
    assert!(
        text.contains(r#"svcgate_graphql_total{kind="completion",outcome="ok"} 2"#),
        "{text}"
    );
    assert!(
        !text.contains(r#"outcome="split""#),
        "no request refused for its complexity: {text}"
    );
    gateway.stop().await;
}

#[tokio::test]
async fn a_list_of_100_merge_requests_costs_two_backend_requests_first_call_and_repeated() {
    let (sim, demo) = common::sim::with_demo().await;
    let listed = get(
        &format!(
            "{}/api/v4/projects/{}/merge_requests?per_page=100",
            sim.url(),
            demo.project_id
        ),
        &demo.token,
    )
    .await;
    let already = listed.json().as_array().unwrap().len();
    merge_requests(&sim, &demo, 100 - already).await;
    let gateway = TestGateway::start(&sim.url()).await;
    let list = format!("/projects/{}/merge_requests?per_page=100", demo.project_id);
    for call in ["first", "repeated"] {
        sim.clear_requests();
        let items = v3_ok(&gateway, &list, &demo.token).await;
        assert_eq!(items.as_array().unwrap().len(), 100, "{call}");
        assert_eq!(subscribed(&items), all_true(&items), "{call}");
        assert_eq!(
            calls(&sim),
            [
                format!("GET /api/v4/projects/{}/merge_requests", demo.project_id),
                "POST /api/graphql".to_owned()
            ],
            "{call}"
        );
    }
    let text = graphql_outcomes(&gateway).await;
    assert!(!text.contains(r#"outcome="split""#), "{text}");
    gateway.stop().await;
}

/// Makes `count` more projects of the demo user, each with one issue.
async fn projects_with_an_issue(sim: &SimHandle, demo: &DemoSeed, count: usize) {
    for n in 0..count {
        let project = send_json(
            Method::POST,
            &format!("{}/api/v4/projects", sim.url()),
            &demo.token,
            json!({"name": format!("many-{n}")}),
        )
        .await;
        assert_eq!(project.status, StatusCode::CREATED, "{:?}", project.body);
        issues(sim, &demo.token, project.json()["id"].as_u64().unwrap(), 1).await;
    }
}

/// Reads the demo user's V3 list of issues over all projects through `gateway` (all subscribed) and answers
/// the backend requests it cost and how many projects each GraphQL request named, most first.
async fn list_over_projects(
    sim: &SimHandle,
    gateway: &TestGateway,
    demo: &DemoSeed,
) -> (Vec<String>, Vec<usize>) {
    sim.clear_requests();
    let items = v3_ok(gateway, "/issues?per_page=100", &demo.token).await;
    assert_eq!(subscribed(&items), all_true(&items));
    let mut aliases: Vec<usize> = graphql_bodies(sim)
        .iter()
        .map(|body| body["variables"].as_object().unwrap().len() / 2)
        .collect();
    aliases.sort_unstable_by(|a, b| b.cmp(a));
    (calls(sim), aliases)
}

#[tokio::test]
async fn a_backend_with_a_higher_complexity_limit_lets_the_second_list_name_more_projects_per_request() {
    let (sim, demo) = sim_with(SimOptions {
        graphql_max_complexity: Some(1_000),
        ..SimOptions::default()
    })
    .await;
    projects_with_an_issue(&sim, &demo, 40).await;
    let gateway = TestGateway::start(&sim.url()).await;
    let (received, first) = list_over_projects(&sim, &gateway, &demo).await;
    let (received_later, later) = list_over_projects(&sim, &gateway, &demo).await;
    assert_eq!(later.len(), 1, "the answers named 1,000: {received_later:?}");
    assert_eq!(received_later.len(), 2, "{received_later:?}");
    let projects = later[0];
    assert!(projects > 40, "{projects}");
    // The first request is sized to the documented 250 (3 + 13 per project alias: 19 projects) and goes alone;
    // its answer names 1,000, and the rest go in one request.
    assert_eq!(first, [projects - 19, 19], "the first list: {received:?}");
    gateway.stop().await;
}

#[tokio::test]
async fn a_backend_with_a_lower_complexity_limit_refuses_one_request_and_later_lists_fit_it() {
    let (sim, demo) = sim_with(SimOptions {
        graphql_max_complexity: Some(30),
        ..SimOptions::default()
    })
    .await;
    projects_with_an_issue(&sim, &demo, 30).await;
    let gateway = TestGateway::start(&sim.url()).await;
    let (received, first) = list_over_projects(&sim, &gateway, &demo).await;
    let projects: usize = first[1..].iter().sum();
    assert!(projects > 30, "{first:?}");
    // One request goes first (19 projects, refused: 250 over 30), then 2 projects a request (3 + 26).
    assert_eq!(first[0], 19, "{first:?}");
    assert!(first[1..].iter().all(|n| *n <= 2), "{first:?}");
    assert_eq!(first.len(), 1 + projects.div_ceil(2), "{received:?}");
    assert_eq!(
        received.len(),
        1 + first.len(),
        "no per-item request: {received:?}"
    );
    let (received, later) = list_over_projects(&sim, &gateway, &demo).await;
    assert_eq!(
        later.len(),
        projects.div_ceil(2),
        "remembered, none refused: {received:?}"
    );
    assert_eq!(received.len(), 1 + later.len(), "{received:?}");
    let text = graphql_outcomes(&gateway).await;
    assert!(
        text.contains(r#"svcgate_graphql_total{kind="completion",outcome="split"} 1"#),
        "one refused request in the retry time: {text}"
    );
    gateway.stop().await;
}

#[tokio::test]
async fn a_cold_read_by_global_id_costs_two_requests_and_an_invisible_one_is_v3s_404() {
    let (sim, demo) = common::sim::with_demo().await;
    let made = issues(&sim, &demo.token, demo.project_id, 30).await;
    let private = send_json(
        Method::POST,
        &format!("{}/api/v4/projects", sim.url()),
        common::sim::ADMIN,
        json!({"name": "hidden", "visibility": "private"}),
    )
    .await;
    assert_eq!(private.status, StatusCode::CREATED, "{:?}", private.body);
    let private = private.json()["id"].as_u64().unwrap();
    let hidden = issues(&sim, common::sim::ADMIN, private, 1).await;
    let gateway = TestGateway::start(&sim.url()).await;

    let (id, iid) = made[17];
    sim.clear_requests();
    let cold = v3(
        &gateway,
        &format!("/projects/{}/issues/{id}", demo.project_id),
        &demo.token,
    )
    .await;
    assert_eq!(cold.status, StatusCode::OK);
    assert_eq!(cold.json()["iid"], json!(iid));
    assert_eq!(
        calls(&sim),
        [
            "POST /api/graphql".to_owned(),
            format!("GET /api/v4/projects/{}/issues/{iid}", demo.project_id)
        ]
    );
    assert_eq!(
        graphql_bodies(&sim)[0]["variables"]["id"],
        json!(format!("gid://svc/Issue/{id}"))
    );

    // The project named by its path, checked against the answer's reference; another project's path is a 404.
    let (id, iid) = made[3];
    let encoded = demo.project_path.replace('/', "%2F");
    let by_path = v3(&gateway, &format!("/projects/{encoded}/issues/{id}"), &demo.token).await;
    assert_eq!(by_path.status, StatusCode::OK);
    assert_eq!(by_path.json()["iid"], json!(iid));
    let (id, _) = made[4];
    let elsewhere = v3(&gateway, &format!("/projects/{private}/issues/{id}"), &demo.token).await;
    assert_eq!(elsewhere.status, StatusCode::NOT_FOUND);

    let (id, _) = hidden[0];
    sim.clear_requests();
    let invisible = v3(&gateway, &format!("/projects/{private}/issues/{id}"), &demo.token).await;
    assert_eq!(invisible.status, StatusCode::NOT_FOUND);
    assert_eq!(invisible.json(), json!({"message": "404 Not found"}));
    assert_eq!(
        calls(&sim),
        ["POST /api/graphql"],
        "answered at once, no bisection"
    );
    gateway.stop().await;
}

#[tokio::test]
async fn a_merge_request_by_global_id_resolves_in_one_graphql_request() {
    let (sim, demo) = common::sim::with_demo().await;
    let iids = merge_requests(&sim, &demo, 2).await;
    let listed = get(
        &format!(
            "{}/api/v4/projects/{}/merge_requests/{}",
            sim.url(),
            demo.project_id,
            iids[1]
        ),
        &demo.token,
    )
    .await
    .json();
    let id = listed["id"].as_u64().unwrap();
    let gateway = TestGateway::start(&sim.url()).await;
    sim.clear_requests();
    let answer = v3(
        &gateway,
        &format!("/projects/{}/merge_requests/{id}", demo.project_id),
        &demo.token,
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    assert_eq!(answer.json()["iid"], json!(iids[1]));
    let received = calls(&sim);
    assert_eq!(received[0], "POST /api/graphql", "{received:?}");
    assert!(
        !received.iter().any(|call| call.ends_with("/merge_requests")),
        "no bisection: {received:?}"
    );
    gateway.stop().await;
}

#[tokio::test]
async fn without_graphql_a_global_id_is_still_found_by_bisection() {
    let (sim, demo) = sim_with(SimOptions {
        graphql: false,
        ..SimOptions::default()
    })
    .await;
    let made = issues(&sim, &demo.token, demo.project_id, 250).await;
    let gateway = TestGateway::start(&sim.url()).await;
    let (id, iid) = made[201];
    sim.clear_requests();
    let answer = v3(
        &gateway,
        &format!("/projects/{}/issues/{id}", demo.project_id),
        &demo.token,
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.json()["iid"], json!(iid));
    let received = calls(&sim);
    assert_eq!(received[0], "POST /api/graphql", "{received:?}");
    let pages = received
        .iter()
        .filter(|call| **call == format!("GET /api/v4/projects/{}/issues", demo.project_id))
        .count();
    assert!(
        (1..=3).contains(&pages),
        "bisection read {pages} pages: {received:?}"
    );
    gateway.stop().await;
}

/// GraphQL answers as the token's own user, never the one `sudo` names: a list read with `sudo` completes its
/// items one by one, as the named user.
#[tokio::test]
async fn a_list_read_with_sudo_completes_its_items_one_by_one_as_the_named_user() {
    let (sim, demo) = common::sim::with_demo().await;
    issues(&sim, &demo.token, demo.project_id, 2).await;
    let gateway = TestGateway::start(&sim.url()).await;
    sim.clear_requests();
    let answer = common::send(
        Method::GET,
        &format!("{}/api/v3/projects/{}/issues", gateway.url(), demo.project_id),
        &[("private-token", common::sim::ADMIN), ("sudo", &demo.username)],
        None,
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    let list = answer.json();
    assert_eq!(
        subscribed(&list),
        all_true(&list),
        "the demo user's subscriptions"
    );
    let received = calls(&sim);
    assert!(
        !received.iter().any(|call| call.contains("graphql")),
        "{received:?}"
    );
    assert_eq!(received.len(), 1 + list.as_array().unwrap().len(), "{received:?}");
    gateway.stop().await;
}

#[tokio::test]
async fn a_global_id_named_under_another_projects_path_is_a_404_every_time_even_once_the_id_is_known() {
    let (sim, demo) = common::sim::with_demo().await;
    let made = issues(&sim, &demo.token, demo.project_id, 5).await;
    let other = send_json(
        Method::POST,
        &format!("{}/api/v4/projects", sim.url()),
        &demo.token,
        json!({"name": "other"}),
    )
    .await;
    assert_eq!(other.status, StatusCode::CREATED, "{:?}", other.body);
    let other = other.json();
    let other_path = other["path_with_namespace"].as_str().unwrap().replace('/', "%2F");
    // The other project has issues of the same iids, which a wrong lookup would answer.
    issues(&sim, &demo.token, other["id"].as_u64().unwrap(), 5).await;
    let gateway = TestGateway::start(&sim.url()).await;
    // The demo project's list teaches the index every id in it.
    let list = v3(
        &gateway,
        &format!("/projects/{}/issues", demo.project_id),
        &demo.token,
    )
    .await;
    assert_eq!(list.status, StatusCode::OK);

    let (id, iid) = made[2];
    for attempt in 1..=2 {
        let elsewhere = v3(
            &gateway,
            &format!("/projects/{other_path}/issues/{id}"),
            &demo.token,
        )
        .await;
        assert_eq!(
            elsewhere.status,
            StatusCode::NOT_FOUND,
            "attempt {attempt}: {:?}",
            elsewhere.body
        );
        assert_eq!(elsewhere.json(), json!({"message": "404 Not found"}));
    }
    let own_path = demo.project_path.replace('/', "%2F");
    for _ in 1..=2 {
        let home = v3(
            &gateway,
            &format!("/projects/{own_path}/issues/{id}"),
            &demo.token,
        )
        .await;
        assert_eq!(home.status, StatusCode::OK, "{:?}", home.body);
        assert_eq!(home.json()["iid"], json!(iid));
    }
    gateway.stop().await;
}

#[tokio::test]
async fn a_list_spanning_many_projects_is_cut_by_projects_so_no_request_is_refused_and_the_next_list_still_uses_graphql(
) {
    let (sim, demo) = common::sim::with_demo().await;
    projects_with_an_issue(&sim, &demo, 95).await;
    let gateway = TestGateway::start(&sim.url()).await;
    let list = "/issues?per_page=100";
    for call in ["first", "later"] {
        sim.clear_requests();
        let items = v3_ok(&gateway, list, &demo.token).await;
        let projects: std::collections::BTreeSet<u64> = items
            .as_array()
            .unwrap()
            .iter()
            .map(|issue| issue["project_id"].as_u64().unwrap())
            .collect();
        assert!(projects.len() > 90, "{call}: {} projects", projects.len());
        assert_eq!(subscribed(&items), all_true(&items), "{call}");
        let received = calls(&sim);
        let graphql = received.iter().filter(|call| call.contains("graphql")).count();
        // 3 + 13 per project alias within 250: 19 projects a request.
        assert_eq!(
            graphql,
            projects.len().div_ceil(19),
            "{call}: cut by projects: {received:?}"
        );
        assert_eq!(
            received.len(),
            1 + graphql,
            "{call}: no per-item request: {received:?}"
        );
        for body in graphql_bodies(&sim) {
            let length = body["query"].as_str().unwrap().len();
            assert!(length < 10_000, "{call}: a query of {length} characters");
        }
    }
    let text = graphql_outcomes(&gateway).await;
    assert!(!text.contains(r#"outcome="split""#), "no request refused: {text}");
    assert!(!text.contains(r#"outcome="refused""#), "{text}");
    assert!(!text.contains(r#"outcome="skipped""#), "{text}");
    gateway.stop().await;
}

#[tokio::test]
async fn a_refused_request_over_many_projects_leaves_later_lists_of_100_items_of_one_project_in_one_request()
{
    // A limit under which the first request over many projects is refused (19 projects, 250 over 30).
    let (sim, demo) = sim_with(SimOptions {
        graphql_max_complexity: Some(30),
        ..SimOptions::default()
    })
    .await;
    projects_with_an_issue(&sim, &demo, 30).await;
    let gateway = TestGateway::start(&sim.url()).await;
    let (received, first) = list_over_projects(&sim, &gateway, &demo).await;
    assert_eq!(first[0], 19, "{received:?}");
    let unsubscribed = hundred_issues(&sim, &demo).await;
    for call in ["first", "repeated"] {
        let (received, batches) = list_of_hundred(&sim, &gateway, &demo, unsubscribed).await;
        assert_eq!(batches, [100], "{call}: no lasting item shrink: {received:?}");
        assert_eq!(received.len(), 2, "{call}: {received:?}");
    }
    gateway.stop().await;
}

#[tokio::test]
async fn the_requests_held_back_behind_the_first_are_not_a_split_and_fit_a_tight_call_budget() {
    let (sim, demo) = common::sim::with_demo().await;
    projects_with_an_issue(&sim, &demo, 40).await;
    let probe = get(&format!("{}/api/v4/issues?per_page=100", sim.url()), &demo.token).await;
    let projects: std::collections::BTreeSet<u64> = probe
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|issue| issue["project_id"].as_u64().unwrap())
        .collect();
    // The first request alone (19 projects, 3 + 13 each within 250), then the rest, 19 projects a request.
    let graphql = 1 + (projects.len() - 19).div_ceil(19);
    let budget = u64::try_from(1 + graphql).unwrap();
    let gateway =
        TestGateway::start_with(&sim.url(), |raw| raw.max_backend_calls_per_request = Some(budget)).await;
    let (received, aliases) = list_over_projects(&sim, &gateway, &demo).await;
    assert_eq!(aliases.len(), graphql, "{received:?}");
    assert_eq!(received.len(), 1 + graphql, "no per-item request: {received:?}");
    let text = graphql_outcomes(&gateway).await;
    assert!(!text.contains(r#"outcome="split""#), "{text}");
    gateway.stop().await;
}

#[tokio::test]
async fn a_complexity_limited_list_falls_back_rather_than_split_past_the_call_budget_and_is_answered() {
    // A limit below the documented one: the first request, sized for 250, is refused.
    let (sim, demo) = sim_with(SimOptions {
        graphql_max_complexity: Some(30),
        ..SimOptions::default()
    })
    .await;
    projects_with_an_issue(&sim, &demo, 12).await;
    let probe = get(&format!("{}/api/v4/issues?per_page=100", sim.url()), &demo.token).await;
    let items = probe.json().as_array().unwrap().len();
    assert!(
        (13..=19).contains(&items),
        "one request's worth of projects: {items}"
    );
    // The list, one GraphQL request, then one request per item: what the list needs without GraphQL and one more.
    let budget = u64::try_from(items + 2).unwrap();
    let gateway =
        TestGateway::start_with(&sim.url(), |raw| raw.max_backend_calls_per_request = Some(budget)).await;
    sim.clear_requests();
    let list = v3_ok(&gateway, "/issues?per_page=100", &demo.token).await;
    assert_eq!(subscribed(&list), all_true(&list));
    let received = calls(&sim);
    let graphql = received.iter().filter(|call| call.contains("graphql")).count();
    assert_eq!(graphql, 1, "no split round past the budget: {received:?}");
    assert_eq!(received.len(), items + 2, "{received:?}");
    gateway.stop().await;
}

#[tokio::test]
async fn a_backend_whose_global_ids_name_another_app_is_remembered_as_refusing_graphql_and_lists_are_still_right(
) {
    let (sim, demo) = sim_with(SimOptions {
        identifier_word: "other".to_owned(),
        ..SimOptions::default()
    })
    .await;
    issues(&sim, &demo.token, demo.project_id, 3).await;
    let gateway = TestGateway::start(&sim.url()).await;
    let list = format!("/projects/{}/issues", demo.project_id);

    sim.clear_requests();
    let first = v3_ok(&gateway, &list, &demo.token).await;
    assert_eq!(subscribed(&first), all_true(&first));
    let items = first.as_array().unwrap().len();
    let received = calls(&sim);
    assert_eq!(
        received.len(),
        2 + items,
        "the list, GraphQL answering none of it, one per item: {received:?}"
    );

    sim.clear_requests();
    let second = v3_ok(&gateway, &list, &demo.token).await;
    assert_eq!(subscribed(&second), all_true(&second));
    let received = calls(&sim);
    assert!(
        !received.iter().any(|call| call.contains("graphql")),
        "an answer that answered nothing is remembered: {received:?}"
    );
    assert_eq!(received.len(), 1 + items, "{received:?}");
    gateway.stop().await;
}

//! V3's authentication and parameters through svcgate → svc-sim: which routes turned anonymous callers away
//! (`rules/v3-auth.toml`), where a V3 caller's token may be, and the parameter forms V3 accepted.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::common::{send, Answer, TestGateway};
use http::{Method, StatusCode};
use serde_json::{json, Value};
use svc_sim::{DemoSeed, SimHandle};

const ADMIN: &str = "root-token";

struct World {
    _sim: SimHandle,
    demo: DemoSeed,
    gateway: TestGateway,
    public: u64,
    private: u64,
}

impl World {
    async fn new() -> Self {
        let (sim, demo, gateway) = common::sim::with_gateway().await;
        let mut world = World {
            _sim: sim,
            demo,
            gateway,
            public: 0,
            private: 0,
        };
        world.public = world.project("open-tool", 20).await;
        world.private = world.project("closed-tool", 0).await;
        world
    }

    fn url(&self, path: &str) -> String {
        format!("{}/api/v3{path}", self.gateway.url())
    }

    async fn project(&self, name: &str, visibility_level: u64) -> u64 {
        let created = self
            .as_demo(
                Method::POST,
                "/projects",
                Some(json!({"name": name, "visibility_level": visibility_level})),
            )
            .await;
        assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
        created.json()["id"].as_u64().unwrap()
    }

    async fn as_demo(&self, method: Method, path: &str, body: Option<Value>) -> Answer {
        let body = body.map(|body| ("application/json", serde_json::to_vec(&body).unwrap()));
        send(
            method,
            &self.url(path),
            &[("private-token", &self.demo.token)],
            body,
        )
        .await
    }

    async fn anonymous(&self, method: Method, path: &str) -> Answer {
        send(method, &self.url(path), &[], None).await
    }

    /// Sends each call without credentials and asserts that its answer is what `expect` says.
    async fn expect_anonymous(&self, expect: Expect, calls: impl IntoIterator<Item = (Method, String)>) {
        for (method, path) in calls {
            let answer = self.anonymous(method.clone(), &path).await;
            let what = format!("{method} {path}");
            match expect {
                Expect::Refused => assert_unauthorized(&answer, &what),
                Expect::Served => assert_ne!(
                    answer.status,
                    StatusCode::UNAUTHORIZED,
                    "{what}: {:?}",
                    answer.body
                ),
                Expect::List => {
                    assert_eq!(answer.status, StatusCode::OK, "{what}: {:?}", answer.body);
                    assert!(answer.json().is_array(), "{what}");
                }
                Expect::Status(status) => {
                    assert_eq!(answer.status, status, "{what}: {:?}", answer.body);
                }
            }
        }
    }
}

/// What an anonymous call must be answered.
#[derive(Clone, Copy)]
enum Expect {
    /// V3's 401, `{"message": "401 Unauthorized"}`.
    Refused,
    /// Anything but 401: the backend's own answer.
    Served,
    /// 200 with a JSON array.
    List,
    /// Exactly this status.
    Status(StatusCode),
}

/// `GET` calls of `paths`.
fn gets(paths: impl IntoIterator<Item = String>) -> impl Iterator<Item = (Method, String)> {
    paths.into_iter().map(|path| (Method::GET, path))
}

fn assert_unauthorized(answer: &Answer, what: &str) {
    assert_eq!(
        answer.status,
        StatusCode::UNAUTHORIZED,
        "{what}: {:?}",
        answer.body
    );
    assert_eq!(answer.json(), json!({"message": "401 Unauthorized"}), "{what}");
}

/// `lib/api/v3/merge_requests.rb`, `milestones.rb`, `commits.rb`, `triggers.rb`, `groups.rb`, `boards.rb`,
/// `issues.rb` open with `before { authenticate! }` (triggers call it per route); V3's request specs expect 401
/// for `api_user = nil`, e.g. spec/requests/api/v3/builds_spec.rb "unauthorized user … does not return project
/// builds" (401) on a project whose builds are otherwise readable.
#[tokio::test]
async fn an_anonymous_call_to_an_authenticated_v3_module_is_401_even_on_a_public_project() {
    let world = World::new().await;
    let public = world.public;
    world
        .expect_anonymous(
            Expect::Refused,
            gets([
                format!("/projects/{public}/merge_requests"),
                format!("/projects/{public}/milestones"),
                format!("/projects/{public}/repository/commits"),
                format!("/projects/{public}/triggers"),
                format!("/projects/{public}/boards"),
                format!("/projects/{public}/builds"),
                format!("/projects/{public}/issues"),
                format!("/projects/{public}/labels"),
                "/groups".to_owned(),
                "/issues".to_owned(),
                "/projects".to_owned(),
            ]),
        )
        .await;
    // The same calls with a token are served.
    let listed = world
        .as_demo(Method::GET, &format!("/projects/{public}/milestones"), None)
        .await;
    assert_eq!(listed.status, StatusCode::OK, "{:?}", listed.body);
}

/// `before { authenticate! }` ran before `user_project` looked the project up, so a private project is 401 to an
/// anonymous caller, not 404 (lib/api/v3/issues.rb, merge_requests.rb).
#[tokio::test]
async fn an_anonymous_call_on_a_private_project_is_401_where_v3_authenticated() {
    let world = World::new().await;
    let private = world.private;
    world
        .expect_anonymous(
            Expect::Refused,
            gets([
                format!("/projects/{private}/issues"),
                format!("/projects/{private}/merge_requests"),
                format!("/projects/{private}/milestones"),
            ]),
        )
        .await;
    let delete = world
        .anonymous(Method::DELETE, &format!("/projects/{private}"))
        .await;
    assert_unauthorized(&delete, "DELETE /projects/:id (authenticate_non_get!)");
}

/// `lib/api/v3/projects.rb` ran `authenticate_non_get!` (project reads and events served anonymous callers) and
/// `lib/api/v3/repositories.rb` only `authorize! :download_code`: these keep the backend's own answers, 200 on a
/// public project and 404 on a private one.
#[tokio::test]
async fn routes_that_served_anonymous_callers_keep_their_answers() {
    let world = World::new().await;
    let (public, private) = (world.public, world.private);
    let project = world.anonymous(Method::GET, &format!("/projects/{public}")).await;
    assert_eq!(project.status, StatusCode::OK, "{:?}", project.body);
    let events = world
        .anonymous(Method::GET, &format!("/projects/{public}/events"))
        .await;
    assert_eq!(events.status, StatusCode::OK, "{:?}", events.body);
    world
        .expect_anonymous(
            Expect::Status(StatusCode::NOT_FOUND),
            gets([
                format!("/projects/{private}"),
                format!("/projects/{private}/events"),
                format!("/projects/{private}/repository/tree"),
            ]),
        )
        .await;
    let tree = world
        .anonymous(Method::GET, &format!("/projects/{public}/repository/tree"))
        .await;
    assert_ne!(tree.status, StatusCode::UNAUTHORIZED, "{:?}", tree.body);
}

/// V3 read `private_token` from the merged parameters (query, form or JSON body) for every method, and OAuth's
/// `access_token` likewise (`lib/gitlab/auth/user_auth_finders.rb` `find_user_from_access_token`, Doorkeeper's
/// `from_access_token_param`): spec/requests/api/v3/issues_spec.rb "DELETE /projects/:id/issues/:issue_id" as
/// an owner, with the token in a form body.
#[tokio::test]
async fn a_token_in_the_query_or_a_form_or_json_body_authenticates_every_method() {
    let world = World::new().await;
    let token = world.demo.token.clone();
    let public = world.public;

    let issue = world
        .as_demo(
            Method::POST,
            &format!("/projects/{public}/issues"),
            Some(json!({"title": "Delete me"})),
        )
        .await;
    assert_eq!(issue.status, StatusCode::CREATED, "{:?}", issue.body);
    let issue_id = issue.json()["id"].as_u64().unwrap();

    let listed = send(
        Method::GET,
        &world.url(&format!("/projects/{public}/issues?private_token={token}")),
        &[],
        None,
    )
    .await;
    assert_eq!(listed.status, StatusCode::OK, "{:?}", listed.body);
    assert_eq!(listed.json()[0]["id"], json!(issue_id));

    let with_access_token = send(
        Method::GET,
        &world.url(&format!("/projects/{public}/milestones?access_token={token}")),
        &[],
        None,
    )
    .await;
    assert_eq!(
        with_access_token.status,
        StatusCode::OK,
        "{:?}",
        with_access_token.body
    );

    let created = send(
        Method::POST,
        &world.url(&format!("/projects/{public}/milestones")),
        &[],
        Some((
            "application/json",
            serde_json::to_vec(&json!({"title": "v1", "private_token": token})).unwrap(),
        )),
    )
    .await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    assert_eq!(created.json()["title"], json!("v1"));

    let deleted = send(
        Method::DELETE,
        &world.url(&format!("/projects/{public}/issues/{issue_id}")),
        &[],
        Some((
            "application/x-www-form-urlencoded",
            format!("private_token={token}").into_bytes(),
        )),
    )
    .await;
    assert_eq!(deleted.status, StatusCode::OK, "{:?}", deleted.body);
    let gone = world
        .as_demo(
            Method::GET,
            &format!("/projects/{public}/issues/{issue_id}"),
            None,
        )
        .await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND, "{:?}", gone.body);

    let wrong = send(
        Method::GET,
        &world.url(&format!("/projects/{public}/issues?private_token=not-a-token")),
        &[],
        None,
    )
    .await;
    assert_unauthorized(&wrong, "an unknown token");
}

/// lib/api/v3/milestones.rb `optional :iid` (spec/requests/api/v3/milestones_spec.rb "returns a milestone by
/// iid", which sends one `iid`): V4 reads only `iids[]`.
#[tokio::test]
async fn a_single_iid_or_an_indexed_iid_selects_milestones() {
    let world = World::new().await;
    let public = world.public;
    let mut iids = Vec::new();
    for title in ["v1", "v2", "v3"] {
        let created = world
            .as_demo(
                Method::POST,
                &format!("/projects/{public}/milestones"),
                Some(json!({"title": title})),
            )
            .await;
        assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
        iids.push(created.json()["iid"].as_u64().unwrap());
    }
    for query in [format!("iid={}", iids[1]), format!("iid[0]={}", iids[1])] {
        let listed = world
            .as_demo(
                Method::GET,
                &format!("/projects/{public}/milestones?{query}"),
                None,
            )
            .await;
        assert_eq!(listed.status, StatusCode::OK, "{query}: {:?}", listed.body);
        let titles: Vec<Value> = listed
            .json()
            .as_array()
            .unwrap()
            .iter()
            .map(|item| item["title"].clone())
            .collect();
        assert_eq!(titles, [json!("v2")], "{query}");
    }
}

/// lib/api/v3/builds.rb `params :optional_scope` (`values: %w(pending running failed success canceled skipped)`,
/// `coerce_with` taking Rack's indexed hash): spec/requests/api/v3/builds_spec.rb "filter project with array of
/// scope elements" (`scope[0]=pending&scope[1]=running`: 200) and "respond 400 when scope contains invalid state"
/// (`scope[0]=pending&scope[1]=unknown_status`: 400).
#[tokio::test]
async fn builds_take_indexed_scopes_and_refuse_a_scope_v3_did_not_know() {
    let world = World::new().await;
    let public = world.public;
    for query in ["scope[0]=pending&scope[1]=running", "scope=skipped"] {
        let listed = world
            .as_demo(Method::GET, &format!("/projects/{public}/builds?{query}"), None)
            .await;
        assert_eq!(listed.status, StatusCode::OK, "{query}: {:?}", listed.body);
        assert!(listed.json().is_array(), "{query}");
    }
    // `created` and `manual` are V4 job scopes, not V3 build scopes. V3's `coerce_with` made an array
    // (`scope[]=`, not Rack's indexed hash) `['unknown']`, whatever its values.
    for query in [
        "scope[0]=pending&scope[1]=unknown_status",
        "scope=unknown",
        "scope=created",
        "scope[]=success",
    ] {
        let refused = world
            .as_demo(Method::GET, &format!("/projects/{public}/builds?{query}"), None)
            .await;
        assert_eq!(
            refused.status,
            StatusCode::BAD_REQUEST,
            "{query}: {:?}",
            refused.body
        );
        assert_eq!(
            refused.json(),
            json!({"error": "scope does not have a valid value"}),
            "{query}"
        );
    }
}

/// lib/api/v3/issues.rb passes `milestone` to `IssuesFinder` as `milestone_title`, where `No Milestone` selects
/// issues without one (spec/requests/api/v3/issues_spec.rb "returns an array of issues with no milestone").
#[tokio::test]
async fn no_milestone_selects_the_issues_without_one() {
    let world = World::new().await;
    let public = world.public;
    let milestone = world
        .as_demo(
            Method::POST,
            &format!("/projects/{public}/milestones"),
            Some(json!({"title": "v1"})),
        )
        .await
        .json();
    let planned = world
        .as_demo(
            Method::POST,
            &format!("/projects/{public}/issues"),
            Some(json!({"title": "planned", "milestone_id": milestone["id"]})),
        )
        .await;
    assert_eq!(planned.status, StatusCode::CREATED, "{:?}", planned.body);
    let loose = world
        .as_demo(
            Method::POST,
            &format!("/projects/{public}/issues"),
            Some(json!({"title": "loose"})),
        )
        .await;
    assert_eq!(loose.status, StatusCode::CREATED, "{:?}", loose.body);
    for path in [
        format!("/projects/{public}/issues?milestone=No%20Milestone"),
        format!("/projects/{public}/issues?milestone=No+Milestone"),
    ] {
        let listed = world.as_demo(Method::GET, &path, None).await;
        assert_eq!(listed.status, StatusCode::OK, "{path}: {:?}", listed.body);
        let titles: Vec<Value> = listed
            .json()
            .as_array()
            .unwrap()
            .iter()
            .map(|item| item["title"].clone())
            .collect();
        assert_eq!(titles, [json!("loose")], "{path}");
    }
    // The caller's own issues everywhere (the demo project's too): none with a milestone.
    let mine = world
        .as_demo(Method::GET, "/issues?milestone=No%20Milestone", None)
        .await;
    assert_eq!(mine.status, StatusCode::OK, "{:?}", mine.body);
    let titles: Vec<Value> = mine
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["title"].clone())
        .collect();
    assert!(titles.contains(&json!("loose")), "{titles:?}");
    assert!(!titles.contains(&json!("planned")), "{titles:?}");
}

/// A CORS preflight carries no credential by design (Grape answered OPTIONS itself, before any `before` block), and
/// Rack served `HEAD` through the `GET` route, its `authenticate!` included (lib/api/v3/issues.rb
/// `before { authenticate! }`; spec/requests/api/v3/issues_spec.rb "returns authentication error" for anonymous).
#[tokio::test]
async fn a_cors_preflight_is_never_refused_and_head_is_answered_as_get() {
    let world = World::new().await;
    let public = world.public;
    let preflight = send(
        Method::OPTIONS,
        &world.url(&format!("/projects/{public}/issues")),
        &[
            ("origin", "https://tool.example"),
            ("access-control-request-method", "GET"),
        ],
        None,
    )
    .await;
    assert_ne!(preflight.status, StatusCode::UNAUTHORIZED, "{:?}", preflight.body);
    let head = world
        .anonymous(Method::HEAD, &format!("/projects/{public}/issues"))
        .await;
    assert_eq!(head.status, StatusCode::UNAUTHORIZED);
    let project = world
        .anonymous(Method::HEAD, &format!("/projects/{public}"))
        .await;
    assert_eq!(project.status, StatusCode::OK);
}

/// svcgate answers 401 only when a request provably has no credential. V3 also took the web session
/// (`lib/api/helpers.rb` `find_user_from_warden`), Doorkeeper's `bearer_token` parameter
/// (`Doorkeeper::OAuth::Token.from_bearer_param`), and parameters of any body, multipart included
/// (spec/requests/api/v3/projects_spec.rb "POST /projects/:id/uploads" sends a multipart body): a cookie, or a body
/// svcgate does not open, is the backend's to judge.
#[tokio::test]
async fn a_cookie_a_bearer_token_parameter_or_an_unopened_body_is_left_to_the_backend() {
    let world = World::new().await;
    let (public, private) = (world.public, world.private);
    let token = world.demo.token.clone();

    let with_cookie = send(
        Method::GET,
        &world.url(&format!("/projects/{public}/issues")),
        &[("cookie", "_gitlab_session=0123abcd")],
        None,
    )
    .await;
    assert_eq!(with_cookie.status, StatusCode::OK, "{:?}", with_cookie.body);

    let bearer = send(
        Method::GET,
        &world.url(&format!("/projects/{private}/issues?bearer_token={token}")),
        &[],
        None,
    )
    .await;
    assert_eq!(bearer.status, StatusCode::OK, "{:?}", bearer.body);

    let boundary = "svcgate-boundary";
    let multipart = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"private_token\"\r\n\r\n{token}\r\n\
         --{boundary}\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nUploaded\r\n--{boundary}--\r\n"
    );
    let content_type = format!("multipart/form-data; boundary={boundary}");
    let created = send(
        Method::POST,
        &world.url(&format!("/projects/{private}/issues")),
        &[],
        Some((&content_type, multipart.into_bytes())),
    )
    .await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    assert_eq!(created.json()["title"], json!("Uploaded"));
}

/// lib/api/v3/runners.rb defines one `/runners` route, `DELETE /runners/:id`, behind `before { authenticate! }`;
/// `POST /runners`, `DELETE /runners` and `POST /runners/verify` are the shared API::Runner's (lib/api/runner.rb),
/// called with a runner's token, never a user's.
#[tokio::test]
async fn runner_token_routes_pass_and_only_v3s_runner_removal_is_refused_anonymously() {
    let world = World::new().await;
    for (method, path) in [
        (Method::POST, "/runners/verify"),
        (Method::POST, "/runners"),
        (Method::DELETE, "/runners"),
    ] {
        let answer = send(
            method.clone(),
            &world.url(path),
            &[],
            Some((
                "application/x-www-form-urlencoded",
                b"token=not-a-runner-token".to_vec(),
            )),
        )
        .await;
        assert_ne!(
            answer.status,
            StatusCode::UNAUTHORIZED,
            "{method} {path}: {:?}",
            answer.body
        );
    }
    let removal = world.anonymous(Method::DELETE, "/runners/1").await;
    assert_unauthorized(&removal, "DELETE /runners/:id");
}

/// Only V3's own routes of an authenticating module are refused: lib/api/v3/commits.rb and groups.rb list them;
/// `GET …/repository/commits/:sha/refs` and `GET /groups/:id/subgroups` are the shared V4 code's
/// (lib/api/commits.rb `before { authorize! :download_code, user_project }`, lib/api/groups.rb
/// `before { authenticate_non_get! }`), which served anonymous callers.
#[tokio::test]
async fn shared_v4_routes_under_an_authenticating_v3_module_serve_anonymous_callers() {
    let world = World::new().await;
    let public = world.public;
    let group = world
        .as_demo(
            Method::POST,
            "/groups",
            Some(json!({"name": "open-group", "path": "open-group", "visibility_level": 20})),
        )
        .await;
    assert_eq!(group.status, StatusCode::CREATED, "{:?}", group.body);
    let group = group.json()["id"].as_u64().unwrap();
    world
        .expect_anonymous(
            Expect::Served,
            gets([
                format!("/projects/{public}/repository/commits/master/refs"),
                format!("/projects/{public}/repository/commits/master/merge_requests"),
                format!("/groups/{group}/subgroups"),
            ]),
        )
        .await;
    world
        .expect_anonymous(
            Expect::Refused,
            gets([
                format!("/projects/{public}/repository/commits/master"),
                format!("/groups/{group}"),
                format!("/groups/{group}/projects"),
            ]),
        )
        .await;
}

/// The usage report names the caller whose token svcgate lifted from the query (`access_token`) or from a JSON
/// body (`private_token`), as it names one sending `PRIVATE-TOKEN` (lib/api/v3 read tokens from the merged
/// parameters: spec/requests/api/v3/issues_spec.rb sends `private_token` in the body).
#[tokio::test]
async fn a_caller_whose_token_was_in_the_query_or_body_is_counted_as_signed_in() {
    let world = World::new().await;
    let (public, token) = (world.public, world.demo.token.clone());
    let listed = send(
        Method::GET,
        &world.url(&format!("/projects/{public}/milestones?access_token={token}")),
        &[("user-agent", "token-in-query/1")],
        None,
    )
    .await;
    assert_eq!(listed.status, StatusCode::OK, "{:?}", listed.body);
    let created = send(
        Method::POST,
        &world.url(&format!("/projects/{public}/milestones")),
        &[("user-agent", "token-in-body/1")],
        Some((
            "application/json",
            serde_json::to_vec(&json!({"title": "v9", "private_token": token})).unwrap(),
        )),
    )
    .await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    let report = send(
        Method::GET,
        &format!("{}/-/svcgate/api/v3-usage", world.gateway.url()),
        &[("private-token", ADMIN)],
        None,
    )
    .await
    .json();
    let clients: Vec<Value> = report["routes"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|route| route["clients"].as_array().cloned().unwrap_or_default())
        .collect();
    for agent in ["token-in-query/1", "token-in-body/1"] {
        let client = clients
            .iter()
            .find(|client| client["user_agent"] == json!(agent))
            .unwrap_or_else(|| panic!("no client {agent} in {report}"));
        assert_eq!(client["user"], json!("demo"), "{agent}");
    }
}

/// A body svcgate opens to look for a token is read as every body it rewrites (src/rewrite/request.rs): a client
/// that stops sending is answered 408, not 400. (V3 itself read parameters from the body: lib/api/v3/milestones.rb
/// `post ":id/milestones"` with `private_token` among them.)
#[tokio::test]
async fn a_stalled_body_read_for_its_token_is_answered_408() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let sim = common::sim::start().await;
    let gateway = TestGateway::start_with(&sim.url(), |raw| {
        raw.body_read_timeout = Some("1s".to_owned());
    })
    .await;
    let mut stream = tokio::net::TcpStream::connect(gateway.address).await.unwrap();
    let head = "POST /api/v3/projects/1/milestones HTTP/1.1\r\nhost: svcgate\r\n\
                content-type: application/json\r\ncontent-length: 100\r\n\r\n{\"title\":";
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut answer = vec![0u8; 4096];
    let read = common::within(10, "the answer to a stalled body", stream.read(&mut answer))
        .await
        .unwrap();
    let text = String::from_utf8_lossy(&answer[..read]).to_lowercase();
    assert!(text.starts_with("http/1.1 408"), "{text}");
}

/// A body that decides nothing for svcgate is not read for a token: on a route with no `[[auth]]` entry and no rule
/// (`POST /projects/:id/statuses/:sha`, the shared V4 lib/api/commit_statuses.rb) it streams to the backend as it
/// arrives, so a slow client is the backend's to wait for, not answered 408 by svcgate's body timeout.
#[tokio::test]
async fn a_body_on_a_route_that_needs_no_token_is_streamed_unread() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let sim = common::sim::start().await;
    let gateway = TestGateway::start_with(&sim.url(), |raw| {
        raw.body_read_timeout = Some("1s".to_owned());
    })
    .await;
    let mut stream = tokio::net::TcpStream::connect(gateway.address).await.unwrap();
    let head = "POST /api/v3/projects/1/statuses/abc HTTP/1.1\r\nhost: svcgate\r\n\
                content-type: application/json\r\ncontent-length: 100\r\n\r\n{\"state\":";
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut answer = vec![0u8; 4096];
    let early = tokio::time::timeout(std::time::Duration::from_secs(2), stream.read(&mut answer)).await;
    if let Ok(Ok(read)) = early {
        let text = String::from_utf8_lossy(&answer[..read]).to_lowercase();
        assert!(!text.starts_with("http/1.1 408"), "{text}");
        assert!(!text.starts_with("http/1.1 400"), "{text}");
    }
}

/// V3's issue and merge request modules defined only their own routes (lib/api/v3/issues.rb with
/// time_tracking_endpoints.rb, merge_requests.rb, merge_request_diffs.rb, notes.rb, award_emoji.rb, subscriptions.rb,
/// all `before { authenticate! }`); `GET …/issues/:issue_iid/participants`, `…/closed_by` and
/// `GET …/merge_requests/:merge_request_iid/participants` were the shared V4 code's (lib/api/issues.rb and
/// lib/api/merge_requests.rb, `before { authenticate_non_get! }`), which served anonymous callers of a public project
/// (doc/api/issues.md "Participants on issues": credentials only "if the project is private or the issue is
/// confidential"). Writes there authenticated (lib/api/todos.rb, subscriptions.rb: `before { authenticate! }`).
#[tokio::test]
async fn shared_v4_issue_and_merge_request_reads_serve_anonymous_callers_but_v3s_own_routes_answer_401() {
    let world = World::new().await;
    let p = world.demo.project_id;
    let issue = world
        .as_demo(
            Method::POST,
            &format!("/projects/{p}/issues"),
            Some(json!({"title": "Shared routes"})),
        )
        .await;
    assert_eq!(issue.status, StatusCode::CREATED, "{:?}", issue.body);
    let (issue_id, issue_iid) = (issue.json()["id"].clone(), issue.json()["iid"].clone());
    let branch = world
        .as_demo(
            Method::POST,
            &format!("/projects/{p}/repository/branches"),
            Some(json!({"branch_name": "shared", "ref": "main"})),
        )
        .await;
    assert_eq!(branch.status, StatusCode::CREATED, "{:?}", branch.body);
    let commit = world
        .as_demo(
            Method::POST,
            &format!("/projects/{p}/repository/commits"),
            Some(json!({
                "branch_name": "shared",
                "commit_message": "shared",
                "actions": [{"action": "create", "file_path": "shared.txt", "content": "ok"}],
            })),
        )
        .await;
    assert_eq!(commit.status, StatusCode::CREATED, "{:?}", commit.body);
    let mr = world
        .as_demo(
            Method::POST,
            &format!("/projects/{p}/merge_requests"),
            Some(json!({"title": "Shared", "source_branch": "shared", "target_branch": "main"})),
        )
        .await;
    assert_eq!(mr.status, StatusCode::CREATED, "{:?}", mr.body);
    let (mr_id, mr_iid) = (mr.json()["id"].clone(), mr.json()["iid"].clone());

    world
        .expect_anonymous(
            Expect::List,
            gets([
                format!("/projects/{p}/issues/{issue_iid}/participants"),
                format!("/projects/{p}/issues/{issue_iid}/closed_by"),
                format!("/projects/{p}/merge_requests/{mr_iid}/participants"),
            ]),
        )
        .await;
    world
        .expect_anonymous(
            Expect::Refused,
            gets([
                format!("/projects/{p}/issues/{issue_id}"),
                format!("/projects/{p}/issues/{issue_id}/notes"),
                format!("/projects/{p}/issues/{issue_id}/time_stats"),
                format!("/projects/{p}/issues/{issue_id}/award_emoji"),
                format!("/projects/{p}/merge_requests/{mr_id}"),
                format!("/projects/{p}/merge_requests/{mr_id}/changes"),
                format!("/projects/{p}/merge_requests/{mr_id}/versions"),
                format!("/projects/{p}/merge_requests/{mr_id}/closes_issues"),
                format!("/projects/{p}/merge_request/{mr_id}/commits"),
            ]),
        )
        .await;
    world
        .expect_anonymous(
            Expect::Refused,
            [
                (
                    Method::POST,
                    format!("/projects/{p}/issues/{issue_id}/subscription"),
                ),
                (Method::PUT, format!("/projects/{p}/merge_requests/{mr_id}/merge")),
                (
                    Method::POST,
                    format!("/projects/{p}/issues/{issue_id}/add_spent_time"),
                ),
                (Method::POST, format!("/projects/{p}/issues/{issue_iid}/todo")),
                (
                    Method::POST,
                    format!("/projects/{p}/merge_requests/{mr_iid}/subscribe"),
                ),
            ],
        )
        .await;
}

/// Each authenticating V3 module's own routes, now listed one by one in rules/v3-auth.toml (ahead of the shared V4
/// routes that authenticated as well), still answer an anonymous caller 401 on a public project
/// (lib/api/v3/milestones.rb, labels.rb, boards.rb, builds.rb, project_snippets.rb, environments.rb, members.rb,
/// project_hooks.rb, deploy_keys.rb, variables.rb, runners.rb, triggers.rb, services.rb, snippets.rb, todos.rb,
/// users.rb, system_hooks.rb; e.g. spec/requests/api/v3/milestones_spec.rb "returns a 401 error if user not
/// authenticated").
#[tokio::test]
async fn the_listed_routes_of_each_authenticating_v3_module_answer_401_to_anonymous_callers() {
    let world = World::new().await;
    let p = world.demo.project_id;
    let g = world.demo.group_id;
    world
        .expect_anonymous(
            Expect::Refused,
            [
                (Method::GET, format!("/projects/{p}/milestones/1/issues")),
                (Method::GET, format!("/projects/{p}/labels")),
                (Method::DELETE, format!("/projects/{p}/labels?name=bug")),
                (Method::POST, format!("/projects/{p}/labels/1/subscription")),
                (Method::GET, format!("/projects/{p}/boards/1/lists")),
                (Method::GET, format!("/projects/{p}/builds/1/trace")),
                (
                    Method::GET,
                    format!("/projects/{p}/builds/artifacts/feature/x/download?job=test"),
                ),
                (Method::GET, format!("/projects/{p}/snippets/1/raw")),
                (Method::GET, format!("/projects/{p}/snippets/1/notes")),
                (Method::GET, format!("/projects/{p}/environments")),
                (Method::DELETE, format!("/projects/{p}/environments/1")),
                (Method::GET, format!("/projects/{p}/members/1")),
                (Method::GET, format!("/groups/{g}/members")),
                (Method::GET, format!("/projects/{p}/hooks/1")),
                (Method::GET, format!("/projects/{p}/keys")),
                (Method::DELETE, format!("/projects/{p}/deploy_keys/1/disable")),
                (Method::DELETE, format!("/projects/{p}/variables/KEY")),
                (Method::DELETE, format!("/projects/{p}/runners/1")),
                (Method::GET, format!("/projects/{p}/triggers/sometoken")),
                (Method::GET, format!("/projects/{p}/services/slack")),
                (Method::GET, "/snippets/public".to_owned()),
                (Method::GET, "/snippets/1/raw".to_owned()),
                (Method::DELETE, "/todos".to_owned()),
                (Method::DELETE, "/todos/1".to_owned()),
                (Method::GET, "/user/keys".to_owned()),
                (Method::GET, "/users/1/keys".to_owned()),
                (Method::GET, "/hooks".to_owned()),
            ],
        )
        .await;
}

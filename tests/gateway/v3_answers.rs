//! Answers, statuses and permissions as the last V3 release (10.8) gave them, over real sockets (client → svcgate
//! → svc-sim). Each test cites the V3 code or request spec of the service's public repository it follows
//! (`lib/api/v3/*.rb`, `spec/requests/api/v3/*_spec.rb`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::common::{send, send_json, TestGateway};
use http::{Method, StatusCode};
use serde_json::{json, Value};
use svc_sim::SimHandle;

struct World {
    sim: SimHandle,
    gateway: TestGateway,
    token: String,
    project: u64,
}

impl World {
    async fn new() -> Self {
        let (sim, demo, gateway) = common::sim::with_gateway().await;
        World {
            token: demo.token.clone(),
            project: demo.project_id,
            sim,
            gateway,
        }
    }

    fn v3(&self, path: &str) -> String {
        format!("{}/api/v3{path}", self.gateway.url())
    }

    fn v4(&self, path: &str) -> String {
        format!("{}/api/v4{path}", self.sim.url())
    }

    /// The demo project's first issue (written by the demo user): its global id.
    async fn own_issue_id(&self) -> u64 {
        let issues = common::get(
            &self.v4(&format!("/projects/{}/issues?sort=asc", self.project)),
            &self.token,
        )
        .await
        .json();
        issues[0]["id"].as_u64().unwrap()
    }

    /// A new user who is a member of the demo project at `access_level`; their token.
    async fn member(&self, username: &str, access_level: u64) -> String {
        let (id, token) = self.sim.create_user(username, false);
        let added = send_json(
            Method::POST,
            &self.v4(&format!("/projects/{}/members", self.project)),
            &self.token,
            json!({"user_id": id, "access_level": access_level}),
        )
        .await;
        assert_eq!(added.status, StatusCode::CREATED, "{:?}", added.body);
        token
    }
}

/// A request with a form body (as V3 clients sent them) and a token.
async fn send_form(method: Method, url: &str, token: &str, form: &str) -> common::Answer {
    send(
        method,
        url,
        &[("private-token", token)],
        Some(("application/x-www-form-urlencoded", form.as_bytes().to_vec())),
    )
    .await
}

fn sorted_keys(value: &Value) -> Vec<String> {
    let mut keys: Vec<String> = value.as_object().expect("an object").keys().cloned().collect();
    keys.sort();
    keys
}

fn sorted(names: &[&str]) -> Vec<String> {
    let mut names: Vec<String> = names.iter().map(|name| (*name).to_owned()).collect();
    names.sort();
    names
}

/// `spec/requests/api/v3/notes_spec.rb`, "returns a 400 bad request error if body not given" (issues, snippets):
/// Grape's `requires :body` answered before any lookup. An empty body passed validation and the model refused it,
/// which V3 answered 404 (`not_found!("Note …")`, `lib/api/v3/notes.rb`).
#[tokio::test]
async fn a_note_post_without_a_body_is_400_and_an_empty_body_stays_404() {
    let world = World::new().await;
    let issue = world.own_issue_id().await;
    let notes = world.v3(&format!("/projects/{}/issues/{issue}/notes", world.project));
    world.sim.clear_requests();

    let missing = send(Method::POST, &notes, &[("private-token", &world.token)], None).await;
    assert_eq!(missing.status, StatusCode::BAD_REQUEST);
    assert_eq!(missing.json(), json!({"error": "body is missing"}));
    assert!(
        world
            .sim
            .requests()
            .iter()
            .all(|request| request.method != "POST"),
        "nothing was created"
    );

    let other_field = send_form(Method::POST, &notes, &world.token, "created_at=2017-01-01").await;
    assert_eq!(other_field.status, StatusCode::BAD_REQUEST);

    let empty = send_form(Method::POST, &notes, &world.token, "body=").await;
    assert_eq!(empty.status, StatusCode::NOT_FOUND, "{:?}", empty.body);

    let given = send_form(Method::POST, &notes, &world.token, "body=hi%21").await;
    assert_eq!(given.status, StatusCode::CREATED, "{:?}", given.body);
    assert_eq!(given.json()["body"], json!("hi!"));
}

/// `spec/requests/api/v3/labels_spec.rb`, DELETE /projects/:id/labels "returns 400 for wrong parameters"
/// (`requires :name`; 10.8 served this route under /api/v3 from V4's `lib/api/labels.rb`, `version %w(v3 v4)`).
#[tokio::test]
async fn deleting_a_label_without_a_name_is_400() {
    let world = World::new().await;
    let labels = world.v3(&format!("/projects/{}/labels", world.project));
    world.sim.clear_requests();
    let answer = send(Method::DELETE, &labels, &[("private-token", &world.token)], None).await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert_eq!(answer.json(), json!({"error": "name is missing"}));
    assert!(world.sim.requests().is_empty(), "no backend call");
}

/// `lib/api/v3/snippets.rb`: PUT and DELETE /snippets/:id look the snippet up with
/// `snippets_for_current_user.find_by(id:)` and answer `not_found!('Snippet')` otherwise: another user's snippet,
/// public or not, is 404 and stays as it was.
#[tokio::test]
async fn another_users_snippet_is_404_for_put_and_delete() {
    let world = World::new().await;
    let (_, other) = world.sim.create_user("snippet-owner", false);
    let snippet = send_json(
        Method::POST,
        &world.v4("/snippets"),
        &other,
        json!({"title": "theirs", "file_name": "a.txt", "content": "x", "visibility": "public"}),
    )
    .await;
    assert_eq!(snippet.status, StatusCode::CREATED, "{:?}", snippet.body);
    let id = snippet.json()["id"].as_u64().unwrap();
    let url = world.v3(&format!("/snippets/{id}"));

    let put = send_form(Method::PUT, &url, &world.token, "title=mine").await;
    assert_eq!(put.status, StatusCode::NOT_FOUND, "{:?}", put.body);
    assert_eq!(put.json(), json!({"message": "404 Snippet Not Found"}));
    let delete = send(Method::DELETE, &url, &[("private-token", &world.token)], None).await;
    assert_eq!(delete.status, StatusCode::NOT_FOUND);
    assert_eq!(delete.json(), json!({"message": "404 Snippet Not Found"}));

    let kept = common::get(&world.v4(&format!("/snippets/{id}")), &other).await;
    assert_eq!(kept.status, StatusCode::OK);
    assert_eq!(kept.json()["title"], json!("theirs"));

    // The author still edits and deletes it through V3.
    let own = send_form(Method::PUT, &url, &other, "title=still%20theirs").await;
    assert_eq!(own.status, StatusCode::OK, "{:?}", own.body);
    assert_eq!(own.json()["title"], json!("still theirs"));
    let gone = send(Method::DELETE, &url, &[("private-token", &other)], None).await;
    assert!(gone.status.is_success(), "{:?}", gone.status);
}

/// `lib/api/users.rb` (10.8's V3 `users.rb` has no POST: V4's `API::Users` answered it under /api/v3, `version
/// %w(v3 v4)`), `POST /users`: `present user, with: Entities::UserPublic` (10.8's `UserPublic`,
/// `lib/api/entities.rb`), which has no `is_admin`.
#[tokio::test]
async fn a_created_user_is_answered_as_user_public_without_is_admin() {
    let world = World::new().await;
    let (_, admin) = world.sim.create_user("v3-admin", true);
    let created = send_form(
        Method::POST,
        &world.v3("/users"),
        &admin,
        "email=new%40example.com&password=secret-password&username=newbie&name=Newbie",
    )
    .await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    let user = created.json();
    assert!(user.get("is_admin").is_none(), "{user}");
    assert_eq!(user["username"], json!("newbie"));
    assert_eq!(
        sorted_keys(&user),
        sorted(&[
            "id",
            "name",
            "username",
            "state",
            "avatar_url",
            "web_url",
            "created_at",
            "bio",
            "location",
            "skype",
            "linkedin",
            "twitter",
            "website_url",
            "organization",
            "last_sign_in_at",
            "confirmed_at",
            "last_activity_on",
            "email",
            "theme_id",
            "color_scheme_id",
            "projects_limit",
            "current_sign_in_at",
            "identities",
            "can_create_group",
            "can_create_project",
            "two_factor_enabled",
            "external",
        ])
    );
}

/// `lib/api/v3/projects.rb`, `present_projects`: `options[:with] = ::API::Entities::BasicProjectDetails if
/// options[:simple]`, for every project list; 10.8's `BasicProjectDetails` (`lib/api/entities.rb`) has no
/// namespace, visibility or links.
#[tokio::test]
async fn simple_project_lists_answer_basic_project_details() {
    let world = World::new().await;
    let basic = sorted(&[
        "id",
        "description",
        "name",
        "name_with_namespace",
        "path",
        "path_with_namespace",
        "created_at",
        "default_branch",
        "tag_list",
        "ssh_url_to_repo",
        "http_url_to_repo",
        "web_url",
        "avatar_url",
        "star_count",
        "forks_count",
        "last_activity_at",
    ]);
    for path in [
        "/projects?simple=true",
        "/projects/owned?simple=1",
        "/projects/visible?simple=true",
    ] {
        let answer = common::get(&world.v3(path), &world.token).await;
        assert_eq!(answer.status, StatusCode::OK, "{path}");
        let list = answer.json();
        let project = list
            .as_array()
            .unwrap()
            .iter()
            .find(|project| project["id"] == world.project)
            .unwrap_or_else(|| panic!("{path}: the demo project in {list}"));
        assert_eq!(sorted_keys(project), basic, "{path}");
    }
    // Without `simple` (or with it false) the list keeps the full V3 project.
    let full = common::get(&world.v3("/projects?simple=false"), &world.token)
        .await
        .json();
    assert!(full[0].get("namespace").is_some() && full[0].get("permissions").is_some());
}

/// `lib/api/v3/entities.rb` (10.8): `Project` exposes `namespace` with `API::Entities::Namespace`, a
/// `NamespaceBasic` (`id, name, path, kind, full_path, parent_id`). The 9.2 bodies in the fixtures predate
/// `parent_id`; the code wins.
#[tokio::test]
async fn project_namespaces_keep_parent_id() {
    let world = World::new().await;
    let project = common::get(&world.v3(&format!("/projects/{}", world.project)), &world.token)
        .await
        .json();
    let namespace = project["namespace"].as_object().expect("a namespace");
    assert!(namespace.contains_key("parent_id"), "{project}");
    assert_eq!(namespace["parent_id"], Value::Null, "a top-level group");
}

/// `lib/api/v3/entities.rb` (10.8): `ProjectHook < ::API::Entities::Hook` exposes `confidential_issues_events`
/// (missing from the 9.2 fixture body); `job_events` as `build_events`.
#[tokio::test]
async fn project_hooks_keep_confidential_issues_events() {
    let world = World::new().await;
    let created = send_form(
        Method::POST,
        &world.v3(&format!("/projects/{}/hooks", world.project)),
        &world.token,
        "url=https%3A%2F%2Fhooks.example%2Fv3&confidential_issues_events=true&build_events=true",
    )
    .await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    let hook = created.json();
    assert_eq!(hook["confidential_issues_events"], json!(true), "{hook}");
    assert_eq!(hook["build_events"], json!(true));
    assert!(hook.get("job_events").is_none());
    let listed = common::get(
        &world.v3(&format!("/projects/{}/hooks", world.project)),
        &world.token,
    )
    .await
    .json();
    assert_eq!(listed[0]["confidential_issues_events"], json!(true));
}

/// `lib/api/v3/pipelines.rb`: the list presented `::API::Entities::Pipeline`, 10.8's full pipeline
/// (`PipelineBasic`'s `id, sha, ref, status` and `before_sha, tag, yaml_errors, user, created_at, updated_at,
/// started_at, finished_at, committed_at, duration, coverage`), none of V4's later fields.
#[tokio::test]
async fn pipeline_list_items_have_exactly_v3_keys() {
    let world = World::new().await;
    let answer = common::get(
        &world.v3(&format!("/projects/{}/pipelines", world.project)),
        &world.token,
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK);
    let list = answer.json();
    let first = list
        .as_array()
        .and_then(|items| items.first())
        .expect("the seeded pipeline");
    assert_eq!(
        sorted_keys(first),
        sorted(&[
            "id",
            "sha",
            "ref",
            "status",
            "before_sha",
            "tag",
            "yaml_errors",
            "user",
            "created_at",
            "updated_at",
            "started_at",
            "finished_at",
            "committed_at",
            "duration",
            "coverage",
        ])
    );
    assert!(first["user"].is_object(), "the full pipeline, fetched: {first}");
}

/// `lib/api/v3/projects.rb`, `PUT /projects/:id`: `authorize! :rename_project, user_project if
/// attrs[:name].present?`, an owner's ability: a master's rename is 403 `403 Forbidden` and changes nothing;
/// the master's other changes, and the owner's rename, go through.
#[tokio::test]
async fn a_master_cannot_rename_a_project_through_v3() {
    let world = World::new().await;
    let master = world.member("v3-master", 40).await;
    let url = world.v3(&format!("/projects/{}", world.project));
    world.sim.clear_requests();

    let renamed = send_form(Method::PUT, &url, &master, "name=Taken%20Over").await;
    assert_eq!(renamed.status, StatusCode::FORBIDDEN, "{:?}", renamed.body);
    assert_eq!(renamed.json(), json!({"message": "403 Forbidden"}));
    assert!(
        world.sim.requests().iter().all(|request| request.method != "PUT"),
        "the rename never reached the backend"
    );

    let described = send_form(Method::PUT, &url, &master, "description=by%20the%20master").await;
    assert_eq!(described.status, StatusCode::OK, "{:?}", described.body);

    let owner = send_form(Method::PUT, &url, &world.token, "name=Renamed%20By%20Owner").await;
    assert_eq!(owner.status, StatusCode::OK, "{:?}", owner.body);
    assert_eq!(owner.json()["name"], json!("Renamed By Owner"));
}

/// `lib/api/v3/award_emoji.rb`, POST: `not_found!('Award Emoji') unless can_read_awardable? &&
/// can_award_awardable?`; `Awardable#user_can_award?` refused a vote (`thumbsup`/`thumbsdown`, `+1`/`-1`
/// normalised) on what the caller wrote. Other emoji, and votes on others' issues, were awarded.
#[tokio::test]
async fn a_thumbsup_or_thumbsdown_on_ones_own_issue_or_note_is_404() {
    let world = World::new().await;
    let issue = world.own_issue_id().await;
    let awards = world.v3(&format!("/projects/{}/issues/{issue}/award_emoji", world.project));
    for name in ["thumbsup", "thumbsdown", "%2B1", "-1"] {
        let answer = send_form(Method::POST, &awards, &world.token, &format!("name={name}")).await;
        assert_eq!(answer.status, StatusCode::NOT_FOUND, "{name}: {:?}", answer.body);
        assert_eq!(answer.json(), json!({"message": "404 Award Emoji Not Found"}));
    }
    let smile = send_form(Method::POST, &awards, &world.token, "name=smile").await;
    assert_eq!(smile.status, StatusCode::CREATED, "{:?}", smile.body);

    // A note the caller wrote: the same refusal.
    let note = send_form(
        Method::POST,
        &world.v3(&format!("/projects/{}/issues/{issue}/notes", world.project)),
        &world.token,
        "body=mine",
    )
    .await
    .json();
    let note_awards = world.v3(&format!(
        "/projects/{}/issues/{issue}/notes/{}/award_emoji",
        world.project, note["id"]
    ));
    let own_note = send_form(Method::POST, &note_awards, &world.token, "name=thumbsup").await;
    assert_eq!(own_note.status, StatusCode::NOT_FOUND);

    // Someone else votes on it.
    let developer = world.member("v3-voter", 30).await;
    let voted = send_form(Method::POST, &awards, &developer, "name=thumbsup").await;
    assert_eq!(voted.status, StatusCode::CREATED, "{:?}", voted.body);
    let voted_note = send_form(Method::POST, &note_awards, &developer, "name=thumbsdown").await;
    assert_eq!(voted_note.status, StatusCode::CREATED, "{:?}", voted_note.body);
}

/// A confidential issue addressed by global id by a caller who may not see it: V3's `find_project_issue`
/// (`IssuesFinder#find`, `lib/api/v3/helpers.rb`) raised `RecordNotFound`, which `lib/api/api.rb` answered 404
/// `404 Not found` (v3 issues_spec "returns 404 for non project members"), whether or not svcgate knew the id
/// (`unseen` on the rule, for a known one).
#[tokio::test]
async fn an_issue_the_caller_cannot_see_by_global_id_is_v3s_404_not_found() {
    let world = World::new().await;
    let created = send_json(
        Method::POST,
        &world.v4(&format!("/projects/{}/issues", world.project)),
        &world.token,
        json!({"title": "secret", "confidential": true}),
    )
    .await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    let id = created.json()["id"].as_u64().unwrap();
    let (_, outsider) = world.sim.create_user("v3-outsider", false);
    let url = world.v3(&format!("/projects/{}/issues/{id}", world.project));

    // svcgate has not seen the id: its lookup, as the outsider, does not find it.
    let unknown = common::get(&url, &outsider).await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
    assert_eq!(unknown.json(), json!({"message": "404 Not found"}));

    // Known from the author's read: the backend's own refusal, in V3's words.
    let author = common::get(&url, &world.token).await;
    assert_eq!(author.status, StatusCode::OK);
    let known = common::get(&url, &outsider).await;
    assert_eq!(known.status, StatusCode::NOT_FOUND);
    assert_eq!(known.json(), json!({"message": "404 Not found"}));
    // The notes routes found the issue (`user_project.issues.find`) and refused with `not_found!("Notes")`
    // (`lib/api/v3/notes.rb`; notes_spec "returns 404 when not authorized").
    let notes = common::get(&format!("{url}/notes"), &outsider).await;
    assert_eq!(notes.status, StatusCode::NOT_FOUND);
    assert_eq!(notes.json(), json!({"message": "404 Notes Not Found"}));
}

/// A multipart body (as V3 clients sent file uploads) with one text field per `(name, value)`.
fn multipart(fields: &[(&str, &str)]) -> (&'static str, Vec<u8>) {
    let mut body = String::new();
    for (name, value) in fields {
        body.push_str(&format!(
            "--svcgate-boundary\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
        ));
    }
    body.push_str("--svcgate-boundary--\r\n");
    (
        "multipart/form-data; boundary=svcgate-boundary",
        body.into_bytes(),
    )
}

/// `lib/api/helpers.rb` (10.8): `sudo_identifier` is `params[SUDO_PARAM] || env[SUDO_HEADER]`, and V3 read
/// `private_token` from the params too; `lib/api/v3/snippets.rb` then found the snippet among that user's own
/// (`snippets_for_current_user`). svcgate's own reads (`/user`, the snippet) carry both: an admin with `?sudo=`
/// (or `sudo` in the body) edits the named user's snippet as theirs; an admin as themself gets 404; the author
/// with the token in the query is not 401.
#[tokio::test]
async fn sudo_and_tokens_in_the_query_or_body_reach_the_own_snippet_check() {
    let world = World::new().await;
    let (_, author) = world.sim.create_user("sudo-author", false);
    let (_, admin) = world.sim.create_user("sudo-admin", true);
    let snippet = send_json(
        Method::POST,
        &world.v4("/snippets"),
        &author,
        json!({"title": "theirs", "file_name": "a.txt", "content": "x", "visibility": "private"}),
    )
    .await;
    assert_eq!(snippet.status, StatusCode::CREATED, "{:?}", snippet.body);
    let url = world.v3(&format!("/snippets/{}", snippet.json()["id"]));

    let as_admin = send_form(Method::PUT, &url, &admin, "title=by%20the%20admin").await;
    assert_eq!(as_admin.status, StatusCode::NOT_FOUND, "{:?}", as_admin.body);
    let in_query = send_form(
        Method::PUT,
        &format!("{url}?sudo=sudo-author"),
        &admin,
        "title=via%20query",
    )
    .await;
    assert_eq!(in_query.status, StatusCode::OK, "{:?}", in_query.body);
    assert_eq!(in_query.json()["title"], json!("via query"));
    let in_body = send_form(Method::PUT, &url, &admin, "title=via%20body&sudo=sudo-author").await;
    assert_eq!(in_body.status, StatusCode::OK, "{:?}", in_body.body);

    let by_query = send(
        Method::PUT,
        &format!("{url}?private_token={author}"),
        &[],
        Some((
            "application/x-www-form-urlencoded",
            b"title=token%20in%20query".to_vec(),
        )),
    )
    .await;
    assert_eq!(by_query.status, StatusCode::OK, "{:?}", by_query.body);
}

/// A backend in front of `backend` that answers 500 to `GET fail_path` and forwards everything else.
async fn failing_proxy(backend: String, fail_path: String) -> String {
    use http_body_util::{BodyExt, Full};
    use hyper_util::client::legacy::Client;
    use hyper_util::rt::{TokioExecutor, TokioIo};

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            let (backend, fail_path) = (backend.clone(), fail_path.clone());
            tokio::spawn(async move {
                let service =
                    hyper::service::service_fn(move |request: http::Request<hyper::body::Incoming>| {
                        let (backend, fail_path) = (backend.clone(), fail_path.clone());
                        async move {
                            if request.method() == Method::GET && request.uri().path() == fail_path {
                                let mut failed = http::Response::new(Full::new(bytes::Bytes::from_static(
                                    br#"{"message":"500 Internal Server Error"}"#,
                                )));
                                *failed.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
                                failed
                                    .headers_mut()
                                    .insert("content-type", "application/json".parse().unwrap());
                                return Ok::<_, std::convert::Infallible>(failed);
                            }
                            let (parts, body) = request.into_parts();
                            let bytes = body.collect().await.unwrap().to_bytes();
                            let target = parts.uri.path_and_query().map_or("/", |target| target.as_str());
                            let mut forwarded = http::Request::builder()
                                .method(parts.method.clone())
                                .uri(format!("{backend}{target}"));
                            for (name, value) in &parts.headers {
                                if name != http::header::HOST {
                                    forwarded = forwarded.header(name, value);
                                }
                            }
                            let client: Client<_, Full<bytes::Bytes>> =
                                Client::builder(TokioExecutor::new()).build_http();
                            let response = client
                                .request(forwarded.body(Full::new(bytes)).unwrap())
                                .await
                                .unwrap();
                            let (parts, body) = response.into_parts();
                            let bytes = body.collect().await.unwrap().to_bytes();
                            Ok(http::Response::from_parts(parts, Full::new(bytes)))
                        }
                    });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    format!("http://{address}")
}

/// `lib/api/v3/award_emoji.rb`, POST: V3 awarded only after `can_award_awardable?` had looked at the awardable;
/// svcgate's read of it failing otherwise than 403/404 (here a 500) is the answer, and no vote is cast unchecked.
#[tokio::test]
async fn a_failed_read_of_the_awardable_is_the_answer_to_a_vote() {
    let (sim, demo) = common::sim::with_demo().await;
    let issues = common::get(
        &format!(
            "{}/api/v4/projects/{}/issues?sort=asc",
            sim.url(),
            demo.project_id
        ),
        &demo.token,
    )
    .await
    .json();
    let (id, iid) = (issues[0]["id"].clone(), issues[0]["iid"].clone());
    let proxy = failing_proxy(
        sim.url(),
        format!("/api/v4/projects/{}/issues/{iid}", demo.project_id),
    )
    .await;
    let gateway = TestGateway::start(&proxy).await;
    sim.clear_requests();
    let answer = send_form(
        Method::POST,
        &format!(
            "{}/api/v3/projects/{}/issues/{id}/award_emoji",
            gateway.url(),
            demo.project_id
        ),
        &demo.token,
        "name=thumbsup",
    )
    .await;
    assert_eq!(
        answer.status,
        StatusCode::INTERNAL_SERVER_ERROR,
        "{:?}",
        answer.body
    );
    assert!(
        sim.requests()
            .iter()
            .all(|request| request.method != "POST" || request.path == "/api/graphql"),
        "no award was cast (the id's GraphQL lookup aside)"
    );
}

/// `lib/api/v3/projects.rb`, `authorize! :rename_project, user_project if attrs[:name].present?`: `present?` is
/// true of a number too. A `name` svcgate cannot read (multipart) is refused for a non-owner rather than passed
/// unchecked; and `no_self_vote` (`lib/api/v3/award_emoji.rb`) refuses a multipart award on one's own issue.
#[tokio::test]
async fn a_rename_is_checked_whatever_form_name_takes() {
    let world = World::new().await;
    let master = world.member("form-master", 40).await;
    let url = world.v3(&format!("/projects/{}", world.project));
    world.sim.clear_requests();

    let number = send_json(Method::PUT, &url, &master, json!({"name": 42})).await;
    assert_eq!(number.status, StatusCode::FORBIDDEN, "{:?}", number.body);
    let (content_type, body) = multipart(&[("name", "Taken Over")]);
    let unread = send(
        Method::PUT,
        &url,
        &[("private-token", &master)],
        Some((content_type, body)),
    )
    .await;
    assert_eq!(unread.status, StatusCode::BAD_REQUEST, "{:?}", unread.body);
    assert!(
        world.sim.requests().iter().all(|request| request.method != "PUT"),
        "nothing unchecked reached the backend"
    );

    let issue = world.own_issue_id().await;
    let awards = world.v3(&format!("/projects/{}/issues/{issue}/award_emoji", world.project));
    let (content_type, body) = multipart(&[("name", "thumbsup")]);
    let vote = send(
        Method::POST,
        &awards,
        &[("private-token", &world.token)],
        Some((content_type, body)),
    )
    .await;
    assert_eq!(vote.status, StatusCode::BAD_REQUEST, "{:?}", vote.body);
}

/// `spec/requests/api/v3/notes_spec.rb`, "returns a 400 bad request error if body not given": `requires :body` is
/// 400 also when svcgate did not read the body (multipart) and V4 said so, never the rule's `400 = 404`; and
/// `before { authenticate! }` (`lib/api/v3/notes.rb`) ran first: no credential and no body is 401.
#[tokio::test]
async fn a_missing_note_body_is_400_in_any_body_form_and_401_comes_first() {
    let world = World::new().await;
    let issue = world.own_issue_id().await;
    let notes = world.v3(&format!("/projects/{}/issues/{issue}/notes", world.project));

    let anonymous = send(Method::POST, &notes, &[], None).await;
    assert_eq!(anonymous.status, StatusCode::UNAUTHORIZED, "{:?}", anonymous.body);

    let (content_type, body) = multipart(&[("created_at", "2017-01-01")]);
    let unread = send(
        Method::POST,
        &notes,
        &[("private-token", &world.token)],
        Some((content_type, body)),
    )
    .await;
    assert_eq!(unread.status, StatusCode::BAD_REQUEST, "{:?}", unread.body);
    assert_eq!(unread.json(), json!({"error": "body is missing"}));
}

/// `lib/api/v3/merge_requests.rb`, `PUT …/merge_requests/:id` (`find_merge_request_with_access(…,
/// :update_merge_request)`): a merge request svcgate knows by global id that is gone gets the rule's `unseen`
/// answer (`403 Forbidden`) also when `merge_request_update` made the failing call (state_event=merge with other
/// changes).
#[tokio::test]
async fn a_merge_with_other_changes_on_a_deleted_merge_request_is_the_unseen_answer() {
    let world = World::new().await;
    let project = format!("/projects/{}", world.project);
    let made = send_json(
        Method::POST,
        &world.v4(&format!("{project}/repository/branches")),
        &world.token,
        json!({"branch": "gone", "ref": "main"}),
    )
    .await;
    assert_eq!(made.status, StatusCode::CREATED, "{:?}", made.body);
    let created = send_json(
        Method::POST,
        &world.v3(&format!("{project}/merge_requests")),
        &world.token,
        json!({"title": "Gone", "source_branch": "gone", "target_branch": "main"}),
    )
    .await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    let mr = created.json();
    let deleted = send(
        Method::DELETE,
        &world.v4(&format!("{project}/merge_requests/{}", mr["iid"])),
        &[("private-token", &world.token)],
        None,
    )
    .await;
    assert!(deleted.status.is_success(), "{:?}", deleted.status);

    let answer = send_form(
        Method::PUT,
        &world.v3(&format!("{project}/merge_requests/{}", mr["id"])),
        &world.token,
        "state_event=merge&title=Merged",
    )
    .await;
    assert_eq!(answer.status, StatusCode::FORBIDDEN, "{:?}", answer.body);
    assert_eq!(answer.json(), json!({"message": "403 Forbidden"}));
}

/// `lib/api/v3/issues.rb` (`user_project.issues.find`), `subscriptions.rb` and `time_tracking_endpoints.rb`
/// (`find_project_issue`), `award_emoji.rb` (`awardable`): an issue found by global id that is not there raised
/// `RecordNotFound`, answered `404 Not found` by `lib/api/api.rb` (v3 issues_spec "returns 404 if the issue is not
/// found" for PUT and DELETE).
#[tokio::test]
async fn a_deleted_issue_by_global_id_is_404_not_found_on_every_route() {
    let world = World::new().await;
    let created = send_json(
        Method::POST,
        &world.v3(&format!("/projects/{}/issues", world.project)),
        &world.token,
        json!({"title": "soon gone"}),
    )
    .await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    let issue = created.json();
    let deleted = send(
        Method::DELETE,
        &world.v4(&format!("/projects/{}/issues/{}", world.project, issue["iid"])),
        &[("private-token", &world.token)],
        None,
    )
    .await;
    assert!(deleted.status.is_success(), "{:?}", deleted.status);
    let url = world.v3(&format!("/projects/{}/issues/{}", world.project, issue["id"]));
    for (method, path) in [
        (Method::PUT, ""),
        (Method::DELETE, ""),
        (Method::POST, "/subscription"),
        (Method::DELETE, "/subscription"),
        (Method::GET, "/time_stats"),
        (Method::POST, "/reset_spent_time"),
        (Method::GET, "/award_emoji"),
        (Method::POST, "/award_emoji"),
    ] {
        let answer = send_form(
            method.clone(),
            &format!("{url}{path}"),
            &world.token,
            "title=x&name=smile",
        )
        .await;
        assert_eq!(
            answer.status,
            StatusCode::NOT_FOUND,
            "{method} {path}: {:?}",
            answer.body
        );
        assert_eq!(
            answer.json(),
            json!({"message": "404 Not found"}),
            "{method} {path}"
        );
    }
}

//! A translated sample of the service's own V3 request specs (`spec/requests/api/v3/*_spec.rb` in the service's
//! public repository, as of its last release that served V3), run as a V3 client would over real sockets: client
//! → svcgate → svc-sim.
//!
//! Each row is one example of a spec file: the V3 request (path with placeholders in braces for the objects the
//! world below creates), who calls, the body, the status V3 answered, and the values the example checked. Rows run
//! in order in one world; rows that change data use objects no other row reads. Where a V3 answer needs data a V4
//! backend cannot give, the limit is in `docs/known-limits.toml` (explained in `docs/known-limits.md`) instead,
//! and `known_limits_still_behave_as_documented` checks that svcgate still answers as that list says.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common::sim::ADMIN;
use crate::common::{send, Answer};
use crate::world::World;
use http::Method;
use serde_json::{json, Value};

/// Who sends a row's request.
#[derive(Clone, Copy, Debug)]
enum Who {
    /// The administrator.
    Admin,
    /// `demo`, owner of the demo group and so of its projects, and author of the world's objects.
    Owner,
    /// A developer of the demo project.
    Dev,
    /// A guest of the demo project and of the private project.
    Guest,
    /// A user who is a member of nothing the world made.
    Stranger,
    /// No credentials.
    Anon,
}

/// One translated example.
struct Case {
    /// `spec/requests/api/v3/x_spec.rb: it 'text'`.
    source: &'static str,
    method: &'static str,
    path: &'static str,
    who: Who,
    /// JSON when it starts with `{`, else form-encoded.
    body: Option<&'static str>,
    status: u16,
    /// (JSON pointer, expectation): JSON text to equal; `*` present and not null; `~` absent or null; `#N` an array
    /// of N; `keys:a b c` an object with exactly these keys; `has:text` a string containing text. The pointer `@`
    /// is the raw body, which must then equal the expectation.
    expect: &'static [(&'static str, &'static str)],
}

const fn case(
    source: &'static str,
    method: &'static str,
    path: &'static str,
    who: Who,
    body: Option<&'static str>,
    status: u16,
    expect: &'static [(&'static str, &'static str)],
) -> Case {
    Case {
        source,
        method,
        path,
        who,
        body,
        status,
        expect,
    }
}

/// The token `who` sends, if any.
fn token(w: &World, who: Who) -> Option<&str> {
    let name = match who {
        Who::Admin => return Some(ADMIN),
        Who::Anon => return None,
        Who::Owner => "owner",
        Who::Dev => "dev",
        Who::Guest => "guest",
        Who::Stranger => "stranger",
    };
    Some(w.tokens[name].as_str())
}

/// Sends a row's request to the gateway's V3 API.
async fn call(w: &World, method: &str, path: &str, who: Who, body: Option<&str>) -> Answer {
    let url = format!("{}/api/v3{}", w.gateway.url(), w.fill(path));
    let mut headers = Vec::new();
    if let Some(token) = token(w, who) {
        headers.push(("private-token", token));
    }
    let body = body.map(|body| {
        let body = w.fill(body);
        if body.starts_with('{') {
            ("application/json", body.into_bytes())
        } else {
            ("application/x-www-form-urlencoded", body.into_bytes())
        }
    });
    send(method.parse().unwrap(), &url, &headers, body).await
}

/// The shared world with the users, projects and objects the spec rows name.
async fn world() -> World {
    let mut w = World::new().await;
    let t = w.token.clone();
    for name in ["dev", "guest", "stranger", "asker", "goner"] {
        w.user(name, name);
    }
    w.project("priv", &t, json!({"name": "secret", "visibility": "private"}))
        .await;
    w.project("q", &t, json!({"name": "other"})).await;
    let stranger = w.tokens["stranger"].clone();
    w.project("sq", &stranger, json!({"name": "strangers"})).await;
    for (project, user, level) in [("{p}", "dev", 30), ("{p}", "guest", 10), ("{priv}", "guest", 10)] {
        let user = w.var(user).parse::<u64>().unwrap();
        w.member(&format!("/projects/{project}"), user, level).await;
    }

    // Issues, notes, a merge request and their award emoji.
    for name in ["issue", "issue_own"] {
        w.issue(name, "{p}", &t, name).await;
    }
    let dev_token = w.tokens["dev"].clone();
    w.issue("issue_dev", "{p}", &dev_token, "by dev").await;
    w.issue("priv_issue", "{priv}", &t, "secret").await;
    let issues = w
        .setup(Method::GET, "/projects/{p}/issues?per_page=100", &t, json!({}))
        .await;
    let iid_of = |id: &str| -> String {
        issues
            .as_array()
            .unwrap()
            .iter()
            .find(|issue| issue["id"].as_u64().map(|n| n.to_string()).as_deref() == Some(id))
            .map(|issue| issue["iid"].to_string())
            .unwrap()
    };
    let issue_iid = iid_of(&w.vars["issue"]);
    w.keep("issue_iid", &json!(issue_iid.parse::<u64>().unwrap()));
    let dev_iid = iid_of(&w.vars["issue_dev"]);
    for name in ["note", "note_del", "note_own"] {
        let by = if name == "note_own" { &dev_token } else { &t };
        w.note(name, &format!("/projects/{{p}}/issues/{issue_iid}"), by, name)
            .await;
    }
    w.award(
        "award",
        &format!("/projects/{{p}}/issues/{issue_iid}"),
        "thumbsup",
    )
    .await;
    w.award("award_del", &format!("/projects/{{p}}/issues/{dev_iid}"), "tada")
        .await;
    w.setup(
        Method::POST,
        "/projects/{p}/repository/commits",
        &t,
        json!({"branch": "feature", "start_branch": "main", "commit_message": "work",
               "actions": [{"action": "create", "file_path": "feature.txt", "content": "x"}]}),
    )
    .await;
    let mr = w
        .made(
            "mr",
            "id",
            "/projects/{p}/merge_requests",
            &t,
            json!({"title": "mr", "source_branch": "feature", "target_branch": "main"}),
        )
        .await;
    let mr_iid = mr["iid"].to_string();
    w.keep("mr_iid", &mr["iid"]);
    w.setup(
        Method::POST,
        "/projects/{p}/repository/commits",
        &t,
        json!({"branch": "feature_conflict", "start_branch": "main", "commit_message": "conflict",
               "actions": [{"action": "create", "file_path": "conflict.txt", "content": "y"}]}),
    )
    .await;
    for name in ["mr_note", "mr_note_del"] {
        w.note(
            name,
            &format!("/projects/{{p}}/merge_requests/{mr_iid}"),
            &t,
            name,
        )
        .await;
    }
    w.award(
        "mr_award",
        &format!("/projects/{{p}}/merge_requests/{mr_iid}"),
        "thumbsdown",
    )
    .await;

    // Snippets.
    for name in ["psnippet", "psnippet_del", "psnippet_put"] {
        w.made(
            name,
            "id",
            "/projects/{p}/snippets",
            &t,
            json!({"title": name, "file_name": "a.txt", "code": "hello", "visibility": "private"}),
        )
        .await;
    }
    let psnippet = w.var("psnippet");
    w.note(
        "snippet_note",
        &format!("/projects/{{p}}/snippets/{psnippet}"),
        &t,
        "snippet note",
    )
    .await;
    for (name, visibility) in [
        ("personal", "private"),
        ("personal_del", "private"),
        ("personal_pub", "public"),
    ] {
        w.made(
            name,
            "id",
            "/snippets",
            &t,
            json!({"title": name, "file_name": "m.txt", "content": "mine", "visibility": visibility}),
        )
        .await;
    }

    // Labels, milestones, board lists.
    for (name, title) in [
        ("label", "triage"),
        ("label2", "regression"),
        ("label3", "Testing"),
    ] {
        w.made(
            name,
            "id",
            "/projects/{p}/labels",
            &t,
            json!({"name": title, "color": "#FF0000"}),
        )
        .await;
    }
    for name in ["milestone", "closed_milestone", "milestone2", "milestone3"] {
        let milestone = w
            .made(name, "id", "/projects/{p}/milestones", &t, json!({"title": name}))
            .await;
        if name == "closed_milestone" {
            w.keep("closed_iid", &milestone["iid"]);
        }
    }
    w.setup(
        Method::PUT,
        "/projects/{p}/milestones/{closed_milestone}",
        &t,
        json!({"state_event": "close"}),
    )
    .await;
    w.setup(
        Method::PUT,
        &format!("/projects/{{p}}/issues/{issue_iid}"),
        &t,
        json!({"milestone_id": w.vars["milestone"].parse::<u64>().unwrap()}),
    )
    .await;
    let boards = w.setup(Method::GET, "/projects/{p}/boards", &t, json!({})).await;
    w.keep("board", &boards[0]["id"]);
    let label3 = w.vars["label3"].parse::<u64>().unwrap();
    w.made(
        "list",
        "id",
        "/projects/{p}/boards/{board}/lists",
        &t,
        json!({"label_id": label3}),
    )
    .await;

    // Hooks, deploy keys, triggers, environments, todos, a release, a broadcast message.
    for name in ["hook", "hook2", "hook3"] {
        w.made(
            name,
            "id",
            "/projects/{p}/hooks",
            &t,
            json!({"url": "http://example.com", "push_events": true, "issues_events": true,
                   "job_events": true, "enable_ssl_verification": true}),
        )
        .await;
    }
    for (name, n) in [("key", 1u8), ("key2", 2)] {
        w.made(
            name,
            "id",
            "/projects/{p}/deploy_keys",
            &t,
            json!({"title": name, "key": format!("ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC{}{n} spec@example.com", "y".repeat(40))}),
        )
        .await;
    }
    for name in ["trigger", "trigger2"] {
        w.trigger(name, "{p}").await;
    }
    for name in ["env", "env2"] {
        w.made(
            name,
            "id",
            "/projects/{priv}/environments",
            &t,
            json!({"name": name, "external_url": "https://env.example"}),
        )
        .await;
    }
    let deployments = w
        .setup(Method::GET, "/projects/{p}/deployments", &t, json!({}))
        .await;
    w.keep("deployment", &deployments[0]["id"]);
    for iid in [&issue_iid, &dev_iid] {
        w.setup(
            Method::POST,
            &format!("/projects/{{p}}/issues/{iid}/todo"),
            &t,
            json!({}),
        )
        .await;
    }
    let todos = w.setup(Method::GET, "/todos", &t, json!({})).await;
    w.keep("todo", &todos[0]["id"]);
    w.setup(
        Method::POST,
        "/projects/{p}/repository/tags",
        &t,
        json!({"tag_name": "v1.0", "ref": "main", "message": "Version 1.0", "release_description": "Awesome release!"}),
    )
    .await;
    w.made(
        "fork",
        "id",
        "/projects/{p}/fork",
        &stranger,
        json!({"path": "forked", "name": "forked"}),
    )
    .await;
    w.made(
        "g2",
        "id",
        "/groups",
        ADMIN,
        json!({"name": "hidden", "path": "hidden", "visibility": "private"}),
    )
    .await;
    let runners = w.setup(Method::GET, "/runners/all", ADMIN, json!({})).await;
    for runner in runners.as_array().unwrap() {
        match runner["description"].as_str() {
            Some("shared-runner-1") => w.keep("shared_runner", &runner["id"]),
            Some("demo-project-runner") => w.keep("runner", &runner["id"]),
            _ => {}
        }
    }
    let versions = w
        .setup(
            Method::GET,
            "/projects/{p}/merge_requests/{mr_iid}/versions",
            &t,
            json!({}),
        )
        .await;
    w.keep("version", &versions[0]["id"]);
    let pipelines = w
        .setup(Method::GET, "/projects/{p}/pipelines", &t, json!({}))
        .await;
    w.keep("pipeline", &pipelines[0]["id"]);
    let jobs = w.setup(Method::GET, "/projects/{p}/jobs", &t, json!({})).await;
    for job in jobs.as_array().unwrap() {
        match job["name"].as_str() {
            Some("build") => {
                w.keep("job", &job["id"]);
                w.keep("job_sha", &job["commit"]["id"]);
            }
            Some("deploy") => w.keep("manual_job", &job["id"]),
            _ => {}
        }
    }
    let commits = w
        .setup(Method::GET, "/projects/{p}/repository/commits", &t, json!({}))
        .await;
    w.keep("sha", &commits[0]["id"]);
    w.setup(
        Method::POST,
        "/projects/{p}/repository/commits/{sha}/comments",
        &t,
        json!({"note": "a comment on a commit"}),
    )
    .await;
    w.made(
        "broadcast",
        "id",
        "/broadcast_messages",
        ADMIN,
        json!({"message": "maintenance"}),
    )
    .await;
    w
}

/// Checks one answer against its row; returns what differs.
fn differences(
    source: &str,
    status: u16,
    expect: &[(&str, &str)],
    answer: &Answer,
    w: &World,
) -> Vec<String> {
    let mut out = Vec::new();
    if answer.status.as_u16() != status {
        out.push(format!("status {} (wanted {status})", answer.status.as_u16()));
        return out;
    }
    let text = String::from_utf8_lossy(&answer.body).into_owned();
    let json: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    for (pointer, wanted) in expect {
        let wanted = w.fill(wanted);
        if *pointer == "@" {
            if text != wanted {
                out.push(format!("body {text:?} (wanted {wanted:?})"));
            }
            continue;
        }
        let found = json.pointer(pointer).cloned().unwrap_or(Value::Null);
        let ok = if wanted == "*" {
            !found.is_null()
        } else if wanted == "~" {
            found.is_null()
        } else if let Some(n) = wanted.strip_prefix('#') {
            found.as_array().map(Vec::len) == Some(n.parse().unwrap())
        } else if let Some(keys) = wanted.strip_prefix("keys:") {
            let mut want: Vec<&str> = keys.split_whitespace().collect();
            want.sort_unstable();
            let mut have: Vec<&str> = found
                .as_object()
                .map(|o| o.keys().map(String::as_str).collect())
                .unwrap_or_default();
            have.sort_unstable();
            want == have
        } else if let Some(part) = wanted.strip_prefix("has:") {
            found.as_str().is_some_and(|s| s.contains(part))
        } else {
            let wanted: Value = serde_json::from_str(&wanted)
                .unwrap_or_else(|_| panic!("bad expectation {wanted} in {source}"));
            found == wanted
        };
        if !ok {
            out.push(format!("{pointer} is {found} (wanted {wanted})"));
        }
    }
    out
}

async fn run(cases: &[Case]) -> Vec<String> {
    let w = world().await;
    let mut failures = Vec::new();
    for case in cases {
        let answer = call(&w, case.method, case.path, case.who, case.body).await;
        let diffs = differences(case.source, case.status, case.expect, &answer, &w);
        if !diffs.is_empty() {
            failures.push(format!(
                "{}\n    {} {} as {:?}: {}\n    body: {}",
                case.source,
                case.method,
                w.fill(case.path),
                case.who,
                diffs.join("; "),
                String::from_utf8_lossy(&answer.body)
                    .chars()
                    .take(300)
                    .collect::<String>()
            ));
        }
    }
    failures
}

use Who::{Admin, Anon, Dev, Guest, Owner, Stranger};

#[tokio::test]
async fn the_service_v3_request_spec_sample_passes_through_the_gateway() {
    let cases = cases();
    let files: std::collections::BTreeSet<&str> = cases
        .iter()
        .map(|case| case.source.split(':').next().unwrap())
        .collect();
    assert!(cases.len() >= 100, "{} cases", cases.len());
    assert!(files.len() >= 15, "{} spec files: {files:?}", files.len());
    for case in &cases {
        assert!(
            case.source.starts_with("spec/requests/api/v3/") && case.source.contains("_spec.rb: it"),
            "source of a row: {}",
            case.source
        );
    }
    let failures = run(&cases).await;
    assert!(
        failures.is_empty(),
        "{} of {} rows differ from the V3 specs:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// Every limit of `docs/known-limits.toml` still answers as that list says, and is explained in
/// `docs/known-limits.md`.
#[tokio::test]
async fn known_limits_still_behave_as_documented() {
    let root = env!("CARGO_MANIFEST_DIR");
    let text = std::fs::read_to_string(format!("{root}/docs/known-limits.toml")).unwrap();
    let list: toml::Value = toml::from_str(&text).unwrap();
    let explained = std::fs::read_to_string(format!("{root}/docs/known-limits.md")).unwrap();
    let limits = list["limit"].as_array().expect("[[limit]] entries");
    assert!(!limits.is_empty());
    let w = world().await;
    let mut failures = Vec::new();
    for limit in limits {
        let id = limit["id"].as_str().unwrap();
        for key in ["v3", "source", "svcgate", "why"] {
            assert!(
                limit
                    .get(key)
                    .and_then(toml::Value::as_str)
                    .is_some_and(|text| !text.is_empty()),
                "limit {id} says nothing for {key}"
            );
        }
        assert!(
            explained.contains(&format!("\n## {id}\n")),
            "docs/known-limits.md has no section for {id}"
        );
        let check = &limit["check"];
        let who = match check["who"].as_str().unwrap() {
            "admin" => Admin,
            "owner" => Owner,
            "dev" => Dev,
            "guest" => Guest,
            "stranger" => Stranger,
            "anon" => Anon,
            other => panic!("limit {id}: unknown caller {other}"),
        };
        let pairs: Vec<(String, String)> = check
            .get("expect")
            .and_then(toml::Value::as_array)
            .map(|pairs| {
                pairs
                    .iter()
                    .map(|pair| {
                        let pair = pair.as_array().unwrap();
                        let text = |i: usize| pair[i].as_str().unwrap().to_owned();
                        (text(0), text(1))
                    })
                    .collect()
            })
            .unwrap_or_default();
        let expect: Vec<(&str, &str)> = pairs.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        let answer = call(
            &w,
            check["method"].as_str().unwrap(),
            check["path"].as_str().unwrap(),
            who,
            check.get("body").and_then(toml::Value::as_str),
        )
        .await;
        let status = u16::try_from(check["status"].as_integer().unwrap()).unwrap();
        let diffs = differences(id, status, &expect, &answer, &w);
        if !diffs.is_empty() {
            failures.push(format!(
                "{id}: {}\n    body: {}",
                diffs.join("; "),
                String::from_utf8_lossy(&answer.body)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "known limits no longer behave as docs/known-limits.toml says (update the list):\n{}",
        failures.join("\n")
    );
}

/// The translated rows, in the order they run.
fn cases() -> Vec<Case> {
    vec![
        // labels_spec.rb
        case("spec/requests/api/v3/labels_spec.rb: it 'returns all available labels to the project'", "GET", "/projects/{p}/labels", Owner, None, 200,
            &[("/0", "keys:id name color description open_issues_count closed_issues_count open_merge_requests_count subscribed priority"), ("/0/subscribed", "false")]),
        case("spec/requests/api/v3/labels_spec.rb: it 'subscribes to the label' (label_id is a label title)", "POST", "/projects/{p}/labels/triage/subscription", Owner, None, 201,
            &[("/name", "\"triage\""), ("/subscribed", "true")]),
        case("spec/requests/api/v3/labels_spec.rb: it 'returns 304' (already subscribed)", "POST", "/projects/{p}/labels/{label}/subscription", Owner, None, 304, &[]),
        case("spec/requests/api/v3/labels_spec.rb: it 'subscribes to the label' (label_id is a label ID)", "POST", "/projects/{p}/labels/{label2}/subscription", Owner, None, 201,
            &[("/name", "\"regression\""), ("/subscribed", "true")]),
        case("spec/requests/api/v3/labels_spec.rb: it 'returns 404 error' (subscribe, label ID is not found)", "POST", "/projects/{p}/labels/1234/subscription", Owner, None, 404, &[]),
        case("spec/requests/api/v3/labels_spec.rb: it 'unsubscribes from the label' (label_id is a label title)", "DELETE", "/projects/{p}/labels/triage/subscription", Owner, None, 200,
            &[("/name", "\"triage\""), ("/subscribed", "false")]),
        case("spec/requests/api/v3/labels_spec.rb: it 'returns 304' (already unsubscribed)", "DELETE", "/projects/{p}/labels/{label}/subscription", Owner, None, 304, &[]),
        case("spec/requests/api/v3/labels_spec.rb: it 'returns 404 error' (unsubscribe, label ID is not found)", "DELETE", "/projects/{p}/labels/1234/subscription", Owner, None, 404, &[]),
        // milestones_spec.rb
        case("spec/requests/api/v3/milestones_spec.rb: it 'returns project milestones'", "GET", "/projects/{p}/milestones", Dev, None, 200, &[("/0/title", "*")]),
        case("spec/requests/api/v3/milestones_spec.rb: it 'returns an array of active milestones'", "GET", "/projects/{p}/milestones?state=active", Dev, None, 200, &[("", "#3")]),
        case("spec/requests/api/v3/milestones_spec.rb: it 'returns an array of closed milestones'", "GET", "/projects/{p}/milestones?state=closed", Dev, None, 200,
            &[("", "#1"), ("/0/id", "{closed_milestone}")]),
        case("spec/requests/api/v3/milestones_spec.rb: it 'returns a project milestone by id'", "GET", "/projects/{p}/milestones/{milestone}", Dev, None, 200,
            &[("/title", "\"milestone\""), ("/iid", "*")]),
        case("spec/requests/api/v3/milestones_spec.rb: it 'returns a 404 error if milestone id not found'", "GET", "/projects/{p}/milestones/1234", Dev, None, 404, &[]),
        case("spec/requests/api/v3/milestones_spec.rb: it 'creates a new project milestone'", "POST", "/projects/{p}/milestones", Dev, Some(r#"{"title": "new milestone"}"#), 201,
            &[("/title", "\"new milestone\""), ("/description", "~")]),
        case("spec/requests/api/v3/milestones_spec.rb: it 'creates a new project milestone with description and dates'", "POST", "/projects/{p}/milestones", Dev,
            Some(r#"{"title": "dated", "description": "release", "due_date": "2013-03-02", "start_date": "2013-02-02"}"#), 201,
            &[("/description", "\"release\""), ("/due_date", "\"2013-03-02\""), ("/start_date", "\"2013-02-02\"")]),
        case("spec/requests/api/v3/milestones_spec.rb: it 'returns a 400 error if title is missing'", "POST", "/projects/{p}/milestones", Dev, Some("{}"), 400, &[]),
        case("spec/requests/api/v3/milestones_spec.rb: it 'returns a 400 error if params are invalid (duplicate title)'", "POST", "/projects/{p}/milestones", Dev,
            Some(r#"{"title": "milestone", "description": "release", "due_date": "2013-03-02"}"#), 400, &[]),
        case("spec/requests/api/v3/milestones_spec.rb: it 'creates a new project with reserved html characters'", "POST", "/projects/{p}/milestones", Dev,
            Some(r#"{"title": "foo & bar 1.1 -> 2.2"}"#), 201, &[("/title", "\"foo & bar 1.1 -> 2.2\"")]),
        case("spec/requests/api/v3/milestones_spec.rb: it 'updates a project milestone'", "PUT", "/projects/{p}/milestones/{milestone2}", Dev, Some(r#"{"title": "updated title"}"#), 200,
            &[("/title", "\"updated title\"")]),
        case("spec/requests/api/v3/milestones_spec.rb: it 'removes a due date if nil is passed'", "PUT", "/projects/{p}/milestones/{milestone2}", Dev, Some(r#"{"due_date": null}"#), 200,
            &[("/due_date", "~")]),
        case("spec/requests/api/v3/milestones_spec.rb: it 'returns a 404 error if milestone id not found' (PUT)", "PUT", "/projects/{p}/milestones/1234", Dev, Some(r#"{"title": "updated title"}"#), 404, &[]),
        case("spec/requests/api/v3/milestones_spec.rb: it 'updates a project milestone' (to close milestone)", "PUT", "/projects/{p}/milestones/{milestone3}", Dev, Some(r#"{"state_event": "close"}"#), 200,
            &[("/state", "\"closed\"")]),
        case("spec/requests/api/v3/milestones_spec.rb: it 'returns project issues for a particular milestone'", "GET", "/projects/{p}/milestones/{milestone}/issues", Dev, None, 200,
            &[("/0/milestone/title", "\"milestone\"")]),
        // branches_spec.rb, tags_spec.rb
        case("spec/requests/api/v3/branches_spec.rb: it 'returns an array of project branches'", "GET", "/projects/{p}/repository/branches?per_page=100", Owner, None, 200, &[("/0/name", "*"), ("", "#3")]),
        case("spec/requests/api/v3/tags_spec.rb: it 'returns the repository tags' (when unauthenticated)", "GET", "/projects/{p}/repository/tags", Anon, None, 200, &[("/0/name", "\"v1.0\"")]),
        case("spec/requests/api/v3/tags_spec.rb: it 'returns an array of project tags'", "GET", "/projects/{p}/repository/tags", Owner, None, 200, &[("/0/name", "\"v1.0\"")]),
        case("spec/requests/api/v3/tags_spec.rb: it 'returns an array of project tags with release info'", "GET", "/projects/{p}/repository/tags", Owner, None, 200,
            &[("/0/message", "\"Version 1.0\""), ("/0/release/description", "\"Awesome release!\"")]),
        // deploy_keys_spec.rb
        case("spec/requests/api/v3/deploy_keys_spec.rb: it 'should return authentication error'", "GET", "/deploy_keys", Anon, None, 401, &[]),
        case("spec/requests/api/v3/deploy_keys_spec.rb: it 'should return a 403 error'", "GET", "/deploy_keys", Owner, None, 403, &[]),
        case("spec/requests/api/v3/deploy_keys_spec.rb: it 'should return all deploy keys'", "GET", "/deploy_keys", Admin, None, 200, &[("/0/id", "*")]),
        case("spec/requests/api/v3/deploy_keys_spec.rb: it 'should return array of ssh keys' (deploy_keys)", "GET", "/projects/{p}/deploy_keys", Admin, None, 200, &[("/0/title", "*")]),
        case("spec/requests/api/v3/deploy_keys_spec.rb: it 'should return array of ssh keys' (keys)", "GET", "/projects/{p}/keys", Admin, None, 200, &[("/0/title", "*")]),
        case("spec/requests/api/v3/deploy_keys_spec.rb: it 'should return a single key'", "GET", "/projects/{p}/deploy_keys/{key}", Admin, None, 200, &[("/title", "\"key\"")]),
        case("spec/requests/api/v3/deploy_keys_spec.rb: it 'should return 404 Not Found with invalid ID'", "GET", "/projects/{p}/keys/404", Admin, None, 404, &[]),
        case("spec/requests/api/v3/deploy_keys_spec.rb: it 'should not create an invalid ssh key'", "POST", "/projects/{p}/deploy_keys", Admin, Some(r#"{"title": "invalid key"}"#), 400,
            &[("/error", "\"key is missing\"")]),
        case("spec/requests/api/v3/deploy_keys_spec.rb: it 'should not create a key without title'", "POST", "/projects/{p}/deploy_keys", Admin, Some(r#"{"key": "some key"}"#), 400,
            &[("/error", "\"title is missing\"")]),
        case("spec/requests/api/v3/deploy_keys_spec.rb: it 'accepts can_push parameter'", "POST", "/projects/{p}/deploy_keys", Admin,
            Some(r#"{"title": "writer", "key": "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQCzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz9 w@example.com", "can_push": true}"#), 201,
            &[("/can_push", "true")]),
        case("spec/requests/api/v3/deploy_keys_spec.rb: it 'should return 404 Not Found with invalid ID' (DELETE)", "DELETE", "/projects/{p}/deploy_keys/404", Admin, None, 404, &[]),
        case("spec/requests/api/v3/deploy_keys_spec.rb: it 'enables the key'", "POST", "/projects/{q}/deploy_keys/{key}/enable", Admin, None, 201, &[("/id", "{key}")]),
        case("spec/requests/api/v3/deploy_keys_spec.rb: it 'should return a 404 error' (enable, non-admin user)", "POST", "/projects/{q}/deploy_keys/{key}/enable", Stranger, None, 404, &[]),
        case("spec/requests/api/v3/deploy_keys_spec.rb: it 'should return a 404 error' (disable, non-admin user)", "DELETE", "/projects/{q}/deploy_keys/{key}/disable", Stranger, None, 404, &[]),
        case("spec/requests/api/v3/deploy_keys_spec.rb: it 'disables the key'", "DELETE", "/projects/{p}/deploy_keys/{key2}/disable", Admin, None, 200, &[("/id", "{key2}")]),
        // project_hooks_spec.rb
        case("spec/requests/api/v3/project_hooks_spec.rb: it 'returns project hooks'", "GET", "/projects/{p}/hooks", Owner, None, 200,
            &[("/0/url", "\"http://example.com\""), ("/0/issues_events", "true"), ("/0/push_events", "true"), ("/0/build_events", "true"), ("/0/enable_ssl_verification", "true")]),
        case("spec/requests/api/v3/project_hooks_spec.rb: it 'does not access project hooks'", "GET", "/projects/{p}/hooks", Dev, None, 403, &[]),
        case("spec/requests/api/v3/project_hooks_spec.rb: it 'returns a project hook'", "GET", "/projects/{p}/hooks/{hook}", Owner, None, 200,
            &[("/url", "\"http://example.com\""), ("/build_events", "true"), ("/pipeline_events", "false")]),
        case("spec/requests/api/v3/project_hooks_spec.rb: it 'returns a 404 error if hook id is not available'", "GET", "/projects/{p}/hooks/1234", Owner, None, 404, &[]),
        case("spec/requests/api/v3/project_hooks_spec.rb: it 'does not access an existing hook'", "GET", "/projects/{p}/hooks/{hook}", Dev, None, 403, &[]),
        case("spec/requests/api/v3/project_hooks_spec.rb: it 'adds hook to project'", "POST", "/projects/{p}/hooks", Owner,
            Some(r#"{"url": "http://example.com", "issues_events": true, "wiki_page_events": true, "build_events": true}"#), 201,
            &[("/issues_events", "true"), ("/push_events", "true"), ("/merge_requests_events", "false"), ("/note_events", "false"), ("/build_events", "true"),
              ("/pipeline_events", "false"), ("/wiki_page_events", "true"), ("/enable_ssl_verification", "true"), ("/token", "~")]),
        case("spec/requests/api/v3/project_hooks_spec.rb: it 'adds the token without including it in the response'", "POST", "/projects/{p}/hooks", Owner,
            Some(r#"{"url": "http://example.com", "token": "secret token"}"#), 201, &[("/url", "\"http://example.com\""), ("/token", "~")]),
        case("spec/requests/api/v3/project_hooks_spec.rb: it 'returns a 400 error if url not given'", "POST", "/projects/{p}/hooks", Owner, Some("{}"), 400, &[]),
        case("spec/requests/api/v3/project_hooks_spec.rb: it 'returns a 422 error if url not valid'", "POST", "/projects/{p}/hooks", Owner, Some(r#"{"url": "ftp://example.com"}"#), 422, &[]),
        case("spec/requests/api/v3/project_hooks_spec.rb: it 'updates an existing project hook'", "PUT", "/projects/{p}/hooks/{hook2}", Owner,
            Some(r#"{"url": "http://example.org", "push_events": false, "build_events": true}"#), 200,
            &[("/url", "\"http://example.org\""), ("/push_events", "false"), ("/build_events", "true"), ("/issues_events", "true")]),
        case("spec/requests/api/v3/project_hooks_spec.rb: it 'returns 404 error if hook id not found'", "PUT", "/projects/{p}/hooks/1234", Owner, Some(r#"{"url": "http://example.org"}"#), 404, &[]),
        case("spec/requests/api/v3/project_hooks_spec.rb: it 'returns 400 error if url is not given'", "PUT", "/projects/{p}/hooks/{hook2}", Owner, Some("{}"), 400, &[]),
        case("spec/requests/api/v3/project_hooks_spec.rb: it 'returns a 422 error if url is not valid'", "PUT", "/projects/{p}/hooks/{hook2}", Owner, Some(r#"{"url": "ftp://example.com"}"#), 422, &[]),
        case("spec/requests/api/v3/project_hooks_spec.rb: it 'returns a 404 if a user attempts to delete project hooks he/she does not own'", "DELETE", "/projects/{sq}/hooks/{hook3}", Stranger, None, 404, &[]),
        case("spec/requests/api/v3/project_hooks_spec.rb: it 'deletes hook from project'", "DELETE", "/projects/{p}/hooks/{hook3}", Owner, None, 200, &[]),
        case("spec/requests/api/v3/project_hooks_spec.rb: it 'returns a 404 error when deleting non existent hook'", "DELETE", "/projects/{p}/hooks/42", Owner, None, 404, &[]),
        // snippets_spec.rb
        case("spec/requests/api/v3/snippets_spec.rb: it 'returns snippets available'", "GET", "/snippets/", Owner, None, 200, &[("", "#3"), ("/0/web_url", "*"), ("/0/raw_url", "*")]),
        case("spec/requests/api/v3/snippets_spec.rb: it 'hides private snippets from regular user'", "GET", "/snippets/", Stranger, None, 200, &[("", "#0")]),
        case("spec/requests/api/v3/snippets_spec.rb: it 'returns all snippets with public visibility from all users'", "GET", "/snippets/public", Stranger, None, 200,
            &[("", "#1"), ("/0/id", "{personal_pub}"), ("/0/raw_url", "*")]),
        case("spec/requests/api/v3/snippets_spec.rb: it 'returns raw text'", "GET", "/snippets/{personal}/raw", Owner, None, 200, &[("@", "mine")]),
        case("spec/requests/api/v3/snippets_spec.rb: it 'returns 404 for invalid snippet id' (DELETE)", "DELETE", "/snippets/1234", Owner, None, 404, &[("/message", "\"404 Snippet Not Found\"")]),
        case("spec/requests/api/v3/snippets_spec.rb: it 'creates a new snippet'", "POST", "/snippets/", Owner,
            Some(r#"{"title": "Test Title", "file_name": "test.rb", "content": "puts \"hello world\"", "visibility_level": 20}"#), 201,
            &[("/title", "\"Test Title\""), ("/file_name", "\"test.rb\"")]),
        case("spec/requests/api/v3/snippets_spec.rb: it 'returns 400 for missing parameters' (POST)", "POST", "/snippets/", Owner,
            Some(r#"{"file_name": "test.rb", "content": "x", "visibility_level": 20}"#), 400, &[]),
        case("spec/requests/api/v3/snippets_spec.rb: it 'updates snippet'", "PUT", "/snippets/{personal}", Owner, Some(r#"{"content": "New content"}"#), 200, &[("/id", "{personal}")]),
        case("spec/requests/api/v3/snippets_spec.rb: it 'returns 404 for invalid snippet id' (PUT)", "PUT", "/snippets/1234", Owner, Some(r#"{"title": "foo"}"#), 404,
            &[("/message", "\"404 Snippet Not Found\"")]),
        case("spec/requests/api/v3/snippets_spec.rb: it 'returns 400 for missing parameters' (PUT)", "PUT", "/snippets/1234", Owner, None, 400,
            &[("/error", "\"title, file_name, content, visibility_level are missing, at least one parameter must be provided\"")]),
        case("spec/requests/api/v3/snippets_spec.rb: it 'deletes snippet'", "DELETE", "/snippets/{personal_del}", Owner, None, 204, &[]),
        // project_snippets_spec.rb
        case("spec/requests/api/v3/project_snippets_spec.rb: it 'always exposes expires_at as nil'", "GET", "/projects/{p}/snippets/{psnippet}", Admin, None, 200,
            &[("/expires_at", "null"), ("/title", "\"psnippet\"")]),
        case("spec/requests/api/v3/project_snippets_spec.rb: it 'returns all snippets available to team member'", "GET", "/projects/{p}/snippets/", Dev, None, 200,
            &[("", "#3"), ("/0/web_url", "*")]),
        case("spec/requests/api/v3/project_snippets_spec.rb: it 'hides private snippets from regular user'", "GET", "/projects/{p}/snippets/", Stranger, None, 200, &[("", "#0")]),
        case("spec/requests/api/v3/project_snippets_spec.rb: it 'creates a new snippet'", "POST", "/projects/{p}/snippets/", Admin,
            Some(r#"{"title": "Test Title", "file_name": "test.rb", "code": "puts \"hello world\"", "visibility_level": 20}"#), 201,
            &[("/title", "\"Test Title\""), ("/file_name", "\"test.rb\"")]),
        case("spec/requests/api/v3/project_snippets_spec.rb: it 'returns 400 for missing parameters' (POST)", "POST", "/projects/{p}/snippets/", Admin,
            Some(r#"{"file_name": "test.rb", "code": "x", "visibility_level": 20}"#), 400, &[]),
        case("spec/requests/api/v3/project_snippets_spec.rb: it 'updates snippet'", "PUT", "/projects/{p}/snippets/{psnippet_put}/", Admin, Some(r#"{"code": "New content"}"#), 200, &[]),
        case("spec/requests/api/v3/project_snippets_spec.rb: it 'returns 404 for invalid snippet id' (PUT)", "PUT", "/projects/{p}/snippets/1234", Admin, Some(r#"{"title": "foo"}"#), 404,
            &[("/message", "\"404 Snippet Not Found\"")]),
        case("spec/requests/api/v3/project_snippets_spec.rb: it 'returns 400 for missing parameters' (PUT)", "PUT", "/projects/{p}/snippets/1234", Admin, None, 400, &[]),
        case("spec/requests/api/v3/project_snippets_spec.rb: it 'deletes snippet'", "DELETE", "/projects/{p}/snippets/{psnippet_del}/", Admin, None, 200, &[]),
        case("spec/requests/api/v3/project_snippets_spec.rb: it 'returns 404 for invalid snippet id' (DELETE)", "DELETE", "/projects/{p}/snippets/1234", Admin, None, 404,
            &[("/message", "\"404 Snippet Not Found\"")]),
        case("spec/requests/api/v3/project_snippets_spec.rb: it 'returns raw text'", "GET", "/projects/{p}/snippets/{psnippet}/raw", Admin, None, 200, &[("@", "hello")]),
        // todos_spec.rb
        case("spec/requests/api/v3/todos_spec.rb: it 'returns authentication error' (DELETE /todos/:id)", "DELETE", "/todos/{todo}", Anon, None, 401, &[]),
        case("spec/requests/api/v3/todos_spec.rb: it 'returns 404 if the todo does not belong to the current user'", "DELETE", "/todos/{todo}", Dev, None, 404, &[]),
        case("spec/requests/api/v3/todos_spec.rb: it 'marks a todo as done'", "DELETE", "/todos/{todo}", Owner, None, 200, &[("/state", "\"done\"")]),
        case("spec/requests/api/v3/todos_spec.rb: it 'returns authentication error' (DELETE /todos)", "DELETE", "/todos", Anon, None, 401, &[]),
        case("spec/requests/api/v3/todos_spec.rb: it 'marks all todos as done'", "DELETE", "/todos", Owner, None, 200, &[("@", "1")]),
        // triggers_spec.rb
        case("spec/requests/api/v3/triggers_spec.rb: it 'returns bad request if token is missing'", "POST", "/projects/{p}/trigger/builds", Anon, Some("ref=main"), 400, &[]),
        case("spec/requests/api/v3/triggers_spec.rb: it 'returns not found if project is not found'", "POST", "/projects/0/trigger/builds", Anon, Some("ref=main&token={trigger}"), 404, &[]),
        case("spec/requests/api/v3/triggers_spec.rb: it 'creates builds'", "POST", "/projects/{p}/trigger/builds", Anon, Some("ref=main&token={trigger}"), 201, &[("/id", "*")]),
        case("spec/requests/api/v3/triggers_spec.rb: it 'validates variables to be a hash'", "POST", "/projects/{p}/trigger/builds", Anon, Some("ref=main&token={trigger}&variables=value"), 400,
            &[("/error", "\"variables is invalid\"")]),
        case("spec/requests/api/v3/triggers_spec.rb: it 'validates variables needs to be a map of key-valued strings'", "POST", "/projects/{p}/trigger/builds", Anon, Some("ref=main&token={trigger}&variables[key][]=1&variables[key][]=2"), 400, &[("/message", "\"variables needs to be a map of key-valued strings\"")]),
        case("spec/requests/api/v3/triggers_spec.rb: it 'returns list of triggers'", "GET", "/projects/{p}/triggers", Owner, None, 200, &[("/0/token", "*")]),
        case("spec/requests/api/v3/triggers_spec.rb: it 'does not return triggers list' (invalid permissions)", "GET", "/projects/{p}/triggers", Dev, None, 403, &[]),
        case("spec/requests/api/v3/triggers_spec.rb: it 'does not return triggers list' (unauthenticated user)", "GET", "/projects/{p}/triggers", Anon, None, 401, &[]),
        case("spec/requests/api/v3/triggers_spec.rb: it 'returns trigger details'", "GET", "/projects/{p}/triggers/{trigger}", Owner, None, 200, &[("/token", "\"{trigger}\"")]),
        case("spec/requests/api/v3/triggers_spec.rb: it 'responds with 404 Not Found if requesting non-existing trigger'", "GET", "/projects/{p}/triggers/abcdef012345", Owner, None, 404, &[]),
        case("spec/requests/api/v3/triggers_spec.rb: it 'does not return triggers list' (GET :token, invalid permissions)", "GET", "/projects/{p}/triggers/{trigger}", Dev, None, 403, &[]),
        case("spec/requests/api/v3/triggers_spec.rb: it 'creates trigger'", "POST", "/projects/{p}/triggers", Owner, None, 201, &[("/token", "*")]),
        case("spec/requests/api/v3/triggers_spec.rb: it 'does not create trigger' (invalid permissions)", "POST", "/projects/{p}/triggers", Dev, None, 403, &[]),
        case("spec/requests/api/v3/triggers_spec.rb: it 'does not delete trigger' (invalid permissions)", "DELETE", "/projects/{p}/triggers/{trigger2}", Dev, None, 403, &[]),
        case("spec/requests/api/v3/triggers_spec.rb: it 'deletes trigger'", "DELETE", "/projects/{p}/triggers/{trigger2}", Owner, None, 200, &[]),
        case("spec/requests/api/v3/triggers_spec.rb: it 'responds with 404 Not Found if requesting non-existing trigger' (DELETE)", "DELETE", "/projects/{p}/triggers/abcdef012345", Owner, None, 404, &[]),
        // environments_spec.rb
        case("spec/requests/api/v3/environments_spec.rb: it 'returns project environments'", "GET", "/projects/{priv}/environments", Owner, None, 200,
            &[("", "#2"), ("/0/name", "\"env\""), ("/0/external_url", "\"https://env.example\""), ("/0/project/id", "{priv}"), ("/0/project/visibility_level", "0")]),
        case("spec/requests/api/v3/environments_spec.rb: it 'returns a 404 status code' (non member)", "GET", "/projects/{priv}/environments", Stranger, None, 404, &[]),
        case("spec/requests/api/v3/environments_spec.rb: it 'creates a environment with valid params'", "POST", "/projects/{priv}/environments", Owner, Some(r#"{"name": "mepmep"}"#), 201,
            &[("/name", "\"mepmep\""), ("/slug", "\"mepmep\""), ("/external", "~")]),
        case("spec/requests/api/v3/environments_spec.rb: it 'requires name to be passed'", "POST", "/projects/{priv}/environments", Owner, Some(r#"{"external_url": "test.example.com"}"#), 400, &[]),
        case("spec/requests/api/v3/environments_spec.rb: it 'returns a 400 if environment already exists'", "POST", "/projects/{priv}/environments", Owner, Some(r#"{"name": "env"}"#), 400, &[]),
        case("spec/requests/api/v3/environments_spec.rb: it 'returns a 400 if slug is specified'", "POST", "/projects/{priv}/environments", Owner, Some(r#"{"name": "foo", "slug": "foo"}"#), 400,
            &[("/error", "\"slug is automatically generated and cannot be changed\"")]),
        case("spec/requests/api/v3/environments_spec.rb: it 'rejects the request' (POST, a non member)", "POST", "/projects/{priv}/environments", Stranger, Some(r#"{"name": "gitlab.com"}"#), 404, &[]),
        case("spec/requests/api/v3/environments_spec.rb: it 'returns a 200 if name and external_url are changed'", "PUT", "/projects/{priv}/environments/{env2}", Owner,
            Some(r#"{"name": "Mepmep", "external_url": "https://mepmep.whatever.ninja"}"#), 200,
            &[("/name", "\"Mepmep\""), ("/external_url", "\"https://mepmep.whatever.ninja\"")]),
        case("spec/requests/api/v3/environments_spec.rb: it 'won't allow slug to be changed'", "PUT", "/projects/{priv}/environments/{env}", Owner, Some(r#"{"slug": "env-foo"}"#), 400,
            &[("/error", "\"slug is automatically generated and cannot be changed\"")]),
        case("spec/requests/api/v3/environments_spec.rb: it 'returns a 404 if the environment does not exist'", "PUT", "/projects/{priv}/environments/12345", Owner, Some(r#"{"name": "x"}"#), 404, &[]),
        case("spec/requests/api/v3/environments_spec.rb: it 'returns a 404 for non existing id'", "DELETE", "/projects/{priv}/environments/12345", Owner, None, 404,
            &[("/message", "\"404 Not found\"")]),
        case("spec/requests/api/v3/environments_spec.rb: it 'rejects the request' (DELETE, a non member)", "DELETE", "/projects/{priv}/environments/{env2}", Stranger, None, 404, &[]),
        case("spec/requests/api/v3/environments_spec.rb: it 'returns a 200 for an existing environment'", "DELETE", "/projects/{priv}/environments/{env2}", Owner, None, 200, &[]),
        // system_hooks_spec.rb, broadcast_messages_spec.rb
        case("spec/requests/api/v3/system_hooks_spec.rb: it 'returns authentication error'", "GET", "/hooks", Anon, None, 401, &[]),
        case("spec/requests/api/v3/system_hooks_spec.rb: it 'returns forbidden error'", "GET", "/hooks", Owner, None, 403, &[]),
        case("spec/requests/api/v3/system_hooks_spec.rb: it 'returns an array of hooks'", "GET", "/hooks", Admin, None, 200, &[]),
        case("spec/requests/api/v3/broadcast_messages_spec.rb: it 'returns a 401 for anonymous users'", "DELETE", "/broadcast_messages/{broadcast}", Anon, None, 401, &[]),
        case("spec/requests/api/v3/broadcast_messages_spec.rb: it 'returns a 403 for users'", "DELETE", "/broadcast_messages/{broadcast}", Owner, None, 403, &[]),
        case("spec/requests/api/v3/broadcast_messages_spec.rb: it 'deletes the broadcast message for admins'", "DELETE", "/broadcast_messages/{broadcast}", Admin, None, 200, &[]),
        // notes_spec.rb
        case("spec/requests/api/v3/notes_spec.rb: it 'returns an array of issue notes'", "GET", "/projects/{p}/issues/{issue}/notes", Owner, None, 200,
            &[("/0/body", "*"), ("/0/upvote?", "false"), ("/0/downvote?", "false")]),
        case("spec/requests/api/v3/notes_spec.rb: it 'returns a 404 error when issue id not found'", "GET", "/projects/{p}/issues/12345/notes", Owner, None, 404, &[]),
        case("spec/requests/api/v3/notes_spec.rb: it 'returns an array of snippet notes'", "GET", "/projects/{p}/snippets/{psnippet}/notes", Owner, None, 200, &[("/0/body", "\"snippet note\"")]),
        case("spec/requests/api/v3/notes_spec.rb: it 'returns a 404 error when snippet id not found'", "GET", "/projects/{p}/snippets/42/notes", Owner, None, 404, &[]),
        case("spec/requests/api/v3/notes_spec.rb: it 'returns an array of merge_requests notes'", "GET", "/projects/{p}/merge_requests/{mr}/notes", Owner, None, 200, &[("/0/body", "*")]),
        case("spec/requests/api/v3/notes_spec.rb: it 'returns a 404 error if merge request id not found'", "GET", "/projects/{p}/merge_requests/4444/notes", Owner, None, 404, &[]),
        case("spec/requests/api/v3/notes_spec.rb: it 'returns an issue note by id'", "GET", "/projects/{p}/issues/{issue}/notes/{note}", Owner, None, 200, &[("/body", "\"note\"")]),
        case("spec/requests/api/v3/notes_spec.rb: it 'returns a 404 error if issue note not found'", "GET", "/projects/{p}/issues/{issue}/notes/12345", Owner, None, 404, &[]),
        case("spec/requests/api/v3/notes_spec.rb: it 'returns a snippet note by id'", "GET", "/projects/{p}/snippets/{psnippet}/notes/{snippet_note}", Owner, None, 200,
            &[("/body", "\"snippet note\"")]),
        case("spec/requests/api/v3/notes_spec.rb: it 'creates a new issue note'", "POST", "/projects/{p}/issues/{issue}/notes", Dev, Some(r#"{"body": "hi!"}"#), 201,
            &[("/body", "\"hi!\""), ("/author/username", "\"dev\"")]),
        case("spec/requests/api/v3/notes_spec.rb: it 'returns a 401 unauthorized error if user not authenticated'", "POST", "/projects/{p}/issues/{issue}/notes", Anon, Some(r#"{"body": "hi!"}"#), 401, &[]),
        case("spec/requests/api/v3/notes_spec.rb: it 'creates a new snippet note'", "POST", "/projects/{p}/snippets/{psnippet}/notes", Owner, Some(r#"{"body": "hi!"}"#), 201,
            &[("/body", "\"hi!\""), ("/author/username", "\"demo\"")]),
        case("spec/requests/api/v3/notes_spec.rb: it 'responds with resource not found error' (issue id of another project)", "POST", "/projects/{p}/issues/{priv_issue}/notes", Dev,
            Some(r#"{"body": "Hi!"}"#), 404, &[]),
        case("spec/requests/api/v3/notes_spec.rb: it 'returns modified note'", "PUT", "/projects/{p}/issues/{issue}/notes/{note}", Owner, Some(r#"{"body": "Hello!"}"#), 200,
            &[("/body", "\"Hello!\"")]),
        case("spec/requests/api/v3/notes_spec.rb: it 'returns a 404 error when note id not found'", "PUT", "/projects/{p}/issues/{issue}/notes/12345", Owner, Some(r#"{"body": "Hello!"}"#), 404, &[]),
        case("spec/requests/api/v3/notes_spec.rb: it 'returns modified note' (merge request)", "PUT", "/projects/{p}/merge_requests/{mr}/notes/{mr_note}", Owner, Some(r#"{"body": "Hello!"}"#), 200,
            &[("/body", "\"Hello!\"")]),
        case("spec/requests/api/v3/notes_spec.rb: it 'deletes a note'", "DELETE", "/projects/{p}/issues/{issue}/notes/{note_del}", Owner, None, 200, &[]),
        case("spec/requests/api/v3/notes_spec.rb: it 'deletes a note' (really deleted)", "DELETE", "/projects/{p}/issues/{issue}/notes/{note_del}", Owner, None, 404, &[]),
        case("spec/requests/api/v3/notes_spec.rb: it 'deletes a note' (merge request)", "DELETE", "/projects/{p}/merge_requests/{mr}/notes/{mr_note_del}", Owner, None, 200, &[]),
        case("spec/requests/api/v3/notes_spec.rb: it 'returns a 404 error when note id not found' (merge request, DELETE)", "DELETE", "/projects/{p}/merge_requests/{mr}/notes/12345", Owner, None, 404, &[]),
        // boards_spec.rb
        case("spec/requests/api/v3/boards_spec.rb: it 'returns the project issue board'", "GET", "/projects/{p}/boards", Dev, None, 200, &[("", "#1"), ("/0/id", "{board}"), ("/0/lists/0/position", "*")]),
        case("spec/requests/api/v3/boards_spec.rb: it 'returns issue board lists'", "GET", "/projects/{p}/boards/{board}/lists", Dev, None, 200, &[("/0/label/name", "\"Testing\"")]),
        case("spec/requests/api/v3/boards_spec.rb: it 'returns 404 if board not found'", "GET", "/projects/{p}/boards/22343/lists", Dev, None, 404, &[]),
        case("spec/requests/api/v3/boards_spec.rb: it 'rejects a non member from deleting a list'", "DELETE", "/projects/{p}/boards/{board}/lists/{list}", Stranger, None, 403, &[]),
        case("spec/requests/api/v3/boards_spec.rb: it 'rejects a user with guest role from deleting a list'", "DELETE", "/projects/{p}/boards/{board}/lists/{list}", Guest, None, 403, &[]),
        case("spec/requests/api/v3/boards_spec.rb: it 'returns 404 error if list id not found'", "DELETE", "/projects/{p}/boards/{board}/lists/44444", Dev, None, 404, &[]),
        // award_emoji_spec.rb
        case("spec/requests/api/v3/award_emoji_spec.rb: it 'returns an array of award_emoji' (issue)", "GET", "/projects/{p}/issues/{issue}/award_emoji", Dev, None, 200, &[("/0/name", "\"thumbsup\"")]),
        case("spec/requests/api/v3/award_emoji_spec.rb: it 'returns a 404 error when issue id not found'", "GET", "/projects/{p}/issues/12345/award_emoji", Dev, None, 404, &[]),
        case("spec/requests/api/v3/award_emoji_spec.rb: it 'returns an array of award_emoji' (merge request)", "GET", "/projects/{p}/merge_requests/{mr}/award_emoji", Dev, None, 200,
            &[("/0/name", "\"thumbsdown\"")]),
        case("spec/requests/api/v3/award_emoji_spec.rb: it 'returns a status code 404' (no access)", "GET", "/projects/{priv}/issues/{priv_issue}/award_emoji", Stranger, None, 404, &[]),
        case("spec/requests/api/v3/award_emoji_spec.rb: it 'returns the award emoji' (issue)", "GET", "/projects/{p}/issues/{issue}/award_emoji/{award}", Dev, None, 200,
            &[("/name", "\"thumbsup\""), ("/awardable_id", "{issue}"), ("/awardable_type", "\"Issue\"")]),
        case("spec/requests/api/v3/award_emoji_spec.rb: it 'returns a 404 error if the award is not found'", "GET", "/projects/{p}/issues/{issue}/award_emoji/12345", Dev, None, 404, &[]),
        case("spec/requests/api/v3/award_emoji_spec.rb: it 'returns the award emoji' (merge request)", "GET", "/projects/{p}/merge_requests/{mr}/award_emoji/{mr_award}", Dev, None, 200,
            &[("/name", "\"thumbsdown\""), ("/awardable_id", "{mr}"), ("/awardable_type", "\"MergeRequest\"")]),
        case("spec/requests/api/v3/award_emoji_spec.rb: it 'creates a new award emoji' (issue)", "POST", "/projects/{p}/issues/{issue}/award_emoji", Dev, Some(r#"{"name": "blowfish"}"#), 201,
            &[("/name", "\"blowfish\""), ("/user/username", "\"dev\"")]),
        case("spec/requests/api/v3/award_emoji_spec.rb: it 'returns a 400 bad request error if the name is not given'", "POST", "/projects/{p}/issues/{issue}/award_emoji", Dev, Some("{}"), 400, &[]),
        case("spec/requests/api/v3/award_emoji_spec.rb: it 'returns a 401 unauthorized error if the user is not authenticated'", "POST", "/projects/{p}/issues/{issue}/award_emoji", Anon,
            Some(r#"{"name": "thumbsup"}"#), 401, &[]),
        case("spec/requests/api/v3/award_emoji_spec.rb: it 'returns a 404 status code' (emoji already awarded)", "POST", "/projects/{p}/issues/{issue}/award_emoji", Dev,
            Some(r#"{"name": "blowfish"}"#), 404, &[("/message", "has:has already been taken")]),
        case("spec/requests/api/v3/award_emoji_spec.rb: it 'creates a new award emoji' (note)", "POST", "/projects/{p}/issues/{issue}/notes/{note}/award_emoji", Dev, Some(r#"{"name": "rocket"}"#), 201,
            &[("/user/username", "\"dev\"")]),
        case("spec/requests/api/v3/award_emoji_spec.rb: it 'deletes the award'", "DELETE", "/projects/{p}/issues/{issue_dev}/award_emoji/{award_del}", Owner, None, 200, &[]),
        case("spec/requests/api/v3/award_emoji_spec.rb: it 'returns a 404 error when the award emoji can not be found'", "DELETE", "/projects/{p}/issues/{issue}/award_emoji/12345", Owner, None, 404, &[]),
        // templates_spec.rb
        case("spec/requests/api/v3/templates_spec.rb: it 'returns a list of available gitignore templates'", "GET", "/templates/gitignores", Anon, None, 200, &[("/0/name", "*"), ("/0/content", "~")]),
        case("spec/requests/api/v3/templates_spec.rb: it 'returns a list of available gitignore templates' (without /templates namespace)", "GET", "/gitignores", Anon, None, 200, &[("/0/name", "*")]),
        case("spec/requests/api/v3/templates_spec.rb: it 'returns a license template'", "GET", "/templates/licenses/mit", Anon, None, 200, &[("/key", "\"mit\""), ("/name", "\"MIT License\"")]),
        case("spec/requests/api/v3/templates_spec.rb: it 'returns a list of available license templates' (without /templates namespace)", "GET", "/licenses", Anon, None, 200, &[("/0/key", "*")]),
        case("spec/requests/api/v3/templates_spec.rb: it 'returns a 404' (an unknown license)", "GET", "/templates/licenses/muth-over9000", Anon, None, 404, &[]),
        // deployments_spec.rb
        case("spec/requests/api/v3/deployments_spec.rb: it 'returns projects deployments'", "GET", "/projects/{p}/deployments", Owner, None, 200, &[("", "#1"), ("/0/iid", "*"), ("/0/sha", "*")]),
        case("spec/requests/api/v3/deployments_spec.rb: it 'returns the projects deployment'", "GET", "/projects/{p}/deployments/{deployment}", Owner, None, 200, &[("/id", "{deployment}"), ("/sha", "*")]),
        case("spec/requests/api/v3/deployments_spec.rb: it 'returns a 404 status code' (non member)", "GET", "/projects/{priv}/deployments", Stranger, None, 404, &[]),
        // users_spec.rb
        case("spec/requests/api/v3/users_spec.rb: it 'returns an array of users'", "GET", "/users?username=dev", Owner, None, 200, &[("/0/username", "\"dev\"")]),
        case("spec/requests/api/v3/users_spec.rb: it 'does not reveal the `is_admin` flag of the user' (GET /users)", "GET", "/users", Owner, None, 200, &[("/0/is_admin", "~")]),
        case("spec/requests/api/v3/users_spec.rb: it 'reveals the `is_admin` flag of the user'", "GET", "/users", Admin, None, 200, &[("/0/is_admin", "*")]),
        case("spec/requests/api/v3/users_spec.rb: it 'returns authentication error' (GET /users/:id/keys)", "GET", "/users/{dev}/keys", Anon, None, 401, &[]),
        case("spec/requests/api/v3/users_spec.rb: it 'returns 404 for non-existing user' (keys)", "GET", "/users/999999/keys", Admin, None, 404, &[("/message", "\"404 User Not Found\"")]),
        case("spec/requests/api/v3/users_spec.rb: it 'returns 404 for non-existing user' (emails)", "GET", "/users/999999/emails", Admin, None, 404, &[("/message", "\"404 User Not Found\"")]),
        case("spec/requests/api/v3/users_spec.rb: it 'returns authentication error' (GET /user/keys)", "GET", "/user/keys", Anon, None, 401, &[]),
        case("spec/requests/api/v3/users_spec.rb: it 'returns authentication error' (GET /user/emails)", "GET", "/user/emails", Anon, None, 401, &[]),
        case("spec/requests/api/v3/users_spec.rb: it 'does not be available for non admin users' (block)", "PUT", "/users/{goner}/block", Owner, None, 403, &[]),
        case("spec/requests/api/v3/users_spec.rb: it 'returns a 404 error if user id not found' (block)", "PUT", "/users/9999/block", Admin, None, 404, &[("/message", "\"404 User Not Found\"")]),
        case("spec/requests/api/v3/users_spec.rb: it 'blocks existing user'", "PUT", "/users/{goner}/block", Admin, None, 200, &[]),
        case("spec/requests/api/v3/users_spec.rb: it 'unblocks a blocked user'", "PUT", "/users/{goner}/unblock", Admin, None, 200, &[]),
        case("spec/requests/api/v3/users_spec.rb: it 'returns a 404 error if not found' (events)", "GET", "/users/99420/events", Owner, None, 404, &[("/message", "\"404 User Not Found\"")]),
        // members_spec.rb
        case("spec/requests/api/v3/members_spec.rb: it 'returns 200' (GET project members, as a stranger)", "GET", "/projects/{p}/members", Stranger, None, 200, &[("/0/access_level", "*")]),
        case("spec/requests/api/v3/members_spec.rb: it 'returns 200' (GET a project member, as a stranger)", "GET", "/projects/{p}/members/{dev}", Stranger, None, 200,
            &[("/id", "{dev}"), ("/username", "\"dev\""), ("/state", "\"active\""), ("/access_level", "30")]),
        case("spec/requests/api/v3/members_spec.rb: it 'returns 200' (GET group members, as a stranger)", "GET", "/groups/{g}/members", Stranger, None, 200, &[("/0/access_level", "*")]),
        case("spec/requests/api/v3/members_spec.rb: it 'returns 403' (POST, as a stranger)", "POST", "/projects/{p}/members", Stranger, Some(r#"{"user_id": {asker}, "access_level": 40}"#), 403, &[]),
        case("spec/requests/api/v3/members_spec.rb: it 'returns 403' (POST, as a developer)", "POST", "/projects/{p}/members", Dev, Some(r#"{"user_id": {asker}, "access_level": 40}"#), 403, &[]),
        case("spec/requests/api/v3/members_spec.rb: it 'creates a new member'", "POST", "/projects/{p}/members", Owner, Some(r#"{"user_id": {asker}, "access_level": 30, "expires_at": "2036-08-05"}"#), 201,
            &[("/id", "{asker}"), ("/access_level", "30"), ("/expires_at", "\"2036-08-05\"")]),
        case("spec/requests/api/v3/members_spec.rb: it 'returns 400 when user_id is not given'", "POST", "/projects/{p}/members", Owner, Some(r#"{"access_level": 40}"#), 400, &[]),
        case("spec/requests/api/v3/members_spec.rb: it 'returns 400 when access_level is not given'", "POST", "/projects/{p}/members", Owner, Some(r#"{"user_id": {stranger}}"#), 400, &[]),
        case("spec/requests/api/v3/members_spec.rb: it 'returns 422 when access_level is not valid'", "POST", "/projects/{p}/members", Owner, Some(r#"{"user_id": {stranger}, "access_level": 1234}"#), 422, &[]),
        case("spec/requests/api/v3/members_spec.rb: it 'returns 409 if member already exists' (group)", "POST", "/groups/{g}/members", Owner, Some(r#"{"user_id": {demo}, "access_level": 40}"#), 409, &[]),
        case("spec/requests/api/v3/members_spec.rb: it 'returns 403' (PUT, as a stranger)", "PUT", "/projects/{p}/members/{dev}", Stranger, Some(r#"{"access_level": 40}"#), 403, &[]),
        case("spec/requests/api/v3/members_spec.rb: it 'returns 409 if member does not exist' (answers 404)", "PUT", "/projects/{p}/members/123", Owner, Some(r#"{"access_level": 40}"#), 404, &[]),
        case("spec/requests/api/v3/members_spec.rb: it 'returns 400 when access_level is not given' (PUT)", "PUT", "/projects/{p}/members/{dev}", Owner, Some("{}"), 400, &[]),
        case("spec/requests/api/v3/members_spec.rb: it 'returns 422 when access level is not valid' (PUT)", "PUT", "/projects/{p}/members/{dev}", Owner, Some(r#"{"access_level": 1234}"#), 422, &[]),
        case("spec/requests/api/v3/members_spec.rb: it 'returns 403' (DELETE, as a stranger)", "DELETE", "/projects/{p}/members/{dev}", Stranger, None, 403, &[]),
        // repositories_spec.rb
        case("spec/requests/api/v3/repositories_spec.rb: it 'returns the repository tree' (unauthenticated, public project)", "GET", "/projects/{p}/repository/tree", Anon, None, 200, &[("/0/type", "*"), ("/0/mode", "*")]),
        case("spec/requests/api/v3/repositories_spec.rb: it_behaves_like '404 response' (ref does not exist)", "GET", "/projects/{p}/repository/tree?ref_name=foo", Owner, None, 404,
            &[("/message", "\"404 Tree Not Found\"")]),
        case("spec/requests/api/v3/repositories_spec.rb: it_behaves_like '404 response' (tree, unauthenticated, private project)", "GET", "/projects/{priv}/repository/tree", Anon, None, 404,
            &[("/message", "\"404 Project Not Found\"")]),
        case("spec/requests/api/v3/repositories_spec.rb: it_behaves_like '403 response' (tree, as a guest)", "GET", "/projects/{priv}/repository/tree", Guest, None, 403, &[]),
        case("spec/requests/api/v3/repositories_spec.rb: it 'returns valid data' (contributors, unauthenticated, public project)", "GET", "/projects/{p}/repository/contributors", Anon, None, 200,
            &[("/0/commits", "*"), ("/0/additions", "0"), ("/0/deletions", "0")]),
        case("spec/requests/api/v3/repositories_spec.rb: it_behaves_like '404 response' (contributors, unauthenticated, private project)", "GET", "/projects/{priv}/repository/contributors", Anon, None, 404,
            &[("/message", "\"404 Project Not Found\"")]),
        case("spec/requests/api/v3/repositories_spec.rb: it_behaves_like '403 response' (contributors, as a guest)", "GET", "/projects/{priv}/repository/contributors", Guest, None, 403, &[]),
        // commits_spec.rb
        case("spec/requests/api/v3/commits_spec.rb: it 'returns project commits'", "GET", "/projects/{p}/repository/commits", Owner, None, 200,
            &[("/0/id", "\"{sha}\""), ("/0/committer_name", "*"), ("/0/committer_email", "*")]),
        case("spec/requests/api/v3/commits_spec.rb: it 'returns an invalid parameter error message'", "GET", "/projects/{p}/repository/commits?since=invalid-date", Owner, None, 400,
            &[("/error", "\"since is invalid\"")]),
        case("spec/requests/api/v3/commits_spec.rb: it 'returns a commit by sha'", "GET", "/projects/{p}/repository/commits/{sha}", Owner, None, 200,
            &[("/id", "\"{sha}\""), ("/title", "*"), ("/stats/additions", "*"), ("/stats/total", "*")]),
        case("spec/requests/api/v3/commits_spec.rb: it 'returns a 404 error if not found'", "GET", "/projects/{p}/repository/commits/invalid_sha", Owner, None, 404, &[]),
        case("spec/requests/api/v3/commits_spec.rb: it 'returns the diff of the selected commit'", "GET", "/projects/{p}/repository/commits/{sha}/diff", Owner, None, 200, &[("/0/diff", "*")]),
        case("spec/requests/api/v3/commits_spec.rb: it 'returns a 404 error if invalid commit'", "GET", "/projects/{p}/repository/commits/invalid_sha/diff", Owner, None, 404, &[]),
        case("spec/requests/api/v3/commits_spec.rb: it 'returns merge_request comments'", "GET", "/projects/{p}/repository/commits/{sha}/comments", Owner, None, 200,
            &[("", "#1"), ("/0/note", "\"a comment on a commit\""), ("/0/author/username", "\"demo\"")]),
        case("spec/requests/api/v3/commits_spec.rb: it 'returns a 404 error if merge_request_id not found'", "GET", "/projects/{p}/repository/commits/1234ab/comments", Owner, None, 404, &[]),
        case("spec/requests/api/v3/commits_spec.rb: it 'returns a 403 unauthorized for user without permissions'", "POST", "/projects/{priv}/repository/commits", Guest, None, 403, &[]),
        case("spec/requests/api/v3/commits_spec.rb: it 'returns a 400 bad request if no params are given'", "POST", "/projects/{p}/repository/commits", Owner, None, 400, &[]),
        case("spec/requests/api/v3/commits_spec.rb: it 'a new file in project repo'", "POST", "/projects/{p}/repository/commits", Owner,
            Some(r#"{"branch_name": "main", "commit_message": "Created file", "actions": [{"action": "create", "file_path": "foo/bar/baz.txt", "content": "puts 8"}]}"#), 201,
            &[("/title", "\"Created file\""), ("/committer_name", "\"Demo User\""), ("/committer_email", "\"demo@example.com\"")]),
        case("spec/requests/api/v3/commits_spec.rb: it 'returns a 400 bad request if file exists'", "POST", "/projects/{p}/repository/commits", Owner,
            Some(r#"{"branch_name": "main", "commit_message": "Created file", "actions": [{"action": "create", "file_path": "src/main.rs", "content": "puts 8"}]}"#), 400, &[]),
        case("spec/requests/api/v3/commits_spec.rb: it 'returns a 400 bad request if file does not exist' (delete)", "POST", "/projects/{p}/repository/commits", Owner,
            Some(r#"{"branch_name": "main", "commit_message": "Deleted file", "actions": [{"action": "delete", "file_path": "doc/api/projects.md"}]}"#), 400, &[]),
        case("spec/requests/api/v3/commits_spec.rb: it 'returns a 400 bad request if file does not exist' (update)", "POST", "/projects/{p}/repository/commits", Owner,
            Some(r#"{"branch_name": "main", "commit_message": "Updated file", "actions": [{"action": "update", "file_path": "foo/bar.baz", "content": "puts 8"}]}"#), 400, &[]),
        // files_spec.rb
        case("spec/requests/api/v3/files_spec.rb: it 'returns file info' (unauthenticated, public project)", "GET", "/projects/{p}/repository/files?file_path=src/main.rs&ref=main", Anon, None, 200,
            &[("/file_path", "\"src/main.rs\""), ("/file_name", "\"main.rs\""), ("/last_commit_id", "*"), ("/content", "*")]),
        case("spec/requests/api/v3/files_spec.rb: it_behaves_like '400 response' (no params are given)", "GET", "/projects/{p}/repository/files", Owner, None, 400, &[]),
        case("spec/requests/api/v3/files_spec.rb: it_behaves_like '404 response' (file_path does not exist)", "GET", "/projects/{p}/repository/files?file_path=app/models/application.rb&ref=main",
            Owner, None, 404, &[("/message", "\"404 File Not Found\"")]),
        case("spec/requests/api/v3/files_spec.rb: it_behaves_like '404 response' (unauthenticated, private project)", "GET", "/projects/{priv}/repository/files?file_path=README.md&ref=main",
            Anon, None, 404, &[("/message", "\"404 Project Not Found\"")]),
        case("spec/requests/api/v3/files_spec.rb: it_behaves_like '403 response' (as a guest)", "GET", "/projects/{priv}/repository/files?file_path=README.md&ref=main", Guest, None, 403, &[]),
        case("spec/requests/api/v3/files_spec.rb: it 'creates a new file in project repo'", "POST", "/projects/{p}/repository/files", Owner,
            Some(r#"{"file_path": "newfile.rb", "branch_name": "main", "content": "puts 8", "commit_message": "Added newfile"}"#), 201, &[("/file_path", "\"newfile.rb\"")]),
        case("spec/requests/api/v3/files_spec.rb: it 'returns a 400 bad request if no params given' (POST)", "POST", "/projects/{p}/repository/files", Owner, None, 400, &[]),
        case("spec/requests/api/v3/files_spec.rb: it 'updates existing file in project repo'", "PUT", "/projects/{p}/repository/files", Owner,
            Some(r#"{"file_path": "src/main.rs", "branch_name": "main", "content": "puts 8", "commit_message": "Changed file"}"#), 200, &[("/file_path", "\"src/main.rs\"")]),
        case("spec/requests/api/v3/files_spec.rb: it 'returns a 400 bad request if no params given' (PUT)", "PUT", "/projects/{p}/repository/files", Owner, None, 400, &[]),
        case("spec/requests/api/v3/files_spec.rb: it 'deletes existing file in project repo'", "DELETE", "/projects/{p}/repository/files", Owner,
            Some("file_path=newfile.rb&branch_name=main&commit_message=Changed+file"), 200, &[("/file_path", "\"newfile.rb\"")]),
        case("spec/requests/api/v3/files_spec.rb: it 'returns a 400 bad request if no params given' (DELETE)", "DELETE", "/projects/{p}/repository/files", Owner, None, 400, &[]),
        // services_spec.rb
        case("spec/requests/api/v3/services_spec.rb: it 'deletes #{service}' (asana)", "DELETE", "/projects/{p}/services/asana", Owner, None, 200, &[]),
        case("spec/requests/api/v3/services_spec.rb: it 'deletes #{service}' (slack)", "DELETE", "/projects/{p}/services/slack", Owner, None, 200, &[]),
        case("spec/requests/api/v3/members_spec.rb: it 'returns 200 if member does not exist' (project)", "DELETE", "/projects/{p}/members/99123", Owner, None, 200, &[]),
        case("spec/requests/api/v3/members_spec.rb: it 'returns 201 if member already exists' (project)", "POST", "/projects/{p}/members", Owner, Some(r#"{"user_id": {dev}, "access_level": 30}"#), 201, &[("/id", "{dev}")]),
        case("spec/requests/api/v3/members_spec.rb: it 'returns 403' (Adding owner to project, answers 422)", "POST", "/projects/{p}/members", Owner, Some(r#"{"user_id": {stranger}, "access_level": 50}"#), 422, &[]),
        case("spec/requests/api/v3/members_spec.rb: it 'deletes the member' (as a master/owner)", "DELETE", "/projects/{p}/members/{asker}", Owner, None, 200, &[]),
        case("spec/requests/api/v3/triggers_spec.rb: it 'returns unauthorized if token is for different project' (answers 404 in its last V3 version)", "POST", "/projects/{q}/trigger/builds", Anon, Some("ref=main&token={trigger}"), 404, &[]),
        case("spec/requests/api/v3/triggers_spec.rb: it 'returns bad request with no builds created if there's no commit for that ref'", "POST", "/projects/{p}/trigger/builds", Anon, Some("ref=other-branch&token={trigger}"), 400, &[("/message/base", "[\"Reference not found\"]")]),
        case("spec/requests/api/v3/triggers_spec.rb: it 'creates builds from the ref given in the URL, not in the body'", "POST", "/projects/{p}/ref/main/trigger/builds?token={trigger}", Anon, Some("ref=refs/heads/other-branch"), 201, &[]),
        case("spec/requests/api/v3/project_hooks_spec.rb: it 'returns a 404 error if hook id not given'", "DELETE", "/projects/{p}/hooks", Owner, None, 404, &[]),
        case("spec/requests/api/v3/users_spec.rb: it 'returns a 404 for invalid ID'", "PUT", "/users/ASDF/block", Admin, None, 404, &[]),
        case("spec/requests/api/v3/users_spec.rb: it 'returns a 404 for invalid ID' (emails)", "PUT", "/users/ASDF/emails", Admin, None, 404, &[]),
        case("spec/requests/api/v3/notes_spec.rb: it 'returns a 400 bad request error if body not given' (PUT)", "PUT", "/projects/{p}/issues/{issue}/notes/{note}", Owner, None, 400, &[]),
        case("spec/requests/api/v3/notes_spec.rb: it 'returns 404 when not authorized' (snippet notes)", "GET", "/projects/{priv}/snippets/{psnippet}/notes", Stranger, None, 404, &[]),
        // settings_spec.rb, projects_spec.rb (fork links)
        case("spec/requests/api/v3/settings_spec.rb: it 'returns application settings'", "GET", "/application/settings", Admin, None, 200,
            &[("/default_projects_limit", "*"), ("/password_authentication_enabled", "true"), ("/repository_storage", "\"default\""), ("/koding_enabled", "false"), ("/koding_url", "~"), ("/plantuml_enabled", "false"), ("/plantuml_url", "~")]),
        case("spec/requests/api/v3/settings_spec.rb: it 'returns a blank parameter error message' (koding)", "PUT", "/application/settings", Admin, Some(r#"{"koding_enabled": true}"#), 400, &[("/error", "\"koding_url is missing\"")]),
        case("spec/requests/api/v3/settings_spec.rb: it 'returns a blank parameter error message' (plantuml)", "PUT", "/application/settings", Admin, Some(r#"{"plantuml_enabled": true}"#), 400, &[("/error", "\"plantuml_url is missing\"")]),
        case("spec/requests/api/v3/settings_spec.rb: it 'updates application settings'", "PUT", "/application/settings", Admin,
            Some(r#"{"default_projects_limit": 3, "password_authentication_enabled_for_web": false, "koding_enabled": true, "koding_url": "http://koding.example.com", "plantuml_enabled": true, "plantuml_url": "http://plantuml.example.com"}"#), 200,
            &[("/default_projects_limit", "3"), ("/password_authentication_enabled", "false"), ("/koding_enabled", "true"), ("/koding_url", "\"http://koding.example.com\""), ("/plantuml_enabled", "true")]),
        case("spec/requests/api/v3/projects_spec.rb: it 'is forbidden to non-owner users' (DELETE /projects/:id/fork)", "DELETE", "/projects/{fork}/fork", Owner, None, 403, &[]),
        case("spec/requests/api/v3/projects_spec.rb: it 'makes forked project unforked'", "DELETE", "/projects/{fork}/fork", Admin, None, 200, &[]),
        case("spec/requests/api/v3/projects_spec.rb: it 'makes forked project unforked' (reloaded)", "GET", "/projects/{fork}", Admin, None, 200, &[("/id", "{fork}"), ("/forked_from_project", "~")]),
        case("spec/requests/api/v3/projects_spec.rb: it 'is idempotent if not forked'", "DELETE", "/projects/{fork}/fork", Admin, None, 304, &[]),
        // issues_spec.rb
        case("spec/requests/api/v3/issues_spec.rb: it 'returns authentication error' (GET /issues)", "GET", "/issues", Anon, None, 401, &[]),
        case("spec/requests/api/v3/issues_spec.rb: it 'returns an array of closed issues'", "GET", "/issues?state=closed", Owner, None, 200, &[("", "#0")]),
        case("spec/requests/api/v3/issues_spec.rb: it 'returns 404 when project does not exist'", "GET", "/projects/1000000/issues", Stranger, None, 404, &[]),
        case("spec/requests/api/v3/issues_spec.rb: it 'returns 404 on private projects for other users'", "GET", "/projects/{priv}/issues", Stranger, None, 404, &[]),
        case("spec/requests/api/v3/issues_spec.rb: it 'returns an array of labeled project issues'", "GET", "/projects/{p}/issues?labels=bug", Dev, None, 200, &[("", "#1"), ("/0/labels", "[\"bug\"]")]),
        case("spec/requests/api/v3/issues_spec.rb: it 'returns an empty array if no project issue matches labels'", "GET", "/projects/{p}/issues?labels=foo,bar", Dev, None, 200, &[("", "#0")]),
        case("spec/requests/api/v3/issues_spec.rb: it 'returns an empty array if no issue matches milestone'", "GET", "/projects/{p}/issues?milestone=milestone3", Dev, None, 200, &[("", "#0")]),
        case("spec/requests/api/v3/issues_spec.rb: it 'returns an empty array if milestone does not exist'", "GET", "/projects/{p}/issues?milestone=foo", Dev, None, 200, &[("", "#0")]),
        case("spec/requests/api/v3/issues_spec.rb: it 'returns an array of issues in given milestone'", "GET", "/projects/{p}/issues?milestone=milestone", Dev, None, 200, &[("", "#1"), ("/0/id", "{issue}")]),
        case("spec/requests/api/v3/issues_spec.rb: it 'returns an array of issues with no milestone'", "GET", "/projects/{p}/issues?milestone=No%20Milestone", Dev, None, 200, &[("", "#4"), ("/0/milestone", "~"), ("/3/milestone", "~")]),
        case("spec/requests/api/v3/issues_spec.rb: it 'exposes known attributes'", "GET", "/projects/{p}/issues/{issue}", Dev, None, 200,
            &[("/id", "{issue}"), ("/iid", "{issue_iid}"), ("/project_id", "{p}"), ("/title", "\"issue\""), ("/state", "\"opened\""), ("/labels", "[]"), ("/milestone/title", "\"milestone\""), ("/author/username", "\"demo\""), ("/confidential", "false"), ("/weight", "~")]),
        case("spec/requests/api/v3/issues_spec.rb: it 'returns a project issue by iid'", "GET", "/projects/{p}/issues?iid={issue_iid}", Dev, None, 200, &[("", "#1"), ("/0/id", "{issue}"), ("/0/iid", "{issue_iid}")]),
        case("spec/requests/api/v3/issues_spec.rb: it 'returns an empty array for an unknown project issue iid'", "GET", "/projects/{p}/issues?iid=9999", Dev, None, 200, &[("", "#0")]),
        case("spec/requests/api/v3/issues_spec.rb: it 'returns 404 if issue id not found'", "GET", "/projects/{p}/issues/54321", Dev, None, 404, &[]),
        case("spec/requests/api/v3/issues_spec.rb: it 'creates a new project issue'", "POST", "/projects/{p}/issues", Dev, Some("title=new+issue&labels=label%2C+label2"), 201,
            &[("/title", "\"new issue\""), ("/description", "~"), ("/labels", "[\"label\", \"label2\"]"), ("/confidential", "false")]),
        case("spec/requests/api/v3/issues_spec.rb: it 'creates a new confidential project issue'", "POST", "/projects/{p}/issues", Dev, Some(r#"{"title": "new issue", "confidential": true}"#), 201, &[("/confidential", "true")]),
        case("spec/requests/api/v3/issues_spec.rb: it 'creates a new confidential project issue with a different param'", "POST", "/projects/{p}/issues", Dev, Some("title=new+issue&confidential=y"), 201, &[("/confidential", "true")]),
        case("spec/requests/api/v3/issues_spec.rb: it 'creates a public issue when confidential param is false'", "POST", "/projects/{p}/issues", Dev, Some("title=new+issue&confidential=false"), 201, &[("/confidential", "false")]),
        case("spec/requests/api/v3/issues_spec.rb: it 'creates a public issue when confidential param is invalid'", "POST", "/projects/{p}/issues", Dev, Some("title=new+issue&confidential=foo"), 400, &[("/error", "\"confidential is invalid\"")]),
        case("spec/requests/api/v3/issues_spec.rb: it 'returns a 400 bad request if title not given'", "POST", "/projects/{p}/issues", Dev, Some("labels=label%2C+label2"), 400, &[]),
        case("spec/requests/api/v3/issues_spec.rb: it 'allows special label names'", "POST", "/projects/{p}/issues", Owner, Some("title=new+issue&labels=label%2C+label%3F%2C+label%26foo%2C+%3F%2C+%26"), 201, &[("/labels", "#5")]),
        case("spec/requests/api/v3/issues_spec.rb: it 'returns 400 if title is too long'", "POST", "/projects/{p}/issues", Dev, Some("title=gggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggg"), 400,
            &[("/message/title", "[\"is too long (maximum is 255 characters)\"]")]),
        case("spec/requests/api/v3/issues_spec.rb: it 'creates a new project issue' (with due date)", "POST", "/projects/{p}/issues", Dev, Some(r#"{"title": "new issue", "due_date": "2036-01-02"}"#), 201, &[("/due_date", "\"2036-01-02\"")]),
        // builds_spec.rb
        case("spec/requests/api/v3/builds_spec.rb: it 'returns correct values'", "GET", "/projects/{p}/builds", Dev, None, 200,
            &[("/0/commit/id", "*"), ("/0/pipeline/id", "*"), ("/0/pipeline/ref", "\"main\""), ("/0/pipeline/sha", "*"), ("/0/pipeline/status", "*")]),
        case("spec/requests/api/v3/builds_spec.rb: it (filter project with one scope element)", "GET", "/projects/{p}/builds?scope=pending", Dev, None, 200, &[]),
        case("spec/requests/api/v3/builds_spec.rb: it 'returns specific job data'", "GET", "/projects/{p}/builds/{job}", Dev, None, 200, &[("/name", "\"build\""), ("/pipeline/id", "*")]),
        case("spec/requests/api/v3/builds_spec.rb: it 'responds with 404' (commit does not exist)", "GET", "/projects/{p}/repository/commits/1a271fd1/builds", Dev, None, 404, &[]),
        case("spec/requests/api/v3/builds_spec.rb: it 'returns project jobs for specific commit'", "GET", "/projects/{p}/repository/commits/{job_sha}/builds", Dev, None, 200,
            &[("/0/pipeline/sha", "\"{job_sha}\"")]),
        case("spec/requests/api/v3/builds_spec.rb: it 'returns specific job trace'", "GET", "/projects/{p}/builds/{job}/trace", Dev, None, 200, &[]),
        case("spec/requests/api/v3/builds_spec.rb: it_behaves_like 'not found' (has no such ref)", "GET", "/projects/{p}/builds/artifacts/TAIL/download?job=build", Dev, None, 404, &[]),
        case("spec/requests/api/v3/builds_spec.rb: it_behaves_like 'not found' (has no such job)", "GET", "/projects/{p}/builds/artifacts/main/download?job=NOBUILD", Dev, None, 404, &[]),
        case("spec/requests/api/v3/builds_spec.rb: it 'does not cancel job' (without :update_build permission)", "POST", "/projects/{p}/builds/{job}/cancel", Guest, None, 403, &[]),
        case("spec/requests/api/v3/builds_spec.rb: it 'does not retry job' (without :update_build permission)", "POST", "/projects/{p}/builds/{job}/retry", Guest, None, 403, &[]),
        case("spec/requests/api/v3/builds_spec.rb: it 'returns a status code 400, Bad Request' (non-playable job)", "POST", "/projects/{p}/builds/{job}/play", Owner, None, 400, &[("/message", "has:Unplayable Job")]),
        case("spec/requests/api/v3/builds_spec.rb: it 'plays the job'", "POST", "/projects/{p}/builds/{manual_job}/play", Owner, None, 200, &[("/id", "{manual_job}"), ("/user/username", "\"demo\"")]),
        case("spec/requests/api/v3/builds_spec.rb: it 'retries non-running job'", "POST", "/projects/{p}/builds/{job}/retry", Dev, None, 201, &[("/status", "\"pending\"")]),
        // merge_requests_spec.rb
        case("spec/requests/api/v3/merge_requests_spec.rb: it 'returns an array of all merge_requests'", "GET", "/projects/{p}/merge_requests", Dev, None, 200,
            &[("", "#1"), ("/0/title", "\"mr\""), ("/0/web_url", "*"), ("/0/sha", "*"), ("/0/merge_commit_sha", "~")]),
        case("spec/requests/api/v3/merge_requests_spec.rb: it 'returns an array of open merge_requests'", "GET", "/projects/{p}/merge_requests?state=opened", Dev, None, 200, &[("", "#1")]),
        case("spec/requests/api/v3/merge_requests_spec.rb: it 'returns an array of closed merge_requests'", "GET", "/projects/{p}/merge_requests?state=closed", Dev, None, 200, &[("", "#0")]),
        case("spec/requests/api/v3/merge_requests_spec.rb: it 'returns an array of merged merge_requests'", "GET", "/projects/{p}/merge_requests?state=merged", Dev, None, 200, &[("", "#0")]),
        case("spec/requests/api/v3/merge_requests_spec.rb: it 'exposes known attributes'", "GET", "/projects/{p}/merge_requests/{mr}", Dev, None, 200,
            &[("/id", "{mr}"), ("/iid", "{mr_iid}"), ("/project_id", "{p}"), ("/title", "\"mr\""), ("/state", "\"opened\""), ("/labels", "[]"), ("/milestone", "~"),
              ("/author/username", "\"demo\""), ("/target_branch", "\"main\""), ("/source_branch", "\"feature\""), ("/upvotes", "0"), ("/downvotes", "1"),
              ("/source_project_id", "{p}"), ("/target_project_id", "{p}"), ("/work_in_progress", "false"), ("/merge_when_build_succeeds", "false"),
              ("/should_close_merge_request", "~"), ("/force_close_merge_request", "~")]),
        case("spec/requests/api/v3/merge_requests_spec.rb: it 'returns merge_request by iid'", "GET", "/projects/{p}/merge_requests?iid={mr_iid}", Dev, None, 200, &[("", "#1"), ("/0/id", "{mr}")]),
        case("spec/requests/api/v3/merge_requests_spec.rb: it 'returns a 404 error if merge_request_id not found'", "GET", "/projects/{p}/merge_requests/999", Dev, None, 404, &[]),
        case("spec/requests/api/v3/merge_requests_spec.rb: it 'returns a 200 when merge request is valid' (commits)", "GET", "/projects/{p}/merge_requests/{mr}/commits", Dev, None, 200,
            &[("", "#1"), ("/0/title", "\"work\"")]),
        case("spec/requests/api/v3/merge_requests_spec.rb: it 'returns a 404 when merge_request_id not found' (commits)", "GET", "/projects/{p}/merge_requests/999/commits", Dev, None, 404, &[]),
        case("spec/requests/api/v3/merge_requests_spec.rb: it 'returns the change information of the merge_request'", "GET", "/projects/{p}/merge_requests/{mr}/changes", Dev, None, 200,
            &[("/changes", "#1"), ("/changes/0/new_path", "\"feature.txt\"")]),
        case("spec/requests/api/v3/merge_requests_spec.rb: it 'returns a 404 when merge_request_id not found' (changes)", "GET", "/projects/{p}/merge_requests/999/changes", Dev, None, 404, &[]),
        case("spec/requests/api/v3/merge_requests_spec.rb: it 'returns 422 when source_branch equals target_branch'", "POST", "/projects/{p}/merge_requests", Owner,
            Some(r#"{"title": "Test merge_request", "source_branch": "main", "target_branch": "main"}"#), 422, &[]),
        case("spec/requests/api/v3/merge_requests_spec.rb: it 'returns 400 when source_branch is missing'", "POST", "/projects/{p}/merge_requests", Owner,
            Some(r#"{"title": "Test merge_request", "target_branch": "main"}"#), 400, &[]),
        case("spec/requests/api/v3/merge_requests_spec.rb: it 'returns 400 when target_branch is missing'", "POST", "/projects/{p}/merge_requests", Owner,
            Some(r#"{"title": "Test merge_request", "source_branch": "feature"}"#), 400, &[]),
        case("spec/requests/api/v3/merge_requests_spec.rb: it 'returns 400 when title is missing'", "POST", "/projects/{p}/merge_requests", Owner,
            Some(r#"{"target_branch": "main", "source_branch": "feature"}"#), 400, &[]),
        case("spec/requests/api/v3/merge_requests_spec.rb: it 'returns 409 when MR already exists for source/target'", "POST", "/projects/{p}/merge_requests", Owner,
            Some(r#"{"title": "New test merge_request", "source_branch": "feature", "target_branch": "main"}"#), 409, &[]),
        case("spec/requests/api/v3/merge_requests_spec.rb: it 'returns merge_request' (between branches projects)", "POST", "/projects/{p}/merge_requests", Owner,
            Some(r#"{"title": "Test merge_request", "source_branch": "feature_conflict", "target_branch": "main", "labels": "label, label2", "milestone_id": {milestone}, "remove_source_branch": true}"#), 201,
            &[("/title", "\"Test merge_request\""), ("/labels", "[\"label\", \"label2\"]"), ("/milestone/id", "{milestone}"), ("/force_remove_source_branch", "true")]),
        // groups_spec.rb
        case("spec/requests/api/v3/groups_spec.rb: it 'normal user: returns an array of groups of user1'", "GET", "/groups", Owner, None, 200, &[("", "#1"), ("/0/name", "\"Demo Group\"")]),
        case("spec/requests/api/v3/groups_spec.rb: it 'does not include statistics' (normal user)", "GET", "/groups?statistics=true", Owner, None, 200, &[("/0/statistics", "~")]),
        case("spec/requests/api/v3/groups_spec.rb: it 'admin: returns an array of all groups'", "GET", "/groups", Admin, None, 200, &[("", "#2"), ("/0/statistics", "~")]),
        case("spec/requests/api/v3/groups_spec.rb: it 'returns all groups excluding skipped groups'", "GET", "/groups?skip_groups[]={g2}", Admin, None, 200, &[("", "#1")]),
        case("spec/requests/api/v3/groups_spec.rb: it 'returns all groups you have access to'", "GET", "/groups?all_available=true", Stranger, None, 200, &[("", "#1"), ("/0/name", "\"Demo Group\"")]),
        case("spec/requests/api/v3/groups_spec.rb: it 'returns an array of groups the user owns'", "GET", "/groups/owned", Owner, None, 200, &[("/0/name", "\"Demo Group\"")]),
        case("spec/requests/api/v3/groups_spec.rb: it 'returns one of user1's groups'", "GET", "/groups/{g}", Owner, None, 200,
            &[("/id", "{g}"), ("/name", "\"Demo Group\""), ("/path", "\"demo-group\""), ("/visibility_level", "20"), ("/web_url", "*"), ("/full_name", "\"Demo Group\""),
              ("/full_path", "\"demo-group\""), ("/parent_id", "~"), ("/projects", "#1"), ("/shared_projects", "#0")]),
        case("spec/requests/api/v3/groups_spec.rb: it 'does not return a non existing group'", "GET", "/groups/1328", Owner, None, 404, &[]),
        case("spec/requests/api/v3/groups_spec.rb: it 'does not return a group not attached to user1'", "GET", "/groups/{g2}", Owner, None, 404, &[]),
        case("spec/requests/api/v3/groups_spec.rb: it 'returns any existing group' (group path in URL)", "GET", "/groups/demo-group", Admin, None, 200, &[("/name", "\"Demo Group\"")]),
        case("spec/requests/api/v3/groups_spec.rb: it 'does not return a non existing group' (group path in URL)", "GET", "/groups/unknown", Admin, None, 404, &[]),
        case("spec/requests/api/v3/groups_spec.rb: it 'returns the group's projects'", "GET", "/groups/{g}/projects", Owner, None, 200, &[("", "#1"), ("/0/visibility_level", "20")]),
        case("spec/requests/api/v3/groups_spec.rb: it 'does not return a non existing group' (projects)", "GET", "/groups/1328/projects", Owner, None, 404, &[]),
        case("spec/requests/api/v3/groups_spec.rb: it 'does not return a group not attached to user1' (projects)", "GET", "/groups/{g2}/projects", Owner, None, 404, &[]),
        case("spec/requests/api/v3/groups_spec.rb: it 'returns 404 for a non existing group' (PUT)", "PUT", "/groups/1328", Owner, Some(r#"{"name": "New Group"}"#), 404, &[]),
        case("spec/requests/api/v3/groups_spec.rb: it 'does not updates the group' (can see the group)", "PUT", "/groups/{g}", Dev, Some(r#"{"name": "New Group"}"#), 403, &[]),
        case("spec/requests/api/v3/groups_spec.rb: it 'returns 404 when trying to update the group' (cannot see the group)", "PUT", "/groups/{g2}", Owner, Some(r#"{"name": "New Group"}"#), 404, &[]),
        case("spec/requests/api/v3/groups_spec.rb: it 'updates the group' (group owner)", "PUT", "/groups/{g}", Owner, Some(r#"{"name": "New Group", "request_access_enabled": true}"#), 200,
            &[("/name", "\"New Group\""), ("/request_access_enabled", "true")]),
        case("spec/requests/api/v3/groups_spec.rb: it 'returns the group's projects with simple representation'", "GET", "/groups/{g}/projects?simple=true", Owner, None, 200, &[("", "#1"), ("/0/visibility_level", "~")]),
        // projects_spec.rb
        case("spec/requests/api/v3/projects_spec.rb: it 'returns authentication error' (GET /projects)", "GET", "/projects", Anon, None, 401, &[]),
        case("spec/requests/api/v3/projects_spec.rb: it 'includes the project labels as the tag_list'", "GET", "/projects", Owner, None, 200, &[("/0/tag_list", "*"), ("/0/open_issues_count", "*")]),
        case("spec/requests/api/v3/projects_spec.rb: it 'returns searched project'", "GET", "/projects?search=secret", Owner, None, 200, &[("", "#1"), ("/0/id", "{priv}")]),
        case("spec/requests/api/v3/projects_spec.rb: it 'filters based on public visibility param'", "GET", "/projects?visibility=public", Owner, None, 200, &[("/0/visibility_level", "20")]),
        case("spec/requests/api/v3/projects_spec.rb: it 'returns authentication error' (GET /projects/all, unauthenticated)", "GET", "/projects/all", Anon, None, 401, &[]),
        case("spec/requests/api/v3/projects_spec.rb: it 'returns authentication error' (GET /projects/all, regular user)", "GET", "/projects/all", Owner, None, 403, &[]),
        case("spec/requests/api/v3/projects_spec.rb: it 'returns an array of all projects'", "GET", "/projects/all", Admin, None, 200, &[("/0/permissions", "*"), ("/0/statistics", "~")]),
        case("spec/requests/api/v3/projects_spec.rb: it 'includes statistics if requested' (GET /projects/all)", "GET", "/projects/all?statistics=true", Admin, None, 200, &[("/0/statistics", "*")]),
        case("spec/requests/api/v3/projects_spec.rb: it 'returns authentication error' (GET /projects/owned)", "GET", "/projects/owned", Anon, None, 401, &[]),
        case("spec/requests/api/v3/projects_spec.rb: it 'returns an array of projects the user owns'", "GET", "/projects/owned", Stranger, None, 200, &[("/0/owner/username", "\"stranger\""), ("/0/statistics", "~")]),
        case("spec/requests/api/v3/projects_spec.rb: it 'creates new project without path but with name and returns 201'", "POST", "/projects", Dev, Some(r#"{"name": "Foo Project"}"#), 201,
            &[("/name", "\"Foo Project\""), ("/path", "\"foo-project\"")]),
        case("spec/requests/api/v3/projects_spec.rb: it 'creates new project without name but with path and returns 201'", "POST", "/projects", Dev, Some(r#"{"path": "foo_project"}"#), 201,
            &[("/name", "\"foo_project\""), ("/path", "\"foo_project\"")]),
        case("spec/requests/api/v3/projects_spec.rb: it 'does not create new project without name or path and return 400'", "POST", "/projects", Dev, None, 400, &[]),
        case("spec/requests/api/v3/projects_spec.rb: it 'sets a project as public using :public'", "POST", "/projects", Dev, Some(r#"{"name": "pub", "public": true}"#), 201,
            &[("/public", "true"), ("/visibility_level", "20")]),
        case("spec/requests/api/v3/projects_spec.rb: it 'sets a project as internal overriding :public'", "POST", "/projects", Dev, Some(r#"{"name": "int", "visibility_level": 10, "public": true}"#), 201,
            &[("/public", "false"), ("/visibility_level", "10")]),
        case("spec/requests/api/v3/projects_spec.rb: it 'sets a project as private using :public'", "POST", "/projects", Dev, Some(r#"{"name": "priv2", "public": false}"#), 201,
            &[("/public", "false"), ("/visibility_level", "0")]),
        case("spec/requests/api/v3/projects_spec.rb: it 'sets a project as allowing merge only if build succeeds'", "POST", "/projects", Dev, Some(r#"{"name": "strict", "only_allow_merge_if_build_succeeds": true}"#), 201,
            &[("/only_allow_merge_if_build_succeeds", "true")]),
        // merge_request_diffs_spec.rb
        case("spec/requests/api/v3/merge_request_diffs_spec.rb: it 'returns 200 for a valid merge request'", "GET", "/projects/{p}/merge_requests/{mr}/versions", Dev, None, 200,
            &[("", "#1"), ("/0/id", "{version}"), ("/0/head_commit_sha", "*")]),
        case("spec/requests/api/v3/merge_request_diffs_spec.rb: it 'returns a 404 when merge_request_id not found'", "GET", "/projects/{p}/merge_requests/999/versions", Dev, None, 404, &[]),
        case("spec/requests/api/v3/merge_request_diffs_spec.rb: it 'returns a 200 for a valid merge request' (one version)", "GET", "/projects/{p}/merge_requests/{mr}/versions/{version}", Dev, None, 200,
            &[("/id", "{version}"), ("/head_commit_sha", "*"), ("/diffs", "#1")]),
        case("spec/requests/api/v3/merge_request_diffs_spec.rb: it 'returns a 404 when merge_request_id not found' (version 999)", "GET", "/projects/{p}/merge_requests/{mr}/versions/999", Dev, None, 404, &[]),
        // runners_spec.rb
        case("spec/requests/api/v3/runners_spec.rb: it 'returns 404 if runner does not exists'", "DELETE", "/runners/9999", Admin, None, 404, &[]),
        case("spec/requests/api/v3/runners_spec.rb: it 'does not delete runner' (shared, authorized user)", "DELETE", "/runners/{shared_runner}", Owner, None, 403, &[]),
        case("spec/requests/api/v3/runners_spec.rb: it 'does not delete runner without access to it'", "DELETE", "/runners/{runner}", Guest, None, 403, &[]),
        case("spec/requests/api/v3/runners_spec.rb: it 'does not delete runner' (unauthorized user)", "DELETE", "/runners/{runner}", Anon, None, 401, &[]),
        case("spec/requests/api/v3/runners_spec.rb: it 'does not disable project's runner' (one associated project)", "DELETE", "/projects/{p}/runners/{runner}", Owner, None, 403, &[]),
        case("spec/requests/api/v3/runners_spec.rb: it 'returns 404 is runner is not found'", "DELETE", "/projects/{p}/runners/9999", Owner, None, 404, &[]),
        case("spec/requests/api/v3/runners_spec.rb: it 'does not disable project's runner' (authorized user without permissions)", "DELETE", "/projects/{p}/runners/{runner}", Guest, None, 403, &[]),
        case("spec/requests/api/v3/runners_spec.rb: it 'does not disable project's runner' (unauthorized user)", "DELETE", "/projects/{p}/runners/{runner}", Anon, None, 401, &[]),
        case("spec/requests/api/v3/runners_spec.rb: it 'deletes runner for one owned project'", "DELETE", "/runners/{runner}", Owner, None, 200, &[]),
        case("spec/requests/api/v3/runners_spec.rb: it 'deletes runner' (admin, shared)", "DELETE", "/runners/{shared_runner}", Admin, None, 200, &[]),
        // V3 authentication, parameters and answers
        case("spec/requests/api/v3/snippets_spec.rb: it 'returns 404 for another user's snippet'", "PUT", "/snippets/{personal_pub}", Stranger, Some(r#"{"title": "fubar"}"#), 404, &[("/message", "\"404 Snippet Not Found\"")]),
        case("spec/requests/api/v3/users_spec.rb: it 'does not reveal the `is_admin` flag of the user' (POST /users)", "POST", "/users", Admin, Some(r#"{"email": "new@example.com", "username": "newbie", "name": "New", "password": "12345678secret"}"#), 201, &[("/is_admin", "~")]),
        case("spec/requests/api/v3/milestones_spec.rb: it 'returns a 401 error if user not authenticated'", "GET", "/projects/{p}/milestones", Anon, None, 401, &[]),
        case("spec/requests/api/v3/milestones_spec.rb: it 'returns a project milestone by iid'", "GET", "/projects/{p}/milestones?iid={closed_iid}", Dev, None, 200, &[("", "#1"), ("/0/id", "{closed_milestone}")]),
        case("spec/requests/api/v3/milestones_spec.rb: it 'returns a 401 error if user not authenticated' (issues)", "GET", "/projects/{p}/milestones/{milestone}/issues", Anon, None, 401, &[]),
        case("spec/requests/api/v3/notes_spec.rb: it 'returns a 400 bad request error if body not given'", "POST", "/projects/{p}/issues/{issue}/notes", Owner, None, 400, &[]),
        case("spec/requests/api/v3/boards_spec.rb: it 'returns authentication error'", "GET", "/projects/{p}/boards", Anon, None, 401, &[]),
        case("spec/requests/api/v3/award_emoji_spec.rb: it 'returns a 404 error if the user authored issue'", "POST", "/projects/{p}/issues/{issue_dev}/award_emoji", Dev, Some(r#"{"name": "thumbsup"}"#), 404, &[]),
        case("spec/requests/api/v3/award_emoji_spec.rb: it 'it returns 404 error when user authored note'", "POST", "/projects/{p}/issues/{issue}/notes/{note_own}/award_emoji", Dev, Some(r#"{"name": "thumbsup"}"#), 404, &[]),
        case("spec/requests/api/v3/commits_spec.rb: it 'does not return project commits'", "GET", "/projects/{p}/repository/commits", Anon, None, 401, &[]),
        case("spec/requests/api/v3/commits_spec.rb: it 'does not return the selected commit'", "GET", "/projects/{p}/repository/commits/{sha}", Anon, None, 401, &[]),
        case("spec/requests/api/v3/groups_spec.rb: it 'returns authentication error' (GET /groups)", "GET", "/groups", Anon, None, 401, &[]),
        case("spec/requests/api/v3/groups_spec.rb: it 'returns authentication error' (GET /groups/owned)", "GET", "/groups/owned", Anon, None, 401, &[]),
        case("spec/requests/api/v3/projects_spec.rb: it 'returns a simplified version of all the projects'", "GET", "/projects?simple=true", Owner, None, 200,
            &[("/0", "keys:id description default_branch tag_list ssh_url_to_repo http_url_to_repo web_url name name_with_namespace path path_with_namespace star_count forks_count created_at last_activity_at avatar_url")]),
        case("spec/requests/api/v3/projects_spec.rb: it 'returns the visible projects' (when unauthenticated: BasicProjectDetails)", "GET", "/projects/visible", Anon, None, 200,
            &[("/0", "keys:id description default_branch tag_list ssh_url_to_repo http_url_to_repo web_url name name_with_namespace path path_with_namespace star_count forks_count created_at last_activity_at avatar_url")]),
        case("spec/requests/api/v3/projects_spec.rb: it 'returns the visible projects' (when authenticated)", "GET", "/projects/visible", Owner, None, 200,
            &[("/0/permissions", "*"), ("/0/visibility_level", "*"), ("/0/resolve_outdated_diff_discussions", "false")]),
        case("spec/requests/api/v3/projects_spec.rb: it 'returns the public projects' (GET /projects/:id, when unauthenticated)", "GET", "/projects/{p}", Anon, None, 200,
            &[("/id", "{p}"), ("/default_branch", "*"), ("", "keys:id description default_branch tag_list ssh_url_to_repo http_url_to_repo web_url name name_with_namespace path path_with_namespace star_count forks_count created_at last_activity_at avatar_url")]),
        case("spec/requests/api/v3/projects_spec.rb: it 'returns a project by id'", "GET", "/projects/{p}", Owner, None, 200,
            &[("/id", "{p}"), ("/resolve_outdated_diff_discussions", "false"), ("/visibility_level", "*"), ("/namespace", "*"), ("/permissions", "*"), ("/shared_with_groups", "*")]),
        // pipelines_spec.rb
        case("spec/requests/api/v3/pipelines_spec.rb: it 'returns project pipelines'", "GET", "/projects/{p}/pipelines", Owner, None, 200,
            &[("/0", "keys:id sha ref status before_sha tag yaml_errors user created_at updated_at started_at finished_at committed_at duration coverage")]),
        case("spec/requests/api/v3/pipelines_spec.rb: it 'does not return project pipelines'", "GET", "/projects/{priv}/pipelines", Stranger, None, 404, &[("/message", "\"404 Project Not Found\"")]),
        case("spec/requests/api/v3/pipelines_spec.rb: it 'creates and returns a new pipeline'", "POST", "/projects/{p}/pipeline", Owner, Some("ref=main"), 201, &[("/sha", "*"), ("/ref", "\"main\"")]),
        case("spec/requests/api/v3/pipelines_spec.rb: it 'fails when using an invalid ref'", "POST", "/projects/{p}/pipeline", Owner, Some("ref=invalid_ref"), 400,
            &[("/message/base/0", "\"Reference not found\"")]),
        case("spec/requests/api/v3/pipelines_spec.rb: it 'does not create pipeline'", "POST", "/projects/{priv}/pipeline", Stranger, Some("ref=main"), 404, &[("/message", "\"404 Project Not Found\"")]),
        case("spec/requests/api/v3/pipelines_spec.rb: it 'returns project pipelines' (one pipeline)", "GET", "/projects/{p}/pipelines/{pipeline}", Owner, None, 200, &[("/id", "{pipeline}"), ("/sha", "*")]),
        case("spec/requests/api/v3/pipelines_spec.rb: it 'returns 404 when it does not exist'", "GET", "/projects/{p}/pipelines/123456", Owner, None, 404, &[("/message", "\"404 Not found\""), ("/id", "~")]),
        case("spec/requests/api/v3/pipelines_spec.rb: it 'should not return a project pipeline'", "GET", "/projects/{priv}/pipelines/{pipeline}", Stranger, None, 404, &[("/message", "\"404 Project Not Found\"")]),
        case("spec/requests/api/v3/pipelines_spec.rb: it 'should not return a project pipeline' (retry)", "POST", "/projects/{priv}/pipelines/{pipeline}/retry", Stranger, None, 404,
            &[("/message", "\"404 Project Not Found\"")]),
        case("spec/requests/api/v3/pipelines_spec.rb: it 'rejects the action'", "POST", "/projects/{p}/pipelines/{pipeline}/cancel", Guest, None, 403, &[]),
    ]
}

//! A third-party V3 client against `svcgate serve --dev`: the npm library pinned in `tests/v3-client` (the last
//! release of it that speaks V3) is driven by `tests/v3-client/run.js` through projects, issues, notes, files,
//! branches, merge requests, users and members. Every request must succeed and every parsed result must hold
//! the values created. `./test.sh` installs the library before running the tests.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// What `serve --dev` prints before its example `curl`.
struct Banner {
    url: String,
    token: String,
    admin_token: String,
    demo_project: String,
}

impl Banner {
    fn parse(text: &str) -> Banner {
        let find = |prefix: &str| {
            text.lines()
                .find_map(|line| line.trim().strip_prefix(prefix).map(str::to_owned))
                .unwrap_or_else(|| panic!("no line starting {prefix:?} in the banner:\n{text}"))
        };
        let url = find("svcgate is listening on ").trim().to_owned();
        let token = find("demo user: ")
            .split("token: ")
            .nth(1)
            .unwrap_or_else(|| panic!("no demo token in the banner:\n{text}"))
            .trim()
            .to_owned();
        let admin_token = find("backend: ")
            .split("(admin token ")
            .nth(1)
            .and_then(|rest| rest.split(')').next())
            .unwrap_or_else(|| panic!("no admin token in the banner:\n{text}"))
            .trim()
            .to_owned();
        let demo_project = find("demo project: ")
            .split_whitespace()
            .next()
            .unwrap_or_else(|| panic!("no demo project in the banner:\n{text}"))
            .to_owned();
        Banner {
            url,
            token,
            admin_token,
            demo_project,
        }
    }
}

/// The gateway child process; killed if the test ends without stopping it.
struct Gateway {
    child: Child,
}

impl Gateway {
    /// Starts `svcgate serve --dev` on a free port and reads its banner.
    fn start() -> (Gateway, Banner) {
        let mut child = common::process::command()
            .args(["serve", "--dev", "--listen", "127.0.0.1:0"])
            .env("SVCGATE_SHUTDOWN_GRACE", "5s")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("svcgate starts");
        let stdout = child.stdout.take().unwrap();
        let gateway = Gateway { child };

        // The banner ends with the example `curl`; whatever follows is drained so the gateway never blocks on
        // a full pipe.
        let (send, receive) = mpsc::channel();
        std::thread::spawn(move || {
            let mut banner = String::new();
            let mut lines = BufReader::new(stdout).lines().map_while(Result::ok);
            for line in lines.by_ref() {
                let last = line.trim_start().starts_with("curl ");
                banner.push_str(&line);
                banner.push('\n');
                if last {
                    break;
                }
            }
            let _ = send.send(banner);
            for _ in lines {}
        });
        let banner = receive
            .recv_timeout(Duration::from_secs(60))
            .expect("svcgate printed its banner within 60 s");
        assert!(
            banner.contains("svcgate is listening on http://127.0.0.1:"),
            "svcgate did not start; its stdout was:\n{banner}"
        );
        (gateway, Banner::parse(&banner))
    }

    /// Stops the gateway with SIGTERM and checks it exits cleanly.
    fn stop(mut self) {
        let status = common::process::signal(self.child.id(), "-TERM");
        assert!(status.success(), "kill -TERM failed");
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(status.success(), "svcgate exit status {status}");
                return;
            }
            assert!(
                started.elapsed() < Duration::from_secs(15),
                "svcgate still running 15 s after SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn client_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/v3-client")
}

#[test]
fn a_third_party_v3_client_works_through_the_gateway() {
    let dir = client_dir();
    assert!(
        dir.join("node_modules/gitlab/package.json").is_file(),
        "the V3 client library is not installed in {}: run ./test.sh, which installs it \
         (npm ci --prefix tests/v3-client)",
        dir.display()
    );

    let (gateway, banner) = Gateway::start();
    let output = Command::new("node")
        .arg(dir.join("run.js"))
        .arg(&banner.url)
        .arg(&banner.token)
        .arg(&banner.admin_token)
        .env("SVCGATE_DEMO_PROJECT", &banner.demo_project)
        .current_dir(&dir)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|error| {
            panic!("cannot run node ({error}): run ./test.sh, which installs node and the V3 client")
        });
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the V3 client failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
    let summary = stdout.lines().last().unwrap_or_default();
    assert!(
        summary.ends_with(" passed, 0 failed"),
        "the V3 client's last line is not a clean summary:\n{stdout}\n{stderr}"
    );
    migration_report_names_every_route_with_translate_s_v4_request(&banner);
    gateway.stop();
}

/// What `svcgate translate` prints for a V3 request.
struct Translated {
    /// The V4 call it plans (`METHOD target`, the query left out), after any pre-fetch: the first line under
    /// `V4 request(s):`, or the prefix-changed request when no rule names it. `None` for a procedure, whose calls
    /// depend on the backend's answers.
    call: Option<String>,
    /// The line after `migration: `: what the client must change, as the report says it.
    migration: String,
}

fn translated(request: &str) -> Translated {
    let output = common::process::command()
        .args(["translate", request])
        .output()
        .expect("svcgate translate runs");
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    // Exit 0 when a rule matched, 2 when the request passes with the prefix change only.
    assert!(
        matches!(output.status.code(), Some(0 | 2)),
        "translate {request}: {text}"
    );
    let call_of = |line: &str| {
        let line = line.trim();
        let line = line.split(", then page 2").next().unwrap_or(line);
        line.split('?').next().unwrap_or(line).to_owned()
    };
    let call = text
        .lines()
        .skip_while(|line| !line.starts_with("V4 request(s):") && !line.starts_with("no rule"))
        .skip(1)
        .take_while(|line| line.starts_with("  "))
        .find(|line| !line.ends_with("(pre-fetch)") && !line.trim_start().starts_with("body"))
        .filter(|line| !line.trim_start().starts_with("procedure "))
        .map(call_of);
    let migration = text
        .lines()
        .find_map(|line| line.strip_prefix("migration: "))
        .unwrap_or_else(|| panic!("translate {request}: no migration line in\n{text}"))
        .to_owned();
    Translated { call, migration }
}

/// The advice's V4 template (`PUT /api/v4/projects/:id/issues/:issue_iid`) with the values of the sample request
/// of the V3 template filled in, as translate prints them: path parameters as given (a rest of the path
/// URL-encoded), parameters moved into the path from the query, and a global id's iid as translate names it
/// without a backend (`{iid of issue 1234}`).
fn filled(v4: &str, v3_template: &str, sample: &str) -> String {
    let (_, target) = sample.split_once(' ').unwrap();
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let path = path.strip_prefix("/api/v3").unwrap();
    let given: Vec<&str> = path.split('/').collect();
    let mut values: Vec<(String, String)> = Vec::new();
    for (at, segment) in v3_template.split('/').enumerate() {
        if let Some(name) = segment.strip_prefix(':') {
            values.push((name.to_owned(), given[at].to_owned()));
        } else if let Some(name) = segment.strip_prefix('*') {
            values.push((name.to_owned(), given[at..].join("%2F")));
        }
    }
    for pair in query.split('&').filter(|pair| !pair.is_empty()) {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        values.push((name.to_owned(), value.to_owned()));
    }
    let value = |name: &str| {
        values
            .iter()
            .find(|(known, _)| known == name)
            .map(|(_, value)| value.clone())
    };
    v4.split('/')
        .map(|segment| {
            let Some(name) = segment.strip_prefix(':').or_else(|| segment.strip_prefix('*')) else {
                return segment.to_owned();
            };
            if let Some(found) = value(name) {
                return found;
            }
            // A global id's iid: translate names it by the id the request gave.
            let (param, id) = values
                .iter()
                .find(|(param, _)| svcgate::rewrite::rule::Rule::iid_param(param) == name)
                .unwrap_or_else(|| panic!("{v4}: no value for :{name} in {sample}"));
            let kind = if param.starts_with("merge_request") {
                "merge request"
            } else {
                "issue"
            };
            format!("{{iid of {kind} {id}}}")
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// After the client's run: the usage API names who called what; the migration report of each of those clients
/// names every route with a V4 request, and that request is the one `svcgate translate` plans.
fn migration_report_names_every_route_with_translate_s_v4_request(banner: &Banner) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let get = |path: String| {
        runtime
            .block_on(common::get(&format!("{}{path}", banner.url), &banner.admin_token))
            .json()
    };
    // The usage API flushes the counts before it answers.
    let usage = get("/-/svcgate/api/v3-usage".to_owned());
    let mut called: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for route in usage["routes"].as_array().unwrap() {
        for client in route["clients"].as_array().unwrap() {
            // Calls folded into others are no client's.
            if svcgate::rewrite::clients::is_folded(
                client["user"].as_str().unwrap(),
                client["user_agent"].as_str().unwrap(),
            ) {
                continue;
            }
            let product = svcgate::rewrite::clients::agent(client["user_agent"].as_str().unwrap()).product;
            let id = svcgate::rewrite::clients::client_id(client["user"].as_str().unwrap(), &product);
            called
                .entry(id)
                .or_default()
                .push(route["route"].as_str().unwrap().to_owned());
        }
    }
    assert!(!called.is_empty(), "the client's calls were counted: {usage}");
    let mut checked = 0;
    for (id, routes) in &called {
        let report = get(format!("/-/svcgate/api/v3-clients/{id}"));
        for name in routes {
            let route = report["routes"]
                .as_array()
                .unwrap()
                .iter()
                .find(|route| route["route"].as_str() == Some(name))
                .unwrap_or_else(|| panic!("client {id}: no route {name} in {report}"));
            let advice = &route["advice"];
            if advice["change"] == serde_json::json!("failed_unknown_paths") {
                continue;
            }
            assert!(
                advice["v4_method"].is_string() && advice["v4_path"].is_string(),
                "{name}: no V4 request: {advice}"
            );
            // A sample request of the template: the report's own example, or the template with its ids as 1.
            let template = name.trim_end_matches(" (no rule)");
            let sample = match advice["example"]["v3"].as_str() {
                Some(sample) => sample.to_owned(),
                None => {
                    let (method, path) = template.split_once(' ').unwrap();
                    format!("{method} /api/v3{}", path.replace(":id", "1"))
                }
            };
            let plan = translated(&sample);
            assert_eq!(
                plan.migration,
                advice["summary"].as_str().unwrap(),
                "client {id}, route {name}: translate and the report advise alike"
            );
            match plan.call {
                // The V4 call translate plans, against the report's V4 request with the sample's values.
                Some(call) => {
                    let (_, v3_template) = template.split_once(' ').unwrap();
                    let v4_filled = format!(
                        "{} {}",
                        advice["v4_method"].as_str().unwrap(),
                        filled(advice["v4_path"].as_str().unwrap(), v3_template, &sample)
                    );
                    assert_eq!(v4_filled, call, "client {id}, route {name} ({sample})");
                }
                // A procedure: translate lists no call; the report says what a migrated client does instead.
                None => {
                    assert!(advice["kind"].is_string(), "{name}: {advice}");
                    assert!(advice["instead"].is_string(), "{name}: {advice}");
                }
            }
            checked += 1;
        }
    }
    assert!(
        checked >= 10,
        "the client called at least ten routes, {checked} checked"
    );
}

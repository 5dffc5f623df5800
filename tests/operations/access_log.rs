//! The access log as ops read it off a running `svcgate serve`: one line per answered request on stderr, in text
//! and in JSON, with the request id the client sent, the kind, the route, the status, the latency and the backend
//! calls, and the lines still there after a SIGTERM.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use std::io::Read;
use std::process::Stdio;

/// Runs `serve --dev` with `log_format`, sends a passthrough request and a V3 request with their own request ids,
/// stops the gateway with SIGTERM and answers everything it wrote on stderr.
async fn access_lines(log_format: &str) -> String {
    let mut child = common::process::command()
        .args(["serve", "--dev", "--listen", "127.0.0.1:0"])
        .env("SVCGATE_LOG_FORMAT", log_format)
        .env("SVCGATE_SHUTDOWN_GRACE", "5s")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let logged = std::thread::spawn(move || {
        let mut text = String::new();
        stderr.read_to_string(&mut text).unwrap();
        text
    });
    let banner = common::process::dev_banner(&mut child).await;
    let base = banner
        .iter()
        .find_map(|line| line.strip_prefix("svcgate is listening on "))
        .expect("the address")
        .trim()
        .to_owned();
    let token = banner
        .iter()
        .find_map(|line| line.split("token: ").nth(1))
        .expect("the demo token")
        .trim()
        .to_owned();

    for (path, request_id) in [
        ("/api/v4/version", "access-line-v4"),
        ("/api/v3/projects", "access-line-v3"),
    ] {
        let answer = common::send(
            http::Method::GET,
            &format!("{base}{path}"),
            &[("private-token", &token), ("x-request-id", request_id)],
            None,
        )
        .await;
        assert_eq!(answer.status, http::StatusCode::OK, "{path}: {:?}", answer.body);
    }

    let status = common::process::terminate(&mut child).await;
    assert!(status.success(), "exit status {status}");
    logged.join().unwrap()
}

/// The one line that names `request_id`.
fn line_of<'a>(log: &'a str, request_id: &str) -> &'a str {
    let mut lines = log.lines().filter(|line| line.contains(request_id));
    let line = lines
        .next()
        .unwrap_or_else(|| panic!("no line for {request_id}:\n{log}"));
    assert!(lines.next().is_none(), "two lines for {request_id}:\n{log}");
    line
}

#[tokio::test]
async fn each_request_gets_one_text_access_line_that_survives_a_sigterm() {
    let log = access_lines("text").await;
    let v4 = line_of(&log, "access-line-v4");
    let (timestamp, rest) = v4.split_once(' ').unwrap();
    assert!(humantime::parse_rfc3339(timestamp).is_ok(), "{v4}");
    assert!(
        rest.starts_with(
            " INFO request request_id=access-line-v4 method=GET kind=\"passthrough\" route=\"/api/v4/version\" status=200 latency_ms="
        ),
        "{v4}"
    );
    assert!(v4.ends_with(" backend_calls=1"), "{v4}");
    let latency = v4
        .split("latency_ms=")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .unwrap();
    assert!(latency.parse::<f64>().is_ok_and(|ms| ms >= 0.0), "{v4}");

    let v3 = line_of(&log, "access-line-v3");
    assert!(
        v3.contains(" INFO request request_id=access-line-v3 method=GET kind=\"rewrite\" route=\"GET /projects\" status=200 "),
        "{v3}"
    );
}

#[tokio::test]
async fn each_request_gets_one_json_access_line() {
    let log = access_lines("json").await;
    for (request_id, kind, route) in [
        ("access-line-v4", "passthrough", "/api/v4/version"),
        ("access-line-v3", "rewrite", "GET /projects"),
    ] {
        let line = line_of(&log, request_id);
        let fields: serde_json::Value = serde_json::from_str(line).unwrap();
        assert!(
            humantime::parse_rfc3339(fields["timestamp"].as_str().unwrap()).is_ok(),
            "{line}"
        );
        assert_eq!(fields["level"], "INFO", "{line}");
        assert_eq!(fields["message"], "request", "{line}");
        assert_eq!(fields["request_id"], request_id, "{line}");
        assert_eq!(fields["method"], "GET", "{line}");
        assert_eq!(fields["kind"], kind, "{line}");
        assert_eq!(fields["route"], route, "{line}");
        assert_eq!(fields["status"], 200, "{line}");
        assert!(
            fields["latency_ms"].as_f64().is_some_and(|ms| ms >= 0.0),
            "{line}"
        );
        assert!(
            fields["backend_calls"].as_u64().is_some_and(|calls| calls >= 1),
            "{line}"
        );
    }
}

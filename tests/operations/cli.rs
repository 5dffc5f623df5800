//! The command line as scripts use it: `rules check`, `rules list`, `formats check`, `formats list`, configuration
//! errors, and `serve --dev`
//! started as a real process, its printed `curl` tried, then stopped with SIGTERM.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn svcgate() -> Command {
    common::process::command()
}

#[test]
fn rules_check_accepts_the_builtin_table() {
    let output = svcgate().args(["rules", "check"]).output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(String::from_utf8_lossy(&output.stdout).starts_with("ok: "));
}

#[test]
fn rules_list_shows_each_rule_with_release_and_section() {
    let output = svcgate().args(["rules", "list"]).output().unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    let star = text
        .lines()
        .find(|line| line.starts_with("DELETE") && line.contains("/projects/:id/star "))
        .expect("the unstar rule");
    assert!(star.starts_with("DELETE"), "{star}");
    assert!(star.contains("POST    /projects/:id/unstar"), "{star}");
    assert!(star.contains("since 9.0") && star.contains("§2.1"), "{star}");
    assert!(text.lines().any(|line| line.contains("since 8.17")));
}

#[test]
fn formats_check_accepts_the_builtin_formats_and_list_names_them_with_their_origin() {
    let output = svcgate().args(["formats", "check"]).output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(String::from_utf8_lossy(&output.stdout).starts_with("ok: "));

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("acme.toml"), "description = \"ACME's monitor\"\n").unwrap();
    let output = svcgate()
        .args(["formats", "list", "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8(output.stdout).unwrap();
    let first = text.lines().next().unwrap();
    assert!(
        first.starts_with("generic ") && first.ends_with("(built-in (code))"),
        "{text}"
    );
    let grafana = text
        .lines()
        .find(|line| line.starts_with("grafana "))
        .expect("grafana");
    assert!(
        grafana.contains("Grafana") && grafana.ends_with("(built-in)"),
        "{grafana}"
    );
    let acme = text.lines().find(|line| line.starts_with("acme ")).expect("acme");
    assert!(
        acme.contains("ACME's monitor") && acme.contains("acme.toml"),
        "{acme}"
    );
}

#[test]
fn formats_check_reports_file_and_line_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("bad.toml"),
        "description = \"x\"\n\n[fields]\ntitle = \"alerts.title\"\n",
    )
    .unwrap();
    let output = svcgate()
        .args(["formats", "check", "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let error = String::from_utf8(output.stderr).unwrap();
    let file = dir.path().join("bad.toml");
    assert!(
        error.contains(&format!(
            "{}:4: fields.title: expected a path starting with $",
            file.display()
        )),
        "{error}"
    );
}

#[test]
fn rules_check_reports_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("bad.toml"),
        "release = \"9.0\"\n\n[[rule]]\nv3 = \"GET /x/:id\"\nsection = \"1\"\nresponse = \"nothing\"\n",
    )
    .unwrap();
    let output = svcgate()
        .args(["rules", "check", "--rules"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(!output.status.success());
    let error = String::from_utf8(output.stderr).unwrap();
    assert!(
        error.contains("bad.toml:3: response: unknown entity \"nothing\""),
        "{error}"
    );
}

#[test]
fn rules_check_catches_each_kind_of_mistake_with_file_and_line() {
    let rule = |lines: &str| format!("release = \"9.0\"\n\n[[rule]]\nsection = \"1\"\n{lines}\n");
    for (text, expected) in [
        (
            rule("v3 = \"GETT /x\""),
            "bad.toml:3: v3: \"GETT\" is not an HTTP method",
        ),
        (
            rule("v3 = \"GET /x/:id\"\nv4 = \"GET /y/:id/:other\""),
            "bad.toml:3: v4: parameter \"other\" is not in the V3 path",
        ),
        (
            rule("v3 = \"GET /x/:id\"\nids = { issue_id = \"issue\" }"),
            "bad.toml:3: ids: the V3 path has no parameter \"issue_id\"",
        ),
        (
            "[entity.thing]\nfields = [\"id\", { name = \"owner\", entity = \"nobody\" }]\n".to_owned(),
            "bad.toml:1: field \"owner\": unknown entity \"nobody\"",
        ),
        (
            "[entity.thing]\nextends = \"nothing\"\nfields = [\"id\"]\n".to_owned(),
            "bad.toml:1: entity \"thing\" extends unknown \"nothing\"",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("bad.toml"), &text).unwrap();
        let output = svcgate()
            .args(["rules", "check", "--rules"])
            .arg(dir.path())
            .output()
            .unwrap();
        assert!(!output.status.success(), "{text}");
        let error = String::from_utf8(output.stderr).unwrap();
        assert!(error.contains(expected), "{text}\n{error}");
    }
}

#[test]
fn a_wrong_option_is_one_line_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("svcgate.toml");
    std::fs::write(
        &config,
        "backend = \"http://127.0.0.1:1\"\ndata_dir = \"/tmp\"\nlisten_addr = \"x\"\n",
    )
    .unwrap();
    let output = svcgate()
        .args(["serve", "--config"])
        .arg(&config)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let error = String::from_utf8(output.stderr).unwrap();
    assert_eq!(error.lines().count(), 1, "{error}");
    assert!(error.contains("listen_addr"), "{error}");

    let output = svcgate()
        .args(["serve", "--backend", "http://127.0.0.1:1", "--data-dir", "/tmp"])
        .env("SVCGATE_BACKEND_TIMEOUT", "whenever")
        .output()
        .unwrap();
    let error = String::from_utf8(output.stderr).unwrap();
    assert!(error.contains("option `backend_timeout`"), "{error}");
}

#[test]
fn preserve_host_is_a_flag_and_a_zero_upgrade_idle_timeout_is_refused() {
    let output = svcgate()
        .args([
            "serve",
            "--preserve-host",
            "--backend",
            "http://127.0.0.1:1",
            "--data-dir",
            "/tmp",
        ])
        .env("SVCGATE_UPGRADE_IDLE_TIMEOUT", "0s")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let error = String::from_utf8(output.stderr).unwrap();
    assert_eq!(
        error.trim_end(),
        "svcgate: option `upgrade_idle_timeout`: must be longer than 0s"
    );
}

#[test]
fn flags_override_environment_which_overrides_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("svcgate.toml");
    std::fs::write(&config, "dev = true\nlisten = \"not-an-address\"\n").unwrap();
    // The environment's good value beats the file's bad one, so the error comes from the flag's bad value.
    let output = svcgate()
        .args(["serve", "--config"])
        .arg(&config)
        .args(["--listen", "also-bad"])
        .env("SVCGATE_LISTEN", "127.0.0.1:0")
        .output()
        .unwrap();
    let error = String::from_utf8(output.stderr).unwrap();
    assert!(error.contains("\"also-bad\""), "{error}");
}

#[tokio::test]
async fn serve_dev_prints_a_working_curl_and_stops_on_sigterm() {
    let mut child = svcgate()
        .args(["serve", "--dev", "--listen", "127.0.0.1:0"])
        .env("SVCGATE_SHUTDOWN_GRACE", "5s")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let lines = common::process::dev_banner(&mut child).await;
    let banner = lines.join("\n");
    assert!(
        banner.contains("svcgate is listening on http://127.0.0.1:"),
        "{banner}"
    );
    let token = banner
        .lines()
        .find_map(|line| line.split("token: ").nth(1))
        .expect("the demo token")
        .trim()
        .to_owned();
    let base = banner
        .lines()
        .find_map(|line| line.strip_prefix("svcgate is listening on "))
        .unwrap()
        .trim()
        .to_owned();

    // The pages' address and how to sign in, with the token that works there.
    assert!(
        banner.contains(&format!("Pages (alerts, integrations): {base}/-/svcgate/"))
            && banner.contains(&format!("pasting the demo user's token ({token})")),
        "{banner}"
    );
    let signed_in = common::sign_in(&base, &token).await;
    assert_eq!(signed_in.status, http::StatusCode::SEE_OTHER);
    assert_eq!(signed_in.header("location"), Some("/-/svcgate/projects"));

    let answer = common::get(&format!("{base}/api/v3/projects"), &token).await;
    assert_eq!(answer.status, http::StatusCode::OK);
    assert!(
        !answer.json().as_array().unwrap().is_empty(),
        "the demo project is listed"
    );
    let health = common::get(&format!("{base}/-/svcgate/health"), "").await;
    assert_eq!(health.status, http::StatusCode::OK);
    let ready = common::get(&format!("{base}/-/svcgate/ready"), "").await;
    assert_eq!(ready.status, http::StatusCode::OK, "{:?}", ready.body);
    let metrics = common::get(&format!("{base}/-/svcgate/metrics"), "").await;
    let text = String::from_utf8(metrics.body.to_vec()).unwrap();
    assert!(
        text.contains("svcgate_requests_total{kind=\"rewrite\",rule=\"GET /projects\",status=\"200\"} 1"),
        "{text}"
    );

    let status = common::process::terminate(&mut child).await;
    assert!(status.success(), "exit status {status}");
}

#[tokio::test]
async fn serve_dev_with_a_public_url_says_where_it_listens_and_where_it_is_reached() {
    let mut child = svcgate()
        .args([
            "serve",
            "--dev",
            "--listen",
            "127.0.0.1:0",
            "--public-url",
            "https://alerts.example.com/",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let lines = common::process::dev_banner(&mut child).await;
    let banner = lines.join("\n");
    let first = lines.first().cloned().unwrap_or_default();
    let listening = first
        .strip_prefix("svcgate is listening on ")
        .and_then(|rest| rest.strip_suffix(", reached at https://alerts.example.com"))
        .unwrap_or_else(|| panic!("the first line does not say both addresses: {banner}"))
        .to_owned();
    assert!(listening.starts_with("http://127.0.0.1:"), "{banner}");
    assert!(
        banner.contains("Pages (alerts, integrations): https://alerts.example.com/-/svcgate/"),
        "the pages are named at the address people reach: {banner}"
    );
    // The listening address is the one that answers here.
    let health = common::get(&format!("{listening}/-/svcgate/health"), "").await;
    assert_eq!(health.status, http::StatusCode::OK);

    common::process::terminate(&mut child).await;
}

#[test]
fn the_configuration_reference_documents_every_option() {
    let reference =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/configuration.md")).unwrap();
    for name in svcgate::config::option_names().keys() {
        assert!(
            reference.contains(&format!("`{name}`")),
            "docs/configuration.md lacks option {name}"
        );
    }
    // Each declared default is the one the reference table shows on the option's row.
    for option in svcgate::config::options() {
        let Some(default) = option.default() else {
            continue;
        };
        let row = reference
            .lines()
            .find(|line| line.starts_with(&format!("| `{}` |", option.name())))
            .unwrap_or_else(|| {
                panic!(
                    "docs/configuration.md has no table row for option {}",
                    option.name()
                )
            });
        assert!(
            row.contains(&format!("`{default}`")),
            "docs/configuration.md's row for {} does not show its default `{default}`: {row}",
            option.name()
        );
    }
}

/// Every `src/…` path that `README.md` and the pages of `docs/` name exists, so that the architecture walk and the
/// references follow the code when files move.
#[test]
fn every_source_path_the_docs_name_exists() {
    let root = env!("CARGO_MANIFEST_DIR");
    let mut pages = vec![std::path::PathBuf::from(format!("{root}/README.md"))];
    for entry in std::fs::read_dir(format!("{root}/docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|extension| extension == "md") {
            pages.push(path);
        }
    }
    let mut missing = std::collections::BTreeSet::new();
    for page in pages {
        let text = std::fs::read_to_string(&page).unwrap();
        let words = text.split(|c: char| !(c.is_alphanumeric() || "_-./".contains(c)));
        for word in words.filter(|word| word.starts_with("src/") || word.contains("/src/")) {
            let named = word.trim_end_matches('.');
            if !std::path::Path::new(root).join(named).exists() {
                let page = page.strip_prefix(root).unwrap_or(&page).display().to_string();
                missing.insert(format!("{page}: {named}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "paths the docs name that do not exist:\n{}",
        Vec::from_iter(missing).join("\n")
    );
}

#[tokio::test]
async fn translate_explains_resolves_ids_on_a_backend_and_exits_2_without_a_rule() {
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
    let (id, iid) = (
        issues[0]["id"].as_u64().unwrap(),
        issues[0]["iid"].as_u64().unwrap(),
    );
    let request = format!("PUT /api/v3/projects/{}/issues/{id}", demo.project_id);
    let (url, token) = (sim.url(), demo.token.clone());
    let output = tokio::task::spawn_blocking(move || {
        svcgate()
            .args([
                "translate",
                &request,
                "--form",
                "title=x",
                "--backend",
                &url,
                "--token",
                &token,
            ])
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(
        output.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(text.contains(&format!("→ iid {iid}")), "{text}");
    assert!(
        text.contains(&format!("PUT /api/v4/projects/{}/issues/{iid}", demo.project_id)),
        "{text}"
    );
    assert!(
        text.contains("body (application/x-www-form-urlencoded): title=x"),
        "{text}"
    );

    let output = svcgate()
        .args(["translate", "GET /api/v3/version"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "no rule: scripts can tell");
    let output = svcgate().args(["translate", "projects"]).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
}

/// Runs `svcgate serve` against an unreachable backend with the given environment; a configuration error stops it
/// before it binds anything. One still running after a few seconds accepted its configuration: it is killed and
/// that is an error.
fn serve_with(env: &[(&str, &str)]) -> anyhow::Result<std::process::Output> {
    let data = tempfile::tempdir()?;
    let mut command = svcgate();
    command
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--backend",
            "http://127.0.0.1:1",
            "--data-dir",
        ])
        .arg(data.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (name, value) in env {
        command.env(name, value);
    }
    let mut child = command.spawn()?;
    let started = Instant::now();
    while child.try_wait()?.is_none() {
        if started.elapsed() > Duration::from_secs(10) {
            child.kill()?;
            child.wait()?;
            anyhow::bail!("{env:?} was accepted: svcgate was still running after 10 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(child.wait_with_output()?)
}

/// The one line a refused configuration printed, after checking that it was refused with exit status 2.
fn refusal(env: &[(&str, &str)]) -> anyhow::Result<String> {
    let output = serve_with(env)?;
    let error = String::from_utf8(output.stderr)?;
    anyhow::ensure!(
        output.status.code() == Some(2),
        "{env:?} was not refused: {error}"
    );
    anyhow::ensure!(error.lines().count() == 1, "{env:?}: not one line: {error}");
    Ok(error.trim_end().to_owned())
}

/// The configuration built in-process from `SVCGATE_*` variables, for settings that must be accepted (started as a
/// process, they would serve).
fn accepted(env: &[(&str, &str)]) -> anyhow::Result<svcgate::config::Config> {
    let vars = env
        .iter()
        .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
        .chain([("SVCGATE_DEV".to_owned(), "true".to_owned())]);
    Ok(svcgate::config::Config::from_raw(
        svcgate::config::RawConfig::from_env(vars)?,
    )?)
}

/// The duration options where `0s` means something, which the README says: no shutdown pause or grace, answers
/// never reused, a token refreshed once it has expired.
const ZERO_MEANS_SOMETHING: &[&str] = &[
    "shutdown_delay",
    "shutdown_grace",
    "access_cache_ttl",
    "oauth_refresh_margin",
];

#[test]
fn zero_durations_are_refused_at_start_where_zero_means_nothing() -> anyhow::Result<()> {
    let durations: Vec<&str> = svcgate::config::options()
        .iter()
        .filter(|option| {
            option.kind() == "text"
                && option
                    .default()
                    .is_some_and(|default| humantime::parse_duration(&default).is_ok())
        })
        .map(|option| option.name())
        .collect();
    // Every duration option was decided one way or the other; `backend_timeout = "0s"` once started and then
    // answered every V3 call 504.
    for required in [
        "backend_timeout",
        "backend_connect_timeout",
        "backend_pool_idle_timeout",
        "session_ttl",
    ] {
        anyhow::ensure!(
            durations.contains(&required),
            "{required} is not a duration option"
        );
    }
    for name in durations {
        let variable = format!("SVCGATE_{}", name.to_ascii_uppercase());
        if ZERO_MEANS_SOMETHING.contains(&name) {
            accepted(&[(&variable, "0s")])?;
            continue;
        }
        for zero in ["0s", "0ms"] {
            let error = refusal(&[(&variable, zero)])?;
            assert_eq!(error, format!("svcgate: option `{name}`: must be longer than 0s"));
        }
    }
    Ok(())
}

#[test]
fn every_relation_the_readme_states_between_options_is_checked_at_start() -> anyhow::Result<()> {
    for (env, option, names) in [
        // The README: outbox_lease "Keep it above `backend_timeout`", set either way.
        (
            &[("SVCGATE_OUTBOX_LEASE", "60s")][..],
            "outbox_lease",
            "1m must be longer than backend_timeout (1m)",
        ),
        (
            &[("SVCGATE_BACKEND_TIMEOUT", "4m")][..],
            "outbox_lease",
            "3m must be longer than backend_timeout (4m)",
        ),
        // outbox_keep_done: "at least `outbox_lease`".
        (
            &[("SVCGATE_OUTBOX_KEEP_DONE", "90s")][..],
            "outbox_keep_done",
            "1m 30s must be at least outbox_lease (3m)",
        ),
        // A largest body above its whole memory budget could never be read: 503 "retry shortly" for ever.
        (
            &[
                ("SVCGATE_ALERT_MAX_BODY_BYTES", "2000000"),
                ("SVCGATE_ALERT_MEMORY_BUDGET_BYTES", "1000000"),
            ][..],
            "alert_max_body_bytes",
            "2000000 must be at most alert_memory_budget_bytes (1000000)",
        ),
        // One integration's share below the largest payload: such a payload would get 503 for ever.
        (
            &[("SVCGATE_ALERT_INTEGRATION_BUDGET_BYTES", "1000000")][..],
            "alert_integration_budget_bytes",
            "1000000 must be at least alert_max_body_bytes (1048576)",
        ),
        (
            &[("SVCGATE_REWRITE_MEMORY_BUDGET_BYTES", "1048576")][..],
            "max_rewrite_body_bytes",
            "67108864 must be at most rewrite_memory_budget_bytes (1048576)",
        ),
    ] {
        let error = refusal(env)?;
        assert!(
            error.starts_with(&format!("svcgate: option `{option}`: {names}")),
            "{env:?}: {error}"
        );
    }
    // Just inside each relation is accepted.
    let config = accepted(&[
        ("SVCGATE_BACKEND_TIMEOUT", "60s"),
        ("SVCGATE_OUTBOX_LEASE", "61s"),
        ("SVCGATE_OUTBOX_KEEP_DONE", "61s"),
        ("SVCGATE_ALERT_MAX_BODY_BYTES", "1000"),
        ("SVCGATE_ALERT_MEMORY_BUDGET_BYTES", "1000"),
        ("SVCGATE_ALERT_INTEGRATION_BUDGET_BYTES", "1000"),
        ("SVCGATE_MAX_REWRITE_BODY_BYTES", "1000"),
        ("SVCGATE_REWRITE_MEMORY_BUDGET_BYTES", "1000"),
    ])?;
    assert_eq!(config.outbox.lease, Duration::from_secs(61));
    Ok(())
}

#[test]
fn a_misspelt_option_gets_one_short_line_with_the_closest_option() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let config = dir.path().join("svcgate.toml");
    std::fs::write(
        &config,
        "backend = \"http://127.0.0.1:1\"\ndata_dir = \"/tmp\"\nbackend_timout = \"10s\"\n",
    )?;
    let output = svcgate().args(["serve", "--config"]).arg(&config).output()?;
    assert_eq!(output.status.code(), Some(2));
    let error = String::from_utf8(output.stderr)?;
    assert_eq!(
        error,
        format!(
            "svcgate: unknown option `backend_timout` in {} line 3; did you mean `backend_timeout`?\n",
            config.display()
        )
    );
    assert!(error.len() < 200, "{} characters: {error}", error.len());

    // Nothing close: no guess, still short.
    std::fs::write(&config, "dev = true\n[qqq]\nport = 1\n")?;
    let output = svcgate().args(["serve", "--config"]).arg(&config).output()?;
    let error = String::from_utf8(output.stderr)?;
    assert_eq!(
        error,
        format!("svcgate: unknown option `qqq` in {} line 2\n", config.display())
    );

    // The environment's variables get the same help.
    let error = refusal(&[("SVCGATE_BACKEND_TIMOUT", "10s")])?;
    assert_eq!(
        error,
        "svcgate: environment variable SVCGATE_BACKEND_TIMOUT names no svcgate option; did you mean \
         SVCGATE_BACKEND_TIMEOUT?"
    );
    Ok(())
}

#[test]
fn version_flag_prints_the_version_as_the_version_command_does() -> anyhow::Result<()> {
    let expected = format!("svcgate {}\n", env!("CARGO_PKG_VERSION"));
    for args in [&["--version"][..], &["-V"][..], &["version"][..]] {
        let output = svcgate().args(args).output()?;
        assert!(output.status.success(), "{args:?}: {}", output.status);
        assert_eq!(String::from_utf8(output.stdout)?, expected, "{args:?}");
    }
    Ok(())
}

/// Runs svcgate with `args`, its stdout a pipe whose reading end is already closed, as `| head -1` leaves it once it
/// has read its line.
async fn into_a_closed_pipe(args: &[&str]) -> anyhow::Result<std::process::Output> {
    let (writer, reader) = tokio::net::unix::pipe::pipe()?;
    drop(reader);
    let stdout = writer.into_blocking_fd()?;
    let mut command = svcgate();
    command
        .args(args)
        .stdout(Stdio::from(stdout))
        .stderr(Stdio::piped());
    Ok(tokio::task::spawn_blocking(move || command.output()).await??)
}

#[tokio::test]
async fn a_closed_stdout_ends_every_printing_command_quietly_with_its_usual_status() -> anyhow::Result<()> {
    for (args, status) in [
        (&["rules", "list"][..], 0),
        (&["rules", "check"][..], 0),
        (&["formats", "list"][..], 0),
        (&["formats", "check"][..], 0),
        (&["version"][..], 0),
        (&["--version"][..], 0),
        (&["translate", "GET /api/v3/projects"][..], 0),
        (&["translate", "GET /api/v3/version"][..], 2),
    ] {
        let output = into_a_closed_pipe(args).await?;
        let error = String::from_utf8(output.stderr)?;
        assert_eq!(error, "", "{args:?} said something on stderr");
        assert_eq!(output.status.code(), Some(status), "{args:?}");
    }
    Ok(())
}

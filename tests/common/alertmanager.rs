//! A Prometheus Alertmanager of the test's own (Debian's `prometheus-alertmanager`, installed by `./test.sh`): the
//! one way tests start it, with one receiver whose YAML the test gives (a webhook, `pagerduty_configs`,
//! `opsgenie_configs` … pointing at an integration of svcgate), and the one way they push alerts into it.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use http::{Method, StatusCode};
use serde_json::Value;

const ALERTMANAGER: &str = "/usr/bin/prometheus-alertmanager";

/// A running Alertmanager: its base URL; killed by pid when dropped.
pub struct Alertmanager {
    child: Child,
    pub url: String,
    dir: tempfile::TempDir,
}

impl Drop for Alertmanager {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Alertmanager {
    /// Pushes `alerts` (an array of `{labels, annotations, startsAt, endsAt}`) through Alertmanager's own API.
    pub async fn push(&self, alerts: &Value) {
        let answer = super::send(
            Method::POST,
            &format!("{}/api/v2/alerts", self.url),
            &[],
            Some(("application/json", serde_json::to_vec(alerts).unwrap())),
        )
        .await;
        assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    }

    /// What Alertmanager has logged so far (at debug level: its notifications and their failures).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("alertmanager.log")).unwrap_or_default()
    }
}

/// The receiver YAML of a webhook posting to `receiver_url` with `key` as its bearer token, resolved alerts included.
pub fn webhook_receiver(receiver_url: &str, key: &str) -> String {
    format!(
        "webhook_configs:\n  - url: '{receiver_url}'\n    send_resolved: true\n    http_config:\n      \
         authorization:\n        type: Bearer\n        credentials: '{key}'\n"
    )
}

/// Starts an Alertmanager whose one webhook receiver posts to `receiver_url` with `key` as its bearer token, grouping
/// by `alertname` every second; waits until it is ready.
pub async fn start_alertmanager(receiver_url: &str, key: &str) -> Alertmanager {
    start_alertmanager_with(&webhook_receiver(receiver_url, key)).await
}

/// Starts an Alertmanager whose one receiver, `svcgate`, is `receiver_yaml` (the receiver's keys, such as
/// `pagerduty_configs:` and its list, unindented), grouping by `alertname` with a group wait and interval of one
/// second and a repeat interval of two; logs at debug level; waits until it is ready.
pub async fn start_alertmanager_with(receiver_yaml: &str) -> Alertmanager {
    assert!(
        std::path::Path::new(ALERTMANAGER).exists(),
        "{ALERTMANAGER} is missing: run ./test.sh, which installs Debian's prometheus-alertmanager"
    );
    let dir = tempfile::tempdir().unwrap();
    let receiver: String = receiver_yaml
        .lines()
        .map(|line| format!("    {line}\n"))
        .collect();
    let config = format!(
        "route:\n  receiver: svcgate\n  group_by: ['alertname']\n  group_wait: 1s\n  group_interval: 1s\n  repeat_interval: 2s\n\
         receivers:\n  - name: svcgate\n{receiver}"
    );
    std::fs::write(dir.path().join("alertmanager.yml"), config).unwrap();
    let log = dir.path().join("alertmanager.log");
    let mut child = Command::new(ALERTMANAGER)
        .arg(format!(
            "--config.file={}",
            dir.path().join("alertmanager.yml").display()
        ))
        .arg(format!("--storage.path={}", dir.path().join("data").display()))
        .arg("--web.listen-address=127.0.0.1:0")
        .arg("--cluster.listen-address=")
        .arg("--log.level=debug")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let port = super::go_server::listening_port(&mut child, &log).await;
    let url = format!("http://127.0.0.1:{port}");
    let manager = Alertmanager { child, url, dir };
    for _ in 0..100 {
        let ready = tokio::time::timeout(Duration::from_secs(1), async {
            let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
                .build_http::<http_body_util::Empty<bytes::Bytes>>();
            client
                .request(
                    http::Request::get(format!("{}/-/ready", manager.url))
                        .body(http_body_util::Empty::new())
                        .unwrap(),
                )
                .await
        })
        .await;
        if matches!(ready, Ok(Ok(response)) if response.status() == StatusCode::OK) {
            return manager;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("Alertmanager did not become ready");
}

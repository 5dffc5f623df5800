//! A Prometheus Alertmanager of the test's own (Debian's `prometheus-alertmanager`, installed by `./test.sh`): the
//! one way tests start it, with a webhook receiver pointing at an integration of svcgate.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use http::StatusCode;

const ALERTMANAGER: &str = "/usr/bin/prometheus-alertmanager";

/// A running Alertmanager: its base URL; killed by pid when dropped.
pub struct Alertmanager {
    child: Child,
    pub url: String,
    _dir: tempfile::TempDir,
}

impl Drop for Alertmanager {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts an Alertmanager whose one webhook receiver posts to `receiver_url` with `key` as its bearer token, grouping
/// by `alertname` every second; waits until it is ready.
pub async fn start_alertmanager(receiver_url: &str, key: &str) -> Alertmanager {
    assert!(
        std::path::Path::new(ALERTMANAGER).exists(),
        "{ALERTMANAGER} is missing: run ./test.sh, which installs Debian's prometheus-alertmanager"
    );
    let dir = tempfile::tempdir().unwrap();
    let config = format!(
        "route:\n  receiver: svcgate\n  group_by: ['alertname']\n  group_wait: 1s\n  group_interval: 1s\n  repeat_interval: 2s\n\
         receivers:\n  - name: svcgate\n    webhook_configs:\n      - url: '{receiver_url}'\n        send_resolved: true\n\
         \x20       http_config:\n          authorization:\n            type: Bearer\n            credentials: '{key}'\n"
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
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let port = super::go_server::listening_port(&mut child, &log).await;
    let url = format!("http://127.0.0.1:{port}");
    let manager = Alertmanager {
        child,
        url,
        _dir: dir,
    };
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

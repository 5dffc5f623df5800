//! A Prometheus server of the test's own (Debian's `prometheus`, installed by `./test.sh`): the one way tests start
//! it, scraping svcgate with svcgate's alerting rules, and read back what it queries.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use http::{Method, StatusCode};
use serde_json::Value;

use super::send;

const PROMETHEUS: &str = "/usr/bin/prometheus";
/// svcgate's alerting rules, which the server evaluates.
pub const RULES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/prometheus/svcgate.rules.yml");

/// A Prometheus server of its own, in a temporary directory, on a free loopback port; killed by pid when dropped.
pub struct Prometheus {
    child: Child,
    pub url: String,
    _dir: tempfile::TempDir,
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Prometheus {
    /// Starts Prometheus scraping svcgate at `target` (`host:port`) every second as job `svcgate`, with svcgate's
    /// alerting rules evaluated every second.
    pub async fn start(target: &str) -> Prometheus {
        assert!(
            std::path::Path::new(PROMETHEUS).exists(),
            "{PROMETHEUS} is missing: run ./test.sh, which installs Debian's prometheus"
        );
        let dir = tempfile::tempdir().unwrap();
        let config = format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n\
             rule_files:\n  - '{RULES}'\n\
             scrape_configs:\n  - job_name: svcgate\n    metrics_path: /-/svcgate/metrics\n\
             \x20   static_configs:\n      - targets: ['{target}']\n"
        );
        let config_file = dir.path().join("prometheus.yml");
        std::fs::write(&config_file, config).unwrap();
        let log = dir.path().join("prometheus.log");
        let mut child = Command::new(PROMETHEUS)
            .arg(format!("--config.file={}", config_file.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg("--web.listen-address=127.0.0.1:0")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let port = super::go_server::listening_port(&mut child, &log).await;
        let prometheus = Prometheus {
            child,
            url: format!("http://127.0.0.1:{port}"),
            _dir: dir,
        };
        let started = Instant::now();
        loop {
            // Not `send`, which fails the test on a refused connection: Prometheus takes a moment to listen.
            let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
                .build_http::<http_body_util::Empty<bytes::Bytes>>();
            let request = http::Request::get(format!("{}/-/ready", prometheus.url))
                .body(http_body_util::Empty::new())
                .unwrap();
            let ready = tokio::time::timeout(Duration::from_secs(1), client.request(request)).await;
            if matches!(ready, Ok(Ok(response)) if response.status() == StatusCode::OK) {
                return prometheus;
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "Prometheus did not become ready"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// Runs an instant query, answering the API's whole answer.
    pub async fn query(&self, expression: &str) -> Value {
        let query: String = form_urlencoded::Serializer::new(String::new())
            .append_pair("query", expression)
            .finish();
        let answer = send(
            Method::GET,
            &format!("{}/api/v1/query?{query}", self.url),
            &[],
            None,
        )
        .await;
        serde_json::from_slice(&answer.body).unwrap()
    }

    /// The single value `expression` answers, waiting (at most 30 s) until `wanted` accepts it; answers what it
    /// last saw otherwise.
    pub async fn value_when(&self, expression: &str, wanted: impl Fn(f64) -> bool) -> Option<f64> {
        let started = Instant::now();
        loop {
            let answer = self.query(expression).await;
            assert_eq!(answer["status"], "success", "{expression}: {answer}");
            let seen = answer["data"]["result"][0]["value"][1]
                .as_str()
                .and_then(|text| text.parse::<f64>().ok());
            if seen.is_some_and(&wanted) || started.elapsed() > Duration::from_secs(30) {
                return seen;
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    /// The single value `expression` answers once it is `expected` (at most 30 s); what it last saw otherwise.
    pub async fn value_until(&self, expression: &str, expected: f64) -> Option<f64> {
        self.value_when(expression, |seen| seen == expected).await
    }
}

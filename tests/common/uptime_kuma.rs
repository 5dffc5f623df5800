//! An Uptime Kuma of the test's own (the npm package pinned in `tests/uptime-kuma/package-lock.json`, and the
//! Python client of `tests/uptime-kuma/requirements.txt`, both installed by `./test.sh`): the one way tests start
//! it (headless, SQLite, a temporary data directory, a free loopback port, killed by pid) and set it up through
//! `tests/uptime-kuma/setup.py`.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

fn kuma_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/uptime-kuma")
}

/// A running Uptime Kuma: its base URL; killed by pid when dropped.
pub struct UptimeKuma {
    child: Child,
    pub url: String,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

impl Drop for UptimeKuma {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A loopback port no one listened on a moment ago (Uptime Kuma logs the port it was given, not the one bound).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts Uptime Kuma and waits (up to 120 s) until it listens.
pub async fn start_uptime_kuma() -> UptimeKuma {
    let package = kuma_dir().join("node_modules/uptime-kuma");
    assert!(
        package.join("server/server.js").exists(),
        "{} is missing: run ./test.sh, which installs Uptime Kuma from npm",
        package.display()
    );
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let log = dir.path().join("uptime-kuma.log");
    let port = free_port();
    let child = Command::new("node")
        .arg("server/server.js")
        .current_dir(&package)
        .env("UPTIME_KUMA_DB_TYPE", "sqlite")
        .env("UPTIME_KUMA_HOST", "127.0.0.1")
        .env("UPTIME_KUMA_PORT", port.to_string())
        // Uptime Kuma joins file names onto DATA_DIR as strings.
        .env("DATA_DIR", format!("{}/", data.display()))
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&log).unwrap())
        .stderr(std::fs::File::create(dir.path().join("uptime-kuma.err")).unwrap())
        .spawn()
        .unwrap();
    let mut kuma = UptimeKuma {
        child,
        url: format!("http://127.0.0.1:{port}"),
        log,
        _dir: dir,
    };
    let started = Instant::now();
    loop {
        if std::fs::read_to_string(&kuma.log)
            .unwrap_or_default()
            .contains(&format!("Listening on 127.0.0.1:{port}\n"))
        {
            return kuma;
        }
        if !matches!(kuma.child.try_wait(), Ok(None)) {
            panic!("Uptime Kuma stopped while starting:\n{}", kuma.log_tail());
        }
        if started.elapsed() > Duration::from_secs(120) {
            panic!("Uptime Kuma did not listen in 120 s:\n{}", kuma.log_tail());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

impl UptimeKuma {
    /// The last lines of Uptime Kuma's log and its standard error, for a failure's message.
    pub fn log_tail(&self) -> String {
        let tail = |path: &Path| {
            let text = std::fs::read_to_string(path).unwrap_or_default();
            let lines: Vec<&str> = text.lines().collect();
            lines[lines.len().saturating_sub(30)..].join("\n")
        };
        format!(
            "{}\n{}",
            tail(&self.log),
            tail(&self.log.with_file_name("uptime-kuma.err"))
        )
    }

    /// Runs `tests/uptime-kuma/setup.py`: the first user, a Webhook notification posting the JSON preset to
    /// `webhook_url` with `Authorization: Bearer <key>`, and with `form` (an address and its key) a second one
    /// posting the multipart/form-data preset there (each test message sent once), and an HTTP monitor of
    /// `target_url` named `name` and tagged `env=<environment>` with both, returning once its first check saw the
    /// target up. Answers the script's JSON (`monitor_id`, `notification_id`, `test`, `form_test`).
    pub async fn set_up(
        &self,
        webhook_url: &str,
        key: &str,
        form: Option<(&str, &str)>,
        target_url: &str,
        name: &str,
        environment: &str,
    ) -> Value {
        let python = kuma_dir().join(".venv/bin/python");
        assert!(
            python.exists(),
            "{} is missing: run ./test.sh, which installs the Uptime Kuma client",
            python.display()
        );
        let mut command = Command::new(python);
        command.arg(kuma_dir().join("setup.py")).args([
            &self.url,
            webhook_url,
            key,
            target_url,
            name,
            environment,
        ]);
        if let Some((form_url, form_key)) = form {
            command.args([form_url, form_key]);
        }
        let output = tokio::task::spawn_blocking(move || command.output().unwrap())
            .await
            .unwrap();
        assert!(
            output.status.success(),
            "setup.py failed: {}\n{}\nUptime Kuma's log:\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr),
            self.log_tail()
        );
        serde_json::from_slice(&output.stdout).unwrap()
    }
}

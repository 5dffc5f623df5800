//! svcgate run as its own process, as deployed: the one way tests get the built binary, and signals sent to a
//! process by id as an orchestrator sends them. A served process that waits until it listens is
//! [`Replica`](super::replicas::Replica).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, ExitStatus};

/// A command for the svcgate binary this test build made.
pub fn command() -> Command {
    Command::new(env!("CARGO_BIN_EXE_svcgate"))
}

/// Sends `signal` (as `kill` spells it, e.g. `-TERM`) to the process `pid`; answers `kill`'s status.
pub fn signal(pid: u32, signal: &str) -> ExitStatus {
    Command::new("kill")
        .args([signal, &pid.to_string()])
        .status()
        .unwrap()
}

/// The banner `serve --dev` prints on `child`'s piped stdout, up to its `curl` line; the rest of stdout is read
/// and dropped on a thread of its own, as a terminal would, so the gateway never meets a closed pipe.
pub async fn dev_banner(child: &mut Child) -> Vec<String> {
    let stdout = child.stdout.take().expect("stdout piped");
    tokio::task::spawn_blocking(move || {
        let mut reader = BufReader::new(stdout).lines();
        let lines = reader
            .by_ref()
            .map_while(Result::ok)
            .take_while(|line| !line.trim_start().starts_with("curl "))
            .collect();
        std::thread::spawn(move || for _ in reader {});
        lines
    })
    .await
    .unwrap()
}

/// Stops `child` with SIGTERM and answers its exit status; fails the test if it runs 10 s on.
pub async fn terminate(child: &mut Child) -> ExitStatus {
    assert!(signal(child.id(), "-TERM").success());
    let started = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "still running after SIGTERM"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

//! svcgate run as its own process, as deployed: the one way tests get the built binary, and signals sent to a
//! process by id as an orchestrator sends them. A served process that waits until it listens is
//! [`Replica`](super::replicas::Replica).

use std::process::{Command, ExitStatus};

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

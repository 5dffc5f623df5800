//! Starting a Prometheus-family server (Prometheus, Alertmanager) on a port it picks itself: it is told to listen
//! on port 0 and its log names the address it bound (`msg="Listening on" address=127.0.0.1:PORT`). No port is
//! picked free beforehand, so no other process can take it in between.

use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};

/// The port `server` logs (into `log`) that it listens on, waiting up to 30 s for it.
pub async fn listening_port(server: &mut Child, log: &Path) -> u16 {
    let started = Instant::now();
    loop {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        // Only whole lines: the last one may still be being written.
        let port = text
            .split_inclusive('\n')
            .filter(|line| line.ends_with('\n') && line.contains("msg=\"Listening on\""))
            .find_map(|line| line.split("address=127.0.0.1:").nth(1))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|port| port.parse().ok());
        if let Some(port) = port {
            return port;
        }
        if !matches!(server.try_wait(), Ok(None)) {
            panic!("the server stopped while starting: {text}");
        }
        if started.elapsed() > Duration::from_secs(30) {
            drop(server.kill());
            drop(server.wait());
            panic!("the server named no port in 30 s: {text}");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

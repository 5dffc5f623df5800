//! svc-sim in this process, on a free loopback port: the one way tests start the simulator. Its admin token is
//! [`ADMIN`] unless the options say otherwise.

use svc_sim::{DemoSeed, SimHandle, SimOptions};

/// The simulator's admin token.
pub const ADMIN: &str = "root-token";

/// Starts the simulator with [`ADMIN`] as its admin token.
pub async fn start() -> SimHandle {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    svc_sim::spawn(listener, ADMIN).await.unwrap()
}

/// Starts the simulator with `options` (`SimOptions::default()` has [`ADMIN`] as its admin token).
pub async fn start_with(options: SimOptions) -> SimHandle {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    svc_sim::spawn_with(listener, options).await.unwrap()
}

/// Starts the simulator and seeds its demo user, group and project.
pub async fn with_demo() -> (SimHandle, DemoSeed) {
    let sim = start().await;
    let demo = sim.seed_demo();
    (sim, demo)
}

/// Starts the simulator with its demo seed and a gateway in front of it, as most V3 tests need.
pub async fn with_gateway() -> (SimHandle, DemoSeed, super::TestGateway) {
    let (sim, demo) = with_demo().await;
    let gateway = super::TestGateway::start(&sim.url()).await;
    (sim, demo, gateway)
}

//! The V3 usage counts' tests: svc-sim with its demo seed and a gateway whose counts reach the store only when a
//! report asks for them, and that report as the simulator's admin reads it.

use serde_json::Value;
use svc_sim::{DemoSeed, SimHandle};
use svcgate::config::RawConfig;

use super::TestGateway;

/// Starts the simulator with its demo seed and a gateway in front of it that flushes the V3 usage counts every
/// hour (so only a report flushes them during a test), with `tweak` applied to the rest of its configuration.
pub async fn world(tweak: impl FnOnce(&mut RawConfig)) -> (SimHandle, DemoSeed, TestGateway) {
    let (sim, demo) = super::sim::with_demo().await;
    let gateway = TestGateway::start_with(&sim.url(), |raw| {
        raw.usage_flush_interval = Some("1h".to_owned());
        tweak(raw);
    })
    .await;
    (sim, demo, gateway)
}

/// The usage API's report (`/-/svcgate/api/v3-usage`), asked for by the simulator's admin; the report flushes the
/// counts first.
pub async fn report(gateway: &TestGateway) -> Value {
    super::get(
        &format!("{}/-/svcgate/api/v3-usage", gateway.url()),
        super::sim::ADMIN,
    )
    .await
    .json()
}

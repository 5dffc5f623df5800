//! `svcgate serve --dev` in this process (its embedded simulator, demo user and demo alert integration), on a free
//! loopback port: the one way tests start the dev mode in process.

use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// A running `serve --dev` gateway: its base URL, its demo seed and demo alert integration, stopped by
/// [`DevGateway::stop`].
pub struct DevGateway {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// The embedded simulator's demo user, group and project.
    pub demo: svc_sim::DemoSeed,
    /// The demo alert integration's path and key.
    pub demo_alerts: (String, String),
    stop: Option<oneshot::Sender<()>>,
    served: Option<JoinHandle<()>>,
}

impl DevGateway {
    /// Starts `serve --dev` listening on 127.0.0.1:0.
    pub async fn start() -> Self {
        let config = svcgate::config::Config::from_raw(svcgate::config::RawConfig {
            listen: Some("127.0.0.1:0".to_owned()),
            dev: Some(true),
            ..svcgate::config::RawConfig::default()
        })
        .unwrap();
        let running = svcgate::app::prepare(&config).await.unwrap();
        let base = format!("http://{}", running.address);
        let demo = running.demo.clone().unwrap();
        let demo_alerts = running.demo_alerts.clone().unwrap();
        let (stop, stopped) = oneshot::channel::<()>();
        let served = tokio::spawn(async move {
            running
                .serve_until(&config, async {
                    let _ = stopped.await;
                })
                .await
                .unwrap();
        });
        DevGateway {
            base,
            demo,
            demo_alerts,
            stop: Some(stop),
            served: Some(served),
        }
    }

    /// Asks the gateway to stop and waits until it has.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(served) = self.served.take() {
            served.await.unwrap();
        }
    }
}

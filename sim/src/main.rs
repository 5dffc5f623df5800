//! The `svc-sim` binary: runs the simulator until SIGINT or SIGTERM.

use clap::Parser;

/// Command-line options.
#[derive(Debug, Parser)]
#[command(name = "svc-sim", about = "An in-memory simulator of the svc V4 API")]
struct Args {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8081")]
    listen: String,
    /// Token that authenticates as the root administrator.
    #[arg(long, default_value = "root-token")]
    root_token: String,
    /// Brand word in route and field names that carry one (e.g. `/templates/<word>_ci_ymls`).
    #[arg(long, default_value = svc_sim::DEFAULT_IDENTIFIER_WORD)]
    identifier_word: String,
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
    let args = Args::parse();
    let listener = tokio::net::TcpListener::bind(&args.listen).await?;
    let options = svc_sim::SimOptions {
        root_token: args.root_token,
        identifier_word: args.identifier_word,
    };
    let sim = svc_sim::spawn_with(listener, options).await?;
    println!("svc-sim listening on {}", sim.url());
    wait_for_signal().await;
    sim.shutdown();
    Ok(())
}

#[cfg(unix)]
async fn wait_for_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    match signal(SignalKind::terminate()) {
        Ok(mut term) => {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
        }
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

#[cfg(not(unix))]
async fn wait_for_signal() {
    let _ = tokio::signal::ctrl_c().await;
}

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
    /// Client id of an OAuth application to register (with `--oauth-client-secret` and `--oauth-redirect-uri`).
    #[arg(long, requires_all = ["oauth_client_secret", "oauth_redirect_uri"])]
    oauth_client_id: Option<String>,
    /// Client secret of the OAuth application.
    #[arg(long)]
    oauth_client_secret: Option<String>,
    /// The OAuth application's registered redirect URI.
    #[arg(long)]
    oauth_redirect_uri: Option<String>,
    /// Scopes the OAuth application may ask for, space-separated.
    #[arg(long, default_value = "api read_api read_user")]
    oauth_scopes: String,
    /// Lifetime of issued OAuth access tokens, in seconds.
    #[arg(long, default_value_t = 7200)]
    oauth_token_lifetime: u64,
    /// The only user the OAuth authorize page offers (else it asks which user).
    #[arg(long)]
    oauth_sign_in_as: Option<String>,
    /// The user the OAuth authorize page chooses at first (the others stay offered).
    #[arg(long)]
    oauth_preselect: Option<String>,
    /// The address clients reach the simulator at, named in `web_url`, `http_url_to_repo` and the like (default:
    /// the listening address).
    #[arg(long)]
    external_url: Option<String>,
    /// Answer `/api/graphql` with V4's 404, as a server without GraphQL does.
    #[arg(long)]
    no_graphql: bool,
    /// Refuse GraphQL queries whose complexity exceeds N, for every caller, instead of the service's own limits
    /// (200 anonymous, 250 signed in, 300 administrators; the default).
    #[arg(long, value_name = "N")]
    graphql_max_complexity: Option<usize>,
    /// Milliseconds every API request (V4 and GraphQL) waits before it is answered, as a slower backend would.
    #[arg(long, value_name = "N", default_value_t = 0)]
    delay_ms: u64,
    /// What the request log keeps: `all` requests, or only their `count` (no growth under load).
    #[arg(long, value_name = "all|count", default_value = "all", value_parser = ["all", "count"])]
    record_requests: String,
    /// Insert the benchmark data before listening: user `bench` (token `bench-token`), projects `bench/i1k`,
    /// `bench/i100k` and `bench/mr`.
    #[arg(long)]
    bench_seed: bool,
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
        oauth_application: match (
            args.oauth_client_id,
            args.oauth_client_secret,
            args.oauth_redirect_uri,
        ) {
            (Some(client_id), Some(secret), Some(redirect_uri)) => Some(svc_sim::OAuthApplication {
                name: "svcgate".into(),
                client_id,
                secret,
                redirect_uri,
                scopes: args.oauth_scopes.split_whitespace().map(str::to_owned).collect(),
            }),
            _ => None,
        },
        oauth_token_lifetime_secs: args.oauth_token_lifetime,
        oauth_sign_in_as: args.oauth_sign_in_as,
        oauth_preselect: args.oauth_preselect,
        external_url: args.external_url,
        graphql: !args.no_graphql,
        graphql_max_complexity: args.graphql_max_complexity,
        delay: std::time::Duration::from_millis(args.delay_ms),
        record_requests: if args.record_requests == "count" {
            svc_sim::RecordRequests::Count
        } else {
            svc_sim::RecordRequests::All
        },
        bench_seed: args.bench_seed,
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

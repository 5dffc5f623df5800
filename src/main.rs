//! The `svcgate` command line: serve, rules check, rules list, formats check, formats list, translate, v3 report, store copy,
//! version (`--version` too).
//!
//! Every command writes its output through [`print_lines`]: a reader that went away (`svcgate rules list | head
//! -1`) ends the output quietly, and the command exits as it would have otherwise; only another write error (a
//! full disk behind `> file`) is an error.

use std::fmt::Display;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use svcgate::config::{Config, RawConfig};
use svcgate::rewrite::table::RuleTable;
use svcgate::{app, telemetry};

/// mimalloc rather than the system allocator: reshaping V3 answers and parsing alert payloads allocate many small
/// JSON values, and the profile of a V3 list showed a quarter of the time in glibc's malloc and free.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "svcgate",
    version,
    about = "V3 → V4 compatibility gateway and alert intake for svc servers"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the gateway.
    Serve(ServeArgs),
    /// Check or list the V3 → V4 rule table.
    Rules {
        #[command(subcommand)]
        action: RulesAction,
    },
    /// Check or list the alert payload formats (built-in files and an operator's directory).
    Formats {
        #[command(subcommand)]
        action: FormatsAction,
    },
    /// Show what the gateway would do with one V3 request, without sending it.
    Translate(TranslateArgs),
    /// Reports on V3's remaining clients.
    V3 {
        #[command(subcommand)]
        action: V3Action,
    },
    /// Work on the store itself.
    Store {
        #[command(subcommand)]
        action: StoreAction,
    },
    /// Print the version.
    Version,
}

#[derive(Subcommand)]
enum V3Action {
    /// The migration report: per V3 client, each route it called and the V4 request that replaces it, read from
    /// the store (the counts as last flushed; a running gateway flushes every usage_flush_interval).
    Report(ReportArgs),
}

#[derive(Args)]
struct ReportArgs {
    /// One client: its id, or a user (all of that user's clients).
    #[arg(long)]
    client: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "markdown")]
    format: ReportFormat,
    /// TOML configuration file, as for serve.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Directory of the embedded store.
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// PostgreSQL URL (postgres://…) of a shared store.
    #[arg(long)]
    database_url: Option<String>,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum ReportFormat {
    Markdown,
    Json,
    Csv,
}

#[derive(Subcommand)]
enum StoreAction {
    /// Copy a SQLite store (integrations and their keys, alerts, settings, sessions, usage) into an empty
    /// PostgreSQL database; give every replica the key it prints the fingerprint of.
    Copy(CopyArgs),
}

#[derive(Args)]
struct CopyArgs {
    /// The data directory of the SQLite store (stop the svcgate using it first).
    #[arg(long)]
    data_dir: PathBuf,
    /// The PostgreSQL database to copy into (postgres://…; empty).
    #[arg(long, env = "SVCGATE_DATABASE_URL")]
    database_url: String,
    /// The store's key, 64 hex digits (default: the secret.key file in the data directory).
    #[arg(long, env = "SVCGATE_SECRET_KEY", hide_env_values = true)]
    secret_key: Option<String>,
    /// PEM CA certificates trusted for PostgreSQL's certificate.
    #[arg(long, env = "SVCGATE_DATABASE_CA_BUNDLE")]
    database_ca_bundle: Option<PathBuf>,
}

#[derive(Args)]
struct TranslateArgs {
    /// The request: 'METHOD /api/v3/path[?query]'.
    request: String,
    /// A JSON body.
    #[arg(long, conflicts_with = "form")]
    body: Option<String>,
    /// A form-encoded body field (repeatable): --form name=value.
    #[arg(long)]
    form: Vec<String>,
    /// Resolve global ids on this backend (with --token).
    #[arg(long, requires = "token")]
    backend: Option<String>,
    /// A token of the backend for resolving ids.
    #[arg(long, requires = "backend")]
    token: Option<String>,
    /// Directory of rule files (default: the built-in table).
    #[arg(long)]
    rules: Option<PathBuf>,
    /// The server's brand word in route and field names (default svc).
    #[arg(long, env = "SVCGATE_IDENTIFIER_WORD", default_value = svcgate::util::identifier::DEFAULT_WORD)]
    identifier_word: String,
}

#[derive(Args)]
struct ServeArgs {
    /// TOML configuration file (lowest precedence; SVCGATE_* variables and flags override it).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Address to listen on (default 127.0.0.1:8080).
    #[arg(long)]
    listen: Option<String>,
    /// The V4 backend's base URL.
    #[arg(long)]
    backend: Option<String>,
    /// Directory of the embedded store.
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// PostgreSQL URL (postgres://…) for state shared by replicas.
    #[arg(long)]
    database_url: Option<String>,
    /// The gateway's public base URL.
    #[arg(long)]
    public_url: Option<String>,
    /// Run against the built-in simulator with demo data.
    #[arg(long)]
    dev: bool,
    /// Send the client's Host header to the backend instead of the backend's own host.
    #[arg(long)]
    preserve_host: bool,
    /// Directory of rule files replacing the built-in table.
    #[arg(long)]
    rules: Option<PathBuf>,
    /// Log format: text or json.
    #[arg(long)]
    log_format: Option<String>,
    /// Alert tier: free or premium.
    #[arg(long)]
    edition: Option<String>,
    /// Threads of the async runtime (default: one per core).
    #[arg(long)]
    worker_threads: Option<u64>,
}

#[derive(Subcommand)]
enum RulesAction {
    /// Validate the rule files and exit.
    Check {
        /// Directory of rule files (default: the built-in table).
        #[arg(long)]
        rules: Option<PathBuf>,
        /// The server's brand word in route and field names (default svc).
        #[arg(long, env = "SVCGATE_IDENTIFIER_WORD", default_value = svcgate::util::identifier::DEFAULT_WORD)]
        identifier_word: String,
    },
    /// Print the rule table: V3 → V4, since, section.
    List {
        /// Directory of rule files (default: the built-in table).
        #[arg(long)]
        rules: Option<PathBuf>,
        /// The server's brand word in route and field names (default svc).
        #[arg(long, env = "SVCGATE_IDENTIFIER_WORD", default_value = svcgate::util::identifier::DEFAULT_WORD)]
        identifier_word: String,
    },
}

#[derive(Subcommand)]
enum FormatsAction {
    /// Validate the built-in format files and those of a directory; print `file:line: message` per error.
    Check {
        /// Directory of format files added to the built-in ones (default: the built-in ones only).
        #[arg(long, env = "SVCGATE_ALERT_FORMATS_DIR")]
        dir: Option<PathBuf>,
    },
    /// Print every format: name, description, origin.
    List {
        /// Directory of format files added to the built-in ones (default: the built-in ones only).
        #[arg(long, env = "SVCGATE_ALERT_FORMATS_DIR")]
        dir: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Version => match print_lines([format!("svcgate {}", env!("CARGO_PKG_VERSION"))]) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => complain("svcgate", &error),
        },
        Command::Rules { action } => rules(action),
        Command::Formats { action } => formats(action),
        Command::Translate(args) => translate(args),
        Command::Store {
            action: StoreAction::Copy(args),
        } => store_copy(args),
        Command::V3 {
            action: V3Action::Report(args),
        } => v3_report(args),
        Command::Serve(args) => serve(args),
    }
}

fn rules(action: RulesAction) -> ExitCode {
    let (dir, word, list) = match action {
        RulesAction::Check {
            rules,
            identifier_word,
        } => (rules, identifier_word, false),
        RulesAction::List {
            rules,
            identifier_word,
        } => (rules, identifier_word, true),
    };
    let table = match RuleTable::load(dir.as_deref(), &word) {
        Ok(table) => table,
        Err(error) => {
            say(&error);
            return ExitCode::FAILURE;
        }
    };
    let printed = if list {
        print_lines(table.rules().iter().map(|rule| rule.describe()))
    } else {
        print_lines([format!(
            "ok: {} rules, {} entity shapes",
            table.rules().len(),
            table.shapes().names().len()
        )])
    };
    match printed {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => complain("svcgate rules", &error),
    }
}

fn formats(action: FormatsAction) -> ExitCode {
    use svcgate::alerts::formats::Catalog;
    let (dir, list) = match action {
        FormatsAction::Check { dir } => (dir, false),
        FormatsAction::List { dir } => (dir, true),
    };
    let catalog = match Catalog::load(dir.as_deref()) {
        Ok(catalog) => catalog,
        Err(error) => {
            say(&error);
            return ExitCode::FAILURE;
        }
    };
    let summaries = catalog.list();
    let printed = if list {
        let width = summaries.iter().map(|s| s.name.len()).max().unwrap_or(0);
        print_lines(
            summaries
                .iter()
                .map(|s| format!("{:width$}  {}  ({})", s.name, s.description, s.origin)),
        )
    } else {
        print_lines([format!("ok: {} formats", summaries.len())])
    };
    match printed {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => complain("svcgate formats", &error),
    }
}

/// Exit code 2: no rule matched; the request would pass through with the prefix change.
const EXIT_NO_RULE: u8 = 2;

fn translate(args: TranslateArgs) -> ExitCode {
    use svcgate::rewrite::explain::{explain, ids_needed, BodyInput};
    let fail = |message: String| complain("svcgate translate", &message);
    let table = match RuleTable::load(args.rules.as_deref(), &args.identifier_word) {
        Ok(table) => table,
        Err(error) => return fail(error.to_string()),
    };
    let body = match (&args.body, args.form.is_empty()) {
        (Some(text), _) => match serde_json::from_str::<serde_json::Value>(text) {
            Ok(_) => Some(BodyInput::json(text)),
            Err(error) => return fail(format!("--body is not JSON: {error}")),
        },
        (None, false) => {
            let mut pairs = Vec::new();
            for field in &args.form {
                match field.split_once('=') {
                    Some((name, value)) => pairs.push((name.to_owned(), value.to_owned())),
                    None => return fail(format!("--form {field:?} is not name=value")),
                }
            }
            Some(BodyInput::form(&pairs))
        }
        (None, true) => None,
    };
    let mut resolved = Vec::new();
    if let (Some(backend), Some(token)) = (&args.backend, &args.token) {
        let needed = match ids_needed(&table, &args.request) {
            Ok(needed) => needed,
            Err(error) => return fail(error.to_string()),
        };
        if !needed.is_empty() {
            let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
                Ok(runtime) => runtime,
                Err(error) => return fail(error.to_string()),
            };
            match runtime.block_on(app::resolve_ids(backend, token, &needed)) {
                Ok(found) => resolved = found,
                Err(error) => return fail(format!("resolving ids on {backend}: {error:#}")),
            }
        }
    }
    match explain(&table, &args.request, body, &resolved) {
        Ok(mut explanation) => match print_lines({
            // What the client itself must change, as the migration report says it.
            if let Some(advice) = svcgate::rewrite::migration::request_advice(&table, &args.request) {
                explanation.lines.push(format!("migration: {}", advice.summary));
                explanation
                    .lines
                    .extend(advice.changes().into_iter().map(|line| format!("  {line}")));
            }
            &explanation.lines
        }) {
            Err(error) => fail(error),
            Ok(()) if explanation.matched => ExitCode::SUCCESS,
            Ok(()) => ExitCode::from(EXIT_NO_RULE),
        },
        Err(error) => fail(error.to_string()),
    }
}

fn store_copy(args: CopyArgs) -> ExitCode {
    let fail = |message: String| complain("svcgate store copy", &message);
    let configured = match args
        .secret_key
        .as_deref()
        .map(svcgate::util::secret::parse_hex_key)
    {
        Some(None) => return fail("secret_key must be 64 hexadecimal digits (32 bytes)".to_owned()),
        Some(Some(key)) => Some(key),
        None => None,
    };
    let key = match svcgate::util::secret::existing_key(configured, &args.data_dir) {
        Ok(key) => key,
        Err(error) => return fail(format!("the store's key: {error}")),
    };
    let fingerprint = svcgate::util::secret::key_fingerprint(&key);
    let target = svcgate::store::PostgresOptions {
        url: args.database_url,
        pool_size: 2,
        ca_bundle: args.database_ca_bundle,
        alert_writers: 1,
        limits: svcgate::store::DatabaseLimits::default(),
    };
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => return fail(format!("starting the runtime: {error}")),
    };
    match runtime.block_on(svcgate::store::copy::sqlite_to_postgres(
        &args.data_dir,
        &target,
        &fingerprint,
    )) {
        Ok(copied) => {
            let lines = copied
                .tables
                .into_iter()
                .map(|(table, rows)| format!("{table}: {rows} rows"))
                .chain([format!(
                    "done; start every replica with database_url and this store's secret_key (fingerprint \
                     {fingerprint})"
                )]);
            // The copy is made: a stdout that fails does not undo it, and the exit status says it was made.
            if let Err(error) = print_lines(lines) {
                say(&format!("svcgate store copy: the copy is made; {error}"));
            }
            ExitCode::SUCCESS
        }
        Err(error) => fail(error.to_string()),
    }
}

fn v3_report(args: ReportArgs) -> ExitCode {
    let flags = RawConfig {
        data_dir: args.data_dir,
        database_url: args.database_url,
        // The report never calls the backend; the option is only required to serve.
        backend: Some("http://backend.invalid".to_owned()),
        ..RawConfig::default()
    };
    let config = match Config::load(args.config.as_deref(), std::env::vars(), flags) {
        Ok(config) => config,
        Err(error) => {
            say(&format!("svcgate v3 report: {error}"));
            return ExitCode::from(2);
        }
    };
    let format = match args.format {
        ReportFormat::Markdown => svcgate::rewrite::migration::Format::Markdown,
        ReportFormat::Json => svcgate::rewrite::migration::Format::Json,
        ReportFormat::Csv => svcgate::rewrite::migration::Format::Csv,
    };
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => return complain("svcgate v3 report", &format!("starting the runtime: {error}")),
    };
    match runtime.block_on(app::v3_report(&config, args.client.as_deref(), format)) {
        Ok(text) => match print_lines([text.trim_end()]) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => complain("svcgate v3 report", &error),
        },
        Err(error) => {
            let unknown = matches!(
                error.downcast_ref::<svcgate::rewrite::migration::ReportError>(),
                Some(svcgate::rewrite::migration::ReportError::UnknownClient(_))
            );
            say(&format!("svcgate v3 report: {error:#}"));
            if unknown {
                ExitCode::from(2)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}

fn serve(args: ServeArgs) -> ExitCode {
    let flags = RawConfig {
        listen: args.listen,
        backend: args.backend,
        data_dir: args.data_dir,
        database_url: args.database_url,
        public_url: args.public_url,
        dev: args.dev.then_some(true),
        preserve_host: args.preserve_host.then_some(true),
        rules_dir: args.rules,
        log_format: args.log_format,
        edition: args.edition,
        worker_threads: args.worker_threads,
        ..RawConfig::default()
    };
    let config = match Config::load(args.config.as_deref(), std::env::vars(), flags) {
        Ok(config) => config,
        Err(error) => {
            say(&format!("svcgate: {error}"));
            return ExitCode::from(2);
        }
    };
    let logging = match telemetry::init_logging(config.log.format, &config.log.level) {
        Ok(logging) => logging,
        Err(error) => return complain("svcgate", &format!("starting the log writer: {error}")),
    };
    // One worker thread is best served by the single-threaded scheduler: the same work without the
    // work-stealing machinery (blocking calls still go to their own threads).
    let mut builder = match config.worker_threads {
        Some(1) => tokio::runtime::Builder::new_current_thread(),
        Some(threads) => {
            let mut builder = tokio::runtime::Builder::new_multi_thread();
            builder.worker_threads(threads);
            builder
        }
        None => tokio::runtime::Builder::new_multi_thread(),
    };
    let runtime = match builder.enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => return complain("svcgate", &format!("starting the runtime: {error}")),
    };
    let outcome = runtime.block_on(async {
        let running = app::prepare(&config).await?;
        if let Some(banner) = running.dev_banner(&config) {
            // A closed stdout (a script that read what it needed) must not stop the gateway.
            let mut stdout = std::io::stdout();
            drop(writeln!(stdout, "{banner}").and_then(|()| stdout.flush()));
        } else {
            tracing::info!(address = %running.address, "listening");
        }
        running.serve(&config).await
    });
    // Everything logged so far reaches stderr before the exit status or a final error does.
    logging.flush();
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => complain("svcgate", &format!("{error:#}")),
    }
}

/// Writes `lines` to stdout, locked once. A reader that went away (`BrokenPipe`, as after `| head -1`) ends the
/// output quietly with `Ok`: the command then exits as it would have, 0 on success, rather than panicking as
/// `println!` does. Any other write error is returned as a message.
fn print_lines<I>(lines: I) -> Result<(), String>
where
    I: IntoIterator,
    I::Item: Display,
{
    let mut stdout = std::io::stdout().lock();
    let written = lines
        .into_iter()
        .try_for_each(|line| writeln!(stdout, "{line}"))
        .and_then(|()| stdout.flush());
    match written {
        Err(error) if error.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(format!("writing the output: {error}"))
        }
        _ => Ok(()),
    }
}

/// Writes one line to stderr; a stderr that cannot be written to is ignored rather than a panic (`eprintln!`).
fn say(message: &dyn Display) {
    drop(writeln!(std::io::stderr(), "{message}"));
}

/// Says `who: message` on stderr and returns the failure exit status.
fn complain(who: &str, message: &str) -> ExitCode {
    say(&format!("{who}: {message}"));
    ExitCode::FAILURE
}

//! How svcgate reaches PostgreSQL: `database_url` read as libpq reads its `sslmode` and `sslrootcert`, the TLS
//! that mode asks for (through rustls), and the bounds on the connection's waits.
//!
//! # TLS, as libpq does it
//!
//! | `sslmode` | plaintext server | certificate checked |
//! |---|---|---|
//! | `disable` | plaintext only | — |
//! | `prefer` | plaintext | no (the chain, when roots are named) |
//! | `require` (svcgate's default) | refused | no (the chain, when roots are named) |
//! | `verify-ca` | refused | the chain, against named roots only |
//! | `verify-full` | refused | the chain and the host name |
//!
//! Named roots are the URL's `sslrootcert` (a PEM file), else `database_ca_bundle` (as libpq's root file); without
//! either, `verify-full` checks against the system's roots. `sslrootcert=system` (the system's roots) goes with
//! `verify-full` only, and means it when no `sslmode` is given, as in libpq 16. libpq's default differs on one point: without
//! `sslmode`, libpq prefers TLS and silently falls back to plaintext; svcgate requires it, and a server without TLS
//! is refused at start with a line that names `sslmode=disable` as the way to allow plaintext.
//!
//! # Bounded waits
//!
//! A connection is bounded by [`DatabaseLimits`]: connecting (TCP, TLS and the start-up exchange) by
//! `connect_timeout`; a dead peer is noticed by TCP keepalive and the TCP user timeout (unacknowledged data); and
//! the server ends a session of svcgate's left idle inside a transaction (a client that vanished mid-batch behind a
//! half-open path) after twice the operation timeout, so that its locks do not outlive it.

use std::sync::Arc;
use std::time::Duration;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, SignatureScheme};

use crate::store::StoreError;

/// How svcgate waits on PostgreSQL: every bound has a default and an option of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DatabaseLimits {
    /// Longest a new connection may take: TCP, TLS and the start-up exchange (`database_connect_timeout`).
    pub connect_timeout: Duration,
    /// Longest one operation may take, the wait for a pooled connection included: a read, a write, a batch of
    /// alerts (`database_timeout`). One that takes longer is abandoned and its connection dropped.
    pub operation_timeout: Duration,
    /// Idle time before TCP keepalive probes start; they are then sent every half of it, three at most
    /// (`database_tcp_keepalive`).
    pub keepalive: Duration,
    /// Longest data sent may stay unacknowledged before the kernel drops the connection
    /// (`database_tcp_user_timeout`).
    pub tcp_user_timeout: Duration,
}

impl DatabaseLimits {
    /// Longest connecting and migrating at start may take: 12 × `operation_timeout` (a minute by default; another
    /// replica may hold the migration lock meanwhile).
    pub fn start_timeout(&self) -> Duration {
        self.operation_timeout.saturating_mul(12)
    }
}

impl Default for DatabaseLimits {
    /// The documented defaults.
    fn default() -> Self {
        DatabaseLimits {
            connect_timeout: Duration::from_secs(5),
            operation_timeout: Duration::from_secs(5),
            keepalive: Duration::from_secs(10),
            tcp_user_timeout: Duration::from_secs(15),
        }
    }
}

/// libpq's `sslmode`, all five of its values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslMode {
    /// Plaintext only.
    Disable,
    /// TLS if the server offers it, else plaintext.
    Prefer,
    /// TLS, the certificate not checked (but against `sslrootcert` when one is given).
    Require,
    /// TLS, the certificate's chain checked.
    VerifyCa,
    /// TLS, the certificate's chain and host name checked.
    VerifyFull,
}

impl SslMode {
    fn parse(value: &str) -> Result<SslMode, StoreError> {
        Ok(match value {
            "disable" => SslMode::Disable,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            other => {
                return Err(StoreError::Unavailable(format!(
                "database_url: sslmode={other} is none of disable, prefer, require, verify-ca, verify-full"
            )))
            }
        })
    }

    /// The value as libpq spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }
}

/// Where the roots for the server's certificate come from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum RootSource {
    /// `sslrootcert=<file>`: that PEM file alone.
    File(std::path::PathBuf),
    /// `sslrootcert=system`: the system's roots alone.
    System,
    /// No `sslrootcert`: the system's roots and `database_ca_bundle`.
    Default,
}

/// A database to connect to: the client's configuration, with the TLS its `sslmode` asks for.
pub struct Target {
    /// The client's configuration, the bounds of [`DatabaseLimits`] applied.
    pub config: tokio_postgres::Config,
    /// The TLS connector; `None` with `sslmode=disable`.
    pub tls: Option<tokio_postgres_rustls::MakeRustlsConnect>,
    /// The mode the URL asked for (`require` when it named none).
    pub mode: SslMode,
}

/// Reads `url` (a `postgres://` URL) with `sslmode` and `sslrootcert` as libpq takes them, and applies `limits`.
pub fn target(
    url: &str,
    ca_bundle: Option<&std::path::Path>,
    limits: &DatabaseLimits,
) -> Result<Target, StoreError> {
    let (rest, mode, roots) = split_tls_parameters(url)?;
    // `sslrootcert=system` without `sslmode` means `verify-full`, as in libpq.
    let mode = if roots == RootSource::System && !url.contains("sslmode=") {
        SslMode::VerifyFull
    } else {
        mode
    };
    let mut config: tokio_postgres::Config = rest
        .parse()
        .map_err(|error| StoreError::Unavailable(format!("database_url: {error}")))?;
    // An alert is acknowledged only once its commit is durable, whatever the database's default says; a session
    // left inside a transaction by a client that is gone is ended by the server, its locks with it; and the server
    // notices a vanished svcgate as svcgate notices a vanished server.
    let idle_in_transaction = limits.operation_timeout.saturating_mul(2).as_millis().max(1);
    // Keepalive counts whole seconds on both ends: less than one would turn it off.
    let keepalive = limits.keepalive.max(Duration::from_secs(1));
    let session_options = format!(
        "-c synchronous_commit=on -c idle_in_transaction_session_timeout={idle_in_transaction} \
         -c tcp_keepalives_idle={} -c tcp_keepalives_interval={} -c tcp_keepalives_count=3 -c tcp_user_timeout={}",
        keepalive.as_secs(),
        (keepalive / 2).as_secs().max(1),
        limits.tcp_user_timeout.as_millis()
    );
    let session_options = match config.get_options() {
        Some(given) => format!("{given} {session_options}"),
        None => session_options,
    };
    config
        .options(&session_options)
        .connect_timeout(limits.connect_timeout)
        .keepalives(true)
        .keepalives_idle(keepalive)
        .keepalives_interval((keepalive / 2).max(Duration::from_secs(1)))
        .keepalives_retries(3)
        .tcp_user_timeout(limits.tcp_user_timeout)
        .ssl_mode(match mode {
            SslMode::Disable => tokio_postgres::config::SslMode::Disable,
            SslMode::Prefer => tokio_postgres::config::SslMode::Prefer,
            SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => {
                tokio_postgres::config::SslMode::Require
            }
        });
    let tls = match mode {
        SslMode::Disable => None,
        _ => Some(connector(mode, &roots, ca_bundle)?),
    };
    Ok(Target { config, tls, mode })
}

/// Whether `error` is the refusal of a server that offers no TLS where the mode requires it.
pub fn offers_no_tls(error: &tokio_postgres::Error) -> bool {
    // tokio-postgres says so only in its message: "error performing TLS handshake: server does not support TLS".
    std::error::Error::source(error).is_some_and(|source| source.to_string() == "server does not support TLS")
}

/// The line svcgate exits with when the server offers no TLS.
pub fn plaintext_refused(mode: SslMode) -> StoreError {
    StoreError::Unavailable(format!(
        "PostgreSQL offers no TLS and sslmode is {} (svcgate's default is require): add sslmode=disable to \
         database_url to connect in plaintext",
        mode.as_str()
    ))
}

/// `url` without its `sslmode` and `sslrootcert` parameters, and what they said. Every other parameter is kept as
/// it was written, for tokio-postgres to read.
fn split_tls_parameters(url: &str) -> Result<(String, SslMode, RootSource), StoreError> {
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, query),
        None => (url, ""),
    };
    let mut kept = Vec::new();
    let mut mode = SslMode::Require;
    let mut roots = RootSource::Default;
    for pair in query.split('&').filter(|pair| !pair.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let value = percent_encoding::percent_decode_str(value)
            .decode_utf8()
            .map_err(|_| StoreError::Unavailable(format!("database_url: the value of {key} is not UTF-8")))?;
        match key {
            "sslmode" => mode = SslMode::parse(&value)?,
            "sslrootcert" if value == "system" => roots = RootSource::System,
            "sslrootcert" => roots = RootSource::File(value.into_owned().into()),
            _ => kept.push(pair),
        }
    }
    let rest = if kept.is_empty() {
        base.to_owned()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    Ok((rest, mode, roots))
}

/// The trusted roots `roots` names; without `sslrootcert`, `database_ca_bundle`, and the system's roots too when
/// `with_system` (when the host name is checked as well).
fn root_store(
    roots: &RootSource,
    ca_bundle: Option<&std::path::Path>,
    with_system: bool,
) -> Result<rustls::RootCertStore, StoreError> {
    let mut store = rustls::RootCertStore::empty();
    let add_file = |store: &mut rustls::RootCertStore, what: &'static str, path: &std::path::Path| {
        for certificate in crate::util::tls::read_certs(what, path)
            .map_err(|error| StoreError::Unavailable(error.to_string()))?
        {
            store
                .add(certificate)
                .map_err(|error| StoreError::Unavailable(format!("{what}: {error}")))?;
        }
        Ok::<_, StoreError>(())
    };
    let add_system = |store: &mut rustls::RootCertStore| {
        for certificate in rustls_native_certs::load_native_certs().certs {
            // A system certificate rustls cannot use is skipped, as every rustls client does.
            drop(store.add(certificate));
        }
    };
    match roots {
        RootSource::File(path) => add_file(&mut store, "database_url's sslrootcert", path)?,
        RootSource::System => add_system(&mut store),
        RootSource::Default => {
            if with_system {
                add_system(&mut store);
            }
            if let Some(path) = ca_bundle {
                add_file(&mut store, "database_ca_bundle", path)?;
            }
        }
    }
    Ok(store)
}

/// The TLS connector for `mode`.
fn connector(
    mode: SslMode,
    roots: &RootSource,
    ca_bundle: Option<&std::path::Path>,
) -> Result<tokio_postgres_rustls::MakeRustlsConnect, StoreError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .map_err(|error| StoreError::Unavailable(error.to_string()))?;
    // As libpq: `prefer` and `require` check the chain when roots to check it against are named (the URL's
    // `sslrootcert` file, or `database_ca_bundle` as libpq's root file); `verify-ca` needs such roots, since the
    // system's would take any public certificate of any host; `sslrootcert=system` goes with `verify-full` only.
    let named_roots =
        matches!(roots, RootSource::File(_)) || (*roots == RootSource::Default && ca_bundle.is_some());
    let check = match (mode, roots) {
        (SslMode::VerifyFull, _) => Check::ChainAndName,
        (_, RootSource::System) => {
            return Err(StoreError::Unavailable(format!(
                "database_url: sslrootcert=system needs sslmode=verify-full (it is sslmode={})",
                mode.as_str()
            )))
        }
        (SslMode::VerifyCa, _) if !named_roots => {
            return Err(StoreError::Unavailable(
                "database_url: sslmode=verify-ca needs the CA to check against: sslrootcert=<file> or \
                 database_ca_bundle (the system's roots would take any public certificate of any host)"
                    .to_owned(),
            ))
        }
        (SslMode::VerifyCa, _) => Check::Chain,
        (SslMode::Prefer | SslMode::Require, _) if named_roots => Check::Chain,
        _ => Check::Nothing,
    };
    let config = match check {
        Check::ChainAndName => builder
            .with_root_certificates(root_store(roots, ca_bundle, true)?)
            .with_no_client_auth(),
        Check::Chain => {
            let inner = rustls::client::WebPkiServerVerifier::builder_with_provider(
                Arc::new(root_store(roots, ca_bundle, false)?),
                Arc::clone(&provider),
            )
            .build()
            .map_err(|error| StoreError::Unavailable(format!("database TLS roots: {error}")))?;
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(ChainOnly { inner }))
                .with_no_client_auth()
        }
        Check::Nothing => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(Unchecked { provider }))
            .with_no_client_auth(),
    };
    Ok(tokio_postgres_rustls::MakeRustlsConnect::new(config))
}

/// What of the server's certificate is checked.
enum Check {
    Nothing,
    Chain,
    ChainAndName,
}

/// `verify-ca`: the chain is checked as rustls checks it, the host name is not.
#[derive(Debug)]
struct ChainOnly {
    inner: Arc<rustls::client::WebPkiServerVerifier>,
}

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        // rustls checks the name only after the chain: a name error means the chain held.
        match self
            .inner
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

/// `prefer` and `require` without `sslrootcert`: the connection is encrypted, the certificate taken as it comes
/// (the handshake's signatures are still checked, so the peer holds the certificate's key).
#[derive(Debug)]
struct Unchecked {
    provider: Arc<rustls::crypto::CryptoProvider>,
}

impl ServerCertVerifier for Unchecked {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sslmode_and_sslrootcert_are_taken_out_of_the_url_and_the_rest_kept_as_written() {
        let cases = [
            (
                "postgres://u@h/db",
                "postgres://u@h/db",
                SslMode::Require,
                RootSource::Default,
            ),
            (
                "postgres://u@h/db?sslmode=verify-full&sslrootcert=%2Fetc%2Fca.pem&application_name=a%20b",
                "postgres://u@h/db?application_name=a%20b",
                SslMode::VerifyFull,
                RootSource::File("/etc/ca.pem".into()),
            ),
            (
                "postgres://u@h/db?connect_timeout=3&sslmode=disable",
                "postgres://u@h/db?connect_timeout=3",
                SslMode::Disable,
                RootSource::Default,
            ),
            (
                "postgres://u@h/db?sslmode=verify-ca&sslrootcert=system",
                "postgres://u@h/db",
                SslMode::VerifyCa,
                RootSource::System,
            ),
            (
                "postgres://u@h/db?sslmode=prefer",
                "postgres://u@h/db",
                SslMode::Prefer,
                RootSource::Default,
            ),
        ];
        for (url, rest, mode, roots) in cases {
            let split = split_tls_parameters(url).map_err(|error| error.to_string());
            assert_eq!(split, Ok((rest.to_owned(), mode, roots)), "{url}");
        }
    }

    #[test]
    fn an_unknown_sslmode_is_refused_with_the_values_libpq_takes() {
        let Err(error) = split_tls_parameters("postgres://u@h/db?sslmode=verify") else {
            panic!("sslmode=verify was taken");
        };
        assert!(error.to_string().contains("verify-full"), "{error}");
    }

    #[test]
    fn roots_that_would_check_nothing_useful_are_refused_as_libpq_refuses_them() {
        let limits = DatabaseLimits::default();
        for url in [
            "postgres://u@h/db?sslmode=verify-ca",
            "postgres://u@h/db?sslmode=require&sslrootcert=system",
            "postgres://u@h/db?sslmode=verify-ca&sslrootcert=system",
        ] {
            assert!(target(url, None, &limits).is_err(), "{url} was taken");
        }
        let Ok(system) = target("postgres://u@h/db?sslrootcert=system", None, &limits) else {
            panic!("sslrootcert=system alone was refused");
        };
        assert_eq!(system.mode, SslMode::VerifyFull);
    }

    #[test]
    fn the_limits_reach_the_client_and_the_server_session() -> Result<(), StoreError> {
        let limits = DatabaseLimits::default();
        let target = target(
            "postgres://u@h/db?sslmode=disable&options=-c%20work_mem%3D4MB",
            None,
            &limits,
        )?;
        assert_eq!(target.config.get_connect_timeout(), Some(&limits.connect_timeout));
        assert_eq!(
            target.config.get_tcp_user_timeout(),
            Some(&limits.tcp_user_timeout)
        );
        assert!(target.config.get_keepalives());
        assert_eq!(target.config.get_keepalives_idle(), limits.keepalive);
        let options = target.config.get_options().unwrap_or_default();
        assert!(options.starts_with("-c work_mem=4MB "), "{options}");
        assert!(
            options.contains("idle_in_transaction_session_timeout=10000"),
            "{options}"
        );
        assert!(options.contains("synchronous_commit=on"), "{options}");
        assert!(target.tls.is_none());
        Ok(())
    }
}

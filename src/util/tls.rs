//! PEM files read for TLS: certificate chains and private keys, for the client listener, the backend client and
//! the PostgreSQL connection alike, each error naming the option that named the file.

use std::io::BufReader;

/// A PEM file that could not be read or holds nothing usable.
#[derive(Debug, thiserror::Error)]
#[error("{option} {path}: {message}")]
pub struct PemError {
    /// The configuration option naming the file.
    pub option: &'static str,
    /// The file.
    pub path: String,
    /// What went wrong.
    pub message: String,
}

/// Reads every certificate of a PEM file.
pub fn read_certs(
    option: &'static str,
    path: &std::path::Path,
) -> Result<Vec<rustls::pki_types::CertificateDer<'static>>, PemError> {
    let pem_error = |message: String| PemError {
        option,
        path: path.display().to_string(),
        message,
    };
    let file = std::fs::File::open(path).map_err(|error| pem_error(error.to_string()))?;
    let certs = rustls_pemfile::certs(&mut BufReader::new(file))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| pem_error(error.to_string()))?;
    if certs.is_empty() {
        return Err(pem_error("holds no PEM certificate".to_owned()));
    }
    Ok(certs)
}

/// Reads the first private key of a PEM file.
pub fn read_key(
    option: &'static str,
    path: &std::path::Path,
) -> Result<rustls::pki_types::PrivateKeyDer<'static>, PemError> {
    let pem_error = |message: String| PemError {
        option,
        path: path.display().to_string(),
        message,
    };
    let file = std::fs::File::open(path).map_err(|error| pem_error(error.to_string()))?;
    rustls_pemfile::private_key(&mut BufReader::new(file))
        .map_err(|error| pem_error(error.to_string()))?
        .ok_or_else(|| pem_error("holds no PEM private key".to_owned()))
}

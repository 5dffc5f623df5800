//! Secrets at rest and random tokens: AES-256-GCM with a key from the configuration or a `0600` key file, and
//! random hex for tokens, session ids and CSRF values.
//!
//! Used by the alert integrations (their tokens), the V3 password-login sessions (the backend tokens they stand
//! for) and the pages (session ids); it depends on none of them. Integration tokens must be viewable again by
//! Maintainers, so they are encrypted rather than hashed. The key is
//! `secret_key` (64 hex digits) when configured; otherwise `secret.key` in the data directory, created with 32
//! bytes from the OS random source and mode `0600` on first start.

use std::io::Write;
use std::path::Path;

use aes_gcm::aead::{Aead, KeyInit};
use aes_gcm::{Aes256Gcm, Key, Nonce};

/// Why the key could not be loaded or a token not be sealed or opened.
#[derive(Debug, thiserror::Error)]
pub enum SecretError {
    /// The key file could not be read or written.
    #[error("key file {path}: {source}")]
    KeyFile {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The key file holds something else than 64 hex digits.
    #[error("key file {0}: not 64 hexadecimal digits")]
    BadKeyFile(String),
    /// The OS random source failed.
    #[error("random source: {0}")]
    Random(String),
    /// Encryption or decryption failed (a token sealed with another key).
    #[error("token cannot be decrypted with this key")]
    Crypto,
}

/// Seals and opens integration tokens.
pub struct SecretBox {
    cipher: Aes256Gcm,
}

/// Fills `bytes` from the OS random source.
pub fn random_bytes(bytes: &mut [u8]) -> Result<(), SecretError> {
    getrandom::getrandom(bytes).map_err(|error| SecretError::Random(error.to_string()))
}

/// `count` random bytes as lowercase hex.
pub fn random_hex(count: usize) -> Result<String, SecretError> {
    let mut bytes = vec![0u8; count];
    random_bytes(&mut bytes)?;
    Ok(hex::encode(bytes))
}

/// A key written as 64 hexadecimal digits (surrounding white space ignored).
pub fn parse_hex_key(text: &str) -> Option<[u8; 32]> {
    let mut key = [0u8; 32];
    hex::decode_to_slice(text.trim(), &mut key).ok()?;
    Some(key)
}

/// The configured key, or the data directory's key file (`secret.key`, created on first start).
pub fn load_key(configured: Option<[u8; 32]>, data_dir: &Path) -> Result<[u8; 32], SecretError> {
    if let Some(key) = configured {
        return Ok(key);
    }
    let path = data_dir.join("secret.key");
    let shown = path.display().to_string();
    let file_error = |source| SecretError::KeyFile {
        path: shown.clone(),
        source,
    };
    match std::fs::read_to_string(&path) {
        Ok(text) => parse_hex_key(&text).ok_or_else(|| SecretError::BadKeyFile(shown.clone())),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            let hex = random_hex(32)?;
            let mut options = std::fs::OpenOptions::new();
            options.write(true).create_new(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::OpenOptionsExt;
                options.mode(0o600);
            }
            let mut file = options.open(&path).map_err(file_error)?;
            file.write_all(hex.as_bytes()).map_err(file_error)?;
            file.sync_all().map_err(file_error)?;
            parse_hex_key(&hex).ok_or_else(|| SecretError::BadKeyFile(shown.clone()))
        }
        Err(error) => Err(file_error(error)),
    }
}

impl SecretBox {
    /// The box for `key`.
    pub fn new(key: [u8; 32]) -> Self {
        SecretBox {
            cipher: Aes256Gcm::new(Key::<Aes256Gcm>::from_slice(&key)),
        }
    }

    /// The configured key, or the data directory's key file (created on first start).
    pub fn load(configured: Option<[u8; 32]>, data_dir: &Path) -> Result<Self, SecretError> {
        load_key(configured, data_dir).map(Self::new)
    }

    /// Encrypts `plaintext` under a fresh random nonce: `(nonce, ciphertext)`.
    pub fn seal(&self, plaintext: &str) -> Result<(Vec<u8>, Vec<u8>), SecretError> {
        let mut nonce = [0u8; 12];
        random_bytes(&mut nonce)?;
        let ciphertext = self
            .cipher
            .encrypt(Nonce::from_slice(&nonce), plaintext.as_bytes())
            .map_err(|_| SecretError::Crypto)?;
        Ok((nonce.to_vec(), ciphertext))
    }

    /// Encrypts `plaintext` into one line of text (`nonce:ciphertext`, each base64) for a text column.
    pub fn seal_text(&self, plaintext: &str) -> Result<String, SecretError> {
        use base64::Engine;
        let (nonce, ciphertext) = self.seal(plaintext)?;
        let engine = base64::engine::general_purpose::STANDARD;
        Ok(format!("{}:{}", engine.encode(nonce), engine.encode(ciphertext)))
    }

    /// Decrypts what [`SecretBox::seal_text`] produced.
    pub fn open_text(&self, sealed: &str) -> Result<String, SecretError> {
        use base64::Engine;
        let engine = base64::engine::general_purpose::STANDARD;
        let (nonce, ciphertext) = sealed.split_once(':').ok_or(SecretError::Crypto)?;
        let nonce = engine.decode(nonce).map_err(|_| SecretError::Crypto)?;
        let ciphertext = engine.decode(ciphertext).map_err(|_| SecretError::Crypto)?;
        self.open(&nonce, &ciphertext)
    }

    /// Decrypts what [`SecretBox::seal`] produced.
    pub fn open(&self, nonce: &[u8], ciphertext: &[u8]) -> Result<String, SecretError> {
        if nonce.len() != 12 {
            return Err(SecretError::Crypto);
        }
        let plaintext = self
            .cipher
            .decrypt(Nonce::from_slice(nonce), ciphertext)
            .map_err(|_| SecretError::Crypto)?;
        String::from_utf8(plaintext).map_err(|_| SecretError::Crypto)
    }
}

/// The key of an existing store: `configured` when given, else the `secret.key` file in `data_dir` (never
/// created here).
pub fn existing_key(configured: Option<[u8; 32]>, data_dir: &Path) -> Result<[u8; 32], SecretError> {
    if let Some(key) = configured {
        return Ok(key);
    }
    let path = data_dir.join("secret.key");
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(&path).map_err(|source| SecretError::KeyFile {
        path: shown.clone(),
        source,
    })?;
    parse_hex_key(&text).ok_or(SecretError::BadKeyFile(shown))
}

/// A short, public fingerprint of `key` (16 hex digits of a SHA-256 over a fixed label and the key): enough to tell
/// two keys apart, nothing that helps find the key. Replicas sharing a database compare theirs with the stored one.
pub fn key_fingerprint(key: &[u8; 32]) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::new()
        .chain_update(b"svcgate secret_key fingerprint\0")
        .chain_update(key)
        .finalize();
    hex::encode(&digest[..8])
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn tokens_round_trip_and_the_ciphertext_hides_them() {
        let secret = SecretBox::new([7; 32]);
        let (nonce, ciphertext) = secret.seal("0123456789abcdef").unwrap();
        assert!(!ciphertext.windows(16).any(|window| window == b"0123456789abcdef"));
        assert_eq!(secret.open(&nonce, &ciphertext).unwrap(), "0123456789abcdef");
        assert!(SecretBox::new([8; 32]).open(&nonce, &ciphertext).is_err());
    }

    #[test]
    fn the_key_file_is_made_once_with_owner_only_permissions() {
        let dir = tempfile::tempdir().unwrap();
        let first = SecretBox::load(None, dir.path()).unwrap();
        let (nonce, ciphertext) = first.seal("token").unwrap();
        let second = SecretBox::load(None, dir.path()).unwrap();
        assert_eq!(second.open(&nonce, &ciphertext).unwrap(), "token");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join("secret.key"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }

    #[test]
    fn sealed_text_round_trips_and_refuses_tampering() {
        let secret = SecretBox::new([3; 32]);
        let sealed = secret.seal_text("access-token").unwrap();
        assert!(!sealed.contains("access-token"));
        assert_eq!(secret.open_text(&sealed).unwrap(), "access-token");
        assert!(secret.open_text("plain").is_err());
        assert!(secret.open_text(&sealed.replace(':', ":A")).is_err());
    }

    #[test]
    fn random_hex_has_the_asked_length() {
        let token = random_hex(16).unwrap();
        assert_eq!(token.len(), 32);
        assert!(token
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
    }
}

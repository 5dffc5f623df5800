//! Durable state: the [`Store`] trait and its embedded SQLite implementation.
//!
//! Everything the gateway must remember across restarts goes through [`Store`], so that a PostgreSQL
//! implementation can take the SQLite one's place for several replicas sharing state.

mod migrations;
mod sqlite;

use std::future::Future;
use std::pin::Pin;

pub use sqlite::SqliteStore;

/// A boxed future returned by the store's methods.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'a>>;

/// Why the store could not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database refused or failed the operation.
    #[error("database: {0}")]
    Database(#[from] rusqlite::Error),
    /// The data directory could not be used.
    #[error("data directory {path}: {source}")]
    DataDir {
        /// The directory.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The writer task is gone (the store is shutting down).
    #[error("store writer stopped")]
    WriterGone,
}

/// What an issue or merge request global id stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct IdRecord {
    /// `issue` or `merge_request`.
    pub kind: IdKind,
    /// The global id.
    pub id: u64,
    /// The project it belongs to.
    pub project_id: u64,
    /// Its iid within the project.
    pub iid: u64,
}

/// The two kinds of object V3 names by global id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IdKind {
    /// An issue.
    Issue,
    /// A merge request.
    MergeRequest,
}

impl IdKind {
    /// The name stored in the database and used in rules.
    pub fn as_str(self) -> &'static str {
        match self {
            IdKind::Issue => "issue",
            IdKind::MergeRequest => "merge_request",
        }
    }

    /// The kind a name stands for.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "issue" => Some(IdKind::Issue),
            "merge_request" => Some(IdKind::MergeRequest),
            _ => None,
        }
    }
}

/// The gateway's durable state.
pub trait Store: Send + Sync {
    /// Checks that the store answers (for readiness).
    fn ping(&self) -> StoreFuture<'_, ()>;
    /// Looks up a global id.
    fn id_lookup(&self, kind: IdKind, id: u64) -> StoreFuture<'_, Option<IdRecord>>;
    /// Records id ↔ iid pairs (new or changed ones replace old ones).
    fn id_record(&self, records: Vec<IdRecord>) -> StoreFuture<'_, ()>;
    /// Keeps a password-login session: the hash of the token svcgate issued, and the backend token it stands for.
    fn session_put(
        &self,
        token_hash: String,
        access_token: String,
        user_id: Option<u64>,
    ) -> StoreFuture<'_, ()>;
    /// The backend token of a session, by the hash of the issued token.
    fn session_get(&self, token_hash: String) -> StoreFuture<'_, Option<String>>;
}

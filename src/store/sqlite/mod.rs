//! The embedded store: one SQLite file in WAL mode, one writer thread committing in groups, a few readers.
//!
//! Writes are queued to a dedicated writer thread. It takes every job waiting (up to [`MAX_BATCH`]), runs them all
//! in one transaction, commits once with `synchronous = FULL` (the commit is on disk when it returns), and only then
//! tells each caller its outcome. Many concurrent writers so cost one fsync per batch instead of one each.
//!
//! Should a job fail, the batch is rolled back and run again with each job in its own savepoint, so that the
//! failure undoes that job's writes only. Savepoints are not used up front: within one, SQLite copies every page a
//! job changes into a statement journal first (about 2.5 % of all the instructions an alert costs).
//!
//! Reads run on an r2d2 pool of [`READERS`] read-only connections, taken and used on the blocking thread pool, so no
//! SQLite call (and no wait for a free connection) ever blocks the async runtime.
//!
//! This folder owns the SQLite side of [`Store`](crate::store::Store): here the store, its writer thread and its
//! readers; `queries.rs` the [`Store`](crate::store::Store) operations; `alerts.rs` the alert lifecycle's and
//! the outbox's statements; `open_alerts.rs` the writer's in-memory open-alert table; `usage.rs` V3 usage. It uses
//! the store's shared records and statements (`crate::store::rows`), the schema, and [`crate::store::lifecycle`].

use std::path::{Path, PathBuf};
use std::sync::Arc;

use r2d2_sqlite::SqliteConnectionManager;
use rusqlite::{Connection, OpenFlags};
use tokio::sync::{mpsc, oneshot};

mod alerts;
mod open_alerts;
mod queries;
mod usage;

use self::open_alerts::OpenAlerts;
use crate::store::commits::CommitObserver;
use crate::store::rows;
use crate::store::schema;
use crate::store::StoreError;

/// The most jobs one commit takes.
const MAX_BATCH: usize = 1024;
/// Read connections kept open.
const READERS: u32 = 4;

trait WriteJob: Send {
    /// Runs the job's statements, keeping the outcome; a batch may run a job twice (see the module comment).
    fn run(&mut self, connection: &Connection) -> rusqlite::Result<()>;
    /// Reports the outcome once the batch's commit is known.
    fn finish(self: Box<Self>, commit: Result<(), String>);
}

struct Job<F, R> {
    work: F,
    result: Option<rusqlite::Result<R>>,
    reply: oneshot::Sender<Result<R, StoreError>>,
}

impl<F, R> WriteJob for Job<F, R>
where
    F: Fn(&Connection) -> rusqlite::Result<R> + Send,
    R: Send,
{
    fn run(&mut self, connection: &Connection) -> rusqlite::Result<()> {
        let outcome = (self.work)(connection);
        let failed = outcome.as_ref().err().map(clone_error);
        self.result = Some(outcome);
        failed.map_or(Ok(()), Err)
    }

    fn finish(self: Box<Self>, commit: Result<(), String>) {
        let answer = match (commit, self.result) {
            (Ok(()), Some(Ok(value))) => Ok(value),
            (Ok(()), Some(Err(error))) => Err(StoreError::from(error)),
            (Ok(()), None) => Err(StoreError::Unavailable(
                "the writer dropped the job unrun".to_owned(),
            )),
            (Err(message), _) => Err(StoreError::Unavailable(message)),
        };
        // The caller may have given up waiting; its answer is then dropped.
        drop(self.reply.send(answer));
    }
}

/// Creates the data directory (0700) and the database file (0600) private to svcgate's user. SQLite gives the
/// log and shared-memory files (`-wal`, `-shm`) the database file's mode, so they are private too. An existing
/// database file is made private as well; an existing directory is left as its owner set it.
fn create_private(data_dir: &Path, database: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
    if !data_dir.is_dir() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(data_dir)?;
    }
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(database)?;
    std::fs::set_permissions(database, std::fs::Permissions::from_mode(0o600))
}

fn clone_error(error: &rusqlite::Error) -> rusqlite::Error {
    rusqlite::Error::ToSqlConversionFailure(error.to_string().into())
}

/// The writer thread is gone: the store is shutting down.
fn writer_gone() -> StoreError {
    StoreError::Unavailable("store writer stopped".to_owned())
}

/// The SQLite implementation of [`Store`].
#[derive(Clone)]
pub struct SqliteStore {
    writer: mpsc::UnboundedSender<Box<dyn WriteJob>>,
    readers: r2d2::Pool<SqliteConnectionManager>,
    path: Arc<PathBuf>,
    /// Where the writer reports each commit.
    commits: CommitObserver,
    /// Free space the data directory's file system must keep for readiness (`ready_min_free_bytes`).
    min_free_bytes: u64,
}

/// The free space readiness asks of the data directory's file system unless set otherwise
/// ([`SqliteStore::with_min_free_bytes`]).
pub const DEFAULT_MIN_FREE_BYTES: u64 = 64 << 20;

impl SqliteStore {
    /// Opens (creating if needed) the store in `data_dir`, applies migrations and starts the writer thread.
    pub fn open(data_dir: &Path) -> Result<Self, StoreError> {
        let data_dir_error = |source| StoreError::DataDir {
            path: data_dir.display().to_string(),
            source,
        };
        let path = data_dir.join("svcgate.db");
        create_private(data_dir, &path).map_err(data_dir_error)?;
        let mut writer = Connection::open(&path)?;
        writer.pragma_update(None, "journal_mode", "WAL")?;
        writer.pragma_update(None, "synchronous", "FULL")?;
        writer.pragma_update(None, "foreign_keys", "ON")?;
        writer.busy_timeout(std::time::Duration::from_secs(5))?;
        schema::apply_sqlite(&mut writer)?;
        let open_alerts = OpenAlerts::install(&writer)?;
        let manager = SqliteConnectionManager::file(&path)
            .with_flags(OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)
            .with_init(|reader| reader.busy_timeout(std::time::Duration::from_secs(5)));
        // One connection is opened here, so a store that cannot be read fails to open; the others when reads first
        // overlap (an idle gateway holds one: opening all four up front cost 1.9 MiB of idle memory in the
        // 2026-11-24 bench run). They are kept for the life of the store and not tested when taken: each read
        // reports its own errors.
        let readers = r2d2::Pool::builder()
            .max_size(READERS)
            .min_idle(Some(1))
            .thread_pool(Arc::new(
                scheduled_thread_pool::ScheduledThreadPool::builder()
                    .num_threads(1)
                    .thread_name_pattern("svcgate-store-pool")
                    .build(),
            ))
            .max_lifetime(None)
            .idle_timeout(None)
            .test_on_check_out(false)
            .build(manager)
            .map_err(|error| StoreError::Unavailable(format!("opening the read connections: {error}")))?;
        // SQLite copies the log into the database file inside a commit once the log holds this many pages; a
        // small log keeps each of those pauses short (the default, 1,000 pages, held senders back ~10 ms).
        writer.pragma_update(None, "wal_autocheckpoint", WAL_AUTOCHECKPOINT_PAGES)?;
        let (sender, receiver) = mpsc::unbounded_channel();
        let commits = CommitObserver::default();
        let observer = commits.clone();
        std::thread::Builder::new()
            .name("svcgate-store-writer".to_owned())
            .spawn(move || write_loop(writer, open_alerts, receiver, observer))
            .map_err(|source| StoreError::DataDir {
                path: data_dir.display().to_string(),
                source,
            })?;
        Ok(SqliteStore {
            writer: sender,
            readers,
            path: Arc::new(path),
            commits,
            min_free_bytes: DEFAULT_MIN_FREE_BYTES,
        })
    }

    /// The store, readiness asking `bytes` of free space on the data directory's file system.
    pub fn with_min_free_bytes(mut self, bytes: u64) -> Self {
        self.min_free_bytes = bytes;
        self
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Records `fingerprint` as the secret key's on first use, and refuses a different key later: integration
    /// keys and page sessions sealed with one key cannot be opened with another.
    pub async fn check_key(&self, fingerprint: &str) -> Result<(), StoreError> {
        let given = fingerprint.to_owned();
        let stored = self
            .write(move |connection| {
                connection.execute(&rows::sqlite(rows::KEY_FINGERPRINT_RECORD), [&given])?;
                connection.query_row(rows::KEY_FINGERPRINT, [], |row| row.get::<_, String>(0))
            })
            .await?;
        crate::store::same_key(stored, fingerprint)
    }

    /// Runs `work` on the writer in the next group commit and answers once that commit is on disk. `work` may run
    /// twice, the first time rolled back, when another job of its batch fails.
    pub async fn write<F, R>(&self, work: F) -> Result<R, StoreError>
    where
        F: Fn(&Connection) -> rusqlite::Result<R> + Send + 'static,
        R: Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        let job: Box<dyn WriteJob> = Box::new(Job {
            work,
            result: None,
            reply,
        });
        self.writer.send(job).map_err(|_| writer_gone())?;
        answer.await.map_err(|_| writer_gone())?
    }

    /// Test aid: queues a job that holds the writer, and returns once the writer runs it; the writer is let go
    /// when the returned sender sends or is dropped. Jobs queued meanwhile run as one batch.
    #[cfg(test)]
    pub(crate) async fn hold_writer(&self) -> std::sync::mpsc::Sender<()> {
        let (running, is_running) = std::sync::mpsc::channel();
        let (release, released) = std::sync::mpsc::channel::<()>();
        let (reply, _) = oneshot::channel();
        let job: Box<dyn WriteJob> = Box::new(Job {
            work: move |_: &Connection| {
                let _ = running.send(());
                let _ = released.recv();
                Ok(())
            },
            result: None,
            reply,
        });
        assert!(self.writer.send(job).is_ok(), "the writer is gone");
        let started = tokio::task::spawn_blocking(move || is_running.recv()).await;
        assert!(matches!(started, Ok(Ok(()))), "the holding job did not run");
        release
    }

    /// Runs `work` on a read connection on the blocking pool.
    pub async fn read<F, R>(&self, work: F) -> Result<R, StoreError>
    where
        F: FnOnce(&Connection) -> rusqlite::Result<R> + Send + 'static,
        R: Send + 'static,
    {
        let readers = self.readers.clone();
        tokio::task::spawn_blocking(move || {
            let connection = readers
                .get()
                .map_err(|error| StoreError::Unavailable(format!("no read connection: {error}")))?;
            let outcome = work(&connection);
            outcome.map_err(StoreError::from)
        })
        .await
        .map_err(|_| StoreError::Unavailable("a read did not finish".to_owned()))?
    }
}

/// Whether an ordinary alert can be written to the database at `path` now: its file system is mounted for writing and
/// keeps at least `min_free_bytes` free for svcgate's user, and the file and its directory are writable. A one-row
/// write would still fit long after alerts stopped fitting, so space is judged by what alerts need.
fn room_to_write(path: &Path, min_free_bytes: u64) -> Result<(), String> {
    use rustix::fs::{Access, StatVfsMountFlags};
    let directory = path.parent().unwrap_or(path);
    let space =
        rustix::fs::statvfs(directory).map_err(|error| format!("{}: {error}", directory.display()))?;
    if space.f_flag.contains(StatVfsMountFlags::RDONLY) {
        return Err(format!("{} is on a read-only file system", directory.display()));
    }
    let free = space.f_bavail.saturating_mul(space.f_frsize);
    if free < min_free_bytes {
        return Err(format!(
            "{} has {free} bytes free, below ready_min_free_bytes ({min_free_bytes}): alerts may not fit",
            directory.display()
        ));
    }
    for writable in [path, directory] {
        rustix::fs::access(writable, Access::WRITE_OK)
            .map_err(|error| format!("{} is not writable: {error}", writable.display()))?;
    }
    Ok(())
}

fn write_loop(
    mut connection: Connection,
    mut open_alerts: OpenAlerts,
    mut receiver: mpsc::UnboundedReceiver<Box<dyn WriteJob>>,
    commits: CommitObserver,
) {
    // Load the open alerts while the gateway starts serving, rather than in the first sender's batch. Should it
    // fail here, the first batch tries again (and reports to its callers).
    if let Err(error) = open_alerts.refresh_if_changed(&connection) {
        tracing::error!(%error, "loading the open alerts failed");
    }
    while let Some(first) = receiver.blocking_recv() {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match receiver.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        let started = std::time::Instant::now();
        let commit = run_batch(&mut connection, &mut open_alerts, &mut batch);
        commits.observe(batch.len(), started);
        if let Err(message) = &commit {
            tracing::error!(error = %message, jobs = batch.len(), "store commit failed");
            open_alerts.forget();
        }
        for job in batch {
            job.finish(commit.clone());
        }
    }
}

fn run_batch(
    connection: &mut Connection,
    open_alerts: &mut OpenAlerts,
    batch: &mut [Box<dyn WriteJob>],
) -> Result<(), String> {
    match run_jobs(connection, open_alerts, batch, Isolation::Shared)? {
        Ran::Committed => Ok(()),
        Ran::JobFailed => run_jobs(connection, open_alerts, batch, Isolation::Savepoints).map(drop),
    }
}

/// How the jobs of one transaction are kept apart.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Isolation {
    /// All in one transaction: the first job to fail rolls back the whole batch.
    Shared,
    /// Each in its own savepoint: a failing job's writes are undone, the others' committed.
    Savepoints,
}

/// What a run of a batch came to.
enum Ran {
    /// Committed; each job holds its outcome.
    Committed,
    /// A job failed in a shared transaction, which was rolled back.
    JobFailed,
}

fn run_jobs(
    connection: &mut Connection,
    open_alerts: &mut OpenAlerts,
    batch: &mut [Box<dyn WriteJob>],
    isolation: Isolation,
) -> Result<Ran, String> {
    // IMMEDIATE: the write lock is taken before anything is read, so the transaction can never find its
    // snapshot outdated when it comes to write (another connection, such as the sqlite3 shell, may write).
    let transaction = connection
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .map_err(|error| error.to_string())?;
    let filled = open_alerts
        .refresh_if_changed(&transaction)
        .map_err(|error| error.to_string())?;
    // The savepoint statements are prepared once and reused, not parsed per job.
    let statement = |sql: &str| -> Result<(), String> {
        transaction
            .prepare_cached(sql)
            .and_then(|mut statement| statement.execute([]))
            .map(drop)
            .map_err(|error| error.to_string())
    };
    for job in batch.iter_mut() {
        match isolation {
            Isolation::Shared => {
                if job.run(&transaction).is_err() {
                    // Dropping the transaction rolls it back, the open-alert table with it: a fill made in it is
                    // gone too, so the next run must fill again. Otherwise the table is as it was, and refilling
                    // it (about 2 µs per open alert) would hold up every write for nothing.
                    if filled {
                        open_alerts.forget();
                    }
                    return Ok(Ran::JobFailed);
                }
            }
            Isolation::Savepoints => {
                statement("SAVEPOINT job")?;
                if job.run(&transaction).is_err() {
                    statement("ROLLBACK TO job")?;
                }
                statement("RELEASE job")?;
            }
        }
    }
    transaction.commit().map_err(|error| error.to_string())?;
    Ok(Ran::Committed)
}

/// Log pages after which a commit checkpoints (1 MiB of 4 KiB pages).
const WAL_AUTOCHECKPOINT_PAGES: i64 = 256;

/// Test aid: polls a store job's future once, so that its job is queued (behind a held writer: it must still wait).
#[cfg(test)]
pub(crate) async fn queued<F: std::future::Future>(mut job: std::pin::Pin<&mut F>) {
    std::future::poll_fn(|context| {
        assert!(
            job.as_mut().poll(context).is_pending(),
            "the job ran while the writer was held"
        );
        std::task::Poll::Ready(())
    })
    .await;
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::store::{IdKind, IdRecord, Store};

    #[test]
    fn the_data_directory_and_the_store_files_are_private_to_their_user() {
        use std::os::unix::fs::PermissionsExt;
        let parent = tempfile::tempdir().unwrap();
        let data_dir = parent.path().join("data");
        let store = SqliteStore::open(&data_dir).unwrap();
        let mode = |name: &str| {
            std::fs::metadata(data_dir.join(name))
                .unwrap_or_else(|error| panic!("{name}: {error}"))
                .permissions()
                .mode()
                & 0o777
        };
        assert_eq!(mode(""), 0o700);
        for file in ["svcgate.db", "svcgate.db-wal", "svcgate.db-shm"] {
            assert_eq!(mode(file), 0o600, "{file}");
        }
        drop(store);
    }

    #[test]
    fn sqlite_is_built_without_memory_statistics() {
        // `.cargo/config.toml` passes SQLITE_DEFAULT_MEMSTATUS=0 to the bundled SQLite's build; a build that does
        // not read it (run from outside the checkout, `cargo install --git`) loses it, and this says so.
        let connection = Connection::open_in_memory().unwrap();
        let mut statement = connection.prepare("PRAGMA compile_options").unwrap();
        let options: Vec<String> = statement
            .query_map([], |row| row.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert!(
            options.iter().any(|option| option == "DEFAULT_MEMSTATUS=0"),
            "{options:?}"
        );
    }

    fn record(id: u64, iid: u64) -> IdRecord {
        IdRecord {
            kind: IdKind::Issue,
            id,
            project_id: 7,
            iid,
        }
    }

    #[tokio::test]
    async fn id_records_survive_reopening_the_file() {
        let dir = tempfile::tempdir().unwrap();
        {
            let store = SqliteStore::open(dir.path()).unwrap();
            store
                .id_record(vec![record(1001, 1), record(1002, 2)])
                .await
                .unwrap();
        }
        let store = SqliteStore::open(dir.path()).unwrap();
        assert_eq!(
            store.id_lookup(IdKind::Issue, 1002).await.unwrap(),
            Some(record(1002, 2))
        );
        assert_eq!(store.id_lookup(IdKind::MergeRequest, 1002).await.unwrap(), None);
    }

    #[tokio::test]
    async fn concurrent_writes_are_committed_in_groups_and_all_answered() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(dir.path()).unwrap();
        let writes = (0..200u64).map(|n| {
            let store = store.clone();
            tokio::spawn(async move { store.id_record(vec![record(n, n)]).await })
        });
        for write in writes {
            write.await.unwrap().unwrap();
        }
        let count: u64 = store
            .read(|connection| connection.query_row("SELECT COUNT(*) FROM id_index", [], |row| row.get(0)))
            .await
            .unwrap();
        assert_eq!(count, 200);
    }

    #[tokio::test]
    async fn a_failing_job_does_not_undo_its_batch_neighbours() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(dir.path()).unwrap();
        let bad = store.write(|connection| connection.execute("INSERT INTO no_such_table VALUES (1)", []));
        let good = store.id_record(vec![record(5, 5)]);
        let (bad, good) = tokio::join!(bad, good);
        assert!(bad.is_err());
        good.unwrap();
        assert!(store.id_lookup(IdKind::Issue, 5).await.unwrap().is_some());
    }

    #[tokio::test]
    async fn readiness_asks_the_writer_so_a_stuck_writer_is_not_ready() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(dir.path()).unwrap().with_min_free_bytes(0);
        assert!(store.ping().await.is_ok());
        let release = store.hold_writer().await;
        let waited = tokio::time::timeout(std::time::Duration::from_millis(300), store.ping()).await;
        assert!(waited.is_err(), "readiness answered while the writer was stuck");
        drop(release);
        assert!(store.ping().await.is_ok());
        // More free space than any disk has: not ready, and the answer says why.
        let store = store.with_min_free_bytes(u64::MAX);
        let refused = store.ping().await.map_err(|error| error.to_string());
        assert!(
            matches!(&refused, Err(text) if text.contains("ready_min_free_bytes")),
            "{refused:?}"
        );
    }

    #[tokio::test]
    async fn a_failing_job_undoes_its_own_writes_and_its_neighbours_count_once() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(dir.path()).unwrap();
        store.id_record(vec![record(100, 0)]).await.unwrap();
        let bump = |connection: &Connection| {
            connection.execute("UPDATE id_index SET iid = iid + 1 WHERE id = 100", [])
        };
        // The writer is held while the next three are queued, so that they run as one batch: the shared run is
        // rolled back at the failing job, and the batch runs again with savepoints.
        let release = store.hold_writer().await;
        let mut before = std::pin::pin!(store.write(bump));
        queued(before.as_mut()).await;
        let mut bad = std::pin::pin!(store.write(|connection| {
            connection.execute(
                "INSERT INTO id_index (kind, id, project_id, iid) VALUES ('issue', 5, 7, 5)",
                [],
            )?;
            connection.execute("INSERT INTO no_such_table VALUES (1)", [])
        }));
        queued(bad.as_mut()).await;
        let mut after = std::pin::pin!(store.write(bump));
        queued(after.as_mut()).await;
        release.send(()).unwrap();
        let (before, bad, after) = tokio::join!(before, bad, after);
        assert!(bad.is_err());
        assert_eq!((before.unwrap(), after.unwrap()), (1, 1));
        assert_eq!(store.id_lookup(IdKind::Issue, 5).await.unwrap(), None);
        assert_eq!(
            store.id_lookup(IdKind::Issue, 100).await.unwrap(),
            Some(record(100, 2))
        );
    }

    #[test]
    fn migrations_are_numbered_from_one() {
        assert!(schema::latest_sqlite() >= 1);
    }
}

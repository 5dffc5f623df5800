//! Reading a store's V3 usage counts without opening it as the gateway does, for `svcgate v3 report` (a cron job
//! that may run a newer binary beside a running gateway): SQLite is opened read-only, PostgreSQL through one plain
//! connection with the configured timeouts; neither migrates the schema nor starts a writer. A schema older than
//! this build knows is refused with a message, since its columns may not be the ones read here.

use std::path::Path;

use rusqlite::{Connection, OpenFlags};

use super::postgres::connect;
use super::records::UsageRow;
use super::rows::USAGE_COLUMNS;
use super::{PostgresOptions, StoreError};

/// Why the usage counts cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadUsageError {
    /// No store in the directory.
    #[error("{0} holds no svcgate store (svcgate.db)")]
    NoStore(String),
    /// SQLite refused.
    #[error("reading {path}: {source}")]
    Sqlite {
        /// The database file.
        path: String,
        /// What SQLite said.
        source: rusqlite::Error,
    },
    /// The store's schema predates this build.
    #[error(
        "the store's schema is at migration {found}, older than this svcgate's {known}: run the svcgate that \
         serves this store, or start this one with `svcgate serve` once to migrate it, then report"
    )]
    OldSchema {
        /// The newest migration the store has.
        found: i64,
        /// The newest this build knows.
        known: i64,
    },
    /// PostgreSQL could not be reached or configured.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// PostgreSQL refused a statement.
    #[error("PostgreSQL: {0}")]
    Postgres(#[from] tokio_postgres::Error),
    /// PostgreSQL did not answer in time.
    #[error("PostgreSQL did not answer within {0:?} (database_timeout)")]
    Timeout(std::time::Duration),
}

/// The usage rows of the SQLite store in `data_dir`, opened read-only.
pub fn sqlite(data_dir: &Path) -> Result<Vec<UsageRow>, ReadUsageError> {
    let path = data_dir.join("svcgate.db");
    if !path.is_file() {
        return Err(ReadUsageError::NoStore(data_dir.display().to_string()));
    }
    let error = |source| ReadUsageError::Sqlite {
        path: path.display().to_string(),
        source,
    };
    let connection = Connection::open_with_flags(
        &path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(error)?;
    connection
        .busy_timeout(std::time::Duration::from_secs(5))
        .map_err(error)?;
    let found: Option<i64> = connection
        .query_row("SELECT max(version) FROM schema_migrations", [], |row| row.get(0))
        .map_err(error)?;
    check_schema(found.unwrap_or(0), super::schema::latest_sqlite())?;
    let mut statement = connection
        .prepare(&format!(
            "SELECT {USAGE_COLUMNS} FROM v3_usage ORDER BY route, calls DESC"
        ))
        .map_err(error)?;
    let rows = statement
        .query_map([], |row| super::rows::usage(row))
        .map_err(error)?
        .collect::<rusqlite::Result<Vec<_>>>()
        .map_err(error)?;
    Ok(rows)
}

/// The usage rows of the PostgreSQL database `options` names, read in a read-only transaction over one
/// connection, within the configured connect and operation timeouts.
pub async fn postgres(options: &PostgresOptions) -> Result<Vec<UsageRow>, ReadUsageError> {
    let target = connect::target(&options.url, options.ca_bundle.as_deref(), &options.limits)?;
    let limits = options.limits;
    let work = async {
        let client = match target.tls {
            None => {
                let (client, connection) = target.config.connect(tokio_postgres::NoTls).await?;
                tokio::spawn(connection);
                client
            }
            Some(tls) => {
                let (client, connection) = match target.config.connect(tls).await {
                    Ok(connected) => connected,
                    Err(error) if connect::offers_no_tls(&error) => {
                        return Err(connect::plaintext_refused(target.mode).into())
                    }
                    Err(error) => return Err(error.into()),
                };
                tokio::spawn(connection);
                client
            }
        };
        client.batch_execute("BEGIN TRANSACTION READ ONLY").await?;
        let found: Option<i64> = client
            .query_one("SELECT max(version) FROM schema_migrations", &[])
            .await?
            .try_get(0)?;
        check_schema(found.unwrap_or(0), super::schema::latest_postgres())?;
        let rows = client
            .query(
                &format!("SELECT {USAGE_COLUMNS} FROM v3_usage ORDER BY route, calls DESC"),
                &[],
            )
            .await?;
        let rows = rows
            .iter()
            .map(super::rows::usage)
            .collect::<Result<Vec<_>, _>>()?;
        client.batch_execute("COMMIT").await?;
        Ok(rows)
    };
    let bound = limits.connect_timeout.saturating_add(limits.operation_timeout);
    tokio::time::timeout(bound, work)
        .await
        .map_err(|_| ReadUsageError::Timeout(bound))?
}

fn check_schema(found: i64, known: i64) -> Result<(), ReadUsageError> {
    if found < known {
        return Err(ReadUsageError::OldSchema { found, known });
    }
    Ok(())
}

//! `svcgate store copy`: moves a single node's SQLite store into an empty PostgreSQL database, so that a team
//! that outgrows one replica keeps its integrations (and their keys), alerts, incident settings and calls, V3
//! sessions, page sessions and usage counts.
//!
//! Every table is copied row by row with its ids, in one PostgreSQL transaction: a failure leaves the database
//! as it was. The columns are PostgreSQL's (`information_schema`), each value converted from what SQLite holds:
//! integers to `BIGINT`, 0/1 to `BOOLEAN`, text and blobs as they are. Afterwards the id sequences continue after
//! the copied rows, each project's iid counter starts at its highest iid, and the database records the fingerprint
//! of the key the integration keys are sealed with, so replicas must be given that same `secret_key`.

use std::path::Path;

use rusqlite::types::Value as SqliteValue;
use rusqlite::{Connection, OpenFlags};
use tokio_postgres::types::ToSql;

use super::{PostgresOptions, PostgresStore, StoreError};

/// The tables copied, in an order that keeps references valid; every other table is the stores' own bookkeeping.
const TABLES: [&str; 8] = [
    "integrations",
    "alerts",
    "alert_settings",
    "outbox",
    "id_index",
    "sessions",
    "page_sessions",
    "v3_usage",
];

/// Tables whose ids come from a sequence in PostgreSQL.
const SEQUENCED: [&str; 3] = ["integrations", "alerts", "outbox"];

/// How many rows of each table were copied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Copied {
    /// `(table, rows)`, in copy order.
    pub tables: Vec<(&'static str, u64)>,
}

/// Why a copy did not happen.
#[derive(Debug, thiserror::Error)]
pub enum CopyError {
    /// The SQLite store could not be read.
    #[error("reading {path}: {source}")]
    Sqlite {
        /// The database file.
        path: String,
        /// What SQLite said.
        source: rusqlite::Error,
    },
    /// PostgreSQL refused the copy.
    #[error("PostgreSQL: {0}")]
    Postgres(#[from] StoreError),
    /// The key given is not the one the SQLite store was set up with: its sealed values could not be opened.
    #[error(
        "the secret key given (fingerprint {given}) is not the one {path} was set up with (fingerprint {stored}); \
         give the store's key"
    )]
    WrongKey {
        /// The database file.
        path: String,
        /// The fingerprint the SQLite store recorded.
        stored: String,
        /// The fingerprint of the key given.
        given: String,
    },
    /// The target already holds integrations or alerts: the copy never merges.
    #[error("the PostgreSQL database already holds {0}; copy into an empty database")]
    NotEmpty(String),
    /// A value in SQLite cannot be given to its PostgreSQL column.
    #[error("{table}.{column}: a {found} value cannot go into a {wanted} column")]
    Unconvertible {
        /// The table.
        table: &'static str,
        /// The column.
        column: String,
        /// What SQLite holds.
        found: &'static str,
        /// PostgreSQL's column type.
        wanted: String,
    },
}

impl From<tokio_postgres::Error> for CopyError {
    fn from(error: tokio_postgres::Error) -> Self {
        CopyError::Postgres(error.into())
    }
}

/// Copies the SQLite store in `data_dir` into the (empty) PostgreSQL database of `target`, whose integration keys
/// are sealed with the key of fingerprint `key_fingerprint`.
pub async fn sqlite_to_postgres(
    data_dir: &Path,
    target: &PostgresOptions,
    key_fingerprint: &str,
) -> Result<Copied, CopyError> {
    let path = data_dir.join("svcgate.db");
    let shown = path.display().to_string();
    let sqlite_error = |source| CopyError::Sqlite {
        path: shown.clone(),
        source,
    };
    let source =
        Connection::open_with_flags(&path, OpenFlags::SQLITE_OPEN_READ_ONLY).map_err(sqlite_error)?;
    // A store older than the key check recorded no fingerprint; one that did must be copied with its own key.
    let recorded: Option<String> = source
        .query_row(super::rows::KEY_FINGERPRINT, [], |row| row.get(0))
        .ok();
    if let Some(stored) = recorded.filter(|stored| stored != key_fingerprint) {
        return Err(CopyError::WrongKey {
            path: shown.clone(),
            stored,
            given: key_fingerprint.to_owned(),
        });
    }
    let store = PostgresStore::connect(target).await?;
    store.check_key(key_fingerprint).await?;
    let mut client = store.pool_client().await?;
    let transaction = client.transaction().await?;
    for table in ["integrations", "alerts"] {
        let rows: i64 = transaction
            .query_one(&format!("SELECT count(*) FROM {table}"), &[])
            .await?
            .try_get(0)?;
        if rows > 0 {
            return Err(CopyError::NotEmpty(format!("{rows} {table}")));
        }
    }
    let mut copied = Vec::new();
    for table in TABLES {
        let columns = transaction
            .query(
                "SELECT column_name, data_type FROM information_schema.columns
                 WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position",
                &[&table],
            )
            .await?;
        let columns: Vec<(String, String)> = columns
            .iter()
            .map(|row| Ok((row.try_get(0)?, row.try_get(1)?)))
            .collect::<Result<_, tokio_postgres::Error>>()?;
        // Columns PostgreSQL fills itself (a session's creation time) are left to their default.
        let columns: Vec<(String, String)> = columns
            .into_iter()
            .filter(|(_, kind)| kind != "timestamp with time zone")
            .collect();
        let names: Vec<&str> = columns.iter().map(|(name, _)| name.as_str()).collect();
        let rows = read_rows(&source, table, &names).map_err(sqlite_error)?;
        let placeholders: Vec<String> = (1..=names.len()).map(|n| format!("${n}")).collect();
        let insert = transaction
            .prepare(&format!(
                "INSERT INTO {table} ({}) VALUES ({})",
                names.join(", "),
                placeholders.join(", ")
            ))
            .await?;
        for row in &rows {
            let values = row
                .iter()
                .zip(&columns)
                .map(|(value, (name, kind))| convert(table, name, kind, value))
                .collect::<Result<Vec<_>, _>>()?;
            let parameters: Vec<&(dyn ToSql + Sync)> = values
                .iter()
                .map(|value| value.as_ref() as &(dyn ToSql + Sync))
                .collect();
            transaction.execute(&insert, &parameters).await?;
        }
        copied.push((table, rows.len() as u64));
    }
    for table in SEQUENCED {
        // SQLite's highest id ever given (AUTOINCREMENT tables), so that ids of rows removed before the copy are not
        // given again either.
        let given: i64 = source
            .query_row(
                "SELECT seq FROM sqlite_sequence WHERE name = ?1",
                [table],
                |row| row.get(0),
            )
            .unwrap_or(0);
        transaction
            .execute(
                &format!(
                    "SELECT setval(pg_get_serial_sequence('{table}', 'id'), GREATEST(COALESCE(MAX(id), 0), $1) + 1, \
                     false) FROM {table}"
                ),
                &[&given],
            )
            .await?;
    }
    transaction
        .execute(
            "INSERT INTO alert_iids (project_id, last_iid) SELECT project_id, MAX(iid) FROM alerts GROUP BY project_id
             ON CONFLICT (project_id) DO UPDATE SET last_iid = GREATEST(alert_iids.last_iid, EXCLUDED.last_iid)",
            &[],
        )
        .await?;
    transaction.commit().await?;
    Ok(Copied { tables: copied })
}

/// Every row of `table` in SQLite, the values of `columns` in their order.
fn read_rows(source: &Connection, table: &str, columns: &[&str]) -> rusqlite::Result<Vec<Vec<SqliteValue>>> {
    let mut statement = source.prepare(&format!("SELECT {} FROM {table}", columns.join(", ")))?;
    let rows = statement.query_map([], |row| {
        (0..columns.len())
            .map(|index| row.get::<_, SqliteValue>(index))
            .collect::<rusqlite::Result<Vec<_>>>()
    })?;
    rows.collect()
}

/// One SQLite value as a parameter of PostgreSQL's column type `kind`.
fn convert(
    table: &'static str,
    column: &str,
    kind: &str,
    value: &SqliteValue,
) -> Result<Box<dyn ToSql + Sync + Send>, CopyError> {
    let refused = |found: &'static str| CopyError::Unconvertible {
        table,
        column: column.to_owned(),
        found,
        wanted: kind.to_owned(),
    };
    Ok(match (kind, value) {
        (_, SqliteValue::Null) => match kind {
            "bigint" => Box::new(None::<i64>),
            "boolean" => Box::new(None::<bool>),
            "bytea" => Box::new(None::<Vec<u8>>),
            _ => Box::new(None::<String>),
        },
        ("bigint", SqliteValue::Integer(number)) => Box::new(*number),
        ("boolean", SqliteValue::Integer(number)) => Box::new(*number != 0),
        ("text", SqliteValue::Text(text)) => Box::new(text.clone()),
        ("bytea", SqliteValue::Blob(bytes)) => Box::new(bytes.clone()),
        (_, SqliteValue::Integer(_)) => return Err(refused("integer")),
        (_, SqliteValue::Real(_)) => return Err(refused("real")),
        (_, SqliteValue::Text(_)) => return Err(refused("text")),
        (_, SqliteValue::Blob(_)) => return Err(refused("blob")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_values_become_their_postgresql_column_types() {
        let table = "alerts";
        for (kind, value) in [
            ("bigint", SqliteValue::Integer(7)),
            ("boolean", SqliteValue::Integer(1)),
            ("text", SqliteValue::Text("x".to_owned())),
            ("bytea", SqliteValue::Blob(vec![1, 2])),
            ("text", SqliteValue::Null),
        ] {
            let converted = convert(table, "c", kind, &value);
            assert!(converted.is_ok(), "{kind} from {value:?}");
        }
        let refused = convert(table, "iid", "bigint", &SqliteValue::Text("seven".to_owned()));
        assert!(matches!(refused, Err(CopyError::Unconvertible { .. })));
    }
}

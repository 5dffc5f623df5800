//! Numbered schema migrations, applied in order at start; a migration never changes once released.

use rusqlite::Connection;

/// Every migration: its number and its SQL.
const MIGRATIONS: &[(i64, &str)] = &[
    (
        1,
        "CREATE TABLE id_index (
        kind TEXT NOT NULL,
        id INTEGER NOT NULL,
        project_id INTEGER NOT NULL,
        iid INTEGER NOT NULL,
        PRIMARY KEY (kind, id)
    ) WITHOUT ROWID;",
    ),
    (
        2,
        "CREATE TABLE sessions (
        token_hash TEXT PRIMARY KEY,
        access_token TEXT NOT NULL,
        user_id INTEGER,
        created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
    ) WITHOUT ROWID;",
    ),
];

/// Applies every migration the database has not seen, each in its own transaction.
pub fn apply(connection: &mut Connection) -> rusqlite::Result<()> {
    connection.execute_batch(
        "CREATE TABLE IF NOT EXISTS schema_migrations (
            version INTEGER PRIMARY KEY,
            applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
        );",
    )?;
    for (version, sql) in MIGRATIONS {
        let seen: bool = connection.query_row(
            "SELECT EXISTS (SELECT 1 FROM schema_migrations WHERE version = ?1)",
            [version],
            |row| row.get(0),
        )?;
        if seen {
            continue;
        }
        let transaction = connection.transaction()?;
        transaction.execute_batch(sql)?;
        transaction.execute("INSERT INTO schema_migrations (version) VALUES (?1)", [version])?;
        transaction.commit()?;
    }
    Ok(())
}

/// The highest migration number this build knows.
#[cfg(test)]
pub fn latest() -> i64 {
    MIGRATIONS.last().map_or(0, |(version, _)| *version)
}

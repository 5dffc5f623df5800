//! V3 usage counts in the SQLite store: one row per route, client and user agent, at most a bounded number of
//! clients per route (the least recent folded into `others`).

use std::collections::BTreeSet;

use rusqlite::{params, Connection};

use crate::store::records::OTHERS;
use crate::store::{UsageDelta, UsageRow};

/// Adds a batch of counts and folds routes over `max_clients` clients.
pub fn add(connection: &Connection, deltas: &[UsageDelta], max_clients: usize) -> rusqlite::Result<()> {
    let mut statement = connection.prepare_cached(
        "INSERT INTO v3_usage (route, since, client, user_agent, calls, errors, first_seen, last_seen)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
         ON CONFLICT (route, client, user_agent) DO UPDATE SET
            calls = calls + excluded.calls, errors = errors + excluded.errors, since = excluded.since,
            first_seen = min(first_seen, excluded.first_seen), last_seen = max(last_seen, excluded.last_seen)",
    )?;
    let mut routes = BTreeSet::new();
    for delta in deltas {
        statement.execute(params![
            delta.route,
            delta.since,
            delta.client,
            delta.user_agent,
            delta.calls,
            delta.errors,
            delta.first_seen,
            delta.last_seen
        ])?;
        routes.insert(delta.route.clone());
    }
    for route in routes {
        fold(connection, &route, max_clients)?;
    }
    Ok(())
}

/// Folds a route's least recent clients into `others` until at most `max_clients` rows remain besides it (the
/// `others` row is the one with that name and no user agent: a user named `others` is a client like any other).
fn fold(connection: &Connection, route: &str, max_clients: usize) -> rusqlite::Result<()> {
    let count: usize = connection.query_row(
        "SELECT COUNT(*) FROM v3_usage WHERE route = ?1 AND NOT (client = ?2 AND user_agent = '')",
        params![route, OTHERS],
        |row| row.get(0),
    )?;
    if count <= max_clients {
        return Ok(());
    }
    let excess = count - max_clients;
    let mut statement = connection.prepare(
        "SELECT client, user_agent, calls, errors, first_seen, last_seen, since FROM v3_usage
         WHERE route = ?1 AND NOT (client = ?2 AND user_agent = '') ORDER BY last_seen ASC LIMIT ?3",
    )?;
    let folded: Vec<(String, String, u64, u64, String, String, String)> = statement
        .query_map(params![route, OTHERS, excess], |row| {
            Ok((
                row.get(0)?,
                row.get(1)?,
                row.get(2)?,
                row.get(3)?,
                row.get(4)?,
                row.get(5)?,
                row.get(6)?,
            ))
        })?
        .collect::<rusqlite::Result<_>>()?;
    for (client, user_agent, calls, errors, first_seen, last_seen, since) in folded {
        connection.execute(
            "DELETE FROM v3_usage WHERE route = ?1 AND client = ?2 AND user_agent = ?3",
            params![route, client, user_agent],
        )?;
        connection.execute(
            "INSERT INTO v3_usage (route, since, client, user_agent, calls, errors, first_seen, last_seen)
             VALUES (?1, ?2, ?3, '', ?4, ?5, ?6, ?7)
             ON CONFLICT (route, client, user_agent) DO UPDATE SET
                calls = calls + excluded.calls, errors = errors + excluded.errors,
                first_seen = min(first_seen, excluded.first_seen), last_seen = max(last_seen, excluded.last_seen)",
            params![route, since, OTHERS, calls, errors, first_seen, last_seen],
        )?;
    }
    Ok(())
}

/// Every row, by route.
pub fn all(connection: &Connection) -> rusqlite::Result<Vec<UsageRow>> {
    let mut statement = connection.prepare(&format!(
        "SELECT {} FROM v3_usage ORDER BY route, calls DESC",
        super::rows::USAGE_COLUMNS
    ))?;
    let found = statement.query_map([], |row| super::rows::usage(row))?;
    found.collect()
}

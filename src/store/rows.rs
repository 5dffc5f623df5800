//! What the SQLite and PostgreSQL stores share about rows: the column lists, one mapper per record type over
//! either driver's row ([`Columns`]), and the alert list's query, built once for both.
//!
//! Statements both databases accept are written once with `$n` placeholders: PostgreSQL numbers them, and SQLite
//! reads `$1` as a named parameter, which rusqlite binds by position as long as the names first appear in order.

use super::records::{
    AlertQuery, AlertRecord, AlertSettings, IntegrationName, IntegrationRecord, OAuthStateRecord,
    OutboxFailure, OutboxState, PageSessionRecord, TouchedAlert, UsageDelta,
};

/// The columns [`alert`] reads, in its order.
pub const ALERT_COLUMNS: &str = "id, project_id, iid, integration_id, fingerprint, status, title, description, \
    severity, service, monitoring_tool, hosts, environment, started_at, ended_at, events, last_event_at, payload, \
    incident_iid, created_at, updated_at";

/// The columns [`touched`] reads, in its order.
pub const TOUCHED_COLUMNS: &str = "id, project_id, iid, status, title, events, incident_iid";

/// The columns [`outbox_state`] reads, in its order.
pub const OUTBOX_STATE_COLUMNS: &str = "kind, attempts, last_error, done_at, next_attempt_at";

/// The columns [`usage`] reads, in its order.
pub const USAGE_COLUMNS: &str = "route, since, client, user_agent, calls, errors, first_seen, last_seen";

/// The severities from most to least severe, as an SQL expression that ranks them (0 is the most severe).
pub const SEVERITY_RANK: &str =
    "CASE severity WHEN 'critical' THEN 0 WHEN 'high' THEN 1 WHEN 'medium' THEN 2 \
    WHEN 'low' THEN 3 WHEN 'info' THEN 4 ELSE 5 END";

/// A row of either driver, read by column index.
pub trait Columns {
    /// The driver's error.
    type Error;
    /// A text column.
    fn text(&self, index: usize) -> Result<String, Self::Error>;
    /// A text column that may be NULL.
    fn opt_text(&self, index: usize) -> Result<Option<String>, Self::Error>;
    /// A non-negative integer column.
    fn int(&self, index: usize) -> Result<u64, Self::Error>;
    /// A non-negative integer column that may be NULL.
    fn opt_int(&self, index: usize) -> Result<Option<u64>, Self::Error>;
    /// A boolean column (SQLite: 0 or 1).
    fn flag(&self, index: usize) -> Result<bool, Self::Error>;
    /// A blob column.
    fn bytes(&self, index: usize) -> Result<Vec<u8>, Self::Error>;
}

impl Columns for rusqlite::Row<'_> {
    type Error = rusqlite::Error;
    fn text(&self, index: usize) -> rusqlite::Result<String> {
        self.get(index)
    }
    fn opt_text(&self, index: usize) -> rusqlite::Result<Option<String>> {
        self.get(index)
    }
    fn int(&self, index: usize) -> rusqlite::Result<u64> {
        self.get(index)
    }
    fn opt_int(&self, index: usize) -> rusqlite::Result<Option<u64>> {
        self.get(index)
    }
    fn flag(&self, index: usize) -> rusqlite::Result<bool> {
        self.get(index)
    }
    fn bytes(&self, index: usize) -> rusqlite::Result<Vec<u8>> {
        self.get(index)
    }
}

/// PostgreSQL's `BIGINT`s are signed; ids and counts are never negative.
fn unsigned(value: i64) -> u64 {
    u64::try_from(value).unwrap_or(0)
}

impl Columns for tokio_postgres::Row {
    type Error = tokio_postgres::Error;
    fn text(&self, index: usize) -> Result<String, tokio_postgres::Error> {
        self.try_get(index)
    }
    fn opt_text(&self, index: usize) -> Result<Option<String>, tokio_postgres::Error> {
        self.try_get(index)
    }
    fn int(&self, index: usize) -> Result<u64, tokio_postgres::Error> {
        self.try_get::<_, i64>(index).map(unsigned)
    }
    fn opt_int(&self, index: usize) -> Result<Option<u64>, tokio_postgres::Error> {
        self.try_get::<_, Option<i64>>(index)
            .map(|value| value.map(unsigned))
    }
    fn flag(&self, index: usize) -> Result<bool, tokio_postgres::Error> {
        self.try_get(index)
    }
    fn bytes(&self, index: usize) -> Result<Vec<u8>, tokio_postgres::Error> {
        self.try_get(index)
    }
}

/// An alert from [`ALERT_COLUMNS`].
pub fn alert<R: Columns>(row: &R) -> Result<AlertRecord, R::Error> {
    Ok(AlertRecord {
        id: row.int(0)?,
        project_id: row.int(1)?,
        iid: row.int(2)?,
        integration_id: row.opt_int(3)?,
        fingerprint: row.opt_text(4)?,
        status: row.text(5)?,
        title: row.text(6)?,
        description: row.opt_text(7)?,
        severity: row.text(8)?,
        service: row.opt_text(9)?,
        monitoring_tool: row.opt_text(10)?,
        hosts_json: row.text(11)?,
        environment: row.opt_text(12)?,
        started_at: row.text(13)?,
        ended_at: row.opt_text(14)?,
        events: row.int(15)?,
        last_event_at: row.text(16)?,
        payload_json: row.text(17)?,
        incident_iid: row.opt_int(18)?,
        created_at: row.text(19)?,
        updated_at: row.text(20)?,
    })
}

/// The columns of an alert an event touched, from [`TOUCHED_COLUMNS`].
pub fn touched<R: Columns>(row: &R) -> Result<TouchedAlert, R::Error> {
    Ok(TouchedAlert {
        id: row.int(0)?,
        project_id: row.int(1)?,
        iid: row.int(2)?,
        status: row.text(3)?,
        title: row.text(4)?,
        events: row.int(5)?,
        incident_iid: row.opt_int(6)?,
    })
}

/// The page session of cookie hash `id_hash` from the columns of [`PAGE_SESSION_GET`].
pub fn page_session<R: Columns>(row: &R, id_hash: String) -> Result<PageSessionRecord, R::Error> {
    Ok(PageSessionRecord {
        id_hash,
        sealed_token: row.text(0)?,
        username: row.text(1)?,
        csrf: row.text(2)?,
        expires_at: row.text(3)?,
        sealed_refresh_token: row.opt_text(4)?,
        token_expires_at: row.opt_text(5)?,
    })
}

/// The pending OAuth sign-in of state hash `state_hash` from the columns of [`OAUTH_STATE_TAKE`].
pub fn oauth_state<R: Columns>(row: &R, state_hash: String) -> Result<OAuthStateRecord, R::Error> {
    Ok(OAuthStateRecord {
        state_hash,
        sealed_verifier: row.text(0)?,
        return_to: row.text(1)?,
        expires_at: row.text(2)?,
    })
}

/// An integration from the columns of [`INTEGRATIONS_ALL`].
pub fn integration<R: Columns>(row: &R) -> Result<IntegrationRecord, R::Error> {
    Ok(IntegrationRecord {
        id: row.int(0)?,
        project_id: row.int(1)?,
        project_path: row.text(2)?,
        kind: row.text(3)?,
        name: row.text(4)?,
        active: row.flag(5)?,
        endpoint_identifier: row.opt_text(6)?,
        token_nonce: row.bytes(7)?,
        token_ciphertext: row.bytes(8)?,
        api_url: row.opt_text(9)?,
        payload_example: row.opt_text(10)?,
        payload_attribute_mapping: row.opt_text(11)?,
        created_at: row.text(12)?,
        updated_at: row.text(13)?,
        one_per_project: row.flag(14)?,
        payload_format: row.text(15)?,
        pending_confirmation: row.opt_text(16)?,
    })
}

/// An integration's name from the columns of [`INTEGRATION_NAMED`].
pub fn integration_name<R: Columns>(row: &R) -> Result<IntegrationName, R::Error> {
    Ok(IntegrationName {
        name: row.text(0)?,
        kind: row.text(1)?,
        deleted: row.flag(2)?,
    })
}

/// An incident call's state from [`OUTBOX_STATE_COLUMNS`].
pub fn outbox_state<R: Columns>(row: &R) -> Result<OutboxState, R::Error> {
    Ok(OutboxState {
        kind: row.text(0)?,
        attempts: row.int(1)?,
        last_error: row.opt_text(2)?,
        done_at: row.opt_text(3)?,
        next_attempt_at: row.text(4)?,
    })
}

/// A failing incident call from [`OUTBOX_FAILURES`].
pub fn outbox_failure<R: Columns>(row: &R) -> Result<OutboxFailure, R::Error> {
    Ok(OutboxFailure {
        kind: row.text(0)?,
        attempts: row.int(1)?,
        last_error: row.text(2)?,
        next_attempt_at: row.text(3)?,
        alert_iid: row.int(4)?,
        alert_title: row.text(5)?,
    })
}

/// A project's incident settings from [`SETTINGS_GET`].
pub fn settings<R: Columns>(row: &R) -> Result<AlertSettings, R::Error> {
    Ok(AlertSettings {
        create_incident: row.flag(0)?,
        auto_close_incident: row.flag(1)?,
    })
}

/// A V3 usage row from [`USAGE_COLUMNS`].
pub fn usage<R: Columns>(row: &R) -> Result<UsageDelta, R::Error> {
    Ok(UsageDelta {
        route: row.text(0)?,
        since: row.text(1)?,
        client: row.text(2)?,
        user_agent: row.text(3)?,
        calls: row.int(4)?,
        errors: row.int(5)?,
        first_seen: row.text(6)?,
        last_seen: row.text(7)?,
    })
}

/// The statements of one page of an alert list, with their parameters: `$1` is the project, then text values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlertListStatements {
    /// `status, count` for every status, under the filters but not the status filter (the tabs' counts).
    pub counts: String,
    /// The number of matching alerts.
    pub total: String,
    /// The page, [`ALERT_COLUMNS`].
    pub page: String,
    /// The text parameters after the project, in placeholder order.
    pub texts: Vec<String>,
}

/// The alert list's statements for `query`. Text sorts by bytes in both databases (`collate_binary` names the
/// clause that makes PostgreSQL do so whatever its collation; SQLite sorts by bytes already).
pub fn alert_list(query: &AlertQuery, collate_binary: &str) -> AlertListStatements {
    let mut conditions = vec!["project_id = $1".to_owned()];
    let mut texts: Vec<String> = Vec::new();
    if let Some(severity) = &query.severity {
        texts.push(severity.clone());
        conditions.push(format!("severity = ${}", texts.len() + 1));
    }
    if let Some(environment) = &query.environment {
        texts.push(environment.clone());
        conditions.push(format!("environment = ${}", texts.len() + 1));
    }
    if let Some(search) = query.search.as_ref().filter(|search| !search.is_empty()) {
        let escaped = search
            .to_lowercase()
            .replace('\\', "\\\\")
            .replace('%', "\\%")
            .replace('_', "\\_");
        texts.push(format!("%{escaped}%"));
        let n = texts.len() + 1;
        conditions.push(format!(
            "(lower(title) LIKE ${n} ESCAPE '\\' OR lower(coalesce(description, '')) LIKE ${n} ESCAPE '\\' \
             OR lower(coalesce(service, '')) LIKE ${n} ESCAPE '\\' \
             OR lower(coalesce(monitoring_tool, '')) LIKE ${n} ESCAPE '\\' OR lower(hosts) LIKE ${n} ESCAPE '\\')"
        ));
    }
    let base = conditions.join(" AND ");
    let filtered = if query.statuses.is_empty() {
        base.clone()
    } else {
        let list: Vec<String> = query
            .statuses
            .iter()
            .filter(|status| ["triggered", "acknowledged", "resolved", "ignored"].contains(&status.as_str()))
            .map(|status| format!("'{status}'"))
            .collect();
        format!("{base} AND status IN ({})", list.join(", "))
    };
    let column = if super::records::SORTABLE.contains(&query.sort_by) {
        query.sort_by
    } else {
        "started_at"
    };
    let order = match column {
        "severity_rank" => SEVERITY_RANK.to_owned(),
        "title" | "status" | "started_at" => format!("{column}{collate_binary}"),
        other => other.to_owned(),
    };
    // Severity ranks lower for more severe alerts, so "descending" severity lists the most severe first.
    let direction = match (column == "severity_rank", query.descending) {
        (true, true) | (false, false) => "ASC",
        _ => "DESC",
    };
    // Alerts with the same value (created in the same millisecond) follow the order asked for too.
    let ties = if query.descending { "DESC" } else { "ASC" };
    let offset = (query.page.max(1) - 1).saturating_mul(query.per_page);
    AlertListStatements {
        counts: format!("SELECT status, COUNT(*) FROM alerts WHERE {base} GROUP BY status"),
        total: format!("SELECT COUNT(*) FROM alerts WHERE {filtered}"),
        page: format!(
            "SELECT {ALERT_COLUMNS} FROM alerts WHERE {filtered} ORDER BY {order} {direction}, id {ties} \
             LIMIT {} OFFSET {offset}",
            query.per_page
        ),
        texts,
    }
}

/// One row of [`AlertListStatements::counts`]: a status and its count.
pub fn status_count<R: Columns>(row: &R) -> Result<(String, u64), R::Error> {
    Ok((row.text(0)?, row.int(1)?))
}

/// A statement shared by both stores, written for PostgreSQL (`$n`), in SQLite's spelling: `?n`, SQLite's own
/// numbered placeholder, which binds by number as PostgreSQL does.
pub fn sqlite(statement: &str) -> String {
    statement.replace('$', "?")
}

/// Every integration not deleted, by id.
pub const INTEGRATIONS_ALL: &str = "SELECT id, project_id, project_path, type, name, active, endpoint_identifier, \
    token_nonce, token_ciphertext, api_url, payload_example, payload_attribute_mapping, created_at, updated_at, \
    one_per_project, payload_format, pending_confirmation FROM integrations WHERE deleted_at IS NULL ORDER BY id";

/// One integration's name and type by id, deleted or not, and whether it is deleted.
pub const INTEGRATION_NAMED: &str =
    "SELECT name, type, deleted_at IS NOT NULL FROM integrations WHERE id = $1";

/// Adds an integration, answering its id.
pub const INTEGRATION_INSERT: &str =
    "INSERT INTO integrations (project_id, project_path, type, name, active, \
    endpoint_identifier, token_nonce, token_ciphertext, api_url, payload_example, payload_attribute_mapping, \
    created_at, updated_at, one_per_project, payload_format, pending_confirmation) \
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) RETURNING id";

/// Sets an integration's pending subscription confirmation alone: `$1` is its id.
pub const INTEGRATION_CONFIRMATION: &str =
    "UPDATE integrations SET pending_confirmation = $2 WHERE id = $1 AND deleted_at IS NULL";

/// Replaces an integration's mutable fields: `$1` is its id.
pub const INTEGRATION_UPDATE: &str = "UPDATE integrations SET name = $2, active = $3, token_nonce = $4, \
    token_ciphertext = $5, api_url = $6, payload_example = $7, payload_attribute_mapping = $8, updated_at = $9, \
    project_path = $10, payload_format = $11, pending_confirmation = $12 WHERE id = $1 AND deleted_at IS NULL";

/// Deletes an integration: its row stays, marked deleted and switched off, so that its id and address are never
/// another's and its alerts keep naming it; its sealed key is erased (`substr(…, 1, 0)` is the empty value of the
/// column's own type in both dialects, a blob in SQLite and `bytea` in PostgreSQL).
pub const INTEGRATION_DELETE: &str =
    "UPDATE integrations SET deleted_at = CURRENT_TIMESTAMP, active = false, \
    token_ciphertext = substr(token_ciphertext, 1, 0) WHERE id = $1 AND deleted_at IS NULL";

/// A project's incident settings.
pub const SETTINGS_GET: &str =
    "SELECT create_incident, auto_close_incident FROM alert_settings WHERE project_id = $1";

/// Stores a project's incident settings.
pub const SETTINGS_PUT: &str =
    "INSERT INTO alert_settings (project_id, create_incident, auto_close_incident) \
    VALUES ($1, $2, $3) ON CONFLICT (project_id) DO UPDATE SET create_incident = excluded.create_incident, \
    auto_close_incident = excluded.auto_close_incident";

/// Queues an incident call, due at once.
pub const OUTBOX_ENQUEUE: &str =
    "INSERT INTO outbox (kind, project_id, alert_id, next_attempt_at) VALUES ($1, $2, $3, $4)";

/// An incident call succeeded: `$1` is its id, `$2` the time, `$3` its claim (the lease end the claim wrote). A
/// call no longer under that claim (another replica took it over when the lease ran out) is left as it is.
pub const OUTBOX_DONE: &str = "UPDATE outbox SET done_at = $2, attempts = attempts + 1, last_error = NULL \
    WHERE id = $1 AND done_at IS NULL AND next_attempt_at = $3";

/// Records `$1` as the fingerprint of the store's secret key, unless one is recorded.
pub const KEY_FINGERPRINT_RECORD: &str =
    "INSERT INTO svcgate_meta (name, value) VALUES ('key_fingerprint', $1) ON CONFLICT (name) DO NOTHING";

/// The fingerprint of the key the store was set up with.
pub const KEY_FINGERPRINT: &str = "SELECT value FROM svcgate_meta WHERE name = 'key_fingerprint'";

/// Removes at most `$2` of the incident calls that finished before `$1` (those still pending stay, however old).
pub const OUTBOX_SWEEP: &str = "DELETE FROM outbox WHERE id IN \
    (SELECT id FROM outbox WHERE done_at IS NOT NULL AND done_at < $1 ORDER BY done_at LIMIT $2)";

/// An incident call failed: `$1` is its id, `$2` when to try again, `$3` the error, `$4` its claim (as for
/// [`OUTBOX_DONE`]).
pub const OUTBOX_RETRY: &str =
    "UPDATE outbox SET attempts = attempts + 1, next_attempt_at = $2, last_error = $3 \
    WHERE id = $1 AND done_at IS NULL AND next_attempt_at = $4";

/// The incident calls still pending after a failure, for the alerts of integration `$1`, newest first, at most
/// `$2` of them.
pub const OUTBOX_FAILURES: &str =
    "SELECT o.kind, o.attempts, o.last_error, o.next_attempt_at, a.iid, a.title \
    FROM outbox o JOIN alerts a ON a.id = o.alert_id \
    WHERE a.integration_id = $1 AND o.done_at IS NULL AND o.last_error IS NOT NULL \
    ORDER BY o.id DESC LIMIT $2";

/// An alert's incident, once created: `$1` is the alert's id.
pub const ALERT_SET_INCIDENT: &str = "UPDATE alerts SET incident_iid = $2 WHERE id = $1";

/// An alert's status, with its end: `$1` is the alert's id.
pub const ALERT_SET_STATUS: &str =
    "UPDATE alerts SET status = $2, ended_at = $3, updated_at = $4 WHERE id = $1";

/// A global id's project and iid.
pub const ID_LOOKUP: &str = "SELECT project_id, iid FROM id_index WHERE kind = $1 AND id = $2";

/// Records a global id's project and iid (a changed one replaces the old).
pub const ID_RECORD: &str = "INSERT INTO id_index (kind, id, project_id, iid) VALUES ($1, $2, $3, $4) \
    ON CONFLICT (kind, id) DO UPDATE SET project_id = excluded.project_id, iid = excluded.iid";

/// Keeps a `POST /session` session.
pub const SESSION_PUT: &str = "INSERT INTO sessions (token_hash, access_token, user_id) VALUES ($1, $2, $3) \
    ON CONFLICT (token_hash) DO UPDATE SET access_token = excluded.access_token";

/// A `POST /session` session's sealed backend token.
pub const SESSION_GET: &str = "SELECT access_token FROM sessions WHERE token_hash = $1";

/// Keeps a page session.
pub const PAGE_SESSION_PUT: &str =
    "INSERT INTO page_sessions (id_hash, sealed_token, username, csrf, expires_at, sealed_refresh_token, \
    token_expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (id_hash) DO UPDATE SET \
    sealed_token = excluded.sealed_token, username = excluded.username, csrf = excluded.csrf, \
    expires_at = excluded.expires_at, sealed_refresh_token = excluded.sealed_refresh_token, \
    token_expires_at = excluded.token_expires_at";

/// A live page session: `$1` the hash of its cookie, `$2` now.
pub const PAGE_SESSION_GET: &str =
    "SELECT sealed_token, username, csrf, expires_at, sealed_refresh_token, token_expires_at FROM page_sessions \
    WHERE id_hash = $1 AND expires_at > $2";

/// Replaces a session's tokens after a refresh, only if `$5` is still its refresh token (so that of two
/// refreshes of one session, on any replica, one wins), ending the claim on the refresh: `$1` id hash, `$2` token,
/// `$3` refresh token, `$4` expiry.
pub const PAGE_SESSION_REFRESHED: &str =
    "UPDATE page_sessions SET sealed_token = $2, sealed_refresh_token = $3, \
    token_expires_at = $4, refresh_claimed_until = NULL WHERE id_hash = $1 AND sealed_refresh_token = $5";

/// Claims the refresh of a session until `$4`, if `$2` is still its refresh token and no claim holds at `$3`.
pub const PAGE_SESSION_CLAIM_REFRESH: &str = "UPDATE page_sessions SET refresh_claimed_until = $4 \
    WHERE id_hash = $1 AND sealed_refresh_token = $2 \
    AND (refresh_claimed_until IS NULL OR refresh_claimed_until <= $3)";

/// Gives up the claim on a session's refresh (`$2` its refresh token), when the refresh could not be made.
pub const PAGE_SESSION_RELEASE_REFRESH: &str =
    "UPDATE page_sessions SET refresh_claimed_until = NULL WHERE id_hash = $1 AND sealed_refresh_token = $2";

/// Keeps a pending OAuth sign-in: `$1` the hash of its `state`, the sealed PKCE verifier, the return-to path and
/// the expiry; only while fewer than `$6` are unexpired at `$5`.
pub const OAUTH_STATE_PUT: &str =
    "INSERT INTO oauth_states (state_hash, sealed_verifier, return_to, expires_at) SELECT $1, $2, $3, $4 \
    WHERE (SELECT COUNT(*) FROM oauth_states WHERE expires_at > $5) < $6";

/// Takes (deletes and answers) a pending OAuth sign-in by the hash of its `state`, unless expired by `$2`.
pub const OAUTH_STATE_TAKE: &str = "DELETE FROM oauth_states WHERE state_hash = $1 AND expires_at > $2 \
    RETURNING sealed_verifier, return_to, expires_at";

/// Removes the pending OAuth sign-ins expired by `$1`.
pub const OAUTH_STATES_SWEEP: &str = "DELETE FROM oauth_states WHERE expires_at <= $1";

/// Ends a page session whose refresh was refused, only if `$2` is still its refresh token (a refresh that another
/// replica made meanwhile keeps the session).
pub const PAGE_SESSION_END_REFUSED: &str =
    "DELETE FROM page_sessions WHERE id_hash = $1 AND sealed_refresh_token = $2";

/// Ends a page session.
pub const PAGE_SESSION_DELETE: &str = "DELETE FROM page_sessions WHERE id_hash = $1";

/// Removes the page sessions expired by `$1`.
pub const PAGE_SESSIONS_SWEEP: &str = "DELETE FROM page_sessions WHERE expires_at <= $1";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_statements_become_sqlites_numbered_placeholders() {
        assert_eq!(
            sqlite(ALERT_SET_INCIDENT),
            "UPDATE alerts SET incident_iid = ?2 WHERE id = ?1"
        );
        for statement in [INTEGRATION_INSERT, SETTINGS_PUT, PAGE_SESSION_PUT, ID_RECORD] {
            assert!(!sqlite(statement).contains('$'), "{statement}");
        }
    }
}

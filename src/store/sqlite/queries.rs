//! The SQLite store's operations: [`Store`] over the writer thread (writes, in its group commits) and the pool of
//! readers (reads). The alert data's statements are in `alerts.rs`, V3 usage's in `usage.rs`.

use std::sync::Arc;

use rusqlite::OptionalExtension;

use super::{alerts, room_to_write, usage, SqliteStore};
use crate::store::commits::CommitMetrics;
use crate::store::rows;
use crate::store::{
    AlertEvent, AlertPage, AlertQuery, AlertRecord, AlertSettings, EventOutcome, IdKind, IdRecord,
    IntegrationName, IntegrationRecord, OAuthStateRecord, OutboxFailure, OutboxItem, OutboxState,
    PageSessionRecord, Store, StoreError, StoreFuture, UsageDelta, UsageRow,
};

impl Store for SqliteStore {
    fn usage_add(&self, deltas: Vec<UsageDelta>, max_clients: usize) -> StoreFuture<'_, ()> {
        Box::pin(self.write(move |connection| usage::add(connection, &deltas, max_clients)))
    }

    fn usage(&self) -> StoreFuture<'_, Vec<UsageRow>> {
        Box::pin(self.read(usage::all))
    }

    fn integrations(&self) -> StoreFuture<'_, Vec<IntegrationRecord>> {
        Box::pin(self.read(alerts::integrations_all))
    }

    fn integration_named(&self, id: u64) -> StoreFuture<'_, Option<IntegrationName>> {
        Box::pin(self.read(move |connection| alerts::integration_named(connection, id)))
    }

    fn integration_insert(&self, record: IntegrationRecord) -> StoreFuture<'_, IntegrationRecord> {
        Box::pin(self.write(move |connection| alerts::integration_insert(connection, &record)))
    }

    fn integration_update(&self, record: IntegrationRecord) -> StoreFuture<'_, ()> {
        Box::pin(self.write(move |connection| alerts::integration_update(connection, &record).map(drop)))
    }

    fn integration_delete(&self, id: u64) -> StoreFuture<'_, ()> {
        Box::pin(self.write(move |connection| alerts::integration_delete(connection, id).map(drop)))
    }

    fn integration_confirmation(&self, id: u64, address: Option<String>) -> StoreFuture<'_, ()> {
        Box::pin(self.write(move |connection| {
            alerts::integration_confirmation(connection, id, address.as_deref()).map(drop)
        }))
    }

    fn alert_event(&self, event: AlertEvent) -> StoreFuture<'_, EventOutcome> {
        Box::pin(self.write(move |connection| alerts::process_event(connection, &event)))
    }

    fn alert(&self, project_id: u64, iid: u64) -> StoreFuture<'_, Option<AlertRecord>> {
        Box::pin(self.read(move |connection| alerts::alert_get(connection, project_id, iid)))
    }

    fn alerts(&self, query: AlertQuery) -> StoreFuture<'_, AlertPage> {
        Box::pin(self.read(move |connection| alerts::alerts_list(connection, &query)))
    }

    fn alerts_by_environment(&self, project_id: u64) -> StoreFuture<'_, Vec<AlertRecord>> {
        Box::pin(self.read(move |connection| alerts::open_by_environment(connection, project_id)))
    }

    fn alert_status(
        &self,
        project_id: u64,
        iid: u64,
        status: String,
        now: String,
    ) -> StoreFuture<'_, Option<AlertRecord>> {
        Box::pin(
            self.write(move |connection| {
                alerts::alert_set_status(connection, project_id, iid, &status, &now)
            }),
        )
    }

    fn alert_settings(&self, project_id: u64) -> StoreFuture<'_, AlertSettings> {
        Box::pin(self.read(move |connection| alerts::settings_get(connection, project_id)))
    }

    fn alert_settings_put(&self, project_id: u64, settings: AlertSettings) -> StoreFuture<'_, ()> {
        Box::pin(self.write(move |connection| alerts::settings_put(connection, project_id, settings)))
    }

    fn outbox_due(
        &self,
        now: String,
        lease: std::time::Duration,
        limit: u32,
    ) -> StoreFuture<'_, Vec<OutboxItem>> {
        Box::pin(async move {
            let lease_until = crate::store::outbox_lease_end(&now, lease)?;
            self.write(move |connection| alerts::outbox_claim(connection, &now, &lease_until, limit))
                .await
        })
    }

    fn outbox_done(
        &self,
        id: u64,
        claim: String,
        alert_id: u64,
        incident_iid: Option<u64>,
        now: String,
    ) -> StoreFuture<'_, bool> {
        Box::pin(self.write(move |connection| {
            alerts::outbox_done(connection, id, &claim, alert_id, incident_iid, &now)
        }))
    }

    fn outbox_sweep(&self, done_before: String, limit: u32) -> StoreFuture<'_, u64> {
        Box::pin(self.write(move |connection| alerts::outbox_sweep(connection, &done_before, limit)))
    }

    fn outbox_retry(
        &self,
        id: u64,
        claim: String,
        next_attempt_at: String,
        error: String,
    ) -> StoreFuture<'_, bool> {
        Box::pin(
            self.write(move |connection| {
                alerts::outbox_retry(connection, id, &claim, &next_attempt_at, &error)
            }),
        )
    }

    fn outbox_failures(&self, integration_id: u64, limit: u32) -> StoreFuture<'_, Vec<OutboxFailure>> {
        Box::pin(self.read(move |connection| alerts::outbox_failures(connection, integration_id, limit)))
    }

    fn outbox_of(&self, alert_id: u64) -> StoreFuture<'_, Vec<OutboxState>> {
        Box::pin(self.read(move |connection| alerts::outbox_of(connection, alert_id)))
    }

    fn session_put(
        &self,
        token_hash: String,
        access_token: String,
        user_id: Option<u64>,
    ) -> StoreFuture<'_, ()> {
        self.put_session(token_hash, access_token, user_id)
    }

    fn session_get(&self, token_hash: String) -> StoreFuture<'_, Option<String>> {
        self.get_session(token_hash)
    }

    fn page_session_put(&self, session: PageSessionRecord) -> StoreFuture<'_, ()> {
        Box::pin(self.write(move |connection| {
            connection.execute(
                &rows::sqlite(rows::PAGE_SESSION_PUT),
                rusqlite::params![
                    session.id_hash,
                    session.sealed_token,
                    session.username,
                    session.csrf,
                    session.expires_at,
                    session.sealed_refresh_token,
                    session.token_expires_at
                ],
            )?;
            Ok(())
        }))
    }

    fn page_session_get(&self, id_hash: String, now: String) -> StoreFuture<'_, Option<PageSessionRecord>> {
        Box::pin(self.read(move |connection| {
            connection
                .query_row(
                    &rows::sqlite(rows::PAGE_SESSION_GET),
                    rusqlite::params![id_hash, now],
                    |row| rows::page_session(row, id_hash.clone()),
                )
                .optional()
        }))
    }

    fn page_session_refreshed(
        &self,
        id_hash: String,
        old_sealed_refresh_token: String,
        sealed_token: String,
        sealed_refresh_token: String,
        token_expires_at: String,
    ) -> StoreFuture<'_, bool> {
        Box::pin(self.write(move |connection| {
            let changed = connection.execute(
                &rows::sqlite(rows::PAGE_SESSION_REFRESHED),
                rusqlite::params![
                    id_hash,
                    sealed_token,
                    sealed_refresh_token,
                    token_expires_at,
                    old_sealed_refresh_token
                ],
            )?;
            Ok(changed == 1)
        }))
    }

    fn page_session_claim_refresh(
        &self,
        id_hash: String,
        sealed_refresh_token: String,
        now: String,
        until: String,
    ) -> StoreFuture<'_, bool> {
        Box::pin(self.write(move |connection| {
            let changed = connection.execute(
                &rows::sqlite(rows::PAGE_SESSION_CLAIM_REFRESH),
                rusqlite::params![id_hash, sealed_refresh_token, now, until],
            )?;
            Ok(changed == 1)
        }))
    }

    fn page_session_release_refresh(
        &self,
        id_hash: String,
        sealed_refresh_token: String,
    ) -> StoreFuture<'_, ()> {
        Box::pin(self.write(move |connection| {
            connection.execute(
                &rows::sqlite(rows::PAGE_SESSION_RELEASE_REFRESH),
                rusqlite::params![id_hash, sealed_refresh_token],
            )?;
            Ok(())
        }))
    }

    fn oauth_state_put(&self, record: OAuthStateRecord, now: String, limit: u64) -> StoreFuture<'_, bool> {
        Box::pin(self.write(move |connection| {
            connection.execute(&rows::sqlite(rows::OAUTH_STATES_SWEEP), [&now])?;
            let kept = connection.execute(
                &rows::sqlite(rows::OAUTH_STATE_PUT),
                rusqlite::params![
                    record.state_hash,
                    record.sealed_verifier,
                    record.return_to,
                    record.expires_at,
                    now,
                    i64::try_from(limit).unwrap_or(i64::MAX)
                ],
            )?;
            Ok(kept == 1)
        }))
    }

    fn oauth_state_take(&self, state_hash: String, now: String) -> StoreFuture<'_, Option<OAuthStateRecord>> {
        Box::pin(self.write(move |connection| {
            connection
                .query_row(
                    &rows::sqlite(rows::OAUTH_STATE_TAKE),
                    rusqlite::params![state_hash, now],
                    |row| rows::oauth_state(row, state_hash.clone()),
                )
                .optional()
        }))
    }

    fn page_session_end_refused(
        &self,
        id_hash: String,
        sealed_refresh_token: String,
    ) -> StoreFuture<'_, bool> {
        Box::pin(self.write(move |connection| {
            let removed = connection.execute(
                &rows::sqlite(rows::PAGE_SESSION_END_REFUSED),
                rusqlite::params![id_hash, sealed_refresh_token],
            )?;
            Ok(removed == 1)
        }))
    }

    fn page_session_delete(&self, id_hash: String) -> StoreFuture<'_, ()> {
        Box::pin(self.write(move |connection| {
            connection.execute(&rows::sqlite(rows::PAGE_SESSION_DELETE), [&id_hash])?;
            Ok(())
        }))
    }

    fn page_sessions_sweep(&self, now: String) -> StoreFuture<'_, u64> {
        Box::pin(self.write(move |connection| {
            let removed = connection.execute(&rows::sqlite(rows::PAGE_SESSIONS_SWEEP), [&now])?;
            Ok(removed as u64)
        }))
    }

    fn ping(&self) -> StoreFuture<'_, ()> {
        let (path, min_free_bytes) = (Arc::clone(&self.path), self.min_free_bytes);
        Box::pin(async move {
            tokio::task::spawn_blocking(move || room_to_write(&path, min_free_bytes))
                .await
                .map_err(|_| StoreError::Unavailable("the free-space check did not finish".to_owned()))?
                .map_err(StoreError::Unavailable)?;
            // Then a job on the writer, in its next commit: a writer that is stuck, or a commit that fails, fails
            // readiness too. (The space check runs outside it: a failing job would roll back the alerts it shares
            // a batch with, to run them again one by one.)
            self.write(|_| Ok(())).await
        })
    }

    fn observe_commits(&self, metrics: CommitMetrics) {
        self.commits.attach(metrics);
    }

    fn id_lookup(&self, kind: IdKind, id: u64) -> StoreFuture<'_, Option<IdRecord>> {
        Box::pin(self.read(move |connection| {
            connection
                .query_row(
                    &rows::sqlite(rows::ID_LOOKUP),
                    rusqlite::params![kind.as_str(), id],
                    |row| {
                        Ok(IdRecord {
                            kind,
                            id,
                            project_id: row.get(0)?,
                            iid: row.get(1)?,
                        })
                    },
                )
                .optional()
        }))
    }

    fn id_record(&self, records: Vec<IdRecord>) -> StoreFuture<'_, ()> {
        Box::pin(self.write(move |connection| {
            let mut statement = connection.prepare_cached(&rows::sqlite(rows::ID_RECORD))?;
            for record in &records {
                statement.execute(rusqlite::params![
                    record.kind.as_str(),
                    record.id,
                    record.project_id,
                    record.iid
                ])?;
            }
            Ok(())
        }))
    }
}

impl SqliteStore {
    fn put_session(
        &self,
        token_hash: String,
        access_token: String,
        user_id: Option<u64>,
    ) -> StoreFuture<'_, ()> {
        Box::pin(self.write(move |connection| {
            connection.execute(
                &rows::sqlite(rows::SESSION_PUT),
                rusqlite::params![token_hash, access_token, user_id],
            )?;
            Ok(())
        }))
    }

    fn get_session(&self, token_hash: String) -> StoreFuture<'_, Option<String>> {
        Box::pin(self.read(move |connection| {
            connection
                .query_row(&rows::sqlite(rows::SESSION_GET), [token_hash], |row| row.get(0))
                .optional()
        }))
    }
}

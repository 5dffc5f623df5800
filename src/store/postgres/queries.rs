//! The PostgreSQL store's operations: [`Store`] over pooled connections, one statement or transaction each
//! (incoming alerts excepted: they go to the writer, `writer.rs`).

use deadpool_postgres::GenericClient;
use tokio::sync::oneshot;
use tokio_postgres::Row;

use super::listen::with_notification;
use super::{int, uint, EventJob, PostgresStore};
use crate::store::rows::{self, ALERT_COLUMNS, OUTBOX_STATE_COLUMNS, USAGE_COLUMNS};
use crate::store::{
    AlertEvent, AlertPage, AlertQuery, AlertRecord, AlertSettings, EventOutcome, IdKind, IdRecord,
    IntegrationName, IntegrationRecord, OAuthStateRecord, OutboxFailure, OutboxItem, OutboxState,
    PageSessionRecord, Store, StoreError, StoreFuture, UsageDelta, UsageRow,
};

fn collect<T>(
    rows: Vec<Row>,
    mapper: fn(&Row) -> Result<T, tokio_postgres::Error>,
) -> Result<Vec<T>, StoreError> {
    rows.iter()
        .map(|row| mapper(row).map_err(StoreError::from))
        .collect()
}

async fn settings_get<C: GenericClient>(client: &C, project_id: u64) -> Result<AlertSettings, StoreError> {
    let row = client.query_opt(rows::SETTINGS_GET, &[&int(project_id)]).await?;
    Ok(match row {
        Some(row) => rows::settings(&row)?,
        None => AlertSettings::default(),
    })
}

async fn enqueue<C: GenericClient>(
    client: &C,
    kind: &str,
    project_id: u64,
    alert_id: u64,
    now: &str,
) -> Result<(), StoreError> {
    client
        .execute(
            rows::OUTBOX_ENQUEUE,
            &[&kind, &int(project_id), &int(alert_id), &now],
        )
        .await?;
    Ok(())
}

async fn alert_by_id<C: GenericClient>(client: &C, id: u64) -> Result<AlertRecord, StoreError> {
    let row = client
        .query_one(
            &format!("SELECT {ALERT_COLUMNS} FROM alerts WHERE id = $1"),
            &[&int(id)],
        )
        .await?;
    Ok(rows::alert(&row)?)
}

/// A page of a project's alerts: the statements the SQLite store runs, with text compared by bytes as SQLite does.
async fn alerts_list<C: GenericClient>(client: &C, query: &AlertQuery) -> Result<AlertPage, StoreError> {
    let statements = rows::alert_list(query, " COLLATE \"C\"");
    let project_id = int(query.project_id);
    let mut values: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = vec![&project_id];
    values.extend(
        statements
            .texts
            .iter()
            .map(|text| text as &(dyn tokio_postgres::types::ToSql + Sync)),
    );
    let counts = client
        .query(&statements.counts, &values)
        .await?
        .iter()
        .map(rows::status_count)
        .collect::<Result<_, _>>()?;
    let total = uint(client.query_one(&statements.total, &values).await?.try_get(0)?);
    let alerts = collect(client.query(&statements.page, &values).await?, rows::alert)?;
    Ok(AlertPage {
        alerts,
        total,
        counts,
    })
}

impl Store for PostgresStore {
    fn observe_commits(&self, metrics: crate::store::commits::CommitMetrics) {
        self.commits.attach(metrics);
    }

    fn integration_changes(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        Some(self.integration_changes.clone())
    }

    fn replica_heartbeat(&self, replica: String) -> StoreFuture<'_, u64> {
        self.bounded(async move {
            let client = self.client().await?;
            let timeout = crate::store::REPLICA_TIMEOUT.as_secs_f64();
            client
                .execute(
                    "INSERT INTO replicas (id, last_seen) VALUES ($1, now())
                     ON CONFLICT (id) DO UPDATE SET last_seen = now()",
                    &[&replica],
                )
                .await?;
            // Rows of replicas gone for a day are removed; the count is of those heard from lately.
            client
                .execute(
                    "DELETE FROM replicas WHERE last_seen < now() - interval '1 day'",
                    &[],
                )
                .await?;
            let live: i64 = client
                .query_one(
                    "SELECT count(*) FROM replicas WHERE last_seen > now() - make_interval(secs => $1)",
                    &[&timeout],
                )
                .await?
                .try_get(0)?;
            Ok(uint(live).max(1))
        })
    }

    fn ping(&self) -> StoreFuture<'_, ()> {
        self.bounded(async move {
            // A server that answers but cannot write (a standby after a failover) cannot take alerts either.
            let read_only: String = self
                .client()
                .await?
                .query_one("SELECT current_setting('transaction_read_only')", &[])
                .await?
                .try_get(0)?;
            if read_only == "on" {
                return Err(StoreError::Unavailable(
                    "the database is read-only (a standby?)".to_owned(),
                ));
            }
            Ok(())
        })
    }

    fn id_lookup(&self, kind: IdKind, id: u64) -> StoreFuture<'_, Option<IdRecord>> {
        self.bounded(async move {
            let row = self
                .client()
                .await?
                .query_opt(rows::ID_LOOKUP, &[&kind.as_str(), &int(id)])
                .await?;
            Ok(match row {
                Some(row) => Some(IdRecord {
                    kind,
                    id,
                    project_id: uint(row.try_get(0)?),
                    iid: uint(row.try_get(1)?),
                }),
                None => None,
            })
        })
    }

    fn id_record(&self, records: Vec<IdRecord>) -> StoreFuture<'_, ()> {
        self.bounded(async move {
            let client = self.client().await?;
            let statement = client.prepare_cached(rows::ID_RECORD).await?;
            // Sent together: the client pipelines them on its connection.
            let writes = records.iter().map(|record| {
                let (id, project_id, iid) = (int(record.id), int(record.project_id), int(record.iid));
                let statement = &statement;
                let client = &client;
                async move {
                    client
                        .execute(statement, &[&record.kind.as_str(), &id, &project_id, &iid])
                        .await
                }
            });
            for outcome in futures_util::future::join_all(writes).await {
                outcome?;
            }
            Ok(())
        })
    }

    fn session_put(
        &self,
        token_hash: String,
        access_token: String,
        user_id: Option<u64>,
    ) -> StoreFuture<'_, ()> {
        self.bounded(async move {
            self.client()
                .await?
                .execute(
                    rows::SESSION_PUT,
                    &[&token_hash, &access_token, &user_id.map(int)],
                )
                .await?;
            Ok(())
        })
    }

    fn session_get(&self, token_hash: String) -> StoreFuture<'_, Option<String>> {
        self.bounded(async move {
            let row = self
                .client()
                .await?
                .query_opt(rows::SESSION_GET, &[&token_hash])
                .await?;
            Ok(row.map(|row| row.try_get(0)).transpose()?)
        })
    }

    fn page_session_put(&self, session: PageSessionRecord) -> StoreFuture<'_, ()> {
        self.bounded(async move {
            self.client()
                .await?
                .execute(
                    rows::PAGE_SESSION_PUT,
                    &[
                        &session.id_hash,
                        &session.sealed_token,
                        &session.username,
                        &session.csrf,
                        &session.expires_at,
                        &session.sealed_refresh_token,
                        &session.token_expires_at,
                    ],
                )
                .await?;
            Ok(())
        })
    }

    fn page_session_get(&self, id_hash: String, now: String) -> StoreFuture<'_, Option<PageSessionRecord>> {
        self.bounded(async move {
            let row = self
                .client()
                .await?
                .query_opt(rows::PAGE_SESSION_GET, &[&id_hash, &now])
                .await?;
            Ok(row.map(|row| rows::page_session(&row, id_hash)).transpose()?)
        })
    }

    fn page_session_refreshed(
        &self,
        id_hash: String,
        old_sealed_refresh_token: String,
        sealed_token: String,
        sealed_refresh_token: String,
        token_expires_at: String,
    ) -> StoreFuture<'_, bool> {
        self.bounded(async move {
            let changed = self
                .client()
                .await?
                .execute(
                    rows::PAGE_SESSION_REFRESHED,
                    &[
                        &id_hash,
                        &sealed_token,
                        &sealed_refresh_token,
                        &token_expires_at,
                        &old_sealed_refresh_token,
                    ],
                )
                .await?;
            Ok(changed == 1)
        })
    }

    fn page_session_claim_refresh(
        &self,
        id_hash: String,
        sealed_refresh_token: String,
        now: String,
        until: String,
    ) -> StoreFuture<'_, bool> {
        self.bounded(async move {
            let changed = self
                .client()
                .await?
                .execute(
                    rows::PAGE_SESSION_CLAIM_REFRESH,
                    &[&id_hash, &sealed_refresh_token, &now, &until],
                )
                .await?;
            Ok(changed == 1)
        })
    }

    fn page_session_release_refresh(
        &self,
        id_hash: String,
        sealed_refresh_token: String,
    ) -> StoreFuture<'_, ()> {
        self.bounded(async move {
            self.client()
                .await?
                .execute(
                    rows::PAGE_SESSION_RELEASE_REFRESH,
                    &[&id_hash, &sealed_refresh_token],
                )
                .await?;
            Ok(())
        })
    }

    fn oauth_state_put(&self, record: OAuthStateRecord, now: String, limit: u64) -> StoreFuture<'_, bool> {
        self.bounded(async move {
            let client = self.client().await?;
            client.execute(rows::OAUTH_STATES_SWEEP, &[&now]).await?;
            // Sign-ins started at the same instant on several replicas may each see room for one more: the cap
            // can be passed by a few, which is all it needs to bound the table.
            let kept = client
                .execute(
                    rows::OAUTH_STATE_PUT,
                    &[
                        &record.state_hash,
                        &record.sealed_verifier,
                        &record.return_to,
                        &record.expires_at,
                        &now,
                        &i64::try_from(limit).unwrap_or(i64::MAX),
                    ],
                )
                .await?;
            Ok(kept == 1)
        })
    }

    fn oauth_state_take(&self, state_hash: String, now: String) -> StoreFuture<'_, Option<OAuthStateRecord>> {
        self.bounded(async move {
            let row = self
                .client()
                .await?
                .query_opt(rows::OAUTH_STATE_TAKE, &[&state_hash, &now])
                .await?;
            Ok(row.map(|row| rows::oauth_state(&row, state_hash)).transpose()?)
        })
    }

    fn page_session_end_refused(
        &self,
        id_hash: String,
        sealed_refresh_token: String,
    ) -> StoreFuture<'_, bool> {
        self.bounded(async move {
            let removed = self
                .client()
                .await?
                .execute(rows::PAGE_SESSION_END_REFUSED, &[&id_hash, &sealed_refresh_token])
                .await?;
            Ok(removed == 1)
        })
    }

    fn page_session_delete(&self, id_hash: String) -> StoreFuture<'_, ()> {
        self.bounded(async move {
            self.client()
                .await?
                .execute(rows::PAGE_SESSION_DELETE, &[&id_hash])
                .await?;
            Ok(())
        })
    }

    fn page_sessions_sweep(&self, now: String) -> StoreFuture<'_, u64> {
        self.bounded(async move {
            let removed = self
                .client()
                .await?
                .execute(rows::PAGE_SESSIONS_SWEEP, &[&now])
                .await?;
            Ok(removed)
        })
    }

    fn integrations(&self) -> StoreFuture<'_, Vec<IntegrationRecord>> {
        self.bounded(async move {
            let rows = self.client().await?.query(rows::INTEGRATIONS_ALL, &[]).await?;
            collect(rows, rows::integration)
        })
    }

    fn integration_named(&self, id: u64) -> StoreFuture<'_, Option<IntegrationName>> {
        self.bounded(async move {
            let row = self
                .client()
                .await?
                .query_opt(rows::INTEGRATION_NAMED, &[&int(id)])
                .await?;
            Ok(row.map(|row| rows::integration_name(&row)).transpose()?)
        })
    }

    fn integration_insert(&self, record: IntegrationRecord) -> StoreFuture<'_, IntegrationRecord> {
        self.bounded(with_notification(self, move |client| {
            Box::pin(async move {
                let row = client
                    .query_one(
                        rows::INTEGRATION_INSERT,
                        &[
                            &int(record.project_id),
                            &record.project_path,
                            &record.kind,
                            &record.name,
                            &record.active,
                            &record.endpoint_identifier,
                            &record.token_nonce,
                            &record.token_ciphertext,
                            &record.api_url,
                            &record.payload_example,
                            &record.payload_attribute_mapping,
                            &record.created_at,
                            &record.updated_at,
                            &record.one_per_project,
                            &record.payload_format,
                            &record.pending_confirmation,
                        ],
                    )
                    .await?;
                Ok(IntegrationRecord {
                    id: uint(row.try_get(0)?),
                    ..record
                })
            })
        }))
    }

    fn integration_update(&self, record: IntegrationRecord) -> StoreFuture<'_, ()> {
        self.bounded(with_notification(self, move |client| {
            Box::pin(async move {
                client
                    .execute(
                        rows::INTEGRATION_UPDATE,
                        &[
                            &int(record.id),
                            &record.name,
                            &record.active,
                            &record.token_nonce,
                            &record.token_ciphertext,
                            &record.api_url,
                            &record.payload_example,
                            &record.payload_attribute_mapping,
                            &record.updated_at,
                            &record.project_path,
                            &record.payload_format,
                            &record.pending_confirmation,
                        ],
                    )
                    .await?;
                Ok(())
            })
        }))
    }

    fn integration_confirmation(&self, id: u64, address: Option<String>) -> StoreFuture<'_, ()> {
        self.bounded(with_notification(self, move |client| {
            Box::pin(async move {
                client
                    .execute(rows::INTEGRATION_CONFIRMATION, &[&int(id), &address])
                    .await?;
                Ok(())
            })
        }))
    }

    fn integration_delete(&self, id: u64) -> StoreFuture<'_, ()> {
        self.bounded(with_notification(self, move |client| {
            Box::pin(async move {
                client.execute(rows::INTEGRATION_DELETE, &[&int(id)]).await?;
                Ok(())
            })
        }))
    }

    fn alert_event(&self, event: AlertEvent) -> StoreFuture<'_, EventOutcome> {
        Box::pin(async move {
            let (reply, answer) = oneshot::channel();
            self.writer(&event)
                .send(EventJob { event, reply })
                .await
                .map_err(|_| StoreError::Unavailable("the alert writer has stopped".to_owned()))?;
            answer
                .await
                .map_err(|_| StoreError::Unavailable("the alert writer has stopped".to_owned()))?
        })
    }

    fn alert(&self, project_id: u64, iid: u64) -> StoreFuture<'_, Option<AlertRecord>> {
        self.bounded(async move {
            let row = self
                .client()
                .await?
                .query_opt(
                    &format!("SELECT {ALERT_COLUMNS} FROM alerts WHERE project_id = $1 AND iid = $2"),
                    &[&int(project_id), &int(iid)],
                )
                .await?;
            Ok(row.map(|row| rows::alert(&row)).transpose()?)
        })
    }

    fn alerts(&self, query: AlertQuery) -> StoreFuture<'_, AlertPage> {
        self.bounded(async move { alerts_list(&self.client().await?, &query).await })
    }

    fn alerts_by_environment(&self, project_id: u64) -> StoreFuture<'_, Vec<AlertRecord>> {
        self.bounded(async move {
            let rows = self
                .client()
                .await?
                .query(
                    &format!(
                        "SELECT {ALERT_COLUMNS} FROM alerts
                         WHERE project_id = $1 AND status <> 'resolved' AND environment IS NOT NULL
                         ORDER BY environment COLLATE \"C\", CASE severity WHEN 'critical' THEN 0 WHEN 'high' THEN 1
                            WHEN 'medium' THEN 2 WHEN 'low' THEN 3 WHEN 'info' THEN 4 ELSE 5 END,
                            started_at COLLATE \"C\" DESC"
                    ),
                    &[&int(project_id)],
                )
                .await?;
            collect(rows, rows::alert)
        })
    }

    fn alert_status(
        &self,
        project_id: u64,
        iid: u64,
        status: String,
        now: String,
    ) -> StoreFuture<'_, Option<AlertRecord>> {
        self.bounded(async move {
            let mut client = self.client().await?;
            let transaction = client.transaction().await?;
            let row = transaction
                .query_opt(
                    &format!(
                        "SELECT {ALERT_COLUMNS} FROM alerts WHERE project_id = $1 AND iid = $2 FOR UPDATE"
                    ),
                    &[&int(project_id), &int(iid)],
                )
                .await?;
            let Some(alert) = row.map(|row| rows::alert(&row)).transpose()? else {
                return Ok(None);
            };
            let ended_at =
                (status == "resolved").then(|| alert.ended_at.clone().unwrap_or_else(|| now.clone()));
            // Reopening an alert while a newer one of its fingerprint is open breaks `alerts_one_open`: a conflict.
            let updated = transaction
                .query_one(
                    &format!(
                        "UPDATE alerts SET status = $2, ended_at = $3, updated_at = $4 WHERE id = $1
                         RETURNING {ALERT_COLUMNS}"
                    ),
                    &[&int(alert.id), &status, &ended_at, &now],
                )
                .await?;
            if status == "resolved"
                && alert.status != "resolved"
                && alert.incident_iid.is_some()
                && settings_get(&transaction, project_id).await?.auto_close_incident
            {
                enqueue(&transaction, "close_incident", alert.project_id, alert.id, &now).await?;
            }
            let updated = rows::alert(&updated)?;
            transaction.commit().await?;
            Ok(Some(updated))
        })
    }

    fn alert_settings(&self, project_id: u64) -> StoreFuture<'_, AlertSettings> {
        self.bounded(async move { settings_get(&self.client().await?, project_id).await })
    }

    fn alert_settings_put(&self, project_id: u64, settings: AlertSettings) -> StoreFuture<'_, ()> {
        self.bounded(async move {
            self.client()
                .await?
                .execute(
                    rows::SETTINGS_PUT,
                    &[
                        &int(project_id),
                        &settings.create_incident,
                        &settings.auto_close_incident,
                    ],
                )
                .await?;
            Ok(())
        })
    }

    /// Rows another replica is claiming are skipped (`SKIP LOCKED`).
    fn outbox_due(
        &self,
        now: String,
        lease: std::time::Duration,
        limit: u32,
    ) -> StoreFuture<'_, Vec<OutboxItem>> {
        self.bounded(async move {
            let lease_until = crate::store::outbox_lease_end(&now, lease)?;
            let mut client = self.client().await?;
            let transaction = client.transaction().await?;
            let rows = transaction
                .query(
                    "UPDATE outbox SET next_attempt_at = $3 WHERE id IN (
                        SELECT id FROM outbox WHERE done_at IS NULL AND next_attempt_at <= $1
                        ORDER BY next_attempt_at, id LIMIT $2 FOR UPDATE SKIP LOCKED)
                     RETURNING id, kind, attempts, alert_id",
                    &[&now, &i64::from(limit), &lease_until],
                )
                .await?;
            let mut items = Vec::with_capacity(rows.len());
            for row in rows {
                items.push(OutboxItem {
                    id: uint(row.try_get(0)?),
                    kind: row.try_get(1)?,
                    attempts: uint(row.try_get(2)?),
                    alert: alert_by_id(&transaction, uint(row.try_get(3)?)).await?,
                    claim: lease_until.clone(),
                });
            }
            transaction.commit().await?;
            items.sort_by_key(|item| item.id);
            Ok(items)
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
        self.bounded(async move {
            let mut client = self.client().await?;
            let transaction = client.transaction().await?;
            let claimed = transaction
                .execute(rows::OUTBOX_DONE, &[&int(id), &now, &claim])
                .await?;
            if claimed == 0 {
                return Ok(false);
            }
            if let Some(iid) = incident_iid {
                transaction
                    .execute(rows::ALERT_SET_INCIDENT, &[&int(alert_id), &int(iid)])
                    .await?;
                // An alert resolved before its incident existed still gets the incident closed.
                let alert = alert_by_id(&transaction, alert_id).await?;
                if alert.status == "resolved"
                    && settings_get(&transaction, alert.project_id)
                        .await?
                        .auto_close_incident
                {
                    enqueue(&transaction, "close_incident", alert.project_id, alert.id, &now).await?;
                }
            }
            transaction.commit().await?;
            Ok(true)
        })
    }

    fn outbox_sweep(&self, done_before: String, limit: u32) -> StoreFuture<'_, u64> {
        self.bounded(async move {
            let client = self.client().await?;
            Ok(client
                .execute(rows::OUTBOX_SWEEP, &[&done_before, &i64::from(limit)])
                .await?)
        })
    }

    fn outbox_retry(
        &self,
        id: u64,
        claim: String,
        next_attempt_at: String,
        error: String,
    ) -> StoreFuture<'_, bool> {
        self.bounded(async move {
            let claimed = self
                .client()
                .await?
                .execute(rows::OUTBOX_RETRY, &[&int(id), &next_attempt_at, &error, &claim])
                .await?;
            Ok(claimed > 0)
        })
    }

    fn outbox_failures(&self, integration_id: u64, limit: u32) -> StoreFuture<'_, Vec<OutboxFailure>> {
        self.bounded(async move {
            let found = self
                .client()
                .await?
                .query(rows::OUTBOX_FAILURES, &[&int(integration_id), &i64::from(limit)])
                .await?;
            collect(found, rows::outbox_failure)
        })
    }

    fn outbox_of(&self, alert_id: u64) -> StoreFuture<'_, Vec<OutboxState>> {
        self.bounded(async move {
            let found = self
                .client()
                .await?
                .query(
                    &format!("SELECT {OUTBOX_STATE_COLUMNS} FROM outbox WHERE alert_id = $1 ORDER BY id"),
                    &[&int(alert_id)],
                )
                .await?;
            collect(found, rows::outbox_state)
        })
    }

    fn usage_add(&self, deltas: Vec<UsageDelta>, max_clients: usize) -> StoreFuture<'_, ()> {
        self.bounded(async move {
            let mut client = self.client().await?;
            let transaction = client.transaction().await?;
            let mut routes = std::collections::BTreeSet::new();
            // Counts add up across replicas: each adds its own deltas to the shared rows.
            for delta in &deltas {
                transaction
                    .execute(
                        "INSERT INTO v3_usage (route, since, client, user_agent, calls, errors, first_seen, last_seen)
                         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
                         ON CONFLICT (route, client, user_agent) DO UPDATE SET
                            calls = v3_usage.calls + EXCLUDED.calls, errors = v3_usage.errors + EXCLUDED.errors,
                            since = EXCLUDED.since,
                            first_seen = LEAST(v3_usage.first_seen, EXCLUDED.first_seen),
                            last_seen = GREATEST(v3_usage.last_seen, EXCLUDED.last_seen)",
                        &[
                            &delta.route,
                            &delta.since,
                            &delta.client,
                            &delta.user_agent,
                            &int(delta.calls),
                            &int(delta.errors),
                            &delta.first_seen,
                            &delta.last_seen,
                        ],
                    )
                    .await?;
                routes.insert(delta.route.clone());
            }
            for route in routes {
                fold_usage(&transaction, &route, max_clients).await?;
            }
            transaction.commit().await?;
            Ok(())
        })
    }

    fn usage(&self) -> StoreFuture<'_, Vec<UsageRow>> {
        self.bounded(async move {
            let found = self
                .client()
                .await?
                .query(
                    &format!("SELECT {USAGE_COLUMNS} FROM v3_usage ORDER BY route COLLATE \"C\", calls DESC"),
                    &[],
                )
                .await?;
            collect(found, rows::usage)
        })
    }
}

/// Folds a route's least recent clients into `others` until at most `max_clients` rows remain besides it.
async fn fold_usage<C: GenericClient>(client: &C, route: &str, max_clients: usize) -> Result<(), StoreError> {
    let others = crate::store::records::OTHERS;
    let count = uint(
        client
            .query_one(
                "SELECT COUNT(*) FROM v3_usage WHERE route = $1 AND NOT (client = $2 AND user_agent = '')",
                &[&route, &others],
            )
            .await?
            .try_get(0)?,
    );
    let max_clients = max_clients as u64;
    if count <= max_clients {
        return Ok(());
    }
    let folded = client
        .query(
            "DELETE FROM v3_usage WHERE (route, client, user_agent) IN (
                SELECT route, client, user_agent FROM v3_usage WHERE route = $1 AND NOT (client = $2 AND user_agent = '')
                ORDER BY last_seen ASC LIMIT $3)
             RETURNING calls, errors, first_seen, last_seen, since",
            &[&route, &others, &int(count - max_clients)],
        )
        .await?;
    for row in folded {
        let (calls, errors): (i64, i64) = (row.try_get(0)?, row.try_get(1)?);
        let (first_seen, last_seen, since): (String, String, String) =
            (row.try_get(2)?, row.try_get(3)?, row.try_get(4)?);
        client
            .execute(
                "INSERT INTO v3_usage (route, since, client, user_agent, calls, errors, first_seen, last_seen)
                 VALUES ($1, $2, $3, '', $4, $5, $6, $7)
                 ON CONFLICT (route, client, user_agent) DO UPDATE SET
                    calls = v3_usage.calls + EXCLUDED.calls, errors = v3_usage.errors + EXCLUDED.errors,
                    first_seen = LEAST(v3_usage.first_seen, EXCLUDED.first_seen),
                    last_seen = GREATEST(v3_usage.last_seen, EXCLUDED.last_seen)",
                &[&route, &since, &others, &calls, &errors, &first_seen, &last_seen],
            )
            .await?;
    }
    Ok(())
}

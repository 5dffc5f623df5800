//! Alert intake: monitoring tools post alerts to an integration's address; svcgate checks, normalises, groups,
//! resolves and stores them itself, and serves their management API.
//!
//! Modules: [`kinds`] (every kind of integration, listed once), [`integrations`] (kinds, addresses, the in-memory registry; tokens sealed by [`crate::util::secret`]),
//! [`intake`] (the receiving endpoint's checks in order), [`reception`] (how each format is received), [`form`] (a JSON payload posted as a form's field), [`lookup`] (request ids a sender looks up), [`ratelimit`], [`store_failures`] (their log). The alert model, pure: [`payload`] (the
//! body as JSON), [`generic`] with [`mapping`] and [`members`], [`prometheus`], and [`formats`] (senders' native
//! formats as data files), each into [`normalized`] alerts, grouped by [`fingerprint`]. [`apply`] (alerts into the store, where [`crate::store::lifecycle`] decides what
//! each does, and the answer), [`outbox`] (incidents through the backend), [`manage`] (the operations on integrations and alerts, typed, shared
//! by the API and the pages), [`api`] (the management JSON API around them).
//!
//! [`settings`] holds the intake's settings type, which the configuration fills; [`format_choices`] the payload
//! formats an integration may be given.
//!
//! May use: [`crate::util`], [`crate::http`], [`crate::store`], [`crate::telemetry`], [`crate::backend`]; not
//! [`crate::rewrite`], which shares its layer.

pub mod api;
pub mod apply;
pub mod fingerprint;
pub mod form;
pub mod format_choices;
pub mod formats;
pub mod generic;
pub mod intake;
pub mod integrations;
pub mod kinds;
pub mod lookup;
pub mod manage;
pub mod mapping;
pub mod members;
pub mod normalized;
pub mod outbox;
pub mod payload;
pub mod prometheus;
pub mod ratelimit;
pub mod reception;
pub mod settings;
pub mod store_failures;
#[cfg(test)]
mod test_support;

use std::sync::Arc;

use self::format_choices::{FormatChoices, DEFAULT_FORMAT};
use self::formats::Catalog;
use self::intake::Intake;
use self::integrations::{Integration, Registry};
use self::kinds::Kind;
use self::mapping::AttributeMapping;
use crate::alerts::settings::AlertConfig;
use crate::backend::access::AccessChecker;
use crate::backend::upstream::Upstream;
use crate::store::{IntegrationRecord, Store, StoreError, HEARTBEAT_INTERVAL};
use crate::telemetry::Metrics;
use crate::util::secret::{self, SecretBox, SecretError};

/// How often a replica sharing its store reloads every integration besides the store's change signals, so that
/// a missed signal is healed within this time.
const FULL_RELOAD_INTERVAL: std::time::Duration = std::time::Duration::from_secs(30);

/// For a store shared by replicas: reloads the integrations whenever the store signals a change (another replica
/// created, changed, re-keyed or deleted one) and every [`FULL_RELOAD_INTERVAL`]; says every
/// [`HEARTBEAT_INTERVAL`] that this replica is alive and shares the rate limits among the live ones. Stops with
/// the service.
fn watch_shared_store(service: &Arc<AlertService>) {
    let Some(mut changes) = service.store.integration_changes() else {
        return;
    };
    let replica = secret::random_hex(8).unwrap_or_else(|_| format!("pid-{}", std::process::id()));
    let service = Arc::downgrade(service);
    tokio::spawn(async move {
        let mut full_reload = tokio::time::interval(FULL_RELOAD_INTERVAL);
        full_reload.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut heartbeat = tokio::time::interval(HEARTBEAT_INTERVAL);
        heartbeat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            let reload = tokio::select! {
                changed = changes.changed() => if changed.is_err() { return } else { true },
                _ = full_reload.tick() => true,
                _ = heartbeat.tick() => false,
            };
            let Some(service) = service.upgrade() else {
                return;
            };
            if reload {
                if let Err(error) = service.reload_integrations().await {
                    tracing::warn!(%error, "reloading the alert integrations failed; the next change or reload retries");
                }
            } else {
                match service.store.replica_heartbeat(replica.clone()).await {
                    Ok(live) => service.intake.share_rate_among(live),
                    Err(error) => {
                        tracing::warn!(%error, "the replica heartbeat failed; the rate share stays as it was")
                    }
                }
            }
        }
    });
}

/// Why the alert service could not start.
#[derive(Debug, thiserror::Error)]
pub enum AlertSetupError {
    /// The token key could not be loaded.
    #[error("alert integration key: {0}")]
    Secret(#[from] SecretError),
    /// The integrations could not be read.
    #[error("alert integrations: {0}")]
    Store(#[from] StoreError),
}

/// Everything the alert routes share.
pub struct AlertService {
    /// Integrations by address and id, tokens decrypted.
    pub registry: Arc<Registry>,
    /// The store.
    pub store: Arc<dyn Store>,
    /// Seals and opens tokens.
    pub secret: Arc<SecretBox>,
    /// The receiving endpoint.
    pub intake: Intake,
    /// The caller's rights, as the backend says.
    pub access: AccessChecker,
    /// Tier and limits.
    pub config: AlertConfig,
    /// The backend's base URL, for links to incidents.
    pub backend_web_url: String,
    /// The payload formats a Generic or HTTP Endpoint integration may be given.
    pub formats: FormatChoices,
}

impl AlertService {
    /// Loads the key and every integration; `formats` are the payload formats integrations may be given.
    pub async fn start(
        store: Arc<dyn Store>,
        upstream: Arc<Upstream>,
        config: AlertConfig,
        secret: Arc<SecretBox>,
        backend_web_url: String,
        metrics: Arc<Metrics>,
        catalog: Arc<Catalog>,
    ) -> Result<Arc<Self>, AlertSetupError> {
        let registry = Arc::new(Registry::default());
        let records = store.integrations().await?;
        let formats = FormatChoices::from_catalog(&catalog);
        let service = AlertService {
            intake: Intake::new(
                Arc::clone(&registry),
                Arc::clone(&store),
                config.clone(),
                metrics,
                catalog,
            ),
            access: AccessChecker::new(upstream, config.access_cache_ttl, config.access_cache_entries),
            registry,
            store,
            secret,
            config,
            backend_web_url,
            formats,
        };
        service.load_integrations(records);
        let service = Arc::new(service);
        watch_shared_store(&service);
        Ok(service)
    }

    /// Brings the registry in step with `records` (every integration the store holds): changed ones are replaced,
    /// gone ones removed, unchanged ones left as they are (a sender never finds its integration missing midway).
    fn load_integrations(&self, records: Vec<IntegrationRecord>) {
        let kept: std::collections::HashSet<u64> = records.iter().map(|record| record.id).collect();
        for record in records {
            // A kind this build does not know (written by a newer replica, or kept after a rollback) receives
            // nothing here; read as another kind, it would take that kind's address from the real integration.
            if Kind::parse(&record.kind).is_none() {
                tracing::warn!(
                    integration = record.id,
                    kind = %record.kind,
                    "integration of a kind this build does not know; it stays inactive"
                );
                continue;
            }
            if self
                .registry
                .get(record.id)
                .is_some_and(|known| known.record == record)
            {
                continue;
            }
            match self.decrypt(record) {
                Ok(integration) => self.registry.put(integration),
                Err((id, error)) => {
                    tracing::error!(integration = id, %error, "integration token cannot be decrypted; it stays inactive")
                }
            }
        }
        for id in self.registry.ids() {
            if !kept.contains(&id) {
                self.registry.remove(id);
            }
        }
    }

    /// Reloads every integration from the store (another replica may have changed some).
    pub async fn reload_integrations(&self) -> Result<(), StoreError> {
        let records = self.store.integrations().await?;
        self.load_integrations(records);
        Ok(())
    }

    /// An integration from its record and clear token.
    pub fn to_integration(&self, record: IntegrationRecord, token: String) -> Integration {
        let kind = Kind::parse(&record.kind).unwrap_or(Kind::Generic);
        let mapping = record
            .payload_attribute_mapping
            .as_deref()
            .and_then(|text| serde_json::from_str::<serde_json::Value>(text).ok())
            .and_then(|value| AttributeMapping::from_json(&value).ok());
        Integration::new(record, kind, token, mapping)
    }

    fn decrypt(&self, record: IntegrationRecord) -> Result<Integration, (u64, SecretError)> {
        let token = self
            .secret
            .open(&record.token_nonce, &record.token_ciphertext)
            .map_err(|error| (record.id, error))?;
        Ok(self.to_integration(record, token))
    }

    /// Makes sure a project has an active Generic integration (the dev demo); answers its path and key.
    pub async fn ensure_demo(
        &self,
        project_id: u64,
        project_path: &str,
    ) -> Result<(String, String), AlertSetupError> {
        if let Some(existing) = self
            .registry
            .of_project(project_id)
            .into_iter()
            .find(|integration| integration.kind == Kind::Generic)
        {
            return Ok((existing.path().unwrap_or_default(), existing.token().to_owned()));
        }
        let token = secret::random_hex(16)?;
        let (nonce, ciphertext) = self.secret.seal(&token)?;
        let now = crate::util::time_format::format_time(time::OffsetDateTime::now_utc());
        let record = IntegrationRecord {
            id: 0,
            project_id,
            project_path: project_path.to_owned(),
            kind: Kind::Generic.as_str().to_owned(),
            name: Kind::Generic.label().to_owned(),
            active: true,
            endpoint_identifier: None,
            token_nonce: nonce,
            token_ciphertext: ciphertext,
            api_url: None,
            payload_example: None,
            payload_attribute_mapping: None,
            created_at: now.clone(),
            updated_at: now,
            one_per_project: Kind::Generic.one_per_project(),
            payload_format: DEFAULT_FORMAT.to_owned(),
            pending_confirmation: None,
        };
        let stored = self.store.integration_insert(record).await?;
        let integration = self.to_integration(stored, token.clone());
        let path = integration.path().unwrap_or_default();
        self.registry.put(integration);
        Ok((path, token))
    }
}

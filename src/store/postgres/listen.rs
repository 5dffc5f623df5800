//! Integration changes between replicas: the connection that listens for them, and the writes that announce them
//! in their own transaction.

use std::time::Duration;

use tokio::sync::mpsc;

use super::{PostgresStore, INTEGRATIONS_CHANNEL};
use crate::store::StoreError;

/// Keeps one connection (outside the pool) listening on [`INTEGRATIONS_CHANNEL`], and signals `changed` on every
/// notification and after every (re)connection, when notifications may have been missed. Runs until the store is
/// dropped (nobody holds a receiver any more).
pub(super) async fn listen_for_changes(
    config: tokio_postgres::Config,
    tls: Option<tokio_postgres_rustls::MakeRustlsConnect>,
    changed: tokio::sync::watch::Sender<u64>,
    timeout: Duration,
) {
    let signal = |changed: &tokio::sync::watch::Sender<u64>| changed.send_modify(|count| *count += 1);
    loop {
        let outcome = match &tls {
            None => listen_once(&config, tokio_postgres::NoTls, &changed, signal, timeout).await,
            Some(tls) => listen_once(&config, tls.clone(), &changed, signal, timeout).await,
        };
        if changed.is_closed() {
            return;
        }
        if let Err(error) = outcome {
            tracing::warn!(%error, "listening for integration changes failed; reconnecting in 1 s");
        }
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    }
}

/// How often the listening connection, which otherwise only receives, asks the server something to find out that
/// its path still works.
const LISTENER_CHECK_INTERVAL: Duration = Duration::from_secs(10);

/// One listening connection, until it fails (or a check of it gets no answer within `timeout`) or the store is
/// dropped.
async fn listen_once<T>(
    config: &tokio_postgres::Config,
    tls: T,
    changed: &tokio::sync::watch::Sender<u64>,
    signal: impl Fn(&tokio::sync::watch::Sender<u64>),
    timeout: Duration,
) -> Result<(), StoreError>
where
    T: tokio_postgres::tls::MakeTlsConnect<tokio_postgres::Socket>,
    T::Stream: Send + 'static,
{
    let no_answer = || {
        StoreError::Unavailable(format!(
            "the listening connection got no answer within {timeout:?}"
        ))
    };
    let connect_within = config.get_connect_timeout().copied().unwrap_or(timeout);
    let (client, mut connection) = tokio::time::timeout(connect_within, config.connect(tls))
        .await
        .map_err(|_| no_answer())??;
    let (notifications, mut received) = mpsc::unbounded_channel();
    // The connection delivers notifications only while it is polled for messages.
    let driver = tokio::spawn(async move {
        let mut messages = futures_util::stream::poll_fn(move |context| connection.poll_message(context));
        while let Some(message) = futures_util::StreamExt::next(&mut messages).await {
            match message {
                Ok(tokio_postgres::AsyncMessage::Notification(_)) => {
                    if notifications.send(()).is_err() {
                        return Ok(());
                    }
                }
                Ok(_) => {}
                Err(error) => return Err(error),
            }
        }
        Ok(())
    });
    let listened = async {
        tokio::time::timeout(
            timeout,
            client.batch_execute(&format!("LISTEN {INTEGRATIONS_CHANNEL}")),
        )
        .await
        .map_err(|_| no_answer())??;
        // Whatever changed while this replica was not listening is picked up by one reload.
        signal(changed);
        let mut checks = tokio::time::interval(LISTENER_CHECK_INTERVAL);
        checks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                notified = received.recv() => match notified {
                    Some(()) => signal(changed),
                    None => return Ok(()),
                },
                _ = checks.tick() => {
                    // A path that died silently (a dropped NAT entry, a failover) would otherwise leave this
                    // replica deaf to other replicas' changes until the kernel gives up on it.
                    if tokio::time::timeout(timeout, client.simple_query("")).await.map_err(|_| no_answer())?.is_err() {
                        return Ok(());
                    }
                }
                () = changed.closed() => return Ok(()),
            }
        }
    }
    .await;
    drop(client);
    if let Err(error) = listened {
        // Its connection may never end by itself on a dead path.
        driver.abort();
        return Err(error);
    }
    match driver.await {
        Ok(outcome) => Ok(outcome?),
        Err(_) => Ok(()),
    }
}

/// Runs `write` and announces the integration change in the same transaction: the notification is delivered
/// to every listening replica when, and only if, the change commits.
pub(super) async fn with_notification<T>(
    store: &PostgresStore,
    write: impl for<'a> FnOnce(
        &'a deadpool_postgres::Transaction<'a>,
    ) -> std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<T, StoreError>> + Send + 'a>,
    >,
) -> Result<T, StoreError> {
    let mut client = store.client().await?;
    let transaction = client.transaction().await?;
    let outcome = write(&transaction).await?;
    transaction
        .execute("SELECT pg_notify($1, '')", &[&INTEGRATIONS_CHANNEL])
        .await?;
    transaction.commit().await?;
    Ok(outcome)
}

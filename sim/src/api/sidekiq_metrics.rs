//! The background-job metrics administrators read: `GET /sidekiq/queue_metrics`, `/sidekiq/process_metrics`,
//! `/sidekiq/job_stats` and `/sidekiq/compound_metrics` (V4's lib/api/sidekiq_metrics.rb, a route since 8.9 and
//! so also V3's).
//!
//! svc-sim does all its work before it answers, so it reports what an idle server does: its queues all empty,
//! one worker process (the simulator itself) with nothing busy, and no job processed, failed, queued or dead.

use http::Method;
use serde_json::{json, Map, Value};

use crate::context::Ctx;
use crate::entities::ts;
use crate::error::ApiError;
use crate::reply::Reply;
use crate::router::{api, Route};

/// The queues reported; a real server lists the queues its workers listen on, `default` among them.
const QUEUES: &[&str] = &[
    "default",
    "mailers",
    "pipeline_processing",
    "post_receive",
    "project_web_hook",
    "system_hook",
];

/// Routes of this module.
pub fn routes() -> Vec<Route> {
    vec![
        api(Method::GET, "/sidekiq/queue_metrics", queue_metrics),
        api(Method::GET, "/sidekiq/process_metrics", process_metrics),
        api(Method::GET, "/sidekiq/job_stats", job_stats),
        api(Method::GET, "/sidekiq/compound_metrics", compound_metrics),
    ]
}

/// `{name: {backlog, latency}}` for each queue.
fn queues() -> Value {
    let map: Map<String, Value> = QUEUES
        .iter()
        .map(|q| ((*q).to_string(), json!({"backlog": 0, "latency": 0})))
        .collect();
    Value::Object(map)
}

/// The one worker process: the simulator, started when its root user was made.
fn processes(ctx: &Ctx<'_>) -> Value {
    let host = ctx
        .store
        .base_url
        .split("://")
        .nth(1)
        .and_then(|rest| rest.split([':', '/']).next())
        .unwrap_or("localhost")
        .to_string();
    let started = ctx
        .store
        .users
        .values()
        .map(|u| u.created_at)
        .min()
        .map(ts)
        .unwrap_or(Value::Null);
    json!([{
        "hostname": host,
        "pid": std::process::id(),
        "tag": ctx.store.identifier_word,
        "started_at": started,
        "queues": QUEUES,
        "labels": [],
        "concurrency": 25,
        "busy": 0,
    }])
}

/// `{processed, failed, enqueued, dead}`.
fn jobs() -> Value {
    json!({"processed": 0, "failed": 0, "enqueued": 0, "dead": 0})
}

fn queue_metrics(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.require_admin()?;
    Ok(Reply::ok(json!({"queues": queues()})))
}

fn process_metrics(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.require_admin()?;
    Ok(Reply::ok(json!({"processes": processes(ctx)})))
}

fn job_stats(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.require_admin()?;
    Ok(Reply::ok(json!({"jobs": jobs()})))
}

fn compound_metrics(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.require_admin()?;
    Ok(Reply::ok(json!({
        "queues": queues(),
        "processes": processes(ctx),
        "jobs": jobs(),
    })))
}

//! CI entities: `PipelineBasic`, `Pipeline`, `Job`, `Trigger`, `Variable`, `Environment`, `Deployment` and
//! `Runner`.

use serde_json::{json, Value};

use super::{opt_ts, ts};
use crate::store::{Deployment, Environment, Job, Pipeline, Runner, Store, Trigger};

/// `{id, sha, ref, status, web_url}`.
pub fn pipeline_basic(store: &Store, p: &Pipeline) -> Value {
    let web = store
        .projects
        .get(&p.project_id)
        .map(|pr| {
            format!(
                "{}/{}/pipelines/{}",
                store.base_url,
                store.project_full_path(pr),
                p.id
            )
        })
        .unwrap_or_default();
    json!({
        "id": p.id,
        "sha": p.sha,
        "ref": p.ref_name,
        "status": store.pipeline_status(p.id),
        "source": p.source,
        "web_url": web,
    })
}

/// The full `Pipeline`.
pub fn pipeline(store: &Store, p: &Pipeline) -> Value {
    let (started, finished) = store.pipeline_times(p.id);
    let committed = store
        .projects
        .get(&p.project_id)
        .and_then(|pr| pr.repo.commits.get(&p.sha))
        .map(|c| ts(c.date))
        .unwrap_or(Value::Null);
    let duration = match (started, finished) {
        (Some(s), Some(f)) => json!((f - s) / 1000),
        _ => Value::Null,
    };
    let mut v = pipeline_basic(store, p);
    if let Value::Object(map) = &mut v {
        let extra = json!({
            "before_sha": p.before_sha,
            "tag": p.tag,
            "yaml_errors": Value::Null,
            "user": super::user::basic_by_id(store, Some(p.user_id)),
            "created_at": ts(p.created_at),
            "updated_at": ts(p.updated_at),
            "started_at": opt_ts(started),
            "finished_at": opt_ts(finished),
            "committed_at": committed,
            "duration": duration,
            "coverage": Value::Null,
        });
        if let Value::Object(extra) = extra {
            map.extend(extra);
        }
    }
    v
}

/// The `Runner` entity.
pub fn runner(r: &Runner) -> Value {
    json!({
        "id": r.id,
        "description": r.description,
        "active": r.active,
        "is_shared": r.is_shared,
        "name": r.name,
        "online": r.active,
        "status": if r.active { "online" } else { "paused" },
    })
}

/// The `RunnerDetails` entity; `projects` lists only the projects `viewer` can read, `token` appears when
/// `show_token`.
pub fn runner_details(store: &Store, r: &Runner, viewer: Option<u64>, show_token: bool) -> Value {
    let mut v = runner(r);
    let projects: Vec<Value> = r
        .project_ids
        .iter()
        .filter_map(|id| store.projects.get(id))
        .filter(|p| store.can_read_project(p, viewer))
        .map(|p| super::project::simple(store, p))
        .collect();
    if let Value::Object(map) = &mut v {
        let extra = json!({
            "tag_list": r.tag_list,
            "run_untagged": r.run_untagged,
            "locked": r.locked,
            "version": "10.8.0",
            "revision": "0bd7e8a4",
            "platform": "linux",
            "architecture": "amd64",
            "contacted_at": opt_ts(r.contacted_at),
            "access_level": "not_protected",
            "projects": projects,
        });
        if let Value::Object(extra) = extra {
            map.extend(extra);
        }
        if show_token {
            map.insert("token".into(), json!(r.token));
        }
    }
    v
}

/// The `Job` entity.
pub fn job(store: &Store, j: &Job) -> Value {
    let pipeline = store.pipelines.get(&j.pipeline_id);
    let project = store.projects.get(&j.project_id);
    let commit = match (project, pipeline) {
        (Some(pr), Some(p)) => pr
            .repo
            .commits
            .get(&p.sha)
            .map(super::repo::commit)
            .unwrap_or(Value::Null),
        _ => Value::Null,
    };
    let duration = match (j.started_at, j.finished_at) {
        (Some(s), Some(f)) => json!((f - s) as f64 / 1000.0),
        _ => Value::Null,
    };
    let user = store
        .users
        .get(&j.user_id)
        .map(|u| super::user::full(store, u, false, false))
        .unwrap_or(Value::Null);
    let mut v = json!({
        "id": j.id,
        "status": j.status,
        "stage": j.stage,
        "name": j.name,
        "ref": pipeline.map(|p| p.ref_name.clone()),
        "tag": pipeline.is_some_and(|p| p.tag),
        "coverage": j.coverage,
        "created_at": ts(j.created_at),
        "started_at": opt_ts(j.started_at),
        "finished_at": opt_ts(j.finished_at),
        "duration": duration,
        "user": user,
        "commit": commit,
        "runner": j.runner_id.and_then(|id| store.runners.get(&id)).map(runner).unwrap_or(Value::Null),
        "pipeline": pipeline.map(|p| json!({
            "id": p.id,
            "sha": p.sha,
            "ref": p.ref_name,
            "status": store.pipeline_status(p.id),
        })).unwrap_or(Value::Null),
    });
    if let (Some(a), Value::Object(map)) = (&j.artifacts, &mut v) {
        map.insert(
            "artifacts_file".into(),
            json!({"filename": a.filename, "size": a.data.len()}),
        );
    }
    v
}

/// The `Trigger` entity.
pub fn trigger(store: &Store, t: &Trigger) -> Value {
    json!({
        "id": t.id,
        "token": t.token,
        "description": t.description,
        "created_at": ts(t.created_at),
        "updated_at": ts(t.updated_at),
        "last_used": opt_ts(t.last_used),
        "owner": super::user::basic_by_id(store, t.owner_id),
    })
}

/// `{key, value, protected}`.
pub fn variable(key: &str, v: &crate::store::Variable) -> Value {
    json!({
        "variable_type": "env_var",
        "key": key,
        "value": if v.hidden { Value::Null } else { json!(v.value) },
        "protected": v.protected,
        "masked": v.masked,
        "hidden": v.hidden,
        "raw": false,
        "environment_scope": "*",
        "description": v.description,
    })
}

/// The `Environment` entity with `project` as `BasicProjectDetails`.
pub fn environment(store: &Store, e: &Environment) -> Value {
    json!({
        "id": e.id,
        "name": e.name,
        "slug": e.slug,
        "external_url": e.external_url,
        "state": e.state,
        "project": store
            .projects
            .get(&e.project_id)
            .map(|p| super::project::simple(store, p))
            .unwrap_or(Value::Null),
    })
}

/// The `Deployment` entity.
pub fn deployment(store: &Store, d: &Deployment) -> Value {
    json!({
        "id": d.id,
        "iid": d.iid,
        "ref": d.ref_name,
        "sha": d.sha,
        "created_at": ts(d.created_at),
        "user": super::user::basic_by_id(store, Some(d.user_id)),
        "environment": store.environments.get(&d.environment_id).map(|e| json!({
            "id": e.id,
            "name": e.name,
            "slug": e.slug,
            "external_url": e.external_url,
        })).unwrap_or(Value::Null),
        "deployable": d.job_id.and_then(|id| store.jobs.get(&id)).map(|j| job(store, j)).unwrap_or(Value::Null),
    })
}

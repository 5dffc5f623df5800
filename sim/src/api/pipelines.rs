//! Pipelines and jobs: list, show, create, retry, cancel; job traces, artifacts, cancel/retry/erase/play and
//! keeping artifacts; triggers and triggering pipelines by token.

use std::collections::BTreeMap;

use http::{Method, StatusCode};
use serde_json::Value;

use crate::context::Ctx;
use crate::entities::ci::{job as render_job, pipeline, pipeline_basic, trigger as render_trigger};
use crate::error::ApiError;
use crate::reply::Reply;
use crate::router::{api, Route};
use crate::sha::sha1_hex;
use crate::store::{access, Job, Trigger};

/// Routes of this module.
pub fn routes() -> Vec<Route> {
    let p = "/projects/{id}";
    let job = "/projects/{id}/jobs/{job_id}";
    let trig = "/projects/{id}/triggers/{trigger_id}";
    vec![
        api(Method::GET, &format!("{p}/pipelines"), list_pipelines),
        api(Method::POST, &format!("{p}/pipeline"), create_pipeline),
        api(
            Method::GET,
            &format!("{p}/pipelines/{{pipeline_id}}"),
            show_pipeline,
        ),
        api(
            Method::POST,
            &format!("{p}/pipelines/{{pipeline_id}}/retry"),
            retry_pipeline,
        ),
        api(
            Method::POST,
            &format!("{p}/pipelines/{{pipeline_id}}/cancel"),
            cancel_pipeline,
        ),
        api(
            Method::GET,
            &format!("{p}/pipelines/{{pipeline_id}}/jobs"),
            pipeline_jobs,
        ),
        api(
            Method::GET,
            &format!("{p}/pipelines/{{pipeline_id}}/variables"),
            pipeline_variables,
        ),
        api(Method::GET, &format!("{p}/jobs"), list_jobs),
        api(Method::GET, job, show_job),
        api(Method::GET, &format!("{job}/trace"), trace),
        api(Method::GET, &format!("{job}/artifacts"), artifacts),
        api(
            Method::GET,
            &format!("{p}/jobs/artifacts/{{ref_name}}/download"),
            artifacts_by_ref,
        ),
        api(Method::POST, &format!("{job}/cancel"), cancel_job),
        api(Method::POST, &format!("{job}/retry"), retry_job),
        api(Method::POST, &format!("{job}/erase"), erase_job),
        api(Method::POST, &format!("{job}/artifacts/keep"), keep_artifacts),
        api(Method::POST, &format!("{job}/play"), play_job),
        api(Method::GET, &format!("{p}/triggers"), list_triggers),
        api(Method::POST, &format!("{p}/triggers"), create_trigger),
        api(Method::GET, trig, show_trigger),
        api(Method::PUT, trig, update_trigger),
        api(Method::DELETE, trig, delete_trigger),
        api(Method::POST, &format!("{trig}/take_ownership"), take_ownership),
        api(Method::POST, &format!("{p}/trigger/pipeline"), trigger_pipeline),
        api(
            Method::POST,
            &format!("{p}/ref/{{ref}}/trigger/pipeline"),
            trigger_pipeline,
        ),
    ]
}

/// V4's `HasStatus::AVAILABLE_STATUSES`, the values `status` takes on `GET /projects/:id/pipelines`.
const PIPELINE_STATUSES: &[&str] = &[
    "created", "pending", "running", "success", "failed", "canceled", "skipped", "manual",
];

const JOB_SCOPES: &[&str] = &[
    "created", "pending", "running", "failed", "success", "canceled", "skipped", "manual",
];

fn ci_project(ctx: &Ctx<'_>, min: u8) -> Result<u64, ApiError> {
    let pid = ctx.project_id()?;
    let p = ctx.project(pid)?;
    if !p.flag("jobs_enabled") {
        return Err(ApiError::Forbidden);
    }
    let public = p.visibility != crate::store::Visibility::Private && p.flag("public_jobs");
    if min == 0 && public {
        return Ok(pid);
    }
    ctx.require_level(pid, min.max(access::REPORTER))?;
    Ok(pid)
}

fn find_pipeline(ctx: &Ctx<'_>, pid: u64) -> Result<u64, ApiError> {
    let id = ctx.path_u64("pipeline_id", "Pipeline")?;
    ctx.store
        .pipelines
        .get(&id)
        .filter(|p| p.project_id == pid)
        .map(|p| p.id)
        // V4 finds it with `user_project.pipelines.find(params[:pipeline_id])`, whose `RecordNotFound` the API
        // rescues as the generic `404 Not found`, not a named one.
        .ok_or(ApiError::NotFoundPlain)
}

fn pipeline_reply(ctx: &Ctx<'_>, id: u64, status: StatusCode) -> Result<Reply, ApiError> {
    let p = ctx
        .store
        .pipelines
        .get(&id)
        .ok_or(ApiError::NotFound("Pipeline"))?;
    Ok(Reply::json(status, pipeline(ctx.store, p)))
}

fn list_pipelines(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let pid = ci_project(ctx, 0)?;
    let scope = ctx.params.str("scope");
    let status = ctx.params.str("status");
    let reference = ctx.params.str("ref");
    let sha = ctx.params.str("sha");
    let username = ctx.params.str("username");
    let name = ctx.params.str("name");
    let yaml_errors = ctx.params.bool("yaml_errors")?;
    if let Some(s) = &scope {
        if !["running", "pending", "finished", "branches", "tags"].contains(&s.as_str()) {
            return Err(ApiError::Param("scope does not have a valid value".into()));
        }
    }
    if let Some(s) = &status {
        if !PIPELINE_STATUSES.contains(&s.as_str()) {
            return Err(ApiError::Param("status does not have a valid value".into()));
        }
    }
    let order_by = ctx.params.str("order_by").unwrap_or_else(|| "id".into());
    if !["id", "status", "ref", "user_id"].contains(&order_by.as_str()) {
        return Err(ApiError::Param("order_by does not have a valid value".into()));
    }
    let desc = ctx.sort_desc(true)?;
    let user_matches = |uid: u64| {
        let user = ctx.store.users.get(&uid);
        username
            .as_ref()
            .map_or(true, |n| user.is_some_and(|u| &u.username == n))
            && name.as_ref().map_or(true, |n| user.is_some_and(|u| &u.name == n))
    };
    let branches: Vec<String> = ctx.project(pid)?.repo.branches.keys().cloned().collect();
    let mut found: Vec<_> = ctx
        .store
        .pipelines
        .values()
        .filter(|p| p.project_id == pid)
        .filter(|p| {
            status
                .as_deref()
                .map_or(true, |s| ctx.store.pipeline_status(p.id) == s)
        })
        .filter(|p| reference.as_ref().map_or(true, |r| &p.ref_name == r))
        .filter(|p| sha.as_ref().map_or(true, |s| &p.sha == s))
        .filter(|p| match scope.as_deref() {
            Some("running") => ctx.store.pipeline_status(p.id) == "running",
            Some("pending") => ctx.store.pipeline_status(p.id) == "pending",
            Some("finished") => matches!(
                ctx.store.pipeline_status(p.id),
                "success" | "failed" | "canceled" | "skipped"
            ),
            Some("branches") => !p.tag && branches.contains(&p.ref_name),
            Some("tags") => p.tag,
            _ => true,
        })
        .filter(|p| user_matches(p.user_id))
        // The simulator's pipelines never carry YAML errors: `yaml_errors=true` finds none.
        .filter(|_| yaml_errors != Some(true))
        .collect();
    match order_by.as_str() {
        "status" => found.sort_by(|a, b| {
            ctx.store
                .pipeline_status(a.id)
                .cmp(ctx.store.pipeline_status(b.id))
                .then(a.id.cmp(&b.id))
        }),
        "ref" => found.sort_by(|a, b| a.ref_name.cmp(&b.ref_name).then(a.id.cmp(&b.id))),
        "user_id" => found.sort_by_key(|p| (p.user_id, p.id)),
        _ => found.sort_by_key(|p| p.id),
    }
    if desc {
        found.reverse();
    }
    let items: Vec<Value> = found.into_iter().map(|p| pipeline_basic(ctx.store, p)).collect();
    ctx.paginate(items)
}

fn show_pipeline(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let pid = ci_project(ctx, 0)?;
    let id = find_pipeline(ctx, pid)?;
    pipeline_reply(ctx, id, StatusCode::OK)
}

fn create_pipeline(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let uid = ctx.user_id()?;
    let pid = ci_project(ctx, access::DEVELOPER)?;
    let reference = ctx.params.required_nonblank("ref")?;
    let sha = ctx
        .project(pid)?
        .repo
        .resolve(&reference)
        .map(|c| c.id.clone())
        // V4 `render_validation_error!(new_pipeline)`: `{"message": {"base": ["Reference not found"]}}`
        // (`spec/requests/api/pipelines_spec.rb` "fails when using an invalid ref").
        .ok_or_else(|| ApiError::validation("base", "Reference not found"))?;
    let id = ctx
        .store
        .insert_pipeline(pid, &reference, &sha, uid, "api", BTreeMap::new());
    pipeline_reply(ctx, id, StatusCode::CREATED)
}

fn retry_pipeline(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let uid = ctx.user_id()?;
    let pid = ci_project(ctx, access::DEVELOPER)?;
    let id = find_pipeline(ctx, pid)?;
    let retryable: Vec<Job> = ctx
        .store
        .jobs
        .values()
        .filter(|j| j.pipeline_id == id && matches!(j.status.as_str(), "failed" | "canceled"))
        .cloned()
        .collect();
    for j in retryable {
        ctx.store.insert_job(id, &j.name, &j.stage, "pending", uid);
        if let Some(old) = ctx.store.jobs.get_mut(&j.id) {
            old.status = format!("{}-retried", old.status);
        }
    }
    touch(ctx, id);
    pipeline_reply(ctx, id, StatusCode::CREATED)
}

fn pipeline_variables(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let pid = ci_project(ctx, access::DEVELOPER)?;
    let id = find_pipeline(ctx, pid)?;
    let items: Vec<Value> = ctx
        .store
        .pipelines
        .get(&id)
        .map(|p| {
            p.variables
                .iter()
                .map(|(k, v)| serde_json::json!({"key": k, "value": v}))
                .collect()
        })
        .unwrap_or_default();
    Ok(Reply::ok(Value::Array(items)))
}

fn touch(ctx: &mut Ctx<'_>, pipeline: u64) {
    let now = ctx.store.now();
    if let Some(p) = ctx.store.pipelines.get_mut(&pipeline) {
        p.updated_at = now;
    }
}

fn cancel_pipeline(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.user_id()?;
    let pid = ci_project(ctx, access::DEVELOPER)?;
    let id = find_pipeline(ctx, pid)?;
    let now = ctx.store.now();
    for j in ctx.store.jobs.values_mut().filter(|j| j.pipeline_id == id) {
        if matches!(j.status.as_str(), "created" | "pending" | "running") {
            j.status = "canceled".into();
            j.finished_at = Some(now);
        }
    }
    touch(ctx, id);
    // V4's `post ':id/pipelines/:pipeline_id/cancel'` sets `status 200` (retry keeps POST's 201).
    pipeline_reply(ctx, id, StatusCode::OK)
}

fn scope_filter(ctx: &Ctx<'_>) -> Result<Option<Vec<String>>, ApiError> {
    let Some(scopes) = ctx.params.list("scope") else {
        return Ok(None);
    };
    if scopes.iter().any(|s| !JOB_SCOPES.contains(&s.as_str())) {
        return Err(ApiError::Param("scope does not have a valid value".into()));
    }
    Ok(Some(scopes))
}

fn jobs_reply(ctx: &mut Ctx<'_>, filter: impl Fn(&Job) -> bool) -> Result<Reply, ApiError> {
    let scopes = scope_filter(ctx)?;
    let mut found: Vec<&Job> = ctx
        .store
        .jobs
        .values()
        .filter(|j| filter(j) && !j.status.ends_with("-retried"))
        .filter(|j| scopes.as_ref().map_or(true, |s| s.contains(&j.status)))
        .collect();
    found.sort_by_key(|j| std::cmp::Reverse(j.id));
    let items: Vec<Value> = found.into_iter().map(|j| render_job(ctx.store, j)).collect();
    ctx.paginate(items)
}

fn list_jobs(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let pid = ci_project(ctx, 0)?;
    jobs_reply(ctx, |j| j.project_id == pid)
}

fn pipeline_jobs(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let pid = ci_project(ctx, 0)?;
    let id = find_pipeline(ctx, pid)?;
    jobs_reply(ctx, |j| j.pipeline_id == id)
}

fn find_job(ctx: &Ctx<'_>, min: u8) -> Result<u64, ApiError> {
    let pid = ci_project(ctx, min)?;
    let id = ctx.path_u64("job_id", "Job")?;
    ctx.store
        .jobs
        .get(&id)
        .filter(|j| j.project_id == pid)
        .map(|j| j.id)
        .ok_or(ApiError::NotFound("Job"))
}

fn job_reply(ctx: &Ctx<'_>, id: u64, status: StatusCode) -> Result<Reply, ApiError> {
    let j = ctx.store.jobs.get(&id).ok_or(ApiError::NotFound("Job"))?;
    Ok(Reply::json(status, render_job(ctx.store, j)))
}

fn show_job(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let id = find_job(ctx, 0)?;
    job_reply(ctx, id, StatusCode::OK)
}

fn trace(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let id = find_job(ctx, 0)?;
    let j = ctx.store.jobs.get(&id).ok_or(ApiError::NotFound("Job"))?;
    Ok(Reply::bytes("text/plain", j.trace.clone().into_bytes()))
}

fn artifacts_reply(j: &Job) -> Result<Reply, ApiError> {
    let a = j.artifacts.as_ref().ok_or(ApiError::NotFoundPlain)?;
    let mut reply = Reply::bytes("application/octet-stream", a.data.clone());
    reply.headers.push((
        "content-disposition".into(),
        format!("attachment; filename=\"{}\"", a.filename),
    ));
    Ok(reply)
}

fn artifacts(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let id = find_job(ctx, 0)?;
    let j = ctx.store.jobs.get(&id).ok_or(ApiError::NotFound("Job"))?;
    artifacts_reply(j)
}

fn artifacts_by_ref(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let pid = ci_project(ctx, 0)?;
    let name = ctx.params.required_nonblank("job")?;
    let reference = ctx.path_param("ref_name").to_string();
    let j = ctx
        .store
        .jobs
        .values()
        .filter(|j| j.project_id == pid && j.name == name && j.status == "success")
        .filter(|j| {
            ctx.store
                .pipelines
                .get(&j.pipeline_id)
                .is_some_and(|p| p.ref_name == reference)
        })
        .max_by_key(|j| j.id)
        .ok_or(ApiError::NotFoundPlain)?;
    artifacts_reply(j)
}

fn job_action(
    ctx: &mut Ctx<'_>,
    allowed: &[&str],
    refusal: ApiError,
    apply: impl Fn(&mut Job, i64),
) -> Result<u64, ApiError> {
    ctx.user_id()?;
    let id = find_job(ctx, access::DEVELOPER)?;
    let status = ctx
        .store
        .jobs
        .get(&id)
        .map(|j| j.status.clone())
        .unwrap_or_default();
    if !allowed.contains(&status.as_str()) {
        return Err(refusal);
    }
    let now = ctx.store.now();
    if let Some(j) = ctx.store.jobs.get_mut(&id) {
        apply(j, now);
    }
    Ok(id)
}

fn cancel_job(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let id = job_action(
        ctx,
        &[
            "created", "pending", "running", "manual", "success", "failed", "canceled", "skipped",
        ],
        ApiError::Forbidden,
        |j, now| {
            if matches!(j.status.as_str(), "created" | "pending" | "running") {
                j.status = "canceled".into();
                j.finished_at = Some(now);
            }
        },
    )?;
    job_reply(ctx, id, StatusCode::CREATED)
}

fn retry_job(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let uid = ctx.user_id()?;
    let id = job_action(
        ctx,
        &["success", "failed", "canceled"],
        ApiError::ForbiddenBecause("Job is not retryable".into()),
        |_, _| {},
    )?;
    let old = ctx
        .store
        .jobs
        .get(&id)
        .cloned()
        .ok_or(ApiError::NotFound("Job"))?;
    let new = ctx
        .store
        .insert_job(old.pipeline_id, &old.name, &old.stage, "pending", uid);
    if let Some(j) = ctx.store.jobs.get_mut(&id) {
        j.status = format!("{}-retried", j.status);
    }
    job_reply(ctx, new, StatusCode::CREATED)
}

fn erase_job(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let id = job_action(
        ctx,
        &["success", "failed", "canceled"],
        ApiError::ForbiddenBecause("Job is not erasable!".into()),
        |j, _| {
            j.trace.clear();
            j.artifacts = None;
        },
    )?;
    job_reply(ctx, id, StatusCode::CREATED)
}

fn keep_artifacts(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.user_id()?;
    let id = find_job(ctx, access::DEVELOPER)?;
    let j = ctx.store.jobs.get_mut(&id).ok_or(ApiError::NotFound("Job"))?;
    if j.artifacts.is_none() {
        return Err(ApiError::NotFoundPlain);
    }
    j.artifacts_kept = true;
    job_reply(ctx, id, StatusCode::OK)
}

fn play_job(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let uid = ctx.user_id()?;
    let id = job_action(
        ctx,
        &["manual"],
        // V4 (10.8) `bad_request!("Unplayable Job")`, whose text ends in ` not given`.
        ApiError::BadRequest("400 (Bad request) \"Unplayable Job\" not given".into()),
        |j, _| j.status = "pending".into(),
    )?;
    if let Some(j) = ctx.store.jobs.get_mut(&id) {
        j.user_id = uid;
    }
    job_reply(ctx, id, StatusCode::OK)
}

fn find_trigger(ctx: &Ctx<'_>) -> Result<(u64, u64), ApiError> {
    let pid = ctx.project_id()?;
    ctx.require_level(pid, access::MAINTAINER)?;
    let id = ctx.path_u64("trigger_id", "Trigger")?;
    ctx.store
        .triggers
        .get(&id)
        .filter(|t| t.project_id == pid)
        .map(|t| (pid, t.id))
        .ok_or(ApiError::NotFound("Trigger"))
}

fn trigger_reply(ctx: &Ctx<'_>, id: u64, status: StatusCode) -> Result<Reply, ApiError> {
    let t = ctx.store.triggers.get(&id).ok_or(ApiError::NotFound("Trigger"))?;
    Ok(Reply::json(status, render_trigger(ctx.store, t)))
}

fn list_triggers(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let pid = ctx.project_id()?;
    ctx.require_level(pid, access::MAINTAINER)?;
    let items: Vec<Value> = ctx
        .store
        .triggers
        .values()
        .filter(|t| t.project_id == pid)
        .map(|t| render_trigger(ctx.store, t))
        .collect();
    ctx.paginate(items)
}

fn create_trigger(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let uid = ctx.user_id()?;
    let pid = ctx.project_id()?;
    ctx.require_level(pid, access::MAINTAINER)?;
    let description = ctx.params.required_str("description")?;
    let id = ctx.store.next_id("trigger");
    let now = ctx.store.now();
    let token = sha1_hex(format!("trigger:{pid}:{id}:{now}").as_bytes())
        .get(..30)
        .unwrap_or_default()
        .to_string();
    ctx.store.triggers.insert(
        id,
        Trigger {
            id,
            project_id: pid,
            token,
            description,
            owner_id: Some(uid),
            created_at: now,
            updated_at: now,
            last_used: None,
        },
    );
    trigger_reply(ctx, id, StatusCode::CREATED)
}

fn show_trigger(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (_, id) = find_trigger(ctx)?;
    trigger_reply(ctx, id, StatusCode::OK)
}

fn update_trigger(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (_, id) = find_trigger(ctx)?;
    let description = ctx.params.str("description");
    let now = ctx.store.now();
    if let Some(t) = ctx.store.triggers.get_mut(&id) {
        if let Some(d) = description {
            t.description = d;
        }
        t.updated_at = now;
    }
    trigger_reply(ctx, id, StatusCode::OK)
}

fn delete_trigger(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (_, id) = find_trigger(ctx)?;
    ctx.store.triggers.remove(&id);
    Ok(Reply::no_content())
}

fn take_ownership(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let uid = ctx.user_id()?;
    let (_, id) = find_trigger(ctx)?;
    let now = ctx.store.now();
    if let Some(t) = ctx.store.triggers.get_mut(&id) {
        t.owner_id = Some(uid);
        t.updated_at = now;
    }
    trigger_reply(ctx, id, StatusCode::CREATED)
}

fn trigger_pipeline(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    // V4 `lib/api/triggers.rb`: Grape validates `token`, `ref` and `variables` (`type: Hash`: anything else is
    // `{"error": "variables is invalid"}`), then the endpoint refuses a variable that is not a string with
    // `render_api_error!('variables needs to be a map of key-valued strings', 400)`, and only then finds the project.
    let token = ctx.params.required_str("token")?;
    let reference = match ctx.path_param("ref") {
        "" => ctx.params.required_str("ref")?,
        r => r.to_string(),
    };
    let mut variables = BTreeMap::new();
    match ctx.params.get("variables") {
        None => {}
        Some(Value::Object(map)) => {
            for (k, v) in map {
                let Value::String(v) = v else {
                    return Err(ApiError::BadRequest(
                        "variables needs to be a map of key-valued strings".into(),
                    ));
                };
                variables.insert(k.clone(), v.clone());
            }
        }
        Some(_) => return Err(ApiError::Invalid("variables".into())),
    }
    let raw = ctx.path_param("id");
    let pid = match raw.parse::<u64>() {
        Ok(id) => ctx.store.projects.contains_key(&id).then_some(id),
        Err(_) => ctx.store.project_by_full_path(raw),
    }
    .ok_or(ApiError::NotFound("Project"))?;
    let trigger = ctx
        .store
        .triggers
        .values()
        .find(|t| t.project_id == pid && t.token == token)
        .map(|t| (t.id, t.owner_id))
        .ok_or(ApiError::NotFoundPlain)?;
    let sha = ctx
        .project(pid)?
        .repo
        .resolve(&reference)
        .map(|c| c.id.clone())
        // `Ci::PipelineTriggerService` answers the pipeline's errors, rendered as `{"message": {"base": [...]}}`
        // (`spec/requests/api/triggers_spec.rb` "returns bad request with no pipeline created if there's no commit
        // for that ref").
        .ok_or_else(|| ApiError::validation("base", "Reference not found"))?;
    let owner = trigger.1.unwrap_or(1);
    let now = ctx.store.now();
    if let Some(t) = ctx.store.triggers.get_mut(&trigger.0) {
        t.last_used = Some(now);
    }
    let id = ctx
        .store
        .insert_pipeline(pid, &reference, &sha, owner, "trigger", variables);
    pipeline_reply(ctx, id, StatusCode::CREATED)
}

//! CI settings: CI variables of projects, groups and the instance, environments (with stop) and deployments.

use http::{Method, StatusCode};
use serde_json::Value;

use crate::context::Ctx;
use crate::entities::ci::{deployment, environment, variable};
use crate::error::ApiError;
use crate::reply::Reply;
use crate::router::{api, Route};
use crate::store::{access, Environment, Variable, VariableOwner};

/// Routes of this module.
pub fn routes() -> Vec<Route> {
    let envs = "/projects/{id}/environments";
    let mut routes = Vec::new();
    for vars in [
        "/projects/{id}/variables",
        "/groups/{id}/variables",
        "/admin/ci/variables",
    ] {
        routes.push(api(Method::GET, vars, list_variables));
        routes.push(api(Method::POST, vars, create_variable));
        routes.push(api(Method::GET, &format!("{vars}/{{key}}"), show_variable));
        routes.push(api(Method::PUT, &format!("{vars}/{{key}}"), update_variable));
        routes.push(api(Method::DELETE, &format!("{vars}/{{key}}"), delete_variable));
    }
    routes.extend([
        api(Method::GET, envs, list_environments),
        api(Method::POST, envs, create_environment),
        api(
            Method::GET,
            &format!("{envs}/{{environment_id}}"),
            show_environment,
        ),
        api(
            Method::PUT,
            &format!("{envs}/{{environment_id}}"),
            update_environment,
        ),
        api(
            Method::DELETE,
            &format!("{envs}/{{environment_id}}"),
            delete_environment,
        ),
        api(
            Method::POST,
            &format!("{envs}/{{environment_id}}/stop"),
            stop_environment,
        ),
        api(Method::GET, "/projects/{id}/deployments", list_deployments),
        api(
            Method::GET,
            "/projects/{id}/deployments/{deployment_id}",
            show_deployment,
        ),
    ]);
    routes
}

fn maintainer_project(ctx: &Ctx<'_>) -> Result<u64, ApiError> {
    let pid = ctx.project_id()?;
    ctx.require_level(pid, access::MAINTAINER)?;
    Ok(pid)
}

/// The owner of the request's variables: the project (Maintainers), the group (Maintainers) or the instance
/// (administrators).
fn owner(ctx: &Ctx<'_>) -> Result<VariableOwner, ApiError> {
    if ctx.link.path.starts_with("/api/v4/projects/") {
        return maintainer_project(ctx).map(VariableOwner::Project);
    }
    if ctx.link.path.starts_with("/api/v4/groups/") {
        let gid = ctx.group_id()?;
        if ctx.group_level(gid) < access::MAINTAINER {
            return Err(ApiError::Forbidden);
        }
        return Ok(VariableOwner::Group(gid));
    }
    ctx.require_admin()?;
    Ok(VariableOwner::Instance)
}

fn list_variables(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let owner = owner(ctx)?;
    let items: Vec<Value> = ctx
        .store
        .variables
        .iter()
        .filter(|((o, _), _)| *o == owner)
        .map(|((_, k), v)| variable(k, v))
        .collect();
    ctx.paginate(items)
}

fn valid_key(key: &str) -> bool {
    !key.is_empty() && key.len() <= 255 && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn create_variable(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let pid = owner(ctx)?;
    let key = ctx.params.required_str("key")?;
    let value = ctx.params.required_str("value")?;
    let protected = ctx.params.flag("protected", false)?;
    let hidden = ctx.params.flag("masked_and_hidden", false)?;
    let masked = hidden || ctx.params.flag("masked", false)?;
    let description = ctx.params.str("description");
    if !valid_key(&key) {
        return Err(ApiError::validation(
            "key",
            "can contain only letters, digits and '_'.",
        ));
    }
    if ctx.store.variables.contains_key(&(pid, key.clone())) {
        return Err(ApiError::validation("key", "has already been taken"));
    }
    let v = Variable {
        value,
        protected,
        masked,
        hidden,
        description,
    };
    let body = variable(&key, &v);
    ctx.store.variables.insert((pid, key), v);
    Ok(Reply::created(body))
}

fn find_variable(ctx: &Ctx<'_>) -> Result<(VariableOwner, String), ApiError> {
    let pid = owner(ctx)?;
    let key = ctx.path_param("key").to_string();
    if ctx.store.variables.contains_key(&(pid, key.clone())) {
        Ok((pid, key))
    } else {
        Err(ApiError::NotFound("Variable"))
    }
}

fn show_variable(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (pid, key) = find_variable(ctx)?;
    let v = ctx
        .store
        .variables
        .get(&(pid, key.clone()))
        .ok_or(ApiError::NotFound("Variable"))?;
    Ok(Reply::ok(variable(&key, v)))
}

fn update_variable(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (pid, key) = find_variable(ctx)?;
    let value = ctx.params.str("value");
    let protected = ctx.params.bool("protected")?;
    let masked = ctx.params.bool("masked")?;
    let description = ctx
        .params
        .has("description")
        .then(|| ctx.params.str("description"));
    let v = ctx
        .store
        .variables
        .get_mut(&(pid, key.clone()))
        .ok_or(ApiError::NotFound("Variable"))?;
    if let Some(value) = value {
        v.value = value;
    }
    if let Some(p) = protected {
        v.protected = p;
    }
    if let Some(m) = masked {
        v.masked = m || v.hidden;
    }
    if let Some(d) = description {
        v.description = d;
    }
    Ok(Reply::ok(variable(&key, v)))
}

fn delete_variable(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (pid, key) = find_variable(ctx)?;
    ctx.store.variables.remove(&(pid, key));
    Ok(Reply::no_content())
}

fn slugify(name: &str) -> String {
    let mut out = String::new();
    for c in name.to_ascii_lowercase().chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let trimmed = out.trim_matches('-');
    let mut slug: String = trimmed.chars().take(24).collect();
    if slug.is_empty() || !slug.starts_with(|c: char| c.is_ascii_alphabetic()) {
        slug = format!("env-{slug}");
    }
    slug.trim_end_matches('-').to_string()
}

fn reader_project(ctx: &Ctx<'_>) -> Result<u64, ApiError> {
    let pid = ctx.project_id()?;
    ctx.require_level(pid, access::REPORTER)?;
    Ok(pid)
}

fn list_environments(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let pid = reader_project(ctx)?;
    let items: Vec<Value> = ctx
        .store
        .environments
        .values()
        .filter(|e| e.project_id == pid)
        .map(|e| environment(ctx.store, e))
        .collect();
    ctx.paginate(items)
}

fn check_url(url: &Option<String>) -> Result<(), ApiError> {
    match url {
        Some(u) if !(u.starts_with("http://") || u.starts_with("https://")) => Err(ApiError::validation(
            "external_url",
            "is blocked: Only allowed protocols are http, https",
        )),
        _ => Ok(()),
    }
}

/// V4's `optional :slug, absence: { message: "is automatically generated and cannot be changed" }`: a parameter
/// error, `{"error": "slug is automatically generated and cannot be changed"}`.
fn refuse_slug(ctx: &Ctx<'_>) -> Result<(), ApiError> {
    if ctx.params.has("slug") {
        return Err(ApiError::Param(
            "slug is automatically generated and cannot be changed".into(),
        ));
    }
    Ok(())
}

fn create_environment(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.user_id()?;
    ctx.params.required_str("name")?;
    refuse_slug(ctx)?;
    let pid = ctx.project_id()?;
    ctx.require_level(pid, access::DEVELOPER)?;
    let name = ctx.params.required_nonblank("name")?;
    let external_url = ctx.params.str("external_url");
    check_url(&external_url)?;
    if ctx
        .store
        .environments
        .values()
        .any(|e| e.project_id == pid && e.name == name)
    {
        return Err(ApiError::validation("name", "has already been taken"));
    }
    let id = ctx.store.next_id("environment");
    ctx.store.environments.insert(
        id,
        Environment {
            id,
            project_id: pid,
            slug: slugify(&name),
            name,
            external_url,
            state: "available".into(),
        },
    );
    env_reply(ctx, id, StatusCode::CREATED)
}

fn find_environment(ctx: &Ctx<'_>, min: u8) -> Result<u64, ApiError> {
    let pid = ctx.project_id()?;
    ctx.require_level(pid, min)?;
    let id = ctx.path_u64("environment_id", "Environment")?;
    ctx.store
        .environments
        .get(&id)
        .filter(|e| e.project_id == pid)
        .map(|e| e.id)
        // V4 `lib/api/environments.rb` looks it up with `user_project.environments.find`, whose
        // `ActiveRecord::RecordNotFound` the API rescues as the generic `404 Not found`.
        .ok_or(ApiError::NotFoundPlain)
}

fn env_reply(ctx: &Ctx<'_>, id: u64, status: StatusCode) -> Result<Reply, ApiError> {
    let e = ctx
        .store
        .environments
        .get(&id)
        .ok_or(ApiError::NotFound("Environment"))?;
    Ok(Reply::json(status, environment(ctx.store, e)))
}

fn show_environment(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let id = find_environment(ctx, access::REPORTER)?;
    env_reply(ctx, id, StatusCode::OK)
}

fn update_environment(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    // V4 `lib/api/environments.rb`: `optional :slug, absence: {...}` is Grape parameter validation, so it answers
    // `{"error": ...}` before the project and the environment are looked up.
    ctx.user_id()?;
    refuse_slug(ctx)?;
    let id = find_environment(ctx, access::DEVELOPER)?;
    let name = ctx.params.str("name").filter(|n| !n.trim().is_empty());
    let external_url = ctx.params.str("external_url");
    check_url(&external_url)?;
    if let Some(e) = ctx.store.environments.get_mut(&id) {
        if let Some(n) = name {
            e.name = n;
        }
        if external_url.is_some() {
            e.external_url = external_url;
        }
    }
    env_reply(ctx, id, StatusCode::OK)
}

fn delete_environment(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let id = find_environment(ctx, access::MAINTAINER)?;
    ctx.store.environments.remove(&id);
    ctx.store.deployments.retain(|_, d| d.environment_id != id);
    Ok(Reply::no_content())
}

fn stop_environment(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let id = find_environment(ctx, access::DEVELOPER)?;
    if let Some(e) = ctx.store.environments.get_mut(&id) {
        e.state = "stopped".into();
    }
    env_reply(ctx, id, StatusCode::OK)
}

fn list_deployments(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let pid = reader_project(ctx)?;
    let items: Vec<Value> = ctx
        .store
        .deployments
        .values()
        .filter(|d| d.project_id == pid)
        .map(|d| deployment(ctx.store, d))
        .collect();
    ctx.paginate(items)
}

fn show_deployment(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let pid = reader_project(ctx)?;
    let id = ctx.path_u64("deployment_id", "Deployment")?;
    let d = ctx
        .store
        .deployments
        .get(&id)
        .filter(|d| d.project_id == pid)
        .ok_or(ApiError::NotFound("Deployment"))?;
    Ok(Reply::ok(deployment(ctx.store, d)))
}

//! To-do items of the caller: list with filters, mark one or all as done.

use http::Method;
use serde_json::Value;

use crate::context::Ctx;
use crate::entities::award::todo as render;
use crate::error::ApiError;
use crate::reply::Reply;
use crate::router::{api, Route};
use crate::store::Todo;

/// Routes of this module.
pub fn routes() -> Vec<Route> {
    vec![
        api(Method::GET, "/todos", list),
        api(Method::POST, "/todos/mark_as_done", mark_all),
        api(Method::POST, "/todos/{todo_id}/mark_as_done", mark_one),
    ]
}

fn action_code(name: &str) -> Option<u8> {
    (1..=7).find(|code| crate::store::awards::todo_action_name(*code) == name)
}

fn list(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let uid = ctx.user_id()?;
    let p = &ctx.params;
    let action = match p.str("action") {
        Some(a) => Some(action_code(&a).ok_or_else(|| ApiError::Invalid("action".into()))?),
        None => None,
    };
    let author = p.u64("author_id")?;
    let project = p.u64("project_id")?;
    let state = p.str("state").unwrap_or_else(|| "pending".into());
    if !["pending", "done"].contains(&state.as_str()) {
        return Err(ApiError::Invalid("state".into()));
    }
    let kind = p.str("type");
    if kind
        .as_deref()
        .is_some_and(|k| k != "Issue" && k != "MergeRequest")
    {
        return Err(ApiError::Invalid("type".into()));
    }
    let mut found: Vec<&Todo> = ctx
        .store
        .todos
        .values()
        .filter(|t| t.user_id == uid && t.state == state)
        .filter(|t| action.map_or(true, |a| t.action == a))
        .filter(|t| author.map_or(true, |a| t.author_id == a))
        .filter(|t| project.map_or(true, |pr| t.project_id == pr))
        .filter(|t| kind.as_deref().map_or(true, |k| t.target_kind.as_str() == k))
        .collect();
    found.sort_by_key(|t| std::cmp::Reverse(t.id));
    let items: Vec<Value> = found.into_iter().map(|t| render(ctx.store, t)).collect();
    ctx.paginate(items)
}

fn mark_one(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let uid = ctx.user_id()?;
    let id = ctx.path_u64("todo_id", "Todo")?;
    let todo = ctx
        .store
        .todos
        .get_mut(&id)
        .filter(|t| t.user_id == uid)
        .ok_or(ApiError::NotFound("Todo"))?;
    todo.state = "done".into();
    let t = ctx.store.todos.get(&id).ok_or(ApiError::NotFound("Todo"))?;
    Ok(Reply::created(render(ctx.store, t)))
}

fn mark_all(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let uid = ctx.user_id()?;
    for t in ctx.store.todos.values_mut().filter(|t| t.user_id == uid) {
        t.state = "done".into();
    }
    Ok(Reply::no_content())
}

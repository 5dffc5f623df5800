//! Issue boards: a project's boards (none until one is created; create, show, rename, delete), and the label
//! lists of a board (list, add, show, move, remove). The backlog and done lists are never listed.

use http::{Method, StatusCode};
use serde_json::Value;

use crate::context::Ctx;
use crate::entities::board::{board as render_board, list as render_list};
use crate::error::ApiError;
use crate::reply::Reply;
use crate::router::{api, Route};
use crate::store::{access, BoardList};

/// Routes of this module.
pub fn routes() -> Vec<Route> {
    let board = "/projects/{id}/boards/{board_id}";
    let list = "/projects/{id}/boards/{board_id}/lists/{list_id}";
    vec![
        api(Method::GET, "/projects/{id}/boards", list_boards),
        api(Method::POST, "/projects/{id}/boards", create_board),
        api(Method::GET, board, show_board),
        api(Method::PUT, board, update_board),
        api(Method::DELETE, board, delete_board),
        api(Method::GET, &format!("{board}/lists"), list_lists),
        api(Method::POST, &format!("{board}/lists"), create_list),
        api(Method::GET, list, show_list),
        api(Method::PUT, list, move_list),
        api(Method::DELETE, list, delete_list),
    ]
}

fn list_boards(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.user_id()?; // V4 runs `before { authenticate! }` for the whole module.
    let pid = ctx.project_id()?;
    let items: Vec<Value> = ctx
        .store
        .boards
        .values()
        .filter(|b| b.project_id == pid)
        .map(|b| render_board(ctx.store, b))
        .collect();
    ctx.paginate(items)
}

fn create_board(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let pid = ctx.project_id()?;
    ctx.require_level(pid, access::REPORTER)?;
    let name = ctx.params.required_nonblank("name")?;
    let id = ctx.store.insert_board(pid, &name);
    let b = ctx.store.boards.get(&id).ok_or(ApiError::NotFound("Board"))?;
    Ok(Reply::created(render_board(ctx.store, b)))
}

fn update_board(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (pid, id) = find_board(ctx)?;
    ctx.require_level(pid, access::REPORTER)?;
    if let Some(name) = ctx.params.str("name").filter(|n| !n.trim().is_empty()) {
        if let Some(b) = ctx.store.boards.get_mut(&id) {
            b.name = name;
        }
    }
    let b = ctx.store.boards.get(&id).ok_or(ApiError::NotFound("Board"))?;
    Ok(Reply::ok(render_board(ctx.store, b)))
}

fn delete_board(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (pid, id) = find_board(ctx)?;
    ctx.require_level(pid, access::REPORTER)?;
    ctx.store.remove_board(id);
    Ok(Reply::no_content())
}

/// The board named by `:board_id` in the project named by `:id`.
fn find_board(ctx: &mut Ctx<'_>) -> Result<(u64, u64), ApiError> {
    let pid = ctx.project_id()?;
    let wanted = ctx.path_u64("board_id", "Board")?;
    ctx.store
        .boards
        .get(&wanted)
        .filter(|b| b.project_id == pid)
        .map(|b| (pid, b.id))
        .ok_or(ApiError::NotFound("Board"))
}

fn show_board(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.user_id()?; // V4 runs `before { authenticate! }` for the whole module.
    let (_, id) = find_board(ctx)?;
    let b = ctx.store.boards.get(&id).ok_or(ApiError::NotFound("Board"))?;
    Ok(Reply::ok(render_board(ctx.store, b)))
}

fn list_lists(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.user_id()?; // V4 runs `before { authenticate! }` for the whole module.
    let (_, id) = find_board(ctx)?;
    let items: Vec<Value> = ctx
        .store
        .board_lists(id)
        .into_iter()
        .map(|l| render_list(ctx.store, l))
        .collect();
    ctx.paginate(items)
}

fn list_reply(ctx: &Ctx<'_>, id: u64, status: StatusCode) -> Result<Reply, ApiError> {
    let l = ctx.store.board_lists.get(&id).ok_or(ApiError::NotFound("List"))?;
    Ok(Reply::json(status, render_list(ctx.store, l)))
}

fn create_list(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (pid, board_id) = find_board(ctx)?;
    ctx.require_level(pid, access::REPORTER)?;
    let label_id = ctx.params.required_u64("label_id")?;
    if !ctx
        .store
        .labels
        .get(&label_id)
        .is_some_and(|l| l.project_id == pid)
    {
        return Err(ApiError::BadRequest("Label not found!".into()));
    }
    let lists = ctx.store.board_lists(board_id);
    if lists.iter().any(|l| l.label_id == label_id) {
        return Err(ApiError::validation("label", "has already been taken"));
    }
    let position = u64::try_from(lists.len()).unwrap_or(u64::MAX);
    let id = ctx.store.next_id("board_list");
    ctx.store.board_lists.insert(
        id,
        BoardList {
            id,
            board_id,
            label_id,
            position,
        },
    );
    list_reply(ctx, id, StatusCode::CREATED)
}

fn find_list(ctx: &mut Ctx<'_>) -> Result<(u64, u64, u64), ApiError> {
    let (pid, board_id) = find_board(ctx)?;
    let id = ctx.path_u64("list_id", "List")?;
    ctx.store
        .board_lists
        .get(&id)
        .filter(|l| l.board_id == board_id)
        .map(|l| (pid, board_id, l.id))
        .ok_or(ApiError::NotFound("List"))
}

fn show_list(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.user_id()?; // V4 runs `before { authenticate! }` for the whole module.
    let (_, _, id) = find_list(ctx)?;
    list_reply(ctx, id, StatusCode::OK)
}

fn move_list(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (pid, board_id, id) = find_list(ctx)?;
    ctx.require_level(pid, access::REPORTER)?;
    let position = ctx.params.required_u64("position")?;
    let mut order: Vec<u64> = ctx
        .store
        .board_lists(board_id)
        .iter()
        .map(|l| l.id)
        .filter(|l| *l != id)
        .collect();
    let at = usize::try_from(position).unwrap_or(usize::MAX).min(order.len());
    order.insert(at, id);
    for (index, list_id) in order.into_iter().enumerate() {
        if let Some(l) = ctx.store.board_lists.get_mut(&list_id) {
            l.position = u64::try_from(index).unwrap_or(u64::MAX);
        }
    }
    list_reply(ctx, id, StatusCode::OK)
}

fn delete_list(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (pid, board_id, id) = find_list(ctx)?;
    ctx.require_level(pid, access::REPORTER)?;
    ctx.store.board_lists.remove(&id);
    ctx.store.renumber_board_lists(board_id);
    Ok(Reply::no_content())
}

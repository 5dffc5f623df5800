//! Project snippets (`/projects/:id/snippets`) and personal snippets (`/snippets`, `/snippets/public`,
//! `/snippets/all`): list, create (one file from `file_name`/`content`, or several from `files[]`), show, update
//! (including `files[]` actions), delete, and raw content (the first file, or one file by path).

use http::Method;
use serde_json::{Map, Value};

use crate::context::Ctx;
use crate::entities::snippet::snippet as render;
use crate::error::ApiError;
use crate::reply::Reply;
use crate::router::{api, Route};
use crate::store::snippets::{NewSnippet, SnippetFile};
use crate::store::{access, NoteableKind, Snippet, Visibility};

/// Routes of this module.
pub fn routes() -> Vec<Route> {
    let mut routes = Vec::new();
    for (base, one) in [
        ("/projects/{id}/snippets", "/projects/{id}/snippets/{snippet_id}"),
        ("/snippets", "/snippets/{snippet_id}"),
    ] {
        routes.push(api(Method::GET, base, list));
        routes.push(api(Method::POST, base, create));
        routes.push(api(Method::GET, one, show));
        routes.push(api(Method::PUT, one, update));
        routes.push(api(Method::DELETE, one, delete));
        routes.push(api(Method::GET, &format!("{one}/raw"), raw));
        routes.push(api(
            Method::GET,
            &format!("{one}/files/{{ref}}/{{file_path}}/raw"),
            file_raw,
        ));
    }
    routes.push(api(Method::GET, "/snippets/public", public));
    routes.push(api(Method::GET, "/snippets/all", all));
    routes
}

fn project_scope(ctx: &Ctx<'_>) -> Result<Option<u64>, ApiError> {
    if ctx.path.iter().any(|(n, _)| n == "id") {
        let pid = ctx.project_id()?;
        if !ctx.project(pid)?.flag("snippets_enabled") {
            return Err(ApiError::Forbidden);
        }
        Ok(Some(pid))
    } else {
        Ok(None)
    }
}

/// Whether the caller may see a snippet.
pub fn can_see(ctx: &Ctx<'_>, s: &Snippet) -> bool {
    if ctx.is_admin() || ctx.caller == Some(s.author_id) {
        return true;
    }
    let by_visibility = match (s.visibility, ctx.caller) {
        (Visibility::Public, _) | (Visibility::Internal, Some(_)) => true,
        (_, _) => false,
    };
    match s.project_id {
        None => by_visibility,
        Some(pid) => {
            ctx.store
                .projects
                .get(&pid)
                .is_some_and(|p| ctx.store.can_read_project(p, ctx.caller))
                && (by_visibility || ctx.level(pid) >= access::GUEST)
        }
    }
}

/// Resolves `:snippet_id` (in the project named by `:id` when present); returns (project, snippet id).
pub fn find_snippet(ctx: &Ctx<'_>) -> Result<(Option<u64>, u64), ApiError> {
    let pid = project_scope(ctx)?;
    let id = ctx.path_u64("snippet_id", "Snippet")?;
    ctx.store
        .snippets
        .get(&id)
        .filter(|s| s.project_id == pid && can_see(ctx, s))
        .map(|s| (pid, s.id))
        .ok_or(ApiError::NotFound("Snippet"))
}

fn list(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let pid = project_scope(ctx)?;
    let caller = if pid.is_none() { Some(ctx.user_id()?) } else { None };
    let mut found: Vec<&Snippet> = ctx
        .store
        .snippets
        .values()
        .filter(|s| s.project_id == pid && can_see(ctx, s))
        .filter(|s| caller.map_or(true, |uid| s.author_id == uid))
        .collect();
    found.sort_by_key(|s| std::cmp::Reverse(s.id));
    let items: Vec<Value> = found.into_iter().map(|s| render(ctx.store, s)).collect();
    ctx.paginate(items)
}

fn public(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.user_id()?;
    let mut found: Vec<&Snippet> = ctx
        .store
        .snippets
        .values()
        .filter(|s| s.project_id.is_none() && s.visibility == Visibility::Public)
        .collect();
    found.sort_by_key(|s| std::cmp::Reverse(s.id));
    let items: Vec<Value> = found.into_iter().map(|s| render(ctx.store, s)).collect();
    ctx.paginate(items)
}

fn all(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    ctx.user_id()?;
    let mut found: Vec<&Snippet> = ctx.store.snippets.values().filter(|s| can_see(ctx, s)).collect();
    found.sort_by_key(|s| std::cmp::Reverse(s.id));
    let items: Vec<Value> = found.into_iter().map(|s| render(ctx.store, s)).collect();
    ctx.paginate(items)
}

fn visibility(ctx: &Ctx<'_>, required: bool) -> Result<Option<Visibility>, ApiError> {
    match ctx.params.str("visibility") {
        Some(v) => Visibility::parse(&v)
            .map(Some)
            .ok_or_else(|| ApiError::Invalid("visibility".into())),
        None if required => Err(ApiError::Missing("visibility".into())),
        None => Ok(None),
    }
}

fn content_param(ctx: &Ctx<'_>) -> Option<String> {
    ctx.params.str("content").or_else(|| ctx.params.str("code"))
}

fn create(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let uid = ctx.user_id()?;
    let pid = project_scope(ctx)?;
    if let Some(pid) = pid {
        ctx.require_level(pid, access::REPORTER)?;
    }
    let title = ctx.params.required_nonblank("title")?;
    let files = match ctx.params.objects("files") {
        Some(given) => {
            if ctx.params.has("content") || ctx.params.has("code") || ctx.params.has("file_name") {
                return Err(ApiError::Param("content, files are mutually exclusive".into()));
            }
            new_files(&given)?
        }
        None => {
            let file_name = ctx.params.required_nonblank("file_name")?;
            let content = content_param(ctx)
                .ok_or_else(|| ApiError::Missing(if pid.is_some() { "code" } else { "content" }.into()))?;
            vec![SnippetFile {
                path: file_name,
                content,
            }]
        }
    };
    let visibility = match visibility(ctx, pid.is_some())? {
        Some(v) => v,
        None => Visibility::Internal,
    };
    let id = ctx.store.insert_snippet(NewSnippet {
        project_id: pid,
        title,
        files,
        description: ctx.params.str("description"),
        visibility,
        author_id: uid,
    });
    let s = ctx.store.snippets.get(&id).ok_or(ApiError::NotFound("Snippet"))?;
    Ok(Reply::created(render(ctx.store, s)))
}

/// Reads `files[]` of a create request: each needs a non-blank `file_path` and a `content`, paths unique.
fn new_files(given: &[Map<String, Value>]) -> Result<Vec<SnippetFile>, ApiError> {
    if given.is_empty() {
        return Err(ApiError::BadRequest("files is empty".into()));
    }
    let mut files: Vec<SnippetFile> = Vec::new();
    for (i, f) in given.iter().enumerate() {
        let path = text(f, "file_path")
            .filter(|p| !p.trim().is_empty())
            .ok_or_else(|| ApiError::BadRequest(format!("files[{i}][file_path] is missing")))?;
        let content = text(f, "content")
            .ok_or_else(|| ApiError::BadRequest(format!("files[{i}][content] is missing")))?;
        if files.iter().any(|f| f.path == path) {
            return Err(ApiError::BadRequest(format!(
                "files[{i}][file_path] is a duplicate"
            )));
        }
        files.push(SnippetFile { path, content });
    }
    Ok(files)
}

fn text(obj: &Map<String, Value>, key: &str) -> Option<String> {
    obj.get(key).and_then(Value::as_str).map(str::to_string)
}

/// Applies the `files[]` actions of an update (`create`, `update`, `delete`, `move`) to a snippet's files.
fn apply_file_actions(files: &mut Vec<SnippetFile>, actions: &[Map<String, Value>]) -> Result<(), ApiError> {
    for (i, a) in actions.iter().enumerate() {
        let action = text(a, "action")
            .ok_or_else(|| ApiError::BadRequest(format!("files[{i}][action] is missing")))?;
        let path = text(a, "file_path").filter(|p| !p.trim().is_empty());
        let previous = text(a, "previous_path").filter(|p| !p.trim().is_empty());
        let content = text(a, "content");
        let position = |files: &Vec<SnippetFile>, p: &Option<String>| {
            p.as_ref().and_then(|p| files.iter().position(|f| &f.path == p))
        };
        match action.as_str() {
            "create" => {
                let path =
                    path.ok_or_else(|| ApiError::BadRequest(format!("files[{i}][file_path] is missing")))?;
                if files.iter().any(|f| f.path == path) {
                    return Err(ApiError::BadRequest(
                        "A file with this name already exists".into(),
                    ));
                }
                files.push(SnippetFile {
                    path,
                    content: content.unwrap_or_default(),
                });
            }
            "update" | "delete" | "move" => {
                let at = position(files, &previous)
                    .or_else(|| position(files, &path))
                    .ok_or_else(|| ApiError::BadRequest("A file with this name doesn't exist".into()))?;
                if action == "delete" {
                    files.remove(at);
                    continue;
                }
                if let Some(file) = files.get_mut(at) {
                    if let Some(p) = path {
                        file.path = p;
                    }
                    if let Some(c) = content {
                        file.content = c;
                    }
                }
            }
            _ => {
                return Err(ApiError::Param(format!(
                    "files[{i}][action] does not have a valid value"
                )))
            }
        }
    }
    if files.is_empty() {
        return Err(ApiError::BadRequest("A snippet needs at least one file".into()));
    }
    Ok(())
}

fn show(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (_, id) = find_snippet(ctx)?;
    let s = ctx.store.snippets.get(&id).ok_or(ApiError::NotFound("Snippet"))?;
    Ok(Reply::ok(render(ctx.store, s)))
}

fn require_owner(ctx: &Ctx<'_>, pid: Option<u64>, id: u64) -> Result<(), ApiError> {
    let uid = ctx.user_id()?;
    let author = ctx.store.snippets.get(&id).map(|s| s.author_id);
    let maintainer = pid.is_some_and(|pid| ctx.level(pid) >= access::MAINTAINER);
    if author == Some(uid) || maintainer || ctx.is_admin() {
        Ok(())
    } else {
        Err(ApiError::Forbidden)
    }
}

fn update(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    // V4 declares `at_least_one_of` (`minimum_update_params`) for PUT `:id/snippets/:snippet_id` and
    // `snippets/:id`: Grape validates it before the endpoint looks the snippet up, so a PUT with no parameters is
    // a 400 even for a snippet that is missing or not the caller's.
    ctx.user_id()?;
    let title = ctx.params.str("title");
    let file_name = ctx.params.str("file_name");
    let content = content_param(ctx);
    let description = ctx.params.str("description");
    let vis = visibility(ctx, false)?;
    let actions = ctx.params.objects("files");
    if title.is_none()
        && file_name.is_none()
        && content.is_none()
        && description.is_none()
        && vis.is_none()
        && actions.is_none()
    {
        return Err(ApiError::Param(
            "title, file_name, content, files, description, visibility are missing, at least one parameter must be provided".into(),
        ));
    }
    let (pid, id) = find_snippet(ctx)?;
    require_owner(ctx, pid, id)?;
    let mut files = ctx
        .store
        .snippets
        .get(&id)
        .map(|s| s.files.clone())
        .unwrap_or_default();
    if let Some(actions) = &actions {
        apply_file_actions(&mut files, actions)?;
    }
    if let Some(first) = files.first_mut() {
        if let Some(v) = file_name {
            first.path = v;
        }
        if let Some(v) = content {
            first.content = v;
        }
    }
    let now = ctx.store.now();
    if let Some(s) = ctx.store.snippets.get_mut(&id) {
        if let Some(v) = title {
            s.title = v;
        }
        s.files = files;
        if let Some(v) = description {
            s.description = Some(v);
        }
        if let Some(v) = vis {
            s.visibility = v;
        }
        s.updated_at = now;
    }
    let s = ctx.store.snippets.get(&id).ok_or(ApiError::NotFound("Snippet"))?;
    Ok(Reply::ok(render(ctx.store, s)))
}

fn delete(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (pid, id) = find_snippet(ctx)?;
    require_owner(ctx, pid, id)?;
    ctx.store.snippets.remove(&id);
    ctx.store
        .notes
        .retain(|_, n| !(n.noteable_kind == NoteableKind::Snippet && n.noteable_id == id));
    Ok(Reply::no_content())
}

fn raw(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (_, id) = find_snippet(ctx)?;
    let s = ctx.store.snippets.get(&id).ok_or(ApiError::NotFound("Snippet"))?;
    Ok(Reply::bytes(
        "text/plain; charset=utf-8",
        s.content().as_bytes().to_vec(),
    ))
}

fn file_raw(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (_, id) = find_snippet(ctx)?;
    let s = ctx.store.snippets.get(&id).ok_or(ApiError::NotFound("Snippet"))?;
    let path = ctx.path_param("file_path");
    let file = s
        .files
        .iter()
        .find(|f| f.path == path)
        .ok_or(ApiError::NotFound("File"))?;
    Ok(Reply::bytes(
        "text/plain; charset=utf-8",
        file.content.as_bytes().to_vec(),
    ))
}

//! Templates: licenses (with `popular`, and `project`/`fullname` filled into the text), `.gitignore` files, CI
//! configuration files and Dockerfiles.

use http::{Method, StatusCode};
use serde_json::Value;

use crate::context::Ctx;
use crate::entities::template::{license as render_license, list_item, template};
use crate::error::ApiError;
use crate::reply::Reply;
use crate::router::{api, Route};
use crate::store::templates::{catalogue, license, LICENSES};

/// Routes of this module.
pub fn routes() -> Vec<Route> {
    let mut routes = vec![
        api(Method::GET, "/templates/licenses", list_licenses),
        api(Method::GET, "/templates/licenses/{name}", show_license),
    ];
    // `gitignores`, `dockerfiles` and `<identifier word>_ci_ymls`; the word is read from the store per request.
    routes.push(api(Method::GET, "/templates/{kind}", list));
    routes.push(api(Method::GET, "/templates/{kind}/{name}", show));
    routes
}

/// The license text with `[year]`, `[fullname]` and `[project]` filled in.
fn fill(ctx: &Ctx<'_>, content: &str) -> String {
    let year = crate::time::format_date(crate::time::now_millis());
    let year = year.get(..4).unwrap_or_default();
    let fullname = ctx
        .params
        .str("fullname")
        .or_else(|| {
            ctx.caller
                .and_then(|id| ctx.store.users.get(&id))
                .map(|u| u.name.clone())
        })
        .unwrap_or_default();
    let mut text = content.replace("[year]", year).replace("[fullname]", &fullname);
    if let Some(project) = ctx.params.str("project") {
        text = text.replace("[project]", &project);
    }
    text
}

fn list_licenses(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let popular = ctx.params.flag("popular", false)?;
    let items: Vec<Value> = LICENSES
        .iter()
        .filter(|l| !popular || l.featured)
        .map(|l| render_license(l, &fill(ctx, l.content)))
        .collect();
    ctx.paginate(items)
}

fn show_license(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let l = license(ctx.path_param("name")).ok_or(ApiError::NotFound("License"))?;
    Ok(Reply::ok(render_license(l, &fill(ctx, l.content))))
}

/// The template kind named by the request path (`/api/v4/templates/<kind>…`).
fn kind_of(ctx: &Ctx<'_>) -> Option<(String, &'static [(&'static str, &'static str)])> {
    catalogue(ctx.path_param("kind"), &ctx.store.identifier_word)
}

fn list(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (_, entries) = kind_of(ctx).ok_or(ApiError::NoRoute)?;
    let items: Vec<Value> = entries.iter().map(|(name, _)| list_item(name)).collect();
    ctx.paginate(items)
}

fn show(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let (singular, entries) = kind_of(ctx).ok_or(ApiError::NoRoute)?;
    let name = ctx.path_param("name");
    let (name, content) = entries
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .ok_or_else(|| ApiError::Status(StatusCode::NOT_FOUND, format!("404 {singular} Not Found")))?;
    Ok(Reply::ok(template(name, content)))
}

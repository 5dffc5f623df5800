//! Which paths under `/-/svcgate/` belong to the pages, and which of those are routes the pages answer.
//!
//! Two questions, two answers, both from the path alone (no store, no backend):
//!
//! - [`is_page_path`]: is this a browser's path? The pages own the home (`/-/svcgate/`) and a few sections, named
//!   by their first segment ([`SECTIONS`]). Dispatch sends these to the pages; every other path under
//!   `/-/svcgate/` (a mistyped probe such as `readyz` or `healthz`, anything under `api/`) is answered 404 in the
//!   service's JSON error shape, which a probe and an API client can read.
//! - [`exists`]: does the pages router answer this method and path? Only then is a signed-out browser sent to sign
//!   in (303); any other path in a section gets the HTML 404 page, signed in or not.
//!
//! [`exists`] lists what the router (`router.rs`: `route`, `project_route`, `settings_route`) matches, by shape:
//! a segment the router reads as a value (a project, an alert's iid, an integration's id) matches any text here,
//! and a value that names nothing is the route's own 404 once signed in. A route added to the router is added
//! here too; the pages tests send each one signed out and expect the sign-in redirect.

use http::Method;

/// The first path segments under `/-/svcgate/` that belong to the pages, besides the home (an empty path).
pub const SECTIONS: &[&str] = &["assets", "sign_in", "sign_out", "oauth", "projects", "admin"];

/// The segments of a path under `/-/svcgate/` as the pages router splits it: trailing slashes dropped, so
/// `/-/svcgate/` is `[""]` and `/-/svcgate/projects/` is `["projects"]`.
pub fn segments(rest: &str) -> Vec<&str> {
    rest.trim_end_matches('/').split('/').collect()
}

/// Whether `rest` (the path after `/-/svcgate/`) is a browser's path: the home or a path in one of [`SECTIONS`].
pub fn is_page_path(rest: &str) -> bool {
    match segments(rest).as_slice() {
        [""] => true,
        [first, ..] => SECTIONS.contains(first),
        [] => false,
    }
}

/// Whether the pages router answers `method` at `segments` (see [`segments`]).
pub fn exists(method: &Method, segments: &[&str]) -> bool {
    let (get, post) = (method == Method::GET, method == Method::POST);
    match segments {
        [""] | ["projects"] | ["admin", "v3-usage" | "v3-usage.csv" | "v3-clients"] => get,
        ["admin", "v3-clients", _client] => get,
        ["assets", "style.css" | "app.js" | "icon.svg"] | ["oauth", "start" | "callback"] => get,
        ["sign_in"] => get || post,
        ["sign_out"] => post,
        ["projects", _project, rest @ ..] => project_route_exists(get, post, rest),
        _ => false,
    }
}

/// The routes of one project's pages, after `/-/svcgate/projects/:project/`.
fn project_route_exists(get: bool, post: bool, rest: &[&str]) -> bool {
    match rest {
        ["alerts"] | ["alerts", _] | ["environments"] | ["settings", "operations"] => get,
        ["alerts", _, "status"] => post,
        ["settings", "operations", "integrations" | "test" | "incidents"] => post,
        ["settings", "operations", "integrations", _] => get || post,
        ["settings", "operations", "integrations", _, "reset_token" | "delete"] => get || post,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answered(method: Method, rest: &str) -> bool {
        is_page_path(rest) && exists(&method, &segments(rest))
    }

    #[test]
    fn browser_paths_are_the_home_and_the_pages_sections_and_nothing_else() {
        for rest in [
            "",
            "projects",
            "projects/",
            "projects/1/nope",
            "admin/nope",
            "oauth/x",
            "assets/x.png",
        ] {
            assert!(is_page_path(rest), "{rest}");
        }
        for rest in [
            "readyz",
            "healthz",
            "api/nope",
            "api/projects/1/x",
            "status",
            "/evil",
            "nope/projects",
        ] {
            assert!(!is_page_path(rest), "{rest}");
        }
    }

    #[test]
    fn the_routes_the_router_answers_exist_for_their_methods_only() {
        for (method, rest) in [
            (Method::GET, ""),
            (Method::GET, "sign_in"),
            (Method::POST, "sign_in"),
            (Method::POST, "sign_out"),
            (Method::GET, "oauth/callback"),
            (Method::GET, "admin/v3-usage.csv"),
            (Method::GET, "admin/v3-clients"),
            (Method::GET, "admin/v3-clients/0123456789abcdef.md"),
            (Method::GET, "projects/group%2Fapp/alerts/3"),
            (Method::POST, "projects/7/alerts/3/status"),
            (Method::GET, "projects/7/settings/operations/"),
            (
                Method::POST,
                "projects/7/settings/operations/integrations/2/delete",
            ),
        ] {
            assert!(answered(method.clone(), rest), "{method} {rest}");
        }
        for (method, rest) in [
            (Method::GET, "sign_out"),
            (Method::HEAD, "projects"),
            (Method::GET, "projects/7"),
            (Method::GET, "projects/7/alerts/3/status"),
            (Method::GET, "projects/7/nope"),
            (Method::GET, "projects/7/settings/operations/nope"),
            (Method::GET, "admin/nope"),
            (Method::GET, "readyz"),
        ] {
            assert!(!answered(method.clone(), rest), "{method} {rest}");
        }
    }
}

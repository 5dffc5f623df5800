//! The route handlers, one module per resource. Each module exposes `routes()`; `all()` collects them.

mod branches;
mod commits;
mod groups;
mod issues;
mod labels;
mod members;
mod merge_requests;
mod notes;
mod oauth;
mod projects;
mod users;
mod version;

use crate::router::Route;

/// Every route the simulator answers.
pub fn all() -> Vec<Route> {
    [
        version::routes(),
        oauth::routes(),
        users::routes(),
        groups::routes(),
        projects::routes(),
        members::routes(),
        issues::routes(),
        merge_requests::routes(),
        notes::routes(),
        labels::routes(),
        branches::routes(),
        commits::routes(),
    ]
    .into_iter()
    .flatten()
    .collect()
}

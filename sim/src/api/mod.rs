//! The route handlers, one module per resource. Each module exposes `routes()`; `all()` collects them.

mod awards;
mod branches;
mod ci_settings;
mod commit_extras;
mod commits;
mod files;
mod groups;
mod issuables;
mod issues;
mod labels;
mod members;
mod merge_requests;
mod mr_extras;
mod notes;
mod oauth;
mod pipelines;
mod project_extras;
mod projects;
mod repository;
mod snippets;
mod tags;
mod todos;
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
        issuables::routes(),
        mr_extras::routes(),
        files::routes(),
        tags::routes(),
        repository::routes(),
        commit_extras::routes(),
        project_extras::routes(),
        pipelines::routes(),
        ci_settings::routes(),
        awards::routes(),
        todos::routes(),
        snippets::routes(),
    ]
    .into_iter()
    .flatten()
    .collect()
}

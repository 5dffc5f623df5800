//! The route handlers, one module per resource. Each module exposes `routes()`; `all()` collects them.

mod access_requests;
mod awards;
mod boards;
mod branches;
mod ci_settings;
mod commit_extras;
mod commits;
mod deploy_keys;
mod discussions;
mod files;
mod groups;
mod hooks;
mod instance;
mod issuables;
pub(crate) mod issues;
mod labels;
mod members;
pub(crate) mod merge_requests;
mod mr_extras;
mod notes;
mod notification_settings;
mod oauth;
mod pipelines;
mod project_extras;
mod projects;
mod protected_branches;
mod releases;
mod repository;
mod runners;
mod services;
mod settings;
mod sidekiq_metrics;
mod snippets;
mod tags;
mod templates;
mod todos;
mod user_keys;
mod users;
pub(crate) mod version;

use crate::router::Route;

/// Every route the simulator answers.
pub fn all() -> Vec<Route> {
    [
        version::routes(),
        instance::routes(),
        oauth::routes(),
        users::routes(),
        groups::routes(),
        projects::routes(),
        members::routes(),
        access_requests::routes(),
        issues::routes(),
        merge_requests::routes(),
        notes::routes(),
        discussions::routes(),
        labels::routes(),
        branches::routes(),
        protected_branches::routes(),
        commits::routes(),
        issuables::routes(),
        mr_extras::routes(),
        files::routes(),
        tags::routes(),
        releases::routes(),
        repository::routes(),
        commit_extras::routes(),
        project_extras::routes(),
        pipelines::routes(),
        ci_settings::routes(),
        awards::routes(),
        todos::routes(),
        snippets::routes(),
        deploy_keys::routes(),
        hooks::routes(),
        user_keys::routes(),
        services::routes(),
        templates::routes(),
        settings::routes(),
        sidekiq_metrics::routes(),
        runners::routes(),
        boards::routes(),
        notification_settings::routes(),
    ]
    .into_iter()
    .flatten()
    .collect()
}

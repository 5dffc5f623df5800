//! The project list: the projects the signed-in person may see, where they land after signing in.

use http::StatusCode;

use super::call::Call;
use super::render::{error_page, redirect, render, user_view, Page};
use super::session::Session;
use super::views::{ProjectLink, Projects};
use super::Pages;

impl Pages {
    /// The project list.
    pub(super) async fn projects(&self, call: &Call<'_>, session: &Session) -> Page {
        let Some(credentials) = session.credentials() else {
            return redirect("/-/svcgate/sign_in");
        };
        let projects = match call.service.access.projects(&credentials).await {
            Ok(projects) => projects,
            Err(error) => return error_page(Some(session), &error.into()),
        };
        render(
            StatusCode::OK,
            &Projects {
                user: user_view(session),
                project: None,
                notice: None,
                error: None,
                projects: projects
                    .into_iter()
                    .map(|(id, path)| ProjectLink { id, path })
                    .collect(),
            },
        )
    }
}

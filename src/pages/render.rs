//! The pages' responses: a rendered template with its headers, a redirect, a static asset, the message and
//! error pages (the pages' one mapping of a [`ManageError`]), and the parts every page shows (the signed-in
//! person, the project's navigation, the notice after a redirect).

use askama::Template;
use http::{HeaderValue, Response, StatusCode};

use super::session::Session;
use super::views::{Message, ProjectView, Section, UserView};
use crate::alerts::manage::ManageError;
use crate::backend::access::ProjectAccess;
use crate::http::body::{self, Body};

/// A page's response.
pub(super) type Page = Response<Body>;

/// The page `page` rendered, answered with `status`; a template that fails answers the internal error.
pub(super) fn render(status: StatusCode, page: &impl Template) -> Page {
    match page.render() {
        Ok(html) => {
            let mut response = Response::new(body::full(html));
            *response.status_mut() = status;
            response.headers_mut().insert(
                http::header::CONTENT_TYPE,
                HeaderValue::from_static("text/html; charset=utf-8"),
            );
            // No external requests, no framing, no inline script: the pages need none of them.
            response.headers_mut().insert(
                http::header::CONTENT_SECURITY_POLICY,
                HeaderValue::from_static("default-src 'self'; frame-ancestors 'none'; form-action 'self'"),
            );
            response
        }
        Err(error) => crate::alerts::api::error_response(&ManageError::Internal(format!(
            "a page could not be rendered: {error}"
        ))),
    }
}

/// A 303 to `location`.
pub(super) fn redirect(location: &str) -> Page {
    let mut response = Response::new(body::empty());
    *response.status_mut() = StatusCode::SEE_OTHER;
    if let Ok(value) = HeaderValue::from_str(location) {
        response.headers_mut().insert(http::header::LOCATION, value);
    }
    response
}

/// A static file of the pages, cached for an hour.
pub(super) fn asset(content_type: &'static str, text: &'static str) -> Page {
    let mut response = Response::new(body::full(text));
    response
        .headers_mut()
        .insert(http::header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response.headers_mut().insert(
        http::header::CACHE_CONTROL,
        HeaderValue::from_static("max-age=3600"),
    );
    response
}

/// The signed-in person as the page header shows them.
pub(super) fn user_view(session: &Session) -> Option<UserView> {
    Some(UserView {
        username: session.username.clone(),
        csrf: session.csrf.clone(),
        admin: session.admin,
    })
}

/// A page with one heading and one paragraph, answered with `status`.
pub(super) fn message(
    session: Option<&Session>,
    status: StatusCode,
    id: &'static str,
    heading: &str,
    text: &str,
) -> Page {
    render(
        status,
        &Message {
            user: session.and_then(user_view),
            project: None,
            notice: None,
            error: None,
            section_id: id,
            heading: heading.to_owned(),
            text: text.to_owned(),
        },
    )
}

/// The page for a failed operation: the error's status and message (for a refused role, the role it needs).
pub(super) fn error_page(session: Option<&Session>, error: &ManageError) -> Page {
    error.log();
    let status = error.status();
    let (id, heading) = match error {
        ManageError::FormExpired => ("failure", "Form expired"),
        ManageError::TooLarge => ("failure", "Too large"),
        _ if status == StatusCode::FORBIDDEN => ("forbidden", "Not allowed"),
        _ if status == StatusCode::NOT_FOUND => ("not-found", "Not found"),
        _ => ("failure", "That did not work"),
    };
    let text = match error {
        ManageError::Forbidden { needs } => format!("This needs the {} role on this project.", needs.name()),
        other => other.message(),
    };
    message(session, status, id, heading, &text)
}

/// After a change: on to `then` when it was made, else the error's page.
pub(super) fn done<T>(session: &Session, outcome: Result<T, ManageError>, then: &str) -> Page {
    match outcome {
        Ok(_) => redirect(then),
        Err(error) => error_page(Some(session), &error),
    }
}

/// The notice a page shows after a redirect that names `code` in its query.
pub(super) fn notice_text(code: Option<&str>) -> Option<String> {
    let text = match code? {
        "saved" => "The integration was saved.",
        "created" => "The integration was saved. Give its address and key to the senders.",
        "tested" => "The integration was saved and the test alert was sent.",
        "status" => "The alert's status was changed.",
        "key-reset" => "The key was reset: give the new key to the senders.",
        "deleted" => "The integration was deleted.",
        "incidents" => "The incident settings were saved.",
        _ => return None,
    };
    Some(text.to_owned())
}

/// The project in the navigation; the page is in `section`, and is the section's own page when `section_page`.
pub(super) fn project_view(
    access: &ProjectAccess,
    base: &str,
    section: Section,
    section_page: bool,
) -> ProjectView {
    ProjectView {
        path: access.project_path.clone(),
        base: base.to_owned(),
        section,
        section_page,
    }
}

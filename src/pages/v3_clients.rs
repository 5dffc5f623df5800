//! The migration report's pages (admins only): `/-/svcgate/admin/v3-clients` lists every V3 client,
//! `…/v3-clients/:id` shows one client's report and `…/v3-clients/:id.md` downloads it as Markdown.

use http::{HeaderValue, Response, StatusCode};

use super::call::Call;
use super::render::{error_page, render, user_view, Page};
use super::session::Session;
use super::views::{V3Client, V3Clients};
use super::Pages;
use crate::alerts::manage::ManageError;
use crate::http::body;
use crate::rewrite::migration::{self, ClientReport};

impl Pages {
    /// The V3 clients page, or one client's report when `id` is given (its Markdown when it ends in `.md`).
    pub(super) async fn v3_clients(&self, call: &Call<'_>, session: &Session, id: Option<&str>) -> Page {
        if !session.admin {
            return error_page(Some(session), &ManageError::AdminOnly);
        }
        let rows = match call.usage.report().await {
            Ok(rows) => rows,
            Err(error) => return error_page(Some(session), &error.into()),
        };
        let clients = migration::report(
            &rows,
            call.table,
            time::OffsetDateTime::now_utc(),
            call.usage.retired_after(),
        );
        let Some(id) = id else {
            return render(
                StatusCode::OK,
                &V3Clients {
                    user: user_view(session),
                    project: None,
                    notice: None,
                    error: None,
                    clients: clients.iter().map(ClientReport::summary).collect(),
                    folded: migration::folded(&rows).into_iter().collect(),
                },
            );
        };
        let (id, as_markdown) = match id.strip_suffix(".md") {
            Some(id) => (id, true),
            None => (id, false),
        };
        let Some(client) = clients.into_iter().find(|client| client.facts.id == id) else {
            return error_page(Some(session), &ManageError::ClientNotFound);
        };
        if as_markdown {
            let mut response = Response::new(body::full(migration::markdown(&client)));
            response.headers_mut().insert(
                http::header::CONTENT_TYPE,
                HeaderValue::from_static("text/markdown; charset=utf-8"),
            );
            return response;
        }
        render(
            StatusCode::OK,
            &V3Client {
                user: user_view(session),
                project: None,
                notice: None,
                error: None,
                client,
            },
        )
    }
}

//! The administrators' page: which V3 routes were called, how often and with what errors, as a page or a CSV
//! file. Only an administrator of the svc server may open it.

use http::{HeaderValue, Response, StatusCode};

use super::call::Call;
use super::render::{error_page, render, user_view, Page};
use super::session::Session;
use super::views::V3Usage;
use super::Pages;
use crate::alerts::manage::ManageError;
use crate::http::body;

impl Pages {
    /// The V3 usage page, or its CSV file when `as_csv`.
    pub(super) async fn v3_usage(&self, call: &Call<'_>, session: &Session, as_csv: bool) -> Page {
        if !session.admin {
            return error_page(Some(session), &ManageError::AdminOnly);
        }
        let rows = match call.usage.report().await {
            Ok(rows) => rows,
            Err(error) => return error_page(Some(session), &error.into()),
        };
        let now = time::OffsetDateTime::now_utc();
        let retired_after = call.usage.retired_after();
        let summary = crate::rewrite::retirement::summary(&rows, now, retired_after);
        let routes =
            crate::rewrite::usage::by_route(rows, call.query("sort").unwrap_or("calls"), now, retired_after);
        if as_csv {
            return match crate::rewrite::usage::csv(&routes) {
                Ok(text) => {
                    let mut response = Response::new(body::full(text));
                    response.headers_mut().insert(
                        http::header::CONTENT_TYPE,
                        HeaderValue::from_static("text/csv; charset=utf-8"),
                    );
                    response.headers_mut().insert(
                        http::header::CONTENT_DISPOSITION,
                        HeaderValue::from_static("attachment; filename=\"svcgate-v3-usage.csv\""),
                    );
                    response
                }
                Err(error) => error_page(
                    Some(session),
                    &ManageError::Internal(format!("the V3 usage CSV could not be written: {error}")),
                ),
            };
        }
        render(
            StatusCode::OK,
            &V3Usage {
                user: user_view(session),
                project: None,
                notice: None,
                error: None,
                summary,
                routes,
            },
        )
    }
}

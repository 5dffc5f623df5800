//! The pages' router: reads a request (its form up to a limit), serves the static assets and the sign-in pages,
//! sends a signed-out browser to sign in, checks the CSRF token of every form, and hands the request to its page.
//! Which routes exist is `routes.rs`, which this match must agree with.

use http::{Method, Request};
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;

use super::call::Call;
use super::render::{asset, error_page, redirect, Page};
use super::session::Session;
use super::{icon, routes, sign_in, Pages, PREFIX};
use crate::alerts::manage::{self, ManageError};
use crate::alerts::AlertService;
use crate::backend::access::{ProjectAccess, Role};
use crate::rewrite::table::RuleTable;
use crate::rewrite::usage::UsageRecorder;
use crate::util::url_parts::parse_pairs;

/// The largest form a page accepts.
const MAX_FORM_BYTES: usize = 1 << 20;

impl Pages {
    /// Answers one page request.
    pub async fn handle(
        &self,
        service: &AlertService,
        usage: &UsageRecorder,
        table: &RuleTable,
        request: Request<Incoming>,
        secure: bool,
        origin: String,
    ) -> Page {
        let (parts, incoming) = request.into_parts();
        let form = if parts.method == Method::POST {
            match Limited::new(incoming, MAX_FORM_BYTES).collect().await {
                Ok(collected) => parse_pairs(&collected.to_bytes()),
                Err(_) => return error_page(None, &ManageError::TooLarge),
            }
        } else {
            Vec::new()
        };
        let call = Call {
            method: parts.method.clone(),
            path: parts.uri.path().to_owned(),
            query: parse_pairs(parts.uri.query().unwrap_or("").as_bytes()),
            headers: parts.headers,
            form,
            secure,
            service,
            usage,
            table,
            origin,
        };
        self.route(&call).await
    }

    /// The page a request names, once its form is read.
    async fn route(&self, call: &Call<'_>) -> Page {
        let segments = routes::segments(call.path.strip_prefix(PREFIX).unwrap_or(""));
        match (&call.method, segments.as_slice()) {
            (&Method::GET, ["assets", "style.css"]) => {
                return asset("text/css", include_str!("../../templates/style.css"))
            }
            (&Method::GET, ["assets", "app.js"]) => {
                return asset("text/javascript", include_str!("../../templates/app.js"))
            }
            (&Method::GET, ["assets", "icon.svg"]) => return icon(),
            (&Method::GET, ["sign_in"]) => return self.sign_in_form(call, None),
            (&Method::POST, ["sign_in"]) => return self.sign_in(call).await,
            (&Method::GET, ["oauth", "start"]) => return self.oauth_start(call).await,
            (&Method::GET, ["oauth", "callback"]) => return self.oauth_callback(call).await,
            _ => {}
        }
        if !routes::exists(&call.method, &segments) {
            // Not a page: the 404 page, for a signed-out browser too (signing in would not make it one).
            let session = self.sessions.of(&call.headers).await;
            return error_page(session.as_ref(), &ManageError::NoRoute);
        }
        let Some(mut session) = self.sessions.of(&call.headers).await else {
            // A signed-out person who followed a link comes back to it after signing in.
            let wanted = (call.method == Method::GET).then(|| call.path_and_query());
            return redirect(&sign_in::sign_in_address(wanted.as_deref()));
        };
        if call.method == Method::POST && call.field("csrf") != Some(session.csrf.as_str()) {
            return error_page(Some(&session), &ManageError::FormExpired);
        }
        // Admins get a link to the V3 usage page in the header, and only they may open it; the answer is cached
        // with the caller's rights.
        session.admin = match session.credentials() {
            Some(credentials) => matches!(call.service.access.user(&credentials).await, Ok((_, true))),
            None => false,
        };
        match (&call.method, segments.as_slice()) {
            (&Method::GET, [""]) => redirect("/-/svcgate/projects"),
            (&Method::POST, ["sign_out"]) => self.sign_out(call).await,
            (&Method::GET, ["projects"]) => self.projects(call, &session).await,
            (&Method::GET, ["admin", "v3-usage"]) => self.v3_usage(call, &session, false).await,
            (&Method::GET, ["admin", "v3-usage.csv"]) => self.v3_usage(call, &session, true).await,
            (&Method::GET, ["admin", "v3-clients"]) => self.v3_clients(call, &session, None).await,
            (&Method::GET, ["admin", "v3-clients", id]) => self.v3_clients(call, &session, Some(id)).await,
            (_, ["projects", project, rest @ ..]) => {
                let project = crate::util::url_parts::decode(project);
                let credentials = match session.credentials() {
                    Some(credentials) => credentials,
                    None => return redirect("/-/svcgate/sign_in"),
                };
                let access = match call.service.access.project(&credentials, &project).await {
                    Ok(access) => access,
                    Err(error) => return error_page(Some(&session), &error.into()),
                };
                self.project_route(call, &session, &access, rest).await
            }
            _ => error_page(Some(&session), &ManageError::NoRoute),
        }
    }

    /// One project's pages, after `/-/svcgate/projects/:project/`.
    async fn project_route(
        &self,
        call: &Call<'_>,
        session: &Session,
        access: &ProjectAccess,
        rest: &[&str],
    ) -> Page {
        let base = format!("/-/svcgate/projects/{}", access.project_id);
        match (&call.method, rest) {
            (&Method::GET, ["alerts"]) => self.alert_list(call, session, access, &base).await,
            (&Method::GET, ["alerts", iid]) => self.alert_page(call, session, access, &base, iid).await,
            (&Method::POST, ["alerts", iid, "status"]) => {
                self.change_status(call, session, access, &base, iid).await
            }
            (&Method::GET, ["environments"]) => self.environments(call, session, access, &base).await,
            (_, ["settings", "operations", more @ ..]) => {
                // Every form of Settings › Operations needs the Maintainer role, the test alert's too.
                if let Err(error) = manage::require(access, Role::Maintainer) {
                    return error_page(Some(session), &error);
                }
                self.settings_route(call, session, access, &base, more).await
            }
            _ => error_page(Some(session), &ManageError::NoRoute),
        }
    }

    /// Settings › Operations and its integrations, after `/-/svcgate/projects/:project/settings/operations/`.
    async fn settings_route(
        &self,
        call: &Call<'_>,
        session: &Session,
        access: &ProjectAccess,
        base: &str,
        rest: &[&str],
    ) -> Page {
        match (&call.method, rest) {
            (&Method::GET, []) => self.settings_page(call, session, access, base).await,
            (&Method::POST, ["integrations"]) => self.create_integration(call, session, access, base).await,
            (&Method::POST, ["test"]) => self.test_alert(call, session, access, base).await,
            (&Method::POST, ["incidents"]) => self.save_incident_settings(call, session, access, base).await,
            (&Method::GET, ["integrations", id]) => {
                self.integration_page(call, session, access, base, id, super::integrations::Shown::Plain)
                    .await
            }
            (&Method::POST, ["integrations", id]) => {
                self.update_integration(call, session, access, base, id).await
            }
            (&Method::GET, ["integrations", id, "reset_token"]) => {
                self.confirm_reset_key(call, session, access, base, id)
            }
            (&Method::GET, ["integrations", id, "delete"]) => {
                self.confirm_delete(call, session, access, base, id)
            }
            (&Method::POST, ["integrations", id, "reset_token"]) => {
                self.reset_key(call, session, access, base, id).await
            }
            (&Method::POST, ["integrations", id, "delete"]) => {
                self.delete_integration(call, session, access, base, id).await
            }
            _ => error_page(Some(session), &ManageError::NoRoute),
        }
    }
}

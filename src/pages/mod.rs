//! The people-facing pages under `/-/svcgate/`: sign-in, the Alert Management list, alert pages,
//! Settings › Operations › Alerts and the environments dashboard.
//!
//! Server-rendered HTML from askama templates (`templates/`), working without JavaScript (one small script adds
//! copy buttons). Every page asks the backend, with the signed-in person's token, what they may do, and reads and
//! changes alerts and integrations through the same operations as the management API
//! ([`manage`](crate::alerts::manage)), so the pages enforce the same roles. A failed operation is shown by
//! `error_page` (`render.rs`), the pages' one mapping of a [`ManageError`](crate::alerts::manage::ManageError).
//! Every form carries the session's CSRF token; sign-in uses a double-submit cookie.
//!
//! The files, from the bottom up (each uses only those above it, and this file's [`Pages`] and [`PREFIX`]):
//!
//! - `routes.rs`: which paths are the pages' and which routes exist, from the path alone;
//! - `format.rs`: how times, counts and payload fields read; `views.rs`: the templates and their view types;
//! - `oauth.rs`: the OAuth client of the svc server; `session.rs`: signed-in sessions kept in the store;
//! - `call.rs`: the request in hand; `render.rs`: responses, the error page and the parts every page shows;
//! - one file per page family: `sign_in.rs` (signing in and out), `projects.rs` (the project list),
//!   `alerts.rs` (the alert list, an alert's page, the environments dashboard), `integrations.rs`
//!   (Settings › Operations and the integrations' pages) `admin.rs` (the V3 usage page) and `v3_clients.rs` (the
//!   per-client V3 migration report);
//! - `router.rs`: reads the request, checks the session and CSRF token, and hands it to its page.
//!
//! The pages may use the alert intake's management operations and service (`alerts`), the backend's access
//! checks (`access`), the store, the secret box, the V3 usage recorder, the backend connection (for OAuth) and
//! the helpers (`body`, `url_parts`, `time_format`). The HTTP front door (`server`) hands them requests.

mod admin;
mod alerts;
mod call;
pub mod format;
mod integrations;
pub mod oauth;
mod projects;
mod render;
mod router;
pub mod routes;
pub mod session;
pub mod sign_in;
mod v3_clients;
pub mod views;

use std::sync::Arc;
use std::time::Duration;

use self::oauth::OAuthClient;
use self::render::{asset, Page};
use self::session::Sessions;
use crate::store::Store;
use crate::util::secret::SecretBox;

/// The prefix of the pages.
pub const PREFIX: &str = "/-/svcgate/";

/// What the pages share.
pub struct Pages {
    sessions: Sessions,
    store: Arc<dyn Store>,
    secret: Arc<SecretBox>,
    oauth: Option<Arc<OAuthClient>>,
    /// Most OAuth sign-ins pending at once (`oauth_pending_sign_ins`).
    pending_sign_ins: u64,
}

/// The limits of signing in through the svc server's OAuth.
#[derive(Debug, Clone, Copy)]
pub struct SignInLimits {
    /// How long before an OAuth token expires it is refreshed (`oauth_refresh_margin`).
    pub refresh_margin: Duration,
    /// How long a replica waits before it tries a failed refresh again (`oauth_refresh_retry`).
    pub refresh_retry: Duration,
    /// The longest one refresh call to the server may take, connection, head and body; the claim on a refresh
    /// lasts a little longer (see `session.rs`).
    pub refresh_timeout: Duration,
    /// Most sign-ins pending at once (`oauth_pending_sign_ins`).
    pub pending_sign_ins: u64,
}

/// The pages' options: how long a session lasts and how people sign in through the svc server.
#[derive(Debug, Clone)]
pub struct PageSettings {
    /// How long a page session lasts after sign-in (`session_ttl`).
    pub session_ttl: Duration,
    /// svcgate's OAuth application on the server, when people sign in through it (`oauth_client_id`, …).
    pub oauth: Option<oauth::OAuthSettings>,
    /// The limits of signing in through the server's OAuth.
    pub sign_in: SignInLimits,
}

impl Pages {
    /// Pages with sessions lasting `session_ttl`, signing in through `oauth` when it is set up (OAuth tokens
    /// refreshed `refresh_margin` before they expire, one replica at a time for at most `refresh_lease`) and by
    /// personal access token always.
    pub fn new(
        session_ttl: Duration,
        store: Arc<dyn Store>,
        secret: Arc<SecretBox>,
        oauth: Option<OAuthClient>,
        limits: SignInLimits,
    ) -> Self {
        let oauth = oauth.map(Arc::new);
        Pages {
            sessions: Sessions::new(
                session_ttl,
                Arc::clone(&store),
                Arc::clone(&secret),
                oauth.clone(),
                limits.refresh_margin,
                limits.refresh_timeout,
                limits.refresh_retry,
            ),
            store,
            secret,
            oauth,
            pending_sign_ins: limits.pending_sign_ins,
        }
    }
}

/// The pages' icon (`<link rel="icon">` in every page), also what `serve --dev` answers `/favicon.ico` with.
pub fn icon() -> Page {
    asset("image/svg+xml", include_str!("../../templates/icon.svg"))
}

//! Signing in and out of the pages: through the svc server's OAuth 2 provider (authorization code with PKCE), or
//! by pasting a personal access token (for automation and `--dev`).
//!
//! The OAuth flow: `GET /-/svcgate/oauth/start?return_to=…` makes a random `state` and a PKCE verifier, keeps
//! them in the store (the state by its hash, the verifier sealed, with the return-to path and a 10-minute expiry,
//! so any replica can finish the sign-in; at most `oauth_pending_sign_ins` at once, since anyone may start one:
//! past it the start answers 503 with `Retry-After` and stores nothing) and in a short-lived cookie bound to this
//! browser, and sends the browser
//! to the server's `/oauth/authorize`. The callback refuses any state not of the form svcgate issues, checks that
//! the browser's cookie holds the same state, then takes the store row once (a replayed state finds nothing),
//! exchanges the code with the verifier, asks the server
//! who the token belongs to, and opens the session. Only a path of the pages is accepted as return-to (no open
//! redirect). Every failure answers a page in the pages' error shape.

use std::time::Duration;

use askama::Template;
use http::{HeaderValue, StatusCode};

use super::call::Call;
use super::oauth::{OAuthError, Pkce};
use super::render::{message, redirect, render, Page};
use super::session::{cookie, hash, set_cookie, COOKIE, CSRF_COOKIE};
use super::views::SignIn;
use super::{Pages, PREFIX};
use crate::backend::access::Credentials;
use crate::store::OAuthStateRecord;
use crate::util::secret::random_hex;
use crate::util::time_format::format_time;
use crate::util::url_parts::encode_pairs;

/// How long the sign-in form's CSRF cookie lives.
const SIGN_IN_WINDOW: Duration = Duration::from_secs(3600);
/// How long a person has to approve the sign-in on the server (the provider keeps its codes 10 minutes too).
const OAUTH_WINDOW: Duration = Duration::from_secs(600);
/// How long a browser is told to wait when too many sign-ins are pending (the oldest lapse within `OAUTH_WINDOW`).
const FULL_RETRY_AFTER: Duration = Duration::from_secs(60);
/// The longest return-to path kept.
const MAX_RETURN_TO: usize = 2048;
/// Where people land after signing in when they came from nowhere in particular.
const HOME: &str = "/-/svcgate/projects";
/// The prefix of the cookie that binds a pending OAuth sign-in to the browser (one cookie per sign-in, so that
/// two tabs signing in at once do not undo each other).
const STATE_COOKIE_PREFIX: &str = "svcgate_oauth_";

/// The length of the `state` svcgate issues: 32 random bytes in lowercase hex.
const STATE_LEN: usize = 64;

/// Whether `state` has exactly the form svcgate issues (64 lowercase hex digits); anything else is refused before
/// it reaches a cookie name or the store.
fn is_issued_state(state: &str) -> bool {
    state.len() == STATE_LEN
        && state
            .bytes()
            .all(|byte| byte.is_ascii_digit() || (b'a'..=b'f').contains(&byte))
}

/// The state cookie's name for a state value (one svcgate issued: see `is_issued_state`).
fn state_cookie(state: &str) -> String {
    format!("{STATE_COOKIE_PREFIX}{}", state.get(..12).unwrap_or(state))
}

/// The state cookie: `SameSite=Lax`, unlike the session's, because the browser must send it on the provider's
/// redirect back, a navigation that comes from the server's site.
fn set_state_cookie(state: &str, value: &str, max_age: Duration, secure: bool) -> String {
    format!(
        "{}={value}; Path={}oauth/; HttpOnly; SameSite=Lax; Max-Age={}{}",
        state_cookie(state),
        PREFIX,
        max_age.as_secs(),
        if secure { "; Secure" } else { "" }
    )
}

/// How many rounds of percent-decoding a return-to path may need before it stops changing (a path encoded more
/// deeply than this is refused rather than trusted).
const MAX_DECODE_ROUNDS: usize = 4;

/// `path` if it is a page of svcgate's own to go back to after signing in: a local path under the pages' prefix
/// (never another host, a scheme-relative `//host`, a dot segment that a browser would resolve out of the pages,
/// a fragment, or the sign-in pages themselves), else `None`.
pub fn local_return_to(path: &str) -> Option<String> {
    let acceptable = path.len() <= MAX_RETURN_TO
        && path.starts_with(PREFIX)
        && !path.contains('#')
        && !path.chars().any(char::is_control)
        && path_part_is_plain(path.split('?').next().unwrap_or(path));
    acceptable.then(|| path.to_owned())
}

/// Whether the path part of a return-to (before its query) stays a plain path of the pages however often it is
/// percent-decoded: no `.` or `..` segment (the browser resolves them, `/-/svcgate/../../x` is `/x`), no
/// backslash (read as a slash), no empty segment (`//host`), no control character, and not a sign-in page.
fn path_part_is_plain(raw: &str) -> bool {
    let mut path = raw.to_owned();
    for _ in 0..=MAX_DECODE_ROUNDS {
        let plain = path.starts_with(PREFIX)
            && !path.contains('\\')
            && !path.contains("//")
            && !path.chars().any(char::is_control)
            && !path.split('/').any(|segment| segment == "." || segment == "..")
            && !path.starts_with("/-/svcgate/sign_in")
            && !path.starts_with("/-/svcgate/oauth/")
            && !path.starts_with("/-/svcgate/sign_out");
        if !plain {
            return false;
        }
        let decoded = crate::util::url_parts::decode(&path);
        if decoded == path {
            return true;
        }
        path = decoded;
    }
    false
}

/// The sign-in page's address, remembering where the person was going.
pub fn sign_in_address(return_to: Option<&str>) -> String {
    // The project list is where a sign-in lands anyway: no need to say so.
    match return_to
        .and_then(local_return_to)
        .filter(|path| path != HOME && path != PREFIX)
    {
        Some(path) => format!(
            "{PREFIX}sign_in?{}",
            encode_pairs(&[("return_to".to_owned(), path)])
        ),
        None => format!("{PREFIX}sign_in"),
    }
}

fn with_cookie(mut page: Page, value: &str) -> Page {
    if let Ok(value) = HeaderValue::from_str(value) {
        page.headers_mut().append(http::header::SET_COOKIE, value);
    }
    page
}

/// The page that goes on to `target` once the session cookie is set. A redirect would not do: the browser came
/// from the server's site, and a `SameSite=Strict` cookie is not sent on the rest of a navigation that began
/// there; a page of svcgate's own that moves on starts a same-site navigation.
#[derive(Template)]
#[template(path = "signed_in.html")]
struct SignedIn {
    /// Where to go.
    target: String,
    /// Who signed in.
    username: String,
}

impl Pages {
    /// The return-to path a request names (query or form), if acceptable.
    fn return_to(call: &Call<'_>) -> Option<String> {
        call.query("return_to")
            .or_else(|| call.field("return_to"))
            .and_then(local_return_to)
    }

    pub(super) fn sign_in_form(&self, call: &Call<'_>, error: Option<String>) -> Page {
        let csrf = cookie(&call.headers, CSRF_COOKIE)
            .filter(|value| value.len() == 32)
            .or_else(|| random_hex(16).ok())
            .unwrap_or_default();
        let return_to = Self::return_to(call).unwrap_or_default();
        let page = render(
            if error.is_some() {
                StatusCode::UNAUTHORIZED
            } else {
                StatusCode::OK
            },
            &SignIn {
                user: None,
                project: None,
                notice: None,
                error,
                csrf: csrf.clone(),
                oauth: self.oauth.is_some(),
                return_to,
            },
        );
        with_cookie(page, &set_cookie(CSRF_COOKIE, &csrf, SIGN_IN_WINDOW, call.secure))
    }

    /// Signs in with a pasted personal access token.
    pub(super) async fn sign_in(&self, call: &Call<'_>) -> Page {
        let expected = cookie(&call.headers, CSRF_COOKIE);
        if expected.is_none() || call.field("csrf").map(str::to_owned) != expected {
            return self.sign_in_form(
                call,
                Some("The sign-in form expired; please try again.".to_owned()),
            );
        }
        let token = call.field("token").unwrap_or("").trim().to_owned();
        let Some(credentials) = Credentials::from_token(&token).filter(|_| !token.is_empty()) else {
            return self.sign_in_form(call, Some("Enter a personal access token.".to_owned()));
        };
        let username = match call.service.access.user(&credentials).await {
            Ok((username, _)) => username,
            Err(crate::backend::access::AccessError::Backend(_)) => {
                return self.sign_in_form(
                    call,
                    Some("The svc server could not be asked; try again shortly.".to_owned()),
                )
            }
            Err(_) => {
                return self.sign_in_form(call, Some("The svc server did not accept this token.".to_owned()))
            }
        };
        // Signing in again replaces the browser's session: the old one ends (its OAuth tokens revoked) first.
        self.sessions.close(&call.headers).await;
        let Some(id) = self.sessions.open(token, username).await else {
            return self.sign_in_form(call, Some("The session could not be opened.".to_owned()));
        };
        let target = Self::return_to(call).unwrap_or_else(|| HOME.to_owned());
        with_cookie(
            redirect(&target),
            &set_cookie(COOKIE, &id, self.sessions.ttl(), call.secure),
        )
    }

    /// Ends the session (revoking its OAuth tokens) and goes back to the sign-in page.
    pub(super) async fn sign_out(&self, call: &Call<'_>) -> Page {
        self.sessions.close(&call.headers).await;
        with_cookie(
            redirect(&format!("{PREFIX}sign_in")),
            &set_cookie(COOKIE, "", Duration::ZERO, call.secure),
        )
    }

    /// `GET /-/svcgate/oauth/start`: sends the browser to the server to approve the sign-in.
    pub(super) async fn oauth_start(&self, call: &Call<'_>) -> Page {
        let Some(client) = &self.oauth else {
            return self.oauth_failure(
                StatusCode::NOT_FOUND,
                "Signing in through the svc server is not set up on this gateway (oauth_client_id); paste a \
                 personal access token instead.",
            );
        };
        let (Ok(state), Ok(pkce)) = (random_hex(32), Pkce::new()) else {
            return self.oauth_failure(
                StatusCode::INTERNAL_SERVER_ERROR,
                "No random numbers could be had for the sign-in; try again.",
            );
        };
        let Ok(sealed_verifier) = self.secret.seal_text(&pkce.verifier) else {
            return self.oauth_failure(
                StatusCode::INTERNAL_SERVER_ERROR,
                "The sign-in could not be prepared; try again.",
            );
        };
        let now = time::OffsetDateTime::now_utc();
        let record = OAuthStateRecord {
            state_hash: hash(&state),
            sealed_verifier,
            return_to: Self::return_to(call).unwrap_or_else(|| HOME.to_owned()),
            expires_at: format_time(now + OAUTH_WINDOW),
        };
        match self
            .store
            .oauth_state_put(record, format_time(now), self.pending_sign_ins)
            .await
        {
            Ok(true) => {}
            Ok(false) => {
                tracing::warn!(
                    limit = self.pending_sign_ins,
                    "a sign-in was refused: too many are pending (oauth_pending_sign_ins)"
                );
                let mut page = self.oauth_failure(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "Too many sign-ins are under way on this gateway; try again in a minute.",
                );
                page.headers_mut().insert(
                    http::header::RETRY_AFTER,
                    HeaderValue::from(FULL_RETRY_AFTER.as_secs()),
                );
                return page;
            }
            Err(error) => {
                tracing::error!(%error, "a pending OAuth sign-in could not be stored");
                return self.oauth_failure(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "The sign-in could not be prepared; try again shortly.",
                );
            }
        }
        with_cookie(
            redirect(&client.authorize_url(&call.origin, &state, &pkce.challenge)),
            &set_state_cookie(&state, &state, OAUTH_WINDOW, call.secure),
        )
    }

    /// `GET /-/svcgate/oauth/callback`: the server's answer; opens the session and goes where the person was going.
    pub(super) async fn oauth_callback(&self, call: &Call<'_>) -> Page {
        let Some(client) = &self.oauth else {
            return self.oauth_failure(
                StatusCode::NOT_FOUND,
                "Signing in through the svc server is not set up on this gateway.",
            );
        };
        let state = call.query("state").unwrap_or("");
        if !is_issued_state(state) {
            // Nothing of it goes into a cookie name or the store.
            return self.oauth_failure(
                StatusCode::BAD_REQUEST,
                "The sign-in answer carried no state svcgate issued. Start again from the sign-in page.",
            );
        }
        let state = state.to_owned();
        let clear = set_state_cookie(&state, "", Duration::ZERO, call.secure);
        let failed = |status, text: &str| with_cookie(self.oauth_failure(status, text), &clear);
        // The browser's binding is checked before the row is taken, so that someone who learns a state cannot
        // cancel a sign-in started in another browser.
        if cookie(&call.headers, &state_cookie(&state)).as_deref() != Some(state.as_str()) {
            return failed(
                StatusCode::BAD_REQUEST,
                "This sign-in was not started in this browser. Start again from the sign-in page.",
            );
        }
        // Taken next, whatever follows: a state is good for one answer only.
        let pending = match self
            .store
            .oauth_state_take(hash(&state), format_time(time::OffsetDateTime::now_utc()))
            .await
        {
            Ok(pending) => pending,
            Err(error) => {
                tracing::error!(%error, "a pending OAuth sign-in could not be read");
                return failed(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "The sign-in could not be finished; try again shortly.",
                );
            }
        };
        let Some(pending) = pending else {
            return failed(
                StatusCode::BAD_REQUEST,
                "This sign-in has expired or was already used. Start again from the sign-in page.",
            );
        };
        if let Some(error) = call.query("error") {
            let text = if error == "access_denied" {
                "The sign-in was denied on the svc server. Start again from the sign-in page to retry."
                    .to_owned()
            } else {
                format!("The svc server did not sign you in ({error}). Start again from the sign-in page.")
            };
            return failed(StatusCode::FORBIDDEN, &text);
        }
        let Some(code) = call.query("code").filter(|code| !code.is_empty()) else {
            return failed(
                StatusCode::BAD_REQUEST,
                "The sign-in answer carried no code. Start again from the sign-in page.",
            );
        };
        let Ok(verifier) = self.secret.open_text(&pending.sealed_verifier) else {
            return failed(
                StatusCode::BAD_REQUEST,
                "This sign-in cannot be finished here. Start again from the sign-in page.",
            );
        };
        let tokens = match client.exchange_code(code, &call.origin, &verifier).await {
            Ok(tokens) => tokens,
            Err(error @ OAuthError::Unreachable(_)) => {
                tracing::warn!(%error, "the OAuth code could not be exchanged");
                return failed(
                    StatusCode::BAD_GATEWAY,
                    "The svc server could not be reached to finish the sign-in; try again shortly.",
                );
            }
            Err(error) => {
                tracing::warn!(%error, "the OAuth code was not exchanged");
                return failed(
                    StatusCode::BAD_REQUEST,
                    &format!("The svc server refused to finish the sign-in: {error}. Start again from the sign-in page."),
                );
            }
        };
        let Some(credentials) = Credentials::bearer(&tokens.access_token) else {
            return failed(
                StatusCode::BAD_GATEWAY,
                "The svc server issued an unusable token.",
            );
        };
        let username = match call.service.access.user(&credentials).await {
            Ok((username, _)) => username,
            Err(error) => {
                tracing::warn!(%error, "the user of a new OAuth token could not be asked");
                return failed(
                    StatusCode::BAD_GATEWAY,
                    "The svc server did not say who you are; try again shortly.",
                );
            }
        };
        // Signing in again replaces the browser's session: the old one ends (its OAuth tokens revoked) first. The
        // session cookie is SameSite=Strict, so a browser coming back from a server on another site does not send
        // it here; that old session is then left to expire (nobody holds its cookie but this browser, which has
        // just been given a new one).
        self.sessions.close(&call.headers).await;
        let Some(id) = self.sessions.open_oauth(tokens, username.clone()).await else {
            return failed(
                StatusCode::SERVICE_UNAVAILABLE,
                "The session could not be opened; try again shortly.",
            );
        };
        let target = local_return_to(&pending.return_to).unwrap_or_else(|| HOME.to_owned());
        let mut page = render(StatusCode::OK, &SignedIn { target, username });
        page.headers_mut()
            .insert(http::header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        let page = with_cookie(page, &clear);
        with_cookie(page, &set_cookie(COOKIE, &id, self.sessions.ttl(), call.secure))
    }

    fn oauth_failure(&self, status: StatusCode, text: &str) -> Page {
        message(None, status, "sign-in-failed", "Sign-in did not work", text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_paths_of_the_pages_are_kept_as_return_to() {
        assert_eq!(
            local_return_to("/-/svcgate/projects/1/alerts/3?x=1").as_deref(),
            Some("/-/svcgate/projects/1/alerts/3?x=1")
        );
        for refused in [
            "https://evil.example/-/svcgate/",
            "//evil.example/-/svcgate/",
            "/-/svcgate//evil.example",
            "/\\evil.example",
            "/-/svcgate/sign_in?return_to=/-/svcgate/",
            "/-/svcgate/oauth/callback?code=x",
            "/api/v4/user",
            "/-/svcgate/\nSet-Cookie: x",
            // Dot segments the browser resolves out of the pages, plain or percent-encoded (once or twice).
            "/-/svcgate/../../oauth/authorize?client_id=EVIL&redirect_uri=https://evil/cb&response_type=code",
            "/-/svcgate/..",
            "/-/svcgate/projects/./../../x",
            "/-/svcgate/%2e%2e/%2e%2e/oauth/authorize",
            "/-/svcgate/%2E%2E/api/v4/user",
            "/-/svcgate/.%2e/x",
            "/-/svcgate/%252e%252e/%252e%252e/oauth/authorize",
            "/-/svcgate/%25252e%25252e/x",
            "/-/svcgate/%2e/x",
            // Encoded slashes, backslashes and control characters.
            "/-/svcgate/%2f%2fevil.example",
            "/-/svcgate/%5c..%5cx",
            "/-/svcgate/%0d%0aSet-Cookie:%20x",
            // Fragments, and the sign-in pages reached through encoding.
            "/-/svcgate/projects#/../../x",
            "/-/svcgate/%6fauth/callback?code=x",
            // Encoded more deeply than any page's address needs.
            "/-/svcgate/%2525252525252e",
        ] {
            assert_eq!(local_return_to(refused), None, "{refused}");
        }
        for kept in [
            "/-/svcgate/projects/1/alerts?status=..&q=a%2Fb",
            "/-/svcgate/projects/1/alerts/3?return_to=/-/svcgate/../x",
            "/-/svcgate/projects/1/.well/x..y",
        ] {
            assert_eq!(local_return_to(kept).as_deref(), Some(kept), "{kept}");
        }
        assert_eq!(
            local_return_to(&format!("/-/svcgate/{}", "a".repeat(MAX_RETURN_TO))),
            None
        );
    }

    #[test]
    fn only_a_state_of_the_issued_form_is_taken() {
        assert!(is_issued_state(&"0123456789abcdef".repeat(4)));
        for refused in [
            String::new(),
            "0123456789abcdef".repeat(3),
            "0123456789ABCDEF".repeat(4),
            format!("{}0", "0123456789abcdef".repeat(4)),
            format!("a;b=c d{}", "0".repeat(57)),
            format!("{}g", "0".repeat(63)),
            format!("{}é", "0".repeat(62)),
        ] {
            assert!(!is_issued_state(&refused), "{refused}");
        }
    }

    #[test]
    fn the_sign_in_address_carries_only_an_acceptable_return_to() {
        assert_eq!(
            sign_in_address(Some("/-/svcgate/projects/1/alerts/2")),
            "/-/svcgate/sign_in?return_to=%2F-%2Fsvcgate%2Fprojects%2F1%2Falerts%2F2"
        );
        assert_eq!(sign_in_address(Some("//evil.example")), "/-/svcgate/sign_in");
        assert_eq!(sign_in_address(Some(HOME)), "/-/svcgate/sign_in");
    }
}

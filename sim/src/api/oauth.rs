//! The OAuth 2 provider's endpoints, as the service has them:
//!
//! * `GET /oauth/authorize` — the page that asks the person to approve an application (for a simulator: which
//!   user to sign in as, or the one configured user), and `POST /oauth/authorize`, its Authorize/Deny buttons,
//!   which redirect to the application's registered URI with `code` and `state`, or `error=access_denied`;
//! * `POST /oauth/token` — `authorization_code` (with the PKCE S256 verifier), `refresh_token` (rotating) and the
//!   `password` grant;
//! * `POST /oauth/revoke` — revokes an access or refresh token (RFC 7009: always 200).

use http::{Method, StatusCode};
use serde_json::json;

use crate::context::Ctx;
use crate::error::ApiError;
use crate::reply::{Reply, ReplyBody};
use crate::router::Route;
use crate::store::oauth::{Application, Issued, Refusal};
use crate::store::TokenKind;

/// Routes of this module.
pub fn routes() -> Vec<Route> {
    vec![
        Route {
            method: Method::GET,
            path: "/oauth/authorize".into(),
            handler: authorize_page,
        },
        Route {
            method: Method::POST,
            path: "/oauth/authorize".into(),
            handler: authorize_decision,
        },
        Route {
            method: Method::POST,
            path: "/oauth/token".into(),
            handler: token,
        },
        Route {
            method: Method::POST,
            path: "/oauth/revoke".into(),
            handler: revoke,
        },
    ]
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

fn html(status: StatusCode, title: &str, body: &str) -> Reply {
    let page = format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><meta name=\"viewport\" \
         content=\"width=device-width, initial-scale=1\"><title>{title}</title></head><body>{body}</body></html>",
        title = escape(title)
    );
    Reply {
        status,
        body: ReplyBody::Bytes("text/html; charset=utf-8", page.into_bytes()),
        headers: Vec::new(),
    }
}

fn redirect_to(uri: &str, pairs: &[(&str, &str)]) -> Reply {
    let mut query = form_urlencoded::Serializer::new(String::new());
    for (key, value) in pairs {
        query.append_pair(key, value);
    }
    let separator = if uri.contains('?') { '&' } else { '?' };
    Reply {
        status: StatusCode::FOUND,
        body: ReplyBody::Empty,
        headers: vec![("location".into(), format!("{uri}{separator}{}", query.finish()))],
    }
}

/// The parameters of an authorization request, checked against the registered application.
struct AuthorizeRequest {
    app: Application,
    redirect_uri: String,
    state: String,
    scopes: Vec<String>,
    code_challenge: Option<String>,
}

/// Checks an authorization request. A bad client or redirect URI is shown as a page (never redirected to);
/// other errors go back to the application as `error=…`.
fn checked(ctx: &Ctx<'_>) -> Result<AuthorizeRequest, Reply> {
    let client_id = ctx.params.str("client_id").unwrap_or_default();
    let Some(app) = ctx.store.oauth.applications.get(&client_id).cloned() else {
        return Err(html(
            StatusCode::UNAUTHORIZED,
            "An error has occurred",
            "<h1>An error has occurred</h1><p id=\"oauth-error\">Client authentication failed due to unknown \
             client, no client authentication included, or unsupported authentication method.</p>",
        ));
    };
    let redirect_uri = ctx.params.str("redirect_uri").unwrap_or_default();
    if redirect_uri != app.redirect_uri {
        return Err(html(
            StatusCode::BAD_REQUEST,
            "An error has occurred",
            "<h1>An error has occurred</h1><p id=\"oauth-error\">The redirect uri included is not valid.</p>",
        ));
    }
    let state = ctx.params.str("state").unwrap_or_default();
    let refuse = |error: &str, description: &str| {
        redirect_to(
            &redirect_uri,
            &[
                ("error", error),
                ("error_description", description),
                ("state", &state),
            ],
        )
    };
    if ctx.params.str("response_type").as_deref() != Some("code") {
        return Err(refuse(
            "unsupported_response_type",
            "The authorization server does not support this response type.",
        ));
    }
    let scopes: Vec<String> = match ctx.params.str("scope").filter(|scope| !scope.trim().is_empty()) {
        Some(scope) => scope.split_whitespace().map(str::to_owned).collect(),
        None => app.scopes.clone(),
    };
    if scopes.iter().any(|scope| !app.scopes.contains(scope)) {
        return Err(refuse(
            "invalid_scope",
            "The requested scope is invalid, unknown, or malformed.",
        ));
    }
    let code_challenge = ctx.params.str("code_challenge").filter(|c| !c.is_empty());
    if code_challenge.is_some() && ctx.params.str("code_challenge_method").as_deref() != Some("S256") {
        return Err(refuse("invalid_request", "Code challenge method must be S256."));
    }
    Ok(AuthorizeRequest {
        app,
        redirect_uri,
        state,
        scopes,
        code_challenge,
    })
}

fn hidden(name: &str, value: &str) -> String {
    format!(
        "<input type=\"hidden\" name=\"{}\" value=\"{}\">",
        escape(name),
        escape(value)
    )
}

fn authorize_page(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let request = match checked(ctx) {
        Ok(request) => request,
        Err(reply) => return Ok(reply),
    };
    let users: Vec<String> = ctx
        .store
        .users
        .values()
        .filter(|user| user.state == "active")
        .filter(|user| {
            ctx.store
                .oauth
                .sign_in_as
                .as_ref()
                .map_or(true, |only| only.eq_ignore_ascii_case(&user.username))
        })
        .map(|user| {
            let chosen = ctx
                .store
                .oauth
                .preselect
                .as_ref()
                .is_some_and(|preselect| preselect.eq_ignore_ascii_case(&user.username));
            format!(
                "<option value=\"{0}\"{1}>{0}</option>",
                escape(&user.username),
                if chosen { " selected" } else { "" }
            )
        })
        .collect();
    let mut fields = String::new();
    for name in [
        "client_id",
        "redirect_uri",
        "state",
        "response_type",
        "code_challenge",
        "code_challenge_method",
    ] {
        fields.push_str(&hidden(name, &ctx.params.str(name).unwrap_or_default()));
    }
    fields.push_str(&hidden("scope", &request.scopes.join(" ")));
    let body = format!(
        "<h1>Authorize {name} to use your account?</h1>\
         <p>An application called {name} is requesting access to your svc account. It will be able to: \
         <span id=\"scopes\">{scopes}</span>.</p>\
         <form method=\"post\" action=\"/oauth/authorize\">{fields}\
         <label for=\"username\">Sign in as</label> <select id=\"username\" name=\"username\">{users}</select>\
         <p><button id=\"authorize\" type=\"submit\" name=\"decision\" value=\"approve\">Authorize {name}</button> \
         <button id=\"deny\" type=\"submit\" name=\"decision\" value=\"deny\">Deny</button></p></form>",
        name = escape(&request.app.name),
        scopes = escape(&request.scopes.join(", ")),
        users = users.join(""),
    );
    Ok(html(StatusCode::OK, "Authorize application", &body))
}

fn authorize_decision(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let request = match checked(ctx) {
        Ok(request) => request,
        Err(reply) => return Ok(reply),
    };
    if ctx.params.str("decision").as_deref() != Some("approve") {
        return Ok(redirect_to(
            &request.redirect_uri,
            &[
                ("error", "access_denied"),
                (
                    "error_description",
                    "The resource owner or authorization server denied the request.",
                ),
                ("state", &request.state),
            ],
        ));
    }
    let username = ctx.params.str("username").unwrap_or_default();
    let allowed = ctx
        .store
        .oauth
        .sign_in_as
        .as_ref()
        .map_or(true, |only| only.eq_ignore_ascii_case(&username));
    let user = ctx
        .store
        .user_by_username(&username)
        .filter(|user| allowed && user.state == "active")
        .map(|user| user.id);
    let Some(user_id) = user else {
        return Ok(html(
            StatusCode::UNPROCESSABLE_ENTITY,
            "An error has occurred",
            "<h1>An error has occurred</h1><p id=\"oauth-error\">No such user may sign in.</p>",
        ));
    };
    let code = ctx.store.oauth.grant(
        &request.app.client_id,
        user_id,
        &request.redirect_uri,
        request.scopes,
        request.code_challenge,
    );
    Ok(redirect_to(
        &request.redirect_uri,
        &[("code", &code), ("state", &request.state)],
    ))
}

fn refusal(refused: Refusal) -> Reply {
    match refused {
        Refusal::InvalidClient => Reply::json(
            StatusCode::UNAUTHORIZED,
            json!({"error": "invalid_client", "error_description": "Client authentication failed due to unknown client, no client authentication included, or unsupported authentication method."}),
        ),
        Refusal::InvalidGrant => Reply::json(
            StatusCode::BAD_REQUEST,
            json!({"error": "invalid_grant", "error_description": "The provided authorization grant is invalid, expired, revoked, does not match the redirection URI used in the authorization request, or was issued to another client."}),
        ),
    }
}

fn issued(ctx: &mut Ctx<'_>, issued: Issued) -> Reply {
    Reply::ok(json!({
        "access_token": issued.access_token,
        "token_type": "Bearer",
        "expires_in": issued.expires_in,
        "refresh_token": issued.refresh_token,
        "scope": issued.scopes.join(" "),
        "created_at": ctx.store.now() / 1000,
    }))
}

/// The client id of a request whose id and secret are right.
fn client_id(ctx: &Ctx<'_>) -> Result<String, Refusal> {
    let id = ctx.params.str("client_id").unwrap_or_default();
    let secret = ctx.params.str("client_secret").unwrap_or_default();
    ctx.store
        .oauth
        .client(&id, &secret)
        .map(|app| app.client_id.clone())
}

fn token(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let grant = ctx.params.str("grant_type").unwrap_or_default();
    match grant.as_str() {
        "password" => password(ctx),
        "authorization_code" => {
            let client = match client_id(ctx) {
                Ok(client) => client,
                Err(refused) => return Ok(refusal(refused)),
            };
            let code = ctx.params.str("code").unwrap_or_default();
            let redirect_uri = ctx.params.str("redirect_uri").unwrap_or_default();
            let verifier = ctx.params.str("code_verifier");
            match ctx
                .store
                .oauth_exchange_code(&client, &code, &redirect_uri, verifier.as_deref())
            {
                Ok(tokens) => Ok(issued(ctx, tokens)),
                Err(refused) => Ok(refusal(refused)),
            }
        }
        "refresh_token" => {
            let client = match client_id(ctx) {
                Ok(client) => client,
                Err(refused) => return Ok(refusal(refused)),
            };
            let refresh = ctx.params.str("refresh_token").unwrap_or_default();
            match ctx.store.oauth_refresh(&client, &refresh) {
                Ok(tokens) => Ok(issued(ctx, tokens)),
                Err(refused) => Ok(refusal(refused)),
            }
        }
        _ => Ok(Reply::json(
            StatusCode::BAD_REQUEST,
            json!({"error": "unsupported_grant_type", "error_description": "The authorization grant type is not supported by the authorization server."}),
        )),
    }
}

fn revoke(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let client = match client_id(ctx) {
        Ok(client) => client,
        Err(refused) => return Ok(refusal(refused)),
    };
    let token = ctx.params.str("token").unwrap_or_default();
    ctx.store.oauth_revoke(&client, &token);
    Ok(Reply::ok(json!({})))
}

/// The password grant: a username (or e-mail) and password for a bearer token.
fn password(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let login = ctx.params.str("username").unwrap_or_default();
    let password = ctx.params.str("password").unwrap_or_default();
    let user = ctx.store.users.values().find(|u| {
        (u.username.eq_ignore_ascii_case(&login) || u.email.eq_ignore_ascii_case(&login))
            && u.state == "active"
            && u.password.as_deref() == Some(password.as_str())
    });
    let Some(uid) = user.map(|u| u.id) else {
        let mut reply = refusal(Refusal::InvalidGrant);
        reply.status = StatusCode::UNAUTHORIZED;
        return Ok(reply);
    };
    let created = ctx.store.now();
    let secret = format!(
        "svcoat-{}",
        &crate::sha::sha1_hex(format!("oauth:{uid}:{created}").as_bytes())[..24]
    );
    let token = ctx
        .store
        .insert_token(uid, "oauth", vec!["api".into()], TokenKind::OAuth, Some(secret))
        .token
        .clone();
    Ok(Reply::ok(json!({
        "access_token": token,
        "token_type": "bearer",
        "refresh_token": format!("refresh-{token}"),
        "scope": "api",
        "created_at": created / 1000,
    })))
}

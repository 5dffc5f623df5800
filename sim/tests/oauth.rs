//! The OAuth 2 provider end to end: the authorize page's checks (client, registered redirect URI, scopes, PKCE
//! method, a configured user), the token endpoint's refresh rotation and client check, revocation, and OAuth
//! tokens counting only as bearer tokens.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use http::{Method, StatusCode};
use svc_sim::{OAuthApplication, SimOptions};

mod common;
use common::*;

const REDIRECT: &str = "https://svcgate.example/-/svcgate/oauth/callback";

async fn provider(sign_in_as: Option<&str>) -> svc_sim::SimHandle {
    start_with(SimOptions {
        oauth_application: Some(OAuthApplication {
            name: "svcgate".into(),
            client_id: "app".into(),
            secret: "secret".into(),
            redirect_uri: REDIRECT.into(),
            scopes: vec!["read_api".into()],
        }),
        oauth_sign_in_as: sign_in_as.map(str::to_owned),
        ..SimOptions::default()
    })
    .await
}

fn form(pairs: &[(&str, &str)]) -> Vec<u8> {
    form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs)
        .finish()
        .into_bytes()
}

async fn post_form(sim: &svc_sim::SimHandle, path: &str, pairs: &[(&str, &str)]) -> Resp {
    send(
        sim,
        Method::POST,
        path,
        None,
        Some("application/x-www-form-urlencoded"),
        form(pairs),
    )
    .await
}

/// Approves as `username` and exchanges the code (no PKCE): answers the token answer.
async fn tokens(sim: &svc_sim::SimHandle, username: &str) -> Resp {
    let approved = post_form(
        sim,
        "/oauth/authorize",
        &[
            ("client_id", "app"),
            ("redirect_uri", REDIRECT),
            ("response_type", "code"),
            ("state", "s1"),
            ("username", username),
            ("decision", "approve"),
        ],
    )
    .await;
    assert_eq!(approved.status, StatusCode::FOUND);
    let location = header(&approved, "location");
    let query: std::collections::BTreeMap<String, String> =
        form_urlencoded::parse(location.split_once('?').unwrap().1.as_bytes())
            .into_owned()
            .collect();
    assert_eq!(query["state"], "s1");
    post_form(
        sim,
        "/oauth/token",
        &[
            ("grant_type", "authorization_code"),
            ("code", &query["code"]),
            ("redirect_uri", REDIRECT),
            ("client_id", "app"),
            ("client_secret", "secret"),
        ],
    )
    .await
}

#[tokio::test]
async fn the_authorize_page_checks_the_client_redirect_uri_scope_and_pkce_method() {
    let sim = provider(None).await;
    let page = |query: &'static str| {
        let sim = sim.clone();
        async move {
            send(
                &sim,
                Method::GET,
                &format!("/oauth/authorize?{query}"),
                None,
                None,
                Vec::new(),
            )
            .await
        }
    };
    let redirect = form_urlencoded::byte_serialize(REDIRECT.as_bytes()).collect::<String>();
    let good = send(
        &sim,
        Method::GET,
        &format!("/oauth/authorize?client_id=app&redirect_uri={redirect}&response_type=code&state=x"),
        None,
        None,
        Vec::new(),
    )
    .await;
    assert_eq!(good.status, StatusCode::OK);
    let html = String::from_utf8_lossy(&good.raw).into_owned();
    assert!(
        html.contains("id=\"authorize\"") && html.contains("id=\"deny\""),
        "{html}"
    );
    assert!(
        html.contains("<option value=\"root\">"),
        "it asks which user: {html}"
    );

    let unknown = page("client_id=nope&redirect_uri=x&response_type=code").await;
    assert_eq!(unknown.status, StatusCode::UNAUTHORIZED);
    let elsewhere = send(
        &sim,
        Method::GET,
        "/oauth/authorize?client_id=app&redirect_uri=https%3A%2F%2Fevil.example%2Fcb&response_type=code",
        None,
        None,
        Vec::new(),
    )
    .await;
    assert_eq!(
        elsewhere.status,
        StatusCode::BAD_REQUEST,
        "never redirected to an unregistered URI"
    );
    assert!(header(&elsewhere, "location").is_empty());
    for (query, error) in [
        ("response_type=token", "unsupported_response_type"),
        ("response_type=code&scope=api", "invalid_scope"),
        (
            "response_type=code&code_challenge=abc&code_challenge_method=plain",
            "invalid_request",
        ),
    ] {
        let refused = send(
            &sim,
            Method::GET,
            &format!("/oauth/authorize?client_id=app&redirect_uri={redirect}&state=x&{query}"),
            None,
            None,
            Vec::new(),
        )
        .await;
        assert_eq!(refused.status, StatusCode::FOUND, "{query}");
        let location = header(&refused, "location");
        assert!(location.starts_with(REDIRECT), "{location}");
        assert!(
            location.contains(&format!("error={error}")) && location.contains("state=x"),
            "{location}"
        );
    }
}

#[tokio::test]
async fn a_configured_user_is_the_only_one_the_authorize_page_offers() {
    let sim = provider(Some("demo")).await;
    sim.seed_demo();
    let redirect = form_urlencoded::byte_serialize(REDIRECT.as_bytes()).collect::<String>();
    let page = send(
        &sim,
        Method::GET,
        &format!("/oauth/authorize?client_id=app&redirect_uri={redirect}&response_type=code"),
        None,
        None,
        Vec::new(),
    )
    .await;
    let html = String::from_utf8_lossy(&page.raw).into_owned();
    assert!(
        html.contains("<option value=\"demo\">") && !html.contains("<option value=\"root\">"),
        "{html}"
    );
    let as_root = post_form(
        &sim,
        "/oauth/authorize",
        &[
            ("client_id", "app"),
            ("redirect_uri", REDIRECT),
            ("response_type", "code"),
            ("username", "root"),
            ("decision", "approve"),
        ],
    )
    .await;
    assert_eq!(as_root.status, StatusCode::UNPROCESSABLE_ENTITY);
}

#[tokio::test]
async fn refresh_tokens_rotate_revocation_ends_both_tokens_and_oauth_tokens_are_bearer_only() {
    let sim = provider(None).await;
    let issued = tokens(&sim, "root").await;
    assert_eq!(issued.status, StatusCode::OK, "{}", issued.body);
    assert_eq!(issued.body["token_type"], "Bearer");
    assert_eq!(issued.body["expires_in"], 7200);
    let access = issued.body["access_token"].as_str().unwrap().to_owned();
    let refresh = issued.body["refresh_token"].as_str().unwrap().to_owned();
    let user = |token: String| {
        let sim = sim.clone();
        async move {
            let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
                .build_http::<http_body_util::Full<bytes::Bytes>>();
            let request = http::Request::get(format!("{}/api/v4/user", sim.url()))
                .header("authorization", format!("Bearer {token}"))
                .body(http_body_util::Full::default())
                .unwrap();
            client.request(request).await.unwrap().status()
        }
    };
    assert_eq!(user(access.clone()).await, StatusCode::OK);
    let private = call(&sim, Method::GET, "/api/v4/user", Some(&access), None).await;
    assert_eq!(private.status, StatusCode::UNAUTHORIZED, "not as PRIVATE-TOKEN");

    let wrong_client = post_form(
        &sim,
        "/oauth/token",
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", &refresh),
            ("client_id", "app"),
            ("client_secret", "wrong"),
        ],
    )
    .await;
    assert_eq!(wrong_client.body["error"], "invalid_client");
    let refresh_with = |token: String| {
        let sim = sim.clone();
        async move {
            post_form(
                &sim,
                "/oauth/token",
                &[
                    ("grant_type", "refresh_token"),
                    ("refresh_token", &token),
                    ("client_id", "app"),
                    ("client_secret", "secret"),
                ],
            )
            .await
        }
    };
    let renewed = refresh_with(refresh.clone()).await;
    assert_eq!(renewed.status, StatusCode::OK);
    let (access2, refresh2) = (
        renewed.body["access_token"].as_str().unwrap().to_owned(),
        renewed.body["refresh_token"].as_str().unwrap().to_owned(),
    );
    assert_ne!(refresh2, refresh);
    assert_eq!(
        user(access.clone()).await,
        StatusCode::UNAUTHORIZED,
        "the old token is retired"
    );
    assert_eq!(
        refresh_with(refresh).await.body["error"],
        "invalid_grant",
        "a refresh token is spent once"
    );
    assert_eq!(user(access2.clone()).await, StatusCode::OK);

    let revoked = post_form(
        &sim,
        "/oauth/revoke",
        &[
            ("token", &access2),
            ("client_id", "app"),
            ("client_secret", "secret"),
        ],
    )
    .await;
    assert_eq!(revoked.status, StatusCode::OK);
    assert_eq!(user(access2).await, StatusCode::UNAUTHORIZED);
    assert_eq!(
        refresh_with(refresh2).await.body["error"],
        "invalid_grant",
        "its refresh token goes with it"
    );
}

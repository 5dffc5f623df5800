//! Behind a TLS-terminating proxy, over real sockets: the proxy's `X-Forwarded-Proto` is believed from the
//! addresses in `trusted_proxies` only, and then decides the `Secure` flag of page cookies, the scheme of the
//! addresses svcgate shows, and the `X-Forwarded-Proto` the backend receives.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common::alerts::AlertWorld;
use crate::common::origin::Origin;
use crate::common::{send, Answer, TestGateway};
use http::{Method, StatusCode};
use serde_json::json;

/// Signs in to the pages with `token`, every request carrying `extra` headers (what a proxy would add).
async fn sign_in_with(base: &str, token: &str, extra: &[(&str, &str)]) -> (Answer, Answer) {
    let form = send(Method::GET, &format!("{base}/-/svcgate/sign_in"), extra, None).await;
    let cookie = form.cookie();
    let mut headers = vec![("cookie", cookie.as_str())];
    headers.extend_from_slice(extra);
    let signed = send(
        Method::POST,
        &format!("{base}/-/svcgate/sign_in"),
        &headers,
        Some((
            "application/x-www-form-urlencoded",
            format!("csrf={}&token={token}", form.csrf()).into_bytes(),
        )),
    )
    .await;
    (form, signed)
}

#[tokio::test]
async fn a_trusted_proxy_that_terminated_tls_gets_secure_cookies_and_https_addresses() {
    let world = AlertWorld::with(|raw| raw.trusted_proxies = Some("127.0.0.1/32".to_owned())).await;
    let base = world.gateway.url();
    let https = [("x-forwarded-proto", "https")];
    let (form, signed) = sign_in_with(&base, &world.maintainer, &https).await;
    assert!(
        form.header("set-cookie").unwrap().ends_with("; Secure"),
        "{:?}",
        form.headers
    );
    assert_eq!(signed.status, StatusCode::SEE_OTHER);
    let session = signed.header("set-cookie").unwrap();
    assert!(
        session.ends_with("; Secure") && session.contains("HttpOnly"),
        "{session}"
    );

    // Receiving addresses are built from the request (no public_url): the scheme is the one the proxy reported.
    let created = send(
        Method::POST,
        &world.api("/integrations"),
        &[
            ("private-token", &world.maintainer),
            ("x-forwarded-proto", "https"),
        ],
        Some((
            "application/json",
            serde_json::to_vec(&json!({"type": "http", "name": "Behind TLS", "active": true})).unwrap(),
        )),
    )
    .await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    let url = created.json()["url"].as_str().unwrap().to_owned();
    assert!(
        url.starts_with(&format!("https://{}/", world.gateway.address)),
        "{url}"
    );
    world.gateway.stop().await;
}

#[tokio::test]
async fn a_client_that_is_not_a_trusted_proxy_cannot_claim_tls() {
    let world = AlertWorld::with(|raw| raw.trusted_proxies = Some("10.0.0.0/8".to_owned())).await;
    let (_, signed) = sign_in_with(
        &world.gateway.url(),
        &world.maintainer,
        &[("x-forwarded-proto", "https")],
    )
    .await;
    assert_eq!(signed.status, StatusCode::SEE_OTHER);
    let session = signed.header("set-cookie").unwrap();
    assert!(!session.contains("Secure"), "{session}");
    world.gateway.stop().await;
}

#[tokio::test]
async fn an_https_public_url_makes_page_cookies_secure_without_any_header() {
    let world = AlertWorld::with(|raw| raw.public_url = Some("https://alerts.example".to_owned())).await;
    let (_, signed) = sign_in_with(&world.gateway.url(), &world.maintainer, &[]).await;
    assert_eq!(signed.status, StatusCode::SEE_OTHER);
    assert!(signed.header("set-cookie").unwrap().ends_with("; Secure"));
    world.gateway.stop().await;
}

#[tokio::test]
async fn the_backend_receives_the_scheme_a_trusted_proxy_reported_and_no_one_elses() {
    let origin = Origin::start().await;
    let trusting = TestGateway::start_with(&origin.url(), |raw| {
        raw.trusted_proxies = Some("127.0.0.0/8, ::1".to_owned());
    })
    .await;
    let echo = send(
        Method::GET,
        &format!("{}/api/v4/projects", trusting.url()),
        &[("x-forwarded-proto", "https")],
        None,
    )
    .await
    .json();
    assert_eq!(echo["headers"]["x-forwarded-proto"], "https");
    trusting.stop().await;

    let default = TestGateway::start(&origin.url()).await;
    let echo = send(
        Method::GET,
        &format!("{}/api/v4/projects", default.url()),
        &[("x-forwarded-proto", "https")],
        None,
    )
    .await
    .json();
    assert_eq!(echo["headers"]["x-forwarded-proto"], "http");
    default.stop().await;
}

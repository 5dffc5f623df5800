//! Signing in to the pages through the server's OAuth 2 provider, over real sockets: a cookie-holding client →
//! svcgate → svc-sim (whose `/oauth/authorize` page is reached through svcgate's passthrough, as a browser
//! reaches it). The state and its browser binding, the PKCE verifier, refresh on expiry, revocation at sign-out,
//! the failure pages and the return to a page followed while signed out.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{combinators::BoxBody, BodyExt, Full, StreamBody};
use hyper::body::Frame;

use crate::common::dev::DevGateway;
use crate::common::oauth::{self, location, query_of, text, Jar};
use crate::common::{send, Answer, TestGateway};
use http::{Method, StatusCode};
use svc_sim::{DemoSeed, OAuthApplication, SimHandle, SimOptions};

const CLIENT_ID: &str = "svcgate-test-app";
const CLIENT_SECRET: &str = "svcgate-test-secret";

/// A simulator with svcgate registered as an OAuth application, and a gateway using it (through a proxy that can
/// spoil refreshes, when asked for).
struct World {
    sim: SimHandle,
    demo: DemoSeed,
    gateway: TestGateway,
    proxy: Option<RefreshProxy>,
}

/// What the proxy does with a refresh (`POST /oauth/token` with `grant_type=refresh_token`).
#[derive(Clone, Copy, Debug)]
enum OnRefresh {
    /// Passes it to the simulator.
    Pass,
    /// Answers this status and RFC 6749 error code itself.
    Refuse(u16, &'static str),
    /// Answers 200 at once and an empty JSON body after this long.
    SlowBody(Duration),
    /// Passes it to the simulator after this long.
    Late(Duration),
}

/// A proxy in front of the simulator that passes every request on, except refreshes when told otherwise.
struct RefreshProxy {
    url: String,
    mode: Arc<Mutex<OnRefresh>>,
    /// The bodies of the refresh answers the simulator gave.
    issued: Arc<Mutex<Vec<serde_json::Value>>>,
    /// Refreshes asked of the proxy, passed on or not.
    asked: Arc<std::sync::atomic::AtomicUsize>,
}

impl RefreshProxy {
    async fn start(backend: String) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let mode = Arc::new(Mutex::new(OnRefresh::Pass));
        let issued = Arc::new(Mutex::new(Vec::new()));
        let asked = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let (serving, recording, counting) = (Arc::clone(&mode), Arc::clone(&issued), Arc::clone(&asked));
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (mode, issued, asked, backend) = (
                    Arc::clone(&serving),
                    Arc::clone(&recording),
                    Arc::clone(&counting),
                    backend.clone(),
                );
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |request| {
                        let (mode, issued, asked, backend) = (
                            Arc::clone(&mode),
                            Arc::clone(&issued),
                            Arc::clone(&asked),
                            backend.clone(),
                        );
                        async move {
                            Ok::<_, Infallible>(
                                RefreshProxy::answer(request, &backend, &mode, &issued, &asked).await,
                            )
                        }
                    });
                    let _ =
                        hyper_util::server::conn::auto::Builder::new(hyper_util::rt::TokioExecutor::new())
                            .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                            .await;
                });
            }
        });
        RefreshProxy {
            url,
            mode,
            issued,
            asked,
        }
    }

    /// How many refreshes were asked of the proxy so far.
    fn asked(&self) -> usize {
        self.asked.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn set(&self, mode: OnRefresh) {
        *self.mode.lock().unwrap() = mode;
    }

    async fn answer(
        request: http::Request<hyper::body::Incoming>,
        backend: &str,
        mode: &Mutex<OnRefresh>,
        issued: &Mutex<Vec<serde_json::Value>>,
        asked: &std::sync::atomic::AtomicUsize,
    ) -> http::Response<BoxBody<Bytes, Infallible>> {
        let (parts, body) = request.into_parts();
        let body = body.collect().await.unwrap().to_bytes();
        let refresh = parts.method == Method::POST
            && parts.uri.path() == "/oauth/token"
            && String::from_utf8_lossy(&body).contains("grant_type=refresh_token");
        if refresh {
            asked.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
        let json = |status: u16, body: BoxBody<Bytes, Infallible>| {
            http::Response::builder()
                .status(status)
                .header("content-type", "application/json")
                .body(body)
                .unwrap()
        };
        let mode = *mode.lock().unwrap();
        match mode {
            OnRefresh::Refuse(status, code) if refresh => {
                return json(
                    status,
                    Full::new(Bytes::from(format!("{{\"error\":\"{code}\"}}"))).boxed(),
                )
            }
            OnRefresh::SlowBody(delay) if refresh => {
                let late = futures_util::stream::once(async move {
                    tokio::time::sleep(delay).await;
                    Ok::<_, Infallible>(Frame::data(Bytes::from_static(b"{}")))
                });
                return json(200, StreamBody::new(late).boxed());
            }
            OnRefresh::Late(delay) if refresh => tokio::time::sleep(delay).await,
            _ => {}
        }
        let headers: Vec<(String, String)> = parts
            .headers
            .iter()
            .filter(|(name, _)| {
                !["host", "content-length", "content-type", "connection"].contains(&name.as_str())
            })
            .map(|(name, value)| (name.to_string(), value.to_str().unwrap_or("").to_owned()))
            .collect();
        let headers: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
        let content_type = parts
            .headers
            .get("content-type")
            .map(|value| value.to_str().unwrap_or("").to_owned());
        let target = parts.uri.path_and_query().map_or("/", |target| target.as_str());
        let answer = send(
            parts.method.clone(),
            &format!("{backend}{target}"),
            &headers,
            content_type.as_deref().map(|kind| (kind, body.to_vec())),
        )
        .await;
        if refresh {
            issued.lock().unwrap().push(answer.json());
        }
        let mut response = http::Response::new(Full::new(answer.body).boxed());
        *response.status_mut() = answer.status;
        for (name, value) in &answer.headers {
            if !["content-length", "transfer-encoding", "connection"].contains(&name.as_str()) {
                response.headers_mut().append(name, value.clone());
            }
        }
        response
    }
}

impl World {
    /// Access tokens last `lifetime` seconds; svcgate refreshes `margin` before they expire.
    async fn new(lifetime: u64, margin: &str) -> Self {
        Self::with(lifetime, margin, |_| {}).await
    }

    /// Like `new`, with more of the gateway's configuration set by `tweak`.
    async fn with(
        lifetime: u64,
        margin: &str,
        tweak: impl FnOnce(&mut svcgate::config::RawConfig) + Send + 'static,
    ) -> Self {
        Self::build(lifetime, margin, tweak, false).await
    }

    /// Like `with`, the gateway reaching the simulator through a `RefreshProxy`.
    async fn with_proxy(
        lifetime: u64,
        margin: &str,
        tweak: impl FnOnce(&mut svcgate::config::RawConfig) + Send + 'static,
    ) -> Self {
        Self::build(lifetime, margin, tweak, true).await
    }

    async fn build(
        lifetime: u64,
        margin: &str,
        tweak: impl FnOnce(&mut svcgate::config::RawConfig) + Send + 'static,
        proxied: bool,
    ) -> Self {
        let sim = common::sim::start_with(SimOptions {
            root_token: "root-token".to_owned(),
            oauth_token_lifetime_secs: lifetime,
            ..SimOptions::default()
        })
        .await;
        let demo = sim.seed_demo();
        let margin = margin.to_owned();
        let proxy = if proxied {
            Some(RefreshProxy::start(sim.url()).await)
        } else {
            None
        };
        let backend = proxy
            .as_ref()
            .map_or_else(|| sim.url(), |proxy| proxy.url.clone());
        let gateway = TestGateway::start_with(&backend, |raw| {
            raw.oauth_client_id = Some(CLIENT_ID.to_owned());
            raw.oauth_client_secret = Some(CLIENT_SECRET.to_owned());
            raw.oauth_refresh_margin = Some(margin);
            tweak(raw);
        })
        .await;
        sim.register_oauth_application(OAuthApplication {
            name: "svcgate".to_owned(),
            client_id: CLIENT_ID.to_owned(),
            secret: CLIENT_SECRET.to_owned(),
            redirect_uri: format!("{}/-/svcgate/oauth/callback", gateway.url()),
            scopes: vec!["api".to_owned(), "read_api".to_owned()],
        });
        World {
            sim,
            demo,
            gateway,
            proxy,
        }
    }

    fn proxy(&self) -> &RefreshProxy {
        self.proxy.as_ref().unwrap()
    }

    fn refreshes(&self) -> usize {
        self.token_calls("/oauth/token")
            .into_iter()
            .filter(|form| form["grant_type"] == "refresh_token")
            .count()
    }

    fn alerts_page(&self) -> String {
        format!("/-/svcgate/projects/{}/alerts", self.demo.project_id)
    }

    /// The bearer tokens svcgate sent to the simulator, in order, each once.
    fn bearer_tokens(&self) -> Vec<String> {
        let mut seen = Vec::new();
        for request in self.sim.requests() {
            for (name, value) in &request.headers {
                if let Some(token) = value.strip_prefix("Bearer ").filter(|_| name == "authorization") {
                    if !seen.iter().any(|known| known == token) {
                        seen.push(token.to_owned());
                    }
                }
            }
        }
        seen
    }

    /// The form bodies of the token endpoint calls the simulator received.
    fn token_calls(&self, path: &str) -> Vec<BTreeMap<String, String>> {
        self.sim
            .requests()
            .into_iter()
            .filter(|request| request.method == "POST" && request.path == path)
            .map(|request| form_urlencoded::parse(&request.body).into_owned().collect())
            .collect()
    }
}

/// Starts a sign-in at the world's gateway and answers the authorize address it sends the browser to.
async fn start(world: &World, jar: &mut Jar, return_to: Option<&str>) -> String {
    let authorize = oauth::start(jar, &world.gateway.url(), return_to).await;
    assert!(
        authorize.starts_with(&format!("{}/oauth/authorize?", world.gateway.url())),
        "{authorize}"
    );
    authorize
}

/// Shows the authorize page (through the gateway) and presses one of its buttons as `username`; answers where
/// the provider redirects.
async fn decide(jar: &mut Jar, authorize: &str, username: &str, decision: &str) -> String {
    let (page, redirect) = oauth::decide(jar, authorize, username, decision).await;
    assert!(text(&page).contains("id=\"authorize\""), "{}", text(&page));
    redirect
}

/// The whole sign-in: answers the callback's answer and the page it moves on to.
async fn sign_in(world: &World, jar: &mut Jar, return_to: Option<&str>) -> (Answer, String) {
    let authorize = start(world, jar, return_to).await;
    let callback = decide(jar, &authorize, &world.demo.username, "approve").await;
    let signed_in = jar.get(&callback).await;
    assert_eq!(signed_in.status, StatusCode::OK, "{}", text(&signed_in));
    let html = text(&signed_in);
    let start = html.find("id=\"continue\" href=\"").unwrap() + 20;
    let target = html[start..].split('"').next().unwrap().replace("&#x2f;", "/");
    (signed_in, target)
}

#[tokio::test]
async fn signing_in_through_the_server_lands_on_the_page_asked_for_with_a_bearer_token() {
    let world = World::new(7200, "60s").await;
    let mut jar = Jar::default();
    let sign_in_page = jar
        .get(&format!("{}/-/svcgate/sign_in", world.gateway.url()))
        .await;
    assert!(
        text(&sign_in_page).contains("id=\"sign-in-oauth\""),
        "the page offers OAuth"
    );
    assert!(
        text(&sign_in_page).contains("id=\"token\""),
        "and still the token form"
    );

    let (signed_in, target) = sign_in(&world, &mut jar, Some(&world.alerts_page())).await;
    assert_eq!(target, world.alerts_page());
    let set = signed_in
        .headers
        .get_all("set-cookie")
        .iter()
        .map(|value| value.to_str().unwrap().to_owned())
        .collect::<Vec<_>>();
    assert!(
        set.iter().any(|cookie| cookie.starts_with("svcgate_session=")
            && cookie.contains("HttpOnly")
            && cookie.contains("SameSite=Strict")),
        "{set:?}"
    );
    assert!(
        !jar.0.keys().any(|name| name.starts_with("svcgate_oauth_")),
        "the state cookie is cleared"
    );

    let landed = jar.get(&format!("{}{target}", world.gateway.url())).await;
    assert_eq!(landed.status, StatusCode::OK, "{}", text(&landed));
    assert!(text(&landed).contains(&world.demo.project_path));
    assert!(text(&landed).contains(&format!("id=\"current-user\">{}<", world.demo.username)));

    let exchanges = world.token_calls("/oauth/token");
    assert_eq!(exchanges.len(), 1);
    let exchange = &exchanges[0];
    assert_eq!(exchange["grant_type"], "authorization_code");
    assert_eq!(exchange["client_id"], CLIENT_ID);
    assert!(exchange["code_verifier"].len() >= 43, "{exchange:?}");
    assert_eq!(
        exchange["redirect_uri"],
        format!("{}/-/svcgate/oauth/callback", world.gateway.url())
    );
    let tokens = world.bearer_tokens();
    assert_eq!(
        tokens.len(),
        1,
        "the pages use the OAuth token, as a bearer token"
    );
    // The simulator, like the service, takes an OAuth token only as a bearer token.
    let as_private = common::get(&format!("{}/api/v4/user", world.sim.url()), &tokens[0]).await;
    assert_eq!(as_private.status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn a_state_not_started_in_this_browser_is_refused() {
    let world = World::new(7200, "60s").await;
    let mut victim = Jar::default();
    let mut attacker = Jar::default();
    let authorize = start(&world, &mut attacker, None).await;
    let callback = decide(&mut attacker, &authorize, &world.demo.username, "approve").await;
    // The victim's browser has a sign-in of its own under way, but not this one.
    start(&world, &mut victim, None).await;
    let answer = victim.get(&callback).await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert!(
        text(&answer).contains("not started in this browser"),
        "{}",
        text(&answer)
    );
    assert!(!victim.0.contains_key("svcgate_session"));
    assert!(
        world.token_calls("/oauth/token").is_empty(),
        "the code is never exchanged"
    );
}

#[tokio::test]
async fn a_state_not_of_the_issued_form_is_refused_and_never_named_in_a_cookie() {
    let world = World::new(7200, "60s").await;
    let mut jar = Jar::default();
    start(&world, &mut jar, None).await;
    for state in [
        "a;b=c d",
        "",
        "0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF",
    ] {
        let answer = jar
            .get(&format!(
                "{}/-/svcgate/oauth/callback?code=x&state={}",
                world.gateway.url(),
                form_urlencoded::byte_serialize(state.as_bytes()).collect::<String>()
            ))
            .await;
        assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{state:?}");
        assert!(
            text(&answer).contains("id=\"sign-in-failed\""),
            "{}",
            text(&answer)
        );
        assert!(
            answer.headers.get_all("set-cookie").iter().next().is_none(),
            "no cookie is set for {state:?}"
        );
    }
    assert!(world.token_calls("/oauth/token").is_empty());
}

#[tokio::test]
async fn someone_who_learns_a_state_cannot_cancel_the_sign_in() {
    let world = World::new(7200, "60s").await;
    let mut person = Jar::default();
    let authorize = start(&world, &mut person, None).await;
    let callback = decide(&mut person, &authorize, &world.demo.username, "approve").await;
    let mut stranger = Jar::default();
    let refused = stranger.get(&callback).await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    assert!(
        text(&refused).contains("not started in this browser"),
        "{}",
        text(&refused)
    );
    let finished = person.get(&callback).await;
    assert_eq!(finished.status, StatusCode::OK, "{}", text(&finished));
    assert!(person.0.contains_key("svcgate_session"));
}

#[tokio::test]
async fn past_the_limit_of_pending_sign_ins_starting_one_answers_503_until_one_finishes() {
    let world = World::with(7200, "60s", |raw| {
        raw.oauth_pending_sign_ins = Some(2);
    })
    .await;
    let mut first = Jar::default();
    let authorize = start(&world, &mut first, None).await;
    start(&world, &mut Jar::default(), None).await;
    let mut third = Jar::default();
    let refused = third
        .get(&format!("{}/-/svcgate/oauth/start", world.gateway.url()))
        .await;
    assert_eq!(
        refused.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        text(&refused)
    );
    assert_eq!(refused.header("retry-after"), Some("60"));
    assert!(
        text(&refused).contains("id=\"sign-in-failed\""),
        "{}",
        text(&refused)
    );
    assert!(third.0.is_empty(), "no state cookie: {:?}", third.0);
    let callback = decide(&mut first, &authorize, &world.demo.username, "approve").await;
    assert_eq!(first.get(&callback).await.status, StatusCode::OK);
    start(&world, &mut third, None).await;
}

#[tokio::test]
async fn a_replayed_state_is_refused() {
    let world = World::new(7200, "60s").await;
    let mut jar = Jar::default();
    let authorize = start(&world, &mut jar, None).await;
    let callback = decide(&mut jar, &authorize, &world.demo.username, "approve").await;
    let saved = jar.clone();
    assert_eq!(jar.get(&callback).await.status, StatusCode::OK);
    let mut replay = saved;
    let again = replay.get(&callback).await;
    assert_eq!(again.status, StatusCode::BAD_REQUEST);
    assert!(
        text(&again).contains("expired or was already used"),
        "{}",
        text(&again)
    );
    assert_eq!(world.token_calls("/oauth/token").len(), 1);
}

#[tokio::test]
async fn a_code_the_provider_refuses_answers_a_readable_page() {
    let world = World::new(7200, "60s").await;
    let mut jar = Jar::default();
    let authorize = start(&world, &mut jar, None).await;
    let state = query_of(&authorize)["state"].clone();
    let forged = format!(
        "{}/-/svcgate/oauth/callback?code=made-up&state={state}",
        world.gateway.url()
    );
    let answer = jar.get(&forged).await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert!(text(&answer).contains("invalid_grant"), "{}", text(&answer));
    assert!(text(&answer).contains("id=\"sign-in-failed\""));
}

#[tokio::test]
async fn the_provider_refuses_a_wrong_or_missing_pkce_verifier() {
    let world = World::new(7200, "60s").await;
    let verifier = "a-verifier-of-forty-three-characters-or-more-0123";
    let challenge = {
        use base64::Engine;
        use sha2::Digest;
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(verifier.as_bytes()))
    };
    let redirect_uri = format!("{}/-/svcgate/oauth/callback", world.gateway.url());
    let code = || async {
        let form: String = form_urlencoded::Serializer::new(String::new())
            .extend_pairs([
                ("client_id", CLIENT_ID),
                ("redirect_uri", &redirect_uri),
                ("response_type", "code"),
                ("state", "s"),
                ("scope", "read_api"),
                ("code_challenge", &challenge),
                ("code_challenge_method", "S256"),
                ("username", &world.demo.username),
                ("decision", "approve"),
            ])
            .finish();
        let answer = send(
            Method::POST,
            &format!("{}/oauth/authorize", world.sim.url()),
            &[],
            Some(("application/x-www-form-urlencoded", form.into_bytes())),
        )
        .await;
        query_of(&location(&answer))["code"].clone()
    };
    let exchange = |code: String, verifier: Option<&'static str>| {
        let redirect_uri = redirect_uri.clone();
        let url = format!("{}/oauth/token", world.sim.url());
        async move {
            let mut form = form_urlencoded::Serializer::new(String::new());
            form.extend_pairs([
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", &redirect_uri),
                ("client_id", CLIENT_ID),
                ("client_secret", CLIENT_SECRET),
            ]);
            if let Some(verifier) = verifier {
                form.append_pair("code_verifier", verifier);
            }
            send(
                Method::POST,
                &url,
                &[],
                Some(("application/x-www-form-urlencoded", form.finish().into_bytes())),
            )
            .await
        }
    };
    let wrong = exchange(
        code().await,
        Some("another-verifier-of-forty-three-characters-xx"),
    )
    .await;
    assert_eq!(wrong.status, StatusCode::BAD_REQUEST);
    assert_eq!(wrong.json()["error"], "invalid_grant");
    let missing = exchange(code().await, None).await;
    assert_eq!(missing.json()["error"], "invalid_grant");
    let right = exchange(code().await, Some(verifier)).await;
    assert_eq!(right.status, StatusCode::OK, "{}", text(&right));
    assert_eq!(right.json()["expires_in"], 7200);
}

#[tokio::test]
async fn a_denied_sign_in_answers_a_readable_page_and_no_session() {
    let world = World::new(7200, "60s").await;
    let mut jar = Jar::default();
    let authorize = start(&world, &mut jar, None).await;
    let callback = decide(&mut jar, &authorize, &world.demo.username, "deny").await;
    assert_eq!(query_of(&callback)["error"], "access_denied");
    let answer = jar.get(&callback).await;
    assert_eq!(answer.status, StatusCode::FORBIDDEN);
    assert!(text(&answer).contains("denied"), "{}", text(&answer));
    assert!(!jar.0.contains_key("svcgate_session"));
}

#[tokio::test]
async fn an_unreachable_token_endpoint_answers_a_readable_page() {
    let world = World::new(7200, "60s").await;
    let mut jar = Jar::default();
    let authorize = start(&world, &mut jar, None).await;
    let callback = decide(&mut jar, &authorize, &world.demo.username, "approve").await;
    world.sim.shutdown();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let answer = jar.get(&callback).await;
    assert_eq!(answer.status, StatusCode::BAD_GATEWAY, "{}", text(&answer));
    assert!(
        text(&answer).contains("could not be reached"),
        "{}",
        text(&answer)
    );
}

#[tokio::test]
async fn an_expired_token_is_refreshed_once_for_concurrent_requests_and_rotates() {
    let world = World::new(2, "0s").await;
    let mut jar = Jar::default();
    sign_in(&world, &mut jar, None).await;
    let first = world.bearer_tokens()[0].clone();
    tokio::time::sleep(Duration::from_millis(2300)).await;
    let cookies = jar.header();
    let page = format!("{}{}", world.gateway.url(), world.alerts_page());
    let headers = [("cookie", cookies.as_str())];
    let answers =
        futures_util::future::join_all((0..6).map(|_| send(Method::GET, &page, &headers, None))).await;
    for answer in &answers {
        assert_eq!(answer.status, StatusCode::OK, "{}", text(answer));
    }
    let refreshes: Vec<_> = world
        .token_calls("/oauth/token")
        .into_iter()
        .filter(|form| form["grant_type"] == "refresh_token")
        .collect();
    assert_eq!(refreshes.len(), 1, "one refresh for six requests at once");
    let tokens = world.bearer_tokens();
    let latest = tokens.last().unwrap().clone();
    assert_ne!(latest, first, "the pages use the new token");
    let bearer = |token: &str| format!("Bearer {token}");
    let old = send(
        Method::GET,
        &format!("{}/api/v4/user", world.sim.url()),
        &[("authorization", &bearer(&first))],
        None,
    )
    .await;
    assert_eq!(old.status, StatusCode::UNAUTHORIZED, "the old token is retired");
}

#[tokio::test]
async fn a_refused_refresh_ends_the_session() {
    let world = World::new(2, "0s").await;
    let mut jar = Jar::default();
    sign_in(&world, &mut jar, None).await;
    let token = world.bearer_tokens()[0].clone();
    // Revoked on the server (an administrator, say): the refresh token goes with it.
    let revoked = send(
        Method::POST,
        &format!("{}/oauth/revoke", world.sim.url()),
        &[],
        Some((
            "application/x-www-form-urlencoded",
            format!("token={token}&client_id={CLIENT_ID}&client_secret={CLIENT_SECRET}").into_bytes(),
        )),
    )
    .await;
    assert_eq!(revoked.status, StatusCode::OK);
    tokio::time::sleep(Duration::from_millis(2300)).await;
    let page = jar
        .get(&format!("{}{}", world.gateway.url(), world.alerts_page()))
        .await;
    assert_eq!(page.status, StatusCode::SEE_OTHER);
    assert!(
        location(&page).starts_with("/-/svcgate/sign_in?return_to="),
        "{}",
        location(&page)
    );
}

/// A session signed in through a refresh proxy with `oauth_refresh_retry` = `retry`, its 8 s token now within the
/// 7 s margin (due for refresh): the world, the browser, the first token and the alerts page's address.
async fn signed_in_due_for_refresh(retry: &str) -> (World, Jar, String, String) {
    let retry = retry.to_owned();
    let world = World::with_proxy(8, "7s", move |raw| {
        raw.oauth_refresh_retry = Some(retry);
    })
    .await;
    let mut jar = Jar::default();
    sign_in(&world, &mut jar, None).await;
    let first = world.bearer_tokens()[0].clone();
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let page = format!("{}{}", world.gateway.url(), world.alerts_page());
    (world, jar, first, page)
}

#[tokio::test]
async fn a_refresh_refused_for_a_passing_reason_keeps_the_session_on_its_current_token() {
    let (world, mut jar, first, page) = signed_in_due_for_refresh("1ms").await;
    for (status, code) in [(429, "slow_down"), (400, "invalid_request"), (403, "unknown")] {
        world.proxy().set(OnRefresh::Refuse(status, code));
        tokio::time::sleep(Duration::from_millis(5)).await;
        let answer = jar.get(&page).await;
        assert_eq!(
            answer.status,
            StatusCode::OK,
            "after {status} {code}: {}",
            text(&answer)
        );
        assert_eq!(
            world.bearer_tokens().last(),
            Some(&first),
            "the current token is kept"
        );
    }
    world.proxy().set(OnRefresh::Pass);
    tokio::time::sleep(Duration::from_millis(5)).await;
    let answer = jar.get(&page).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", text(&answer));
    assert_eq!(world.refreshes(), 1, "the next request refreshed it");
    assert_ne!(world.bearer_tokens().last(), Some(&first));
}

#[tokio::test]
async fn after_a_failed_refresh_the_server_is_left_alone_for_oauth_refresh_retry() {
    let (world, mut jar, first, page) = signed_in_due_for_refresh("2s").await;
    world.proxy().set(OnRefresh::Refuse(429, "slow_down"));
    // Six requests at once, then three more: the one refresh asked fails, and nobody asks again meanwhile.
    let cookies = jar.header();
    let headers = [("cookie", cookies.as_str())];
    let answers =
        futures_util::future::join_all((0..6).map(|_| send(Method::GET, &page, &headers, None))).await;
    for answer in &answers {
        assert_eq!(answer.status, StatusCode::OK, "{}", text(answer));
    }
    for _ in 0..3 {
        let answer = jar.get(&page).await;
        assert_eq!(answer.status, StatusCode::OK, "{}", text(&answer));
    }
    assert_eq!(
        world.proxy().asked(),
        1,
        "one refresh asked, then none while waiting"
    );
    assert_eq!(world.bearer_tokens().last(), Some(&first));

    world.proxy().set(OnRefresh::Pass);
    tokio::time::sleep(Duration::from_millis(2100)).await;
    let answer = jar.get(&page).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", text(&answer));
    assert_eq!(world.proxy().asked(), 2, "asked again once the wait was over");
    assert_ne!(world.bearer_tokens().last(), Some(&first));
}

#[tokio::test]
async fn a_refresh_slower_than_its_timeout_is_cut_and_the_current_token_kept() {
    let world = World::with_proxy(30, "29s", |raw| {
        raw.backend_timeout = Some("1s".to_owned());
    })
    .await;
    let mut jar = Jar::default();
    sign_in(&world, &mut jar, None).await;
    tokio::time::sleep(Duration::from_millis(1200)).await;
    world.proxy().set(OnRefresh::SlowBody(Duration::from_secs(10)));
    let began = std::time::Instant::now();
    let answer = jar
        .get(&format!("{}{}", world.gateway.url(), world.alerts_page()))
        .await;
    assert_eq!(answer.status, StatusCode::OK, "{}", text(&answer));
    assert!(
        began.elapsed() < Duration::from_secs(5),
        "the refresh is cut at twice the backend timeout, within its claim: {:?}",
        began.elapsed()
    );
}

#[tokio::test]
async fn tokens_refreshed_for_a_session_ended_meanwhile_are_revoked() {
    let world = World::with_proxy(8, "7s", |_| {}).await;
    let mut jar = Jar::default();
    sign_in(&world, &mut jar, None).await;
    tokio::time::sleep(Duration::from_millis(1200)).await;
    world.proxy().set(OnRefresh::Late(Duration::from_millis(1500)));
    let page = format!("{}{}", world.gateway.url(), world.alerts_page());
    let cookies = jar.header();
    let request = tokio::spawn(async move { send(Method::GET, &page, &[("cookie", &cookies)], None).await });
    // While the refresh is on its way, the session ends elsewhere (signed out on another replica, say).
    tokio::time::sleep(Duration::from_millis(500)).await;
    let store = rusqlite::Connection::open(world.gateway.data_dir.join("svcgate.db")).unwrap();
    assert_eq!(store.execute("DELETE FROM page_sessions", []).unwrap(), 1);
    let answer = request.await.unwrap();
    assert_eq!(
        answer.status,
        StatusCode::SEE_OTHER,
        "the session is gone: {}",
        text(&answer)
    );
    let issued = world.proxy().issued.lock().unwrap().clone();
    assert_eq!(issued.len(), 1, "{issued:?}");
    let revoked: Vec<String> = world
        .token_calls("/oauth/revoke")
        .into_iter()
        .map(|form| form["token"].clone())
        .collect();
    for name in ["access_token", "refresh_token"] {
        let token = issued[0][name].as_str().unwrap();
        assert!(
            revoked.iter().any(|gone| gone == token),
            "the new {name} is revoked: {revoked:?}"
        );
    }
    let with_new = send(
        Method::GET,
        &format!("{}/api/v4/user", world.sim.url()),
        &[(
            "authorization",
            &format!("Bearer {}", issued[0]["access_token"].as_str().unwrap()),
        )],
        None,
    )
    .await;
    assert_eq!(with_new.status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn signing_in_again_ends_the_previous_session_and_revokes_its_tokens() {
    let world = World::new(7200, "60s").await;
    let mut jar = Jar::default();
    let user = |token: String| {
        let url = format!("{}/api/v4/user", world.sim.url());
        async move {
            send(
                Method::GET,
                &url,
                &[("authorization", &format!("Bearer {token}"))],
                None,
            )
            .await
            .status
        }
    };
    let page = format!("{}{}", world.gateway.url(), world.alerts_page());

    sign_in(&world, &mut jar, None).await;
    let first_cookie = jar.header();
    assert_eq!(jar.get(&page).await.status, StatusCode::OK);
    let first = world.bearer_tokens()[0].clone();

    // Again through the server: the first session and its tokens end.
    sign_in(&world, &mut jar, None).await;
    assert_eq!(
        user(first.clone()).await,
        StatusCode::UNAUTHORIZED,
        "the first token is revoked"
    );
    let old = send(Method::GET, &page, &[("cookie", &first_cookie)], None).await;
    assert_eq!(old.status, StatusCode::SEE_OTHER, "the first session is closed");
    let second_cookie = jar.header();
    assert_eq!(jar.get(&page).await.status, StatusCode::OK);
    let second = world.bearer_tokens().last().unwrap().clone();
    assert_ne!(second, first);

    // Then with a pasted token: the OAuth session ends the same way.
    let form = jar
        .get(&format!("{}/-/svcgate/sign_in", world.gateway.url()))
        .await;
    let signed_in = jar
        .post(
            &format!("{}/-/svcgate/sign_in", world.gateway.url()),
            &format!("csrf={}&token={}", form.csrf(), world.demo.token),
        )
        .await;
    assert_eq!(signed_in.status, StatusCode::SEE_OTHER, "{}", text(&signed_in));
    assert_eq!(
        user(second).await,
        StatusCode::UNAUTHORIZED,
        "the second token is revoked"
    );
    let old = send(Method::GET, &page, &[("cookie", &second_cookie)], None).await;
    assert_eq!(old.status, StatusCode::SEE_OTHER, "the second session is closed");
    assert_eq!(jar.get(&page).await.status, StatusCode::OK, "the new one works");
}

#[tokio::test]
async fn signing_out_revokes_the_token_on_the_server() {
    let world = World::new(7200, "60s").await;
    let mut jar = Jar::default();
    let (_, target) = sign_in(&world, &mut jar, None).await;
    let page = jar.get(&format!("{}{target}", world.gateway.url())).await;
    let token = world.bearer_tokens()[0].clone();
    let works = send(
        Method::GET,
        &format!("{}/api/v4/user", world.sim.url()),
        &[("authorization", &format!("Bearer {token}"))],
        None,
    )
    .await;
    assert_eq!(works.status, StatusCode::OK);
    let out = jar
        .post(
            &format!("{}/-/svcgate/sign_out", world.gateway.url()),
            &format!("csrf={}", page.csrf()),
        )
        .await;
    assert_eq!(out.status, StatusCode::SEE_OTHER);
    assert!(!world.token_calls("/oauth/revoke").is_empty());
    let after = send(
        Method::GET,
        &format!("{}/api/v4/user", world.sim.url()),
        &[("authorization", &format!("Bearer {token}"))],
        None,
    )
    .await;
    assert_eq!(after.status, StatusCode::UNAUTHORIZED, "the token is revoked");
    let again = jar.get(&format!("{}{target}", world.gateway.url())).await;
    assert_eq!(again.status, StatusCode::SEE_OTHER, "and the session is gone");
}

#[tokio::test]
async fn a_link_followed_while_signed_out_comes_back_after_a_token_sign_in_and_never_leaves_the_pages() {
    let world = World::new(7200, "60s").await;
    let alert = format!("{}/7?notice=status", world.alerts_page());
    let mut jar = Jar::default();
    let sent = jar.get(&format!("{}{alert}", world.gateway.url())).await;
    assert_eq!(sent.status, StatusCode::SEE_OTHER);
    let sign_in_url = location(&sent);
    assert_eq!(query_of(&sign_in_url)["return_to"], alert);
    let form = jar.get(&format!("{}{sign_in_url}", world.gateway.url())).await;
    let post = |return_to: String| {
        let body = form_urlencoded::Serializer::new(String::new())
            .extend_pairs([
                ("csrf", form.csrf()),
                ("token", world.demo.token.clone()),
                ("return_to", return_to),
            ])
            .finish();
        let mut jar = jar.clone();
        let url = format!("{}/-/svcgate/sign_in", world.gateway.url());
        async move { jar.post(&url, &body).await }
    };
    let signed = post(alert.clone()).await;
    assert_eq!(location(&signed), alert);
    for elsewhere in [
        "//evil.example/-/svcgate/",
        "https://evil.example/",
        "/api/v4/user",
    ] {
        let signed = post(elsewhere.to_owned()).await;
        assert_eq!(location(&signed), "/-/svcgate/projects", "{elsewhere}");
    }
}

#[tokio::test]
async fn a_return_to_with_dot_segments_never_leaves_the_pages() {
    let world = World::new(7200, "60s").await;
    for hostile in [
        "/-/svcgate/../../oauth/authorize?client_id=EVIL&redirect_uri=https://evil/cb&response_type=code",
        "/-/svcgate/%252e%252e/%252e%252e/oauth/authorize?client_id=EVIL&response_type=code",
    ] {
        let mut jar = Jar::default();
        let form = jar
            .get(&format!(
                "{}/-/svcgate/sign_in?return_to={}",
                world.gateway.url(),
                form_urlencoded::byte_serialize(hostile.as_bytes()).collect::<String>()
            ))
            .await;
        assert!(
            !text(&form).contains("oauth/authorize"),
            "the sign-in page does not carry it on: {}",
            text(&form)
        );
        let (_, target) = sign_in(&world, &mut jar, Some(hostile)).await;
        assert_eq!(target, "/-/svcgate/projects", "{hostile}");
    }
}

#[tokio::test]
async fn serve_dev_signs_in_through_the_embedded_simulator_out_of_the_box() {
    let dev = DevGateway::start().await;
    let base = dev.base.clone();
    let mut jar = Jar::default();
    let started = jar.get(&format!("{base}/-/svcgate/oauth/start")).await;
    assert_eq!(started.status, StatusCode::SEE_OTHER, "{}", text(&started));
    let callback = decide(&mut jar, &location(&started), "demo", "approve").await;
    let signed_in = jar.get(&callback).await;
    assert_eq!(signed_in.status, StatusCode::OK, "{}", text(&signed_in));
    let projects = jar.get(&format!("{base}/-/svcgate/projects")).await;
    assert!(
        text(&projects).contains("demo-group/demo-project"),
        "{}",
        text(&projects)
    );
    dev.stop().await;
}

/// `url` with its scheme and authority replaced by `base` (a load balancer sending it to one replica).
fn to_replica(url: &str, base: &str) -> String {
    let rest = url.splitn(4, '/').nth(3).unwrap_or("");
    format!("{base}/{rest}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn on_postgresql_a_sign_in_started_on_one_replica_finishes_on_another_and_both_refresh_safely() {
    const PUBLIC: &str = "http://svcgate.test";
    let cluster = tokio::task::spawn_blocking(common::postgres::Postgres::start)
        .await
        .unwrap();
    let database = cluster.database("svcgate").await;
    let sim = common::sim::start_with(SimOptions {
        oauth_token_lifetime_secs: 2,
        oauth_application: Some(OAuthApplication {
            name: "svcgate".to_owned(),
            client_id: CLIENT_ID.to_owned(),
            secret: CLIENT_SECRET.to_owned(),
            redirect_uri: format!("{PUBLIC}/-/svcgate/oauth/callback"),
            scopes: vec!["read_api".to_owned()],
        }),
        ..SimOptions::default()
    })
    .await;
    let demo = sim.seed_demo();
    let backend = sim.url();
    let replica = || {
        let database = database.clone();
        TestGateway::start_with(&backend, move |raw| {
            raw.database_url = Some(database);
            raw.secret_key =
                Some("5f0c6a8e2d4b1f3a9c7e5d2b0a8f6e4c2a0b9d8c7e6f5a4b3c2d1e0f9a8b7c6d".to_owned());
            raw.public_url = Some(PUBLIC.to_owned());
            raw.oauth_client_id = Some(CLIENT_ID.to_owned());
            raw.oauth_client_secret = Some(CLIENT_SECRET.to_owned());
            raw.oauth_refresh_margin = Some("0s".to_owned());
        })
    };
    let (first, second) = (replica().await, replica().await);

    let mut jar = Jar::default();
    let started = jar.get(&format!("{}/-/svcgate/oauth/start", first.url())).await;
    let authorize = location(&started);
    assert!(
        authorize.starts_with(&format!("{PUBLIC}/oauth/authorize?")),
        "{authorize}"
    );
    let callback = decide(
        &mut jar,
        &to_replica(&authorize, &first.url()),
        &demo.username,
        "approve",
    )
    .await;
    assert!(callback.starts_with(PUBLIC), "{callback}");
    let signed_in = jar.get(&to_replica(&callback, &second.url())).await;
    assert_eq!(signed_in.status, StatusCode::OK, "{}", text(&signed_in));
    let on_first = jar.get(&format!("{}/-/svcgate/projects", first.url())).await;
    assert!(
        text(&on_first).contains(&demo.project_path),
        "{}",
        text(&on_first)
    );

    // The token expires; both replicas get requests of the session at once.
    tokio::time::sleep(Duration::from_millis(2300)).await;
    let cookies = jar.header();
    let headers = [("cookie", cookies.as_str())];
    let (first_url, second_url) = (
        format!("{}/-/svcgate/projects", first.url()),
        format!("{}/-/svcgate/projects", second.url()),
    );
    let answers = futures_util::future::join_all((0..6).map(|n| {
        let url = if n % 2 == 0 { &first_url } else { &second_url };
        send(Method::GET, url, &headers, None)
    }))
    .await;
    for answer in &answers {
        assert_eq!(
            answer.status,
            StatusCode::OK,
            "nobody is signed out: {}",
            text(answer)
        );
        assert!(text(answer).contains(&demo.project_path));
    }
    let refreshes = sim
        .requests()
        .into_iter()
        .filter(|request| {
            request.path == "/oauth/token"
                && String::from_utf8_lossy(&request.body).contains("grant_type=refresh_token")
        })
        .count();
    assert_eq!(
        refreshes, 1,
        "one refresh for the session, whichever replica made it"
    );
}

//! A browser's side of signing in through the server's OAuth provider, without a browser: a cookie jar, and the
//! steps of the sign-in (start at the gateway, the provider's authorize page and its decision). The suites that
//! sign in this way (`alerts/oauth.rs`, `log_secrets.rs`) assert what they need on top.

use std::collections::BTreeMap;

use http::{Method, StatusCode};

use super::{send, Answer};

/// A browser's cookies, from the `Set-Cookie` headers it was sent (a cookie set empty or with `Max-Age=0` is
/// dropped).
#[derive(Default, Clone)]
pub struct Jar(pub BTreeMap<String, String>);

impl Jar {
    /// Keeps the cookies `answer` sets.
    pub fn take(&mut self, answer: &Answer) {
        for value in answer.headers.get_all("set-cookie") {
            let text = value.to_str().unwrap();
            let pair = text.split(';').next().unwrap();
            let (name, value) = pair.split_once('=').unwrap();
            if text.contains("Max-Age=0") || value.is_empty() {
                self.0.remove(name);
            } else {
                self.0.insert(name.to_owned(), value.to_owned());
            }
        }
    }

    /// The `Cookie` header the browser sends.
    pub fn header(&self) -> String {
        self.0
            .iter()
            .map(|(name, value)| format!("{name}={value}"))
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// Sends a request with the jar's cookies and an optional form, keeping the cookies of the answer.
    pub async fn send(&mut self, method: Method, url: &str, form: Option<String>) -> Answer {
        let cookies = self.header();
        let answer = send(
            method,
            url,
            &[("cookie", cookies.as_str())],
            form.map(|body| ("application/x-www-form-urlencoded", body.into_bytes())),
        )
        .await;
        self.take(&answer);
        answer
    }

    /// `GET` with the jar's cookies.
    pub async fn get(&mut self, url: &str) -> Answer {
        self.send(Method::GET, url, None).await
    }

    /// Posts a form with the jar's cookies.
    pub async fn post(&mut self, url: &str, form: &str) -> Answer {
        self.send(Method::POST, url, Some(form.to_owned())).await
    }
}

/// The body as text.
pub fn text(answer: &Answer) -> String {
    String::from_utf8_lossy(&answer.body).into_owned()
}

/// The `Location` an answer redirects to.
pub fn location(answer: &Answer) -> String {
    answer
        .header("location")
        .unwrap_or_else(|| panic!("no Location in a {} answer: {}", answer.status, text(answer)))
        .to_owned()
}

/// The query parameters of `url`.
pub fn query_of(url: &str) -> BTreeMap<String, String> {
    let query = url.split_once('?').map_or("", |(_, query)| query);
    form_urlencoded::parse(query.as_bytes()).into_owned().collect()
}

/// Starts a sign-in at the gateway at `gateway` (optionally asking to return to `return_to`) and answers the
/// authorize address it sends the browser to.
pub async fn start(jar: &mut Jar, gateway: &str, return_to: Option<&str>) -> String {
    let mut url = format!("{gateway}/-/svcgate/oauth/start");
    if let Some(path) = return_to {
        url.push_str(&format!(
            "?return_to={}",
            form_urlencoded::byte_serialize(path.as_bytes()).collect::<String>()
        ));
    }
    let started = jar.get(&url).await;
    assert_eq!(started.status, StatusCode::SEE_OTHER, "{}", text(&started));
    location(&started)
}

/// Shows the authorize page and presses one of its buttons (`approve` or `deny`) as `username`; answers the page
/// and where the provider redirects.
pub async fn decide(jar: &mut Jar, authorize: &str, username: &str, decision: &str) -> (Answer, String) {
    let page = jar.get(authorize).await;
    assert_eq!(page.status, StatusCode::OK, "{}", text(&page));
    let mut form = query_of(authorize);
    form.insert("username".to_owned(), username.to_owned());
    form.insert("decision".to_owned(), decision.to_owned());
    let body: String = form_urlencoded::Serializer::new(String::new())
        .extend_pairs(form.iter())
        .finish();
    let base = authorize.split("/oauth/authorize").next().unwrap();
    let decided = jar.post(&format!("{base}/oauth/authorize"), &body).await;
    assert_eq!(decided.status, StatusCode::FOUND, "{}", text(&decided));
    (page, location(&decided))
}

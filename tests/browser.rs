//! The web pages in a real headless Chromium, driven over WebDriver (Debian's `chromium` and
//! `chromium-driver`; `./test.sh` installs them). Each journey signs in with a real token on a gateway in
//! front of svc-sim and uses the pages as a person would, saving a screenshot after each step to
//! `test-output/browser/NN-<journey>-<step>.png`. When a step fails, the test saves `…-failure.png` and
//! `…-failure.html` beside them and says which step failed, on which address, and what the page showed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::fs;
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, ensure, Context as _, Result};
use fantoccini::elements::Element;
use fantoccini::wd::{Capabilities, TimeoutConfiguration};
use fantoccini::{Client, ClientBuilder, Locator};
use hyper_util::client::legacy::connect::HttpConnector;
use serde_json::{json, Value};

use common::alerts::{post_alert, AlertWorld};

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
/// How long a step waits for an element or a page to appear.
const WAIT: Duration = Duration::from_secs(10);
/// How long a whole journey may take.
const JOURNEY: Duration = Duration::from_secs(180);
const PROJECT_PATH: &str = "demo-group/demo-project";

// ---------------------------------------------------------------------------------------------------------
// Harness: chromedriver as a child process, one browser session per journey, screenshots.
// ---------------------------------------------------------------------------------------------------------

/// A chromedriver started for one journey, in a process group of its own so that the browsers it starts
/// end with it; the browser profile lives in a temporary directory that goes with it.
struct ChromeDriver {
    child: Child,
    port: u16,
    profile: tempfile::TempDir,
}

impl ChromeDriver {
    fn start() -> Self {
        for (path, what) in [(CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")] {
            assert!(
                Path::new(path).exists(),
                "{path} is missing: the browser tests need Debian's `{what}` package; run ./test.sh, which \
                 installs `chromium` and `chromium-driver` (or apt-get install -y --no-install-recommends \
                 chromium chromium-driver)"
            );
        }
        let profile = tempfile::tempdir().unwrap();
        let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let log = profile.path().join("chromedriver.log");
        let mut command = Command::new(CHROMEDRIVER);
        command
            .arg(format!("--port={port}"))
            .arg(format!("--log-path={}", log.display()))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let child = command
            .spawn()
            .unwrap_or_else(|error| panic!("cannot start {CHROMEDRIVER}: {error}; run ./test.sh"));
        let mut driver = ChromeDriver { child, port, profile };
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if TcpStream::connect((Ipv4Addr::LOCALHOST, port)).is_ok() {
                break;
            }
            if let Ok(Some(status)) = driver.child.try_wait() {
                panic!(
                    "chromedriver exited ({status}) before listening on port {port}; its log:\n{}",
                    fs::read_to_string(&log).unwrap_or_default()
                );
            }
            assert!(
                Instant::now() < deadline,
                "chromedriver did not listen on port {port} within 20 s"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        driver
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn log(&self) -> String {
        fs::read_to_string(self.profile.path().join("chromedriver.log")).unwrap_or_default()
    }
}

impl Drop for ChromeDriver {
    fn drop(&mut self) {
        // The group is the one this test created for chromedriver (its id is chromedriver's pid): it holds
        // chromedriver and the Chromium processes it started.
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.child.id())])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One journey's browser: a WebDriver session on a fresh profile, the gateway's address, and the journey's
/// screenshot numbering.
struct Browser {
    client: Client,
    base: String,
    journey: &'static str,
    step: AtomicU32,
    // Dropped last: ends chromedriver and its browsers even when a test panics.
    _driver: ChromeDriver,
}

/// Where the screenshots go.
fn output_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("test-output/browser")
}

impl Browser {
    /// Starts chromedriver and a headless Chromium of `width`×`height` on the gateway at `base`.
    async fn open(journey: &'static str, base: &str, width: u32, height: u32) -> Self {
        let driver = ChromeDriver::start();
        let profile = driver.profile.path().join("profile");
        let mut capabilities = Capabilities::new();
        capabilities.insert("browserName".to_owned(), json!("chrome"));
        capabilities.insert(
            "goog:chromeOptions".to_owned(),
            json!({
                "binary": CHROMIUM,
                "args": [
                    "--headless=new",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--disable-dev-shm-usage",
                    "--disable-quic",
                    "--no-first-run",
                    "--disable-background-networking",
                    "--disable-component-update",
                    "--disable-sync",
                    format!("--user-data-dir={}", profile.display()),
                    format!("--window-size={width},{height}"),
                ],
            }),
        );
        let client = ClientBuilder::new(HttpConnector::new())
            .capabilities(capabilities)
            .connect(&driver.url())
            .await
            .unwrap_or_else(|error| {
                panic!(
                    "cannot open a Chromium session through chromedriver: {error}; chromedriver's log:\n{}",
                    driver.log()
                )
            });
        client
            .update_timeouts(TimeoutConfiguration::new(
                Some(Duration::from_secs(10)),
                Some(Duration::from_secs(30)),
                Some(Duration::ZERO),
            ))
            .await
            .unwrap();
        let directory = output_dir();
        fs::create_dir_all(&directory).unwrap();
        // Screenshots of an earlier run of this journey would mislead.
        let mine = format!("-{journey}-");
        for entry in fs::read_dir(&directory).unwrap().flatten() {
            if entry.file_name().to_string_lossy().contains(&mine) {
                let _ = fs::remove_file(entry.path());
            }
        }
        Browser {
            client,
            base: base.trim_end_matches('/').to_owned(),
            journey,
            step: AtomicU32::new(0),
            _driver: driver,
        }
    }

    /// Ends the session; when the journey failed, saves a screenshot and the page's source and fails the test
    /// with the step's error, the address and the page's text.
    async fn finish(self, outcome: Result<()>) {
        let Err(error) = outcome else {
            self.client.close().await.unwrap();
            return;
        };
        let number = self.step.fetch_add(1, Ordering::SeqCst) + 1;
        let stem = output_dir().join(format!("{number:02}-{}-failure", self.journey));
        let screenshot = match self.client.screenshot().await {
            Ok(png) => fs::write(stem.with_extension("png"), png)
                .map(|()| stem.with_extension("png").display().to_string())
                .unwrap_or_else(|error| format!("(not saved: {error})")),
            Err(error) => format!("(not taken: {error})"),
        };
        let source = match self.client.source().await {
            Ok(html) => fs::write(stem.with_extension("html"), html)
                .map(|()| stem.with_extension("html").display().to_string())
                .unwrap_or_else(|error| format!("(not saved: {error})")),
            Err(error) => format!("(not read: {error})"),
        };
        let address = self.address().await;
        let text = self
            .client
            .execute("return document.body ? document.body.innerText : '';", vec![])
            .await
            .ok()
            .and_then(|value| value.as_str().map(str::to_owned))
            .unwrap_or_default();
        let text: String = text.chars().take(2000).collect();
        let _ = self.client.clone().close().await;
        panic!(
            "browser journey `{}` failed: {error:#}\n  at: {address}\n  screenshot: {screenshot}\n  page source: \
             {source}\n  the page showed:\n{}\n",
            self.journey,
            indent(&text)
        );
    }

    /// The current address, for messages.
    async fn address(&self) -> String {
        self.client
            .current_url()
            .await
            .map(|url| url.to_string())
            .unwrap_or_else(|error| format!("(unknown: {error})"))
    }

    /// The current path and query.
    async fn path(&self) -> Result<String> {
        let url = self.client.current_url().await?;
        Ok(match url.query() {
            Some(query) => format!("{}?{query}", url.path()),
            None => url.path().to_owned(),
        })
    }

    /// Saves a screenshot of the current page as the journey's next step.
    async fn shot(&self, step: &str) -> Result<()> {
        let number = self.step.fetch_add(1, Ordering::SeqCst) + 1;
        let png = self
            .client
            .screenshot()
            .await
            .with_context(|| format!("taking the screenshot of step `{step}`"))?;
        ensure!(
            png.starts_with(b"\x89PNG\r\n\x1a\n"),
            "the screenshot of `{step}` is not a PNG"
        );
        let file = output_dir().join(format!("{number:02}-{}-{step}.png", self.journey));
        fs::write(&file, png).with_context(|| format!("writing {}", file.display()))?;
        Ok(())
    }

    /// Opens a gateway page (a path starting with `/`) and waits until it has loaded.
    async fn goto(&self, path: &str) -> Result<()> {
        self.client
            .goto(&format!("{}{path}", self.base))
            .await
            .with_context(|| format!("opening {path}"))?;
        self.wait_loaded(&format!("{path} to load")).await
    }

    /// The HTTP status of the current page's main document (Chromium's Navigation Timing).
    async fn http_status(&self) -> Result<u64> {
        let status = self
            .client
            .execute(
                "const entry = performance.getEntriesByType('navigation')[0]; \
                 return entry ? entry.responseStatus : null;",
                vec![],
            )
            .await?;
        status
            .as_u64()
            .ok_or_else(|| anyhow!("the browser did not tell the page's HTTP status ({status})"))
    }

    /// Waits until `script` (a JavaScript function body) answers `true`.
    async fn wait_js(&self, what: &str, script: &str) -> Result<()> {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Ok(Value::Bool(true)) = self.client.execute(script, vec![]).await {
                return Ok(());
            }
            if Instant::now() > deadline {
                bail!("waited {WAIT:?} for {what}");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    async fn wait_loaded(&self, what: &str) -> Result<()> {
        self.wait_js(what, "return document.readyState === 'complete';")
            .await
    }

    /// The element `css` on the current page, waiting for it a while.
    async fn find(&self, css: &str) -> Result<Element> {
        match self
            .client
            .wait()
            .at_most(WAIT)
            .for_element(Locator::Css(css))
            .await
        {
            Ok(element) => Ok(element),
            Err(error) => Err(anyhow!("the page has no `{css}` (looked for {WAIT:?}; {error})")),
        }
    }

    /// Whether the current page has `css` now (no waiting).
    async fn has(&self, css: &str) -> Result<bool> {
        Ok(!self.client.find_all(Locator::Css(css)).await?.is_empty())
    }

    /// The visible text of `css`, trimmed.
    async fn text(&self, css: &str) -> Result<String> {
        let element = self.find(css).await?;
        Ok(element.text().await?.trim().to_owned())
    }

    /// The `value` of the form field `css`.
    async fn value(&self, css: &str) -> Result<String> {
        let element = self.find(css).await?;
        Ok(element.prop("value").await?.unwrap_or_default())
    }

    /// Types `text` into the empty field `css`, as a person would.
    async fn fill(&self, css: &str, text: &str) -> Result<()> {
        let element = self.find(css).await?;
        element.clear().await?;
        element
            .send_keys(text)
            .await
            .with_context(|| format!("typing into `{css}`"))?;
        Ok(())
    }

    /// Ticks or unticks the checkbox `css`.
    async fn check(&self, css: &str, on: bool) -> Result<()> {
        let element = self.find(css).await?;
        if element.is_selected().await? != on {
            element.click().await?;
        }
        ensure!(
            element.is_selected().await? == on,
            "clicking `{css}` did not set it to {on}"
        );
        Ok(())
    }

    /// Chooses the option with `value` in the select `css`.
    async fn select(&self, css: &str, value: &str) -> Result<()> {
        let element = self.find(css).await?;
        element
            .select_by_value(value)
            .await
            .with_context(|| format!("choosing the option `{value}` of `{css}`"))?;
        Ok(())
    }

    /// Clicks `css` (a link or a submit button) and waits until the next page has loaded.
    async fn click_and_load(&self, css: &str) -> Result<()> {
        let element = self.find(css).await?;
        self.click_element_and_load(&element, css).await
    }

    async fn click_element_and_load(&self, element: &Element, what: &str) -> Result<()> {
        self.client
            .execute("window.__svcgateOldPage = true; return true;", vec![])
            .await?;
        element
            .click()
            .await
            .with_context(|| format!("clicking `{what}`"))?;
        self.wait_js(
            &format!("a new page after clicking `{what}`"),
            "return !window.__svcgateOldPage && document.readyState === 'complete';",
        )
        .await
    }

    /// The number in the tab `status` of the alert list.
    async fn count(&self, status: &str) -> Result<u64> {
        let css = format!("a.tab[data-status=\"{status}\"] .count");
        let text = self.text(&css).await?;
        text.trim()
            .parse()
            .map_err(|_| anyhow!("the count of the `{status}` tab is `{text}`, not a number"))
    }

    /// Checks the counts of the alert list's tabs.
    async fn expect_counts(&self, expected: &[(&str, u64)]) -> Result<()> {
        let mut seen = Vec::new();
        for (status, _) in expected {
            seen.push((*status, self.count(status).await?));
        }
        ensure!(
            seen.as_slice() == expected,
            "the tab counts are {seen:?}, expected {expected:?}"
        );
        Ok(())
    }

    /// The alert list's row whose title contains `title`, if the current page lists it.
    async fn row(&self, title: &str) -> Result<Option<Element>> {
        for row in self.client.find_all(Locator::Css("tr.alert")).await? {
            let cell = row.find(Locator::Css("td.title")).await?;
            if cell.text().await?.contains(title) {
                return Ok(Some(row));
            }
        }
        Ok(None)
    }

    /// The text of the cell `css` of `row`.
    async fn cell(row: &Element, css: &str) -> Result<String> {
        let cell = row
            .find(Locator::Css(css))
            .await
            .with_context(|| format!("the row has no `{css}`"))?;
        Ok(cell.text().await?.trim().to_owned())
    }

    /// Signs in as `username` through the server, as people do: "Sign in with svc", then the server's authorize
    /// page (the simulator asks which user), then back on the projects page, which must greet `username`. The
    /// pasted-token form (`token`) is covered by the sign-out journey and `tests/pages.rs`.
    async fn sign_in(&self, token: &str, username: &str) -> Result<()> {
        ensure!(!token.is_empty(), "the journey's user has no token");
        self.goto("/-/svcgate/sign_in").await?;
        self.approve_sign_in(username).await?;
        self.wait_for_path("/-/svcgate/projects").await?;
        let user = self.text("#current-user").await?;
        ensure!(
            user.contains(username),
            "#current-user says `{user}`, not `{username}`"
        );
        Ok(())
    }

    /// On the sign-in page: clicks "Sign in with svc" and approves the sign-in as `username` on the server's
    /// authorize page.
    async fn approve_sign_in(&self, username: &str) -> Result<()> {
        self.click_and_load("#sign-in-oauth").await?;
        let path = self.path().await?;
        ensure!(
            path.starts_with("/oauth/authorize?"),
            "Sign in with svc led to {path}, not the server's authorize page"
        );
        self.select("#username", username).await?;
        self.click_and_load("#authorize").await
    }

    /// Waits until the browser is at `expected` (path and query): the page after signing in moves on by itself.
    async fn wait_for_path(&self, expected: &str) -> Result<()> {
        let deadline = Instant::now() + WAIT;
        loop {
            let path = self.path().await?;
            if path == expected {
                return self.wait_loaded(&format!("{expected} to load")).await;
            }
            if Instant::now() > deadline {
                bail!("waited {WAIT:?} to be at {expected}; the browser is at {path}");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Fails when the page is wider than the window (it would scroll sideways on a phone).
    async fn expect_no_sideways_scrolling(&self, page: &str) -> Result<()> {
        let widths = self
            .client
            .execute(
                "return [document.documentElement.scrollWidth, window.innerWidth];",
                vec![],
            )
            .await?;
        let (scroll, inner) = (widths[0].as_u64(), widths[1].as_u64());
        let (Some(scroll), Some(inner)) = (scroll, inner) else {
            bail!("could not measure the page: {widths}");
        };
        if scroll > inner {
            let widest = self
                .client
                .execute(
                    "const inner = window.innerWidth; \
                     return Array.from(document.querySelectorAll('body *')) \
                       .filter(e => e.getBoundingClientRect().right > inner + 0.5) \
                       .slice(0, 8) \
                       .map(e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') \
                         + (typeof e.className === 'string' && e.className ? '.' + e.className.trim().split(/\\s+/).join('.') : '') \
                         + ' (right edge ' + Math.round(e.getBoundingClientRect().right) + ')');",
                    vec![],
                )
                .await?;
            bail!("the {page} is {scroll}px wide in a {inner}px window; elements past the edge: {widest}");
        }
        Ok(())
    }
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|line| format!("    | {line}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Runs a journey with a time limit.
async fn limited(journey: impl std::future::Future<Output = Result<()>>) -> Result<()> {
    match tokio::time::timeout(JOURNEY, journey).await {
        Ok(outcome) => outcome,
        Err(_) => Err(anyhow!("the journey took longer than {JOURNEY:?}")),
    }
}

/// Wraps a step's error with the step's name.
macro_rules! step {
    ($name:expr, $body:expr) => {
        $body.await.with_context(|| format!("step `{}`", $name))?
    };
}

fn alerts_path(project: &str, query: &str) -> String {
    format!("/-/svcgate/projects/{project}/alerts{query}")
}

fn settings_path(project: &str) -> String {
    format!("/-/svcgate/projects/{project}/settings/operations")
}

// ---------------------------------------------------------------------------------------------------------
// The harness itself, on a page that exists regardless of the HTML pages.
// ---------------------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_browser_harness_drives_chromium() {
    let world = AlertWorld::new().await;
    let browser = Browser::open("harness", &world.gateway.url(), 1280, 900).await;
    let outcome = limited(harness_journey(&browser)).await;
    browser.finish(outcome).await;
}

async fn harness_journey(b: &Browser) -> Result<()> {
    step!("health", b.goto("/-/svcgate/health"));
    let text = b.text("body").await?;
    ensure!(text.contains("\"ok\""), "/-/svcgate/health showed `{text}`");
    ensure!(b.http_status().await? == 200, "health did not answer 200");
    b.shot("health").await?;
    b.client
        .goto("data:text/html,<title>t</title><p id=hello>Hello, browser</p>")
        .await?;
    ensure!(b.text("#hello").await? == "Hello, browser");
    b.shot("data-url").await?;
    Ok(())
}

// ---------------------------------------------------------------------------------------------------------
// Journeys.
// ---------------------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_maintainer_signs_in_creates_an_endpoint_sends_a_test_alert_and_triages_it() {
    let world = AlertWorld::new().await;
    let browser = Browser::open("maintainer", &world.gateway.url(), 1280, 900).await;
    let outcome = limited(maintainer_journey(&browser, &world)).await;
    browser.finish(outcome).await;
}

async fn maintainer_journey(b: &Browser, world: &AlertWorld) -> Result<()> {
    let id = world.demo.project_id.to_string();
    let endpoint = "Production monitoring";

    // Sign in and find the project.
    step!("sign in", b.sign_in(&world.maintainer, "maintainer"));
    b.shot("signed-in").await?;
    let link = step!("projects page", b.find("a.project-link"));
    let name = link.text().await?;
    ensure!(
        name.trim() == PROJECT_PATH,
        "the project link says `{name}`, not `{PROJECT_PATH}`"
    );
    step!(
        "open the project",
        b.click_element_and_load(&link, "a.project-link")
    );
    let path = b.path().await?;
    ensure!(
        path.contains("/alerts"),
        "the project link led to {path}, not the project's alert list"
    );
    step!("empty alert list", b.find("#empty-state"));
    b.shot("empty-alert-list").await?;

    // Create an HTTP Endpoint and send its sample payload as a test alert.
    step!("open the settings", b.click_and_load("#nav-settings"));
    step!("settings page", b.find("#new-integration"));
    b.shot("settings").await?;
    step!("choose HTTP Endpoint", b.select("#type", "http"));
    step!("name", b.fill("#name", endpoint));
    step!("active", b.check("#active", true));
    step!(
        "sample payload",
        b.fill(
            "#payload_example",
            r#"{"title":"Disk full on db1","severity":"high"}"#
        )
    );
    b.shot("new-endpoint-form").await?;
    step!("save and test", b.click_and_load("#save-and-test"));
    if b.has("#error").await? {
        bail!(
            "saving the HTTP Endpoint showed an error: {}",
            b.text("#error").await?
        );
    }
    let notice = step!("the notice after saving", b.text("#notice")).to_lowercase();
    ensure!(
        notice.contains("saved") && notice.contains("test"),
        "the notice after \"Save and test alert payload\" is `{notice}`; it should say the integration was saved \
         and the test alert sent"
    );
    b.shot("endpoint-saved").await?;

    // The integrations table lists it, active.
    let mut row = None;
    for candidate in b.client.find_all(Locator::Css("tr.integration")).await? {
        if Browser::cell(&candidate, "td.name").await? == endpoint {
            row = Some(candidate);
        }
    }
    let row = row.ok_or_else(|| anyhow!("the integrations table does not list `{endpoint}`"))?;
    let kind = Browser::cell(&row, "td.type").await?;
    ensure!(
        kind.to_lowercase().contains("http"),
        "the type cell says `{kind}`"
    );
    let status = Browser::cell(&row, "td.status").await?.to_lowercase();
    ensure!(
        (status.contains("active") || status.contains("enabled"))
            && !status.contains("inactive")
            && !status.contains("disabled"),
        "the status cell says `{status}`, not that the integration is active"
    );

    // Its page shows the address and the key.
    let edit = row
        .find(Locator::Css("a.edit"))
        .await
        .context("the integration's row has no a.edit link")?;
    step!("open the integration", b.click_element_and_load(&edit, "a.edit"));
    let address = step!("the address", b.value("#integration-url"));
    let key = step!("the key", b.value("#integration-key"));
    ensure!(
        address.starts_with("http") && address.contains("/alerts/notify/"),
        "#integration-url holds `{address}`, not an HTTP Endpoint address"
    );
    ensure!(!key.is_empty(), "#integration-key is empty");
    ensure!(
        b.find("#integration-url")
            .await?
            .attr("readonly")
            .await?
            .is_some(),
        "#integration-url is not read-only"
    );
    step!("copy buttons", b.find("button.copy"));
    step!("edit form", b.find("#edit-integration"));
    b.shot("integration-address-and-key").await?;

    // A monitoring tool sends an alert, twice (one fingerprint: one alert of two events).
    let firing = json!({
        "title": "CPU high on web1",
        "description": "Load average above 8 for 5 minutes",
        "severity": "critical",
        "service": "web",
        "monitoring_tool": "Prometheus",
        "hosts": ["web1"],
        "fingerprint": "cpu-web1",
        "svc_environment_name": "production",
        "runbook": "https://runbooks.example/cpu"
    });
    for _ in 0..2 {
        let answer = post_alert(&address, &key, &firing).await;
        ensure!(
            answer.status.is_success(),
            "posting an alert to the address shown ({address}) answered {}: {}",
            answer.status,
            String::from_utf8_lossy(&answer.body)
        );
    }

    // The "Alert test payload" box.
    step!("back to the settings", b.goto(&settings_path(&id)));
    let select = step!("the test box", b.find("#test-alert #test-integration"));
    let mut option_value = None;
    for option in select.find_all(Locator::Css("option")).await? {
        if option.text().await?.contains(endpoint) {
            option_value = option.prop("value").await?;
        }
    }
    let option_value =
        option_value.ok_or_else(|| anyhow!("#test-integration has no option for `{endpoint}`"))?;
    step!(
        "choose the integration",
        b.select("#test-integration", &option_value)
    );
    step!(
        "test payload",
        b.fill(
            "#test-payload",
            r#"{"title":"Memory low on cache1","severity":"low"}"#
        )
    );
    b.shot("test-alert-box").await?;
    step!("test alert payload", b.click_and_load("#test-alert-button"));
    if b.has("#error").await? {
        bail!(
            "\"Test alert payload\" showed an error: {}",
            b.text("#error").await?
        );
    }
    let notice = step!("the notice after the test", b.text("#notice"));
    ensure!(!notice.is_empty(), "the notice after the test is empty");
    b.shot("test-alert-sent").await?;

    // The alert list: three open alerts.
    step!("open the alert list", b.click_and_load("#nav-alerts"));
    step!("alert table", b.find("table#alerts"));
    let current = b
        .find("a.tab[aria-current=\"page\"]")
        .await?
        .attr("data-status")
        .await?;
    ensure!(
        current.as_deref() == Some("open"),
        "the list opens on the tab {current:?}, not Open"
    );
    step!(
        "counts with three triggered alerts",
        b.expect_counts(&[
            ("open", 3),
            ("triggered", 3),
            ("acknowledged", 0),
            ("resolved", 0),
            ("all", 3),
        ])
    );
    for title in ["Disk full on db1", "Memory low on cache1", "CPU high on web1"] {
        ensure!(
            b.row(title).await?.is_some(),
            "the Open tab does not list `{title}`"
        );
    }
    let row = b.row("CPU high on web1").await?.context("no CPU row")?;
    let severity = Browser::cell(&row, "td.severity").await?.to_lowercase();
    ensure!(
        severity.contains("critical"),
        "the severity cell says `{severity}`"
    );
    let events = Browser::cell(&row, "td.events").await?;
    ensure!(events == "2", "the events cell says `{events}`, not 2");
    let status = Browser::cell(&row, "td.status").await?.to_lowercase();
    ensure!(status.contains("triggered"), "the status cell says `{status}`");
    let environment = Browser::cell(&row, "td.environment").await?;
    ensure!(
        environment.contains("production"),
        "the environment cell says `{environment}`"
    );
    ensure!(
        !Browser::cell(&row, "td.started").await?.is_empty(),
        "the start time cell is empty"
    );
    b.shot("alert-list-open").await?;

    // The environments dashboard shows the open alert of `production`.
    step!("open the environments", b.click_and_load("#nav-environments"));
    let section = step!(
        "the production environment",
        b.find("#environments section.environment")
    );
    let text = section.text().await?;
    ensure!(
        text.contains("production") && text.contains("CPU high on web1"),
        "the environments dashboard shows `{text}`, not the open alert of `production`"
    );
    b.shot("environments").await?;
    step!("back to the list", b.click_and_load("#nav-alerts"));

    // Search.
    step!("search", b.fill("#search-form #search", "cpu"));
    let search = b.find("#search").await?;
    b.client
        .execute("window.__svcgateOldPage = true; return true;", vec![])
        .await?;
    search.send_keys("\u{E007}").await?;
    step!(
        "search results",
        b.wait_js(
            "the search results",
            "return !window.__svcgateOldPage && document.readyState === 'complete';"
        )
    );
    let rows = b.client.find_all(Locator::Css("tr.alert")).await?;
    ensure!(
        rows.len() == 1 && b.row("CPU high on web1").await?.is_some(),
        "searching `cpu` lists {} rows, expected only `CPU high on web1`",
        rows.len()
    );
    b.shot("alert-list-search").await?;

    // Open the alert.
    let row = b.row("CPU high on web1").await?.context("no CPU row")?;
    let link = row
        .find(Locator::Css("td.title a"))
        .await
        .context("the title cell has no link")?;
    step!("open the alert", b.click_element_and_load(&link, "td.title a"));
    let title = step!("alert title", b.text("#alert-title"));
    ensure!(title.contains("CPU high on web1"), "#alert-title says `{title}`");
    let status = step!("alert status", b.text("#alert-status"));
    ensure!(
        status.to_lowercase() == "triggered",
        "#alert-status says `{status}`"
    );
    let events = step!("alert events", b.text("#alert-events"));
    ensure!(events.contains('2'), "#alert-events says `{events}`");
    let severity = step!("alert severity", b.text("#alert-severity"));
    ensure!(
        severity.to_lowercase().contains("critical"),
        "#alert-severity says `{severity}`"
    );
    let payload = step!("raw payload", b.text("pre#payload"));
    ensure!(
        payload.contains("\"runbook\"") && payload.contains('\n'),
        "#payload does not show the raw payload as formatted JSON: `{payload}`"
    );
    step!("incident section", b.find("#incident"));
    b.shot("alert-triggered").await?;
    let alert_path = b.path().await?;

    // Acknowledge.
    step!("choose acknowledged", b.select("#status", "acknowledged"));
    step!("change status", b.click_and_load("#change-status"));
    let status = step!("status after acknowledging", b.text("#alert-status"));
    ensure!(
        status.to_lowercase() == "acknowledged",
        "after acknowledging, #alert-status says `{status}`"
    );
    step!("notice after acknowledging", b.find("#notice"));
    b.shot("alert-acknowledged").await?;

    step!("list after acknowledging", b.goto(&alerts_path(&id, "")));
    step!(
        "counts after acknowledging",
        b.expect_counts(&[
            ("open", 3),
            ("triggered", 2),
            ("acknowledged", 1),
            ("resolved", 0),
            ("all", 3),
        ])
    );
    b.shot("alert-list-one-acknowledged").await?;

    // Resolve.
    step!("back to the alert", b.goto(&alert_path));
    step!("choose resolved", b.select("#status", "resolved"));
    step!("change status", b.click_and_load("#change-status"));
    let status = step!("status after resolving", b.text("#alert-status"));
    ensure!(
        status.to_lowercase() == "resolved",
        "after resolving, #alert-status says `{status}`"
    );
    step!("notice after resolving", b.find("#notice"));
    b.shot("alert-resolved").await?;

    // Back to the list: one fewer open, the Resolved tab lists it.
    step!("open the alert list", b.click_and_load("#nav-alerts"));
    step!(
        "counts after resolving",
        b.expect_counts(&[
            ("open", 2),
            ("triggered", 2),
            ("acknowledged", 0),
            ("resolved", 1),
            ("all", 3),
        ])
    );
    ensure!(
        b.row("CPU high on web1").await?.is_none(),
        "the Open tab still lists the resolved alert"
    );
    b.shot("alert-list-after-resolving").await?;
    step!(
        "Resolved tab",
        b.click_and_load("a.tab[data-status=\"resolved\"]")
    );
    let current = b
        .find("a.tab[aria-current=\"page\"]")
        .await?
        .attr("data-status")
        .await?;
    ensure!(
        current.as_deref() == Some("resolved"),
        "after clicking Resolved, the current tab is {current:?}"
    );
    let row = b
        .row("CPU high on web1")
        .await?
        .context("the Resolved tab does not list the resolved alert")?;
    let status = Browser::cell(&row, "td.status").await?.to_lowercase();
    ensure!(status.contains("resolved"), "its status cell says `{status}`");
    ensure!(
        b.client.find_all(Locator::Css("tr.alert")).await?.len() == 1,
        "the Resolved tab lists more than the one resolved alert"
    );
    b.shot("alert-list-resolved-tab").await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_sample_payload_shows_the_error_message() {
    let world = AlertWorld::new().await;
    let browser = Browser::open("bad-sample", &world.gateway.url(), 1280, 900).await;
    let outcome = limited(bad_sample_journey(&browser, &world)).await;
    browser.finish(outcome).await;
}

async fn bad_sample_journey(b: &Browser, world: &AlertWorld) -> Result<()> {
    let id = world.demo.project_id.to_string();
    let name = "Broken sample";
    step!("sign in", b.sign_in(&world.maintainer, "maintainer"));
    step!("open the settings", b.goto(&settings_path(&id)));
    step!("choose HTTP Endpoint", b.select("#type", "http"));
    step!("name", b.fill("#name", name));
    step!("active", b.check("#active", true));
    step!(
        "sample payload",
        b.fill("#payload_example", r#"{"title": "Disk full on db1","#)
    );
    b.shot("form").await?;
    step!("save and test", b.click_and_load("#save-and-test"));
    let error = step!("the error message", b.text("#error"));
    let lower = error.to_lowercase();
    ensure!(
        lower.contains("json") && (lower.contains("sample") || lower.contains("payload")),
        "#error says `{error}`; it should say the sample payload is not valid JSON"
    );
    ensure!(
        !b.has("#notice").await?,
        "the page shows a success notice beside the error: {}",
        b.text("#notice").await?
    );
    b.shot("error").await?;

    // Nothing was created: not in the table (after a fresh load), not in the API.
    step!("reload the settings", b.goto(&settings_path(&id)));
    step!("the settings page again", b.find("#new-integration"));
    for row in b.client.find_all(Locator::Css("tr.integration")).await? {
        let listed = Browser::cell(&row, "td.name").await?;
        ensure!(
            listed != name,
            "the integrations table lists `{name}` although its sample payload was refused"
        );
    }
    let listed = common::get(&world.api("/integrations"), &world.maintainer).await;
    ensure!(
        listed.status.is_success(),
        "listing the integrations answered {}",
        listed.status
    );
    ensure!(
        !String::from_utf8_lossy(&listed.body).contains(name),
        "the API lists `{name}` although its sample payload was refused: {}",
        String::from_utf8_lossy(&listed.body)
    );
    b.shot("nothing-created").await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_developer_is_refused_the_settings_page() {
    let world = AlertWorld::new().await;
    let browser = Browser::open("developer", &world.gateway.url(), 1280, 900).await;
    let outcome = limited(developer_journey(&browser, &world)).await;
    browser.finish(outcome).await;
}

async fn developer_journey(b: &Browser, world: &AlertWorld) -> Result<()> {
    // The project by its URL-encoded full path this time.
    let project = PROJECT_PATH.replace('/', "%2F");
    step!("sign in", b.sign_in(&world.developer, "developer"));
    b.shot("signed-in").await?;
    step!("open the settings", b.goto(&settings_path(&project)));
    step!("the forbidden page", b.find("#forbidden"));
    let status = b.http_status().await?;
    ensure!(
        status == 403,
        "the settings page answered {status} to a Developer, not 403"
    );
    ensure!(
        !b.has("#new-integration").await? && !b.has("#integrations").await?,
        "the forbidden page still shows the integrations or the create form"
    );
    b.shot("settings-forbidden").await?;

    step!("open the alert list", b.goto(&alerts_path(&project, "")));
    ensure!(
        !b.has("#forbidden").await?,
        "the alert list is forbidden to a Developer"
    );
    let status = b.http_status().await?;
    ensure!(status == 200, "the alert list answered {status}");
    step!("the empty state", b.find("#empty-state"));
    step!("the Open tab", b.find("a.tab[data-status=\"open\"]"));
    b.shot("alert-list").await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signing_out_ends_the_session() {
    let world = AlertWorld::new().await;
    let browser = Browser::open("sign-out", &world.gateway.url(), 1280, 900).await;
    let outcome = limited(sign_out_journey(&browser, &world)).await;
    browser.finish(outcome).await;
}

async fn sign_out_journey(b: &Browser, world: &AlertWorld) -> Result<()> {
    let id = world.demo.project_id.to_string();

    // Not signed in: the pages send you to the sign-in page; a wrong token is refused.
    step!("the entry page", b.goto("/-/svcgate/"));
    let path = b.path().await?;
    ensure!(
        path.starts_with("/-/svcgate/sign_in"),
        "/-/svcgate/ led to {path} before signing in, not the sign-in page"
    );
    step!("the sign-in form", b.find("#sign-in-form"));
    let kind = b.find("#token").await?.attr("type").await?;
    ensure!(
        kind.as_deref() == Some("password"),
        "the token field is of type {kind:?}, not password"
    );
    b.shot("sign-in-page").await?;
    step!("a wrong token", b.fill("#token", "not-a-real-token"));
    step!("sign in", b.click_and_load("#sign-in"));
    let error = step!("the error for a wrong token", b.text("#error"));
    ensure!(!error.is_empty(), "#error is empty after a wrong token");
    step!("the form again", b.find("#sign-in-form"));
    b.shot("wrong-token").await?;

    // Signed in, the list opens; signed out, it does not.
    step!("sign in", b.sign_in(&world.maintainer, "maintainer"));
    step!("open the alert list", b.goto(&alerts_path(&id, "")));
    step!("the alert list", b.find("a.tab[data-status=\"open\"]"));
    b.shot("signed-in-alert-list").await?;
    let cookie = b.client.get_named_cookie("svcgate_session").await;
    ensure!(
        cookie.is_ok(),
        "there is no svcgate_session cookie after signing in"
    );
    step!("sign out", b.click_and_load("#sign-out-form #sign-out"));
    b.shot("signed-out").await?;
    step!("the alert list again", b.goto(&alerts_path(&id, "")));
    let path = b.path().await?;
    ensure!(
        path.starts_with("/-/svcgate/sign_in"),
        "after signing out, the alert list led to {path}, not the sign-in page"
    );
    step!("the sign-in form", b.find("#sign-in-form"));
    ensure!(
        !b.has("#current-user").await?,
        "the sign-in page still shows a signed-in user"
    );
    b.shot("alert-list-after-sign-out").await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pages_are_usable_at_phone_width() {
    let world = AlertWorld::new().await;
    let browser = Browser::open("phone", &world.gateway.url(), 390, 844).await;
    let outcome = limited(phone_journey(&browser, &world)).await;
    browser.finish(outcome).await;
}

async fn phone_journey(b: &Browser, world: &AlertWorld) -> Result<()> {
    let id = world.demo.project_id.to_string();
    b.client.set_window_size(390, 844).await?;

    // An alert with long words and a wide payload, sent through the API.
    let made = world
        .integration(json!({"type": "http", "name": "Phone check", "active": true}))
        .await;
    let (address, key) = (
        made["url"].as_str().context("no url")?.to_owned(),
        made["token"].as_str().context("no token")?.to_owned(),
    );
    let payload = json!({
        "title": "Replication lag above threshold on postgres-primary-eu-west-1.internal.example",
        "description": "Replica postgres-replica-eu-west-1b.internal.example is 1843 seconds behind; \
                        the read pool has been drained and traffic moved to the primary.",
        "severity": "high",
        "service": "database",
        "monitoring_tool": "Prometheus",
        "hosts": ["postgres-primary-eu-west-1.internal.example", "postgres-replica-eu-west-1b.internal.example"],
        "svc_environment_name": "production",
        "query": "pg_replication_lag_seconds{instance=\"postgres-replica-eu-west-1b.internal.example:9187\",job=\"postgres\"} > 300",
    });
    let answer = post_alert(&address, &key, &payload).await;
    ensure!(
        answer.status.is_success(),
        "posting the alert answered {}",
        answer.status
    );

    step!("sign in", b.sign_in(&world.maintainer, "maintainer"));
    b.shot("projects").await?;
    step!("fits", b.expect_no_sideways_scrolling("projects page"));
    step!("open the alert list", b.goto(&alerts_path(&id, "")));
    step!("the alert table", b.find("table#alerts"));
    b.shot("alert-list").await?;
    step!("fits", b.expect_no_sideways_scrolling("alert list"));
    step!("open the alert", b.click_and_load("tr.alert td.title a"));
    step!("the alert page", b.find("#alert-title"));
    b.shot("alert").await?;
    step!("fits", b.expect_no_sideways_scrolling("alert page"));
    step!("open the settings", b.goto(&settings_path(&id)));
    step!("the settings page", b.find("#new-integration"));
    b.shot("settings").await?;
    step!("fits", b.expect_no_sideways_scrolling("settings page"));
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_followed_while_signed_out_lands_on_the_alert_after_signing_in() {
    let world = AlertWorld::new().await;
    let browser = Browser::open("follow-link", &world.gateway.url(), 1280, 900).await;
    let outcome = limited(follow_link_journey(&browser, &world, false)).await;
    browser.finish(outcome).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_followed_while_signed_out_lands_on_the_alert_after_signing_in_at_phone_width() {
    let world = AlertWorld::new().await;
    let browser = Browser::open("phone-follow-link", &world.gateway.url(), 390, 844).await;
    let outcome = limited(follow_link_journey(&browser, &world, true)).await;
    browser.finish(outcome).await;
}

/// Someone is sent a link to an alert while signed out: the pages send them to sign in, the server asks them to
/// approve, and they land on that alert.
async fn follow_link_journey(b: &Browser, world: &AlertWorld, phone: bool) -> Result<()> {
    if phone {
        b.client.set_window_size(390, 844).await?;
    }
    let made = world
        .integration(json!({"type": "http", "name": "Linked alert", "active": true}))
        .await;
    let (address, key) = (
        made["url"].as_str().context("no url")?.to_owned(),
        made["token"].as_str().context("no token")?.to_owned(),
    );
    let payload = json!({"title": "Checkout latency above 2 s", "severity": "critical"});
    let answer = post_alert(&address, &key, &payload).await;
    ensure!(
        answer.status.is_success(),
        "posting the alert answered {}",
        answer.status
    );
    let listed = common::get(&world.api("/alerts?status=all"), &world.maintainer)
        .await
        .json();
    let iid = listed
        .as_array()
        .and_then(|alerts| {
            alerts
                .iter()
                .find(|alert| alert["title"] == json!("Checkout latency above 2 s"))
        })
        .and_then(|alert| alert["iid"].as_u64())
        .context("the alert is not listed")?;
    let link = alerts_path(&world.demo.project_id.to_string(), &format!("/{iid}"));

    step!("follow the link", b.goto(&link));
    let path = b.path().await?;
    ensure!(
        path.starts_with("/-/svcgate/sign_in?return_to="),
        "the link led to {path} while signed out, not the sign-in page"
    );
    step!("Sign in with svc", b.find("#sign-in-oauth"));
    b.shot("sign-in-page").await?;
    if phone {
        step!("fits", b.expect_no_sideways_scrolling("sign-in page"));
    }
    step!("Sign in with svc", b.click_and_load("#sign-in-oauth"));
    let path = b.path().await?;
    ensure!(
        path.starts_with("/oauth/authorize?"),
        "Sign in with svc led to {path}, not the server's authorize page"
    );
    step!("the authorize page", b.find("#authorize"));
    b.shot("authorize-page").await?;
    step!("choose the user", b.select("#username", "maintainer"));
    step!("approve", b.click_and_load("#authorize"));
    step!("back on the alert", b.wait_for_path(&link));
    let title = step!("the alert's title", b.text("#alert-title"));
    ensure!(
        title.contains("Checkout latency above 2 s"),
        "the alert page shows `{title}`"
    );
    let user = b.text("#current-user").await?;
    ensure!(user.contains("maintainer"), "#current-user says `{user}`");
    b.shot("alert-after-sign-in").await?;
    if phone {
        step!("fits", b.expect_no_sideways_scrolling("alert page"));
    }
    Ok(())
}

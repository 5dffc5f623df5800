//! A real headless Chromium driven over WebDriver (Debian's `chromium` and `chromium-driver`; `./test.sh` installs
//! them): the one way tests start a browser. chromedriver runs as a child process in a process group of its own,
//! one browser session per journey, with a screenshot after each step in `test-output/browser/`, and the steps a
//! journey takes on svcgate's pages (sign in, fill, click, read tables, wait).

use std::fs;
use std::net::{Ipv4Addr, TcpStream};
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

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
/// How long a step waits for an element or a page to appear.
pub const WAIT: Duration = Duration::from_secs(10);
/// How long a whole journey may take.
pub const JOURNEY: Duration = Duration::from_secs(180);
/// The browser's time zone: away from UTC, with a half hour, so that local times can be told from UTC ones.
pub const BROWSER_TZ: &str = "Asia/Kolkata";

/// A chromedriver started for one journey, in a process group of its own so that the browsers it starts
/// end with it; the browser profile lives in a temporary directory that goes with it.
struct ChromeDriver {
    child: Child,
    port: u16,
    profile: tempfile::TempDir,
}

impl ChromeDriver {
    pub fn start() -> Self {
        for (path, what) in [(CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")] {
            assert!(
                Path::new(path).exists(),
                "{path} is missing: the browser tests need Debian's `{what}` package; run ./test.sh, which \
                 installs `chromium` and `chromium-driver` (or apt-get install -y --no-install-recommends \
                 chromium chromium-driver)"
            );
        }
        let profile = tempfile::tempdir().unwrap();
        let log = profile.path().join("chromedriver.log");
        let mut command = Command::new(CHROMEDRIVER);
        // Port 0: chromedriver takes a free port itself and names it on its standard output, so no other process
        // started at the same moment can take the port between choosing it and listening on it.
        command
            .arg("--port=0")
            .arg(format!("--log-path={}", log.display()))
            .env("TZ", BROWSER_TZ)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let mut child = command
            .spawn()
            .unwrap_or_else(|error| panic!("cannot start {CHROMEDRIVER}: {error}; run ./test.sh"));
        let stdout = child.stdout.take().unwrap();
        let (port_sender, port_receiver) = std::sync::mpsc::channel();
        // Reads the port from chromedriver's greeting, then keeps reading so that it never blocks on a full pipe.
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(rest) = line.split("started successfully on port ").nth(1) {
                    if let Ok(port) = rest.trim_end_matches('.').trim().parse::<u16>() {
                        let _ = port_sender.send(port);
                    }
                }
            }
        });
        let port = match port_receiver.recv_timeout(Duration::from_secs(20)) {
            Ok(port) => port,
            Err(_) => {
                let status = child.try_wait().ok().flatten();
                drop(child.kill());
                panic!(
                    "chromedriver did not say which port it listens on within 20 s (exited: {status:?}); its log:\n{}",
                    fs::read_to_string(&log).unwrap_or_default()
                );
            }
        };
        let driver = ChromeDriver { child, port, profile };
        assert!(
            TcpStream::connect((Ipv4Addr::LOCALHOST, port)).is_ok(),
            "chromedriver named port {port} but does not listen on it"
        );
        driver
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn log(&self) -> String {
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
pub struct Browser {
    pub client: Client,
    pub base: String,
    pub journey: &'static str,
    pub step: AtomicU32,
    // Dropped last: ends chromedriver and its browsers even when a test panics.
    _driver: ChromeDriver,
}

/// Where the screenshots go.
pub fn output_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("test-output/browser")
}

impl Browser {
    /// Starts chromedriver and a headless Chromium of `width`×`height` on the gateway at `base`.
    pub async fn open(journey: &'static str, base: &str, width: u32, height: u32) -> Self {
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
    pub async fn finish(self, outcome: Result<()>) {
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
    pub async fn address(&self) -> String {
        self.client
            .current_url()
            .await
            .map(|url| url.to_string())
            .unwrap_or_else(|error| format!("(unknown: {error})"))
    }

    /// The current path and query.
    pub async fn path(&self) -> Result<String> {
        let url = self.client.current_url().await?;
        Ok(match url.query() {
            Some(query) => format!("{}?{query}", url.path()),
            None => url.path().to_owned(),
        })
    }

    /// Saves a screenshot of the current page as the journey's next step.
    pub async fn shot(&self, step: &str) -> Result<()> {
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
    pub async fn goto(&self, path: &str) -> Result<()> {
        self.client
            .goto(&format!("{}{path}", self.base))
            .await
            .with_context(|| format!("opening {path}"))?;
        self.wait_loaded(&format!("{path} to load")).await
    }

    /// The HTTP status of the current page's main document (Chromium's Navigation Timing).
    pub async fn http_status(&self) -> Result<u64> {
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
    pub async fn wait_js(&self, what: &str, script: &str) -> Result<()> {
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

    pub async fn wait_loaded(&self, what: &str) -> Result<()> {
        self.wait_js(what, "return document.readyState === 'complete';")
            .await
    }

    /// The element `css` on the current page, waiting for it a while.
    pub async fn find(&self, css: &str) -> Result<Element> {
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
    pub async fn has(&self, css: &str) -> Result<bool> {
        Ok(!self.client.find_all(Locator::Css(css)).await?.is_empty())
    }

    /// The visible text of `css`, trimmed.
    pub async fn text(&self, css: &str) -> Result<String> {
        let element = self.find(css).await?;
        Ok(element.text().await?.trim().to_owned())
    }

    /// The `value` of the form field `css`.
    pub async fn value(&self, css: &str) -> Result<String> {
        let element = self.find(css).await?;
        Ok(element.prop("value").await?.unwrap_or_default())
    }

    /// Types `text` into the empty field `css`, as a person would.
    pub async fn fill(&self, css: &str, text: &str) -> Result<()> {
        let element = self.find(css).await?;
        element.clear().await?;
        element
            .send_keys(text)
            .await
            .with_context(|| format!("typing into `{css}`"))?;
        Ok(())
    }

    /// Ticks or unticks the checkbox `css`.
    pub async fn check(&self, css: &str, on: bool) -> Result<()> {
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
    pub async fn select(&self, css: &str, value: &str) -> Result<()> {
        let element = self.find(css).await?;
        element
            .select_by_value(value)
            .await
            .with_context(|| format!("choosing the option `{value}` of `{css}`"))?;
        Ok(())
    }

    /// Clicks `css` (a link or a submit button) and waits until the next page has loaded.
    pub async fn click_and_load(&self, css: &str) -> Result<()> {
        let element = self.find(css).await?;
        self.click_element_and_load(&element, css).await
    }

    pub async fn click_element_and_load(&self, element: &Element, what: &str) -> Result<()> {
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
    pub async fn count(&self, status: &str) -> Result<u64> {
        let css = format!("a.tab[data-status=\"{status}\"] .count");
        let text = self.text(&css).await?;
        text.trim()
            .parse()
            .map_err(|_| anyhow!("the count of the `{status}` tab is `{text}`, not a number"))
    }

    /// Checks the counts of the alert list's tabs.
    pub async fn expect_counts(&self, expected: &[(&str, u64)]) -> Result<()> {
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
    pub async fn row(&self, title: &str) -> Result<Option<Element>> {
        for row in self.client.find_all(Locator::Css("tr.alert")).await? {
            let cell = row.find(Locator::Css("td.title")).await?;
            if cell.text().await?.contains(title) {
                return Ok(Some(row));
            }
        }
        Ok(None)
    }

    /// The text of the cell `css` of `row`.
    pub async fn cell(row: &Element, css: &str) -> Result<String> {
        let cell = row
            .find(Locator::Css(css))
            .await
            .with_context(|| format!("the row has no `{css}`"))?;
        Ok(cell.text().await?.trim().to_owned())
    }

    /// Signs in as `username` through the server, as people do: "Sign in with svc", then the server's authorize
    /// page (the simulator asks which user), then back on the projects page, which must greet `username`. The
    /// pasted-token form (`token`) is covered by the sign-out journey and `tests/alerts/pages.rs`.
    pub async fn sign_in(&self, token: &str, username: &str) -> Result<()> {
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
    pub async fn approve_sign_in(&self, username: &str) -> Result<()> {
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
    pub async fn wait_for_path(&self, expected: &str) -> Result<()> {
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
    pub async fn expect_no_sideways_scrolling(&self, page: &str) -> Result<()> {
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

pub fn indent(text: &str) -> String {
    text.lines()
        .map(|line| format!("    | {line}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Runs a journey with a time limit.
pub async fn limited(journey: impl std::future::Future<Output = Result<()>>) -> Result<()> {
    match tokio::time::timeout(JOURNEY, journey).await {
        Ok(outcome) => outcome,
        Err(_) => Err(anyhow!("the journey took longer than {JOURNEY:?}")),
    }
}

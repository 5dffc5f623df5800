//! The web pages in a real headless Chromium, driven over WebDriver (Debian's `chromium` and
//! `chromium-driver`; `./test.sh` installs them). Each journey signs in with a real token on a gateway in
//! front of svc-sim and uses the pages as a person would, saving a screenshot after each step to
//! `test-output/browser/NN-<journey>-<step>.png`. When a step fails, the test saves `…-failure.png` and
//! `…-failure.html` beside them and says which step failed, on which address, and what the page showed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, ensure, Context as _, Result};
use fantoccini::Locator;
use serde_json::json;

use crate::common::alerts::{post_alert, AlertWorld};
use crate::common::browser::{limited, Browser, BROWSER_TZ};

const PROJECT_PATH: &str = "demo-group/demo-project";
/// [`BROWSER_TZ`]'s offset from UTC, in minutes (India has no daylight saving time).
const BROWSER_TZ_MINUTES: i64 = 330;
/// Desktop and phone windows.
const DESKTOP: (u32, u32) = (1280, 900);
const PHONE: (u32, u32) = (390, 844);

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

    // "Save and test alert payload" lands on the integration's page, which shows the address and the key.
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
    b.shot("endpoint-saved-address-and-key").await?;

    // The integrations table lists it, active.
    step!("back to the settings", b.goto(&settings_path(&id)));
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
    b.shot("integrations-table").await?;

    // Its page, opened from the table, shows the same address and key.
    let edit = row
        .find(Locator::Css("a.edit"))
        .await
        .context("the integration's row has no a.edit link")?;
    step!("open the integration", b.click_element_and_load(&edit, "a.edit"));
    let again = (
        step!("the address", b.value("#integration-url")),
        step!("the key", b.value("#integration-key")),
    );
    ensure!(
        again == (address.clone(), key.clone()),
        "the integration's page shows {again:?}, not the address and key shown after saving"
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
    let (kind, text) = step!("the empty state", b.empty_state());
    ensure!(
        kind == "first-alert" && text.contains("A Maintainer") && !text.contains("Send a first alert"),
        "a Developer, who cannot create integrations, is told ({kind}) `{text}`"
    );
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
    let browser = Browser::open("phone-fit", &world.gateway.url(), 390, 844).await;
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

// ---------------------------------------------------------------------------------------------------------
// Pages that tell the truth to a person on call: each journey runs at desktop width and at phone width, each
// in a fresh world and browser of its own (screenshots `NN-<journey>-desktop-…` and `NN-<journey>-phone-…`).
// ---------------------------------------------------------------------------------------------------------

/// Runs `$journey(&browser, &world, phone)` at desktop width, then at phone width, each on a fresh `$world`.
macro_rules! at_both_widths {
    ($world:expr, $name:literal, $journey:ident) => {{
        for (journey, (width, height)) in [
            (concat!($name, "-desktop"), DESKTOP),
            (concat!($name, "-phone"), PHONE),
        ] {
            let world = $world;
            let browser = Browser::open(journey, &world.gateway.url(), width, height).await;
            let phone = width == PHONE.0;
            let outcome = limited(async {
                if phone {
                    browser.client.set_window_size(width, height).await?;
                }
                browser.expect_window(width).await?;
                $journey(&browser, &world, phone).await
            })
            .await;
            browser.finish(outcome).await;
        }
    }};
}

impl Browser {
    /// Fails unless the page is laid out `width` CSS pixels wide.
    async fn expect_window(&self, width: u32) -> Result<()> {
        self.goto("/-/svcgate/health").await?;
        let inner = self.client.execute("return window.innerWidth;", vec![]).await?;
        ensure!(
            inner.as_u64() == Some(u64::from(width)),
            "the window is {inner} CSS pixels wide, not {width}"
        );
        Ok(())
    }

    /// Checks that every cell of the table `css` shows its value under its own column heading and inside the
    /// window: at desktop width each cell lies below its `th` and spans the same columns; at phone width (rows
    /// stacked) each cell carries the text of its column's heading as its label. In both, nothing reaches past
    /// the window and the page does not scroll sideways. Answers how many rows were checked.
    async fn expect_cells_under_their_headings(&self, css: &str, phone: bool) -> Result<u64> {
        let checked = self
            .client
            .execute(
                r#"
                const [css, phone] = arguments;
                const table = document.querySelector(css);
                if (!table) return {problems: ['there is no ' + css], rows: 0};
                const heads = Array.from(table.querySelectorAll('thead th'));
                const headings = heads.map(th => th.textContent.trim());
                const inner = window.innerWidth;
                const problems = [];
                const width = document.documentElement.scrollWidth;
                if (width > inner) problems.push(`the page is ${width}px wide in a ${inner}px window`);
                const rows = Array.from(table.querySelectorAll('tbody tr'));
                rows.forEach((tr, r) => {
                  const cells = Array.from(tr.children);
                  if (cells.length !== headings.length) problems.push(`row ${r} has ${cells.length} cells for ${headings.length} headings`);
                  cells.forEach((td, i) => {
                    const heading = headings[i];
                    const at = `row ${r}, cell ${i} (${td.className || 'no class'}, under "${heading}")`;
                    const cell = td.getBoundingClientRect();
                    if (cell.width === 0 || cell.height === 0) problems.push(`${at} is not shown`);
                    if (cell.left < -0.5 || cell.right > inner + 0.5) problems.push(`${at} spans ${Math.round(cell.left)}..${Math.round(cell.right)}px, outside the ${inner}px window`);
                    const label = getComputedStyle(td, '::before').content;
                    if (phone) {
                      const text = label.replace(/^"(.*)"$/, '$1');
                      if (text !== heading) problems.push(`${at} is labelled ${label}, not "${heading}"`);
                    } else {
                      const head = heads[i].getBoundingClientRect();
                      if (Math.abs(head.left - cell.left) > 1 || Math.abs(head.right - cell.right) > 1) problems.push(`${at} spans ${Math.round(cell.left)}..${Math.round(cell.right)}px, its heading ${Math.round(head.left)}..${Math.round(head.right)}px`);
                      if (head.bottom > cell.top + 0.5) problems.push(`${at} is not below its heading`);
                      if (label !== 'none' && label !== 'normal') problems.push(`${at} carries a label ${label} at desktop width`);
                    }
                  });
                });
                return {problems, rows: rows.length};
                "#,
                vec![json!(css), json!(phone)],
            )
            .await?;
        let problems: Vec<String> = serde_json::from_value(checked["problems"].clone())?;
        ensure!(
            problems.is_empty(),
            "the table {css} does not show each value under its heading{}:\n  {}",
            if phone { " at phone width" } else { "" },
            problems.join("\n  ")
        );
        checked["rows"]
            .as_u64()
            .ok_or_else(|| anyhow!("no row count from the check: {checked}"))
    }

    /// Scrolls `css` to the top of the window, so that the next screenshot shows it.
    async fn scroll_to(&self, css: &str) -> Result<()> {
        self.find(css).await?;
        self.client
            .execute(
                "document.querySelector(arguments[0]).scrollIntoView({block: 'start'}); return true;",
                vec![json!(css)],
            )
            .await?;
        Ok(())
    }

    /// The `data-empty` kind and the text of the alert list's empty state.
    async fn empty_state(&self) -> Result<(String, String)> {
        let section = self.find("#empty-state").await?;
        let kind = section.attr("data-empty").await?.unwrap_or_default();
        Ok((kind, section.text().await?))
    }

    /// Reloads `path` until `css` is on it, for what a background worker makes appear.
    async fn reload_until(&self, path: &str, css: &str, what: &str) -> Result<()> {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            self.goto(path).await?;
            if self.has(css).await? {
                return Ok(());
            }
            if Instant::now() > deadline {
                bail!("waited 20 s for {what} (`{css}` on {path})");
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
    }
}

fn integration_path(project: &str, id: u64) -> String {
    format!("{}/integrations/{id}", settings_path(project))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn empty_states_say_why_the_list_is_empty() {
    at_both_widths!(AlertWorld::new().await, "empty-states", empty_states_journey);
}

async fn empty_states_journey(b: &Browser, world: &AlertWorld, phone: bool) -> Result<()> {
    let id = world.demo.project_id.to_string();
    step!("sign in", b.sign_in(&world.maintainer, "maintainer"));

    // Nothing set up: how to send a first alert.
    step!("open the alert list", b.goto(&alerts_path(&id, "")));
    let (kind, text) = step!("the empty state", b.empty_state());
    ensure!(
        kind == "first-alert" && text.contains("Send a first alert"),
        "with no integration the list says ({kind}) `{text}`"
    );
    b.shot("no-integration").await?;
    step!("fits", b.expect_no_sideways_scrolling("empty alert list"));

    // An active integration, nothing received: the list says it waits for that integration.
    let made = world
        .integration(json!({"type": "http", "name": "Checkout monitor", "active": true}))
        .await;
    step!("the alert list again", b.goto(&alerts_path(&id, "")));
    let (kind, text) = step!("the empty state", b.empty_state());
    ensure!(
        kind == "waiting" && text.contains("Checkout monitor") && !text.contains("first alert"),
        "with an active integration and no alert the list says ({kind}) `{text}`"
    );
    b.shot("waiting-for-alerts").await?;

    // Alerts exist, none acknowledged: the Acknowledged tab says so, not "send a first alert".
    let answer = post_alert(
        made["url"].as_str().context("no url")?,
        made["token"].as_str().context("no token")?,
        &json!({"title": "Payment errors above 2%", "severity": "high"}),
    )
    .await;
    ensure!(
        answer.status.is_success(),
        "posting an alert answered {}",
        answer.status
    );
    step!(
        "the Acknowledged tab",
        b.goto(&alerts_path(&id, "?status=acknowledged"))
    );
    let (kind, text) = step!("the empty state", b.empty_state());
    ensure!(
        kind == "tab"
            && text.to_lowercase().contains("no acknowledged alert")
            && !text.contains("first alert")
            && !text.to_lowercase().contains("integration"),
        "an empty Acknowledged tab with a triggered alert says ({kind}) `{text}`"
    );
    b.shot("empty-acknowledged-tab").await?;

    // A severity filter that matches nothing says so and offers to clear it.
    step!(
        "filter on Low",
        b.goto(&alerts_path(&id, "?status=open&severity=low"))
    );
    let (kind, text) = step!("the empty state", b.empty_state());
    ensure!(
        kind == "no-match" && text.contains("Low"),
        "filtering on Low says ({kind}) `{text}`"
    );
    b.shot("no-match").await?;
    step!("clear the filters", b.click_and_load("#clear-filters"));
    ensure!(
        b.row("Payment errors above 2%").await?.is_some(),
        "after clearing the filters the list does not show the alert"
    );
    b.shot("filters-cleared").await?;

    // With the incident-alerting tool (Opsgenie) active, its alerts live there: said, not "activate one".
    let integration = made["id"].as_u64().context("no id")?;
    let off = common::send_json(
        http::Method::PUT,
        &world.api(&format!("/integrations/{integration}")),
        &world.maintainer,
        json!({"active": false}),
    )
    .await;
    ensure!(off.status.is_success(), "deactivating answered {}", off.status);
    world
        .integration(
            json!({"type": "opsgenie", "active": true, "api_url": "https://opsgenie.example/alert/list"}),
        )
        .await;
    step!(
        "the Acknowledged tab with Opsgenie",
        b.goto(&alerts_path(&id, "?status=acknowledged"))
    );
    let (kind, text) = step!("the empty state", b.empty_state());
    let lower = text.to_lowercase();
    ensure!(
        kind == "opsgenie"
            && text.contains("Opsgenie")
            && !lower.contains("activate")
            && !lower.contains("first alert")
            && !lower.contains("create an integration"),
        "with Opsgenie active the empty list says ({kind}) `{text}`"
    );
    let link = b.find("#empty-state a").await?.attr("href").await?;
    ensure!(
        link.as_deref() == Some("https://opsgenie.example/alert/list"),
        "the empty state links {link:?}, not Opsgenie's address"
    );
    b.shot("alerts-live-in-opsgenie").await?;
    if phone {
        step!("fits", b.expect_no_sideways_scrolling("Opsgenie empty state"));
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_table_shows_each_value_under_its_own_heading() {
    at_both_widths!(AlertWorld::new().await, "tables", tables_journey);
}

async fn tables_journey(b: &Browser, world: &AlertWorld, phone: bool) -> Result<()> {
    let id = world.demo.project_id.to_string();
    let made = world
        .integration(
            json!({"type": "http", "name": "Replication lag on postgres-primary-eu-west-1", "active": true}),
        )
        .await;
    world
        .integration(json!({"type": "prometheus", "active": false}))
        .await;
    let (address, key) = (
        made["url"].as_str().context("no url")?.to_owned(),
        made["token"].as_str().context("no token")?.to_owned(),
    );
    for (title, severity) in [
        (
            "Replication lag above threshold on postgres-primary-eu-west-1.internal.example",
            "critical",
        ),
        ("Disk 91% full on db1", "medium"),
    ] {
        let payload = json!({"title": title, "severity": severity, "svc_environment_name": "production"});
        let answer = post_alert(&address, &key, &payload).await;
        ensure!(
            answer.status.is_success(),
            "posting an alert answered {}",
            answer.status
        );
    }
    // A V3 call, so that the V3 usage table has a row.
    let v3 = common::get(
        &format!("{}/api/v3/projects", world.gateway.url()),
        &world.demo.token,
    )
    .await;
    ensure!(v3.status.is_success(), "the V3 call answered {}", v3.status);

    step!("sign in", b.sign_in(&world.maintainer, "maintainer"));
    step!("open the alert list", b.goto(&alerts_path(&id, "")));
    let rows = step!(
        "alert cells under their headings",
        b.expect_cells_under_their_headings("table#alerts", phone)
    );
    ensure!(rows == 2, "the alert table has {rows} rows, not 2");
    b.scroll_to("table#alerts").await?;
    b.shot("alert-list").await?;

    step!("open the settings", b.goto(&settings_path(&id)));
    let rows = step!(
        "integration cells under their headings",
        b.expect_cells_under_their_headings("table#integrations", phone)
    );
    ensure!(rows == 2, "the integrations table has {rows} rows, not 2");
    let status = b.text("tr.integration td.status").await?;
    ensure!(
        status.contains("Active") || status.contains("Inactive"),
        "the first integration's status cell says `{status}`"
    );
    b.scroll_to("table#integrations").await?;
    b.shot("integrations").await?;

    step!(
        "sign in as an administrator",
        b.sign_in(common::alerts::ADMIN, "root")
    );
    step!("open V3 usage", b.goto("/-/svcgate/admin/v3-usage"));
    let rows = step!(
        "V3 usage cells under their headings",
        b.expect_cells_under_their_headings("table#v3-usage", phone)
    );
    ensure!(rows >= 1, "the V3 usage table has no row");
    let calls = b.text("tr.route td.calls").await?;
    ensure!(
        calls.chars().filter(char::is_ascii_digit).count() >= 1 && !calls.contains('.'),
        "the Calls cell says `{calls}`, not a number of calls"
    );
    b.scroll_to("table#v3-usage").await?;
    b.shot("v3-usage").await?;
    step!("open the V3 clients", b.click_and_load("#v3-clients"));
    let rows = step!(
        "V3 client cells under their headings",
        b.expect_cells_under_their_headings("table#v3-clients", phone)
    );
    ensure!(rows >= 1, "the V3 clients table has no row");
    step!("open a client's report", b.click_and_load("tr.client td.user a"));
    let rows = step!(
        "V3 client route cells under their headings",
        b.expect_cells_under_their_headings("table#v3-client-routes", phone)
    );
    ensure!(rows >= 1, "the client's report has no route");
    b.shot("v3-client").await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_an_integration_asks_for_confirmation() {
    at_both_widths!(AlertWorld::new().await, "delete", delete_journey);
}

async fn delete_journey(b: &Browser, world: &AlertWorld, phone: bool) -> Result<()> {
    let id = world.demo.project_id.to_string();
    let made = world
        .integration(json!({"type": "http", "name": "Old Nagios", "active": true}))
        .await;
    let integration = made["id"].as_u64().context("no id")?;
    let api = world.api(&format!("/integrations/{integration}"));

    step!("sign in", b.sign_in(&world.maintainer, "maintainer"));
    step!(
        "open the integration",
        b.goto(&integration_path(&id, integration))
    );
    b.shot("integration").await?;
    step!("delete", b.click_and_load("#delete-integration"));
    let heading = step!("the confirmation", b.text("#confirm h1"));
    ensure!(
        heading == "Delete the integration “Old Nagios”?",
        "the confirmation asks `{heading}`, not with the name quoted"
    );
    let confirmation = b.address().await;
    ensure!(
        !confirmation.ends_with('?'),
        "the confirmation's address ends with a bare `?`: {confirmation}"
    );
    let still = common::get(&api, &world.maintainer).await;
    ensure!(
        still.status.is_success(),
        "showing the confirmation deleted the integration ({})",
        still.status
    );
    b.shot("confirmation").await?;
    if phone {
        step!("fits", b.expect_no_sideways_scrolling("delete confirmation"));
    }

    step!("cancel", b.click_and_load("#cancel"));
    ensure!(
        b.path().await? == integration_path(&id, integration),
        "Cancel led to {}, not back to the integration",
        b.path().await?
    );
    ensure!(
        common::get(&api, &world.maintainer).await.status.is_success(),
        "cancelling deleted the integration"
    );
    b.shot("cancelled").await?;

    step!("delete again", b.click_and_load("#delete-integration"));
    step!("confirm", b.click_and_load("#confirm-delete"));
    let notice = step!("the notice", b.text("#notice"));
    ensure!(notice.contains("deleted"), "the notice says `{notice}`");
    for row in b.client.find_all(Locator::Css("tr.integration")).await? {
        ensure!(
            Browser::cell(&row, "td.name").await? != "Old Nagios",
            "the deleted integration is still listed"
        );
    }
    let gone = common::get(&api, &world.maintainer).await;
    ensure!(
        gone.status == http::StatusCode::NOT_FOUND,
        "after confirming, the API answers {} for the integration",
        gone.status
    );
    b.shot("deleted").await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn incidents_warn_without_a_service_token_and_failures_show_on_the_integration() {
    at_both_widths!(
        AlertWorld::new().await,
        "incident-failures",
        incident_failures_journey
    );
}

async fn incident_failures_journey(b: &Browser, world: &AlertWorld, phone: bool) -> Result<()> {
    let id = world.demo.project_id.to_string();
    step!("sign in", b.sign_in(&world.maintainer, "maintainer"));
    step!("open the settings", b.goto(&settings_path(&id)));
    let warning = step!("the warning", b.text("#incidents #no-service-token"));
    ensure!(
        warning.contains("service_token") && warning.to_lowercase().contains("no incident"),
        "the incident settings warn `{warning}`"
    );
    b.shot("warning").await?;
    step!("create incidents", b.check("#create_incident", true));
    step!("save", b.click_and_load("#incident-settings button"));
    let warning = step!("the warning after saving", b.text("#no-service-token"));
    ensure!(
        warning.contains("waits for an incident"),
        "with incidents on, the warning says `{warning}`"
    );
    b.shot("incidents-on-warning").await?;
    if phone {
        step!(
            "fits",
            b.expect_no_sideways_scrolling("settings with the warning")
        );
    }

    // An alert arrives; the outbox cannot open its incident; the integration's page says so.
    let made = world
        .integration(json!({"type": "http", "name": "Payments", "active": true}))
        .await;
    let integration = made["id"].as_u64().context("no id")?;
    let answer = post_alert(
        made["url"].as_str().context("no url")?,
        made["token"].as_str().context("no token")?,
        &json!({"title": "Card declines spiking", "severity": "critical"}),
    )
    .await;
    ensure!(
        answer.status.is_success(),
        "posting an alert answered {}",
        answer.status
    );
    step!(
        "the failure on the integration's page",
        b.reload_until(
            &integration_path(&id, integration),
            "#incident-failures li.failure",
            "the failing incident call"
        )
    );
    let failure = b.text("#incident-failures li.failure").await?;
    ensure!(
        failure.contains("Opening the incident")
            && failure.contains("Card declines spiking")
            && failure.contains("service_token")
            && failure.contains("1 attempt"),
        "the integration's page lists the failure as `{failure}`"
    );
    b.scroll_to("#incident-failures").await?;
    b.shot("failure-on-integration-page").await?;
    if phone {
        step!(
            "fits",
            b.expect_no_sideways_scrolling("integration with failures")
        );
    }
    step!(
        "open the alert",
        b.click_and_load("#incident-failures li.failure a")
    );
    let title = step!("the alert", b.text("#alert-title"));
    ensure!(
        title.contains("Card declines spiking"),
        "the failure's link led to `{title}`"
    );
    b.shot("the-failing-alert").await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_add_integration_form_shows_the_chosen_types_fields_then_the_address_and_key() {
    at_both_widths!(AlertWorld::new().await, "add-form", add_form_journey);
}

async fn add_form_journey(b: &Browser, world: &AlertWorld, phone: bool) -> Result<()> {
    let id = world.demo.project_id.to_string();
    step!("sign in", b.sign_in(&world.maintainer, "maintainer"));
    step!("open the settings", b.goto(&settings_path(&id)));
    ensure!(
        !b.find("#choose-type").await?.is_displayed().await?,
        "the no-JavaScript button to redraw the form shows although JavaScript runs"
    );
    // (type, fields shown, fields hidden)
    let cases: [(&str, &[&str], &[&str]); 4] = [
        (
            "opsgenie",
            &["#name", "#active", "#api_url"],
            &["#payload_example", "#payload_format", "#save-and-test"],
        ),
        (
            "prometheus",
            &["#name", "#active", "#save-and-test"],
            &["#payload_example", "#payload_format", "#api_url"],
        ),
        (
            "generic",
            &["#name", "#active", "#payload_format", "#save-and-test"],
            &["#payload_example", "#api_url"],
        ),
        (
            "http",
            &[
                "#name",
                "#active",
                "#payload_format",
                "#payload_example",
                "#save-and-test",
            ],
            &["#api_url"],
        ),
    ];
    for (kind, shown, hidden) in cases {
        step!("choose the type", b.select("#type", kind));
        for css in shown {
            ensure!(
                b.find(css).await?.is_displayed().await?,
                "with {kind} chosen, `{css}` is not shown"
            );
        }
        for css in hidden {
            ensure!(
                !b.find(css).await?.is_displayed().await?,
                "with {kind} chosen, `{css}` is shown"
            );
        }
        b.scroll_to("#new-integration").await?;
        b.shot(&format!("form-{kind}")).await?;
    }
    if phone {
        step!("fits", b.expect_no_sideways_scrolling("add-integration form"));
    }

    step!("name", b.fill("#name", "Storefront"));
    step!("active", b.check("#active", true));
    step!(
        "sample",
        b.fill(
            "#payload_example",
            r#"{"title":"Checkout slow","severity":"medium"}"#
        )
    );
    step!("save and test", b.click_and_load("#save-and-test"));
    let notice = step!("the notice", b.text("#notice"));
    ensure!(
        notice.contains("test alert was sent"),
        "the notice says `{notice}`"
    );
    let address = step!("the address", b.value("#integration-url"));
    let key = step!("the key", b.value("#integration-key"));
    ensure!(
        address.contains("/alerts/notify/") && key.len() == 32,
        "after saving and testing, the page shows `{address}` and a key of {} characters",
        key.len()
    );
    b.shot("address-and-key").await?;
    if phone {
        step!("fits", b.expect_no_sideways_scrolling("integration page"));
    }
    // The address and key shown work.
    let answer = post_alert(&address, &key, &json!({"title": "Sent with the key shown"})).await;
    ensure!(
        answer.status.is_success(),
        "the address and key shown were refused: {}",
        answer.status
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn times_are_local_statuses_are_badges_counts_are_plural_and_custom_fields_are_a_tree() {
    at_both_widths!(AlertWorld::new().await, "reading", reading_journey);
}

/// `iso` in the browser's time zone, as `app.js` writes local times.
fn local_text(iso: &str) -> Result<String> {
    let utc = time::OffsetDateTime::parse(iso, &time::format_description::well_known::Rfc3339)?;
    let local = utc + time::Duration::minutes(BROWSER_TZ_MINUTES);
    Ok(format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02} (UTC+{:02}:{:02})",
        local.year(),
        u8::from(local.month()),
        local.day(),
        local.hour(),
        local.minute(),
        local.second(),
        BROWSER_TZ_MINUTES / 60,
        BROWSER_TZ_MINUTES % 60
    ))
}

async fn reading_journey(b: &Browser, world: &AlertWorld, phone: bool) -> Result<()> {
    let id = world.demo.project_id.to_string();
    let made = world
        .integration(json!({"type": "http", "name": "Edge", "active": true}))
        .await;
    let (address, key) = (
        made["url"].as_str().context("no url")?.to_owned(),
        made["token"].as_str().context("no token")?.to_owned(),
    );
    let payload = json!({
        "title": "TLS handshake failures on edge-3",
        "severity": "high",
        "fingerprint": "tls-edge-3",
        "svc_environment_name": "production",
        "labels": {"team": "edge", "region": {"name": "eu-west-1", "zone": "b"}},
        "checks": ["handshake", "ocsp"],
        "threshold": 0.05
    });
    let answer = post_alert(&address, &key, &payload).await;
    ensure!(
        answer.status.is_success(),
        "posting the alert answered {}",
        answer.status
    );

    step!("sign in", b.sign_in(&world.maintainer, "maintainer"));
    step!("open the alert list", b.goto(&alerts_path(&id, "")));
    let row = b
        .row("TLS handshake failures")
        .await?
        .context("the list does not show the alert")?;
    let time = row.find(Locator::Css("td.started time")).await?;
    let iso = time.attr("datetime").await?.context("no datetime")?;
    let title = time.attr("title").await?;
    let shown = time.text().await?;
    ensure!(
        title.as_deref() == Some(iso.as_str()),
        "the start time's title is {title:?}, not its ISO time {iso}"
    );
    ensure!(
        shown == "just now" || shown.ends_with("minute ago") || shown.ends_with("minutes ago"),
        "the list shows the start time as `{shown}`, not relative to now"
    );
    let badge = row.find(Locator::Css("td.status .badge")).await?;
    ensure!(
        badge
            .attr("class")
            .await?
            .unwrap_or_default()
            .contains("status-triggered")
            && badge.text().await? == "Triggered",
        "the status is not a Triggered badge"
    );
    b.shot("list-relative-time-and-badge").await?;

    step!(
        "open the alert",
        b.click_element_and_load(&row.find(Locator::Css("td.title a")).await?, "td.title a")
    );
    let events = step!("events", b.text("#alert-events"));
    ensure!(events == "1 event", "one occurrence reads `{events}`");
    let started = b.find("#alert-started time").await?;
    let iso = started.attr("datetime").await?.context("no datetime")?;
    let shown = started.text().await?;
    ensure!(
        shown == local_text(&iso)?,
        "the start time {iso} reads `{shown}`, not `{}` (local time in {BROWSER_TZ})",
        local_text(&iso)?
    );
    ensure!(
        started.attr("title").await?.as_deref() == Some(iso.as_str()),
        "hovering the start time does not show its ISO time"
    );
    let badge = b.find("#alert-status .badge").await?;
    ensure!(
        badge.text().await? == "Triggered",
        "the alert's status is not a badge"
    );
    // Custom fields as a tree: `region` is a branch under `labels`, its `zone` a leaf under it, set off to the
    // right; array items are numbered.
    let tree = step!("the custom fields", b.find("#custom-fields ul.tree"));
    let text = tree.text().await?;
    ensure!(
        text.contains("team")
            && text.contains("eu-west-1")
            && text.contains("handshake")
            && text.contains("0.05"),
        "the custom fields read `{text}`"
    );
    let nesting = b
        .client
        .execute(
            r#"
            const keys = Array.from(document.querySelectorAll('#custom-fields .key'));
            const find = (name) => keys.find(k => k.textContent.trim() === name);
            const [labels, region, zone] = [find('labels'), find('region'), find('zone')];
            if (!labels || !region || !zone) return 'missing keys';
            const left = (e) => e.getBoundingClientRect().left;
            const inside = (child, parent) => parent.parentElement.contains(child);
            if (!inside(region, labels) || !inside(zone, region)) return 'not nested';
            if (!(left(labels) < left(region) && left(region) < left(zone))) return 'not indented';
            const inner = window.innerWidth;
            if (keys.some(k => k.getBoundingClientRect().right > inner)) return 'past the window';
            return 'ok';
            "#,
            vec![],
        )
        .await?;
    ensure!(
        nesting == json!("ok"),
        "the custom fields are not a readable tree: {nesting}"
    );
    b.shot("alert-local-time-badge").await?;
    b.scroll_to("#custom-fields").await?;
    b.shot("custom-fields-tree").await?;
    if phone {
        step!("fits", b.expect_no_sideways_scrolling("alert page"));
    }

    // A second occurrence: plural.
    let answer = post_alert(&address, &key, &payload).await;
    ensure!(
        answer.status.is_success(),
        "posting again answered {}",
        answer.status
    );
    step!("reload the alert", b.goto(&b.path().await?));
    let events = step!("events", b.text("#alert-events"));
    ensure!(events == "2 events", "two occurrences read `{events}`");
    step!("open the environments", b.click_and_load("#nav-environments"));
    let line = step!("the environment's alert", b.text("#environments li"));
    ensure!(
        line.contains("2 events") && line.contains("Triggered"),
        "the environments dashboard shows `{line}`"
    );
    b.shot("environments-plural").await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_alert_list_filters_by_severity_and_links_the_incident() {
    at_both_widths!(
        AlertWorld::with(|raw| raw.service_token = Some(common::alerts::ADMIN.to_owned())).await,
        "severity-incident",
        severity_incident_journey
    );
}

async fn severity_incident_journey(b: &Browser, world: &AlertWorld, phone: bool) -> Result<()> {
    let id = world.demo.project_id.to_string();
    let on = common::send_json(
        http::Method::PUT,
        &world.api("/alert_settings"),
        &world.maintainer,
        json!({"create_incident": true}),
    )
    .await;
    ensure!(
        on.status.is_success(),
        "turning incidents on answered {}",
        on.status
    );
    let made = world
        .integration(json!({"type": "http", "name": "Core", "active": true}))
        .await;
    let (address, key) = (
        made["url"].as_str().context("no url")?.to_owned(),
        made["token"].as_str().context("no token")?.to_owned(),
    );
    for (title, severity) in [
        ("API gateway down", "critical"),
        ("Queue depth rising", "low"),
        ("Search index stale", "medium"),
    ] {
        let answer = post_alert(&address, &key, &json!({"title": title, "severity": severity})).await;
        ensure!(
            answer.status.is_success(),
            "posting an alert answered {}",
            answer.status
        );
    }

    step!("sign in", b.sign_in(&world.maintainer, "maintainer"));
    // The outbox opens an incident for each; the list links them.
    step!(
        "the incidents",
        b.reload_until(
            &alerts_path(&id, "?severity=critical"),
            "tr.alert td.incident a",
            "the critical alert's incident"
        )
    );
    let rows = b.client.find_all(Locator::Css("tr.alert")).await?;
    ensure!(
        rows.len() == 1 && b.row("API gateway down").await?.is_some(),
        "filtering on Critical lists {} rows, not only `API gateway down`",
        rows.len()
    );
    let link = b.find("tr.alert td.incident a").await?;
    let (text, href) = (link.text().await?, link.attr("href").await?.unwrap_or_default());
    let number = text.trim_start_matches('#');
    ensure!(
        text.starts_with('#') && href.ends_with(&format!("/{PROJECT_PATH}/-/issues/{number}")),
        "the incident cell links `{text}` to {href}"
    );
    ensure!(
        b.value("#severity").await? == "critical",
        "the severity filter does not show Critical"
    );
    let tab = b
        .find("a.tab[data-status=\"all\"]")
        .await?
        .attr("href")
        .await?
        .unwrap_or_default();
    ensure!(
        tab.contains("severity=critical"),
        "the All tab's link {tab} drops the severity filter"
    );
    step!(
        "incident cells",
        b.expect_cells_under_their_headings("table#alerts", phone)
    );
    b.scroll_to("table#alerts").await?;
    b.shot("critical-with-incident").await?;

    // Choosing a severity in the form filters the same way.
    step!("choose Low", b.select("#severity", "low"));
    step!("apply", b.click_and_load("#apply"));
    let rows = b.client.find_all(Locator::Css("tr.alert")).await?;
    ensure!(
        rows.len() == 1 && b.row("Queue depth rising").await?.is_some(),
        "choosing Low lists {} rows, not only `Queue depth rising`",
        rows.len()
    );
    b.scroll_to("table#alerts").await?;
    b.shot("low").await?;
    step!("every severity", b.select("#severity", ""));
    step!("apply", b.click_and_load("#apply"));
    let rows = b.client.find_all(Locator::Css("tr.alert")).await?;
    ensure!(rows.len() == 3, "every severity lists {} rows, not 3", rows.len());
    b.scroll_to("table#alerts").await?;
    b.shot("every-severity").await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_followed_while_signed_out_lands_on_the_alert_after_signing_in() {
    at_both_widths!(AlertWorld::new().await, "follow-link", follow_link_journey);
}

/// Someone is sent a link to an alert while signed out: the pages send them to sign in, the server asks them to
/// approve, and they land on that alert.
async fn follow_link_journey(b: &Browser, world: &AlertWorld, phone: bool) -> Result<()> {
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

// ---------------------------------------------------------------------------------------------------------
// Accessibility: axe-core on every page, and what axe cannot judge.
// ---------------------------------------------------------------------------------------------------------

/// axe-core's script, pinned in `tests/axe/package-lock.json` and installed by `./test.sh`.
fn axe_source() -> Result<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/axe/node_modules/axe-core/axe.min.js");
    fs::read_to_string(&path).with_context(|| {
        format!(
            "{} is missing: the accessibility check needs axe-core; run ./test.sh, or `npm ci --prefix tests/axe`",
            path.display()
        )
    })
}

impl Browser {
    /// Runs axe-core (every rule it runs by default: WCAG 2 A and AA, and its best practices) on the current page,
    /// after `app.js` has run, and fails with each violation, its elements and what is wrong with them.
    async fn expect_accessible(&self, axe: &str, page: &str) -> Result<()> {
        self.wait_loaded(&format!("the {page} to load")).await?;
        self.client
            .execute(&format!("{axe}\n;return typeof window.axe;"), vec![])
            .await
            .with_context(|| format!("injecting axe-core into the {page}"))?;
        let found = self
            .client
            .execute_async(
                r#"
                const done = arguments[arguments.length - 1];
                window.axe.run(document).then(
                  (results) => done(results.violations.map((violation) =>
                    `${violation.id} (${violation.impact}): ${violation.help}\n` +
                    violation.nodes.map((node) => `      ${node.target.join(' ')}: ${node.failureSummary}`).join('\n'))),
                  (error) => done([`axe-core failed: ${error}`]));
                "#,
                vec![],
            )
            .await
            .with_context(|| format!("running axe-core on the {page}"))?;
        let violations: Vec<String> = serde_json::from_value(found.clone())
            .map_err(|_| anyhow!("axe-core answered {found} on the {page}"))?;
        ensure!(
            violations.is_empty(),
            "axe-core finds {} violation(s) on the {page} ({}):\n  {}",
            violations.len(),
            self.address().await,
            violations.join("\n  ")
        );
        Ok(())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_page_passes_axe_core_and_reads_as_it_shows() {
    at_both_widths!(AlertWorld::new().await, "accessibility", accessibility_journey);
}

async fn accessibility_journey(b: &Browser, world: &AlertWorld, phone: bool) -> Result<()> {
    let axe = axe_source()?;
    let id = world.demo.project_id.to_string();
    let made = world
        .integration(json!({"type": "http", "name": "Edge", "active": true}))
        .await;
    let integration = made["id"].as_u64().context("no id")?;
    let (address, key) = (
        made["url"].as_str().context("no url")?.to_owned(),
        made["token"].as_str().context("no token")?.to_owned(),
    );
    world
        .integration(json!({"type": "prometheus", "active": false}))
        .await;
    for payload in [
        json!({"title": "TLS handshake failures", "severity": "high", "fingerprint": "tls",
               "svc_environment_name": "production", "labels": {"team": "edge"}}),
        json!({"title": "Disk full", "severity": "critical", "fingerprint": "disk"}),
        json!({"title": "Disk full", "fingerprint": "disk", "end_time": "2026-11-24T10:00:00Z"}),
    ] {
        let answer = post_alert(&address, &key, &payload).await;
        ensure!(answer.status.is_success(), "posting answered {}", answer.status);
    }

    step!("the sign-in page", b.goto("/-/svcgate/sign_in"));
    step!("axe: sign-in", b.expect_accessible(&axe, "sign-in page"));
    step!("sign in", b.sign_in(&world.maintainer, "maintainer"));
    step!("axe: projects", b.expect_accessible(&axe, "projects page"));
    ensure!(
        !b.has("#nav-v3-usage").await?,
        "a Maintainer who is no admin is offered the V3 usage page"
    );

    step!("the alert list", b.goto(&alerts_path(&id, "?status=all")));
    step!("axe: alert list", b.expect_accessible(&axe, "alert list"));
    // Relative times read as the screen shows them; the absolute time stays in `title` and `datetime`.
    let labelled = b
        .client
        .execute(
            "return Array.from(document.querySelectorAll('time')).map(t => [t.textContent, t.getAttribute('aria-label'), t.title]);",
            vec![],
        )
        .await?;
    let times = labelled.as_array().cloned().unwrap_or_default();
    ensure!(!times.is_empty(), "the alert list shows no time");
    for time in &times {
        ensure!(
            time[1].is_null() && time[2].as_str().is_some_and(|title| title.ends_with('Z')),
            "a time reads differently from what it shows, or lost its absolute time: {time}"
        );
    }
    // The skip link is the first stop of the keyboard and shows when it has the focus.
    let first = b
        .client
        .execute(
            "const first = document.querySelector('a[href], button, input, select, textarea'); first.focus(); \
             const box = first.getBoundingClientRect(); \
             return [first.id, first.getAttribute('href'), box.top >= 0 && box.bottom <= window.innerHeight];",
            vec![],
        )
        .await?;
    ensure!(
        first == json!(["skip-link", "#main", true]),
        "the first link is not a skip link shown on focus: {first}"
    );
    b.shot("skip-link-focused").await?;
    step!("skip to the content", b.find("#skip-link").await?.click());
    let focused = b
        .client
        .execute("return document.activeElement.id;", vec![])
        .await?;
    ensure!(
        focused == json!("main"),
        "the skip link moved the focus to {focused}"
    );

    let row = b
        .row("Disk full")
        .await?
        .context("the list does not show the resolved alert")?;
    step!(
        "open the resolved alert",
        b.click_element_and_load(&row.find(Locator::Css("td.title a")).await?, "td.title a")
    );
    step!("axe: alert page", b.expect_accessible(&axe, "alert page"));
    let current = b.find("#nav-alerts").await?.attr("aria-current").await?;
    ensure!(
        current.as_deref() == Some("true"),
        "on an alert's page, the Alerts link's aria-current is {current:?}"
    );
    step!("the environments", b.click_and_load("#nav-environments"));
    step!(
        "axe: environments",
        b.expect_accessible(&axe, "environments dashboard")
    );
    let current = b.find("#nav-environments").await?.attr("aria-current").await?;
    ensure!(current.as_deref() == Some("page"), "aria-current is {current:?}");

    step!("the settings", b.click_and_load("#nav-settings"));
    step!("axe: settings", b.expect_accessible(&axe, "settings page"));
    step!("choose HTTP Endpoint", b.select("#type", "http"));
    step!("name", b.fill("#name", "Shop"));
    step!("bad sample", b.fill("#payload_example", "{not json"));
    step!("save", b.click_and_load("#save-integration"));
    let invalid = b.find("#payload_example").await?;
    ensure!(
        invalid.attr("aria-invalid").await?.as_deref() == Some("true")
            && invalid.attr("aria-describedby").await?.as_deref() == Some("error"),
        "the bad sample is not tied to its error"
    );
    step!(
        "axe: settings with an error",
        b.expect_accessible(&axe, "settings page with an error")
    );
    b.shot("form-error").await?;

    step!("the integration", b.goto(&integration_path(&id, integration)));
    step!(
        "axe: integration page",
        b.expect_accessible(&axe, "integration page")
    );
    // The status badge in the heading is as small as everywhere else, not the heading's size.
    let sizes = b
        .client
        .execute(
            "const badge = document.querySelector('h1 .badge'); const body = document.querySelector('main p, main label'); \
             return [parseFloat(getComputedStyle(badge).fontSize), badge.getBoundingClientRect().height, \
                     parseFloat(getComputedStyle(body).fontSize)];",
            vec![],
        )
        .await?;
    let (badge_font, badge_height, body_font) = (
        sizes[0].as_f64().unwrap_or(f64::MAX),
        sizes[1].as_f64().unwrap_or(f64::MAX),
        sizes[2].as_f64().unwrap_or(0.0),
    );
    ensure!(
        badge_font < body_font && badge_height <= 2.0 * body_font,
        "the heading's badge is {badge_font}px text, {badge_height}px tall, beside {body_font}px body text"
    );
    b.shot("integration-badge").await?;
    step!("reset", b.click_and_load("#reset-key"));
    step!(
        "axe: reset confirmation",
        b.expect_accessible(&axe, "key reset confirmation")
    );
    step!("cancel", b.click_and_load("#cancel"));
    step!("delete", b.click_and_load("#delete-integration"));
    step!(
        "axe: delete confirmation",
        b.expect_accessible(&axe, "delete confirmation")
    );
    step!("an unknown alert", b.goto(&alerts_path(&id, "/999")));
    step!("axe: not found", b.expect_accessible(&axe, "not-found page"));
    if phone {
        step!("fits", b.expect_no_sideways_scrolling("not-found page"));
    }

    // An admin of the server is offered the V3 usage page.
    step!("sign out", b.click_and_load("#sign-out"));
    step!("sign in as the admin", b.sign_in(common::alerts::ADMIN, "root"));
    step!("the V3 usage page", b.click_and_load("#nav-v3-usage"));
    ensure!(
        b.path().await? == "/-/svcgate/admin/v3-usage",
        "the admin's link led to {}",
        b.path().await?
    );
    step!("axe: V3 usage", b.expect_accessible(&axe, "V3 usage page"));
    b.shot("v3-usage").await?;
    step!("the V3 clients page", b.click_and_load("#v3-clients"));
    step!("axe: V3 clients", b.expect_accessible(&axe, "V3 clients page"));
    Ok(())
}

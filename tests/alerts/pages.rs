//! The pages over HTTP, for what the browser journeys do not reach: CSRF refusals, cookie flags, the key reset
//! confirmation, incident settings, the Opsgenie exclusivity message, the payload format's select and the
//! Reporter's refusal.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::common::alerts::AlertWorld;
use crate::common::{send, Answer};
use http::{Method, StatusCode};
use serde_json::json;

/// A signed-in page visitor: the session cookie and the forms' CSRF token.
struct Visitor {
    base: String,
    cookie: String,
    csrf: String,
}

impl Visitor {
    async fn sign_in(world: &AlertWorld, token: &str) -> Self {
        let base = world.gateway.url();
        let signed = common::sign_in(&base, token).await;
        assert_eq!(signed.status, StatusCode::SEE_OTHER);
        let set = signed.header("set-cookie").unwrap().to_owned();
        assert!(
            set.contains("HttpOnly") && set.contains("SameSite=Strict") && set.contains("Max-Age="),
            "{set}"
        );
        assert!(!set.contains("Secure"), "plain HTTP: no Secure flag");
        let cookie = signed.cookie();
        let page = send(
            Method::GET,
            &format!("{base}/-/svcgate/projects"),
            &[("cookie", &cookie)],
            None,
        )
        .await;
        Visitor {
            csrf: page.csrf(),
            base,
            cookie,
        }
    }

    async fn get(&self, path: &str) -> Answer {
        send(
            Method::GET,
            &format!("{}{path}", self.base),
            &[("cookie", &self.cookie)],
            None,
        )
        .await
    }

    async fn post(&self, path: &str, form: &str) -> Answer {
        let body = format!("csrf={}&{form}", self.csrf);
        send(
            Method::POST,
            &format!("{}{path}", self.base),
            &[("cookie", &self.cookie)],
            Some(("application/x-www-form-urlencoded", body.into_bytes())),
        )
        .await
    }
}

fn text(answer: &Answer) -> String {
    String::from_utf8_lossy(&answer.body).into_owned()
}

/// The `<select id="{id}" …>…</select>` of a page (empty when there is none): the add form has two selects, the
/// integration's type and its payload format, whose option values overlap (`generic`, `opsgenie`).
fn select<'a>(html: &'a str, id: &str) -> &'a str {
    let Some(start) = html.find(&format!(r#"<select id="{id}""#)) else {
        return "";
    };
    let rest = &html[start..];
    &rest[..rest.find("</select>").unwrap_or(rest.len())]
}

#[tokio::test]
async fn forms_without_the_session_csrf_token_are_refused() {
    let world = AlertWorld::new().await;
    let visitor = Visitor::sign_in(&world, &world.maintainer).await;
    let settings = format!(
        "/-/svcgate/projects/{}/settings/operations",
        world.demo.project_id
    );
    let forged = send(
        Method::POST,
        &format!("{}{settings}/integrations", visitor.base),
        &[("cookie", &visitor.cookie)],
        Some((
            "application/x-www-form-urlencoded",
            b"csrf=wrong&type=generic&active=on".to_vec(),
        )),
    )
    .await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN);
    let listed = common::get(&world.api("/integrations"), &world.maintainer)
        .await
        .json();
    assert!(listed.as_array().unwrap().is_empty(), "nothing was created");
    let sign_in = send(
        Method::POST,
        &format!("{}/-/svcgate/sign_in", visitor.base),
        &[],
        Some((
            "application/x-www-form-urlencoded",
            format!("csrf=x&token={}", world.maintainer).into_bytes(),
        )),
    )
    .await;
    assert_eq!(
        sign_in.status,
        StatusCode::UNAUTHORIZED,
        "sign-in needs its double-submit cookie"
    );
}

#[tokio::test]
async fn the_key_is_reset_only_after_a_confirmation_and_incident_settings_are_saved() {
    let world = AlertWorld::new().await;
    let visitor = Visitor::sign_in(&world, &world.maintainer).await;
    let settings = format!(
        "/-/svcgate/projects/{}/settings/operations",
        world.demo.project_id
    );
    let created = visitor
        .post(
            &format!("{settings}/integrations"),
            "type=generic&active=on&action=save",
        )
        .await;
    assert_eq!(created.status, StatusCode::SEE_OTHER);
    let integration = common::get(&world.api("/integrations"), &world.maintainer)
        .await
        .json()[0]
        .clone();
    let id = integration["id"].as_u64().unwrap();
    let before = common::get(&world.api(&format!("/integrations/{id}")), &world.maintainer)
        .await
        .json()["token"]
        .clone();
    let confirm = visitor
        .get(&format!("{settings}/integrations/{id}/reset_token"))
        .await;
    assert_eq!(confirm.status, StatusCode::OK);
    assert!(text(&confirm).contains("id=\"confirm-reset\""));
    let unchanged = common::get(&world.api(&format!("/integrations/{id}")), &world.maintainer)
        .await
        .json()["token"]
        .clone();
    assert_eq!(unchanged, before, "showing the confirmation changes nothing");
    let reset = visitor
        .post(&format!("{settings}/integrations/{id}/reset_token"), "")
        .await;
    assert_eq!(reset.status, StatusCode::SEE_OTHER);
    let page = visitor.get(reset.header("location").unwrap()).await;
    assert!(text(&page).contains("The key was reset"));
    let after = common::get(&world.api(&format!("/integrations/{id}")), &world.maintainer)
        .await
        .json()["token"]
        .clone();
    assert_ne!(after, before);

    let saved = visitor
        .post(&format!("{settings}/incidents"), "create_incident=on")
        .await;
    assert_eq!(saved.status, StatusCode::SEE_OTHER);
    let stored = common::get(&world.api("/alert_settings"), &world.maintainer)
        .await
        .json();
    assert_eq!(
        stored,
        json!({"create_incident": true, "auto_close_incident": false})
    );
}

#[tokio::test]
async fn the_opsgenie_form_explains_its_exclusivity() {
    let world = AlertWorld::new().await;
    let visitor = Visitor::sign_in(&world, &world.maintainer).await;
    let settings = format!(
        "/-/svcgate/projects/{}/settings/operations",
        world.demo.project_id
    );
    visitor
        .post(
            &format!("{settings}/integrations"),
            "type=generic&active=on&action=save",
        )
        .await;
    let refused = visitor
        .post(
            &format!("{settings}/integrations"),
            "type=opsgenie&active=on&api_url=https%3A%2F%2Fopsgenie.example%2Falerts&action=save",
        )
        .await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    let html = text(&refused);
    assert!(
        html.contains("id=\"error\"") && html.contains("disable the Generic integration"),
        "{html}"
    );
}

#[tokio::test]
async fn a_reporter_sees_no_alerts_and_unknown_projects_are_not_revealed() {
    let world = AlertWorld::new().await;
    let visitor = Visitor::sign_in(&world, &world.reporter).await;
    let alerts = visitor
        .get(&format!("/-/svcgate/projects/{}/alerts", world.demo.project_id))
        .await;
    assert_eq!(alerts.status, StatusCode::FORBIDDEN);
    assert!(text(&alerts).contains("id=\"forbidden\""));
    let unknown = visitor.get("/-/svcgate/projects/999999/alerts").await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
    let assets = visitor.get("/-/svcgate/assets/style.css").await;
    assert_eq!(assets.header("content-type"), Some("text/css"));
    let signed_out = send(
        Method::GET,
        &format!("{}/-/svcgate/projects", visitor.base),
        &[],
        None,
    )
    .await;
    assert_eq!(signed_out.status, StatusCode::SEE_OTHER);
    assert_eq!(signed_out.header("location"), Some("/-/svcgate/sign_in"));
}

#[tokio::test]
async fn without_javascript_the_add_form_is_redrawn_for_the_chosen_type_and_saves_nothing() {
    let world = AlertWorld::new().await;
    let visitor = Visitor::sign_in(&world, &world.maintainer).await;
    let settings = format!(
        "/-/svcgate/projects/{}/settings/operations",
        world.demo.project_id
    );
    let first = text(&visitor.get(&settings).await);
    assert!(
        first.contains(r#"<div class="field" data-types="opsgenie" hidden>"#)
            && first.contains(r#"<div class="field" data-types="http">"#),
        "the form starts as an HTTP Endpoint's: {first}"
    );
    let redrawn = visitor
        .post(
            &format!("{settings}/integrations"),
            "type=opsgenie&name=Paging&action=choose_type",
        )
        .await;
    assert_eq!(redrawn.status, StatusCode::OK);
    let html = text(&redrawn);
    assert!(
        html.contains(r#"<div class="field" data-types="http" hidden>"#)
            && html.contains(r#"<div class="field" data-types="opsgenie">"#)
            && select(&html, "type").contains(r#"<option value="opsgenie" selected>"#)
            && html.contains(r#"value="Paging""#),
        "the redrawn form shows Opsgenie's fields and keeps the name: {html}"
    );
    let listed = common::get(&world.api("/integrations"), &world.maintainer)
        .await
        .json();
    assert!(
        listed.as_array().unwrap().is_empty(),
        "choosing a type saves nothing"
    );

    // A sample typed for an HTTP Endpoint before switching to Generic is not sent with the Generic one.
    let created = visitor
        .post(
            &format!("{settings}/integrations"),
            "type=generic&active=on&payload_example=%7B%7D&api_url=https%3A%2F%2Fx.example&action=save",
        )
        .await;
    assert_eq!(created.status, StatusCode::SEE_OTHER, "{}", text(&created));
    let location = created.header("location").unwrap().to_owned();
    assert!(
        location.contains("/integrations/"),
        "saving leads to the integration: {location}"
    );
    let page = text(&visitor.get(&location).await);
    assert!(
        page.contains("id=\"integration-url\"") && page.contains("id=\"integration-key\""),
        "the new integration's page shows its address and key: {page}"
    );
}

#[tokio::test]
async fn deleting_needs_the_confirmation_page_which_works_without_javascript() {
    let world = AlertWorld::new().await;
    let visitor = Visitor::sign_in(&world, &world.maintainer).await;
    let made = world
        .integration(json!({"type": "generic", "active": true}))
        .await;
    let id = made["id"].as_u64().unwrap();
    let page = format!(
        "/-/svcgate/projects/{}/settings/operations/integrations/{id}",
        world.demo.project_id
    );
    let html = text(&visitor.get(&page).await);
    assert!(
        html.contains(&format!(
            r#"<a id="delete-integration" class="button danger" href="{page}/delete">"#
        )),
        "the delete button is a link to the confirmation page (a GET form would add a bare `?`): {html}"
    );
    let confirm = visitor.get(&format!("{page}/delete")).await;
    assert_eq!(confirm.status, StatusCode::OK);
    let html = text(&confirm);
    assert!(
        html.contains("id=\"confirm-delete\"") && html.contains(&format!("action=\"{page}/delete\"")),
        "{html}"
    );
    assert!(
        html.contains("<h1>Delete the integration “Generic”?</h1>"),
        "the heading quotes the name: {html}"
    );
    let api = world.api(&format!("/integrations/{id}"));
    assert_eq!(
        common::get(&api, &world.maintainer).await.status,
        StatusCode::OK,
        "showing the confirmation deletes nothing"
    );
    let deleted = visitor.post(&format!("{page}/delete"), "").await;
    assert_eq!(deleted.status, StatusCode::SEE_OTHER);
    assert_eq!(
        common::get(&api, &world.maintainer).await.status,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn times_are_iso_utc_in_time_elements_and_a_wrong_severity_is_refused() {
    let world = AlertWorld::new().await;
    let made = world
        .integration(json!({"type": "generic", "active": true}))
        .await;
    let answer = common::alerts::post_alert(
        made["url"].as_str().unwrap(),
        made["token"].as_str().unwrap(),
        &json!({"title": "Disk full", "severity": "high", "start_time": "2026-11-24T08:05:09Z"}),
    )
    .await;
    assert!(answer.status.is_success());
    let visitor = Visitor::sign_in(&world, &world.developer).await;
    let alerts = format!("/-/svcgate/projects/{}/alerts", world.demo.project_id);
    let page = text(&visitor.get(&format!("{alerts}/1")).await);
    // Readable without JavaScript (UTC), local with it (app.js reads `datetime`), ISO on hover.
    assert!(
        page.contains(
            r#"<time datetime="2026-11-24T08:05:09.000Z" title="2026-11-24T08:05:09.000Z" data-show="local">2026-11-24 08:05:09 UTC</time>"#
        ),
        "{page}"
    );
    let list = text(&visitor.get(&format!("{alerts}?severity=high")).await);
    assert!(
        list.contains("Disk full") && list.contains(r#"data-show="relative""#),
        "{list}"
    );
    let none = text(&visitor.get(&format!("{alerts}?severity=low")).await);
    assert!(
        !none.contains("Disk full") && none.contains(r#"data-empty="no-match""#),
        "{none}"
    );
    let refused = visitor.get(&format!("{alerts}?severity=dire")).await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    assert!(text(&refused).contains("severity must be"));
}

#[tokio::test]
async fn with_only_switched_off_integrations_the_empty_list_says_to_switch_one_on() {
    let world = AlertWorld::new().await;
    world
        .integration(json!({"type": "generic", "active": false}))
        .await;
    let alerts = format!("/-/svcgate/projects/{}/alerts", world.demo.project_id);
    let maintainer = Visitor::sign_in(&world, &world.maintainer).await;
    let html = text(&maintainer.get(&alerts).await);
    assert!(
        html.contains(r#"data-empty="first-alert""#)
            && html.contains("all switched off")
            && html.contains("Switch one\n  Active under")
            && !html.contains("create an integration"),
        "{html}"
    );
    let developer = Visitor::sign_in(&world, &world.developer).await;
    let html = text(&developer.get(&alerts).await);
    assert!(
        html.contains("all switched off")
            && html.contains("A Maintainer of the project can switch one Active"),
        "{html}"
    );
}

#[tokio::test]
async fn admins_get_a_link_to_the_v3_usage_page_and_others_do_not() {
    let world = AlertWorld::new().await;
    let admin = Visitor::sign_in(&world, common::alerts::ADMIN).await;
    let html = text(&admin.get("/-/svcgate/projects").await);
    assert!(
        html.contains(r#"<a id="nav-v3-usage" href="/-/svcgate/admin/v3-usage">V3 usage</a>"#),
        "an admin's header links the V3 usage page: {html}"
    );
    let maintainer = Visitor::sign_in(&world, &world.maintainer).await;
    let html = text(&maintainer.get("/-/svcgate/projects").await);
    assert!(!html.contains("nav-v3-usage"), "{html}");
}

#[tokio::test]
async fn a_test_alert_on_an_inactive_integration_says_it_is_inactive_and_stores_nothing() {
    let world = AlertWorld::new().await;
    let visitor = Visitor::sign_in(&world, &world.maintainer).await;
    let settings = format!(
        "/-/svcgate/projects/{}/settings/operations",
        world.demo.project_id
    );
    let made = world
        .integration(json!({"type": "http", "name": "Switched off", "active": false}))
        .await;
    let id = made["id"].as_u64().unwrap();
    // A page drawn while it was active, sent after it was switched off.
    let tested = visitor
        .post(
            &format!("{settings}/test"),
            &format!("integration_id={id}&payload=%7B%22title%22%3A%22t%22%7D"),
        )
        .await;
    let html = text(&tested);
    assert_eq!(tested.status, StatusCode::BAD_REQUEST, "{html}");
    assert!(
        html.contains("is inactive") && html.contains("Switched off"),
        "the refusal says the integration is inactive: {html}"
    );
    // The same when it is created switched off with "Save and test".
    let created = visitor
        .post(
            &format!("{settings}/integrations"),
            "type=prometheus&action=save_and_test",
        )
        .await;
    let html = text(&created);
    assert!(
        html.contains("the test alert failed") && html.contains("is inactive"),
        "{html}"
    );
    let alerts = common::get(&world.api("/alerts"), &world.maintainer).await.json();
    assert_eq!(
        alerts.as_array().map(Vec::len),
        Some(0),
        "no test alert was stored: {alerts}"
    );
}

#[tokio::test]
async fn the_add_form_offers_only_the_kinds_the_project_may_still_add() {
    let world = AlertWorld::new().await;
    let visitor = Visitor::sign_in(&world, &world.maintainer).await;
    let settings = format!(
        "/-/svcgate/projects/{}/settings/operations",
        world.demo.project_id
    );
    world.integration(json!({"type": "generic"})).await;
    world.integration(json!({"type": "prometheus"})).await;
    let page = text(&visitor.get(&settings).await);
    let html = select(&page, "type");
    for taken in ["generic", "prometheus"] {
        assert!(
            !html.contains(&format!(r#"<option value="{taken}""#)),
            "{taken} is offered though the project has one: {html}"
        );
    }
    assert!(
        html.contains(r#"<option value="http" selected>HTTP Endpoint</option>"#)
            && html.contains(r#"<option value="opsgenie">Opsgenie</option>"#),
        "{html}"
    );
}

#[tokio::test]
async fn on_the_free_edition_the_add_form_offers_neither_opsgenie_nor_a_second_http_endpoint() {
    let world = AlertWorld::with(|raw| raw.edition = Some("free".to_owned())).await;
    let visitor = Visitor::sign_in(&world, &world.maintainer).await;
    let settings = format!(
        "/-/svcgate/projects/{}/settings/operations",
        world.demo.project_id
    );
    world
        .integration(json!({"type": "http", "name": "Only one"}))
        .await;
    let page = text(&visitor.get(&settings).await);
    let html = select(&page, "type");
    assert!(
        !html.contains(r#"<option value="opsgenie""#) && !html.contains(r#"<option value="http""#),
        "{html}"
    );
    assert!(
        html.contains(r#"<option value="generic" selected>Generic</option>"#),
        "{html}"
    );
}

#[tokio::test]
async fn a_resolved_alert_shows_the_payload_that_resolved_it() {
    let world = AlertWorld::new().await;
    let visitor = Visitor::sign_in(&world, &world.maintainer).await;
    let made = world
        .integration(json!({"type": "generic", "active": true}))
        .await;
    let (url, key) = (
        made["url"].as_str().unwrap().to_owned(),
        made["token"].as_str().unwrap().to_owned(),
    );
    let fired = common::alerts::post_alert(
        &url,
        &key,
        &json!({"title": "Disk full", "fingerprint": "disk", "state": "firing-text"}),
    )
    .await;
    assert!(fired.status.is_success());
    let iid = fired.json()[0]["iid"].as_u64().unwrap();
    let resolved = common::alerts::post_alert(
        &url,
        &key,
        &json!({"title": "Disk full", "fingerprint": "disk", "state": "recovered-text",
                "end_time": "2026-11-24T10:00:00Z"}),
    )
    .await;
    assert!(resolved.status.is_success());
    let page = text(
        &visitor
            .get(&format!(
                "/-/svcgate/projects/{}/alerts/{iid}",
                world.demo.project_id
            ))
            .await,
    );
    assert!(page.contains("Resolved"), "{page}");
    assert!(
        page.contains("recovered-text") && !page.contains("firing-text"),
        "the page shows the payload that opened the alert, not the latest: {page}"
    );
}

#[tokio::test]
async fn pages_have_a_skip_link_mark_the_current_section_and_tie_errors_to_their_fields() {
    let world = AlertWorld::new().await;
    let visitor = Visitor::sign_in(&world, &world.maintainer).await;
    let project = format!("/-/svcgate/projects/{}", world.demo.project_id);
    let list = text(&visitor.get(&format!("{project}/alerts")).await);
    let body = list.split("<body>").nth(1).unwrap_or_default().trim_start();
    assert!(
        body.starts_with(r##"<a id="skip-link" class="skip-link" href="#main">"##),
        "the first thing in the page is the skip link: {body}"
    );
    assert!(list.contains(r#"<main id="main" tabindex="-1">"#), "{list}");
    assert!(
        list.contains(&format!(
            r#"<a id="nav-alerts" href="{project}/alerts" aria-current="page">"#
        )) && !list.contains(r#"id="nav-settings" href="{project}/settings/operations" aria-current"#),
        "{list}"
    );
    let settings = format!("{project}/settings/operations");
    let bad = visitor
        .post(
            &format!("{settings}/integrations"),
            "type=http&name=Shop&payload_example=%7Bnot+json&action=save",
        )
        .await;
    let html = text(&bad);
    assert!(
        html.contains(&format!(
            r#"<a id="nav-settings" href="{settings}" aria-current="page">"#
        )),
        "{html}"
    );
    assert!(
        html.contains(
            r#"<textarea id="payload_example" name="payload_example" rows="6" aria-invalid="true" aria-describedby="error">"#
        ) && html.contains(r#"<p id="error" class="error" role="alert">"#),
        "the bad sample is marked invalid and described by the error: {html}"
    );
    let missing_name = text(
        &visitor
            .post(&format!("{settings}/integrations"), "type=http&action=save")
            .await,
    );
    assert!(
        missing_name.contains(
            r#"<input id="name" name="name" value="" aria-invalid="true" aria-describedby="error">"#
        ),
        "{missing_name}"
    );
    // Signing in with a wrong token marks the token field.
    let form = send(
        Method::GET,
        &format!("{}/-/svcgate/sign_in", visitor.base),
        &[],
        None,
    )
    .await;
    let refused = send(
        Method::POST,
        &format!("{}/-/svcgate/sign_in", visitor.base),
        &[("cookie", &form.cookie())],
        Some((
            "application/x-www-form-urlencoded",
            format!("csrf={}&token=wrong", form.csrf()).into_bytes(),
        )),
    )
    .await;
    assert!(
        text(&refused).contains(r#"required aria-invalid="true" aria-describedby="error">"#),
        "{}",
        text(&refused)
    );
}

/// Under `/-/svcgate/`, a path that is neither a probe, the API nor a page answers 404 in the service's JSON error
/// shape (a mistyped probe must fail, and an API client must read the answer), a path in the pages' sections that
/// no page answers gets the HTML 404 page, signed in or not, and only a page that exists sends a signed-out
/// browser to sign in.
#[tokio::test]
async fn unknown_svcgate_paths_answer_404_signed_in_or_out_and_only_existing_pages_ask_to_sign_in(
) -> anyhow::Result<()> {
    let world = AlertWorld::new().await;
    let visitor = Visitor::sign_in(&world, &world.maintainer).await;
    let base = visitor.base.clone();
    let project = world.demo.project_id;
    let signed_out = |path: String| {
        let url = format!("{base}{path}");
        async move { send(Method::GET, &url, &[], None).await }
    };
    for path in [
        "/-/svcgate/readyz",
        "/-/svcgate/healthz",
        "/-/svcgate/api/nope",
        "/-/svcgate/api/v3-usage/nope",
        "/-/svcgate/nope/projects",
    ] {
        for (who, answer) in [
            ("signed out", signed_out(path.to_owned()).await),
            ("signed in", visitor.get(path).await),
        ] {
            assert_eq!(answer.status, StatusCode::NOT_FOUND, "{who}: {path}");
            assert_eq!(
                answer.header("content-type"),
                Some("application/json"),
                "{who}: {path}"
            );
            let body: serde_json::Value = serde_json::from_slice(&answer.body)?;
            assert_eq!(body, json!({"message": "404 Not Found"}), "{who}: {path}");
        }
    }
    for path in [
        format!("/-/svcgate/projects/{project}/nope"),
        format!("/-/svcgate/projects/{project}/settings/operations/nope"),
        format!("/-/svcgate/projects/{project}/alerts/1/status"),
        "/-/svcgate/admin/nope".to_owned(),
        "/-/svcgate/admin/v3-clients/0123456789abcdef/nope".to_owned(),
        "/-/svcgate/assets/nope.png".to_owned(),
    ] {
        for (who, answer) in [
            ("signed out", signed_out(path.clone()).await),
            ("signed in", visitor.get(&path).await),
        ] {
            assert_eq!(answer.status, StatusCode::NOT_FOUND, "{who}: {path}");
            assert!(
                answer
                    .header("content-type")
                    .is_some_and(|kind| kind.starts_with("text/html")),
                "{who}: {path}: {:?}",
                answer.header("content-type")
            );
            assert!(text(&answer).contains("Not found"), "{who}: {path}");
        }
    }
    for path in [
        format!("/-/svcgate/projects/{project}/alerts"),
        format!("/-/svcgate/projects/{project}/settings/operations"),
        "/-/svcgate/projects".to_owned(),
        "/-/svcgate/admin/v3-clients".to_owned(),
        "/-/svcgate/admin/v3-clients/0123456789abcdef.md".to_owned(),
        "/-/svcgate/".to_owned(),
    ] {
        let answer = signed_out(path.clone()).await;
        assert_eq!(answer.status, StatusCode::SEE_OTHER, "{path}");
        assert!(
            answer
                .header("location")
                .is_some_and(|location| location.starts_with("/-/svcgate/sign_in")),
            "{path}: {:?}",
            answer.header("location")
        );
    }
    Ok(())
}

#[tokio::test]
async fn the_add_form_offers_every_payload_format_with_its_description_and_the_page_shows_the_choice() {
    let world = AlertWorld::new().await;
    let visitor = Visitor::sign_in(&world, &world.maintainer).await;
    let settings = format!(
        "/-/svcgate/projects/{}/settings/operations",
        world.demo.project_id
    );
    let page = text(&visitor.get(&settings).await);
    assert!(
        page.contains(r#"<div class="field" data-types="http generic">"#)
            && page.contains(r#"<label for="payload_format">"#),
        "the format is asked of HTTP Endpoints and Generic integrations, with a label: {page}"
    );
    let formats = select(&page, "payload_format");
    for name in [
        "generic",
        "alertmanager",
        "grafana",
        "datadog",
        "sentry",
        "pagerduty",
        "opsgenie",
        "alerta",
        "uptime_kuma",
        "new_relic",
        "azure_monitor",
        "aws_sns",
    ] {
        assert!(
            formats.contains(&format!(r#"<option value="{name}""#)),
            "{name} is offered: {formats}"
        );
    }
    assert!(
        formats.contains(r#"<option value="generic" selected>generic: "#)
            && formats.contains("grafana: Grafana alerting"),
        "generic is chosen first, each format with its description: {formats}"
    );

    // Without JavaScript, a type without a format hides the field.
    let redrawn = text(
        &visitor
            .post(
                &format!("{settings}/integrations"),
                "type=prometheus&action=choose_type",
            )
            .await,
    );
    assert!(
        redrawn.contains(r#"<div class="field" data-types="http generic" hidden>"#),
        "{redrawn}"
    );

    let created = visitor
        .post(
            &format!("{settings}/integrations"),
            "type=http&name=Kuma&active=on&payload_format=uptime_kuma&action=save",
        )
        .await;
    assert_eq!(created.status, StatusCode::SEE_OTHER, "{}", text(&created));
    let location = created.header("location").unwrap().to_owned();
    let shown = text(&visitor.get(&location).await);
    assert!(
        shown.contains(r#"<p id="payload-format">Payload format: <code>uptime_kuma</code>"#),
        "the integration's page shows the format chosen: {shown}"
    );
    assert!(
        select(&shown, "payload_format").contains(r#"<option value="uptime_kuma" selected>"#),
        "its edit form starts from it: {shown}"
    );
    let listed = text(&visitor.get(&settings).await);
    assert!(
        listed.contains(r#"<td class="format" data-label="Payload format"><code>uptime_kuma</code></td>"#),
        "the list of integrations shows it too: {listed}"
    );
    let edit = location.split('?').next().unwrap().to_owned();
    let saved = visitor
        .post(&edit, "name=Kuma&active=on&payload_format=alerta")
        .await;
    assert_eq!(saved.status, StatusCode::SEE_OTHER, "{}", text(&saved));
    let id = edit.rsplit('/').next().unwrap();
    let api = common::get(&world.api(&format!("/integrations/{id}")), &world.maintainer)
        .await
        .json();
    assert_eq!(api["payload_format"], json!("alerta"));

    let refused = visitor
        .post(&edit, "name=Kuma&active=on&payload_format=nagios")
        .await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    let html = text(&refused);
    assert!(
        html.contains(r#"<select id="payload_format" name="payload_format" aria-invalid="true" aria-describedby="error">"#),
        "an unknown format is marked on its field: {html}"
    );

    // A Prometheus integration's page shows the envelope it reads, and its edit form asks no format.
    let prometheus = world.integration(json!({"type": "prometheus"})).await;
    let prometheus_page = text(
        &visitor
            .get(&format!("{settings}/integrations/{}", prometheus["id"]))
            .await,
    );
    assert!(
        prometheus_page.contains("Payload format: <code>alertmanager</code>")
            && select(&prometheus_page, "payload_format").is_empty(),
        "{prometheus_page}"
    );
}

#[tokio::test]
async fn save_and_test_of_a_senders_format_shows_what_its_sample_maps_to_and_stores_no_alert() {
    let world = AlertWorld::new().await;
    let visitor = Visitor::sign_in(&world, &world.maintainer).await;
    let settings = format!(
        "/-/svcgate/projects/{}/settings/operations",
        world.demo.project_id
    );
    let sample = include_str!("../fixtures/formats/grafana/firing-1.json");
    let form: String = form_urlencoded::Serializer::new(String::new())
        .append_pair("type", "http")
        .append_pair("name", "Grafana")
        .append_pair("active", "on")
        .append_pair("payload_format", "grafana")
        .append_pair("payload_example", sample)
        .append_pair("action", "save_and_test")
        .finish();
    let answer = visitor.post(&format!("{settings}/integrations"), &form).await;
    let html = text(&answer);
    assert_eq!(answer.status, StatusCode::OK, "{html}");
    assert!(html.contains("id=\"sample-preview\""), "{html}");
    assert!(html.contains("no alert was created"), "{html}");
    let rows = html.matches("class=\"preview-row\"").count();
    let expected: serde_json::Value =
        serde_json::from_str(include_str!("../fixtures/formats/grafana/firing-1.expected.json")).unwrap();
    let first_title = expected["alerts"][0]["title"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert_eq!(rows, expected["count"].as_u64().unwrap() as usize, "{html}");
    assert!(
        html.contains(&first_title.replace('\'', "&#x27;")),
        "{first_title} in {html}"
    );
    assert!(
        html.contains("id=\"sender-setup\""),
        "the sender's setup is shown: {html}"
    );
    let alerts = common::get(&world.api("/alerts"), &world.maintainer).await.json();
    assert_eq!(alerts.as_array().map(Vec::len), Some(0), "{alerts}");
}

//! The alert suite, one test binary: intake, incidents, durability, management (payload formats included), real
//! senders (Alertmanager's webhook, PagerDuty and Opsgenie receivers, Uptime Kuma's webhook), the pages over HTTP
//! and in a browser, and signing in through OAuth. One module per topic; the harness is `tests/common/`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../common/mod.rs"]
mod common;

mod alert_durability;
mod alert_incidents;
mod alert_intake;
mod alert_management;
mod alertmanager;
mod browser;
mod format_intake;
mod native_senders;
mod oauth;
mod pages;
mod payload_format;
mod uptime_kuma;
mod zabbix_opsgenie;

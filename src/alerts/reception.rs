//! How one integration receives a delivery, by its payload format: where the sender's key may travel, which
//! address suffixes it posts to, whether its body must be labelled JSON, which reader reads it, and how a
//! success is answered.
//!
//! `generic` (and the Prometheus kind's envelope) are read by code ([`super::kinds`]' readers), with a key in
//! `Authorization` (Bearer, or Basic's password) and at the address itself. Every other format is a file of
//! [`super::formats`], which adds its own places for the key (`Authorization: GenieKey …`, `Key …`, a query
//! parameter such as `?token=`, PagerDuty's `routing_key` in the body), the suffixes its senders append to a base
//! address (Alerta's `/alert`, Opsgenie's `/v2/alerts/{alias}/close`), and the status and body its senders count as
//! delivered. Every key is compared in constant time ([`Integration::accepts`]).

use std::sync::Arc;

use base64::Engine;
use http::{HeaderMap, StatusCode};
use serde_json::Value;
use time::OffsetDateTime;

use super::fingerprint::fingerprint_of;
use super::formats::{AuthScheme, Catalog, Delivery, Format, Reading};
use super::integrations::Integration;
use super::kinds::{self, ReadPayload};
use super::normalized::Edition;
use super::payload::PayloadError;

/// What reads an integration's deliveries.
#[derive(Clone)]
pub enum Reception {
    /// svcgate's own reader of the integration's kind: the generic payload (with its custom mapping), or the
    /// Prometheus kind's Alertmanager envelope.
    Code(ReadPayload),
    /// A format file.
    Format(Arc<Format>),
}

/// The integration names a payload format that is not loaded here (its file was removed, or this replica's
/// `alert_formats_dir` lacks it).
#[derive(Debug, thiserror::Error)]
#[error("this integration's payload format {0:?} is not loaded by svcgate here")]
pub struct FormatMissing(pub String);

impl Reception {
    /// How `integration` receives, from its kind and payload format; `Ok(None)` for a kind that receives nothing.
    pub fn of(integration: &Integration, catalog: &Catalog) -> Result<Option<Reception>, FormatMissing> {
        let spec = kinds::spec(integration.kind);
        let Some(read) = spec.read else {
            return Ok(None);
        };
        if !integration.kind.fields().payload_format {
            return Ok(Some(Reception::Code(read)));
        }
        let name = integration.record.payload_format.as_str();
        if name == super::formats::GENERIC {
            return Ok(Some(Reception::Code(read)));
        }
        match catalog.get(name) {
            Some(format) => Ok(Some(Reception::Format(format))),
            None => Err(FormatMissing(name.to_owned())),
        }
    }

    /// Whether a sender may deliver with `method` to the receiving address followed by `suffix` (the path after
    /// its `.json`): `POST` to the address itself, or what the format's routes say.
    pub fn accepts(&self, method: &http::Method, suffix: &str) -> bool {
        match self {
            Reception::Code(_) => suffix.is_empty() && method == http::Method::POST,
            Reception::Format(format) => format.accepts_delivery(method, suffix),
        }
    }

    /// The methods a sender may use at the receiving address followed by `suffix`, as an `Allow` header lists
    /// them (`GET` at a format's lookup route, `POST` or `PUT` where its routes say); empty where no route is.
    pub fn allowed_methods(&self, suffix: &str) -> Vec<&'static str> {
        let lookup = match self {
            Reception::Code(_) => false,
            Reception::Format(format) => format.lookup_id(suffix).is_some(),
        };
        [
            ("GET", lookup),
            ("POST", self.accepts(&http::Method::POST, suffix)),
            ("PUT", self.accepts(&http::Method::PUT, suffix)),
        ]
        .into_iter()
        .filter_map(|(method, allowed)| allowed.then_some(method))
        .collect()
    }

    /// Whether a key presented in the request's head (headers, query) is the integration's.
    pub fn head_key_matches(
        &self,
        integration: &Integration,
        headers: &HeaderMap,
        query: Option<&str>,
    ) -> bool {
        let schemes: &[AuthScheme] = match self {
            Reception::Code(_) => &[],
            Reception::Format(format) => format.auth_schemes(),
        };
        presented_keys(headers, query, schemes)
            .iter()
            .any(|key| integration.accepts(key))
    }

    /// Whether the key may travel in the body (PagerDuty's `routing_key`), so that a request with none in its
    /// head is read, within `alert_key_in_body_max_bytes`, before its key is checked.
    pub fn key_may_be_in_body(&self) -> bool {
        matches!(self, Reception::Format(format) if format.has_key_in_body())
    }

    /// Whether the body's key (read from a body whose head carried none) is the integration's.
    pub fn body_key_matches(&self, integration: &Integration, body: &[u8]) -> bool {
        match self {
            Reception::Format(format) => format
                .key_in_body(body)
                .is_some_and(|key| integration.accepts(&key)),
            Reception::Code(_) => false,
        }
    }

    /// Whether the body must be labelled `application/json` (or `+json`); a format may read it as JSON whatever
    /// its `Content-Type` (SNS sends `text/plain`).
    pub fn needs_json_label(&self) -> bool {
        match self {
            Reception::Code(_) => true,
            Reception::Format(format) => !format.body_is_json_whatever_content_type(),
        }
    }

    /// The field of a `multipart/form-data` body that holds the JSON, when the format takes forms.
    pub fn form_field(&self) -> Option<&str> {
        match self {
            Reception::Format(format) => format.form_field(),
            Reception::Code(_) => None,
        }
    }

    /// Reads a delivery into what it means.
    pub fn read(
        &self,
        integration: &Integration,
        delivery: &Delivery<'_>,
        max_depth: usize,
        received_at: OffsetDateTime,
        edition: Edition,
    ) -> Result<Reading, PayloadError> {
        match self {
            Reception::Code(read) => read(
                delivery.body,
                max_depth,
                received_at,
                edition,
                integration.mapping.as_ref(),
            )
            .map(Reading::Alerts),
            Reception::Format(format) => {
                match format.read(delivery, max_depth, received_at, edition)? {
                    Reading::Alerts(mut alerts) => {
                        for alert in &mut alerts {
                            // No stored payload keeps a key the sender put in its body.
                            alert.payload = format.without_key(&alert.payload);
                            // A sender's own ids (a monitor's number, a dedup key) group its alerts only with its
                            // own: the format's and the integration's names go into the fingerprint.
                            alert.fingerprint = alert.fingerprint.take().map(|hash| {
                                let scoped = format!("{}:{}:{hash}", format.name(), integration.record.id);
                                fingerprint_of(&Value::String(scoped))
                            });
                        }
                        Ok(Reading::Alerts(alerts))
                    }
                    Reading::Confirmation { subscribe_url } if !format.confirmation_allowed(&subscribe_url) => {
                        Err(PayloadError::NotTheFormat {
                            format: format.name().to_owned(),
                            reason: format!(
                                "expected a subscription confirmation address of the sender's own (https, a host \
                                 the format names), not {subscribe_url:?}"
                            ),
                        })
                    }
                    other => Ok(other),
                }
            }
        }
    }

    /// The status of a successful delivery: the format's (PagerDuty and Opsgenie 202, Alerta 201), else 201 for
    /// the Prometheus kind (as Alertmanager's receivers answer) and 200.
    pub fn success_status(&self, integration: &Integration) -> StatusCode {
        match self {
            Reception::Format(format) => format.success_status(),
            Reception::Code(_) if kinds::spec(integration.kind).alertmanager_answers => StatusCode::CREATED,
            Reception::Code(_) => StatusCode::OK,
        }
    }

    /// The body its senders expect on success, when the format has one of its own (PagerDuty's
    /// `{"status": "success", "dedup_key": …}`): its placeholders filled from `vars`, then from the delivery's
    /// top-level fields of the same name.
    pub fn answer_body(&self, vars: &[(&str, &str)], body: &[u8]) -> Option<Value> {
        let Reception::Format(format) = self else {
            return None;
        };
        let parsed: Option<Value> = serde_json::from_slice(body).ok();
        let mut all: Vec<(&str, &str)> = vars.to_vec();
        if let Some(Value::Object(fields)) = &parsed {
            for (name, value) in fields {
                if let Value::String(text) = value {
                    all.push((name.as_str(), text.as_str()));
                }
            }
        }
        format.answer_body(&all)
    }
}

/// The keys a request presents in its head, in the order they are tried: `Authorization: Bearer <key>` (or
/// Basic's password), then each of the format's own schemes.
pub fn presented_keys(headers: &HeaderMap, query: Option<&str>, schemes: &[AuthScheme]) -> Vec<String> {
    let own = schemes
        .iter()
        .filter(|scheme| **scheme != AuthScheme::Bearer)
        .filter_map(|scheme| scheme.presented_key(headers, query));
    authorization_key(headers).into_iter().chain(own).collect()
}

/// The key of `Authorization: Bearer <key>`, or the password of HTTP Basic.
fn authorization_key(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(http::header::AUTHORIZATION)?.to_str().ok()?.trim();
    let (scheme, rest) = value.split_once(' ')?;
    if scheme.eq_ignore_ascii_case("bearer") {
        return Some(rest.trim().to_owned());
    }
    if scheme.eq_ignore_ascii_case("basic") {
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(rest.trim())
            .ok()?;
        let text = String::from_utf8(decoded).ok()?;
        return text.split_once(':').map(|(_, password)| password.to_owned());
    }
    None
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

    #[test]
    fn keys_come_from_bearer_or_basic_passwords() {
        let mut headers = HeaderMap::new();
        headers.insert(
            http::header::AUTHORIZATION,
            HeaderValue::from_static("Bearer abc123"),
        );
        assert_eq!(presented_keys(&headers, None, &[]), vec!["abc123"]);
        // "user:s3cret" in base64.
        headers.insert(
            http::header::AUTHORIZATION,
            HeaderValue::from_static("Basic dXNlcjpzM2NyZXQ="),
        );
        assert_eq!(presented_keys(&headers, None, &[]), vec!["s3cret"]);
        headers.insert(http::header::AUTHORIZATION, HeaderValue::from_static("Basic !!!"));
        assert!(presented_keys(&headers, None, &[]).is_empty());
    }

    #[test]
    fn a_format_adds_its_header_schemes_and_query_parameter() {
        let schemes = [
            AuthScheme::Header {
                name: http::header::AUTHORIZATION,
                scheme: Some("GenieKey".to_owned()),
            },
            AuthScheme::Query {
                name: "token".to_owned(),
            },
        ];
        let mut headers = HeaderMap::new();
        headers.insert(
            http::header::AUTHORIZATION,
            HeaderValue::from_static("geniekey k1"),
        );
        assert_eq!(
            presented_keys(&headers, Some("a=b&token=k2"), &schemes),
            vec!["k1", "k2"]
        );
        assert!(presented_keys(&HeaderMap::new(), Some("token="), &schemes).is_empty());
        // A scheme the format does not name presents nothing.
        assert!(presented_keys(&headers, None, &[]).is_empty());
    }
}

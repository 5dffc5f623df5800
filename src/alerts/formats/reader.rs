//! The reader: one delivery (body, address suffix, query, headers) through a [`Format`] into a [`Reading`]:
//! normalised alerts, a subscription confirmation, or nothing to do. The field rules (truncation, hosts, the
//! warnings a sender is answered with) are [`crate::alerts::normalized`]'s; fingerprints are hashed as for the
//! generic payload ([`crate::alerts::fingerprint`]).
//!
//! A body that is not JSON, or nested too deep, is refused as every payload is (400); a body that does not have
//! the format's shape (no list where the format expects one, a required value missing, an address suffix the
//! format does not take) gets 422 with what was expected. Inside an alert, every field problem is a default plus
//! a warning.

use serde_json::Value;
use time::OffsetDateTime;

use super::format::{Format, Mapping, Outcome, SeverityOutcome};
use super::source::{scalar_text, Chain, Scope};
use super::times::{read_time, TimeFormat, TimeReading};
use crate::alerts::fingerprint::fingerprint_of;
use crate::alerts::normalized::{
    describe, hosts, text, type_name, Edition, NormalizedAlert, Severity, DEFAULT_TITLE,
    DESCRIPTION_MAX_CHARS, IGNORED, SHORT_TEXT_MAX_CHARS, TITLE_MAX_CHARS,
};
use crate::alerts::payload::{parse_json, PayloadError};

/// One delivery as the intake received it.
#[derive(Debug, Clone, Copy)]
pub struct Delivery<'a> {
    /// The request body.
    pub body: &'a [u8],
    /// The path after the receiving address: `""`, `"/alert"`, `"/v2/alerts"`, `"/v2/alerts/abc/close"`.
    pub suffix: &'a str,
    /// The query string of the request, without `?`.
    pub query: Option<&'a str>,
    /// The request headers.
    pub headers: &'a http::HeaderMap,
}

impl<'a> Delivery<'a> {
    /// `body` as if sent to the receiving address itself with no headers or query: a sample or a test alert.
    pub fn sample(body: &'a [u8]) -> Self {
        static NO_HEADERS: std::sync::LazyLock<http::HeaderMap> =
            std::sync::LazyLock::new(http::HeaderMap::new);
        Delivery {
            body,
            suffix: "",
            query: None,
            headers: &NO_HEADERS,
        }
    }
}

/// What a delivery means.
#[derive(Debug, Clone, PartialEq)]
pub enum Reading {
    /// Alerts to apply, in order (possibly none: an empty list).
    Alerts(Vec<NormalizedAlert>),
    /// A subscription to confirm (SNS): a maintainer opens this address; svcgate never fetches it.
    Confirmation {
        /// The address the sender asks to be opened.
        subscribe_url: String,
    },
    /// The delivery carries no alert (a test message, an acknowledgement, a state the format ignores).
    Ignored {
        /// Why, for the answer and the log.
        reason: String,
    },
}

impl Format {
    /// Reads a delivery: alerts, a confirmation, or nothing to do; an error when the body is not JSON (400) or
    /// does not have this format's shape (422, saying what was expected).
    pub fn read(
        &self,
        delivery: &Delivery<'_>,
        max_depth: usize,
        received_at: OffsetDateTime,
        edition: Edition,
    ) -> Result<Reading, PayloadError> {
        let (route, named) = self.route_of(delivery.suffix).ok_or_else(|| {
            self.refuse(format!(
                "the address suffix {:?} is not one this format is posted to",
                delivery.suffix
            ))
        })?;
        // A body-less request is fine where the address alone says what happens (Opsgenie's close).
        let empty = delivery.body.iter().all(u8::is_ascii_whitespace);
        let (body, text) = if empty && route.state.is_some() {
            (Value::Object(serde_json::Map::new()), "{}")
        } else {
            parse_json(delivery.body, max_depth)?
        };
        let query: Vec<(String, String)> = delivery
            .query
            .map(|query| {
                form_urlencoded::parse(query.as_bytes())
                    .map(|(key, value)| (key.into_owned(), value.into_owned()))
                    .collect()
            })
            .unwrap_or_default();
        let scope = Scope {
            body: &body,
            current: &body,
            headers: delivery.headers,
            query: &query,
            route: &named,
            lets: &[],
            max_depth,
        };
        let mapping = self.mapping_for(&scope);
        if let Some(reason) = &mapping.ignore {
            return Ok(Reading::Ignored {
                reason: reason.clone(),
            });
        }
        if let Some(confirm) = &mapping.confirm {
            return match confirm.eval(&scope) {
                Some(Value::String(subscribe_url)) => Ok(Reading::Confirmation { subscribe_url }),
                _ => Err(self.refuse("expected a confirmation address".to_owned())),
            };
        }
        let lets = eval_lets(mapping, &scope);
        let with_lets = Scope { lets: &lets, ..scope };
        for path in &mapping.require {
            if path.eval(&with_lets).is_none() {
                return Err(self.refuse(format!("expected a value at {}", path.text)));
            }
        }
        let reader = AlertReader {
            mapping,
            route_state: route.state,
            received_at,
            edition,
        };
        let Some(list) = &mapping.list else {
            if !body.is_object() {
                return Err(self.refuse(format!("the body is {}, not an object", type_name(&body))));
            }
            return Ok(match reader.alert(&scope, text.trim().to_owned()) {
                Ok(alert) => Reading::Alerts(vec![alert]),
                Err(reason) => Reading::Ignored { reason },
            });
        };
        if !body.is_object() {
            return Err(self.refuse(format!("the body is {}, not an object", type_name(&body))));
        }
        let name = list.text.strip_prefix("$.").unwrap_or(&list.text);
        let elements = match list.locate(&scope) {
            Some(Value::Array(elements)) => elements,
            Some(other) => {
                return Err(self.refuse(format!("{name} is {}, not an array", type_name(&other))));
            }
            None => return Err(self.refuse(format!("there is no {name} array"))),
        };
        if let Some((index, element)) = elements.iter().enumerate().find(|(_, e)| !e.is_object()) {
            return Err(self.refuse(format!(
                "{name}[{index}] is {}, not an object",
                type_name(element)
            )));
        }
        let mut alerts = Vec::with_capacity(elements.len());
        let mut ignored = Vec::new();
        for element in &elements {
            let scope = Scope {
                current: element,
                ..scope
            };
            match reader.alert(&scope, element.to_string()) {
                Ok(alert) => alerts.push(alert),
                Err(reason) => ignored.push(reason),
            }
        }
        Ok(if alerts.is_empty() && !ignored.is_empty() {
            Reading::Ignored {
                reason: ignored.join("; "),
            }
        } else {
            Reading::Alerts(alerts)
        })
    }

    /// The sender's own key of a single-alert delivery, as text: the first present source of the mapping's
    /// `fingerprint` (Opsgenie's alias, from the address on a close, from the body on a create), before it is
    /// hashed. A lookup route answers it back. `None` for a list format, or when the delivery has none.
    pub fn sender_key(&self, delivery: &Delivery<'_>, max_depth: usize) -> Option<String> {
        let (_, named) = self.route_of(delivery.suffix)?;
        let body = parse_json(delivery.body, max_depth)
            .map(|(body, _)| body)
            .unwrap_or_else(|_| Value::Object(serde_json::Map::new()));
        let scope = Scope {
            body: &body,
            current: &body,
            headers: delivery.headers,
            query: &[],
            route: &named,
            lets: &[],
            max_depth,
        };
        let mapping = self.mapping_for(&scope);
        if mapping.list.is_some() {
            return None;
        }
        let value = mapping.fields.fingerprint.eval(&scope)?;
        scalar_text(&value)
    }

    /// A 422 for a body that does not have this format's shape.
    fn refuse(&self, reason: String) -> PayloadError {
        PayloadError::NotTheFormat {
            format: self.name.clone(),
            reason,
        }
    }
}

/// Reads one alert of a delivery.
struct AlertReader<'m> {
    mapping: &'m Mapping,
    route_state: Option<Outcome>,
    received_at: OffsetDateTime,
    edition: Edition,
}

impl AlertReader<'_> {
    /// The alert at `scope.current`, or why it is ignored.
    fn alert(&self, outer: &Scope<'_>, payload: String) -> Result<NormalizedAlert, String> {
        let mut lets: Vec<(String, Option<Value>)> = Vec::with_capacity(self.mapping.lets.len());
        for (name, chain) in &self.mapping.lets {
            let value = chain.eval(&Scope {
                lets: &lets,
                ..*outer
            });
            lets.push((name.clone(), value));
        }
        let scope = Scope {
            lets: &lets,
            ..*outer
        };
        let outcome = match self.route_state {
            Some(Outcome::Ignore) => {
                return Err("what is posted to this address is ignored by this format".to_owned())
            }
            Some(outcome) => outcome,
            None => self.state(&scope)?,
        };
        let mut warnings = Vec::new();
        let w = &mut warnings;
        let severity = self.severity(&scope, w)?;
        let fields = &self.mapping.fields;
        let ended_at = match outcome {
            Outcome::Resolve => Some(self.end(&fields.end, &scope, w)),
            Outcome::Fire | Outcome::Ignore => None,
        };
        let title = first_text(
            &fields.title,
            &scope,
            TITLE_MAX_CHARS,
            "the next title source was used",
            w,
        );
        Ok(NormalizedAlert {
            title: title.unwrap_or_else(|| DEFAULT_TITLE.to_owned()),
            description: first_text(&fields.description, &scope, DESCRIPTION_MAX_CHARS, IGNORED, w),
            started_at: self.start(&fields.start, &scope, w),
            ended_at,
            service: first_text(&fields.service, &scope, SHORT_TEXT_MAX_CHARS, IGNORED, w),
            monitoring_tool: first_text(&fields.monitoring_tool, &scope, SHORT_TEXT_MAX_CHARS, IGNORED, w),
            hosts: match fields.hosts.eval_named(&scope) {
                Some((name, value)) => hosts(Some(&value), &name, w),
                None => Vec::new(),
            },
            severity,
            fingerprint: match fields.fingerprint.eval(&scope) {
                Some(value) => Some(fingerprint_of(&value)),
                None => match self.edition {
                    Edition::Free => None,
                    Edition::Premium => Some(fingerprint_of(scope.current)),
                },
            },
            environment: first_text(&fields.environment, &scope, usize::MAX, IGNORED, w),
            payload,
            warnings,
        })
    }

    /// Firing or resolved, by the first rule whose value decides; `Err` with a reason when ignored.
    fn state(&self, scope: &Scope<'_>) -> Result<Outcome, String> {
        for rule in &self.mapping.state {
            let decided = match rule.from.eval_named(scope) {
                Some((name, value)) => {
                    let word = scalar_text(&value);
                    match word.as_deref().and_then(|word| rule.lookup(word)).or(rule.other) {
                        Some(Outcome::Ignore) => {
                            return Err(format!("{name} {} is ignored by this format", describe(&value)))
                        }
                        other => other,
                    }
                }
                None => match rule.missing {
                    Some(Outcome::Ignore) => return Err(format!("{} is missing", rule_name(&rule.from))),
                    other => other,
                },
            };
            if let Some(outcome) = decided {
                return Ok(outcome);
            }
        }
        match self.mapping.state_default {
            Outcome::Ignore => Err("the event is ignored by this format".to_owned()),
            other => Ok(other),
        }
    }

    /// The severity by the format's map; unknown words take `other` (critical unless set) with a warning.
    fn severity(&self, scope: &Scope<'_>, warnings: &mut Vec<String>) -> Result<Severity, String> {
        let map = &self.mapping.severity;
        let outcome = match map.from.eval_named(scope) {
            None => map.missing.unwrap_or(SeverityOutcome::Is(Severity::Critical)),
            Some((name, value)) => {
                let known = scalar_text(&value).and_then(|word| map.lookup(&word));
                match known {
                    Some(outcome) => outcome,
                    None => {
                        let fallback = map.other.unwrap_or(SeverityOutcome::Is(Severity::Critical));
                        match fallback {
                            SeverityOutcome::Is(severity) => warnings.push(format!(
                                "{name} {} is not known; {severity} was used",
                                describe(&value)
                            )),
                            SeverityOutcome::Ignore => {
                                return Err(format!("{name} {} is ignored by this format", describe(&value)))
                            }
                        }
                        fallback
                    }
                }
            }
        };
        match outcome {
            SeverityOutcome::Is(severity) => Ok(severity),
            SeverityOutcome::Ignore => Err(format!("{} says the event is ignored", rule_name(&map.from))),
        }
    }

    /// The first source that reads as a time; Go's zero time counts as absent; an unreadable one is warned about.
    fn start(&self, chain: &Chain, scope: &Scope<'_>, warnings: &mut Vec<String>) -> OffsetDateTime {
        for source in &chain.0 {
            let Some(value) = source.eval(scope) else {
                continue;
            };
            match read_time(&value, source.time) {
                TimeReading::At(at) => return at,
                TimeReading::Zero => continue,
                TimeReading::Bad => {
                    warnings.push(format!(
                        "{} {} is not {}; the time of receipt was used",
                        source.name(),
                        describe(&value),
                        time_words(source.time)
                    ));
                    return self.received_at;
                }
            }
        }
        self.received_at
    }

    /// The end of a resolving alert: the first source that reads as a time, else the time of receipt (with a
    /// warning when the format names an end).
    fn end(&self, chain: &Chain, scope: &Scope<'_>, warnings: &mut Vec<String>) -> OffsetDateTime {
        for source in &chain.0 {
            if let Some(TimeReading::At(at)) = source.eval(scope).map(|value| read_time(&value, source.time))
            {
                return at;
            }
        }
        if let Some(first) = chain.0.first() {
            warnings.push(format!(
                "{} of a resolved alert is missing or not a time; the time of receipt was used",
                first.name()
            ));
        }
        self.received_at
    }
}

/// The values of the mapping's `let`s, each seeing those before it.
fn eval_lets(mapping: &Mapping, outer: &Scope<'_>) -> Vec<(String, Option<Value>)> {
    let mut lets: Vec<(String, Option<Value>)> = Vec::with_capacity(mapping.lets.len());
    for (name, chain) in &mapping.lets {
        let value = chain.eval(&Scope {
            lets: &lets,
            ..*outer
        });
        lets.push((name.clone(), value));
    }
    lets
}

/// The first source whose value is text, each wrong one warned about with `fallback`.
fn first_text(
    chain: &Chain,
    scope: &Scope<'_>,
    max: usize,
    fallback: &str,
    warnings: &mut Vec<String>,
) -> Option<String> {
    chain.0.iter().find_map(|source| {
        let value = source.eval(scope)?;
        text(Some(&value), &source.name(), max, fallback, warnings)
    })
}

fn rule_name(chain: &Chain) -> String {
    chain
        .0
        .first()
        .map_or_else(|| "the value".to_owned(), super::source::Source::name)
}

fn time_words(format: TimeFormat) -> &'static str {
    match format {
        TimeFormat::Iso => "an ISO 8601 time",
        TimeFormat::EpochSeconds => "a time in epoch seconds",
        TimeFormat::EpochMillis => "a time in epoch milliseconds",
    }
}

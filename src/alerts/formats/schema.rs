//! The format file as written: the TOML keys of `formats/*.toml`, read with their positions so that every error
//! the loader finds names its file and line. Nothing here interprets a value; [`super::compile`] does.
//!
//! Sources (what a field is read from) stay `toml::Value`s here: the compiler reads them itself, so that a wrong
//! one is answered with what was expected rather than with the parser's "did not match any variant".

use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;

/// One format file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawFile {
    /// One line for `formats list` and the integration form.
    pub description: Option<Spanned<String>>,
    /// A few lines telling the sender's setup, `{address}` standing for the receiving address.
    pub setup: Option<Spanned<String>>,
    /// How the sender delivers: statuses, keys, addresses, answers.
    pub receive: Option<RawReceive>,
    /// A path to an array: one alert per element, `@` being the element.
    pub list: Option<Spanned<String>>,
    /// Paths that must be present, else the body is refused with what was expected.
    pub require: Option<Spanned<Vec<String>>>,
    /// Named values computed once per alert, usable as path roots.
    #[serde(rename = "let")]
    pub lets: Option<BTreeMap<String, Spanned<toml::Value>>>,
    /// The normalised alert's fields.
    pub fields: Option<Spanned<RawFields>>,
    /// The severity: a source and a map of the sender's words.
    pub severity: Option<Spanned<RawValueMap>>,
    /// Firing, resolved or ignored.
    pub state: Option<Spanned<RawState>>,
    /// A source of a confirmation address: the delivery is a subscription confirmation, not an alert.
    pub confirm: Option<Spanned<toml::Value>>,
    /// The delivery carries no alert; the reason is answered.
    pub ignore: Option<Spanned<String>>,
    /// Sub-formats, tried in order; the first whose `when` holds replaces the keys it sets.
    #[serde(default)]
    pub variant: Vec<Spanned<RawVariant>>,
}

/// `[receive]`: the protocol side of a format.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawReceive {
    /// 200, 201 or 202.
    pub success_status: Option<Spanned<u16>>,
    /// Read the body as JSON whatever its `Content-Type` says.
    #[serde(default)]
    pub json_whatever_content_type: bool,
    /// The field of a `multipart/form-data` body that holds the JSON, for senders that post a form.
    pub form_field: Option<Spanned<String>>,
    /// A path from `$` to the sender's key, for senders that put it in the body.
    pub key_in_body: Option<Spanned<String>>,
    /// Schemes besides Bearer: `{ header = "Authorization", scheme = "GenieKey" }`, `{ header = "X-API-Key" }`,
    /// `{ query = "token" }`.
    #[serde(default)]
    pub auth: Vec<Spanned<RawAuth>>,
    /// The body of a successful answer, `{name}` placeholders filled in.
    pub answer: Option<Spanned<toml::Value>>,
    /// Address suffixes accepted; none means only the address itself.
    #[serde(default)]
    pub route: Vec<Spanned<RawRoute>>,
    /// The hosts a subscription confirmation address may name (`amazonaws.com`: that host or one under it).
    #[serde(default)]
    pub confirm_hosts: Vec<String>,
}

/// One entry of `receive.auth`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawAuth {
    pub header: Option<String>,
    pub scheme: Option<String>,
    pub query: Option<String>,
}

/// One `[[receive.route]]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRoute {
    /// `""`, `"/alert"`, `"/v2/alerts/{alias}/close"`.
    pub suffix: String,
    /// `fire`, `resolve` or `ignore`: decided by the address, whatever the body says.
    pub state: Option<String>,
    /// `POST` (the default) or `GET`; a `GET` route is a lookup.
    pub method: Option<String>,
    /// The route looks up a request id svcgate answered a delivery with (Opsgenie's request status).
    #[serde(default)]
    pub lookup: bool,
}

/// The mapping keys, at the top of the file and in each variant (written out in both: serde cannot flatten
/// into a struct that denies unknown keys).
#[derive(Default, Clone)]
pub(super) struct RawMapping {
    /// A path to an array: one alert per element, `@` being the element.
    pub list: Option<Spanned<String>>,
    /// Paths that must be present, else the body is refused with what was expected.
    pub require: Option<Spanned<Vec<String>>>,
    /// Named values computed once per alert, usable as path roots.
    pub lets: Option<BTreeMap<String, Spanned<toml::Value>>>,
    /// The normalised alert's fields.
    pub fields: Option<Spanned<RawFields>>,
    /// The severity: a source and a map of the sender's words.
    pub severity: Option<Spanned<RawValueMap>>,
    /// Firing, resolved or ignored.
    pub state: Option<Spanned<RawState>>,
    /// A source of a confirmation address: the delivery is a subscription confirmation, not an alert.
    pub confirm: Option<Spanned<toml::Value>>,
    /// The delivery carries no alert; the reason is answered.
    pub ignore: Option<Spanned<String>>,
}

/// `[fields]`: each a source.
#[derive(Deserialize, Default, Clone)]
#[serde(deny_unknown_fields)]
pub(super) struct RawFields {
    pub title: Option<Spanned<toml::Value>>,
    pub description: Option<Spanned<toml::Value>>,
    pub start: Option<Spanned<toml::Value>>,
    pub end: Option<Spanned<toml::Value>>,
    pub hosts: Option<Spanned<toml::Value>>,
    pub service: Option<Spanned<toml::Value>>,
    pub monitoring_tool: Option<Spanned<toml::Value>>,
    pub environment: Option<Spanned<toml::Value>>,
    pub fingerprint: Option<Spanned<toml::Value>>,
}

/// `[severity]`, and each state rule: a source and what its values mean.
#[derive(Deserialize, Default, Clone)]
#[serde(deny_unknown_fields)]
pub(super) struct RawValueMap {
    pub from: Option<Spanned<toml::Value>>,
    #[serde(default)]
    pub map: BTreeMap<String, Spanned<String>>,
    /// The outcome when the source is absent.
    pub missing: Option<Spanned<String>>,
    /// The outcome (with a warning, for severities) when the value is not in the map.
    pub other: Option<Spanned<String>>,
}

/// `[state]`: a rule given inline and/or `[[state.rule]]`s, tried in order, then `default`.
#[derive(Deserialize, Default, Clone)]
#[serde(deny_unknown_fields)]
pub(super) struct RawState {
    pub from: Option<Spanned<toml::Value>>,
    #[serde(default)]
    pub map: BTreeMap<String, Spanned<String>>,
    #[serde(default)]
    pub rule: Vec<Spanned<RawValueMap>>,
    /// The outcome when no rule decides; `fire` unless given.
    pub default: Option<Spanned<String>>,
}

/// One `[[variant]]`.
#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub(super) struct RawVariant {
    /// A name for messages and docs.
    pub name: String,
    /// When it applies: one condition or an array of them, any of which may hold.
    pub when: RawWhen,
    /// A path to an array: one alert per element, `@` being the element.
    pub list: Option<Spanned<String>>,
    /// Paths that must be present, else the body is refused with what was expected.
    pub require: Option<Spanned<Vec<String>>>,
    /// Named values computed once per alert, usable as path roots.
    #[serde(rename = "let")]
    pub lets: Option<BTreeMap<String, Spanned<toml::Value>>>,
    /// The normalised alert's fields.
    pub fields: Option<Spanned<RawFields>>,
    /// The severity: a source and a map of the sender's words.
    pub severity: Option<Spanned<RawValueMap>>,
    /// Firing, resolved or ignored.
    pub state: Option<Spanned<RawState>>,
    /// A source of a confirmation address: the delivery is a subscription confirmation, not an alert.
    pub confirm: Option<Spanned<toml::Value>>,
    /// The delivery carries no alert; the reason is answered.
    pub ignore: Option<Spanned<String>>,
}

/// A variant's condition.
#[derive(Deserialize, Clone)]
#[serde(untagged)]
pub(super) enum RawWhen {
    One(RawCondition),
    Any(Vec<RawCondition>),
}

/// One condition: `{ path = "...", is = ["..."] }` (the value is one of these words, ignoring case),
/// `{ path = "..." }` (the value is present) or `{ path = "...", missing = true }` (it is absent).
#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub(super) struct RawCondition {
    pub path: String,
    pub is: Option<Vec<String>>,
    #[serde(default)]
    pub missing: bool,
}

impl RawWhen {
    /// The conditions, any of which may hold.
    pub fn conditions(&self) -> &[RawCondition] {
        match self {
            RawWhen::One(one) => std::slice::from_ref(one),
            RawWhen::Any(any) => any,
        }
    }
}

impl RawMapping {
    /// This mapping with `base`'s keys where it sets none (a variant over the file's top level).
    pub fn over(&self, base: &RawMapping) -> RawMapping {
        RawMapping {
            list: self.list.clone().or_else(|| base.list.clone()),
            require: self.require.clone().or_else(|| base.require.clone()),
            lets: match (&self.lets, &base.lets) {
                (Some(own), Some(inherited)) => {
                    let mut lets = inherited.clone();
                    lets.extend(own.clone());
                    Some(lets)
                }
                (own, inherited) => own.clone().or_else(|| inherited.clone()),
            },
            fields: match (&self.fields, &base.fields) {
                (Some(own), Some(inherited)) => {
                    Some(Spanned::new(own.span(), own.get_ref().over(inherited.get_ref())))
                }
                (own, inherited) => own.clone().or_else(|| inherited.clone()),
            },
            severity: self.severity.clone().or_else(|| base.severity.clone()),
            state: self.state.clone().or_else(|| base.state.clone()),
            confirm: self.confirm.clone().or_else(|| base.confirm.clone()),
            ignore: self.ignore.clone().or_else(|| base.ignore.clone()),
        }
    }
}

impl RawFields {
    /// These fields with `base`'s where they set none.
    fn over(&self, base: &RawFields) -> RawFields {
        RawFields {
            title: self.title.clone().or_else(|| base.title.clone()),
            description: self.description.clone().or_else(|| base.description.clone()),
            start: self.start.clone().or_else(|| base.start.clone()),
            end: self.end.clone().or_else(|| base.end.clone()),
            hosts: self.hosts.clone().or_else(|| base.hosts.clone()),
            service: self.service.clone().or_else(|| base.service.clone()),
            monitoring_tool: self
                .monitoring_tool
                .clone()
                .or_else(|| base.monitoring_tool.clone()),
            environment: self.environment.clone().or_else(|| base.environment.clone()),
            fingerprint: self.fingerprint.clone().or_else(|| base.fingerprint.clone()),
        }
    }
}

/// Moves the mapping keys of a file or variant into a [`RawMapping`].
macro_rules! mapping_of {
    ($raw:expr) => {
        RawMapping {
            list: $raw.list.clone(),
            require: $raw.require.clone(),
            lets: $raw.lets.clone(),
            fields: $raw.fields.clone(),
            severity: $raw.severity.clone(),
            state: $raw.state.clone(),
            confirm: $raw.confirm.clone(),
            ignore: $raw.ignore.clone(),
        }
    };
}

impl RawFile {
    /// The file's top-level mapping.
    pub fn mapping(&self) -> RawMapping {
        mapping_of!(self)
    }
}

impl RawVariant {
    /// The variant's own mapping keys.
    pub fn mapping(&self) -> RawMapping {
        mapping_of!(self)
    }
}

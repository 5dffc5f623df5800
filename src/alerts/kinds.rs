//! The kinds of alert integration, listed once: [`KINDS`] is where the management API, the pages and the intake
//! learn which kinds exist and what each does: its name and label, the tier that offers it, how many a project may
//! have, where it receives alerts and which reader reads their payloads, which fields its form asks, and whether it
//! excludes the others. The store keeps the kind as text and checks none (its schema has no list of kinds since its
//! step 10, and carries "one per project" as each row's flag since step 11); a kind not listed here is refused by
//! the management API, the only way integrations are made.
//!
//! Uses [`crate::alerts::settings::Edition`], and the payload readers of [`super::generic`] and
//! [`super::prometheus`] with what they read into ([`super::normalized`], [`super::payload`], [`super::mapping`]).

use time::OffsetDateTime;

use super::mapping::AttributeMapping;
use super::normalized::{Edition as PayloadEdition, NormalizedAlert};
use super::payload::PayloadError;
use super::{generic, prometheus};
use crate::alerts::settings::Edition;

/// The kinds of integration, each described by its line in [`KINDS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// The legacy endpoint, one per project (Free).
    Generic,
    /// HTTP Endpoint, many per project, named (Premium).
    Http,
    /// An Alertmanager receiver, one per project (Free).
    Prometheus,
    /// A link to the incident-alerting tool; receives nothing (Premium).
    Opsgenie,
}

impl Kind {
    /// The kind a name stands for (one of [`KINDS`]).
    pub fn parse(name: &str) -> Option<Self> {
        by_name(name).map(|spec| spec.kind)
    }

    /// The stored name.
    pub fn as_str(self) -> &'static str {
        spec(self).name
    }

    /// The name shown to people.
    pub fn label(self) -> &'static str {
        spec(self).label
    }

    /// The tier that offers it.
    pub fn tier(self) -> Edition {
        spec(self).tier
    }

    /// Whether a project may have only one.
    pub fn one_per_project(self) -> bool {
        spec(self).one_per_project
    }

    /// Whether it receives alerts.
    pub fn receives(self) -> bool {
        spec(self).receiving != Receiving::Nowhere
    }

    /// The fields its integrations have.
    pub fn fields(self) -> Fields {
        spec(self).fields
    }

    /// The format its payloads are always read in, when it has no choice of one.
    pub fn fixed_format(self) -> Option<&'static str> {
        spec(self).fixed_format
    }
}

/// Reads the body of one request into its alerts: `(body, max_depth, received_at, edition, custom mapping)`.
pub type ReadPayload = fn(
    &[u8],
    usize,
    OffsetDateTime,
    PayloadEdition,
    Option<&AttributeMapping>,
) -> Result<Vec<NormalizedAlert>, PayloadError>;

/// Where integrations of a kind receive alerts, under `/{project}/`, with or without `.json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Receiving {
    /// Nowhere: the kind receives no alerts.
    Nowhere,
    /// One fixed path per project (the kind is one per project): the address's endpoint is the kind's name.
    At(&'static str),
    /// `alerts/notify/{slug of its name}/{endpoint identifier}`: each integration its own address.
    Named,
}

/// Which fields a kind's integrations have besides name, key and activity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fields {
    /// A name must be given when one is created.
    pub name_required: bool,
    /// The incident-alerting tool's address (`api_url`), required when one is created.
    pub api_url: bool,
    /// A sample payload and a custom mapping of its fields.
    pub custom_payload: bool,
    /// A payload format chosen per integration (`payload_format`, one of the formats on offer).
    pub payload_format: bool,
}

/// What svcgate knows of one kind of integration.
#[derive(Debug, Clone, Copy)]
pub struct KindSpec {
    /// The kind.
    pub kind: Kind,
    /// Its name: stored, and the `type` of the management API.
    pub name: &'static str,
    /// The name shown to people.
    pub label: &'static str,
    /// The tier that offers it.
    pub tier: Edition,
    /// Where the add form lists it (lowest first).
    pub form_order: u8,
    /// How many a project may have on Free, when its tier is Premium.
    pub free_allowance: usize,
    /// What Free refuses, in its refusal: "… needs Premium".
    pub premium_for: &'static str,
    /// A project may have only one (the store refuses a second by the record's flag).
    pub one_per_project: bool,
    /// While one is active, no other integration of the project may be, and the other way round.
    pub exclusive: bool,
    /// Where it receives alerts.
    pub receiving: Receiving,
    /// The reader of its payloads (`None` when it receives none).
    pub read: Option<ReadPayload>,
    /// It answers as Alertmanager's receivers do: 201 on success, 503 when over the rate (Alertmanager retries
    /// only 5xx), not 200 and 429.
    pub alertmanager_answers: bool,
    /// The format its payloads are always read in, when it has one and no choice of it (the API shows it as the
    /// integration's `payload_format`).
    pub fixed_format: Option<&'static str>,
    /// The fields its integrations have.
    pub fields: Fields,
}

/// Every kind of integration.
///
/// To add a kind:
/// 1. give [`Kind`] its variant (and the test below its name);
/// 2. write its file in `src/alerts/`: a `read` function of type [`ReadPayload`] for the payload it reads, into
///    [`super::normalized`] alerts, as `generic.rs` and `prometheus.rs` do (a kind that reads an existing format,
///    as HTTP Endpoints read generic payloads, or receives nothing, as Opsgenie, needs no file), and its `pub mod`
///    line in `alerts/mod.rs`;
/// 3. add its line here.
///
/// The management API, the pages, the receiving addresses and the intake take the rest from the line; no schema
/// step is needed (the store checks no list of kinds, and the management API gives each row its
/// `one_per_project` flag from here). What still needs an edit elsewhere: a kind with a form field none of
/// [`Fields`] names (the field in `manage.rs`'s `IntegrationFields`, the API's body and the settings page's form
/// and template); a fixed address whose path is a suffix of another's is tried after it (longest first, done in
/// `integrations.rs`); changing whether an existing kind is one per project needs a schema step that sets the flag
/// of its existing rows.
pub const KINDS: [KindSpec; 4] = [
    KindSpec {
        kind: Kind::Generic,
        name: "generic",
        label: "Generic",
        tier: Edition::Free,
        form_order: 1,
        free_allowance: 1,
        premium_for: "",
        one_per_project: true,
        exclusive: false,
        receiving: Receiving::At("alerts/notify"),
        read: Some(generic::read),
        alertmanager_answers: false,
        fixed_format: None,
        fields: Fields {
            name_required: false,
            api_url: false,
            custom_payload: false,
            payload_format: true,
        },
    },
    KindSpec {
        kind: Kind::Http,
        name: "http",
        label: "HTTP Endpoint",
        tier: Edition::Premium,
        form_order: 0,
        free_allowance: 1,
        premium_for: "a second HTTP Endpoint",
        one_per_project: false,
        exclusive: false,
        receiving: Receiving::Named,
        read: Some(generic::read),
        alertmanager_answers: false,
        fixed_format: None,
        fields: Fields {
            name_required: true,
            api_url: false,
            custom_payload: true,
            payload_format: true,
        },
    },
    KindSpec {
        kind: Kind::Prometheus,
        name: "prometheus",
        label: "Prometheus",
        tier: Edition::Free,
        form_order: 2,
        free_allowance: 1,
        premium_for: "",
        one_per_project: true,
        exclusive: false,
        receiving: Receiving::At("prometheus/alerts/notify"),
        read: Some(prometheus::read),
        alertmanager_answers: true,
        fixed_format: Some("alertmanager"),
        fields: Fields {
            name_required: false,
            api_url: false,
            custom_payload: false,
            payload_format: false,
        },
    },
    KindSpec {
        kind: Kind::Opsgenie,
        name: "opsgenie",
        label: "Opsgenie",
        tier: Edition::Premium,
        form_order: 3,
        free_allowance: 0,
        premium_for: "an Opsgenie integration",
        one_per_project: true,
        exclusive: true,
        receiving: Receiving::Nowhere,
        read: None,
        alertmanager_answers: false,
        fixed_format: None,
        fields: Fields {
            name_required: false,
            api_url: true,
            custom_payload: false,
            payload_format: false,
        },
    },
];

/// The spec of `kind`.
pub fn spec(kind: Kind) -> &'static KindSpec {
    // Every variant has its line (the test below checks it); the first is the fallback the compiler needs.
    KINDS.iter().find(|spec| spec.kind == kind).unwrap_or(&KINDS[0])
}

/// The kind called `name`, if there is one.
pub fn by_name(name: &str) -> Option<&'static KindSpec> {
    KINDS.iter().find(|spec| spec.name == name)
}

/// The kinds in the order the add form lists them.
pub fn in_form_order() -> Vec<Kind> {
    let mut specs: Vec<&KindSpec> = KINDS.iter().collect();
    specs.sort_by_key(|spec| spec.form_order);
    specs.into_iter().map(|spec| spec.kind).collect()
}

/// Whether a project holding integrations of `existing` kinds may add one of `kind` under `edition`: not a second
/// of a kind that is one per project, and on Free no more of a Premium kind than its allowance.
pub fn may_add(kind: Kind, existing: &[Kind], edition: Edition) -> Result<(), Refusal> {
    let spec = spec(kind);
    let held = existing.iter().filter(|held| **held == kind).count();
    if edition == Edition::Free && spec.tier == Edition::Premium && held >= spec.free_allowance {
        return Err(Refusal::NeedsPremium(spec.premium_for));
    }
    if spec.one_per_project && held >= 1 {
        return Err(Refusal::OnePerProject);
    }
    Ok(())
}

/// Why a kind may not be added.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Free does not offer it, or not one more: what Premium would allow.
    NeedsPremium(&'static str),
    /// The project has its one already.
    OnePerProject,
}

/// The names of every kind as a sentence: `generic, http, prometheus or opsgenie`.
pub fn names_sentence() -> String {
    let names: Vec<&str> = KINDS.iter().map(|spec| spec.name).collect();
    match names.split_last() {
        Some((last, [])) => (*last).to_owned(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::Kind;
    use super::{by_name, in_form_order, names_sentence, spec, KINDS};

    #[test]
    fn every_kind_has_one_line_and_its_name_finds_it() {
        for kind in [Kind::Generic, Kind::Http, Kind::Prometheus, Kind::Opsgenie] {
            assert_eq!(
                KINDS.iter().filter(|spec| spec.kind == kind).count(),
                1,
                "{kind:?}"
            );
            assert_eq!(by_name(spec(kind).name).map(|spec| spec.kind), Some(kind));
        }
        assert_eq!(by_name("pagerduty").map(|spec| spec.kind), None);
        assert_eq!(names_sentence(), "generic, http, prometheus or opsgenie");
        assert_eq!(
            in_form_order(),
            [Kind::Http, Kind::Generic, Kind::Prometheus, Kind::Opsgenie]
        );
    }
}

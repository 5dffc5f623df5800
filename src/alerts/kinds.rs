//! The kinds of alert integration, listed once: [`KINDS`] is where the management API, the pages and the intake
//! learn which kinds exist, what each is called, which tier offers it and how many a project may have. The store
//! keeps the kind as text and checks none (its schema has no list of kinds since its step 10); a kind not listed
//! here is refused by the management API, the only way integrations are made.
//!
//! Uses [`crate::alerts::settings::Edition`] only.

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
}

/// What svcgate knows of one kind of integration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
}

/// Every kind of integration.
///
/// To add a kind: give [`Kind`] its variant; write its file in `src/alerts/` (the payload it reads, into
/// [`super::normalized`] alerts, as `generic.rs` and `prometheus.rs` do); add its line here; then let the compiler
/// show the matches on [`Kind`] that must say what it does (its receiving address in `integrations.rs`, its
/// payload in `intake.rs`, what the add form asks in `manage.rs`). No schema step is needed: the store checks no
/// list of kinds. A kind that is one per project is also named in the store's `integrations_one_per_project`
/// index, which then needs a schema step (`src/store/schema/`).
pub const KINDS: [KindSpec; 4] = [
    KindSpec {
        kind: Kind::Generic,
        name: "generic",
        label: "Generic",
        tier: Edition::Free,
        form_order: 1,
    },
    KindSpec {
        kind: Kind::Http,
        name: "http",
        label: "HTTP Endpoint",
        tier: Edition::Premium,
        form_order: 0,
    },
    KindSpec {
        kind: Kind::Prometheus,
        name: "prometheus",
        label: "Prometheus",
        tier: Edition::Free,
        form_order: 2,
    },
    KindSpec {
        kind: Kind::Opsgenie,
        name: "opsgenie",
        label: "Opsgenie",
        tier: Edition::Premium,
        form_order: 3,
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
        assert_eq!(by_name("pagerduty"), None);
        assert_eq!(names_sentence(), "generic, http, prometheus or opsgenie");
        assert_eq!(
            in_form_order(),
            [Kind::Http, Kind::Generic, Kind::Prometheus, Kind::Opsgenie]
        );
    }
}

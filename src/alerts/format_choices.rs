//! The payload formats a Generic or HTTP Endpoint integration may be given: their names and one-line descriptions,
//! as the management API checks a `payload_format` against them and the integration form offers them. This file
//! owns only the list a person chooses from; how a format is read is not here.
//!
//! Uses [`super::formats`]' catalog, where the formats and their descriptions come from.

use super::formats::Catalog;

/// The format every integration reads unless another is chosen: svcgate's generic payload.
pub const DEFAULT_FORMAT: &str = "generic";

/// One format a person may choose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatChoice {
    /// Its name: stored, and the management API's `payload_format`.
    pub name: String,
    /// What it is, in one line (the form shows it next to the name).
    pub description: String,
}

/// The formats on offer, in the order the form lists them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatChoices(Vec<FormatChoice>);

impl FormatChoices {
    /// The formats of `catalog`, `generic` first, then by name.
    pub fn from_catalog(catalog: &Catalog) -> Self {
        FormatChoices(
            catalog
                .list()
                .into_iter()
                .map(|summary| FormatChoice {
                    name: summary.name,
                    description: summary.description,
                })
                .collect(),
        )
    }

    /// The formats `choices` lists, in its order.
    pub fn new(choices: Vec<FormatChoice>) -> Self {
        FormatChoices(choices)
    }

    /// Whether a format called `name` is on offer.
    pub fn contains(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// The format called `name`, if it is on offer.
    pub fn get(&self, name: &str) -> Option<&FormatChoice> {
        self.0.iter().find(|choice| choice.name == name)
    }

    /// Every format, in the order the form lists them.
    pub fn iter(&self) -> impl Iterator<Item = &FormatChoice> {
        self.0.iter()
    }

    /// The names as a sentence, for a refusal: `generic, alertmanager, … or aws_sns`.
    pub fn names_sentence(&self) -> String {
        let names: Vec<&str> = self.0.iter().map(|choice| choice.name.as_str()).collect();
        match names.split_last() {
            Some((last, [])) => (*last).to_owned(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => String::new(),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::{Catalog, FormatChoice, FormatChoices, DEFAULT_FORMAT};

    #[test]
    fn the_builtin_formats_are_the_twelve_senders_each_described_in_one_line() {
        let catalog = Catalog::builtin().unwrap();
        let choices = FormatChoices::from_catalog(&catalog);
        let mut names: Vec<&str> = choices.iter().map(|choice| choice.name.as_str()).collect();
        assert_eq!(names.first(), Some(&DEFAULT_FORMAT));
        names.sort_unstable();
        let mut expected = [
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
        ];
        expected.sort_unstable();
        assert_eq!(names, expected);
        assert!(!choices.contains("Grafana") && !choices.contains(""));
        for choice in choices.iter() {
            assert!(
                !choice.description.is_empty() && !choice.description.contains('\n'),
                "{choice:?}"
            );
        }
        assert!(choices.names_sentence().starts_with("generic, "));
        assert!(choices.names_sentence().ends_with(" or uptime_kuma"));
    }

    #[test]
    fn a_list_of_one_names_it_alone() {
        let one = FormatChoices::new(vec![FormatChoice {
            name: "generic".to_owned(),
            description: "d".to_owned(),
        }]);
        assert_eq!(one.names_sentence(), "generic");
        assert_eq!(
            one.get("generic").map(|choice| choice.description.as_str()),
            Some("d")
        );
    }
}

//! Senders' native payload formats as data: one declarative file per format (`formats/*.toml`, built into the
//! binary, plus an operator's directory), checked with file and line, and applied to a delivery to give
//! normalised alerts. `generic` is not a file: it stays [`super::generic`]'s code, and the catalog only lists it.
//!
//! Files: `schema.rs` (the file's keys as written), `compile.rs` (the checker: text into a [`Format`], errors as
//! `file:line: message`), `source.rs` (paths and sources, evaluated against a delivery), `times.rs` (the senders'
//! time formats), `format.rs` (the compiled format and its protocol answers: suffixes, auth schemes, statuses,
//! answer bodies), `reader.rs` (a delivery into a [`Reading`]). The file language is documented in
//! `docs/alert-formats.md`.

mod compile;
mod format;
mod reader;
mod schema;
mod source;
#[cfg(test)]
mod tests;
mod times;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

pub use self::format::{AuthScheme, Format, Origin};
pub use self::reader::{Delivery, Reading};

/// The name of the format read by code rather than by a file.
pub const GENERIC: &str = "generic";
/// The one-line description of `generic`.
pub const GENERIC_DESCRIPTION: &str =
    "svcgate's generic payload: one JSON object, one alert, under the attributes' keys";

/// The format files built into the binary.
const BUILTIN: &[(&str, &str)] = &[
    ("alertmanager", include_str!("../../../formats/alertmanager.toml")),
    ("grafana", include_str!("../../../formats/grafana.toml")),
    ("datadog", include_str!("../../../formats/datadog.toml")),
    ("sentry", include_str!("../../../formats/sentry.toml")),
    ("pagerduty", include_str!("../../../formats/pagerduty.toml")),
    ("opsgenie", include_str!("../../../formats/opsgenie.toml")),
    ("alerta", include_str!("../../../formats/alerta.toml")),
    ("uptime_kuma", include_str!("../../../formats/uptime_kuma.toml")),
    ("new_relic", include_str!("../../../formats/new_relic.toml")),
    (
        "azure_monitor",
        include_str!("../../../formats/azure_monitor.toml"),
    ),
    ("aws_sns", include_str!("../../../formats/aws_sns.toml")),
];

/// Every problem found in a set of format files, each as `file:line: message`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", .0.join("\n"))]
pub struct FormatsError(pub Vec<String>);

/// One line of `formats list`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatSummary {
    /// The format's name, as `payload_format` names it.
    pub name: String,
    /// Which sender posts it.
    pub description: String,
    /// Code, built-in file, or the operator's file.
    pub origin: Origin,
}

/// Every format, by name.
#[derive(Debug, Default)]
pub struct Catalog {
    formats: BTreeMap<String, Arc<Format>>,
}

impl Catalog {
    /// Only the built-in files.
    pub fn builtin() -> Result<Catalog, FormatsError> {
        Catalog::load(None)
    }

    /// The built-in files, then every `*.toml` of `dir`: a file named as a built-in format replaces it.
    pub fn load(dir: Option<&Path>) -> Result<Catalog, FormatsError> {
        let word = &crate::util::identifier::names().word;
        let mut sources: BTreeMap<String, (String, String, Origin)> = BTreeMap::new();
        for (name, text) in BUILTIN {
            sources.insert(
                (*name).to_owned(),
                (
                    format!("formats/{name}.toml"),
                    (*text).to_owned(),
                    Origin::BuiltIn,
                ),
            );
        }
        let mut errors = Vec::new();
        if let Some(dir) = dir {
            for (name, path, text) in read_dir(dir)? {
                if name == GENERIC {
                    errors.push(format!(
                        "{}:1: generic is read by svcgate's own code and cannot be replaced; name the file otherwise",
                        path.display()
                    ));
                    continue;
                }
                if !valid_name(&name) {
                    errors.push(format!(
                        "{}:1: expected a file name of lowercase letters, digits and _ (the format's name), not {name:?}",
                        path.display()
                    ));
                    continue;
                }
                let label = path.display().to_string();
                sources.insert(name, (label, text, Origin::File(path)));
            }
        }
        let mut formats = BTreeMap::new();
        for (name, (label, text, origin)) in sources {
            let text = crate::util::identifier::substitute(&text, word);
            match compile::compile_file(&label, &name, &text, origin) {
                Ok(format) => {
                    formats.insert(name, Arc::new(format));
                }
                Err(found) => errors.extend(found),
            }
        }
        if errors.is_empty() {
            Ok(Catalog { formats })
        } else {
            Err(FormatsError(errors))
        }
    }

    /// The format of this name; `None` for `generic` (read by code) and for unknown names.
    pub fn get(&self, name: &str) -> Option<Arc<Format>> {
        self.formats.get(name).cloned()
    }

    /// Whether `name` is a format `payload_format` may name (`generic` included).
    pub fn contains(&self, name: &str) -> bool {
        name == GENERIC || self.formats.contains_key(name)
    }

    /// Every format, `generic` first, then by name.
    pub fn list(&self) -> Vec<FormatSummary> {
        let generic = FormatSummary {
            name: GENERIC.to_owned(),
            description: GENERIC_DESCRIPTION.to_owned(),
            origin: Origin::Code,
        };
        std::iter::once(generic)
            .chain(self.formats.values().map(|format| FormatSummary {
                name: format.name().to_owned(),
                description: format.description().to_owned(),
                origin: format.origin().clone(),
            }))
            .collect()
    }
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// Every `*.toml` file of `dir`, in name order: its stem, path and text.
fn read_dir(dir: &Path) -> Result<Vec<(String, std::path::PathBuf, String)>, FormatsError> {
    let files = crate::util::toml_files::read(dir).map_err(|error| FormatsError(vec![error]))?;
    Ok(files
        .into_iter()
        .map(|(path, text)| {
            let name = path
                .file_stem()
                .and_then(|stem| stem.to_str())
                .unwrap_or_default()
                .to_owned();
            (name, path, text)
        })
        .collect())
}

//! Alert integrations: receiving addresses, tokens, and the in-memory registry the
//! intake looks them up in.
//!
//! The registry holds every integration with its token decrypted, keyed by receiving address, so that a
//! receiving request costs no store read; the management API updates it together with the store.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::kinds::{self, Kind, Receiving};
use super::mapping::AttributeMapping;
use crate::store::IntegrationRecord;

/// An integration with its token in the clear (held in memory only).
#[derive(Debug, Clone)]
pub struct Integration {
    /// The stored record.
    pub record: IntegrationRecord,
    /// The kind.
    pub kind: Kind,
    /// The token (32 hex digits); private so that it cannot change apart from `token_digest`.
    token: String,
    /// The custom mapping (http).
    pub mapping: Option<AttributeMapping>,
    /// SHA-256 of `token`, computed once: every alert's key check compares against it.
    token_digest: [u8; 32],
}

impl Integration {
    /// An integration from its record, kind, clear token and mapping.
    pub fn new(
        record: IntegrationRecord,
        kind: Kind,
        token: String,
        mapping: Option<AttributeMapping>,
    ) -> Self {
        let token_digest = Sha256::digest(token.as_bytes()).into();
        Integration {
            record,
            kind,
            token,
            mapping,
            token_digest,
        }
    }

    /// The receiving path of this integration (relative to the gateway's base URL), if it receives alerts.
    pub fn path(&self) -> Option<String> {
        let project = &self.record.project_path;
        match kinds::spec(self.kind).receiving {
            Receiving::At(path) => Some(format!("/{project}/{path}.json")),
            Receiving::Named => Some(format!(
                "/{project}/{NAMED_PREFIX}{}/{}.json",
                slug(&self.record.name),
                self.record.endpoint_identifier.as_deref().unwrap_or("")
            )),
            Receiving::Nowhere => None,
        }
    }

    /// The format its payloads are read in, as the API and the pages show it: the one chosen for a kind that takes
    /// one, the kind's own for a kind that has a fixed one (Prometheus: `alertmanager`), none for a kind that
    /// receives nothing.
    pub fn payload_format(&self) -> Option<&str> {
        if self.kind.fields().payload_format {
            Some(&self.record.payload_format)
        } else {
            self.kind.fixed_format()
        }
    }

    /// The token in the clear (32 hex digits).
    pub fn token(&self) -> &str {
        &self.token
    }

    /// Whether `given` is this integration's token, compared in constant time.
    pub fn accepts(&self, given: &str) -> bool {
        // Hashing first makes the comparison's time independent of both lengths and contents.
        let offered: [u8; 32] = Sha256::digest(given.as_bytes()).into();
        bool::from(self.token_digest.ct_eq(&offered))
    }
}

/// The cosmetic slug of an HTTP Endpoint's name in its address.
pub fn slug(name: &str) -> String {
    let mut slug = String::new();
    for character in name.to_lowercase().chars() {
        if character.is_ascii_alphanumeric() {
            slug.push(character);
        } else if !slug.ends_with('-') {
            slug.push('-');
        }
    }
    let slug = slug.trim_matches('-').to_owned();
    if slug.is_empty() {
        "endpoint".to_owned()
    } else {
        slug
    }
}

/// What a receiving address names.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Address {
    /// The project's full path, lower-cased.
    pub project_path: String,
    /// The integration within the project: the name of a kind with a fixed address (`generic`, `prometheus`), or
    /// a named endpoint's identifier.
    pub endpoint: String,
}

/// Where named endpoints' addresses start after the project: `alerts/notify/{slug}/{identifier}`.
const NAMED_PREFIX: &str = "alerts/notify/";

impl Address {
    /// The kind of integration this address can reach, known from the address alone (before any lookup).
    pub fn kind(&self) -> Kind {
        let fixed = kinds::KINDS
            .iter()
            .find(|spec| matches!(spec.receiving, Receiving::At(_)) && spec.name == self.endpoint);
        let named = || {
            kinds::KINDS
                .iter()
                .find(|spec| spec.receiving == Receiving::Named)
        };
        fixed.or_else(named).map_or(Kind::Http, |spec| spec.kind)
    }
}

/// The kinds with a fixed address and their paths, longest first, so that none is taken for another whose path
/// ends it (`prometheus/alerts/notify` before `alerts/notify`). Built once: every request's path is tried (bench row 1, 1 KB and 50 conn: svcgate / bare 0.75 → 0.84 × (100 KB: 0.91 → 0.93 ×) with the other changes of its step (bench/RESULTS.md, 2026-11-26)).
fn fixed_paths() -> &'static [(&'static str, &'static str)] {
    static PATHS: std::sync::LazyLock<Vec<(&'static str, &'static str)>> = std::sync::LazyLock::new(|| {
        let mut paths: Vec<(&'static str, &'static str)> = kinds::KINDS
            .iter()
            .filter_map(|spec| match spec.receiving {
                Receiving::At(path) => Some((path, spec.name)),
                _ => None,
            })
            .collect();
        paths.sort_by_key(|(path, _)| std::cmp::Reverse(path.len()));
        paths
    });
    &PATHS
}

/// What every receiving address contains: a path without it is none, whatever else it holds.
const ADDRESS_MARK: &str = "alerts/notify";

/// The named addresses' marker with its leading slash: `/{project}/alerts/notify/{slug}/{identifier}`.
const NAMED_MARK: &str = "/alerts/notify/";

/// A request path that reaches a receiving address: the address, and what the sender appended after its `.json`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The receiving address.
    pub address: Address,
    /// The path after the address's `.json` (`""`, or `/alert`, `/v2/alerts/{alias}/close`…): senders that take a
    /// base address append their own API's path to it. The integration's format says which it accepts.
    pub suffix: String,
}

/// Parses a request path as a receiving address, exactly (see [`parse_address`]), or as one followed by a path
/// the sender appended after its `.json`.
pub fn parse_target(path: &str) -> Option<Target> {
    if !path.contains(ADDRESS_MARK) {
        return None;
    }
    if let Some(address) = parse_address(path) {
        return Some(Target {
            address,
            suffix: String::new(),
        });
    }
    // `…/alerts/notify.json/v2/alerts`: the first `.json/` that ends an address (a project's own path may hold one).
    let mut from = 0;
    while let Some(found) = path[from..].find(".json/") {
        let end = from + found + ".json".len();
        if let Some(address) = parse_address(&path[..end]) {
            return Some(Target {
                address,
                suffix: path[end..].to_owned(),
            });
        }
        from = end;
    }
    None
}

/// Parses a request path as a receiving address: `/{project}/alerts/notify[.json]`,
/// `/{project}/alerts/notify/{slug}/{identifier}[.json]` or `/{project}/prometheus/alerts/notify[.json]`.
pub fn parse_address(path: &str) -> Option<Address> {
    if !path.contains(ADDRESS_MARK) {
        return None;
    }
    let path = path.strip_suffix(".json").unwrap_or(path);
    let trimmed = path.trim_start_matches('/');
    let address = |project: &str, endpoint: &str| {
        let project = project.trim_matches('/');
        // A `-` segment starts the service's own routes inside a project (`/g/p/-/tree/main/…`): never a project.
        let routes_inside = project.split('/').any(|segment| segment == "-");
        (!project.is_empty() && !routes_inside).then(|| Address {
            project_path: project.to_lowercase(),
            endpoint: endpoint.to_owned(),
        })
    };
    for &(fixed, name) in fixed_paths() {
        let project = trimmed
            .strip_suffix(fixed)
            .and_then(|project| project.strip_suffix('/'));
        if let Some(project) = project {
            return address(project, name);
        }
    }
    let (project, rest) = trimmed.rsplit_once(NAMED_MARK)?;
    let (_slug, identifier) = rest.split_once('/')?;
    if identifier.len() != 16 || !identifier.bytes().all(|b| b.is_ascii_hexdigit()) || project.is_empty() {
        return None;
    }
    address(project, identifier)
}

/// Every integration, by id and by receiving address.
#[derive(Default)]
pub struct Registry {
    by_id: RwLock<HashMap<u64, Arc<Integration>>>,
    by_address: RwLock<HashMap<Address, Arc<Integration>>>,
}

fn address_of(integration: &Integration) -> Option<Address> {
    let spec = kinds::spec(integration.kind);
    let endpoint = match spec.receiving {
        Receiving::At(_) => spec.name.to_owned(),
        Receiving::Named => integration.record.endpoint_identifier.clone()?,
        Receiving::Nowhere => return None,
    };
    Some(Address {
        project_path: integration.record.project_path.to_lowercase(),
        endpoint,
    })
}

impl Registry {
    /// Adds or replaces an integration.
    pub fn put(&self, integration: Integration) {
        let integration = Arc::new(integration);
        self.remove(integration.record.id);
        if let Some(address) = address_of(&integration) {
            if let Ok(mut by_address) = self.by_address.write() {
                by_address.insert(address, Arc::clone(&integration));
            }
        }
        if let Ok(mut by_id) = self.by_id.write() {
            by_id.insert(integration.record.id, integration);
        }
    }

    /// Removes an integration.
    pub fn remove(&self, id: u64) {
        let removed = self.by_id.write().ok().and_then(|mut by_id| by_id.remove(&id));
        if let Some(address) = removed.as_deref().and_then(address_of) {
            if let Ok(mut by_address) = self.by_address.write() {
                by_address.remove(&address);
            }
        }
    }

    /// The active integration receiving at `address`.
    pub fn receiving(&self, address: &Address) -> Option<Arc<Integration>> {
        let found = self.by_address.read().ok()?.get(address).cloned()?;
        found.record.active.then_some(found)
    }

    /// The ids of every integration held.
    pub fn ids(&self) -> Vec<u64> {
        self.by_id
            .read()
            .map(|by_id| by_id.keys().copied().collect())
            .unwrap_or_default()
    }

    /// One integration by id.
    pub fn get(&self, id: u64) -> Option<Arc<Integration>> {
        self.by_id.read().ok()?.get(&id).cloned()
    }

    /// A project's integrations, by id.
    pub fn of_project(&self, project_id: u64) -> Vec<Arc<Integration>> {
        let mut found: Vec<Arc<Integration>> = self
            .by_id
            .read()
            .map(|by_id| {
                by_id
                    .values()
                    .filter(|integration| integration.record.project_id == project_id)
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        found.sort_by_key(|integration| integration.record.id);
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_receiving_address_holds_the_mark_that_lets_other_paths_pass_untried() {
        for (path, _) in fixed_paths() {
            assert!(path.contains(ADDRESS_MARK), "{path}");
        }
        assert!(NAMED_MARK.contains(ADDRESS_MARK));
        assert!(NAMED_MARK.ends_with(NAMED_PREFIX));
    }

    #[test]
    fn receiving_addresses_parse_with_or_without_json() {
        let generic = parse_address("/group/sub/project/alerts/notify.json");
        assert_eq!(
            generic,
            Some(Address {
                project_path: "group/sub/project".to_owned(),
                endpoint: "generic".to_owned()
            })
        );
        assert_eq!(
            parse_address("/g/p/alerts/notify"),
            parse_address("/g/p/alerts/notify.json")
        );
        let prometheus = parse_address("/g/p/prometheus/alerts/notify.json");
        assert_eq!(
            prometheus.map(|address| address.endpoint),
            Some("prometheus".to_owned())
        );
        let http = parse_address("/g/p/alerts/notify/my-endpoint/0123456789abcdef.json");
        assert_eq!(
            http.map(|address| address.endpoint),
            Some("0123456789abcdef".to_owned())
        );
        for path in [
            "/alerts/notify.json",
            "/g/p/alerts/notify/x/short.json",
            "/g/p/alerts",
            "/api/v4/projects",
        ] {
            assert_eq!(parse_address(path), None, "{path}");
        }
    }

    #[test]
    fn a_path_after_the_addresss_json_is_its_suffix() {
        let target = parse_target("/g.json/p/alerts/notify/x/0123456789abcdef.json/v2/alerts/a%2Fb/close");
        assert_eq!(
            target,
            Some(Target {
                address: Address {
                    project_path: "g.json/p".to_owned(),
                    endpoint: "0123456789abcdef".to_owned()
                },
                suffix: "/v2/alerts/a%2Fb/close".to_owned()
            })
        );
        let generic = parse_target("/g/p/alerts/notify.json/alert").map(|target| target.suffix);
        assert_eq!(generic.as_deref(), Some("/alert"));
        let exact = parse_target("/g/p/alerts/notify.json").map(|target| target.suffix);
        assert_eq!(exact.as_deref(), Some(""));
        // A suffix needs the `.json` the API and the pages show.
        assert_eq!(parse_target("/g/p/alerts/notify/alert"), None);
        assert_eq!(parse_target("/api/v4/projects.json/x"), None);
        // A repository path that looks like an address is the backend's.
        assert_eq!(parse_target("/g/p/-/tree/main/alerts/notify.json/x"), None);
        assert_eq!(parse_target("/g/p/-/raw/main/alerts/notify.json"), None);
    }

    #[test]
    fn slugs_are_cosmetic_and_never_empty() {
        assert_eq!(slug("Disk Alerts (prod)"), "disk-alerts-prod");
        assert_eq!(slug("!!!"), "endpoint");
    }
}

//! The rule table: every compiled rule, one router per method, and the entity shapes.
//!
//! Matching is a router lookup on the V3 path (after `/api/v3`), not a scan of the rules.

use std::collections::HashMap;
use std::path::Path;

use http::Method;

use super::auth::AuthTable;
use super::loader::{compile, LoadError};
use super::rule::Rule;
use super::shape::Shapes;

/// The rule files built into the binary, used unless `rules_dir` names others.
const BUILTIN: &[(&str, &str)] = &[
    ("rules/entities.toml", include_str!("../../rules/entities.toml")),
    ("rules/8.17.toml", include_str!("../../rules/8.17.toml")),
    ("rules/9.0.toml", include_str!("../../rules/9.0.toml")),
    ("rules/v3-auth.toml", include_str!("../../rules/v3-auth.toml")),
];

/// Compiled rules ready for matching.
#[derive(Debug)]
pub struct RuleTable {
    rules: Vec<Rule>,
    routers: HashMap<Method, matchit::Router<usize>>,
    shapes: Shapes,
    auth: AuthTable,
}

/// A rule that matched, with the path parameters (still percent-encoded, as received).
#[derive(Debug)]
pub struct Matched<'a> {
    /// The rule.
    pub rule: &'a Rule,
    /// Parameter name → raw value.
    pub params: Vec<(String, String)>,
}

impl RuleTable {
    /// Compiles `(name, contents)` rule files, their `{identifier}` placeholders replaced by `identifier_word`.
    pub fn from_sources(sources: &[(String, String)], identifier_word: &str) -> Result<Self, LoadError> {
        let sources: Vec<(String, String)> = sources
            .iter()
            .map(|(name, text)| {
                (
                    name.clone(),
                    crate::util::identifier::substitute(text, identifier_word),
                )
            })
            .collect();
        let (rules, shapes) = compile(&sources)?;
        let auth = AuthTable::compile(&sources)?;
        let mut routers: HashMap<Method, matchit::Router<usize>> = HashMap::new();
        let mut errors = Vec::new();
        for (index, rule) in rules.iter().enumerate() {
            let router = routers.entry(rule.v3.method.clone()).or_default();
            if let Err(error) = router.insert(rule.v3.router_path(), index) {
                errors.push(format!(
                    "{}: {} {}: {error}",
                    rule.origin, rule.v3.method, rule.v3.template
                ));
            }
        }
        if !errors.is_empty() {
            return Err(LoadError(errors));
        }
        Ok(RuleTable {
            rules,
            routers,
            shapes,
            auth,
        })
    }

    /// The built-in table, for a server whose identifier word is the default one.
    pub fn builtin() -> Result<Self, LoadError> {
        Self::builtin_for(crate::util::identifier::DEFAULT_WORD)
    }

    /// The built-in table for a server whose identifier word is `identifier_word`.
    pub fn builtin_for(identifier_word: &str) -> Result<Self, LoadError> {
        let sources: Vec<(String, String)> = BUILTIN
            .iter()
            .map(|(name, text)| ((*name).to_owned(), (*text).to_owned()))
            .collect();
        Self::from_sources(&sources, identifier_word)
    }

    /// Every `*.toml` file of `dir`, in name order.
    pub fn from_dir(dir: &Path, identifier_word: &str) -> Result<Self, LoadError> {
        let sources: Vec<(String, String)> = crate::util::toml_files::read(dir)
            .map_err(|error| LoadError(vec![error]))?
            .into_iter()
            .map(|(path, text)| (path.display().to_string(), text))
            .collect();
        if sources.is_empty() {
            return Err(LoadError(vec![format!(
                "{}: holds no .toml rule file",
                dir.display()
            )]));
        }
        let table = Self::from_sources(&sources, identifier_word)?;
        if table.auth.routes().is_empty() {
            tracing::warn!(
                rules_dir = %dir.display(),
                "no [[auth]] entries (rules/v3-auth.toml): anonymous V3 calls are left to the backend instead of \
                 answered 401 as V3 did"
            );
        }
        Ok(table)
    }

    /// The table from `dir`, or the built-in one, for a server whose identifier word is `identifier_word`.
    pub fn load(dir: Option<&Path>, identifier_word: &str) -> Result<Self, LoadError> {
        match dir {
            Some(dir) => Self::from_dir(dir, identifier_word),
            None => Self::builtin_for(identifier_word),
        }
    }

    /// The rule for a V3 request (`path` relative to `/api/v3`, percent-encoded as received).
    pub fn find(&self, method: &Method, path: &str) -> Option<Matched<'_>> {
        let found = self.routers.get(method)?.at(path).ok()?;
        let rule = self.rules.get(*found.value)?;
        let params = found
            .params
            .iter()
            .map(|(name, value)| (name.to_owned(), value.to_owned()))
            .collect();
        Some(Matched { rule, params })
    }

    /// Every rule, in file order.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// The entity shapes.
    pub fn shapes(&self) -> &Shapes {
        &self.shapes
    }

    /// Which V3 routes authenticated their callers (`[[auth]]` entries).
    pub fn auth(&self) -> &AuthTable {
        &self.auth
    }
}

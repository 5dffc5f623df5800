//! Web hooks: project hooks (`/projects/:id/hooks`) and system hooks (`/hooks`). Both keep their event flags by
//! name; the secret token is stored but never shown.

use std::collections::BTreeMap;

use super::Store;
use crate::time::Millis;

/// The event flags of a project hook, with their defaults.
pub const PROJECT_HOOK_EVENTS: &[(&str, bool)] = &[
    ("push_events", true),
    ("issues_events", false),
    ("confidential_issues_events", false),
    ("merge_requests_events", false),
    ("tag_push_events", false),
    ("note_events", false),
    ("confidential_note_events", false),
    ("job_events", false),
    ("pipeline_events", false),
    ("wiki_page_events", false),
];

/// The event flags of a system hook, with their defaults.
pub const SYSTEM_HOOK_EVENTS: &[(&str, bool)] = &[
    ("push_events", false),
    ("tag_push_events", false),
    ("merge_requests_events", false),
    ("repository_update_events", true),
];

/// A web hook; `project_id` is None for a system hook.
#[derive(Debug, Clone)]
pub struct Hook {
    /// Id.
    pub id: u64,
    /// The project (None for system hooks).
    pub project_id: Option<u64>,
    /// Target URL.
    pub url: String,
    /// Secret token sent in the `X-<Word>-Token` header (write-only).
    pub token: Option<String>,
    /// Event flags by name.
    pub events: BTreeMap<String, bool>,
    /// Whether TLS certificates are verified.
    pub enable_ssl_verification: bool,
    /// Creation time.
    pub created_at: Millis,
}

impl Hook {
    /// An event flag (false when unknown).
    pub fn event(&self, name: &str) -> bool {
        self.events.get(name).copied().unwrap_or(false)
    }
}

/// Whether a hook URL is acceptable: `http` or `https` with a host.
pub fn valid_hook_url(url: &str) -> bool {
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"));
    match rest {
        Some(rest) => {
            let host = rest.split(['/', '?', '#']).next().unwrap_or("");
            !host.is_empty() && !host.starts_with(':') && !url.chars().any(char::is_whitespace)
        }
        None => false,
    }
}

impl Store {
    /// Creates a hook with the default flags of its kind; returns its id.
    pub fn insert_hook(&mut self, project_id: Option<u64>, url: &str) -> u64 {
        let id = self.next_id("hook");
        let created_at = self.now();
        let defaults = if project_id.is_some() {
            PROJECT_HOOK_EVENTS
        } else {
            SYSTEM_HOOK_EVENTS
        };
        self.hooks.insert(
            id,
            Hook {
                id,
                project_id,
                url: url.to_string(),
                token: None,
                events: defaults.iter().map(|(n, d)| ((*n).to_string(), *d)).collect(),
                enable_ssl_verification: true,
                created_at,
            },
        );
        id
    }
}

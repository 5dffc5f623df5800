//! Project services (integrations): the catalogue of slugs, and each project's configured ones. A service that
//! was never configured has no record and reads as inactive with empty properties.

use serde_json::{Map, Value};

use super::Store;
use crate::time::Millis;

/// Every service: (slug in the path, title).
pub const CATALOGUE: &[(&str, &str)] = &[
    ("asana", "Asana"),
    ("assembla", "Assembla"),
    ("bamboo", "Atlassian Bamboo CI"),
    ("bugzilla", "Bugzilla"),
    ("buildkite", "Buildkite"),
    ("campfire", "Campfire"),
    ("custom-issue-tracker", "Custom Issue Tracker"),
    ("drone-ci", "Drone CI"),
    ("emails-on-push", "Emails on push"),
    ("external-wiki", "External Wiki"),
    ("irker", "Irker (IRC gateway)"),
    ("jira", "JIRA"),
    ("mattermost-slash-commands", "Mattermost Command"),
    ("slack-slash-commands", "Slack slash commands"),
    ("packagist", "Packagist"),
    ("pipelines-email", "Pipelines emails"),
    ("pivotaltracker", "PivotalTracker"),
    ("pushover", "Pushover"),
    ("redmine", "Redmine"),
    ("slack", "Slack notifications"),
    ("microsoft-teams", "Microsoft Teams Notification"),
    ("mattermost", "Mattermost notifications"),
    ("teamcity", "JetBrains TeamCity CI"),
];

/// The event flags every service carries (all on by default).
pub const SERVICE_EVENTS: &[&str] = &[
    "push_events",
    "issues_events",
    "confidential_issues_events",
    "merge_requests_events",
    "tag_push_events",
    "note_events",
    "confidential_note_events",
    "pipeline_events",
    "wiki_page_events",
    "job_events",
];

/// A configured service of a project.
#[derive(Debug, Clone)]
pub struct Service {
    /// Id.
    pub id: u64,
    /// Project.
    pub project_id: u64,
    /// Catalogue slug.
    pub slug: String,
    /// Whether it is switched on.
    pub active: bool,
    /// Event flags that differ from the default (on).
    pub events: Map<String, Value>,
    /// Service-specific properties.
    pub properties: Map<String, Value>,
    /// Creation time.
    pub created_at: Millis,
    /// Last update time.
    pub updated_at: Millis,
}

impl Service {
    /// An event flag (on unless turned off).
    pub fn event(&self, name: &str) -> bool {
        self.events.get(name).and_then(Value::as_bool).unwrap_or(true)
    }
}

/// The title of a slug, None for an unknown one.
pub fn title_of(slug: &str) -> Option<&'static str> {
    CATALOGUE
        .iter()
        .find(|(s, _)| *s == slug)
        .map(|(_, title)| *title)
}

impl Store {
    /// A project's service record, created inactive when absent; returns its id.
    pub fn ensure_service(&mut self, project_id: u64, slug: &str) -> u64 {
        if let Some(s) = self
            .services
            .values()
            .find(|s| s.project_id == project_id && s.slug == slug)
        {
            return s.id;
        }
        let id = self.next_id("service");
        let now = self.now();
        self.services.insert(
            id,
            Service {
                id,
                project_id,
                slug: slug.to_string(),
                active: false,
                events: Map::new(),
                properties: Map::new(),
                created_at: now,
                updated_at: now,
            },
        );
        id
    }

    /// A project's service record, if configured.
    pub fn service(&self, project_id: u64, slug: &str) -> Option<&Service> {
        self.services
            .values()
            .find(|s| s.project_id == project_id && s.slug == slug)
    }
}

//! Notification settings: a level per user globally, and per user and project or group.

use std::collections::BTreeMap;

/// The notification levels.
pub const LEVELS: &[&str] = &[
    "disabled",
    "participating",
    "watch",
    "global",
    "mention",
    "custom",
];

/// The events a `custom` level can switch on.
pub const EVENTS: &[&str] = &[
    "new_note",
    "new_issue",
    "reopen_issue",
    "close_issue",
    "reassign_issue",
    "new_merge_request",
    "reopen_merge_request",
    "close_merge_request",
    "reassign_merge_request",
    "merge_merge_request",
    "failed_pipeline",
    "success_pipeline",
];

/// What a setting applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum NotificationSource {
    /// The user's global setting.
    Global,
    /// One project.
    Project(u64),
    /// One group.
    Group(u64),
}

/// One notification setting.
#[derive(Debug, Clone)]
pub struct NotificationSetting {
    /// One of `LEVELS`.
    pub level: String,
    /// Custom events that are switched on or off.
    pub events: BTreeMap<String, bool>,
    /// The address notifications go to (global setting only).
    pub notification_email: Option<String>,
}

impl NotificationSetting {
    /// The default for a source: `participating` globally, `global` elsewhere.
    pub fn default_for(source: NotificationSource) -> Self {
        NotificationSetting {
            level: if source == NotificationSource::Global {
                "participating".into()
            } else {
                "global".into()
            },
            events: BTreeMap::new(),
            notification_email: None,
        }
    }
}

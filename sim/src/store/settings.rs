//! The application settings singleton (`/application/settings`): each setting's kind and default, held as JSON
//! values so that an update is a checked merge.

use serde_json::{json, Map, Value};

use crate::time::Millis;

/// How a setting is typed on input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SettingKind {
    /// `true`/`false`.
    Bool,
    /// A non-negative integer.
    Int,
    /// A string (null allowed).
    Str,
    /// A list of strings.
    StrList,
    /// `private`, `internal` or `public`.
    Visibility,
    /// A list of visibilities.
    VisibilityList,
    /// 0, 1 or 2.
    BranchProtection,
}

/// Every writable setting with its kind and default, in the order of the entity.
pub fn defaults() -> Vec<(&'static str, SettingKind, Value)> {
    use SettingKind::*;
    vec![
        ("default_projects_limit", Int, json!(100_000)),
        ("signup_enabled", Bool, json!(true)),
        ("password_authentication_enabled_for_web", Bool, json!(true)),
        ("gravatar_enabled", Bool, json!(true)),
        ("sign_in_text", Str, Value::Null),
        ("after_sign_up_text", Str, Value::Null),
        ("home_page_url", Str, Value::Null),
        ("default_branch_protection", BranchProtection, json!(2)),
        ("restricted_visibility_levels", VisibilityList, json!([])),
        ("max_attachment_size", Int, json!(10)),
        ("session_expire_delay", Int, json!(10_080)),
        ("default_project_visibility", Visibility, json!("private")),
        ("default_snippet_visibility", Visibility, json!("private")),
        ("default_group_visibility", Visibility, json!("private")),
        ("domain_whitelist", StrList, json!([])),
        ("domain_blacklist_enabled", Bool, json!(false)),
        ("domain_blacklist", StrList, json!([])),
        ("user_oauth_applications", Bool, json!(true)),
        ("after_sign_out_path", Str, Value::Null),
        ("container_registry_token_expire_delay", Int, json!(5)),
        ("repository_storage", Str, json!("default")),
        ("repository_storages", StrList, json!(["default"])),
        ("koding_enabled", Bool, json!(false)),
        ("koding_url", Str, Value::Null),
        ("plantuml_enabled", Bool, json!(false)),
        ("plantuml_url", Str, Value::Null),
        ("terminal_max_session_time", Int, json!(0)),
    ]
}

/// The stored settings.
#[derive(Debug, Clone)]
pub struct ApplicationSettings {
    /// Values by name.
    pub values: Map<String, Value>,
    /// Creation time.
    pub created_at: Millis,
    /// Last update time.
    pub updated_at: Millis,
}

impl ApplicationSettings {
    /// The defaults, created at `now`.
    pub fn new(now: Millis) -> Self {
        ApplicationSettings {
            values: defaults()
                .into_iter()
                .map(|(name, _, value)| (name.to_string(), value))
                .collect(),
            created_at: now,
            updated_at: now,
        }
    }
}

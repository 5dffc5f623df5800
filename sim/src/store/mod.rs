//! The in-memory database: every entity table, the id sequences and the monotonic clock. Each submodule owns one
//! kind of entity and adds its own `impl Store` block for creating and finding it.

pub mod admin;
pub mod awards;
pub mod boards;
pub mod broadcast;
pub mod ci;
pub mod commit_meta;
pub mod diff;
pub mod events;
pub mod hooks;
pub mod issues;
pub mod keys;
pub mod labels;
pub mod members;
pub mod merge_requests;
pub mod namespaces;
pub mod notes;
pub mod notifications;
pub mod oauth;
pub mod projects;
pub mod repo;
pub mod runners;
pub mod services;
pub mod settings;
pub mod snippets;
pub mod system_notes;
pub mod templates;
pub mod users;

use std::collections::BTreeMap;

use crate::time::{now_millis, Millis};

pub use admin::{GroupLink, GroupShare};
pub use awards::{AwardEmoji, AwardableKind, Todo};
pub use boards::{Board, BoardList};
pub use broadcast::BroadcastMessage;
pub use ci::{Deployment, Environment, Job, Pipeline, Runner, Trigger, Variable, VariableOwner};
pub use commit_meta::{CommitComment, CommitStatus};
pub use events::Event;
pub use hooks::Hook;
pub use issues::Issue;
pub use keys::{Email, SshKey};
pub use labels::{Label, Milestone};
pub use members::{access, Member, MemberSource};
pub use merge_requests::MergeRequest;
pub use namespaces::{Namespace, NamespaceKind};
pub use notes::{Note, NoteableKind};
pub use notifications::{NotificationSetting, NotificationSource};
pub use projects::Project;
pub use services::Service;
pub use settings::ApplicationSettings;
pub use snippets::Snippet;
pub use users::{Token, TokenKind, User};

/// Project and group visibility.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Visibility {
    /// Members only.
    Private,
    /// Any signed-in user.
    Internal,
    /// Everyone, including anonymous callers.
    Public,
}

impl Visibility {
    /// The V4 string.
    pub fn as_str(self) -> &'static str {
        match self {
            Visibility::Private => "private",
            Visibility::Internal => "internal",
            Visibility::Public => "public",
        }
    }

    /// Parses the V4 string.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "private" => Some(Visibility::Private),
            "internal" => Some(Visibility::Internal),
            "public" => Some(Visibility::Public),
            _ => None,
        }
    }
}

/// Counters for every id sequence.
#[derive(Debug)]
struct Sequences {
    user: u64,
    token: u64,
    namespace: u64,
    project: u64,
    issue: u64,
    merge_request: u64,
    note: u64,
    label: u64,
    milestone: u64,
}

/// The whole simulated service state.
#[derive(Debug)]
pub struct Store {
    /// `http://127.0.0.1:PORT`, used in `web_url` and `_links`.
    pub base_url: String,
    /// The brand word in route and field names, e.g. `svc` in `/templates/svc_ci_ymls`.
    pub identifier_word: String,
    /// Users by id.
    pub users: BTreeMap<u64, User>,
    /// Access tokens by id.
    pub tokens: BTreeMap<u64, Token>,
    /// User and group namespaces by id (a group's id is its namespace id).
    pub namespaces: BTreeMap<u64, Namespace>,
    /// Projects by id.
    pub projects: BTreeMap<u64, Project>,
    /// Issues by global id.
    pub issues: BTreeMap<u64, Issue>,
    /// Merge requests by global id.
    pub merge_requests: BTreeMap<u64, MergeRequest>,
    /// Notes by id.
    pub notes: BTreeMap<u64, Note>,
    /// Project labels by id.
    pub labels: BTreeMap<u64, Label>,
    /// Project milestones by id.
    pub milestones: BTreeMap<u64, Milestone>,
    /// Award emoji by id.
    pub awards: BTreeMap<u64, AwardEmoji>,
    /// To-do items by id.
    pub todos: BTreeMap<u64, Todo>,
    /// Snippets by id.
    pub snippets: BTreeMap<u64, Snippet>,
    /// Events by id.
    pub events: BTreeMap<u64, Event>,
    /// Commit comments by id.
    pub commit_comments: BTreeMap<u64, CommitComment>,
    /// Commit statuses by id.
    pub commit_statuses: BTreeMap<u64, CommitStatus>,
    /// Pipelines by id.
    pub pipelines: BTreeMap<u64, Pipeline>,
    /// Jobs by id.
    pub jobs: BTreeMap<u64, Job>,
    /// Triggers by id.
    pub triggers: BTreeMap<u64, Trigger>,
    /// CI variables by (owner, key).
    pub variables: BTreeMap<(VariableOwner, String), Variable>,
    /// Environments by id.
    pub environments: BTreeMap<u64, Environment>,
    /// Deployments by id.
    pub deployments: BTreeMap<u64, Deployment>,
    /// Runners by id.
    pub runners: BTreeMap<u64, Runner>,
    /// Project–group links by id.
    pub group_links: BTreeMap<u64, GroupLink>,
    /// Group–group shares by (shared group, group shared with).
    pub group_shares: BTreeMap<(u64, u64), GroupShare>,
    /// Users' statuses by user id: (emoji, message).
    pub user_statuses: BTreeMap<u64, (Option<String>, Option<String>)>,
    /// SSH keys (users' keys and deploy keys) by id.
    pub ssh_keys: BTreeMap<u64, SshKey>,
    /// Deploy-key links: (project, key) → `can_push`.
    pub deploy_key_links: BTreeMap<(u64, u64), bool>,
    /// Users' secondary e-mail addresses by id.
    pub emails: BTreeMap<u64, Email>,
    /// Project and system hooks by id.
    pub hooks: BTreeMap<u64, Hook>,
    /// Configured project services by id.
    pub services: BTreeMap<u64, Service>,
    /// The application settings.
    pub settings: ApplicationSettings,
    /// Broadcast messages by id.
    pub broadcast_messages: BTreeMap<u64, BroadcastMessage>,
    /// Issue boards by id.
    pub boards: BTreeMap<u64, Board>,
    /// Board lists by id.
    pub board_lists: BTreeMap<u64, BoardList>,
    /// Notification settings by (user, source).
    pub notification_settings: BTreeMap<(u64, NotificationSource), NotificationSetting>,
    /// Pending access requests by (project or group, user): when each was made.
    pub access_requests: BTreeMap<(MemberSource, u64), Millis>,
    counters: BTreeMap<&'static str, u64>,
    /// The OAuth 2 provider: applications, codes, refresh tokens.
    pub oauth: oauth::OAuthState,
    seq: Sequences,
    last_millis: Millis,
}

impl Store {
    /// An empty store holding only the root user, authenticated by `root_token`.
    pub fn new(base_url: &str, root_token: &str) -> Store {
        let mut store = Store {
            base_url: base_url.trim_end_matches('/').to_string(),
            identifier_word: crate::DEFAULT_IDENTIFIER_WORD.to_string(),
            users: BTreeMap::new(),
            tokens: BTreeMap::new(),
            oauth: oauth::OAuthState::default(),
            namespaces: BTreeMap::new(),
            projects: BTreeMap::new(),
            issues: BTreeMap::new(),
            merge_requests: BTreeMap::new(),
            notes: BTreeMap::new(),
            labels: BTreeMap::new(),
            milestones: BTreeMap::new(),
            awards: BTreeMap::new(),
            todos: BTreeMap::new(),
            snippets: BTreeMap::new(),
            events: BTreeMap::new(),
            commit_comments: BTreeMap::new(),
            commit_statuses: BTreeMap::new(),
            pipelines: BTreeMap::new(),
            jobs: BTreeMap::new(),
            triggers: BTreeMap::new(),
            variables: BTreeMap::new(),
            environments: BTreeMap::new(),
            deployments: BTreeMap::new(),
            runners: BTreeMap::new(),
            group_links: BTreeMap::new(),
            group_shares: BTreeMap::new(),
            user_statuses: BTreeMap::new(),
            ssh_keys: BTreeMap::new(),
            deploy_key_links: BTreeMap::new(),
            emails: BTreeMap::new(),
            hooks: BTreeMap::new(),
            services: BTreeMap::new(),
            settings: ApplicationSettings::new(now_millis()),
            broadcast_messages: BTreeMap::new(),
            boards: BTreeMap::new(),
            board_lists: BTreeMap::new(),
            access_requests: BTreeMap::new(),
            notification_settings: BTreeMap::new(),
            counters: BTreeMap::new(),
            seq: Sequences {
                user: 0,
                token: 0,
                namespace: 0,
                project: 0,
                issue: 999,
                merge_request: 1999,
                note: 0,
                label: 0,
                milestone: 0,
            },
            last_millis: 0,
        };
        let root = store.insert_user(users::NewUser {
            username: "root".into(),
            name: "Administrator".into(),
            email: "admin@example.com".into(),
            password: Some("password".into()),
            is_admin: true,
        });
        store.insert_token(
            root,
            "root",
            vec!["api".into(), "sudo".into()],
            TokenKind::Personal,
            Some(root_token.to_string()),
        );
        store
    }

    /// The current time; strictly increasing so that creation order and timestamp order agree.
    pub fn now(&mut self) -> Millis {
        let now = now_millis().max(self.last_millis + 1);
        self.last_millis = now;
        now
    }

    /// The next id of a sequence named `kind` (each kind counts from 1).
    pub fn next_id(&mut self, kind: &'static str) -> u64 {
        bump(self.counters.entry(kind).or_insert(0))
    }

    /// Records that `at` was used as a timestamp, keeping later ones after it.
    pub fn observe_time(&mut self, at: Millis) {
        self.last_millis = self.last_millis.max(at);
    }
}

fn bump(counter: &mut u64) -> u64 {
    *counter += 1;
    *counter
}

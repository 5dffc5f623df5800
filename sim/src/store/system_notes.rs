//! The system notes V4 writes when an update changes an issue's or a merge request's fields, in the order it writes
//! them: `Issuable::CommonSystemNotesService` (title, labels, discussion lock, milestone), then the update
//! service's `handle_changes` (target branch and assignee of a merge request; assignees and confidentiality of an
//! issue). Texts follow `SystemNoteService` (`change_title`, `change_label`, `discussion_lock`, `change_milestone`,
//! `change_branch`, `change_assignee`, `change_issue_assignees`, `change_issue_confidentiality`).

use super::{NoteableKind, Store};

/// The fields of an issue or merge request that V4 writes a system note about when an update changes them.
#[derive(Debug, Clone, Default)]
pub struct Tracked {
    /// Title.
    pub title: String,
    /// Label names.
    pub labels: Vec<String>,
    /// Milestone.
    pub milestone_id: Option<u64>,
    /// Assignees (a merge request has at most one).
    pub assignees: Vec<u64>,
    /// Confidential (issues).
    pub confidential: bool,
    /// Discussion lock.
    pub discussion_locked: Option<bool>,
    /// Target branch (merge requests).
    pub target_branch: Option<String>,
}

impl Store {
    /// The tracked fields of an issue or merge request as they are now.
    pub fn tracked(&self, kind: NoteableKind, id: u64) -> Option<Tracked> {
        match kind {
            NoteableKind::Issue => self.issues.get(&id).map(|i| Tracked {
                title: i.title.clone(),
                labels: i.labels.clone(),
                milestone_id: i.milestone_id,
                assignees: i.assignee_ids.clone(),
                confidential: i.confidential,
                discussion_locked: i.discussion_locked,
                target_branch: None,
            }),
            NoteableKind::MergeRequest => self.merge_requests.get(&id).map(|m| Tracked {
                title: m.title.clone(),
                labels: m.labels.clone(),
                milestone_id: m.milestone_id,
                assignees: m.assignee_id.into_iter().collect(),
                confidential: false,
                discussion_locked: m.discussion_locked,
                target_branch: Some(m.target_branch.clone()),
            }),
            NoteableKind::Snippet => None,
        }
    }

    /// Writes the system notes for what changed since `before`, as `author`.
    pub fn write_change_notes(&mut self, kind: NoteableKind, id: u64, author: u64, before: &Tracked) {
        let Some(after) = self.tracked(kind, id) else {
            return;
        };
        let project_id = match kind {
            NoteableKind::Issue => self.issues.get(&id).map(|i| i.project_id),
            NoteableKind::MergeRequest => self.merge_requests.get(&id).map(|m| m.project_id),
            NoteableKind::Snippet => None,
        }
        .unwrap_or(0);
        let mut bodies = Vec::new();
        if before.title != after.title {
            if kind == NoteableKind::MergeRequest && is_wip(&before.title) != is_wip(&after.title) {
                let prefix = if is_wip(&after.title) {
                    "marked"
                } else {
                    "unmarked"
                };
                bodies.push(format!("{prefix} as a **Work In Progress**"));
            }
            if kind == NoteableKind::Issue || wipless(&before.title) != wipless(&after.title) {
                let (old, new) = marked_titles(&before.title, &after.title);
                bodies.push(format!("changed title from **{old}** to **{new}**"));
            }
        }
        if before.labels != after.labels {
            let ids = |names: &[String], others: &[String]| -> Vec<u64> {
                let mut ids: Vec<u64> = names
                    .iter()
                    .filter(|n| !others.contains(n))
                    .filter_map(|n| {
                        self.labels
                            .values()
                            .find(|l| l.project_id == project_id && &l.name == n)
                            .map(|l| l.id)
                    })
                    .collect();
                ids.sort_unstable();
                ids
            };
            let added = ids(&after.labels, &before.labels);
            let removed = ids(&before.labels, &after.labels);
            if let Some(body) = label_note(&added, &removed) {
                bodies.push(body);
            }
        }
        if before.discussion_locked != after.discussion_locked {
            let action = if after.discussion_locked == Some(true) {
                "locked"
            } else {
                "unlocked"
            };
            let what = match kind {
                NoteableKind::MergeRequest => "merge request",
                _ => "issue",
            };
            bodies.push(format!("{action} this {what}"));
        }
        if before.milestone_id != after.milestone_id {
            let iid = after
                .milestone_id
                .and_then(|m| self.milestones.get(&m))
                .map(|m| m.iid);
            bodies.push(match iid {
                Some(iid) => format!("changed milestone to %{iid}"),
                None => "removed milestone".into(),
            });
        }
        if before.target_branch != after.target_branch {
            if let (Some(old), Some(new)) = (&before.target_branch, &after.target_branch) {
                bodies.push(format!("changed target branch from `{old}` to `{new}`"));
            }
        }
        if before.assignees != after.assignees {
            let mention = |ids: Vec<u64>| -> Vec<String> {
                ids.into_iter()
                    .filter_map(|u| self.users.get(&u).map(|u| format!("@{}", u.username)))
                    .collect()
            };
            match kind {
                NoteableKind::MergeRequest => bodies.push(match mention(after.assignees.clone()).first() {
                    Some(user) => format!("assigned to {user}"),
                    None => "removed assignee".into(),
                }),
                _ => {
                    let added = mention(
                        after
                            .assignees
                            .iter()
                            .copied()
                            .filter(|u| !before.assignees.contains(u))
                            .collect(),
                    );
                    let removed = mention(
                        before
                            .assignees
                            .iter()
                            .copied()
                            .filter(|u| !after.assignees.contains(u))
                            .collect(),
                    );
                    let mut parts = Vec::new();
                    if !added.is_empty() {
                        parts.push(format!("assigned to {}", to_sentence(&added)));
                    }
                    if !removed.is_empty() {
                        parts.push(format!("unassigned {}", to_sentence(&removed)));
                    }
                    if !parts.is_empty() {
                        bodies.push(parts.join(" and "));
                    }
                }
            }
        }
        if kind == NoteableKind::Issue && before.confidential != after.confidential {
            bodies.push(if after.confidential {
                "made the issue confidential".into()
            } else {
                "made the issue visible to everyone".into()
            });
        }
        for body in bodies {
            self.insert_system_note(kind, id, author, body);
        }
    }
}

/// `MergeRequest::WIP_REGEX`: `\A\s*(\[WIP\]\s*|WIP:\s*|WIP\s+)+\s*`, case-insensitive.
fn wip_prefix_len(title: &str) -> usize {
    let mut rest = title.trim_start();
    let mut matched = false;
    loop {
        let lower = rest.to_ascii_lowercase();
        let taken = if lower.starts_with("[wip]") {
            Some(rest[5..].trim_start())
        } else if lower.starts_with("wip:") {
            Some(rest[4..].trim_start())
        } else if lower.starts_with("wip") && rest[3..].starts_with(char::is_whitespace) {
            Some(rest[3..].trim_start())
        } else {
            None
        };
        match taken {
            Some(r) => {
                rest = r;
                matched = true;
            }
            None => break,
        }
    }
    if matched {
        title.len() - rest.len()
    } else {
        0
    }
}

fn is_wip(title: &str) -> bool {
    wip_prefix_len(title) > 0
}

fn wipless(title: &str) -> &str {
    &title[wip_prefix_len(title)..]
}

/// `Gitlab::Diff::InlineDiff` (longest common prefix, then suffix, by character) marked as
/// `InlineDiffMarkdownMarker` does: `{-removed-}` in the old title, `{+added+}` in the new one.
fn marked_titles(old: &str, new: &str) -> (String, String) {
    let old: Vec<char> = old.chars().collect();
    let new: Vec<char> = new.chars().collect();
    let prefix = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
    let suffix = old[prefix..]
        .iter()
        .rev()
        .zip(new[prefix..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let mark = |chars: &[char], symbol: char| -> String {
        let end = chars.len() - suffix;
        let head: String = chars[..prefix].iter().collect();
        let tail: String = chars[end..].iter().collect();
        if prefix >= end {
            return format!("{head}{tail}");
        }
        let mid: String = chars[prefix..end].iter().collect();
        format!("{head}{{{symbol}{mid}{symbol}}}{tail}")
    };
    (mark(&old, '-'), mark(&new, '+'))
}

/// `SystemNoteService.change_label`: "added ~1 ~2 and removed ~3 labels".
fn label_note(added: &[u64], removed: &[u64]) -> Option<String> {
    let refs = |ids: &[u64]| {
        ids.iter()
            .map(|id| format!("~{id}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut body = String::new();
    if !added.is_empty() {
        body.push_str(&format!("added {}", refs(added)));
        if !removed.is_empty() {
            body.push_str(" and ");
        }
    }
    if !removed.is_empty() {
        body.push_str(&format!("removed {}", refs(removed)));
    }
    if body.is_empty() {
        return None;
    }
    let count = added.len() + removed.len();
    body.push_str(if count == 1 { " label" } else { " labels" });
    Some(body)
}

/// Rails' `Array#to_sentence`: "a", "a and b", "a, b, and c".
fn to_sentence(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [a, b] => format!("{a} and {b}"),
        [rest @ .., last] => format!("{}, and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::{label_note, marked_titles, to_sentence, wipless};

    #[test]
    fn titles_are_marked_between_common_prefix_and_suffix() {
        assert_eq!(
            marked_titles("Old title", "New title"),
            ("{-Old-} title".to_string(), "{+New+} title".to_string())
        );
        assert_eq!(
            marked_titles("bug", "bug fixed"),
            ("bug".to_string(), "bug{+ fixed+}".to_string())
        );
    }

    #[test]
    fn label_and_sentence_texts() {
        assert_eq!(
            label_note(&[1, 2], &[3]).as_deref(),
            Some("added ~1 ~2 and removed ~3 labels")
        );
        assert_eq!(label_note(&[], &[5]).as_deref(), Some("removed ~5 label"));
        assert_eq!(label_note(&[], &[]), None);
        let users = ["@a".to_string(), "@b".to_string(), "@c".to_string()];
        assert_eq!(to_sentence(&users[..2]), "@a and @b");
        assert_eq!(to_sentence(&users), "@a, @b, and @c");
        assert_eq!(wipless("WIP: [WIP] fix"), "fix");
        assert_eq!(wipless("WIPE out"), "WIPE out");
    }
}

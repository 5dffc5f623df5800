//! A project's git repository: commits (each holding its whole file tree) and branches pointing at them.
//! Commit ids are SHA-1 over the tree, parents, author, time and message, so they are stable and realistic.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::sha::{base64_decode, sha1_hex};
use crate::time::Millis;

/// A file tree: path → content.
pub type Tree = BTreeMap<String, Vec<u8>>;

/// A commit.
#[derive(Debug, Clone)]
pub struct Commit {
    /// 40-hex id.
    pub id: String,
    /// Parent ids.
    pub parent_ids: Vec<String>,
    /// Full message.
    pub message: String,
    /// Author (and committer) name.
    pub author_name: String,
    /// Author (and committer) e-mail.
    pub author_email: String,
    /// Author and commit time.
    pub date: Millis,
    /// The full tree at this commit.
    pub tree: Arc<Tree>,
}

impl Commit {
    /// The first line of the message.
    pub fn title(&self) -> &str {
        self.message.lines().next().unwrap_or("")
    }

    /// The first 8 hex digits.
    pub fn short_id(&self) -> &str {
        self.id.get(..8).unwrap_or(&self.id)
    }
}

/// A branch.
#[derive(Debug, Clone)]
pub struct Branch {
    /// Head commit id.
    pub commit: String,
    /// Protected branches accept pushes from Maintainers only (unless `developers_can_push`).
    pub protected: bool,
    /// Developers may push despite protection.
    pub developers_can_push: bool,
    /// Developers may merge despite protection.
    pub developers_can_merge: bool,
}

/// A protected-branch rule (`/protected_branches`): a branch name or a `*` wildcard, and who may push and merge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtectedRule {
    /// Id.
    pub id: u64,
    /// Least access level that may push (0 for no one).
    pub push_access_level: u8,
    /// Least access level that may merge (0 for no one).
    pub merge_access_level: u8,
    /// Force pushes allowed.
    pub allow_force_push: bool,
}

/// The protection in force on a branch: from its own flag and every rule that matches it, the most permissive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Protection {
    /// Least access level that may push (0 for no one).
    pub push_access_level: u8,
    /// Least access level that may merge (0 for no one).
    pub merge_access_level: u8,
}

/// Whether `name` matches a protected-branch pattern, where `*` stands for any run of characters.
pub fn pattern_matches(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == name;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !name.starts_with(first) || name.len() < first.len() + last.len() || !name.ends_with(last) {
        return false;
    }
    let mut rest = &name[first.len()..name.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

/// A repository.
#[derive(Debug, Clone, Default)]
pub struct Repository {
    /// Commits by id.
    pub commits: HashMap<String, Commit>,
    /// Branches by name.
    pub branches: BTreeMap<String, Branch>,
    /// Tags by name.
    pub tags: BTreeMap<String, super::commit_meta::Tag>,
    /// Protected-branch rules by name or pattern.
    pub protected_rules: BTreeMap<String, ProtectedRule>,
}

/// Why a commit's actions could not be applied.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ActionError {
    /// An action is malformed.
    #[error("{0}")]
    Invalid(String),
    /// `create` on an existing file.
    #[error("A file with this name already exists")]
    Exists,
    /// `update`, `delete` or `move` on a missing file.
    #[error("A file with this name doesn't exist")]
    Missing,
}

impl Repository {
    /// Records a commit and returns its id (branches are not moved).
    pub fn commit(
        &mut self,
        parent: Option<String>,
        tree: Tree,
        message: &str,
        author_name: &str,
        author_email: &str,
        date: Millis,
    ) -> String {
        let mut text = String::new();
        for (path, content) in &tree {
            text.push_str(&format!("{} {path}\n", sha1_hex(content)));
        }
        let tree_id = sha1_hex(text.as_bytes());
        let parents: Vec<String> = parent.into_iter().collect();
        let header = format!(
            "tree {tree_id}\nparent {}\nauthor {author_name} <{author_email}> {date}\n\n{message}",
            parents.join(" ")
        );
        let id = sha1_hex(header.as_bytes());
        self.commits.insert(
            id.clone(),
            Commit {
                id: id.clone(),
                parent_ids: parents,
                message: message.to_string(),
                author_name: author_name.to_string(),
                author_email: author_email.to_string(),
                date,
                tree: Arc::new(tree),
            },
        );
        id
    }

    /// The protection of branch `name` (None when it is not protected). A level of 0 means no one; the most
    /// permissive of the branch's own flag and the matching rules wins.
    pub fn protection(&self, name: &str) -> Option<Protection> {
        let own = self
            .branches
            .get(name)
            .filter(|b| b.protected)
            .map(|b| Protection {
                push_access_level: if b.developers_can_push { 30 } else { 40 },
                merge_access_level: if b.developers_can_merge { 30 } else { 40 },
            });
        let level = |l: u8| if l == 0 { u8::MAX } else { l };
        self.protected_rules
            .iter()
            .filter(|(pattern, _)| pattern_matches(pattern, name))
            .map(|(_, r)| Protection {
                push_access_level: r.push_access_level,
                merge_access_level: r.merge_access_level,
            })
            .chain(own)
            .reduce(|a, b| Protection {
                push_access_level: if level(a.push_access_level) <= level(b.push_access_level) {
                    a.push_access_level
                } else {
                    b.push_access_level
                },
                merge_access_level: if level(a.merge_access_level) <= level(b.merge_access_level) {
                    a.merge_access_level
                } else {
                    b.merge_access_level
                },
            })
    }

    /// Creates or moves a branch.
    pub fn set_branch(&mut self, name: &str, sha: &str, protected: bool) {
        match self.branches.get_mut(name) {
            Some(branch) => branch.commit = sha.to_string(),
            None => {
                self.branches.insert(
                    name.to_string(),
                    Branch {
                        commit: sha.to_string(),
                        protected,
                        developers_can_push: false,
                        developers_can_merge: false,
                    },
                );
            }
        }
    }

    /// Resolves a branch name, a full id or an id prefix of 7+ digits.
    pub fn resolve(&self, reference: &str) -> Option<&Commit> {
        if let Some(branch) = self.branches.get(reference) {
            return self.commits.get(&branch.commit);
        }
        if let Some(tag) = self.tags.get(reference) {
            return self.commits.get(&tag.commit);
        }
        if let Some(commit) = self.commits.get(reference) {
            return Some(commit);
        }
        if reference.len() >= 7 && reference.bytes().all(|b| b.is_ascii_hexdigit()) {
            let lower = reference.to_ascii_lowercase();
            let mut found = self.commits.values().filter(|c| c.id.starts_with(&lower));
            let first = found.next();
            if found.next().is_none() {
                return first;
            }
        }
        None
    }

    /// Every commit reachable from `start`, newest first.
    pub fn history(&self, start: &str) -> Vec<&Commit> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![start.to_string()];
        let mut out = Vec::new();
        while let Some(id) = stack.pop() {
            if !seen.insert(id.clone()) {
                continue;
            }
            if let Some(commit) = self.commits.get(&id) {
                stack.extend(commit.parent_ids.iter().cloned());
                out.push(commit);
            }
        }
        out.sort_by(|a, b| b.date.cmp(&a.date).then_with(|| a.id.cmp(&b.id)));
        out
    }

    /// The newest commit reachable from both `a` and `b`.
    pub fn merge_base(&self, a: &str, b: &str) -> Option<String> {
        let theirs: BTreeSet<String> = self.history(b).iter().map(|c| c.id.clone()).collect();
        self.history(a)
            .into_iter()
            .find(|c| theirs.contains(&c.id))
            .map(|c| c.id.clone())
    }

    /// Commits reachable from `tip` but not from `base`, newest first.
    pub fn commits_between(&self, base: Option<&str>, tip: &str) -> Vec<&Commit> {
        let excluded: BTreeSet<String> = base
            .map(|b| self.history(b).iter().map(|c| c.id.clone()).collect())
            .unwrap_or_default();
        self.history(tip)
            .into_iter()
            .filter(|c| !excluded.contains(&c.id))
            .collect()
    }

    /// Whether `ancestor` is reachable from `tip`.
    pub fn is_ancestor(&self, ancestor: &str, tip: &str) -> bool {
        self.history(tip).iter().any(|c| c.id == ancestor)
    }

    /// Whether a commit changed `path` relative to its first parent.
    pub fn touches(&self, commit: &Commit, path: &str) -> bool {
        let parent_tree = commit
            .parent_ids
            .first()
            .and_then(|p| self.commits.get(p))
            .map(|p| p.tree.clone())
            .unwrap_or_default();
        let prefix = format!("{}/", path.trim_end_matches('/'));
        let relevant = |p: &String| p == path || p.starts_with(&prefix);
        let before: Vec<_> = parent_tree.iter().filter(|(p, _)| relevant(p)).collect();
        let after: Vec<_> = commit.tree.iter().filter(|(p, _)| relevant(p)).collect();
        before != after
    }

    /// (additions, deletions) in lines between a commit and its first parent.
    pub fn stats(&self, commit: &Commit) -> (usize, usize) {
        let empty = Tree::new();
        let parent = commit
            .parent_ids
            .first()
            .and_then(|p| self.commits.get(p))
            .map(|p| p.tree.as_ref())
            .unwrap_or(&empty);
        let mut additions = 0;
        let mut deletions = 0;
        let paths: BTreeSet<&String> = parent.keys().chain(commit.tree.keys()).collect();
        for path in paths {
            let old = parent.get(path);
            let new = commit.tree.get(path);
            if old == new {
                continue;
            }
            let lines =
                |c: Option<&Vec<u8>>| c.map(|c| String::from_utf8_lossy(c).lines().count()).unwrap_or(0);
            additions += lines(new);
            deletions += lines(old);
        }
        (additions, deletions)
    }
}

/// Applies commit actions (`create`, `update`, `delete`, `move`, `chmod`) to a tree.
pub fn apply_actions(tree: &Tree, actions: &[Map<String, Value>]) -> Result<Tree, ActionError> {
    let mut out = tree.clone();
    let text = |a: &Map<String, Value>, k: &str| a.get(k).and_then(Value::as_str).map(str::to_string);
    for action in actions {
        let kind = text(action, "action")
            .ok_or_else(|| ActionError::Invalid("400 (Bad request) \"action\" not given".into()))?;
        let path = text(action, "file_path")
            .map(|p| p.trim_start_matches('/').to_string())
            .filter(|p| !p.is_empty())
            .ok_or_else(|| ActionError::Invalid("400 (Bad request) \"file_path\" not given".into()))?;
        let content = match text(action, "content") {
            None => None,
            Some(c) if text(action, "encoding").as_deref() == Some("base64") => {
                Some(base64_decode(&c).ok_or_else(|| ActionError::Invalid("Invalid base64 content".into()))?)
            }
            Some(c) => Some(c.into_bytes()),
        };
        match kind.as_str() {
            "create" => {
                if out.contains_key(&path) {
                    return Err(ActionError::Exists);
                }
                out.insert(path, content.unwrap_or_default());
            }
            "update" => {
                let slot = out.get_mut(&path).ok_or(ActionError::Missing)?;
                *slot = content.unwrap_or_default();
            }
            "delete" => {
                out.remove(&path).ok_or(ActionError::Missing)?;
            }
            "move" => {
                let previous = text(action, "previous_path").ok_or_else(|| {
                    ActionError::Invalid("400 (Bad request) \"previous_path\" not given".into())
                })?;
                let old = out.remove(&previous).ok_or(ActionError::Missing)?;
                if out.contains_key(&path) {
                    return Err(ActionError::Exists);
                }
                out.insert(path, content.unwrap_or(old));
            }
            "chmod" => {
                if !out.contains_key(&path) {
                    return Err(ActionError::Missing);
                }
            }
            other => {
                return Err(ActionError::Invalid(format!(
                    "400 (Bad request) \"action\" does not have a valid value: {other}"
                )))
            }
        }
    }
    Ok(out)
}

/// Whether a branch name is acceptable to git.
pub fn valid_branch_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('-')
        && !name.starts_with('/')
        && !name.ends_with('/')
        && !name.ends_with('.')
        && !name.ends_with(".lock")
        && !name.contains("..")
        && !name.contains("//")
        && !name.contains("@{")
        && name != "@"
        && !name.chars().any(|c| c.is_control() || " ~^:?*[\\".contains(c))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn protected_patterns() {
        assert!(pattern_matches("main", "main"));
        assert!(!pattern_matches("main", "mainline"));
        assert!(pattern_matches("*-stable", "1-stable"));
        assert!(pattern_matches("*-stable", "-stable"));
        assert!(!pattern_matches("*-stable", "stable"));
        assert!(pattern_matches("release/*", "release/1.0"));
        assert!(pattern_matches("a*b*c", "aXbYc"));
        assert!(!pattern_matches("a*b*c", "aXcYb"));
        assert!(pattern_matches("*", "anything"));
    }

    fn actions(v: Value) -> Vec<Map<String, Value>> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_object().unwrap().clone())
            .collect()
    }

    #[test]
    fn actions_apply_and_fail() {
        let tree = Tree::from([("a".to_string(), b"1".to_vec())]);
        let out = apply_actions(
            &tree,
            &actions(json!([
                {"action": "create", "file_path": "b/c.txt", "content": "aGk=", "encoding": "base64"},
                {"action": "move", "file_path": "z", "previous_path": "a"}
            ])),
        )
        .unwrap();
        assert_eq!(out.get("b/c.txt").unwrap(), b"hi");
        assert!(out.contains_key("z") && !out.contains_key("a"));
        assert_eq!(
            apply_actions(&tree, &actions(json!([{"action": "create", "file_path": "a"}]))),
            Err(ActionError::Exists)
        );
        assert_eq!(
            apply_actions(&tree, &actions(json!([{"action": "delete", "file_path": "q"}]))),
            Err(ActionError::Missing)
        );
    }

    #[test]
    fn history_and_resolve() {
        let mut repo = Repository::default();
        let a = repo.commit(None, Tree::new(), "one", "A", "a@x", 1);
        let b = repo.commit(Some(a.clone()), Tree::new(), "two\n\nbody", "A", "a@x", 2);
        repo.set_branch("main", &b, true);
        let ids: Vec<_> = repo.history(&b).iter().map(|c| c.id.clone()).collect();
        assert_eq!(ids, vec![b.clone(), a.clone()]);
        assert_eq!(repo.resolve("main").unwrap().title(), "two");
        assert_eq!(repo.resolve(&a[..10]).unwrap().id, a);
        assert!(repo.is_ancestor(&a, &b));
        assert!(valid_branch_name("feature/x") && !valid_branch_name("bad..name"));
    }
}

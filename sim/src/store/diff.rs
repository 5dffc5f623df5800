//! Line diffs between two file trees, in the unified format the service returns in `diff` fields.

use std::collections::BTreeSet;

use super::repo::Tree;

/// The change to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    /// Path before.
    pub old_path: String,
    /// Path after.
    pub new_path: String,
    /// Added file.
    pub new_file: bool,
    /// Renamed file.
    pub renamed_file: bool,
    /// Deleted file.
    pub deleted_file: bool,
    /// Unified diff text (hunks only, no file headers).
    pub diff: String,
}

/// Above this many line pairs the diff is a whole-file replacement instead of a minimal one.
const MAX_CELLS: usize = 1_000_000;

/// Every changed file between `old` and `new`, sorted by path; exact moves are reported as renames.
pub fn tree_diff(old: &Tree, new: &Tree) -> Vec<FileDiff> {
    let paths: BTreeSet<&String> = old.keys().chain(new.keys()).collect();
    let mut added = Vec::new();
    let mut deleted = Vec::new();
    let mut out = Vec::new();
    for path in paths {
        match (old.get(path), new.get(path)) {
            (Some(a), Some(b)) if a != b => out.push(FileDiff {
                old_path: path.clone(),
                new_path: path.clone(),
                new_file: false,
                renamed_file: false,
                deleted_file: false,
                diff: unified(a, b),
            }),
            (None, Some(_)) => added.push(path.clone()),
            (Some(_), None) => deleted.push(path.clone()),
            _ => {}
        }
    }
    for path in deleted {
        let content = old.get(&path).cloned().unwrap_or_default();
        let renamed = added.iter().position(|a| new.get(a) == Some(&content));
        match renamed {
            Some(index) => {
                let to = added.remove(index);
                out.push(FileDiff {
                    old_path: path,
                    new_path: to,
                    new_file: false,
                    renamed_file: true,
                    deleted_file: false,
                    diff: String::new(),
                });
            }
            None => out.push(FileDiff {
                old_path: path.clone(),
                new_path: path,
                new_file: false,
                renamed_file: false,
                deleted_file: true,
                diff: unified(&content, b""),
            }),
        }
    }
    for path in added {
        let content = new.get(&path).cloned().unwrap_or_default();
        out.push(FileDiff {
            old_path: path.clone(),
            new_path: path,
            new_file: true,
            renamed_file: false,
            deleted_file: false,
            diff: unified(b"", &content),
        });
    }
    out.sort_by(|a, b| a.new_path.cmp(&b.new_path));
    out
}

/// A single-hunk unified diff of two texts.
pub fn unified(old: &[u8], new: &[u8]) -> String {
    let old_text = String::from_utf8_lossy(old);
    let new_text = String::from_utf8_lossy(new);
    let a: Vec<&str> = old_text.lines().collect();
    let b: Vec<&str> = new_text.lines().collect();
    let mut lines = Vec::new();
    if a.len().saturating_mul(b.len()) > MAX_CELLS {
        lines.extend(a.iter().map(|l| format!("-{l}")));
        lines.extend(b.iter().map(|l| format!("+{l}")));
    } else {
        let mut lcs = vec![vec![0usize; b.len() + 1]; a.len() + 1];
        for i in (0..a.len()).rev() {
            for j in (0..b.len()).rev() {
                lcs[i][j] = if a[i] == b[j] {
                    lcs[i + 1][j + 1] + 1
                } else {
                    lcs[i + 1][j].max(lcs[i][j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < a.len() || j < b.len() {
            if i < a.len() && j < b.len() && a[i] == b[j] {
                lines.push(format!(" {}", a[i]));
                i += 1;
                j += 1;
            } else if j < b.len() && (i == a.len() || lcs[i][j + 1] >= lcs[i + 1][j]) {
                lines.push(format!("+{}", b[j]));
                j += 1;
            } else {
                lines.push(format!("-{}", a[i]));
                i += 1;
            }
        }
    }
    let range = |n: usize| {
        if n == 0 {
            "0,0".to_string()
        } else {
            format!("1,{n}")
        }
    };
    let mut out = format!("@@ -{} +{} @@\n", range(a.len()), range(b.len()));
    for line in lines {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diffs_and_renames() {
        let old = Tree::from([
            ("a".to_string(), b"1\n2\n3\n".to_vec()),
            ("gone".to_string(), b"x\n".to_vec()),
            ("moved".to_string(), b"m\n".to_vec()),
        ]);
        let new = Tree::from([
            ("a".to_string(), b"1\n3\n4\n".to_vec()),
            ("fresh".to_string(), b"y\n".to_vec()),
            ("there".to_string(), b"m\n".to_vec()),
        ]);
        let diffs = tree_diff(&old, &new);
        assert_eq!(diffs.len(), 4);
        assert_eq!(diffs[0].diff, "@@ -1,3 +1,3 @@\n 1\n-2\n 3\n+4\n");
        assert!(diffs.iter().any(|d| d.new_file && d.new_path == "fresh"));
        assert!(diffs.iter().any(|d| d.deleted_file && d.old_path == "gone"));
        assert!(diffs
            .iter()
            .any(|d| d.renamed_file && d.old_path == "moved" && d.new_path == "there"));
    }
}

//! The layering check: every `crate::` path in `src/` names a module of its own layer or of one below, as the
//! layout section of `lib.rs` lists them, and no two top-level modules use each other, directly or round a longer
//! circle.
//!
//! The layers are read from `lib.rs` itself (its numbered list `N. [`a`] and [`b`]: …`), so the list a reader
//! sees is the one the check applies. Paths are found in code, not in comments: `use crate::a::b`,
//! `use crate::{a, b::c}` groups, and inline `crate::a::f()` paths alike. Test modules are held to the same rule.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers as `lib.rs` lists them: top-level module → layer number (1 is the bottom).
fn declared_layers(lib: &str) -> BTreeMap<String, usize> {
    let mut layers = BTreeMap::new();
    for line in lib.lines() {
        let Some(text) = line.strip_prefix("//! ") else {
            continue;
        };
        let Some((number, rest)) = text.split_once(". ") else {
            continue;
        };
        let Ok(number) = number.parse::<usize>() else {
            continue;
        };
        let names = rest.split(':').next().unwrap_or_default();
        for name in names.split('[').skip(1) {
            if let Some(name) = name.strip_prefix('`').and_then(|name| name.split('`').next()) {
                layers.insert(name.to_owned(), number);
            }
        }
    }
    layers
}

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            files.push(path);
        }
    }
    files
}

/// The top-level module a file under `src/` belongs to; `None` for `lib.rs` and `main.rs`.
fn owner(relative: &Path) -> Option<String> {
    let first = relative.components().next()?.as_os_str().to_str()?.to_owned();
    match first.strip_suffix(".rs") {
        Some("lib" | "main") => None,
        Some(file) => Some(file.to_owned()),
        None => Some(first),
    }
}

/// `text` without comments (line and block) and string literals' contents, so that only code is searched.
fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut code = String::with_capacity(text.len());
    let mut at = 0;
    while at < chars.len() {
        let next = chars.get(at + 1).copied();
        match chars[at] {
            '/' if next == Some('/') => {
                while at < chars.len() && chars[at] != '\n' {
                    at += 1;
                }
                continue;
            }
            '/' if next == Some('*') => {
                at += 2;
                while at + 1 < chars.len() && !(chars[at] == '*' && chars[at + 1] == '/') {
                    at += 1;
                }
                at += 2;
                continue;
            }
            // A character literal (`'"'`, `'\''`, `'\\'`), not a lifetime.
            '\'' if next == Some('\\') && chars.get(at + 3) == Some(&'\'') => at += 4,
            '\'' if chars.get(at + 2) == Some(&'\'') => at += 3,
            '"' => {
                code.push('"');
                at += 1;
                while at < chars.len() && chars[at] != '"' {
                    if chars[at] == '\\' {
                        at += 1;
                    }
                    if chars[at.min(chars.len() - 1)] == '\n' {
                        code.push('\n');
                    }
                    at += 1;
                }
                code.push('"');
                at += 1;
            }
            c => {
                code.push(c);
                at += 1;
            }
        }
    }
    code
}

/// The top-level modules named by `crate::` paths in `code`, each with the line it is on.
fn crate_uses(code: &str) -> Vec<(String, usize)> {
    prefixed_uses(code, "crate::")
}

/// The first names after each `prefix` path in `code` (`crate::`, `super::`, `crate::rewrite::`), each with the
/// line it is on: the module a path enters below that prefix.
fn prefixed_uses(code: &str, prefix: &str) -> Vec<(String, usize)> {
    let mut uses = Vec::new();
    let line_of = |at: usize| code[..at].matches('\n').count() + 1;
    for (at, _) in code.match_indices(prefix) {
        // `$crate::` inside a macro is the same crate but names no module of ours by itself.
        if code[..at].ends_with('$') || code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &code[at + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // `crate::{a, b::c, d::{e, f}}`: the first name of each member at depth 0.
            let mut depth = 0usize;
            let mut expect_name = true;
            let mut name = String::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => expect_name = true,
                    c if expect_name && depth == 0 && (c.is_alphanumeric() || c == '_') => name.push(c),
                    _ => {
                        if !name.is_empty() {
                            uses.push((std::mem::take(&mut name), line_of(at)));
                        }
                        if !c.is_whitespace() {
                            expect_name = false;
                        }
                    }
                }
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                uses.push((name, line_of(at)));
            }
        }
    }
    uses
}

/// The first circle in `edges`, as the modules round it, if there is one.
fn find_cycle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(start) = path.iter().position(|on| on == node) {
            let mut circle = path[start..].to_vec();
            circle.push(node.to_owned());
            return Some(circle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for next in edges.get(node).into_iter().flatten() {
            if let Some(circle) = visit(next, edges, path, done) {
                return Some(circle);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    edges
        .keys()
        .find_map(|node| visit(node, edges, &mut Vec::new(), &mut done))
}

#[test]
fn no_module_uses_a_layer_above_its_own_and_no_modules_use_each_other() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let layers = declared_layers(&std::fs::read_to_string(src.join("lib.rs")).unwrap());
    assert!(layers.len() >= 8, "lib.rs lists its layers: {layers:?}");
    let mut problems = Vec::new();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in rust_files(&src) {
        let relative = file.strip_prefix(&src).unwrap().to_owned();
        let Some(owner) = owner(&relative).filter(|owner| owner != "layers") else {
            continue;
        };
        let Some(&own_layer) = layers.get(&owner) else {
            problems.push(format!(
                "src/{}: module `{owner}` is in no layer of lib.rs",
                relative.display()
            ));
            continue;
        };
        let code = code_only(&std::fs::read_to_string(&file).unwrap());
        for (used, line) in crate_uses(&code) {
            if used == owner || used == "self" || used == "super" {
                continue;
            }
            edges.entry(owner.clone()).or_default().insert(used.clone());
            match layers.get(&used) {
                None => problems.push(format!(
                    "src/{}:{line}: uses `crate::{used}`, which is in no layer of lib.rs",
                    relative.display()
                )),
                Some(&layer) if layer > own_layer => problems.push(format!(
                    "src/{}:{line}: `{owner}` (layer {own_layer}) uses `crate::{used}` (layer {layer}), a layer above",
                    relative.display()
                )),
                Some(&layer) if layer == own_layer => problems.push(format!(
                    "src/{}:{line}: `{owner}` uses `crate::{used}`, which shares its layer {layer}",
                    relative.display()
                )),
                Some(_) => {}
            }
        }
    }
    assert!(problems.is_empty(), "layering broken:\n{}", problems.join("\n"));
    assert_eq!(find_cycle(&edges), None, "top-level modules that use each other");
}

/// Each `#[cfg(test)] mod name;` or `#[cfg(test)] mod name {` in `code` (attributes between allowed): where it
/// starts, the name, and whether its body is inline.
fn test_modules(code: &str) -> Vec<(usize, String, bool)> {
    let mut found = Vec::new();
    for (at, marker) in code.match_indices("#[cfg(test)]") {
        let mut rest = code[at + marker.len()..].trim_start();
        while let Some(attribute) = rest.strip_prefix("#[") {
            rest = attribute
                .split_once(']')
                .map_or("", |(_, after)| after)
                .trim_start();
        }
        if let Some(after) = rest.strip_prefix("pub") {
            rest = after.trim_start();
            if rest.starts_with('(') {
                rest = rest.split_once(')').map_or("", |(_, after)| after).trim_start();
            }
        }
        let Some(after) = rest.strip_prefix("mod ") else {
            continue;
        };
        let name: String = after
            .trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let inline = after.trim_start()[name.len()..].trim_start().starts_with('{');
        found.push((at, name, inline));
    }
    found
}

/// The sibling modules of a folder: file stem or sub-folder name → its path relative to `src/`.
fn siblings(dir: &Path) -> BTreeMap<String, PathBuf> {
    let mut names = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = if path.is_dir() {
            path.file_name().and_then(|name| name.to_str()).map(str::to_owned)
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            path.file_stem().and_then(|name| name.to_str()).map(str::to_owned)
        } else {
            None
        };
        if let Some(name) = name.filter(|name| name != "mod") {
            names.insert(name, path);
        }
    }
    names
}

#[test]
fn no_two_files_of_a_folder_use_each_other() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut folders: Vec<PathBuf> = rust_files(&src)
        .iter()
        .filter_map(|file| file.parent().map(Path::to_path_buf))
        .collect();
    folders.sort();
    folders.dedup();
    let mut circles = Vec::new();
    for folder in folders {
        let names = siblings(&folder);
        let module_path = folder
            .strip_prefix(&src)
            .unwrap()
            .components()
            .filter_map(|part| part.as_os_str().to_str())
            .collect::<Vec<_>>()
            .join("::");
        let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        let test_only: BTreeSet<String> = std::fs::read_to_string(folder.join("mod.rs"))
            .map(|text| {
                test_modules(&code_only(&text))
                    .into_iter()
                    .map(|(_, name, _)| name)
                    .collect()
            })
            .unwrap_or_default();
        for (name, path) in names.iter().filter(|(name, _)| !test_only.contains(*name)) {
            // A sub-folder's files speak for it; `super::` inside them is that sub-folder's own parent.
            let files = if path.is_dir() {
                rust_files(path)
            } else {
                vec![path.clone()]
            };
            for file in files {
                let mut code = code_only(&std::fs::read_to_string(&file).unwrap());
                // A file's unit tests may use a sibling's test helpers; only the code that ships is held to this.
                if let Some((at, _, _)) = test_modules(&code).into_iter().find(|(_, _, inline)| *inline) {
                    code.truncate(at);
                }
                let in_subfolder = file.parent() != Some(folder.as_path());
                let mut used = prefixed_uses(&code, &format!("crate::{module_path}::"));
                if !in_subfolder {
                    used.extend(prefixed_uses(&code, "super::"));
                }
                for (other, _) in used {
                    if other != *name && names.contains_key(&other) {
                        edges.entry(name.clone()).or_default().insert(other);
                    }
                }
            }
        }
        if let Some(circle) = find_cycle(&edges) {
            circles.push(format!(
                "src/{}: {}",
                folder.strip_prefix(&src).unwrap().display(),
                circle.join(" → ")
            ));
        }
    }
    assert!(
        circles.is_empty(),
        "files of a folder that use each other:\n{}",
        circles.join("\n")
    );
}

/// The longest a file of `src/` may be before its unit tests: past it, a file does more than one job.
const MAX_LINES_BEFORE_TESTS: usize = 900;

#[test]
fn no_file_is_longer_than_900_lines_before_its_tests() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut long = Vec::new();
    for file in rust_files(&src) {
        let text = std::fs::read_to_string(&file).unwrap();
        let lines = text
            .lines()
            .take_while(|line| !line.starts_with("#[cfg(test)]"))
            .count();
        if lines > MAX_LINES_BEFORE_TESTS {
            long.push(format!(
                "src/{}: {lines} lines",
                file.strip_prefix(&src).unwrap().display()
            ));
        }
    }
    assert!(
        long.is_empty(),
        "files over {MAX_LINES_BEFORE_TESTS} lines before their tests:\n{}",
        long.join("\n")
    );
}

#[test]
fn the_checker_sees_groups_inline_paths_and_circles() {
    let code = code_only(
        "use crate::{a, b::c, d::{e, f}};\n// crate::commented\nlet x = crate::g::h(\"crate::quoted\", '\"');\n\
         /* crate::block */ let y: &'static str = crate::i::J;",
    );
    let names: Vec<_> = crate_uses(&code).into_iter().map(|(name, _)| name).collect();
    assert_eq!(names, ["a", "b", "d", "g", "i"]);
    let found =
        test_modules("#[cfg(test)]\nmod helpers;\nfn f() {}\n#[cfg(test)]\n#[allow(x)]\nmod tests {}");
    let found: Vec<_> = found
        .into_iter()
        .map(|(_, name, inline)| (name, inline))
        .collect();
    assert_eq!(found, [("helpers".to_owned(), false), ("tests".to_owned(), true)]);
    let lib = "//! 1. [`util`]: helpers.\n//! 2. [`rewrite`] and [`alerts`]: features.\n";
    let layers = declared_layers(lib);
    assert_eq!(layers.get("util"), Some(&1));
    assert_eq!(layers.get("alerts"), Some(&2));
    let edges = BTreeMap::from([
        ("a".to_owned(), BTreeSet::from(["b".to_owned()])),
        ("b".to_owned(), BTreeSet::from(["c".to_owned()])),
        ("c".to_owned(), BTreeSet::from(["a".to_owned()])),
    ]);
    assert_eq!(
        find_cycle(&edges),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
}

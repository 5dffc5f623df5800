//! Reads the route list of Appendix A of the translation reference (every route the last V3 release defined) and
//! fails if any route has neither a rule nor an explicit pass-through entry in the built-in rule table.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;

use svcgate::rewrite::table::RuleTable;

const METHODS: [&str; 4] = ["GET", "POST", "PUT", "DELETE"];

/// `/projects/:id/issues/:issue_id/notes` → `/projects/:/issues/:/notes`: parameter names differ between the
/// reference and the rules, their positions do not.
fn shape(path: &str) -> String {
    path.split('/')
        .map(|segment| {
            if segment.starts_with(':') || segment.starts_with('*') {
                ":"
            } else {
                segment
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// Expands `{a,b}` alternatives and `[x]` / `(x)` optional parts.
fn expand(path: &str) -> Vec<String> {
    if let Some(start) = path.find(['{', '[', '(']) {
        let (open, close) = match &path[start..start + 1] {
            "{" => ('{', '}'),
            "[" => ('[', ']'),
            _ => ('(', ')'),
        };
        let end = start + path[start..].find(close).expect("balanced brackets");
        let inner = &path[start + 1..end];
        let alternatives: Vec<&str> = if open == '{' {
            inner.split(',').map(str::trim).collect()
        } else {
            vec!["", inner]
        };
        let mut out = Vec::new();
        for alternative in alternatives {
            out.extend(expand(&format!(
                "{}{}{}",
                &path[..start],
                alternative,
                &path[end + 1..]
            )));
        }
        return out;
    }
    vec![path.to_owned()]
}

/// `:id/...` means `/projects/:id/...`.
fn absolute(path: &str) -> String {
    if path.starts_with(":id") {
        format!("/projects/{path}")
    } else if path.starts_with('/') {
        path.to_owned()
    } else {
        format!("/{path}")
    }
}

/// Resolves `…/rest` against the last plain path of the row.
fn resolve_ellipsis(path: &str, base: &str) -> String {
    let Some(rest) = path.strip_prefix("…/") else {
        return path.to_owned();
    };
    let first = rest.split('/').next().unwrap_or("");
    let segments: Vec<&str> = base.split('/').collect();
    match segments.iter().position(|segment| *segment == first) {
        Some(at) => format!("{}{}", segments[..=at].join("/"), &rest[first.len()..]),
        None => format!("{base}/{rest}"),
    }
}

fn backticked(text: &str) -> Vec<String> {
    text.split('`').skip(1).step_by(2).map(str::to_owned).collect()
}

/// Parses one row's route cell into `METHOD /path` strings.
fn routes_of(file: &str, cell: &str) -> Vec<(String, String)> {
    let mut routes = Vec::new();
    // Two rows describe their routes in words rather than as paths; their patterns are spelled out here.
    if file == "templates.rb" {
        let kinds: Vec<String> = backticked(cell.split("same pattern for").nth(1).unwrap_or(""));
        for kind in kinds.iter().map(String::as_str).chain(["licenses"]) {
            for path in backticked(cell).iter().filter(|path| path.contains("licenses")) {
                for expanded in expand(&path.replace("licenses", kind)) {
                    routes.push(("GET".to_owned(), absolute(&expanded)));
                }
            }
        }
        return routes;
    }
    if file == "time_tracking_endpoints.rb" {
        let (prefixes, rest) = cell.split_once(": ").unwrap_or(("", cell));
        let kinds: Vec<&str> = if prefixes.contains("merge requests") {
            vec![":id/issues/:issue_id", ":id/merge_requests/:merge_request_id"]
        } else {
            vec![]
        };
        for clause in rest.split(';') {
            let method = METHODS
                .iter()
                .find(|method| clause.trim().starts_with(**method))
                .unwrap();
            for action in backticked(clause) {
                for kind in &kinds {
                    routes.push(((*method).to_owned(), absolute(&format!("{kind}/{action}"))));
                }
            }
        }
        return routes;
    }
    let mut base = String::new();
    // A `for …:` prefix names the values of a placeholder for the rest of the row.
    let mut placeholders: Vec<(&str, Vec<String>)> = Vec::new();
    for clause in cell.split(';') {
        let mut clause = clause.trim().to_owned();
        if clause.starts_with("plus time tracking") || clause.is_empty() {
            continue;
        }
        clause = clause.replace("(never mounted)", "");
        let singular = clause.contains("(+sing.)");
        clause = clause.replace("(+sing.)", "");
        if clause.trim_start().starts_with("for ") {
            let (head, body) = clause
                .split_once(": ")
                .map(|(h, b)| (h.to_owned(), b.to_owned()))
                .unwrap();
            let values = backticked(&head);
            placeholders.push((if body.contains("<p>") { "<p>" } else { "<t>" }, values));
            clause = body;
        }
        // Parenthesised parameter notes such as (`filepath`) name no route.
        while let Some(start) = clause.find("(`") {
            let end = start + clause[start..].find("`)").map_or(2, |end| end + 2);
            clause.replace_range(start..end, "");
        }
        let mut methods: Vec<String> = Vec::new();
        let mut words = String::new();
        for (index, part) in clause.split('`').enumerate() {
            if index % 2 == 0 {
                words = part.to_owned();
                continue;
            }
            let named: Vec<String> = METHODS
                .iter()
                .filter(|method| {
                    words
                        .split(|c: char| !c.is_ascii_alphabetic())
                        .any(|word| word == **method)
                })
                .map(|method| (*method).to_owned())
                .collect();
            if !named.is_empty() {
                methods = named;
            }
            let raw = if part.starts_with("…/") {
                resolve_ellipsis(part, &base)
            } else {
                base = part.to_owned();
                part.to_owned()
            };
            let mut paths = vec![raw];
            for (placeholder, values) in &placeholders {
                paths = paths
                    .iter()
                    .flat_map(|path| values.iter().map(move |value| path.replace(placeholder, value)))
                    .collect();
            }
            for path in paths {
                for expanded in expand(&path) {
                    let mut forms = vec![expanded.clone()];
                    if singular {
                        forms.push(expanded.replace("merge_requests/", "merge_request/"));
                    }
                    for form in forms {
                        for method in &methods {
                            routes.push((method.clone(), absolute(&form)));
                        }
                    }
                }
            }
        }
    }
    routes
}

fn appendix_rows() -> Vec<(String, String)> {
    // Appendix A of the specification, kept in the repository so that a clone tests on its own.
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/v3-routes.md");
    let text = std::fs::read_to_string(path).unwrap_or_else(|error| panic!("{path}: {error}"));
    let appendix = text.split("## Appendix A").nth(1).expect("Appendix A");
    appendix
        .lines()
        .filter(|line| line.starts_with("| `"))
        .filter_map(|line| {
            let cells: Vec<&str> = line.split(" | ").collect();
            let file = backticked(cells.first()?).first()?.clone();
            let routes = cells.get(1)?.trim_end_matches(" |").to_owned();
            Some((file, routes))
        })
        // Helpers, entities, the GitHub-compatibility files (forwarded unchanged) and EE-only files define no V3
        // route of their own to translate.
        .filter(|(file, _)| {
            !["helpers.rb", "entities.rb", "github.rb"].contains(&file.as_str()) && !file.starts_with("EE")
        })
        .collect()
}

#[test]
fn the_appendix_parser_expands_its_notations() {
    let routes = routes_of(
        "award_emoji.rb",
        "GET and POST `:id/{issues/:issue_id, snippets/:snippet_id}[/notes/:note_id]/award_emoji`; GET and DELETE `…/award_emoji/:award_id`",
    );
    assert_eq!(routes.len(), 16);
    assert!(routes.contains(&(
        "DELETE".to_owned(),
        "/projects/:id/snippets/:snippet_id/notes/:note_id/award_emoji/:award_id".to_owned()
    )));
    let routes = routes_of(
        "x.rb",
        "(+sing.) GET `:id/merge_requests/:merge_request_id`, PUT `…/merge`",
    );
    assert!(routes.contains(&(
        "PUT".to_owned(),
        "/projects/:id/merge_request/:merge_request_id/merge".to_owned()
    )));
    let routes = routes_of("t.rb", "POST `:id/(ref/:ref/)trigger/builds`");
    assert_eq!(routes.len(), 2);
}

#[test]
fn every_appendix_a_route_has_a_rule_or_a_pass_through_entry() {
    let table = RuleTable::builtin().unwrap();
    let known: BTreeSet<(String, String)> = table
        .rules()
        .iter()
        .map(|rule| (rule.v3.method.to_string(), shape(&rule.v3.template)))
        .collect();
    let rows = appendix_rows();
    assert!(rows.len() >= 30, "Appendix A rows found: {}", rows.len());
    let mut missing = Vec::new();
    let mut total = 0;
    for (file, cell) in &rows {
        let routes = routes_of(file, cell);
        assert!(!routes.is_empty(), "{file}: no route parsed from {cell:?}");
        for (method, path) in routes {
            total += 1;
            if !known.contains(&(method.clone(), shape(&path))) {
                missing.push(format!("{file}: {method} {path}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "{} of {total} routes have no rule:\n{}",
        missing.len(),
        missing.join("\n")
    );
    assert!(total > 200, "only {total} routes parsed");
}

//! The rule file loader: any UTF-8 text as an operator's rule file (`rules_dir`).
//!
//! The text is compiled alone (`loader::compile`), then as `RuleTable::from_sources` builds a table: after the
//! built-in `rules/entities.toml`, so that its rules can name the entities, with `{identifier}` substituted.
//! When a table builds, each of its rules is planned once for its own template (parameters filled with `1`), as
//! `svcgate translate` would: a rule the loader accepts must not make the planner panic.
//!
//! Checks: no panic; errors always say something.
#![no_main]

use libfuzzer_sys::fuzz_target;
use svcgate::rewrite::explain::explain;
use svcgate::rewrite::loader::compile;
use svcgate::rewrite::rule::Segment;
use svcgate::rewrite::table::RuleTable;

const ENTITIES: &str = include_str!("../../rules/entities.toml");

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let name = "fuzz.toml".to_owned();
    if let Err(error) = compile(&[(name.clone(), text.to_owned())]) {
        assert!(!error.0.is_empty() && error.0.iter().all(|line| !line.is_empty()));
    }
    let sources = [
        ("rules/entities.toml".to_owned(), ENTITIES.to_owned()),
        (name, text.to_owned()),
    ];
    let table = match RuleTable::from_sources(&sources, "svc") {
        Ok(table) => table,
        Err(error) => {
            assert!(!error.0.is_empty());
            return;
        }
    };
    for rule in table.rules() {
        let mut path = String::new();
        for segment in &rule.v3.segments {
            path.push('/');
            match segment {
                Segment::Literal(text) => path.push_str(text),
                Segment::Param(_) | Segment::Rest(_) => path.push('1'),
            }
        }
        let _ = explain(&table, &format!("{} /api/v3{path}", rule.v3.method), None, &[]);
    }
});

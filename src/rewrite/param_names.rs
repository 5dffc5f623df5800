//! V4 error answers told in V3's words: a parameter error names the V3 parameter the client sent.
//!
//! A rule that renames `visibility_level` to `visibility` sends V4 a parameter the client never wrote; when V4
//! refuses it (`{"error": "visibility does not have a valid value"}`, `{"message": {"visibility": […]}}`), the
//! V3 client must read `visibility_level`, as a V3 server would have said. Pure functions, no I/O.

use serde_json::{Map, Value};

use super::rule::Rule;

/// `(V4 name, V3 name)` for every parameter the rule renames: the V3 name the client sent (`sent`, as recorded
/// by the request reader), else the rule's first V3 name for that V4 name. Array suffixes (`[]`) are left out.
pub fn v3_names(rule: &Rule, sent: &[(String, String)]) -> Vec<(String, String)> {
    let mut names: Vec<(String, String)> = Vec::new();
    let bare = |name: &str| name.strip_suffix("[]").unwrap_or(name).to_owned();
    let renames = sent.iter().map(|(to, from)| (to.as_str(), from.as_str())).chain(
        rule.conversions
            .iter()
            .filter(|conversion| conversion.from != conversion.to)
            .map(|conversion| (conversion.to.as_str(), conversion.from.as_str())),
    );
    for (to, from) in renames {
        let (to, from) = (bare(to), bare(from));
        if to != from && !names.iter().any(|(known, _)| *known == to) {
            names.push((to, from));
        }
    }
    names
}

/// The error body with each V4 parameter name replaced by its V3 name: whole words in `error` and `message`
/// texts, and the keys of a `message` object. Any other body is returned as it is.
pub fn rename_in_error(body: Value, names: &[(String, String)]) -> Value {
    let Value::Object(object) = body else {
        return body;
    };
    let object = object
        .into_iter()
        .map(|(key, value)| {
            let value = match (key.as_str(), value) {
                ("error" | "message", Value::String(text)) => Value::String(rename_words(&text, names)),
                ("message", Value::Object(fields)) => Value::Object(rename_keys(fields, names)),
                (_, other) => other,
            };
            (key, value)
        })
        .collect();
    Value::Object(object)
}

fn rename_keys(fields: Map<String, Value>, names: &[(String, String)]) -> Map<String, Value> {
    fields
        .into_iter()
        .map(|(key, value)| {
            let key = names
                .iter()
                .find(|(v4, _)| *v4 == key)
                .map_or(key, |(_, v3)| v3.clone());
            (key, value)
        })
        .collect()
}

fn is_word_char(character: char) -> bool {
    character.is_ascii_alphanumeric() || character == '_'
}

/// Replaces whole-word occurrences (not inside a longer identifier) of each V4 name with its V3 name.
fn rename_words(text: &str, names: &[(String, String)]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut word_start = None;
    let flush = |out: &mut String, word: &str| match names.iter().find(|(v4, _)| v4 == word) {
        Some((_, v3)) => out.push_str(v3),
        None => out.push_str(word),
    };
    for (at, character) in text.char_indices() {
        match (is_word_char(character), word_start) {
            (true, None) => word_start = Some(at),
            (false, Some(start)) => {
                flush(&mut out, &text[start..at]);
                word_start = None;
                out.push(character);
            }
            (false, None) => out.push(character),
            (true, Some(_)) => {}
        }
    }
    if let Some(start) = word_start {
        flush(&mut out, &text[start..]);
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn names() -> Vec<(String, String)> {
        vec![
            ("visibility".to_owned(), "visibility_level".to_owned()),
            ("branch".to_owned(), "branch_name".to_owned()),
        ]
    }

    #[test]
    fn error_texts_and_message_keys_name_the_v3_parameter() {
        for (v4, v3) in [
            (
                json!({"error": "visibility does not have a valid value"}),
                json!({"error": "visibility_level does not have a valid value"}),
            ),
            (
                json!({"error": "branch is missing, visibility is invalid"}),
                json!({"error": "branch_name is missing, visibility_level is invalid"}),
            ),
            (
                json!({"message": {"visibility": ["is restricted"], "name": ["is taken"]}}),
                json!({"message": {"visibility_level": ["is restricted"], "name": ["is taken"]}}),
            ),
            // Only whole words: a longer identifier that contains a V4 name is left alone.
            (
                json!({"message": "default_branch and visibility_foo are fine"}),
                json!({"message": "default_branch and visibility_foo are fine"}),
            ),
            (json!(["branch"]), json!(["branch"])),
        ] {
            assert_eq!(rename_in_error(v4, &names()), v3);
        }
    }

    #[test]
    fn the_name_the_client_sent_wins_over_the_rules_first() {
        let text = r#"
release = "9.0"
[[rule]]
v3 = "POST /projects"
section = "2.1"
convert = [
  { from = "visibility_level", to = "visibility", with = "visibility_level" },
  { from = "public", to = "visibility", with = "public_flag", unless = "visibility_level" },
]
"#;
        let (rules, _) = crate::rewrite::loader::compile(&[("t.toml".to_owned(), text.to_owned())]).unwrap();
        let rule = &rules[0];
        assert_eq!(
            v3_names(rule, &[("visibility".into(), "public".into())]),
            vec![("visibility".to_owned(), "public".to_owned())]
        );
        assert_eq!(
            v3_names(rule, &[]),
            vec![("visibility".to_owned(), "visibility_level".to_owned())]
        );
    }
}

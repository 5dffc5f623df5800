//! How values read to a person on the pages: times (UTC text that `app.js` turns into local or relative time,
//! the ISO form kept for hovering), counted nouns with their right plural, status words, and a payload's
//! custom fields as a tree.
//!
//! Everything here is plain text; the templates escape it.

use serde_json::Value;

/// A moment as a page shows it: `<time datetime="{iso}" title="{iso}">{text}</time>`, where the text is what a
/// reader without JavaScript sees; `app.js` replaces it with local (or relative) time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimeView {
    /// The stored RFC 3339 UTC time.
    pub iso: String,
    /// `2026-11-24 17:20:05 UTC`.
    pub utc: String,
    /// `5 minutes ago`, as of rendering.
    pub relative: String,
}

/// The view of a stored time; an unreadable one is shown as it is.
pub fn time_view(iso: &str) -> TimeView {
    TimeView {
        iso: iso.to_owned(),
        utc: utc_text(iso),
        relative: relative(iso, time::OffsetDateTime::now_utc()),
    }
}

/// `2026-11-24 17:20:05 UTC` for an RFC 3339 time (fractions dropped); anything unreadable as it is.
pub fn utc_text(iso: &str) -> String {
    let Some(then) = crate::util::time_format::parse_time(iso) else {
        return iso.to_owned();
    };
    let then = then.to_offset(time::UtcOffset::UTC);
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02} UTC",
        then.year(),
        u8::from(then.month()),
        then.day(),
        then.hour(),
        then.minute(),
        then.second()
    )
}

/// How long before `now` the time `iso` was, in words (`just now`, `1 minute ago`, `3 days ago`; a future time
/// reads `in a moment` or `in 2 minutes`).
pub fn relative(iso: &str, now: time::OffsetDateTime) -> String {
    let Some(then) = crate::util::time_format::parse_time(iso) else {
        return iso.to_owned();
    };
    let seconds = (now - then).whole_seconds();
    let (ago, amount) = (seconds >= 0, seconds.unsigned_abs());
    let words = match amount {
        0..=44 if ago => return "just now".to_owned(),
        0..=44 => return "in a moment".to_owned(),
        45..=3599 => plural(amount.div_ceil(60).min(59), "minute", "minutes"),
        3600..=86_399 => plural(amount / 3600, "hour", "hours"),
        _ => plural(amount / 86_400, "day", "days"),
    };
    if ago {
        format!("{words} ago")
    } else {
        format!("in {words}")
    }
}

/// `1 event`, `2 events`, `0 events`.
pub fn plural(count: u64, one: &str, many: &str) -> String {
    if count == 1 {
        format!("1 {one}")
    } else {
        format!("{count} {many}")
    }
}

/// A status as a word with a capital (`Triggered`), for its badge.
pub fn status_label(status: &str) -> String {
    let mut label = status.to_owned();
    if let Some(first) = label.get_mut(0..1) {
        first.make_ascii_uppercase();
    }
    label
}

/// One step of a JSON tree written as nested lists: a branch opens, a leaf, a branch closes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TreeNode {
    /// A key whose value is an object or array: `<li>key<ul>`.
    Open(String),
    /// A key and its scalar value as text.
    Leaf(String, String),
    /// The end of the last opened branch: `</ul></li>`.
    Close,
}

/// The fields of `fields` as a tree, depth first in the payload's order. Array items are keyed `1`, `2`, …;
/// strings are shown without quotes, other scalars as JSON; an empty object or array is a leaf reading `{}` or
/// `[]`.
pub fn tree<'a>(fields: impl IntoIterator<Item = (&'a String, &'a Value)>) -> Vec<TreeNode> {
    let mut nodes = Vec::new();
    for (key, value) in fields {
        push_node(&mut nodes, key.clone(), value);
    }
    nodes
}

fn push_node(nodes: &mut Vec<TreeNode>, key: String, value: &Value) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            nodes.push(TreeNode::Open(key));
            for (child, value) in map {
                push_node(nodes, child.clone(), value);
            }
            nodes.push(TreeNode::Close);
        }
        Value::Array(items) if !items.is_empty() => {
            nodes.push(TreeNode::Open(key));
            for (index, value) in items.iter().enumerate() {
                push_node(nodes, (index + 1).to_string(), value);
            }
            nodes.push(TreeNode::Close);
        }
        Value::String(text) => nodes.push(TreeNode::Leaf(key, text.clone())),
        other => nodes.push(TreeNode::Leaf(key, other.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn counted_nouns_take_their_plural_except_for_one() {
        assert_eq!(plural(1, "event", "events"), "1 event");
        assert_eq!(plural(0, "event", "events"), "0 events");
        assert_eq!(plural(2, "event", "events"), "2 events");
    }

    #[test]
    fn relative_times_read_as_words_with_plurals() {
        let now =
            crate::util::time_format::parse_time("2026-11-24T12:00:00Z").unwrap_or_else(|| panic!("now"));
        for (then, words) in [
            ("2026-11-24T11:59:50Z", "just now"),
            ("2026-11-24T11:59:00Z", "1 minute ago"),
            ("2026-11-24T11:55:00Z", "5 minutes ago"),
            ("2026-11-24T11:00:00Z", "1 hour ago"),
            ("2026-11-24T07:00:00Z", "5 hours ago"),
            ("2026-11-23T12:00:00Z", "1 day ago"),
            ("2026-11-20T12:00:00Z", "4 days ago"),
            ("2026-11-24T12:02:00Z", "in 2 minutes"),
            ("2026-11-24T12:00:10Z", "in a moment"),
            ("not a time", "not a time"),
        ] {
            assert_eq!(relative(then, now), words, "{then}");
        }
    }

    #[test]
    fn utc_text_drops_fractions_and_names_utc() {
        assert_eq!(utc_text("2026-11-24T17:20:05.123Z"), "2026-11-24 17:20:05 UTC");
        assert_eq!(utc_text("2026-11-24T18:20:05+01:00"), "2026-11-24 17:20:05 UTC");
        assert_eq!(utc_text("yesterday"), "yesterday");
    }

    #[test]
    fn custom_fields_become_a_tree_in_payload_order() {
        let payload = json!({"runbook": "https://r.example", "labels": {"team": "db", "tags": ["a", 2]}, "n": null, "e": {}});
        let fields = payload.as_object().map(tree).unwrap_or_default();
        let leaf = |key: &str, value: &str| TreeNode::Leaf(key.to_owned(), value.to_owned());
        assert_eq!(
            fields,
            vec![
                leaf("runbook", "https://r.example"),
                TreeNode::Open("labels".to_owned()),
                leaf("team", "db"),
                TreeNode::Open("tags".to_owned()),
                leaf("1", "a"),
                leaf("2", "2"),
                TreeNode::Close,
                TreeNode::Close,
                leaf("n", "null"),
                leaf("e", "{}"),
            ]
        );
    }
}

//! The service's brand word in route and field names: `svc` in `/templates/svc_ci_ymls` and in an alert's
//! `svc_environment_name`.
//!
//! A server built under another brand carries its own word in the same places, so the word is a setting
//! (`identifier_word`, default `svc`). Rule files write it as the placeholder [`PLACEHOLDER`], replaced when the
//! table is loaded. The alert payload readers match field names inside serde visitors that have no
//! configuration at hand, so the names built from the word are set once per process, at start-up, before any
//! request is read ([`set`]); until then they are the default word's.

use std::sync::OnceLock;

/// The word unless configured.
pub const DEFAULT_WORD: &str = "svc";

/// How rule files write the word: `GET /{identifier}_ci_ymls`.
pub const PLACEHOLDER: &str = "{identifier}";

/// The names built from one word.
#[derive(Debug)]
pub struct Names {
    /// The word itself (`svc`).
    pub word: String,
    /// The alert field naming an environment (`svc_environment_name`).
    pub environment_name: String,
}

impl Names {
    fn of(word: &str) -> Self {
        Names {
            word: word.to_owned(),
            environment_name: format!("{word}_environment_name"),
        }
    }
}

static NAMES: OnceLock<Names> = OnceLock::new();

/// Why a word cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WordError {
    /// Not 1–32 lowercase ASCII letters and digits, starting with a letter.
    #[error("{0:?} must be 1 to 32 lowercase letters and digits, starting with a letter")]
    Invalid(String),
    /// This process already runs with another word.
    #[error("this process already uses the identifier word {0:?}")]
    AlreadySet(String),
}

/// Checks that `word` can stand in route segments and field names.
pub fn check(word: &str) -> Result<(), WordError> {
    let valid = (1..=32).contains(&word.len())
        && word.starts_with(|character: char| character.is_ascii_lowercase())
        && word
            .chars()
            .all(|character| character.is_ascii_lowercase() || character.is_ascii_digit());
    if valid {
        Ok(())
    } else {
        Err(WordError::Invalid(word.to_owned()))
    }
}

/// Sets the process's word; setting the same word again is fine, another one is refused.
pub fn set(word: &str) -> Result<(), WordError> {
    check(word)?;
    let names = NAMES.get_or_init(|| Names::of(word));
    if names.word == word {
        Ok(())
    } else {
        Err(WordError::AlreadySet(names.word.clone()))
    }
}

/// The names of the process's word (the default word's until [`set`]).
pub fn names() -> &'static Names {
    NAMES.get_or_init(|| Names::of(DEFAULT_WORD))
}

/// A rule file's text with the placeholder replaced by `word` (line numbers are kept).
pub fn substitute(text: &str, word: &str) -> String {
    text.replace(PLACEHOLDER, word)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_that_fit_route_segments_and_field_names_are_accepted() {
        for word in ["svc", "acme", "a1"] {
            assert_eq!(check(word), Ok(()), "{word}");
        }
        for word in ["", "Svc", "1svc", "s-vc", "s_vc", "s/vc", &"a".repeat(33)] {
            assert!(check(word).is_err(), "{word}");
        }
    }

    #[test]
    fn the_placeholder_is_replaced_and_lines_are_kept() {
        let text = "v3 = \"GET /{identifier}_ci_ymls\"\nv4 = \"GET /templates/{identifier}_ci_ymls\"\n";
        let replaced = substitute(text, "acme");
        assert_eq!(
            replaced,
            "v3 = \"GET /acme_ci_ymls\"\nv4 = \"GET /templates/acme_ci_ymls\"\n"
        );
        assert_eq!(replaced.lines().count(), text.lines().count());
    }
}

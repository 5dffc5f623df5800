//! Query strings, form bodies and path segments as the gateway reads and writes them: pairs parsed and encoded
//! (`application/x-www-form-urlencoded`), path segments percent-encoded and decoded.
//!
//! Neutral text helpers used by the V3 translation, the access checks, the alert API and the pages alike, so that
//! none of them takes them from another.

/// Parses a query string or form body into pairs.
pub fn parse_pairs(text: &[u8]) -> Vec<(String, String)> {
    form_urlencoded::parse(text).into_owned().collect()
}

/// Serialises pairs as a query string or form body.
pub fn encode_pairs(pairs: &[(String, String)]) -> String {
    let mut serializer = form_urlencoded::Serializer::new(String::new());
    for (name, value) in pairs {
        serializer.append_pair(name, value);
    }
    serializer.finish()
}

/// The value of the first pair named `name`.
pub fn pair_value<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.as_str())
}

/// A path with its query pairs, if any.
pub fn with_query(path: &str, pairs: &[(String, String)]) -> String {
    if pairs.is_empty() {
        path.to_owned()
    } else {
        format!("{path}?{}", encode_pairs(pairs))
    }
}

/// Percent-decodes a path segment (invalid UTF-8 is replaced, never a panic).
pub fn decode(value: &str) -> String {
    percent_encoding::percent_decode_str(value)
        .decode_utf8_lossy()
        .into_owned()
}

/// Percent-encodes a value as one path segment (slashes included).
pub fn encode_segment(value: &str) -> String {
    /// Everything but RFC 3986's unreserved characters.
    const SEGMENT: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
        .remove(b'-')
        .remove(b'.')
        .remove(b'_')
        .remove(b'~');
    percent_encoding::utf8_percent_encode(value, SEGMENT).to_string()
}

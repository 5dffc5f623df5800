//! A small `multipart/form-data` parser: text fields become plain parameters, file fields become objects
//! `{filename, content_type, content}` with base64 content.

use serde_json::{json, Map, Value};

use crate::sha::base64_encode;

/// The boundary of a `multipart/form-data` content type.
pub fn boundary(content_type: &str) -> Option<String> {
    content_type.split(';').skip(1).find_map(|part| {
        let (k, v) = part.trim().split_once('=')?;
        k.eq_ignore_ascii_case("boundary")
            .then(|| v.trim_matches('"').to_string())
            .filter(|b| !b.is_empty())
    })
}

fn find(haystack: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    if needle.is_empty() || from > haystack.len() {
        return None;
    }
    haystack[from..]
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| p + from)
}

fn disposition_param(header: &str, name: &str) -> Option<String> {
    header.split(';').skip(1).find_map(|part| {
        let (k, v) = part.trim().split_once('=')?;
        k.trim()
            .eq_ignore_ascii_case(name)
            .then(|| v.trim().trim_matches('"').to_string())
    })
}

/// Parses the parts of a body; None when it is not well-formed.
pub fn parse(body: &[u8], boundary: &str) -> Option<Map<String, Value>> {
    let delimiter = format!("--{boundary}");
    let mut out = Map::new();
    let mut pos = find(body, delimiter.as_bytes(), 0)? + delimiter.len();
    loop {
        if body.get(pos..pos + 2) == Some(b"--") {
            return Some(out);
        }
        if body.get(pos..pos + 2) == Some(b"\r\n") {
            pos += 2;
        }
        let header_end = find(body, b"\r\n\r\n", pos)?;
        let headers = String::from_utf8_lossy(&body[pos..header_end]).into_owned();
        let data_start = header_end + 4;
        let next = find(body, format!("\r\n{delimiter}").as_bytes(), data_start)?;
        let data = &body[data_start..next];
        let mut name = None;
        let mut filename = None;
        let mut content_type = None;
        for line in headers.split("\r\n") {
            let Some((key, value)) = line.split_once(':') else {
                continue;
            };
            if key.trim().eq_ignore_ascii_case("content-disposition") {
                name = disposition_param(value, "name");
                filename = disposition_param(value, "filename");
            } else if key.trim().eq_ignore_ascii_case("content-type") {
                content_type = Some(value.trim().to_string());
            }
        }
        if let Some(name) = name {
            let value = match filename {
                Some(f) => json!({
                    "filename": f,
                    "content_type": content_type.unwrap_or_else(|| "application/octet-stream".into()),
                    "content": base64_encode(data),
                }),
                None => Value::String(String::from_utf8_lossy(data).into_owned()),
            };
            out.insert(name, value);
        }
        pos = next + 2 + delimiter.len();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_fields_and_files() {
        let body = b"--XyZ\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nhello\r\n--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a b.png\"\r\nContent-Type: image/png\r\n\r\n\x89PNG\r\n--XyZ--\r\n";
        let b = boundary("multipart/form-data; boundary=XyZ").unwrap_or_default();
        let parts = parse(body, &b).unwrap_or_default();
        assert_eq!(parts["title"], "hello");
        assert_eq!(parts["file"]["filename"], "a b.png");
        assert_eq!(parts["file"]["content"], base64_encode(b"\x89PNG"));
        assert!(parse(b"garbage", "XyZ").is_none());
    }
}

//! The JSON a sender posts as one field of a `multipart/form-data` body (Uptime Kuma's "Preset -
//! multipart/form-data": the whole JSON in a field named `data`), for a format whose `form_field` names it.
//!
//! The body has been read whole, within the intake's limits, before it gets here; [`multer`] (the form parser
//! axum uses) splits it. It copies the body into its own buffer once, and the field is a slice of that buffer
//! (a field that came in several chunks is joined): only the named field's bytes stay held; other fields, and
//! files, are skipped.

use bytes::Bytes;
use http::HeaderMap;

/// Why a form's JSON field could not be taken out of its body (400, `invalid_form`).
#[derive(Debug, thiserror::Error)]
pub enum FormError {
    /// The `Content-Type` names no boundary.
    #[error("the multipart/form-data body names no boundary in its Content-Type")]
    NoBoundary,
    /// The body is not a well-formed form.
    #[error("the multipart/form-data body could not be read: {0}")]
    Malformed(String),
    /// The form has no field of the format's name.
    #[error("the multipart/form-data body has no field {0:?}, which holds the payload's JSON")]
    NoField(String),
}

/// Whether `headers` label the body `multipart/form-data`.
pub fn is_form(headers: &HeaderMap) -> bool {
    content_type(headers)
        .and_then(|value| value.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("multipart/form-data"))
}

/// The bytes of the form field `name` in `body`, a `multipart/form-data` body labelled by `headers`.
pub async fn field(headers: &HeaderMap, body: Bytes, name: &str) -> Result<Bytes, FormError> {
    let boundary = content_type(headers)
        .and_then(|value| multer::parse_boundary(value).ok())
        .ok_or(FormError::NoBoundary)?;
    let whole = futures_util::stream::once(async move { Ok::<_, std::convert::Infallible>(body) });
    let mut form = multer::Multipart::new(whole, boundary);
    let malformed = |error: multer::Error| FormError::Malformed(error.to_string());
    while let Some(mut field) = form.next_field().await.map_err(malformed)? {
        if field.name() == Some(name) {
            let mut chunks = Vec::new();
            while let Some(chunk) = field.chunk().await.map_err(malformed)? {
                chunks.push(chunk);
            }
            return Ok(match chunks.len() {
                1 => chunks.swap_remove(0),
                _ => Bytes::from(chunks.concat()),
            });
        }
    }
    Err(FormError::NoField(name.to_owned()))
}

fn content_type(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use proptest::prelude::*;

    fn labelled(content_type: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(http::header::CONTENT_TYPE, content_type.parse().unwrap());
        headers
    }

    /// A form as the `form-data` package (Uptime Kuma's) writes it: `--boundary`, the part's head, a blank line,
    /// its bytes, and the closing `--boundary--`.
    fn form(boundary: &str, parts: &[(&str, &[u8])]) -> Vec<u8> {
        let mut body = Vec::new();
        for (name, bytes) in parts {
            body.extend_from_slice(
                format!("--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n").as_bytes(),
            );
            body.extend_from_slice(bytes);
            body.extend_from_slice(b"\r\n");
        }
        body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
        body
    }

    const BOUNDARY: &str = "--------------------------582391537210346582746364";

    #[tokio::test]
    async fn the_named_field_is_taken_out_and_the_others_are_skipped() {
        let json = br#"{"heartbeat":{"status":0},"monitor":{"id":7},"msg":"down"}"#;
        let body = form(BOUNDARY, &[("other", b"x"), ("data", json), ("after", b"y")]);
        let headers = labelled(&format!("multipart/form-data; boundary={BOUNDARY}"));
        assert!(is_form(&headers));
        let found = field(&headers, Bytes::from(body), "data").await.unwrap();
        assert_eq!(&found[..], &json[..]);
    }

    #[tokio::test]
    async fn a_form_without_the_field_without_a_boundary_or_cut_short_is_an_error_that_says_so() {
        let with_boundary = labelled(&format!("multipart/form-data; boundary={BOUNDARY}"));
        let no_field = form(BOUNDARY, &[("other", b"{}")]);
        assert!(matches!(
            field(&with_boundary, Bytes::from(no_field), "data").await,
            Err(FormError::NoField(name)) if name == "data"
        ));
        let without = labelled("multipart/form-data");
        assert!(matches!(
            field(&without, Bytes::from_static(b"{}"), "data").await,
            Err(FormError::NoBoundary)
        ));
        let mut cut = form(BOUNDARY, &[("data", b"{}")]);
        cut.truncate(30);
        assert!(matches!(
            field(&with_boundary, Bytes::from(cut), "data").await,
            Err(FormError::Malformed(_))
        ));
    }

    #[test]
    fn only_multipart_form_data_is_a_form() {
        assert!(is_form(&labelled("Multipart/Form-Data; boundary=x")));
        assert!(!is_form(&labelled("application/json")));
        assert!(!is_form(&labelled("multipart/mixed; boundary=x")));
        assert!(!is_form(&HeaderMap::new()));
    }

    proptest! {
        /// Any bytes after a form's opening boundary, and any well-formed form cut short or with a byte changed,
        /// are an answer, never a panic; a well-formed form always gives its field back byte for byte.
        #[test]
        fn any_body_is_an_answer_and_any_field_comes_back_whole(
            junk in proptest::collection::vec(any::<u8>(), 0..512),
            cut in any::<prop::sample::Index>(),
            changed in any::<prop::sample::Index>(),
            byte in any::<u8>(),
            value in proptest::collection::vec(any::<u8>(), 0..512),
        ) {
            let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
            let headers = labelled(&format!("multipart/form-data; boundary={BOUNDARY}"));
            let mut after_head = format!("--{BOUNDARY}\r\n").into_bytes();
            after_head.extend_from_slice(&junk);
            let _ = runtime.block_on(field(&headers, Bytes::from(after_head), "data"));
            let whole = form(BOUNDARY, &[("other", b"x"), ("data", &junk), ("after", b"y")]);
            let mut mutated = whole.clone();
            let at = changed.index(mutated.len());
            mutated[at] = byte;
            let _ = runtime.block_on(field(&headers, Bytes::from(mutated), "data"));
            let short = whole[..cut.index(whole.len())].to_vec();
            let _ = runtime.block_on(field(&headers, Bytes::from(short), "data"));
            // A value holding the boundary line itself would end the part early: the sender's encoder picks a
            // boundary its values do not hold, so such a value is not one a form carries.
            let delimiter = format!("\r\n--{BOUNDARY}");
            prop_assume!(!value.windows(delimiter.len()).any(|w| w == delimiter.as_bytes()));
            let body = form(BOUNDARY, &[("data", &value)]);
            let found = runtime.block_on(field(&headers, Bytes::from(body), "data")).unwrap();
            prop_assert_eq!(&found[..], &value[..]);
        }
    }
}

//! Pagination headers on the way back to a V3 client: `Link` addresses point at the gateway's V3 route, and page
//! numbers move to the V3 page base (0 for commits). Pure functions on a header map.

use http::header::HeaderMap;
use http::HeaderValue;

use crate::util::url_parts::{encode_pairs, parse_pairs};

/// The headers V4 sends with every list.
pub const PAGINATION_HEADERS: [&str; 7] = [
    "x-total",
    "x-total-pages",
    "x-page",
    "x-per-page",
    "x-next-page",
    "x-prev-page",
    "link",
];

/// Removes every pagination header (for lists the gateway answers whole, as V3 did).
pub fn remove(headers: &mut HeaderMap) {
    for name in PAGINATION_HEADERS {
        headers.remove(name);
    }
}

fn shift_page(value: &str, page_base: u8) -> String {
    match value.trim().parse::<u64>() {
        Ok(page) if page_base == 0 => page.saturating_sub(1).to_string(),
        _ => value.to_owned(),
    }
}

/// Rewrites `Link` to `origin` + `v3_path` (keeping each link's query) and shifts page numbers to `page_base`.
pub fn rewrite(headers: &mut HeaderMap, origin: &str, v3_path: &str, page_base: u8) {
    for name in ["x-page", "x-next-page", "x-prev-page"] {
        let shifted = headers
            .get(name)
            .and_then(|value| value.to_str().ok())
            .map(|value| shift_page(value, page_base));
        if let Some(value) = shifted.and_then(|text| HeaderValue::from_str(&text).ok()) {
            headers.insert(name, value);
        }
    }
    let Some(link) = headers.get("link").and_then(|value| value.to_str().ok()) else {
        return;
    };
    let rewritten: Vec<String> = link
        .split(',')
        .filter_map(|part| {
            let (target, rest) = part.trim().strip_prefix('<')?.split_once('>')?;
            let query = target.split_once('?').map_or("", |(_, query)| query);
            let pairs: Vec<(String, String)> = parse_pairs(query.as_bytes())
                .into_iter()
                .map(|(name, value)| {
                    let value = if name == "page" {
                        shift_page(&value, page_base)
                    } else {
                        value
                    };
                    (name, value)
                })
                .collect();
            Some(format!(
                "<{origin}/api/v3{v3_path}?{}>{rest}",
                encode_pairs(&pairs)
            ))
        })
        .collect();
    match HeaderValue::from_str(&rewritten.join(", ")) {
        Ok(value) => {
            headers.insert("link", value);
        }
        Err(_) => {
            headers.remove("link");
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        pairs
            .iter()
            .map(|(name, value)| {
                (
                    http::HeaderName::from_static(name),
                    HeaderValue::from_static(value),
                )
            })
            .collect()
    }

    #[test]
    fn links_point_at_the_gateways_v3_route() {
        let mut map = headers(&[(
            "link",
            "<http://backend:81/api/v4/projects?membership=true&page=2&per_page=20>; rel=\"next\", <http://backend:81/api/v4/projects?membership=true&page=1&per_page=20>; rel=\"first\"",
        )]);
        rewrite(&mut map, "https://gate.example", "/projects", 1);
        assert_eq!(
            map["link"],
            "<https://gate.example/api/v3/projects?membership=true&page=2&per_page=20>; rel=\"next\", <https://gate.example/api/v3/projects?membership=true&page=1&per_page=20>; rel=\"first\""
        );
    }

    #[test]
    fn zero_based_routes_see_page_numbers_minus_one() {
        let mut map = headers(&[
            ("x-page", "1"),
            ("x-next-page", "2"),
            ("x-prev-page", ""),
            (
                "link",
                "<http://b/api/v4/projects/1/repository/commits?page=2>; rel=\"next\"",
            ),
        ]);
        rewrite(&mut map, "http://g", "/projects/1/repository/commits", 0);
        assert_eq!(map["x-page"], "0");
        assert_eq!(map["x-next-page"], "1");
        assert_eq!(map["x-prev-page"], "");
        assert_eq!(
            map["link"],
            "<http://g/api/v3/projects/1/repository/commits?page=1>; rel=\"next\""
        );
    }
}

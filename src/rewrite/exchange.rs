//! One translated request: the V4 target built from a rule, and the calls made for it.
//!
//! An [`Exchange`] is what every stage after translation shares: the rule, the path parameters (ids already
//! translated), the V4 path and query, and the [`Caller`] that makes backend calls with the client's credentials.

use crate::backend::pool::BackendBody;
use bytes::Bytes;
use http::header::HeaderMap;
use http::{Response, StatusCode};
use serde_json::Value;

use super::backend::{header_number, Caller};
use super::request::V3Request;
use super::rule::Rule;
use crate::http::error::GatewayError;
use crate::util::url_parts::{decode, with_query};

/// What the backend (or a procedure) answered, before the V3 answer is built from it.
pub enum Outcome {
    /// A backend response not read yet.
    Stream(Response<BackendBody>),
    /// A JSON answer read or built by the gateway.
    Json {
        /// Its status.
        status: StatusCode,
        /// Its headers (pagination ones included).
        headers: HeaderMap,
        /// Its body.
        body: Value,
    },
}

impl Outcome {
    /// A JSON outcome without headers.
    pub fn json(status: StatusCode, body: Value) -> Self {
        Outcome::Json {
            status,
            headers: HeaderMap::new(),
            body,
        }
    }
}

/// A V3 request translated by its rule.
pub struct Exchange<'a> {
    /// The rule.
    pub rule: &'a Rule,
    /// Makes backend calls for this client.
    pub caller: Caller<'a>,
    /// Path parameters as received (percent-encoded), plus the translated iids and moved request parameters.
    pub params: Vec<(String, String)>,
    /// The V4 path (`/api/v4/…`), without query.
    pub v4_path: String,
    /// The V4 query pairs.
    pub query: Vec<(String, String)>,
    /// `(V4 name, V3 name)` of the parameters the rule renames, to name them as the client did in errors.
    pub v3_names: Vec<(String, String)>,
    /// The cap on whole collections.
    pub max_collected: usize,
}

impl Exchange<'_> {
    /// A path parameter, percent-decoded.
    pub fn param(&self, name: &str) -> Option<String> {
        self.params
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| decode(value))
    }

    /// A path parameter as received.
    pub fn raw_param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    /// The V4 path and query.
    pub fn target(&self) -> String {
        with_query(&self.v4_path, &self.query)
    }

    /// `/api/v4` + a rule path template whose `:param`s are this request's path parameters.
    pub fn fill_path(&self, template: &str) -> String {
        super::plan::fill_path(template, &self.params)
    }

    /// Sends the translated request with the client's body.
    pub async fn send(&self, request: V3Request) -> Result<Outcome, GatewayError> {
        let response = self
            .caller
            .send(
                self.rule.v4.method.clone(),
                &self.target(),
                request.into_payload(),
            )
            .await?;
        Ok(Outcome::Stream(response))
    }

    /// A rule's `refetch`: when the call succeeded, its answer is read and dropped and the resource at `path`
    /// (`/api/v4/…`) is answered instead, under the call's own status; a failed call is answered as it is.
    pub async fn refetch(&self, outcome: Outcome, path: &str) -> Result<Outcome, GatewayError> {
        let status = match outcome {
            Outcome::Stream(response) if response.status().is_success() => {
                let status = response.status();
                self.caller.read_bytes(response).await?;
                status
            }
            Outcome::Json { status, .. } if status.is_success() => status,
            failed => return Ok(failed),
        };
        let fetched = self.caller.get_json(path).await?;
        Ok(Outcome::json(status, fetched.body))
    }

    /// Reads every page of a V4 list (100 a page) into one array, refusing more than the cap.
    pub async fn collect_pages(
        &self,
        path: &str,
        query: &[(String, String)],
    ) -> Result<Vec<Value>, GatewayError> {
        let mut items = Vec::new();
        let mut page = 1;
        loop {
            let pairs = super::plan::page_query(query, page);
            let answer = self.caller.get_json(&with_query(path, &pairs)).await?;
            let Value::Array(batch) = answer.body else {
                return Err(GatewayError::BadBackendAnswer(
                    "a list answered with something else".to_owned(),
                ));
            };
            let empty = batch.is_empty();
            items.extend(batch);
            if items.len() > self.max_collected {
                return Err(GatewayError::CollectionTooLarge(self.max_collected));
            }
            match header_number(&answer.headers, "x-next-page") {
                Some(next) if next > page && !empty => page = next,
                _ => break,
            }
        }
        Ok(items)
    }

    /// Relays a failed backend answer to the client as it is (status and body).
    pub async fn relay(&self, response: Response<BackendBody>) -> Result<Outcome, GatewayError> {
        let status = response.status();
        let (_, body) = self.caller.read_bytes(response).await?;
        Err(relay_error(status, body))
    }
}

/// The error that relays a backend answer unchanged.
pub fn relay_error(status: StatusCode, body: Bytes) -> GatewayError {
    GatewayError::Relay { status, body }
}

/// Pagination headers for a list the gateway paginates itself, as V4 would send them (`Link` is rewritten to
/// the V3 address afterwards).
pub fn paginate(items: Vec<Value>, query: &[(String, String)], path: &str) -> (HeaderMap, Value) {
    let number = |name: &str| {
        query
            .iter()
            .find(|(key, _)| key == name)
            .and_then(|(_, value)| value.trim().parse::<usize>().ok())
    };
    let per_page = number("per_page").unwrap_or(20).clamp(1, 100);
    let page = number("page").unwrap_or(1).max(1);
    let total = items.len();
    let total_pages = total.div_ceil(per_page).max(1);
    let slice: Vec<Value> = items
        .into_iter()
        .skip((page - 1).saturating_mul(per_page))
        .take(per_page)
        .collect();
    let mut headers = HeaderMap::new();
    let mut set = |name: &'static str, value: String| {
        if let Ok(value) = http::HeaderValue::from_str(&value) {
            headers.insert(name, value);
        }
    };
    set("x-total", total.to_string());
    set("x-total-pages", total_pages.to_string());
    set("x-page", page.to_string());
    set("x-per-page", per_page.to_string());
    set(
        "x-next-page",
        if page < total_pages {
            (page + 1).to_string()
        } else {
            String::new()
        },
    );
    set(
        "x-prev-page",
        if page > 1 {
            (page - 1).to_string()
        } else {
            String::new()
        },
    );
    let base: Vec<(String, String)> = query
        .iter()
        .filter(|(name, _)| name != "page" && name != "per_page")
        .cloned()
        .collect();
    let link = |rel: &str, target: usize| {
        let mut pairs = base.clone();
        pairs.push(("page".to_owned(), target.to_string()));
        pairs.push(("per_page".to_owned(), per_page.to_string()));
        format!("<http://backend{}>; rel=\"{rel}\"", with_query(path, &pairs))
    };
    let mut links = Vec::new();
    if page > 1 {
        links.push(link("prev", page - 1));
    }
    if page < total_pages {
        links.push(link("next", page + 1));
    }
    links.push(link("first", 1));
    links.push(link("last", total_pages));
    set("link", links.join(", "));
    (headers, Value::Array(slice))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::util::url_parts::encode_segment;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn lists_paginated_here_carry_v4_style_headers() {
        let items: Vec<Value> = (1..=45).map(|n| json!(n)).collect();
        let query = vec![
            ("page".to_owned(), "2".to_owned()),
            ("labels".to_owned(), "a,b".to_owned()),
        ];
        let (headers, body) = paginate(items, &query, "/api/v4/issues");
        assert_eq!(body.as_array().unwrap().len(), 20);
        assert_eq!(body[0], json!(21));
        assert_eq!(headers["x-total"], "45");
        assert_eq!(headers["x-total-pages"], "3");
        assert_eq!(headers["x-next-page"], "3");
        assert_eq!(headers["x-prev-page"], "1");
        assert!(headers["link"]
            .to_str()
            .unwrap()
            .contains("labels=a%2Cb&page=3&per_page=20>; rel=\"next\""));
    }

    proptest! {
        #[test]
        fn segment_encoding_round_trips_and_never_leaves_a_slash(value in "\\PC{0,40}") {
            let encoded = encode_segment(&value);
            prop_assert!(!encoded.contains('/'));
            prop_assert_eq!(decode(&encoded), value);
        }

        #[test]
        fn pagination_never_panics_and_never_loses_an_item(count in 0usize..300, page in "[0-9a-z]{0,4}", per in "[0-9]{0,4}") {
            let items: Vec<Value> = (0..count).map(|n| json!(n)).collect();
            let query = vec![("page".to_owned(), page), ("per_page".to_owned(), per)];
            let (headers, body) = paginate(items, &query, "/api/v4/x");
            let total: usize = headers["x-total"].to_str().unwrap().parse().unwrap();
            prop_assert_eq!(total, count);
            prop_assert!(body.as_array().unwrap().len() <= 100);
        }
    }
}

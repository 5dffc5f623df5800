//! Page selection (`page`, `per_page`) and the service's pagination headers: `X-Total`, `X-Total-Pages`,
//! `X-Page`, `X-Per-Page`, `X-Next-Page`, `X-Prev-Page` and `Link`.

use serde_json::Value;

use crate::error::ApiError;
use crate::params::Params;
use crate::reply::Reply;

const DEFAULT_PER_PAGE: usize = 20;
const MAX_PER_PAGE: usize = 100;

/// Where the request came from, to build absolute `Link` URLs that keep the other query parameters.
#[derive(Debug, Clone, Default)]
pub struct LinkBase {
    /// `http://host:port`, from the request's Host header.
    pub origin: String,
    /// The raw request path, e.g. `/api/v4/projects`.
    pub path: String,
    /// The raw query string.
    pub query: Option<String>,
}

/// A requested page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageRequest {
    /// 1-based page number.
    pub page: usize,
    /// Items per page, 1..=100.
    pub per_page: usize,
}

impl PageRequest {
    /// Reads `page` and `per_page`, clamping them the way the service does.
    pub fn from_params(params: &Params) -> Result<Self, ApiError> {
        let page = params.u64("page")?.unwrap_or(1).max(1);
        let per_page = match params.u64("per_page")? {
            None | Some(0) => DEFAULT_PER_PAGE as u64,
            Some(n) => n.min(MAX_PER_PAGE as u64),
        };
        Ok(PageRequest {
            page: usize::try_from(page).unwrap_or(usize::MAX),
            per_page: usize::try_from(per_page).unwrap_or(DEFAULT_PER_PAGE),
        })
    }
}

/// Slices `items` to the requested page and answers 200 with the pagination headers.
pub fn paginate(items: Vec<Value>, req: PageRequest, link: &LinkBase) -> Reply {
    let total = items.len();
    let total_pages = total.div_ceil(req.per_page).max(1);
    let start = req.page.saturating_sub(1).saturating_mul(req.per_page);
    let page_items: Vec<Value> = items.into_iter().skip(start).take(req.per_page).collect();
    let next = (req.page < total_pages).then_some(req.page + 1);
    let prev = (req.page > 1).then(|| (req.page - 1).min(total_pages));
    let mut reply = Reply::ok(Value::Array(page_items));
    let url = |page: usize| link_url(link, page, req.per_page);
    let mut links = Vec::new();
    if let Some(p) = prev {
        links.push(format!("<{}>; rel=\"prev\"", url(p)));
    }
    if let Some(n) = next {
        links.push(format!("<{}>; rel=\"next\"", url(n)));
    }
    links.push(format!("<{}>; rel=\"first\"", url(1)));
    links.push(format!("<{}>; rel=\"last\"", url(total_pages)));
    let opt = |v: Option<usize>| v.map(|n| n.to_string()).unwrap_or_default();
    reply.headers = vec![
        ("x-total".into(), total.to_string()),
        ("x-total-pages".into(), total_pages.to_string()),
        ("x-page".into(), req.page.to_string()),
        ("x-per-page".into(), req.per_page.to_string()),
        ("x-next-page".into(), opt(next)),
        ("x-prev-page".into(), opt(prev)),
        ("link".into(), links.join(", ")),
    ];
    reply
}

fn link_url(link: &LinkBase, page: usize, per_page: usize) -> String {
    let mut parts: Vec<String> = link
        .query
        .as_deref()
        .unwrap_or("")
        .split('&')
        .filter(|kv| !kv.is_empty())
        .filter(|kv| {
            let key = kv.split('=').next().unwrap_or("");
            key != "page" && key != "per_page"
        })
        .map(str::to_string)
        .collect();
    parts.push(format!("page={page}"));
    parts.push(format!("per_page={per_page}"));
    format!("{}{}?{}", link.origin, link.path, parts.join("&"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn header<'a>(reply: &'a Reply, name: &str) -> &'a str {
        reply
            .headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
            .unwrap()
    }

    #[test]
    fn middle_page_headers() {
        let items: Vec<Value> = (0..45).map(|i| json!(i)).collect();
        let link = LinkBase {
            origin: "http://h:1".into(),
            path: "/api/v4/projects".into(),
            query: Some("search=x&page=2&per_page=10".into()),
        };
        let params = Params::parse(Some("page=2&per_page=10"), None, b"").unwrap();
        let reply = paginate(items, PageRequest::from_params(&params).unwrap(), &link);
        assert_eq!(header(&reply, "x-total"), "45");
        assert_eq!(header(&reply, "x-total-pages"), "5");
        assert_eq!(header(&reply, "x-next-page"), "3");
        assert_eq!(header(&reply, "x-prev-page"), "1");
        let l = header(&reply, "link");
        assert!(l.contains("<http://h:1/api/v4/projects?search=x&page=3&per_page=10>; rel=\"next\""));
        assert!(l.contains("rel=\"last\""));
        match &reply.body {
            crate::reply::ReplyBody::Json(Value::Array(a)) => assert_eq!(a[0], json!(10)),
            _ => panic!("not an array"),
        }
    }

    #[test]
    fn empty_and_clamped() {
        let params = Params::parse(Some("per_page=1000&page=0"), None, b"").unwrap();
        let req = PageRequest::from_params(&params).unwrap();
        assert_eq!(
            req,
            PageRequest {
                page: 1,
                per_page: 100
            }
        );
        let reply = paginate(Vec::new(), req, &LinkBase::default());
        assert_eq!(header(&reply, "x-total-pages"), "1");
        assert_eq!(header(&reply, "x-next-page"), "");
        assert_eq!(header(&reply, "x-prev-page"), "");
    }
}

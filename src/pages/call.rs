//! The request a page handler is given: method, path, query, headers and form already read, with the services
//! the pages answer from (the alert intake and the V3 usage recorder).

use http::Method;

use crate::alerts::AlertService;
use crate::rewrite::table::RuleTable;
use crate::rewrite::usage::UsageRecorder;
use crate::util::url_parts::encode_pairs;

/// The request in hand.
pub(super) struct Call<'a> {
    /// The request's method.
    pub(super) method: Method,
    /// The request's path, as sent.
    pub(super) path: String,
    /// The query's pairs, decoded.
    pub(super) query: Vec<(String, String)>,
    /// The request's headers (cookies among them).
    pub(super) headers: http::HeaderMap,
    /// The form's pairs, decoded (a POST's body; empty otherwise).
    pub(super) form: Vec<(String, String)>,
    /// Whether the browser reached svcgate over HTTPS (cookies are marked `Secure` then).
    pub(super) secure: bool,
    /// The alert intake the pages read and change alerts and integrations through.
    pub(super) service: &'a AlertService,
    /// The V3 usage recorder the admin page reports from.
    pub(super) usage: &'a UsageRecorder,
    /// The rule table the gateway runs, for the V3 migration report.
    pub(super) table: &'a RuleTable,
    /// The gateway's public origin, as the browser sees it.
    pub(super) origin: String,
}

impl Call<'_> {
    /// The request's path and query, as the browser asked for them.
    pub(super) fn path_and_query(&self) -> String {
        if self.query.is_empty() {
            self.path.clone()
        } else {
            format!("{}?{}", self.path, encode_pairs(&self.query))
        }
    }

    /// The query's value of `name`, if given.
    pub(super) fn query(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    /// The form's value of `name`, if given.
    pub(super) fn field(&self, name: &str) -> Option<&str> {
        self.form
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    /// Whether the form's checkbox `name` was ticked.
    pub(super) fn checked(&self, name: &str) -> bool {
        self.field(name).is_some()
    }
}

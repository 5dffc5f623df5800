//! V3 clients as the migration report and the retirement counts know them.
//!
//! A client is a user and a product: the `User-Agent` with the version of each of its product tokens taken out
//! (`python-gitlab/3.15.0` → `python-gitlab`, version `3.15.0`), so that a client's upgrades stay one client with
//! its versions listed. A client is retired when none of its calls is more recent than `v3_client_retired_after`.
//! Its id is a short hash of user and product: stable across replicas and restarts, safe in a URL, and free of
//! anything the user agent may hold.

use sha2::{Digest, Sha256};

use crate::store::OTHERS;
use std::time::Duration;

/// The client name of credentials the backend refused.
pub const UNKNOWN: &str = "unknown";
/// The user agent of the calls the usage counts keep under [`UNKNOWN`] once too many distinct callers are pending.
pub const MANY_AGENTS: &str = "(many)";

/// Whether usage counts under `client` and `user_agent` are calls folded together rather than one client's: a
/// route's `others` row (its least recent clients) and the overflow of too many callers. Neither is a client in
/// the migration report, the usage summary or `svcgate_v3_active_clients`.
pub fn is_folded(client: &str, user_agent: &str) -> bool {
    (client == OTHERS && user_agent.is_empty()) || (client == UNKNOWN && user_agent == MANY_AGENTS)
}

/// A `User-Agent` split into the product it names and the versions it carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Agent {
    /// The user agent with every product token's `/version` taken out, spaces folded (`python-gitlab`).
    pub product: String,
    /// The versions taken out, in order, joined by spaces (`3.15.0`); empty when the agent names none.
    pub version: String,
}

/// Splits `user_agent` into product and version: each space-separated token `name/version` whose version starts
/// with a digit loses its `/version`; comments in parentheses and tokens without a version stay as they are.
pub fn agent(user_agent: &str) -> Agent {
    let mut product: Vec<&str> = Vec::new();
    let mut versions: Vec<&str> = Vec::new();
    for token in user_agent.split_whitespace() {
        match token.split_once('/') {
            Some((name, version))
                if !name.is_empty() && version.bytes().next().is_some_and(|b| b.is_ascii_digit()) =>
            {
                product.push(name);
                versions.push(version);
            }
            _ => product.push(token),
        }
    }
    let product = if product.is_empty() {
        "(no user agent)".to_owned()
    } else {
        product.join(" ")
    };
    Agent {
        product,
        version: versions.join(" "),
    }
}

/// The id of the client `user` with `product`: 16 hexadecimal digits of a SHA-256 of both.
pub fn client_id(user: &str, product: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(user.as_bytes());
    hasher.update([0]);
    hasher.update(product.as_bytes());
    hex::encode(&hasher.finalize()[..8])
}

/// Whether a client whose last call was at `last_call` (RFC 3339, as the usage counts store it) is retired at
/// `now`: no call for `retired_after`. A time that cannot be read counts as recent (the client is not retired on
/// a doubt).
pub fn is_retired(last_call: &str, now: time::OffsetDateTime, retired_after: Duration) -> bool {
    crate::util::time_format::parse_time(last_call).is_some_and(|last| now - last >= retired_after)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_taken_out_of_every_product_token() {
        let cases = [
            ("python-gitlab/3.15.0", "python-gitlab", "3.15.0"),
            ("curl/8.5.0", "curl", "8.5.0"),
            (
                "node-gitlab/1.8.0 node-fetch/1.0 (+https://github.com/bitinn/node-fetch)",
                "node-gitlab node-fetch (+https://github.com/bitinn/node-fetch)",
                "1.8.0 1.0",
            ),
            ("ops-script", "ops-script", ""),
            ("tool/beta", "tool/beta", ""),
            ("", "(no user agent)", ""),
        ];
        for (user_agent, product, version) in cases {
            assert_eq!(
                agent(user_agent),
                Agent {
                    product: product.to_owned(),
                    version: version.to_owned()
                },
                "{user_agent}"
            );
        }
    }

    #[test]
    fn a_client_id_is_stable_and_tells_users_and_products_apart() {
        let id = client_id("alice", "python-gitlab");
        assert_eq!(id.len(), 16);
        assert_eq!(id, client_id("alice", "python-gitlab"));
        assert_ne!(id, client_id("bob", "python-gitlab"));
        assert_ne!(client_id("a", "bc"), client_id("ab", "c"));
    }

    #[test]
    fn a_client_is_retired_only_after_the_whole_period() {
        let now = time::macros::datetime!(2026-11-27 12:00 UTC);
        let thirty_days = Duration::from_secs(30 * 86_400);
        assert!(!is_retired("2026-10-29T12:00:01Z", now, thirty_days));
        assert!(is_retired("2026-10-28T12:00:00Z", now, thirty_days));
        assert!(!is_retired("not a time", now, thirty_days));
    }
}

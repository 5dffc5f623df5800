//! Knowing when V3 can go: from the stored usage rows, which clients and routes are still active and which
//! clients are retired.
//!
//! A client is the one [`super::clients`] defines (a user and the product of its `User-Agent`); it is retired when
//! its last call over all its routes is older than `v3_client_retired_after` ([`super::clients::is_retired`]). A
//! route is active when any of its calls is within the same period. A time that cannot be read counts as recent,
//! so nothing is called retired on a doubt. Calls folded together ([`super::clients::is_folded`]: a route's
//! `others` row and the overflow of too many callers) count for their route but are no client. The [`NO_RULE`] bucket (failed calls to paths no rule names) is no
//! route to migrate: it counts for its clients but neither as an active nor as an unused route.

use std::collections::HashMap;
use std::time::Duration;

use crate::store::UsageRow;

use super::clients::{agent, client_id, is_folded, is_retired};

/// The one route bucket of V3 calls no rule names that the backend did not answer with success (typos, invented
/// paths): clients cannot grow the report or the metrics by inventing paths.
pub const NO_RULE: &str = "(no rule)";

/// How many clients and routes are still active, and each client's last call.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Summary {
    /// The period, in whole days (`v3_client_retired_after`).
    pub period_days: u64,
    /// The period, in seconds.
    pub period_seconds: u64,
    /// Clients with a call within the period.
    pub clients_active: usize,
    /// Clients without one.
    pub clients_retired: usize,
    /// Routes with a call within the period (the [`NO_RULE`] bucket is no route).
    pub routes_active: usize,
    /// Routes without one.
    pub routes_unused: usize,
    /// Every client, most recent call first.
    pub clients: Vec<ClientActivity>,
}

/// One client's last call.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ClientActivity {
    /// Its id ([`client_id`]).
    pub id: String,
    /// The user.
    pub user: String,
    /// The product of its user agents.
    pub product: String,
    /// Its last call over all its routes (RFC 3339, as stored).
    pub last_call: String,
    /// No call within the period.
    pub retired: bool,
}

/// The id of the client a row belongs to, or `None` for calls folded together ([`is_folded`]).
pub fn client_of(row: &UsageRow) -> Option<String> {
    (!is_folded(&row.client, &row.user_agent))
        .then(|| client_id(&row.client, &agent(&row.user_agent).product))
}

/// The last call of each client in `rows`, by client id.
pub fn last_calls(rows: &[UsageRow]) -> HashMap<String, String> {
    let mut last: HashMap<String, String> = HashMap::new();
    for row in rows {
        if let Some(id) = client_of(row) {
            let entry = last.entry(id).or_default();
            if later(&row.last_seen, entry) {
                entry.clone_from(&row.last_seen);
            }
        }
    }
    last
}

/// Whether `time` is later than `than`; an unreadable time is later than any readable one (recent on a doubt).
fn later(time: &str, than: &str) -> bool {
    use crate::util::time_format::parse_time;
    if than.is_empty() {
        return true;
    }
    match (parse_time(time), parse_time(than)) {
        (Some(time), Some(than)) => time > than,
        (None, Some(_)) => true,
        (Some(_), None) => false,
        (None, None) => time > than,
    }
}

/// The activity summary of `rows` at `now`, for a period of `retired_after`.
pub fn summary(rows: &[UsageRow], now: time::OffsetDateTime, retired_after: Duration) -> Summary {
    let mut clients: HashMap<String, ClientActivity> = HashMap::new();
    let mut routes: HashMap<&str, &str> = HashMap::new();
    for row in rows {
        if row.route != NO_RULE {
            let route = routes.entry(row.route.as_str()).or_insert("");
            if later(&row.last_seen, route) {
                *route = row.last_seen.as_str();
            }
        }
        let Some(id) = client_of(row) else { continue };
        let client = clients.entry(id.clone()).or_insert_with(|| ClientActivity {
            id,
            user: row.client.clone(),
            product: agent(&row.user_agent).product,
            last_call: String::new(),
            retired: false,
        });
        if later(&row.last_seen, &client.last_call) {
            client.last_call.clone_from(&row.last_seen);
        }
    }
    let mut clients: Vec<ClientActivity> = clients.into_values().collect();
    for client in &mut clients {
        client.retired = is_retired(&client.last_call, now, retired_after);
    }
    clients.sort_by(|a, b| b.last_call.cmp(&a.last_call).then_with(|| a.id.cmp(&b.id)));
    let routes_unused = routes
        .values()
        .filter(|last| is_retired(last, now, retired_after))
        .count();
    let clients_retired = clients.iter().filter(|client| client.retired).count();
    Summary {
        period_days: retired_after.as_secs() / 86_400,
        period_seconds: retired_after.as_secs(),
        clients_active: clients.len() - clients_retired,
        clients_retired,
        routes_active: routes.len() - routes_unused,
        routes_unused,
        clients,
    }
}

/// Clients with a call within `retired_after` of `now`: the `svcgate_v3_active_clients` gauge.
pub fn active_clients(rows: &[UsageRow], now: time::OffsetDateTime, retired_after: Duration) -> u64 {
    let active = last_calls(rows)
        .values()
        .filter(|last| !is_retired(last, now, retired_after))
        .count();
    u64::try_from(active).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rewrite::clients::{MANY_AGENTS, UNKNOWN};
    use crate::store::OTHERS;

    const THIRTY_DAYS: Duration = Duration::from_secs(30 * 86_400);

    fn row(route: &str, client: &str, user_agent: &str, last_seen: &str) -> UsageRow {
        UsageRow {
            route: route.to_owned(),
            since: "9.0".to_owned(),
            client: client.to_owned(),
            user_agent: user_agent.to_owned(),
            calls: 1,
            errors: 0,
            first_seen: "2026-01-01T00:00:00.000Z".to_owned(),
            last_seen: last_seen.to_owned(),
        }
    }

    fn now() -> time::OffsetDateTime {
        time::macros::datetime!(2026-11-27 12:00 UTC)
    }

    #[test]
    fn clients_and_routes_are_active_or_retired_by_their_last_call() {
        // (what, rows, (clients active, clients retired, routes active, routes unused))
        type Counts = (usize, usize, usize, usize);
        let cases: [(&str, Vec<UsageRow>, Counts); 9] = [
            ("nothing counted", vec![], (0, 0, 0, 0)),
            (
                "a recent call",
                vec![row("GET /a", "alice", "tool/1", "2026-11-26T12:00:00.000Z")],
                (1, 0, 1, 0),
            ),
            (
                "an old call",
                vec![row("GET /a", "alice", "tool/1", "2026-09-01T00:00:00.000Z")],
                (0, 1, 0, 1),
            ),
            (
                "just inside the period",
                vec![row("GET /a", "alice", "tool/1", "2026-10-28T12:00:01.000Z")],
                (1, 0, 1, 0),
            ),
            (
                "exactly the period ago",
                vec![row("GET /a", "alice", "tool/1", "2026-10-28T12:00:00.000Z")],
                (0, 1, 0, 1),
            ),
            (
                "an unreadable time counts as recent",
                vec![row("GET /a", "alice", "tool/1", "yesterday")],
                (1, 0, 1, 0),
            ),
            (
                "one recent route keeps the client active; versions are one client; others is no client",
                vec![
                    row("GET /a", "alice", "tool/1", "2026-09-01T00:00:00.000Z"),
                    row("GET /b", "alice", "tool/2", "2026-11-20T00:00:00.000Z"),
                    row("GET /c", "bob", "tool/1", "2026-09-01T00:00:00.000Z"),
                    row("GET /c", OTHERS, "", "2026-11-01T00:00:00.000Z"),
                    row("GET /c", UNKNOWN, MANY_AGENTS, "2026-11-01T00:00:00.000Z"),
                ],
                (1, 1, 2, 1),
            ),
            (
                "a caller the backend could not name is a client with its program",
                vec![row("GET /a", UNKNOWN, "curl/8.5.0", "2026-11-26T12:00:00.000Z")],
                (1, 0, 1, 0),
            ),
            (
                "failed calls to invented paths are no route, but their client is active",
                vec![
                    row(NO_RULE, "carol", "tool/1", "2026-11-26T00:00:00.000Z"),
                    row(NO_RULE, "dave", "tool/1", "2026-09-01T00:00:00.000Z"),
                    row("GET /a", "dave", "tool/1", "2026-09-01T00:00:00.000Z"),
                ],
                (1, 1, 0, 1),
            ),
        ];
        for (what, rows, counts) in cases {
            let summary = summary(&rows, now(), THIRTY_DAYS);
            assert_eq!(
                (
                    summary.clients_active,
                    summary.clients_retired,
                    summary.routes_active,
                    summary.routes_unused
                ),
                counts,
                "{what}"
            );
            assert_eq!(summary.period_days, 30);
            assert_eq!(
                active_clients(&rows, now(), THIRTY_DAYS),
                counts.0 as u64,
                "{what}: the gauge agrees"
            );
        }
    }

    #[test]
    fn each_client_has_its_last_call_over_all_its_routes() {
        let rows = vec![
            row("GET /a", "alice", "tool/1", "2026-09-01T00:00:00.000Z"),
            row("GET /b", "alice", "tool/2", "2026-11-20T00:00:00.000Z"),
            row("GET /c", "bob", "other/1", "2026-09-02T00:00:00.000Z"),
        ];
        let summary = summary(&rows, now(), THIRTY_DAYS);
        let clients: Vec<(&str, &str, &str, bool)> = summary
            .clients
            .iter()
            .map(|c| {
                (
                    c.user.as_str(),
                    c.product.as_str(),
                    c.last_call.as_str(),
                    c.retired,
                )
            })
            .collect();
        assert_eq!(
            clients,
            [
                ("alice", "tool", "2026-11-20T00:00:00.000Z", false),
                ("bob", "other", "2026-09-02T00:00:00.000Z", true),
            ]
        );
        assert_eq!(summary.clients[0].id, client_id("alice", "tool"));
        assert_eq!(
            last_calls(&rows)
                .get(&client_id("bob", "other"))
                .map(String::as_str),
            Some("2026-09-02T00:00:00.000Z")
        );
    }

    #[test]
    fn a_shorter_period_retires_sooner() {
        let rows = vec![row("GET /a", "alice", "tool/1", "2026-11-20T00:00:00.000Z")];
        let week = summary(&rows, now(), Duration::from_secs(7 * 86_400));
        assert_eq!(
            (week.clients_retired, week.routes_unused, week.period_days),
            (1, 1, 7)
        );
    }
}

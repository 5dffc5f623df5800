//! The alert lifecycle as a decision: what one incoming alert does, given the open alert of its project and
//! fingerprint. Plain Rust with no I/O; the store looks the open alert up, asks [`decide`], and carries the
//! [`Action`] out in the same write (see `process_event` in `store/sqlite/alerts.rs`, and the PostgreSQL writer).
//!
//! The rules (contract `alerts.md` section 5):
//!
//! - an alert that does not resolve groups into the open alert of its fingerprint, or creates a new one when
//!   there is none: **at most one open alert per project and fingerprint**;
//! - an alert that resolves closes that open alert, or does nothing when there is none (`no_open_alert`);
//! - an alert without a fingerprint never groups: it always creates, and resolves nothing.
//!
//! "Open" means any status but `resolved` (`triggered`, `acknowledged`, `ignored`); the store's open-alert table
//! holds exactly those, so whatever the store finds there is the open alert.

/// An incoming alert as the decision sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event<'a> {
    /// The grouping key; `None` never groups.
    pub fingerprint: Option<&'a str>,
    /// When the alert ended, if this event resolves it.
    pub ended_at: Option<&'a str>,
}

/// What the store does for one event. `A` is the store's open alert, handed back to the action that needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action<'a, A> {
    /// Store a new open alert (the event's first occurrence, with the next per-project iid).
    Create,
    /// Count one more occurrence of the open alert.
    Group(A),
    /// Close the open alert, as ended at `ended_at`.
    Resolve {
        /// The open alert.
        alert: A,
        /// When it ended.
        ended_at: &'a str,
    },
    /// A resolve with no open alert to close: nothing is written.
    Ignore,
}

impl<A> Action<'_, A> {
    /// The `outcome` of the intake's answer: `created`, `grouped`, `resolved` or `no_open_alert`.
    pub fn outcome(&self) -> &'static str {
        match self {
            Action::Create => "created",
            Action::Group(_) => "grouped",
            Action::Resolve { .. } => "resolved",
            Action::Ignore => "no_open_alert",
        }
    }
}

/// What `event` does, given `open_alert`, the open alert of the event's project and fingerprint if there is one.
pub fn decide<A>(open_alert: Option<A>, event: Event<'_>) -> Action<'_, A> {
    // Without a fingerprint there is nothing to group into or resolve, whatever was found.
    let open_alert = open_alert.filter(|_| event.fingerprint.is_some());
    match (open_alert, event.ended_at) {
        (None, None) => Action::Create,
        (Some(alert), None) => Action::Group(alert),
        (Some(alert), Some(ended_at)) => Action::Resolve { alert, ended_at },
        (None, Some(_)) => Action::Ignore,
    }
}

#[cfg(test)]
mod tests {
    use super::{decide, Action, Event};

    const END: &str = "2026-11-22T10:00:00.000Z";

    fn firing(fingerprint: Option<&str>) -> Event<'_> {
        Event {
            fingerprint,
            ended_at: None,
        }
    }

    fn resolving(fingerprint: Option<&str>) -> Event<'_> {
        Event {
            fingerprint,
            ended_at: Some(END),
        }
    }

    /// One row of the decision table: the open alert found (by id), the event, the action.
    type Row = (Option<u64>, Event<'static>, Action<'static, u64>);

    #[test]
    fn decisions() {
        let resolve_7 = Action::Resolve {
            alert: 7,
            ended_at: END,
        };
        let table: [Row; 8] = [
            (None, firing(Some("f")), Action::Create),
            (Some(7), firing(Some("f")), Action::Group(7)),
            (Some(7), resolving(Some("f")), resolve_7),
            (None, resolving(Some("f")), Action::Ignore),
            (None, firing(None), Action::Create),
            (None, resolving(None), Action::Ignore),
            // An alert without a fingerprint never groups, even should the caller pass an open alert.
            (Some(7), firing(None), Action::Create),
            (Some(7), resolving(None), Action::Ignore),
        ];
        for (open, event, want) in table {
            assert_eq!(decide(open, event), want, "{open:?} {event:?}");
        }
    }

    #[test]
    fn outcomes_are_the_answer_names() {
        let table: [(Action<'_, u64>, &str); 4] = [
            (Action::Create, "created"),
            (Action::Group(1), "grouped"),
            (
                Action::Resolve {
                    alert: 1,
                    ended_at: END,
                },
                "resolved",
            ),
            (Action::Ignore, "no_open_alert"),
        ];
        for (action, want) in table {
            assert_eq!(action.outcome(), want);
        }
    }
}

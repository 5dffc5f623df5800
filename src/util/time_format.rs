//! Times as svcgate reads and writes them: RFC 3339 / ISO 8601 in, RFC 3339 in UTC with milliseconds out.
//!
//! One neutral module for every part that stores or shows a time (alert payloads, the alert store, V3 usage
//! counts, the pages), so that none of them takes its clock format from another. Pure functions, no I/O.

use time::format_description::well_known::{Iso8601, Rfc3339};
use time::{OffsetDateTime, PrimitiveDateTime, UtcOffset};

/// Reads an RFC 3339 or ISO 8601 time, in UTC. A time without an offset is taken as UTC. A time is `None` (the
/// caller's default applies, with a warning) when its offset is beyond ±24 hours or it falls, in UTC, before 1970
/// or after 9999: no monitoring tool sends such a time, and the store and pages show four-digit years.
pub fn parse_time(text: &str) -> Option<OffsetDateTime> {
    let text = text.trim();
    let parsed = OffsetDateTime::parse(text, &Rfc3339)
        .or_else(|_| OffsetDateTime::parse(text, &Iso8601::DEFAULT))
        .or_else(|_| PrimitiveDateTime::parse(text, &Iso8601::DEFAULT).map(PrimitiveDateTime::assume_utc))
        .ok()?;
    if parsed.offset().whole_seconds().abs() > 24 * 3600 {
        return None;
    }
    in_supported_years(parsed.checked_to_offset(UtcOffset::UTC)?)
}

/// An instant given as integer milliseconds since the Unix epoch, if it falls between 1970 and 9999.
pub fn from_epoch_millis(millis: i64) -> Option<OffsetDateTime> {
    in_supported_years(OffsetDateTime::from_unix_timestamp_nanos(i128::from(millis) * 1_000_000).ok()?)
}

/// The time, when its UTC year is 1970 to 9999.
fn in_supported_years(utc: OffsetDateTime) -> Option<OffsetDateTime> {
    (1970..=9999).contains(&utc.year()).then_some(utc)
}

/// RFC 3339 in UTC with milliseconds, e.g. `2026-11-22T10:00:00.000Z`.
pub fn format_time(t: OffsetDateTime) -> String {
    let utc = t.checked_to_offset(UtcOffset::UTC).unwrap_or(t);
    let Ok(year) = u32::try_from(utc.year()) else {
        return format_time_general(t);
    };
    if !utc.offset().is_utc() || year > 9999 {
        return format_time_general(t);
    }
    // The digits are written directly: every alert formats two or three times, and `format!` with padded
    // integers cost about 2 k instructions each.
    let mut text = String::with_capacity(24);
    let fields = [
        (year, 4, '-'),
        (u32::from(u8::from(utc.month())), 2, '-'),
        (u32::from(utc.day()), 2, 'T'),
        (u32::from(utc.hour()), 2, ':'),
        (u32::from(utc.minute()), 2, ':'),
        (u32::from(utc.second()), 2, '.'),
        (u32::from(utc.millisecond()), 3, 'Z'),
    ];
    for (value, width, after) in fields {
        for place in (0..width).rev() {
            text.push(char::from_digit(value / 10u32.pow(place) % 10, 10).unwrap_or('0'));
        }
        text.push(after);
    }
    text
}

/// [`format_time`] through `format!`, for every time: years outside 0–9999, and an offset kept when the time cannot
/// be moved to UTC.
fn format_time_general(t: OffsetDateTime) -> String {
    let utc = t.checked_to_offset(UtcOffset::UTC).unwrap_or(t);
    let offset = utc.offset();
    let zone = if offset.is_utc() {
        "Z".to_owned()
    } else {
        let sign = if offset.is_negative() { '-' } else { '+' };
        format!(
            "{sign}{:02}:{:02}",
            offset.whole_hours().abs(),
            offset.minutes_past_hour().abs()
        )
    };
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}{zone}",
        utc.year(),
        u8::from(utc.month()),
        utc.day(),
        utc.hour(),
        utc.minute(),
        utc.second(),
        utc.millisecond()
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use time::macros::datetime;

    #[test]
    fn format_time_table() {
        let cases = [
            (datetime!(2026-11-22 10:00:00 UTC), "2026-11-22T10:00:00.000Z"),
            (
                datetime!(2026-11-22 10:00:00.123456 UTC),
                "2026-11-22T10:00:00.123Z",
            ),
            (
                datetime!(2026-11-22 12:30:05.9 +02:00),
                "2026-11-22T10:30:05.900Z",
            ),
            (datetime!(2026-01-01 00:30:00 +01:00), "2025-12-31T23:30:00.000Z"),
            (datetime!(0001-01-01 00:00:00 UTC), "0001-01-01T00:00:00.000Z"),
        ];
        for (t, want) in cases {
            assert_eq!(format_time(t), want);
        }
    }

    #[test]
    fn format_time_outside_four_digit_years_keeps_the_general_form() {
        let t = datetime!(-0001-06-01 00:00:00 UTC);
        assert_eq!(format_time(t), format_time_general(t));
        assert!(format_time(t).starts_with("-001-06-01T"));
    }

    #[test]
    fn format_time_and_parse_time_round_trip() {
        let t = datetime!(2026-11-22 10:00:00.123 UTC);
        assert_eq!(parse_time(&format_time(t)), Some(t));
        assert_eq!(
            parse_time("9999-12-31T23:00:00-05:00"),
            None,
            "no UTC equivalent in range"
        );
    }

    #[test]
    fn times_before_1970_after_9999_or_offset_beyond_a_day_are_refused() {
        for refused in [
            "1969-12-31T23:59:59Z",
            "0001-01-01T00:00:00Z",
            "+10000-01-01T00:00:00Z",
            "2026-11-22T10:00:00+25:00",
            "2026-11-22T10:00:00-24:30",
        ] {
            assert_eq!(parse_time(refused), None, "{refused}");
        }
        for accepted in [
            "1970-01-01T00:00:00Z",
            "9999-12-31T23:59:59Z",
            "2026-11-22T10:00:00+24:00",
        ] {
            assert!(parse_time(accepted).is_some(), "{accepted}");
        }
        assert_eq!(from_epoch_millis(-1), None);
        assert_eq!(from_epoch_millis(253_402_300_800_000), None, "year 10000");
        assert!(from_epoch_millis(0).is_some());
    }

    proptest! {
        #[test]
        fn format_time_writes_what_format_writes(
            seconds in 0i64..253_402_300_799,
            nanos in 0u32..1_000_000_000,
            offset_minutes in -1439i32..1439,
        ) {
            let offset = UtcOffset::from_whole_seconds(offset_minutes * 60).unwrap();
            let t = OffsetDateTime::from_unix_timestamp(seconds).unwrap().replace_nanosecond(nanos).unwrap().to_offset(offset);
            prop_assert_eq!(format_time(t), format_time_general(t));
        }
    }
}

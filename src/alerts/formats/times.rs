//! The time formats senders use, read into UTC: RFC 3339 / ISO 8601 with 0 to 9 fraction digits, offsets written
//! `+0000` as well as `+00:00`, naive `2026-11-26 05:26:05.600` taken as UTC, Go's zero time as "no time", and
//! epoch seconds or milliseconds given as a number or a numeric string. The ISO reading itself is
//! [`crate::util::time_format::parse_time`]'s; this file only brings the senders' variants to it.

use serde_json::Value;
use time::OffsetDateTime;

use crate::util::time_format::{from_epoch_millis, parse_time};

/// How a time field's value is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) enum TimeFormat {
    /// ISO 8601 / RFC 3339 text, with the senders' variants (the default).
    #[default]
    Iso,
    /// Seconds since the Unix epoch, a number (fractions kept to the millisecond) or a numeric string.
    EpochSeconds,
    /// Milliseconds since the Unix epoch, a number or a numeric string.
    EpochMillis,
}

impl TimeFormat {
    /// The format named in a file: `iso`, `epoch_s` or `epoch_ms`.
    pub fn parse(name: &str) -> Option<TimeFormat> {
        match name {
            "iso" => Some(TimeFormat::Iso),
            "epoch_s" => Some(TimeFormat::EpochSeconds),
            "epoch_ms" => Some(TimeFormat::EpochMillis),
            _ => None,
        }
    }
}

/// What a time value reads as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TimeReading {
    /// A time, in UTC.
    At(OffsetDateTime),
    /// Go's zero time (`0001-01-01T00:00:00Z`): the sender says "no time".
    Zero,
    /// Not a time in this format (or outside 1970–9999).
    Bad,
}

/// Reads `value` as a time written in `format`.
pub(super) fn read_time(value: &Value, format: TimeFormat) -> TimeReading {
    let found = match format {
        TimeFormat::Iso => match value {
            Value::String(text) => {
                if is_go_zero(text) {
                    return TimeReading::Zero;
                }
                parse_iso(text)
            }
            _ => None,
        },
        TimeFormat::EpochSeconds => epoch_number(value).and_then(|seconds| millis(seconds * 1_000.0)),
        TimeFormat::EpochMillis => match value {
            Value::Number(number) if number.as_i64().is_some() => number.as_i64().and_then(from_epoch_millis),
            other => epoch_number(other).and_then(millis),
        },
    };
    found.map_or(TimeReading::Bad, TimeReading::At)
}

/// An ISO 8601 text with the senders' variants brought to what [`parse_time`] reads.
pub(super) fn parse_iso(text: &str) -> Option<OffsetDateTime> {
    let text = text.trim();
    let mut owned = text.to_owned();
    // `2026-11-26 05:26:05.600`: a space between date and time.
    if owned.len() > 10 && owned.as_bytes()[10] == b' ' && owned.is_char_boundary(11) {
        owned.replace_range(10..11, "T");
    }
    // `…05.600+0000`: an offset without its colon.
    let bytes = owned.as_bytes();
    if bytes.len() > 15 {
        let sign = bytes.len() - 5;
        let offset_digits = bytes[sign + 1..].iter().all(u8::is_ascii_digit);
        if (bytes[sign] == b'+' || bytes[sign] == b'-') && offset_digits && bytes[sign - 1].is_ascii_digit() {
            owned.insert(sign + 3, ':');
        }
    }
    parse_time(&owned)
}

fn is_go_zero(text: &str) -> bool {
    let text = text.trim();
    text.starts_with("0001-01-01T00:00:00") || text.starts_with("0001-01-01 00:00:00")
}

/// A number, or a string holding one.
fn epoch_number(value: &Value) -> Option<f64> {
    let number = match value {
        Value::Number(number) => number.as_f64()?,
        Value::String(text) => text.trim().parse::<f64>().ok()?,
        _ => return None,
    };
    number.is_finite().then_some(number)
}

/// Milliseconds (rounded) as a time between 1970 and 9999.
fn millis(value: f64) -> Option<OffsetDateTime> {
    let rounded = value.round();
    // Beyond ±2^62 no time of the supported years is near; the cast below is then exact enough not to matter.
    if rounded.abs() > 4.6e18 {
        return None;
    }
    #[allow(clippy::cast_possible_truncation)]
    from_epoch_millis(rounded as i64)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;
    use time::macros::datetime;

    #[test]
    fn senders_time_formats() {
        let at = |t: OffsetDateTime| TimeReading::At(t);
        let cases: Vec<(Value, TimeFormat, TimeReading)> = vec![
            (
                json!("2026-11-26T05:26:05Z"),
                TimeFormat::Iso,
                at(datetime!(2026-11-26 05:26:05 UTC)),
            ),
            (
                json!("2026-11-26T05:26:05.6Z"),
                TimeFormat::Iso,
                at(datetime!(2026-11-26 05:26:05.6 UTC)),
            ),
            (
                json!("2019-03-22T13:58:24.3713213Z"),
                TimeFormat::Iso,
                at(datetime!(2019-03-22 13:58:24.3713213 UTC)),
            ),
            (
                json!("2018-08-03T09:52:26.739266876+02:00"),
                TimeFormat::Iso,
                at(datetime!(2018-08-03 07:52:26.739266876 UTC)),
            ),
            (
                json!("2015-07-17T08:42:58.315+0000"),
                TimeFormat::Iso,
                at(datetime!(2015-07-17 08:42:58.315 UTC)),
            ),
            (
                json!("2026-11-26T07:26:05.600+0200"),
                TimeFormat::Iso,
                at(datetime!(2026-11-26 05:26:05.600 UTC)),
            ),
            (
                json!("2026-11-26 05:26:05.600"),
                TimeFormat::Iso,
                at(datetime!(2026-11-26 05:26:05.600 UTC)),
            ),
            (json!("0001-01-01T00:00:00Z"), TimeFormat::Iso, TimeReading::Zero),
            (json!("yesterday"), TimeFormat::Iso, TimeReading::Bad),
            (json!(1_795_670_765_600_i64), TimeFormat::Iso, TimeReading::Bad),
            (
                json!(1_795_670_765_600_i64),
                TimeFormat::EpochMillis,
                at(datetime!(2026-11-26 05:26:05.600 UTC)),
            ),
            (
                json!("1795670765600"),
                TimeFormat::EpochMillis,
                at(datetime!(2026-11-26 05:26:05.600 UTC)),
            ),
            (
                json!(1_795_670_765.6),
                TimeFormat::EpochSeconds,
                at(datetime!(2026-11-26 05:26:05.600 UTC)),
            ),
            (
                json!("1795670765"),
                TimeFormat::EpochSeconds,
                at(datetime!(2026-11-26 05:26:05 UTC)),
            ),
            (json!("x"), TimeFormat::EpochSeconds, TimeReading::Bad),
            (json!(-1), TimeFormat::EpochMillis, TimeReading::Bad),
            (json!(1e300), TimeFormat::EpochSeconds, TimeReading::Bad),
        ];
        for (value, format, want) in cases {
            assert_eq!(read_time(&value, format), want, "{value} as {format:?}");
        }
    }

    proptest! {
        #[test]
        fn time_readers_never_panic(text in ".{0,40}", number in any::<f64>(), integer in any::<i64>()) {
            for format in [TimeFormat::Iso, TimeFormat::EpochSeconds, TimeFormat::EpochMillis] {
                let _ = read_time(&Value::String(text.clone()), format);
                let _ = read_time(&json!(number), format);
                let _ = read_time(&json!(integer), format);
            }
        }

        #[test]
        fn epoch_milliseconds_round_trip(millis in 0i64..253_402_300_799_000) {
            let want = from_epoch_millis(millis).unwrap();
            prop_assert_eq!(read_time(&json!(millis), TimeFormat::EpochMillis), TimeReading::At(want));
            prop_assert_eq!(read_time(&json!(millis.to_string()), TimeFormat::EpochMillis), TimeReading::At(want));
        }

        #[test]
        fn iso_with_and_without_offset_colon_agree(
            seconds in 0i64..253_402_300_799, fraction in 0u32..1_000_000_000, digits in 0usize..10,
            offset_minutes in -1439i32..1440,
        ) {
            let utc = OffsetDateTime::from_unix_timestamp(seconds).unwrap();
            let sign = if offset_minutes < 0 { '-' } else { '+' };
            let (hours, minutes) = (offset_minutes.abs() / 60, offset_minutes.abs() % 60);
            let offset = time::UtcOffset::from_hms(
                i8::try_from(offset_minutes / 60).unwrap(), i8::try_from(offset_minutes % 60).unwrap(), 0).unwrap();
            let local = utc.to_offset(offset);
            let digits_text = format!("{fraction:09}");
            let frac = if digits == 0 { String::new() } else { format!(".{}", &digits_text[..digits]) };
            let base = format!("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}{frac}", local.year(), u8::from(local.month()),
                               local.day(), local.hour(), local.minute(), local.second());
            let with_colon = format!("{base}{sign}{hours:02}:{minutes:02}");
            let without = format!("{base}{sign}{hours:02}{minutes:02}");
            let a = read_time(&Value::String(with_colon.clone()), TimeFormat::Iso);
            let b = read_time(&Value::String(without.clone()), TimeFormat::Iso);
            prop_assert_eq!(a, b, "{} vs {}", with_colon, without);
            if let TimeReading::At(t) = a {
                prop_assert_eq!(t.unix_timestamp(), seconds);
            }
        }
    }
}

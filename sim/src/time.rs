//! Timestamps: milliseconds since the Unix epoch, formatted as RFC 3339 with milliseconds, and parsed from the
//! ISO 8601 forms that clients send (`2026-01-05`, `2026-01-05T10:00:00Z`, `2026-01-05T10:00:00.123+01:00`).

use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch.
pub type Millis = i64;

/// The current wall-clock time.
pub fn now_millis() -> Millis {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// Formats as `2026-01-05T10:00:00.000Z`.
pub fn format(ms: Millis) -> String {
    let secs = ms.div_euclid(1000);
    let milli = ms.rem_euclid(1000);
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    let sod = secs.rem_euclid(86_400);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{milli:03}Z",
        sod / 3600,
        sod % 3600 / 60,
        sod % 60
    )
}

/// Formats the date part only, `2026-01-05`.
pub fn format_date(ms: Millis) -> String {
    let (y, m, d) = civil_from_days(ms.div_euclid(1000).div_euclid(86_400));
    format!("{y:04}-{m:02}-{d:02}")
}

/// Parses a date or date-time; `None` when it is not one.
pub fn parse(s: &str) -> Option<Millis> {
    let s = s.trim();
    let b = s.as_bytes();
    if b.len() < 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let year: i64 = s.get(0..4)?.parse().ok()?;
    let month: u32 = s.get(5..7)?.parse().ok()?;
    let day: u32 = s.get(8..10)?.parse().ok()?;
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    let mut ms = days_from_civil(year, month, day) * 86_400_000;
    let rest = s.get(10..)?;
    if rest.is_empty() {
        return Some(ms);
    }
    let rest = rest.strip_prefix('T').or_else(|| rest.strip_prefix(' '))?;
    let hour: i64 = rest.get(0..2)?.parse().ok()?;
    let minute: i64 = rest.get(3..5)?.parse().ok()?;
    let mut tail = rest.get(5..)?;
    let mut second = 0i64;
    if let Some(t) = tail.strip_prefix(':') {
        second = t.get(0..2)?.parse().ok()?;
        tail = t.get(2..)?;
    }
    ms += (hour * 3600 + minute * 60 + second) * 1000;
    if let Some(t) = tail.strip_prefix('.') {
        let digits: String = t.chars().take_while(char::is_ascii_digit).collect();
        let frac: String = digits.chars().chain("000".chars()).take(3).collect();
        ms += frac.parse::<i64>().ok()?;
        tail = t.get(digits.len()..)?;
    }
    let tail = tail.trim();
    if tail.is_empty() || tail == "Z" || tail == "z" {
        return Some(ms);
    }
    let sign = match tail.as_bytes().first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let off = tail.get(1..)?.replace(':', "");
    let oh: i64 = off.get(0..2)?.parse().ok()?;
    let om: i64 = off.get(2..4).unwrap_or("00").parse().ok()?;
    Some(ms - sign * (oh * 3600 + om * 60) * 1000)
}

fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let ms = parse("2026-01-05T10:00:00Z").unwrap_or(0);
        assert_eq!(format(ms), "2026-01-05T10:00:00.000Z");
        assert_eq!(parse("2026-01-05T11:00:00.250+01:00"), Some(ms + 250));
        assert_eq!(format_date(ms), "2026-01-05");
        assert_eq!(parse("2026-01-05"), Some(ms - 10 * 3_600_000));
        assert_eq!(parse("nonsense"), None);
        assert_eq!(format(0), "1970-01-01T00:00:00.000Z");
    }
}

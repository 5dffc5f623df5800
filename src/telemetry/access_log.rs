//! The access log's formatting: every answered request logs one `request` event at `info` with target
//! [`TARGET`], and [`AccessFirst`] writes that event's line itself instead of the generic formatter.
//!
//! The line is byte for byte what tracing-subscriber's formatter writes (text or JSON, as `log_format` says; the
//! tests compare both for the same events), so nothing downstream changes. It is written field by field as the
//! event is visited, without the generic formatter's styles, padding bookkeeping and escapes for text that needs
//! none: the generic formatter took about a quarter of svcgate's own CPU per passthrough request; bench row 1, 1 KB and 50 conn: svcgate / bare 0.75 → 0.84 × (100 KB: 0.91 → 0.93 ×) with the other changes of its step (bench/RESULTS.md, 2026-11-26). Any other event, an
//! access event inside a span (at `debug`, the connection's), and coloured output go to the wrapped formatter.
//!
//! Names and text go in with `write_str`, integers with itoa, the latency with ryu (where it writes what `{:?}` does),
//! and the date and time of the timestamp once a second: svcgate's instructions per 1 KB passthrough request 52,000 → 49,300 under callgrind (bench/RESULTS.md, 2026-11-27).

use std::fmt::{self, Write as _};

use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

/// The target of the access log's events (`log_level = "info,svcgate::access=warn"` silences the access log).
pub const TARGET: &str = "svcgate::access";

/// A formatter that writes access events itself and hands every other event to `inner`.
pub struct AccessFirst<E> {
    inner: E,
    json: bool,
}

impl<E> AccessFirst<E> {
    /// Wraps `inner`, which writes text lines (or JSON ones when `json`): access lines are written the same way.
    pub fn new(inner: E, json: bool) -> Self {
        AccessFirst { inner, json }
    }
}

impl<S, N, E> FormatEvent<S, N> for AccessFirst<E>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
    E: FormatEvent<S, N>,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let now = std::time::SystemTime::now();
        // humantime writes years 1970 to 9999 only; a clock outside them is the generic formatter's to write.
        let writable_time = now
            .duration_since(std::time::UNIX_EPOCH)
            .is_ok_and(|since| since.as_secs() < 253_402_300_800);
        let plain = event.metadata().target() == TARGET
            && writable_time
            && !writer.has_ansi_escapes()
            && event.parent().is_none()
            && ctx.lookup_current().is_none();
        if !plain {
            return self.inner.format_event(ctx, writer, event);
        }
        #[cfg(test)]
        tests::WRITTEN_HERE.with(|count| count.set(count.get() + 1));
        // The line is put together here and handed over whole: one call through the writer instead of one a
        // piece (bench/instructions, 1 KB passthrough: svcgate's instructions per request 49,500 → 48,600).
        let mut text = String::with_capacity(256);
        let level = event.metadata().level().as_str();
        if self.json {
            text.push_str("{\"timestamp\":\"");
            write_timestamp(&mut text, now)?;
            text.push_str("\",\"level\":\"");
            text.push_str(level);
            text.push('"');
        } else {
            write_timestamp(&mut text, now)?;
            // `{now} {level:>5} `, as the generic formatter pads the level.
            text.push_str(&"      "[level.len().min(5)..]);
            text.push_str(level);
            text.push(' ');
        }
        let mut line = Line {
            writer: &mut text,
            json: self.json,
            first: true,
            result: Ok(()),
        };
        event.record(&mut line);
        line.result?;
        if self.json {
            text.push('}');
        }
        text.push('\n');
        writer.write_str(&text)
    }
}

thread_local! {
    /// The last whole second written, and its text up to the seconds (`2026-11-27T02:40:07`): the date and time
    /// are formatted once a second instead of once a line.
    static SECOND: std::cell::RefCell<(u64, String)> = const { std::cell::RefCell::new((0, String::new())) };
}

/// Writes `now` as humantime's `format_rfc3339_micros` does (`2026-11-27T02:40:07.123456Z`); the caller has
/// checked that `now` is after 1970 and before 10000.
fn write_timestamp(writer: &mut impl fmt::Write, now: std::time::SystemTime) -> fmt::Result {
    let since = now
        .duration_since(std::time::UNIX_EPOCH)
        .map_err(|_| fmt::Error)?;
    let seconds = since.as_secs();
    SECOND.with_borrow_mut(|(cached, text)| {
        if text.is_empty() || *cached != seconds {
            text.clear();
            let whole = std::time::UNIX_EPOCH + std::time::Duration::from_secs(seconds);
            write!(text, "{}", humantime::format_rfc3339_seconds(whole))?;
            // `…:07Z` without its `Z`: the fraction goes before it.
            text.pop();
            *cached = seconds;
        }
        writer.write_str(text)
    })?;
    let mut fraction = *b".000000Z";
    let mut micros = since.subsec_micros();
    for digit in fraction[1..7].iter_mut().rev() {
        *digit = b'0' + (micros % 10) as u8;
        micros /= 10;
    }
    writer.write_str(std::str::from_utf8(&fraction).map_err(|_| fmt::Error)?)
}

/// Writes `value` as `{value:?}` does, with ryu where both write the same shortest digits in the same notation
/// (zero, and plain decimals from 0.0001 up to 10^16), and the standard formatting for any other value.
fn write_f64_debug(writer: &mut impl fmt::Write, value: f64) -> fmt::Result {
    let magnitude = value.abs();
    if value == 0.0 || (1e-4..1e16).contains(&magnitude) {
        writer.write_str(ryu::Buffer::new().format_finite(value))
    } else {
        write!(writer, "{value:?}")
    }
}

/// Writes an access event's fields as they are visited.
struct Line<'w> {
    /// The line being put together.
    writer: &'w mut String,
    json: bool,
    /// Whether no field has been written yet (text puts no space before the first).
    first: bool,
    result: fmt::Result,
}

impl Line<'_> {
    /// Writes the separator and the field's name: ` name=` in text (nothing before the message), `,"name":` in JSON.
    fn name(&mut self, field: &Field) -> fmt::Result {
        let first = std::mem::replace(&mut self.first, false);
        match (self.json, field.name()) {
            (true, name) => {
                self.writer.write_str(",\"")?;
                self.writer.write_str(name)?;
                self.writer.write_str("\":")
            }
            (false, "message") if first => Ok(()),
            (false, "message") => self.writer.write_char(' '),
            (false, name) => {
                if !first {
                    self.writer.write_char(' ')?;
                }
                self.writer.write_str(name)?;
                self.writer.write_char('=')
            }
        }
    }

    /// Writes a text value: quoted and escaped as `{:?}` does in text, as a JSON string in JSON. Text that needs no
    /// escape (a route, a kind) is copied as it is; anything else goes through the standard escapes.
    fn text(&mut self, field: &Field, value: &str) -> fmt::Result {
        self.name(field)?;
        if !self.json && field.name() == "message" {
            return self.writer.write_str(value);
        }
        let plain = if self.json {
            value.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\')
        } else {
            value
                .bytes()
                .all(|b| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\')
        };
        match (plain, self.json) {
            (true, _) => {
                self.writer.write_char('"')?;
                self.writer.write_str(value)?;
                self.writer.write_char('"')
            }
            (false, false) => write!(self.writer, "{value:?}"),
            (false, true) => {
                let quoted = serde_json::to_string(value).map_err(|_| fmt::Error)?;
                self.writer.write_str(&quoted)
            }
        }
    }

    /// Writes an integer, which reads the same in text and JSON, unquoted.
    fn integer(&mut self, field: &Field, value: impl itoa::Integer) -> fmt::Result {
        self.name(field)?;
        self.writer.write_str(itoa::Buffer::new().format(value))
    }

    fn record(&mut self, write: impl FnOnce(&mut Self) -> fmt::Result) {
        if self.result.is_ok() {
            self.result = write(self);
        }
    }
}

impl Visit for Line<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.record(|line| line.text(field, value));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.record(|line| line.integer(field, value));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.record(|line| line.integer(field, value));
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.record(|line| {
            line.name(field)?;
            line.writer.write_str(if value { "true" } else { "false" })
        });
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        self.record(|line| {
            line.name(field)?;
            if line.json {
                // serde_json's rendering (`null` for what JSON cannot hold), as the JSON formatter writes it.
                write!(line.writer, "{}", serde_json::Value::from(value))
            } else {
                write_f64_debug(line.writer, value)
            }
        });
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.record(|line| {
            if line.json {
                // Any value is a JSON string once formatted: the same path as a `&str`.
                let text = format!("{value:?}");
                return line.text(field, &text);
            }
            // Text writes the message and `%` values as they format.
            line.name(field)?;
            write!(line.writer, "{value:?}")
        });
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::telemetry::tests::Captured;
    use crate::telemetry::{subscriber, LogFormat};

    thread_local! {
        /// Lines this formatter wrote itself on this thread, to tell them from lines it handed on.
        pub(super) static WRITTEN_HERE: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    /// One access event as svcgate logs it, with these values.
    fn access(route: &str, latency_ms: f64) {
        tracing::info!(
            target: TARGET,
            request_id = %"0123456789abcdef",
            method = %http::Method::GET,
            kind = "passthrough",
            route,
            status = 200u16,
            latency_ms,
            backend_calls = 1u32,
            "request"
        );
    }

    /// The same event from another target, which the generic formatter writes.
    fn generic(route: &str, latency_ms: f64) {
        tracing::info!(
            request_id = %"0123456789abcdef",
            method = %http::Method::GET,
            kind = "passthrough",
            route,
            status = 200u16,
            latency_ms,
            backend_calls = 1u32,
            "request"
        );
    }

    fn lines(format: LogFormat, log: impl Fn()) -> Vec<String> {
        let captured = Captured::default();
        tracing::subscriber::with_default(subscriber(format, "info", captured.clone(), false), log);
        captured
            .text()
            .lines()
            .map(|line| match format {
                // Timestamps differ between two lines: compare what surrounds them.
                LogFormat::Text => line.split_once("Z ").map_or(line, |(_, rest)| rest).to_owned(),
                LogFormat::Json => {
                    let (head, rest) = line.split_once("\"timestamp\":\"").unwrap_or_default();
                    let (_, tail) = rest.split_once('"').unwrap_or_default();
                    format!("{head}\"timestamp\":\"\"{tail}")
                }
            })
            .collect()
    }

    #[test]
    fn access_lines_are_what_the_generic_formatter_writes() {
        let routes = [
            "/api/v4/projects/1",
            "/a \"quoted\" \\ path",
            "/tab\there",
            "/é/\u{1b}[31m",
        ];
        let latencies = [
            0.365,
            1.0,
            0.0,
            -0.0,
            12345.678,
            0.00005,
            1e16,
            1e300,
            f64::INFINITY,
            f64::NAN,
        ];
        for format in [LogFormat::Text, LogFormat::Json] {
            for route in routes {
                for latency in latencies {
                    let before = WRITTEN_HERE.with(std::cell::Cell::get);
                    let fast = lines(format, || access(route, latency));
                    assert_eq!(
                        WRITTEN_HERE.with(std::cell::Cell::get),
                        before + 1,
                        "not written here"
                    );
                    let slow = lines(format, || generic(route, latency));
                    assert_eq!(
                        WRITTEN_HERE.with(std::cell::Cell::get),
                        before + 1,
                        "written here"
                    );
                    assert_eq!(fast.len(), 1, "{format:?} {route:?} {latency}");
                    assert_eq!(fast, slow, "{format:?} {route:?} {latency}");
                }
            }
        }
    }

    fn debug_of(value: f64) -> String {
        let mut text = String::new();
        write_f64_debug(&mut text, value).unwrap();
        text
    }

    #[test]
    fn latencies_are_written_as_the_standard_debug_format_writes_them() {
        // Every latency svcgate logs is whole microseconds over 1000.
        for micros in (0..200_000u64).chain([999_999_999, 86_400_000_000, u64::from(u32::MAX)]) {
            let value = micros as f64 / 1000.0;
            assert_eq!(debug_of(value), format!("{value:?}"), "{micros} µs");
        }
        for value in [
            1e-4,
            9.999e-5,
            1e16,
            9.999_999_999_999_998e15,
            -1.5,
            f64::MIN_POSITIVE,
            f64::MAX,
        ] {
            assert_eq!(debug_of(value), format!("{value:?}"));
        }
    }

    proptest::proptest! {
        #[test]
        fn any_double_is_written_as_the_standard_debug_format_writes_it(bits: u64) {
            let value = f64::from_bits(bits);
            proptest::prop_assert_eq!(debug_of(value), format!("{value:?}"));
        }
    }

    #[test]
    fn timestamps_are_what_humantime_writes_in_microseconds() {
        let base = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_795_000_000);
        for offset_micros in [0u64, 1, 999_999, 1_000_000, 1_000_001, 59_999_999, 86_400_000_123] {
            let now = base + std::time::Duration::from_micros(offset_micros);
            let mut text = String::new();
            write_timestamp(&mut text, now).unwrap();
            assert_eq!(text, humantime::format_rfc3339_micros(now).to_string());
        }
    }

    #[test]
    fn access_lines_start_with_an_rfc3339_timestamp_in_microseconds() {
        let captured = Captured::default();
        tracing::subscriber::with_default(
            subscriber(LogFormat::Text, "info", captured.clone(), false),
            || access("/x", 1.5),
        );
        let text = captured.text();
        let (timestamp, rest) = text.split_once(' ').unwrap_or_default();
        assert_eq!(timestamp.len(), "2026-11-22T17:25:45.526728Z".len(), "{text}");
        assert!(humantime::parse_rfc3339(timestamp).is_ok(), "{text}");
        assert!(
            rest.starts_with(" INFO request request_id=0123456789abcdef method=GET"),
            "{text}"
        );
        assert!(text.ends_with('\n'));
    }

    #[test]
    fn a_filter_that_silences_the_access_target_silences_access_lines() {
        let captured = Captured::default();
        tracing::subscriber::with_default(
            subscriber(
                LogFormat::Text,
                "info,svcgate::access=warn",
                captured.clone(),
                false,
            ),
            || {
                access("/x", 1.0);
                generic("/y", 1.0);
            },
        );
        let text = captured.text();
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(text.contains("route=\"/y\""));
    }
}

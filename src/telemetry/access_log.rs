//! The access log: one line per answered request, [`log`]ged by the server once the answer is ready.
//!
//! When svcgate's own log sink writes the lines (the binary's [`init_logging`](super::init_logging), no colours,
//! nothing logged at `debug`, no `log_level` directive on spans or fields) and the access log is on, [`log`] puts
//! the line together itself and hands it to the
//! sink: no tracing event, no field visitor, no generic formatter. Otherwise it logs a `request` event at `info`
//! with target [`TARGET`], which the subscriber formats as any other. The line is byte for byte what
//! tracing-subscriber's formatter writes for that event (text or JSON, as `log_format` says; the tests compare both
//! over awkward routes and latencies), so nothing downstream changes with the path taken.
//!
//! Writing the line straight into the sink instead of through the event and the visitor: svcgate's instructions per
//! 1 KB passthrough request 48,600 → 46,900 under callgrind, with the sink keeping its buffer's size
//! (bench/instructions, bench/RESULTS.md, 2026-11-27). Names and text go in with `push_str`, integers with itoa,
//! and the date and time of the timestamp once a second: 52,000 → 49,300 (same page); the latency from its whole
//! microseconds, as `{:?}` writes the milliseconds, instead of through ryu: 46,900 → 46,700.

use std::fmt::{self, Write as _};
use std::sync::OnceLock;
use std::time::SystemTime;

use crate::telemetry::logsink::BatchedStderr;

/// The target of the access log's events (`log_level = "info,svcgate::access=warn"` silences the access log).
pub const TARGET: &str = "svcgate::access";

/// One answered request, as its access line shows it.
#[derive(Debug, Clone, Copy)]
pub struct AccessEntry<'a> {
    /// The request id (svcgate's, or the client's own `X-Request-Id`).
    pub request_id: &'a str,
    /// The request method.
    pub method: &'a str,
    /// What answered: `passthrough`, `rewrite`, `alerts`, `pages` or `internal`.
    pub kind: &'a str,
    /// The rule's V3 template for a rewritten request, the path (never the query) otherwise.
    pub route: &'a str,
    /// The answer's status code.
    pub status: u16,
    /// Time to the answer's head, in whole microseconds (the line shows milliseconds).
    pub latency_micros: u64,
    /// Requests sent to the backend for this one.
    pub backend_calls: u64,
}

/// Where [`log`] writes lines itself, once [`write_directly`] has set it.
struct Direct {
    sink: BatchedStderr,
    json: bool,
}

static DIRECT: OnceLock<Direct> = OnceLock::new();

/// Has [`log`] write lines straight into `sink`, as JSON when `json`. Called once, by the binary's
/// [`init_logging`](super::init_logging), and only when its subscriber would write the access event as a plain line
/// into that sink: installed, without colours, with nothing at `debug` (no span around the event) and the access
/// target on at `info`.
pub(super) fn write_directly(sink: BatchedStderr, json: bool) {
    // A second call (tests that start several gateways) keeps the first sink, as the first subscriber is kept.
    drop(DIRECT.set(Direct { sink, json }));
}

/// Whether the current subscriber, built from `filter` with `max_level` as its most verbose level, writes the access
/// event as a plain line: nothing at `debug` (svcgate's spans are all at `debug`, and a line inside one names it), no
/// directive that selects by span or field (`svcgate::access[{status}]=warn`, which a probe without the event's
/// values cannot answer for), and the access target on at `info`.
pub(super) fn written_plain(filter: &str, max_level: Option<tracing::level_filters::LevelFilter>) -> bool {
    let nothing_at_debug = max_level.is_some_and(|max| max <= tracing::level_filters::LevelFilter::INFO);
    nothing_at_debug && !filter.contains('[') && tracing::enabled!(target: TARGET, tracing::Level::INFO)
}

/// Logs one answered request.
pub fn log(entry: &AccessEntry<'_>) {
    if let Some(direct) = DIRECT.get() {
        let now = SystemTime::now();
        let mut line = String::with_capacity(256);
        if format_line(&mut line, now, direct.json, entry).is_ok() {
            direct.sink.append(line.as_bytes());
            return;
        }
    }
    event(entry);
}

/// Logs `entry` as a tracing event, for the subscriber to format.
fn event(entry: &AccessEntry<'_>) {
    tracing::info!(
        target: TARGET,
        request_id = %entry.request_id,
        method = %entry.method,
        kind = entry.kind,
        route = entry.route,
        status = entry.status,
        // Whole microseconds: the division is exact to the nearest double, so the line shows at most 3 decimals.
        latency_ms = entry.latency_micros as f64 / 1000.0,
        backend_calls = entry.backend_calls,
        "request"
    );
}

/// Writes `entry`'s whole line (with its newline) as the generic formatter writes its event at `now`. Fails, writing
/// nothing worth keeping, for a clock before 1970 or after 9999, which humantime cannot write and the generic
/// formatter writes its own way.
fn format_line(line: &mut String, now: SystemTime, json: bool, entry: &AccessEntry<'_>) -> fmt::Result {
    let level = tracing::Level::INFO.as_str();
    if json {
        line.push_str("{\"timestamp\":\"");
        write_timestamp(line, now)?;
        line.push_str("\",\"level\":\"");
        line.push_str(level);
        line.push('"');
    } else {
        write_timestamp(line, now)?;
        // `{now} {level:>5} `, as the generic formatter pads the level.
        line.push_str(&"      "[level.len().min(5)..]);
        line.push_str(level);
        line.push(' ');
    }
    let mut fields = Fields {
        line,
        json,
        first: true,
    };
    fields.message("request");
    fields.display("request_id", entry.request_id);
    fields.display("method", entry.method);
    fields.text("kind", entry.kind)?;
    fields.text("route", entry.route)?;
    fields.integer("status", entry.status);
    fields.milliseconds("latency_ms", entry.latency_micros)?;
    fields.integer("backend_calls", entry.backend_calls);
    if json {
        line.push('}');
    }
    line.push('\n');
    Ok(())
}

thread_local! {
    /// The last whole second written, and its text up to the seconds (`2026-11-27T02:40:07`): the date and time
    /// are formatted once a second instead of once a line.
    static SECOND: std::cell::RefCell<(u64, String)> = const { std::cell::RefCell::new((0, String::new())) };
}

/// Writes `now` as humantime's `format_rfc3339_micros` does (`2026-11-27T02:40:07.123456Z`); fails for a time before
/// 1970 or from the year 10000 on.
fn write_timestamp(line: &mut String, now: SystemTime) -> fmt::Result {
    let since = now
        .duration_since(std::time::UNIX_EPOCH)
        .map_err(|_| fmt::Error)?;
    let seconds = since.as_secs();
    if seconds >= 253_402_300_800 {
        return Err(fmt::Error);
    }
    SECOND.with_borrow_mut(|(cached, text)| {
        if text.is_empty() || *cached != seconds {
            text.clear();
            let whole = std::time::UNIX_EPOCH + std::time::Duration::from_secs(seconds);
            write!(text, "{}", humantime::format_rfc3339_seconds(whole))?;
            // `…:07Z` without its `Z`: the fraction goes before it.
            text.pop();
            *cached = seconds;
        }
        line.push_str(text);
        Ok(())
    })?;
    let mut fraction = *b".000000Z";
    let mut micros = since.subsec_micros();
    for digit in fraction[1..7].iter_mut().rev() {
        *digit = b'0' + (micros % 10) as u8;
        micros /= 10;
    }
    line.push_str(std::str::from_utf8(&fraction).map_err(|_| fmt::Error)?);
    Ok(())
}

/// Below this many microseconds (11.6 days), the milliseconds' double is within a ten-thousandth of a millisecond of
/// every 3-decimal number near it, so its shortest form (what `{:?}` and serde_json write) is the exact decimal.
const EXACT_MICROS: u64 = 1_000_000_000_000;

/// Writes `micros` microseconds as milliseconds, as `{:?}` writes `micros as f64 / 1000.0` (`1.0`, `0.365`,
/// `12345.678`), and as serde_json writes it: the same digits for every latency below [`EXACT_MICROS`], formatted
/// as the double past it.
fn write_millis(line: &mut String, micros: u64, json: bool) -> fmt::Result {
    if micros >= EXACT_MICROS {
        let value = micros as f64 / 1000.0;
        return if json {
            write!(line, "{}", serde_json::Value::from(value))
        } else {
            write!(line, "{value:?}")
        };
    }
    line.push_str(itoa::Buffer::new().format(micros / 1000));
    line.push('.');
    let fraction = micros % 1000;
    let digits = [
        b'0' + (fraction / 100) as u8,
        b'0' + (fraction / 10 % 10) as u8,
        b'0' + (fraction % 10) as u8,
    ];
    // At least one decimal (`1.0`), trailing zeros left out (`1.5`, not `1.500`).
    let kept = digits[1..]
        .iter()
        .rposition(|&digit| digit != b'0')
        .map_or(1, |last| last + 2);
    line.push_str(std::str::from_utf8(&digits[..kept]).map_err(|_| fmt::Error)?);
    Ok(())
}

/// Writes an access line's fields, each as the generic formatter writes a field of its type.
struct Fields<'l> {
    /// The line being put together.
    line: &'l mut String,
    json: bool,
    /// Whether no field has been written yet (text puts no space before the first).
    first: bool,
}

impl Fields<'_> {
    /// Writes the separator and the field's name: ` name=` in text, `,"name":` in JSON.
    fn name(&mut self, name: &str) {
        let first = std::mem::replace(&mut self.first, false);
        if self.json {
            self.line.push_str(",\"");
            self.line.push_str(name);
            self.line.push_str("\":");
        } else {
            if !first {
                self.line.push(' ');
            }
            self.line.push_str(name);
            self.line.push('=');
        }
    }

    /// The event's message: bare text first in a text line, `"message"` in JSON.
    fn message(&mut self, message: &str) {
        if self.json {
            self.name("message");
            self.json_string(message);
        } else {
            self.first = false;
            self.line.push_str(message);
        }
    }

    /// A `%value` field: as it displays in text, a JSON string in JSON.
    fn display(&mut self, name: &str, value: &str) {
        self.name(name);
        if self.json {
            self.json_string(value);
        } else {
            self.line.push_str(value);
        }
    }

    /// A text field: quoted and escaped as `{:?}` does in text, a JSON string in JSON.
    fn text(&mut self, name: &str, value: &str) -> fmt::Result {
        self.name(name);
        if self.json {
            self.json_string(value);
            return Ok(());
        }
        // Text that needs no escape (a route, a kind) is copied as it is; anything else goes through `{:?}`.
        if value
            .bytes()
            .all(|b| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\')
        {
            self.line.push('"');
            self.line.push_str(value);
            self.line.push('"');
            Ok(())
        } else {
            write!(self.line, "{value:?}")
        }
    }

    /// A JSON string, escaped only where it needs to be, as serde_json writes it.
    fn json_string(&mut self, value: &str) {
        if value.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
            self.line.push('"');
            self.line.push_str(value);
            self.line.push('"');
        } else {
            // Serialising a `str` into a `String` cannot fail; the fallback keeps the line well-formed regardless.
            let quoted = serde_json::to_string(value).unwrap_or_else(|_| "\"\"".to_owned());
            self.line.push_str(&quoted);
        }
    }

    /// An integer, which reads the same in text and JSON, unquoted.
    fn integer(&mut self, name: &str, value: impl itoa::Integer) {
        self.name(name);
        self.line.push_str(itoa::Buffer::new().format(value));
    }

    /// Whole microseconds as the milliseconds' double is written ([`write_millis`]).
    fn milliseconds(&mut self, name: &str, micros: u64) -> fmt::Result {
        self.name(name);
        write_millis(self.line, micros, self.json)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::telemetry::tests::Captured;
    use crate::telemetry::{subscriber, LogFormat};

    /// An access entry with these values.
    fn entry(route: &str, latency_micros: u64) -> AccessEntry<'_> {
        AccessEntry {
            request_id: "0123456789abcdef",
            method: "GET",
            kind: "passthrough",
            route,
            status: 200,
            latency_micros,
            backend_calls: 1,
        }
    }

    /// What surrounds the timestamp of each line: two lines written at different times compare equal.
    fn without_timestamps(format: LogFormat, text: &str) -> Vec<String> {
        text.lines()
            .map(|line| match format {
                LogFormat::Text => line.split_once("Z ").map_or(line, |(_, rest)| rest).to_owned(),
                LogFormat::Json => {
                    let (head, rest) = line.split_once("\"timestamp\":\"").unwrap_or_default();
                    let (_, tail) = rest.split_once('"').unwrap_or_default();
                    format!("{head}\"timestamp\":\"\"{tail}")
                }
            })
            .collect()
    }

    /// The lines the installed subscriber writes while `log` runs.
    fn formatted(format: LogFormat, filter: &str, log: impl Fn()) -> String {
        let captured = Captured::default();
        tracing::subscriber::with_default(subscriber(format, filter, captured.clone(), false), log);
        captured.text()
    }

    fn written_here(format: LogFormat, entry: &AccessEntry<'_>) -> String {
        let mut line = String::new();
        format_line(&mut line, SystemTime::now(), format == LogFormat::Json, entry).unwrap();
        line
    }

    #[test]
    fn access_lines_written_here_are_what_the_generic_formatter_writes() {
        let routes = [
            "/api/v4/projects/1",
            "/a \"quoted\" \\ path",
            "/tab\there",
            "/é/\u{1b}[31m",
        ];
        let latencies = [
            365,
            1000,
            0,
            1,
            12_345_678,
            999_999_999_999,
            EXACT_MICROS,
            123_456_789_012_345,
            u64::MAX,
        ];
        for format in [LogFormat::Text, LogFormat::Json] {
            for route in routes {
                for latency in latencies {
                    let entry = entry(route, latency);
                    let here = written_here(format, &entry);
                    let generic = formatted(format, "info", || event(&entry));
                    assert_eq!(here.lines().count(), 1, "{format:?} {route:?} {latency}");
                    assert!(here.ends_with('\n'));
                    assert_eq!(
                        without_timestamps(format, &here),
                        without_timestamps(format, &generic),
                        "{format:?} {route:?} {latency}"
                    );
                }
            }
        }
    }

    /// What the line shows for `micros`, and what `{:?}` and serde_json write for the milliseconds' double.
    fn millis_both_ways(micros: u64) -> [(String, String); 2] {
        let value = micros as f64 / 1000.0;
        [
            (false, format!("{value:?}")),
            (true, serde_json::Value::from(value).to_string()),
        ]
        .map(|(json, expected)| {
            let mut text = String::new();
            write_millis(&mut text, micros, json).unwrap();
            (text, expected)
        })
    }

    #[test]
    fn latencies_are_written_as_the_milliseconds_double_is_written() {
        for micros in (0..200_000u64).chain([
            999_999_999,
            86_400_000_000,
            u64::from(u32::MAX),
            EXACT_MICROS - 1,
            EXACT_MICROS,
            u64::MAX,
        ]) {
            for (written, expected) in millis_both_ways(micros) {
                assert_eq!(written, expected, "{micros} µs");
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn any_latency_is_written_as_the_milliseconds_double_is_written(micros: u64) {
            for (written, expected) in millis_both_ways(micros) {
                proptest::prop_assert_eq!(written, expected);
            }
        }

        #[test]
        fn any_latency_below_the_exact_bound_is_written_as_the_milliseconds_double_is_written(
            micros in 0..EXACT_MICROS
        ) {
            for (written, expected) in millis_both_ways(micros) {
                proptest::prop_assert_eq!(written, expected);
            }
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
    fn a_clock_humantime_cannot_write_is_left_to_the_generic_formatter() {
        let mut line = String::new();
        let far = std::time::UNIX_EPOCH + std::time::Duration::from_secs(253_402_300_800);
        assert!(format_line(&mut line, far, false, &entry("/x", 1000)).is_err());
    }

    #[test]
    fn access_lines_start_with_an_rfc3339_timestamp_in_microseconds() {
        let text = written_here(LogFormat::Text, &entry("/x", 1500));
        let (timestamp, rest) = text.split_once(' ').unwrap_or_default();
        assert_eq!(timestamp.len(), "2026-11-22T17:25:45.526728Z".len(), "{text}");
        assert!(humantime::parse_rfc3339(timestamp).is_ok(), "{text}");
        assert!(
            rest.starts_with(" INFO request request_id=0123456789abcdef method=GET"),
            "{text}"
        );
    }

    #[test]
    fn lines_are_written_here_only_where_the_subscriber_writes_the_event_as_a_plain_line() {
        for (filter, plain) in [
            ("info", true),
            ("warn", false),
            ("debug", false),
            ("info,svcgate::server=debug", false),
            ("info,svcgate::access=warn", false),
            ("info,svcgate::access[{status}]=warn", false),
            ("info,svcgate::access[{route}]=off", false),
            ("info,svcgate::access[{status=500}]=info", false),
        ] {
            let subscriber = subscriber(LogFormat::Text, filter, Captured::default(), false);
            let max_level = subscriber.max_level_hint();
            let written = tracing::subscriber::with_default(subscriber, || written_plain(filter, max_level));
            assert_eq!(written, plain, "{filter}");
        }
    }

    #[test]
    fn a_filter_that_silences_the_access_target_silences_access_events() {
        let text = formatted(LogFormat::Text, "info,svcgate::access=warn", || {
            event(&entry("/x", 1000));
            tracing::info!(route = "/y", "request");
        });
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(text.contains("route=\"/y\""));
    }
}

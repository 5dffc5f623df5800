//! The text log line, written without the general-purpose formatter's overhead.
//!
//! Every request logs one line, so its cost is paid on every request: tracing-subscriber's default `Full` format
//! took about 11 k instructions a line (a sixth of a whole passthrough request), most of it in styling that is
//! off anyway and in `Debug` formatting of each value. [`TextLine`] writes the same layout —
//! `<RFC 3339 UTC timestamp> <LEVEL> <span{fields}:…> <message> <name>=<value>…` — with strings, integers and
//! booleans written directly. Values are rendered exactly as the default format renders them (strings quoted and
//! escaped as `Debug` does, a message's terminal control characters escaped); colours only when the writer has
//! ANSI escapes on.

use std::fmt::{self, Write};
use std::time::SystemTime;

use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields, FormattedFields};
use tracing_subscriber::registry::LookupSpan;

/// Formats events as the default text layout, faster. Span fields are the `N` formatter's.
#[derive(Debug, Clone, Copy, Default)]
pub struct TextLine;

const DIM: &str = "\x1b[2m";
const BOLD: &str = "\x1b[1m";
const ITALIC: &str = "\x1b[3m";
const RESET: &str = "\x1b[0m";

fn level_text(level: &Level, ansi: bool) -> &'static str {
    match (*level, ansi) {
        (Level::TRACE, false) => "TRACE",
        (Level::DEBUG, false) => "DEBUG",
        (Level::INFO, false) => " INFO",
        (Level::WARN, false) => " WARN",
        (Level::ERROR, false) => "ERROR",
        (Level::TRACE, true) => "\x1b[35mTRACE\x1b[0m",
        (Level::DEBUG, true) => "\x1b[34mDEBUG\x1b[0m",
        (Level::INFO, true) => "\x1b[32m INFO\x1b[0m",
        (Level::WARN, true) => "\x1b[33m WARN\x1b[0m",
        (Level::ERROR, true) => "\x1b[31mERROR\x1b[0m",
    }
}

impl<S, N> FormatEvent<S, N> for TextLine
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let ansi = writer.has_ansi_escapes();
        // humantime panics on a time before 1970: a clock set that far back is shown as the epoch.
        let timestamp = humantime::format_rfc3339_micros(SystemTime::now().max(SystemTime::UNIX_EPOCH));
        if ansi {
            write!(writer, "{DIM}{timestamp}{RESET} ")?;
        } else {
            write!(writer, "{timestamp} ")?;
        }
        writer.write_str(level_text(event.metadata().level(), ansi))?;
        writer.write_char(' ')?;
        if let Some(scope) = ctx.event_scope() {
            let mut any = false;
            for span in scope.from_root() {
                any = true;
                let (bold, dim, reset) = if ansi { (BOLD, DIM, RESET) } else { ("", "", "") };
                write!(writer, "{bold}{}{reset}", span.metadata().name())?;
                if let Some(fields) = span.extensions().get::<FormattedFields<N>>() {
                    if !fields.is_empty() {
                        write!(writer, "{bold}{{{reset}{fields}{bold}}}{reset}")?;
                    }
                }
                write!(writer, "{dim}:{reset}")?;
            }
            if any {
                writer.write_char(' ')?;
            }
        }
        let mut fields = FieldWriter {
            sanitize: writer.sanitizes_ansi_escapes(),
            writer: &mut writer,
            ansi,
            first: true,
            result: Ok(()),
        };
        event.record(&mut fields);
        fields.result?;
        writer.write_char('\n')
    }
}

/// Writes an event's fields as `message name=value …`.
struct FieldWriter<'w, 'b> {
    writer: &'w mut Writer<'b>,
    ansi: bool,
    sanitize: bool,
    first: bool,
    result: fmt::Result,
}

impl<'b> FieldWriter<'_, 'b> {
    /// The separator and `name=`; the message has neither name nor `=`.
    fn start(&mut self, field: &Field) -> fmt::Result {
        if !std::mem::take(&mut self.first) {
            self.writer.write_char(' ')?;
        }
        let name = field.name();
        let name = name.strip_prefix("r#").unwrap_or(name);
        if self.ansi {
            write!(self.writer, "{ITALIC}{name}{RESET}{DIM}={RESET}")
        } else {
            self.writer.write_str(name)?;
            self.writer.write_char('=')
        }
    }

    fn message(&mut self, value: &dyn fmt::Debug) -> fmt::Result {
        if !std::mem::take(&mut self.first) {
            self.writer.write_char(' ')?;
        }
        write!(self.escaped(), "{value:?}")
    }

    /// An integer field, written without `Debug` formatting (a message is written bare, as any other message).
    fn integer<I: itoa::Integer + fmt::Debug>(&mut self, field: &Field, value: I) {
        if field.name() == "message" {
            self.record_debug(field, &value);
        } else if self.result.is_ok() && shown(field) {
            self.result = self
                .start(field)
                .and_then(|()| self.writer.write_str(itoa::Buffer::new().format(value)));
        }
    }

    /// The writer, escaping terminal controls unless the subscriber was told not to.
    fn escaped(&mut self) -> EscapeControls<'_, 'b> {
        EscapeControls {
            writer: &mut *self.writer,
            on: self.sanitize,
        }
    }
}

/// Whether a field is written: not `log.*`, the metadata of a `log` record that the layout has already used
/// (as the default format skips it).
fn shown(field: &Field) -> bool {
    !field.name().starts_with("log.")
}

impl Visit for FieldWriter<'_, '_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        if self.result.is_err() || !shown(field) {
            return;
        }
        if field.name() == "message" {
            self.result = self.message(&format_args!("{value}"));
            return;
        }
        self.result = self.start(field).and_then(|()| {
            // `Debug` of a string of printable ASCII without quotes or backslashes is the string in quotes.
            if value
                .bytes()
                .all(|byte| (b' '..=b'~').contains(&byte) && byte != b'"' && byte != b'\\')
            {
                self.writer.write_char('"')?;
                self.writer.write_str(value)?;
                self.writer.write_char('"')
            } else {
                write!(self.writer, "{value:?}")
            }
        });
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.integer(field, value);
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.integer(field, value);
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        if field.name() == "message" {
            self.record_debug(field, &value);
        } else if self.result.is_ok() && shown(field) {
            self.result = self
                .start(field)
                .and_then(|()| self.writer.write_str(if value { "true" } else { "false" }));
        }
    }

    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        if field.name() == "message" {
            return self.record_debug(field, &format_args!("{value}"));
        }
        if self.result.is_err() || !shown(field) {
            return;
        }
        self.result = self.start(field).and_then(|()| {
            write!(self.escaped(), "{value}")?;
            let Some(mut source) = value.source() else {
                return Ok(());
            };
            // As the default format: ` name.sources=[first, second]`.
            if self.ansi {
                write!(
                    self.writer,
                    " {ITALIC}{}{RESET}{ITALIC}.sources{RESET}{DIM}={RESET}[",
                    field.name()
                )?;
            } else {
                write!(self.writer, " {}.sources=[", field.name())?;
            }
            loop {
                write!(self.escaped(), "{source}")?;
                match source.source() {
                    Some(next) => {
                        self.writer.write_str(", ")?;
                        source = next;
                    }
                    None => return self.writer.write_char(']'),
                }
            }
        });
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if self.result.is_err() || !shown(field) {
            return;
        }
        self.result = if field.name() == "message" {
            self.message(value)
        } else {
            self.start(field).and_then(|()| write!(self.writer, "{value:?}"))
        };
    }
}

/// Escapes the characters a terminal would act on (ESC, BEL, BS, FF, DEL and C1 controls), as the default
/// format does for messages, so a logged value cannot drive the reader's terminal.
struct EscapeControls<'w, 'b> {
    writer: &'w mut Writer<'b>,
    on: bool,
}

impl Write for EscapeControls<'_, '_> {
    fn write_str(&mut self, text: &str) -> fmt::Result {
        if !self.on {
            return self.writer.write_str(text);
        }
        let mut rest = text;
        while let Some(at) = rest.find(|ch: char| {
            matches!(
                ch,
                '\x1b' | '\x07' | '\x08' | '\x0c' | '\x7f' | '\u{80}'..='\u{9f}'
            )
        }) {
            self.writer.write_str(&rest[..at])?;
            let ch = rest[at..].chars().next().unwrap_or_default();
            match ch {
                '\x1b' | '\x07' | '\x08' | '\x0c' | '\x7f' => write!(self.writer, "\\x{:02x}", ch as u32)?,
                _ => write!(self.writer, "\\u{{{:x}}}", ch as u32)?,
            }
            rest = &rest[at + ch.len_utf8()..];
        }
        self.writer.write_str(rest)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use tracing_subscriber::fmt::MakeWriter;

    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("outer \x1b failure")]
    struct Outer(#[source] Inner);

    #[derive(Debug, thiserror::Error)]
    #[error("inner cause")]
    struct Inner;

    /// Collects what the subscriber writes.
    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Captured {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0
                .lock()
                .map_err(|_| std::io::ErrorKind::Other)?
                .extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl<'a> MakeWriter<'a> for Captured {
        type Writer = Captured;
        fn make_writer(&'a self) -> Self::Writer {
            self.clone()
        }
    }

    impl Captured {
        fn text(&self) -> String {
            String::from_utf8_lossy(&self.0.lock().map(|bytes| bytes.clone()).unwrap_or_default())
                .into_owned()
        }
    }

    /// Logs the same events through the default text format and through [`TextLine`].
    fn both(ansi: bool, log: impl Fn()) -> (String, String) {
        let default = Captured::default();
        let fast = Captured::default();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(default.clone())
            .with_ansi(ansi)
            .with_target(false)
            .with_max_level(Level::TRACE)
            .finish();
        tracing::subscriber::with_default(subscriber, &log);
        let subscriber = tracing_subscriber::fmt()
            .with_writer(fast.clone())
            .with_ansi(ansi)
            .with_target(false)
            .with_max_level(Level::TRACE)
            .event_format(TextLine)
            .finish();
        tracing::subscriber::with_default(subscriber, &log);
        (default.text(), fast.text())
    }

    /// Drops each line's timestamp, which differs between two runs.
    fn without_timestamps(text: &str) -> Vec<String> {
        text.lines()
            .map(|line| line.split_once("Z ").map_or(line, |(_, rest)| rest).to_owned())
            .collect()
    }

    fn events() {
        let peer = "127.0.0.1:5000";
        let span = tracing::debug_span!("connection", %peer, id = 7);
        let _entered = span.enter();
        tracing::info!(
            request_id = "ab12",
            method = %http::Method::GET,
            kind = "passthrough",
            route = "/api/v4/projects/1",
            status = 200u16,
            latency_ms = 0.945,
            backend_calls = 1usize,
            "request"
        );
        tracing::warn!(
            quoted = "a \"b\" \\ c\td é",
            negative = -3i64,
            flag = true,
            "odd values"
        );
        tracing::error!(error = %"refused", "message with \x1b[31m escape \u{85} and {}", 5);
        let failure = Outer(Inner);
        tracing::warn!(
            error = &failure as &(dyn std::error::Error + 'static),
            "with sources"
        );
        tracing::warn!(
            error = &Inner as &(dyn std::error::Error + 'static),
            "without sources"
        );
        tracing::debug!(r#type = "x", "raw name");
        tracing::trace!("no fields");
        tracing::info!(message = 5u64, flag = false);
        tracing::info!(message = true);
        tracing::info!(
            "log.target" = "rustls::client",
            "log.line" = 7u64,
            "from a log record"
        );
    }

    #[test]
    fn text_lines_match_the_default_format_field_for_field() {
        let (default, fast) = both(false, events);
        assert_eq!(without_timestamps(&default), without_timestamps(&fast));
        assert_eq!(fast.lines().count(), 10);
    }

    #[test]
    fn text_lines_start_with_an_rfc3339_utc_timestamp_in_microseconds() {
        let (_, fast) = both(false, events);
        for line in fast.lines() {
            let (timestamp, _) = line.split_once(' ').unwrap_or_default();
            assert_eq!(timestamp.len(), "2026-11-22T17:25:45.526728Z".len(), "{line}");
            assert!(humantime::parse_rfc3339(timestamp).is_ok(), "{line}");
        }
    }

    #[test]
    fn coloured_lines_keep_the_same_text_once_escapes_are_removed() {
        let (_, fast) = both(true, events);
        let mut plain = fast.clone();
        for escape in [
            DIM, BOLD, ITALIC, RESET, "\x1b[31m", "\x1b[32m", "\x1b[33m", "\x1b[34m", "\x1b[35m",
        ] {
            plain = plain.replace(escape, "");
        }
        let (default, _) = both(false, events);
        assert_eq!(without_timestamps(&plain), without_timestamps(&default));
        assert!(fast.contains("\x1b[32m INFO\x1b[0m"));
    }
}

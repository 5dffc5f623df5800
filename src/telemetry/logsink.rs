//! The log sink: formatted lines go into a shared buffer that a background thread writes to stderr every
//! [`FLUSH_INTERVAL`], so the log line of a request costs the runtime worker a copy instead of a system call.
//!
//! Lines are appended whole (the formatter hands over one line per write), in the order they were logged. When
//! the buffer holds more than [`MAX_BUFFERED`] bytes (stderr is slower than the traffic), the writing thread
//! writes it out itself: memory stays bounded and nothing is dropped. What is still buffered when the process is
//! killed outright (SIGKILL) is lost; every normal exit flushes through [`LogFlusher`].
//!
//! Kept instead of tracing-appender's non-blocking writer, which wakes its thread and writes once per line:
//! side by side (2026-11-24, bench/RESULTS.md) that writer cost 2.5 × the CPU per 1 KB passthrough request on
//! 1 connection (74 against 29 µs) and 1.3 × on 50 (29 against 22 µs).

use std::io::Write;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tracing_subscriber::fmt::MakeWriter;

/// How long a log line may wait in the buffer before it reaches stderr.
pub const FLUSH_INTERVAL: Duration = Duration::from_millis(100);

/// Buffered bytes above which the logging thread writes to stderr itself.
pub const MAX_BUFFERED: usize = 1 << 20;

/// The shared state: lines waiting, and the lock that orders writes to stderr.
#[derive(Default)]
struct Shared {
    /// Formatted lines not yet written.
    pending: Mutex<Vec<u8>>,
    /// Held while writing to stderr, always taken before `pending`, so chunks leave in order.
    output: Mutex<()>,
    /// Set when the flushing thread should stop; signalled to wake it early.
    stop: Mutex<bool>,
    /// Wakes the flushing thread for a stop.
    wake: Condvar,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A thread that panicked while holding a log lock left at worst a partial line: keep logging.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Shared {
    /// Writes everything pending to stderr, in order.
    fn flush(&self) {
        let _output = lock(&self.output);
        let chunk = take_keeping_capacity(&mut lock(&self.pending));
        if !chunk.is_empty() {
            // Nowhere to report a failing stderr; the lines are dropped rather than stalling the gateway.
            drop(std::io::stderr().lock().write_all(&chunk));
        }
    }

    fn append(&self, line: &[u8]) {
        let mut pending = lock(&self.pending);
        if pending.len() + line.len() <= MAX_BUFFERED {
            pending.extend_from_slice(line);
            return;
        }
        drop(pending);
        // Over the bound: write out what is pending, then queue this line behind it.
        let _output = lock(&self.output);
        let chunk = take_keeping_capacity(&mut lock(&self.pending));
        drop(std::io::stderr().lock().write_all(&chunk));
        lock(&self.pending).extend_from_slice(line);
    }
}

/// Takes the pending lines, leaving an empty buffer the size they took: the next interval's lines then fit without
/// the buffer growing (and copying itself) a dozen times over: its copies fell from 270 to 100 instructions per 1 KB
/// passthrough request (bench/instructions' profile; part of the access line's step, 48,600 → 46,900).
fn take_keeping_capacity(pending: &mut Vec<u8>) -> Vec<u8> {
    let room = pending.len().min(MAX_BUFFERED);
    std::mem::replace(pending, Vec::with_capacity(room))
}

/// The [`MakeWriter`] given to the tracing formatter, and the access log's sink.
#[derive(Clone)]
pub struct BatchedStderr {
    shared: Arc<Shared>,
}

/// Flushes the sink when dropped, and stops its thread.
pub struct LogFlusher {
    shared: Arc<Shared>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl BatchedStderr {
    /// Starts the flushing thread; keep the [`LogFlusher`] alive for as long as lines may be logged.
    pub fn start() -> std::io::Result<(Self, LogFlusher)> {
        let shared = Arc::new(Shared::default());
        let for_thread = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("svcgate-log".to_owned())
            .spawn(move || loop {
                let stop = lock(&for_thread.stop);
                let (stop, _) = for_thread
                    .wake
                    .wait_timeout_while(stop, FLUSH_INTERVAL, |stop| !*stop)
                    .unwrap_or_else(PoisonError::into_inner);
                let stopping = *stop;
                drop(stop);
                for_thread.flush();
                if stopping {
                    return;
                }
            })?;
        let flusher = LogFlusher {
            shared: Arc::clone(&shared),
            thread: Some(thread),
        };
        Ok((BatchedStderr { shared }, flusher))
    }
}

impl BatchedStderr {
    /// Queues one whole line (or several), in order after every line queued before.
    pub fn append(&self, lines: &[u8]) {
        self.shared.append(lines);
    }
}

impl LogFlusher {
    /// Writes every pending line to stderr now.
    pub fn flush(&self) {
        self.shared.flush();
    }
}

impl Drop for LogFlusher {
    fn drop(&mut self) {
        *lock(&self.shared.stop) = true;
        self.shared.wake.notify_all();
        if let Some(thread) = self.thread.take() {
            drop(thread.join());
        }
        self.shared.flush();
    }
}

/// One event's writer: appends what it is given to the shared buffer.
pub struct LineWriter<'a> {
    shared: &'a Shared,
}

impl Write for LineWriter<'_> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.shared.append(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for BatchedStderr {
    type Writer = LineWriter<'a>;

    fn make_writer(&'a self) -> Self::Writer {
        LineWriter { shared: &self.shared }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_wait_in_order_until_flushed_and_the_bound_forces_a_write() {
        let shared = Shared::default();
        shared.append(b"one\n");
        shared.append(b"two\n");
        assert_eq!(&*lock(&shared.pending), b"one\ntwo\n");
        let big = vec![b'x'; MAX_BUFFERED];
        shared.append(&big);
        // The first two lines went to stderr; the big one waits alone.
        assert_eq!(lock(&shared.pending).len(), MAX_BUFFERED);
        shared.flush();
        assert!(lock(&shared.pending).is_empty());
    }
}

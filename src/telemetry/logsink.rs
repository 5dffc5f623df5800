//! The log sink: formatted lines go into a shared buffer that a background thread writes to stderr every
//! [`FLUSH_INTERVAL`], or as soon as it holds [`FLUSH_AT`] bytes, so the log line of a request costs the runtime
//! worker a copy instead of a system call.
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

/// Buffered bytes at which the flushing thread is woken before [`FLUSH_INTERVAL`] is up. Two buffers of up to twice
/// this size take turns (one filling, one being written), so a busy gateway appends into memory it used a moment ago
/// instead of into a fresh buffer the size of a whole interval's lines (600 KB at 40,000 requests a second). Bench
/// row 1, 1 KB and 50 conn: the sink's user time 0.26 → 0.10 µs a request (perf; bench/RESULTS.md, 2026-11-27).
pub const FLUSH_AT: usize = 64 << 10;

/// Buffered bytes above which the logging thread writes to stderr itself.
pub const MAX_BUFFERED: usize = 1 << 20;

/// The shared state: lines waiting, the buffer last written, and the flushing thread's signals.
#[derive(Default)]
struct Shared {
    /// Formatted lines not yet written.
    pending: Mutex<Vec<u8>>,
    /// The buffer being written to stderr, kept (emptied) between flushes to take `pending`'s place at the next.
    /// Held while writing, and always taken before `pending`, so chunks leave in order.
    output: Mutex<Vec<u8>>,
    /// What the flushing thread is asked to do; signalled through `wake`.
    signal: Mutex<Signal>,
    /// Wakes the flushing thread for a stop or an early flush.
    wake: Condvar,
}

/// Requests to the flushing thread.
#[derive(Default)]
struct Signal {
    /// Flush now: the pending lines reached [`FLUSH_AT`].
    due: bool,
    /// Flush and stop.
    stop: bool,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A thread that panicked while holding a log lock left at worst a partial line: keep logging.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Shared {
    /// Writes everything pending to stderr, in order.
    fn flush(&self) {
        let mut chunk = lock(&self.output);
        std::mem::swap(&mut *chunk, &mut *lock(&self.pending));
        if !chunk.is_empty() {
            // Nowhere to report a failing stderr; the lines are dropped rather than stalling the gateway.
            drop(std::io::stderr().lock().write_all(&chunk));
        }
        chunk.clear();
        // After a burst beyond the early-flush size, the buffer goes back to its everyday size.
        chunk.shrink_to(2 * FLUSH_AT);
    }

    fn append(&self, line: &[u8]) {
        let mut pending = lock(&self.pending);
        if pending.len() + line.len() <= MAX_BUFFERED {
            // The line that fills the buffer asks for the early flush: one wake-up per full buffer.
            let filled = pending.len() < FLUSH_AT && pending.len() + line.len() >= FLUSH_AT;
            pending.extend_from_slice(line);
            drop(pending);
            if filled {
                lock(&self.signal).due = true;
                self.wake.notify_one();
            }
            return;
        }
        drop(pending);
        // Over the bound (stderr is slower than the traffic): write out what is pending, then queue this line.
        self.flush();
        lock(&self.pending).extend_from_slice(line);
    }
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
                let signal = lock(&for_thread.signal);
                let (mut signal, _) = for_thread
                    .wake
                    .wait_timeout_while(signal, FLUSH_INTERVAL, |signal| !signal.due && !signal.stop)
                    .unwrap_or_else(PoisonError::into_inner);
                signal.due = false;
                let stopping = signal.stop;
                drop(signal);
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
        lock(&self.shared.signal).stop = true;
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

    #[test]
    fn a_full_buffer_asks_the_flushing_thread_once_and_a_flush_reuses_the_written_buffer() {
        let shared = Shared::default();
        let line = vec![b'x'; 1000];
        while lock(&shared.pending).len() + line.len() < FLUSH_AT {
            shared.append(&line);
        }
        assert!(!lock(&shared.signal).due, "asked before the buffer was full");
        shared.append(&line);
        assert!(lock(&shared.signal).due);
        lock(&shared.signal).due = false;
        shared.append(&line);
        assert!(!lock(&shared.signal).due, "asked twice for one flush");
        shared.flush();
        assert!(lock(&shared.pending).is_empty());
        // The two buffers take turns: the one written at the first flush, emptied, takes the lines after the second.
        shared.append(&line);
        shared.flush();
        assert!(lock(&shared.pending).is_empty());
        assert!(lock(&shared.pending).capacity() >= FLUSH_AT);
    }
}

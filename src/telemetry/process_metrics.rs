//! The standard process metrics (`process_cpu_seconds_total`, `process_resident_memory_bytes`,
//! `process_virtual_memory_bytes`, `process_open_fds`, `process_max_fds`, `process_start_time_seconds`), read from
//! `/proc/self` at each scrape. prometheus-client has no process collector; this is its reading of `/proc`, the
//! same files and names as the Go and Python clients use. On systems without `/proc` (not Linux) it reports
//! nothing, and a value that cannot be read is left out rather than reported as 0.

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;

use crate::telemetry::names;

/// Encodes the process metrics on each scrape.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProcessCollector;

/// What `/proc/self/stat` says of the process.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Stat {
    /// User and system CPU time, in seconds.
    cpu_seconds: f64,
    /// Start time, in seconds since boot.
    started_after_boot: f64,
    /// Virtual memory size, in bytes.
    virtual_bytes: u64,
}

/// Reads the fields of `/proc/self/stat` (proc(5)): those after the command name, which sits in parentheses
/// and may itself hold spaces and parentheses, so the line is split after its last `)`.
fn parse_stat(text: &str, ticks_per_second: u64) -> Option<Stat> {
    let (_, rest) = text.rsplit_once(')')?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // `rest` starts at field 3 (state): field n is at index n - 3.
    let field = |n: usize| fields.get(n - 3).and_then(|value| value.parse::<u64>().ok());
    let ticks = ticks_per_second.max(1) as f64;
    Some(Stat {
        cpu_seconds: (field(14)? + field(15)?) as f64 / ticks,
        started_after_boot: field(22)? as f64 / ticks,
        virtual_bytes: field(23)?,
    })
}

/// The boot time in seconds since the Unix epoch, from `/proc/stat`'s `btime` line.
fn parse_boot_time(text: &str) -> Option<u64> {
    text.lines()
        .find_map(|line| line.strip_prefix("btime "))
        .and_then(|value| value.trim().parse().ok())
}

/// The resident set size in bytes, from `/proc/self/status`'s `VmRSS:` line (in kB).
fn parse_resident_bytes(text: &str) -> Option<u64> {
    let line = text.lines().find_map(|line| line.strip_prefix("VmRSS:"))?;
    let kilobytes: u64 = line.split_whitespace().next()?.parse().ok()?;
    Some(kilobytes.saturating_mul(1024))
}

/// The file descriptors open in this process.
fn open_fds() -> Option<u64> {
    let entries = std::fs::read_dir("/proc/self/fd").ok()?;
    // The directory's own descriptor, open while it is read, is among the entries: not counted.
    Some((entries.count() as u64).saturating_sub(1))
}

fn gauge(encoder: &mut DescriptorEncoder, name: &str, help: &str, value: f64) -> Result<(), std::fmt::Error> {
    let metric = ConstGauge::new(value);
    metric.encode(encoder.encode_descriptor(name, help, None, metric.metric_type())?)
}

impl Collector for ProcessCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let ticks = rustix::param::clock_ticks_per_second();
        let stat = std::fs::read_to_string("/proc/self/stat")
            .ok()
            .and_then(|text| parse_stat(&text, ticks));
        if let Some(stat) = stat {
            let cpu = ConstCounter::new(stat.cpu_seconds);
            cpu.encode(encoder.encode_descriptor(
                names::PROCESS_CPU,
                "Total user and system CPU time spent in seconds.",
                None,
                cpu.metric_type(),
            )?)?;
            gauge(
                &mut encoder,
                names::PROCESS_VIRTUAL_MEMORY,
                "Virtual memory size in bytes.",
                stat.virtual_bytes as f64,
            )?;
            let boot = std::fs::read_to_string("/proc/stat")
                .ok()
                .and_then(|text| parse_boot_time(&text));
            if let Some(boot) = boot {
                gauge(
                    &mut encoder,
                    names::PROCESS_START_TIME,
                    "Start time of the process since unix epoch in seconds.",
                    boot as f64 + stat.started_after_boot,
                )?;
            }
        }
        let resident = std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|text| parse_resident_bytes(&text));
        if let Some(resident) = resident {
            gauge(
                &mut encoder,
                names::PROCESS_RESIDENT_MEMORY,
                "Resident memory size in bytes.",
                resident as f64,
            )?;
        }
        if let Some(open) = open_fds() {
            gauge(
                &mut encoder,
                names::PROCESS_OPEN_FDS,
                "Number of open file descriptors.",
                open as f64,
            )?;
        }
        if let Some(max) = crate::http::connections::open_file_limit().filter(|max| *max != u64::MAX) {
            gauge(
                &mut encoder,
                names::PROCESS_MAX_FDS,
                "Maximum number of open file descriptors.",
                max as f64,
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_read_after_a_command_name_with_spaces_and_parentheses() {
        // Fields 14 and 15 (utime, stime) are 250 and 50 ticks, 22 (starttime) 1000, 23 (vsize) 4096.
        let line = "4242 (svc gate (x)) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 3 0 1000 4096 \
                    300 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0";
        let stat = parse_stat(line, 100);
        assert_eq!(
            stat,
            Some(Stat {
                cpu_seconds: 3.0,
                started_after_boot: 10.0,
                virtual_bytes: 4096,
            })
        );
        assert_eq!(parse_stat("4242 (truncated) S 1", 100), None);
        assert_eq!(parse_stat("no parentheses", 100), None);
    }

    #[test]
    fn boot_time_and_resident_memory_come_from_their_lines() {
        assert_eq!(
            parse_boot_time("cpu  1 2 3\nbtime 1764000000\nprocesses 9\n"),
            Some(1_764_000_000)
        );
        assert_eq!(parse_boot_time("cpu 1\n"), None);
        assert_eq!(
            parse_resident_bytes("Name:\tsvcgate\nVmRSS:\t   14512 kB\nThreads:\t9\n"),
            Some(14_512 * 1024)
        );
        assert_eq!(parse_resident_bytes("Name:\tsvcgate\n"), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_process_reports_every_process_metric() {
        let mut registry = prometheus_client::registry::Registry::default();
        registry.register_collector(Box::new(ProcessCollector));
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap_or_default();
        for name in [
            "process_cpu_seconds_total ",
            "process_resident_memory_bytes ",
            "process_virtual_memory_bytes ",
            "process_open_fds ",
            "process_max_fds ",
            "process_start_time_seconds ",
        ] {
            assert!(text.contains(&format!("\n{name}")), "{name} missing from {text}");
        }
    }
}

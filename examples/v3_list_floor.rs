//! The V3 list rewrite's floor on this machine, without HTTP: what reading a V4 list with serde_json costs at the
//! least, what svcgate's reading of it costs, and what its whole reshape into V3 costs. Row 2 of `bench/run` is
//! bounded by these figures; see `bench/RESULTS.md`.
//!
//! `cargo run --release --example v3_list_floor [V4 list file]`; the default is the list `bench/run` serves
//! (`bench/.work/origin/issues/desc-1.json`, written by a run of the harness).

use std::time::Instant;

use anyhow::Context;
use serde::de::IgnoredAny;
use serde_json::{Map, Value};
use svcgate::rewrite::raw::RawObject;
use svcgate::rewrite::shape::MemberHints;
use svcgate::rewrite::shape::ShapeMode;
use svcgate::rewrite::table::RuleTable;

/// Lists per timed round.
const LISTS: u32 = 1_000;
/// Timed rounds; the median is reported.
const ROUNDS: usize = 7;

fn main() -> anyhow::Result<()> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "bench/.work/origin/issues/desc-1.json".to_owned());
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {path} (run bench/run once)"))?;
    let table = RuleTable::builtin()?;
    let shapes = table.shapes();
    let no_fields = Map::new();
    let items = serde_json::from_str::<Vec<IgnoredAny>>(&text)
        .context("the file is not a JSON list")?
        .len();
    println!(
        "{path}: {} bytes, {items} items; µs per list, median of {ROUNDS} rounds of {LISTS}",
        text.len()
    );

    let scan = per_list(|| {
        serde_json::from_str::<IgnoredAny>(&text).map(drop)?;
        Ok(0)
    })?;
    println!("  serde_json reading it and keeping nothing:          {scan:>8.1}");
    let read = per_list(|| Ok(serde_json::from_str::<Vec<RawObject>>(&text)?.len()))?;
    println!("  svcgate's reading (each item's members, unparsed): {read:>8.1}");
    let mut written = 0;
    let reshape = per_list(|| {
        // UTF-8 checked once, then read and written as `Finisher::finish_raw` does (without the HTTP around it).
        let text = std::str::from_utf8(text.as_bytes())?;
        let objects = serde_json::from_str::<Vec<RawObject>>(text)?;
        let mut hints = MemberHints::default();
        let mut out = Vec::with_capacity(text.len());
        out.push(b'[');
        for (index, object) in objects.iter().enumerate() {
            if index > 0 {
                out.push(b',');
            }
            shapes.write_raw("issue", object, &no_fields, &mut hints, &mut out);
        }
        out.push(b']');
        written = out.len();
        Ok(out.len())
    })?;
    println!("  svcgate's whole reshape into V3 ({written} bytes):     {reshape:>8.1}");
    let mut written_tree = 0;
    let tree = per_list(|| {
        // The general path: the list read into a `Value` tree, reshaped by `Shapes::apply`, written out.
        let value = serde_json::from_slice::<Value>(text.as_bytes())?;
        let out = serde_json::to_vec(&shapes.apply("issue", value, ShapeMode::Strict))?;
        written_tree = out.len();
        Ok(out.len())
    })?;
    println!("  the same reshape over a Value tree ({written_tree} bytes):  {tree:>8.1}");
    Ok(())
}

/// The median time of one call of `work`, in microseconds.
fn per_list(mut work: impl FnMut() -> anyhow::Result<usize>) -> anyhow::Result<f64> {
    let mut rounds = Vec::with_capacity(ROUNDS);
    // One untimed round warms the caches and the allocator.
    for round in 0..=ROUNDS {
        let started = Instant::now();
        for _ in 0..LISTS {
            std::hint::black_box(work()?);
        }
        if round > 0 {
            rounds.push(started.elapsed().as_secs_f64() * 1e6 / f64::from(LISTS));
        }
    }
    rounds.sort_by(f64::total_cmp);
    Ok(rounds[ROUNDS / 2])
}

//! Per-interval snapshots. Each engine thread accumulates its own interval and hands it over at the
//! interval boundary; the merger combines the threads' pieces exactly (histograms merge, never
//! average) and keeps the finished snapshots for polling and for the result.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::counts::QueryCounts;
use super::latency::LatencyHistogram;

/// What one thread saw during one interval.
#[derive(Debug, Clone, Default)]
pub struct IntervalStats {
    pub transactions: u64,
    pub failed: u64,
    pub errors: u64,
    pub latency: LatencyHistogram,
    pub lag_sum_us: u64,
    pub lag_max_us: u64,
    pub lag_count: u64,
    pub queries: QueryCounts,
    pub retries: u64,
    /// Clients that had connected by the end of the interval (a thread's count; summed).
    pub clients_connected: u64,
    /// Transactions per node of a cluster target (empty for one node).
    pub by_node: Vec<u64>,
    /// Clients that went on on another node after losing theirs.
    pub failovers: u64,
    /// Committed and failed transactions per type (the workload's type index).
    pub by_type: Vec<u64>,
    pub failed_by_type: Vec<u64>,
    /// Errors per class key (`deadlock`, `connection_lost`, ...).
    pub errors_by_class: BTreeMap<String, u64>,
    /// Latency per type (the workload's type index), when the run keeps interval histograms.
    pub latency_by_type: Vec<LatencyHistogram>,
}

impl IntervalStats {
    /// One more of type `kind` (committed, or failed), growing the counts to reach it.
    #[inline]
    pub fn count_type(counts: &mut Vec<u64>, kind: usize) {
        if counts.len() <= kind {
            counts.resize(kind + 1, 0);
        }
        counts[kind] += 1;
    }

    /// A latency of type `kind` in its own histogram, growing the list to reach it.
    pub fn record_type(histograms: &mut Vec<LatencyHistogram>, kind: usize, micros: u64) {
        reach(histograms, kind + 1);
        histograms[kind].record_us(micros);
    }

    pub fn merge(&mut self, other: &IntervalStats) {
        self.transactions += other.transactions;
        self.failed += other.failed;
        self.errors += other.errors;
        self.latency.merge(&other.latency);
        self.lag_sum_us += other.lag_sum_us;
        self.lag_max_us = self.lag_max_us.max(other.lag_max_us);
        self.lag_count += other.lag_count;
        self.queries.add(&other.queries);
        self.retries += other.retries;
        self.clients_connected += other.clients_connected;
        add_by_node(&mut self.by_node, &other.by_node);
        self.failovers += other.failovers;
        add_by_node(&mut self.by_type, &other.by_type);
        add_by_node(&mut self.failed_by_type, &other.failed_by_type);
        for (class, n) in &other.errors_by_class {
            *self.errors_by_class.entry(class.clone()).or_default() += n;
        }
        reach(&mut self.latency_by_type, other.latency_by_type.len());
        for (into, from) in self.latency_by_type.iter_mut().zip(&other.latency_by_type) {
            into.merge(from);
        }
    }
}

/// One interval of the whole run, as polled by Python and stored in the result.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct IntervalSnapshot {
    /// End of the interval, seconds since the measured start.
    pub t_s: f64,
    pub transactions: u64,
    pub tps: f64,
    pub failed: u64,
    pub errors: u64,
    pub latency_ms: Option<IntervalLatency>,
    /// Mean schedule lag (open model only).
    pub lag_ms: Option<f64>,
    pub lag_max_ms: Option<f64>,
    /// Statements by class (read/write/other), for sysbench-style `qps (r/w/o)` lines.
    pub queries: QueryCounts,
    pub qps: f64,
    /// Retries of transactions that ended in the interval.
    pub retries: u64,
    /// Clients that had connected by the end of the interval.
    pub clients_connected: u64,
    /// Transactions per node of a cluster target, in the result's `nodes` order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_node: Vec<u64>,
    /// Clients that lost their node and went on on another one in the interval.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub failovers: u64,
    /// Committed transactions per type, by the type's name (types with none left out).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub by_type: BTreeMap<String, u64>,
    /// Failed transactions per type, by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub failed_by_type: BTreeMap<String, u64>,
    /// Errors per class, by its key.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub errors_by_class: BTreeMap<String, u64>,
    /// The drain: transactions that were still running at the end of the measured window and
    /// ended after it (counted in the run's totals, kept out of its last second).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub drain: bool,
    /// A scaled-out run's worker: what merging its intervals with the others' exactly needs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<IntervalDetail>,
}

/// The parts of an interval a summary drops: its index, its latency histogram (HDR V2 deflate,
/// base64) and the schedule lag's sum, maximum and count.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct IntervalDetail {
    pub index: u64,
    pub histogram: String,
    pub lag_sum_us: u64,
    pub lag_max_us: u64,
    pub lag_count: u64,
    /// Each transaction type's histogram (same encoding), by the type's name (types with none
    /// left out).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub histograms_by_type: BTreeMap<String, String>,
}

impl IntervalSnapshot {
    /// The interval as a piece to merge again (a worker's, with its detail); `types`: the type
    /// names in the merger's order.
    pub fn to_stats(&self, types: &[String]) -> Result<(u64, IntervalStats), String> {
        let detail = self
            .detail
            .as_ref()
            .ok_or("an interval without the detail a merge needs")?;
        let stats = IntervalStats {
            transactions: self.transactions,
            failed: self.failed,
            errors: self.errors,
            latency: LatencyHistogram::from_base64(&detail.histogram)?,
            lag_sum_us: detail.lag_sum_us,
            lag_max_us: detail.lag_max_us,
            lag_count: detail.lag_count,
            queries: self.queries,
            retries: self.retries,
            clients_connected: self.clients_connected,
            by_node: self.by_node.clone(),
            failovers: self.failovers,
            by_type: by_index(&self.by_type, types)?,
            failed_by_type: by_index(&self.failed_by_type, types)?,
            errors_by_class: self.errors_by_class.clone(),
            latency_by_type: histograms_by_index(&detail.histograms_by_type, types)?,
        };
        Ok((detail.index, stats))
    }
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct IntervalLatency {
    pub mean: f64,
    pub stddev: f64,
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Adds per-node counts element by element, growing `into` as needed.
/// Counts by name as counts by index into `names`.
fn by_index(counts: &BTreeMap<String, u64>, names: &[String]) -> Result<Vec<u64>, String> {
    let mut out = vec![0; if counts.is_empty() { 0 } else { names.len() }];
    for (name, n) in counts {
        let index = names
            .iter()
            .position(|x| x == name)
            .ok_or_else(|| format!("an interval counts transaction type {name:?}, unknown here"))?;
        out[index] = *n;
    }
    Ok(out)
}

/// Grows `histograms` with empty ones to at least `len`.
fn reach(histograms: &mut Vec<LatencyHistogram>, len: usize) {
    if histograms.len() < len {
        histograms.resize_with(len, LatencyHistogram::default);
    }
}

/// Histograms by name (encoded) as histograms by index into `names`.
fn histograms_by_index(
    encoded: &BTreeMap<String, String>,
    names: &[String],
) -> Result<Vec<LatencyHistogram>, String> {
    let mut out = Vec::new();
    for (name, text) in encoded {
        let index = names
            .iter()
            .position(|x| x == name)
            .ok_or_else(|| format!("an interval has a histogram of type {name:?}, unknown here"))?;
        reach(&mut out, index + 1);
        out[index] = LatencyHistogram::from_base64(text)?;
    }
    Ok(out)
}

/// Histograms by index as encoded histograms by name (the empty ones left out).
fn histograms_by_name(
    histograms: &[LatencyHistogram],
    names: &[String],
) -> BTreeMap<String, String> {
    histograms
        .iter()
        .zip(names)
        .filter(|(h, _)| !h.is_empty())
        .map(|(h, name)| (name.clone(), h.to_base64()))
        .collect()
}

/// Counts by index as counts by name (the zeros left out).
fn by_name(counts: &[u64], names: &[String]) -> BTreeMap<String, u64> {
    counts
        .iter()
        .zip(names)
        .filter(|(n, _)| **n > 0)
        .map(|(n, name)| (name.clone(), *n))
        .collect()
}

pub fn add_by_node(into: &mut Vec<u64>, from: &[u64]) {
    if into.len() < from.len() {
        into.resize(from.len(), 0);
    }
    for (sum, n) in into.iter_mut().zip(from) {
        *sum += n;
    }
}

/// Intervals in a measured window of `measured_s` (the last may be partial); the one after them
/// is the drain.
pub fn window_intervals(measured_s: f64, interval_s: f64) -> u64 {
    ((measured_s / interval_s).ceil() as u64).max(1)
}

/// Combines the threads' interval pieces; an interval is final once every thread handed it in.
#[derive(Debug)]
pub struct IntervalMerger {
    interval_s: f64,
    threads: usize,
    /// The measured window; the interval after its last one is the drain.
    measured_s: f64,
    pending: BTreeMap<u64, (usize, IntervalStats)>,
    finished: Vec<IntervalSnapshot>,
    polled: usize,
    /// Keep each interval's detail (a worker of a scaled-out run).
    detail: bool,
    /// The workload's transaction types, in the order of their index.
    type_names: Vec<String>,
}

impl IntervalMerger {
    pub fn new(interval_s: f64, threads: usize, measured_s: f64) -> Self {
        Self {
            interval_s,
            threads,
            measured_s,
            pending: BTreeMap::new(),
            finished: Vec::new(),
            polled: 0,
            type_names: Vec::new(),
            detail: false,
        }
    }

    /// Names the per-type counts of each snapshot (without names they are left out).
    pub fn with_type_names(mut self, names: Vec<String>) -> Self {
        self.type_names = names;
        self
    }

    pub fn type_names(&self) -> &[String] {
        &self.type_names
    }

    /// Snapshots that keep their detail, for a merge across workers.
    pub fn with_detail(mut self, detail: bool) -> Self {
        self.detail = detail;
        self
    }

    /// A thread hands in its piece of interval `index` (each thread once per index, in order).
    pub fn submit(&mut self, index: u64, stats: IntervalStats) {
        let entry = self.pending.entry(index).or_default();
        entry.0 += 1;
        entry.1.merge(&stats);
        while let Some((&first, (reports, _))) = self.pending.iter().next() {
            if *reports < self.threads || first >= self.drain_index() {
                break; // the drain is finished with the run
            }
            let (_, merged) = self.pending.remove(&first).expect("present");
            let end = ((first + 1) as f64 * self.interval_s).min(self.measured_s);
            self.finish_one(first, first as f64 * self.interval_s, end, merged);
        }
    }

    /// A thread of a counted run hands in the interval it ended in: that interval (and every
    /// later one) stays open until [`IntervalMerger::finish`] knows when the run ended.
    pub fn submit_last(&mut self, index: u64, stats: IntervalStats) {
        self.pending.entry(index).or_default().1.merge(&stats);
    }

    fn drain_index(&self) -> u64 {
        window_intervals(self.measured_s, self.interval_s)
    }

    /// Ends the run at `end_s` (its last transaction's end): whatever is pending is final, a
    /// measured interval ends at the window's end (or `end_s` when the run was cut short), and
    /// the drain, if anything ended in it, spans from the window's end to `end_s`.
    pub fn finish(&mut self, end_s: f64) {
        let pending = std::mem::take(&mut self.pending);
        let drain = self.drain_index();
        for (index, (_, stats)) in pending {
            let begin = index as f64 * self.interval_s;
            if index >= drain {
                let idle = stats.transactions == 0 && stats.failed == 0 && stats.errors == 0;
                if !idle {
                    self.finish_one(index, self.measured_s, end_s.max(self.measured_s), stats);
                }
                continue;
            }
            let natural_end = ((index + 1) as f64 * self.interval_s).min(self.measured_s);
            self.finish_one(index, begin, natural_end.min(end_s.max(begin)), stats);
        }
    }

    fn finish_one(&mut self, index: u64, begin_s: f64, end_s: f64, stats: IntervalStats) {
        let width = (end_s - begin_s).max(1e-9);
        let latency_ms = (!stats.latency.is_empty()).then(|| {
            let s = stats.latency.summary().expect("not empty");
            IntervalLatency {
                mean: s.mean,
                stddev: s.stddev,
                p50: s.p50,
                p95: s.p95,
                p99: s.p99,
                max: s.max,
            }
        });
        let lag = (stats.lag_count > 0).then(|| {
            (
                stats.lag_sum_us as f64 / stats.lag_count as f64 / 1000.0,
                stats.lag_max_us as f64 / 1000.0,
            )
        });
        let detail = self.detail.then(|| IntervalDetail {
            index,
            histogram: stats.latency.to_base64(),
            lag_sum_us: stats.lag_sum_us,
            lag_max_us: stats.lag_max_us,
            lag_count: stats.lag_count,
            histograms_by_type: histograms_by_name(&stats.latency_by_type, &self.type_names),
        });
        self.finished.push(IntervalSnapshot {
            detail,
            t_s: end_s,
            transactions: stats.transactions,
            tps: stats.transactions as f64 / width,
            failed: stats.failed,
            errors: stats.errors,
            latency_ms,
            lag_ms: lag.map(|l| l.0),
            lag_max_ms: lag.map(|l| l.1),
            qps: stats.queries.total as f64 / width,
            queries: stats.queries,
            retries: stats.retries,
            clients_connected: stats.clients_connected,
            by_node: stats.by_node,
            failovers: stats.failovers,
            by_type: by_name(&stats.by_type, &self.type_names),
            failed_by_type: by_name(&stats.failed_by_type, &self.type_names),
            errors_by_class: stats.errors_by_class,
            drain: index >= self.drain_index(),
        });
    }

    /// Snapshots finished since the previous call.
    pub fn drain_new(&mut self) -> Vec<IntervalSnapshot> {
        let new = self.finished[self.polled..].to_vec();
        self.polled = self.finished.len();
        new
    }

    pub fn all(&self) -> &[IntervalSnapshot] {
        &self.finished
    }
}

#[cfg(test)]
#[path = "interval_tests.rs"]
mod tests;

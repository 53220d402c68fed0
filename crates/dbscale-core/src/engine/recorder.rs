//! What one engine thread measured. Clients on the thread record into it without locks (the
//! thread's event loop is single-threaded); finished intervals go to the shared merger once per
//! interval, so the hot path never contends with other threads.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::driver::{DbError, ErrorClass};
use crate::error::failure_kind;
use crate::stats::commands::{CommandTally, StatementSums};
use crate::stats::counts::RunCounts;
use crate::stats::interval::window_intervals;
use crate::stats::{IntervalMerger, IntervalStats, LatencyHistogram};
use crate::workload::{TxnOutcome, TALLY_SLOTS};

use super::transaction_log::{LogLine, TransactionLog};

/// Per transaction type totals.
#[derive(Debug, Clone, Default)]
pub struct TypeTotals {
    pub latency: LatencyHistogram,
    pub failed: u64,
}

/// What a thread's clients did on one node of a cluster target.
#[derive(Debug, Clone, Default)]
pub struct NodeTotals {
    pub latency: LatencyHistogram,
    pub failed: u64,
    pub errors: u64,
    pub lost: u64,
    pub failovers: u64,
}

/// Everything a thread counted over the run.
#[derive(Debug, Clone, Default)]
pub struct ThreadTotals {
    pub types: Vec<TypeTotals>,
    pub connect: LatencyHistogram,
    pub lag: LatencyHistogram,
    pub errors: BTreeMap<ErrorClass, u64>,
    /// Each error class's first message, as the server (or the script) worded it.
    pub error_messages: BTreeMap<ErrorClass, String>,
    pub counts: RunCounts,
    /// When this thread's last transaction ended.
    pub last_end: Option<Instant>,
    /// The workload's audit counters over the measured transactions.
    pub tally: [u64; TALLY_SLOTS],
    /// Clients that tried to connect and never managed to (a server at its connection limit).
    pub clients_never_connected: u32,
    /// Clients that had a connection at some point.
    pub clients_connected: u32,
    /// The first connection failure's message, as the server or the network gave it.
    pub connect_error: Option<String>,
    /// Its kind (`error::failure_kind`): `connect_limit` when the server had no slot.
    pub connect_error_kind: Option<&'static str>,
    /// Scripts: each command's sums over this thread's clients.
    pub commands: Vec<CommandTally>,
    /// Under `statement_timing`: this thread's statements as its clients timed them.
    pub statements: StatementSums,
    /// The per-transaction log's first write error on this thread.
    pub log_error: Option<String>,
    /// Per node of a cluster target (empty when not kept).
    pub nodes: Vec<NodeTotals>,
}

/// A schedule lag above this counts as a late start.
const LATE_START: Duration = Duration::from_millis(1);

pub struct ThreadRecorder {
    pub totals: ThreadTotals,
    start: Instant,
    interval: Duration,
    /// The last interval of the measured window; one past it collects the drain.
    last_index: u64,
    /// The end of the measured window: what ends after it is the drain.
    deadline: Instant,
    current_index: u64,
    /// The instants the current interval covers (`None`: open-ended), so that placing a
    /// transaction in it is a comparison, not a division.
    current_span: (Instant, Option<Instant>),
    current: IntervalStats,
    merger: Arc<Mutex<IntervalMerger>>,
    pub in_flight: u64,
    /// pgbench `-L`: a latency over this counts as over the limit.
    latency_limit: Option<Duration>,
    /// pgbench `-l`: this thread's log file.
    pub log: Option<TransactionLog>,
    /// Whether per-node figures are kept (`totals.nodes` has a slot per node).
    per_node: bool,
    /// Whether each interval keeps a histogram per transaction type.
    type_histograms: bool,
}

impl ThreadRecorder {
    pub fn new(
        types: usize,
        start: Instant,
        interval: Duration,
        duration: Duration,
        merger: Arc<Mutex<IntervalMerger>>,
    ) -> Self {
        let intervals = window_intervals(duration.as_secs_f64(), interval.as_secs_f64());
        let mut recorder = Self {
            totals: ThreadTotals {
                types: vec![TypeTotals::default(); types],
                ..Default::default()
            },
            start,
            interval,
            last_index: intervals - 1,
            deadline: start + duration,
            current_index: 0,
            current_span: (start, None),
            current: IntervalStats::default(),
            merger,
            in_flight: 0,
            latency_limit: None,
            log: None,
            per_node: false,
            type_histograms: false,
        };
        recorder.current_span = recorder.span_of(0);
        recorder
    }

    /// Keeps figures per node for a target of `nodes` nodes (a cluster, or a tracked run).
    pub fn with_nodes(mut self, nodes: usize, keep: bool) -> Self {
        if keep {
            self.totals.nodes = vec![NodeTotals::default(); nodes];
            self.per_node = true;
        }
        self
    }

    /// Keeps each interval's latency per transaction type too (a capacity level judged on some
    /// types only).
    pub fn with_type_histograms(mut self, keep: bool) -> Self {
        self.type_histograms = keep;
        self
    }

    /// A client that lost node `lost` went on on another node at `at`.
    pub fn failover(&mut self, lost: usize, at: Instant) {
        if !self.per_node || self.in_ramp(at) {
            return;
        }
        self.roll_to(self.index_of(at));
        self.current.failovers += 1;
        if let Some(totals) = self.totals.nodes.get_mut(lost) {
            totals.failovers += 1;
        }
    }

    /// Node `node`'s figures, when kept (and the time is in the measured window).
    pub fn node(&mut self, node: usize, at: Instant) -> Option<&mut NodeTotals> {
        if !self.per_node || self.in_ramp(at) {
            return None;
        }
        self.totals.nodes.get_mut(node)
    }

    /// Counts transactions over `limit` (pgbench `-L`).
    pub fn with_latency_limit(mut self, limit: Option<Duration>) -> Self {
        self.latency_limit = limit;
        self
    }

    /// Writes a line to the transaction log, if there is one.
    #[inline]
    pub fn log(&mut self, line: &LogLine) {
        if let Some(log) = self.log.as_mut() {
            log.write(line);
        }
    }

    /// Under a rate, a transaction skipped because it was already over the latency limit when
    /// due: counted in the measured window only, as pgbench counts it.
    pub fn skipped(&mut self, due: Instant) {
        if !self.in_ramp(due) {
            self.totals.counts.skipped += 1;
        }
    }

    /// Closes the transaction log and keeps what it wrote.
    pub fn finish_log(&mut self) {
        if let Some(log) = self.log.as_mut() {
            log.finish();
            self.totals.counts.logged = log.lines;
            self.totals.log_error = log.error.take();
        }
    }

    /// The interval `at` falls in; past the deadline, the drain (one past the last interval),
    /// so the transactions still running at the end do not swell the last second's figures.
    fn index_of(&self, at: Instant) -> u64 {
        let (from, until) = self.current_span;
        if at >= from && until.is_none_or(|until| at < until) {
            return self.current_index;
        }
        if at >= self.deadline {
            return self.last_index + 1;
        }
        let offset = at.saturating_duration_since(self.start);
        ((offset.as_nanos() / self.interval.as_nanos()) as u64).min(self.last_index)
    }

    /// The instants interval `index` covers: the last one runs to the deadline, the drain past
    /// it; later indexes (a closed recorder) cover nothing.
    fn span_of(&self, index: u64) -> (Instant, Option<Instant>) {
        let offset = |i: u64| {
            let nanos = self.interval.as_nanos().saturating_mul(u128::from(i));
            Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
        };
        match index.cmp(&self.last_index) {
            std::cmp::Ordering::Less => {
                let from = self.start + offset(index);
                (
                    from,
                    Some((self.start + offset(index + 1)).min(self.deadline)),
                )
            }
            std::cmp::Ordering::Equal => (self.start + offset(index), Some(self.deadline)),
            std::cmp::Ordering::Greater if index == self.last_index + 1 => (self.deadline, None),
            std::cmp::Ordering::Greater => (self.deadline, Some(self.deadline)),
        }
    }

    /// Moves the current interval forward to the one containing `at`, handing in finished ones.
    #[inline]
    fn roll_to(&mut self, index: u64) {
        if index <= self.current_index {
            return;
        }
        let mut merger = self.merger.lock().expect("merger lock");
        while self.current_index < index {
            self.current.clients_connected = u64::from(self.totals.clients_connected);
            merger.submit(self.current_index, std::mem::take(&mut self.current));
            self.current_index += 1;
        }
        self.current_span = self.span_of(self.current_index);
    }

    /// Called by the thread's ticker at each interval boundary, so quiet intervals are reported.
    pub fn tick(&mut self, now: Instant) {
        let index = self.index_of(now);
        self.roll_to(index);
    }

    /// Hands in every interval and the drain; call once when the thread ends. A counted run
    /// (`transactions` per client) ends when its clients are done: `ended` then stops the
    /// intervals at that moment instead of at the time limit.
    pub fn close(&mut self, ended: Option<Instant>) {
        if let Some(at) = ended {
            let last = self.index_of(at).min(self.last_index);
            self.roll_to(last);
            self.current.clients_connected = u64::from(self.totals.clients_connected);
            let mut merger = self.merger.lock().expect("merger lock");
            merger.submit_last(last, std::mem::take(&mut self.current));
            self.current_index = last + 1;
            self.current_span = self.span_of(self.current_index);
            return;
        }
        let drain = self.last_index + 1;
        self.roll_to(drain);
        let mut merger = self.merger.lock().expect("merger lock");
        self.current.clients_connected = u64::from(self.totals.clients_connected);
        merger.submit(self.current_index, std::mem::take(&mut self.current));
        self.current_index = drain + 1;
        self.current_span = self.span_of(self.current_index);
    }

    /// Whether `at` is before the measured window (during the ramp).
    #[inline]
    fn in_ramp(&self, at: Instant) -> bool {
        at < self.start
    }

    #[inline]
    pub fn success(
        &mut self,
        done: &TxnOutcome,
        latency: Duration,
        end: Instant,
        tries: u32,
        node: usize,
    ) {
        if self.in_ramp(end) {
            self.totals.counts.ramp_transactions += 1;
            return;
        }
        let (kind, queries) = (done.kind, &done.queries);
        for (sum, n) in self.totals.tally.iter_mut().zip(done.tally) {
            *sum += u64::from(n);
        }
        self.roll_to(self.index_of(end));
        if self.per_node {
            self.node_success(node, latency);
        }
        let micros = latency.as_micros() as u64;
        self.totals.types[kind].latency.record_us(micros);
        self.current.latency.record_us(micros);
        if self.type_histograms {
            IntervalStats::record_type(&mut self.current.latency_by_type, kind, micros);
        }
        self.current.transactions += 1;
        IntervalStats::count_type(&mut self.current.by_type, kind);
        if self.latency_limit.is_some_and(|limit| latency > limit) {
            self.totals.counts.over_latency_limit += 1;
        }
        if tries > 1 {
            self.totals.counts.retried += 1;
            self.totals.counts.retries += u64::from(tries - 1);
            self.current.retries += u64::from(tries - 1);
        }
        self.totals.counts.queries.add(queries);
        self.current.queries.add(queries);
        self.totals.last_end = Some(end);
    }

    /// A success on `node`, in its totals and the current interval's count.
    fn node_success(&mut self, node: usize, latency: Duration) {
        if let Some(totals) = self.totals.nodes.get_mut(node) {
            totals.latency.record_us(latency.as_micros() as u64);
        }
        let by_node = &mut self.current.by_node;
        if by_node.len() <= node {
            by_node.resize(self.totals.nodes.len().max(node + 1), 0);
        }
        by_node[node] += 1;
    }

    pub fn failure(&mut self, kind: usize, end: Instant, tries: u32, node: usize) {
        if self.in_ramp(end) {
            return;
        }
        if let Some(totals) = self.node(node, end) {
            totals.failed += 1;
        }
        self.roll_to(self.index_of(end));
        self.totals.types[kind].failed += 1;
        self.totals.counts.failed += 1;
        self.current.failed += 1;
        IntervalStats::count_type(&mut self.current.failed_by_type, kind);
        if tries > 1 {
            self.totals.counts.retries += u64::from(tries - 1);
            self.current.retries += u64::from(tries - 1);
        }
        self.totals.last_end = Some(end);
    }

    /// Every error occurrence, retried or not; its class's first message is kept.
    pub fn error(&mut self, error: &DbError, at: Instant) {
        if self.in_ramp(at) {
            self.totals.counts.ramp_errors += 1;
            return;
        }
        self.roll_to(self.index_of(at));
        *self.totals.errors.entry(error.class.clone()).or_default() += 1;
        if !self.totals.error_messages.contains_key(&error.class) {
            let message = one_line(&error.message, MAX_ERROR_MESSAGE);
            self.totals
                .error_messages
                .insert(error.class.clone(), message);
        }
        self.current.errors += 1;
        *self
            .current
            .errors_by_class
            .entry(error.class.key())
            .or_default() += 1;
    }

    #[inline]
    pub fn schedule_lag(&mut self, lag: Duration) {
        let micros = lag.as_micros() as u64;
        self.totals.lag.record_us(micros);
        self.current.lag_sum_us += micros;
        self.current.lag_max_us = self.current.lag_max_us.max(micros);
        self.current.lag_count += 1;
        if lag > LATE_START {
            self.totals.counts.late_starts += 1;
        }
    }

    pub fn connected(&mut self, took: Duration) {
        self.totals.connect.record_us(took.as_micros() as u64);
    }

    /// A connection attempt failed: counted under its class, its message kept if first.
    pub fn connect_failed(&mut self, error: &DbError, at: Instant) {
        self.error(error, at);
        if self.totals.connect_error.is_none() {
            self.totals.connect_error = Some(error.message.clone());
            self.totals.connect_error_kind = Some(failure_kind(error.connect));
        }
    }
}

/// The longest error message kept (characters): a server's message, not a dump of its data.
const MAX_ERROR_MESSAGE: usize = 300;

/// `text` on one line (white space runs made one space), at most `limit` characters.
fn one_line(text: &str, limit: usize) -> String {
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match joined.char_indices().nth(limit) {
        Some((cut, _)) => format!("{}...", &joined[..cut]),
        None => joined,
    }
}

#[cfg(test)]
#[path = "recorder_tests.rs"]
mod tests;

//! The one step from what a run measured to its [`RunResult`]: used by a local run (its threads'
//! totals, `assemble.rs`) and by a scaled-out run (its workers' results, `merge.rs`), so both
//! compute throughput, latency figures, per-type results and the verdict the same way.

use std::collections::BTreeMap;

use super::verdict::{verdict, Refused, Tally};
use crate::stats::commands::{
    merge_tallies, CommandLatency, CommandPlace, CommandTally, StatementSums,
};
use crate::stats::counts::RunCounts;
use crate::stats::result::{
    CpuTime, ErrorCounts, HostConnections, ResultDetail, TransactionLogSummary,
    TransactionTypeResult,
};
use crate::stats::{IntervalSnapshot, LatencyHistogram, RunResult};

/// What the threads (or the workers) measured, summed and merged exactly.
#[derive(Debug, Default)]
pub(super) struct RunTotals {
    pub overall: LatencyHistogram,
    pub connect: LatencyHistogram,
    pub lag: LatencyHistogram,
    /// Each transaction type by name: its histogram of successes and its failures.
    pub types: Vec<(String, LatencyHistogram, u64)>,
    pub errors: BTreeMap<String, u64>,
    /// Each error class's first message (a local run's first thread, a merge's first worker).
    pub error_messages: BTreeMap<String, String>,
    pub counts: RunCounts,
    pub never_connected: u32,
    pub threads: u32,
    pub cpu: CpuTime,
    /// The workload's audit counters.
    pub tally: Vec<u64>,
    pub commands: Vec<CommandTally>,
    /// Built-in workloads under `statement_timing`: each statement's sums and histogram.
    pub statements: StatementSums,
    /// Connections opened per host, in the order the hosts were first seen.
    pub hosts: Vec<(String, u64)>,
    pub connect_error: Option<String>,
    pub connect_error_kind: Option<String>,
}

/// How the run ended, beside what it counted: what its result needs from the run itself.
pub(super) struct Ending {
    /// Measured time (pgbench's rule for a local run, the longest worker's for a merge).
    pub duration_s: f64,
    pub cancelled: bool,
    pub intervals: Vec<IntervalSnapshot>,
    /// Scripts: where each command stands, in script order.
    pub command_places: Vec<CommandPlace>,
    /// The workload's statements (name, SQL) by index, for `statements`.
    pub statement_names: Vec<(String, String)>,
    /// A worker's run keeps what an exact merge with the others needs.
    pub keep_detail: bool,
}

/// Whether a client's failure to connect was the server refusing it a slot (an unknown kind,
/// from a result written before kinds were kept, counts as one).
fn slot_refusal(kind: Option<&str>) -> bool {
    kind.is_none_or(|k| k == "connect_limit")
}

impl RunTotals {
    /// The slot of transaction type `name`, added at the end when new.
    pub fn type_slot(&mut self, name: &str) -> &mut (String, LatencyHistogram, u64) {
        let index = match self.types.iter().position(|(n, _, _)| n == name) {
            Some(index) => index,
            None => {
                self.types
                    .push((name.to_string(), LatencyHistogram::new(), 0));
                self.types.len() - 1
            }
        };
        &mut self.types[index]
    }

    pub fn add_tally(&mut self, tally: &[u64]) {
        if self.tally.len() < tally.len() {
            self.tally.resize(tally.len(), 0);
        }
        for (sum, n) in self.tally.iter_mut().zip(tally) {
            *sum += n;
        }
    }

    pub fn add_commands(&mut self, commands: &[CommandTally]) {
        merge_tallies(&mut self.commands, commands);
    }

    pub fn add_host(&mut self, host: &str, connections: u64) {
        match self.hosts.iter_mut().find(|(name, _)| name == host) {
            Some(entry) => entry.1 += connections,
            None => self.hosts.push((host.to_string(), connections)),
        }
    }

    pub fn add_cpu(&mut self, cpu: &CpuTime) {
        self.cpu.user += cpu.user;
        self.cpu.system += cpu.system;
        self.cpu.total += cpu.total;
    }

    /// The types' histograms in `order` (a type that never ran is empty), for TPC-C's summary.
    pub fn histograms_in(&self, order: &[&str]) -> Vec<LatencyHistogram> {
        order
            .iter()
            .map(|name| {
                self.types
                    .iter()
                    .find(|(n, _, _)| n == name)
                    .map(|(_, h, _)| h.clone())
                    .unwrap_or_default()
            })
            .collect()
    }

    /// The run's result: `frame` says what the run was (workload, target, server, clients,
    /// protocol, rate, seed, parameters, ramp, TPC-C's summary); this fills in what it measured,
    /// its figures over the measured time and the verdict in words.
    pub fn into_result(self, frame: RunResult, ending: Ending) -> RunResult {
        let duration_s = ending.duration_s.max(1e-9);
        let transactions = self.overall.count();
        let error_total = self.errors.values().sum();
        let counts = self.counts;
        let clients_connected = frame.clients.saturating_sub(self.never_connected);
        let verdict = verdict(
            &Tally {
                transactions,
                failed: counts.failed,
                retries: counts.retries,
                error_total,
                errors: &self.errors,
                cancelled: ending.cancelled,
                abandoned: counts.abandoned,
                duration_s,
            },
            &Refused {
                clients: frame.clients,
                connected: clients_connected,
                message: self.connect_error.as_deref(),
                // The connection limit explains only a refusal for want of a slot.
                max_connections: frame
                    .server_max_connections
                    .filter(|_| slot_refusal(self.connect_error_kind.as_deref())),
            },
        );
        let detail = ending.keep_detail.then(|| ResultDetail {
            connect_histogram: self.connect.to_base64(),
            lag_histogram: self.lag.to_base64(),
            tally: self.tally.clone(),
            abandoned: counts.abandoned,
            clients_never_connected: self.never_connected,
        });
        let empty = CommandTally::default();
        let commands = ending
            .command_places
            .iter()
            .enumerate()
            .map(|(i, place)| CommandLatency::of(place, self.commands.get(i).unwrap_or(&empty)))
            .collect();
        RunResult {
            threads: self.threads,
            duration_s,
            transactions,
            tps: transactions as f64 / duration_s,
            failed: counts.failed,
            retried: counts.retried,
            retries: counts.retries,
            cancelled: ending.cancelled,
            errors: ErrorCounts {
                total: error_total,
                by_class: self.errors,
                messages: self.error_messages,
            },
            latency_ms: self.overall.summary(),
            connect_ms: self.connect.summary(),
            schedule_lag_ms: frame.rate_tps.and_then(|_| self.lag.summary()),
            late_starts: counts.late_starts,
            unstarted: counts.unstarted,
            over_latency_limit: counts.over_latency_limit,
            skipped: counts.skipped,
            transaction_log: frame
                .transaction_log
                .clone()
                .map(|log| TransactionLogSummary {
                    lines: counts.logged,
                    ..log
                }),
            qps: counts.queries.total as f64 / duration_s,
            queries: counts.queries,
            client_cpu_us_per_txn: (transactions > 0)
                .then(|| self.cpu.total * 1e6 / transactions as f64),
            client_cpu_s: self.cpu,
            transaction_types: self
                .types
                .iter()
                .map(|(name, histogram, failed)| {
                    (name.clone(), TransactionTypeResult::of(histogram, *failed))
                })
                .collect(),
            histogram: self.overall.to_base64(),
            intervals: ending.intervals,
            verdict,
            ramp_transactions: counts.ramp_transactions,
            ramp_errors: counts.ramp_errors,
            connections_by_host: self
                .hosts
                .into_iter()
                .map(|(host, connections)| HostConnections { host, connections })
                .collect(),
            clients_connected,
            connect_error: self.connect_error,
            connect_error_kind: self.connect_error_kind,
            commands,
            statements: self.statements.latencies(&ending.statement_names),
            detail,
            ..frame
        }
    }
}

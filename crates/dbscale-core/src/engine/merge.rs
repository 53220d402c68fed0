//! One result from the results of a scaled-out run's workers, as one machine running all their
//! clients would have recorded it: histograms merged (never percentiles averaged), counters and
//! errors summed, per-second intervals merged by their index since the common start, the
//! measured time the longest worker's (they started together), the verdict and TPC-C's figures
//! computed again from the merged counts.

use std::collections::BTreeMap;

use super::verdict::{verdict, Refused, Tally};
use crate::config::RunConfig;
use crate::stats::commands::{merge_tallies, CommandLatency, CommandPlace, CommandTally};
use crate::stats::result::{
    CpuTime, ErrorCounts, HostConnections, QueryCounts, TransactionTypeResult,
};
use crate::stats::{IntervalMerger, LatencyHistogram, RunResult};
use crate::workload::Workload;
use crate::Error;

fn decode(text: &str, what: &str) -> Result<LatencyHistogram, Error> {
    LatencyHistogram::from_base64(text)
        .map_err(|e| Error::Internal(format!("a worker's {what} histogram: {e}")))
}

/// Sums of the workers' counters.
#[derive(Default)]
struct Sums {
    failed: u64,
    retried: u64,
    retries: u64,
    late_starts: u64,
    unstarted: u64,
    abandoned: u64,
    never_connected: u32,
    ramp_transactions: u64,
    ramp_errors: u64,
    threads: u32,
    queries: QueryCounts,
    cpu: CpuTime,
    errors: BTreeMap<String, u64>,
    tally: Vec<u64>,
    hosts: Vec<(String, u64)>,
}

impl Sums {
    fn add(&mut self, part: &RunResult, tally: &[u64], abandoned: u64, never: u32) {
        self.failed += part.failed;
        self.retried += part.retried;
        self.retries += part.retries;
        self.late_starts += part.late_starts;
        self.unstarted += part.unstarted;
        self.abandoned += abandoned;
        self.never_connected += never;
        self.ramp_transactions += part.ramp_transactions;
        self.ramp_errors += part.ramp_errors;
        self.threads += part.threads;
        self.queries.add(&part.queries);
        self.cpu.user += part.client_cpu_s.user;
        self.cpu.system += part.client_cpu_s.system;
        self.cpu.total += part.client_cpu_s.total;
        for (class, n) in &part.errors.by_class {
            *self.errors.entry(class.clone()).or_default() += n;
        }
        if self.tally.len() < tally.len() {
            self.tally.resize(tally.len(), 0);
        }
        for (sum, n) in self.tally.iter_mut().zip(tally) {
            *sum += n;
        }
        for host in &part.connections_by_host {
            match self.hosts.iter_mut().find(|(name, _)| *name == host.host) {
                Some(entry) => entry.1 += host.connections,
                None => self.hosts.push((host.host.clone(), host.connections)),
            }
        }
    }
}

/// The merged result of `parts`, the workers' results of the run `config` describes (its whole
/// client count, rate and seed).
pub fn merge_workers(config: &RunConfig, parts: &[RunResult]) -> Result<RunResult, Error> {
    let first = parts
        .first()
        .ok_or_else(|| Error::Internal("no worker results to merge".into()))?;
    let (mut overall, mut connect, mut lag) = (
        LatencyHistogram::new(),
        LatencyHistogram::new(),
        LatencyHistogram::new(),
    );
    let mut types: BTreeMap<String, (LatencyHistogram, u64)> = BTreeMap::new();
    let mut commands: Vec<CommandTally> = Vec::new();
    let mut sums = Sums::default();
    let duration_s = parts.iter().map(|p| p.duration_s).fold(0.0, f64::max);
    let mut merger = IntervalMerger::new(config.interval_s, parts.len(), config.duration_s);
    for part in parts {
        let detail = part.detail.as_ref().ok_or_else(|| {
            Error::Internal("a worker's result lacks the detail a merge needs".into())
        })?;
        if part.workload != first.workload {
            return Err(Error::Internal("workers ran different workloads".into()));
        }
        overall.merge(&decode(&part.histogram, "latency")?);
        connect.merge(&decode(&detail.connect_histogram, "connect")?);
        lag.merge(&decode(&detail.lag_histogram, "schedule lag")?);
        let tallies: Vec<CommandTally> = part.commands.iter().map(|c| c.tally()).collect();
        merge_tallies(&mut commands, &tallies);
        for (name, result) in &part.transaction_types {
            let slot = types.entry(name.clone()).or_default();
            slot.0.merge(&decode(&result.histogram, name)?);
            slot.1 += result.failed;
        }
        sums.add(
            part,
            &detail.tally,
            detail.abandoned,
            detail.clients_never_connected,
        );
        for interval in &part.intervals {
            let (index, stats) = interval.to_stats().map_err(Error::Internal)?;
            merger.submit(index, stats);
        }
    }
    merger.finish(duration_s);
    let cancelled = parts.iter().any(|p| p.cancelled);
    let transactions = overall.count();
    let error_total = sums.errors.values().sum();
    let clients_connected = config.clients.saturating_sub(sums.never_connected);
    let connect_error = parts.iter().find_map(|p| p.connect_error.clone());
    let verdict = verdict(
        &Tally {
            transactions,
            failed: sums.failed,
            retries: sums.retries,
            error_total,
            errors: &sums.errors,
            cancelled,
            abandoned: sums.abandoned,
            duration_s,
        },
        &Refused {
            clients: config.clients,
            connected: clients_connected,
            message: connect_error.as_deref(),
            max_connections: first.server_max_connections,
        },
    );
    let tpcc = merged_tpcc(config, first, &types, &sums.tally, duration_s)?;
    let mut workload_params = first.workload_params.clone();
    if let Some(total) = sum_param(parts, "connections") {
        workload_params.insert("connections".into(), total.into());
    }
    let commands = first
        .commands
        .iter()
        .zip(&commands)
        .map(|(c, tally)| {
            let place = CommandPlace {
                script: c.script.clone(),
                line: c.line,
                text: c.command.clone(),
            };
            CommandLatency::of(&place, tally)
        })
        .collect();
    Ok(RunResult {
        commands,
        workload: first.workload.clone(),
        target: first.target.clone(),
        server_version: first.server_version.clone(),
        tls: first.tls,
        clients: config.clients,
        threads: sums.threads,
        protocol: config.protocol,
        connect: config.connect,
        rate_tps: config.rate_tps,
        seed: config.seed.unwrap_or(first.seed),
        workload_params,
        duration_s,
        transactions,
        tps: transactions as f64 / duration_s.max(1e-9),
        failed: sums.failed,
        retried: sums.retried,
        retries: sums.retries,
        cancelled,
        errors: ErrorCounts {
            total: error_total,
            by_class: sums.errors,
        },
        latency_ms: overall.summary(),
        connect_ms: connect.summary(),
        schedule_lag_ms: config.rate_tps.and_then(|_| lag.summary()),
        late_starts: sums.late_starts,
        unstarted: sums.unstarted,
        qps: sums.queries.total as f64 / duration_s.max(1e-9),
        queries: sums.queries,
        client_cpu_us_per_txn: (transactions > 0)
            .then(|| sums.cpu.total * 1e6 / transactions as f64),
        client_cpu_s: sums.cpu,
        transaction_types: types
            .into_iter()
            .map(|(name, (histogram, failed))| {
                (name, TransactionTypeResult::of(&histogram, failed))
            })
            .collect(),
        histogram: overall.to_base64(),
        intervals: merger.all().to_vec(),
        verdict,
        ramp_s: first.ramp_s,
        ramp_transactions: sums.ramp_transactions,
        ramp_errors: sums.ramp_errors,
        connections: sum_connections(parts),
        connections_by_host: sums
            .hosts
            .into_iter()
            .map(|(host, connections)| HostConnections { host, connections })
            .collect(),
        clients_connected,
        connect_error,
        server_max_connections: first.server_max_connections,
        tpcc,
        detail: None,
    })
}

/// The shared-connection counts of the workers, summed (None when they had none).
fn sum_connections(parts: &[RunResult]) -> Option<u32> {
    parts.iter().map(|p| p.connections).sum::<Option<u32>>()
}

fn sum_param(parts: &[RunResult], name: &str) -> Option<i64> {
    parts
        .iter()
        .map(|p| {
            p.workload_params
                .get(name)
                .and_then(serde_json::Value::as_i64)
        })
        .sum::<Option<i64>>()
}

/// TPC-C's figures and verdict from the merged per-type histograms and tallies, in the
/// workload's own type order.
fn merged_tpcc(
    config: &RunConfig,
    first: &RunResult,
    types: &BTreeMap<String, (LatencyHistogram, u64)>,
    tally: &[u64],
    duration_s: f64,
) -> Result<Option<crate::workload::tpcc::TpccSummary>, Error> {
    let Some(worker_summary) = &first.tpcc else {
        return Ok(None);
    };
    let mut resolved = config.workload.clone();
    resolved.params = first.workload_params.clone();
    let workload = Workload::from_config(&resolved)?;
    let ordered: Vec<LatencyHistogram> = workload
        .transaction_types()
        .iter()
        .map(|name| types.get(name).map(|t| t.0.clone()).unwrap_or_default())
        .collect();
    Ok(workload.summarize_merged(&worker_summary.c_last_source, &ordered, tally, duration_s))
}

//! Turns the threads' totals into one [`RunResult`]: histograms merged exactly, counts summed,
//! throughput over the measured time, and a verdict in words.

use std::collections::BTreeMap;
use std::time::Instant;

use super::recorder::ThreadTotals;
use super::verdict::{verdict, Refused, Tally};
use super::{RunShared, Setup};
use crate::stats::commands::{merge_tallies, CommandLatency, CommandTally};
use crate::stats::result::{
    CpuTime, ErrorCounts, HostConnections, QueryCounts, ResultDetail, TransactionTypeResult,
};
use crate::stats::{LatencyHistogram, RunResult};
use crate::workload::TALLY_SLOTS;

pub fn assemble(
    shared: &RunShared,
    start: Instant,
    threads: Vec<ThreadTotals>,
    client_cpu: CpuTime,
    setup: Setup,
) -> RunResult {
    let config = &shared.config;
    let types = shared.workload.transaction_types();
    let mut per_type: Vec<(LatencyHistogram, u64)> =
        vec![(LatencyHistogram::new(), 0); types.len()];
    let (mut connect, mut lag, mut overall) = (
        LatencyHistogram::new(),
        LatencyHistogram::new(),
        LatencyHistogram::new(),
    );
    let mut errors: BTreeMap<String, u64> = BTreeMap::new();
    let mut queries = QueryCounts::default();
    let (mut failed, mut retried, mut retries, mut late, mut unstarted, mut abandoned) =
        (0, 0, 0, 0, 0, 0);
    let mut last_end = start;
    let (mut never_connected, mut connect_error) = (0u32, None);
    let mut tally = [0u64; TALLY_SLOTS];
    let mut commands: Vec<CommandTally> = Vec::new();
    let (mut ramp_transactions, mut ramp_errors) = (0, 0);
    for t in &threads {
        for (sum, n) in tally.iter_mut().zip(t.tally) {
            *sum += n;
        }
        ramp_transactions += t.ramp_transactions;
        never_connected += t.clients_never_connected;
        if connect_error.is_none() {
            connect_error.clone_from(&t.connect_error);
        }
        ramp_errors += t.ramp_errors;
        for (slot, totals) in per_type.iter_mut().zip(&t.types) {
            slot.0.merge(&totals.latency);
            slot.1 += totals.failed;
            overall.merge(&totals.latency);
        }
        connect.merge(&t.connect);
        lag.merge(&t.lag);
        for (class, n) in &t.errors {
            *errors.entry(class.key()).or_default() += n;
        }
        queries.add(&t.queries);
        failed += t.failed;
        retried += t.retried;
        retries += t.retries;
        late += t.late_starts;
        unstarted += t.unstarted;
        abandoned += t.abandoned;
        merge_tallies(&mut commands, &t.commands);
        if let Some(end) = t.last_end {
            last_end = last_end.max(end);
        }
    }
    let cancelled = shared.is_cancelled();
    // pgbench's rule: time from the common start to the end of the last transaction, but never
    // less than the configured duration unless the run was cut short or counted transactions.
    let mut duration_s = last_end.saturating_duration_since(start).as_secs_f64();
    if !cancelled && config.transactions.is_none() {
        duration_s = duration_s.max(config.duration_s);
    }
    let duration_s = duration_s.max(1e-9);
    let transactions = overall.count();
    let error_total = errors.values().sum();
    let mut merger = shared.merger.lock().expect("merger lock");
    merger.finish(duration_s);
    let intervals = merger.all().to_vec();
    drop(merger);
    let clients_connected = config.clients.saturating_sub(never_connected);
    let refused = Refused {
        clients: config.clients,
        connected: clients_connected,
        message: connect_error.as_deref(),
        max_connections: setup.max_connections,
    };
    let verdict = verdict(
        &Tally {
            transactions,
            failed,
            retries,
            error_total,
            errors: &errors,
            cancelled,
            abandoned,
            duration_s,
        },
        &refused,
    );
    let detail = config.share.as_ref().map(|_| ResultDetail {
        connect_histogram: connect.to_base64(),
        lag_histogram: lag.to_base64(),
        tally: tally.to_vec(),
        abandoned,
        clients_never_connected: never_connected,
    });
    let type_histograms: Vec<LatencyHistogram> = per_type.iter().map(|(h, _)| h.clone()).collect();
    let tpcc = shared
        .workload
        .summarize(&type_histograms, &tally, duration_s);
    let commands = shared
        .workload
        .command_places()
        .iter()
        .enumerate()
        .map(|(i, place)| {
            CommandLatency::of(place, commands.get(i).unwrap_or(&CommandTally::default()))
        })
        .collect();
    RunResult {
        commands,
        detail,
        ramp_s: shared.ramp.as_secs_f64(),
        ramp_transactions,
        ramp_errors,
        connections: shared
            .workload
            .shared_connections()
            .filter(|n| *n < config.clients),
        connections_by_host: shared
            .connections_by_host()
            .into_iter()
            .map(|(host, connections)| HostConnections { host, connections })
            .collect(),
        tpcc,
        clients_connected,
        server_max_connections: setup.max_connections,
        connect_error,
        workload: shared.workload.name().to_string(),
        target: shared.endpoint().redacted(),
        server_version: setup.server_version,
        tls: setup.tls,
        clients: config.clients,
        threads: threads.len() as u32,
        protocol: config.protocol,
        connect: config.connect,
        rate_tps: config.rate_tps,
        seed: shared.seed,
        workload_params: shared.workload.params(),
        duration_s,
        transactions,
        tps: transactions as f64 / duration_s,
        failed,
        retried,
        retries,
        cancelled,
        errors: ErrorCounts {
            total: error_total,
            by_class: errors,
        },
        latency_ms: overall.summary(),
        connect_ms: connect.summary(),
        schedule_lag_ms: config.rate_tps.and_then(|_| lag.summary()),
        late_starts: late,
        unstarted,
        queries,
        qps: queries.total as f64 / duration_s,
        client_cpu_us_per_txn: (transactions > 0)
            .then(|| client_cpu.total * 1e6 / transactions as f64),
        client_cpu_s: client_cpu,
        transaction_types: types
            .iter()
            .zip(per_type)
            .map(|(name, (histogram, failed))| {
                (
                    name.to_string(),
                    TransactionTypeResult::of(&histogram, failed),
                )
            })
            .collect(),
        histogram: overall.to_base64(),
        intervals,
        verdict,
    }
}

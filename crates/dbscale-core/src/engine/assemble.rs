//! Turns the threads' totals into one [`RunResult`]: histograms merged exactly, counts summed,
//! then the one step every result takes (`outcome.rs`).

use std::time::Instant;

use super::outcome::{Ending, RunTotals};
use super::recorder::{NodeTotals, ThreadTotals};
use super::transaction_log;
use super::{RunShared, Setup};
use crate::stats::result::{CpuTime, NodeResult, TransactionLogSummary};
use crate::stats::RunResult;

pub fn assemble(
    shared: &RunShared,
    start: Instant,
    threads: Vec<ThreadTotals>,
    client_cpu: CpuTime,
    setup: Setup,
) -> RunResult {
    let config = &shared.config;
    let (totals, last_end) = sum_threads(shared, start, &threads, client_cpu);
    let cancelled = shared.is_cancelled();
    // pgbench's rule: time from the common start to the end of the last transaction, but never
    // less than the configured duration unless the run was cut short or counted transactions.
    let mut duration_s = last_end.saturating_duration_since(start).as_secs_f64();
    if !cancelled && config.transactions.is_none() {
        duration_s = duration_s.max(config.duration_s);
    }
    // A hard stop abandoned transactions in flight: the run lasted until the stop.
    if shared.is_aborted() {
        duration_s = duration_s.max(
            Instant::now()
                .saturating_duration_since(start)
                .as_secs_f64(),
        );
    }
    let duration_s = duration_s.max(1e-9);
    let mut merger = shared.merger.lock().expect("merger lock");
    merger.finish(duration_s);
    let intervals = merger.all().to_vec();
    drop(merger);
    let names = shared.workload.transaction_types();
    let order: Vec<&str> = names.iter().map(String::as_str).collect();
    let tpcc = shared
        .workload
        .summarize(&totals.histograms_in(&order), &totals.tally, duration_s);
    let frame = RunResult {
        workload: shared.workload.name().to_string(),
        target: shared.target_label().to_string(),
        server_version: setup.server_version,
        tls: setup.tls,
        clients: config.clients,
        protocol: config.protocol,
        connect: config.connect,
        rate_tps: config.rate_tps,
        seed: shared.seed,
        workload_params: shared.workload.params(),
        ramp_s: shared.ramp.as_secs_f64(),
        connections: shared
            .workload
            .shared_connections()
            .filter(|n| *n < config.clients),
        server_max_connections: setup.max_connections,
        tpcc,
        latency_limit_ms: config.latency_limit_ms,
        transaction_log: config
            .transaction_log
            .as_ref()
            .map(|log| TransactionLogSummary {
                path: transaction_log::file_name(config, &log.path, 0),
                files: threads.len() as u32,
                lines: 0,
                error: threads.iter().find_map(|t| t.log_error.clone()),
            }),
        ..RunResult::default()
    };
    let ending = Ending {
        duration_s,
        cancelled,
        intervals,
        command_places: shared.workload.command_places(),
        statement_names: shared
            .statements
            .iter()
            .map(|s| (s.name.to_string(), s.sql.clone()))
            .collect(),
        keep_detail: config.share.is_some(),
    };
    let mut result = totals.into_result(frame, ending);
    if shared.keeps_nodes() {
        add_nodes(&mut result, shared, start, &threads);
    }
    result
}

/// Each node's figures (the threads' sums), how the clients were routed, and when
/// transactions succeeded, per node and over the whole target.
fn add_nodes(result: &mut RunResult, shared: &RunShared, start: Instant, threads: &[ThreadTotals]) {
    let mut sums = vec![NodeTotals::default(); shared.nodes.len()];
    for thread in threads {
        for (sum, node) in sums.iter_mut().zip(&thread.nodes) {
            sum.latency.merge(&node.latency);
            sum.failed += node.failed;
            sum.errors += node.errors;
            sum.lost += node.lost;
            sum.failovers += node.failovers;
        }
    }
    let mut availability = shared
        .nodes
        .availability
        .as_ref()
        .map(|a| a.figures(start))
        .unwrap_or_default()
        .into_iter();
    result.nodes = sums
        .iter()
        .zip(shared.connections_by_host())
        .map(|(sum, (node, connections))| NodeResult {
            node,
            connections,
            transactions: sum.latency.count(),
            failed: sum.failed,
            errors: sum.errors,
            lost: sum.lost,
            failovers: sum.failovers,
            latency_ms: sum.latency.summary(),
            histogram: sum.latency.to_base64(),
            availability: availability.next(),
        })
        .collect();
    result.availability = availability.next();
    result.failovers = sums.iter().map(|s| s.failovers).sum();
    result.routing = Some(shared.nodes.routing());
    super::verdict::note_failovers(&mut result.verdict, result.failovers);
}

/// The threads' totals summed and merged, and when the last transaction ended.
fn sum_threads(
    shared: &RunShared,
    start: Instant,
    threads: &[ThreadTotals],
    client_cpu: CpuTime,
) -> (RunTotals, Instant) {
    let mut totals = RunTotals {
        threads: threads.len() as u32,
        cpu: client_cpu,
        ..RunTotals::default()
    };
    for name in shared.workload.transaction_types() {
        totals.type_slot(&name);
    }
    let mut last_end = start;
    for t in threads {
        totals.add_tally(&t.tally);
        totals.counts.add(&t.counts);
        totals.never_connected += t.clients_never_connected;
        if totals.connect_error.is_none() {
            totals.connect_error.clone_from(&t.connect_error);
            totals.connect_error_kind = t.connect_error_kind.map(str::to_string);
        }
        for (slot, type_totals) in totals.types.iter_mut().zip(&t.types) {
            slot.1.merge(&type_totals.latency);
            slot.2 += type_totals.failed;
            totals.overall.merge(&type_totals.latency);
        }
        totals.connect.merge(&t.connect);
        totals.lag.merge(&t.lag);
        for (class, n) in &t.errors {
            *totals.errors.entry(class.key()).or_default() += n;
        }
        for (class, message) in &t.error_messages {
            totals
                .error_messages
                .entry(class.key())
                .or_insert_with(|| message.clone());
        }
        totals.add_commands(&t.commands);
        totals.statements.merge(&t.statements);
        if let Some(end) = t.last_end {
            last_end = last_end.max(end);
        }
    }
    for (host, connections) in shared.connections_by_host() {
        totals.add_host(&host, connections);
    }
    (totals, last_end)
}

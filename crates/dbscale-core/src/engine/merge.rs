//! One result from the results of a scaled-out run's workers, as one machine running all their
//! clients would have recorded it: histograms merged (never percentiles averaged), counters and
//! errors summed, per-second intervals merged by their index since the common start, the
//! measured time the longest worker's (they started together), the verdict and TPC-C's figures
//! computed again from the merged counts by the one step every result takes (`outcome.rs`).

use std::collections::BTreeSet;

use super::availability::intersect;
use super::outcome::{Ending, RunTotals};
use crate::config::RunConfig;
use crate::stats::commands::{CommandPlace, CommandTally};
use crate::stats::result::{NodeAvailability, NodeResult, TransactionLogSummary};
use crate::stats::tpcc::TpccSummary;
use crate::stats::{IntervalMerger, IntervalSnapshot, LatencyHistogram, RunResult};
use crate::workload::Workload;
use crate::Error;

fn decode(text: &str, what: &str) -> Result<LatencyHistogram, Error> {
    LatencyHistogram::from_base64(text)
        .map_err(|e| Error::Internal(format!("a worker's {what} histogram: {e}")))
}

/// The merged result of `parts`, the workers' results of the run `config` describes (its whole
/// client count, rate and seed).
pub fn merge_workers(config: &RunConfig, parts: &[RunResult]) -> Result<RunResult, Error> {
    let first = parts
        .first()
        .ok_or_else(|| Error::Internal("no worker results to merge".into()))?;
    let totals = sum_workers(first, parts)?;
    let duration_s = parts.iter().map(|p| p.duration_s).fold(0.0, f64::max);
    let intervals = merge_intervals(config, parts, duration_s)?;
    let tpcc = merged_tpcc(config, first, &totals, duration_s)?;
    let mut workload_params = first.workload_params.clone();
    if let Some(total) = sum_param(parts, "connections") {
        workload_params.insert("connections".into(), total.into());
    }
    let command_places = first
        .commands
        .iter()
        .map(|c| CommandPlace {
            script: c.script.clone(),
            line: c.line,
            text: c.command.clone(),
        })
        .collect();
    // The first worker's result says what the run was; the whole run's config, its clients.
    let frame = RunResult {
        clients: config.clients,
        protocol: config.protocol,
        connect: config.connect,
        rate_tps: config.rate_tps,
        seed: config.seed.unwrap_or(first.seed),
        workload_params,
        connections: parts.iter().map(|p| p.connections).sum::<Option<u32>>(),
        tpcc,
        transaction_log: merged_log(parts),
        ..first.clone()
    };
    let ending = Ending {
        duration_s,
        cancelled: parts.iter().any(|p| p.cancelled),
        intervals,
        command_places,
        statement_names: parts.iter().flat_map(|p| &p.statements).fold(
            Vec::new(),
            |mut names, s| {
                let index = s.index as usize;
                if names.len() <= index {
                    names.resize(index + 1, (String::new(), String::new()));
                }
                names[index] = (s.name.clone(), s.sql.clone());
                names
            },
        ),
        keep_detail: false,
    };
    let mut result = totals.into_result(frame, ending);
    merge_nodes(&mut result, parts, duration_s)?;
    Ok(result)
}

/// The workers' per-node figures summed node by node (histograms merged), and their
/// availability intersected: a node was without successes only when every worker was.
fn merge_nodes(result: &mut RunResult, parts: &[RunResult], duration_s: f64) -> Result<(), Error> {
    let mut nodes = Vec::new();
    for (index, first) in parts[0].nodes.iter().enumerate() {
        let mut latency = LatencyHistogram::default();
        let mut node = NodeResult {
            node: first.node.clone(),
            ..NodeResult::default()
        };
        let mut spans = Vec::new();
        for part in parts {
            let Some(theirs) = part.nodes.get(index) else {
                continue;
            };
            latency.merge(&decode(&theirs.histogram, "node")?);
            node.connections += theirs.connections;
            node.failed += theirs.failed;
            node.errors += theirs.errors;
            node.lost += theirs.lost;
            node.failovers += theirs.failovers;
            spans.extend(theirs.availability.as_ref());
        }
        node.transactions = latency.count();
        node.latency_ms = latency.summary();
        node.histogram = latency.to_base64();
        node.availability = (!spans.is_empty()).then(|| intersect(&spans, duration_s));
        nodes.push(node);
    }
    let whole: Vec<&NodeAvailability> = parts
        .iter()
        .filter_map(|p| p.availability.as_ref())
        .collect();
    result.availability = (!whole.is_empty()).then(|| intersect(&whole, duration_s));
    result.failovers = parts.iter().map(|p| p.failovers).sum();
    result.nodes = nodes;
    super::verdict::note_failovers(&mut result.verdict, result.failovers);
    Ok(())
}

/// The workers' histograms merged and their counters summed.
fn sum_workers(first: &RunResult, parts: &[RunResult]) -> Result<RunTotals, Error> {
    let mut totals = RunTotals::default();
    for part in parts {
        let detail = part.detail.as_ref().ok_or_else(|| {
            Error::Internal("a worker's result lacks the detail a merge needs".into())
        })?;
        if part.workload != first.workload {
            return Err(Error::Internal("workers ran different workloads".into()));
        }
        totals.overall.merge(&decode(&part.histogram, "latency")?);
        totals
            .connect
            .merge(&decode(&detail.connect_histogram, "connect")?);
        totals
            .lag
            .merge(&decode(&detail.lag_histogram, "schedule lag")?);
        let commands: Vec<CommandTally> = part.commands.iter().map(|c| c.tally()).collect();
        totals.add_commands(&commands);
        for statement in &part.statements {
            let histogram = decode(&statement.figures.histogram, &statement.name)?;
            let tally = statement.figures.tally();
            totals
                .statements
                .add(statement.index as usize, &tally, &histogram);
        }
        for (name, result) in &part.transaction_types {
            let histogram = decode(&result.histogram, name)?;
            let slot = totals.type_slot(name);
            slot.1.merge(&histogram);
            slot.2 += result.failed;
        }
        totals.add_tally(&detail.tally);
        totals.counts.add(&part.counts(detail.abandoned));
        totals.never_connected += detail.clients_never_connected;
        totals.threads += part.threads;
        totals.add_cpu(&part.client_cpu_s);
        for (class, n) in &part.errors.by_class {
            *totals.errors.entry(class.clone()).or_default() += n;
        }
        for (class, message) in &part.errors.messages {
            totals
                .error_messages
                .entry(class.clone())
                .or_insert_with(|| message.clone());
        }
        for host in &part.connections_by_host {
            totals.add_host(&host.host, host.connections);
        }
        if totals.connect_error.is_none() {
            totals.connect_error.clone_from(&part.connect_error);
            totals
                .connect_error_kind
                .clone_from(&part.connect_error_kind);
        }
    }
    totals.types.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(totals)
}

/// The workers' per-second intervals merged by their index since the common start.
fn merge_intervals(
    config: &RunConfig,
    parts: &[RunResult],
    duration_s: f64,
) -> Result<Vec<IntervalSnapshot>, Error> {
    // The workers run one workload: the union of their type names (each interval names its own).
    let names: BTreeSet<&String> = parts
        .iter()
        .flat_map(|p| p.transaction_types.keys())
        .collect();
    let mut merger = IntervalMerger::new(config.interval_s, parts.len(), config.duration_s)
        .with_type_names(names.into_iter().cloned().collect());
    for part in parts {
        for interval in &part.intervals {
            let (index, stats) = interval
                .to_stats(merger.type_names())
                .map_err(Error::Internal)?;
            merger.submit(index, stats);
        }
    }
    merger.finish(duration_s);
    Ok(merger.all().to_vec())
}

/// The workers' transaction logs as one: their files counted, the first error kept (the lines
/// are summed with the other counts).
fn merged_log(parts: &[RunResult]) -> Option<TransactionLogSummary> {
    let logs: Vec<&TransactionLogSummary> = parts
        .iter()
        .filter_map(|p| p.transaction_log.as_ref())
        .collect();
    let first = logs.first()?;
    Some(TransactionLogSummary {
        path: first.path.clone(),
        files: logs.iter().map(|log| log.files).sum(),
        lines: 0,
        error: logs.iter().find_map(|log| log.error.clone()),
    })
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
    totals: &RunTotals,
    duration_s: f64,
) -> Result<Option<TpccSummary>, Error> {
    let Some(worker_summary) = &first.tpcc else {
        return Ok(None);
    };
    let mut resolved = config.workload.clone();
    resolved.params = first.workload_params.clone();
    let workload = Workload::from_config(&resolved)?;
    let Workload::Tpcc(tpcc) = &workload else {
        return Ok(None);
    };
    let names = workload.transaction_types();
    let order: Vec<&str> = names.iter().map(String::as_str).collect();
    Ok(tpcc.summarize_merged(
        &worker_summary.c_last_source,
        &totals.histograms_in(&order),
        &totals.tally,
        duration_s,
    ))
}

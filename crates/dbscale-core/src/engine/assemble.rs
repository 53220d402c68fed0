//! Turns the threads' totals into one [`RunResult`]: histograms merged exactly, counts summed,
//! throughput over the measured time, and a verdict in words.

use std::collections::BTreeMap;
use std::time::Instant;

use super::recorder::ThreadTotals;
use super::{RunShared, Setup};
use crate::stats::result::{
    CpuTime, ErrorCounts, HostConnections, QueryCounts, TransactionTypeResult, Verdict,
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
        if let Some(end) = t.last_end {
            last_end = last_end.max(end);
        }
    }
    let cancelled = shared.is_cancelled();
    // pgbench's rule: time from the common start to the end of the last transaction, but never
    // less than the configured duration unless the run was cut short.
    let mut duration_s = last_end.saturating_duration_since(start).as_secs_f64();
    if !cancelled {
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
    let type_histograms: Vec<LatencyHistogram> = per_type.iter().map(|(h, _)| h.clone()).collect();
    let tpcc = shared
        .workload
        .summarize(&type_histograms, &tally, duration_s);
    RunResult {
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
                let result = TransactionTypeResult {
                    transactions: histogram.count(),
                    failed,
                    latency_ms: histogram.summary(),
                    histogram: histogram.to_base64(),
                };
                (name.to_string(), result)
            })
            .collect(),
        histogram: overall.to_base64(),
        intervals,
        verdict,
    }
}

/// Clients asked for and connected, for the verdict.
struct Refused<'a> {
    clients: u32,
    connected: u32,
    message: Option<&'a str>,
    max_connections: Option<u64>,
}

impl Refused<'_> {
    /// "only 97 of 150 clients connected (...)" when some never connected.
    fn sentence(&self) -> Option<String> {
        if self.connected >= self.clients {
            return None;
        }
        let mut text = format!(
            "only {} of {} clients connected",
            self.connected, self.clients
        );
        if let Some(message) = self.message {
            text.push_str(&format!(" (server: {message})"));
        }
        if let Some(limit) = self.max_connections {
            text.push_str(&format!("; the server's max_connections is {limit}"));
        }
        Some(text)
    }
}

/// What the run's outcome is judged on.
struct Tally<'a> {
    transactions: u64,
    failed: u64,
    retries: u64,
    error_total: u64,
    errors: &'a BTreeMap<String, u64>,
    cancelled: bool,
    abandoned: u64,
    duration_s: f64,
}

fn verdict(tally: &Tally, refused: &Refused) -> Verdict {
    let Tally {
        transactions,
        failed,
        retries,
        error_total,
        errors,
        cancelled,
        abandoned,
        duration_s,
    } = *tally;
    let classes: Vec<String> = errors.iter().map(|(k, n)| format!("{k} {n}")).collect();
    let mut notes = Vec::new();
    if cancelled {
        notes.push(format!("cancelled after {duration_s:.1} s"));
    }
    if abandoned > 0 {
        notes.push(format!(
            "{abandoned} transactions still running at the hard stop were abandoned"
        ));
    }
    // An error followed by a retry that committed is a retry, not an error of the run.
    let unretried = error_total.saturating_sub(retries);
    let (status, head) = if transactions == 0 && (failed > 0 || error_total > 0) {
        (
            "failed",
            format!("no transaction succeeded; errors: {}", classes.join(", ")),
        )
    } else if transactions == 0 {
        ("failed", "no transaction completed".to_string())
    } else if failed == 0 && unretried > 0 {
        (
            "errors",
            format!(
                "{transactions} transactions, none failed; errors: {}",
                classes.join(", ")
            ),
        )
    } else if failed > 0 {
        let share = 100.0 * failed as f64 / (failed + transactions) as f64;
        (
            "errors",
            format!(
                "{failed} of {} transactions failed ({share:.2}%); errors: {}",
                failed + transactions,
                classes.join(", ")
            ),
        )
    } else if retries > 0 {
        (
            "ok",
            format!(
                "{transactions} transactions, none failed; {retries} retries after {} \
                 (each retried transaction then committed)",
                classes.join(", ")
            ),
        )
    } else {
        ("ok", format!("{transactions} transactions, no errors"))
    };
    notes.insert(0, head);
    // A run whose clients the server refused measured a smaller run than the one asked for:
    // it fails, whatever its throughput.
    let status = match refused.sentence() {
        Some(sentence) => {
            notes.insert(0, sentence);
            "failed"
        }
        None => status,
    };
    Verdict {
        status: status.into(),
        message: notes.join("; "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: Refused = Refused {
        clients: 8,
        connected: 8,
        message: None,
        max_connections: Some(100),
    };

    /// The verdict of `transactions`, `failed` and `retries` with these errors (not cancelled).
    fn judge(transactions: u64, failed: u64, retries: u64, errors: &[(&str, u64)]) -> Verdict {
        judge_with(transactions, failed, retries, errors, &ALL)
    }

    fn judge_with(
        transactions: u64,
        failed: u64,
        retries: u64,
        errors: &[(&str, u64)],
        refused: &Refused,
    ) -> Verdict {
        let by_class: BTreeMap<String, u64> =
            errors.iter().map(|(k, n)| (k.to_string(), *n)).collect();
        let tally = Tally {
            transactions,
            failed,
            retries,
            error_total: by_class.values().sum(),
            errors: &by_class,
            cancelled: false,
            abandoned: 0,
            duration_s: 10.0,
        };
        verdict(&tally, refused)
    }

    #[test]
    fn a_clean_run_is_ok() {
        let v = judge(1200, 0, 0, &[]);
        assert_eq!(v.status, "ok");
        assert_eq!(v.message, "1200 transactions, no errors");
    }

    #[test]
    fn failed_transactions_make_errors_with_their_share_and_classes() {
        let v = judge(996, 4, 0, &[("deadlock", 3), ("sql:23505", 1)]);
        assert_eq!(v.status, "errors");
        assert_eq!(
            v.message,
            "4 of 1000 transactions failed (0.40%); errors: deadlock 3, sql:23505 1"
        );
    }

    #[test]
    fn nothing_succeeding_is_a_failure() {
        let v = judge(0, 12, 0, &[("connect", 12)]);
        assert_eq!(v.status, "failed");
        assert_eq!(v.message, "no transaction succeeded; errors: connect 12");
        let quiet = judge(0, 0, 0, &[]);
        assert_eq!(
            (quiet.status.as_str(), quiet.message.as_str()),
            ("failed", "no transaction completed")
        );
    }

    #[test]
    fn cancellation_and_abandoned_transactions_are_noted() {
        let none = BTreeMap::new();
        let tally = Tally {
            transactions: 10,
            failed: 0,
            retries: 0,
            error_total: 0,
            errors: &none,
            cancelled: true,
            abandoned: 2,
            duration_s: 1.25,
        };
        let v = verdict(&tally, &ALL);
        assert_eq!(v.status, "ok");
        assert_eq!(
            v.message,
            "10 transactions, no errors; cancelled after 1.2 s; \
             2 transactions still running at the hard stop were abandoned"
        );
    }

    #[test]
    fn refused_clients_fail_a_run_whatever_it_measured() {
        let refused = Refused {
            clients: 150,
            connected: 97,
            message: Some("sorry, too many clients already"),
            max_connections: Some(100),
        };
        let v = judge_with(5000, 0, 0, &[("connect", 260)], &refused);
        assert_eq!(v.status, "failed");
        assert!(
            v.message.starts_with(
                "only 97 of 150 clients connected (server: sorry, too many clients already); \
                 the server's max_connections is 100; "
            ),
            "{}",
            v.message
        );
    }

    #[test]
    fn retries_that_committed_are_not_errors() {
        let v = judge(996, 0, 3, &[("deadlock", 3)]);
        assert_eq!(v.status, "ok");
        assert_eq!(
            v.message,
            "996 transactions, none failed; 3 retries after deadlock 3 (each retried \
             transaction then committed)"
        );
        // A retry that failed again, or an error never retried, still counts.
        assert_eq!(judge(996, 1, 3, &[("deadlock", 4)]).status, "errors");
        let lost = judge(996, 0, 3, &[("deadlock", 3), ("connection_lost", 1)]);
        assert_eq!(lost.status, "errors");
    }
}

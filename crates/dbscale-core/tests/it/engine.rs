//! The engine end to end against a real PostgreSQL (DBSCALE_TEST_PG_URL): load TPC-B, run it
//! under each load model, connection mode and protocol, provoke and count errors, cancel.

use crate::support::*;

use std::time::Duration;

use dbscale_core::config::{RunConfig, TransactionLogConfig};
use dbscale_core::driver::{ConnectMode, Endpoint, QueryProtocol};
use dbscale_core::engine;
use dbscale_core::stats::LatencyHistogram;
use dbscale_core::Error;

fn config(url: &str, workload: &str, clients: u32, duration_s: f64) -> RunConfig {
    RunConfig {
        clients,
        threads: Some(2.min(clients)),
        duration_s,
        ..run_config(url, workload)
    }
}

/// A fresh database holding TPC-B at scale 1.
fn prepared_database(name: &str) -> String {
    let url = fresh_database(&require(PG_URL), &format!("dbscale_engine_{name}"));
    let summary = engine::prepare(&config(&url, "tpcb", 1, 1.0)).unwrap();
    assert_eq!(summary.rows, 1 + 10 + 100_000);
    url
}

#[cfg_attr(not(test_pg), ignore = "needs DBSCALE_TEST_PG_URL")]
#[test]
fn closed_model_tpcb_counts_every_statement_and_interval() {
    let url = prepared_database("closed");
    let result = run(config(&url, "tpcb", 4, 2.0));
    assert!(result.transactions > 100, "{}", result.transactions);
    assert_eq!(result.errors.total, 0, "{:?}", result.errors);
    assert_eq!(result.verdict.status, "ok");
    assert_eq!(result.workload_params["scale"], 1);
    // BEGIN, 3 updates, select, insert, END.
    assert_eq!(result.queries.total, 7 * result.transactions);
    assert_eq!(result.queries.read, result.transactions);
    // Two seconds of window, then the drain (what ended after it) when anything did.
    let window: Vec<_> = result.intervals.iter().filter(|i| !i.drain).collect();
    assert_eq!(window.len(), 2);
    assert!(result.intervals.len() <= 3 && result.intervals[2..].iter().all(|i| i.drain));
    let interval_sum: u64 = result.intervals.iter().map(|i| i.transactions).sum();
    assert_eq!(interval_sum, result.transactions);
    let histogram =
        LatencyHistogram::from_base64(&result.transaction_types["tpcb-like"].histogram).unwrap();
    assert_eq!(histogram.count(), result.transactions);
    assert_eq!(result.connect_ms.unwrap().count, 4);
    assert!(
        result.tps > 0.0
            && (result.tps - result.transactions as f64 / result.duration_s).abs() < 1e-6
    );
    assert!(result.client_cpu_s.total > 0.0);
}

#[cfg_attr(not(test_pg), ignore = "needs DBSCALE_TEST_PG_URL")]
#[test]
fn every_protocol_runs_select_only() {
    let url = prepared_database("protocols");
    for protocol in [
        QueryProtocol::Simple,
        QueryProtocol::Extended,
        QueryProtocol::Prepared,
    ] {
        let mut c = config(&url, "tpcb-select-only", 2, 1.0);
        c.protocol = protocol;
        let result = run(c);
        assert!(
            result.transactions > 50,
            "{protocol:?}: {}",
            result.transactions
        );
        assert_eq!(result.errors.total, 0, "{protocol:?}: {:?}", result.errors);
        assert_eq!(result.queries.read, result.transactions);
    }
}

#[cfg_attr(not(test_pg), ignore = "needs DBSCALE_TEST_PG_URL")]
#[test]
fn open_model_keeps_the_rate_and_reports_lag() {
    let url = prepared_database("open");
    let mut c = config(&url, "tpcb-select-only", 4, 3.0);
    c.rate_tps = Some(200.0);
    let result = run(c);
    // 600 expected; Poisson sd ~25, so 20% is far outside chance.
    assert!(
        (480..=720).contains(&result.transactions),
        "{}",
        result.transactions
    );
    let lag = result
        .schedule_lag_ms
        .expect("lag is reported in the open model");
    assert_eq!(lag.count, result.transactions);
    // The drain's transactions started (and had their lag taken) inside the window.
    assert!(result
        .intervals
        .iter()
        .all(|i| i.lag_ms.is_some() || i.transactions == 0 || i.drain));
}

#[cfg_attr(not(test_pg), ignore = "needs DBSCALE_TEST_PG_URL")]
#[test]
fn a_latency_limit_counts_late_transactions_and_skips_hopeless_arrivals() {
    let url = prepared_database("limit");
    // Closed model, a limit nothing meets: every transaction is over it, none is skipped.
    let mut c = config(&url, "tpcb-select-only", 1, 0.5);
    c.latency_limit_ms = Some(0.001);
    let result = run(c);
    assert!(result.transactions > 0);
    assert_eq!(result.over_latency_limit, result.transactions);
    assert_eq!(result.skipped, 0);

    // A rate far above what one client does: most arrivals are already late when due and are
    // skipped, and the log has a line for each transaction, skipped or not.
    let dir = std::env::temp_dir().join(format!("dbscale-it-log-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("log").display().to_string();
    let mut c = config(&url, "tpcb-select-only", 1, 1.0);
    c.threads = Some(1);
    c.rate_tps = Some(1_000_000.0);
    c.latency_limit_ms = Some(5.0);
    c.transaction_log = Some(TransactionLogConfig {
        path: path.clone(),
        sampling_rate: 1.0,
    });
    let result = run(c);
    assert!(result.skipped > result.transactions, "{result:?}");
    assert!(result.transactions > 0);
    let log = result.transaction_log.expect("a log summary");
    assert_eq!(log.error, None);
    assert_eq!(log.files, 1);
    let text = std::fs::read_to_string(&path).unwrap();
    let skipped = text
        .lines()
        .filter(|l| l.split(' ').nth(2) == Some("skipped"))
        .count();
    let done = text
        .lines()
        .filter(|l| {
            l.split(' ')
                .nth(2)
                .is_some_and(|t| t.parse::<u64>().is_ok())
        })
        .count();
    // Lines of the ramp-free window and the drain: at least what the result counted.
    assert!(
        skipped as u64 >= result.skipped,
        "{skipped} vs {}",
        result.skipped
    );
    assert!(
        done as u64 >= result.transactions,
        "{done} vs {}",
        result.transactions
    );
    assert_eq!(log.lines, text.lines().count() as u64);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[cfg_attr(not(test_pg), ignore = "needs DBSCALE_TEST_PG_URL")]
#[test]
fn per_transaction_connections_are_timed_separately() {
    let url = prepared_database("per_txn");
    let mut c = config(&url, "tpcb-select-only", 2, 1.0);
    c.connect = ConnectMode::PerTransaction;
    let result = run(c);
    assert!(result.transactions > 10);
    let connect = result.connect_ms.unwrap();
    assert_eq!(connect.count, result.transactions + result.failed);
    // The transaction latency includes its connection, as pgbench -C counts it.
    assert!(result.latency_ms.unwrap().mean >= connect.mean);
}

#[cfg_attr(not(test_pg), ignore = "needs DBSCALE_TEST_PG_URL")]
#[test]
fn serialization_failures_are_retried_and_counted() {
    let url = prepared_database("retry");
    let serializable = format!(
        "{url}{}options=-c%20default_transaction_isolation%3Dserializable",
        if url.contains('?') { "&" } else { "?" }
    );
    let mut c = config(&serializable, "tpcb", 8, 2.0);
    c.max_tries = 1;
    let once = run(c.clone());
    assert!(
        once.errors
            .by_class
            .get("serialization")
            .copied()
            .unwrap_or(0)
            > 0,
        "{:?}",
        once.errors
    );
    assert!(once.failed > 0 && once.retried == 0);
    assert_eq!(once.verdict.status, "errors");
    c.max_tries = 100;
    let retried = run(c);
    assert!(
        retried.retried > 0 && retried.retries >= retried.retried,
        "{retried:?}"
    );
    assert!(
        retried.failed < once.failed,
        "{} vs {}",
        retried.failed,
        once.failed
    );
}

#[cfg_attr(not(test_pg), ignore = "needs DBSCALE_TEST_PG_URL")]
#[test]
fn missing_tables_are_reported_before_the_run() {
    let base = require(PG_URL);
    let url = fresh_database(&base, "empty");
    match engine::start(config(&url, "tpcb", 1, 1.0)) {
        Err(Error::NotPrepared(message)) => assert!(message.contains("missing"), "{message}"),
        other => panic!("expected NotPrepared, got {:?}", other.err()),
    }
}

#[cfg_attr(not(test_pg), ignore = "needs DBSCALE_TEST_PG_URL")]
#[test]
fn cancel_stops_early_and_keeps_what_was_measured() {
    let url = prepared_database("cancel");
    let mut running = engine::start(config(&url, "tpcb-select-only", 2, 30.0)).unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    running.cancel();
    assert!(
        running.wait(Duration::from_secs(5)),
        "cancel must end the run promptly"
    );
    let result = running.result().unwrap();
    assert!(result.cancelled);
    assert!(result.duration_s < 5.0, "{}", result.duration_s);
    assert!(result.transactions > 0);
    assert!(result.verdict.message.contains("cancelled"));
    assert!(!result.intervals.is_empty());
}

#[cfg_attr(not(test_pg), ignore = "needs DBSCALE_TEST_PG_URL")]
#[test]
fn clients_reconnect_after_losing_their_connection() {
    let url = prepared_database("reconnect");
    let mut running = engine::start(config(&url, "tpcb-select-only", 2, 3.0)).unwrap();
    std::thread::sleep(Duration::from_millis(1200));
    let endpoint = Endpoint::parse(&url, None).unwrap();
    let killed = engine::block_on(async {
        let mut conn = endpoint.connect(QueryProtocol::Simple).await.unwrap();
        let rows = conn
            .query(
                "select count(pg_terminate_backend(pid)) from pg_stat_activity \
                 where datname = current_database() and pid <> pg_backend_pid()",
            )
            .await
            .unwrap();
        conn.close().await;
        rows[0][0].clone().unwrap()
    })
    .unwrap();
    assert_eq!(killed, "2", "both clients' backends were terminated");
    let result = running.result().unwrap();
    assert!(
        result
            .errors
            .by_class
            .get("connection_lost")
            .copied()
            .unwrap_or(0)
            >= 2,
        "{:?}",
        result.errors
    );
    // Two initial connections plus at least one reconnect each.
    assert!(
        result.connect_ms.unwrap().count >= 4,
        "{:?}",
        result.connect_ms
    );
    let last = result.intervals.iter().rfind(|i| !i.drain).unwrap();
    assert!(
        last.transactions > 0,
        "clients went on after reconnecting: {last:?}"
    );
    assert_eq!(result.verdict.status, "errors");
}

#[cfg_attr(not(test_pg), ignore = "needs DBSCALE_TEST_PG_URL")]
#[test]
fn gated_shares_start_together_and_merge_exactly() {
    use dbscale_core::config::WorkerShare;

    let url = prepared_database("shares");
    let whole = RunConfig {
        statement_timing: true,
        ..config(&url, "tpcb", 4, 1.0)
    };
    let runs: Vec<_> = (0..2u32)
        .map(|i| {
            let share = RunConfig {
                clients: 2,
                threads: Some(1),
                seed: Some(7 + u64::from(i)),
                share: Some(WorkerShare {
                    first_client: 2 * i,
                    total_clients: 4,
                }),
                ..whole.clone()
            };
            engine::start(share).unwrap()
        })
        .collect();
    while !runs.iter().all(|r| r.is_ready()) {
        std::thread::sleep(Duration::from_millis(5));
    }
    for run in &runs {
        run.go(Duration::from_millis(50));
    }
    let parts: Vec<_> = runs.into_iter().map(|mut r| r.result().unwrap()).collect();
    assert!(parts
        .iter()
        .all(|p| p.detail.is_some() && p.transactions > 0));
    let merged = engine::merge_workers(&whole, &parts).unwrap();
    let sum: u64 = parts.iter().map(|p| p.transactions).sum();
    assert_eq!(merged.transactions, sum);
    assert_eq!((merged.clients, merged.threads), (4, 2));
    assert_eq!(merged.latency_ms.as_ref().unwrap().count, sum);
    let by_interval: u64 = merged.intervals.iter().map(|i| i.transactions).sum();
    assert_eq!(by_interval, sum, "every transaction in one merged interval");
    assert!(merged.intervals.iter().all(|i| i.detail.is_none()));
    let mut union = LatencyHistogram::new();
    for part in &parts {
        union.merge(&LatencyHistogram::from_base64(&part.histogram).unwrap());
    }
    assert_eq!(
        merged.histogram,
        union.to_base64(),
        "the merge is the union"
    );
    assert_eq!(merged.verdict.status, "ok");
    // Each statement as the clients timed it: the workers' counts add, their histograms unite.
    let update = |r: &dbscale_core::stats::RunResult| {
        r.statements
            .iter()
            .find(|s| s.name == "update_accounts")
            .cloned()
            .expect("update_accounts timed")
    };
    let merged_update = update(&merged);
    let counted: u64 = parts.iter().map(|p| update(p).figures.count).sum();
    assert_eq!(merged_update.figures.count, counted);
    assert!(merged_update.figures.count >= merged.transactions);
    let mut statement_union = LatencyHistogram::new();
    for part in &parts {
        statement_union
            .merge(&LatencyHistogram::from_base64(&update(part).figures.histogram).unwrap());
    }
    assert_eq!(merged_update.figures.histogram, statement_union.to_base64());
    assert!(merged_update.sql.starts_with("UPDATE pgbench_accounts"));
}

#[cfg_attr(not(test_pg), ignore = "needs DBSCALE_TEST_PG_URL")]
#[test]
fn transactions_per_client_end_the_run_when_every_client_is_done() {
    let url = prepared_database("counted");
    let counted = RunConfig {
        transactions: Some(40),
        ..config(&url, "tpcb-select-only", 3, 60.0)
    };
    let started = std::time::Instant::now();
    let result = run(counted);
    assert_eq!(result.transactions + result.failed, 120);
    // Measured from the start to the last transaction's end, not the 60 s limit.
    assert!(result.duration_s < 30.0, "{}", result.duration_s);
    assert!(started.elapsed().as_secs_f64() < 30.0);
}

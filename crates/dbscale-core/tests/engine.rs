//! The engine end to end against a real PostgreSQL (DBSCALE_TEST_PG_URL): load TPC-B, run it
//! under each load model, connection mode and protocol, provoke and count errors, cancel.

use std::collections::BTreeMap;
use std::time::Duration;

use dbscale_core::config::{RunConfig, TargetConfig, WorkloadConfig};
use dbscale_core::driver::{ConnectMode, Endpoint, QueryProtocol};
use dbscale_core::engine;
use dbscale_core::stats::LatencyHistogram;
use dbscale_core::Error;

/// The test server's URL, or None (test skipped) unless servers are required.
fn server_url() -> Option<String> {
    match std::env::var("DBSCALE_TEST_PG_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ if std::env::var("DBSCALE_REQUIRE_SERVERS").as_deref() == Ok("1") => {
            panic!("DBSCALE_TEST_PG_URL is not set but DBSCALE_REQUIRE_SERVERS=1")
        }
        _ => {
            eprintln!("skipped: DBSCALE_TEST_PG_URL is not set");
            None
        }
    }
}

/// A fresh database for one test, so tests can run in parallel.
fn fresh_database(base: &str, name: &str) -> String {
    let db = format!("dbscale_engine_{name}");
    let endpoint = Endpoint::parse(base, None).unwrap();
    engine::block_on(async {
        let mut conn = endpoint.connect(QueryProtocol::Simple).await.unwrap();
        conn.batch(&format!("drop database if exists {db} with (force)"))
            .await
            .unwrap();
        conn.batch(&format!("create database {db}")).await.unwrap();
        conn.close().await;
    })
    .unwrap();
    let (head, tail) = base.rsplit_once('/').unwrap();
    let query = tail
        .split_once('?')
        .map(|(_, q)| format!("?{q}"))
        .unwrap_or_default();
    format!("{head}/{db}{query}")
}

fn config(url: &str, workload: &str, clients: u32, duration_s: f64) -> RunConfig {
    RunConfig {
        target: TargetConfig {
            url: url.to_string(),
            tls: None,
        },
        workload: WorkloadConfig {
            name: workload.into(),
            params: BTreeMap::new(),
        },
        protocol: QueryProtocol::Prepared,
        connect: ConnectMode::Persistent,
        clients,
        threads: Some(2.min(clients)),
        duration_s,
        rate_tps: None,
        max_tries: 1,
        seed: Some(42),
        interval_s: 1.0,
    }
}

fn prepared_database(name: &str) -> Option<String> {
    let url = fresh_database(&server_url()?, name);
    let summary = engine::prepare(&config(&url, "tpcb", 1, 1.0)).unwrap();
    assert_eq!(summary.rows, 1 + 10 + 100_000);
    Some(url)
}

fn run(config: RunConfig) -> dbscale_core::stats::RunResult {
    let mut running = engine::start(config).unwrap();
    running.result().unwrap()
}

#[test]
fn closed_model_tpcb_counts_every_statement_and_interval() {
    let Some(url) = prepared_database("closed") else {
        return;
    };
    let result = run(config(&url, "tpcb", 4, 2.0));
    assert!(result.transactions > 100, "{}", result.transactions);
    assert_eq!(result.errors.total, 0, "{:?}", result.errors);
    assert_eq!(result.verdict.status, "ok");
    assert_eq!(result.workload_params["scale"], 1);
    // BEGIN, 3 updates, select, insert, END.
    assert_eq!(result.queries.total, 7 * result.transactions);
    assert_eq!(result.queries.read, result.transactions);
    assert_eq!(result.intervals.len(), 2);
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

#[test]
fn every_protocol_runs_select_only() {
    let Some(url) = prepared_database("protocols") else {
        return;
    };
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

#[test]
fn open_model_keeps_the_rate_and_reports_lag() {
    let Some(url) = prepared_database("open") else {
        return;
    };
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
    assert!(result
        .intervals
        .iter()
        .all(|i| i.lag_ms.is_some() || i.transactions == 0));
}

#[test]
fn per_transaction_connections_are_timed_separately() {
    let Some(url) = prepared_database("per_txn") else {
        return;
    };
    let mut c = config(&url, "tpcb-select-only", 2, 1.0);
    c.connect = ConnectMode::PerTransaction;
    let result = run(c);
    assert!(result.transactions > 10);
    let connect = result.connect_ms.unwrap();
    assert_eq!(connect.count, result.transactions + result.failed);
    // The transaction latency includes its connection, as pgbench -C counts it.
    assert!(result.latency_ms.unwrap().mean >= connect.mean);
}

#[test]
fn serialization_failures_are_retried_and_counted() {
    let Some(url) = prepared_database("retry") else {
        return;
    };
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

#[test]
fn missing_tables_are_reported_before_the_run() {
    let Some(base) = server_url() else { return };
    let url = fresh_database(&base, "empty");
    match engine::start(config(&url, "tpcb", 1, 1.0)) {
        Err(Error::NotPrepared(message)) => assert!(message.contains("missing"), "{message}"),
        other => panic!("expected NotPrepared, got {:?}", other.err()),
    }
}

#[test]
fn cancel_stops_early_and_keeps_what_was_measured() {
    let Some(url) = prepared_database("cancel") else {
        return;
    };
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

#[test]
fn clients_reconnect_after_losing_their_connection() {
    let Some(url) = prepared_database("reconnect") else {
        return;
    };
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
    let last = result.intervals.last().unwrap();
    assert!(
        last.transactions > 0,
        "clients went on after reconnecting: {last:?}"
    );
    assert_eq!(result.verdict.status, "errors");
}

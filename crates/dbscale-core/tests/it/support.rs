//! What the integration tests share: where the test servers are, fresh databases, run configs.
//!
//! The build script (`build.rs`) sets `cfg(test_pg)` when `DBSCALE_TEST_PG_URL` is set and
//! `cfg(test_mysql)` when `DBSCALE_TEST_MYSQL_URL` is, and both when `DBSCALE_REQUIRE_SERVERS=1`;
//! each test is `#[cfg_attr(not(test_pg), ignore = ...)]` or the like. A configured server's other
//! variables (socket, CA, SCRAM and password users) come with it from the same script, so a
//! missing one fails the test that needs it.

use std::collections::BTreeMap;

use dbscale_core::config::{RunConfig, TargetConfig, WorkloadConfig};
use dbscale_core::driver::{ConnectMode, Dialect, Endpoint, QueryProtocol};
use dbscale_core::engine;
use dbscale_core::stats::RunResult;

pub const PG_URL: &str = "DBSCALE_TEST_PG_URL";
pub const MYSQL_URL: &str = "DBSCALE_TEST_MYSQL_URL";

/// A test server's variable; a test that runs without it fails, naming it.
pub fn require(name: &str) -> String {
    match std::env::var(name) {
        Ok(value) if !value.is_empty() => value,
        _ => panic!("{name} is not set: start the test servers (`make servers-start`) and source .cache/test-servers.env"),
    }
}

/// `url` with one more query parameter (later parameters override earlier ones).
pub fn with_param(url: &str, key: &str, value: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}{key}={value}")
}

/// The server of `base` with database `db` created afresh, as a URL, so tests run in parallel.
pub fn fresh_database(base: &str, db: &str) -> String {
    let endpoint = Endpoint::parse(base, None).unwrap();
    let drop = match endpoint.dialect() {
        Dialect::Mysql => format!("DROP DATABASE IF EXISTS {db}"),
        Dialect::Postgres => format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"),
    };
    engine::block_on(async {
        let mut conn = endpoint.connect(QueryProtocol::Simple).await.unwrap();
        conn.batch(&drop).await.unwrap();
        conn.batch(&format!("CREATE DATABASE {db}")).await.unwrap();
        conn.close().await;
    })
    .unwrap();
    let mut url = url::Url::parse(base).unwrap();
    url.set_path(&format!("/{db}"));
    url.to_string()
}

/// A short closed-model run of `workload` on `url`: 2 clients on 2 threads for 1 s, prepared
/// statements, a fixed seed; tests change what they exercise.
pub fn run_config(url: &str, workload: &str) -> RunConfig {
    RunConfig {
        target: TargetConfig {
            url: url.to_string(),
            more_urls: Vec::new(),
            routing: None,
            tls: None,
        },
        workload: WorkloadConfig {
            name: workload.into(),
            params: BTreeMap::new(),
            ..Default::default()
        },
        protocol: QueryProtocol::Prepared,
        connect: ConnectMode::Persistent,
        clients: 2,
        threads: Some(2),
        duration_s: 1.0,
        ramp_s: 0.0,
        transactions: None,
        rate_tps: None,
        max_tries: 1,
        seed: Some(42),
        interval_s: 1.0,
        latency_limit_ms: None,
        interval_histograms: false,
        wait_for_go: false,
        statement_timing: false,
        transaction_timeout_s: None,
        track_availability: false,
        transaction_log: None,
        share: None,
        load_part: None,
    }
}

/// Runs `config` to its end.
pub fn run(config: RunConfig) -> RunResult {
    engine::start(config).unwrap().result().unwrap()
}

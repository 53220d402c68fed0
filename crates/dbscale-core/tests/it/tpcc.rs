//! TPC-C end to end on both test servers: the load's cardinalities and every consistency
//! condition after it, nowait and wait runs with the conditions still holding after them, the
//! deck's mix and the rollback share, terminals sharing fewer connections, a target with two
//! hosts, and on PostgreSQL a SERIALIZABLE run whose failures are retried.

use crate::support::*;

use dbscale_core::config::RunConfig;
use dbscale_core::engine;
use dbscale_core::stats::RunResult;
use dbscale_core::Error;

fn config(url: &str, clients: u32, params: &[(&str, serde_json::Value)]) -> RunConfig {
    let mut config = run_config(url, "tpcc");
    config.clients = clients;
    config.duration_s = 3.0;
    config.seed = None;
    config.workload.params = params
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    config
}

/// Every condition holds (3.3.2.11 may be skipped once deliveries ran).
fn assert_consistent(url: &str, when: &str) {
    let report = engine::check(&config(url, 1, &[])).unwrap();
    let failed: Vec<_> = report
        .conditions
        .iter()
        .filter(|c| c.status == "fail")
        .map(|c| format!("{} {:?}", c.id, c.examples))
        .collect();
    assert!(report.ok && failed.is_empty(), "{when}: {failed:?}");
    assert_eq!(report.conditions.len(), 13);
}

fn types(result: &RunResult) -> Vec<u64> {
    [
        "new_order",
        "payment",
        "order_status",
        "delivery",
        "stock_level",
    ]
    .iter()
    .map(|t| result.transaction_types[*t].transactions)
    .collect()
}

#[cfg_attr(not(all(test_pg, test_mysql)), ignore = "needs both test servers")]
#[test]
fn load_check_and_run_in_both_modes() {
    for name in [PG_URL, MYSQL_URL] {
        let url = fresh_database(&require(name), "dbscale_tpcc_modes");
        let summary = engine::prepare(&config(&url, 1, &[("warehouses", 2.into())])).unwrap();
        let method = if name == PG_URL {
            "(COPY)"
        } else {
            "(LOAD DATA LOCAL)"
        };
        assert!(
            summary.steps.iter().any(|s| s.name.ends_with(method)),
            "{:?}",
            summary.steps
        );
        // 2 x (1 + 10 + 30,000 x 2 + 30,000 + 9,000 + 100,000) + 100,000 items + ~600,000 lines.
        assert!(
            (1_050_000..1_150_000).contains(&summary.rows),
            "{}",
            summary.rows
        );
        let report = engine::check(&config(&url, 1, &[("warehouses", 2.into())])).unwrap();
        assert!(
            report.conditions.iter().all(|c| c.status == "pass"),
            "after load every condition, 3.3.2.11 included, holds: {:?}",
            report.conditions
        );
        let wrong = engine::check(&config(&url, 1, &[("warehouses", 3.into())])).unwrap();
        assert!(!wrong.ok && wrong.conditions[0].status == "fail");

        // Nowait: 4 terminals over 2 warehouses.
        let nowait = engine::start(config(&url, 4, &[("wait", false.into())]))
            .unwrap()
            .result()
            .unwrap();
        assert_eq!(nowait.failed, 0, "{:?}", nowait.errors);
        let counts = types(&nowait);
        let total: u64 = counts.iter().sum();
        // Enough for the shares below (their tolerance widens as the count falls); a debug
        // build on a busy 2-core machine has done 487 in the 3 s.
        assert!(total > 200, "{counts:?}");
        // Each client deals whole passes of a 100-card deck: shares within a pass per client.
        for (count, weight) in counts.iter().zip([45.0, 43.0, 4.0, 4.0, 4.0]) {
            let share = 100.0 * *count as f64 / total as f64;
            assert!(
                (share - weight).abs() < 400.0 / total as f64 + 1.0,
                "{counts:?}"
            );
        }
        let tpcc = nowait.tpcc.as_ref().unwrap();
        assert_eq!(
            (tpcc.warehouses, tpcc.active_warehouses, tpcc.wait),
            (2, 2, false)
        );
        assert_eq!(tpcc.c_last_source, "load");
        assert!((tpcc.tpmc - 60.0 * counts[0] as f64 / nowait.duration_s).abs() < 1e-6);
        // 1% of New-Orders roll back (2.4.1.4): the count within 4 sigma of a Poisson mean of
        // 1% (a few hundred orders in 3 s may well hold none), plus 2 for small counts.
        let expected = counts[0] as f64 / 100.0;
        let rolled_back = tpcc.rolled_back_new_orders as f64;
        assert!(
            (rolled_back - expected).abs() <= 4.0 * expected.sqrt() + 2.0,
            "{rolled_back} of {} New-Orders rolled back",
            counts[0]
        );
        let lines = tpcc
            .audits
            .iter()
            .find(|a| a.name == "order_lines_per_order")
            .unwrap();
        assert!((9.0..11.0).contains(&lines.value.unwrap()), "{lines:?}");
        assert_consistent(&url, "after the nowait run");

        // Wait mode: 10 terminals per warehouse, keying times of 2-18 s before anything runs.
        let refused = engine::start(config(&url, 4, &[("active_warehouses", 1.into())]));
        assert!(matches!(refused, Err(Error::Config(m)) if m.contains("--clients 10")));
        let wait = engine::start(config(&url, 10, &[("active_warehouses", 1.into())]))
            .unwrap()
            .result()
            .unwrap();
        // Within 3 s only the types keyed for 2 s can start, each terminal's first at most.
        let counts = types(&wait);
        assert!(
            counts[0] == 0 && counts[1] == 0 && wait.transactions <= 10,
            "{counts:?}"
        );
        assert!(wait.tpcc.as_ref().unwrap().wait);
        assert_consistent(&url, "after the wait run");
    }
}

#[cfg_attr(not(all(test_pg, test_mysql)), ignore = "needs both test servers")]
#[test]
fn insert_loads_hold_every_condition() {
    for name in [PG_URL, MYSQL_URL] {
        let url = fresh_database(&require(name), "dbscale_tpcc_insert");
        let params = [("warehouses", 1.into()), ("load_method", "insert".into())];
        let summary = engine::prepare(&config(&url, 1, &params)).unwrap();
        assert!(
            summary
                .steps
                .iter()
                .any(|s| s.name.ends_with("(prepared INSERT)")),
            "{:?}",
            summary.steps
        );
        let report = engine::check(&config(&url, 1, &params)).unwrap();
        assert!(
            report.conditions.iter().all(|c| c.status == "pass"),
            "{name}: {:?}",
            report.conditions
        );
    }
}

#[cfg_attr(not(all(test_pg, test_mysql)), ignore = "needs both test servers")]
#[test]
fn terminals_share_connections_over_two_hosts() {
    for name in [PG_URL, MYSQL_URL] {
        let url = fresh_database(&require(name), "dbscale_tpcc_hosts");
        engine::prepare(&config(&url, 1, &[("warehouses", 1.into())])).unwrap();
        let mut two_hosts = config(
            &url,
            6,
            &[("wait", false.into()), ("connections", 2.into())],
        );
        // The same server by another spelling stands in for a second node; spread round-robin
        // (a PostgreSQL cluster's own default would send every terminal to its primary).
        two_hosts.target.more_urls = vec![url.replace("127.0.0.1", "localhost")];
        two_hosts.target.routing = Some(dbscale_core::config::Routing::RoundRobin);
        two_hosts.ramp_s = 1.0;
        let result = engine::start(two_hosts).unwrap().result().unwrap();
        assert_eq!(result.failed, 0, "{:?}", result.errors);
        assert_eq!(result.connections, Some(2));
        let per_host: Vec<u64> = result
            .connections_by_host
            .iter()
            .map(|h| h.connections)
            .collect();
        assert_eq!(per_host, [1, 1], "{:?}", result.connections_by_host);
        assert!(result.ramp_transactions > 0 && result.transactions > 100);
        assert!(
            (result.duration_s - 3.0).abs() < 0.5,
            "the ramp is not measured"
        );
        assert_consistent(&url, "after shared connections");
    }
}

#[cfg_attr(not(test_pg), ignore = "needs DBSCALE_TEST_PG_URL")]
#[test]
fn serializable_failures_are_retried() {
    let url = fresh_database(&require(PG_URL), "dbscale_tpcc_serial");
    engine::prepare(&config(&url, 1, &[("warehouses", 1.into())])).unwrap();
    let serializable = with_param(
        &url,
        "options",
        "-c%20default_transaction_isolation%3Dserializable",
    );
    let result = engine::start(config(&serializable, 6, &[("wait", false.into())]))
        .unwrap()
        .result()
        .unwrap();
    let serialization = result
        .errors
        .by_class
        .get("serialization")
        .copied()
        .unwrap_or(0);
    assert!(
        serialization > 0 && result.retried > 0,
        "{:?}",
        result.errors
    );
    // Retried until they commit; only a retry the deadline cut short counts as failed.
    assert!(result.failed <= 6, "{:?}", result.errors);
    assert!(
        result
            .errors
            .by_class
            .keys()
            .all(|k| k == "serialization" || k == "deadlock"),
        "{:?}",
        result.errors
    );
    assert_consistent(&url, "after the serializable run");
}

#[cfg_attr(not(test_pg), ignore = "needs DBSCALE_TEST_PG_URL")]
#[test]
fn missing_tables_and_other_workloads_are_refused() {
    let url = fresh_database(&require(PG_URL), "dbscale_tpcc_empty");
    assert!(matches!(
        engine::start(config(&url, 1, &[])),
        Err(Error::NotPrepared(_))
    ));
    assert!(matches!(
        engine::check(&config(&url, 1, &[])),
        Err(Error::NotPrepared(_))
    ));
    let mut tpcb = config(&url, 1, &[]);
    tpcb.workload.name = "tpcb".into();
    assert!(
        matches!(engine::check(&tpcb), Err(Error::Config(m)) if m.contains("no consistency checks"))
    );
}

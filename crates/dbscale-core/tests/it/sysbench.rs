//! The sysbench OLTP workloads end to end on real servers: prepare, every test under both
//! protocols, deadlocks retried and counted, TLS and Unix sockets on MariaDB, cleanup.
//! Environment: `DBSCALE_TEST_MYSQL_URL` (TCP), `DBSCALE_TEST_MYSQL_SOCKET` (its Unix socket,
//! reached as root by unix_socket authentication), `DBSCALE_TEST_PG_URL`.

use crate::support::*;

use std::collections::BTreeMap;

use dbscale_core::config::RunConfig;
use dbscale_core::driver::{ConnectMode, Dialect, Endpoint, QueryProtocol, TlsMode};
use dbscale_core::engine;
use dbscale_core::Error;

/// Both servers' URLs, each pointed at a fresh database for this test.
fn servers(test: &str) -> Vec<String> {
    [MYSQL_URL, PG_URL]
        .into_iter()
        .map(|name| fresh_database(&require(name), &format!("dbscale_sb_{test}")))
        .collect()
}

fn config(url: &str, workload: &str, params: &[(&str, serde_json::Value)]) -> RunConfig {
    let mut config = run_config(url, workload);
    config.workload.params = params
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect::<BTreeMap<_, _>>();
    config
}

const SMALL: [(&str, i64); 2] = [("tables", 2), ("table_size", 1000)];

fn small() -> Vec<(&'static str, serde_json::Value)> {
    SMALL.iter().map(|(k, v)| (*k, (*v).into())).collect()
}

/// (workload, statements per event, reads per event or None where they depend on the data).
const EVENTS: [(&str, u64, Option<u64>); 10] = [
    ("sysbench:oltp_read_only", 16, Some(14)),
    ("sysbench:oltp_read_write", 20, Some(14)),
    ("sysbench:oltp_write_only", 6, Some(0)),
    ("sysbench:oltp_point_select", 1, Some(1)),
    ("sysbench:oltp_insert", 1, Some(0)),
    ("sysbench:oltp_delete", 1, Some(0)),
    ("sysbench:oltp_update_index", 1, Some(0)),
    ("sysbench:oltp_update_non_index", 1, Some(0)),
    ("sysbench:select_random_points", 1, Some(1)),
    ("sysbench:select_random_ranges", 1, Some(1)),
];

#[cfg_attr(not(all(test_pg, test_mysql)), ignore = "needs both test servers")]
#[test]
fn every_workload_runs_on_both_protocols() {
    for url in servers("all") {
        let multi = config(&url, "sysbench:oltp_read_write", &small());
        let summary = engine::prepare(&multi).unwrap();
        assert_eq!(summary.rows, 2000, "{url}");
        let single = {
            let mut params = small();
            params[0].1 = 1.into();
            params
        };
        for (name, per_event, reads) in EVENTS {
            let params = if name.contains("select_random") {
                &single
            } else {
                &small()
            };
            for protocol in [QueryProtocol::Simple, QueryProtocol::Prepared] {
                let mut c = config(&url, name, params);
                c.protocol = protocol;
                let r = run(c);
                let what = format!(
                    "{name} {protocol:?} on {url}: {:?} {:?}",
                    r.verdict, r.errors
                );
                assert!(r.transactions > 10, "{what}");
                // Ignored errors restart the event; only one that ends after the deadline (e.g. a
                // PostgreSQL deadlock found after deadlock_timeout) is left as a failure.
                assert!(r.failed <= 2, "{what}");
                assert_eq!(r.queries.total, per_event * r.transactions, "{what}");
                if let Some(reads) = reads {
                    assert_eq!(r.queries.read, reads * r.transactions, "{what}");
                }
                assert_eq!(r.transaction_types.len(), 1);
            }
        }
        // Deletes leave rows missing; the inserts added some; reload for a clean end.
        engine::cleanup(&multi).unwrap();
    }
}

#[cfg_attr(not(all(test_pg, test_mysql)), ignore = "needs both test servers")]
#[test]
fn read_write_counts_its_writes() {
    for url in servers("counts") {
        let c = config(&url, "oltp_read_write", &small());
        engine::prepare(&c).unwrap();
        let mut one = c.clone();
        one.clients = 1;
        one.threads = Some(1);
        let r = run(one);
        // One client alone: every UPDATE, DELETE and INSERT changes exactly one row.
        assert_eq!(r.queries.write, 4 * r.transactions, "{url}");
        assert_eq!(r.queries.other, 2 * r.transactions, "{url}");
        assert_eq!(r.workload_params["rand_type"], "special");
    }
}

#[cfg_attr(not(all(test_pg, test_mysql)), ignore = "needs both test servers")]
#[test]
fn deadlocks_are_retried_and_counted() {
    for url in servers("deadlock") {
        let url = if url.starts_with("postgres") {
            // Detect deadlocks in 10 ms instead of a second.
            let sep = if url.contains('?') { '&' } else { '?' };
            format!("{url}{sep}options=-c%20deadlock_timeout%3D10ms")
        } else {
            url
        };
        let params: Vec<(&str, serde_json::Value)> = vec![
            ("tables", 1.into()),
            ("table_size", 10.into()),
            ("rand_type", "uniform".into()),
            ("index_updates", 10.into()),
            ("non_index_updates", 0.into()),
            ("delete_inserts", 0.into()),
        ];
        let mut c = config(&url, "sysbench:oltp_write_only", &params);
        engine::prepare(&c).unwrap();
        c.clients = 8;
        c.duration_s = 2.0;
        let r = run(c);
        let deadlocks = r.errors.by_class.get("deadlock").copied().unwrap_or(0);
        eprintln!(
            "{url}: {} transactions, errors {:?}, retried {}, failed {}",
            r.transactions, r.errors.by_class, r.retried, r.failed
        );
        assert!(deadlocks > 0, "{url}: {:?}", r.errors);
        assert!(
            r.retried > 0 && r.retries >= deadlocks.min(r.retries),
            "{url}: {r:?}"
        );
        // Restarted, like sysbench: only an error in the last moment can end as a failure.
        assert!(r.failed <= 8, "{url}: {} failed", r.failed);
        assert!(r.transactions > 0);
    }
}

#[cfg_attr(not(all(test_pg, test_mysql)), ignore = "needs both test servers")]
#[test]
fn prepare_check_and_cleanup() {
    for url in servers("lifecycle") {
        let c = config(&url, "sysbench:oltp_point_select", &small());
        let missing = engine::start(c.clone()).err().expect("no tables yet");
        assert!(matches!(missing, Error::NotPrepared(_)), "{missing}");
        let summary = engine::prepare(&c).unwrap();
        assert_eq!(summary.rows, 2000);
        assert!(summary
            .steps
            .iter()
            .any(|s| s.name.starts_with("create index")));
        let endpoint = Endpoint::parse(&url, None).unwrap();
        let (rows, ids, indexes) = engine::block_on(async {
            let mut conn = endpoint.connect(QueryProtocol::Simple).await.unwrap();
            let rows = conn
                .query("SELECT count(*), min(id), max(id), min(length(c)), min(length(pad)) FROM sbtest2")
                .await
                .unwrap();
            let ids = conn.query("SELECT k FROM sbtest1 WHERE k < 1 OR k > 1000").await.unwrap();
            let index_sql = match endpoint.dialect() {
                Dialect::Mysql => "SELECT count(*) FROM information_schema.statistics WHERE table_schema = DATABASE() AND index_name = 'k_2'",
                Dialect::Postgres => "SELECT count(*) FROM pg_indexes WHERE indexname = 'k_2'",
            };
            let indexes = conn.query(index_sql).await.unwrap();
            // The primary key is there, and new rows get ids after the loaded ones.
            let key_sql = match endpoint.dialect() {
                Dialect::Mysql => "SELECT AUTO_INCREMENT, (SELECT count(*) FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = 'sbtest2' AND index_name = 'PRIMARY') FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'sbtest2'",
                Dialect::Postgres => "SELECT nextval(pg_get_serial_sequence('sbtest2', 'id')), (SELECT count(*) FROM pg_indexes WHERE indexname = 'sbtest2_pkey')",
            };
            let key = conn.query(key_sql).await.unwrap();
            // The values arrive as sysbench writes them: digit groups joined by dashes.
            let values = conn.query("SELECT c, pad FROM sbtest2 WHERE id = 500").await.unwrap();
            for (value, groups) in values[0].iter().zip([10, 5]) {
                let value = value.as_deref().unwrap().trim_end();
                let parts: Vec<&str> = value.split('-').collect();
                assert_eq!(parts.len(), groups, "{url}: {value}");
                assert!(parts.iter().all(|p| p.len() == 11 && p.bytes().all(|b| b.is_ascii_digit())), "{url}: {value}");
            }
            assert_eq!(key[0][0].as_deref(), Some("1001"), "{url}: next id");
            assert_eq!(key[0][1].as_deref(), Some("1"), "{url}: primary key");
            conn.close().await;
            (rows, ids, indexes)
        })
        .unwrap();
        let text: Vec<&str> = rows[0].iter().map(|v| v.as_deref().unwrap()).collect();
        assert_eq!(text, ["1000", "1", "1000", "119", "59"], "{url}");
        assert!(ids.is_empty(), "k stays within 1..table_size");
        assert_eq!(indexes[0][0].as_deref(), Some("1"));
        engine::cleanup(&c).unwrap();
        let gone = engine::start(c).err().expect("tables dropped");
        assert!(matches!(gone, Error::NotPrepared(_)), "{gone}");
    }
}

#[cfg_attr(not(all(test_pg, test_mysql)), ignore = "needs both test servers")]
#[test]
fn mariadb_over_tls_and_unix_socket() {
    let url = require("DBSCALE_TEST_MYSQL_URL");
    let url = fresh_database(&url, "dbscale_sb_transport");
    let mut c = config(&url, "oltp_point_select", &small());
    engine::prepare(&c).unwrap();
    c.target.tls = Some(TlsMode::Require);
    let over_tls = run(c.clone());
    assert!(over_tls.tls && over_tls.transactions > 10, "{over_tls:?}");
    c.connect = ConnectMode::PerTransaction;
    let reconnecting = run(c.clone());
    assert!(reconnecting.tls && reconnecting.transactions > 10);
    let socket = require("DBSCALE_TEST_MYSQL_SOCKET");
    c.target.url = format!("mysql://root@localhost/dbscale_sb_transport?socket={socket}");
    c.target.tls = None;
    c.connect = ConnectMode::Persistent;
    let over_socket = run(c);
    assert!(
        !over_socket.tls && over_socket.transactions > 10,
        "{over_socket:?}"
    );
    assert!(over_socket.target.contains("socket="));
}

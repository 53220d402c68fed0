//! The PostgreSQL driver against a real server. Configured by environment:
//! `DBSCALE_TEST_PG_URL` (TCP, trust auth, TLS on), `DBSCALE_TEST_PG_SOCKET_DIR` (its Unix socket
//! directory), `DBSCALE_TEST_PG_CA` (the CA that signed its certificate for localhost and
//! 127.0.0.1), `DBSCALE_TEST_PG_SCRAM_URL` (a scram-sha-256 user with its password).

use crate::postgres_security::tls_url;
use crate::support::*;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::time::Duration;

use bytes::Bytes;
use dbscale_core::driver::postgres::{PgConfig, PgConnection};
use dbscale_core::driver::{
    ConnectFailure, DbError, ErrorClass, Param, QueryProtocol, Statement, TlsMode,
};

const PROTOCOLS: [QueryProtocol; 3] = [
    QueryProtocol::Simple,
    QueryProtocol::Extended,
    QueryProtocol::Prepared,
];

pub(crate) async fn connect(url: &str, protocol: QueryProtocol) -> Result<PgConnection, DbError> {
    PgConnection::connect(&PgConfig::parse(url, None).unwrap(), protocol).await
}

pub(crate) async fn scalar(conn: &mut PgConnection, sql: &str) -> Option<String> {
    conn.query(sql).await.unwrap().remove(0).remove(0)
}

pub(crate) fn connect_failure(result: Result<PgConnection, DbError>) -> (ConnectFailure, String) {
    let err = result.err().expect("connecting should fail");
    assert!(!err.message.contains('\n'), "one line: {}", err.message);
    (err.connect.expect("a connect failure"), err.message)
}

#[cfg_attr(not(test_pg), ignore = "needs DBSCALE_TEST_PG_URL")]
#[tokio::test]
async fn tcp_session_basics() {
    let url = require("DBSCALE_TEST_PG_URL");
    let mut conn = connect(&url, QueryProtocol::Simple).await.unwrap();
    assert!(conn
        .server_version()
        .starts_with(|c: char| c.is_ascii_digit()));
    assert!(conn.backend_pid() > 0);
    assert_eq!(scalar(&mut conn, "SELECT 1").await.as_deref(), Some("1"));
    let name = scalar(&mut conn, "SELECT current_setting('application_name')").await;
    assert_eq!(name.as_deref(), Some("dbscale"));
    let outcome = conn
        .batch("SELECT 1; SELECT 2 UNION ALL SELECT 3")
        .await
        .unwrap();
    assert_eq!(
        (outcome.rows_returned, outcome.returned_result_set),
        (3, true)
    );
    conn.close().await;
}

#[cfg_attr(not(test_pg), ignore = "needs DBSCALE_TEST_PG_URL")]
#[tokio::test]
async fn unix_socket_session() {
    let url = require("DBSCALE_TEST_PG_URL");
    let dir = require("DBSCALE_TEST_PG_SOCKET_DIR");
    let tcp = PgConfig::parse(&url, None).unwrap();
    let socket_url = format!(
        "host={dir} port={} user={} dbname={}",
        tcp.port(),
        tcp.user(),
        tcp.dbname()
    );
    let mut conn = connect(&socket_url, QueryProtocol::Prepared).await.unwrap();
    assert!(!conn.is_tls());
    let local = scalar(&mut conn, "SELECT inet_server_addr() IS NULL").await;
    assert_eq!(local.as_deref(), Some("t"));
    // TLS cannot be had over a socket: `require` is refused, `prefer` falls back to plain.
    let required = PgConfig::parse(&socket_url, Some(TlsMode::Require));
    let result = PgConnection::connect(&required.unwrap(), QueryProtocol::Simple).await;
    assert_eq!(connect_failure(result).0, ConnectFailure::Tls);
    let missing = format!("host={dir}/nowhere port={} user=x", tcp.port());
    assert_eq!(
        connect_failure(connect(&missing, QueryProtocol::Simple).await).0,
        ConnectFailure::Unreachable
    );
}

pub(crate) fn workload_statements() -> Vec<Statement> {
    vec![
        Statement::new(
            "echo",
            "SELECT $1::int + 1, $2::text, $3::text IS NULL, $4::float8 * 2",
        ),
        Statement::new("series", "SELECT g FROM generate_series(1, $1::int) g"),
        Statement::new(
            "insert",
            "INSERT INTO drv_t SELECT g, $1::text FROM generate_series(1, $2::int) g",
        ),
        Statement::new("update", "UPDATE drv_t SET v = $1 WHERE id <= $2"),
        Statement::new("delete", "DELETE FROM drv_t WHERE id > $1"),
    ]
}

#[cfg_attr(not(test_pg), ignore = "needs DBSCALE_TEST_PG_URL")]
#[tokio::test]
async fn three_protocols_with_parameters_and_counts() {
    let url = require("DBSCALE_TEST_PG_URL");
    for protocol in PROTOCOLS {
        let mut conn = connect(&url, protocol).await.unwrap();
        conn.batch("CREATE TEMP TABLE drv_t (id int PRIMARY KEY, v text)")
            .await
            .unwrap();
        conn.prepare(&workload_statements()).await.unwrap();
        let tricky = "it's a \\ 'quoted' text";
        let params = [
            Param::Int(41),
            Param::Text(tricky),
            Param::Null,
            Param::Float(-1.25),
        ];
        let rows = conn.fetch(0, &params).await.unwrap();
        let expected = ["42", tricky, "t", "-2.5"]
            .map(|s| Some(s.to_string()))
            .to_vec();
        assert_eq!(rows, vec![expected], "{protocol:?}");

        let five = conn.execute(1, &[Param::Int(5)]).await.unwrap();
        assert_eq!(
            (
                five.rows_returned,
                five.rows_affected,
                five.returned_result_set
            ),
            (5, 0, true)
        );
        let none = conn.execute(1, &[Param::Int(0)]).await.unwrap();
        assert_eq!(
            (none.rows_returned, none.returned_result_set),
            (0, true),
            "{protocol:?}"
        );

        let inserted = conn
            .execute(2, &[Param::Text("x"), Param::Int(3)])
            .await
            .unwrap();
        assert_eq!(
            (inserted.rows_affected, inserted.returned_result_set),
            (3, false)
        );
        let updated = conn
            .execute(3, &[Param::Text("y"), Param::Int(2)])
            .await
            .unwrap();
        assert_eq!((updated.rows_affected, updated.rows_returned), (2, 0));
        let deleted = conn.execute(4, &[Param::Int(1)]).await.unwrap();
        assert_eq!(deleted.rows_affected, 2);
        assert_eq!(
            scalar(&mut conn, "SELECT v FROM drv_t").await.as_deref(),
            Some("y")
        );
        conn.close().await;
    }
}

#[cfg_attr(not(test_pg), ignore = "needs DBSCALE_TEST_PG_URL")]
#[tokio::test]
async fn sql_error_keeps_the_connection_usable() {
    let url = require("DBSCALE_TEST_PG_URL");
    for protocol in PROTOCOLS {
        let mut conn = connect(&url, protocol).await.unwrap();
        conn.prepare(&[Statement::new("one", "SELECT $1::int")])
            .await
            .unwrap();
        let missing = [Statement::new("missing", "SELECT * FROM drv_no_such_table")];
        if protocol == QueryProtocol::Prepared {
            let err = conn.prepare(&missing).await.unwrap_err();
            assert_eq!(err.class, ErrorClass::Sql("42P01".into()));
            assert!(
                err.message.contains("cannot prepare missing"),
                "{}",
                err.message
            );
        } else {
            conn.prepare(&missing).await.unwrap();
            let err = conn.execute(0, &[]).await.unwrap_err();
            assert_eq!(err.class, ErrorClass::Sql("42P01".into()), "{protocol:?}");
            assert_eq!(err.code.as_deref(), Some("42P01"));
            assert!(err.to_string().contains("drv_no_such_table"), "{err}");
        }
        conn.reset().await.unwrap();
        conn.prepare(&[Statement::new("one", "SELECT $1::int")])
            .await
            .unwrap();
        let rows = conn.fetch(0, &[Param::Int(7)]).await.unwrap();
        assert_eq!(rows, vec![vec![Some("7".to_string())]]);
        let err = conn.execute(0, &[]).await.unwrap_err();
        assert!(
            matches!(err.class, ErrorClass::Sql(_)),
            "missing parameter: {err}"
        );
        assert_eq!(
            conn.execute(0, &[Param::Int(1)])
                .await
                .unwrap()
                .rows_returned,
            1
        );
    }
}

#[cfg_attr(not(test_pg), ignore = "needs DBSCALE_TEST_PG_URL")]
#[tokio::test]
async fn failed_transaction_is_rolled_back_by_reset() {
    let url = require("DBSCALE_TEST_PG_URL");
    let mut conn = connect(&url, QueryProtocol::Extended).await.unwrap();
    conn.batch("CREATE TEMP TABLE drv_r (x int)").await.unwrap();
    conn.prepare(&[Statement::new("div", "SELECT 1 / $1::int")])
        .await
        .unwrap();
    conn.batch("BEGIN").await.unwrap();
    conn.batch("INSERT INTO drv_r VALUES (1)").await.unwrap();
    assert!(conn.in_transaction());
    let err = conn.execute(0, &[Param::Int(0)]).await.unwrap_err();
    assert_eq!(err.class, ErrorClass::Sql("22012".into()));
    assert!(conn.in_transaction());
    let err = conn.batch("SELECT 1").await.unwrap_err();
    assert_eq!(err.code.as_deref(), Some("25P02"), "aborted transaction");
    conn.reset().await.unwrap();
    assert!(!conn.in_transaction());
    assert_eq!(
        scalar(&mut conn, "SELECT count(*) FROM drv_r")
            .await
            .as_deref(),
        Some("0")
    );
}

#[cfg_attr(not(test_pg), ignore = "needs DBSCALE_TEST_PG_URL")]
#[tokio::test]
async fn cancelled_request_is_drained_before_the_next() {
    let url = require("DBSCALE_TEST_PG_URL");
    let mut conn = connect(&url, QueryProtocol::Prepared).await.unwrap();
    conn.prepare(&[Statement::new(
        "sleep",
        "SELECT pg_sleep($1::float8), 'slept'",
    )])
    .await
    .unwrap();
    let slow = conn.fetch(0, &[Param::Float(0.3)]);
    assert!(tokio::time::timeout(Duration::from_millis(20), slow)
        .await
        .is_err());
    let rows = conn.fetch(0, &[Param::Float(0.0)]).await.unwrap();
    assert_eq!(rows[0][1].as_deref(), Some("slept"));
}

#[cfg_attr(not(test_pg), ignore = "needs DBSCALE_TEST_PG_URL")]
#[tokio::test]
async fn copy_in_streams_rows() {
    let url = require("DBSCALE_TEST_PG_URL");
    let mut conn = connect(&url, QueryProtocol::Prepared).await.unwrap();
    conn.batch("CREATE TEMP TABLE drv_copy (id int, name text)")
        .await
        .unwrap();
    let chunks = (0..5).map(|c| {
        let lines: String = (c * 1000..(c + 1) * 1000)
            .map(|i| format!("{i}\tname {i}\n"))
            .collect();
        Bytes::from(lines)
    });
    let copied = conn
        .copy_in("COPY drv_copy FROM STDIN", chunks)
        .await
        .unwrap();
    assert_eq!(copied, 5000);
    let sum = scalar(&mut conn, "SELECT count(*) || ' ' || sum(id) FROM drv_copy").await;
    assert_eq!(sum.as_deref(), Some("5000 12497500"));

    let bad = std::iter::once(Bytes::from_static(b"1\tok\nnot-a-number\tx\n"));
    let err = conn
        .copy_in("COPY drv_copy FROM STDIN", bad)
        .await
        .unwrap_err();
    assert_eq!(err.code.as_deref(), Some("22P02"), "{err}");
    let err = conn
        .copy_in("SELECT 1", std::iter::empty::<&[u8]>())
        .await
        .unwrap_err();
    assert!(err.message.contains("COPY ... FROM STDIN"), "{err}");
    assert_eq!(
        scalar(&mut conn, "SELECT count(*) FROM drv_copy")
            .await
            .as_deref(),
        Some("5000")
    );
}

#[cfg_attr(not(test_pg), ignore = "needs DBSCALE_TEST_PG_URL")]
#[tokio::test]
async fn serialization_failure_is_classified() {
    let url = require("DBSCALE_TEST_PG_URL");
    let mut a = connect(&url, QueryProtocol::Prepared).await.unwrap();
    let mut b = connect(&url, QueryProtocol::Prepared).await.unwrap();
    let table = format!("drv_ser_{}", a.backend_pid());
    a.batch(&format!(
        "CREATE TABLE {table} (id int PRIMARY KEY, n int); INSERT INTO {table} VALUES (1, 0)"
    ))
    .await
    .unwrap();
    let update = [Statement::new(
        "bump",
        format!("UPDATE {table} SET n = n + 1 WHERE id = $1"),
    )];
    a.prepare(&update).await.unwrap();
    b.prepare(&update).await.unwrap();
    a.batch("BEGIN ISOLATION LEVEL REPEATABLE READ")
        .await
        .unwrap();
    a.batch(&format!("SELECT n FROM {table}")).await.unwrap();
    b.execute(0, &[Param::Int(1)]).await.unwrap();
    let err = a.execute(0, &[Param::Int(1)]).await.unwrap_err();
    assert_eq!(err.class, ErrorClass::Serialization, "{err}");
    assert!(err.class.is_retryable());
    a.reset().await.unwrap();
    a.batch(&format!("DROP TABLE {table}")).await.unwrap();
}

/// Counts heap allocations made by the current thread while enabled.
struct CountingAllocator;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.with(Cell::get) {
            ALLOCATIONS.with(|n| n.set(n.get() + 1));
        }
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if COUNTING.with(Cell::get) {
            ALLOCATIONS.with(|n| n.set(n.get() + 1));
        }
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// The hot path's promise: once warm, `execute` allocates nothing, under every protocol, on a
/// plain socket (rustls allocates per TLS record). Run alone under `strace -c -f`, it also shows
/// the syscalls per execute.
#[cfg_attr(not(test_pg), ignore = "needs DBSCALE_TEST_PG_URL")]
#[tokio::test]
async fn steady_state_execute_does_not_allocate() {
    let url = require("DBSCALE_TEST_PG_URL");
    let statements = [
        Statement::new("select_one", "SELECT 1"),
        Statement::new(
            "lookup",
            "SELECT abalance FROM (VALUES ($1::int, $2::text)) AS a(abalance, name)",
        ),
    ];
    for protocol in PROTOCOLS {
        let mut conn = connect(&tls_url(&url, "disable"), protocol).await.unwrap();
        conn.prepare(&statements).await.unwrap();
        let params = [Param::Int(12345), Param::Text("O'Brien")];
        for _ in 0..200 {
            conn.execute(1, &params).await.unwrap();
        }
        COUNTING.with(|c| c.set(true));
        for i in 0..3000 {
            let outcome = conn.execute(i % 2, &params[..(i % 2) * 2]).await.unwrap();
            assert_eq!(outcome.rows_returned, 1);
        }
        COUNTING.with(|c| c.set(false));
        let allocations = ALLOCATIONS.with(|n| n.replace(0));
        assert_eq!(allocations, 0, "{protocol:?}: allocations in 3000 executes");
        conn.close().await;
    }
}

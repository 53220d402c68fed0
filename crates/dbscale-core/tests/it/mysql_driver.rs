//! The MySQL driver against a real MariaDB or MySQL server. Configured by environment:
//! `DBSCALE_TEST_MYSQL_URL` (TCP, e.g. `mysql://root@127.0.0.1:33099/dbscale_test`),
//! `DBSCALE_TEST_MYSQL_SOCKET` (the same server's Unix socket; the test connects as root, by
//! unix_socket authentication), `DBSCALE_TEST_MYSQL_CA` (the CA that signed the server's
//! certificate for localhost and 127.0.0.1; TLS tests skip without it).

use crate::support::*;

use dbscale_core::driver::mysql::{MySqlConfig, MySqlConnection};
use dbscale_core::driver::{
    ConnectFailure, DbError, ErrorClass, Param, QueryOutcome, QueryProtocol, Statement, TlsMode,
};

/// The test URL pointed at database `db` (created fresh), so tests can run in parallel; inside
/// a test's own runtime, unlike `support::fresh_database`.
async fn fresh_mysql_database(url: &str, db: &str) -> String {
    let mut admin = connect(url, QueryProtocol::Simple).await.unwrap();
    admin
        .batch(&format!(
            "DROP DATABASE IF EXISTS {db}; CREATE DATABASE {db}"
        ))
        .await
        .unwrap();
    admin.close().await;
    let parsed = url::Url::parse(url).unwrap();
    let mut out = parsed.clone();
    out.set_path(&format!("/{db}"));
    out.to_string()
}

async fn connect(url: &str, protocol: QueryProtocol) -> Result<MySqlConnection, DbError> {
    MySqlConnection::connect(&MySqlConfig::parse(url, None)?, protocol).await
}

const PROTOCOLS: [QueryProtocol; 3] = [
    QueryProtocol::Simple,
    QueryProtocol::Extended,
    QueryProtocol::Prepared,
];

fn statements() -> Vec<Statement> {
    vec![
        Statement::new("begin", "BEGIN"),
        Statement::new("select", "SELECT v FROM t WHERE id BETWEEN ? AND ?"),
        Statement::new("update", "UPDATE t SET v = ? WHERE id = ?"),
        Statement::new("insert", "INSERT INTO t (id, v) VALUES (?, ?)"),
        Statement::new("commit", "COMMIT"),
        Statement::new("quote", "SELECT ?, ?, ?"),
    ]
}

#[cfg_attr(not(test_mysql), ignore = "needs DBSCALE_TEST_MYSQL_URL")]
#[tokio::test]
async fn session_basics_over_tcp() {
    let url = require("DBSCALE_TEST_MYSQL_URL");
    let mut conn = connect(&url, QueryProtocol::Simple).await.unwrap();
    assert!(
        conn.server_version()
            .chars()
            .next()
            .unwrap()
            .is_ascii_digit(),
        "{}",
        conn.server_version()
    );
    let rows = conn.query("SELECT 1, NULL, 'x'").await.unwrap();
    assert_eq!(rows, vec![vec![Some("1".into()), None, Some("x".into())]]);
    // COPY is not a LOAD DATA LOCAL: the server refuses it, and the session stays usable.
    assert!(conn
        .copy_in("COPY t FROM STDIN", std::iter::empty::<&[u8]>())
        .await
        .is_err());
    assert_eq!(
        conn.query("SELECT 2").await.unwrap()[0][0].as_deref(),
        Some("2")
    );
    conn.close().await;
}

#[cfg_attr(not(test_mysql), ignore = "needs DBSCALE_TEST_MYSQL_URL")]
#[tokio::test]
async fn unix_socket_session() {
    let socket = require("DBSCALE_TEST_MYSQL_SOCKET");
    let url = format!("mysql://root@localhost/?socket={socket}");
    let mut conn = connect(&url, QueryProtocol::Prepared).await.unwrap();
    assert!(!conn.is_tls());
    assert!(
        conn.is_lean(),
        "root's unix_socket authentication needs no client plugin"
    );
    let rows = conn.query("SELECT @@socket").await.unwrap();
    assert_eq!(rows[0][0].as_deref(), Some(socket.as_str()));
    conn.close().await;
}

#[cfg_attr(not(test_mysql), ignore = "needs DBSCALE_TEST_MYSQL_URL")]
#[tokio::test]
async fn load_data_local_streams_the_given_rows() {
    let url = require("DBSCALE_TEST_MYSQL_URL");
    let url = fresh_mysql_database(&url, "dbscale_driver_load_data").await;
    let mut conn = connect(
        &with_param(&url, "sslmode", "disable"),
        QueryProtocol::Simple,
    )
    .await
    .unwrap();
    assert!(conn.is_lean());
    conn.batch("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10), d DECIMAL(6,2) NOT NULL)")
        .await
        .unwrap();
    let sql = "LOAD DATA LOCAL INFILE '/etc/passwd' INTO TABLE t CHARACTER SET binary (id, v, d)";
    // Rows cut across chunks mid-value; an escaped tab and a NULL; the named file is ignored.
    let chunks = ["1\ta\\tb\t1.5", "0\n2\t\\N\t2.00\n3\t", "c\t-0.25\n"]
        .map(|c| bytes::Bytes::from_static(c.as_bytes()));
    assert_eq!(conn.copy_in(sql, chunks.into_iter()).await.unwrap(), 3);
    let rows = conn
        .query("SELECT id, v, d FROM t ORDER BY id")
        .await
        .unwrap();
    let text = |r: &Vec<Option<String>>| {
        r.iter()
            .map(|v| v.clone().unwrap_or("NULL".into()))
            .collect::<Vec<_>>()
            .join("|")
    };
    let got: Vec<String> = rows.iter().map(text).collect();
    assert_eq!(got, ["1|a\tb|1.50", "2|NULL|2.00", "3|c|-0.25"]);

    // A value the column cannot take is a warning to LOAD DATA: the load fails here.
    let bad = [bytes::Bytes::from_static(b"4\tx\tnot-a-number\n")];
    let err = conn.copy_in(sql, bad.into_iter()).await.unwrap_err();
    assert!(
        err.message.contains("warning") || err.code.is_some(),
        "{err}"
    );
    // A statement that asks for no file is refused, and the session stays usable.
    let err = conn
        .copy_in("DO 1", std::iter::empty::<&[u8]>())
        .await
        .unwrap_err();
    assert!(err.message.contains("LOAD DATA LOCAL"), "{err}");
    let rows = conn
        .query("SELECT COUNT(*) FROM t WHERE id < 4")
        .await
        .unwrap();
    assert_eq!(rows[0][0].as_deref(), Some("3"));
    conn.close().await;
}

#[cfg_attr(not(test_mysql), ignore = "needs DBSCALE_TEST_MYSQL_URL")]
#[tokio::test]
async fn every_protocol_counts_rows_like_sysbench() {
    let url = require("DBSCALE_TEST_MYSQL_URL");
    let url = fresh_mysql_database(&url, "dbscale_driver_protocols").await;
    // TLS off: our lean client; `prefer` on a server with TLS: mysql_async.
    let lean = with_param(&url, "sslmode", "disable");
    for (url, protocol) in [&url, &lean]
        .into_iter()
        .flat_map(|u| PROTOCOLS.map(|p| (u, p)))
    {
        let mut conn = connect(url, protocol).await.unwrap();
        conn.batch("DROP TABLE IF EXISTS t; CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20))")
            .await
            .unwrap();
        conn.prepare(&statements()).await.unwrap();
        let other = QueryOutcome::default();
        assert_eq!(conn.execute(0, &[]).await.unwrap(), other, "{protocol:?}");
        for id in 1..=3 {
            let insert = conn
                .execute(3, &[Param::Int(id), Param::Text("a")])
                .await
                .unwrap();
            assert_eq!(insert.rows_affected, 1);
            assert!(!insert.returned_result_set);
        }
        let update = conn
            .execute(2, &[Param::Text("b"), Param::Int(2)])
            .await
            .unwrap();
        assert_eq!(
            (update.rows_affected, update.returned_result_set),
            (1, false)
        );
        let missed = conn
            .execute(2, &[Param::Text("b"), Param::Int(99)])
            .await
            .unwrap();
        assert_eq!(missed, other, "an UPDATE matching nothing is 'other'");
        let select = conn
            .execute(1, &[Param::Int(1), Param::Int(2)])
            .await
            .unwrap();
        assert_eq!(
            (select.rows_returned, select.returned_result_set),
            (2, true)
        );
        let empty = conn
            .execute(1, &[Param::Int(50), Param::Int(60)])
            .await
            .unwrap();
        assert_eq!(
            (
                empty.rows_returned,
                empty.rows_affected,
                empty.returned_result_set
            ),
            (0, 0, true),
            "a SELECT of no rows is still a read"
        );
        assert_eq!(conn.execute(4, &[]).await.unwrap(), other);
        let quoted = conn
            .fetch(
                5,
                &[Param::Text("it's \\ ok"), Param::Null, Param::Float(0.5)],
            )
            .await
            .unwrap();
        assert_eq!(quoted[0][0].as_deref(), Some("it's \\ ok"), "{protocol:?}");
        assert_eq!(quoted[0][1], None);
        assert_eq!(
            quoted[0][2].as_deref().map(|v| v.parse::<f64>().unwrap()),
            Some(0.5)
        );
        conn.close().await;
    }
}

#[cfg_attr(not(test_mysql), ignore = "needs DBSCALE_TEST_MYSQL_URL")]
#[tokio::test]
async fn errors_are_classified_and_reset_rolls_back() {
    let url = require("DBSCALE_TEST_MYSQL_URL");
    let url = fresh_mysql_database(&url, "dbscale_driver_errors").await;
    for url in [url.clone(), with_param(&url, "sslmode", "disable")] {
        errors_and_reset(&url).await;
    }
}

async fn errors_and_reset(url: &str) {
    let mut conn = connect(url, QueryProtocol::Prepared).await.unwrap();
    conn.batch("DROP TABLE IF EXISTS t").await.unwrap();
    conn.batch("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20)) ENGINE=InnoDB")
        .await
        .unwrap();
    conn.prepare(&statements()).await.unwrap();
    conn.execute(0, &[]).await.unwrap();
    conn.execute(3, &[Param::Int(1), Param::Text("a")])
        .await
        .unwrap();
    let duplicate = conn
        .execute(3, &[Param::Int(1), Param::Text("b")])
        .await
        .unwrap_err();
    assert_eq!(duplicate.class, ErrorClass::UniqueViolation);
    assert!(
        duplicate.to_string().contains("(MySQL error 1062)"),
        "{duplicate}"
    );
    conn.reset().await.unwrap();
    let rows = conn.query("SELECT count(*) FROM t").await.unwrap();
    assert_eq!(
        rows[0][0].as_deref(),
        Some("0"),
        "reset rolled the insert back"
    );
    let syntax = conn.batch("SELEC 1").await.unwrap_err();
    assert_eq!(syntax.class, ErrorClass::Sql("1064".into()));
    let missing = conn.query("SELECT * FROM nope").await.unwrap_err();
    assert_eq!(missing.code.as_deref(), Some("1146"));
    assert_eq!(conn.query("SELECT 1").await.unwrap().len(), 1);
    conn.close().await;
}

#[cfg_attr(not(test_mysql), ignore = "needs DBSCALE_TEST_MYSQL_URL")]
#[tokio::test]
async fn deadlock_is_classified() {
    let url = require("DBSCALE_TEST_MYSQL_URL");
    let url = fresh_mysql_database(&url, "dbscale_driver_deadlock").await;
    let mut a = connect(&url, QueryProtocol::Simple).await.unwrap();
    let mut b = connect(&url, QueryProtocol::Simple).await.unwrap();
    a.batch("CREATE TABLE t (id INT PRIMARY KEY, v INT) ENGINE=InnoDB; INSERT INTO t VALUES (1, 0), (2, 0)")
        .await
        .unwrap();
    a.batch("BEGIN").await.unwrap();
    b.batch("BEGIN").await.unwrap();
    a.batch("UPDATE t SET v = v + 1 WHERE id = 1")
        .await
        .unwrap();
    b.batch("UPDATE t SET v = v + 1 WHERE id = 2")
        .await
        .unwrap();
    // Each now waits for the other's row: InnoDB picks a victim at once.
    let (ra, rb) = tokio::join!(
        a.batch("UPDATE t SET v = v + 1 WHERE id = 2"),
        b.batch("UPDATE t SET v = v + 1 WHERE id = 1"),
    );
    let victim = ra
        .err()
        .or(rb.err())
        .expect("one side is the deadlock victim");
    assert_eq!(victim.class, ErrorClass::Deadlock);
    assert!(victim.class.is_retryable());
    a.reset().await.unwrap();
    b.reset().await.unwrap();
}

#[cfg_attr(not(test_mysql), ignore = "needs DBSCALE_TEST_MYSQL_URL")]
#[tokio::test]
async fn connect_failures_are_classified() {
    let url = require("DBSCALE_TEST_MYSQL_URL");
    let failure = |r: Result<MySqlConnection, DbError>| r.err().expect("should fail").connect;
    let parsed = url::Url::parse(&url).unwrap();
    let mut wrong_password = parsed.clone();
    wrong_password.set_password(Some("wrong-password")).unwrap();
    wrong_password.set_username("dbscale_nobody").unwrap();
    assert_eq!(
        failure(connect(wrong_password.as_str(), QueryProtocol::Simple).await),
        Some(ConnectFailure::Authentication)
    );
    let mut missing_db = parsed.clone();
    missing_db.set_path("/dbscale_no_such_database");
    assert_eq!(
        failure(connect(missing_db.as_str(), QueryProtocol::Simple).await),
        Some(ConnectFailure::DatabaseMissing)
    );
    assert_eq!(
        failure(connect("mysql://root@127.0.0.1:1/x", QueryProtocol::Simple).await),
        Some(ConnectFailure::Unreachable)
    );
}

#[cfg_attr(not(test_mysql), ignore = "needs DBSCALE_TEST_MYSQL_URL")]
#[tokio::test]
async fn tls_modes() {
    let (url, ca) = (require(MYSQL_URL), require("DBSCALE_TEST_MYSQL_CA"));
    let open = |mode: TlsMode, extra: Option<(&str, String)>| {
        let mut target = url.clone();
        if let Some((key, value)) = &extra {
            target = with_param(&target, key, value);
        }
        async move {
            let config = MySqlConfig::parse(&target, Some(mode))?;
            MySqlConnection::connect(&config, QueryProtocol::Simple).await
        }
    };
    // Every mode runs on the lean client (the library is only the fallback for other auth).
    let lean_tls = |c: &MySqlConnection| (c.is_lean(), c.is_tls());
    assert_eq!(
        lean_tls(&open(TlsMode::Disable, None).await.unwrap()),
        (true, false)
    );
    assert_eq!(
        lean_tls(&open(TlsMode::Prefer, None).await.unwrap()),
        (true, true)
    );
    let mut required = open(TlsMode::Require, None).await.unwrap();
    assert_eq!(lean_tls(&required), (true, true));
    let cipher = required
        .query("SHOW SESSION STATUS LIKE 'Ssl_cipher'")
        .await
        .unwrap();
    assert!(
        cipher[0][1].as_deref().is_some_and(|c| !c.is_empty()),
        "{cipher:?}"
    );
    // Verification against the test CA passes; against the public roots it must fail.
    let verified = open(TlsMode::VerifyFull, Some(("sslrootcert", ca.clone()))).await;
    assert_eq!(lean_tls(&verified.unwrap()), (true, true));
    let verified_ca = open(TlsMode::VerifyCa, Some(("ssl-ca", ca))).await;
    assert_eq!(lean_tls(&verified_ca.unwrap()), (true, true));
    let unknown_ca = open(TlsMode::VerifyFull, None).await.err().unwrap();
    assert_eq!(
        unknown_ca.connect,
        Some(ConnectFailure::Tls),
        "{unknown_ca}"
    );
}

#[cfg_attr(not(test_mysql), ignore = "needs DBSCALE_TEST_MYSQL_URL")]
#[tokio::test]
async fn lean_client_authenticates_with_a_password() {
    let url = require("DBSCALE_TEST_MYSQL_PASSWORD_URL");
    let plain = with_param(&url, "sslmode", "disable");
    let mut conn = connect(&plain, QueryProtocol::Prepared).await.unwrap();
    assert!(!conn.is_tls());
    assert!(conn
        .server_version()
        .chars()
        .next()
        .unwrap()
        .is_ascii_digit());
    assert_eq!(
        conn.query("SELECT CURRENT_USER()").await.unwrap()[0][0]
            .as_deref()
            .map(|u| u.starts_with("dbscale@")),
        Some(true)
    );
    conn.close().await;
    let mut wrong = url::Url::parse(&plain).unwrap();
    wrong.set_password(Some("wrong-password")).unwrap();
    let failure = connect(wrong.as_str(), QueryProtocol::Simple).await.err();
    assert_eq!(
        failure.and_then(|e| e.connect),
        Some(ConnectFailure::Authentication)
    );
}

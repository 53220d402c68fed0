//! The PostgreSQL driver's connection security against the test server: TLS under each
//! `sslmode`, certificate verification, SCRAM authentication, and how connect failures are
//! classified. `DBSCALE_TEST_PG_CA` is the CA that signed the server's certificate for
//! localhost and 127.0.0.1; `DBSCALE_TEST_PG_SCRAM_URL` a scram-sha-256 user with its password.

use crate::support::*;

use crate::postgres_driver::{connect, connect_failure, scalar, workload_statements};
use dbscale_core::driver::postgres::PgConfig;
use dbscale_core::driver::{ConnectFailure, Param, QueryProtocol};

pub(crate) fn tls_url(url: &str, mode: &str) -> String {
    with_param(url, "sslmode", mode)
}

#[cfg_attr(not(test_pg), ignore = "needs DBSCALE_TEST_PG_URL")]
#[tokio::test]
async fn tls_require_encrypts() {
    let url = require("DBSCALE_TEST_PG_URL");
    let mut conn = connect(&tls_url(&url, "require"), QueryProtocol::Prepared)
        .await
        .unwrap();
    assert!(conn.is_tls());
    let ssl = scalar(
        &mut conn,
        "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
    )
    .await;
    assert_eq!(ssl.as_deref(), Some("t"));
    // The hot path works the same over TLS.
    conn.prepare(&workload_statements()[..2]).await.unwrap();
    assert_eq!(
        conn.execute(1, &[Param::Int(3)])
            .await
            .unwrap()
            .rows_returned,
        3
    );
    conn.close().await;

    let mut plain = connect(&tls_url(&url, "disable"), QueryProtocol::Simple)
        .await
        .unwrap();
    assert!(!plain.is_tls());
    let ssl = scalar(
        &mut plain,
        "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
    )
    .await;
    assert_eq!(ssl.as_deref(), Some("f"));
}

#[cfg_attr(not(test_pg), ignore = "needs DBSCALE_TEST_PG_URL")]
#[tokio::test]
async fn tls_verification_modes() {
    let url = require("DBSCALE_TEST_PG_URL");
    let ca = require("DBSCALE_TEST_PG_CA");
    let c = PgConfig::parse(&url, None).unwrap();
    let (port, user, db) = (c.port(), c.user(), c.dbname());
    let target =
        |host: &str, extra: &str| format!("postgresql://{user}@{host}:{port}/{db}?{extra}");
    let verified = [
        target(
            "localhost",
            &format!("sslmode=verify-full&sslrootcert={ca}"),
        ),
        target(
            "127.0.0.1",
            &format!("sslmode=verify-full&sslrootcert={ca}"),
        ),
        // A name the certificate does not carry is fine when only the chain is checked.
        target(
            "wrong.invalid",
            &format!("hostaddr=127.0.0.1&sslmode=verify-ca&sslrootcert={ca}"),
        ),
        // libpq: `require` with a root certificate verifies the chain.
        target(
            "wrong.invalid",
            &format!("hostaddr=127.0.0.1&sslmode=require&sslrootcert={ca}"),
        ),
    ];
    for url in &verified {
        let mut conn = connect(url, QueryProtocol::Simple).await.unwrap();
        assert!(conn.is_tls(), "{url}");
        assert_eq!(scalar(&mut conn, "SELECT 1").await.as_deref(), Some("1"));
    }
    let refused = [
        (
            target(
                "wrong.invalid",
                &format!("hostaddr=127.0.0.1&sslmode=verify-full&sslrootcert={ca}"),
            ),
            "does not name this host",
        ),
        // The Mozilla roots did not sign the test CA.
        (
            target("localhost", "sslmode=verify-full"),
            "not signed by a root you trust",
        ),
        (
            target("localhost", "sslmode=verify-ca"),
            "not signed by a root you trust",
        ),
    ];
    for (url, reason) in &refused {
        let (failure, message) = connect_failure(connect(url, QueryProtocol::Simple).await);
        assert_eq!(failure, ConnectFailure::Tls, "{url}: {message}");
        assert!(message.contains(reason), "{url}: {message}");
    }
    let bad_ca = target(
        "localhost",
        "sslmode=verify-full&sslrootcert=/nonexistent/ca.pem",
    );
    assert_eq!(
        connect_failure(connect(&bad_ca, QueryProtocol::Simple).await).0,
        ConnectFailure::Tls
    );
}

#[cfg_attr(not(test_pg), ignore = "needs DBSCALE_TEST_PG_URL")]
#[tokio::test]
async fn scram_authentication() {
    let url = require("DBSCALE_TEST_PG_SCRAM_URL");
    let user = PgConfig::parse(&url, None).unwrap().user().to_string();
    for mode in ["disable", "require"] {
        let mut conn = connect(&tls_url(&url, mode), QueryProtocol::Simple)
            .await
            .unwrap();
        assert_eq!(
            scalar(&mut conn, "SELECT current_user").await,
            Some(user.clone())
        );
    }
    let wrong = with_param(&url, "password", "not-the-password");
    let (failure, message) = connect_failure(connect(&wrong, QueryProtocol::Simple).await);
    assert_eq!(failure, ConnectFailure::Authentication, "{message}");
    assert!(
        message.contains("password authentication failed"),
        "{message}"
    );
    assert!(!message.contains("not-the-password"));
    let (failure, message) =
        connect_failure(connect(&with_param(&url, "password", ""), QueryProtocol::Simple).await);
    assert_eq!(failure, ConnectFailure::Authentication, "{message}");
}

#[cfg_attr(not(test_pg), ignore = "needs DBSCALE_TEST_PG_URL")]
#[tokio::test]
async fn connect_failures_are_classified() {
    let url = require("DBSCALE_TEST_PG_URL");
    let missing_db = with_param(&url, "dbname", "dbscale_no_such_database");
    let (failure, message) = connect_failure(connect(&missing_db, QueryProtocol::Simple).await);
    assert_eq!(failure, ConnectFailure::DatabaseMissing, "{message}");
    assert!(message.contains("dbscale_no_such_database"), "{message}");
    let closed = "postgresql://postgres@127.0.0.1:1/postgres?connect_timeout=5";
    let (failure, message) = connect_failure(connect(closed, QueryProtocol::Simple).await);
    assert_eq!(failure, ConnectFailure::Unreachable, "{message}");
    let bad = PgConfig::parse("postgresql://u@h/d?colour=blue", None).unwrap_err();
    assert_eq!(bad.connect, Some(ConnectFailure::InvalidTarget));
}

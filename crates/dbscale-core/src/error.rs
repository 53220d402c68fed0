//! The crate's one error type. Every variant knows its kind (a stable key the Python side maps to
//! its exception tree) and a hint for the user.

use crate::driver::{ConnectFailure, DbError, ErrorClass};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Malformed configuration: bad values, unknown workload or parameter.
    #[error("{0}")]
    Config(String),
    /// A script that does not parse: file, line, column and what is wrong.
    #[error("{0}")]
    Script(String),
    /// A connection could not be made.
    #[error("cannot connect to {target}: {source}")]
    Connect { target: String, source: DbError },
    /// The workload's tables are missing or incomplete.
    #[error("{0}")]
    NotPrepared(Unprepared),
    /// A statement failed outside the measured loop (prepare, cleanup, checks).
    #[error("{context}: {source}")]
    Sql { context: String, source: DbError },
    /// A stored latency histogram that cannot be read back or merged.
    #[error("{0}")]
    Histogram(String),
    /// A bug or an environment failure (threads, runtime).
    #[error("{0}")]
    Internal(String),
}

/// Every kind `Error::kind` can return: the contract publishes the list, and Python maps each
/// onto its exception tree (a test checks that none is missing there).
pub const KINDS: &[&str] = &[
    "config",
    "script",
    "connect_unreachable",
    "connect_auth",
    "connect_database",
    "connect_tls",
    "connect_unavailable",
    "connect_limit",
    "connect_invalid",
    "not_prepared",
    "sql",
    "histogram",
    "internal",
];

/// What is missing from the target's data, and what to run about it when the workload that
/// found it has words of its own (the hint is chosen where the error is made, never from its
/// message).
#[derive(Debug)]
pub struct Unprepared {
    pub message: String,
    pub hint: Option<&'static str>,
}

impl Unprepared {
    /// sysbench's tables: their count and size are the run's own parameters.
    pub fn sysbench(message: String) -> Self {
        Self {
            message,
            hint: Some("run `dbscale prepare WORKLOAD --target URL` with the run's --set tables=N and table_size=M (or sysbench's own `prepare` with the same --tables and --table-size)"),
        }
    }
}

impl std::fmt::Display for Unprepared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// The error reads as its message (`message.contains("missing")`).
impl std::ops::Deref for Unprepared {
    type Target = str;

    fn deref(&self) -> &str {
        &self.message
    }
}

impl From<String> for Unprepared {
    fn from(message: String) -> Self {
        Self {
            message,
            hint: None,
        }
    }
}

impl From<&str> for Unprepared {
    fn from(message: &str) -> Self {
        message.to_string().into()
    }
}

/// The kind of a client's failure to open its connection: a connect failure's own, or `sql`
/// when the connection opened but setting it up failed (a statement that would not prepare).
pub fn failure_kind(failure: Option<ConnectFailure>) -> &'static str {
    match failure {
        Some(ConnectFailure::Unreachable) | Some(ConnectFailure::Protocol) => "connect_unreachable",
        Some(ConnectFailure::Authentication) => "connect_auth",
        Some(ConnectFailure::DatabaseMissing) => "connect_database",
        Some(ConnectFailure::Tls) => "connect_tls",
        Some(ConnectFailure::Unavailable) => "connect_unavailable",
        Some(ConnectFailure::TooManyConnections) => "connect_limit",
        Some(ConnectFailure::InvalidTarget) => "connect_invalid",
        None => "sql",
    }
}

impl Error {
    /// Stable key for the Python exception tree.
    pub fn kind(&self) -> &'static str {
        match self {
            Error::Config(_) => "config",
            Error::Script(_) => "script",
            Error::Connect { source, .. } => match source.connect {
                None => "connect_unreachable",
                failure => failure_kind(failure),
            },
            Error::NotPrepared(_) => "not_prepared",
            Error::Sql { .. } => "sql",
            Error::Histogram(_) => "histogram",
            Error::Internal(_) => "internal",
        }
    }

    /// What the user can do about it, in the words of the target's kind of server.
    pub fn hint(&self) -> String {
        match self {
            Error::Config(_) => "check the option's spelling and value; `dbscale workloads` lists workloads and their parameters".into(),
            Error::Connect { target, source } if is_mysql_target(target) => mysql_connect_hint(source.connect).into(),
            Error::Connect { source, .. } => postgres_connect_hint(source.connect).into(),
            Error::Script(_) => "fix the script at the line and column shown; docs/scripts.md describes the language".into(),
            Error::NotPrepared(Unprepared { hint: Some(hint), .. }) => (*hint).into(),
            Error::NotPrepared(_) => "run `dbscale prepare WORKLOAD --target URL` first (with the same --set parameters)".into(),
            Error::Sql { source, .. } if source.class == ErrorClass::ConnectionLost => "the connection to the server broke mid-statement (the server stopped, restarted or was killed, or a network dropped it): check that it runs, then run again".into(),
            Error::Sql { .. } => "the server refused a statement; its message above says why".into(),
            Error::Histogram(_) => "the results hold a histogram dbscale did not write (edited, truncated, or recorded with other settings); re-run that point".into(),
            Error::Internal(_) => "this is a dbscale bug; please report it with the command line".into(),
        }
    }
}

/// One error of each kind, as a PostgreSQL target gives it (a connect failure the server never
/// answered is `Unreachable`'s): the contract publishes their hints, which Python's exception
/// classes state word for word when Python raises them itself.
pub fn samples() -> Vec<Error> {
    use ConnectFailure::*;
    let connect = |failure| Error::Connect {
        target: "postgresql://h/db".into(),
        source: DbError::connect(failure, "m"),
    };
    let mut all: Vec<Error> = [
        Unreachable,
        Authentication,
        DatabaseMissing,
        Tls,
        Unavailable,
        TooManyConnections,
        InvalidTarget,
    ]
    .into_iter()
    .map(connect)
    .collect();
    all.extend([
        Error::Config(String::new()),
        Error::Script(String::new()),
        Error::NotPrepared("missing".into()),
        Error::Sql {
            context: String::new(),
            source: DbError::sql("42601", "syntax error"),
        },
        Error::Histogram(String::new()),
        Error::Internal(String::new()),
    ]);
    all
}

/// Whether a (redacted) target names a MySQL or MariaDB server: hints then speak of grants,
/// `CREATE DATABASE` and socket files instead of pg_hba.conf and createdb.
fn is_mysql_target(target: &str) -> bool {
    let lower = target.trim_start().to_ascii_lowercase();
    lower.starts_with("mysql://") || lower.starts_with("mariadb://")
}

fn postgres_connect_hint(failure: Option<ConnectFailure>) -> &'static str {
    match failure {
        Some(ConnectFailure::Unreachable) => "is the server running and listening there? check host, port or socket directory",
        Some(ConnectFailure::Authentication) => "check the user and password in the URL (or PGPASSWORD) and the server's pg_hba.conf",
        Some(ConnectFailure::DatabaseMissing) => "create the database first (e.g. `createdb NAME`) or name an existing one in the URL",
        Some(ConnectFailure::Tls) => "check --tls (disable/prefer/require/verify-ca/verify-full) and sslrootcert against what the server offers",
        Some(ConnectFailure::Unavailable) => "the server is starting, stopping or recovering, or is not the node the routing wants (a standby, not the primary): wait, or check which node is the primary",
        Some(ConnectFailure::TooManyConnections) => "the server has no connection slot left (max_connections): run fewer clients, or raise max_connections",
        Some(ConnectFailure::InvalidTarget) => "use postgresql://user[:password]@host[:port]/dbname or libpq key=value form",
        Some(ConnectFailure::Protocol) | None => "is that a PostgreSQL server? check host and port",
    }
}

fn mysql_connect_hint(failure: Option<ConnectFailure>) -> &'static str {
    match failure {
        Some(ConnectFailure::Unreachable) => "is the server running and listening there? check host and port (default 3306), or give its socket file with ?socket=/run/mysqld/mysqld.sock",
        Some(ConnectFailure::Authentication) => "check the user and password in the URL (or MYSQL_PWD) and that the account exists for this client host (CREATE USER 'u'@'127.0.0.1' ...; GRANT ...); root often logs in only by unix_socket, over the socket",
        Some(ConnectFailure::DatabaseMissing) => "create the database first (e.g. `mariadb -e 'CREATE DATABASE sbtest'`) or name an existing one in the URL",
        Some(ConnectFailure::Tls) => "check --tls (or ?sslmode=: disable/prefer/require/verify-ca/verify-full) and ?sslrootcert=CA.pem against the server's ssl-ca/ssl-cert; sysbench 1.0.20 connects without TLS (--tls disable compares alike)",
        Some(ConnectFailure::Unavailable) => "the server is starting or stopping, or refuses this host (blocked after too many errors: FLUSH HOSTS): wait, or check the server",
        Some(ConnectFailure::TooManyConnections) => "the server has no connection left for this account (max_connections, max_user_connections): run fewer clients, or raise the limit",
        Some(ConnectFailure::InvalidTarget) => "use mysql://user[:password]@host[:port]/dbname[?socket=PATH&sslmode=MODE&sslrootcert=CA.pem]",
        Some(ConnectFailure::Protocol) | None => "is that a MySQL or MariaDB server? check host and port",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::DbError;

    fn connect(target: &str, failure: ConnectFailure) -> Error {
        Error::Connect {
            target: target.into(),
            source: DbError::connect(failure, "m"),
        }
    }

    #[test]
    fn a_broken_connection_and_a_full_server_get_their_own_hints() {
        let lost = Error::Sql {
            context: "prepare".into(),
            source: DbError::connection_lost("server closed the connection"),
        };
        assert!(
            lost.hint().contains("connection to the server broke"),
            "{}",
            lost.hint()
        );
        let refused = Error::Sql {
            context: "prepare".into(),
            source: DbError::sql("42601", "syntax error"),
        };
        assert!(refused.hint().starts_with("the server refused a statement"));
        let full = connect("postgresql://h/db", ConnectFailure::TooManyConnections);
        assert_eq!(full.kind(), "connect_limit");
        assert!(full.hint().contains("max_connections"));
        let starting = connect("postgresql://h/db", ConnectFailure::Unavailable);
        assert_eq!(starting.kind(), "connect_unavailable");
        assert!(
            !starting.hint().contains("max_connections") && starting.hint().contains("primary")
        );
    }

    #[test]
    fn connect_hints_speak_the_targets_dialect() {
        let pg = "postgresql://u@h:5432/db";
        let my = "mysql://root@127.0.0.1:3306/sbtest";
        let auth = connect(pg, ConnectFailure::Authentication).hint();
        assert!(auth.contains("pg_hba.conf"), "{auth}");
        let auth = connect(my, ConnectFailure::Authentication).hint();
        assert!(
            auth.contains("MYSQL_PWD") && !auth.contains("pg_hba"),
            "{auth}"
        );
        let db = connect(my, ConnectFailure::DatabaseMissing).hint();
        assert!(
            db.contains("CREATE DATABASE") && !db.contains("createdb"),
            "{db}"
        );
        assert!(connect(pg, ConnectFailure::DatabaseMissing)
            .hint()
            .contains("createdb"));
        let unreachable = connect("mariadb://h/db", ConnectFailure::Unreachable).hint();
        assert!(unreachable.contains("3306"), "{unreachable}");
        assert!(connect(my, ConnectFailure::Tls)
            .hint()
            .contains("sslrootcert"));
        assert!(connect(my, ConnectFailure::InvalidTarget)
            .hint()
            .starts_with("use mysql://"));
        assert!(connect("host=db dbname=x", ConnectFailure::Protocol)
            .hint()
            .contains("PostgreSQL"));
        assert_eq!(
            connect(my, ConnectFailure::Tls).kind(),
            connect(pg, ConnectFailure::Tls).kind()
        );
    }

    #[test]
    fn missing_sysbench_tables_hint_at_their_size() {
        let e = Error::NotPrepared(Unprepared::sysbench(
            "table sbtest3 is missing (no such table)".into(),
        ));
        assert!(e.hint().contains("table_size"), "{}", e.hint());
        let tpcb = Error::NotPrepared("TPC-B tables are missing".into()).hint();
        assert!(!tpcb.contains("table_size"));
    }

    #[test]
    fn kinds_lists_exactly_the_kinds_errors_have_and_the_samples_one_each() {
        let mut seen: Vec<&str> = samples().iter().map(Error::kind).collect();
        assert_eq!(seen.len(), KINDS.len(), "one sample per kind");
        seen.push(connect("postgresql://h/db", ConnectFailure::Protocol).kind());
        seen.sort_unstable();
        seen.dedup();
        let mut listed = KINDS.to_vec();
        listed.sort_unstable();
        assert_eq!(seen, listed);
    }
}

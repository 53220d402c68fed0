//! Database errors and their classes. The class decides what the engine does: retry, reconnect,
//! or count and go on.

use std::fmt;

/// Why a connection could not be made; each has its own hint for the user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnectFailure {
    /// DNS failure, refused connection, no socket file, timeout.
    Unreachable,
    /// Wrong password or user, or no `pg_hba.conf` entry.
    Authentication,
    /// The database named in the URL does not exist.
    DatabaseMissing,
    /// TLS was required but refused, or the certificate did not verify.
    Tls,
    /// The server is starting up, shutting down or recovering, or the node is not the kind the
    /// routing asks for (a standby when the primary is wanted).
    Unavailable,
    /// The server has no connection slot left (`max_connections`, MySQL's per-user limits).
    TooManyConnections,
    /// The peer did not speak the expected protocol.
    Protocol,
    /// The URL or connection options are malformed: the user's input, not the server.
    InvalidTarget,
}

/// What the engine does with an error, and the key it is counted under.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ErrorClass {
    /// PostgreSQL 40001, MariaDB 1020 (a row changed since the transaction's snapshot).
    Serialization,
    /// PostgreSQL 40P01, MySQL 1213.
    Deadlock,
    /// MySQL 1205, PostgreSQL 55P03.
    LockTimeout,
    /// PostgreSQL 23505, MySQL 1062.
    UniqueViolation,
    /// The connection broke; the client reconnects.
    ConnectionLost,
    /// The node is up but will not serve (a Galera node out of the primary component: 1047
    /// "WSREP has not yet prepared node"): the client moves to another node.
    NodeUnavailable,
    /// The client's own per-transaction deadline passed; the statement was cancelled and the
    /// session dropped (a synchronous-replication wait ignores `statement_timeout`).
    ClientTimeout,
    /// A new connection could not be made.
    Connect,
    /// Any other SQL error, by SQLSTATE (or MySQL error number).
    Sql(String),
    /// A script's run-time error (pgbench's language): where, and pgbench's words for it.
    Script(String),
}

impl ErrorClass {
    /// Key used in results (`errors.by_class`).
    pub fn key(&self) -> String {
        match self {
            ErrorClass::Serialization => "serialization".into(),
            ErrorClass::Deadlock => "deadlock".into(),
            ErrorClass::LockTimeout => "lock_timeout".into(),
            ErrorClass::UniqueViolation => "unique_violation".into(),
            ErrorClass::ConnectionLost => "connection_lost".into(),
            ErrorClass::NodeUnavailable => "node_unavailable".into(),
            ErrorClass::ClientTimeout => "client_timeout".into(),
            ErrorClass::Connect => "connect".into(),
            ErrorClass::Sql(code) => format!("sql_{code}"),
            ErrorClass::Script(what) => format!("script {what}"),
        }
    }

    /// Errors that a retry of the same transaction can cure: pgbench's `--max-tries` set plus lock
    /// wait timeouts (sysbench's default `--mysql-ignore-errors` is 1213, 1020, 1205). Workloads
    /// narrow or widen this (`Workload::is_retryable`).
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            ErrorClass::Serialization | ErrorClass::Deadlock | ErrorClass::LockTimeout
        )
    }
}

/// An error from a driver, with the server's code when it sent one.
#[derive(Debug, Clone)]
pub struct DbError {
    pub class: ErrorClass,
    /// Set when the error happened while connecting.
    pub connect: Option<ConnectFailure>,
    /// SQLSTATE (PostgreSQL) or error number (MySQL) as text.
    pub code: Option<String>,
    pub message: String,
    /// Whether `code` is a MySQL error number rather than a SQLSTATE (for display only).
    mysql_code: bool,
}

impl DbError {
    /// An error the server reported with a SQLSTATE.
    pub fn sql(code: &str, message: impl Into<String>) -> Self {
        let class = match code {
            "40001" => ErrorClass::Serialization,
            "40P01" => ErrorClass::Deadlock,
            "55P03" => ErrorClass::LockTimeout,
            "23505" => ErrorClass::UniqueViolation,
            // admin_shutdown, crash_shutdown, cannot_connect_now: the session is gone.
            "57P01" | "57P02" | "57P03" => ErrorClass::ConnectionLost,
            _ => ErrorClass::Sql(code.to_string()),
        };
        Self::reported(class, code.to_string(), message.into(), false)
    }

    /// An error a server reported, with its code (SQLSTATE, or MySQL's error number).
    fn reported(class: ErrorClass, code: String, message: String, mysql_code: bool) -> Self {
        Self {
            class,
            connect: None,
            code: Some(code),
            message,
            mysql_code,
        }
    }

    /// An error a MySQL or MariaDB server reported, classified by its error number.
    pub fn mysql(errno: u16, message: impl Into<String>) -> Self {
        let class = match errno {
            1213 => ErrorClass::Deadlock,
            1205 => ErrorClass::LockTimeout,
            // ER_CHECKREAD: MariaDB's write-conflict error under snapshot isolation.
            1020 => ErrorClass::Serialization,
            1062 => ErrorClass::UniqueViolation,
            // ER_UNKNOWN_COM_ERROR: what a Galera node outside the primary component answers.
            1047 => ErrorClass::NodeUnavailable,
            // Server shutting down, connection killed, and the client library's lost-connection
            // numbers (CR_SERVER_GONE_ERROR, CR_SERVER_LOST, CR_TCP_CONNECTION, ..._EXTENDED).
            1053 | 1927 | 2006 | 2013 | 2011 | 2055 => ErrorClass::ConnectionLost,
            _ => ErrorClass::Sql(errno.to_string()),
        };
        Self::reported(class, errno.to_string(), message.into(), true)
    }

    /// The connection broke (I/O error, EOF, protocol desync).
    pub fn connection_lost(message: impl Into<String>) -> Self {
        Self {
            class: ErrorClass::ConnectionLost,
            connect: None,
            code: None,
            message: message.into(),
            mysql_code: false,
        }
    }

    /// A script's run-time error at `place` (`file:line`), in pgbench's words.
    pub fn script(place: &str, message: &str) -> Self {
        let what = format!("{place}: {message}");
        Self {
            class: ErrorClass::Script(what.clone()),
            connect: None,
            code: None,
            message: what,
            mysql_code: false,
        }
    }

    /// A connection attempt failed.
    pub fn connect(failure: ConnectFailure, message: impl Into<String>) -> Self {
        Self {
            class: ErrorClass::Connect,
            connect: Some(failure),
            code: None,
            message: message.into(),
            mysql_code: false,
        }
    }

    /// A MySQL server refused the connection with error `errno` (e.g. 1045 bad password).
    pub fn mysql_connect(failure: ConnectFailure, errno: u16, message: impl Into<String>) -> Self {
        Self {
            code: Some(errno.to_string()),
            mysql_code: true,
            ..Self::connect(failure, message)
        }
    }

    /// A malformed URL or option: the user's input, not the server.
    pub fn invalid_target(message: impl Into<String>) -> Self {
        Self::connect(ConnectFailure::InvalidTarget, message)
    }

    /// True for errors that ended the session; the engine reconnects.
    pub fn is_connection_lost(&self) -> bool {
        self.class == ErrorClass::ConnectionLost
    }

    /// True when the node behind the session is gone or will not serve: the session is
    /// dropped and its client tries the target's other nodes.
    pub fn is_node_lost(&self) -> bool {
        matches!(
            self.class,
            ErrorClass::ConnectionLost | ErrorClass::NodeUnavailable | ErrorClass::ClientTimeout
        )
    }

    /// The client's deadline passed while the server was still working on it.
    pub fn client_timeout(limit_s: f64) -> Self {
        Self {
            class: ErrorClass::ClientTimeout,
            connect: None,
            code: None,
            message: format!(
                "no answer within the client's {limit_s} s transaction deadline; the statement \
                 was cancelled and the session closed"
            ),
            mysql_code: false,
        }
    }

    /// True when the target URL itself is malformed.
    pub fn is_invalid_target(&self) -> bool {
        self.connect == Some(ConnectFailure::InvalidTarget)
    }
}

impl fmt::Display for DbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.code {
            Some(code) if self.mysql_code => write!(f, "{} (MySQL error {code})", self.message),
            Some(code) => write!(f, "{} (SQLSTATE {code})", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for DbError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mysql_error_numbers_are_classified() {
        assert_eq!(DbError::mysql(1213, "x").class, ErrorClass::Deadlock);
        assert_eq!(DbError::mysql(1205, "x").class, ErrorClass::LockTimeout);
        assert_eq!(DbError::mysql(1062, "x").class, ErrorClass::UniqueViolation);
        assert_eq!(DbError::mysql(1020, "x").class, ErrorClass::Serialization);
        assert!(DbError::mysql(2013, "x").is_connection_lost());
        let wsrep = DbError::mysql(1047, "WSREP has not yet prepared node for application use");
        assert_eq!(wsrep.class.key(), "node_unavailable");
        assert!(wsrep.is_node_lost() && !wsrep.is_connection_lost());
        assert!(DbError::sql("57P01", "terminating connection").is_node_lost());
        let other = DbError::mysql(1146, "Table 'db.t' doesn't exist");
        assert_eq!(other.class, ErrorClass::Sql("1146".into()));
        assert_eq!(other.class.key(), "sql_1146");
        assert!(other.to_string().ends_with("(MySQL error 1146)"), "{other}");
        assert!(DbError::sql("40P01", "x")
            .to_string()
            .ends_with("(SQLSTATE 40P01)"));
    }

    #[test]
    fn lock_timeouts_are_retryable_by_default() {
        assert!(ErrorClass::LockTimeout.is_retryable());
        assert!(!ErrorClass::UniqueViolation.is_retryable());
    }
}

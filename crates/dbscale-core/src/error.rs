//! The crate's one error type. Every variant knows its kind (a stable key the Python side maps to
//! its exception tree) and a hint for the user.

use crate::driver::{ConnectFailure, DbError};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Malformed configuration: bad values, unknown workload or parameter.
    #[error("{0}")]
    Config(String),
    /// A connection could not be made.
    #[error("cannot connect to {target}: {source}")]
    Connect { target: String, source: DbError },
    /// The workload's tables are missing or incomplete.
    #[error("{0}")]
    NotPrepared(String),
    /// A statement failed outside the measured loop (prepare, cleanup, checks).
    #[error("{context}: {source}")]
    Sql { context: String, source: DbError },
    /// A bug or an environment failure (threads, runtime).
    #[error("{0}")]
    Internal(String),
}

impl Error {
    /// Stable key for the Python exception tree.
    pub fn kind(&self) -> &'static str {
        match self {
            Error::Config(_) => "config",
            Error::Connect { source, .. } => match source.connect {
                Some(ConnectFailure::Unreachable) => "connect_unreachable",
                Some(ConnectFailure::Authentication) => "connect_auth",
                Some(ConnectFailure::DatabaseMissing) => "connect_database",
                Some(ConnectFailure::Tls) => "connect_tls",
                Some(ConnectFailure::Unavailable) => "connect_unavailable",
                Some(ConnectFailure::InvalidTarget) => "connect_invalid",
                Some(ConnectFailure::Protocol) | None => "connect_unreachable",
            },
            Error::NotPrepared(_) => "not_prepared",
            Error::Sql { .. } => "sql",
            Error::Internal(_) => "internal",
        }
    }

    /// What the user can do about it.
    pub fn hint(&self) -> String {
        match self {
            Error::Config(_) => "check the option's spelling and value; `dbscale workloads` lists workloads and their parameters".into(),
            Error::Connect { source, .. } => match source.connect {
                Some(ConnectFailure::Unreachable) => "is the server running and listening there? check host, port or socket directory".into(),
                Some(ConnectFailure::Authentication) => "check the user and password in the URL (or PGPASSWORD) and the server's pg_hba.conf".into(),
                Some(ConnectFailure::DatabaseMissing) => "create the database first (e.g. `createdb NAME`) or name an existing one in the URL".into(),
                Some(ConnectFailure::Tls) => "check --tls (disable/prefer/require/verify-ca/verify-full) and sslrootcert against what the server offers".into(),
                Some(ConnectFailure::Unavailable) => "the server is starting, stopping or out of connection slots; wait or lower --clients".into(),
                Some(ConnectFailure::InvalidTarget) => "use postgresql://user[:password]@host[:port]/dbname or libpq key=value form".into(),
                Some(ConnectFailure::Protocol) | None => "is that a PostgreSQL server? check host and port".into(),
            },
            Error::NotPrepared(_) => "run `dbscale prepare WORKLOAD --target URL` first (with the same --set parameters)".into(),
            Error::Sql { .. } => "the server refused a statement; its message above says why".into(),
            Error::Internal(_) => "this is a dbscale bug; please report it with the command line".into(),
        }
    }
}

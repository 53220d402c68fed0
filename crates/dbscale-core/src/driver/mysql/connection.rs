//! [`MySqlConnection`]: one MySQL or MariaDB session, with the same API as the PostgreSQL one.
//! Sessions run on our lean client ([`LeanConnection`]: TCP with or without TLS, Unix sockets),
//! because the client's CPU per statement is what we measure. Only authentication the lean
//! client does not speak (plugins beyond `mysql_native_password` and `caching_sha2_password`,
//! or the latter's RSA exchange on a plain TCP connection) falls back to mysql_async.

use super::config::MySqlConfig;
use super::handshake::Unsupported;
use super::library::LibraryConnection;
use super::session::LeanConnection;
use crate::driver::{
    ConnectFailure, DbError, Param, QueryOutcome, QueryProtocol, ResultSet, Rows, Statement,
};

/// An open session on either client. Enum dispatch keeps the hot loop free of dynamic calls.
pub struct MySqlConnection(Inner);

enum Inner {
    Lean(Box<LeanConnection>),
    Library(LibraryConnection),
}

impl MySqlConnection {
    pub async fn connect(config: &MySqlConfig, protocol: QueryProtocol) -> Result<Self, DbError> {
        let limit = config.connect_timeout();
        let attempt = LeanConnection::connect(config, protocol);
        let outcome = tokio::time::timeout(limit, attempt).await.map_err(|_| {
            DbError::connect(
                ConnectFailure::Unreachable,
                format!("no answer within {:.0} s", limit.as_secs_f64()),
            )
        })??;
        match outcome {
            Ok(conn) => {
                let _ = config.version.set(conn.version.clone());
                Ok(MySqlConnection(Inner::Lean(Box::new(conn))))
            }
            // An authentication step only the library speaks (RSA key exchange, other
            // plugins): it starts over with its own connection.
            Err(Unsupported::Auth) => Ok(MySqlConnection(Inner::Library(
                LibraryConnection::connect(config, protocol).await?,
            ))),
        }
    }

    /// Makes `statements` executable by index: prepared on the server, or split for inlining.
    pub async fn prepare(&mut self, statements: &[Statement]) -> Result<(), DbError> {
        match &mut self.0 {
            Inner::Lean(c) => c.prepare(statements).await,
            Inner::Library(c) => c.prepare(statements).await,
        }
    }

    #[inline]
    pub async fn execute(
        &mut self,
        index: usize,
        params: &[Param<'_>],
    ) -> Result<QueryOutcome, DbError> {
        match &mut self.0 {
            Inner::Lean(c) => c.execute(index, params).await,
            Inner::Library(c) => c.execute(index, params).await,
        }
    }

    pub async fn fetch(&mut self, index: usize, params: &[Param<'_>]) -> Result<Rows, DbError> {
        match &mut self.0 {
            Inner::Lean(c) => c.fetch(index, params).await,
            Inner::Library(c) => c.fetch(index, params).await,
        }
    }

    /// Runs SQL text, possibly several statements; the outcome adds theirs up.
    pub async fn batch(&mut self, sql: &str) -> Result<QueryOutcome, DbError> {
        match &mut self.0 {
            Inner::Lean(c) => c.batch(sql).await,
            Inner::Library(c) => c.batch(sql).await,
        }
    }

    /// Runs SQL text and returns the rows of its first result set as text.
    pub async fn query(&mut self, sql: &str) -> Result<Rows, DbError> {
        match &mut self.0 {
            Inner::Lean(c) => c.query(sql).await,
            Inner::Library(c) => c.query(sql).await,
        }
    }

    /// Like [`MySqlConnection::execute`], returning the result with its column names.
    pub async fn execute_sets(
        &mut self,
        index: usize,
        params: &[Param<'_>],
    ) -> Result<Vec<ResultSet>, DbError> {
        match &mut self.0 {
            Inner::Lean(c) => c.execute_sets(index, params).await,
            Inner::Library(c) => c.execute_sets(index, params).await,
        }
    }

    /// Runs SQL text; each statement's result with its column names.
    pub async fn query_sets(&mut self, sql: &str) -> Result<Vec<ResultSet>, DbError> {
        match &mut self.0 {
            Inner::Lean(c) => c.query_sets(sql).await,
            Inner::Library(c) => c.query_sets(sql).await,
        }
    }

    /// Bulk load: `sql` is a `LOAD DATA LOCAL INFILE` statement and `chunks` its data (the lean
    /// client only; the library's sessions load with INSERTs). Returns the rows loaded.
    pub async fn copy_in(
        &mut self,
        sql: &str,
        chunks: impl Iterator<Item = impl AsRef<[u8]>>,
    ) -> Result<u64, DbError> {
        match &mut self.0 {
            Inner::Lean(c) => c.load_local(sql, chunks).await,
            Inner::Library(c) => c.copy_in(sql, chunks).await,
        }
    }

    /// Rolls back whatever transaction an error left open (a no-op outside one).
    pub async fn reset(&mut self) -> Result<(), DbError> {
        match &mut self.0 {
            Inner::Lean(c) => c.reset().await,
            Inner::Library(c) => c.reset().await,
        }
    }

    pub fn server_version(&self) -> &str {
        match &self.0 {
            Inner::Lean(c) => &c.version,
            Inner::Library(c) => c.server_version(),
        }
    }

    /// The server's id of this session, for `KILL QUERY` (our own wire client's sessions).
    pub fn connection_id(&self) -> Option<u32> {
        match &self.0 {
            Inner::Lean(c) => Some(c.connection_id),
            Inner::Library(_) => None,
        }
    }

    /// Whether our own wire client serves this session (else mysql_async, the fallback).
    pub fn is_lean(&self) -> bool {
        matches!(self.0, Inner::Lean(_))
    }

    pub fn is_tls(&self) -> bool {
        match &self.0 {
            Inner::Lean(c) => c.is_tls(),
            Inner::Library(c) => c.is_tls(),
        }
    }

    pub async fn close(self) {
        match self.0 {
            Inner::Lean(c) => c.close().await,
            Inner::Library(c) => c.close().await,
        }
    }
}

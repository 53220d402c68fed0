//! [`MySqlConnection`]: one MySQL or MariaDB session, with the same API as the PostgreSQL one.
//! Plain TCP sessions run on our lean client ([`LeanConnection`]), because the client's CPU per
//! statement is what we measure; TLS, Unix sockets and authentication beyond the
//! `mysql_native_password` and `caching_sha2_password` fast paths run on mysql_async.

use std::sync::atomic::Ordering;

use super::config::MySqlConfig;
use super::library::LibraryConnection;
use super::session::{LeanConnection, Unsupported};
use crate::driver::{
    ConnectFailure, DbError, Param, QueryOutcome, QueryProtocol, Rows, Statement, TlsMode,
};

/// An open session on either client. Enum dispatch keeps the hot loop free of dynamic calls.
pub struct MySqlConnection(Inner);

enum Inner {
    Lean(Box<LeanConnection>),
    Library(LibraryConnection),
}

impl MySqlConnection {
    pub async fn connect(config: &MySqlConfig, protocol: QueryProtocol) -> Result<Self, DbError> {
        let mode = config.tls_mode();
        let lean = config.socket().is_none() && matches!(mode, TlsMode::Disable | TlsMode::Prefer);
        if lean {
            // Under `prefer` a server that offers TLS gets it, from the library.
            let allow_tls_offer = mode == TlsMode::Disable;
            let limit = config.connect_timeout();
            let attempt = LeanConnection::connect(config, protocol, allow_tls_offer);
            let outcome = tokio::time::timeout(limit, attempt).await.map_err(|_| {
                DbError::connect(
                    ConnectFailure::Unreachable,
                    format!("no answer within {:.0} s", limit.as_secs_f64()),
                )
            })??;
            match outcome {
                Ok(conn) => {
                    if mode == TlsMode::Prefer {
                        config.no_tls_offered.store(true, Ordering::Relaxed);
                    }
                    let _ = config.version.set(conn.version.clone());
                    return Ok(MySqlConnection(Inner::Lean(Box::new(conn))));
                }
                Err(Unsupported::TlsOffered | Unsupported::Auth) => {}
            }
        }
        Ok(MySqlConnection(Inner::Library(
            LibraryConnection::connect(config, protocol).await?,
        )))
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

    /// `COPY` is PostgreSQL's; MySQL targets load with multi-row INSERTs.
    pub async fn copy_in(
        &mut self,
        sql: &str,
        chunks: impl Iterator<Item = bytes::Bytes>,
    ) -> Result<u64, DbError> {
        match &mut self.0 {
            Inner::Lean(_) => Err(DbError::mysql(
                1235,
                "COPY FROM STDIN is PostgreSQL's; MySQL targets load with INSERT",
            )),
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

    pub fn is_tls(&self) -> bool {
        match &self.0 {
            Inner::Lean(_) => false,
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

//! [`PgConnection`]: one session, with the request paths of the three query protocols.
//!
//! Every request is encoded into one reused buffer and leaves in one write; responses are framed
//! in place in one reused receive buffer. In steady state an `execute` allocates nothing.

use crate::driver::{
    DbError, Param, QueryOutcome, QueryProtocol, ResultSet, RowSink, Rows, Statement,
};

use super::backend::ReadBuffer;
use super::config::PgConfig;
use super::sql_template::SqlTemplate;
use super::{frontend, startup};
use crate::driver::transport::Transport;

/// Where the session stands between requests; lets a dropped (cancelled) request be recovered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SessionState {
    /// ReadyForQuery received; the next request can go.
    Idle,
    /// A whole request went out; its response (up to ReadyForQuery) is still unread.
    AwaitingResponse,
    /// The stream is unusable: I/O error, EOF, FATAL error, or a write cut short.
    Broken,
}

/// A statement as this connection sends it.
pub(super) struct PreparedStatement {
    pub label: String,
    /// Server-side name under the prepared protocol (`P_{index}`).
    pub name: String,
    pub sql: String,
    pub template: SqlTemplate,
    /// From Describe at prepare time (prepared protocol only).
    pub returns_rows: bool,
}

/// An open PostgreSQL session.
pub struct PgConnection {
    pub(super) transport: Transport,
    pub(super) reader: ReadBuffer,
    pub(super) wbuf: Vec<u8>,
    pub(super) protocol: QueryProtocol,
    pub(super) statements: Vec<PreparedStatement>,
    /// Named statements `P_0..` that may exist on the server (closed before re-preparing).
    pub(super) server_statements: usize,
    pub(super) state: SessionState,
    /// Transaction status from the last ReadyForQuery: `I`dle, in `T`ransaction, `E`rror.
    pub(super) tx_status: u8,
    pub(super) server_version: String,
    pub(super) backend_pid: i32,
    /// BackendKeyData's secret: with the pid, what a CancelRequest names.
    pub(super) cancel_secret: i32,
}

impl PgConnection {
    /// Opens a session (socket, TLS, authentication) within the config's connect timeout.
    pub async fn connect(
        config: &PgConfig,
        protocol: QueryProtocol,
    ) -> Result<PgConnection, DbError> {
        let attempt = async {
            let transport = startup::open_transport(config).await?;
            let mut connection = PgConnection {
                transport,
                reader: ReadBuffer::new(),
                wbuf: Vec::with_capacity(4096),
                protocol,
                statements: Vec::new(),
                server_statements: 0,
                state: SessionState::Idle,
                tx_status: b'I',
                server_version: String::new(),
                backend_pid: 0,
                cancel_secret: 0,
            };
            connection
                .start_session(config)
                .await
                .map_err(startup::connect_error)?;
            Ok(connection)
        };
        match config.connect_timeout() {
            None => attempt.await,
            Some(limit) => tokio::time::timeout(limit, attempt)
                .await
                .unwrap_or_else(|_| {
                    Err(DbError::connect(
                        crate::driver::ConnectFailure::Unreachable,
                        format!("timed out after {} s (connect_timeout)", limit.as_secs()),
                    ))
                }),
        }
    }

    /// Makes `statements` executable by index on this connection. Under the prepared protocol it
    /// parses them all on the server (`P_0`, `P_1`, …) in one round trip.
    pub async fn prepare(&mut self, statements: &[Statement]) -> Result<(), DbError> {
        self.ensure_idle().await?;
        if let Some(bad) = statements.iter().find(|s| s.sql.as_bytes().contains(&0)) {
            return Err(DbError::sql(
                "22021",
                format!("statement {} contains a NUL byte", bad.name),
            ));
        }
        self.statements = statements
            .iter()
            .enumerate()
            .map(|(i, s)| PreparedStatement {
                label: s.name.to_string(),
                name: format!("P_{i}"),
                sql: s.sql.clone(),
                template: SqlTemplate::new(&s.sql),
                returns_rows: false,
            })
            .collect();
        if self.protocol != QueryProtocol::Prepared {
            return Ok(());
        }
        self.wbuf.clear();
        // Closing a name that does not exist is no error, so this also covers a failed prepare.
        for i in 0..self.server_statements {
            frontend::close(&mut self.wbuf, b'S', &format!("P_{i}"))?;
        }
        for statement in &self.statements {
            frontend::parse(&mut self.wbuf, &statement.name, &statement.sql)?;
            frontend::describe(&mut self.wbuf, b'S', &statement.name)?;
        }
        frontend::sync(&mut self.wbuf);
        self.server_statements = self.statements.len();
        self.send().await?;
        self.read_prepare_response().await
    }

    /// Executes statement `index` (see [`PgConnection::prepare`]) and counts what it did.
    pub async fn execute(
        &mut self,
        index: usize,
        params: &[Param<'_>],
    ) -> Result<QueryOutcome, DbError> {
        self.send_statement(index, params).await?;
        let mut outcome = self.read_response(RowSink::Count).await?;
        outcome.returned_result_set |= self.statements[index].returns_rows;
        Ok(outcome)
    }

    /// Like [`PgConnection::execute`], returning the rows as text.
    pub async fn fetch(&mut self, index: usize, params: &[Param<'_>]) -> Result<Rows, DbError> {
        self.send_statement(index, params).await?;
        let mut rows = Rows::new();
        self.read_response(RowSink::Rows(&mut rows)).await?;
        Ok(rows)
    }

    /// Like [`PgConnection::execute`], returning the result with its column names.
    pub async fn execute_sets(
        &mut self,
        index: usize,
        params: &[Param<'_>],
    ) -> Result<Vec<ResultSet>, DbError> {
        self.ensure_idle().await?;
        self.wbuf.clear();
        self.encode_statement(index, params, true)?;
        if self.protocol != QueryProtocol::Simple {
            frontend::sync(&mut self.wbuf);
        }
        self.send().await?;
        let mut sets = Vec::new();
        self.read_response(RowSink::Sets(&mut sets)).await?;
        Ok(sets)
    }

    /// Pipeline mode (extended and prepared protocols): the statements pushed from here on
    /// queue up and go to the server together at [`PgConnection::pipeline_sync`].
    pub async fn pipeline_begin(&mut self) -> Result<(), DbError> {
        if self.protocol == QueryProtocol::Simple {
            return Err(DbError::sql(
                "0A000",
                "cannot use pipeline mode with the simple query protocol",
            ));
        }
        self.ensure_idle().await?;
        self.wbuf.clear();
        Ok(())
    }

    /// Queues statement `index` in the pipeline.
    pub fn pipeline_push(&mut self, index: usize, params: &[Param<'_>]) -> Result<(), DbError> {
        self.encode_statement(index, params, false)
    }

    /// Sends the queued statements with a Sync and reads every result, one per statement.
    /// After an error the server skips the rest until the Sync: the error is returned.
    pub async fn pipeline_sync(&mut self) -> Result<Vec<ResultSet>, DbError> {
        frontend::sync(&mut self.wbuf);
        self.send().await?;
        let mut sets = Vec::new();
        let read = self.read_response(RowSink::Sets(&mut sets)).await;
        self.wbuf.clear();
        read.map(|_| sets)
    }

    /// Runs SQL text with the simple protocol; it may hold several statements.
    pub async fn batch(&mut self, sql: &str) -> Result<QueryOutcome, DbError> {
        self.send_query(sql).await?;
        self.read_response(RowSink::Count).await
    }

    /// Runs SQL text with the simple protocol; each statement's result with its columns.
    pub async fn query_sets(&mut self, sql: &str) -> Result<Vec<ResultSet>, DbError> {
        self.send_query(sql).await?;
        let mut sets = Vec::new();
        self.read_response(RowSink::Sets(&mut sets)).await?;
        Ok(sets)
    }

    /// Runs SQL text with the simple protocol and returns all rows it produced, as text.
    pub async fn query(&mut self, sql: &str) -> Result<Rows, DbError> {
        self.send_query(sql).await?;
        let mut rows = Rows::new();
        self.read_response(RowSink::Rows(&mut rows)).await?;
        Ok(rows)
    }

    /// Makes the connection usable after an error: reads any response a cancelled request left
    /// behind, then rolls back an open or failed transaction.
    pub async fn reset(&mut self) -> Result<(), DbError> {
        self.ensure_idle().await?;
        if self.tx_status != b'I' {
            self.batch("ROLLBACK").await?;
        }
        Ok(())
    }

    /// `server_version` as the server reported it at startup (e.g. `15.4 (Debian 15.4-1)`).
    pub fn server_version(&self) -> &str {
        &self.server_version
    }

    pub fn is_tls(&self) -> bool {
        self.transport.is_tls()
    }

    /// Inside a transaction block, healthy or failed, as of the last response.
    pub fn in_transaction(&self) -> bool {
        self.tx_status != b'I'
    }

    /// BackendKeyData's secret, which a CancelRequest for this session must name.
    pub fn cancel_secret(&self) -> i32 {
        self.cancel_secret
    }

    /// The server process serving this session (`pg_backend_pid()`).
    pub fn backend_pid(&self) -> i32 {
        self.backend_pid
    }

    /// Ends the session politely (Terminate), then closes the socket.
    pub async fn close(mut self) {
        if self.state != SessionState::Broken {
            self.wbuf.clear();
            frontend::terminate(&mut self.wbuf);
            let _ = self.transport.write_all(&self.wbuf).await;
            self.transport.shutdown().await;
        }
    }

    /// Encodes and sends statement `index` under the connection's protocol.
    async fn send_statement(&mut self, index: usize, params: &[Param<'_>]) -> Result<(), DbError> {
        self.ensure_idle().await?;
        self.wbuf.clear();
        self.encode_statement(index, params, false)?;
        if self.protocol != QueryProtocol::Simple {
            frontend::sync(&mut self.wbuf);
        }
        self.send().await
    }

    /// Appends statement `index` to the request buffer (without the Sync of the extended
    /// protocols); `describe` asks for its RowDescription (the column names).
    fn encode_statement(
        &mut self,
        index: usize,
        params: &[Param<'_>],
        describe: bool,
    ) -> Result<(), DbError> {
        let Some(statement) = self.statements.get(index) else {
            return Err(DbError::sql(
                "26000",
                format!("statement {index} was not prepared on this connection"),
            ));
        };
        let out = &mut self.wbuf;
        match self.protocol {
            QueryProtocol::Simple => {
                return frontend::query_with(out, |out| statement.template.render(params, out));
            }
            QueryProtocol::Extended => {
                frontend::parse(out, "", &statement.sql)?;
                frontend::bind(out, "", params)?;
            }
            QueryProtocol::Prepared => frontend::bind(out, &statement.name, params)?,
        }
        if describe {
            frontend::describe(out, b'P', "")?;
        }
        frontend::execute(out);
        Ok(())
    }

    async fn send_query(&mut self, sql: &str) -> Result<(), DbError> {
        self.ensure_idle().await?;
        self.wbuf.clear();
        frontend::query(&mut self.wbuf, sql)?;
        self.send().await
    }

    /// Writes the request buffer. A write cut short (error, or the future dropped) leaves half a
    /// message on the wire, so the session counts as broken until the whole request is out.
    pub(super) async fn send(&mut self) -> Result<(), DbError> {
        self.state = SessionState::Broken;
        self.transport
            .write_all(&self.wbuf)
            .await
            .map_err(|e| DbError::connection_lost(format!("sending to the server failed: {e}")))?;
        self.state = SessionState::AwaitingResponse;
        Ok(())
    }

    /// Ready for a new request: drains the response of a request whose caller went away.
    pub(super) async fn ensure_idle(&mut self) -> Result<(), DbError> {
        match self.state {
            SessionState::Idle => Ok(()),
            SessionState::AwaitingResponse => {
                // The abandoned request's outcome, error or not, is of interest to no one.
                match self.read_response(RowSink::Count).await {
                    Err(e) if self.state == SessionState::Broken => Err(e),
                    _ => Ok(()),
                }
            }
            SessionState::Broken => Err(DbError::connection_lost(
                "the connection was closed after an earlier error",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Engines may move connections (and their pending requests) between tasks.
    #[allow(dead_code)]
    fn connection_and_requests_are_send(conn: &mut PgConnection) {
        fn is_send<T: Send>(_: &T) {}
        is_send(conn);
        is_send(&conn.execute(0, &[]));
        is_send(&conn.fetch(0, &[]));
        is_send(&conn.prepare(&[]));
        is_send(&conn.copy_in("", std::iter::empty::<&[u8]>()));
    }
}

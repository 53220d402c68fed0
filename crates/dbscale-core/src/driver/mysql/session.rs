//! [`LeanConnection`]: our own MySQL client protocol session over plain TCP, on the same
//! transport as the PostgreSQL client: one reused buffer and one write per request, packets
//! framed in place, rows counted without being decoded. In steady state an `execute` allocates
//! nothing. Under `prepared`/`extended` statements are prepared once per connection
//! (COM_STMT_PREPARE) and run with COM_STMT_EXECUTE; under `simple` they go as COM_QUERY text with
//! the literals inlined.

use super::config::MySqlConfig;
use super::errors::UNSUPPORTED_PS;
use super::handshake::{self, Unsupported, CLIENT_DEPRECATE_EOF};
use super::literal::TextTemplate;
use super::wire::{self, PacketBuffer, Reader, ERR};
use crate::driver::transport::Transport;
use crate::driver::{
    ConnectFailure, DbError, Param, QueryOutcome, QueryProtocol, ResultSet, RowSink, Rows,
    Statement,
};

const COM_QUIT: u8 = 0x01;
pub(super) const COM_QUERY: u8 = 0x03;
const COM_STMT_PREPARE: u8 = 0x16;
pub(super) const COM_STMT_EXECUTE: u8 = 0x17;
const COM_STMT_CLOSE: u8 = 0x19;

const TYPE_DOUBLE: u8 = 0x05;
const TYPE_NULL: u8 = 0x06;
const TYPE_LONGLONG: u8 = 0x08;
const TYPE_VAR_STRING: u8 = 0xFD;

/// A statement as this connection runs it.
enum Prepared {
    /// Prepared on the server: its id and parameter count.
    Server {
        id: u32,
        params: usize,
    },
    Text(TextTemplate),
}

pub(super) struct LeanConnection {
    pub(super) transport: Transport,
    pub(super) reader: PacketBuffer,
    pub(super) wbuf: Vec<u8>,
    text: String,
    protocol: QueryProtocol,
    statements: Vec<Prepared>,
    capabilities: u32,
    /// A request went out and its response was not read to the end (a cancelled call).
    pub(super) broken: bool,
    pub(super) version: String,
    /// The server's id of this session (`KILL QUERY` cancels its statement).
    pub(super) connection_id: u32,
}

impl LeanConnection {
    /// Connects and authenticates. `Ok(Err(_))` asks the caller to use the library.
    pub(super) async fn connect(
        config: &MySqlConfig,
        protocol: QueryProtocol,
    ) -> Result<Result<LeanConnection, Unsupported>, DbError> {
        let session = match handshake::establish(config).await {
            Ok(Ok(session)) => session,
            Ok(Err(why)) => return Ok(Err(why)),
            Err(e) if e.connect.is_some() => return Err(e),
            Err(e) => return Err(DbError::connect(ConnectFailure::Protocol, e.to_string())),
        };
        Ok(Ok(LeanConnection {
            transport: session.transport,
            reader: session.reader,
            wbuf: Vec::with_capacity(4096),
            text: String::new(),
            protocol,
            statements: Vec::new(),
            capabilities: session.capabilities,
            broken: false,
            version: session.version,
            connection_id: session.connection_id,
        }))
    }

    pub(super) fn is_tls(&self) -> bool {
        self.transport.is_tls()
    }

    pub(super) async fn prepare(&mut self, statements: &[Statement]) -> Result<(), DbError> {
        self.check_usable()?;
        let old: Vec<u32> = self
            .statements
            .drain(..)
            .filter_map(|p| match p {
                Prepared::Server { id, .. } => Some(id),
                Prepared::Text(_) => None,
            })
            .collect();
        if !old.is_empty() {
            // COM_STMT_CLOSE has no response: all of them leave in one write.
            self.wbuf.clear();
            for id in old {
                let at = wire::start_packet(&mut self.wbuf, 0);
                self.wbuf.push(COM_STMT_CLOSE);
                self.wbuf.extend_from_slice(&id.to_le_bytes());
                wire::finish_packet(&mut self.wbuf, at)?;
            }
            self.send().await?;
        }
        for statement in statements {
            let prepared = match self.protocol {
                QueryProtocol::Simple => Prepared::Text(TextTemplate::parse(&statement.sql)),
                QueryProtocol::Extended | QueryProtocol::Prepared => {
                    match self.prepare_one(&statement.sql).await {
                        Ok(prepared) => prepared,
                        Err(e) if e.code == Some(UNSUPPORTED_PS.to_string()) => {
                            Prepared::Text(TextTemplate::parse(&statement.sql))
                        }
                        Err(e) => return Err(e),
                    }
                }
            };
            self.statements.push(prepared);
        }
        Ok(())
    }

    async fn prepare_one(&mut self, sql: &str) -> Result<Prepared, DbError> {
        self.command(COM_STMT_PREPARE, sql.as_bytes())?;
        self.send().await?;
        let (_, payload) = self.read_packet().await?;
        if payload.first() == Some(&ERR) {
            self.broken = false;
            return Err(wire::err_packet(&payload));
        }
        let mut r = Reader::new(&payload);
        r.u8();
        let id = r.uint(4) as u32;
        let columns = r.uint(2) as usize;
        let params = r.uint(2) as usize;
        for count in [params, columns] {
            if count > 0 {
                for _ in 0..count {
                    self.read_packet().await?;
                }
                if !self.deprecate_eof() {
                    self.read_packet().await?;
                }
            }
        }
        self.broken = false;
        Ok(Prepared::Server { id, params })
    }

    #[inline]
    pub(super) async fn execute(
        &mut self,
        index: usize,
        params: &[Param<'_>],
    ) -> Result<QueryOutcome, DbError> {
        self.send_statement(index, params).await?;
        self.read_response(RowSink::Count).await
    }

    pub(super) async fn fetch(
        &mut self,
        index: usize,
        params: &[Param<'_>],
    ) -> Result<Rows, DbError> {
        let mut rows = Rows::new();
        self.send_statement(index, params).await?;
        self.read_response(RowSink::Rows(&mut rows))
            .await
            .map(|_| rows)
    }

    pub(super) async fn execute_sets(
        &mut self,
        index: usize,
        params: &[Param<'_>],
    ) -> Result<Vec<ResultSet>, DbError> {
        let mut sets = Vec::new();
        self.send_statement(index, params).await?;
        self.read_response(RowSink::Sets(&mut sets)).await?;
        Ok(sets)
    }

    pub(super) async fn batch(&mut self, sql: &str) -> Result<QueryOutcome, DbError> {
        self.send_query(sql).await?;
        self.read_response(RowSink::Count).await
    }

    pub(super) async fn query(&mut self, sql: &str) -> Result<Rows, DbError> {
        self.send_query(sql).await?;
        let mut rows = Rows::new();
        self.read_response(RowSink::Rows(&mut rows)).await?;
        Ok(rows)
    }

    pub(super) async fn query_sets(&mut self, sql: &str) -> Result<Vec<ResultSet>, DbError> {
        self.send_query(sql).await?;
        let mut sets = Vec::new();
        self.read_response(RowSink::Sets(&mut sets)).await?;
        Ok(sets)
    }

    /// Sends SQL text (COM_QUERY); its response is the caller's to read.
    async fn send_query(&mut self, sql: &str) -> Result<(), DbError> {
        self.check_usable()?;
        self.command(COM_QUERY, sql.as_bytes())?;
        self.send().await
    }

    pub(super) async fn reset(&mut self) -> Result<(), DbError> {
        self.batch("ROLLBACK").await.map(|_| ())
    }

    pub(super) async fn close(mut self) {
        if !self.broken {
            self.wbuf.clear();
            let _ = self.command(COM_QUIT, &[]);
            let _ = self.transport.write_all(&self.wbuf).await;
        }
    }

    pub(super) fn deprecate_eof(&self) -> bool {
        self.capabilities & CLIENT_DEPRECATE_EOF != 0
    }

    pub(super) fn check_usable(&self) -> Result<(), DbError> {
        if self.broken {
            return Err(DbError::connection_lost(
                "the connection was left mid-response by a cancelled request",
            ));
        }
        Ok(())
    }

    /// One command packet (sequence 0) in the request buffer.
    pub(super) fn command(&mut self, command: u8, body: &[u8]) -> Result<(), DbError> {
        self.wbuf.clear();
        let at = wire::start_packet(&mut self.wbuf, 0);
        self.wbuf.push(command);
        self.wbuf.extend_from_slice(body);
        wire::finish_packet(&mut self.wbuf, at)
    }

    async fn send_statement(&mut self, index: usize, params: &[Param<'_>]) -> Result<(), DbError> {
        self.check_usable()?;
        let Self {
            statements,
            wbuf,
            text,
            ..
        } = self;
        let Some(statement) = statements.get(index) else {
            return Err(DbError::mysql(
                1243,
                format!("statement {index} was not prepared on this connection"),
            ));
        };
        wbuf.clear();
        let at = wire::start_packet(wbuf, 0);
        match statement {
            Prepared::Text(template) => {
                template.render(params, text)?;
                wbuf.push(COM_QUERY);
                wbuf.extend_from_slice(text.as_bytes());
            }
            Prepared::Server { id, params: count } => {
                if params.len() != *count {
                    return Err(DbError::mysql(
                        1210,
                        format!(
                            "{} parameters given, the statement takes {count}",
                            params.len()
                        ),
                    ));
                }
                encode_execute(wbuf, *id, params);
            }
        }
        wire::finish_packet(wbuf, at)?;
        self.send().await
    }

    pub(super) async fn send(&mut self) -> Result<(), DbError> {
        self.broken = true;
        self.transport
            .write_all(&self.wbuf)
            .await
            .map_err(|e| DbError::connection_lost(format!("sending to the server failed: {e}")))
    }

    /// Sends `bytes` as they are (the body of a packet whose header went before).
    pub(super) async fn send_bytes(&mut self, bytes: &[u8]) -> Result<(), DbError> {
        self.broken = true;
        self.transport
            .write_all(bytes)
            .await
            .map_err(|e| DbError::connection_lost(format!("sending to the server failed: {e}")))
    }

    /// Reads one packet into a fresh vector (prepare only: not the hot path).
    async fn read_packet(&mut self) -> Result<(u8, Vec<u8>), DbError> {
        handshake::read_packet(&mut self.transport, &mut self.reader).await
    }

    pub(super) async fn fill(&mut self) -> Result<(), DbError> {
        let n = self
            .transport
            .read(self.reader.spare())
            .await
            .map_err(|e| {
                DbError::connection_lost(format!("reading from the server failed: {e}"))
            })?;
        if n == 0 {
            return Err(DbError::connection_lost("the server closed the connection"));
        }
        self.reader.filled(n);
        Ok(())
    }
}

/// COM_STMT_EXECUTE's body: no cursor, one iteration, NULL bitmap, types, values.
fn encode_execute(out: &mut Vec<u8>, id: u32, params: &[Param<'_>]) {
    out.push(COM_STMT_EXECUTE);
    out.extend_from_slice(&id.to_le_bytes());
    out.push(0);
    out.extend_from_slice(&1u32.to_le_bytes());
    if params.is_empty() {
        return;
    }
    let bitmap = out.len();
    out.resize(bitmap + params.len().div_ceil(8), 0);
    out.push(1); // types follow
    for (i, p) in params.iter().enumerate() {
        let kind = match p {
            Param::Int(_) => TYPE_LONGLONG,
            Param::Float(_) => TYPE_DOUBLE,
            Param::Text(_) => TYPE_VAR_STRING,
            Param::Null => {
                out[bitmap + i / 8] |= 1 << (i % 8);
                TYPE_NULL
            }
        };
        out.extend_from_slice(&[kind, 0]);
    }
    for p in params {
        match p {
            Param::Int(v) => out.extend_from_slice(&v.to_le_bytes()),
            Param::Float(v) => out.extend_from_slice(&v.to_le_bytes()),
            Param::Text(s) => wire::put_lenenc_bytes(out, s.as_bytes()),
            Param::Null => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn execute_encodes_types_and_null_bitmap() {
        let mut out = Vec::new();
        encode_execute(
            &mut out,
            7,
            &[Param::Int(1), Param::Null, Param::Text("ab")],
        );
        assert_eq!(&out[..10], &[COM_STMT_EXECUTE, 7, 0, 0, 0, 0, 1, 0, 0, 0]);
        assert_eq!(out[10], 0b010, "bitmap");
        assert_eq!(out[11], 1, "types follow");
        assert_eq!(
            &out[12..18],
            &[TYPE_LONGLONG, 0, TYPE_NULL, 0, TYPE_VAR_STRING, 0]
        );
        assert_eq!(&out[18..26], &1i64.to_le_bytes());
        assert_eq!(&out[26..], &[2, b'a', b'b']);
    }
}

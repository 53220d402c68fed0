//! [`LibraryConnection`]: a session on mysql_async, for what the lean client does not do (TLS,
//! Unix sockets, authentication beyond the fast paths).
//! Under `prepared` (and `extended`, which MySQL has no separate form of) statements are prepared
//! on the server once per connection and executed with the binary protocol; under `simple` they
//! travel as text with the parameters inlined, like sysbench's `--db-ps-mode=disable`.

use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};

use mysql_async::prelude::{Protocol, Queryable};
use mysql_async::{Conn, DriverError, Error, Params, QueryResult, Value};

use super::config::MySqlConfig;
use super::errors::{connect_error, query_error, UNSUPPORTED_PS};
use super::literal::TextTemplate;
use crate::driver::{
    ConnectFailure, DbError, Param, QueryOutcome, QueryProtocol, ResultSet, Rows, Statement,
    TlsMode,
};

/// ER_NOT_SUPPORTED_YET.
const NOT_SUPPORTED: u16 = 1235;

/// A statement as this connection runs it.
enum Prepared {
    /// Prepared on the server; executed with the binary protocol.
    Server(mysql_async::Statement),
    /// Sent as text with literals inlined.
    Text(TextTemplate),
}

pub(super) struct LibraryConnection {
    conn: Conn,
    protocol: QueryProtocol,
    statements: Vec<Prepared>,
    /// Reused buffer for text-protocol statements.
    text: String,
    version: Arc<OnceLock<String>>,
    tls: bool,
}

/// Runs prepared statement `index` with `params` (server-prepared, or rendered into text) and
/// reads its result, binary or text, with `read` (`drain` or `collect`).
macro_rules! run_statement {
    ($self:ident, $index:ident, $params:ident, $read:ident) => {{
        let Self {
            conn,
            statements,
            text,
            ..
        } = $self;
        match &statements[$index] {
            Prepared::Server(handle) => {
                let result = conn.exec_iter(handle, bind($params)).await;
                $read(result.map_err(query_error)?).await
            }
            Prepared::Text(template) => {
                template.render($params, text)?;
                let result = conn.query_iter(text.as_str()).await;
                $read(result.map_err(query_error)?).await
            }
        }
    }};
}

impl LibraryConnection {
    pub async fn connect(config: &MySqlConfig, protocol: QueryProtocol) -> Result<Self, DbError> {
        let (conn, tls) = open(config).await?;
        let mut connection = Self {
            conn,
            protocol,
            statements: Vec::new(),
            text: String::new(),
            version: config.version.clone(),
            tls,
        };
        // The handshake's version is parsed to numbers by the library; the full string (with
        // "-MariaDB") is read once per target and shared, so reconnects cost no extra query.
        if connection.version.get().is_none() {
            let rows = connection.query("SELECT VERSION()").await?;
            let version = rows
                .into_iter()
                .next()
                .and_then(|row| row.into_iter().next().flatten())
                .unwrap_or_default();
            let _ = connection.version.set(version);
        }
        Ok(connection)
    }

    /// Makes `statements` executable by index: prepared on the server, or split for inlining.
    pub async fn prepare(&mut self, statements: &[Statement]) -> Result<(), DbError> {
        self.statements.clear();
        for statement in statements {
            let prepared = match self.protocol {
                QueryProtocol::Simple => Prepared::Text(TextTemplate::parse(&statement.sql)),
                QueryProtocol::Extended | QueryProtocol::Prepared => {
                    match self.conn.prep(statement.sql.as_str()).await {
                        Ok(handle) => Prepared::Server(handle),
                        Err(Error::Server(e)) if e.code == UNSUPPORTED_PS => {
                            Prepared::Text(TextTemplate::parse(&statement.sql))
                        }
                        Err(e) => return Err(query_error(e)),
                    }
                }
            };
            self.statements.push(prepared);
        }
        Ok(())
    }

    #[inline]
    pub async fn execute(
        &mut self,
        index: usize,
        params: &[Param<'_>],
    ) -> Result<QueryOutcome, DbError> {
        run_statement!(self, index, params, drain)
    }

    pub async fn fetch(&mut self, index: usize, params: &[Param<'_>]) -> Result<Rows, DbError> {
        run_statement!(self, index, params, collect)
    }

    /// Runs SQL text, possibly several statements; the outcome adds theirs up.
    pub async fn batch(&mut self, sql: &str) -> Result<QueryOutcome, DbError> {
        let result = self.conn.query_iter(sql).await.map_err(query_error)?;
        drain(result).await
    }

    /// Runs SQL text and returns the rows of its first result set as text.
    pub async fn query(&mut self, sql: &str) -> Result<Rows, DbError> {
        let result = self.conn.query_iter(sql).await.map_err(query_error)?;
        collect(result).await
    }

    /// Runs SQL text; each statement's result with its column names.
    pub async fn query_sets(&mut self, sql: &str) -> Result<Vec<ResultSet>, DbError> {
        let result = self.conn.query_iter(sql).await.map_err(query_error)?;
        collect_sets(result).await
    }

    /// Like [`LibraryConnection::execute`], returning the result with its column names.
    pub async fn execute_sets(
        &mut self,
        index: usize,
        params: &[Param<'_>],
    ) -> Result<Vec<ResultSet>, DbError> {
        run_statement!(self, index, params, collect_sets)
    }

    /// Bulk loads go through the lean client; sessions on this library load with INSERTs.
    pub async fn copy_in(
        &mut self,
        _sql: &str,
        _chunks: impl Iterator<Item = impl AsRef<[u8]>>,
    ) -> Result<u64, DbError> {
        Err(DbError::mysql(
            NOT_SUPPORTED,
            "LOAD DATA LOCAL runs on dbscale's own client only; load with INSERT here",
        ))
    }

    /// Rolls back whatever transaction an error left open (a no-op outside one). The library
    /// forgets the server's transaction flag on errors, so this always asks.
    pub async fn reset(&mut self) -> Result<(), DbError> {
        self.conn.query_drop("ROLLBACK").await.map_err(query_error)
    }

    pub fn server_version(&self) -> &str {
        self.version.get().map_or("", String::as_str)
    }

    pub fn is_tls(&self) -> bool {
        self.tls
    }

    pub async fn close(self) {
        let _ = self.conn.disconnect().await;
    }
}

/// Connects as the TLS mode asks. Unix sockets never use TLS (the library does not encrypt them,
/// and MySQL counts them as a secure transport). `prefer` falls back to plain when the server
/// offers no TLS, and remembers that for the target's later connections.
async fn open(config: &MySqlConfig) -> Result<(Conn, bool), DbError> {
    let mode = config.tls_mode();
    let try_tls = config.socket().is_none()
        && match mode {
            TlsMode::Disable => false,
            TlsMode::Prefer => !config.no_tls_offered.load(Ordering::Relaxed),
            TlsMode::Require | TlsMode::VerifyCa | TlsMode::VerifyFull => true,
        };
    if !try_tls {
        return attempt(config, &config.plain)
            .await?
            .map(|c| (c, false))
            .map_err(connect_error);
    }
    match attempt(config, &config.secure).await? {
        Ok(conn) => Ok((conn, true)),
        Err(Error::Driver(DriverError::NoClientSslFlagFromServer)) if mode == TlsMode::Prefer => {
            config.no_tls_offered.store(true, Ordering::Relaxed);
            attempt(config, &config.plain)
                .await?
                .map(|c| (c, false))
                .map_err(connect_error)
        }
        Err(e) => Err(connect_error(e)),
    }
}

/// One connection attempt within the target's connect timeout.
async fn attempt(
    config: &MySqlConfig,
    opts: &mysql_async::Opts,
) -> Result<Result<Conn, Error>, DbError> {
    tokio::time::timeout(config.connect_timeout(), Conn::new(opts.clone()))
        .await
        .map_err(|_| {
            DbError::connect(
                ConnectFailure::Unreachable,
                format!(
                    "no answer within {:.0} s",
                    config.connect_timeout().as_secs_f64()
                ),
            )
        })
}

fn bind(params: &[Param<'_>]) -> Params {
    if params.is_empty() {
        return Params::Empty;
    }
    Params::Positional(
        params
            .iter()
            .map(|p| match *p {
                Param::Int(v) => Value::Int(v),
                Param::Float(v) => Value::Double(v),
                Param::Text(s) => Value::Bytes(s.as_bytes().to_vec()),
                Param::Null => Value::NULL,
            })
            .collect(),
    )
}

/// Reads every result set to its end and counts: rows returned, rows changed, and whether any
/// statement produced a result set (even an empty one: sysbench counts that as a read).
async fn drain<P: Protocol>(mut result: QueryResult<'_, '_, P>) -> Result<QueryOutcome, DbError> {
    let mut outcome = QueryOutcome::default();
    loop {
        if result.columns_ref().is_empty() {
            // An OK packet: its counts are fresh (a result set's are not until it is read).
            outcome.rows_affected += result.affected_rows();
        } else {
            outcome.returned_result_set = true;
        }
        let mut rows = 0u64;
        result.for_each(|_| rows += 1).await.map_err(query_error)?;
        outcome.rows_returned += rows;
        if result.is_empty() {
            return Ok(outcome);
        }
    }
}

/// The first result set's rows as text; later result sets are read and dropped.
async fn collect<P: Protocol>(mut result: QueryResult<'_, '_, P>) -> Result<Rows, DbError> {
    let mut rows = Rows::new();
    result
        .for_each(|row| rows.push(row.unwrap_raw().into_iter().map(text).collect()))
        .await
        .map_err(query_error)?;
    result.drop_result().await.map_err(query_error)?;
    Ok(rows)
}

/// Every result set with its column names, rows as text.
async fn collect_sets<P: Protocol>(
    mut result: QueryResult<'_, '_, P>,
) -> Result<Vec<ResultSet>, DbError> {
    let mut sets = Vec::new();
    loop {
        let columns = result
            .columns_ref()
            .iter()
            .map(|c| c.name_str().into_owned())
            .collect();
        let mut set = ResultSet {
            columns,
            rows: Rows::new(),
        };
        result
            .for_each(|row| {
                set.rows
                    .push(row.unwrap_raw().into_iter().map(text).collect())
            })
            .await
            .map_err(query_error)?;
        sets.push(set);
        if result.is_empty() {
            return Ok(sets);
        }
    }
}

/// A value as MySQL's text protocol would have sent it; `None` is SQL NULL.
fn text(value: Option<Value>) -> Option<String> {
    Some(match value? {
        Value::NULL => return None,
        Value::Bytes(b) => String::from_utf8(b)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
        Value::Int(v) => v.to_string(),
        Value::UInt(v) => v.to_string(),
        Value::Float(v) => v.to_string(),
        Value::Double(v) => v.to_string(),
        Value::Date(y, mo, d, h, mi, s, us) => {
            let mut t = format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}");
            if us > 0 {
                t.push_str(&format!(".{us:06}"));
            }
            t
        }
        Value::Time(negative, days, h, mi, s, us) => {
            let sign = if negative { "-" } else { "" };
            let hours = u64::from(days) * 24 + u64::from(h);
            let mut t = format!("{sign}{hours:02}:{mi:02}:{s:02}");
            if us > 0 {
                t.push_str(&format!(".{us:06}"));
            }
            t
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_read_as_text() {
        assert_eq!(text(None), None);
        assert_eq!(text(Some(Value::NULL)), None);
        assert_eq!(text(Some(Value::Bytes(b"abc".to_vec()))).unwrap(), "abc");
        assert_eq!(text(Some(Value::Int(-5))).unwrap(), "-5");
        assert_eq!(
            text(Some(Value::Date(2024, 2, 3, 4, 5, 6, 0))).unwrap(),
            "2024-02-03 04:05:06"
        );
        assert_eq!(
            text(Some(Value::Time(true, 1, 2, 3, 4, 5))).unwrap(),
            "-26:03:04.000005"
        );
    }

    #[test]
    fn parameters_bind_to_values() {
        let Params::Positional(values) = bind(&[Param::Int(1), Param::Text("x"), Param::Null])
        else {
            panic!("positional expected")
        };
        assert_eq!(
            values,
            vec![Value::Int(1), Value::Bytes(b"x".to_vec()), Value::NULL]
        );
        assert!(matches!(bind(&[]), Params::Empty));
    }
}

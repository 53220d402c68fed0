//! Database drivers: one connection type per wire protocol, behind the [`Connection`] enum the
//! workloads talk to. Workloads describe statements once ([`Statement`]) and execute them by index,
//! so each driver can choose how to send them (simple, extended or prepared protocol).

mod cancel;
pub(crate) mod direct_wait;
pub mod error;
pub mod mysql;
pub mod postgres;
mod receive_buffer;
pub(crate) mod send_batch;
pub mod statement;
pub mod statement_clock;
mod tls;
mod transport;

pub use cancel::{CancelKey, CANCEL_LIMIT};
pub use error::{ConnectFailure, DbError, ErrorClass};
pub(crate) use statement::RowSink;
pub use statement::{numbered_placeholders, Param, QueryOutcome, ResultSet, Rows, Statement};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How statements travel on the wire; the names are pgbench's `-M` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum QueryProtocol {
    /// Text protocol, parameters inlined as literals (pgbench `-M simple`).
    #[default]
    Simple,
    /// Unnamed statement parsed and bound on every execution, one round trip (`-M extended`).
    /// MySQL has no such form: there it means the same as `Prepared`.
    Extended,
    /// Named statements parsed once per connection, then bound and executed (`-M prepared`).
    Prepared,
}

/// TLS modes with libpq's `sslmode` meanings (`allow` is treated like `prefer`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum TlsMode {
    Disable,
    #[default]
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

/// Whether a client keeps one connection or opens one per transaction (pgbench `-C`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ConnectMode {
    #[default]
    Persistent,
    PerTransaction,
}

/// SQL dialect a workload writes its statements in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Dialect {
    Postgres,
    Mysql,
}

/// One URL naming a target's hosts: the first host's URL (already without its password) with
/// its `host:port` replaced by every host's, comma-separated, and `params` added to its query.
pub(crate) fn host_list_url(urls: &[String], params: &[(&str, &str)]) -> String {
    fn authority(url: &str) -> (usize, usize) {
        let start = url
            .find('@')
            .map_or_else(|| url.find("://").map_or(0, |i| i + 3), |i| i + 1);
        let end = url[start..]
            .find(['/', '?'])
            .map_or(url.len(), |i| start + i);
        (start, end)
    }
    let mut url = urls.first().cloned().unwrap_or_default();
    let hosts: Vec<&str> = urls
        .iter()
        .map(|u| {
            let (start, end) = authority(u);
            &u[start..end]
        })
        .collect();
    let (start, end) = authority(&url);
    url.replace_range(start..end, &hosts.join(","));
    for (key, value) in params {
        url.push(if url.contains('?') { '&' } else { '?' });
        url.push_str(&format!("{key}={value}"));
    }
    url
}

/// What a connection to a target needs, resolved once from the URL and the run options.
#[derive(Debug, Clone)]
pub enum Endpoint {
    Postgres(postgres::PgTarget),
    Mysql(mysql::MySqlTarget),
}

impl Endpoint {
    /// Parses a target URL with the run's TLS mode: `mysql://` and `mariadb://` are MySQL
    /// targets; anything else (`postgresql://…`, libpq `key=value` strings) is PostgreSQL.
    pub fn parse(url: &str, tls: Option<TlsMode>) -> Result<Self, DbError> {
        let scheme = url.trim_start().split_once("://").map(|(s, _)| s);
        match scheme.map(str::to_ascii_lowercase).as_deref() {
            Some("mysql" | "mariadb") => Ok(Endpoint::Mysql(mysql::MySqlTarget::parse(url, tls)?)),
            _ => Ok(Endpoint::Postgres(postgres::PgTarget::parse(url, tls)?)),
        }
    }

    /// Each host of the target as a target of its own (a cluster's nodes, when a libpq host
    /// list or a MySQL host list names them), with what libpq's `target_session_attrs` asked of
    /// the list (`any` for MySQL).
    pub fn split_hosts(&self) -> (Vec<Endpoint>, postgres::SessionAttrs) {
        match self {
            Endpoint::Postgres(c) => {
                let (hosts, attrs) = c.split_hosts();
                (hosts.into_iter().map(Endpoint::Postgres).collect(), attrs)
            }
            Endpoint::Mysql(c) => (
                c.split_hosts().into_iter().map(Endpoint::Mysql).collect(),
                postgres::SessionAttrs::Any,
            ),
        }
    }

    pub fn dialect(&self) -> Dialect {
        match self {
            Endpoint::Postgres(_) => Dialect::Postgres,
            Endpoint::Mysql(_) => Dialect::Mysql,
        }
    }

    /// Each host of the target (one, or a libpq-style list) as a URL without its password.
    pub fn host_labels(&self) -> Vec<String> {
        match self {
            Endpoint::Postgres(c) => c.host_labels(),
            Endpoint::Mysql(c) => c.host_labels(),
        }
    }

    /// The URL with any password removed, safe for logs and results.
    pub fn redacted(&self) -> String {
        match self {
            Endpoint::Postgres(c) => c.redacted(),
            Endpoint::Mysql(c) => c.redacted(),
        }
    }

    /// Connects; a failure becomes the crate's `Error::Connect`, naming the (redacted) target.
    pub async fn open(&self, protocol: QueryProtocol) -> Result<Connection, crate::Error> {
        self.connect(protocol)
            .await
            .map_err(|source| crate::Error::Connect {
                target: self.redacted(),
                source,
            })
    }

    /// A session on the first host, in order, that takes it.
    pub async fn connect(&self, protocol: QueryProtocol) -> Result<Connection, DbError> {
        match self {
            Endpoint::Postgres(c) => Ok(Connection::Postgres(c.connect(protocol).await?.0)),
            Endpoint::Mysql(c) => Ok(Connection::Mysql(c.connect(protocol).await?.0)),
        }
    }
}

/// An open connection of any driver. Enum dispatch keeps the hot loop free of dynamic calls.
pub enum Connection {
    Postgres(postgres::PgConnection),
    Mysql(mysql::MySqlConnection),
}

impl Connection {
    /// The SQL dialect of the server behind this connection.
    pub fn dialect(&self) -> Dialect {
        match self {
            Connection::Postgres(_) => Dialect::Postgres,
            Connection::Mysql(_) => Dialect::Mysql,
        }
    }

    /// Makes `statements` executable by index; under the prepared protocol this parses them now.
    pub async fn prepare(&mut self, statements: &[Statement]) -> Result<(), DbError> {
        match self {
            Connection::Postgres(c) => c.prepare(statements).await,
            Connection::Mysql(c) => c.prepare(statements).await,
        }
    }

    /// Executes prepared statement `index` (see [`Connection::prepare`]) with `params`.
    #[inline]
    pub async fn execute(
        &mut self,
        index: usize,
        params: &[Param<'_>],
    ) -> Result<QueryOutcome, DbError> {
        if statement_clock::is_on() {
            // Timed apart, boxed: the untimed path's future stays as small as before.
            return Box::pin(statement_clock::timed(
                index,
                self.execute_untimed(index, params),
            ))
            .await;
        }
        self.execute_untimed(index, params).await
    }

    #[inline]
    async fn execute_untimed(
        &mut self,
        index: usize,
        params: &[Param<'_>],
    ) -> Result<QueryOutcome, DbError> {
        match self {
            Connection::Postgres(c) => c.execute(index, params).await,
            Connection::Mysql(c) => c.execute(index, params).await,
        }
    }

    /// Like [`Connection::execute`] but returns the rows (text format), for workloads that use results.
    pub async fn fetch(&mut self, index: usize, params: &[Param<'_>]) -> Result<Rows, DbError> {
        if statement_clock::is_on() {
            return Box::pin(statement_clock::timed(
                index,
                self.fetch_untimed(index, params),
            ))
            .await;
        }
        self.fetch_untimed(index, params).await
    }

    #[inline]
    async fn fetch_untimed(&mut self, index: usize, params: &[Param<'_>]) -> Result<Rows, DbError> {
        match self {
            Connection::Postgres(c) => c.fetch(index, params).await,
            Connection::Mysql(c) => c.fetch(index, params).await,
        }
    }

    /// Runs SQL text without parameters (BEGIN, COMMIT, DDL), possibly several statements.
    pub async fn batch(&mut self, sql: &str) -> Result<QueryOutcome, DbError> {
        match self {
            Connection::Postgres(c) => c.batch(sql).await,
            Connection::Mysql(c) => c.batch(sql).await,
        }
    }

    /// Runs one SQL text and returns its rows as text, for administrative queries.
    pub async fn query(&mut self, sql: &str) -> Result<Rows, DbError> {
        match self {
            Connection::Postgres(c) => c.query(sql).await,
            Connection::Mysql(c) => c.query(sql).await,
        }
    }

    /// Like [`Connection::execute`], returning the result with its column names.
    pub async fn execute_sets(
        &mut self,
        index: usize,
        params: &[Param<'_>],
    ) -> Result<Vec<ResultSet>, DbError> {
        match self {
            Connection::Postgres(c) => c.execute_sets(index, params).await,
            Connection::Mysql(c) => c.execute_sets(index, params).await,
        }
    }

    /// Pipeline mode: statements queue up until [`Connection::pipeline_sync`]. PostgreSQL's
    /// extended and prepared protocols only (MySQL's protocol has no pipeline).
    pub async fn pipeline_begin(&mut self) -> Result<(), DbError> {
        match self {
            Connection::Postgres(c) => c.pipeline_begin().await,
            Connection::Mysql(_) => Err(DbError::mysql(
                1235,
                "pipeline mode needs PostgreSQL's extended or prepared protocol",
            )),
        }
    }

    /// Queues statement `index` in the pipeline.
    pub fn pipeline_push(&mut self, index: usize, params: &[Param<'_>]) -> Result<(), DbError> {
        match self {
            Connection::Postgres(c) => c.pipeline_push(index, params),
            Connection::Mysql(_) => Err(DbError::mysql(1235, "not in pipeline mode")),
        }
    }

    /// Sends the queued statements and reads their results, one per statement.
    pub async fn pipeline_sync(&mut self) -> Result<Vec<ResultSet>, DbError> {
        match self {
            Connection::Postgres(c) => c.pipeline_sync().await,
            Connection::Mysql(_) => Err(DbError::mysql(1235, "not in pipeline mode")),
        }
    }

    /// Runs SQL text (several statements joined by `;` allowed) and returns each statement's
    /// result with its column names, in order.
    pub async fn query_sets(&mut self, sql: &str) -> Result<Vec<ResultSet>, DbError> {
        match self {
            Connection::Postgres(c) => c.query_sets(sql).await,
            Connection::Mysql(c) => c.query_sets(sql).await,
        }
    }

    /// Streams `chunks` into a bulk load (PostgreSQL `COPY ... FROM STDIN`, MySQL `LOAD DATA
    /// LOCAL INFILE`); returns rows loaded.
    pub async fn copy_in(
        &mut self,
        sql: &str,
        chunks: impl Iterator<Item = impl AsRef<[u8]>>,
    ) -> Result<u64, DbError> {
        match self {
            Connection::Postgres(c) => c.copy_in(sql, chunks).await,
            Connection::Mysql(c) => c.copy_in(sql, chunks).await,
        }
    }

    /// Whether the session is inside a transaction block as of the last response. PostgreSQL
    /// says so in every ReadyForQuery; on MySQL it is not tracked (always false).
    pub fn in_transaction(&self) -> bool {
        match self {
            Connection::Postgres(c) => c.in_transaction(),
            Connection::Mysql(_) => false,
        }
    }

    /// After an error: rolls back an open or failed transaction so the connection is usable.
    pub async fn reset(&mut self) -> Result<(), DbError> {
        match self {
            Connection::Postgres(c) => c.reset().await,
            Connection::Mysql(c) => c.reset().await,
        }
    }

    /// Whether dbscale's own wire client serves the session: always on PostgreSQL; on MySQL
    /// unless it fell back to the library (TLS, Unix sockets, other authentication).
    pub fn is_lean(&self) -> bool {
        match self {
            Connection::Postgres(_) => true,
            Connection::Mysql(c) => c.is_lean(),
        }
    }

    /// Server version string as the server reports it.
    pub fn server_version(&self) -> &str {
        match self {
            Connection::Postgres(c) => c.server_version(),
            Connection::Mysql(c) => c.server_version(),
        }
    }

    /// Whether the transport is encrypted.
    pub fn is_tls(&self) -> bool {
        match self {
            Connection::Postgres(c) => c.is_tls(),
            Connection::Mysql(c) => c.is_tls(),
        }
    }

    pub async fn close(self) {
        match self {
            Connection::Postgres(c) => c.close().await,
            Connection::Mysql(c) => c.close().await,
        }
    }
}

/// Characters escaped when a user, database, host or path is written back into a URL.
pub(crate) const URL_COMPONENT: &percent_encoding::AsciiSet = &percent_encoding::CONTROLS
    .add(b' ')
    .add(b'%')
    .add(b'@')
    .add(b':')
    .add(b'/')
    .add(b'?')
    .add(b'&')
    .add(b'=')
    .add(b'#')
    .add(b'[')
    .add(b']');

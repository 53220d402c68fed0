//! Work outside the measured loop: loading and dropping data, probing a target, and a
//! long-lived session for sampling server statistics from Python.

use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Serialize;

use super::block_on;
use super::nodes::Nodes;
use crate::config::RunConfig;
use crate::driver::{ConnectFailure, Connection, DbError, Dialect, Endpoint, QueryProtocol, Rows};
use crate::workload::{PrepareSummary, Workload};
use crate::Error;

/// Loads the workload's data (`dbscale prepare`).
pub fn prepare(config: &RunConfig) -> Result<PrepareSummary, Error> {
    let (endpoint, workload) = resolve(config)?;
    block_on(workload.prepare(&endpoint, config.load_part.as_ref()))?
}

/// Drops the workload's data (`dbscale cleanup`).
pub fn cleanup(config: &RunConfig) -> Result<PrepareSummary, Error> {
    let (endpoint, workload) = resolve(config)?;
    block_on(workload.cleanup(&endpoint))?
}

/// Checks the consistency of the workload's data (`dbscale check`).
pub fn check(config: &RunConfig) -> Result<crate::workload::tpcc::check::CheckReport, Error> {
    check_within(config, None)
}

/// As [`check`], given up with an error after `limit` (a server that stopped answering).
pub fn check_within(
    config: &RunConfig,
    limit: Option<Duration>,
) -> Result<crate::workload::tpcc::check::CheckReport, Error> {
    let (endpoint, workload) = resolve(config)?;
    let Some(limit) = limit else {
        return block_on(workload.consistency(&endpoint))?;
    };
    block_on(async { tokio::time::timeout(limit, workload.consistency(&endpoint)).await })?
        .unwrap_or_else(|_| {
            Err(Error::Sql {
                context: "consistency check".into(),
                source: DbError::connection_lost(format!(
                    "{} did not finish the check within {} s",
                    endpoint.redacted(),
                    limit.as_secs_f64()
                )),
            })
        })
}

/// What one connection found: the server, its dialect, whether the session is encrypted.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ServerFacts {
    pub server_version: String,
    pub dialect: Dialect,
    pub tls: bool,
    pub connect_ms: Option<f64>,
    /// The target's URL, redacted.
    pub target: String,
}

/// Connects once and reports what the target is.
pub fn probe(config: &RunConfig) -> Result<ServerFacts, Error> {
    let endpoint = config.target.endpoint()?;
    block_on(async {
        let begun = Instant::now();
        let conn = endpoint.open(config.protocol).await?;
        let facts = ServerFacts {
            server_version: conn.server_version().to_string(),
            tls: conn.is_tls(),
            connect_ms: Some(begun.elapsed().as_secs_f64() * 1000.0),
            dialect: endpoint.dialect(),
            target: endpoint.redacted(),
        };
        conn.close().await;
        Ok(facts)
    })?
}

/// Where loads, checks and admin sessions go: the target as given, or the node that takes
/// writes when a cluster has one (its first URL may be a standby, e.g. after a failover).
async fn admin_endpoint(config: &RunConfig) -> Result<Endpoint, Error> {
    let nodes = Nodes::new(config)?;
    if nodes.has_one_writer() {
        nodes.writer_endpoint(QueryProtocol::Simple).await
    } else {
        Ok(config.target.endpoint()?)
    }
}

fn resolve(config: &RunConfig) -> Result<(Endpoint, Workload), Error> {
    let endpoint = block_on(admin_endpoint(config))??;
    let workload = Workload::from_config(&config.workload)?;
    Ok((endpoint, workload))
}

/// One connection with its own event loop, for queries between or during runs (server
/// statistics, checks). It never shares the engine's threads.
pub struct AdminSession {
    runtime: tokio::runtime::Runtime,
    conn: Option<Connection>,
    target: String,
    /// How long opening the session and each query may take (None: as long as they take).
    limit: Option<Duration>,
}

/// How long closing a session may take: it only says goodbye, and a frozen server never reads it.
const CLOSE_LIMIT: Duration = Duration::from_secs(1);

impl AdminSession {
    /// A session on the target: on a cluster with one writer, on the node that takes writes
    /// now (an observer that reconnects after a failover follows the new primary).
    pub fn open(config: &RunConfig) -> Result<Self, Error> {
        Self::open_within(config, None)
    }

    /// As [`AdminSession::open`], with a deadline for opening it and for each query: a server
    /// that stops answering (a paused VM, SIGSTOP, a network blackhole) gives an error in
    /// `limit` instead of a wait without end, and the session is given up.
    pub fn open_within(config: &RunConfig, limit: Option<Duration>) -> Result<Self, Error> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::Internal(format!("cannot start an event loop: {e}")))?;
        let opening = async {
            let endpoint = admin_endpoint(config).await?;
            let target = endpoint.redacted();
            let conn = endpoint.open(QueryProtocol::Simple).await?;
            Ok::<_, Error>((conn, target))
        };
        let (conn, target) = match limit {
            None => runtime.block_on(opening)?,
            Some(limit) => runtime
                .block_on(async { tokio::time::timeout(limit, opening).await })
                .map_err(|_| Error::Connect {
                    target: config
                        .target
                        .endpoint()
                        .map(|e| e.redacted())
                        .unwrap_or_default(),
                    source: DbError::connect(
                        ConnectFailure::Unreachable,
                        format!("no answer within {} s", limit.as_secs_f64()),
                    ),
                })??,
        };
        Ok(Self {
            runtime,
            conn: Some(conn),
            target,
            limit,
        })
    }

    /// Runs SQL text and returns its rows as text. Past the session's limit the session is
    /// given up (its connection dropped) and the error says the server did not answer.
    pub fn query(&mut self, sql: &str) -> Result<Rows, Error> {
        let conn = self
            .conn
            .as_mut()
            .ok_or_else(|| Error::Internal(format!("the session to {} is closed", self.target)))?;
        let answered = match self.limit {
            None => Some(self.runtime.block_on(conn.query(sql))),
            Some(limit) => self
                .runtime
                .block_on(async { tokio::time::timeout(limit, conn.query(sql)).await })
                .ok(),
        };
        let Some(outcome) = answered else {
            self.conn = None; // mid-statement: unusable, and never said goodbye to
            let limit = self.limit.unwrap_or_default().as_secs_f64();
            return Err(Error::Sql {
                context: "session query".into(),
                source: DbError::connection_lost(format!(
                    "{} did not answer within {limit} s",
                    self.target
                )),
            });
        };
        outcome.map_err(|source| Error::Sql {
            context: "session query".into(),
            source,
        })
    }

    pub fn close(&mut self) {
        if let Some(conn) = self.conn.take() {
            let _ = self
                .runtime
                .block_on(async { tokio::time::timeout(CLOSE_LIMIT, conn.close()).await });
        }
    }
}

impl Drop for AdminSession {
    fn drop(&mut self) {
        self.close();
    }
}

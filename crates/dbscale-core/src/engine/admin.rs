//! Work outside the measured loop: loading and dropping data, probing a target, and a
//! long-lived session for sampling server statistics from Python.

use std::time::Instant;

use schemars::JsonSchema;
use serde::Serialize;

use super::block_on;
use super::nodes::Nodes;
use crate::config::RunConfig;
use crate::driver::{Connection, Dialect, Endpoint, QueryProtocol, Rows};
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
    let (endpoint, workload) = resolve(config)?;
    block_on(workload.consistency(&endpoint))?
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
}

impl AdminSession {
    /// A session on the target: on a cluster with one writer, on the node that takes writes
    /// now (an observer that reconnects after a failover follows the new primary).
    pub fn open(config: &RunConfig) -> Result<Self, Error> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::Internal(format!("cannot start an event loop: {e}")))?;
        let endpoint = runtime.block_on(admin_endpoint(config))?;
        let target = endpoint.redacted();
        let conn = runtime.block_on(endpoint.open(QueryProtocol::Simple))?;
        Ok(Self {
            runtime,
            conn: Some(conn),
            target,
        })
    }

    /// Runs SQL text and returns its rows as text.
    pub fn query(&mut self, sql: &str) -> Result<Rows, Error> {
        let conn = self
            .conn
            .as_mut()
            .ok_or_else(|| Error::Internal(format!("the session to {} is closed", self.target)))?;
        self.runtime
            .block_on(conn.query(sql))
            .map_err(|source| Error::Sql {
                context: "session query".into(),
                source,
            })
    }

    pub fn close(&mut self) {
        if let Some(conn) = self.conn.take() {
            self.runtime.block_on(conn.close());
        }
    }
}

impl Drop for AdminSession {
    fn drop(&mut self) {
        self.close();
    }
}

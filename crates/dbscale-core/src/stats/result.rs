//! The result of one run, serialized as JSON for Python. Field names carry their units.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::commands::{CommandLatency, StatementLatency};
use super::counts::{QueryCounts, RunCounts};
use super::interval::IntervalSnapshot;
use super::latency::{LatencyHistogram, LatencySummary};
use super::tpcc::TpccSummary;
use crate::config::Routing;
use crate::driver::{ConnectMode, QueryProtocol};

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct RunResult {
    pub workload: String,
    pub target: String,
    pub server_version: String,
    pub tls: bool,
    pub clients: u32,
    pub threads: u32,
    pub protocol: QueryProtocol,
    pub connect: ConnectMode,
    pub rate_tps: Option<f64>,
    pub seed: u64,
    /// Workload parameters as resolved (e.g. the scale read from the tables).
    pub workload_params: BTreeMap<String, serde_json::Value>,
    /// Measured time: from the common start to the end of the last transaction.
    pub duration_s: f64,
    pub transactions: u64,
    pub tps: f64,
    pub failed: u64,
    pub retried: u64,
    pub retries: u64,
    pub cancelled: bool,
    pub errors: ErrorCounts,
    pub latency_ms: Option<LatencySummary>,
    pub connect_ms: Option<LatencySummary>,
    pub schedule_lag_ms: Option<LatencySummary>,
    /// Open model: transactions that started more than 1 ms after their scheduled time.
    pub late_starts: u64,
    /// Open model: scheduled before the end but never started.
    pub unstarted: u64,
    /// pgbench `-L`, in milliseconds: the limit, the transactions that took longer, and under
    /// a rate those skipped because they were already later than it when due.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_limit_ms: Option<f64>,
    #[serde(default)]
    pub over_latency_limit: u64,
    #[serde(default)]
    pub skipped: u64,
    /// pgbench `-l`: what the per-transaction log holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transaction_log: Option<TransactionLogSummary>,
    pub queries: QueryCounts,
    pub qps: f64,
    pub client_cpu_s: CpuTime,
    pub client_cpu_us_per_txn: Option<f64>,
    pub transaction_types: BTreeMap<String, TransactionTypeResult>,
    /// All transaction types merged (HDR V2 deflate, base64, microseconds).
    pub histogram: String,
    pub intervals: Vec<IntervalSnapshot>,
    pub verdict: Verdict,
    /// Unmeasured ramp before the measured window, and what ended in it.
    pub ramp_s: f64,
    pub ramp_transactions: u64,
    pub ramp_errors: u64,
    /// Connections the clients shared (None: one per client).
    pub connections: Option<u32>,
    /// Connections opened per host of the target (redacted URL), in the target's order.
    pub connections_by_host: Vec<HostConnections>,
    /// How clients used a cluster's nodes (`round-robin`, `affinity`, `primary`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub routing: Option<Routing>,
    /// Each node's figures, for a target of several nodes or a run tracking availability.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<NodeResult>,
    /// Sessions lost on a node whose clients then went on another node.
    #[serde(default)]
    pub failovers: u64,
    /// The whole target's stretches without a successful transaction (tracked runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub availability: Option<NodeAvailability>,
    /// Clients that had a connection at some point (`clients` is the number asked for); fewer
    /// fails the run.
    pub clients_connected: u32,
    /// The first connection failure's message (the server's, e.g. "too many clients").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connect_error: Option<String>,
    /// Its kind: `connect_limit` (no slot: `max_connections`), another connect failure's,
    /// or `sql` (the connection opened, but a statement would not prepare).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect_error_kind: Option<String>,
    /// The server's connection limit (`max_connections`), read before the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_max_connections: Option<u64>,
    /// TPC-C's figures and verdict (tpmC, efficiency, pass rule, audits).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tpcc: Option<TpccSummary>,
    /// Scripts: each command's latency and failures (pgbench `-r`), in script order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<CommandLatency>,
    /// Built-in workloads under `statement_timing`: each statement as the clients timed it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub statements: Vec<StatementLatency>,
    /// A scaled-out run's worker: what an exact merge with the other workers needs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<ResultDetail>,
}

impl RunResult {
    /// The result's counters, with the transactions abandoned at its end (from its detail).
    pub fn counts(&self, abandoned: u64) -> RunCounts {
        RunCounts {
            failed: self.failed,
            retried: self.retried,
            retries: self.retries,
            late_starts: self.late_starts,
            unstarted: self.unstarted,
            over_latency_limit: self.over_latency_limit,
            skipped: self.skipped,
            logged: self.transaction_log.as_ref().map_or(0, |log| log.lines),
            abandoned,
            ramp_transactions: self.ramp_transactions,
            ramp_errors: self.ramp_errors,
            queries: self.queries,
        }
    }
}

/// A run's per-transaction log: its files (thread 0's path; others add `.N`), the lines
/// written, and the first write error, after which that thread logged no more.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct TransactionLogSummary {
    pub path: String,
    pub files: u32,
    pub lines: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The parts of a worker's result that its summary drops: the connect and schedule-lag
/// histograms (HDR V2 deflate, base64), the workload's tallies, the transactions abandoned at
/// the end and the clients that never connected.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct ResultDetail {
    pub connect_histogram: String,
    pub lag_histogram: String,
    pub tally: Vec<u64>,
    pub abandoned: u64,
    pub clients_never_connected: u32,
}

/// One node of a cluster target: what its clients did there.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct NodeResult {
    /// The node's URL without its password.
    pub node: String,
    pub connections: u64,
    pub transactions: u64,
    pub failed: u64,
    pub errors: u64,
    /// Sessions on this node that ended because it was gone, would not serve, or passed the
    /// client's deadline.
    pub lost: u64,
    /// Of those, the clients that then connected to another node.
    pub failovers: u64,
    pub latency_ms: Option<LatencySummary>,
    /// Its successful transactions' latency (HDR V2 deflate, base64, microseconds).
    pub histogram: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub availability: Option<NodeAvailability>,
}

/// When transactions succeeded, in seconds from the measured start: the first and last
/// success, and each stretch of 100 ms or more without one.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct NodeAvailability {
    pub first_success_s: Option<f64>,
    pub last_success_s: Option<f64>,
    pub gaps: Vec<Gap>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
pub struct Gap {
    pub from_s: f64,
    pub to_s: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct HostConnections {
    pub host: String,
    pub connections: u64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct ErrorCounts {
    pub total: u64,
    pub by_class: BTreeMap<String, u64>,
    /// Each class's first message, as the server (or the script) worded it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub messages: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema)]
pub struct CpuTime {
    pub user: f64,
    pub system: f64,
    pub total: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TransactionTypeResult {
    pub transactions: u64,
    pub failed: u64,
    pub latency_ms: Option<LatencySummary>,
    pub histogram: String,
}

impl TransactionTypeResult {
    /// A type's figures from its histogram of successful transactions and its failures.
    pub fn of(histogram: &LatencyHistogram, failed: u64) -> Self {
        Self {
            transactions: histogram.count(),
            failed,
            latency_ms: histogram.summary(),
            histogram: histogram.to_base64(),
        }
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct Verdict {
    /// `ok`, `errors` (some failed) or `failed` (nothing succeeded).
    pub status: String,
    pub message: String,
}

//! TPC-C's figures and verdict as a run result carries them (the summary itself is computed by
//! `workload::tpcc::summary`): tpmC, efficiency, the pass rule and its reasons, the audits.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The rule a run is judged by and its limits.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PassRule {
    /// `spec` (wait mode) or `cloud-report` (nowait).
    pub name: String,
    /// Spec: 90th-percentile limits per type, seconds.
    pub p90_limits_s: Vec<f64>,
    pub min_efficiency_pct: f64,
    /// Cloud Report: New-Order 95th percentile limit, seconds.
    pub new_order_p95_limit_s: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Audit {
    pub name: String,
    pub value: Option<f64>,
    pub low: f64,
    pub high: f64,
    /// `pass`, `fail` or `skip` (too few transactions, or not applicable).
    pub status: String,
    pub note: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TpccSummary {
    pub warehouses: i64,
    pub active_warehouses: i64,
    pub wait: bool,
    /// New-Orders per minute of the measured window, rolled-back ones included.
    pub tpmc: f64,
    /// All transactions per minute.
    pub tpm_total: f64,
    pub new_orders: u64,
    pub rolled_back_new_orders: u64,
    pub efficiency_pct: f64,
    /// False without waits: the 12.86 ceiling assumes keying and think times.
    pub efficiency_meaningful: bool,
    pub rule: PassRule,
    pub pass: bool,
    pub reasons: Vec<String>,
    pub audits: Vec<Audit>,
    pub warnings: Vec<String>,
    /// Where the run-time C_LAST came from: `load` (the delta rule held) or `unknown`.
    pub c_last_source: String,
}

//! Workloads: what a client does in one transaction, the statements it uses, the data it needs.
//! Each workload family lives in its own module; [`Workload`] and [`WorkloadClient`] dispatch to
//! them with enums so the hot loop makes no dynamic calls.

pub(crate) mod calendar;
pub mod ch;
mod client;
pub(crate) mod loading;
pub mod params;
pub mod script;
pub mod sysbench;
pub mod tpcb;
pub mod tpcc;
pub mod tpch;
pub mod ycsb;

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Serialize;

use crate::config::LoadPart;
use crate::config::WorkloadConfig;
use crate::driver::{
    Connection, Dialect, Endpoint, ErrorClass, QueryOutcome, QueryProtocol, Statement,
};
use crate::stats::commands::CommandPlace;
use crate::stats::counts::QueryCounts;
use crate::stats::LatencyHistogram;
use crate::Error;
pub use client::WorkloadClient;
pub use params::{ParamSpec, Params};

/// Counters a workload keeps per transaction for its own audits (TPC-C: rolled-back orders,
/// remote lines, ...); summed over the measured transactions.
pub const TALLY_SLOTS: usize = 6;
pub type Tally = [u32; TALLY_SLOTS];

/// What a successful transaction did: its type (index into [`Workload::transaction_types`]),
/// its statements by class, and the workload's audit counters.
#[derive(Debug, Clone, Copy, Default)]
pub struct TxnOutcome {
    pub kind: usize,
    pub queries: QueryCounts,
    pub tally: Tally,
}

impl QueryCounts {
    /// Counts one statement the way sysbench does: read if it returned a result set, write if it
    /// changed rows, other otherwise (BEGIN, COMMIT, DML that matched nothing).
    #[inline]
    pub fn count(&mut self, outcome: &QueryOutcome) {
        if outcome.returned_result_set {
            self.read += 1;
        } else if outcome.rows_affected > 0 {
            self.write += 1;
        } else {
            self.other += 1;
        }
        self.total += 1;
    }
}

/// The kind of benchmark a workload is: what its data, rules and figures are like. Python reads
/// it from the catalog instead of knowing workload names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Family {
    /// pgbench's TPC-B-like scripts (pgbench_* tables)
    Tpcb,
    /// sysbench's OLTP tests (sbtest tables)
    Sysbench,
    /// TPC-C (warehouses, consistency conditions, tpmC)
    Tpcc,
    /// pgbench script files
    Script,
    /// YCSB's core workloads (usertable, operation mixes, request distributions)
    Ycsb,
    /// derived from TPC-H: dbgen's tables, the 22 queries as query streams
    Tpch,
    /// CH-benCHmark: TPC-C terminals and analytic query streams on TPC-C's tables
    Ch,
}

/// A workload's entry in the catalog.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct WorkloadInfo {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub family: Family,
    pub description: &'static str,
    #[serde(serialize_with = "serialize_specs")]
    #[schemars(with = "std::collections::BTreeMap<String, ParamEntry>")]
    pub params: &'static [ParamSpec],
}

/// A parameter as the catalog shows it: its default (a JSON value of its type) and its doc.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ParamEntry {
    pub default: serde_json::Value,
    pub doc: &'static str,
}

fn serialize_specs<S: serde::Serializer>(
    specs: &&'static [ParamSpec],
    s: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut map = s.serialize_map(Some(specs.len()))?;
    for spec in specs.iter() {
        let default = match spec.default {
            params::ParamDefault::Int(v) => serde_json::Value::from(v),
            params::ParamDefault::Float(v) => serde_json::Value::from(v),
            params::ParamDefault::Bool(v) => serde_json::Value::from(v),
            params::ParamDefault::Str(v) => serde_json::Value::from(v),
        };
        let entry = ParamEntry {
            default,
            doc: spec.doc,
        };
        map.serialize_entry(spec.name, &entry)?;
    }
    map.end()
}

/// The family of the workload called `name` (or by an alias of it), if it is known.
pub fn family_of(name: &str) -> Option<Family> {
    catalog()
        .into_iter()
        .find(|w| {
            w.name.eq_ignore_ascii_case(name)
                || w.aliases.iter().any(|a| a.eq_ignore_ascii_case(name))
        })
        .map(|w| w.family)
}

/// Every workload dbscale knows.
pub fn catalog() -> Vec<WorkloadInfo> {
    let mut all = tpcb::catalog();
    all.extend(sysbench::catalog());
    all.extend(tpcc::catalog());
    all.extend(script::catalog());
    all.extend(ycsb::catalog());
    all.extend(tpch::catalog());
    all.extend(ch::catalog());
    all
}

/// Time spent in each step of a prepare or cleanup.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct PrepareSummary {
    pub steps: Vec<PrepareStep>,
    pub rows: u64,
    pub seconds: f64,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PrepareStep {
    pub name: String,
    pub seconds: f64,
}

/// A configured workload.
#[derive(Debug, Clone)]
pub enum Workload {
    Tpcb(tpcb::Tpcb),
    Sysbench(sysbench::Sysbench),
    Tpcc(tpcc::Tpcc),
    Script(Box<script::ScriptWorkload>),
    Ycsb(ycsb::Ycsb),
    Tpch(tpch::Tpch),
    Ch(Box<ch::Ch>),
}

impl Workload {
    pub fn from_config(config: &WorkloadConfig) -> Result<Self, Error> {
        if let Some(w) = tpcb::Tpcb::from_config(config)? {
            return Ok(Workload::Tpcb(w));
        }
        if let Some(w) = sysbench::Sysbench::from_config(config)? {
            return Ok(Workload::Sysbench(w));
        }
        if let Some(w) = tpcc::Tpcc::from_config(config)? {
            return Ok(Workload::Tpcc(w));
        }
        if let Some(w) = script::ScriptWorkload::from_config(config)? {
            return Ok(Workload::Script(Box::new(w)));
        }
        if let Some(w) = ycsb::Ycsb::from_config(config)? {
            return Ok(Workload::Ycsb(w));
        }
        if let Some(w) = tpch::Tpch::from_config(config)? {
            return Ok(Workload::Tpch(w));
        }
        if let Some(w) = ch::Ch::from_config(config)? {
            return Ok(Workload::Ch(Box::new(w)));
        }
        let names: Vec<&str> = catalog().iter().map(|w| w.name).collect();
        Err(Error::Config(format!(
            "unknown workload {:?}; known workloads: {}",
            config.name,
            names.join(", ")
        )))
    }

    pub fn name(&self) -> &'static str {
        match self {
            Workload::Tpcb(w) => w.name(),
            Workload::Sysbench(w) => w.name(),
            Workload::Tpcc(_) => "tpcc",
            Workload::Script(_) => script::NAME,
            Workload::Ycsb(w) => w.name(),
            Workload::Tpch(_) => tpch::NAME,
            Workload::Ch(_) => ch::NAME,
        }
    }

    pub fn params(&self) -> BTreeMap<String, serde_json::Value> {
        match self {
            Workload::Tpcb(w) => w.params().to_map(),
            Workload::Sysbench(w) => w.params().to_map(),
            Workload::Tpcc(w) => w.params().to_map(),
            Workload::Script(w) => w.params().to_map(),
            Workload::Ycsb(w) => w.params().to_map(),
            Workload::Tpch(w) => w.params().to_map(),
            Workload::Ch(w) => w.params(),
        }
    }

    pub fn transaction_types(&self) -> Vec<String> {
        let names: &[&str] = match self {
            Workload::Tpcb(w) => w.transaction_types(),
            Workload::Sysbench(w) => w.transaction_types(),
            Workload::Tpcc(_) => tpcc::TRANSACTION_TYPES,
            Workload::Script(w) => return w.transaction_types(),
            Workload::Ycsb(_) => ycsb::TRANSACTION_TYPES,
            Workload::Tpch(_) => &tpch::TRANSACTION_TYPES,
            Workload::Ch(_) => &ch::TRANSACTION_TYPES,
        };
        names.iter().map(|n| n.to_string()).collect()
    }

    /// What the run decided that a workload may depend on: its seed and how SQL travels.
    pub fn bind_run(&mut self, seed: u64, protocol: QueryProtocol, clients: u32) {
        match self {
            Workload::Script(w) => w.bind_run(seed, protocol, clients),
            Workload::Tpch(w) => w.bind_run(seed),
            _ => {}
        }
    }

    pub fn statements(&mut self, dialect: Dialect) -> Result<Vec<Statement>, Error> {
        match self {
            Workload::Tpcb(w) => w.statements(dialect),
            Workload::Sysbench(w) => w.statements(dialect),
            Workload::Tpcc(w) => Ok(w.statements(dialect)),
            Workload::Script(w) => w.statements(dialect),
            Workload::Ycsb(w) => Ok(w.statements(dialect)),
            // Each query's text carries its substitution parameters: sent as it is.
            Workload::Tpch(_) => Ok(Vec::new()),
            // The terminals' prepared statements; the streams send their queries as text.
            Workload::Ch(w) => Ok(w.statements(dialect)),
        }
    }

    /// Checks that the data is there and reads what the run depends on (e.g. the scale).
    pub async fn check(&mut self, conn: &mut Connection) -> Result<(), Error> {
        match self {
            Workload::Tpcb(w) => w.check(conn).await,
            Workload::Sysbench(w) => w.check(conn).await,
            Workload::Tpcc(w) => w.check(conn).await,
            Workload::Script(w) => w.check(conn).await,
            Workload::Ycsb(w) => w.check(conn).await,
            Workload::Tpch(w) => w.check(conn).await,
            Workload::Ch(w) => w.check(conn).await,
        }
    }

    /// Maintenance done once before a measured run (pgbench's vacuum and truncate).
    pub async fn before_run(&self, conn: &mut Connection) -> Result<(), Error> {
        match self {
            Workload::Tpcb(w) => w.before_run(conn).await,
            Workload::Sysbench(w) => w.before_run(conn).await,
            Workload::Script(w) => w.before_run(conn).await,
            Workload::Tpcc(_) | Workload::Ycsb(_) | Workload::Tpch(_) | Workload::Ch(_) => Ok(()),
        }
    }

    /// What pins client `client_id` to a node under affinity routing: a TPC-C terminal's home
    /// warehouse (so a warehouse's hot rows are written through one node), else the client.
    pub fn affinity_key(&self, client_id: u32) -> u64 {
        match self {
            Workload::Tpcc(w) => w.home_index(client_id),
            Workload::Ch(w) => w.affinity_key(client_id),
            _ => u64::from(client_id),
        }
    }

    /// State for client `client_id` of the run's `clients`.
    pub fn client(&self, client_id: u32, clients: u32) -> WorkloadClient {
        match self {
            Workload::Tpcb(w) => WorkloadClient::Tpcb(w.client(client_id)),
            Workload::Sysbench(w) => {
                WorkloadClient::Sysbench(Box::new(w.client(client_id, clients)))
            }
            Workload::Tpcc(w) => WorkloadClient::Tpcc(w.client(client_id)),
            Workload::Script(w) => WorkloadClient::Script(Box::new(w.client(client_id))),
            Workload::Ycsb(w) => WorkloadClient::Ycsb(Box::new(w.client())),
            Workload::Tpch(w) => WorkloadClient::Tpch(Box::new(w.client(client_id, clients))),
            Workload::Ch(w) => w.client(client_id, clients),
        }
    }

    /// Whether a transaction that failed with `class` on a `dialect` server is tried again (with
    /// the same random values). pgbench retries serialization failures and deadlocks only;
    /// sysbench restarts events on the errors it ignores (see [`sysbench::Sysbench::is_retryable`]).
    pub fn is_retryable(&self, class: &ErrorClass, dialect: Dialect) -> bool {
        match self {
            Workload::Tpcb(_) | Workload::Script(_) | Workload::Ycsb(_) | Workload::Tpch(_) => {
                matches!(class, ErrorClass::Serialization | ErrorClass::Deadlock)
            }
            Workload::Sysbench(w) => w.is_retryable(class, dialect),
            // Retried until the run ends (as CockroachDB's workload does): SERIALIZABLE works.
            Workload::Tpcc(_) | Workload::Ch(_) => class.is_retryable(),
        }
    }

    /// Tries per transaction given the run's `max_tries`, which is a floor: pgbench workloads use
    /// it as is; sysbench workloads restart events without limit until the run ends, as sysbench
    /// does (its ignored errors are counted, never fatal).
    pub fn max_tries(&self, configured: u32) -> u32 {
        match self {
            Workload::Tpcb(_) | Workload::Script(_) | Workload::Ycsb(_) | Workload::Tpch(_) => {
                configured
            }
            // Unlimited, so above any configured value.
            Workload::Sysbench(_) | Workload::Tpcc(_) | Workload::Ch(_) => sysbench::MAX_TRIES,
        }
    }

    /// Loads the data; with `part`, one phase or one worker's part of a split load.
    pub async fn prepare(
        &self,
        endpoint: &Endpoint,
        part: Option<&LoadPart>,
    ) -> Result<PrepareSummary, Error> {
        match self {
            Workload::Tpcb(w) => w.prepare(endpoint, part).await,
            Workload::Sysbench(w) => w.prepare(endpoint, part).await,
            Workload::Tpcc(w) => w.prepare(endpoint, part).await,
            Workload::Ycsb(w) => w.prepare(endpoint, part).await,
            Workload::Tpch(w) => w.prepare(endpoint, part).await,
            Workload::Ch(w) => w.prepare(endpoint, part).await,
            Workload::Script(_) => Err(Error::Config(
                "scripts bring no data of their own: load it with the workload the script \
                 reads (e.g. `dbscale prepare tpcb`) or your own tools"
                    .into(),
            )),
        }
    }

    pub async fn cleanup(&self, endpoint: &Endpoint) -> Result<PrepareSummary, Error> {
        match self {
            Workload::Tpcb(w) => w.cleanup(endpoint).await,
            Workload::Sysbench(w) => w.cleanup(endpoint).await,
            Workload::Tpcc(w) => w.cleanup(endpoint).await,
            Workload::Ycsb(w) => w.cleanup(endpoint).await,
            Workload::Tpch(w) => w.cleanup(endpoint).await,
            Workload::Ch(w) => w.cleanup(endpoint).await,
            Workload::Script(_) => Ok(PrepareSummary::default()),
        }
    }

    /// Scripts: where each command is, in the order of their latency tallies.
    pub fn command_places(&self) -> Vec<CommandPlace> {
        match self {
            Workload::Script(w) => w.command_places(),
            _ => Vec::new(),
        }
    }

    /// Refuses a client count the workload cannot run with (TPC-C with waits: 10 per warehouse).
    pub fn check_clients(&self, clients: u32) -> Result<(), Error> {
        match self {
            Workload::Tpcc(w) => w.check_clients(clients),
            Workload::Ch(w) => w.check_clients(clients),
            _ => Ok(()),
        }
    }

    /// Connections the clients share, when the workload decouples them (TPC-C `connections`).
    pub fn shared_connections(&self) -> Option<u32> {
        match self {
            Workload::Tpcc(w) => w.connections(),
            _ => None,
        }
    }

    /// The workload's own figures and verdict from the measured per-type histograms and tallies.
    pub fn summarize(
        &self,
        types: &[LatencyHistogram],
        tally: &[u64],
        duration_s: f64,
    ) -> Option<tpcc::TpccSummary> {
        match self {
            Workload::Tpcc(w) => w.summarize(types, tally, duration_s),
            Workload::Ch(w) => w.summarize(types, tally, duration_s),
            _ => None,
        }
    }

    /// The consistency conditions of the workload's data (`dbscale check`).
    pub async fn consistency(
        &self,
        endpoint: &Endpoint,
    ) -> Result<tpcc::check::CheckReport, Error> {
        match self {
            Workload::Tpcc(w) => {
                let explicit = w.params().is_explicit("warehouses");
                tpcc::check::run_checks(endpoint, explicit.then(|| w.params().int("warehouses")))
                    .await
            }
            Workload::Tpch(w) => tpch::check_answers(endpoint, w.options()).await,
            // TPC-C's conditions hold after a mixed run too: the streams only read.
            Workload::Ch(w) => {
                let explicit = w.tpcc().params().is_explicit("warehouses");
                let warehouses = w.tpcc().params().int("warehouses");
                tpcc::check::run_checks(endpoint, explicit.then_some(warehouses)).await
            }
            other => Err(Error::Config(format!(
                "{} has no consistency checks; `dbscale check` knows tpcc and tpch",
                other.name()
            ))),
        }
    }
}

/// A workload's config from a name and `--set` parameters, for the families' tests.
#[cfg(test)]
pub(crate) fn test_config(name: &str, params: &[(&str, serde_json::Value)]) -> WorkloadConfig {
    WorkloadConfig {
        name: name.into(),
        params: params
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect(),
        ..Default::default()
    }
}

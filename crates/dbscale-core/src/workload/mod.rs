//! Workloads: what a client does in one transaction, the statements it uses, the data it needs.
//! Each workload family lives in its own module; [`Workload`] and [`WorkloadClient`] dispatch to
//! them with enums so the hot loop makes no dynamic calls.

pub mod params;
pub mod sysbench;
pub mod tpcb;

use std::collections::BTreeMap;

use rand::rngs::SmallRng;
use serde::Serialize;

use crate::config::WorkloadConfig;
use crate::driver::{Connection, DbError, Dialect, Endpoint, ErrorClass, QueryOutcome, Statement};
use crate::stats::result::QueryCounts;
use crate::Error;
pub use params::{ParamSpec, Params};

/// What a successful transaction did: its type (index into [`Workload::transaction_types`]) and
/// its statements by class.
#[derive(Debug, Clone, Copy, Default)]
pub struct TxnOutcome {
    pub kind: usize,
    pub queries: QueryCounts,
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

/// A workload's entry in the catalog.
#[derive(Debug, Clone, Serialize)]
pub struct WorkloadInfo {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub description: &'static str,
    #[serde(serialize_with = "serialize_specs")]
    pub params: &'static [ParamSpec],
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
        map.serialize_entry(
            spec.name,
            &serde_json::json!({"default": default, "doc": spec.doc}),
        )?;
    }
    map.end()
}

/// Every workload dbscale knows.
pub fn catalog() -> Vec<WorkloadInfo> {
    let mut all = tpcb::catalog();
    all.extend(sysbench::catalog());
    all
}

/// Time spent in each step of a prepare or cleanup.
#[derive(Debug, Clone, Default, Serialize)]
pub struct PrepareSummary {
    pub steps: Vec<PrepareStep>,
    pub rows: u64,
    pub seconds: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct PrepareStep {
    pub name: String,
    pub seconds: f64,
}

/// A configured workload.
#[derive(Debug, Clone)]
pub enum Workload {
    Tpcb(tpcb::Tpcb),
    Sysbench(sysbench::Sysbench),
}

impl Workload {
    pub fn from_config(config: &WorkloadConfig) -> Result<Self, Error> {
        if let Some(w) = tpcb::Tpcb::from_config(config)? {
            return Ok(Workload::Tpcb(w));
        }
        if let Some(w) = sysbench::Sysbench::from_config(config)? {
            return Ok(Workload::Sysbench(w));
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
        }
    }

    pub fn params(&self) -> BTreeMap<String, serde_json::Value> {
        match self {
            Workload::Tpcb(w) => w.params().to_map(),
            Workload::Sysbench(w) => w.params().to_map(),
        }
    }

    pub fn transaction_types(&self) -> &'static [&'static str] {
        match self {
            Workload::Tpcb(w) => w.transaction_types(),
            Workload::Sysbench(w) => w.transaction_types(),
        }
    }

    pub fn statements(&self, dialect: Dialect) -> Result<Vec<Statement>, Error> {
        match self {
            Workload::Tpcb(w) => w.statements(dialect),
            Workload::Sysbench(w) => w.statements(dialect),
        }
    }

    /// Checks that the data is there and reads what the run depends on (e.g. the scale).
    pub async fn check(&mut self, conn: &mut Connection) -> Result<(), Error> {
        match self {
            Workload::Tpcb(w) => w.check(conn).await,
            Workload::Sysbench(w) => w.check(conn).await,
        }
    }

    /// Maintenance done once before a measured run (pgbench's vacuum and truncate).
    pub async fn before_run(&self, conn: &mut Connection) -> Result<(), Error> {
        match self {
            Workload::Tpcb(w) => w.before_run(conn).await,
            Workload::Sysbench(w) => w.before_run(conn).await,
        }
    }

    /// State for client `client_id` of the run's `clients`.
    pub fn client(&self, client_id: u32, clients: u32) -> WorkloadClient {
        match self {
            Workload::Tpcb(w) => WorkloadClient::Tpcb(w.client(client_id)),
            Workload::Sysbench(w) => {
                WorkloadClient::Sysbench(Box::new(w.client(client_id, clients)))
            }
        }
    }

    /// Whether a transaction that failed with `class` on a `dialect` server is tried again (with
    /// the same random values). pgbench retries serialization failures and deadlocks only;
    /// sysbench restarts events on the errors it ignores (see [`sysbench::Sysbench::is_retryable`]).
    pub fn is_retryable(&self, class: &ErrorClass, dialect: Dialect) -> bool {
        match self {
            Workload::Tpcb(_) => matches!(class, ErrorClass::Serialization | ErrorClass::Deadlock),
            Workload::Sysbench(w) => w.is_retryable(class, dialect),
        }
    }

    /// Tries per transaction given the run's `max_tries`, which is a floor: pgbench workloads use
    /// it as is; sysbench workloads restart events without limit until the run ends, as sysbench
    /// does (its ignored errors are counted, never fatal).
    pub fn max_tries(&self, configured: u32) -> u32 {
        match self {
            Workload::Tpcb(_) => configured,
            // Unlimited, so above any configured value.
            Workload::Sysbench(_) => sysbench::MAX_TRIES,
        }
    }

    pub async fn prepare(&self, endpoint: &Endpoint) -> Result<PrepareSummary, Error> {
        match self {
            Workload::Tpcb(w) => w.prepare(endpoint).await,
            Workload::Sysbench(w) => w.prepare(endpoint).await,
        }
    }

    pub async fn cleanup(&self, endpoint: &Endpoint) -> Result<PrepareSummary, Error> {
        match self {
            Workload::Tpcb(w) => w.cleanup(endpoint).await,
            Workload::Sysbench(w) => w.cleanup(endpoint).await,
        }
    }
}

/// One client's state for a workload.
pub enum WorkloadClient {
    Tpcb(tpcb::TpcbClient),
    /// Boxed: its parameter buffers would make every client of any workload as large.
    Sysbench(Box<sysbench::SysbenchClient>),
}

impl WorkloadClient {
    /// Runs one transaction. On error the caller resets the connection; the random state is the
    /// caller's, so a retry can replay the same values.
    #[inline]
    pub async fn run(
        &mut self,
        conn: &mut Connection,
        rng: &mut SmallRng,
    ) -> Result<TxnOutcome, DbError> {
        match self {
            WorkloadClient::Tpcb(c) => c.run(conn, rng).await,
            WorkloadClient::Sysbench(c) => c.run(conn, rng).await,
        }
    }
}

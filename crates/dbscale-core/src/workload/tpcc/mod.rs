//! TPC-C (clauses 1-5 as the kits implement them): nine tables in go-tpc's names, a parallel
//! loader, the five transactions dealt from a deck per terminal, wait (keying and think times,
//! 10 terminals per warehouse) and nowait (the Cloud Report's) modes, tpmC with its pass rules
//! and audits, and the consistency conditions of 3.3.2.

mod audits;
mod bulk;
pub mod check;
mod data;
mod delivery;
mod loader;
mod new_order;
mod payment;
mod random;
mod rows;
mod schema;
mod statements;
mod summary;
mod terminal;

use std::collections::BTreeMap;
use std::sync::Arc;

use rand::rngs::SmallRng;
use rand::SeedableRng;

use crate::config::WorkloadConfig;
use crate::driver::{Connection, DbError, Dialect, ErrorClass, Statement};
pub use crate::stats::tpcc::TpccSummary;
use crate::stats::LatencyHistogram;
use crate::workload::{ParamSpec, Params, WorkloadInfo};
use crate::Error;
use random::NurandConstants;
use summary::{PassRule, SummaryInput};
use terminal::RunShape;
pub use terminal::TpccClient;

pub const TRANSACTION_TYPES: &[&str] = &[
    "new_order",
    "payment",
    "order_status",
    "delivery",
    "stock_level",
];

/// Connections `dbscale prepare tpcc` loads over by default.
const DEFAULT_LOADERS: i64 = 4;

pub(crate) const PARAMS: &[ParamSpec] = &[
    ParamSpec::int("warehouses", 1, "warehouses to load (prepare); a run reads the count from the warehouse table"),
    ParamSpec::int("active_warehouses", 0, "warehouses with terminals in a run, 1..warehouses (0: all)"),
    ParamSpec::bool("wait", true, "keying and think times per the spec, 10 terminals per active warehouse; false is the Cloud Report's nowait"),
    ParamSpec::str("mix", "45,43,4,4,4", "deck weights of new_order, payment, order_status, delivery, stock_level (spec minima: payment 43, others 4)"),
    ParamSpec::int("connections", 0, "connections the terminals (--clients) share; 0: one per terminal"),
    ParamSpec::bool("foreign_keys", false, "add the spec's foreign keys after loading"),
    ParamSpec::int("loaders", DEFAULT_LOADERS, "connections `prepare` loads over"),
    ParamSpec::str("load_method", "auto", "how `prepare` writes rows: auto (COPY on PostgreSQL, LOAD DATA LOCAL on MySQL when allowed) or insert (multi-row INSERTs)"),
    ParamSpec::str("pass_p90_s", "5,5,5,5,20", "wait mode: 90th-percentile limits per type, seconds (5.2.5.4)"),
    ParamSpec::float("pass_efficiency_pct", 85.0, "wait mode: minimum efficiency, percent of 12.86 tpmC per active warehouse"),
    ParamSpec::float("pass_new_order_p95_s", 10.0, "nowait mode: New-Order 95th percentile limit, seconds (the Cloud Report's rule)"),
];

pub fn catalog() -> Vec<WorkloadInfo> {
    vec![WorkloadInfo {
        name: "tpcc",
        aliases: &["tpc-c"],
        family: crate::workload::Family::Tpcc,
        description: "TPC-C: New-Order, Payment, Order-Status, Delivery, Stock-Level over 9 tables (go-tpc's schema); tpmC, efficiency, pass rules, audits",
        params: PARAMS,
    }]
}

#[derive(Debug, Clone)]
pub struct Tpcc {
    params: Params,
    warehouses: i64,
    shape: Option<Arc<RunShape>>,
    c_last_source: &'static str,
}

impl Tpcc {
    /// `Ok(None)` when the name is not TPC-C's.
    pub fn from_config(config: &WorkloadConfig) -> Result<Option<Self>, Error> {
        if !matches!(config.name.as_str(), "tpcc" | "tpc-c") {
            return Ok(None);
        }
        Self::from_params(&config.params).map(Some)
    }

    /// TPC-C from its parameters (`tpcc`'s, or CH-benCHmark's TPC-C part).
    pub fn from_params(given: &BTreeMap<String, serde_json::Value>) -> Result<Self, Error> {
        let params = Params::resolve("tpcc", PARAMS, given)?;
        let bad = |m: String| Err(Error::Config(format!("tpcc: {m}")));
        let warehouses = params.int("warehouses");
        if !(1..=100_000).contains(&warehouses) {
            return bad(format!("warehouses must be 1-100000, got {warehouses}"));
        }
        if params.int("active_warehouses") < 0 {
            return bad("active_warehouses must be 0 (all) or more".into());
        }
        if params.int("connections") < 0 {
            return bad("connections must be 0 (one per client) or more".into());
        }
        if !(1..=64).contains(&params.int("loaders")) {
            return bad(format!(
                "loaders must be 1-64, got {}",
                params.int("loaders")
            ));
        }
        if !matches!(params.str("load_method"), "auto" | "insert") {
            return bad(format!(
                "load_method must be auto or insert, got {:?}",
                params.str("load_method")
            ));
        }
        mix_deck(params.str("mix"))?;
        p90_limits(params.str("pass_p90_s"))?;
        Ok(Self {
            params,
            warehouses,
            shape: None,
            c_last_source: "unknown",
        })
    }

    pub fn params(&self) -> &Params {
        &self.params
    }

    pub fn statements(&self, dialect: Dialect) -> Vec<Statement> {
        statements::all(dialect)
    }

    fn loaders(&self) -> usize {
        self.params.int("loaders") as usize
    }

    /// Connections the run's clients share (None: one each).
    pub fn connections(&self) -> Option<u32> {
        u32::try_from(self.params.int("connections"))
            .ok()
            .filter(|n| *n > 0)
    }

    /// Reads the warehouse count and the load's NURand constants, and fixes the run's.
    pub async fn check(&mut self, conn: &mut Connection) -> Result<(), Error> {
        let rows = conn
            .query("SELECT COUNT(*), MIN(w_id), MAX(w_id) FROM warehouse")
            .await
            .map_err(|e| read_failed(e, "reading the TPC-C warehouses"))?;
        let row = rows.first().cloned().unwrap_or_default();
        let found = terminal::int_at(&row, 0);
        if found < 1 || terminal::int_at(&row, 1) != 1 || terminal::int_at(&row, 2) != found {
            return Err(Error::NotPrepared(format!(
                "the warehouse table holds {found} rows, not warehouses 1..N: the TPC-C data is not (completely) loaded"
            ).into()));
        }
        if self.params.is_explicit("warehouses") && self.warehouses != found {
            return Err(Error::NotPrepared(
                format!(
                    "the tables hold {found} warehouses but warehouses={} was asked",
                    self.warehouses
                )
                .into(),
            ));
        }
        self.warehouses = found;
        self.params.set("warehouses", found.into());
        let active = match self.params.int("active_warehouses") {
            0 => found,
            n if n <= found => n,
            n => {
                return Err(Error::Config(format!(
                    "tpcc: active_warehouses={n} but only {found} warehouses are loaded"
                )))
            }
        };
        self.params.set("active_warehouses", active.into());
        let mut rng = SmallRng::from_entropy();
        let load = load_constants(conn).await;
        let constants = match &load {
            Some(load) => NurandConstants::for_run(load, &mut rng),
            None => NurandConstants::for_load(&mut rng),
        };
        self.c_last_source = if load.is_some() { "load" } else { "unknown" };
        self.shape = Some(Arc::new(RunShape {
            warehouses: found,
            active,
            constants,
            wait: self.params.bool("wait"),
            deck: mix_deck(self.params.str("mix"))?,
        }));
        Ok(())
    }

    /// With waits the spec runs exactly 10 terminals per active warehouse.
    pub fn check_clients(&self, clients: u32) -> Result<(), Error> {
        let Some(shape) = &self.shape else {
            return Ok(());
        };
        if shape.wait && i64::from(clients) != 10 * shape.active {
            return Err(Error::Config(format!(
                "tpcc: wait=true runs the spec's 10 terminals per active warehouse: --clients {} for {} active warehouses (or --set wait=false)",
                10 * shape.active,
                shape.active
            )));
        }
        Ok(())
    }

    /// The home warehouse (from 0) of terminal `client_id`: the key that pins a terminal to a
    /// cluster node under affinity routing.
    pub fn home_index(&self, client_id: u32) -> u64 {
        self.shape.as_ref().map_or(u64::from(client_id), |shape| {
            (i64::from(client_id) % shape.active.max(1)) as u64
        })
    }

    pub fn client(&self, client_id: u32) -> TpccClient {
        let shape = self
            .shape
            .clone()
            .expect("check() runs before clients are made");
        TpccClient::new(shape, client_id)
    }

    pub fn summarize(
        &self,
        types: &[LatencyHistogram],
        tally: &[u64],
        duration_s: f64,
    ) -> Option<TpccSummary> {
        let shape = self.shape.as_ref()?;
        let found = (shape.warehouses, shape.active, shape.wait);
        self.summarize_shape(found, self.c_last_source, types, tally, duration_s)
    }

    /// The figures of workers' merged histograms and tallies; the shape (warehouses, active
    /// ones, waits) from the parameters as their results resolved them.
    pub fn summarize_merged(
        &self,
        c_last_source: &str,
        types: &[LatencyHistogram],
        tally: &[u64],
        duration_s: f64,
    ) -> Option<TpccSummary> {
        let found = (
            self.params.int("warehouses"),
            self.params.int("active_warehouses"),
            self.params.bool("wait"),
        );
        self.summarize_shape(found, c_last_source, types, tally, duration_s)
    }

    fn summarize_shape(
        &self,
        (warehouses, active, wait): (i64, i64, bool),
        c_last_source: &str,
        types: &[LatencyHistogram],
        tally: &[u64],
        duration_s: f64,
    ) -> Option<TpccSummary> {
        let name = if wait { "spec" } else { "cloud-report" };
        let rule = PassRule {
            name: name.into(),
            p90_limits_s: p90_limits(self.params.str("pass_p90_s")).ok()?,
            min_efficiency_pct: self.params.float("pass_efficiency_pct"),
            new_order_p95_limit_s: self.params.float("pass_new_order_p95_s"),
        };
        Some(summary::summarize(&SummaryInput {
            warehouses,
            active,
            wait,
            rule,
            types,
            tally,
            duration_s,
            c_last_source,
        }))
    }
}

/// A failed read of the TPC-C tables: "not prepared" when a table is missing (PostgreSQL 42P01,
/// MySQL 1146), otherwise the statement's error in `context`.
pub(crate) fn read_failed(source: DbError, context: &str) -> Error {
    if matches!(&source.class, ErrorClass::Sql(code) if code == "42P01" || code == "1146") {
        Error::NotPrepared(format!("the TPC-C tables are missing ({})", source.message).into())
    } else {
        Error::Sql {
            context: context.into(),
            source,
        }
    }
}

/// The load's constants from dbscale's load table; None when another tool loaded the data.
async fn load_constants(conn: &mut Connection) -> Option<NurandConstants> {
    let sql = format!("SELECT c_last, c_id, ol_i_id FROM {}", schema::LOAD_TABLE);
    let rows = conn.query(&sql).await.ok()?;
    let row = rows.first()?;
    Some(NurandConstants {
        c_last: terminal::int_at(row, 0),
        c_id: terminal::int_at(row, 1),
        ol_i_id: terminal::int_at(row, 2),
    })
}

/// One pass of the deck: each type as many times as its weight, weights divided by their GCD.
fn mix_deck(mix: &str) -> Result<Vec<usize>, Error> {
    let bad = || {
        Error::Config(format!(
            "tpcc: mix must be five non-negative integers like 45,43,4,4,4, got {mix:?}"
        ))
    };
    let weights: Vec<usize> = mix
        .split(',')
        .map(|w| w.trim().parse().map_err(|_| bad()))
        .collect::<Result<_, _>>()?;
    if weights.len() != 5
        || weights.iter().sum::<usize>() == 0
        || weights.iter().sum::<usize>() > 10_000
    {
        return Err(bad());
    }
    let gcd = weights.iter().fold(0, |a, &b| gcd(a, b));
    Ok(weights
        .iter()
        .enumerate()
        .flat_map(|(kind, w)| std::iter::repeat_n(kind, w / gcd))
        .collect())
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

fn p90_limits(text: &str) -> Result<Vec<f64>, Error> {
    let limits: Vec<f64> = text
        .split(',')
        .filter_map(|v| v.trim().parse().ok())
        .filter(|v: &f64| *v > 0.0)
        .collect();
    if limits.len() != 5 {
        return Err(Error::Config(format!("tpcc: pass_p90_s must be five positive numbers of seconds like 5,5,5,5,20, got {text:?}")));
    }
    Ok(limits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decks_reduce_their_weights() {
        assert_eq!(mix_deck("45,43,4,4,4").unwrap().len(), 100);
        assert_eq!(mix_deck("10,10,1,1,1").unwrap().len(), 23);
        assert_eq!(mix_deck("50,50,0,0,0").unwrap(), vec![0, 1]);
        assert!(mix_deck("1,2,3").is_err());
        assert!(mix_deck("a,1,1,1,1").is_err());
        assert!(p90_limits("5,5,5,5").is_err());
        assert_eq!(p90_limits("5,5,5,5,20").unwrap()[4], 20.0);
    }

    #[test]
    fn parameters_are_checked() {
        let config = |pairs: &[(&str, &str)]| WorkloadConfig {
            name: "tpcc".into(),
            params: pairs
                .iter()
                .map(|(k, v)| (k.to_string(), serde_json::Value::from(*v)))
                .collect(),
            ..Default::default()
        };
        assert!(Tpcc::from_config(&config(&[])).unwrap().is_some());
        assert!(Tpcc::from_config(&config(&[("warehouses", "0")])).is_err());
        assert!(Tpcc::from_config(&config(&[("mix", "1,1")])).is_err());
        assert!(Tpcc::from_config(&config(&[("connections", "-1")])).is_err());
        let other = WorkloadConfig {
            name: "tpcb".into(),
            params: Default::default(),
            ..Default::default()
        };
        assert!(Tpcc::from_config(&other).unwrap().is_none());
    }
}

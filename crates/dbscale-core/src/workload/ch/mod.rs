//! CH-benCHmark (Cole et al., 2011): TPC-C's terminals and analytic query streams in one run,
//! over TPC-C's nine tables plus TPC-H's SUPPLIER, NATION and REGION (scale factor 1: 10,000
//! suppliers, 25 nations, 5 regions, as go-tpc's `ch` loads them). The run's last
//! `analytic_streams` clients are the streams, the others TPC-C terminals, so one run gives tpmC
//! and analytic queries per hour side by side; with `analytic_streams=0` it is TPC-C alone on the
//! same data, the baseline the streams' cost is measured against.

mod loader;
pub mod queries;
mod stream;

use std::collections::BTreeMap;
use std::sync::OnceLock;

use crate::config::WorkloadConfig;
use crate::driver::{Connection, Dialect, Statement};
use crate::stats::LatencyHistogram;
use crate::workload::tpcc::{self, Tpcc, TpccSummary};
use crate::workload::tpch::query_list;
use crate::workload::{Family, ParamSpec, Params, WorkloadClient, WorkloadInfo};
use crate::Error;
pub use stream::ChStream;

pub const NAME: &str = "ch";

/// TPC-C's five types, then the 22 queries.
pub const TRANSACTION_TYPES: [&str; 27] = [
    "new_order",
    "payment",
    "order_status",
    "delivery",
    "stock_level",
    "q1",
    "q2",
    "q3",
    "q4",
    "q5",
    "q6",
    "q7",
    "q8",
    "q9",
    "q10",
    "q11",
    "q12",
    "q13",
    "q14",
    "q15",
    "q16",
    "q17",
    "q18",
    "q19",
    "q20",
    "q21",
    "q22",
];
/// TPC-C's types come first.
const TPCC_TYPES: usize = 5;

/// CH-benCHmark's own parameters; TPC-C's are taken as `tpcc` takes them.
const OWN_PARAMS: &[ParamSpec] = &[
    ParamSpec::int("analytic_streams", 1, "clients (the run's last ones) that are analytic query streams; the others are TPC-C terminals; 0: TPC-C alone on the same data"),
    ParamSpec::str("queries", "1-22", "the queries each stream runs, in order from its own starting query: 1-22, or a list like 1,3,6 or 1-5,14"),
];

/// TPC-C's parameters and CH-benCHmark's own, as the catalog shows them.
fn all_params() -> &'static [ParamSpec] {
    static ALL: OnceLock<Vec<ParamSpec>> = OnceLock::new();
    ALL.get_or_init(|| tpcc::PARAMS.iter().chain(OWN_PARAMS).copied().collect())
}

pub fn catalog() -> Vec<WorkloadInfo> {
    vec![WorkloadInfo {
        name: NAME,
        aliases: &["chbenchmark", "ch-benchmark"],
        family: Family::Ch,
        description: "CH-benCHmark: TPC-C terminals and analytic query streams (22 queries over TPC-C's tables plus supplier, nation, region) in one run; tpmC and queries per hour side by side",
        params: all_params(),
    }]
}

/// The workload as a run resolved it.
#[derive(Debug, Clone)]
pub struct Ch {
    tpcc: Tpcc,
    own: Params,
    streams: u32,
    queries: Vec<usize>,
}

impl Ch {
    pub fn from_config(config: &WorkloadConfig) -> Result<Option<Self>, Error> {
        if !matches!(config.name.as_str(), NAME | "chbenchmark" | "ch-benchmark") {
            return Ok(None);
        }
        let (own, tpcc): (BTreeMap<_, _>, BTreeMap<_, _>) = config
            .params
            .clone()
            .into_iter()
            .partition(|(k, _)| OWN_PARAMS.iter().any(|p| p.name == k));
        let own = Params::resolve(NAME, OWN_PARAMS, &own)?;
        let tpcc = Tpcc::from_params(&tpcc)?;
        let bad = |m: String| Error::Config(format!("{NAME}: {m}"));
        let streams = own.int("analytic_streams");
        if !(0..=1_000).contains(&streams) {
            return Err(bad(format!(
                "analytic_streams must be 0 to 1000, got {streams}"
            )));
        }
        if tpcc.connections().is_some() {
            return Err(bad(
                "connections (terminals sharing connections) is TPC-C's alone: each stream \
                 needs a connection of its own"
                    .into(),
            ));
        }
        let queries = query_list(own.str("queries")).map_err(bad)?;
        Ok(Some(Self {
            tpcc,
            own,
            streams: streams as u32,
            queries,
        }))
    }

    /// TPC-C's parameters (as resolved) and CH-benCHmark's own.
    pub fn params(&self) -> BTreeMap<String, serde_json::Value> {
        let mut all = self.tpcc.params().to_map();
        all.extend(self.own.to_map());
        all
    }

    pub fn statements(&self, dialect: Dialect) -> Vec<Statement> {
        self.tpcc.statements(dialect)
    }

    /// TPC-C's tables and the three CH-benCHmark adds.
    pub async fn check(&mut self, conn: &mut Connection) -> Result<(), Error> {
        self.tpcc.check(conn).await?;
        loader::check_tables(conn).await
    }

    /// Terminals of a run with `clients` clients.
    fn terminals(&self, clients: u32) -> u32 {
        clients.saturating_sub(self.streams)
    }

    /// TPC-C's rule for its terminals (10 per active warehouse with waits); a stream at least.
    pub fn check_clients(&self, clients: u32) -> Result<(), Error> {
        if self.streams > 0 && clients <= self.streams {
            return Err(Error::Config(format!(
                "{NAME}: --clients {clients} leaves no TPC-C terminal beside {} analytic \
                 streams: --clients counts both (terminals + analytic_streams)",
                self.streams
            )));
        }
        self.tpcc
            .check_clients(self.terminals(clients))
            .map_err(|e| match e {
                Error::Config(m) => Error::Config(format!(
                    "{m}; with {NAME}, --clients is terminals + analytic_streams ({})",
                    self.streams
                )),
                other => other,
            })
    }

    pub fn affinity_key(&self, client_id: u32) -> u64 {
        self.tpcc.home_index(client_id)
    }

    /// A terminal is a TPC-C client as `tpcc` runs it (so the hot loop dispatches on no
    /// more variants than before), a stream one of its own.
    pub fn client(&self, client_id: u32, clients: u32) -> WorkloadClient {
        let terminals = self.terminals(clients);
        if client_id < terminals {
            WorkloadClient::Tpcc(self.tpcc.client(client_id))
        } else {
            WorkloadClient::AnalyticStream(Box::new(ChStream::new(
                &self.queries,
                client_id - terminals,
                TPCC_TYPES,
            )))
        }
    }

    /// tpmC and TPC-C's verdict from the terminals' types (the streams' are the report's).
    pub fn summarize(
        &self,
        types: &[LatencyHistogram],
        tally: &[u64],
        duration_s: f64,
    ) -> Option<TpccSummary> {
        self.tpcc
            .summarize(&types[..TPCC_TYPES.min(types.len())], tally, duration_s)
    }

    pub fn tpcc(&self) -> &Tpcc {
        &self.tpcc
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{test_config, Workload};
    use serde_json::json;

    fn ch(params: &[(&str, serde_json::Value)]) -> Result<Ch, Error> {
        Ch::from_config(&test_config("ch", params)).map(|c| c.expect("ch is ch"))
    }

    #[test]
    fn takes_tpcc_parameters_and_its_own() {
        let w = ch(&[("wait", json!(false)), ("analytic_streams", json!(2))]).unwrap();
        let params = w.params();
        assert_eq!(params["analytic_streams"], json!(2));
        assert_eq!(params["wait"], json!(false));
        assert_eq!(params["queries"], json!("1-22"));
        let names: Vec<&str> = all_params().iter().map(|p| p.name).collect();
        assert!(names.contains(&"warehouses") && names.contains(&"analytic_streams"));
        assert!(ch(&[("nonsense", json!(1))]).is_err());
        assert!(ch(&[("analytic_streams", json!(-1))]).is_err());
        assert!(ch(&[("queries", json!("0-3"))]).is_err());
        assert!(ch(&[("connections", json!(4))]).is_err());
        let any = Workload::from_config(&test_config("chbenchmark", &[])).unwrap();
        assert_eq!(any.name(), NAME);
        assert_eq!(any.transaction_types().len(), 27);
        assert_eq!(any.transaction_types()[5], "q1");
    }

    #[test]
    fn the_last_clients_are_the_streams_each_from_its_own_query() {
        let w = ch(&[("analytic_streams", json!(2)), ("queries", json!("3,6,9"))]).unwrap();
        assert_eq!(w.terminals(12), 10);
        let first = ChStream::new(&w.queries, 0, TPCC_TYPES);
        let second = ChStream::new(&w.queries, 1, TPCC_TYPES);
        assert_eq!((first.next_query(), second.next_query()), (3, 6));
        assert!(
            w.check_clients(2).is_err(),
            "no terminal beside two streams"
        );
        // Without a run's shape (check() not run), TPC-C's own rule has nothing to hold against.
        assert!(w.check_clients(3).is_ok());
    }

    #[test]
    fn every_query_is_one_statement_without_a_comment() {
        // (Each runs on both servers in tests/integration/test_ch.py.)
        for n in 1..=22 {
            let q = queries::query(n).to_lowercase();
            assert!(q.starts_with("select"), "q{n}");
            assert!(
                !q.contains(';') && !q.contains('#') && !q.contains("--"),
                "q{n}"
            );
        }
    }
}

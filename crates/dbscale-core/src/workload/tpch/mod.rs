//! A workload derived from TPC-H (not TPC-H: its results are not comparable to published TPC-H
//! results): dbgen's data at any scale factor (the `tpchgen` crate), the 22 queries with qgen's
//! substitution parameters drawn from the run's seed (or the qualification values), on
//! PostgreSQL and MySQL/MariaDB. Each client is a query stream running its queries in the
//! specification's order for its stream number, one query per transaction of its type (`q1` ..
//! `q22`): one client and `-t 22` is a power run's query part, S clients and `-t 22` a
//! throughput run; a timed run repeats each stream with new parameters. With `refresh=true`
//! each stream runs the refresh functions around its queries (RF1 first, RF2 last: `-c 1 -t 24`
//! is a power run), each pair on an update set of its own.

mod answers;
pub(crate) mod loader;
pub mod parameters;
pub mod queries;
pub mod refresh;
mod schema;
pub mod streams;

use crate::config::WorkloadConfig;
use crate::driver::{Connection, DbError};
use crate::error::Unprepared;
use crate::workload::loading::missing_or_failed;
use crate::workload::{Family, ParamSpec, Params, WorkloadInfo};
use crate::Error;
pub use answers::check_answers;
pub use streams::{RefreshSets, TpchClient};

pub const NAME: &str = "tpch";

/// The transaction types: one per query, then the two refresh functions.
pub const TRANSACTION_TYPES: [&str; 24] = [
    "q1", "q2", "q3", "q4", "q5", "q6", "q7", "q8", "q9", "q10", "q11", "q12", "q13", "q14", "q15",
    "q16", "q17", "q18", "q19", "q20", "q21", "q22", "rf1", "rf2",
];

const PARAMS: &[ParamSpec] = &[
    ParamSpec::float("scale_factor", 1.0, "TPC-H scale factor: SF 1 is about 1 GB (8.7 million rows), 0.01 about 10 MB (dbgen -s)"),
    ParamSpec::str("queries", "1-22", "the queries each stream runs, in its order: 1-22, or a list like 1,3,6 or 1-5,14"),
    ParamSpec::str("order", "permuted", "permuted: stream s runs the specification's order s (Appendix A; stream 0, the power test's, first); sequential: 1 to 22"),
    ParamSpec::str("parameters", "random", "random: substitution parameters drawn as qgen draws them, from the run's seed; qualification: the specification's validation values"),
    ParamSpec::bool("refresh", false, "each stream runs RF1 (new sales: SF x 1500 orders and their line items) before its queries and RF2 (old sales deleted) after them, each one transaction on an update set of its own"),
    ParamSpec::int("loaders", 4, "connections loading at once during prepare"),
];

/// The resolved parameters.
#[derive(Debug, Clone)]
pub struct Options {
    pub scale_factor: f64,
    pub queries: Vec<usize>,
    pub permuted: bool,
    pub qualification: bool,
    pub refresh: bool,
    pub loaders: u32,
}

impl Options {
    fn resolve(p: &Params) -> Result<Self, Error> {
        let bad = |what: String| Error::Config(format!("{NAME}: {what}"));
        let scale_factor = p.float("scale_factor");
        if !(0.001..=100_000.0).contains(&scale_factor) {
            return Err(bad(format!(
                "scale_factor must be 0.001 to 100000, got {scale_factor}"
            )));
        }
        let permuted = match p.str("order") {
            "permuted" => true,
            "sequential" => false,
            other => {
                return Err(bad(format!(
                    "order must be permuted or sequential, got {other:?}"
                )))
            }
        };
        let qualification = match p.str("parameters") {
            "random" => false,
            "qualification" => true,
            other => {
                return Err(bad(format!(
                    "parameters must be random or qualification, got {other:?}"
                )))
            }
        };
        let loaders = p.int("loaders");
        if !(1..=64).contains(&loaders) {
            return Err(bad(format!("loaders must be 1 to 64, got {loaders}")));
        }
        Ok(Self {
            scale_factor,
            queries: query_list(p.str("queries")).map_err(bad)?,
            permuted,
            qualification,
            refresh: p.bool("refresh"),
            loaders: loaders as u32,
        })
    }
}

/// `1-22`, `1,3,6`, `1-5,14`: the query numbers, each once.
pub(crate) fn query_list(text: &str) -> Result<Vec<usize>, String> {
    let bad = || {
        format!(
            "queries must be numbers 1 to 22 and ranges like 1-5, comma-separated; got {text:?}"
        )
    };
    let mut out = Vec::new();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (from, to) = match item.split_once('-') {
            Some((a, b)) => (a.trim().parse::<usize>(), b.trim().parse::<usize>()),
            None => (item.parse::<usize>(), item.parse::<usize>()),
        };
        let (Ok(from), Ok(to)) = (from, to) else {
            return Err(bad());
        };
        if from < 1 || to > 22 || from > to {
            return Err(bad());
        }
        out.extend((from..=to).filter(|q| !out.contains(q)).collect::<Vec<_>>());
    }
    if out.is_empty() {
        return Err(bad());
    }
    Ok(out)
}

pub fn catalog() -> Vec<WorkloadInfo> {
    vec![WorkloadInfo {
        name: NAME,
        aliases: &["tpc-h", "tpch-derived"],
        family: Family::Tpch,
        description: "derived from TPC-H (not comparable to published TPC-H results): dbgen's 8 tables, the 22 queries as query streams; per-query times, geometric mean, QphH-like figures",
        params: PARAMS,
    }]
}

/// The workload as a run resolved it.
#[derive(Debug, Clone)]
pub struct Tpch {
    params: Params,
    options: Options,
    seed: u64,
    /// The last update set the tables took before the run (read by `check` with refresh on).
    sets_taken: u32,
}

impl Tpch {
    pub fn from_config(config: &WorkloadConfig) -> Result<Option<Self>, Error> {
        let named = config.name == NAME || catalog()[0].aliases.contains(&config.name.as_str());
        if !named {
            return Ok(None);
        }
        let params = Params::resolve(NAME, PARAMS, &config.params)?;
        let options = Options::resolve(&params)?;
        Ok(Some(Self {
            params,
            options,
            seed: 0,
            sets_taken: 0,
        }))
    }

    pub fn params(&self) -> &Params {
        &self.params
    }

    pub fn options(&self) -> &Options {
        &self.options
    }

    pub fn bind_run(&mut self, seed: u64) {
        self.seed = seed;
    }

    /// Checks the tables are there and hold the scale factor's data (`supplier` has 10,000 x SF
    /// rows: cheap to count, and it tells one scale factor from another).
    pub async fn check(&mut self, conn: &mut Connection) -> Result<(), Error> {
        let sql = "SELECT count(*) FROM supplier";
        let rows = conn.query(sql).await.map_err(not_prepared)?;
        let found: u64 = rows
            .first()
            .and_then(|r| r.first()?.as_deref()?.parse().ok())
            .unwrap_or(0);
        let expected = tpchgen::generators::SupplierGenerator::calculate_row_count(
            self.options.scale_factor,
            1,
            1,
        ) as u64;
        if found != expected {
            return Err(Error::NotPrepared(Unprepared {
                message: format!(
                    "supplier has {found} rows where scale factor {} has {}",
                    self.options.scale_factor, expected
                ),
                hint: Some(PREPARE_HINT),
            }));
        }
        conn.query("SELECT l_orderkey FROM lineitem LIMIT 1")
            .await
            .map_err(not_prepared)?;
        if self.options.refresh {
            // dbgen's text pool (300 MB, a second to build) before the run, not
            // in the first RF1's time.
            tpchgen::text::TextPool::get_or_init_default();
            self.sets_taken = refresh::sets_taken(conn)
                .await
                .map_err(|source| Error::Sql {
                    context: format!("reading {}", refresh::SETS_TABLE),
                    source,
                })?;
        }
        Ok(())
    }

    /// Client `client_id` is query stream `client_id`; its refresh pairs take the update sets
    /// after the tables' last one, the run's streams in turn.
    pub fn client(&self, client_id: u32, clients: u32) -> TpchClient {
        let sets = RefreshSets {
            first: self.sets_taken + 1 + client_id,
            stride: clients.max(1),
        };
        TpchClient::new(&self.options, client_id, self.seed, sets)
    }
}

const PREPARE_HINT: &str =
    "run `dbscale prepare tpch --target URL --set scale_factor=SF` with the run's scale factor first";

fn not_prepared(e: DbError) -> Error {
    let unprepared = |message: &str| Unprepared {
        message: format!("the TPC-H tables are missing ({message})"),
        hint: Some(PREPARE_HINT),
    };
    missing_or_failed(e, unprepared, || "checking the TPC-H tables".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_lists_parse_and_refuse() {
        assert_eq!(query_list("1-22").unwrap().len(), 22);
        assert_eq!(query_list("1-3, 14, 2").unwrap(), [1, 2, 3, 14]);
        for bad in ["0", "23", "5-1", "x", "", "1-"] {
            assert!(query_list(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn every_query_substitutes_cleanly() {
        for q in 1..=22 {
            let values = parameters::qualification(q, 1.0);
            let text = queries::query_text(q, &values);
            assert!(!text.contains('{') && !text.contains('}'), "Q{q}: {text}");
        }
        let q6 = queries::query_text(6, &parameters::qualification(6, 1.0));
        assert!(
            q6.contains("between 0.05 and 0.07 and l_quantity < 24"),
            "{q6}"
        );
    }
}

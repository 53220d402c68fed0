//! sysbench's OLTP family (`oltp_*.lua`, `select_random_*.lua` of sysbench 1.0.20) on MySQL,
//! MariaDB and PostgreSQL: the same `sbtest<N>` tables and rows, the same statements per event,
//! the same options and defaults, and the same read/write/other counting, so results compare with
//! sysbench's and either tool runs on tables the other prepared.
//!
//! The default `rand_type` is `special`, as in sysbench 1.0.20 (the release distributions ship);
//! sysbench master defaults to `uniform`. Set `rand_type=uniform` to match a master build.

mod catalog;
mod loader;
mod options;
mod plan;
mod random;
mod rows;
mod script;

use std::sync::Arc;

use crate::config::WorkloadConfig;
use crate::driver::{Connection, DbError, Dialect, ErrorClass, Statement};
use crate::error::Unprepared;
use crate::workload::loading::missing_or_failed;
use crate::workload::Params;
use crate::Error;
use catalog::VARIANTS;
pub use catalog::{catalog, Test};
pub use options::Options;
use options::{count, resolve_options};
pub use random::{Distribution, DistributionOptions, RandType, UniqueIds};
pub use script::SysbenchClient;

/// One sysbench OLTP test as a run resolved it: options, id distribution, statements.
#[derive(Debug, Clone)]
pub struct Sysbench {
    name: &'static str,
    test: Test,
    params: Params,
    options: Options,
    distribution: Distribution,
    /// `oltp_insert` without auto-increment: ids unique across all clients of the run.
    unique_ids: Arc<UniqueIds>,
}

impl Sysbench {
    /// `Ok(None)` when the name is not one of this family's.
    pub fn from_config(config: &WorkloadConfig) -> Result<Option<Self>, Error> {
        let Some(variant) = VARIANTS
            .iter()
            .find(|v| v.name == config.name || v.aliases.contains(&config.name.as_str()))
        else {
            return Ok(None);
        };
        let name = variant.name;
        let params = Params::resolve(name, variant.params, &config.params)?;
        let options = resolve_options(name, variant.test, &params)?;
        let kind = RandType::parse(params.str("rand_type")).ok_or_else(|| {
            Error::Config(format!(
                "{name}: rand_type must be uniform, gaussian, special, pareto or zipfian, got {:?}",
                params.str("rand_type")
            ))
        })?;
        let distribution = Distribution::new(DistributionOptions {
            kind,
            spec_iter: count(name, &params, "rand_spec_iter")?,
            spec_pct: count(name, &params, "rand_spec_pct")?,
            spec_res: count(name, &params, "rand_spec_res")?,
            pareto_h: params.float("rand_pareto_h"),
            zipfian_exp: params.float("rand_zipfian_exp"),
        })
        .map_err(|m| Error::Config(format!("{name}: {m}")))?;
        Ok(Some(Self {
            name,
            test: variant.test,
            params,
            options,
            distribution,
            unique_ids: Arc::new(UniqueIds::new(rand::random(), rand::random())),
        }))
    }

    pub fn name(&self) -> &'static str {
        self.name
    }

    pub fn params(&self) -> &Params {
        &self.params
    }

    pub fn options(&self) -> &Options {
        &self.options
    }

    pub fn transaction_types(&self) -> &'static [&'static str] {
        match self.test {
            Test::ReadOnly => &["oltp_read_only"],
            Test::ReadWrite => &["oltp_read_write"],
            Test::WriteOnly => &["oltp_write_only"],
            Test::PointSelect => &["oltp_point_select"],
            Test::Insert => &["oltp_insert"],
            Test::Delete => &["oltp_delete"],
            Test::UpdateIndex => &["oltp_update_index"],
            Test::UpdateNonIndex => &["oltp_update_non_index"],
            Test::RandomPoints => &["select_random_points"],
            Test::RandomRanges => &["select_random_ranges"],
        }
    }

    pub fn statements(&self, dialect: Dialect) -> Result<Vec<Statement>, Error> {
        Ok(plan::Plan::new(self.test, &self.options).statements(dialect))
    }

    /// Checks that every table exists; sysbench reads nothing else before a run either.
    pub async fn check(&mut self, conn: &mut Connection) -> Result<(), Error> {
        for t in 1..=self.options.tables {
            let sql = format!("SELECT id FROM sbtest{t} LIMIT 0");
            conn.query(&sql).await.map_err(|e| not_prepared(t, e))?;
        }
        Ok(())
    }

    /// sysbench does no maintenance before a run.
    pub async fn before_run(&self, _conn: &mut Connection) -> Result<(), Error> {
        Ok(())
    }

    /// Client `client_id` of `clients`; the `select_random_*` tests give each its own slice of k.
    pub fn client(&self, client_id: u32, clients: u32) -> SysbenchClient {
        SysbenchClient::new(
            self.test,
            &self.options,
            self.distribution,
            self.unique_ids.clone(),
            client_id,
            clients,
        )
    }

    /// sysbench restarts an event on the errors it ignores: MySQL's default
    /// `--mysql-ignore-errors` (1213 deadlock, 1020, 1205 lock wait timeout) and the PostgreSQL
    /// driver's hard-coded 40001, 40P01 and 23505 (unique violation, as concurrent DELETE+INSERT
    /// pairs of one id produce).
    pub fn is_retryable(&self, class: &ErrorClass, dialect: Dialect) -> bool {
        match dialect {
            Dialect::Mysql => class.is_retryable(),
            Dialect::Postgres => matches!(
                class,
                ErrorClass::Serialization | ErrorClass::Deadlock | ErrorClass::UniqueViolation
            ),
        }
    }
}

/// sysbench restarts an ignored event until the run ends, with no limit on attempts; so do we:
/// the run's `max_tries` only matters if it is higher (it cannot be).
pub const MAX_TRIES: u32 = u32::MAX;

fn not_prepared(table: u32, e: DbError) -> Error {
    let unprepared =
        |message: &str| Unprepared::sysbench(format!("table sbtest{table} is missing ({message})"));
    missing_or_failed(e, unprepared, || format!("checking table sbtest{table}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::test_config;
    use std::collections::BTreeMap;

    /// A sysbench workload from a test name and `--set` parameters.
    fn workload(name: &str, params: &[(&str, serde_json::Value)]) -> Result<Sysbench, Error> {
        Sysbench::from_config(&test_config(name, params)).map(|w| w.expect("a sysbench name"))
    }

    /// oltp_read_write with `--set` parameters, for the loader's and rows' tests.
    pub(super) fn read_write(params: &[(&str, serde_json::Value)]) -> Sysbench {
        workload("oltp_read_write", params).unwrap()
    }

    #[test]
    fn names_aliases_and_defaults() {
        let w = workload("oltp_read_write", &[]).unwrap();
        assert_eq!(w.name(), "sysbench:oltp_read_write");
        assert_eq!(w.params().str("rand_type"), "special");
        let o = w.options();
        assert_eq!(
            (o.tables, o.table_size, o.point_selects, o.range_size),
            (1, 10_000, 10, 100)
        );
        assert!(o.range_selects && !o.skip_trx && o.auto_inc && o.create_secondary);
        assert!(Sysbench::from_config(&WorkloadConfig {
            name: "tpcb".into(),
            params: BTreeMap::new(),
            ..Default::default()
        })
        .unwrap()
        .is_none());
        assert_eq!(catalog().len(), 10);
    }

    #[test]
    fn bad_options_are_refused() {
        assert!(workload("sysbench:oltp_read_only", &[("rand_type", "normal".into())]).is_err());
        assert!(workload("sysbench:oltp_read_only", &[("tables", 0.into())]).is_err());
        assert!(workload("sysbench:oltp_read_only", &[("range_size", (-1).into())]).is_err());
        assert!(workload("select_random_points", &[("tables", 2.into())]).is_err());
        assert!(workload("oltp_insert", &[("mysql_storage_engine", "x; drop".into())]).is_err());
        assert!(workload("oltp_insert", &[("rand_pareto_h", "1.5".into())]).is_err());
        assert!(workload("oltp_insert", &[("random_points", 3.into())]).is_err());
        assert!(workload("select_random_points", &[("random_points", 3.into())]).is_ok());
    }

    #[test]
    fn retryable_errors_follow_sysbench_per_dialect() {
        let w = workload("oltp_read_write", &[]).unwrap();
        for class in [
            ErrorClass::Deadlock,
            ErrorClass::LockTimeout,
            ErrorClass::Serialization,
        ] {
            assert!(w.is_retryable(&class, Dialect::Mysql), "{class:?}");
        }
        assert!(!w.is_retryable(&ErrorClass::UniqueViolation, Dialect::Mysql));
        assert!(w.is_retryable(&ErrorClass::UniqueViolation, Dialect::Postgres));
        assert!(w.is_retryable(&ErrorClass::Deadlock, Dialect::Postgres));
        assert!(!w.is_retryable(&ErrorClass::LockTimeout, Dialect::Postgres));
        assert!(!w.is_retryable(&ErrorClass::Sql("42601".into()), Dialect::Postgres));
    }
}

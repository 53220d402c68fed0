//! sysbench's OLTP family (`oltp_*.lua`, `select_random_*.lua` of sysbench 1.0.20) on MySQL,
//! MariaDB and PostgreSQL: the same `sbtest<N>` tables and rows, the same statements per event,
//! the same options and defaults, and the same read/write/other counting, so results compare with
//! sysbench's and either tool runs on tables the other prepared.
//!
//! The default `rand_type` is `special`, as in sysbench 1.0.20 (the release distributions ship);
//! sysbench master defaults to `uniform`. Set `rand_type=uniform` to match a master build.

mod loader;
mod plan;
mod random;
mod rows;
mod script;

use std::sync::Arc;

use crate::config::WorkloadConfig;
use crate::driver::{Connection, DbError, Dialect, ErrorClass, Statement};
use crate::workload::{ParamSpec, Params, WorkloadInfo};
use crate::Error;
pub use random::{Distribution, DistributionOptions, RandType, UniqueIds};
pub use script::SysbenchClient;

/// The options every sysbench OLTP test accepts (`oltp_common.lua` and `sb_rand.c`), plus each
/// test's own ones.
macro_rules! sysbench_params {
    ($($extra:expr),*) => {
        &[
            ParamSpec::int("tables", 1, "number of tables sbtest1..sbtestN (sysbench --tables)"),
            ParamSpec::int("table_size", 10_000, "rows per table (--table_size)"),
            ParamSpec::int("point_selects", 10, "point SELECTs per event (--point_selects)"),
            ParamSpec::int("simple_ranges", 1, "simple range SELECTs per event (--simple_ranges)"),
            ParamSpec::int("sum_ranges", 1, "SELECT SUM() ranges per event (--sum_ranges)"),
            ParamSpec::int("order_ranges", 1, "SELECT ... ORDER BY ranges per event (--order_ranges)"),
            ParamSpec::int("distinct_ranges", 1, "SELECT DISTINCT ranges per event (--distinct_ranges)"),
            ParamSpec::int("range_size", 100, "rows per range SELECT (--range_size)"),
            ParamSpec::int("index_updates", 1, "UPDATEs of the indexed column k per event (--index_updates)"),
            ParamSpec::int("non_index_updates", 1, "UPDATEs of column c per event (--non_index_updates)"),
            ParamSpec::int("delete_inserts", 1, "DELETE + INSERT pairs per event (--delete_inserts)"),
            ParamSpec::bool("range_selects", true, "run the range SELECTs at all (--range_selects)"),
            ParamSpec::bool("skip_trx", false, "no BEGIN/COMMIT: every statement autocommits (--skip_trx)"),
            ParamSpec::bool("auto_inc", true, "id is AUTO_INCREMENT (MySQL) or SERIAL (PostgreSQL); off: ids from the client (--auto_inc)"),
            ParamSpec::bool("secondary", false, "MySQL: a plain KEY on id instead of the PRIMARY KEY (--secondary)"),
            ParamSpec::bool("create_secondary", true, "create index k_N on k after loading (--create_secondary)"),
            ParamSpec::str("mysql_storage_engine", "innodb", "MySQL storage engine of the tables (--mysql_storage_engine)"),
            ParamSpec::str("rand_type", "special", "id distribution: uniform, gaussian, special, pareto or zipfian. Default special, like sysbench 1.0.20 (master defaults to uniform); also used for k at prepare (--rand-type)"),
            ParamSpec::int("rand_spec_iter", 12, "uniform draws summed by gaussian and special (--rand-spec-iter)"),
            ParamSpec::int("rand_spec_pct", 1, "special: width of the hot window around the middle, % of the range (--rand-spec-pct)"),
            ParamSpec::int("rand_spec_res", 75, "special: % of values drawn from the hot window (--rand-spec-res)"),
            ParamSpec::float("rand_pareto_h", 0.2, "pareto: parameter h (--rand-pareto-h)"),
            ParamSpec::float("rand_zipfian_exp", 0.8, "zipfian: exponent (--rand-zipfian-exp, sysbench master)"),
            $($extra),*
        ]
    };
}

const OLTP_PARAMS: &[ParamSpec] = sysbench_params!();
const POINTS_PARAMS: &[ParamSpec] = sysbench_params!(ParamSpec::int(
    "random_points",
    10,
    "values in the IN() list (--random_points)"
));
const RANGES_PARAMS: &[ParamSpec] = sysbench_params!(
    ParamSpec::int(
        "number_of_ranges",
        10,
        "BETWEEN ranges per SELECT (--number_of_ranges)"
    ),
    ParamSpec::int("delta", 5, "size of each BETWEEN range (--delta)")
);

/// Which sysbench test a client runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Test {
    ReadOnly,
    ReadWrite,
    WriteOnly,
    PointSelect,
    Insert,
    Delete,
    UpdateIndex,
    UpdateNonIndex,
    RandomPoints,
    RandomRanges,
}

struct Variant {
    name: &'static str,
    aliases: &'static [&'static str],
    test: Test,
    description: &'static str,
    params: &'static [ParamSpec],
}

const VARIANTS: &[Variant] = &[
    Variant {
        name: "sysbench:oltp_read_only",
        aliases: &["oltp_read_only"],
        test: Test::ReadOnly,
        description:
            "sysbench oltp_read_only: 10 point SELECTs and 4 range SELECTs in a transaction",
        params: OLTP_PARAMS,
    },
    Variant {
        name: "sysbench:oltp_read_write",
        aliases: &["oltp_read_write"],
        test: Test::ReadWrite,
        description:
            "sysbench oltp_read_write: oltp_read_only plus 2 UPDATEs, a DELETE and an INSERT",
        params: OLTP_PARAMS,
    },
    Variant {
        name: "sysbench:oltp_write_only",
        aliases: &["oltp_write_only"],
        test: Test::WriteOnly,
        description: "sysbench oltp_write_only: 2 UPDATEs, a DELETE and an INSERT in a transaction",
        params: OLTP_PARAMS,
    },
    Variant {
        name: "sysbench:oltp_point_select",
        aliases: &["oltp_point_select"],
        test: Test::PointSelect,
        description: "sysbench oltp_point_select: one primary-key SELECT",
        params: OLTP_PARAMS,
    },
    Variant {
        name: "sysbench:oltp_insert",
        aliases: &["oltp_insert"],
        test: Test::Insert,
        description: "sysbench oltp_insert: one INSERT",
        params: OLTP_PARAMS,
    },
    Variant {
        name: "sysbench:oltp_delete",
        aliases: &["oltp_delete"],
        test: Test::Delete,
        description: "sysbench oltp_delete: one primary-key DELETE",
        params: OLTP_PARAMS,
    },
    Variant {
        name: "sysbench:oltp_update_index",
        aliases: &["oltp_update_index"],
        test: Test::UpdateIndex,
        description: "sysbench oltp_update_index: UPDATE of the indexed column k",
        params: OLTP_PARAMS,
    },
    Variant {
        name: "sysbench:oltp_update_non_index",
        aliases: &["oltp_update_non_index"],
        test: Test::UpdateNonIndex,
        description: "sysbench oltp_update_non_index: UPDATE of column c",
        params: OLTP_PARAMS,
    },
    Variant {
        name: "sysbench:select_random_points",
        aliases: &["select_random_points"],
        test: Test::RandomPoints,
        description: "sysbench select_random_points: SELECT by 10 random k values (one table)",
        params: POINTS_PARAMS,
    },
    Variant {
        name: "sysbench:select_random_ranges",
        aliases: &["select_random_ranges"],
        test: Test::RandomRanges,
        description: "sysbench select_random_ranges: count(k) over 10 random k ranges (one table)",
        params: RANGES_PARAMS,
    },
];

pub fn catalog() -> Vec<WorkloadInfo> {
    VARIANTS
        .iter()
        .map(|v| WorkloadInfo {
            name: v.name,
            aliases: v.aliases,
            description: v.description,
            params: v.params,
        })
        .collect()
}

/// The options resolved to numbers once; the hot loop reads only these.
#[derive(Debug, Clone)]
pub struct Options {
    pub tables: u32,
    pub table_size: u32,
    pub point_selects: u32,
    pub simple_ranges: u32,
    pub sum_ranges: u32,
    pub order_ranges: u32,
    pub distinct_ranges: u32,
    pub range_size: u32,
    pub index_updates: u32,
    pub non_index_updates: u32,
    pub delete_inserts: u32,
    pub range_selects: bool,
    pub skip_trx: bool,
    pub auto_inc: bool,
    pub secondary: bool,
    pub create_secondary: bool,
    pub storage_engine: String,
    pub random_points: u32,
    pub number_of_ranges: u32,
    pub delta: u32,
}

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

fn count(name: &str, params: &Params, key: &str) -> Result<u32, Error> {
    let value = params.int(key);
    u32::try_from(value)
        .ok()
        .filter(|v| i32::try_from(*v).is_ok())
        .ok_or_else(|| Error::Config(format!("{name}: {key} must be 0 or more, got {value}")))
}

fn resolve_options(name: &str, test: Test, params: &Params) -> Result<Options, Error> {
    let c = |key: &str| count(name, params, key);
    let options = Options {
        tables: c("tables")?,
        table_size: c("table_size")?,
        point_selects: c("point_selects")?,
        simple_ranges: c("simple_ranges")?,
        sum_ranges: c("sum_ranges")?,
        order_ranges: c("order_ranges")?,
        distinct_ranges: c("distinct_ranges")?,
        range_size: c("range_size")?,
        index_updates: c("index_updates")?,
        non_index_updates: c("non_index_updates")?,
        delete_inserts: c("delete_inserts")?,
        range_selects: params.bool("range_selects"),
        skip_trx: params.bool("skip_trx"),
        auto_inc: params.bool("auto_inc"),
        secondary: params.bool("secondary"),
        create_secondary: params.bool("create_secondary"),
        storage_engine: params.str("mysql_storage_engine").to_string(),
        random_points: if test == Test::RandomPoints {
            c("random_points")?
        } else {
            10
        },
        number_of_ranges: if test == Test::RandomRanges {
            c("number_of_ranges")?
        } else {
            10
        },
        delta: if test == Test::RandomRanges {
            c("delta")?
        } else {
            5
        },
    };
    let fail = |m: String| Err(Error::Config(format!("{name}: {m}")));
    if options.tables < 1 {
        return fail("tables must be at least 1".into());
    }
    if options.table_size < 1 {
        return fail("table_size must be at least 1".into());
    }
    if matches!(test, Test::RandomPoints | Test::RandomRanges) && options.tables != 1 {
        return fail("this test uses one table, like sysbench: tables must be 1".into());
    }
    if options.random_points < 1 || options.number_of_ranges < 1 {
        return fail("random_points and number_of_ranges must be at least 1".into());
    }
    if !options
        .storage_engine
        .chars()
        .all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
    {
        return fail(format!(
            "mysql_storage_engine must be a plain name, got {:?}",
            options.storage_engine
        ));
    }
    Ok(options)
}

fn not_prepared(table: u32, e: DbError) -> Error {
    // PostgreSQL undefined_table, MySQL ER_NO_SUCH_TABLE.
    if matches!(e.code.as_deref(), Some("42P01" | "1146")) {
        Error::NotPrepared(format!("table sbtest{table} is missing ({})", e.message))
    } else {
        Error::Sql {
            context: format!("checking table sbtest{table}"),
            source: e,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// A sysbench workload from a test name and `--set` parameters.
    fn workload(name: &str, params: &[(&str, serde_json::Value)]) -> Result<Sysbench, Error> {
        let config = WorkloadConfig {
            name: name.into(),
            params: params
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect::<BTreeMap<_, _>>(),
            ..Default::default()
        };
        Sysbench::from_config(&config).map(|w| w.expect("a sysbench name"))
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

//! The sysbench OLTP tests this family runs: their names, sysbench's script names as aliases,
//! and the options each accepts with sysbench 1.0.20's defaults.

use crate::workload::{ParamSpec, WorkloadInfo};

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

pub(super) struct Variant {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub test: Test,
    description: &'static str,
    pub params: &'static [ParamSpec],
}

pub(super) const VARIANTS: &[Variant] = &[
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
            family: crate::workload::Family::Sysbench,
            description: v.description,
            params: v.params,
        })
        .collect()
}

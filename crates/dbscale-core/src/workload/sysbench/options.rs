//! A sysbench test's options resolved once from its parameters and checked as sysbench checks
//! them; the hot loop reads only these numbers.

use super::catalog::Test;
use crate::workload::Params;
use crate::Error;

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

pub(super) fn count(name: &str, params: &Params, key: &str) -> Result<u32, Error> {
    let value = params.int(key);
    u32::try_from(value)
        .ok()
        .filter(|v| i32::try_from(*v).is_ok())
        .ok_or_else(|| Error::Config(format!("{name}: {key} must be 0 or more, got {value}")))
}

pub(super) fn resolve_options(name: &str, test: Test, params: &Params) -> Result<Options, Error> {
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

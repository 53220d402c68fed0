//! Which statements a sysbench test prepares, in which order (BEGIN and COMMIT, then one block
//! per table, like `prepare_for_each_table` in oltp_common.lua), with sysbench's texts.

use super::{Options, Test};
use crate::driver::{numbered_placeholders, Dialect, Statement};

/// A statement kind that exists once per table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    PointSelect,
    SimpleRange,
    SumRange,
    OrderRange,
    DistinctRange,
    IndexUpdate,
    NonIndexUpdate,
    Delete,
    /// The INSERT of a DELETE/INSERT pair (explicit id).
    Insert,
    /// `oltp_insert`'s INSERT.
    InsertOnly,
    RandomPoints,
    RandomRanges,
}
pub const KINDS: usize = 12;

/// Positions of BEGIN and COMMIT in the prepared list (when the test uses them).
pub const BEGIN: usize = 0;
pub const COMMIT: usize = 1;

/// Which statements a test prepares, and where each sits in the connection's list: BEGIN and
/// COMMIT first (unless `skip_trx`), then one block of kinds per table.
#[derive(Debug, Clone)]
pub struct Plan {
    pub transactions: bool,
    pub kinds: Vec<Kind>,
    tables: u32,
    auto_inc: bool,
    random_points: u32,
    number_of_ranges: u32,
}

impl Plan {
    pub fn new(test: Test, o: &Options) -> Self {
        use Kind::*;
        let ranges: &[Kind] = if o.range_selects {
            &[SimpleRange, SumRange, OrderRange, DistinctRange]
        } else {
            &[]
        };
        let writes = [IndexUpdate, NonIndexUpdate, Delete, Insert];
        let (transactions, kinds): (bool, Vec<Kind>) = match test {
            Test::ReadOnly => (!o.skip_trx, [&[PointSelect], ranges].concat()),
            Test::ReadWrite => (!o.skip_trx, [&[PointSelect], ranges, &writes].concat()),
            Test::WriteOnly => (!o.skip_trx, writes.to_vec()),
            Test::PointSelect => (false, vec![PointSelect]),
            Test::Insert => (false, vec![InsertOnly]),
            Test::Delete => (false, vec![Delete]),
            Test::UpdateIndex => (false, vec![IndexUpdate]),
            Test::UpdateNonIndex => (false, vec![NonIndexUpdate]),
            Test::RandomPoints => (false, vec![RandomPoints]),
            Test::RandomRanges => (false, vec![RandomRanges]),
        };
        Self {
            transactions,
            kinds,
            tables: o.tables,
            auto_inc: o.auto_inc,
            random_points: o.random_points,
            number_of_ranges: o.number_of_ranges,
        }
    }

    pub fn globals(&self) -> usize {
        if self.transactions {
            2
        } else {
            0
        }
    }

    /// Position of each kind within a table's block (`usize::MAX` when not prepared).
    pub fn slots(&self) -> [usize; KINDS] {
        let mut slots = [usize::MAX; KINDS];
        for (position, kind) in self.kinds.iter().enumerate() {
            slots[*kind as usize] = position;
        }
        slots
    }

    /// The statements in execution-index order, with the dialect's placeholders.
    pub fn statements(&self, dialect: Dialect) -> Vec<Statement> {
        let mut list = Vec::new();
        if self.transactions {
            list.push(Statement::new("begin", "BEGIN"));
            list.push(Statement::new("commit", "COMMIT"));
        }
        for t in 1..=self.tables {
            for kind in &self.kinds {
                let (name, sql) = self.sql(*kind, t, dialect);
                list.push(Statement::new(name, numbered_placeholders(&sql, dialect)));
            }
        }
        list
    }

    /// sysbench's statement texts (`oltp_common.lua` `stmt_defs`, `oltp_insert.lua`,
    /// `select_random_*.lua`), with `?` placeholders.
    fn sql(&self, kind: Kind, t: u32, dialect: Dialect) -> (&'static str, String) {
        match kind {
            Kind::PointSelect => (
                "point_select",
                format!("SELECT c FROM sbtest{t} WHERE id=?"),
            ),
            Kind::SimpleRange => (
                "simple_range",
                format!("SELECT c FROM sbtest{t} WHERE id BETWEEN ? AND ?"),
            ),
            Kind::SumRange => (
                "sum_range",
                format!("SELECT SUM(k) FROM sbtest{t} WHERE id BETWEEN ? AND ?"),
            ),
            Kind::OrderRange => (
                "order_range",
                format!("SELECT c FROM sbtest{t} WHERE id BETWEEN ? AND ? ORDER BY c"),
            ),
            Kind::DistinctRange => (
                "distinct_range",
                format!("SELECT DISTINCT c FROM sbtest{t} WHERE id BETWEEN ? AND ? ORDER BY c"),
            ),
            Kind::IndexUpdate => (
                "index_update",
                format!("UPDATE sbtest{t} SET k=k+1 WHERE id=?"),
            ),
            Kind::NonIndexUpdate => (
                "non_index_update",
                format!("UPDATE sbtest{t} SET c=? WHERE id=?"),
            ),
            Kind::Delete => ("delete", format!("DELETE FROM sbtest{t} WHERE id=?")),
            Kind::Insert => (
                "insert",
                format!("INSERT INTO sbtest{t} (id, k, c, pad) VALUES (?, ?, ?, ?)"),
            ),
            // With auto-increment PostgreSQL omits id; MySQL passes 0, which means "next value".
            Kind::InsertOnly => match (self.auto_inc, dialect) {
                (true, Dialect::Postgres) => (
                    "insert",
                    format!("INSERT INTO sbtest{t} (k, c, pad) VALUES (?, ?, ?)"),
                ),
                (true, Dialect::Mysql) => (
                    "insert",
                    format!("INSERT INTO sbtest{t} (id, k, c, pad) VALUES (0, ?, ?, ?)"),
                ),
                (false, _) => (
                    "insert",
                    format!("INSERT INTO sbtest{t} (id, k, c, pad) VALUES (?, ?, ?, ?)"),
                ),
            },
            Kind::RandomPoints => {
                let points = vec!["?"; self.random_points as usize].join(", ");
                (
                    "random_points",
                    format!("SELECT id, k, c, pad FROM sbtest{t} WHERE k IN ({points})"),
                )
            }
            Kind::RandomRanges => {
                let ranges = vec!["k BETWEEN ? AND ?"; self.number_of_ranges as usize].join(" OR ");
                (
                    "random_ranges",
                    format!("SELECT count(k) FROM sbtest{t} WHERE {ranges}"),
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::WorkloadConfig;
    use crate::workload::sysbench::Sysbench;

    fn plan(name: &str, params: &[(&str, serde_json::Value)], dialect: Dialect) -> Vec<String> {
        let config = WorkloadConfig {
            name: name.into(),
            params: params
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
            ..Default::default()
        };
        let w = Sysbench::from_config(&config).unwrap().unwrap();
        w.statements(dialect)
            .unwrap()
            .into_iter()
            .map(|s| s.sql)
            .collect()
    }

    #[test]
    fn read_write_prepares_sysbench_statements_per_table() {
        let sql = plan("oltp_read_write", &[("tables", 2.into())], Dialect::Mysql);
        assert_eq!(sql.len(), 2 + 2 * 9);
        assert_eq!(&sql[..2], ["BEGIN", "COMMIT"]);
        assert_eq!(sql[2], "SELECT c FROM sbtest1 WHERE id=?");
        assert_eq!(
            sql[6],
            "SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c"
        );
        assert_eq!(
            sql[10],
            "INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)"
        );
        assert_eq!(sql[11], "SELECT c FROM sbtest2 WHERE id=?");
        let pg = plan("oltp_read_write", &[], Dialect::Postgres);
        assert_eq!(
            pg[4],
            "SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN $1 AND $2"
        );
        assert_eq!(pg[8], "UPDATE sbtest1 SET c=$1 WHERE id=$2");
    }

    #[test]
    fn each_test_prepares_only_what_it_runs() {
        let count = |name: &str, params: &[(&str, serde_json::Value)]| {
            plan(name, params, Dialect::Mysql).len()
        };
        assert_eq!(count("oltp_read_only", &[]), 2 + 5);
        assert_eq!(
            count(
                "oltp_read_only",
                &[("range_selects", false.into()), ("skip_trx", true.into())]
            ),
            1
        );
        assert_eq!(count("oltp_write_only", &[]), 2 + 4);
        for name in [
            "oltp_point_select",
            "oltp_insert",
            "oltp_delete",
            "oltp_update_index",
            "oltp_update_non_index",
            "select_random_points",
            "select_random_ranges",
        ] {
            assert_eq!(count(name, &[("tables", 1.into())]), 1, "{name}");
        }
        assert_eq!(count("oltp_delete", &[("tables", 3.into())]), 3);
    }

    #[test]
    fn insert_and_random_selects_follow_the_dialect() {
        assert_eq!(
            plan("oltp_insert", &[], Dialect::Postgres)[0],
            "INSERT INTO sbtest1 (k, c, pad) VALUES ($1, $2, $3)"
        );
        assert_eq!(
            plan("oltp_insert", &[], Dialect::Mysql)[0],
            "INSERT INTO sbtest1 (id, k, c, pad) VALUES (0, ?, ?, ?)"
        );
        assert_eq!(
            plan(
                "oltp_insert",
                &[("auto_inc", false.into())],
                Dialect::Postgres
            )[0],
            "INSERT INTO sbtest1 (id, k, c, pad) VALUES ($1, $2, $3, $4)"
        );
        assert_eq!(
            plan(
                "select_random_points",
                &[("random_points", 3.into())],
                Dialect::Mysql
            )[0],
            "SELECT id, k, c, pad FROM sbtest1 WHERE k IN (?, ?, ?)"
        );
        assert_eq!(
            plan(
                "select_random_ranges",
                &[("number_of_ranges", 2.into())],
                Dialect::Postgres
            )[0],
            "SELECT count(k) FROM sbtest1 WHERE k BETWEEN $1 AND $2 OR k BETWEEN $3 AND $4"
        );
    }
}

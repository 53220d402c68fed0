//! Statements as workloads declare them, parameters as they pass them, and what comes back.

use std::borrow::Cow;

use super::Dialect;

/// A statement a workload executes by index. `sql` uses `$1, $2, …` placeholders on PostgreSQL
/// and `?` on MySQL; the driver inlines literals itself for the simple protocol.
#[derive(Debug, Clone)]
pub struct Statement {
    /// Short name used in per-statement reports (e.g. `update_accounts`, `mine.sql:12`).
    pub name: Cow<'static, str>,
    pub sql: String,
}

impl Statement {
    pub fn new(name: impl Into<Cow<'static, str>>, sql: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            sql: sql.into(),
        }
    }
}

/// One bound parameter. Borrowed text keeps the hot loop free of allocations.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Param<'a> {
    Int(i64),
    Float(f64),
    Text(&'a str),
    Null,
}

/// The counts a statement produced: rows returned by a query, rows changed by DML.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QueryOutcome {
    pub rows_returned: u64,
    pub rows_affected: u64,
    /// Whether the statement produced a result set (sysbench counts such statements as reads).
    pub returned_result_set: bool,
}

/// Rows in text format; `None` is SQL NULL.
pub type Rows = Vec<Vec<Option<String>>>;

/// One statement's result: its column names and rows (none for a statement without a result
/// set, e.g. an UPDATE without RETURNING).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ResultSet {
    pub columns: Vec<String>,
    pub rows: Rows,
}

/// Where a response's rows go: counted only, copied as text, or kept per statement with the
/// column names.
pub(crate) enum RowSink<'a> {
    Count,
    Rows(&'a mut Rows),
    Sets(&'a mut Vec<ResultSet>),
}

/// `?` becomes `$1, $2, …` on PostgreSQL (as sysbench's pgsql driver does).
pub fn numbered_placeholders(sql: &str, dialect: Dialect) -> String {
    if dialect == Dialect::Mysql {
        return sql.to_string();
    }
    let mut out = String::with_capacity(sql.len() + 8);
    let mut n = 0;
    for ch in sql.chars() {
        if ch == '?' {
            n += 1;
            out.push('$');
            out.push_str(&n.to_string());
        } else {
            out.push(ch);
        }
    }
    out
}

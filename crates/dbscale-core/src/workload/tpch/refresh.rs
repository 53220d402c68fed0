//! TPC-H's refresh functions (specification 2.27-2.28), derived: RF1 inserts SF x 1,500 new
//! orders with their 1 to 7 line items, RF2 deletes SF x 1,500 old orders and their line items,
//! each as one transaction.
//!
//! Keys are dbgen's: update set `n` covers the order indices `(n-1) x SF x 1,500 + 1` to
//! `n x SF x 1,500`; RF1 inserts them under the sparse keys of sequence 1 (`mk_sparse(i, 1)`,
//! which the base data never uses: the base key plus 8), RF2 deletes the base keys of the same
//! indices (`mk_sparse(i, 0)`), as dbgen's update and delete files for sets 1 to 99 hold them.
//! The new rows' values are those `tpchgen` generates for those indices (dbgen's own orders and
//! line items, under their new keys) rather than dbgen's update-file draws: the tables keep the
//! distribution of the base data, so a refreshed database answers the queries as a fresh one
//! does except for the order keys Q3, Q10 and Q18 show.
//!
//! The sets a database has taken are kept in `tpch_refresh_sets`, one row per RF1, inserted in
//! RF1's transaction, so no set is inserted twice and each run goes on after the last one.

use tpchgen::dates::GenerateUtils;
use tpchgen::generators::{LineItemGenerator, OrderGenerator};

use crate::driver::{Connection, DbError, Dialect};
use crate::stats::counts::QueryCounts;
use crate::workload::loading::is_missing_table;

/// dbgen's update sets: the base orders split in this many ranges (its `-U` maximum for the
/// keys to stay apart is 99 with dbgen's sequence numbers; every range is a distinct set here).
pub const UPDATE_SETS: u32 = 1000;
/// The table that records the sets taken.
pub const SETS_TABLE: &str = "tpch_refresh_sets";
/// Rows per INSERT and keys per DELETE.
const ROWS_PER_STATEMENT: usize = 200;
/// `mk_sparse(i, 1) - mk_sparse(i, 0)`: sequence 1 sits above the three low bits.
const NEW_KEY_OFFSET: i64 = 1 << 3;

/// The highest set the tables took (0: none yet), or None when they have no record of sets
/// (never refreshed by dbscale).
pub async fn sets_recorded(conn: &mut Connection) -> Result<Option<u32>, DbError> {
    let sql = format!("SELECT coalesce(max(set_number), 0) FROM {SETS_TABLE}");
    match conn.query(&sql).await {
        Ok(rows) => Ok(Some(
            rows.first()
                .and_then(|r| r.first()?.as_deref()?.parse().ok())
                .unwrap_or(0),
        )),
        Err(e) if is_missing_table(&e) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The highest set the tables took (0: none), creating their record when missing.
pub async fn sets_taken(conn: &mut Connection) -> Result<u32, DbError> {
    if let Some(taken) = sets_recorded(conn).await? {
        return Ok(taken);
    }
    let create = format!(
        "CREATE TABLE IF NOT EXISTS {SETS_TABLE} (set_number INTEGER NOT NULL PRIMARY KEY)"
    );
    conn.batch(&create).await?;
    Ok(0)
}

/// RF1 of update set `set`: its orders and line items under their new keys, and the set's row.
pub async fn new_sales(
    conn: &mut Connection,
    sf: f64,
    set: u32,
    queries: &mut QueryCounts,
) -> Result<(), DbError> {
    let part = set_part(set)?;
    let orders = rekeyed(OrderGenerator::new(sf, part, UPDATE_SETS as i32).iter());
    let lines = rekeyed(LineItemGenerator::new(sf, part, UPDATE_SETS as i32).iter());
    let dialect = conn.dialect();
    run(conn, queries, "BEGIN").await?;
    run(
        conn,
        queries,
        &format!("INSERT INTO {SETS_TABLE} VALUES ({set})"),
    )
    .await?;
    for (table, rows) in [("orders", &orders), ("lineitem", &lines)] {
        for chunk in rows.chunks(ROWS_PER_STATEMENT) {
            run(conn, queries, &insert(table, chunk, dialect)).await?;
        }
    }
    run(conn, queries, "COMMIT").await
}

/// RF2 of update set `set`: the set's old orders and their line items, once its RF1 committed.
pub async fn old_sales(
    conn: &mut Connection,
    sf: f64,
    set: u32,
    queries: &mut QueryCounts,
) -> Result<(), DbError> {
    let keys = old_keys(sf, set)?;
    // The pair keeps the tables' size: without its RF1 (failed, or cut off) RF2 deletes nothing.
    let taken = conn
        .query(&format!(
            "SELECT count(*) FROM {SETS_TABLE} WHERE set_number = {set}"
        ))
        .await?;
    if taken.first().and_then(|r| r.first()?.as_deref()) != Some("1") {
        return Err(DbError::script(
            "refresh",
            &format!("RF1 of update set {set} did not commit, so RF2 deletes nothing"),
        ));
    }
    run(conn, queries, "BEGIN").await?;
    for chunk in keys.chunks(ROWS_PER_STATEMENT) {
        let list = chunk
            .iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(",");
        run(
            conn,
            queries,
            &format!("DELETE FROM lineitem WHERE l_orderkey IN ({list})"),
        )
        .await?;
        run(
            conn,
            queries,
            &format!("DELETE FROM orders WHERE o_orderkey IN ({list})"),
        )
        .await?;
    }
    run(conn, queries, "COMMIT").await
}

/// The base keys update set `set` deletes, in index order.
pub fn old_keys(sf: f64, set: u32) -> Result<Vec<i64>, DbError> {
    let part = set_part(set)?;
    let parts = UPDATE_SETS as i32;
    let start = GenerateUtils::calculate_start_index(OrderGenerator::SCALE_BASE, sf, part, parts);
    let count = OrderGenerator::calculate_row_count(sf, part, parts);
    Ok((start + 1..=start + count)
        .map(OrderGenerator::make_order_key)
        .collect())
}

fn set_part(set: u32) -> Result<i32, DbError> {
    if (1..=UPDATE_SETS).contains(&set) {
        Ok(set as i32)
    } else {
        Err(DbError::script(
            "refresh",
            &format!(
                "update set {set} does not exist: the tables have taken all {UPDATE_SETS} sets \
                 ({SETS_TABLE}); prepare tpch again"
            ),
        ))
    }
}

/// Rows as dbgen's text (`|`-separated), the order key first, moved to its new key.
fn rekeyed<T: std::fmt::Display>(rows: impl Iterator<Item = T>) -> Vec<Vec<String>> {
    rows.map(|row| {
        let line = row.to_string();
        let mut fields: Vec<String> = line
            .trim_end_matches('|')
            .split('|')
            .map(String::from)
            .collect();
        let key: i64 = fields[0].parse().expect("dbgen's order key is a number");
        fields[0] = (key + NEW_KEY_OFFSET).to_string();
        fields
    })
    .collect()
}

fn insert(table: &str, rows: &[Vec<String>], dialect: Dialect) -> String {
    let values = rows
        .iter()
        .map(|fields| {
            let literals: Vec<String> = fields.iter().map(|f| literal(f, dialect)).collect();
            format!("({})", literals.join(","))
        })
        .collect::<Vec<_>>()
        .join(",");
    format!("INSERT INTO {table} VALUES {values}")
}

/// A quoted literal (both servers cast it to the column's type).
fn literal(text: &str, dialect: Dialect) -> String {
    let mut quoted = text.replace('\'', "''");
    if dialect == Dialect::Mysql {
        quoted = quoted.replace('\\', "\\\\");
    }
    format!("'{quoted}'")
}

async fn run(conn: &mut Connection, queries: &mut QueryCounts, sql: &str) -> Result<(), DbError> {
    let outcome = conn.batch(sql).await?;
    queries.count(&outcome);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// dbgen's `mk_sparse(i, seq)`: the index's low three bits kept, the sequence above them.
    fn mk_sparse(i: i64, seq: i64) -> i64 {
        (((i >> 3) << 2) + seq) << 3 | (i & 7)
    }

    #[test]
    fn keys_are_dbgens_for_both_functions() {
        for i in [1, 7, 8, 9, 1500, 1_499_999] {
            assert_eq!(OrderGenerator::make_order_key(i), mk_sparse(i, 0));
            assert_eq!(mk_sparse(i, 0) + NEW_KEY_OFFSET, mk_sparse(i, 1));
        }
        // Set 2 at SF 1 deletes the base orders of indices 1,501 to 3,000.
        let keys = old_keys(1.0, 2).unwrap();
        assert_eq!(keys.len(), 1500);
        assert_eq!(keys[0], mk_sparse(1501, 0));
        assert_eq!(*keys.last().unwrap(), mk_sparse(3000, 0));
        assert_eq!(old_keys(0.01, 1).unwrap().len(), 15);
        assert!(old_keys(1.0, 0).is_err() && old_keys(1.0, UPDATE_SETS + 1).is_err());
    }

    #[test]
    fn new_sales_are_the_sets_orders_under_new_keys() {
        let orders = rekeyed(OrderGenerator::new(1.0, 2, UPDATE_SETS as i32).iter());
        let old = old_keys(1.0, 2).unwrap();
        assert_eq!(orders.len(), 1500);
        for (row, old) in orders.iter().zip(&old) {
            assert_eq!(row[0], (old + NEW_KEY_OFFSET).to_string());
            assert_eq!(row.len(), 9);
        }
        let lines = rekeyed(LineItemGenerator::new(1.0, 2, UPDATE_SETS as i32).iter());
        assert!((1500..=7 * 1500).contains(&lines.len()));
        let keys: std::collections::HashSet<&String> = orders.iter().map(|o| &o[0]).collect();
        assert!(lines.iter().all(|l| l.len() == 16 && keys.contains(&l[0])));
        let sql = insert("orders", &orders[..2], Dialect::Mysql);
        assert!(sql.starts_with("INSERT INTO orders VALUES ('"), "{sql}");
        assert_eq!(literal("it's a\\b", Dialect::Mysql), "'it''s a\\\\b'");
        assert_eq!(literal("it's", Dialect::Postgres), "'it''s'");
    }
}

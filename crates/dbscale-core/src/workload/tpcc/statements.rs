//! The statements of the five transactions, written once with `?` placeholders (numbered for
//! PostgreSQL). Portable SQL only: `SELECT ... FOR UPDATE` then `UPDATE`, since MySQL has no
//! `UPDATE ... RETURNING`. New-Order reads its items and home stock with one IN-list each,
//! updates an all-local order's stock in one statement and writes its lines in one multi-row
//! INSERT: a statement per line count 5..15 for each (round trips are most of a client's CPU).

use crate::driver::{numbered_placeholders, Dialect, Statement};

pub const BEGIN: usize = 0;
pub const COMMIT: usize = 1;
pub const ROLLBACK: usize = 2;
pub const NO_WAREHOUSE: usize = 3;
pub const NO_DISTRICT: usize = 4;
pub const NO_UPDATE_DISTRICT: usize = 5;
pub const NO_CUSTOMER: usize = 6;
pub const NO_INSERT_ORDER: usize = 7;
pub const NO_INSERT_NEW_ORDER: usize = 8;
pub const NO_STOCK_ONE: usize = 9;
pub const NO_UPDATE_STOCK: usize = 10;
pub const P_UPDATE_WAREHOUSE: usize = 11;
pub const P_WAREHOUSE: usize = 12;
pub const P_UPDATE_DISTRICT: usize = 13;
pub const P_DISTRICT: usize = 14;
pub const CUSTOMERS_BY_LAST: usize = 15;
pub const P_CUSTOMER: usize = 16;
pub const P_CUSTOMER_DATA: usize = 17;
pub const P_UPDATE_CUSTOMER: usize = 18;
pub const P_UPDATE_CUSTOMER_DATA: usize = 19;
pub const P_INSERT_HISTORY: usize = 20;
pub const OS_CUSTOMER: usize = 21;
pub const OS_LAST_ORDER: usize = 22;
pub const OS_LINES: usize = 23;
pub const D_OLDEST: usize = 24;
pub const D_DELETE: usize = 25;
pub const D_ORDER: usize = 26;
pub const D_UPDATE_ORDER: usize = 27;
pub const D_UPDATE_LINES: usize = 28;
pub const D_SUM: usize = 29;
pub const D_UPDATE_CUSTOMER: usize = 30;
pub const SL_DISTRICT: usize = 31;
pub const SL_COUNT: usize = 32;
const FIXED: usize = 33;

/// Order lines per New-Order: 5 to 15 (2.4.1.3).
pub const MIN_LINES: usize = 5;
pub const MAX_LINES: usize = 15;
const VARIANTS: usize = MAX_LINES - MIN_LINES + 1;

/// `SELECT ... FROM item WHERE i_id IN (n ids)` for n lines.
pub fn items_in(n: usize) -> usize {
    FIXED + n - MIN_LINES
}

/// `SELECT ... FROM stock WHERE s_w_id = ? AND s_i_id IN (n ids) FOR UPDATE`.
pub fn stock_in(n: usize) -> usize {
    FIXED + VARIANTS + n - MIN_LINES
}

/// The multi-row INSERT of n order lines.
pub fn insert_lines(n: usize) -> usize {
    FIXED + 2 * VARIANTS + n - MIN_LINES
}

/// The UPDATE of n stock rows of one warehouse: (item, new quantity) x n, (item, ordered
/// quantity) x n, the warehouse, the n items.
pub fn update_stock(n: usize) -> usize {
    FIXED + 3 * VARIANTS + n - MIN_LINES
}

const STOCK_COLUMNS: &str = "s_quantity, s_data, s_dist_01, s_dist_02, s_dist_03, s_dist_04, \
s_dist_05, s_dist_06, s_dist_07, s_dist_08, s_dist_09, s_dist_10";

fn fixed() -> [(&'static str, String); FIXED] {
    let s = |name: &'static str, sql: &str| (name, sql.to_string());
    [
        s("begin", "BEGIN"),
        s("commit", "COMMIT"),
        s("rollback", "ROLLBACK"),
        s("no_warehouse", "SELECT w_tax FROM warehouse WHERE w_id = ?"),
        s("no_district", "SELECT d_tax, d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ? FOR UPDATE"),
        s("no_update_district", "UPDATE district SET d_next_o_id = ? WHERE d_w_id = ? AND d_id = ?"),
        s("no_customer", "SELECT c_discount, c_last, c_credit FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"),
        s("no_insert_order", "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local) VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP, NULL, ?, ?)"),
        s("no_insert_new_order", "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?)"),
        ("no_stock_one", format!("SELECT s_i_id, {STOCK_COLUMNS} FROM stock WHERE s_w_id = ? AND s_i_id = ? FOR UPDATE")),
        s("no_update_stock", "UPDATE stock SET s_quantity = ?, s_ytd = s_ytd + ?, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + ? WHERE s_w_id = ? AND s_i_id = ?"),
        s("p_update_warehouse", "UPDATE warehouse SET w_ytd = w_ytd + ? WHERE w_id = ?"),
        s("p_warehouse", "SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip FROM warehouse WHERE w_id = ?"),
        s("p_update_district", "UPDATE district SET d_ytd = d_ytd + ? WHERE d_w_id = ? AND d_id = ?"),
        s("p_district", "SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip FROM district WHERE d_w_id = ? AND d_id = ?"),
        s("customers_by_last", "SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first"),
        s("p_customer", "SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_since, c_credit, c_credit_lim, c_discount, c_balance FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ? FOR UPDATE"),
        s("p_customer_data", "SELECT c_data FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"),
        s("p_update_customer", "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"),
        s("p_update_customer_data", "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1, c_data = ? WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"),
        s("p_insert_history", "INSERT INTO history (h_c_d_id, h_c_w_id, h_c_id, h_d_id, h_w_id, h_date, h_amount, h_data) VALUES (?, ?, ?, ?, ?, CURRENT_TIMESTAMP, ?, ?)"),
        s("os_customer", "SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"),
        s("os_last_order", "SELECT o_id, o_carrier_id, o_entry_d FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? ORDER BY o_id DESC LIMIT 1"),
        s("os_lines", "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?"),
        s("d_oldest", "SELECT no_o_id FROM new_order WHERE no_w_id = ? AND no_d_id = ? ORDER BY no_o_id LIMIT 1 FOR UPDATE"),
        s("d_delete", "DELETE FROM new_order WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?"),
        s("d_order", "SELECT o_c_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?"),
        s("d_update_order", "UPDATE orders SET o_carrier_id = ? WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?"),
        s("d_update_lines", "UPDATE order_line SET ol_delivery_d = CURRENT_TIMESTAMP WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?"),
        s("d_sum", "SELECT SUM(ol_amount) FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?"),
        s("d_update_customer", "UPDATE customer SET c_balance = c_balance + ?, c_delivery_cnt = c_delivery_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"),
        s("sl_district", "SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?"),
        s("sl_count", "SELECT COUNT(DISTINCT s_i_id) FROM order_line JOIN stock ON s_w_id = ol_w_id AND s_i_id = ol_i_id WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id < ? AND ol_o_id >= ? AND s_quantity < ?"),
    ]
}

fn list(n: usize) -> String {
    vec!["?"; n].join(", ")
}

/// Every statement in index order, in `dialect`'s placeholders.
pub fn all(dialect: Dialect) -> Vec<Statement> {
    let mut out: Vec<Statement> = fixed()
        .into_iter()
        .map(|(name, sql)| Statement::new(name, sql))
        .collect();
    for n in MIN_LINES..=MAX_LINES {
        out.push(Statement::new(
            "no_items",
            format!(
                "SELECT i_id, i_price, i_name, i_data FROM item WHERE i_id IN ({})",
                list(n)
            ),
        ));
    }
    for n in MIN_LINES..=MAX_LINES {
        out.push(Statement::new(
            "no_stock",
            format!(
                "SELECT s_i_id, {STOCK_COLUMNS} FROM stock WHERE s_w_id = ? AND s_i_id IN ({}) FOR UPDATE",
                list(n)
            ),
        ));
    }
    for n in MIN_LINES..=MAX_LINES {
        let rows = vec!["(?, ?, ?, ?, ?, ?, NULL, ?, ?, ?)"; n].join(", ");
        out.push(Statement::new(
            "no_insert_lines",
            format!("INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) VALUES {rows}"),
        ));
    }
    // PostgreSQL types a CASE's parameters as text unless told.
    let value = match dialect {
        Dialect::Postgres => "CAST(? AS INTEGER)",
        Dialect::Mysql => "?",
    };
    for n in MIN_LINES..=MAX_LINES {
        let case = format!(
            "CASE s_i_id {} END",
            vec![format!("WHEN ? THEN {value}"); n].join(" ")
        );
        out.push(Statement::new(
            "no_update_stock_all",
            format!("UPDATE stock SET s_quantity = {case}, s_ytd = s_ytd + {case}, s_order_cnt = s_order_cnt + 1 WHERE s_w_id = ? AND s_i_id IN ({})", list(n)),
        ));
    }
    for statement in &mut out {
        statement.sql = numbered_placeholders(&statement.sql, dialect);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexes_point_at_their_statements() {
        let all = all(Dialect::Postgres);
        assert_eq!(all.len(), FIXED + 4 * VARIANTS);
        assert_eq!(all[SL_COUNT].name, "sl_count");
        assert_eq!(all[D_UPDATE_CUSTOMER].name, "d_update_customer");
        assert!(all[items_in(5)].sql.ends_with("IN ($1, $2, $3, $4, $5)"));
        assert!(all[stock_in(15)].sql.contains("$16) FOR UPDATE"));
        assert!(all[insert_lines(7)].sql.contains("$63"));
        assert!(all[P_INSERT_HISTORY].sql.contains("$7"));
        let update = &all[update_stock(5)].sql;
        assert!(
            update.contains("WHEN $1 THEN CAST($2 AS INTEGER)"),
            "{update}"
        );
        assert!(update.ends_with("s_w_id = $21 AND s_i_id IN ($22, $23, $24, $25, $26)"));
        let mysql = super::all(Dialect::Mysql);
        assert!(mysql[NO_WAREHOUSE].sql.ends_with("w_id = ?"));
    }
}

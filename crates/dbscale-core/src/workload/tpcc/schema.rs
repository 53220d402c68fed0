//! The nine TPC-C tables with the spec's columns, in the names and column order go-tpc and most
//! kits use (so go-tpc runs on tables dbscale loaded, and the reverse), plus the indexes the
//! transactions need and optional foreign keys. Money is DECIMAL: the consistency conditions
//! 3.3.2.8-12 compare sums exactly, which floats would break.

use crate::driver::Dialect;

/// The tables in load order; dropped in reverse.
pub const TABLES: [&str; 9] = [
    "item",
    "warehouse",
    "district",
    "stock",
    "customer",
    "history",
    "orders",
    "new_order",
    "order_line",
];

/// dbscale's own record of the load: the NURand constants the run-time ones must differ from
/// (2.1.6.1). Data another tool loaded has no such table; the run then draws its constants.
pub const LOAD_TABLE: &str = "dbscale_tpcc_load";

/// Column lists per table, with the column types: (name, type) in go-tpc's order.
pub fn columns(table: &str) -> &'static [(&'static str, ColumnType)] {
    use ColumnType::*;
    match table {
        "warehouse" => &[
            ("w_id", Int),
            ("w_name", Text(10)),
            ("w_street_1", Text(20)),
            ("w_street_2", Text(20)),
            ("w_city", Text(20)),
            ("w_state", Char(2)),
            ("w_zip", Char(9)),
            ("w_tax", Decimal(4, 4)),
            ("w_ytd", Decimal(12, 2)),
        ],
        "district" => &[
            ("d_id", Int),
            ("d_w_id", Int),
            ("d_name", Text(10)),
            ("d_street_1", Text(20)),
            ("d_street_2", Text(20)),
            ("d_city", Text(20)),
            ("d_state", Char(2)),
            ("d_zip", Char(9)),
            ("d_tax", Decimal(4, 4)),
            ("d_ytd", Decimal(12, 2)),
            ("d_next_o_id", Int),
        ],
        "customer" => &[
            ("c_id", Int),
            ("c_d_id", Int),
            ("c_w_id", Int),
            ("c_first", Text(16)),
            ("c_middle", Char(2)),
            ("c_last", Text(16)),
            ("c_street_1", Text(20)),
            ("c_street_2", Text(20)),
            ("c_city", Text(20)),
            ("c_state", Char(2)),
            ("c_zip", Char(9)),
            ("c_phone", Char(16)),
            ("c_since", Timestamp),
            ("c_credit", Char(2)),
            ("c_credit_lim", Decimal(12, 2)),
            ("c_discount", Decimal(4, 4)),
            ("c_balance", Decimal(12, 2)),
            ("c_ytd_payment", Decimal(12, 2)),
            ("c_payment_cnt", Int),
            ("c_delivery_cnt", Int),
            ("c_data", Text(500)),
        ],
        "history" => &[
            ("h_c_id", Int),
            ("h_c_d_id", Int),
            ("h_c_w_id", Int),
            ("h_d_id", Int),
            ("h_w_id", Int),
            ("h_date", Timestamp),
            ("h_amount", Decimal(6, 2)),
            ("h_data", Text(24)),
        ],
        "new_order" => &[("no_o_id", Int), ("no_d_id", Int), ("no_w_id", Int)],
        "orders" => &[
            ("o_id", Int),
            ("o_d_id", Int),
            ("o_w_id", Int),
            ("o_c_id", Int),
            ("o_entry_d", Timestamp),
            ("o_carrier_id", Int),
            ("o_ol_cnt", Int),
            ("o_all_local", Int),
        ],
        "order_line" => &[
            ("ol_o_id", Int),
            ("ol_d_id", Int),
            ("ol_w_id", Int),
            ("ol_number", Int),
            ("ol_i_id", Int),
            ("ol_supply_w_id", Int),
            ("ol_delivery_d", Timestamp),
            ("ol_quantity", Int),
            ("ol_amount", Decimal(6, 2)),
            ("ol_dist_info", Char(24)),
        ],
        "stock" => &[
            ("s_i_id", Int),
            ("s_w_id", Int),
            ("s_quantity", Int),
            ("s_dist_01", Char(24)),
            ("s_dist_02", Char(24)),
            ("s_dist_03", Char(24)),
            ("s_dist_04", Char(24)),
            ("s_dist_05", Char(24)),
            ("s_dist_06", Char(24)),
            ("s_dist_07", Char(24)),
            ("s_dist_08", Char(24)),
            ("s_dist_09", Char(24)),
            ("s_dist_10", Char(24)),
            ("s_ytd", Int),
            ("s_order_cnt", Int),
            ("s_remote_cnt", Int),
            ("s_data", Text(50)),
        ],
        "item" => &[
            ("i_id", Int),
            ("i_im_id", Int),
            ("i_name", Text(24)),
            ("i_price", Decimal(5, 2)),
            ("i_data", Text(50)),
        ],
        _ => &[],
    }
}

/// A column's SQL type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnType {
    Int,
    /// VARCHAR(n)
    Text(u16),
    /// CHAR(n)
    Char(u16),
    /// DECIMAL(precision, scale)
    Decimal(u8, u8),
    Timestamp,
}

impl ColumnType {
    fn sql(self, dialect: Dialect) -> String {
        match (self, dialect) {
            (ColumnType::Int, _) => "INT".into(),
            (ColumnType::Text(n), _) => format!("VARCHAR({n})"),
            (ColumnType::Char(n), _) => format!("CHAR({n})"),
            (ColumnType::Decimal(p, s), _) => format!("DECIMAL({p}, {s})"),
            (ColumnType::Timestamp, Dialect::Mysql) => "DATETIME".into(),
            (ColumnType::Timestamp, Dialect::Postgres) => "TIMESTAMP".into(),
        }
    }
}

/// Primary keys (none for history, as in go-tpc and the spec).
fn primary_key(table: &str) -> Option<&'static str> {
    Some(match table {
        "warehouse" => "w_id",
        "district" => "d_w_id, d_id",
        "customer" => "c_w_id, c_d_id, c_id",
        "new_order" => "no_w_id, no_d_id, no_o_id",
        "orders" => "o_w_id, o_d_id, o_id",
        "order_line" => "ol_w_id, ol_d_id, ol_o_id, ol_number",
        "stock" => "s_w_id, s_i_id",
        "item" => "i_id",
        _ => return None,
    })
}

/// Secondary indexes: customer by last name (Payment, Order-Status), orders by customer
/// (Order-Status), history by warehouse (consistency checks); go-tpc's names.
pub const INDEXES: [(&str, &str, &str); 4] = [
    (
        "idx_customer",
        "customer",
        "c_w_id, c_d_id, c_last, c_first",
    ),
    ("idx_order", "orders", "o_w_id, o_d_id, o_c_id, o_id"),
    ("idx_h_w_id", "history", "h_w_id"),
    ("idx_h_c_w_id", "history", "h_c_w_id"),
];

/// `CREATE TABLE` for `table`. With `keys_now` the primary key is part of the table (MySQL's
/// InnoDB clusters rows by it); PostgreSQL builds it after the rows are in, which is faster.
pub fn create_table(table: &str, dialect: Dialect, keys_now: bool) -> String {
    let mut parts: Vec<String> = columns(table)
        .iter()
        .map(|(name, ty)| {
            let not_null = if ty == &ColumnType::Int && is_key_column(table, name) {
                " NOT NULL"
            } else {
                ""
            };
            format!("{name} {}{not_null}", ty.sql(dialect))
        })
        .collect();
    if keys_now {
        if let Some(key) = primary_key(table) {
            parts.push(format!("PRIMARY KEY ({key})"));
        }
    }
    let engine = if dialect == Dialect::Mysql {
        " ENGINE = InnoDB"
    } else {
        ""
    };
    format!(
        "CREATE TABLE {table} (\n  {}\n){engine}",
        parts.join(",\n  ")
    )
}

fn is_key_column(table: &str, column: &str) -> bool {
    table == "history" || primary_key(table).is_some_and(|key| key.split(", ").any(|c| c == column))
}

/// Statements that add the primary keys and secondary indexes of `table` after its load.
pub fn keys_and_indexes(table: &str, with_primary: bool) -> Vec<String> {
    let mut sql = Vec::new();
    if with_primary {
        if let Some(key) = primary_key(table) {
            sql.push(format!("ALTER TABLE {table} ADD PRIMARY KEY ({key})"));
        }
    }
    for (name, on, cols) in INDEXES.iter().filter(|(_, on, _)| *on == table) {
        sql.push(format!("CREATE INDEX {name} ON {on} ({cols})"));
    }
    sql
}

/// The spec's referential constraints (1.3), added after the load when asked for.
pub const FOREIGN_KEYS: [(&str, &str, &str, &str); 9] = [
    ("district", "d_w_id", "warehouse", "w_id"),
    ("customer", "c_w_id, c_d_id", "district", "d_w_id, d_id"),
    (
        "history",
        "h_c_w_id, h_c_d_id, h_c_id",
        "customer",
        "c_w_id, c_d_id, c_id",
    ),
    ("history", "h_w_id, h_d_id", "district", "d_w_id, d_id"),
    (
        "new_order",
        "no_w_id, no_d_id, no_o_id",
        "orders",
        "o_w_id, o_d_id, o_id",
    ),
    (
        "orders",
        "o_w_id, o_d_id, o_c_id",
        "customer",
        "c_w_id, c_d_id, c_id",
    ),
    (
        "order_line",
        "ol_w_id, ol_d_id, ol_o_id",
        "orders",
        "o_w_id, o_d_id, o_id",
    ),
    (
        "order_line",
        "ol_supply_w_id, ol_i_id",
        "stock",
        "s_w_id, s_i_id",
    ),
    ("stock", "s_w_id", "warehouse", "w_id"),
];

pub fn foreign_key_sql() -> Vec<String> {
    FOREIGN_KEYS
        .iter()
        .enumerate()
        .map(|(i, (table, cols, parent, parent_cols))| {
            format!(
                "ALTER TABLE {table} ADD CONSTRAINT fk_tpcc_{i} FOREIGN KEY ({cols}) REFERENCES {parent} ({parent_cols})"
            )
        })
        .collect()
}

/// Drops every table, children first so foreign keys never stand in the way.
pub fn drop_sql(dialect: Dialect) -> Vec<String> {
    let cascade = if dialect == Dialect::Postgres {
        " CASCADE"
    } else {
        ""
    };
    let mut sql: Vec<String> = TABLES
        .iter()
        .rev()
        .map(|t| format!("DROP TABLE IF EXISTS {t}{cascade}"))
        .collect();
    sql.push(format!("DROP TABLE IF EXISTS {LOAD_TABLE}"));
    sql
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_has_columns_and_go_tpc_types_on_mysql() {
        for table in TABLES {
            assert!(!columns(table).is_empty(), "{table}");
        }
        let sql = create_table("warehouse", Dialect::Mysql, true);
        assert!(sql.contains("w_id INT NOT NULL,"), "{sql}");
        assert!(sql.contains("w_tax DECIMAL(4, 4),"), "{sql}");
        assert!(sql.contains("PRIMARY KEY (w_id)"), "{sql}");
        let sql = create_table("orders", Dialect::Postgres, false);
        assert!(sql.contains("o_entry_d TIMESTAMP"), "{sql}");
        assert!(!sql.contains("PRIMARY KEY"), "{sql}");
        assert_eq!(columns("stock").len(), 17);
        assert_eq!(columns("customer").len(), 21);
    }

    #[test]
    fn indexes_and_keys_follow_the_load() {
        let sql = keys_and_indexes("customer", true);
        assert_eq!(
            sql,
            [
                "ALTER TABLE customer ADD PRIMARY KEY (c_w_id, c_d_id, c_id)",
                "CREATE INDEX idx_customer ON customer (c_w_id, c_d_id, c_last, c_first)"
            ]
        );
        assert!(keys_and_indexes("history", false).len() == 2);
        assert_eq!(drop_sql(Dialect::Mysql).len(), 10);
        assert_eq!(foreign_key_sql().len(), 9);
    }
}

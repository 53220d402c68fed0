//! TPC-H's eight tables (specification 1.4) in SQL both PostgreSQL and MySQL/MariaDB take, with
//! the primary keys (1.4.2.2), the foreign keys (1.4.2.3) and indexes on the foreign-key columns,
//! all added after the rows.

/// Tables in load order (referenced before referencing), with their columns.
pub const TABLES: [(&str, &str); 8] = [
    ("region", "r_regionkey INTEGER NOT NULL, r_name CHAR(25) NOT NULL, r_comment VARCHAR(152)"),
    (
        "nation",
        "n_nationkey INTEGER NOT NULL, n_name CHAR(25) NOT NULL, n_regionkey INTEGER NOT NULL, \
         n_comment VARCHAR(152)",
    ),
    (
        "part",
        "p_partkey INTEGER NOT NULL, p_name VARCHAR(55) NOT NULL, p_mfgr CHAR(25) NOT NULL, \
         p_brand CHAR(10) NOT NULL, p_type VARCHAR(25) NOT NULL, p_size INTEGER NOT NULL, \
         p_container CHAR(10) NOT NULL, p_retailprice DECIMAL(15,2) NOT NULL, \
         p_comment VARCHAR(23) NOT NULL",
    ),
    (
        "supplier",
        "s_suppkey INTEGER NOT NULL, s_name CHAR(25) NOT NULL, s_address VARCHAR(40) NOT NULL, \
         s_nationkey INTEGER NOT NULL, s_phone CHAR(15) NOT NULL, s_acctbal DECIMAL(15,2) NOT NULL, \
         s_comment VARCHAR(101) NOT NULL",
    ),
    (
        "partsupp",
        "ps_partkey INTEGER NOT NULL, ps_suppkey INTEGER NOT NULL, ps_availqty INTEGER NOT NULL, \
         ps_supplycost DECIMAL(15,2) NOT NULL, ps_comment VARCHAR(199) NOT NULL",
    ),
    (
        "customer",
        "c_custkey INTEGER NOT NULL, c_name VARCHAR(25) NOT NULL, c_address VARCHAR(40) NOT NULL, \
         c_nationkey INTEGER NOT NULL, c_phone CHAR(15) NOT NULL, c_acctbal DECIMAL(15,2) NOT NULL, \
         c_mktsegment CHAR(10) NOT NULL, c_comment VARCHAR(117) NOT NULL",
    ),
    (
        "orders",
        "o_orderkey BIGINT NOT NULL, o_custkey INTEGER NOT NULL, o_orderstatus CHAR(1) NOT NULL, \
         o_totalprice DECIMAL(15,2) NOT NULL, o_orderdate DATE NOT NULL, \
         o_orderpriority CHAR(15) NOT NULL, o_clerk CHAR(15) NOT NULL, \
         o_shippriority INTEGER NOT NULL, o_comment VARCHAR(79) NOT NULL",
    ),
    (
        "lineitem",
        "l_orderkey BIGINT NOT NULL, l_partkey INTEGER NOT NULL, l_suppkey INTEGER NOT NULL, \
         l_linenumber INTEGER NOT NULL, l_quantity DECIMAL(15,2) NOT NULL, \
         l_extendedprice DECIMAL(15,2) NOT NULL, l_discount DECIMAL(15,2) NOT NULL, \
         l_tax DECIMAL(15,2) NOT NULL, l_returnflag CHAR(1) NOT NULL, \
         l_linestatus CHAR(1) NOT NULL, l_shipdate DATE NOT NULL, l_commitdate DATE NOT NULL, \
         l_receiptdate DATE NOT NULL, l_shipinstruct CHAR(25) NOT NULL, \
         l_shipmode CHAR(10) NOT NULL, l_comment VARCHAR(44) NOT NULL",
    ),
];

/// The primary keys (1.4.2.2).
pub const PRIMARY_KEYS: [&str; 8] = [
    "ALTER TABLE region ADD PRIMARY KEY (r_regionkey)",
    "ALTER TABLE nation ADD PRIMARY KEY (n_nationkey)",
    "ALTER TABLE part ADD PRIMARY KEY (p_partkey)",
    "ALTER TABLE supplier ADD PRIMARY KEY (s_suppkey)",
    "ALTER TABLE partsupp ADD PRIMARY KEY (ps_partkey, ps_suppkey)",
    "ALTER TABLE customer ADD PRIMARY KEY (c_custkey)",
    "ALTER TABLE orders ADD PRIMARY KEY (o_orderkey)",
    "ALTER TABLE lineitem ADD PRIMARY KEY (l_orderkey, l_linenumber)",
];

/// Indexes on the foreign-key columns a primary key does not lead with.
pub const INDEXES: [&str; 6] = [
    "CREATE INDEX nation_regionkey ON nation (n_regionkey)",
    "CREATE INDEX supplier_nationkey ON supplier (s_nationkey)",
    "CREATE INDEX partsupp_suppkey ON partsupp (ps_suppkey)",
    "CREATE INDEX customer_nationkey ON customer (c_nationkey)",
    "CREATE INDEX orders_custkey ON orders (o_custkey)",
    "CREATE INDEX lineitem_part_supp ON lineitem (l_partkey, l_suppkey)",
];

/// The foreign keys (1.4.2.3).
pub const FOREIGN_KEYS: [&str; 8] = [
    "ALTER TABLE nation ADD FOREIGN KEY (n_regionkey) REFERENCES region (r_regionkey)",
    "ALTER TABLE supplier ADD FOREIGN KEY (s_nationkey) REFERENCES nation (n_nationkey)",
    "ALTER TABLE customer ADD FOREIGN KEY (c_nationkey) REFERENCES nation (n_nationkey)",
    "ALTER TABLE partsupp ADD FOREIGN KEY (ps_partkey) REFERENCES part (p_partkey)",
    "ALTER TABLE partsupp ADD FOREIGN KEY (ps_suppkey) REFERENCES supplier (s_suppkey)",
    "ALTER TABLE orders ADD FOREIGN KEY (o_custkey) REFERENCES customer (c_custkey)",
    "ALTER TABLE lineitem ADD FOREIGN KEY (l_orderkey) REFERENCES orders (o_orderkey)",
    "ALTER TABLE lineitem ADD FOREIGN KEY (l_partkey, l_suppkey) \
     REFERENCES partsupp (ps_partkey, ps_suppkey)",
];

pub fn create_table(name: &str, columns: &str) -> String {
    format!("CREATE TABLE {name} ({columns})")
}

/// How many columns a table has (the `|`-separated fields of its rows).
pub fn column_count(columns: &str) -> usize {
    let mut depth = 0;
    let mut count = 1;
    for c in columns.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => count += 1,
            _ => {}
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn column_counts_are_the_specifications() {
        let counts: Vec<usize> = TABLES.iter().map(|(_, c)| column_count(c)).collect();
        assert_eq!(counts, [3, 4, 9, 7, 5, 8, 9, 16]);
    }
}

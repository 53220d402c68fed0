//! The consistency conditions of clause 3.3.2 (1-12) and the cardinalities of 4.3.3.1, as
//! queries that return the offending warehouses, districts, orders or customers. Each runs on
//! its own; a violation names at most a few examples.

use std::time::Instant;

use schemars::JsonSchema;
use serde::Serialize;

use super::terminal::int_at;
use crate::driver::{Connection, Endpoint, QueryProtocol};
use crate::Error;

/// Offending rows shown per violated condition.
const EXAMPLES: usize = 5;

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ConditionResult {
    pub id: String,
    pub description: String,
    /// `pass`, `fail` or `skip`.
    pub status: String,
    /// Offending rows found (at most EXAMPLES + 1: "more" when above EXAMPLES).
    pub violations: usize,
    pub examples: Vec<String>,
    pub note: String,
    pub seconds: f64,
    /// The statement that was checked, when the check is a query's answer (TPC-H).
    pub statement: String,
    /// The rows it returned, as text (TPC-H's answers; empty for TPC-C's conditions).
    pub rows: Vec<Vec<Option<String>>>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CheckReport {
    pub workload: &'static str,
    pub target: String,
    pub warehouses: i64,
    pub ok: bool,
    pub conditions: Vec<ConditionResult>,
    pub seconds: f64,
}

/// (id, description, key columns named in examples, query returning offending rows).
const CONDITIONS: &[(&str, &str, &[&str], &str)] = &[
    ("3.3.2.1", "W_YTD = sum(D_YTD) of the warehouse's districts", &["warehouse"],
     "SELECT w_id FROM warehouse LEFT JOIN (SELECT d_w_id, SUM(d_ytd) s FROM district GROUP BY d_w_id) d ON d.d_w_id = w_id WHERE d.s IS NULL OR w_ytd <> d.s"),
    ("3.3.2.2", "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID) per district", &["warehouse", "district"],
     "SELECT d_w_id, d_id FROM district LEFT JOIN (SELECT o_w_id, o_d_id, MAX(o_id) m FROM orders GROUP BY o_w_id, o_d_id) o ON o.o_w_id = d_w_id AND o.o_d_id = d_id LEFT JOIN (SELECT no_w_id, no_d_id, MAX(no_o_id) m FROM new_order GROUP BY no_w_id, no_d_id) n ON n.no_w_id = d_w_id AND n.no_d_id = d_id WHERE o.m IS NULL OR d_next_o_id - 1 <> o.m OR (n.m IS NOT NULL AND n.m <> o.m)"),
    ("3.3.2.3", "max(NO_O_ID) - min(NO_O_ID) + 1 = rows in NEW-ORDER per district", &["warehouse", "district"],
     "SELECT no_w_id, no_d_id FROM new_order GROUP BY no_w_id, no_d_id HAVING MAX(no_o_id) - MIN(no_o_id) + 1 <> COUNT(*)"),
    ("3.3.2.4", "sum(O_OL_CNT) = rows in ORDER-LINE per district", &["warehouse", "district"],
     "SELECT o.w, o.d FROM (SELECT o_w_id w, o_d_id d, SUM(o_ol_cnt) s FROM orders GROUP BY o_w_id, o_d_id) o LEFT JOIN (SELECT ol_w_id w, ol_d_id d, COUNT(*) n FROM order_line GROUP BY ol_w_id, ol_d_id) l ON l.w = o.w AND l.d = o.d WHERE l.n IS NULL OR o.s <> l.n"),
    ("3.3.2.5", "O_CARRIER_ID is null exactly for orders with a NEW-ORDER row", &["warehouse", "district", "order"],
     "SELECT o_w_id, o_d_id, o_id FROM orders LEFT JOIN new_order ON no_w_id = o_w_id AND no_d_id = o_d_id AND no_o_id = o_id WHERE (o_carrier_id IS NULL AND no_o_id IS NULL) OR (o_carrier_id IS NOT NULL AND no_o_id IS NOT NULL) UNION ALL SELECT no_w_id, no_d_id, no_o_id FROM new_order LEFT JOIN orders ON o_w_id = no_w_id AND o_d_id = no_d_id AND o_id = no_o_id WHERE o_id IS NULL"),
    ("3.3.2.6", "O_OL_CNT = the order's rows in ORDER-LINE", &["warehouse", "district", "order"],
     "SELECT o_w_id, o_d_id, o_id FROM orders LEFT JOIN (SELECT ol_w_id, ol_d_id, ol_o_id, COUNT(*) n FROM order_line GROUP BY ol_w_id, ol_d_id, ol_o_id) l ON l.ol_w_id = o_w_id AND l.ol_d_id = o_d_id AND l.ol_o_id = o_id WHERE l.n IS NULL OR l.n <> o_ol_cnt"),
    ("3.3.2.7", "OL_DELIVERY_D is null exactly when the order's O_CARRIER_ID is", &["warehouse", "district", "order"],
     "SELECT DISTINCT o_w_id, o_d_id, o_id FROM orders JOIN order_line ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id WHERE (o_carrier_id IS NULL AND ol_delivery_d IS NOT NULL) OR (o_carrier_id IS NOT NULL AND ol_delivery_d IS NULL)"),
    ("3.3.2.8", "W_YTD = sum(H_AMOUNT) of the warehouse's history", &["warehouse"],
     "SELECT w_id FROM warehouse LEFT JOIN (SELECT h_w_id, SUM(h_amount) s FROM history GROUP BY h_w_id) h ON h.h_w_id = w_id WHERE h.s IS NULL OR w_ytd <> h.s"),
    ("3.3.2.9", "D_YTD = sum(H_AMOUNT) of the district's history", &["warehouse", "district"],
     "SELECT d_w_id, d_id FROM district LEFT JOIN (SELECT h_w_id, h_d_id, SUM(h_amount) s FROM history GROUP BY h_w_id, h_d_id) h ON h.h_w_id = d_w_id AND h.h_d_id = d_id WHERE h.s IS NULL OR d_ytd <> h.s"),
    ("3.3.2.10", "C_BALANCE = sum(delivered OL_AMOUNT) - sum(H_AMOUNT) per customer", &["warehouse", "district", "customer"],
     "SELECT c_w_id, c_d_id, c_id FROM customer LEFT JOIN (SELECT o_w_id w, o_d_id d, o_c_id c, SUM(ol_amount) s FROM orders JOIN order_line ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id WHERE ol_delivery_d IS NOT NULL GROUP BY o_w_id, o_d_id, o_c_id) ol ON ol.w = c_w_id AND ol.d = c_d_id AND ol.c = c_id LEFT JOIN (SELECT h_c_w_id w, h_c_d_id d, h_c_id c, SUM(h_amount) s FROM history GROUP BY h_c_w_id, h_c_d_id, h_c_id) h ON h.w = c_w_id AND h.d = c_d_id AND h.c = c_id WHERE c_balance <> COALESCE(ol.s, 0) - COALESCE(h.s, 0)"),
    ("3.3.2.11", "rows in ORDER - rows in NEW-ORDER = 2100 per district (before any Delivery)", &["warehouse", "district"],
     "SELECT o.w, o.d FROM (SELECT o_w_id w, o_d_id d, COUNT(*) n FROM orders GROUP BY o_w_id, o_d_id) o LEFT JOIN (SELECT no_w_id w, no_d_id d, COUNT(*) n FROM new_order GROUP BY no_w_id, no_d_id) n ON n.w = o.w AND n.d = o.d WHERE o.n - COALESCE(n.n, 0) <> 2100"),
    ("3.3.2.12", "C_BALANCE + C_YTD_PAYMENT = sum(delivered OL_AMOUNT) per customer", &["warehouse", "district", "customer"],
     "SELECT c_w_id, c_d_id, c_id FROM customer LEFT JOIN (SELECT o_w_id w, o_d_id d, o_c_id c, SUM(ol_amount) s FROM orders JOIN order_line ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id WHERE ol_delivery_d IS NOT NULL GROUP BY o_w_id, o_d_id, o_c_id) ol ON ol.w = c_w_id AND ol.d = c_d_id AND ol.c = c_id WHERE c_balance + c_ytd_payment <> COALESCE(ol.s, 0)"),
];

/// Tables whose row counts are fixed by the warehouse count (4.3.3.1), with rows per warehouse
/// (item's are not per warehouse).
const CARDINALITIES: &[(&str, i64)] = &[
    ("warehouse", 1),
    ("district", 10),
    ("customer", 30_000),
    ("stock", 100_000),
    ("item", 0),
];

pub async fn run_checks(
    endpoint: &Endpoint,
    warehouses: Option<i64>,
) -> Result<CheckReport, Error> {
    let started = Instant::now();
    let mut conn = endpoint.open(QueryProtocol::Simple).await?;
    let counted = count(&mut conn, "warehouse").await?;
    let warehouses = warehouses.unwrap_or(counted);
    let mut conditions = vec![cardinalities(&mut conn, warehouses).await?];
    // 3.3.2.11 holds only until the first Delivery: skipped once any customer had one.
    let delivered = scalar(
        &mut conn,
        "SELECT COUNT(*) FROM customer WHERE c_delivery_cnt > 0",
    )
    .await?
        > 0;
    for (id, description, keys, sql) in CONDITIONS {
        let begun = Instant::now();
        if *id == "3.3.2.11" && delivered {
            conditions.push(result(
                id,
                description,
                "skip",
                Vec::new(),
                "holds only before any Delivery; deliveries have run",
                begun,
            ));
            continue;
        }
        let limited = format!("SELECT * FROM ({sql}) v LIMIT {}", EXAMPLES + 1);
        let rows = conn.query(&limited).await.map_err(|source| Error::Sql {
            context: format!("checking {id}"),
            source,
        })?;
        let examples: Vec<String> = rows
            .iter()
            .map(|row| {
                keys.iter()
                    .enumerate()
                    .map(|(i, key)| format!("{key} {}", int_at(row, i)))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        let status = if examples.is_empty() { "pass" } else { "fail" };
        conditions.push(result(id, description, status, examples, "", begun));
    }
    conn.close().await;
    Ok(CheckReport {
        workload: "tpcc",
        target: endpoint.redacted(),
        warehouses,
        ok: conditions.iter().all(|c| c.status != "fail"),
        conditions,
        seconds: started.elapsed().as_secs_f64(),
    })
}

fn result(
    id: &str,
    description: &str,
    status: &str,
    mut examples: Vec<String>,
    note: &str,
    begun: Instant,
) -> ConditionResult {
    let violations = examples.len();
    let mut note = note.to_string();
    if violations > EXAMPLES {
        examples.truncate(EXAMPLES);
        note = format!("more than {EXAMPLES} violations; the first {EXAMPLES} shown");
    }
    ConditionResult {
        id: id.into(),
        description: description.into(),
        status: status.into(),
        violations,
        examples,
        note,
        seconds: begun.elapsed().as_secs_f64(),
        statement: String::new(),
        rows: Vec::new(),
    }
}

async fn scalar(conn: &mut Connection, sql: &str) -> Result<i64, Error> {
    let rows = conn
        .query(sql)
        .await
        .map_err(|source| super::read_failed(source, &sql.chars().take(80).collect::<String>()))?;
    Ok(rows.first().map_or(0, |row| int_at(row, 0)))
}

async fn count(conn: &mut Connection, table: &str) -> Result<i64, Error> {
    scalar(conn, &format!("SELECT COUNT(*) FROM {table}")).await
}

async fn cardinalities(conn: &mut Connection, warehouses: i64) -> Result<ConditionResult, Error> {
    let begun = Instant::now();
    let mut examples = Vec::new();
    for (table, per_warehouse) in CARDINALITIES {
        let expected = if *per_warehouse == 0 {
            100_000
        } else {
            per_warehouse * warehouses
        };
        let found = count(conn, table).await?;
        if found != expected {
            examples.push(format!("{table} has {found} rows, expected {expected}"));
        }
    }
    let status = if examples.is_empty() { "pass" } else { "fail" };
    Ok(result(
        "4.3.3.1",
        "cardinalities: warehouse, district, customer, stock per warehouse; 100,000 items",
        status,
        examples,
        "",
        begun,
    ))
}

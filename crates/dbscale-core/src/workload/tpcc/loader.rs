//! `dbscale prepare tpcc`: drops and creates the tables, then loads them over several
//! connections that take units of work (item ranges, a warehouse with its districts, stock
//! ranges, a district's customers, a district's orders) from one queue, so a few warehouses
//! still keep every connection busy. Each loader has its own thread and event loop, so generating
//! rows on one overlaps with the others' waits for the server. PostgreSQL gets binary COPY with keys built afterwards;
//! MySQL/MariaDB server-prepared multi-row INSERTs, one transaction per unit.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use rand::rngs::SmallRng;
use rand::SeedableRng;

use super::data::{self, DISTRICTS, ITEMS, STOCK};
use super::random::NurandConstants;
use super::rows::RowBuffer;
use super::schema::{self, columns, LOAD_TABLE, TABLES};
use super::Tpcc;
use crate::driver::{Connection, Dialect, Endpoint, QueryProtocol, Statement};
use crate::workload::loading::{exec, join_all};
use crate::workload::{PrepareStep, PrepareSummary};
use crate::Error;

/// Rows per generated range of items or stock.
const RANGE_ROWS: i64 = 25_000;
/// Placeholders per multi-row INSERT at most (MySQL allows 65,535).
const MAX_PLACEHOLDERS: usize = 30_000;
const COPY_HEADER: &[u8] = b"PGCOPY\n\xff\r\n\0\0\0\0\0\0\0\0\0";
const COPY_TRAILER: &[u8] = &(-1i16).to_be_bytes();
/// Seconds from 1970-01-01 to 2000-01-01, PostgreSQL's epoch.
const PG_EPOCH_OFFSET_S: i64 = 946_684_800;

/// One piece of the load.
#[derive(Debug, Clone, Copy)]
enum Unit {
    Items(i64, i64),
    Warehouse(i64),
    Stock(i64, i64, i64),
    Customers(i64, i64),
    Orders(i64, i64),
}

/// The load's clock, written into every timestamp column.
#[derive(Clone)]
struct LoadTime {
    pg_us: i64,
    text: String,
}

impl LoadTime {
    fn now() -> Self {
        let unix = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        let pg_us = (unix - PG_EPOCH_OFFSET_S) * 1_000_000;
        let (days, secs) = (unix.div_euclid(86_400), unix.rem_euclid(86_400));
        let (y, m, d) = civil_from_days(days);
        let text = format!(
            "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
            secs / 3600,
            (secs / 60) % 60,
            secs % 60
        );
        Self { pg_us, text }
    }
}

/// Year, month, day of a day count since 1970-01-01 (H. Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

impl Tpcc {
    pub async fn prepare(&self, endpoint: &Endpoint) -> Result<PrepareSummary, Error> {
        let started = Instant::now();
        let dialect = endpoint.dialect();
        let mut summary = PrepareSummary::default();
        let mut admin = endpoint.open(QueryProtocol::Simple).await?;
        let mut rng = SmallRng::from_entropy();
        let constants = NurandConstants::for_load(&mut rng);
        let begun = Instant::now();
        for sql in schema::drop_sql(dialect) {
            exec(&mut admin, &sql).await?;
        }
        for table in TABLES {
            exec(
                &mut admin,
                &schema::create_table(table, dialect, dialect == Dialect::Mysql),
            )
            .await?;
        }
        exec(
            &mut admin,
            &format!(
                "CREATE TABLE {LOAD_TABLE} (warehouses INT, c_last INT, c_id INT, ol_i_id INT)"
            ),
        )
        .await?;
        exec(
            &mut admin,
            &format!(
                "INSERT INTO {LOAD_TABLE} VALUES ({}, {}, {}, {})",
                self.warehouses, constants.c_last, constants.c_id, constants.ol_i_id
            ),
        )
        .await?;
        step(&mut summary, "drop and create tables", begun);

        let units = self.units();
        let loaders = self.loaders().min(units.len());
        let queue = Arc::new(Mutex::new(units.into_iter().collect::<VecDeque<_>>()));
        let time = LoadTime::now();
        let seed: u64 = rand::random();
        let begun = Instant::now();
        let mut threads = Vec::new();
        for i in 0..loaders {
            let (endpoint, queue, time) = (endpoint.clone(), queue.clone(), time.clone());
            let thread = std::thread::Builder::new()
                .name(format!("dbscale-loader-{i}"))
                .spawn(move || {
                    crate::engine::block_on(load_units(&endpoint, &queue, &constants, &time, seed))
                })
                .map_err(|e| Error::Internal(format!("cannot start a loader thread: {e}")))?;
            threads.push(thread);
        }
        for thread in threads {
            let loaded = thread
                .join()
                .map_err(|_| Error::Internal("a loader thread panicked".into()))?;
            summary.rows += loaded??;
        }
        step(
            &mut summary,
            &format!(
                "load {} warehouses on {loaders} connections",
                self.warehouses
            ),
            begun,
        );

        let begun = Instant::now();
        let keys = RefCell::new(
            TABLES
                .iter()
                .map(|t| schema::keys_and_indexes(t, dialect == Dialect::Postgres))
                .filter(|sql| !sql.is_empty())
                .collect::<VecDeque<_>>(),
        );
        let work = (0..loaders).map(|_| run_queued(endpoint, &keys));
        for done in join_all(work.collect()).await {
            done?;
        }
        step(&mut summary, "primary keys and indexes", begun);

        let begun = Instant::now();
        for table in TABLES {
            let sql = match dialect {
                Dialect::Postgres => format!("ANALYZE {table}"),
                Dialect::Mysql => format!("ANALYZE TABLE {table}"),
            };
            admin.query(&sql).await.map_err(|source| Error::Sql {
                context: sql,
                source,
            })?;
        }
        step(&mut summary, "analyze", begun);
        if self.params.bool("foreign_keys") {
            let begun = Instant::now();
            for sql in schema::foreign_key_sql() {
                exec(&mut admin, &sql).await?;
            }
            step(&mut summary, "foreign keys", begun);
        }
        admin.close().await;
        summary.seconds = started.elapsed().as_secs_f64();
        Ok(summary)
    }

    pub async fn cleanup(&self, endpoint: &Endpoint) -> Result<PrepareSummary, Error> {
        let started = Instant::now();
        let mut conn = endpoint.open(QueryProtocol::Simple).await?;
        for sql in schema::drop_sql(endpoint.dialect()) {
            exec(&mut conn, &sql).await?;
        }
        conn.close().await;
        let mut summary = PrepareSummary::default();
        step(&mut summary, "drop tables", started);
        summary.seconds = started.elapsed().as_secs_f64();
        Ok(summary)
    }

    /// The load's units, largest first so the last ones to finish are small.
    fn units(&self) -> Vec<Unit> {
        let mut units = Vec::new();
        for w in 1..=self.warehouses {
            for d in 1..=DISTRICTS {
                units.push(Unit::Orders(w, d));
            }
        }
        for w in 1..=self.warehouses {
            for from in (1..=STOCK).step_by(RANGE_ROWS as usize) {
                units.push(Unit::Stock(w, from, (from + RANGE_ROWS - 1).min(STOCK)));
            }
            for d in 1..=DISTRICTS {
                units.push(Unit::Customers(w, d));
            }
        }
        for from in (1..=ITEMS).step_by(RANGE_ROWS as usize) {
            units.push(Unit::Items(from, (from + RANGE_ROWS - 1).min(ITEMS)));
        }
        units.extend((1..=self.warehouses).map(Unit::Warehouse));
        units
    }
}

fn step(summary: &mut PrepareSummary, name: &str, begun: Instant) {
    summary.steps.push(PrepareStep {
        name: name.into(),
        seconds: begun.elapsed().as_secs_f64(),
    });
}

/// One loader connection: takes units until the queue is empty; returns the rows it wrote.
async fn load_units(
    endpoint: &Endpoint,
    queue: &Mutex<VecDeque<Unit>>,
    constants: &NurandConstants,
    time: &LoadTime,
    seed: u64,
) -> Result<u64, Error> {
    let mut conn = endpoint.open(QueryProtocol::Prepared).await?;
    if conn.dialect() == Dialect::Mysql {
        exec(&mut conn, "SET unique_checks = 0, foreign_key_checks = 0").await?;
    }
    let mut rows = 0;
    loop {
        let Some(unit) = queue.lock().expect("queue lock").pop_front() else {
            break;
        };
        let mut rng = SmallRng::seed_from_u64(seed ^ unit_seed(unit));
        let tables = generate(unit, &mut rng, constants);
        let mysql = conn.dialect() == Dialect::Mysql;
        if mysql {
            exec(&mut conn, "BEGIN").await?;
        }
        for (table, mut buffer) in tables {
            rows += buffer.rows() as u64;
            if mysql {
                insert_rows(&mut conn, table, &mut buffer, &time.text).await?;
            } else {
                copy_rows(&mut conn, table, &buffer, time.pg_us).await?;
            }
        }
        if mysql {
            exec(&mut conn, "COMMIT").await?;
        }
    }
    conn.close().await;
    Ok(rows)
}

/// A unit's own seed, so its rows do not depend on which loader took it.
fn unit_seed(unit: Unit) -> u64 {
    let (kind, a, b) = match unit {
        Unit::Items(from, _) => (1, from, 0),
        Unit::Warehouse(w) => (2, w, 0),
        Unit::Stock(w, from, _) => (3, w, from),
        Unit::Customers(w, d) => (4, w, d),
        Unit::Orders(w, d) => (5, w, d),
    };
    (kind << 56) ^ ((a as u64) << 24) ^ (b as u64)
}

fn generate(
    unit: Unit,
    rng: &mut SmallRng,
    constants: &NurandConstants,
) -> Vec<(&'static str, RowBuffer)> {
    match unit {
        Unit::Items(from, to) => {
            let mut items = data::buffer("item");
            data::items(rng, from, to, &mut items);
            vec![("item", items)]
        }
        Unit::Warehouse(w) => {
            let (mut warehouse, mut district) =
                (data::buffer("warehouse"), data::buffer("district"));
            data::warehouse(rng, w, &mut warehouse, &mut district);
            vec![("warehouse", warehouse), ("district", district)]
        }
        Unit::Stock(w, from, to) => {
            let mut stock = data::buffer("stock");
            data::stock(rng, w, from, to, &mut stock);
            vec![("stock", stock)]
        }
        Unit::Customers(w, d) => {
            let (mut customer, mut history) = (data::buffer("customer"), data::buffer("history"));
            data::customers(rng, constants, (w, d), &mut customer, &mut history);
            vec![("customer", customer), ("history", history)]
        }
        Unit::Orders(w, d) => {
            let (mut orders, mut new_orders, mut lines) = (
                data::buffer("orders"),
                data::buffer("new_order"),
                data::buffer("order_line"),
            );
            data::orders(rng, (w, d), &mut orders, &mut new_orders, &mut lines);
            vec![
                ("orders", orders),
                ("new_order", new_orders),
                ("order_line", lines),
            ]
        }
    }
}

fn column_list(table: &str) -> String {
    let names: Vec<&str> = columns(table).iter().map(|(name, _)| *name).collect();
    names.join(", ")
}

/// PostgreSQL: the rows in one binary COPY, sent in chunks of about 256 kB.
async fn copy_rows(
    conn: &mut Connection,
    table: &str,
    rows: &RowBuffer,
    now_us: i64,
) -> Result<(), Error> {
    let mut data = COPY_HEADER.to_vec();
    rows.copy_binary(now_us, &mut data);
    data.extend_from_slice(COPY_TRAILER);
    let chunks: Vec<Bytes> = data
        .chunks(256 * 1024)
        .map(Bytes::copy_from_slice)
        .collect();
    let sql = format!(
        "COPY {table} ({}) FROM STDIN WITH BINARY",
        column_list(table)
    );
    conn.copy_in(&sql, chunks.into_iter())
        .await
        .map(|_| ())
        .map_err(|source| Error::Sql {
            context: format!("loading {table}"),
            source,
        })
}

/// MySQL: multi-row INSERTs prepared on the server, a full-size one and one for the rest.
async fn insert_rows(
    conn: &mut Connection,
    table: &str,
    rows: &mut RowBuffer,
    now: &str,
) -> Result<(), Error> {
    let total = rows.rows();
    if total == 0 {
        return Ok(());
    }
    let width = rows.width;
    let per_insert = (MAX_PLACEHOLDERS / width).min(1000).min(total);
    let tuple = format!("({})", vec!["?"; width].join(", "));
    let statement = |n: usize| {
        Statement::new(
            "load",
            format!(
                "INSERT INTO {table} ({}) VALUES {}",
                column_list(table),
                vec![tuple.as_str(); n].join(",")
            ),
        )
    };
    let mut list = vec![statement(per_insert)];
    let rest = total % per_insert;
    if rest > 0 {
        list.push(statement(rest));
    }
    let failed = |source| Error::Sql {
        context: format!("loading {table}"),
        source,
    };
    conn.prepare(&list).await.map_err(failed)?;
    let params = rows.params(now);
    for chunk in params.chunks(per_insert * width) {
        let index = usize::from(chunk.len() != per_insert * width);
        conn.execute(index, chunk).await.map_err(failed)?;
    }
    Ok(())
}

/// Runs queued statement groups (one table's keys and indexes each) until none are left.
async fn run_queued(
    endpoint: &Endpoint,
    queue: &RefCell<VecDeque<Vec<String>>>,
) -> Result<(), Error> {
    let mut conn = endpoint.open(QueryProtocol::Simple).await?;
    loop {
        let Some(group) = queue.borrow_mut().pop_front() else {
            break;
        };
        for sql in group {
            exec(&mut conn, &sql).await?;
        }
    }
    conn.close().await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates_from_day_counts() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(10_957), (2000, 1, 1));
        assert_eq!(civil_from_days(20_512), (2026, 2, 28));
        assert_eq!(civil_from_days(20_513), (2026, 3, 1));
    }
}

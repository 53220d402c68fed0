//! `dbscale prepare tpcc`: drops and creates the tables, then loads them over several
//! connections that take units of work (item ranges, a warehouse with its districts, stock
//! ranges, a district's customers, a district's orders) from one queue, so a few warehouses
//! still keep every connection busy. Each loader has its own thread and event loop, so generating
//! rows on one overlaps with the others' waits for the server. Rows go as [`BulkMethod`] says;
//! secondary keys are built afterwards; on MySQL/MariaDB each unit is one transaction.

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use rand::rngs::SmallRng;
use rand::SeedableRng;

use super::bulk::{BulkMethod, LoadTime};
use super::data::{self, DISTRICTS, ITEMS, STOCK};
use super::random::NurandConstants;
use super::rows::RowBuffer;
use super::schema::{self, LOAD_TABLE, TABLES};
use super::Tpcc;
use crate::config::{LoadPart, LoadPhase};
use crate::driver::{Connection, Dialect, Endpoint, QueryProtocol};
use crate::workload::loading::{exec, join_all};
use crate::workload::{PrepareStep, PrepareSummary};
use crate::Error;

/// Rows per generated range of items or stock.
const RANGE_ROWS: i64 = 25_000;

/// Tries at writing one unit before a deadlock fails the load.
const UNIT_ATTEMPTS: u32 = 5;

/// One piece of the load.
#[derive(Debug, Clone, Copy)]
enum Unit {
    Items(i64, i64),
    Warehouse(i64),
    Stock(i64, i64, i64),
    Customers(i64, i64),
    Orders(i64, i64),
}

impl Unit {
    /// What a split load deals out: a warehouse's units go together; item ranges one by one.
    fn owner(self) -> u64 {
        let key = match self {
            Unit::Items(from, _) => (from - 1) / RANGE_ROWS,
            Unit::Warehouse(w)
            | Unit::Stock(w, ..)
            | Unit::Customers(w, _)
            | Unit::Orders(w, _) => w - 1,
        };
        key.max(0) as u64
    }
}

impl Tpcc {
    pub async fn prepare(
        &self,
        endpoint: &Endpoint,
        part: Option<&LoadPart>,
    ) -> Result<PrepareSummary, Error> {
        let started = Instant::now();
        let mut summary = PrepareSummary::default();
        let mut admin = endpoint.open(QueryProtocol::Simple).await?;
        let constants = if LoadPart::runs(part, LoadPhase::Schema) {
            self.create_tables(&mut admin, &mut summary).await?
        } else {
            // The other parts' customers take their names from the same constants.
            super::load_constants(&mut admin).await.ok_or_else(|| {
                Error::NotPrepared("the TPC-C load's first phase has not run".into())
            })?
        };
        if LoadPart::runs(part, LoadPhase::Rows) {
            self.load_rows(endpoint, &mut admin, constants, part, &mut summary)
                .await?;
        }
        if LoadPart::runs(part, LoadPhase::Finish) {
            self.finish(endpoint, &mut admin, &mut summary).await?;
        }
        admin.close().await;
        summary.seconds = started.elapsed().as_secs_f64();
        Ok(summary)
    }

    async fn create_tables(
        &self,
        admin: &mut Connection,
        summary: &mut PrepareSummary,
    ) -> Result<NurandConstants, Error> {
        let dialect = admin.dialect();
        let mut rng = SmallRng::from_entropy();
        let constants = NurandConstants::for_load(&mut rng);
        let begun = Instant::now();
        for sql in schema::drop_sql(dialect) {
            exec(admin, &sql).await?;
        }
        for table in TABLES {
            exec(
                admin,
                &schema::create_table(table, dialect, dialect == Dialect::Mysql),
            )
            .await?;
        }
        exec(
            admin,
            &format!(
                "CREATE TABLE {LOAD_TABLE} (warehouses INT, c_last INT, c_id INT, ol_i_id INT)"
            ),
        )
        .await?;
        exec(
            admin,
            &format!(
                "INSERT INTO {LOAD_TABLE} VALUES ({}, {}, {}, {})",
                self.warehouses, constants.c_last, constants.c_id, constants.ol_i_id
            ),
        )
        .await?;
        step(summary, "drop and create tables", begun);
        Ok(constants)
    }

    /// The rows of the units this part owns (all of them when the load is not split).
    async fn load_rows(
        &self,
        endpoint: &Endpoint,
        admin: &mut Connection,
        constants: NurandConstants,
        part: Option<&LoadPart>,
        summary: &mut PrepareSummary,
    ) -> Result<(), Error> {
        let method = BulkMethod::choose(admin, self.params.str("load_method") == "insert").await?;
        let units: Vec<Unit> = self
            .units()
            .into_iter()
            .filter(|u| LoadPart::owns(part, u.owner()))
            .collect();
        if units.is_empty() {
            return Ok(());
        }
        let loaders = self.loaders().min(units.len());
        let what = match part {
            Some(p) => format!("part {} of {}: {} units", p.part + 1, p.parts, units.len()),
            None => format!("{} warehouses", self.warehouses),
        };
        let queue = Arc::new(Mutex::new(units.into_iter().collect::<VecDeque<_>>()));
        let time = LoadTime::now();
        let seed: u64 = rand::random();
        let begun = Instant::now();
        let mut threads = Vec::new();
        for i in 0..loaders {
            let (endpoint, queue, time) = (endpoint.clone(), queue.clone(), time.clone());
            let job = Job {
                method,
                constants,
                seed,
            };
            let thread = std::thread::Builder::new()
                .name(format!("dbscale-loader-{i}"))
                .spawn(move || crate::runtime::block_on(load_units(&endpoint, &queue, &time, job)))
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
            summary,
            &format!("load {what} on {loaders} connections ({})", method.label()),
            begun,
        );
        Ok(())
    }

    /// Keys, indexes, statistics and (optionally) foreign keys, once every row is in.
    async fn finish(
        &self,
        endpoint: &Endpoint,
        admin: &mut Connection,
        summary: &mut PrepareSummary,
    ) -> Result<(), Error> {
        let dialect = admin.dialect();
        let loaders = self.loaders();
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
        step(summary, "primary keys and indexes", begun);

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
        step(summary, "analyze", begun);
        if self.params.bool("foreign_keys") {
            let begun = Instant::now();
            for sql in schema::foreign_key_sql() {
                exec(admin, &sql).await?;
            }
            step(summary, "foreign keys", begun);
        }
        Ok(())
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

/// What every loader thread is given.
#[derive(Clone, Copy)]
struct Job {
    method: BulkMethod,
    constants: NurandConstants,
    seed: u64,
}

/// One loader connection: takes units until the queue is empty; returns the rows it wrote.
async fn load_units(
    endpoint: &Endpoint,
    queue: &Mutex<VecDeque<Unit>>,
    time: &LoadTime,
    job: Job,
) -> Result<u64, Error> {
    let mut conn = endpoint.open(job.method.protocol()).await?;
    if conn.dialect() == Dialect::Mysql {
        exec(&mut conn, "SET foreign_key_checks = 0").await?;
    }
    let mut rows = 0;
    let mut buffers = Buffers::default();
    loop {
        let Some(unit) = queue.lock().expect("queue lock").pop_front() else {
            break;
        };
        let mut rng = SmallRng::seed_from_u64(job.seed ^ unit_seed(unit));
        let mut tables = generate(unit, &mut rng, &job.constants, &mut buffers);
        rows += tables.iter().map(|(_, b)| b.rows() as u64).sum::<u64>();
        let out = &mut buffers.encoded;
        write_unit(&mut conn, &mut tables, (time, out), job.method).await?;
        buffers.give_back(tables);
    }
    conn.close().await;
    Ok(rows)
}

/// Writes a unit's tables: one transaction on MySQL/MariaDB, retried when it deadlocks (two
/// loaders inserting into a still empty InnoDB table both ask for its table lock).
async fn write_unit(
    conn: &mut Connection,
    tables: &mut [(&'static str, RowBuffer)],
    (time, out): (&LoadTime, &mut Vec<u8>),
    method: BulkMethod,
) -> Result<(), Error> {
    if conn.dialect() == Dialect::Postgres {
        for (table, buffer) in tables.iter_mut() {
            method.write(conn, table, buffer, (time, out)).await?;
        }
        return Ok(());
    }
    let mut attempt = 1;
    loop {
        exec(conn, "BEGIN").await?;
        let mut written = Ok(());
        for (table, buffer) in tables.iter_mut() {
            written = method.write(conn, table, buffer, (time, out)).await;
            if written.is_err() {
                break;
            }
        }
        match written {
            Ok(()) => return exec(conn, "COMMIT").await,
            Err(Error::Sql { source, .. })
                if source.class.is_retryable() && attempt < UNIT_ATTEMPTS =>
            {
                exec(conn, "ROLLBACK").await?;
                attempt += 1;
            }
            Err(e) => return Err(e),
        }
    }
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

/// A loader's row buffers and encoding buffer, reused unit after unit: fresh ones of this size
/// come from the kernel page by page (about a quarter of a loader's CPU time when measured).
#[derive(Default)]
struct Buffers {
    rows: HashMap<&'static str, RowBuffer>,
    encoded: Vec<u8>,
}

impl Buffers {
    /// `table`'s buffer, empty.
    fn take(&mut self, table: &'static str) -> RowBuffer {
        let mut rows = self
            .rows
            .remove(table)
            .unwrap_or_else(|| data::buffer(table));
        rows.clear();
        rows
    }

    fn give_back(&mut self, tables: Vec<(&'static str, RowBuffer)>) {
        self.rows.extend(tables);
    }
}

fn generate(
    unit: Unit,
    rng: &mut SmallRng,
    constants: &NurandConstants,
    buffers: &mut Buffers,
) -> Vec<(&'static str, RowBuffer)> {
    match unit {
        Unit::Items(from, to) => {
            let mut items = buffers.take("item");
            data::items(rng, from, to, &mut items);
            vec![("item", items)]
        }
        Unit::Warehouse(w) => {
            let (mut warehouse, mut district) =
                (buffers.take("warehouse"), buffers.take("district"));
            data::warehouse(rng, w, &mut warehouse, &mut district);
            vec![("warehouse", warehouse), ("district", district)]
        }
        Unit::Stock(w, from, to) => {
            let mut stock = buffers.take("stock");
            data::stock(rng, w, from, to, &mut stock);
            vec![("stock", stock)]
        }
        Unit::Customers(w, d) => {
            let (mut customer, mut history) = (buffers.take("customer"), buffers.take("history"));
            data::customers(rng, constants, (w, d), &mut customer, &mut history);
            vec![("customer", customer), ("history", history)]
        }
        Unit::Orders(w, d) => {
            let (mut orders, mut new_orders, mut lines) = (
                buffers.take("orders"),
                buffers.take("new_order"),
                buffers.take("order_line"),
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

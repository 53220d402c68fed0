//! `prepare` and `cleanup` for the core workloads: YCSB's load phase (`recordcount` rows from
//! `insertstart`, in key-number order, with random field values) over several connections, by
//! server-prepared multi-row INSERTs. PostgreSQL builds the primary key after the rows (one sorted
//! build rather than row by row); a split load deals out ranges of 10,000 key numbers.

use std::time::Instant;

use rand::rngs::SmallRng;
use rand::SeedableRng;

use super::keys::{field_value, key_name};
use super::statements::create_table;
use super::Ycsb;
use crate::config::{LoadPart, LoadPhase};
use crate::driver::{
    numbered_placeholders, Connection, Dialect, Endpoint, Param, QueryProtocol, Statement,
};
use crate::workload::loading::{exec, join_all, step};
use crate::workload::PrepareSummary;
use crate::Error;

/// Connections loading at once.
const MAX_LOADERS: u64 = 4;
/// Key numbers per piece of a split load.
const PIECE: u64 = 10_000;
/// Rows per INSERT: about 0.5 MB of values at YCSB's default ten 100-character fields.
const ROWS_PER_INSERT: u64 = 500;
/// At most this many placeholders in one INSERT (MySQL takes 65,535).
const MAX_PLACEHOLDERS: u64 = 60_000;

impl Ycsb {
    pub async fn prepare(
        &self,
        endpoint: &Endpoint,
        part: Option<&LoadPart>,
    ) -> Result<PrepareSummary, Error> {
        let started = Instant::now();
        let o = &self.options;
        let mut steps = Vec::new();
        let dialect = endpoint.dialect();
        let key_after_load = dialect == Dialect::Postgres;
        if LoadPart::runs(part, LoadPhase::Schema) {
            let begun = Instant::now();
            let mut conn = endpoint.open(QueryProtocol::Simple).await?;
            exec(&mut conn, &format!("DROP TABLE IF EXISTS {}", o.table)).await?;
            exec(&mut conn, &create_table(o, dialect, !key_after_load)).await?;
            conn.close().await;
            steps.push(step("drop and create the table", begun));
        }
        let mut rows = 0;
        if LoadPart::runs(part, LoadPhase::Rows) {
            let begun = Instant::now();
            let pieces: Vec<u64> = (0..o.record_count.div_ceil(PIECE))
                .filter(|&i| LoadPart::owns(part, i))
                .collect();
            let loaders = (pieces.len() as u64).clamp(1, MAX_LOADERS);
            let seed: u64 = rand::random();
            let work = (0..loaders).map(|i| {
                let mine: Vec<u64> = pieces
                    .iter()
                    .copied()
                    .skip(i as usize)
                    .step_by(loaders as usize)
                    .collect();
                self.load_pieces(endpoint, mine, seed ^ i)
            });
            for loaded in join_all(work.collect()).await {
                rows += loaded?;
            }
            let on = if loaders == 1 {
                "1 connection".to_string()
            } else {
                format!("{loaders} connections")
            };
            steps.push(step(format!("insert rows ({on})"), begun));
        }
        if LoadPart::runs(part, LoadPhase::Finish) && key_after_load {
            let begun = Instant::now();
            let mut conn = endpoint.open(QueryProtocol::Simple).await?;
            let table = &o.table;
            exec(
                &mut conn,
                &format!("ALTER TABLE {table} ADD PRIMARY KEY (YCSB_KEY)"),
            )
            .await?;
            exec(&mut conn, &format!("ANALYZE {table}")).await?;
            conn.close().await;
            steps.push(step("primary key and statistics", begun));
        }
        Ok(PrepareSummary {
            steps,
            rows,
            seconds: started.elapsed().as_secs_f64(),
        })
    }

    pub async fn cleanup(&self, endpoint: &Endpoint) -> Result<PrepareSummary, Error> {
        let begun = Instant::now();
        let mut conn = endpoint.open(QueryProtocol::Simple).await?;
        exec(
            &mut conn,
            &format!("DROP TABLE IF EXISTS {}", self.options.table),
        )
        .await?;
        conn.close().await;
        Ok(PrepareSummary {
            steps: vec![step("drop the table", begun)],
            rows: 0,
            seconds: begun.elapsed().as_secs_f64(),
        })
    }

    /// One loader's pieces, each its key numbers in order.
    async fn load_pieces(
        &self,
        endpoint: &Endpoint,
        pieces: Vec<u64>,
        seed: u64,
    ) -> Result<u64, Error> {
        let o = &self.options;
        let width = u64::from(o.field_count) + 1;
        let per_insert = ROWS_PER_INSERT.min(MAX_PLACEHOLDERS / width).max(1);
        let mut conn = endpoint.open(QueryProtocol::Prepared).await?;
        let mut prepared: Option<u64> = None;
        let mut rng = SmallRng::seed_from_u64(seed);
        let mut keys: Vec<String> = Vec::new();
        let mut values: Vec<String> = Vec::new();
        let mut rows = 0;
        for piece in pieces {
            let first = piece * PIECE;
            let end = o.record_count.min(first + PIECE);
            let mut next = first;
            while next < end {
                let n = per_insert.min(end - next);
                if prepared != Some(n) {
                    conn.prepare(&[self.insert_rows_statement(n, conn.dialect())])
                        .await
                        .map_err(|source| loading(&o.table, source))?;
                    prepared = Some(n);
                }
                keys.resize(n as usize, String::new());
                values.resize((n * (width - 1)) as usize, String::new());
                for (i, key) in keys.iter_mut().enumerate() {
                    let number = o.insert_start + next + i as u64;
                    key_name(key, number, o.ordered_inserts, o.zero_padding);
                }
                for value in values.iter_mut() {
                    field_value(value, o.field_length as usize, &mut rng);
                }
                let fields = o.field_count as usize;
                let mut params = Vec::with_capacity((n * width) as usize);
                for (i, key) in keys.iter().enumerate() {
                    params.push(Param::Text(key));
                    params.extend(
                        values[i * fields..(i + 1) * fields]
                            .iter()
                            .map(|v| Param::Text(v)),
                    );
                }
                execute(&mut conn, &params, &o.table).await?;
                rows += n;
                next += n;
            }
        }
        conn.close().await;
        Ok(rows)
    }

    /// `INSERT INTO usertable (...) VALUES (...), ...` for `rows` rows.
    fn insert_rows_statement(&self, rows: u64, dialect: Dialect) -> Statement {
        let o = &self.options;
        let fields: Vec<String> = (0..o.field_count).map(|i| format!("FIELD{i}")).collect();
        let row = format!("({})", vec!["?"; fields.len() + 1].join(", "));
        let sql = format!(
            "INSERT INTO {} (YCSB_KEY, {}) VALUES {}",
            o.table,
            fields.join(", "),
            vec![row; rows as usize].join(", ")
        );
        Statement::new("load", numbered_placeholders(&sql, dialect))
    }
}

async fn execute(conn: &mut Connection, params: &[Param<'_>], table: &str) -> Result<(), Error> {
    conn.execute(0, params)
        .await
        .map(|_| ())
        .map_err(|source| loading(table, source))
}

fn loading(table: &str, source: crate::driver::DbError) -> Error {
    Error::Sql {
        context: format!("loading {table}"),
        source,
    }
}

//! `sysbench … prepare` and `cleanup`: the `sbtest<N>` tables with sysbench's DDL and rows, loaded
//! in parallel over several connections (each takes tables i, i+n, …, like sysbench's prepare
//! threads); MySQL by server-prepared multi-row INSERTs (about a third faster than the same
//! INSERTs as text: the server parses no literals) sent in the tables' character set,
//! PostgreSQL by binary COPY with the primary key built after the rows (a quarter faster than
//! keeping it up row by row). Tables are dropped first if present (sysbench would fail on them
//! instead).

use std::time::Instant;

use bytes::Bytes;
use rand::rngs::SmallRng;
use rand::SeedableRng;

use super::rows::{RowBatch, COPY_BINARY_HEADER, COPY_BINARY_TRAILER};
use super::{Sysbench, Test};
use crate::config::{LoadPart, LoadPhase};
use crate::driver::{Connection, Dialect, Endpoint, Param, QueryProtocol, Statement};
use crate::workload::loading::{exec, join_all};
use crate::workload::{PrepareStep, PrepareSummary};
use crate::Error;

/// Connections loading at once; more only adds contention on a small server.
const MAX_LOADERS: u32 = 4;
/// Rows per multi-row INSERT: ~190 kB of values, well under any `max_allowed_packet`, and 4000
/// placeholders at most, well under MySQL's 65535.
const ROWS_PER_INSERT: u32 = 1000;
/// Rows per COPY data message (~190 kB).
const COPY_ROWS_PER_CHUNK: u32 = 1000;

/// Seconds one loader spent in each step, summed over its tables.
#[derive(Default)]
struct LoaderTimes {
    rows: u64,
    create_s: f64,
    insert_s: f64,
    index_s: f64,
}

impl Sysbench {
    /// Each table is dropped, created, loaded and indexed on its own, so a split load deals
    /// out tables (the `rows` phase does everything; `schema` and `finish` have nothing to do).
    pub async fn prepare(
        &self,
        endpoint: &Endpoint,
        part: Option<&LoadPart>,
    ) -> Result<PrepareSummary, Error> {
        let dialect = endpoint.dialect();
        if self.options.secondary && dialect == Dialect::Postgres {
            return Err(Error::Config(
                "secondary=true writes MySQL's `KEY xid (id)`, which PostgreSQL does not accept (sysbench fails the same way)".into(),
            ));
        }
        let started = Instant::now();
        let tables: Vec<u32> = (1..=self.options.tables)
            .filter(|t| {
                LoadPart::runs(part, LoadPhase::Rows) && LoadPart::owns(part, u64::from(t - 1))
            })
            .collect();
        if tables.is_empty() {
            return Ok(PrepareSummary::default()); // a split load's schema or finish phase
        }
        let loaders = (tables.len() as u32).min(MAX_LOADERS);
        let seed: u64 = rand::random();
        let work = (0..loaders).map(|i| {
            let mine: Vec<u32> = tables
                .iter()
                .copied()
                .skip(i as usize)
                .step_by(loaders as usize)
                .collect();
            self.load_share(endpoint, mine, seed ^ u64::from(i))
        });
        let mut totals = LoaderTimes::default();
        for result in join_all(work.collect()).await {
            let times = result?;
            totals.rows += times.rows;
            totals.create_s += times.create_s;
            totals.insert_s += times.insert_s;
            totals.index_s += times.index_s;
        }
        let on = format!(
            "{} tables on {loaders} connections, seconds summed",
            tables.len()
        );
        let mut steps = vec![
            PrepareStep {
                name: format!("drop and create tables ({on})"),
                seconds: totals.create_s,
            },
            PrepareStep {
                name: format!("insert rows ({on})"),
                seconds: totals.insert_s,
            },
        ];
        if self.options.create_secondary {
            steps.push(PrepareStep {
                name: format!("create index k_N ({on})"),
                seconds: totals.index_s,
            });
        }
        Ok(PrepareSummary {
            steps,
            rows: totals.rows,
            seconds: started.elapsed().as_secs_f64(),
        })
    }

    pub async fn cleanup(&self, endpoint: &Endpoint) -> Result<PrepareSummary, Error> {
        let started = Instant::now();
        let mut conn = connect(endpoint).await?;
        for t in 1..=self.options.tables {
            exec(&mut conn, &format!("DROP TABLE IF EXISTS sbtest{t}")).await?;
        }
        conn.close().await;
        let seconds = started.elapsed().as_secs_f64();
        Ok(PrepareSummary {
            steps: vec![PrepareStep {
                name: "drop tables".into(),
                seconds,
            }],
            rows: 0,
            seconds,
        })
    }

    /// One loader's tables (every loaders-th of this part's).
    async fn load_share(
        &self,
        endpoint: &Endpoint,
        tables: Vec<u32>,
        seed: u64,
    ) -> Result<LoaderTimes, Error> {
        let mut conn = connect_with(endpoint, QueryProtocol::Prepared).await?;
        if conn.dialect() == Dialect::Mysql {
            send_in_table_charset(&mut conn).await?;
        }
        let mut rng = SmallRng::seed_from_u64(seed);
        let mut times = LoaderTimes::default();
        // oltp_insert.lua leaves the tables empty when ids come from the client.
        let rows = if self.test == Test::Insert && !self.options.auto_inc {
            0
        } else {
            self.options.table_size
        };
        for t in tables {
            let begun = Instant::now();
            exec(&mut conn, &format!("DROP TABLE IF EXISTS sbtest{t}")).await?;
            // PostgreSQL builds the primary key after the rows are in: one sorted build costs
            // about a quarter less than maintaining it row by row. The table ends up the same.
            let key_after_load = conn.dialect() == Dialect::Postgres;
            let ddl = self.create_table_sql(t, conn.dialect(), !key_after_load);
            exec(&mut conn, &ddl).await?;
            times.create_s += begun.elapsed().as_secs_f64();
            let begun = Instant::now();
            times.rows += match conn.dialect() {
                Dialect::Mysql => self.insert_rows(&mut conn, t, rows, &mut rng).await?,
                Dialect::Postgres => self.copy_rows(&mut conn, t, rows, &mut rng).await?,
            };
            if key_after_load {
                self.add_primary_key(&mut conn, t, rows).await?;
            }
            times.insert_s += begun.elapsed().as_secs_f64();
            if self.options.create_secondary {
                let begun = Instant::now();
                exec(&mut conn, &format!("CREATE INDEX k_{t} ON sbtest{t}(k)")).await?;
                times.index_s += begun.elapsed().as_secs_f64();
            }
        }
        conn.close().await;
        Ok(times)
    }

    /// PostgreSQL, after the rows: the primary key sysbench's DDL declares (same name,
    /// `sbtest<N>_pkey`) and, as the ids were copied in explicitly, the serial sequence moved
    /// past them as sysbench's inserts would have left it.
    async fn add_primary_key(&self, conn: &mut Connection, t: u32, rows: u32) -> Result<(), Error> {
        exec(conn, &format!("ALTER TABLE sbtest{t} ADD PRIMARY KEY (id)")).await?;
        if self.options.auto_inc && rows > 0 {
            let sequence = format!("pg_get_serial_sequence('sbtest{t}', 'id')");
            exec(conn, &format!("SELECT setval({sequence}, {rows})")).await?;
        }
        Ok(())
    }

    /// `create_table()` of oltp_common.lua, byte for byte where it matters; `with_key: false`
    /// leaves out the `PRIMARY KEY (id)` clause, for a loader that adds it after the rows.
    fn create_table_sql(&self, t: u32, dialect: Dialect, with_key: bool) -> String {
        let o = &self.options;
        let (id, engine) = match dialect {
            Dialect::Mysql => (
                if o.auto_inc {
                    "INTEGER NOT NULL AUTO_INCREMENT"
                } else {
                    "INTEGER NOT NULL"
                },
                format!("/*! ENGINE = {} */", o.storage_engine),
            ),
            Dialect::Postgres => (
                if o.auto_inc {
                    "SERIAL"
                } else {
                    "INTEGER NOT NULL"
                },
                String::new(),
            ),
        };
        let key = match (with_key, o.secondary) {
            (false, _) => "",
            (true, true) => ",\n  KEY xid (id)",
            (true, false) => ",\n  PRIMARY KEY (id)",
        };
        format!(
            "CREATE TABLE sbtest{t}(\n  id {id},\n  k INTEGER DEFAULT '0' NOT NULL,\n  c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL{key}\n) {engine}"
        )
    }

    /// MySQL: multi-row INSERTs prepared on the server (values travel in binary, nothing to
    /// parse per row), autocommitted one by one like sysbench's bulk inserts. The ids are sent
    /// even under auto_inc: on one server they are the 1..N AUTO_INCREMENT would give, and on
    /// a multi-master cluster (Galera sets auto_increment_increment to its node count) they
    /// stay dense, where AUTO_INCREMENT would leave 1, 4, 7, ... and point selects would miss
    /// two rows in three.
    async fn insert_rows(
        &self,
        conn: &mut Connection,
        t: u32,
        rows: u32,
        rng: &mut SmallRng,
    ) -> Result<u64, Error> {
        const WIDTH: usize = 4; // id, k, c, pad
        let statement = |n: u32| {
            let values = vec!["(?, ?, ?, ?)"; n as usize].join(",");
            Statement::new(
                "load",
                format!("INSERT INTO sbtest{t}(id, k, c, pad) VALUES {values}"),
            )
        };
        let full = rows.min(ROWS_PER_INSERT);
        let mut list = vec![statement(full)];
        if let Some(rest) = rows.checked_rem(full).filter(|&rest| rest > 0) {
            list.push(statement(rest));
        }
        let failed = |source| Error::Sql {
            context: format!("loading sbtest{t}"),
            source,
        };
        conn.prepare(&list).await.map_err(failed)?;
        let mut batch = RowBatch::default();
        let mut next = 1;
        while next <= rows {
            let last = rows.min(next + full - 1);
            self.fill_batch(&mut batch, next, last, rng);
            let mut params = Vec::with_capacity(batch.rows.len() * WIDTH);
            for (i, &(id, k)) in batch.rows.iter().enumerate() {
                params.push(Param::Int(i64::from(id)));
                params.extend([
                    Param::Int(i64::from(k)),
                    Param::Text(batch.c(i)),
                    Param::Text(batch.pad(i)),
                ]);
            }
            let index = usize::from(last - next + 1 != full);
            conn.execute(index, &params).await.map_err(failed)?;
            next = last + 1;
        }
        Ok(u64::from(rows))
    }

    /// PostgreSQL: the same rows through COPY, generated lazily in chunks.
    async fn copy_rows(
        &self,
        conn: &mut Connection,
        t: u32,
        rows: u32,
        rng: &mut SmallRng,
    ) -> Result<u64, Error> {
        if rows == 0 {
            return Ok(0);
        }
        // Explicit ids even under auto_inc: a nextval() per row costs more than one setval().
        // `WITH BINARY` rather than `(FORMAT binary)`: CockroachDB takes only the former.
        let sql = format!("COPY sbtest{t} (id, k, c, pad) FROM STDIN WITH BINARY");
        let mut batch = RowBatch::default();
        let mut next = 1;
        let chunks = std::iter::from_fn(|| {
            if next > rows {
                return None;
            }
            let last = rows.min(next + COPY_ROWS_PER_CHUNK - 1);
            self.fill_batch(&mut batch, next, last, rng);
            let mut data = Vec::new();
            if next == 1 {
                data.extend_from_slice(COPY_BINARY_HEADER);
            }
            batch.copy_binary(&mut data);
            if last == rows {
                data.extend_from_slice(COPY_BINARY_TRAILER);
            }
            next = last + 1;
            Some(Bytes::from(data))
        });
        conn.copy_in(&sql, chunks)
            .await
            .map_err(|source| Error::Sql {
                context: format!("loading sbtest{t}"),
                source,
            })
    }
}

async fn connect(endpoint: &Endpoint) -> Result<Connection, Error> {
    connect_with(endpoint, QueryProtocol::Simple).await
}

async fn connect_with(endpoint: &Endpoint, protocol: QueryProtocol) -> Result<Connection, Error> {
    endpoint.open(protocol).await
}

/// MySQL: makes the connection's character set the database's, which the new tables take. The
/// values are ASCII digits and dashes, the same bytes in every ASCII-based character set, so
/// the rows are unchanged; but the server no longer converts each one from the connection's
/// utf8mb4 (on a latin1 database that conversion was a third of its CPU). UCS-2 and UTF-16/32
/// cannot be a connection's character set; there the connection keeps its own.
async fn send_in_table_charset(conn: &mut Connection) -> Result<(), Error> {
    let sql = "SELECT @@character_set_database";
    let rows = conn.query(sql).await.map_err(|source| Error::Sql {
        context: sql.into(),
        source,
    })?;
    let charset = rows.first().and_then(|row| row.first()?.clone());
    match charset {
        Some(name) if connection_charset_allowed(&name) => {
            exec(conn, &format!("SET NAMES {name}")).await
        }
        _ => Ok(()),
    }
}

fn connection_charset_allowed(name: &str) -> bool {
    let plain = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    plain && !["ucs2", "utf16", "utf16le", "utf32"].contains(&name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::sysbench::tests::read_write as workload;

    #[test]
    fn ddl_matches_sysbench() {
        let w = workload(&[]);
        assert_eq!(
            w.create_table_sql(3, Dialect::Mysql, true),
            "CREATE TABLE sbtest3(\n  id INTEGER NOT NULL AUTO_INCREMENT,\n  k INTEGER DEFAULT '0' NOT NULL,\n  c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL,\n  PRIMARY KEY (id)\n) /*! ENGINE = innodb */"
        );
        assert!(w
            .create_table_sql(1, Dialect::Postgres, true)
            .starts_with("CREATE TABLE sbtest1(\n  id SERIAL,\n"));
        assert!(w
            .create_table_sql(1, Dialect::Postgres, false)
            .ends_with("pad CHAR(60) DEFAULT '' NOT NULL\n) "));
        let w = workload(&[("auto_inc", false.into()), ("secondary", true.into())]);
        let sql = w.create_table_sql(1, Dialect::Mysql, true);
        assert!(
            sql.contains("id INTEGER NOT NULL,") && sql.contains("KEY xid (id)"),
            "{sql}"
        );
    }

    #[test]
    fn only_ascii_based_charsets_become_the_connections() {
        assert!(connection_charset_allowed("latin1"));
        assert!(connection_charset_allowed("utf8mb4"));
        assert!(!connection_charset_allowed("utf16"));
        assert!(!connection_charset_allowed("ucs2"));
        assert!(!connection_charset_allowed("latin1; DROP TABLE x"));
        assert!(!connection_charset_allowed(""));
    }
}

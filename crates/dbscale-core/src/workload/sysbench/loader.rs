//! `sysbench … prepare` and `cleanup`: the `sbtest<N>` tables with sysbench's DDL and rows, loaded
//! in parallel over several connections (each takes tables i, i+n, …, like sysbench's prepare
//! threads); MySQL by multi-row INSERTs, PostgreSQL by COPY. Tables are dropped first if present.

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;
use std::time::Instant;

use bytes::Bytes;
use rand::rngs::SmallRng;
use rand::SeedableRng;

use super::random::{push_digit_groups, C_GROUPS, PAD_GROUPS};
use super::{Sysbench, Test};
use crate::driver::{Connection, Dialect, Endpoint, QueryProtocol};
use crate::workload::{PrepareStep, PrepareSummary};
use crate::Error;

/// Connections loading at once; more only adds contention on a small server.
const MAX_LOADERS: u32 = 8;
/// Rows per multi-row INSERT (~190 kB of SQL: well under any `max_allowed_packet`).
const ROWS_PER_INSERT: u32 = 1000;
/// Bytes per COPY data message.
const COPY_CHUNK_BYTES: usize = 256 * 1024;

/// Seconds one loader spent in each step, summed over its tables.
#[derive(Default)]
struct LoaderTimes {
    rows: u64,
    create_s: f64,
    insert_s: f64,
    index_s: f64,
}

impl Sysbench {
    pub async fn prepare(&self, endpoint: &Endpoint) -> Result<PrepareSummary, Error> {
        let dialect = endpoint.dialect();
        if self.options.secondary && dialect == Dialect::Postgres {
            return Err(Error::Config(
                "secondary=true writes MySQL's `KEY xid (id)`, which PostgreSQL does not accept (sysbench fails the same way)".into(),
            ));
        }
        let started = Instant::now();
        let loaders = self.options.tables.min(MAX_LOADERS);
        let seed: u64 = rand::random();
        let work = (0..loaders).map(|i| self.load_share(endpoint, i, loaders, seed ^ u64::from(i)));
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
            self.options.tables
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

    /// Loader `index` of `loaders`: tables index+1, index+1+loaders, …
    async fn load_share(
        &self,
        endpoint: &Endpoint,
        index: u32,
        loaders: u32,
        seed: u64,
    ) -> Result<LoaderTimes, Error> {
        let mut conn = connect(endpoint).await?;
        let mut rng = SmallRng::seed_from_u64(seed);
        let mut times = LoaderTimes::default();
        // oltp_insert.lua leaves the tables empty when ids come from the client.
        let rows = if self.test == Test::Insert && !self.options.auto_inc {
            0
        } else {
            self.options.table_size
        };
        for t in (index + 1..=self.options.tables).step_by(loaders as usize) {
            let begun = Instant::now();
            exec(&mut conn, &format!("DROP TABLE IF EXISTS sbtest{t}")).await?;
            let ddl = self.create_table_sql(t, conn.dialect());
            exec(&mut conn, &ddl).await?;
            times.create_s += begun.elapsed().as_secs_f64();
            let begun = Instant::now();
            times.rows += match conn.dialect() {
                Dialect::Mysql => self.insert_rows(&mut conn, t, rows, &mut rng).await?,
                Dialect::Postgres => self.copy_rows(&mut conn, t, rows, &mut rng).await?,
            };
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

    /// `create_table()` of oltp_common.lua, byte for byte where it matters.
    fn create_table_sql(&self, t: u32, dialect: Dialect) -> String {
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
        let key = if o.secondary {
            "KEY xid"
        } else {
            "PRIMARY KEY"
        };
        format!(
            "CREATE TABLE sbtest{t}(\n  id {id},\n  k INTEGER DEFAULT '0' NOT NULL,\n  c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL,\n  {key} (id)\n) {engine}"
        )
    }

    /// MySQL: multi-row INSERTs in sysbench's row format, autocommitted one by one.
    async fn insert_rows(
        &self,
        conn: &mut Connection,
        t: u32,
        rows: u32,
        rng: &mut SmallRng,
    ) -> Result<u64, Error> {
        let head = if self.options.auto_inc {
            format!("INSERT INTO sbtest{t}(k, c, pad) VALUES")
        } else {
            format!("INSERT INTO sbtest{t}(id, k, c, pad) VALUES")
        };
        let mut sql = String::with_capacity(head.len() + ROWS_PER_INSERT as usize * 200);
        let mut next = 1;
        while next <= rows {
            let last = rows.min(next + ROWS_PER_INSERT - 1);
            sql.clear();
            sql.push_str(&head);
            for id in next..=last {
                if id > next {
                    sql.push(',');
                }
                self.push_row(&mut sql, id, rng, RowFormat::Values);
            }
            exec(conn, &sql).await.map_err(|e| match e {
                Error::Sql { source, .. } => Error::Sql {
                    context: format!("loading sbtest{t}"),
                    source,
                },
                other => other,
            })?;
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
        let columns = if self.options.auto_inc {
            "k, c, pad"
        } else {
            "id, k, c, pad"
        };
        let sql = format!("COPY sbtest{t} ({columns}) FROM STDIN");
        let mut next = 1;
        let chunks = std::iter::from_fn(|| {
            if next > rows {
                return None;
            }
            let mut text = String::with_capacity(COPY_CHUNK_BYTES + 256);
            while next <= rows && text.len() < COPY_CHUNK_BYTES {
                self.push_row(&mut text, next, rng, RowFormat::Copy);
                next += 1;
            }
            Some(Bytes::from(text))
        });
        conn.copy_in(&sql, chunks)
            .await
            .map_err(|source| Error::Sql {
                context: format!("loading sbtest{t}"),
                source,
            })
    }

    /// One row: `(k, 'c', 'pad')` (with id first when not auto-increment) or its COPY line.
    /// k comes from the default distribution, as in sysbench (`sb_rand(1, table_size)`).
    fn push_row(&self, out: &mut String, id: u32, rng: &mut SmallRng, format: RowFormat) {
        use std::fmt::Write as _;
        let k = self.distribution.sample(rng, 1, self.options.table_size);
        let (open, sep, quote, close) = match format {
            RowFormat::Values => ("(", ", ", "'", ")"),
            RowFormat::Copy => ("", "\t", "", "\n"),
        };
        out.push_str(open);
        if !self.options.auto_inc {
            let _ = write!(out, "{id}{sep}");
        }
        let _ = write!(out, "{k}{sep}{quote}");
        push_digit_groups(out, C_GROUPS, rng);
        let _ = write!(out, "{quote}{sep}{quote}");
        push_digit_groups(out, PAD_GROUPS, rng);
        out.push_str(quote);
        out.push_str(close);
    }
}

#[derive(Clone, Copy)]
enum RowFormat {
    Values,
    Copy,
}

async fn connect(endpoint: &Endpoint) -> Result<Connection, Error> {
    endpoint
        .connect(QueryProtocol::Simple)
        .await
        .map_err(|source| Error::Connect {
            target: endpoint.redacted(),
            source,
        })
}

async fn exec(conn: &mut Connection, sql: &str) -> Result<(), Error> {
    conn.batch(sql)
        .await
        .map(|_| ())
        .map_err(|source| Error::Sql {
            context: sql.chars().take(120).collect(),
            source,
        })
}

/// Polls all futures on this task until every one is done; results in input order. (The
/// prepare runs on one single-threaded loop; the loaders overlap on their I/O waits.)
async fn join_all<F: Future>(futures: Vec<F>) -> Vec<F::Output> {
    let mut pending: Vec<Option<Pin<Box<F>>>> =
        futures.into_iter().map(|f| Some(Box::pin(f))).collect();
    let mut outputs: Vec<Option<F::Output>> = pending.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut all_done = true;
        for (slot, output) in pending.iter_mut().zip(outputs.iter_mut()) {
            if let Some(future) = slot {
                match future.as_mut().poll(cx) {
                    Poll::Ready(value) => {
                        *output = Some(value);
                        *slot = None;
                    }
                    Poll::Pending => all_done = false,
                }
            }
        }
        if all_done {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    })
    .await;
    outputs
        .into_iter()
        .map(|o| o.expect("every future finished"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::WorkloadConfig;

    fn workload(params: &[(&str, serde_json::Value)]) -> Sysbench {
        let config = WorkloadConfig {
            name: "oltp_read_write".into(),
            params: params
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        };
        Sysbench::from_config(&config).unwrap().unwrap()
    }

    #[test]
    fn ddl_matches_sysbench() {
        let w = workload(&[]);
        assert_eq!(
            w.create_table_sql(3, Dialect::Mysql),
            "CREATE TABLE sbtest3(\n  id INTEGER NOT NULL AUTO_INCREMENT,\n  k INTEGER DEFAULT '0' NOT NULL,\n  c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL,\n  PRIMARY KEY (id)\n) /*! ENGINE = innodb */"
        );
        assert!(w
            .create_table_sql(1, Dialect::Postgres)
            .starts_with("CREATE TABLE sbtest1(\n  id SERIAL,\n"));
        let w = workload(&[("auto_inc", false.into()), ("secondary", true.into())]);
        let sql = w.create_table_sql(1, Dialect::Mysql);
        assert!(
            sql.contains("id INTEGER NOT NULL,") && sql.contains("KEY xid (id)"),
            "{sql}"
        );
    }

    #[test]
    fn rows_have_sysbench_shapes() {
        let mut rng = SmallRng::seed_from_u64(3);
        let w = workload(&[("table_size", 1000.into())]);
        let mut values = String::new();
        w.push_row(&mut values, 1, &mut rng, RowFormat::Values);
        let inner = values.strip_prefix('(').unwrap().strip_suffix(')').unwrap();
        let fields: Vec<&str> = inner.split(", ").collect();
        assert_eq!(fields.len(), 3, "{values}");
        assert!((1..=1000).contains(&fields[0].parse::<u32>().unwrap()));
        assert_eq!((fields[1].len(), fields[2].len()), (119 + 2, 59 + 2));
        let w = workload(&[("auto_inc", false.into())]);
        let mut line = String::new();
        w.push_row(&mut line, 42, &mut rng, RowFormat::Copy);
        let fields: Vec<&str> = line.trim_end().split('\t').collect();
        assert_eq!(fields[0], "42");
        assert_eq!((fields[2].len(), fields[3].len()), (119, 59));
    }

    #[test]
    fn join_all_keeps_input_order() {
        let out = crate::engine::block_on(join_all(vec![
            Box::pin(async { 1 }) as Pin<Box<dyn Future<Output = i32>>>,
            Box::pin(async {
                tokio::task::yield_now().await;
                2
            }),
        ]))
        .unwrap();
        assert_eq!(out, vec![1, 2]);
    }
}

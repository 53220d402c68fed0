//! Loading and dropping the TPC-B tables the way `pgbench -i` does (steps d, t, g, v, p and
//! optionally f): same DDL, same rows, client-side COPY with FREEZE in one transaction.

use std::io::Write as _;
use std::time::Instant;

use bytes::Bytes;

use super::{Tpcb, ACCOUNTS_PER_SCALE, BIGINT_SCALE, BRANCHES_PER_SCALE, TELLERS_PER_SCALE};
use crate::config::{LoadPart, LoadPhase};
use crate::driver::{Connection, Endpoint, QueryProtocol};
use crate::workload::{PrepareStep, PrepareSummary};
use crate::Error;

const TABLES: &str = "pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers";
/// Bytes per COPY data message; large enough to keep per-message overhead negligible.
const CHUNK_BYTES: usize = 256 * 1024;

impl Tpcb {
    /// pgbench -i's steps; with `part`, one phase of a split load: `schema` drops and creates
    /// the tables, `rows` copies this part's accounts (the first part also the branches and
    /// tellers), `finish` vacuums and adds the keys. A split load's COPY cannot use FREEZE (the
    /// tables were created in another transaction), so its vacuum has the hint bits to set.
    pub async fn prepare(
        &self,
        endpoint: &Endpoint,
        part: Option<&LoadPart>,
    ) -> Result<PrepareSummary, Error> {
        let (mut conn, mut summary, started) = if LoadPart::runs(part, LoadPhase::Schema) {
            let (mut conn, mut summary, started) = drop_tables(endpoint).await?;
            timed(
                &mut summary,
                "create tables",
                exec(&mut conn, &self.create_table_sql()),
            )
            .await?;
            (conn, summary, started)
        } else {
            (
                connect(endpoint).await?,
                PrepareSummary::default(),
                Instant::now(),
            )
        };
        if LoadPart::runs(part, LoadPhase::Rows) {
            let rows = match part {
                None => timed(&mut summary, "generate data", self.generate(&mut conn)).await?,
                Some(p) => {
                    let name = format!("generate data, part {} of {}", p.part + 1, p.parts);
                    timed(&mut summary, &name, self.generate_part(&mut conn, p)).await?
                }
            };
            summary.rows = rows;
        }
        if LoadPart::runs(part, LoadPhase::Finish) {
            self.finish(&mut conn, &mut summary).await?;
        }
        conn.close().await;
        summary.seconds = started.elapsed().as_secs_f64();
        Ok(summary)
    }

    async fn finish(
        &self,
        conn: &mut Connection,
        summary: &mut PrepareSummary,
    ) -> Result<(), Error> {
        let vacuum: Vec<String> = ["branches", "tellers", "accounts", "history"]
            .iter()
            .map(|t| format!("vacuum analyze pgbench_{t}"))
            .collect();
        timed(summary, "vacuum", exec(conn, &vacuum)).await?;
        let keys: Vec<String> = [("branches", "bid"), ("tellers", "tid"), ("accounts", "aid")]
            .iter()
            .map(|(t, k)| format!("alter table pgbench_{t} add primary key ({k})"))
            .collect();
        timed(summary, "primary keys", exec(conn, &keys)).await?;
        if self.params.bool("foreign_keys") {
            timed(summary, "foreign keys", exec(conn, &foreign_key_sql())).await?;
        }
        Ok(())
    }

    /// This part's rows: its range of the accounts; the first part also the branches and
    /// tellers. Plain COPY, no FREEZE.
    async fn generate_part(&self, conn: &mut Connection, part: &LoadPart) -> Result<u64, Error> {
        let scale = self.scale();
        let accounts = ACCOUNTS_PER_SCALE * scale;
        let (p, n) = (i64::from(part.part), i64::from(part.parts.max(1)));
        let mut pieces = vec![("pgbench_accounts", accounts * p / n, accounts * (p + 1) / n)];
        if part.part == 0 {
            pieces.push(("pgbench_branches", 0, BRANCHES_PER_SCALE * scale));
            pieces.push(("pgbench_tellers", 0, TELLERS_PER_SCALE * scale));
        }
        let mut rows = 0;
        for (table, from, to) in pieces {
            rows += copy_rows(conn, table, RowChunks::range(table, from, to), "").await?;
        }
        Ok(rows)
    }

    pub async fn cleanup(&self, endpoint: &Endpoint) -> Result<PrepareSummary, Error> {
        let (conn, mut summary, started) = drop_tables(endpoint).await?;
        conn.close().await;
        summary.seconds = started.elapsed().as_secs_f64();
        Ok(summary)
    }

    fn scale(&self) -> i64 {
        self.params.int("scale")
    }

    /// pgbench's DDL, in its order, with fillfactor, unlogged tables and partitions.
    fn create_table_sql(&self) -> Vec<String> {
        let aid = if self.scale() >= BIGINT_SCALE {
            "bigint"
        } else {
            "int"
        };
        let partitions = self.params.int("partitions");
        let method = self.params.str("partition_method");
        let unlogged = if self.params.bool("unlogged") && partitions == 0 {
            " unlogged"
        } else {
            ""
        };
        let fillfactor = self.params.int("fillfactor");
        let tables = [
            (
                "pgbench_history",
                format!("tid int,bid int,aid {aid},delta int,mtime timestamp,filler char(22)"),
                false,
            ),
            (
                "pgbench_tellers",
                "tid int not null,bid int,tbalance int,filler char(84)".to_string(),
                true,
            ),
            (
                "pgbench_accounts",
                format!("aid {aid} not null,bid int,abalance int,filler char(84)"),
                true,
            ),
            (
                "pgbench_branches",
                "bid int not null,bbalance int,filler char(88)".to_string(),
                true,
            ),
        ];
        let mut sql: Vec<String> = tables
            .iter()
            .map(|(table, columns, fill)| {
                let tail = if partitions > 0 && *table == "pgbench_accounts" {
                    format!(" partition by {method} (aid)")
                } else if *fill {
                    format!(" with (fillfactor={fillfactor})")
                } else {
                    String::new()
                };
                format!("create{unlogged} table {table}({columns}){tail}")
            })
            .collect();
        sql.extend(self.partition_sql(partitions, method, fillfactor));
        sql
    }

    fn partition_sql(&self, partitions: i64, method: &str, fillfactor: i64) -> Vec<String> {
        let unlogged = if self.params.bool("unlogged") {
            " unlogged"
        } else {
            ""
        };
        let size = (ACCOUNTS_PER_SCALE * self.scale() + partitions - 1) / partitions.max(1);
        (1..=partitions)
            .map(|p| {
                let bounds = if method == "hash" {
                    format!("for values with (modulus {partitions}, remainder {})", p - 1)
                } else {
                    let from = if p == 1 { "minvalue".to_string() } else { ((p - 1) * size + 1).to_string() };
                    let to = if p < partitions { (p * size + 1).to_string() } else { "maxvalue".to_string() };
                    format!("for values from ({from}) to ({to})")
                };
                format!(
                    "create{unlogged} table pgbench_accounts_{p}\n  partition of pgbench_accounts\n  {bounds} with (fillfactor={fillfactor})"
                )
            })
            .collect()
    }

    /// pgbench's client-side generation (step g): one transaction, truncate, COPY each table.
    async fn generate(&self, conn: &mut Connection) -> Result<u64, Error> {
        let version: u32 = conn
            .server_version()
            .split(['.', ' '])
            .next()
            .and_then(|m| m.parse().ok())
            .unwrap_or(0);
        // FREEZE needs a plain table created or truncated in this transaction (and v14+).
        let freeze_ok = version >= 14;
        let partitioned = self.params.int("partitions") > 0;
        exec(conn, &["begin".into(), format!("truncate table {TABLES}")]).await?;
        let scale = self.scale();
        let mut rows = 0;
        for (table, count, freeze) in [
            ("pgbench_branches", BRANCHES_PER_SCALE * scale, freeze_ok),
            ("pgbench_tellers", TELLERS_PER_SCALE * scale, freeze_ok),
            (
                "pgbench_accounts",
                ACCOUNTS_PER_SCALE * scale,
                freeze_ok && !partitioned,
            ),
        ] {
            let with = if freeze { " with (freeze on)" } else { "" };
            rows += copy_rows(conn, table, RowChunks::range(table, 0, count), with).await?;
        }
        exec(conn, &["commit".into()]).await?;
        Ok(rows)
    }
}

/// COPY text rows for one table, generated lazily in large chunks.
struct RowChunks {
    table: &'static str,
    next: i64,
    total: i64,
}

impl RowChunks {
    /// Rows `from` (0-based) up to `to` of `table`.
    fn range(table: &'static str, from: i64, to: i64) -> Self {
        Self {
            table,
            next: from,
            total: to,
        }
    }
}

async fn copy_rows(
    conn: &mut Connection,
    table: &'static str,
    rows: RowChunks,
    with: &str,
) -> Result<u64, Error> {
    let sql = format!("copy {table} from stdin{with}");
    conn.copy_in(&sql, rows).await.map_err(|source| Error::Sql {
        context: format!("loading {table}"),
        source,
    })
}

impl Iterator for RowChunks {
    type Item = Bytes;

    fn next(&mut self) -> Option<Bytes> {
        if self.next >= self.total {
            return None;
        }
        let mut buf = Vec::with_capacity(CHUNK_BYTES + 64);
        while self.next < self.total && buf.len() < CHUNK_BYTES {
            let k = self.next;
            // Row layouts of pgbench's initBranch / initTeller / initAccount.
            let _ = match self.table {
                "pgbench_branches" => writeln!(buf, "{}\t0\t\\N", k + 1),
                "pgbench_tellers" => {
                    writeln!(buf, "{}\t{}\t0\t\\N", k + 1, k / TELLERS_PER_SCALE + 1)
                }
                _ => writeln!(buf, "{}\t{}\t0\t", k + 1, k / ACCOUNTS_PER_SCALE + 1),
            };
            self.next += 1;
        }
        Some(Bytes::from(buf))
    }
}

fn foreign_key_sql() -> Vec<String> {
    [
        "alter table pgbench_tellers add constraint pgbench_tellers_bid_fkey foreign key (bid) references pgbench_branches",
        "alter table pgbench_accounts add constraint pgbench_accounts_bid_fkey foreign key (bid) references pgbench_branches",
        "alter table pgbench_history add constraint pgbench_history_bid_fkey foreign key (bid) references pgbench_branches",
        "alter table pgbench_history add constraint pgbench_history_tid_fkey foreign key (tid) references pgbench_tellers",
        "alter table pgbench_history add constraint pgbench_history_aid_fkey foreign key (aid) references pgbench_accounts",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// Connects and drops pgbench's tables, the first step of both `prepare` and `cleanup`: the
/// connection, the summary with that step, and when it began.
async fn drop_tables(endpoint: &Endpoint) -> Result<(Connection, PrepareSummary, Instant), Error> {
    let mut conn = connect(endpoint).await?;
    let mut summary = PrepareSummary::default();
    let started = Instant::now();
    let sql = [format!("drop table if exists {TABLES}")];
    timed(&mut summary, "drop tables", exec(&mut conn, &sql)).await?;
    Ok((conn, summary, started))
}

async fn connect(endpoint: &Endpoint) -> Result<Connection, Error> {
    endpoint.open(QueryProtocol::Simple).await
}

async fn exec(conn: &mut Connection, statements: &[String]) -> Result<u64, Error> {
    for sql in statements {
        conn.batch(sql).await.map_err(|source| Error::Sql {
            context: sql.clone(),
            source,
        })?;
    }
    Ok(0)
}

async fn timed<T>(
    summary: &mut PrepareSummary,
    name: &str,
    step: impl std::future::Future<Output = Result<T, Error>>,
) -> Result<T, Error> {
    let started = Instant::now();
    let value = step.await?;
    summary.steps.push(PrepareStep {
        name: name.to_string(),
        seconds: started.elapsed().as_secs_f64(),
    });
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(table: &'static str, total: i64) -> String {
        RowChunks::range(table, 0, total)
            .map(|b| String::from_utf8(b.to_vec()).unwrap())
            .collect()
    }

    #[test]
    fn rows_match_pgbench_layouts() {
        assert_eq!(text("pgbench_branches", 2), "1\t0\t\\N\n2\t0\t\\N\n");
        assert_eq!(
            text("pgbench_tellers", 11).lines().nth(10).unwrap(),
            "11\t2\t0\t\\N"
        );
        let accounts = text("pgbench_accounts", 100_001);
        assert_eq!(accounts.lines().count(), 100_001);
        assert_eq!(accounts.lines().last().unwrap(), "100001\t2\t0\t");
    }
}

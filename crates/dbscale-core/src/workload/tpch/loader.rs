//! `prepare` and `cleanup`: TPC-H's tables generated as dbgen generates them (the `tpchgen`
//! crate, whose rows match dbgen's), the large tables in parts over several connections, loaded
//! by COPY on PostgreSQL and `LOAD DATA LOCAL` on MySQL/MariaDB where the server allows it
//! (multi-row INSERTs otherwise); the keys, indexes and statistics after the rows.

use std::fmt::Display;
use std::time::Instant;

use tpchgen::generators::{
    CustomerGenerator, LineItemGenerator, NationGenerator, OrderGenerator, PartGenerator,
    PartSuppGenerator, RegionGenerator, SupplierGenerator,
};

use super::schema::{column_count, create_table, FOREIGN_KEYS, INDEXES, PRIMARY_KEYS, TABLES};
use super::Tpch;
use crate::config::{LoadPart, LoadPhase};
use crate::driver::{numbered_placeholders, Connection, Dialect, Endpoint, Param, QueryProtocol};
use crate::workload::loading::{exec, join_all, step};
use crate::workload::PrepareSummary;
use crate::Error;

/// Bytes of rows per chunk handed to COPY or LOAD DATA.
const CHUNK_BYTES: usize = 256 * 1024;
/// Rows per multi-row INSERT when LOAD DATA is refused.
const ROWS_PER_INSERT: usize = 500;

/// One piece of the load: part `part` of `parts` of a table.
#[derive(Debug, Clone, Copy)]
struct Piece {
    table: usize,
    part: i32,
    parts: i32,
}

impl Tpch {
    pub async fn prepare(
        &self,
        endpoint: &Endpoint,
        part: Option<&LoadPart>,
    ) -> Result<PrepareSummary, Error> {
        let started = Instant::now();
        let mut steps = Vec::new();
        if LoadPart::runs(part, LoadPhase::Schema) {
            let begun = Instant::now();
            let mut conn = endpoint.open(QueryProtocol::Simple).await?;
            drop_tables(&mut conn).await?;
            for (name, columns) in TABLES {
                exec(&mut conn, &create_table(name, columns)).await?;
            }
            conn.close().await;
            steps.push(step("drop and create the 8 tables", begun));
        }
        let mut rows = 0;
        if LoadPart::runs(part, LoadPhase::Rows) {
            let begun = Instant::now();
            let loaders = self.options.loaders.max(1) as usize;
            let pieces: Vec<Piece> = self
                .pieces(loaders)
                .into_iter()
                .enumerate()
                .filter(|(i, _)| LoadPart::owns(part, *i as u64))
                .map(|(_, p)| p)
                .collect();
            let work = (0..loaders.min(pieces.len()).max(1)).map(|i| {
                let mine: Vec<Piece> = pieces.iter().copied().skip(i).step_by(loaders).collect();
                self.load_pieces(endpoint, mine)
            });
            for loaded in join_all(work.collect()).await {
                rows += loaded?;
            }
            steps.push(step(
                format!("generate and load rows ({loaders} connections)"),
                begun,
            ));
        }
        if LoadPart::runs(part, LoadPhase::Finish) {
            let mut conn = endpoint.open(QueryProtocol::Simple).await?;
            for (what, statements) in [
                ("primary keys", &PRIMARY_KEYS[..]),
                ("foreign-key column indexes", &INDEXES[..]),
            ] {
                let begun = Instant::now();
                for sql in statements {
                    exec(&mut conn, sql).await?;
                }
                steps.push(step(what, begun));
            }
            let begun = Instant::now();
            // The rows are dbgen's, whole by construction: MySQL/MariaDB add a foreign key in
            // place when the checks are off, and copy the table checking each row otherwise
            // (lineitem twice). PostgreSQL validates each key with one scan.
            let unchecked = conn.dialect() == Dialect::Mysql;
            if unchecked {
                exec(&mut conn, "SET FOREIGN_KEY_CHECKS = 0").await?;
            }
            for sql in FOREIGN_KEYS {
                exec(&mut conn, sql).await?;
            }
            if unchecked {
                exec(&mut conn, "SET FOREIGN_KEY_CHECKS = 1").await?;
            }
            steps.push(step(
                if unchecked {
                    "foreign keys (added unchecked)"
                } else {
                    "foreign keys"
                },
                begun,
            ));
            let begun = Instant::now();
            let analyze = match conn.dialect() {
                Dialect::Postgres => "ANALYZE",
                Dialect::Mysql => "ANALYZE TABLE",
            };
            for (name, _) in TABLES {
                exec(&mut conn, &format!("{analyze} {name}")).await?;
            }
            conn.close().await;
            steps.push(step("statistics", begun));
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
        drop_tables(&mut conn).await?;
        conn.close().await;
        Ok(PrepareSummary {
            steps: vec![step("drop the 8 tables", begun)],
            rows: 0,
            seconds: begun.elapsed().as_secs_f64(),
        })
    }

    /// The load's pieces, largest first: the four large tables in `2 x loaders` parts each.
    fn pieces(&self, loaders: usize) -> Vec<Piece> {
        let parts = (2 * loaders) as i32;
        let mut pieces = Vec::new();
        for table in [7, 6, 4, 2, 5] {
            for part in 1..=parts {
                pieces.push(Piece { table, part, parts });
            }
        }
        for table in [3, 1, 0] {
            pieces.push(Piece {
                table,
                part: 1,
                parts: 1,
            });
        }
        pieces
    }

    async fn load_pieces(&self, endpoint: &Endpoint, pieces: Vec<Piece>) -> Result<u64, Error> {
        if pieces.is_empty() {
            return Ok(0);
        }
        let mut conn = endpoint.open(QueryProtocol::Simple).await?;
        let bulk = bulk_allowed(&mut conn).await?;
        let mut rows = 0;
        for piece in pieces {
            let lines = self.lines(piece);
            rows += write_rows(&mut conn, piece.table, lines, bulk).await?;
        }
        conn.close().await;
        Ok(rows)
    }

    fn lines(&self, piece: Piece) -> Vec<String> {
        piece_lines(self.options.scale_factor, piece)
    }
}

/// TPC-H's tables `tables` (indices into [`TABLES`]) at scale factor `sf`, dropped, created,
/// loaded and keyed over `conn`: CH-benCHmark's supplier, nation and region (scale factor 1).
pub(crate) async fn load_tables(
    conn: &mut Connection,
    sf: f64,
    tables: &[usize],
) -> Result<u64, Error> {
    let bulk = bulk_allowed(conn).await?;
    let mut rows = 0;
    for &table in tables {
        let (name, columns) = TABLES[table];
        exec(conn, &format!("DROP TABLE IF EXISTS {name}")).await?;
        exec(conn, &create_table(name, columns)).await?;
        let lines = piece_lines(
            sf,
            Piece {
                table,
                part: 1,
                parts: 1,
            },
        );
        rows += write_rows(conn, table, lines, bulk).await?;
        exec(conn, PRIMARY_KEYS[table]).await?; // in table order, as the tables
    }
    Ok(rows)
}

/// The piece's rows as dbgen's `|`-separated text, without the trailing separator.
fn piece_lines(sf: f64, piece: Piece) -> Vec<String> {
    let (part, parts) = (piece.part, piece.parts);
    fn text<T: Display>(rows: impl Iterator<Item = T>) -> Vec<String> {
        rows.map(|row| {
            let mut line = row.to_string();
            line.pop(); // the trailing '|'
            line
        })
        .collect()
    }
    match piece.table {
        0 => text(RegionGenerator::new(sf, part, parts).iter()),
        1 => text(NationGenerator::new(sf, part, parts).iter()),
        2 => text(PartGenerator::new(sf, part, parts).iter()),
        3 => text(SupplierGenerator::new(sf, part, parts).iter()),
        4 => text(PartSuppGenerator::new(sf, part, parts).iter()),
        5 => text(CustomerGenerator::new(sf, part, parts).iter()),
        6 => text(OrderGenerator::new(sf, part, parts).iter()),
        _ => text(LineItemGenerator::new(sf, part, parts).iter()),
    }
}

async fn drop_tables(conn: &mut Connection) -> Result<(), Error> {
    let cascade = if conn.dialect() == Dialect::Postgres {
        " CASCADE"
    } else {
        ""
    };
    if conn.dialect() == Dialect::Mysql {
        exec(conn, "SET FOREIGN_KEY_CHECKS = 0").await?;
    }
    exec(
        conn,
        &format!("DROP TABLE IF EXISTS {}", super::refresh::SETS_TABLE),
    )
    .await?;
    for (name, _) in TABLES.iter().rev() {
        exec(conn, &format!("DROP TABLE IF EXISTS {name}{cascade}")).await?;
    }
    if conn.dialect() == Dialect::Mysql {
        exec(conn, "SET FOREIGN_KEY_CHECKS = 1").await?;
    }
    Ok(())
}

/// COPY on PostgreSQL, `LOAD DATA LOCAL` on MySQL when this client may send files and the server
/// takes them; `false`: multi-row INSERTs.
async fn bulk_allowed(conn: &mut Connection) -> Result<bool, Error> {
    if conn.dialect() == Dialect::Postgres {
        return Ok(true);
    }
    if !conn.is_lean() {
        return Ok(false);
    }
    let sql = "SELECT @@local_infile";
    let rows = conn.query(sql).await.map_err(|source| Error::Sql {
        context: sql.into(),
        source,
    })?;
    Ok(rows
        .first()
        .and_then(|r| r.first().cloned().flatten())
        .as_deref()
        == Some("1"))
}

async fn write_rows(
    conn: &mut Connection,
    table: usize,
    lines: Vec<String>,
    bulk: bool,
) -> Result<u64, Error> {
    let (name, columns) = TABLES[table];
    let failed = |source| Error::Sql {
        context: format!("loading {name}"),
        source,
    };
    if lines.is_empty() {
        return Ok(0);
    }
    let count = lines.len() as u64;
    if bulk {
        let mut data = Vec::with_capacity(lines.iter().map(|l| l.len() + 1).sum());
        for line in &lines {
            data.extend_from_slice(line.as_bytes());
            data.push(b'\n');
        }
        let sql = match conn.dialect() {
            Dialect::Postgres => {
                format!("COPY {name} FROM STDIN WITH (FORMAT text, DELIMITER '|')")
            }
            Dialect::Mysql => format!(
                "LOAD DATA LOCAL INFILE 'dbscale-{name}' INTO TABLE {name} \
                 CHARACTER SET latin1 FIELDS TERMINATED BY '|' LINES TERMINATED BY '\\n'"
            ),
        };
        conn.copy_in(&sql, data.chunks(CHUNK_BYTES))
            .await
            .map_err(failed)?;
        return Ok(count);
    }
    let width = column_count(columns);
    let row = format!("({})", vec!["?"; width].join(", "));
    let mut prepared = None;
    for batch in lines.chunks(ROWS_PER_INSERT) {
        if prepared != Some(batch.len()) {
            let sql = format!(
                "INSERT INTO {name} VALUES {}",
                vec![row.as_str(); batch.len()].join(", ")
            );
            let statement =
                crate::driver::Statement::new("load", numbered_placeholders(&sql, conn.dialect()));
            conn.prepare(&[statement]).await.map_err(failed)?;
            prepared = Some(batch.len());
        }
        let params: Vec<Param<'_>> = batch
            .iter()
            .flat_map(|line| line.split('|').map(Param::Text))
            .collect();
        conn.execute(0, &params).await.map_err(failed)?;
    }
    Ok(count)
}

//! How generated rows reach the server: binary COPY on PostgreSQL; on MySQL/MariaDB
//! `LOAD DATA LOCAL INFILE` when the client is our own and the server allows it (the cheapest path
//! for the server: measured 2.3x less server CPU than multi-row INSERT text for the same stock
//! rows), else server-prepared multi-row INSERTs.

use std::time::{SystemTime, UNIX_EPOCH};

use super::rows::RowBuffer;
use super::schema::columns;
use crate::driver::{numbered_placeholders, Connection, Dialect, QueryProtocol, Statement};
use crate::workload::calendar::Day;
use crate::Error;

/// Bytes of encoded rows per chunk handed to the connection.
const CHUNK_BYTES: usize = 256 * 1024;
/// Placeholders per multi-row INSERT at most (MySQL allows 65,535).
const MAX_PLACEHOLDERS: usize = 30_000;
const COPY_HEADER: &[u8] = b"PGCOPY\n\xff\r\n\0\0\0\0\0\0\0\0\0";
const COPY_TRAILER: &[u8] = &(-1i16).to_be_bytes();
/// Seconds from 1970-01-01 to 2000-01-01, PostgreSQL's epoch.
const PG_EPOCH_OFFSET_S: i64 = 946_684_800;

/// The way a load writes rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BulkMethod {
    Copy,
    LoadData,
    Insert,
}

impl BulkMethod {
    /// The best method `conn`'s target takes (`insert_only`: multi-row INSERTs whatever it is).
    pub async fn choose(conn: &mut Connection, insert_only: bool) -> Result<Self, Error> {
        if insert_only {
            return Ok(Self::Insert);
        }
        if conn.dialect() == Dialect::Postgres {
            return Ok(Self::Copy);
        }
        if !conn.is_lean() {
            return Ok(Self::Insert);
        }
        let sql = "SELECT @@local_infile";
        let rows = conn.query(sql).await.map_err(|source| Error::Sql {
            context: sql.into(),
            source,
        })?;
        let allowed = rows.first().and_then(|row| row.first().cloned().flatten());
        Ok(if allowed.as_deref() == Some("1") {
            Self::LoadData
        } else {
            Self::Insert
        })
    }

    pub fn label(self) -> &'static str {
        match self {
            Self::Copy => "COPY",
            Self::LoadData => "LOAD DATA LOCAL",
            Self::Insert => "prepared INSERT",
        }
    }

    /// The protocol the loader connections open with.
    pub fn protocol(self) -> QueryProtocol {
        match self {
            Self::Insert => QueryProtocol::Prepared,
            Self::Copy | Self::LoadData => QueryProtocol::Simple,
        }
    }

    /// Writes `rows` into `table` (inside the caller's transaction on MySQL), encoding them in
    /// `out` (the caller's, reused).
    pub async fn write(
        self,
        conn: &mut Connection,
        table: &str,
        rows: &mut RowBuffer,
        (time, out): (&LoadTime, &mut Vec<u8>),
    ) -> Result<(), Error> {
        if rows.rows() == 0 {
            return Ok(());
        }
        let failed = |source| Error::Sql {
            context: format!("loading {table}"),
            source,
        };
        match self {
            Self::Copy => {
                out.clear();
                out.extend_from_slice(COPY_HEADER);
                rows.copy_binary(time.pg_us, out);
                out.extend_from_slice(COPY_TRAILER);
                let sql = format!(
                    "COPY {table} ({}) FROM STDIN WITH BINARY",
                    column_list(table)
                );
                conn.copy_in(&sql, out.chunks(CHUNK_BYTES))
                    .await
                    .map_err(failed)?;
            }
            Self::LoadData => {
                out.clear();
                out.reserve(rows.text_size_hint());
                rows.load_data_text(&time.text, out);
                let sql = format!(
                    "LOAD DATA LOCAL INFILE 'dbscale-{table}' INTO TABLE {table} \
                     CHARACTER SET binary ({})",
                    column_list(table)
                );
                let loaded = conn
                    .copy_in(&sql, out.chunks(CHUNK_BYTES))
                    .await
                    .map_err(failed)?;
                if loaded != rows.rows() as u64 {
                    return Err(Error::Internal(format!(
                        "LOAD DATA took {loaded} of {} rows into {table}",
                        rows.rows()
                    )));
                }
            }
            Self::Insert => insert_rows(conn, table, rows, &time.text)
                .await
                .map_err(failed)?,
        }
        Ok(())
    }
}

/// The load's clock, written into every timestamp column.
#[derive(Clone)]
pub struct LoadTime {
    pg_us: i64,
    text: String,
}

impl LoadTime {
    pub fn now() -> Self {
        let unix = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        let pg_us = (unix - PG_EPOCH_OFFSET_S) * 1_000_000;
        let (days, secs) = (unix.div_euclid(86_400), unix.rem_euclid(86_400));
        let text = format!(
            "{} {:02}:{:02}:{:02}",
            Day::from_ordinal(days).text(),
            secs / 3600,
            (secs / 60) % 60,
            secs % 60
        );
        Self { pg_us, text }
    }
}

fn column_list(table: &str) -> String {
    let names: Vec<&str> = columns(table).iter().map(|(name, _)| *name).collect();
    names.join(", ")
}

/// Multi-row INSERTs prepared on the server, a full-size one and one for the rest.
async fn insert_rows(
    conn: &mut Connection,
    table: &str,
    rows: &mut RowBuffer,
    now: &str,
) -> Result<(), crate::driver::DbError> {
    let (total, width) = (rows.rows(), rows.width);
    let per_insert = (MAX_PLACEHOLDERS / width).min(1000).min(total);
    let tuple = format!("({})", vec!["?"; width].join(", "));
    let statement = |n: usize| {
        let sql = format!(
            "INSERT INTO {table} ({}) VALUES {}",
            column_list(table),
            vec![tuple.as_str(); n].join(",")
        );
        Statement::new("load", numbered_placeholders(&sql, conn.dialect()))
    };
    let mut list = vec![statement(per_insert)];
    if total % per_insert > 0 {
        list.push(statement(total % per_insert));
    }
    conn.prepare(&list).await?;
    let params = rows.params(now);
    for chunk in params.chunks(per_insert * width) {
        let index = usize::from(chunk.len() != per_insert * width);
        conn.execute(index, chunk).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn load_time_text_is_a_timestamp() {
        let t = LoadTime::now();
        assert_eq!(t.text.len(), 19, "{}", t.text);
        assert_eq!(&t.text[4..5], "-");
    }
}

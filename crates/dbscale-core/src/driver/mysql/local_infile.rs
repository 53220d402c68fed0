//! `LOAD DATA LOCAL INFILE` on the lean client, MySQL's bulk load and the counterpart of
//! PostgreSQL's `COPY ... FROM STDIN`. The server answers the statement with 0xFB and a file
//! name; the client streams the data it was handed (never a file: the name is ignored), ends it
//! with an empty packet, and the server reports the rows it took. LOAD DATA turns bad values
//! into warnings rather than errors, so any warning fails the load here.

use super::session::{LeanConnection, COM_QUERY};
use super::wire::{self, Packet, Reader, ERR, MAX_PAYLOAD, MORE_RESULTS, OK};
use crate::driver::DbError;

/// The server's request for the file named in the statement.
const LOCAL_INFILE_REQUEST: u8 = 0xFB;

impl LeanConnection {
    /// Runs `sql`, a `LOAD DATA LOCAL INFILE` statement, feeding it `chunks`; returns the rows
    /// loaded.
    pub(super) async fn load_local(
        &mut self,
        sql: &str,
        chunks: impl Iterator<Item = impl AsRef<[u8]>>,
    ) -> Result<u64, DbError> {
        self.check_usable()?;
        self.command(COM_QUERY, sql.as_bytes())?;
        self.send().await?;
        let packet = self.next_packet().await?;
        let mut seq = packet.seq;
        match self.reader.payload(&packet).first().copied() {
            Some(LOCAL_INFILE_REQUEST) => {}
            Some(ERR) => {
                self.broken = false;
                return Err(wire::err_packet(self.reader.payload(&packet)));
            }
            Some(OK) => {
                let (_, status) = wire::ok_counts(self.reader.payload(&packet));
                self.broken = status & MORE_RESULTS != 0;
                return Err(not_a_load());
            }
            _ => return Err(not_a_load()),
        }
        for chunk in chunks {
            for piece in chunk.as_ref().chunks(MAX_PAYLOAD - 1) {
                seq = seq.wrapping_add(1);
                // The header, then the data from where it lies (no copy into the buffer).
                self.wbuf.clear();
                self.wbuf
                    .extend_from_slice(&(piece.len() as u32).to_le_bytes()[..3]);
                self.wbuf.push(seq);
                self.send().await?;
                self.send_bytes(piece).await?;
            }
        }
        self.wbuf.clear();
        seq = seq.wrapping_add(1);
        wire::start_packet(&mut self.wbuf, seq);
        self.send().await?;
        let packet = self.next_packet().await?;
        let payload = self.reader.payload(&packet);
        self.broken = false;
        if payload.first() == Some(&ERR) {
            return Err(wire::err_packet(payload));
        }
        let (rows, warnings) = ok_rows_and_warnings(payload);
        if warnings > 0 {
            let first = self.query("SHOW WARNINGS LIMIT 1").await?;
            let message = first
                .first()
                .and_then(|row| row.get(2).cloned().flatten())
                .unwrap_or_default();
            return Err(DbError::mysql(
                1262,
                format!(
                    "LOAD DATA took {rows} rows with {warnings} warnings; the first: {message}"
                ),
            ));
        }
        Ok(rows)
    }

    async fn next_packet(&mut self) -> Result<Packet, DbError> {
        loop {
            if let Some(packet) = self.reader.next_packet() {
                return Ok(packet);
            }
            self.fill().await?;
        }
    }
}

fn not_a_load() -> DbError {
    DbError::mysql(
        1235,
        "copy_in needs a LOAD DATA LOCAL INFILE statement on MySQL",
    )
}

/// An OK packet's affected rows and warning count.
fn ok_rows_and_warnings(payload: &[u8]) -> (u64, u16) {
    let mut r = Reader::new(payload);
    r.u8();
    let rows = r.lenenc_int().unwrap_or(0);
    r.lenenc_int();
    r.uint(2);
    (rows, r.uint(2) as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ok_packets_give_rows_and_warnings() {
        assert_eq!(
            ok_rows_and_warnings(&[0, 0xFC, 0x10, 0x27, 0, 2, 0, 3, 0]),
            (10_000, 3)
        );
        assert_eq!(ok_rows_and_warnings(&[0, 5, 0, 2, 0, 0, 0]), (5, 0));
    }
}

//! Reading a [`LeanConnection`]'s responses: every result set and OK packet of a request to its
//! end, rows counted in place and decoded (text or binary protocol) only when the sink wants them.

use super::binary::{self, Column};
use super::session::{LeanConnection, COM_STMT_EXECUTE};
use super::wire::{self, Reader, ERR, MORE_RESULTS, OK};
use crate::driver::{DbError, QueryOutcome, ResultSet, RowSink};

impl LeanConnection {
    /// Reads every result of the request to its end, counting. Rows are decoded only for the
    /// sink: the first result set's as text for `Rows`, every statement's with its column names
    /// for `Sets`.
    pub(super) async fn read_response(
        &mut self,
        mut sink: RowSink<'_>,
    ) -> Result<QueryOutcome, DbError> {
        let mut outcome = QueryOutcome::default();
        let mut error = None;
        let mut columns: Vec<Column> = Vec::new();
        let mut binary = false;
        // 0: result header; 1: column definitions left; 2: EOF after definitions; 3: rows.
        let mut phase = 0u8;
        let mut left = 0u64;
        let mut collecting = !matches!(sink, RowSink::Count);
        loop {
            let Some(packet) = self.reader.next_packet() else {
                self.fill().await?;
                continue;
            };
            let payload = self.reader.payload(&packet);
            let first = payload.first().copied().unwrap_or(0);
            match phase {
                0 => match first {
                    OK => {
                        let (affected, status) = wire::ok_counts(payload);
                        outcome.rows_affected += affected;
                        if let RowSink::Sets(sets) = &mut sink {
                            sets.push(ResultSet::default());
                        }
                        if status & MORE_RESULTS == 0 {
                            break;
                        }
                    }
                    ERR => {
                        error = Some(wire::err_packet(payload));
                        break;
                    }
                    0xFB => {
                        self.broken = true;
                        return Err(DbError::mysql(
                            1148,
                            "LOAD DATA LOCAL INFILE is not supported by this client",
                        ));
                    }
                    _ => {
                        left = Reader::new(payload).lenenc_int().unwrap_or(0);
                        outcome.returned_result_set = true;
                        binary = packet_is_binary(&self.wbuf);
                        columns.clear();
                        if let RowSink::Sets(sets) = &mut sink {
                            sets.push(ResultSet::default());
                        }
                        phase = 1;
                    }
                },
                1 => {
                    if collecting && binary {
                        columns.push(Column::parse(payload));
                    }
                    if let RowSink::Sets(sets) = &mut sink {
                        if let Some(set) = sets.last_mut() {
                            set.columns.push(binary::column_name(payload));
                        }
                    }
                    left -= 1;
                    if left == 0 {
                        phase = if self.deprecate_eof() { 3 } else { 2 };
                    }
                }
                2 => phase = 3,
                _ => {
                    if first == ERR {
                        error = Some(wire::err_packet(payload));
                        break;
                    }
                    if wire::is_end_of_rows(payload) {
                        let (_, status) = wire::ok_counts(payload);
                        // `query` keeps the first result set only.
                        collecting = matches!(sink, RowSink::Sets(_));
                        if status & MORE_RESULTS == 0 {
                            break;
                        }
                        phase = 0;
                        continue;
                    }
                    outcome.rows_returned += 1;
                    let rows = match (&mut sink, collecting) {
                        (RowSink::Rows(rows), true) => Some(&mut **rows),
                        (RowSink::Sets(sets), true) => sets.last_mut().map(|set| &mut set.rows),
                        _ => None,
                    };
                    if let Some(rows) = rows {
                        rows.push(if binary {
                            binary::row_as_text(&columns, payload)
                        } else {
                            text_row(payload)
                        });
                    }
                }
            }
        }
        self.broken = false;
        match error {
            Some(e) => Err(e),
            None => Ok(outcome),
        }
    }
}

/// Whether the request in `wbuf` was a COM_STMT_EXECUTE (its rows come binary).
fn packet_is_binary(wbuf: &[u8]) -> bool {
    wbuf.get(4) == Some(&COM_STMT_EXECUTE)
}

fn text_row(payload: &[u8]) -> Vec<Option<String>> {
    let mut r = Reader::new(payload);
    let mut row = Vec::new();
    while !r.bytes.is_empty() {
        row.push(
            r.lenenc_bytes()
                .map(|b| String::from_utf8_lossy(b).into_owned()),
        );
    }
    row
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_rows_keep_nulls() {
        assert_eq!(
            text_row(&[1, b'x', 0xFB, 0]),
            vec![Some("x".to_string()), None, Some(String::new())]
        );
    }
}

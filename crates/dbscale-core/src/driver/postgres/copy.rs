//! `COPY … FROM STDIN` for data loading: chunks are framed as CopyData and sent in writes of
//! about 64 KiB, whatever size the caller's chunks have.

use crate::driver::DbError;

use super::backend::ServerError;
use super::connection::PgConnection;
use super::frontend;

/// Buffered CopyData beyond this goes out before more is added.
const COPY_WRITE_BYTES: usize = 64 * 1024;

impl PgConnection {
    /// Runs `sql` (a `COPY … FROM STDIN`) and streams `chunks` to it; returns the rows copied.
    pub async fn copy_in(
        &mut self,
        sql: &str,
        chunks: impl Iterator<Item = impl AsRef<[u8]>>,
    ) -> Result<u64, DbError> {
        self.ensure_idle().await?;
        self.wbuf.clear();
        frontend::query(&mut self.wbuf, sql)?;
        self.send().await?;
        if !self.await_copy_in().await? {
            // Not a COPY FROM STDIN: the statement ran like any other; report the misuse.
            return Err(DbError::sql(
                "0A000",
                "copy_in needs a COPY ... FROM STDIN statement",
            ));
        }
        // Until CopyDone is out, the server waits for data: a copy abandoned half-way leaves
        // a session nobody can resynchronise, so it counts as broken until then.
        self.break_session();
        self.wbuf.clear();
        for chunk in chunks {
            let chunk = chunk.as_ref();
            if !self.wbuf.is_empty() && self.wbuf.len() + chunk.len() > COPY_WRITE_BYTES {
                self.send().await?;
                self.break_session();
                self.wbuf.clear();
            }
            frontend::copy_data(&mut self.wbuf, chunk)?;
        }
        frontend::copy_done(&mut self.wbuf);
        self.send().await?;
        let outcome = self.read_response(crate::driver::RowSink::Count).await?;
        Ok(outcome.rows_affected)
    }

    /// Waits for CopyInResponse. `false` when the statement completed without asking for data;
    /// a server error is returned once the session is ready again.
    async fn await_copy_in(&mut self) -> Result<bool, DbError> {
        let mut error: Option<ServerError> = None;
        loop {
            let frame = self.next_frame().await?;
            match frame.tag {
                b'G' => return Ok(true),
                b'E' => self.keep_error(&frame, &mut error)?,
                b'Z' => {
                    self.ready_for_query(&frame);
                    return match error {
                        Some(e) => Err(e.into_db_error()),
                        None => Ok(false),
                    };
                }
                b'C' | b'T' | b'D' | b'I' | b'H' | b'd' | b'c' => {}
                other => return Err(self.unexpected(other)),
            }
        }
    }
}

//! Reading responses: every request ends at ReadyForQuery, and everything in between is counted
//! in place (rows, command tags) or, for `fetch`/`query`, copied out as text.

use crate::driver::{DbError, QueryOutcome, ResultSet, RowSink};

use super::backend::{self, Frame, ServerError};
use super::command_tag::CommandTag;
use super::connection::{PgConnection, SessionState};
use super::frontend;

impl PgConnection {
    /// Reads one response up to ReadyForQuery. Rows are counted, and copied into the sink when
    /// it wants them. A server error is returned only once the session is ready again.
    pub(super) async fn read_response(
        &mut self,
        mut sink: RowSink<'_>,
    ) -> Result<QueryOutcome, DbError> {
        let mut outcome = QueryOutcome::default();
        let mut error: Option<ServerError> = None;
        // Sets: whether the last set was opened by this statement's RowDescription.
        let mut described = false;
        loop {
            let frame = self.next_frame().await?;
            let body = self.reader.body(&frame);
            match frame.tag {
                b'D' => {
                    outcome.rows_returned += 1;
                    outcome.returned_result_set = true;
                    let rows = match &mut sink {
                        RowSink::Count => continue,
                        RowSink::Rows(rows) => &mut **rows,
                        RowSink::Sets(sets) => match sets.last_mut() {
                            Some(set) => &mut set.rows,
                            None => continue,
                        },
                    };
                    rows.push(backend::data_row(body).inspect_err(|_| self.break_session())?);
                }
                b'C' | b'I' => {
                    if frame.tag == b'C' {
                        let tag = CommandTag::parse(backend::split_cstr(body).0);
                        outcome.rows_affected += tag.rows_affected;
                        outcome.returned_result_set |= tag.returns_rows;
                    }
                    if let RowSink::Sets(sets) = &mut sink {
                        if !described {
                            sets.push(ResultSet::default());
                        }
                    }
                    described = false;
                }
                b'T' => {
                    outcome.returned_result_set = true;
                    if let RowSink::Sets(sets) = &mut sink {
                        let columns =
                            backend::column_names(body).inspect_err(|_| self.break_session())?;
                        sets.push(ResultSet {
                            columns,
                            rows: Vec::new(),
                        });
                        described = true;
                    }
                }
                // ParseComplete, BindComplete, CloseComplete, NoData, ParameterDescription,
                // PortalSuspended; COPY TO STDOUT data is dropped.
                b'1' | b'2' | b'3' | b'n' | b't' | b's' | b'H' | b'd' | b'c' => {}
                b'E' => self.keep_error(&frame, &mut error)?,
                b'G' => {
                    // COPY FROM STDIN outside copy_in: refuse; the server answers with an error.
                    self.wbuf.clear();
                    frontend::copy_fail(&mut self.wbuf, "COPY FROM STDIN needs copy_in")?;
                    self.send().await?;
                }
                b'Z' => {
                    self.ready_for_query(&frame);
                    return match error {
                        Some(e) => Err(e.into_db_error()),
                        None => Ok(outcome),
                    };
                }
                other => return Err(self.unexpected(other)),
            }
        }
    }

    /// The response to the prepare request: per statement ParseComplete, ParameterDescription and
    /// RowDescription or NoData, which tells whether the statement returns rows.
    pub(super) async fn read_prepare_response(&mut self) -> Result<(), DbError> {
        let mut described = 0;
        let mut error: Option<ServerError> = None;
        loop {
            let frame = self.next_frame().await?;
            match frame.tag {
                b'1' | b'3' | b't' => {}
                b'T' | b'n' => {
                    if let Some(statement) = self.statements.get_mut(described) {
                        statement.returns_rows = frame.tag == b'T';
                    }
                    described += 1;
                }
                b'E' => self.keep_error(&frame, &mut error)?,
                b'Z' => {
                    self.ready_for_query(&frame);
                    let Some(e) = error else { return Ok(()) };
                    let label = self
                        .statements
                        .get(described)
                        .map_or("?", |s| s.label.as_str());
                    let mut db_error = e.into_db_error();
                    db_error.message = format!("cannot prepare {label}: {}", db_error.message);
                    return Err(db_error);
                }
                other => return Err(self.unexpected(other)),
            }
        }
    }

    /// The next message that is part of a response. Notices and notifications are skipped;
    /// ParameterStatus updates are recorded.
    pub(super) async fn next_frame(&mut self) -> Result<Frame, DbError> {
        loop {
            match self.reader.next_frame() {
                Ok(Some(frame)) => match frame.tag {
                    b'N' | b'A' => {}
                    b'S' => self.record_parameter(&frame),
                    _ => return Ok(frame),
                },
                Ok(None) => self.fill().await?,
                Err(e) => {
                    self.break_session();
                    return Err(e);
                }
            }
        }
    }

    /// One read from the socket into the receive buffer.
    async fn fill(&mut self) -> Result<(), DbError> {
        let spare = match self.reader.spare() {
            Ok(spare) => spare,
            Err(e) => {
                self.state = SessionState::Broken;
                return Err(e);
            }
        };
        match self.transport.read(spare).await {
            Ok(0) => {
                self.break_session();
                Err(DbError::connection_lost("the server closed the connection"))
            }
            Ok(n) => {
                self.reader.filled(n);
                Ok(())
            }
            Err(e) => {
                self.break_session();
                Err(DbError::connection_lost(format!(
                    "reading from the server failed: {e}"
                )))
            }
        }
    }

    pub(super) fn ready_for_query(&mut self, frame: &Frame) {
        self.tx_status = self.reader.body(frame).first().copied().unwrap_or(b'I');
        self.state = SessionState::Idle;
    }

    fn record_parameter(&mut self, frame: &Frame) {
        let (name, value) = backend::parameter_status(self.reader.body(frame));
        if name == b"server_version" {
            self.server_version = String::from_utf8_lossy(value).into_owned();
        }
    }

    /// An ErrorResponse within a request: a fatal one ends the session at once; otherwise the
    /// first is kept, to be returned once the server is ready for the next request.
    pub(super) fn keep_error(
        &mut self,
        frame: &Frame,
        first: &mut Option<ServerError>,
    ) -> Result<(), DbError> {
        let server_error = ServerError::parse(self.reader.body(frame));
        if server_error.fatal {
            self.break_session();
            return Err(server_error.into_db_error());
        }
        first.get_or_insert(server_error);
        Ok(())
    }

    pub(super) fn break_session(&mut self) {
        self.state = SessionState::Broken;
    }

    pub(super) fn unexpected(&mut self, tag: u8) -> DbError {
        self.break_session();
        DbError::connection_lost(format!(
            "protocol error: unexpected message '{}' from the server",
            tag.escape_ascii()
        ))
    }
}

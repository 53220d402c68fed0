//! Server-to-client messages: a receive buffer that frames messages in place (no copy, no
//! allocation per message) and decoders for the few message bodies the driver looks into.

use std::ops::Range;

use crate::driver::receive_buffer::ReceiveBuffer;
use crate::driver::{DbError, ErrorClass};

/// PostgreSQL never sends a message over 1 GiB; a bigger length means the peer is not one.
const MAX_MESSAGE_BYTES: usize = 1 << 30;

/// The receive buffer, framed into messages: a tag byte and a 4-byte length.
pub(super) struct ReadBuffer(ReceiveBuffer);

/// A framed message: its tag and where its body lies in the buffer.
#[derive(Debug, Clone)]
pub(super) struct Frame {
    pub tag: u8,
    pub body: Range<usize>,
}

impl ReadBuffer {
    pub(super) fn new() -> ReadBuffer {
        ReadBuffer(ReceiveBuffer::new())
    }

    #[cfg(test)]
    fn is_empty(&self) -> bool {
        self.0.pending().is_empty()
    }

    /// Takes the next complete message, or `None` when more bytes are needed.
    pub(super) fn next_frame(&mut self) -> Result<Option<Frame>, DbError> {
        let Some(total) = self.pending_message_len()? else {
            return Ok(None);
        };
        if self.0.pending().len() < total {
            return Ok(None);
        }
        let tag = self.0.pending()[0];
        let message = self.0.consume(total);
        Ok(Some(Frame {
            tag,
            body: message.start + 5..message.end,
        }))
    }

    pub(super) fn body(&self, frame: &Frame) -> &[u8] {
        self.0.bytes(&frame.body)
    }

    /// Free space to read into, large enough for the rest of a pending message.
    pub(super) fn spare(&mut self) -> Result<&mut [u8], DbError> {
        let needed = self.pending_message_len()?.unwrap_or(5);
        Ok(self.0.spare(needed))
    }

    /// Records that `n` bytes were read into [`ReadBuffer::spare`].
    pub(super) fn filled(&mut self, n: usize) {
        self.0.filled(n);
    }

    /// Total length (tag included) of the message at the front, once its header is in.
    /// Inlined into both callers on every message; the error's formatting stays out of line.
    #[inline]
    fn pending_message_len(&self) -> Result<Option<usize>, DbError> {
        let pending = self.0.pending();
        if pending.len() < 5 {
            return Ok(None);
        }
        let len = i32::from_be_bytes(pending[1..5].try_into().expect("4 bytes"));
        match usize::try_from(len) {
            Ok(len) if (4..=MAX_MESSAGE_BYTES).contains(&len) => Ok(Some(len + 1)),
            _ => Err(invalid_length(pending[0], len)),
        }
    }
}

#[cold]
#[inline(never)]
fn invalid_length(tag: u8, len: i32) -> DbError {
    DbError::connection_lost(format!(
        "protocol error: message '{}' with invalid length {len}",
        tag.escape_ascii()
    ))
}

/// An ErrorResponse, reduced to what the driver reports.
#[derive(Debug, Clone)]
pub(super) struct ServerError {
    pub code: String,
    pub message: String,
    /// FATAL or PANIC: the server closes the session after sending it.
    pub fatal: bool,
}

impl ServerError {
    pub(super) fn parse(body: &[u8]) -> ServerError {
        let mut error = ServerError {
            code: "XX000".to_string(),
            message: String::new(),
            fatal: false,
        };
        let mut severity = "";
        let mut fields = body;
        while let Some((&kind, rest)) = fields.split_first() {
            if kind == 0 {
                break;
            }
            let (value, rest) = split_cstr(rest);
            match kind {
                b'C' => error.code = String::from_utf8_lossy(value).into_owned(),
                b'M' => error.message = one_line(value),
                // 'V' is never localized; 'S' is the fallback for old servers.
                b'V' => severity = std::str::from_utf8(value).unwrap_or(""),
                b'S' if severity.is_empty() => severity = std::str::from_utf8(value).unwrap_or(""),
                _ => {}
            }
            fields = rest;
        }
        error.fatal = matches!(severity, "FATAL" | "PANIC");
        error
    }

    /// A SQL error classified by SQLSTATE; any fatal error also ended the session.
    pub(super) fn into_db_error(self) -> DbError {
        let mut error = DbError::sql(&self.code, self.message);
        if self.fatal {
            error.class = ErrorClass::ConnectionLost;
        }
        error
    }
}

/// `(name, value)` of a ParameterStatus message.
pub(super) fn parameter_status(body: &[u8]) -> (&[u8], &[u8]) {
    let (name, rest) = split_cstr(body);
    let (value, _) = split_cstr(rest);
    (name, value)
}

/// The columns of a DataRow as text; `None` is NULL.
pub(super) fn data_row(body: &[u8]) -> Result<Vec<Option<String>>, DbError> {
    let bad = || DbError::connection_lost("protocol error: malformed DataRow");
    let count = i16::from_be_bytes(body.get(..2).ok_or_else(bad)?.try_into().expect("2 bytes"));
    let mut row = Vec::with_capacity(count.max(0) as usize);
    let mut rest = &body[2..];
    for _ in 0..count {
        let len = i32::from_be_bytes(rest.get(..4).ok_or_else(bad)?.try_into().expect("4 bytes"));
        rest = &rest[4..];
        if len < 0 {
            row.push(None);
            continue;
        }
        let value = rest.get(..len as usize).ok_or_else(bad)?;
        row.push(Some(String::from_utf8_lossy(value).into_owned()));
        rest = &rest[len as usize..];
    }
    Ok(row)
}

/// The column names of a RowDescription.
pub(super) fn column_names(body: &[u8]) -> Result<Vec<String>, DbError> {
    let bad = || DbError::connection_lost("protocol error: malformed RowDescription");
    let count = i16::from_be_bytes(body.get(..2).ok_or_else(bad)?.try_into().expect("2 bytes"));
    let mut names = Vec::with_capacity(count.max(0) as usize);
    let mut rest = &body[2..];
    for _ in 0..count {
        let (name, after) = split_cstr(rest);
        names.push(String::from_utf8_lossy(name).into_owned());
        // Table OID, column number, type OID, type size, type modifier, format code.
        rest = after.get(18..).ok_or_else(bad)?;
    }
    Ok(names)
}

/// A NUL-terminated string and what follows it (a missing NUL takes everything).
pub(super) fn split_cstr(bytes: &[u8]) -> (&[u8], &[u8]) {
    match bytes.iter().position(|&b| b == 0) {
        Some(p) => (&bytes[..p], &bytes[p + 1..]),
        None => (bytes, &[]),
    }
}

/// Server text for a one-line message.
pub(super) fn one_line(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::receive_buffer::RECEIVE_BUFFER_BYTES;

    fn message(tag: u8, body: &[u8]) -> Vec<u8> {
        let mut m = vec![tag];
        m.extend_from_slice(&(body.len() as i32 + 4).to_be_bytes());
        m.extend_from_slice(body);
        m
    }

    fn feed(buf: &mut ReadBuffer, bytes: &[u8]) {
        let spare = buf.spare().unwrap();
        spare[..bytes.len()].copy_from_slice(bytes);
        buf.filled(bytes.len());
    }

    #[test]
    fn frames_split_across_reads() {
        let mut stream = message(b'C', b"SELECT 1\0");
        stream.extend(message(b'Z', b"I"));
        let mut buf = ReadBuffer::new();
        feed(&mut buf, &stream[..3]);
        assert!(buf.next_frame().unwrap().is_none());
        feed(&mut buf, &stream[3..16]);
        let frame = buf.next_frame().unwrap().unwrap();
        assert_eq!((frame.tag, buf.body(&frame)), (b'C', &b"SELECT 1\0"[..]));
        assert!(buf.next_frame().unwrap().is_none());
        feed(&mut buf, &stream[16..]);
        let frame = buf.next_frame().unwrap().unwrap();
        assert_eq!((frame.tag, buf.body(&frame)), (b'Z', &b"I"[..]));
        assert!(buf.is_empty());
    }

    #[test]
    fn grows_for_a_message_bigger_than_the_buffer() {
        let big = message(b'D', &vec![7; RECEIVE_BUFFER_BYTES * 2]);
        let mut buf = ReadBuffer::new();
        let mut offset = 0;
        while offset < big.len() {
            let spare = buf.spare().unwrap();
            let n = spare.len().min(big.len() - offset).min(10_000);
            spare[..n].copy_from_slice(&big[offset..offset + n]);
            buf.filled(n);
            offset += n;
        }
        let frame = buf.next_frame().unwrap().unwrap();
        assert_eq!(buf.body(&frame).len(), RECEIVE_BUFFER_BYTES * 2);
    }

    #[test]
    fn garbage_length_is_an_error() {
        let mut buf = ReadBuffer::new();
        feed(&mut buf, b"HTTP/1.1 400 Bad Request");
        assert!(buf.next_frame().unwrap_err().is_connection_lost());
    }

    #[test]
    fn error_response_fields() {
        let body = b"SERROR\0VFATAL\0C57P01\0Mterminating connection\ndue to admin\0\0";
        let e = ServerError::parse(body);
        assert_eq!(e.code, "57P01");
        assert_eq!(e.message, "terminating connection due to admin");
        assert!(e.fatal);
        let e = ServerError::parse(b"SERROR\0C40001\0Mcould not serialize\0\0").into_db_error();
        assert_eq!(e.class, ErrorClass::Serialization);
    }

    #[test]
    fn data_rows() {
        let body = [0, 2, 0, 0, 0, 1, b'x', 0xff, 0xff, 0xff, 0xff];
        assert_eq!(data_row(&body).unwrap(), vec![Some("x".to_string()), None]);
        assert!(data_row(&body[..8]).is_err());
    }
}

//! Server-to-client messages: a receive buffer that frames messages in place (no copy, no
//! allocation per message) and decoders for the few message bodies the driver looks into.

use std::ops::Range;

use crate::driver::{DbError, ErrorClass};

/// Receive buffer size: a whole response of the usual OLTP statement fits in one read.
pub(super) const READ_BUFFER_BYTES: usize = 64 * 1024;
/// Below this much free tail space, pending bytes move to the front before the next read.
const MIN_READ_BYTES: usize = 8 * 1024;
/// PostgreSQL never sends a message over 1 GiB; a bigger length means the peer is not one.
const MAX_MESSAGE_BYTES: usize = 1 << 30;

/// Bytes received and not yet consumed: `buf[start..end]`.
pub(super) struct ReadBuffer {
    buf: Vec<u8>,
    start: usize,
    end: usize,
}

/// A framed message: its tag and where its body lies in the buffer.
#[derive(Debug, Clone)]
pub(super) struct Frame {
    pub tag: u8,
    pub body: Range<usize>,
}

impl ReadBuffer {
    pub(super) fn new() -> ReadBuffer {
        ReadBuffer {
            buf: vec![0; READ_BUFFER_BYTES],
            start: 0,
            end: 0,
        }
    }

    #[cfg(test)]
    fn is_empty(&self) -> bool {
        self.start == self.end
    }

    /// Takes the next complete message, or `None` when more bytes are needed.
    pub(super) fn next_frame(&mut self) -> Result<Option<Frame>, DbError> {
        let Some(total) = self.pending_message_len()? else {
            return Ok(None);
        };
        if self.end - self.start < total {
            return Ok(None);
        }
        let frame = Frame {
            tag: self.buf[self.start],
            body: self.start + 5..self.start + total,
        };
        self.start += total;
        Ok(Some(frame))
    }

    pub(super) fn body(&self, frame: &Frame) -> &[u8] {
        &self.buf[frame.body.clone()]
    }

    /// Free space to read into, large enough for the rest of a pending message.
    pub(super) fn spare(&mut self) -> Result<&mut [u8], DbError> {
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        }
        let needed = self.pending_message_len()?.unwrap_or(5);
        if self.start > 0
            && (self.buf.len() - self.start < needed || self.buf.len() - self.end < MIN_READ_BYTES)
        {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.buf.len() < needed {
            // Only messages bigger than the buffer (huge rows, long COPY lines) grow it.
            self.buf.resize(needed, 0);
        }
        Ok(&mut self.buf[self.end..])
    }

    /// Records that `n` bytes were read into [`ReadBuffer::spare`].
    pub(super) fn filled(&mut self, n: usize) {
        self.end += n;
    }

    /// Total length (tag included) of the message at the front, once its header is in.
    fn pending_message_len(&self) -> Result<Option<usize>, DbError> {
        if self.end - self.start < 5 {
            return Ok(None);
        }
        let header = &self.buf[self.start + 1..self.start + 5];
        let len = i32::from_be_bytes(header.try_into().expect("4 bytes"));
        match usize::try_from(len) {
            Ok(len) if (4..=MAX_MESSAGE_BYTES).contains(&len) => Ok(Some(len + 1)),
            _ => Err(DbError::connection_lost(format!(
                "protocol error: message '{}' with invalid length {len}",
                self.buf[self.start].escape_ascii()
            ))),
        }
    }
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
        let big = message(b'D', &vec![7; READ_BUFFER_BYTES * 2]);
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
        assert_eq!(buf.body(&frame).len(), READ_BUFFER_BYTES * 2);
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

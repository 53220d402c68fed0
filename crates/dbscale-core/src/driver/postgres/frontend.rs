//! Client-to-server messages, appended to a reused buffer so that a whole request (for example
//! Bind + Execute + Sync) leaves in one write and costs no allocation once the buffer has grown.

use std::io::Write;

use crate::driver::{DbError, Param};

/// Protocol 3.0, as sent in the StartupMessage.
const PROTOCOL_VERSION: i32 = 196_608;
/// The magic "protocol version" of SSLRequest.
const SSL_REQUEST_CODE: i32 = 80_877_103;

/// Starts a message: tag and a length placeholder that [`finish`] fills in.
fn start(out: &mut Vec<u8>, tag: u8) -> usize {
    out.push(tag);
    let at = out.len();
    out.extend_from_slice(&[0; 4]);
    at
}

fn finish(out: &mut [u8], at: usize) -> Result<(), DbError> {
    let len = i32::try_from(out.len() - at)
        .map_err(|_| DbError::sql("54000", "message too large for the PostgreSQL protocol"))?;
    out[at..at + 4].copy_from_slice(&len.to_be_bytes());
    Ok(())
}

/// A NUL-terminated string; text holding NUL would cut the message short, so it is refused.
fn cstr(out: &mut Vec<u8>, text: &str) -> Result<(), DbError> {
    if text.as_bytes().contains(&0) {
        return Err(DbError::sql(
            "22021",
            "invalid byte sequence for encoding \"UTF8\": 0x00 in statement text",
        ));
    }
    out.extend_from_slice(text.as_bytes());
    out.push(0);
    Ok(())
}

pub(super) fn ssl_request(out: &mut Vec<u8>) {
    out.extend_from_slice(&8i32.to_be_bytes());
    out.extend_from_slice(&SSL_REQUEST_CODE.to_be_bytes());
}

pub(super) fn startup(out: &mut Vec<u8>, params: &[(&str, &str)]) -> Result<(), DbError> {
    let at = out.len();
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&PROTOCOL_VERSION.to_be_bytes());
    for (key, value) in params {
        cstr(out, key)?;
        cstr(out, value)?;
    }
    out.push(0);
    let len = (out.len() - at) as i32;
    out[at..at + 4].copy_from_slice(&len.to_be_bytes());
    Ok(())
}

/// PasswordMessage, also the envelope of SASL responses (same tag `p`).
pub(super) fn password(out: &mut Vec<u8>, password: &[u8]) -> Result<(), DbError> {
    let at = start(out, b'p');
    out.extend_from_slice(password);
    out.push(0);
    finish(out, at)
}

pub(super) fn sasl_initial_response(
    out: &mut Vec<u8>,
    mechanism: &str,
    data: &[u8],
) -> Result<(), DbError> {
    let at = start(out, b'p');
    cstr(out, mechanism)?;
    out.extend_from_slice(&(data.len() as i32).to_be_bytes());
    out.extend_from_slice(data);
    finish(out, at)
}

pub(super) fn sasl_response(out: &mut Vec<u8>, data: &[u8]) -> Result<(), DbError> {
    let at = start(out, b'p');
    out.extend_from_slice(data);
    finish(out, at)
}

/// Simple Query with its text produced by `body` straight into the buffer; `body` must not
/// write NUL (templates check their text once and refuse NUL in parameters).
pub(super) fn query_with(
    out: &mut Vec<u8>,
    body: impl FnOnce(&mut Vec<u8>) -> Result<(), DbError>,
) -> Result<(), DbError> {
    let at = start(out, b'Q');
    body(out)?;
    out.push(0);
    finish(out, at)
}

pub(super) fn query(out: &mut Vec<u8>, sql: &str) -> Result<(), DbError> {
    let at = start(out, b'Q');
    cstr(out, sql)?;
    finish(out, at)
}

/// Parse without parameter types: the server infers them, as libpq's PQsendQueryParams does.
pub(super) fn parse(out: &mut Vec<u8>, statement: &str, sql: &str) -> Result<(), DbError> {
    let at = start(out, b'P');
    cstr(out, statement)?;
    cstr(out, sql)?;
    out.extend_from_slice(&0i16.to_be_bytes());
    finish(out, at)
}

/// Bind to the unnamed portal with text parameters and text results.
pub(super) fn bind(
    out: &mut Vec<u8>,
    statement: &str,
    params: &[Param<'_>],
) -> Result<(), DbError> {
    let count = i16::try_from(params.len())
        .map_err(|_| DbError::sql("54023", "too many parameters (at most 32767)"))?;
    let at = start(out, b'B');
    out.push(0);
    cstr(out, statement)?;
    // No parameter format codes: all text.
    out.extend_from_slice(&0i16.to_be_bytes());
    out.extend_from_slice(&count.to_be_bytes());
    for param in params {
        if let Param::Null = param {
            out.extend_from_slice(&(-1i32).to_be_bytes());
            continue;
        }
        let len_at = out.len();
        out.extend_from_slice(&[0; 4]);
        match *param {
            Param::Int(v) => out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes()),
            Param::Float(v) if v.is_nan() => out.extend_from_slice(b"NaN"),
            Param::Float(v) if v.is_infinite() && v > 0.0 => out.extend_from_slice(b"Infinity"),
            Param::Float(v) if v.is_infinite() => out.extend_from_slice(b"-Infinity"),
            Param::Float(v) => write!(out, "{v}").expect("Vec write"),
            Param::Text(text) => out.extend_from_slice(text.as_bytes()),
            Param::Null => unreachable!("handled above"),
        }
        let len = (out.len() - len_at - 4) as i32;
        out[len_at..len_at + 4].copy_from_slice(&len.to_be_bytes());
    }
    // No result format codes: all text.
    out.extend_from_slice(&0i16.to_be_bytes());
    finish(out, at)
}

/// Describe a prepared statement (`S`) or portal (`P`).
pub(super) fn describe(out: &mut Vec<u8>, kind: u8, name: &str) -> Result<(), DbError> {
    let at = start(out, b'D');
    out.push(kind);
    cstr(out, name)?;
    finish(out, at)
}

/// Close a prepared statement (`S`) or portal (`P`).
pub(super) fn close(out: &mut Vec<u8>, kind: u8, name: &str) -> Result<(), DbError> {
    let at = start(out, b'C');
    out.push(kind);
    cstr(out, name)?;
    finish(out, at)
}

/// Execute the unnamed portal to completion.
pub(super) fn execute(out: &mut Vec<u8>) {
    out.extend_from_slice(&[b'E', 0, 0, 0, 9, 0, 0, 0, 0, 0]);
}

pub(super) fn sync(out: &mut Vec<u8>) {
    out.extend_from_slice(&[b'S', 0, 0, 0, 4]);
}

pub(super) fn terminate(out: &mut Vec<u8>) {
    out.extend_from_slice(&[b'X', 0, 0, 0, 4]);
}

pub(super) fn copy_data(out: &mut Vec<u8>, data: &[u8]) -> Result<(), DbError> {
    let at = start(out, b'd');
    out.extend_from_slice(data);
    finish(out, at)
}

pub(super) fn copy_done(out: &mut Vec<u8>) {
    out.extend_from_slice(&[b'c', 0, 0, 0, 4]);
}

pub(super) fn copy_fail(out: &mut Vec<u8>, reason: &str) -> Result<(), DbError> {
    let at = start(out, b'f');
    cstr(out, reason)?;
    finish(out, at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bind_layout() {
        let mut out = Vec::new();
        bind(
            &mut out,
            "P_0",
            &[Param::Int(-12), Param::Null, Param::Text("ab")],
        )
        .unwrap();
        let expected: &[u8] = &[
            b'B', 0, 0, 0, 32, 0, b'P', b'_', b'0', 0, 0, 0, 0, 3, 0, 0, 0, 3, b'-', b'1', b'2',
            0xff, 0xff, 0xff, 0xff, 0, 0, 0, 2, b'a', b'b', 0, 0,
        ];
        assert_eq!(out, expected);
    }

    #[test]
    fn query_refuses_nul() {
        let mut out = Vec::new();
        assert!(query(&mut out, "SELECT 1\0").is_err());
        out.clear();
        query(&mut out, "SELECT 1").unwrap();
        assert_eq!(out, b"Q\0\0\0\x0dSELECT 1\0");
    }
}

//! Statements for the simple protocol: SQL split once at its `$n` placeholders, so that each
//! execution only concatenates text pieces and parameter literals into a reused buffer.

use std::io::Write;

use crate::driver::{DbError, Param};

/// One piece of a split statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Piece {
    /// `sql[start..end]`, copied as is.
    Text(usize, usize),
    /// Zero-based parameter index (`$1` is 0).
    Param(usize),
}

/// A statement's SQL with its placeholders located.
#[derive(Debug, Clone)]
pub(super) struct SqlTemplate {
    sql: String,
    pieces: Vec<Piece>,
}

impl SqlTemplate {
    /// Finds `$n` outside string literals, quoted identifiers, dollar quotes and comments.
    pub(super) fn new(sql: &str) -> SqlTemplate {
        let bytes = sql.as_bytes();
        let mut pieces = Vec::new();
        let mut text_start = 0;
        let mut i = 0;
        while i < bytes.len() {
            i = match bytes[i] {
                b'\'' => {
                    let escapes = i > 0
                        && matches!(bytes[i - 1], b'e' | b'E')
                        && (i < 2 || !is_ident_byte(bytes[i - 2]));
                    skip_quoted(bytes, i, b'\'', escapes)
                }
                b'"' => skip_quoted(bytes, i, b'"', false),
                b'-' if bytes.get(i + 1) == Some(&b'-') => bytes[i..]
                    .iter()
                    .position(|&b| b == b'\n')
                    .map_or(bytes.len(), |p| i + p),
                b'/' if bytes.get(i + 1) == Some(&b'*') => skip_block_comment(bytes, i),
                b'$' if i == 0 || !is_ident_byte(bytes[i - 1]) => {
                    let digits = bytes[i + 1..]
                        .iter()
                        .take_while(|b| b.is_ascii_digit())
                        .count();
                    let number = sql[i + 1..i + 1 + digits].parse::<usize>().unwrap_or(0);
                    if digits > 0 && number > 0 {
                        pieces.push(Piece::Text(text_start, i));
                        pieces.push(Piece::Param(number - 1));
                        text_start = i + 1 + digits;
                        text_start
                    } else {
                        skip_dollar_quote(bytes, i)
                    }
                }
                _ => i + 1,
            };
        }
        pieces.push(Piece::Text(text_start, bytes.len()));
        pieces.retain(|p| !matches!(p, Piece::Text(s, e) if s == e));
        SqlTemplate {
            sql: sql.to_string(),
            pieces,
        }
    }

    /// Appends the SQL with `params` inlined as literals to `out`.
    pub(super) fn render(&self, params: &[Param<'_>], out: &mut Vec<u8>) -> Result<(), DbError> {
        for piece in &self.pieces {
            match *piece {
                Piece::Text(start, end) => out.extend_from_slice(&self.sql.as_bytes()[start..end]),
                Piece::Param(index) => match params.get(index) {
                    Some(param) => write_literal(param, out)?,
                    None => {
                        return Err(DbError::sql(
                            "42P02",
                            format!(
                                "there is no parameter ${} ({} given)",
                                index + 1,
                                params.len()
                            ),
                        ))
                    }
                },
            }
        }
        Ok(())
    }
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80
}

/// Index just past the closing quote; doubled quotes (and backslash escapes in `E'..'`) stay
/// inside. An unterminated literal runs to the end, where the server will complain about it.
fn skip_quoted(bytes: &[u8], open: usize, quote: u8, backslash_escapes: bool) -> usize {
    let mut i = open + 1;
    while i < bytes.len() {
        if backslash_escapes && bytes[i] == b'\\' {
            i += 2;
        } else if bytes[i] == quote {
            if bytes.get(i + 1) == Some(&quote) {
                i += 2;
            } else {
                return i + 1;
            }
        } else {
            i += 1;
        }
    }
    bytes.len()
}

/// Block comments nest in PostgreSQL.
fn skip_block_comment(bytes: &[u8], open: usize) -> usize {
    let mut depth = 0;
    let mut i = open;
    while i + 1 < bytes.len() {
        match (bytes[i], bytes[i + 1]) {
            (b'/', b'*') => {
                depth += 1;
                i += 2;
            }
            (b'*', b'/') => {
                depth -= 1;
                i += 2;
                if depth == 0 {
                    return i;
                }
            }
            _ => i += 1,
        }
    }
    bytes.len()
}

/// `$tag$ ... $tag$`: returns the index past the closing tag, or just past the `$` when this is
/// no dollar quote after all.
fn skip_dollar_quote(bytes: &[u8], open: usize) -> usize {
    let tag_len = bytes[open + 1..]
        .iter()
        .enumerate()
        .take_while(|&(k, &b)| is_ident_byte(b) && b != b'$' && !(k == 0 && b.is_ascii_digit()))
        .count();
    let tag_end = open + 1 + tag_len;
    if bytes.get(tag_end) != Some(&b'$') {
        return open + 1;
    }
    let tag = &bytes[open..=tag_end];
    let body = tag_end + 1;
    match bytes[body..].windows(tag.len()).position(|w| w == tag) {
        Some(p) => body + p + tag.len(),
        None => bytes.len(),
    }
}

/// A parameter as SQL literal text. Negative numbers get parentheses so that `x-$1` cannot turn
/// into a `--` comment and `$1::text` casts the number, not its negation.
fn write_literal(param: &Param<'_>, out: &mut Vec<u8>) -> Result<(), DbError> {
    match *param {
        Param::Int(v) if v < 0 => write!(out, "({v})").expect("Vec write"),
        Param::Int(v) => out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes()),
        Param::Float(v) if v.is_nan() => out.extend_from_slice(b"'NaN'"),
        Param::Float(v) if v.is_infinite() && v > 0.0 => out.extend_from_slice(b"'Infinity'"),
        Param::Float(v) if v.is_infinite() => out.extend_from_slice(b"'-Infinity'"),
        Param::Float(v) if v.is_sign_negative() => write!(out, "({v})").expect("Vec write"),
        Param::Float(v) => write!(out, "{v}").expect("Vec write"),
        Param::Null => out.extend_from_slice(b"NULL"),
        Param::Text(text) => write_text_literal(text, out)?,
    }
    Ok(())
}

/// `'...'` with quotes doubled; text holding a backslash becomes `E'...'` with backslashes
/// doubled, which reads the same whatever `standard_conforming_strings` says.
fn write_text_literal(text: &str, out: &mut Vec<u8>) -> Result<(), DbError> {
    if text.as_bytes().contains(&0) {
        return Err(DbError::sql(
            "22021",
            "invalid byte sequence for encoding \"UTF8\": 0x00 in a text parameter",
        ));
    }
    let escapes = text.as_bytes().contains(&b'\\');
    if escapes {
        out.push(b'E');
    }
    out.push(b'\'');
    for &b in text.as_bytes() {
        if b == b'\'' || (escapes && b == b'\\') {
            out.push(b);
        }
        out.push(b);
    }
    out.push(b'\'');
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(sql: &str, params: &[Param<'_>]) -> String {
        let mut out = Vec::new();
        SqlTemplate::new(sql).render(params, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn inlines_each_kind() {
        let sql = "UPDATE t SET a = a + $1, b = $2, c = $3, d = $4 WHERE id = $1";
        let params = [
            Param::Int(-5),
            Param::Text("O'Brien"),
            Param::Null,
            Param::Float(1.5),
        ];
        assert_eq!(
            render(sql, &params),
            "UPDATE t SET a = a + (-5), b = 'O''Brien', c = NULL, d = 1.5 WHERE id = (-5)"
        );
        assert_eq!(render("SELECT x-$1", &[Param::Int(-1)]), "SELECT x-(-1)");
        assert_eq!(render("SELECT $1", &[Param::Int(42)]), "SELECT 42");
        assert_eq!(
            render("SELECT $1", &[Param::Text(r"a\b'")]),
            r"SELECT E'a\\b'''"
        );
        assert_eq!(
            render("SELECT $1", &[Param::Float(f64::NAN)]),
            "SELECT 'NaN'"
        );
        assert_eq!(
            render("SELECT $1", &[Param::Float(f64::NEG_INFINITY)]),
            "SELECT '-Infinity'"
        );
        assert_eq!(render("$1", &[Param::Text("")]), "''");
    }

    #[test]
    fn ignores_dollars_in_literals_identifiers_and_comments() {
        let sql = "SELECT '$1', \"$2\", E'\\'$1', $$ $1 $$, $q$ $2 $q$, a$1, -- $1\n /* $1 /* $2 */ $1 */ $1";
        assert_eq!(
            render(sql, &[Param::Int(7)]),
            "SELECT '$1', \"$2\", E'\\'$1', $$ $1 $$, $q$ $2 $q$, a$1, -- $1\n /* $1 /* $2 */ $1 */ 7"
        );
        assert_eq!(
            render("SELECT 'it''s $1', $1", &[Param::Int(1)]),
            "SELECT 'it''s $1', 1"
        );
    }

    #[test]
    fn casts_and_adjacent_placeholders() {
        assert_eq!(
            render(
                "SELECT $1::int+$2::text",
                &[Param::Int(-3), Param::Text("x")]
            ),
            "SELECT (-3)::int+'x'::text"
        );
        assert_eq!(render("SELECT $10", &[Param::Int(0); 10]), "SELECT 0");
        assert_eq!(render("SELECT $0", &[]), "SELECT $0");
    }

    #[test]
    fn missing_parameter_and_nul_are_errors() {
        let mut out = Vec::new();
        let err = SqlTemplate::new("SELECT $2")
            .render(&[Param::Int(1)], &mut out)
            .unwrap_err();
        assert_eq!(err.code.as_deref(), Some("42P02"));
        let err = SqlTemplate::new("SELECT $1")
            .render(&[Param::Text("a\0b")], &mut out)
            .unwrap_err();
        assert_eq!(err.code.as_deref(), Some("22021"));
    }
}

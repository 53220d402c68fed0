//! The text protocol's statements: SQL split once at its `?` placeholders; each execution writes
//! its parameters in as MySQL literals into a buffer the connection reuses.

use std::fmt::Write as _;

use crate::driver::{DbError, Param};

/// MySQL's ER_WRONG_ARGUMENTS, the server's own answer to a parameter count mismatch.
const WRONG_ARGUMENTS: u16 = 1210;

/// SQL text cut at its placeholders: `parts.len()` is one more than the placeholder count.
#[derive(Debug, Clone)]
pub struct TextTemplate {
    parts: Vec<String>,
}

impl TextTemplate {
    /// Splits `sql` at each `?` outside quotes, backquotes and comments.
    pub fn parse(sql: &str) -> Self {
        let mut parts = Vec::new();
        let mut current = String::with_capacity(sql.len());
        let mut chars = sql.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '?' => parts.push(std::mem::take(&mut current)),
                '\'' | '"' | '`' => {
                    current.push(c);
                    while let Some(q) = chars.next() {
                        current.push(q);
                        if q == '\\' && c != '`' {
                            if let Some(escaped) = chars.next() {
                                current.push(escaped);
                            }
                        } else if q == c {
                            break;
                        }
                    }
                }
                '-' if chars.peek() == Some(&'-') => {
                    current.push(c);
                    for q in chars.by_ref() {
                        current.push(q);
                        if q == '\n' {
                            break;
                        }
                    }
                }
                '/' if chars.peek() == Some(&'*') => {
                    current.push(c);
                    current.extend(chars.next());
                    let mut last = ' ';
                    for q in chars.by_ref() {
                        current.push(q);
                        if last == '*' && q == '/' {
                            break;
                        }
                        last = q;
                    }
                }
                _ => current.push(c),
            }
        }
        parts.push(current);
        Self { parts }
    }

    pub fn placeholders(&self) -> usize {
        self.parts.len() - 1
    }

    /// Writes the statement with `params` inlined into `out` (cleared first).
    pub fn render(&self, params: &[Param<'_>], out: &mut String) -> Result<(), DbError> {
        if params.len() != self.placeholders() {
            return Err(DbError::mysql(
                WRONG_ARGUMENTS,
                format!(
                    "statement takes {} parameters but {} were given",
                    self.placeholders(),
                    params.len()
                ),
            ));
        }
        out.clear();
        out.push_str(&self.parts[0]);
        for (param, part) in params.iter().zip(&self.parts[1..]) {
            write_literal(out, param)?;
            out.push_str(part);
        }
        Ok(())
    }
}

/// One parameter as a literal that means the same under any `sql_mode`: strings with a backslash
/// or NUL become hex literals, since `NO_BACKSLASH_ESCAPES` changes what `\` means in quotes.
fn write_literal(out: &mut String, param: &Param<'_>) -> Result<(), DbError> {
    match *param {
        Param::Int(v) => out.push_str(itoa::Buffer::new().format(v)),
        Param::Float(v) if v.is_finite() => {
            let _ = write!(out, "{v:?}");
        }
        Param::Float(v) => {
            return Err(DbError::mysql(
                WRONG_ARGUMENTS,
                format!("{v} has no SQL literal"),
            ))
        }
        Param::Null => out.push_str("NULL"),
        Param::Text(s) if s.contains(['\\', '\0']) => {
            out.push_str("X'");
            for b in s.bytes() {
                let _ = write!(out, "{b:02x}");
            }
            out.push('\'');
        }
        Param::Text(s) => {
            out.reserve(s.len() + 2);
            out.push('\'');
            for (i, piece) in s.split('\'').enumerate() {
                if i > 0 {
                    out.push_str("''");
                }
                out.push_str(piece);
            }
            out.push('\'');
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(sql: &str, params: &[Param<'_>]) -> String {
        let mut out = String::new();
        TextTemplate::parse(sql).render(params, &mut out).unwrap();
        out
    }

    #[test]
    fn placeholders_are_replaced_by_literals() {
        assert_eq!(
            render(
                "UPDATE t SET c=? WHERE id BETWEEN ? AND ? AND x=? AND y=?",
                &[
                    Param::Text("it's"),
                    Param::Int(-3),
                    Param::Int(7),
                    Param::Float(0.5),
                    Param::Null
                ]
            ),
            "UPDATE t SET c='it''s' WHERE id BETWEEN -3 AND 7 AND x=0.5 AND y=NULL"
        );
        assert_eq!(
            render("SELECT ?", &[Param::Text("a\\b")]),
            "SELECT X'615c62'"
        );
    }

    #[test]
    fn question_marks_in_quotes_and_comments_stay() {
        let t = TextTemplate::parse("SELECT '?', \"?\", `?`, 'a\\'?' /* ? */, ? -- ?\n");
        assert_eq!(t.placeholders(), 1);
        assert_eq!(
            render("SELECT '?' /* ? */, ? -- ?\n", &[Param::Int(1)]),
            "SELECT '?' /* ? */, 1 -- ?\n"
        );
    }

    #[test]
    fn wrong_parameter_count_is_refused() {
        let mut out = String::new();
        let e = TextTemplate::parse("SELECT ?, ?")
            .render(&[Param::Int(1)], &mut out)
            .unwrap_err();
        assert_eq!(e.code.as_deref(), Some("1210"));
    }
}

//! Splits a script's text into SQL commands and meta-commands as pgbench (psql's lexer) does: an
//! SQL command runs to a semicolon outside quotes, identifiers, dollar quotes and comments, `\;`
//! joins statements into one command, and a backslash starts a meta-command that runs to the end
//! of its line (a backslash before the newline continues it) and ends any SQL before it.

/// A piece of a script, with where it starts (1-based line and column).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Piece {
    Sql {
        text: String,
        line: u32,
        statements: usize,
    },
    Meta(MetaText),
}

/// A meta-command as written: its name, its argument text and where both start.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct MetaText {
    pub name: String,
    pub args: String,
    pub line: u32,
    pub column: u32,
    /// Column of the first character of `args`.
    pub args_column: u32,
}

struct Scanner<'a> {
    chars: &'a [char],
    at: usize,
    line: u32,
    line_start: usize,
}

impl Scanner<'_> {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.at + ahead).copied()
    }

    fn column(&self) -> u32 {
        (self.at - self.line_start + 1) as u32
    }

    /// Takes one character, keeping count of lines.
    fn bump(&mut self) -> char {
        let c = self.chars[self.at];
        self.at += 1;
        if c == '\n' {
            self.line += 1;
            self.line_start = self.at;
        }
        c
    }

    fn starts_with(&self, text: &str) -> bool {
        text.chars()
            .enumerate()
            .all(|(k, c)| self.peek(k) == Some(c))
    }

    /// Copies characters into `out` up to and including `close`, which ends the quote.
    fn quoted(&mut self, out: &mut String, close: char, backslash_escapes: bool) {
        while self.at < self.chars.len() {
            let c = self.bump();
            out.push(c);
            if backslash_escapes && c == '\\' && self.at < self.chars.len() {
                out.push(self.bump());
            } else if c == close {
                if self.peek(0) == Some(close) {
                    out.push(self.bump());
                } else {
                    return;
                }
            }
        }
    }

    /// `$tag$` at the cursor: the tag with its dollars.
    fn dollar_tag(&self) -> Option<String> {
        let mut k = 1;
        while let Some(c) = self.peek(k) {
            if c == '$' {
                return Some(self.chars[self.at..=self.at + k].iter().collect());
            }
            let ident = c.is_alphabetic() || c == '_' || (k > 1 && c.is_ascii_digit());
            if !ident {
                return None;
            }
            k += 1;
        }
        None
    }

    /// A meta-command at the cursor (on its backslash): its name and the rest of its line.
    fn meta(&mut self) -> Piece {
        let (line, column) = (self.line, self.column());
        self.bump();
        let mut name = String::new();
        while let Some(c) = self.peek(0).filter(|c| c.is_alphanumeric() || *c == '_') {
            name.push(c);
            self.bump();
        }
        let args_column = self.column();
        let mut args = String::new();
        while let Some(c) = self.peek(0) {
            if c == '\n' {
                break;
            }
            if c == '\\' && self.peek(1) == Some('\n') {
                self.bump();
                self.bump();
                args.push(' ');
                continue;
            }
            args.push(self.bump());
        }
        Piece::Meta(MetaText {
            name,
            args,
            line,
            column,
            args_column,
        })
    }
}

pub(super) fn scan(text: &str) -> Vec<Piece> {
    let chars: Vec<char> = text.chars().collect();
    let mut s = Scanner {
        chars: &chars,
        at: 0,
        line: 1,
        line_start: 0,
    };
    let mut pieces = Vec::new();
    let mut sql = String::new();
    let (mut sql_line, mut statements) = (0, 1);
    while let Some(c) = s.peek(0) {
        let empty = sql.trim().is_empty();
        if empty && (c.is_whitespace() || c == ';') {
            s.bump();
            continue;
        }
        if empty && s.starts_with("--") {
            while s.peek(0).is_some_and(|c| c != '\n') {
                s.bump();
            }
            continue;
        }
        if c == '\\' && s.peek(1) != Some(';') {
            finish_sql(&mut sql, &mut statements, sql_line, &mut pieces);
            pieces.push(s.meta());
            continue;
        }
        if empty {
            sql.clear();
            sql_line = s.line;
        }
        match c {
            '\\' => {
                s.bump();
                s.bump();
                sql.push(';');
                statements += 1;
            }
            ';' => {
                // Kept, as pgbench sends it: the server's messages then read as under pgbench.
                sql.push(s.bump());
                finish_sql(&mut sql, &mut statements, sql_line, &mut pieces);
            }
            '\'' => {
                let escapes = sql.chars().last().is_some_and(|p| p == 'e' || p == 'E');
                sql.push(s.bump());
                s.quoted(&mut sql, '\'', escapes);
            }
            '"' => {
                sql.push(s.bump());
                s.quoted(&mut sql, '"', false);
            }
            '$' if !sql
                .chars()
                .last()
                .is_some_and(|p| p.is_alphanumeric() || p == '_') =>
            {
                match s.dollar_tag() {
                    Some(tag) => {
                        for _ in 0..tag.chars().count() {
                            sql.push(s.bump());
                        }
                        while s.at < chars.len() && !s.starts_with(&tag) {
                            sql.push(s.bump());
                        }
                        for _ in 0..tag.chars().count().min(chars.len() - s.at) {
                            sql.push(s.bump());
                        }
                    }
                    None => sql.push(s.bump()),
                }
            }
            '-' if s.starts_with("--") => {
                while s.peek(0).is_some_and(|c| c != '\n') {
                    sql.push(s.bump());
                }
            }
            '/' if s.starts_with("/*") => {
                let mut depth = 0;
                while s.at < chars.len() {
                    if s.starts_with("/*") {
                        depth += 1;
                        sql.push(s.bump());
                    } else if s.starts_with("*/") {
                        depth -= 1;
                        sql.push(s.bump());
                        if depth == 0 {
                            sql.push(s.bump());
                            break;
                        }
                    }
                    sql.push(s.bump());
                }
            }
            _ => sql.push(s.bump()),
        }
    }
    finish_sql(&mut sql, &mut statements, sql_line, &mut pieces);
    pieces
}

/// Ends the SQL command being gathered, if it holds anything.
fn finish_sql(sql: &mut String, statements: &mut usize, line: u32, pieces: &mut Vec<Piece>) {
    let trimmed = sql.trim();
    if !trimmed.is_empty() {
        pieces.push(Piece::Sql {
            text: trimmed.to_string(),
            line,
            statements: *statements,
        });
    }
    sql.clear();
    *statements = 1;
}

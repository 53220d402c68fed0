//! From a script's text to its [`Script`]: meta-commands checked and their expressions parsed,
//! `\gset`/`\aset` attached to the SQL before them, conditionals matched and their jumps set.
//! Every error names the file, line and column, in pgbench's words where pgbench has them.

use super::expr;
use super::model::{Command, Op, Script, SqlCommand, SqlPart, Store, Word};
use super::scan::{scan, MetaText, Piece};
use super::vars::valid_name;

/// A script that cannot run: where and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptError {
    pub file: String,
    pub line: u32,
    pub column: u32,
    pub message: String,
}

impl std::fmt::Display for ScriptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // pgbench's `FILE:LINE: message`, then the column its caret line would point at.
        write!(
            f,
            "{}:{}: {} (column {})",
            self.file, self.line, self.message, self.column
        )
    }
}

/// An open `\if`: where it is, its last branch (whose `on_false` the next branch sets), the
/// branches whose `end` the `\endif` sets, and whether `\else` was seen.
struct OpenIf {
    line: u32,
    column: u32,
    last_branch: usize,
    branches: Vec<usize>,
    has_else: bool,
}

/// The largest script text parsed (Python refuses larger files before reading them): parsing
/// costs memory in proportion, and no benchmark script comes near it.
pub const MAX_SCRIPT_BYTES: usize = 1 << 20;

/// The most words a meta-command takes after its name (pgbench's MAX_ARGS less the name).
const MAX_WORDS: usize = 255;

pub fn parse_script(name: &str, text: &str) -> Result<Script, ScriptError> {
    if text.len() > MAX_SCRIPT_BYTES {
        return Err(ScriptError {
            file: name.to_string(),
            line: 1,
            column: 1,
            message: format!("script is over {} MiB", MAX_SCRIPT_BYTES >> 20),
        });
    }
    let mut parser = Parser {
        file: name,
        commands: Vec::new(),
        open: Vec::new(),
        after_sql: false,
    };
    for piece in scan(text) {
        match piece {
            Piece::Sql {
                text,
                line,
                statements,
            } => parser.sql(&text, line, statements),
            Piece::Meta(text) => parser.meta(&Meta::of(&text))?,
        }
    }
    parser.finish()
}

/// A meta-command as scanned, with its name lower-cased and its arguments split into words.
struct Meta<'a> {
    name: &'a str,
    lower: String,
    args: &'a str,
    words: Vec<&'a str>,
    line: u32,
    column: u32,
    args_column: u32,
}

impl<'a> Meta<'a> {
    fn of(text: &'a MetaText) -> Self {
        Self {
            name: &text.name,
            lower: text.name.to_ascii_lowercase(),
            args: &text.args,
            words: text.args.split_whitespace().collect(),
            line: text.line,
            column: text.column,
            args_column: text.args_column,
        }
    }
}

/// The commands parsed so far, the `\if`s still open, and whether the last command was SQL
/// (which a `\gset` may follow).
struct Parser<'a> {
    file: &'a str,
    commands: Vec<Command>,
    open: Vec<OpenIf>,
    after_sql: bool,
}

impl Parser<'_> {
    fn error(&self, line: u32, column: u32, message: impl Into<String>) -> ScriptError {
        ScriptError {
            file: self.file.to_string(),
            line,
            column,
            message: message.into(),
        }
    }

    /// A meta-command's syntax error, in pgbench's words: `missing argument in command "set"`.
    fn fail<T>(&self, meta: &Meta, message: impl Into<String>) -> Result<T, ScriptError> {
        Err(self.error(meta.line, meta.column, in_command(message.into(), meta)))
    }

    /// An error in the expression of `\set`, `\if` or `\elif`, at its column.
    fn expression_error(&self, meta: &Meta, column: u32, message: &str) -> ScriptError {
        self.error(meta.line, column, in_command(message.to_string(), meta))
    }

    /// A misplaced `\if`, `\elif`, `\else` or `\endif` (pgbench's "condition error").
    fn condition_error<T>(&self, line: u32, column: u32, message: &str) -> Result<T, ScriptError> {
        Err(self.error(line, column, format!("condition error: {message}")))
    }

    fn sql(&mut self, text: &str, line: u32, statements: usize) {
        self.commands.push(Command {
            line,
            text: first_line(text),
            op: Op::Sql(SqlCommand {
                parts: sql_parts(text),
                statements,
                store: None,
            }),
        });
        self.after_sql = true;
    }

    fn meta(&mut self, meta: &Meta) -> Result<(), ScriptError> {
        let expression = matches!(meta.lower.as_str(), "set" | "if" | "elif");
        if !expression && meta.words.len() > MAX_WORDS {
            return self.fail(meta, "too many arguments");
        }
        let op = match meta.lower.as_str() {
            "gset" | "aset" => return self.store(meta),
            "set" => self.set(meta)?,
            "sleep" => self.sleep(meta)?,
            "setshell" | "shell" => self.shell(meta)?,
            "if" | "elif" => self.branch(meta)?,
            "else" | "endif" => self.close_branch(meta)?,
            "startpipeline" | "syncpipeline" | "endpipeline" => {
                if !meta.words.is_empty() {
                    return self.fail(meta, "unexpected argument");
                }
                match meta.lower.as_str() {
                    "startpipeline" => Op::StartPipeline,
                    "syncpipeline" => Op::SyncPipeline,
                    _ => Op::EndPipeline,
                }
            }
            _ => return self.fail(meta, "invalid command"),
        };
        self.after_sql = false;
        self.commands.push(Command {
            line: meta.line,
            text: first_line(&format!("\\{}{}", meta.name, meta.args)),
            op,
        });
        Ok(())
    }

    /// `\gset`/`\aset`: stores the results of the SQL command just before.
    fn store(&mut self, meta: &Meta) -> Result<(), ScriptError> {
        if meta.words.len() > 1 {
            return self.fail(meta, "too many arguments");
        }
        let mut must_follow = format!("\\{} must follow an SQL command", meta.lower);
        if let Some(previous) = self.commands.last() {
            must_follow = format!("{must_follow} ({})", previous.text);
        }
        let previous = self.commands.last_mut().filter(|_| self.after_sql);
        let Some(Command {
            op: Op::Sql(sql), ..
        }) = previous
        else {
            return self.fail(meta, must_follow);
        };
        if sql.store.is_some() {
            return self.fail(meta, must_follow);
        }
        sql.store = Some(Store {
            all: meta.lower == "aset",
            prefix: meta.words.first().unwrap_or(&"").to_string(),
        });
        self.after_sql = false;
        Ok(())
    }

    fn set(&self, meta: &Meta) -> Result<Op, ScriptError> {
        // The name is checked when the value is stored, as pgbench does: a bad one fails the
        // client at run time.
        let Some(var) = meta.words.first() else {
            return self.fail(meta, "missing argument");
        };
        let offset = meta.args.find(var).unwrap_or(0) + var.len();
        let rest = &meta.args[offset..];
        let at = meta.args_column + meta.args[..offset].chars().count() as u32;
        let expr = expr::parse(rest)
            .map_err(|e| self.expression_error(meta, at + e.column as u32, &e.message))?;
        Ok(Op::Set {
            var: var.to_string(),
            expr,
        })
    }

    fn sleep(&self, meta: &Meta) -> Result<Op, ScriptError> {
        let (amount, unit) = match meta.words.as_slice() {
            [] => return self.fail(meta, "missing argument"),
            [amount] if amount.starts_with(':') => (*amount, "s"),
            // pgbench splits `2ms` into its number and unit.
            [amount] => match split_sleep_unit(amount) {
                Some(split) => split,
                None => {
                    let message = format!("invalid sleep time, must be an integer ({amount})");
                    return self.fail(meta, message);
                }
            },
            [amount, unit] if amount.starts_with(':') || is_integer_text(amount) => {
                (*amount, *unit)
            }
            [amount, _] => {
                let message = format!("invalid sleep time, must be an integer ({amount})");
                return self.fail(meta, message);
            }
            _ => return self.fail(meta, "too many arguments"),
        };
        let unit_us = match unit.to_ascii_lowercase().as_str() {
            "us" => 1,
            "ms" => 1_000,
            "s" => 1_000_000,
            _ => {
                let message = format!("unrecognized time unit, must be us, ms or s ({unit})");
                return self.fail(meta, message);
            }
        };
        // Text (an optional sign and digits) is read as C's atoi reads it when the command runs.
        let amount = match amount.strip_prefix(':') {
            Some(name) => Word::Var(name.to_string()),
            None => Word::Text(amount.to_string()),
        };
        Ok(Op::Sleep { amount, unit_us })
    }

    fn shell(&self, meta: &Meta) -> Result<Op, ScriptError> {
        let setting = meta.lower == "setshell";
        let needed = if setting { 2 } else { 1 };
        if meta.words.len() < needed {
            let what = if setting {
                "missing argument"
            } else {
                "missing command"
            };
            return self.fail(meta, what);
        }
        // As with \set, the variable's name is checked when its value is stored.
        let var = setting.then(|| meta.words[0].to_string());
        let words = meta.words[needed - 1..].iter().map(|w| word(w)).collect();
        Ok(Op::Shell { var, words })
    }

    /// `\if` opens a conditional; `\elif` adds a branch to the innermost one.
    fn branch(&mut self, meta: &Meta) -> Result<Op, ScriptError> {
        let cond = expr::parse(meta.args).map_err(|e| {
            self.expression_error(meta, meta.args_column + e.column as u32, &e.message)
        })?;
        let here = self.commands.len();
        if meta.lower == "if" {
            self.open.push(OpenIf {
                line: meta.line,
                column: meta.column,
                last_branch: here,
                branches: vec![],
                has_else: false,
            });
            return Ok(Op::If {
                cond,
                on_false: usize::MAX,
            });
        }
        let Some(top) = self.open.last_mut() else {
            return self.condition_error(meta.line, meta.column, "\\elif without matching \\if");
        };
        if top.has_else {
            return self.condition_error(meta.line, meta.column, "\\elif after \\else");
        }
        set_on_false(&mut self.commands[top.last_branch].op, here);
        top.last_branch = here;
        top.branches.push(here);
        Ok(Op::Elif {
            cond,
            on_false: usize::MAX,
            end: usize::MAX,
        })
    }

    /// `\else` starts the innermost conditional's last branch; `\endif` closes it, setting
    /// every branch's jump past its end.
    fn close_branch(&mut self, meta: &Meta) -> Result<Op, ScriptError> {
        if !meta.words.is_empty() {
            return self.fail(meta, "unexpected argument");
        }
        let here = self.commands.len();
        let Some(top) = self.open.last_mut() else {
            let message = format!("\\{} without matching \\if", meta.lower);
            return self.condition_error(meta.line, meta.column, &message);
        };
        if meta.lower == "else" {
            if top.has_else {
                return self.condition_error(meta.line, meta.column, "\\else after \\else");
            }
            set_on_false(&mut self.commands[top.last_branch].op, here);
            top.has_else = true;
            top.branches.push(here);
            return Ok(Op::Else { end: usize::MAX });
        }
        let closed = self.open.pop().expect("checked above");
        if !closed.has_else {
            set_on_false(&mut self.commands[closed.last_branch].op, here);
        }
        for branch in closed.branches {
            match &mut self.commands[branch].op {
                Op::Elif { end, .. } | Op::Else { end } => *end = here,
                _ => unreachable!("branches are elif and else"),
            }
        }
        Ok(Op::Endif)
    }

    fn finish(self) -> Result<Script, ScriptError> {
        if let Some(unclosed) = self.open.first() {
            let (line, column) = (unclosed.line, unclosed.column);
            return self.condition_error(line, column, "\\if without matching \\endif");
        }
        if self.commands.is_empty() {
            return Err(self.error(
                1,
                1,
                format!("empty command list for script \"{}\"", self.file),
            ));
        }
        Ok(Script {
            name: self.file.to_string(),
            commands: self.commands,
        })
    }
}

fn set_on_false(op: &mut Op, target: usize) {
    match op {
        Op::If { on_false, .. } | Op::Elif { on_false, .. } => *on_false = target,
        _ => unreachable!("only \\if and \\elif branch on false"),
    }
}

/// `2ms` as pgbench reads it: the sign and digits, then the unit (seconds when none); a word
/// without a leading digit stays whole, to be refused as not an integer.
/// An optional sign and digits (none at all too: pgbench sleeps `+` as 0).
fn is_integer_text(word: &str) -> bool {
    let digits = word.strip_prefix(['+', '-']).unwrap_or(word);
    digits.bytes().all(|b| b.is_ascii_digit())
}

/// `2ms` as (`2`, `ms`), `7` as (`7`, `s`); None when text follows no digit (`ms`).
fn split_sleep_unit(word: &str) -> Option<(&str, &str)> {
    let sign = usize::from(word.starts_with(['+', '-']));
    let digits = word[sign..].bytes().take_while(u8::is_ascii_digit).count();
    if sign + digits == word.len() {
        return Some((word, "s"));
    }
    (digits > 0).then(|| word.split_at(sign + digits))
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or("").trim().to_string()
}

/// `:name` is a variable, `::text` the literal `:text`; anything else is text.
fn word(text: &str) -> Word {
    match text.strip_prefix(':') {
        Some(rest) if rest.starts_with(':') => Word::Text(rest.to_string()),
        Some(rest) if valid_name(rest) => Word::Var(rest.to_string()),
        _ => Word::Text(text.to_string()),
    }
}

fn is_name_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_' || !c.is_ascii()
}

fn is_name_char(c: char) -> bool {
    is_name_start(c) || c.is_ascii_digit()
}

/// Splits SQL into text and variable references the way pgbench finds them: a colon followed
/// by a name anywhere (a run of colons, as in `::int`, is text); psql's `:'name'` and `:"name"`
/// quote the value as a literal or an identifier.
pub(super) fn sql_parts(sql: &str) -> Vec<SqlPart> {
    let chars: Vec<char> = sql.chars().collect();
    let mut parts = Vec::new();
    let mut text = String::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != ':' {
            text.push(chars[i]);
            i += 1;
            continue;
        }
        let next = chars.get(i + 1).copied();
        if next == Some(':') {
            while chars.get(i) == Some(&':') {
                text.push(':');
                i += 1;
            }
            continue;
        }
        let quoted = next.filter(|q| *q == '\'' || *q == '"').and_then(|q| {
            let start = i + 2;
            let len = chars[start..]
                .iter()
                .take_while(|c| is_name_char(**c))
                .count();
            let name: String = chars[start..start + len].iter().collect();
            (chars.get(start + len) == Some(&q) && valid_name(&name)).then_some((q, name, len + 3))
        });
        let (part, eaten) = match (quoted, next) {
            (Some(('\'', name, eaten)), _) => (SqlPart::Literal(name), eaten),
            (Some((_, name, eaten)), _) => (SqlPart::Identifier(name), eaten),
            (None, Some(c)) if is_name_start(c) => {
                let len = chars[i + 1..]
                    .iter()
                    .take_while(|c| is_name_char(**c))
                    .count();
                (
                    SqlPart::Var(chars[i + 1..i + 1 + len].iter().collect()),
                    len + 1,
                )
            }
            _ => {
                text.push(':');
                i += 1;
                continue;
            }
        };
        if !text.is_empty() {
            parts.push(SqlPart::Text(std::mem::take(&mut text)));
        }
        parts.push(part);
        i += eaten;
    }
    if !text.is_empty() {
        parts.push(SqlPart::Text(text));
    }
    parts
}

/// `message in command "name"`, as pgbench ends a meta-command's syntax error.
fn in_command(message: String, meta: &Meta) -> String {
    format!("{message} in command \"{}\"", meta.name)
}

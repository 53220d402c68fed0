//! From a script's text to its [`Script`]: meta-commands checked and their expressions parsed,
//! `\gset`/`\aset` attached to the SQL before them, conditionals matched and their jumps set.
//! Every error names the file, line and column, in pgbench's words where pgbench has them.

use super::expr;
use super::model::{Command, Op, Script, SqlCommand, SqlPart, Store, Word};
use super::scan::{scan, Piece};
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
        write!(
            f,
            "{}:{}:{}: {}",
            self.file, self.line, self.column, self.message
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

pub fn parse_script(name: &str, text: &str) -> Result<Script, ScriptError> {
    let error = |line: u32, column: u32, message: String| ScriptError {
        file: name.to_string(),
        line,
        column,
        message,
    };
    let mut commands: Vec<Command> = Vec::new();
    let mut open: Vec<OpenIf> = Vec::new();
    let mut after_sql = false;
    for piece in scan(text) {
        let (name_text, args, line, column, args_column) = match piece {
            Piece::Sql {
                text,
                line,
                statements,
            } => {
                commands.push(Command {
                    line,
                    text: first_line(&text),
                    op: Op::Sql(SqlCommand {
                        parts: sql_parts(&text),
                        statements,
                        store: None,
                    }),
                });
                after_sql = true;
                continue;
            }
            Piece::Meta {
                name,
                args,
                line,
                column,
                args_column,
            } => (name, args, line, column, args_column),
        };
        let fail = |message: &str| Err(error(line, column, message.to_string()));
        let meta = name_text.to_ascii_lowercase();
        let words: Vec<&str> = args.split_whitespace().collect();
        let here = commands.len();
        let op = match meta.as_str() {
            "gset" | "aset" => {
                if words.len() > 1 {
                    return fail("too many arguments");
                }
                let previous = commands.last_mut().filter(|_| after_sql);
                let Some(Command {
                    op: Op::Sql(sql), ..
                }) = previous
                else {
                    return fail(&format!("\\{meta} must follow an SQL command"));
                };
                if sql.store.is_some() {
                    return fail(&format!("\\{meta} must follow an SQL command"));
                }
                sql.store = Some(Store {
                    all: meta == "aset",
                    prefix: words.first().unwrap_or(&"").to_string(),
                });
                after_sql = false;
                continue;
            }
            "set" => {
                let Some(var) = words.first() else {
                    return fail("missing argument");
                };
                if !valid_name(var) {
                    return fail(&format!("invalid variable name: \"{var}\""));
                }
                let offset = args.find(var).unwrap_or(0) + var.len();
                let rest = &args[offset..];
                if rest.trim().is_empty() {
                    return fail("missing argument");
                }
                let at = args_column + args[..offset].chars().count() as u32;
                let expr =
                    expr::parse(rest).map_err(|e| error(line, at + e.column as u32, e.message))?;
                Op::Set {
                    var: var.to_string(),
                    expr,
                }
            }
            "sleep" => {
                let (amount, unit) = match words.as_slice() {
                    [] => return fail("missing argument"),
                    [amount] => (*amount, "s"),
                    [amount, unit] => (*amount, *unit),
                    _ => return fail("too many arguments"),
                };
                let unit_us = match unit.to_ascii_lowercase().as_str() {
                    "us" => 1,
                    "ms" => 1_000,
                    "s" => 1_000_000,
                    _ => return fail("unrecognized time unit, must be us, ms or s"),
                };
                let amount = word(amount);
                if let Word::Text(t) = &amount {
                    if t.parse::<i64>().is_err() {
                        return fail("invalid sleep time, must be an integer");
                    }
                }
                Op::Sleep { amount, unit_us }
            }
            "setshell" | "shell" => {
                let setting = meta == "setshell";
                let needed = if setting { 2 } else { 1 };
                if words.len() < needed {
                    return fail("missing command");
                }
                let var = setting.then(|| words[0].to_string());
                if let Some(v) = var.as_deref().filter(|v| !valid_name(v)) {
                    return fail(&format!("invalid variable name: \"{v}\""));
                }
                let words = words[needed - 1..].iter().map(|w| word(w)).collect();
                Op::Shell { var, words }
            }
            "if" | "elif" => {
                if args.trim().is_empty() {
                    return fail("missing argument");
                }
                let cond = expr::parse(&args)
                    .map_err(|e| error(line, args_column + e.column as u32, e.message))?;
                if meta == "if" {
                    open.push(OpenIf {
                        line,
                        column,
                        last_branch: here,
                        branches: vec![],
                        has_else: false,
                    });
                    Op::If {
                        cond,
                        on_false: usize::MAX,
                    }
                } else {
                    let Some(top) = open.last_mut() else {
                        return fail("\\elif without matching \\if");
                    };
                    if top.has_else {
                        return fail("\\elif after \\else");
                    }
                    set_on_false(&mut commands[top.last_branch].op, here);
                    top.last_branch = here;
                    top.branches.push(here);
                    Op::Elif {
                        cond,
                        on_false: usize::MAX,
                        end: usize::MAX,
                    }
                }
            }
            "else" | "endif" => {
                if !words.is_empty() {
                    return fail("unexpected argument");
                }
                let Some(top) = open.last_mut() else {
                    return fail(&format!("\\{meta} without matching \\if"));
                };
                if meta == "else" {
                    if top.has_else {
                        return fail("\\else after \\else");
                    }
                    set_on_false(&mut commands[top.last_branch].op, here);
                    top.has_else = true;
                    top.branches.push(here);
                    Op::Else { end: usize::MAX }
                } else {
                    let closed = open.pop().expect("checked above");
                    if !closed.has_else {
                        set_on_false(&mut commands[closed.last_branch].op, here);
                    }
                    for branch in closed.branches {
                        match &mut commands[branch].op {
                            Op::Elif { end, .. } | Op::Else { end } => *end = here,
                            _ => unreachable!("branches are elif and else"),
                        }
                    }
                    Op::Endif
                }
            }
            "startpipeline" | "syncpipeline" | "endpipeline" => {
                if !words.is_empty() {
                    return fail("unexpected argument");
                }
                match meta.as_str() {
                    "startpipeline" => Op::StartPipeline,
                    "syncpipeline" => Op::SyncPipeline,
                    _ => Op::EndPipeline,
                }
            }
            _ => return fail(&format!("invalid command \\{name_text}")),
        };
        after_sql = false;
        commands.push(Command {
            line,
            text: first_line(&format!("\\{name_text}{args}")),
            op,
        });
    }
    if let Some(unclosed) = open.first() {
        return Err(error(
            unclosed.line,
            unclosed.column,
            "\\if without matching \\endif".into(),
        ));
    }
    if commands.is_empty() {
        return Err(error(
            1,
            1,
            format!("empty command list for script \"{name}\""),
        ));
    }
    Ok(Script {
        name: name.to_string(),
        commands,
    })
}

fn set_on_false(op: &mut Op, target: usize) {
    match op {
        Op::If { on_false, .. } | Op::Elif { on_false, .. } => *on_false = target,
        _ => unreachable!("only \\if and \\elif branch on false"),
    }
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

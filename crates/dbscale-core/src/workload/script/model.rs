//! A parsed script: its commands in order, each with the line it starts on, and the jumps of its
//! conditionals resolved.

use super::expr::Expr;

#[derive(Debug, Clone)]
pub struct Script {
    /// The file's name as given, or the built-in's name.
    pub name: String,
    pub commands: Vec<Command>,
}

#[derive(Debug, Clone)]
pub struct Command {
    /// 1-based line the command starts on.
    pub line: u32,
    /// Its first line, trimmed (per-command latencies and errors name it).
    pub text: String,
    pub op: Op,
}

#[derive(Debug, Clone)]
pub enum Op {
    Sql(SqlCommand),
    Set {
        var: String,
        expr: Expr,
    },
    Sleep {
        amount: Word,
        unit_us: u64,
    },
    /// `\setshell` (with a variable) or `\shell`.
    Shell {
        var: Option<String>,
        words: Vec<Word>,
    },
    /// Where execution goes when the condition is false: the matching `\elif`, `\else` or
    /// `\endif`.
    If {
        cond: Expr,
        on_false: usize,
    },
    /// Evaluated when jumped to; reached from the branch above, it jumps to `end`.
    Elif {
        cond: Expr,
        on_false: usize,
        end: usize,
    },
    Else {
        end: usize,
    },
    Endif,
    /// Pipeline mode: SQL commands queue up until a sync point.
    StartPipeline,
    /// A sync point: the queued commands go, their results are read.
    SyncPipeline,
    /// The last sync point; pipeline mode ends.
    EndPipeline,
}

/// An argument of `\sleep` or `\shell`: literal text or a `:variable`.
#[derive(Debug, Clone, PartialEq)]
pub enum Word {
    Text(String),
    Var(String),
}

#[derive(Debug, Clone)]
pub struct SqlCommand {
    pub parts: Vec<SqlPart>,
    /// Statements in it (`\;` joins several into one request).
    pub statements: usize,
    /// `\gset` or `\aset`: where the results go.
    pub store: Option<Store>,
}

impl SqlCommand {
    /// Names of the variables it refers to, in order of appearance (one placeholder each).
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().filter_map(|p| match p {
            SqlPart::Var(name) | SqlPart::Literal(name) | SqlPart::Identifier(name) => {
                Some(name.as_str())
            }
            SqlPart::Text(_) => None,
        })
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum SqlPart {
    Text(String),
    /// `:name`: the value's text as is (pgbench).
    Var(String),
    /// `:'name'`: the value as a quoted literal (psql's form).
    Literal(String),
    /// `:"name"`: the value as a quoted identifier (psql's form).
    Identifier(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Store {
    /// `\aset`: every statement's one row; `\gset`: the last statement's, which must be one row.
    pub all: bool,
    pub prefix: String,
}

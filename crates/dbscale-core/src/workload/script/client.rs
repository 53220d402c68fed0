//! Running scripts: a client picks a script by weight (as pgbench's `chooseScript` does) and runs
//! its commands with its own variables. SQL goes out with the variables' text in place under the
//! simple protocol (pgbench's default), or as prepared statements with the values bound as text;
//! a command ending in `\gset` or `\aset` always goes as text, its results read with their
//! column names. A run-time error fails the transaction under the class `script FILE:LINE: ...`.

use std::sync::Arc;
use std::time::Duration;

use rand::rngs::SmallRng;
use rand::Rng;

use super::eval::{evaluate, Context, EvalError, Value};
use super::model::{Command, Op, Script, SqlCommand, SqlPart, Store, Word};
use super::vars::{valid_name, Variables};
use crate::driver::{Connection, DbError, Dialect, Param, QueryOutcome, ResultSet};
use crate::stats::result::QueryCounts;
use crate::workload::TxnOutcome;

/// What every client of a run shares: the scripts, their weights, how SQL travels, and the
/// variables each client starts with.
#[derive(Debug)]
pub struct ScriptMix {
    pub scripts: Vec<Script>,
    pub weights: Vec<u64>,
    /// Text substitution (simple protocol) rather than bound parameters.
    pub inline: bool,
    pub dialect: Dialect,
    /// Per script and command: its prepared statement's index, when it runs prepared.
    pub statement_of: Vec<Vec<Option<usize>>>,
    /// `--define` values (text), then the automatic variables not defined by them.
    pub initial: Vec<(String, Value)>,
    pub defines: Vec<(String, String)>,
}

pub struct ScriptClient {
    mix: Arc<ScriptMix>,
    vars: Variables,
    text: String,
    values: Vec<String>,
}

impl ScriptMix {
    /// pgbench's choice: a uniform draw in [0, total weight) walked down the weights.
    fn choose(&self, rng: &mut SmallRng) -> usize {
        if self.scripts.len() == 1 {
            return 0;
        }
        let total: u64 = self.weights.iter().sum();
        let mut w = rng.gen_range(0..total) as i64;
        let mut chosen = 0;
        for (i, weight) in self.weights.iter().enumerate() {
            w -= *weight as i64;
            chosen = i;
            if w < 0 {
                break;
            }
        }
        chosen
    }
}

/// Expression evaluation's view of a client.
struct Eval<'a> {
    vars: &'a Variables,
    rng: &'a mut SmallRng,
    script: usize,
    command: usize,
}

impl Context for Eval<'_> {
    fn variable(&mut self, name: &str) -> Result<Value, EvalError> {
        self.vars.value(name)
    }
    fn default_seed(&self) -> i64 {
        match self.vars.value("default_seed") {
            Ok(Value::Int(seed)) => seed,
            _ => 0,
        }
    }
    fn rng(&mut self) -> &mut dyn rand::RngCore {
        self.rng
    }
    fn debug(&mut self, line: &str) {
        eprintln!(
            "debug(script={},command={}): {line}",
            self.script,
            self.command + 1
        );
    }
}

fn place(script: &Script, command: &Command) -> String {
    format!("{}:{}", script.name, command.line)
}

/// Placed where it happened: a script error gets its class from the place; a server error keeps
/// its class (so retries and counts work as for any workload) and its message gains the place.
fn located(error: SqlFailure, script: &Script, command: &Command) -> DbError {
    match error {
        SqlFailure::Script(message) => DbError::script(&place(script, command), &message),
        SqlFailure::Server(mut error) => {
            error.message = format!("{}: {}", place(script, command), error.message);
            error
        }
    }
}

/// Why an SQL command failed: the script (undefined variable, `\gset` row count) or the server.
enum SqlFailure {
    Script(String),
    Server(DbError),
}

impl From<DbError> for SqlFailure {
    fn from(error: DbError) -> Self {
        SqlFailure::Server(error)
    }
}

impl ScriptClient {
    pub fn new(mix: Arc<ScriptMix>, client_id: u32) -> Self {
        let mut vars = Variables::default();
        for (name, text) in &mix.defines {
            vars.set_text(name, text.clone());
        }
        for (name, value) in &mix.initial {
            vars.set(name, *value);
        }
        vars.set("client_id", Value::Int(i64::from(client_id)));
        Self {
            mix,
            vars,
            text: String::new(),
            values: Vec::new(),
        }
    }

    /// Runs one script, chosen by weight, from its first command to its last.
    pub async fn run(
        &mut self,
        conn: &mut Connection,
        rng: &mut SmallRng,
    ) -> Result<TxnOutcome, DbError> {
        let mix = self.mix.clone();
        let kind = mix.choose(rng);
        let script = &mix.scripts[kind];
        let mut queries = QueryCounts::default();
        let (mut at, mut jumped) = (0, false);
        while let Some(command) = script.commands.get(at) {
            let arrived_by_jump = std::mem::take(&mut jumped);
            let fail = |e: EvalError| DbError::script(&place(script, command), &e.0);
            let mut eval = Eval {
                vars: &self.vars,
                rng,
                script: kind,
                command: at,
            };
            let mut next = at + 1;
            match &command.op {
                Op::Sql(sql) => {
                    let prepared = mix.statement_of[kind][at];
                    self.sql(conn, sql, prepared, &mut queries)
                        .await
                        .map_err(|e| located(e, script, command))?;
                }
                Op::Set { var, expr } => {
                    let value = evaluate(expr, &mut eval).map_err(fail)?;
                    self.vars.set(var, value);
                }
                Op::Sleep { amount, unit_us } => {
                    let count = match amount {
                        Word::Text(t) => t.parse::<i64>().unwrap_or(0),
                        Word::Var(name) => match self.vars.value(name).map_err(fail)? {
                            Value::Int(n) => n,
                            _ => {
                                return Err(fail(EvalError(
                                    "invalid sleep time, must be an integer".into(),
                                )))
                            }
                        },
                    };
                    let micros = count.max(0) as u64 * unit_us;
                    tokio::time::sleep(Duration::from_micros(micros)).await;
                }
                Op::Shell { var, words } => {
                    let output = self.shell(words, var.is_some()).await.map_err(fail)?;
                    if let Some(var) = var {
                        let trimmed = output.trim();
                        let value = trimmed.parse::<i64>().map_err(|_| {
                            fail(EvalError(format!(
                                "\\setshell: shell command must return an integer (not \"{trimmed}\")"
                            )))
                        })?;
                        self.vars.set(var, Value::Int(value));
                    }
                }
                Op::If { cond, on_false } => {
                    if !evaluate(cond, &mut eval).map_err(fail)?.truth() {
                        (next, jumped) = (*on_false, true);
                    }
                }
                Op::Elif {
                    cond,
                    on_false,
                    end,
                } => {
                    if !arrived_by_jump {
                        next = *end;
                    } else if !evaluate(cond, &mut eval).map_err(fail)?.truth() {
                        (next, jumped) = (*on_false, true);
                    }
                }
                Op::Else { end } => {
                    if !arrived_by_jump {
                        next = *end;
                    }
                }
                Op::Endif => {}
            }
            at = next;
        }
        Ok(TxnOutcome {
            kind,
            queries,
            tally: Default::default(),
        })
    }

    async fn sql(
        &mut self,
        conn: &mut Connection,
        sql: &SqlCommand,
        prepared: Option<usize>,
        queries: &mut QueryCounts,
    ) -> Result<(), SqlFailure> {
        if let (Some(index), None) = (prepared, &sql.store) {
            self.values.clear();
            for name in sql.variables() {
                let mut text = String::new();
                if !self.vars.write_text(name, &mut text) {
                    return Err(SqlFailure::Script(format!("undefined variable \"{name}\"")));
                }
                self.values.push(text);
            }
            let params: Vec<Param<'_>> = self.values.iter().map(|v| Param::Text(v)).collect();
            let outcome = conn.execute(index, &params).await?;
            queries.count(&outcome);
            return Ok(());
        }
        self.render(sql);
        match &sql.store {
            None => {
                let outcome = conn.batch(&self.text).await?;
                queries.count(&outcome);
            }
            Some(store) => {
                let sets = conn.query_sets(&self.text).await?;
                for set in &sets {
                    queries.count(&QueryOutcome {
                        rows_returned: set.rows.len() as u64,
                        rows_affected: 0,
                        returned_result_set: !set.columns.is_empty(),
                    });
                }
                self.store(store, &sets)?;
            }
        }
        Ok(())
    }

    /// `\gset`: the last statement's one row; `\aset`: the first row of every statement that
    /// returned any.
    fn store(&mut self, store: &Store, sets: &[ResultSet]) -> Result<(), SqlFailure> {
        let chosen: Vec<&ResultSet> = if store.all {
            sets.iter().filter(|s| !s.rows.is_empty()).collect()
        } else {
            let last = sets.last();
            let rows = last.map_or(0, |s| s.rows.len());
            if rows != 1 {
                return Err(SqlFailure::Script(format!("expected one row, got {rows}")));
            }
            last.into_iter().collect()
        };
        for set in chosen {
            for (column, value) in set.columns.iter().zip(&set.rows[0]) {
                let name = format!("{}{column}", store.prefix);
                if !valid_name(&name) {
                    return Err(SqlFailure::Script(format!(
                        "error storing into variable {name}"
                    )));
                }
                match value {
                    Some(text) => self.vars.set_text(&name, text.clone()),
                    None => self.vars.set(&name, Value::Null),
                }
            }
        }
        Ok(())
    }

    /// The SQL text with the variables in place; an undefined one stays as written (pgbench).
    fn render(&mut self, sql: &SqlCommand) {
        let text = &mut self.text;
        text.clear();
        let mut value = String::new();
        for part in &sql.parts {
            match part {
                SqlPart::Text(t) => text.push_str(t),
                SqlPart::Var(name) => {
                    if !self.vars.write_text(name, text) {
                        text.push(':');
                        text.push_str(name);
                    }
                }
                SqlPart::Literal(name) | SqlPart::Identifier(name) => {
                    value.clear();
                    let literal = matches!(part, SqlPart::Literal(_));
                    if !self.vars.write_text(name, &mut value) {
                        let q = if literal { '\'' } else { '"' };
                        text.push_str(&format!(":{q}{name}{q}"));
                    } else if literal {
                        quote_literal(&value, self.mix.dialect, text);
                    } else {
                        quote_identifier(&value, self.mix.dialect, text);
                    }
                }
            }
        }
    }

    /// `\shell` and `\setshell`: the words (variables in place, `::` for a literal colon) run
    /// by `sh -c`; the output when it is wanted.
    async fn shell(&self, words: &[Word], capture: bool) -> Result<String, EvalError> {
        let mut line = String::new();
        for (i, word) in words.iter().enumerate() {
            if i > 0 {
                line.push(' ');
            }
            match word {
                Word::Text(t) => line.push_str(t),
                Word::Var(name) => {
                    if !self.vars.write_text(name, &mut line) {
                        return Err(EvalError(format!("undefined variable \"{name}\"")));
                    }
                }
            }
        }
        let mut command = tokio::process::Command::new("sh");
        command
            .arg("-c")
            .arg(&line)
            .stdin(std::process::Stdio::null());
        if !capture {
            command.stdout(std::process::Stdio::null());
        }
        let output = command
            .output()
            .await
            .map_err(|e| EvalError(format!("could not launch shell command: {e}")))?;
        if !output.status.success() {
            return Err(EvalError(format!("shell command failed: {line}")));
        }
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    }
}

fn quote_literal(value: &str, dialect: Dialect, out: &mut String) {
    out.push('\'');
    for c in value.chars() {
        match c {
            '\'' => out.push_str("''"),
            '\\' if dialect == Dialect::Mysql => out.push_str("\\\\"),
            _ => out.push(c),
        }
    }
    out.push('\'');
}

fn quote_identifier(value: &str, dialect: Dialect, out: &mut String) {
    let q = if dialect == Dialect::Mysql { '`' } else { '"' };
    out.push(q);
    for c in value.chars() {
        if c == q {
            out.push(q);
        }
        out.push(c);
    }
    out.push(q);
}

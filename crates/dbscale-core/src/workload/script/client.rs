//! Running scripts: a client picks a script by weight (as pgbench's `chooseScript` does) and runs
//! its commands with its own variables, timing each one. SQL goes out with the variables' text in
//! place under the simple protocol (pgbench's default), or as prepared statements with the values
//! bound as text (`sql_command`); in a pipeline it queues until the sync point. A run-time error
//! fails the transaction under the class `script FILE:LINE: ...`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::Rng;

mod sql_command;

use sql_command::located;

use super::eval::{evaluate, Context};
use super::model::{Command, Op, Script, Word};
use super::shell::{setshell_value, shell};
use super::value::{EvalError, Value};
use super::vars::{valid_name, Variables};
use crate::driver::{Connection, DbError, Dialect};
use crate::stats::commands::CommandTally;
use crate::stats::counts::QueryCounts;
use crate::workload::TxnOutcome;

/// What every client of a run shares: the scripts, their weights, how SQL travels, and the
/// variables each client starts with.
#[derive(Debug)]
pub struct ScriptMix {
    pub scripts: Vec<Script>,
    pub weights: Vec<u64>,
    pub dialect: Dialect,
    /// Per script and command: its prepared statement's index, when it runs prepared.
    pub statement_of: Vec<Vec<Option<usize>>>,
    /// Where each script's commands start in the flattened per-command tallies.
    pub offsets: Vec<usize>,
    /// `--define` values (text), then the automatic variables not defined by them.
    pub initial: Vec<(String, Value)>,
    pub defines: Vec<(String, String)>,
}

pub struct ScriptClient {
    mix: Arc<ScriptMix>,
    vars: Variables,
    text: String,
    values: Vec<String>,
    tallies: Vec<CommandTally>,
    /// In pipeline mode: SQL commands queue up until the next sync point.
    in_pipeline: bool,
    /// The script of the transaction under way (its type, also when it fails).
    kind: usize,
}

/// Where a script run stands: which script, which command, whether it got there by a jump.
#[derive(Clone, Copy)]
struct Step {
    script: usize,
    at: usize,
    jumped: bool,
}

/// A variable's name checked as pgbench checks it when a command stores a value.
fn checked_name(command: &str, name: &str) -> Result<(), EvalError> {
    if valid_name(name) {
        Ok(())
    } else {
        Err(EvalError(format!(
            "{command}: invalid variable name: \"{name}\""
        )))
    }
}

/// C's `atoi` as pgbench uses it for a sleep variable: leading blanks, a sign, the digits that
/// follow; None when there is no digit (pgbench's "invalid sleep time").
fn leading_integer(text: &str) -> Option<i64> {
    let trimmed = text.trim_start();
    let sign = usize::from(trimmed.starts_with(['+', '-']));
    let digits = trimmed[sign..]
        .bytes()
        .take_while(u8::is_ascii_digit)
        .count();
    if digits == 0 {
        return None;
    }
    trimmed[..sign + digits].parse::<i64>().ok()
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

impl ScriptClient {
    /// The type (script) of the transaction under way or last run.
    pub fn kind(&self) -> usize {
        self.kind
    }

    pub fn new(mix: Arc<ScriptMix>, client_id: u32) -> Self {
        let mut vars = Variables::default();
        for (name, text) in &mix.defines {
            vars.set_text(name, text.clone());
        }
        for (name, value) in &mix.initial {
            vars.set(name, *value);
        }
        vars.set("client_id", Value::Int(i64::from(client_id)));
        let commands: usize = mix.scripts.iter().map(|s| s.commands.len()).sum();
        Self {
            mix,
            vars,
            text: String::new(),
            values: Vec::new(),
            tallies: vec![CommandTally::default(); commands],
            in_pipeline: false,
            kind: 0,
        }
    }

    /// Runs one script, chosen by weight, from its first command to its last; each command's
    /// time goes into its tally, a failed one counts as its failure.
    pub async fn run(
        &mut self,
        conn: &mut Connection,
        rng: &mut SmallRng,
    ) -> Result<TxnOutcome, DbError> {
        let mix = self.mix.clone();
        let kind = mix.choose(rng);
        self.kind = kind;
        // A transaction dropped mid-pipeline (its future cancelled) left no pipeline behind.
        self.in_pipeline = false;
        let script = &mix.scripts[kind];
        let mut queries = QueryCounts::default();
        let (mut at, mut jumped) = (0, false);
        while at < script.commands.len() {
            let began = Instant::now();
            let step = Step {
                script: kind,
                at,
                jumped,
            };
            let stepped = self.step(conn, rng, &mix, step, &mut queries).await;
            let tally = &mut self.tallies[mix.offsets[kind] + at];
            match stepped {
                Ok(next) => {
                    tally.add(began.elapsed().as_secs_f64() * 1e6);
                    (at, jumped) = next;
                }
                Err(error) => {
                    tally.failures += 1;
                    self.in_pipeline = false;
                    return Err(error);
                }
            }
        }
        let last = script.commands.last().expect("a script has commands");
        if std::mem::take(&mut self.in_pipeline) {
            return Err(DbError::script(
                &place(script, last),
                "end of script reached with pipeline open",
            ));
        }
        if conn.in_transaction() {
            // pgbench aborts such a client; the transaction is rolled back with the error.
            return Err(DbError::script(
                &place(script, last),
                "end of script reached without completing the last transaction",
            ));
        }
        Ok(TxnOutcome {
            kind,
            queries,
            tally: Default::default(),
        })
    }

    /// Every command's sums so far, script after script.
    pub fn command_tallies(&self) -> &[CommandTally] {
        &self.tallies
    }

    /// Runs one command; where to go next and whether that is a jump.
    async fn step(
        &mut self,
        conn: &mut Connection,
        rng: &mut SmallRng,
        mix: &ScriptMix,
        step: Step,
        queries: &mut QueryCounts,
    ) -> Result<(usize, bool), DbError> {
        let script = &mix.scripts[step.script];
        let command = &script.commands[step.at];
        let fail = |e: EvalError| DbError::script(&place(script, command), &e.0);
        let mut eval = Eval {
            vars: &self.vars,
            rng,
            script: step.script,
            command: step.at,
        };
        let next = step.at + 1;
        let truth = |value: Result<Value, EvalError>| value.map(Value::truth).map_err(fail);
        match &command.op {
            Op::Sql(sql) => {
                let prepared = mix.statement_of[step.script][step.at];
                self.sql(conn, sql, prepared, queries, self.in_pipeline)
                    .await
                    .map_err(|e| located(e, script, command))?;
            }
            Op::StartPipeline => {
                if self.in_pipeline {
                    return Err(fail(EvalError("already in pipeline mode".into())));
                }
                conn.pipeline_begin()
                    .await
                    .map_err(|e| located(e.into(), script, command))?;
                self.in_pipeline = true;
            }
            Op::SyncPipeline | Op::EndPipeline => {
                if !std::mem::take(&mut self.in_pipeline) {
                    return Err(fail(EvalError("not in pipeline mode".into())));
                }
                self.sync_pipeline(conn, queries)
                    .await
                    .map_err(|e| located(e, script, command))?;
                self.in_pipeline = matches!(command.op, Op::SyncPipeline);
            }
            Op::Set { var, expr } => {
                let value = evaluate(expr, &mut eval).map_err(fail)?;
                checked_name("set", var).map_err(fail)?;
                self.vars.set(var, value);
            }
            Op::Sleep { amount, unit_us } => {
                let count = match amount {
                    Word::Text(t) => leading_integer(t).unwrap_or(0),
                    // pgbench reads the variable's text as atoi does: `1.5` sleeps 1.
                    Word::Var(name) => {
                        let mut text = String::new();
                        if !self.vars.write_text(name, &mut text) {
                            let undefined = format!("sleep: undefined variable \"{name}\"");
                            return Err(fail(EvalError(undefined)));
                        }
                        let count = leading_integer(&text).unwrap_or(0);
                        if count == 0 && !text.starts_with(|c: char| c.is_ascii_digit()) {
                            let bad = format!(
                                "sleep: invalid sleep time \"{text}\" for variable \"{name}\""
                            );
                            return Err(fail(EvalError(bad)));
                        }
                        count
                    }
                };
                let micros = count.max(0) as u64 * unit_us;
                tokio::time::sleep(Duration::from_micros(micros)).await;
            }
            Op::Shell { var, words } => {
                let output = shell(&self.vars, words, var.is_some())
                    .await
                    .map_err(fail)?;
                if let Some(var) = var {
                    let value = setshell_value(words, &output).map_err(fail)?;
                    checked_name("setshell", var).map_err(fail)?;
                    self.vars.set(var, Value::Int(value));
                }
            }
            Op::If { cond, on_false } => {
                if !truth(evaluate(cond, &mut eval))? {
                    return Ok((*on_false, true));
                }
            }
            Op::Elif {
                cond,
                on_false,
                end,
            } => {
                if !step.jumped {
                    return Ok((*end, false));
                }
                if !truth(evaluate(cond, &mut eval))? {
                    return Ok((*on_false, true));
                }
            }
            Op::Else { end } => {
                if !step.jumped {
                    return Ok((*end, false));
                }
            }
            Op::Endif => {}
        }
        Ok((next, false))
    }
}

#[cfg(test)]
mod tests {
    use super::leading_integer;

    #[test]
    fn a_sleep_variable_is_read_as_atoi_reads_it() {
        assert_eq!(leading_integer("1.5"), Some(1));
        assert_eq!(leading_integer("  -2.7"), Some(-2));
        assert_eq!(leading_integer("12abc"), Some(12));
        assert_eq!(leading_integer("+3"), Some(3));
        assert_eq!(leading_integer("abc"), None);
        assert_eq!(leading_integer(""), None);
    }
}

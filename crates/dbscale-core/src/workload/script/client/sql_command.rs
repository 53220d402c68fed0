//! An SQL command of a script: its text with the variables in place (simple protocol) or its
//! prepared statement with the values bound as text; `\gset`/`\aset` results stored.

use super::{place, ScriptClient};
use crate::driver::{Connection, DbError, Dialect, Param, QueryOutcome, ResultSet};
use crate::stats::counts::QueryCounts;
use crate::workload::script::model::{Command, Script, SqlCommand, SqlPart, Store};
use crate::workload::script::vars::valid_name;

/// A statement's result counted the way [`QueryCounts::count`] counts outcomes.
fn count_set(set: &ResultSet, queries: &mut QueryCounts) {
    queries.count(&QueryOutcome {
        rows_returned: set.rows.len() as u64,
        rows_affected: 0,
        returned_result_set: !set.columns.is_empty(),
    });
}

/// Placed where it happened: a script error gets its class from the place; a server error keeps
/// its class (so retries and counts work as for any workload) and its message gains the place.
pub(super) fn located(error: SqlFailure, script: &Script, command: &Command) -> DbError {
    match error {
        SqlFailure::Script(message) => DbError::script(&place(script, command), &message),
        SqlFailure::Server(mut error) => {
            error.message = format!("{}: {}", place(script, command), error.message);
            error
        }
    }
}

/// Why an SQL command failed: the script (undefined variable, `\gset` row count) or the server.
pub(super) enum SqlFailure {
    Script(String),
    Server(DbError),
}

impl From<DbError> for SqlFailure {
    fn from(error: DbError) -> Self {
        SqlFailure::Server(error)
    }
}

impl ScriptClient {
    /// Runs an SQL command; in a pipeline, queues it (its results come at the sync point).
    pub(super) async fn sql(
        &mut self,
        conn: &mut Connection,
        sql: &SqlCommand,
        prepared: Option<usize>,
        queries: &mut QueryCounts,
        pipelined: bool,
    ) -> Result<(), SqlFailure> {
        let Some(index) = prepared else {
            self.render(sql);
            match &sql.store {
                None => queries.count(&conn.batch(&self.text).await?),
                Some(store) => {
                    let sets = conn.query_sets(&self.text).await?;
                    self.take_results(store, &sets, queries)?;
                }
            }
            return Ok(());
        };
        // The values' text, in buffers kept from one statement to the next.
        let count = sql.variables().count();
        if self.values.len() < count {
            self.values.resize_with(count, String::new);
        }
        for (text, name) in self.values.iter_mut().zip(sql.variables()) {
            text.clear();
            if !self.vars.write_text(name, text) {
                return Err(SqlFailure::Script(format!("undefined variable \"{name}\"")));
            }
        }
        let params: Vec<Param<'_>> = self.values[..count]
            .iter()
            .map(|v| Param::Text(v))
            .collect();
        if pipelined {
            if let Some(store) = &sql.store {
                let meta = if store.all { "aset" } else { "gset" };
                return Err(SqlFailure::Script(format!(
                    "\\{meta} is not allowed in pipeline mode"
                )));
            }
            conn.pipeline_push(index, &params)?;
            return Ok(());
        }
        match &sql.store {
            None => queries.count(&conn.execute(index, &params).await?),
            Some(store) => {
                let sets = conn.execute_sets(index, &params).await?;
                self.take_results(store, &sets, queries)?;
            }
        }
        Ok(())
    }

    /// A sync point: the queued commands go, and each one's result is counted.
    pub(super) async fn sync_pipeline(
        &mut self,
        conn: &mut Connection,
        queries: &mut QueryCounts,
    ) -> Result<(), SqlFailure> {
        for set in conn.pipeline_sync().await? {
            count_set(&set, queries);
        }
        Ok(())
    }

    fn take_results(
        &mut self,
        store: &Store,
        sets: &[ResultSet],
        queries: &mut QueryCounts,
    ) -> Result<(), SqlFailure> {
        for set in sets {
            count_set(set, queries);
        }
        self.store(store, sets)
    }

    /// `\gset`: the last statement's one row; `\aset`: the last row of every statement that
    /// returned any (pgbench's). A NULL is stored as pgbench stores it, as empty text.
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
            let row = set.rows.last().expect("chosen sets have rows");
            for (column, value) in set.columns.iter().zip(row) {
                let name = format!("{}{column}", store.prefix);
                if !valid_name(&name) {
                    let command = if store.all { "aset" } else { "gset" };
                    // pgbench's two lines, the name's refusal and the store that failed.
                    return Err(SqlFailure::Script(format!(
                        "{command}: invalid variable name: \"{name}\"; error storing into \
                         variable {name}"
                    )));
                }
                self.vars.set_text(&name, value.clone().unwrap_or_default());
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

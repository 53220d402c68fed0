//! The `script` workload: a weighted mix of pgbench script files and built-ins, each script run
//! being one transaction of its own type (named after the file or the built-in).

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use super::builtin::{builtin, builtin_names};
use super::client::{ScriptClient, ScriptMix};
use super::model::{Op, Script, SqlCommand, SqlPart};
use super::parse::parse_script;
use super::permute::default_seed;
use super::value::Value;
use super::vars::valid_name;
use crate::config::WorkloadConfig;
use crate::driver::{numbered_placeholders, Connection, Dialect, QueryProtocol, Statement};
use crate::stats::commands::CommandPlace;
use crate::workload::tpcb::Tpcb;
use crate::workload::{ParamSpec, Params, WorkloadInfo};
use crate::Error;

pub const NAME: &str = "script";

const PARAMS: &[ParamSpec] = &[
    ParamSpec::int("scale", 1, ":scale in custom scripts (pgbench -s); with a built-in in the mix it is read from pgbench_branches"),
    ParamSpec::bool("vacuum", true, "with a built-in in the mix: before a run vacuum branches and tellers and truncate history (pgbench without -n)"),
];

pub fn catalog() -> Vec<WorkloadInfo> {
    vec![WorkloadInfo {
        name: NAME,
        aliases: &[],
        family: crate::workload::Family::Script,
        description:
            "pgbench script files (script:FILE[@WEIGHT]) and TPC-B built-ins in a weighted mix",
        params: PARAMS,
    }]
}

#[derive(Debug, Clone)]
pub struct ScriptWorkload {
    scripts: Vec<Script>,
    weights: Vec<u64>,
    defines: BTreeMap<String, String>,
    params: Params,
    /// For the data checks and maintenance of built-ins in the mix.
    tpcb: Option<Tpcb>,
    seed: u64,
    /// The run's clients (every worker's): pgbench's `:default_seed` depends on their count.
    clients: u32,
    protocol: QueryProtocol,
    dialect: Dialect,
    /// Per script and command, its statement's index (see [`ScriptWorkload::statements`]).
    statement_of: Vec<Vec<Option<usize>>>,
    /// Built for the first client, once the data check has settled `:scale`.
    mix: OnceLock<Arc<ScriptMix>>,
}

/// The most variables one SQL command may bind under the extended and prepared protocols
/// (pgbench's MAX_ARGS less one); the simple protocol, which sends text, has no such limit.
const MAX_BOUND_VARIABLES: usize = 255;

/// A SQL command as written (variables as `:name`), for messages.
fn sql_text(sql: &SqlCommand) -> String {
    sql.parts
        .iter()
        .map(|part| match part {
            SqlPart::Text(t) => t.clone(),
            SqlPart::Var(name) => format!(":{name}"),
            SqlPart::Literal(name) => format!(":'{name}'"),
            SqlPart::Identifier(name) => format!(":\"{name}\""),
        })
        .collect()
}

fn script_error(e: impl std::fmt::Display) -> Error {
    Error::Script(e.to_string())
}

impl ScriptWorkload {
    pub fn from_config(config: &WorkloadConfig) -> Result<Option<Self>, Error> {
        if config.name != NAME {
            return Ok(None);
        }
        let params = Params::resolve(NAME, PARAMS, &config.params)?;
        if config.scripts.is_empty() {
            return Err(Error::Config(
                "the script workload needs at least one script".into(),
            ));
        }
        let (mut scripts, mut weights, mut builtin_used) = (Vec::new(), Vec::new(), false);
        for source in &config.scripts {
            let script = match &source.text {
                Some(text) => parse_script(&source.name, text).map_err(script_error)?,
                None => {
                    let Some((name, text)) = builtin(&source.name) else {
                        return Err(Error::Config(format!(
                            "no built-in script {:?}; built-ins: {}",
                            source.name,
                            builtin_names().join(", ")
                        )));
                    };
                    builtin_used = true;
                    parse_script(name, text).map_err(script_error)?
                }
            };
            // Each script is a transaction type, by name.
            if scripts.iter().any(|s: &Script| s.name == script.name) {
                return Err(Error::Config(format!(
                    "script {} is in the mix twice; give it once with the weights added up",
                    script.name
                )));
            }
            scripts.push(script);
            weights.push(u64::from(source.weight));
        }
        if weights.iter().all(|w| *w == 0) {
            return Err(Error::Config("total script weight must not be zero".into()));
        }
        if let Some(bad) = config.defines.keys().find(|name| !valid_name(name)) {
            return Err(Error::Config(format!(
                "--define: invalid variable name: \"{bad}\""
            )));
        }
        let tpcb = if builtin_used {
            let mut tpcb_params = BTreeMap::new();
            tpcb_params.insert("vacuum".to_string(), params.bool("vacuum").into());
            let tpcb_config = WorkloadConfig {
                name: "tpcb".into(),
                params: tpcb_params,
                ..Default::default()
            };
            Tpcb::from_config(&tpcb_config)?
        } else {
            None
        };
        Ok(Some(Self {
            scripts,
            weights,
            defines: config.defines.clone(),
            params,
            tpcb,
            seed: 0,
            clients: 1,
            protocol: QueryProtocol::Simple,
            dialect: Dialect::Postgres,
            statement_of: Vec::new(),
            mix: OnceLock::new(),
        }))
    }

    pub fn params(&self) -> &Params {
        &self.params
    }

    /// One transaction type per script, named after it.
    pub fn transaction_types(&self) -> Vec<String> {
        self.scripts.iter().map(|s| s.name.clone()).collect()
    }

    /// What the run decides: its seed (`:random_seed`, and with the run's client count
    /// `:default_seed`) and how SQL travels.
    pub fn bind_run(&mut self, seed: u64, protocol: QueryProtocol, clients: u32) {
        self.seed = seed;
        self.protocol = protocol;
        self.clients = clients;
    }

    /// Under the extended and prepared protocols, each SQL command becomes a statement with
    /// placeholders, its variables bound as text at run time; under the simple protocol there
    /// are none (the text goes with the values in place). A pipeline needs the former.
    pub fn statements(&mut self, dialect: Dialect) -> Result<Vec<Statement>, Error> {
        self.dialect = dialect;
        let inline = self.protocol == QueryProtocol::Simple;
        let mut statements = Vec::new();
        let mut statement_of = Vec::new();
        for script in &self.scripts {
            let mut indexes = Vec::new();
            for command in &script.commands {
                let index = match &command.op {
                    Op::StartPipeline if inline => {
                        return Err(Error::Script(format!(
                            "{}:{}: cannot use pipeline mode with the simple query protocol",
                            script.name, command.line
                        )));
                    }
                    Op::StartPipeline if dialect == Dialect::Mysql => {
                        return Err(Error::Script(format!(
                            "{}:{}: pipeline mode needs PostgreSQL (MySQL's protocol has none)",
                            script.name, command.line
                        )));
                    }
                    Op::Sql(sql) if !inline => {
                        let mut text = String::new();
                        for part in &sql.parts {
                            match part {
                                SqlPart::Text(t) => text.push_str(t),
                                SqlPart::Identifier(name) => {
                                    return Err(Error::Script(format!(
                                    "{}:{}: :\"{name}\" (an identifier) needs --protocol simple",
                                    script.name, command.line
                                )))
                                }
                                _ => text.push('?'),
                            }
                        }
                        let bound = sql.parts.iter().filter(|p| !matches!(p, SqlPart::Text(_)));
                        if bound.count() > MAX_BOUND_VARIABLES {
                            return Err(Error::Script(format!(
                                "{}:{}: statement has too many arguments (maximum is \
                                 {MAX_BOUND_VARIABLES}): {}",
                                script.name,
                                command.line,
                                sql_text(sql)
                            )));
                        }
                        let label = format!("{}:{}", script.name, command.line);
                        statements
                            .push(Statement::new(label, numbered_placeholders(&text, dialect)));
                        Some(statements.len() - 1)
                    }
                    _ => None,
                };
                indexes.push(index);
            }
            statement_of.push(indexes);
        }
        self.statement_of = statement_of;
        Ok(statements)
    }

    /// With a built-in in the mix, its tables must be there and `:scale` is theirs.
    pub async fn check(&mut self, conn: &mut Connection) -> Result<(), Error> {
        if let Some(tpcb) = &mut self.tpcb {
            if conn.dialect() != Dialect::Postgres {
                return Err(Error::Config(
                    "the TPC-B built-ins run on PostgreSQL-compatible targets only".into(),
                ));
            }
            tpcb.check(conn).await?;
            self.params.set("scale", tpcb.params().int("scale").into());
        }
        Ok(())
    }

    pub async fn before_run(&self, conn: &mut Connection) -> Result<(), Error> {
        match &self.tpcb {
            Some(tpcb) => tpcb.before_run(conn).await,
            None => Ok(()),
        }
    }

    /// Every command's place, script after script (the order of the clients' tallies).
    pub fn command_places(&self) -> Vec<CommandPlace> {
        self.scripts
            .iter()
            .flat_map(|script| {
                script.commands.iter().map(|c| CommandPlace {
                    script: script.name.clone(),
                    line: c.line,
                    text: c.text.clone(),
                })
            })
            .collect()
    }

    pub fn client(&self, client_id: u32) -> ScriptClient {
        let mix = self.mix.get_or_init(|| Arc::new(self.mix_for_clients()));
        ScriptClient::new(mix.clone(), client_id)
    }

    /// The scripts with what every client starts from: `--define` values, then pgbench's
    /// automatic variables where they did not define them.
    fn mix_for_clients(&self) -> ScriptMix {
        let mut initial = vec![
            ("random_seed".to_string(), Value::Int(self.seed as i64)),
            // As pgbench draws it: the same seed and client count give the same value.
            (
                "default_seed".to_string(),
                Value::Int(default_seed(self.seed, self.clients)),
            ),
            ("scale".to_string(), Value::Int(self.params.int("scale"))),
        ];
        initial.retain(|(name, _)| !self.defines.contains_key(name));
        let offsets = self
            .scripts
            .iter()
            .scan(0, |next, script| {
                let at = *next;
                *next += script.commands.len();
                Some(at)
            })
            .collect();
        ScriptMix {
            offsets,
            scripts: self.scripts.clone(),
            weights: self.weights.clone(),
            dialect: self.dialect,
            statement_of: self.statement_of.clone(),
            initial,
            defines: self
                .defines
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        }
    }
}

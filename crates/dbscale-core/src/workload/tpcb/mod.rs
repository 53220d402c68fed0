//! pgbench's built-in TPC-B family: `tpcb` (tpcb-like), `tpcb-simple-update` (-N) and
//! `tpcb-select-only` (-S), with pgbench's tables, data, statements and random ranges, so results
//! compare with pgbench's and either tool runs on data the other loaded.

mod loader;
mod script;

use crate::config::WorkloadConfig;
use crate::driver::{Connection, DbError, Dialect, Statement};
use crate::workload::{ParamSpec, Params, WorkloadInfo};
use crate::Error;
pub use script::TpcbClient;

/// Rows per scale unit, as in pgbench.
pub const BRANCHES_PER_SCALE: i64 = 1;
pub const TELLERS_PER_SCALE: i64 = 10;
pub const ACCOUNTS_PER_SCALE: i64 = 100_000;
/// From this scale on `aid` columns are bigint (pgbench's SCALE_32BIT_THRESHOLD).
pub const BIGINT_SCALE: i64 = 20_000;

const PARAMS: &[ParamSpec] = &[
    ParamSpec::int("scale", 1, "scale factor: 1 branch, 10 tellers, 100000 accounts per unit (pgbench -s); a run reads it from pgbench_branches"),
    ParamSpec::int("fillfactor", 100, "fillfactor of accounts, tellers and branches, 10-100 (pgbench -F)"),
    ParamSpec::bool("foreign_keys", false, "create foreign keys between the tables (pgbench --foreign-keys)"),
    ParamSpec::bool("unlogged", false, "create unlogged tables (pgbench --unlogged-tables)"),
    ParamSpec::int("partitions", 0, "partition pgbench_accounts into this many partitions (pgbench --partitions)"),
    ParamSpec::str("partition_method", "range", "range or hash (pgbench --partition-method)"),
    ParamSpec::bool("vacuum", true, "before a run vacuum branches and tellers and truncate history (pgbench without -n)"),
    ParamSpec::bool("vacuum_accounts", false, "before a run also vacuum analyze pgbench_accounts (pgbench -v)"),
];

/// Which of pgbench's built-in scripts a client runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TpcbScript {
    TpcbLike,
    SimpleUpdate,
    SelectOnly,
}

const VARIANTS: &[(&str, &[&str], TpcbScript, &str)] = &[
    (
        "tpcb",
        &["tpcb-like", "pgbench"],
        TpcbScript::TpcbLike,
        "pgbench's default TPC-B-like transaction: 3 updates, 1 select, 1 insert",
    ),
    (
        "tpcb-simple-update",
        &["simple-update"],
        TpcbScript::SimpleUpdate,
        "pgbench -N: update accounts, select, insert history",
    ),
    (
        "tpcb-select-only",
        &["select-only"],
        TpcbScript::SelectOnly,
        "pgbench -S: one primary-key select on pgbench_accounts",
    ),
];

pub fn catalog() -> Vec<WorkloadInfo> {
    VARIANTS
        .iter()
        .map(|(name, aliases, _, description)| WorkloadInfo {
            name,
            aliases,
            family: crate::workload::Family::Tpcb,
            description,
            params: PARAMS,
        })
        .collect()
}

#[derive(Debug, Clone)]
pub struct Tpcb {
    name: &'static str,
    script: TpcbScript,
    params: Params,
}

impl Tpcb {
    /// `Ok(None)` when the name is not one of this family's.
    pub fn from_config(config: &WorkloadConfig) -> Result<Option<Self>, Error> {
        let Some((name, _, script, _)) = VARIANTS.iter().find(|(name, aliases, _, _)| {
            *name == config.name || aliases.contains(&config.name.as_str())
        }) else {
            return Ok(None);
        };
        let params = Params::resolve(name, PARAMS, &config.params)?;
        let scale = params.int("scale");
        if scale < 1 {
            return Err(Error::Config(format!(
                "{name}: scale must be at least 1, got {scale}"
            )));
        }
        let fillfactor = params.int("fillfactor");
        if !(10..=100).contains(&fillfactor) {
            return Err(Error::Config(format!(
                "{name}: fillfactor must be 10-100, got {fillfactor}"
            )));
        }
        if params.int("partitions") < 0 {
            return Err(Error::Config(format!(
                "{name}: partitions must be 0 or more"
            )));
        }
        if !matches!(params.str("partition_method"), "range" | "hash") {
            return Err(Error::Config(format!(
                "{name}: partition_method must be range or hash, got {:?}",
                params.str("partition_method")
            )));
        }
        Ok(Some(Self {
            name,
            script: *script,
            params,
        }))
    }

    pub fn name(&self) -> &'static str {
        self.name
    }

    pub fn params(&self) -> &Params {
        &self.params
    }

    pub fn transaction_types(&self) -> &'static [&'static str] {
        match self.script {
            TpcbScript::TpcbLike => &["tpcb-like"],
            TpcbScript::SimpleUpdate => &["simple-update"],
            TpcbScript::SelectOnly => &["select-only"],
        }
    }

    pub fn statements(&self, dialect: Dialect) -> Result<Vec<Statement>, Error> {
        if dialect != Dialect::Postgres {
            return Err(Error::Config(format!(
                "{} runs on PostgreSQL-compatible targets only",
                self.name
            )));
        }
        Ok(script::statements(self.script))
    }

    /// Reads the scale from pgbench_branches, like pgbench does at run time.
    pub async fn check(&mut self, conn: &mut Connection) -> Result<(), Error> {
        let rows = conn
            .query("select count(*) from pgbench_branches")
            .await
            .map_err(not_prepared)?;
        conn.query("select aid from pgbench_accounts limit 1")
            .await
            .map_err(not_prepared)?;
        let found: i64 = rows
            .first()
            .and_then(|r| r.first().cloned().flatten())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        if found < 1 {
            return Err(Error::NotPrepared(
                "pgbench_branches is empty: the TPC-B data is not loaded".into(),
            ));
        }
        if self.params.is_explicit("scale") && self.params.int("scale") != found {
            return Err(Error::NotPrepared(
                format!(
                    "the tables hold scale {found} but scale={} was asked",
                    self.params.int("scale")
                )
                .into(),
            ));
        }
        self.params.set("scale", found.into());
        Ok(())
    }

    pub async fn before_run(&self, conn: &mut Connection) -> Result<(), Error> {
        let mut steps = Vec::new();
        if self.params.bool("vacuum") {
            steps.extend([
                "vacuum pgbench_branches",
                "vacuum pgbench_tellers",
                "truncate pgbench_history",
            ]);
        }
        if self.params.bool("vacuum_accounts") {
            steps.push("vacuum analyze pgbench_accounts");
        }
        for sql in steps {
            conn.batch(sql).await.map_err(|source| Error::Sql {
                context: format!("before the run: {sql}"),
                source,
            })?;
        }
        Ok(())
    }

    pub fn client(&self, _client_id: u32) -> TpcbClient {
        TpcbClient::new(self.script, self.params.int("scale"))
    }
}

fn not_prepared(e: DbError) -> Error {
    if e.code.as_deref() == Some("42P01") {
        Error::NotPrepared(format!("TPC-B tables are missing ({})", e.message).into())
    } else {
        Error::Sql {
            context: "checking the TPC-B tables".into(),
            source: e,
        }
    }
}

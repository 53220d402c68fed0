//! YCSB's core workloads A-F on PostgreSQL and MySQL/MariaDB: the JDBC binding's `usertable`,
//! YCSB's key names, field values, operation mixes and request distributions with its generators
//! and constants (the scrambled Zipfian with 0.99, latest, hotspot, uniform), so the access pattern
//! is YCSB's and figures sit beside YCSB's and go-ycsb's. Each operation is one transaction of
//! its type (`read`, `update`, `insert`, `scan`, `read_modify_write`), autocommitted.

mod catalog;
mod client;
pub mod generators;
mod keys;
mod loader;
mod options;
mod statements;

use std::sync::Arc;

use crate::config::WorkloadConfig;
use crate::driver::{Connection, DbError, Dialect, Statement};
use crate::error::Unprepared;
use crate::workload::loading::missing_or_failed;
use crate::workload::Params;
use crate::Error;
pub use catalog::catalog;
use catalog::VARIANTS;
pub use client::{KeyChooser, YcsbClient};
use keys::InsertSequence;
pub use options::{Operation, Options, TRANSACTION_TYPES};

/// A core workload as a run resolved it.
#[derive(Debug, Clone)]
pub struct Ycsb {
    name: &'static str,
    params: Params,
    options: Arc<Options>,
    /// Rows found by the run's check: the keys `insert_start..insert_start + existing`.
    existing: u64,
    inserts: Arc<InsertSequence>,
}

impl Ycsb {
    /// `Ok(None)` when the name is not one of this family's.
    pub fn from_config(config: &WorkloadConfig) -> Result<Option<Self>, Error> {
        let Some(variant) = VARIANTS
            .iter()
            .find(|v| v.name == config.name || v.aliases.contains(&config.name.as_str()))
        else {
            return Ok(None);
        };
        let params = Params::resolve(variant.name, variant.params, &config.params)?;
        let options = Options::resolve(variant.name, &params)?;
        let existing = options.record_count;
        let inserts = Arc::new(InsertSequence::new(options.insert_start + existing));
        Ok(Some(Self {
            name: variant.name,
            params,
            options: Arc::new(options),
            existing,
            inserts,
        }))
    }

    pub fn name(&self) -> &'static str {
        self.name
    }

    pub fn params(&self) -> &Params {
        &self.params
    }

    pub fn options(&self) -> &Options {
        &self.options
    }

    pub fn statements(&self, dialect: Dialect) -> Vec<Statement> {
        statements::statements(&self.options, dialect)
    }

    /// Reads how many rows the table holds: a run's keys are those (YCSB's `recordcount` with
    /// the rows earlier runs inserted), and its inserts continue after them.
    pub async fn check(&mut self, conn: &mut Connection) -> Result<(), Error> {
        let table = &self.options.table;
        let sql = format!("SELECT count(*) FROM {table}");
        let rows = conn.query(&sql).await.map_err(|e| not_prepared(table, e))?;
        let count: u64 = rows
            .first()
            .and_then(|row| row.first()?.as_deref()?.parse().ok())
            .unwrap_or(0);
        let only_inserts = self.options.mix[Operation::Insert as usize] >= 1.0;
        if count == 0 && !only_inserts {
            return Err(Error::NotPrepared(Unprepared {
                message: format!("table {table} is empty"),
                hint: Some(PREPARE_HINT),
            }));
        }
        self.existing = count;
        self.inserts = Arc::new(InsertSequence::new(self.options.insert_start + count));
        Ok(())
    }

    pub fn client(&self) -> YcsbClient {
        let chooser = KeyChooser::new(&self.options, self.options.insert_start, self.existing);
        YcsbClient::new(self.options.clone(), chooser, self.inserts.clone())
    }
}

const PREPARE_HINT: &str =
    "run `dbscale prepare ycsb:a --target URL` (with the run's --set recordcount=N) first";

fn not_prepared(table: &str, e: DbError) -> Error {
    let unprepared = |message: &str| Unprepared {
        message: format!("table {table} is missing ({message})"),
        hint: Some(PREPARE_HINT),
    };
    missing_or_failed(e, unprepared, || format!("counting the rows of {table}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::test_config;

    fn workload(name: &str, params: &[(&str, serde_json::Value)]) -> Result<Ycsb, Error> {
        Ycsb::from_config(&test_config(name, params)).map(|w| w.expect("a ycsb name"))
    }

    #[test]
    fn the_six_workloads_have_ycsbs_mixes() {
        let mix = |name: &str| workload(name, &[]).unwrap().options().mix;
        assert_eq!(mix("ycsb:a"), [0.5, 0.5, 0.0, 0.0, 0.0]);
        assert_eq!(mix("workloadb"), [0.95, 0.05, 0.0, 0.0, 0.0]);
        assert_eq!(mix("ycsb-c"), [1.0, 0.0, 0.0, 0.0, 0.0]);
        assert_eq!(mix("ycsb:d"), [0.95, 0.0, 0.05, 0.0, 0.0]);
        assert_eq!(mix("ycsb:e"), [0.0, 0.0, 0.05, 0.95, 0.0]);
        assert_eq!(mix("ycsb:f"), [0.5, 0.0, 0.0, 0.0, 0.5]);
        let d = workload("ycsb:d", &[]).unwrap();
        assert_eq!(d.options().request, options::Request::Latest);
        let e = workload("ycsb:e", &[]).unwrap();
        assert_eq!(e.options().max_scan, 100);
        assert_eq!(workload("ycsb:a", &[]).unwrap().options().max_scan, 1_000);
        assert_eq!(catalog().len(), 6);
    }

    #[test]
    fn proportions_are_shares_of_their_sum() {
        let w = workload(
            "ycsb:a",
            &[
                ("readproportion", 1.0.into()),
                ("updateproportion", 1.0.into()),
            ],
        )
        .unwrap();
        assert_eq!(w.options().mix, [0.5, 0.5, 0.0, 0.0, 0.0]);
    }

    #[test]
    fn bad_properties_are_refused() {
        for (key, value) in [
            (
                "requestdistribution",
                serde_json::Value::from("exponential"),
            ),
            ("zipfianconstant", 1.0.into()),
            ("readproportion", (-0.1).into()),
            ("fieldcount", 0.into()),
            ("table", "usertable; drop".into()),
            ("insertorder", "random".into()),
            ("scanlengthdistribution", "latest".into()),
            ("minscanlength", 2_000.into()),
        ] {
            assert!(
                workload("ycsb:a", &[(key, value.clone())]).is_err(),
                "{key}={value}"
            );
        }
        let nothing = [("readproportion", 0.into()), ("updateproportion", 0.into())];
        let e = workload("ycsb:a", &nothing).unwrap_err().to_string();
        assert!(e.contains("add up to 0"), "{e}");
    }

    #[test]
    fn statements_follow_the_layout() {
        let w = workload("ycsb:a", &[("fieldcount", 3.into())]).unwrap();
        let list = w.statements(Dialect::Postgres);
        let layout = statements::Layout::new(3);
        assert_eq!(list.len(), layout.count());
        assert_eq!(
            list[statements::Layout::READ_ALL].sql,
            "SELECT * FROM usertable WHERE YCSB_KEY = $1"
        );
        assert_eq!(list[layout.read_field(2)].name, "read_field2");
        assert_eq!(
            list[layout.update_field(1)].sql,
            "UPDATE usertable SET FIELD1 = $1 WHERE YCSB_KEY = $2"
        );
        assert_eq!(
            list[layout.update_all()].sql,
            "UPDATE usertable SET FIELD0 = $1, FIELD1 = $2, FIELD2 = $3 WHERE YCSB_KEY = $4"
        );
        assert_eq!(
            list[layout.insert()].sql,
            "INSERT INTO usertable (YCSB_KEY, FIELD0, FIELD1, FIELD2) VALUES ($1, $2, $3, $4)"
        );
        assert_eq!(
            list[layout.scan_all()].sql,
            "SELECT * FROM usertable WHERE YCSB_KEY >= $1 ORDER BY YCSB_KEY LIMIT $2"
        );
        assert_eq!(list[layout.scan_field(0)].name, "scan_field0");
        let mysql = w.statements(Dialect::Mysql);
        assert!(mysql[layout.insert()].sql.ends_with("VALUES (?, ?, ?, ?)"));
    }
}

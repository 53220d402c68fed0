//! `prepare`, `cleanup` and the run's check of what CH-benCHmark adds to TPC-C's tables: TPC-H's
//! SUPPLIER, NATION and REGION at scale factor 1 (dbgen's rows, the `tpchgen` crate) and the
//! view Q15 reads. TPC-C's own tables are loaded as `tpcc` loads them.

use std::time::Instant;

use super::queries::REVENUE_VIEW;
use super::Ch;
use crate::config::{LoadPart, LoadPhase};
use crate::driver::{Connection, Dialect, Endpoint, QueryProtocol};
use crate::error::Unprepared;
use crate::workload::loading::{exec, missing_or_failed, step};
use crate::workload::tpch::loader::load_tables;
use crate::workload::PrepareSummary;
use crate::Error;

/// TPC-H's region, nation and supplier (indices into its table list), at scale factor 1.
const ADDED: [usize; 3] = [0, 1, 3];
const ADDED_NAMES: [&str; 3] = ["region", "nation", "supplier"];

impl Ch {
    pub async fn prepare(
        &self,
        endpoint: &Endpoint,
        part: Option<&LoadPart>,
    ) -> Result<PrepareSummary, Error> {
        let mut summary = self.tpcc().prepare(endpoint, part).await?;
        if LoadPart::runs(part, LoadPhase::Finish) {
            let begun = Instant::now();
            let mut conn = endpoint.open(QueryProtocol::Simple).await?;
            exec(&mut conn, "DROP VIEW IF EXISTS revenue1").await?;
            summary.rows += load_tables(&mut conn, 1.0, &ADDED).await?;
            exec(&mut conn, REVENUE_VIEW).await?;
            let analyze = match conn.dialect() {
                Dialect::Postgres => "ANALYZE",
                Dialect::Mysql => "ANALYZE TABLE",
            };
            for name in ADDED_NAMES {
                exec(&mut conn, &format!("{analyze} {name}")).await?;
            }
            conn.close().await;
            summary.steps.push(step(
                "supplier, nation, region (TPC-H scale factor 1) and Q15's view",
                begun,
            ));
            summary.seconds += begun.elapsed().as_secs_f64();
        }
        Ok(summary)
    }

    pub async fn cleanup(&self, endpoint: &Endpoint) -> Result<PrepareSummary, Error> {
        let begun = Instant::now();
        let mut conn = endpoint.open(QueryProtocol::Simple).await?;
        exec(&mut conn, "DROP VIEW IF EXISTS revenue1").await?;
        for name in ADDED_NAMES.iter().rev() {
            exec(&mut conn, &format!("DROP TABLE IF EXISTS {name}")).await?;
        }
        conn.close().await;
        let mut summary = self.tpcc().cleanup(endpoint).await?;
        summary
            .steps
            .insert(0, step("drop supplier, nation, region and the view", begun));
        summary.seconds += begun.elapsed().as_secs_f64();
        Ok(summary)
    }
}

const PREPARE_HINT: &str =
    "run `dbscale prepare ch --target URL` (with the run's --set warehouses=N) first";

/// The added tables are there and loaded (a run on TPC-C's tables alone is refused).
pub async fn check_tables(conn: &mut Connection) -> Result<(), Error> {
    let sql = "SELECT count(*) FROM supplier";
    let unprepared = |message: &str| Unprepared {
        message: format!("CH-benCHmark's supplier table is missing ({message})"),
        hint: Some(PREPARE_HINT),
    };
    let rows = conn
        .query(sql)
        .await
        .map_err(|e| missing_or_failed(e, unprepared, || "counting the suppliers".into()))?;
    let count: u64 = rows
        .first()
        .and_then(|row| row.first()?.as_deref()?.parse().ok())
        .unwrap_or(0);
    if count == 0 {
        return Err(Error::NotPrepared(Unprepared {
            message: "CH-benCHmark's supplier table is empty".into(),
            hint: Some(PREPARE_HINT),
        }));
    }
    Ok(())
}

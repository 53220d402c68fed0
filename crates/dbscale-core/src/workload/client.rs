//! One client's state for a workload: the enum the engine's hot loop dispatches on, so it makes
//! no dynamic calls.

use std::time::Duration;

use rand::rngs::SmallRng;

use super::{ch, script, sysbench, tpcb, tpcc, tpch, ycsb, TxnOutcome};
use crate::driver::{Connection, DbError};
use crate::stats::commands::CommandTally;

/// One client's state for a workload.
pub enum WorkloadClient {
    Tpcb(tpcb::TpcbClient),
    /// Boxed: its parameter buffers would make every client of any workload as large.
    Sysbench(Box<sysbench::SysbenchClient>),
    Tpcc(tpcc::TpccClient),
    Script(Box<script::ScriptClient>),
    /// Boxed: its generators and buffers.
    Ycsb(Box<ycsb::YcsbClient>),
    Tpch(Box<tpch::TpchClient>),
    /// CH-benCHmark's analytic query stream (its terminals are `Tpcc` clients).
    AnalyticStream(Box<ch::ChStream>),
}

impl WorkloadClient {
    /// Runs one transaction. On error the caller resets the connection; the random state is the
    /// caller's, so a retry can replay the same values.
    #[inline]
    pub async fn run(
        &mut self,
        conn: &mut Connection,
        rng: &mut SmallRng,
    ) -> Result<TxnOutcome, DbError> {
        match self {
            WorkloadClient::Tpcb(c) => c.run(conn, rng).await,
            WorkloadClient::Sysbench(c) => c.run(conn, rng).await,
            WorkloadClient::Tpcc(c) => c.run(conn, rng).await,
            WorkloadClient::Script(c) => c.run(conn, rng).await,
            WorkloadClient::Ycsb(c) => c.run(conn, rng).await,
            WorkloadClient::Tpch(c) => c.run(conn, rng).await,
            WorkloadClient::AnalyticStream(c) => c.run(conn, rng).await,
        }
    }

    /// The type of the transaction under way: a failed one is counted as its own type.
    #[inline]
    pub fn kind_in_flight(&self) -> usize {
        match self {
            WorkloadClient::Tpcb(_) | WorkloadClient::Sysbench(_) => 0,
            WorkloadClient::Tpcc(c) => c.kind(),
            WorkloadClient::Script(c) => c.kind(),
            WorkloadClient::Ycsb(c) => c.kind(),
            WorkloadClient::Tpch(c) => c.kind(),
            WorkloadClient::AnalyticStream(c) => c.kind(),
        }
    }

    /// Scripts: the client's per-command sums (pgbench `-r`), flattened in script order.
    pub fn command_tallies(&self) -> Option<&[CommandTally]> {
        match self {
            WorkloadClient::Script(c) => Some(c.command_tallies()),
            _ => None,
        }
    }

    /// Before a transaction: picks what comes next and returns the wait before it starts (TPC-C's
    /// keying time; zero for workloads without one).
    #[inline]
    pub fn before(&mut self, rng: &mut SmallRng) -> Duration {
        match self {
            WorkloadClient::Tpcc(c) => c.before(rng),
            _ => Duration::ZERO,
        }
    }

    /// After a transaction: the wait before the next one (TPC-C's think time).
    #[inline]
    pub fn after(&mut self, rng: &mut SmallRng) -> Duration {
        match self {
            WorkloadClient::Tpcc(c) => c.after(rng),
            _ => Duration::ZERO,
        }
    }
}

//! What a run counts beside its histograms, kept the same way by a thread's recorder, by the
//! run's totals and by the merge of workers' results, so they add up in one place.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunCounts {
    /// Transactions that failed (after their tries).
    pub failed: u64,
    /// Transactions that committed after a retry, and the retries of all transactions.
    pub retried: u64,
    pub retries: u64,
    /// Open model: transactions that started late, and those scheduled but never started.
    pub late_starts: u64,
    pub unstarted: u64,
    /// pgbench `-L`: transactions slower than the latency limit, and (under a rate) those
    /// skipped because they were already that late when due.
    pub over_latency_limit: u64,
    pub skipped: u64,
    /// Lines written to the per-transaction log (pgbench `-l`).
    pub logged: u64,
    /// Transactions still running when the run was stopped hard.
    pub abandoned: u64,
    /// Transactions and errors during the unmeasured ramp.
    pub ramp_transactions: u64,
    pub ramp_errors: u64,
    /// Statements by sysbench's classes.
    pub queries: QueryCounts,
}

impl RunCounts {
    pub fn add(&mut self, other: &RunCounts) {
        self.failed += other.failed;
        self.retried += other.retried;
        self.retries += other.retries;
        self.late_starts += other.late_starts;
        self.unstarted += other.unstarted;
        self.over_latency_limit += other.over_latency_limit;
        self.skipped += other.skipped;
        self.logged += other.logged;
        self.abandoned += other.abandoned;
        self.ramp_transactions += other.ramp_transactions;
        self.ramp_errors += other.ramp_errors;
        self.queries.add(&other.queries);
    }
}

/// Statements by sysbench's classes: read (returned rows), write (changed rows), other.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
pub struct QueryCounts {
    pub read: u64,
    pub write: u64,
    pub other: u64,
    pub total: u64,
}

impl QueryCounts {
    pub fn add(&mut self, other: &QueryCounts) {
        self.read += other.read;
        self.write += other.write;
        self.other += other.other;
        self.total += other.total;
    }
}

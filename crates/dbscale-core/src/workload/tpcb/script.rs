//! The transaction scripts, statement for statement as pgbench sends them (BEGIN and END are
//! statements too, so the prepared protocol prepares them like pgbench does).

use rand::rngs::SmallRng;
use rand::Rng;

use super::{TpcbScript, ACCOUNTS_PER_SCALE, BRANCHES_PER_SCALE, TELLERS_PER_SCALE};
use crate::driver::{Connection, DbError, Param, Statement};
use crate::stats::counts::QueryCounts;
use crate::workload::TxnOutcome;

const BEGIN: usize = 0;
const UPDATE_ACCOUNTS: usize = 1;
const SELECT_BALANCE: usize = 2;
const UPDATE_TELLERS: usize = 3;
const UPDATE_BRANCHES: usize = 4;
const INSERT_HISTORY: usize = 5;
const END: usize = 6;

/// Statements a script sends, in order; pgbench prepares exactly these, so do we.
fn used_by(script: TpcbScript) -> &'static [usize] {
    match script {
        TpcbScript::TpcbLike => &[
            BEGIN,
            UPDATE_ACCOUNTS,
            SELECT_BALANCE,
            UPDATE_TELLERS,
            UPDATE_BRANCHES,
            INSERT_HISTORY,
            END,
        ],
        TpcbScript::SimpleUpdate => &[BEGIN, UPDATE_ACCOUNTS, SELECT_BALANCE, INSERT_HISTORY, END],
        TpcbScript::SelectOnly => &[SELECT_BALANCE],
    }
}

fn statement(index: usize) -> Statement {
    match index {
        BEGIN => Statement::new("begin", "BEGIN"),
        UPDATE_ACCOUNTS => Statement::new("update_accounts", "UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2"),
        SELECT_BALANCE => Statement::new("select_balance", "SELECT abalance FROM pgbench_accounts WHERE aid = $1"),
        UPDATE_TELLERS => Statement::new("update_tellers", "UPDATE pgbench_tellers SET tbalance = tbalance + $1 WHERE tid = $2"),
        UPDATE_BRANCHES => Statement::new("update_branches", "UPDATE pgbench_branches SET bbalance = bbalance + $1 WHERE bid = $2"),
        INSERT_HISTORY => Statement::new(
            "insert_history",
            "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES ($1, $2, $3, $4, CURRENT_TIMESTAMP)",
        ),
        _ => Statement::new("end", "END"),
    }
}

/// The statements a script's connections prepare, in execution-index order.
pub fn statements(script: TpcbScript) -> Vec<Statement> {
    used_by(script).iter().map(|&i| statement(i)).collect()
}

/// One client's TPC-B state: just the ranges; the random generator is the engine's.
pub struct TpcbClient {
    script: TpcbScript,
    /// Position of each logical statement in this script's prepared list.
    slot: [usize; 7],
    accounts: i64,
    branches: i64,
    tellers: i64,
}

impl TpcbClient {
    pub fn new(script: TpcbScript, scale: i64) -> Self {
        let mut slot = [usize::MAX; 7];
        for (position, &logical) in used_by(script).iter().enumerate() {
            slot[logical] = position;
        }
        Self {
            script,
            slot,
            accounts: ACCOUNTS_PER_SCALE * scale,
            branches: BRANCHES_PER_SCALE * scale,
            tellers: TELLERS_PER_SCALE * scale,
        }
    }

    pub async fn run(
        &mut self,
        conn: &mut Connection,
        rng: &mut SmallRng,
    ) -> Result<TxnOutcome, DbError> {
        // Drawn in pgbench's order: aid, bid, tid, delta (all uniform, inclusive).
        let aid = rng.gen_range(1..=self.accounts);
        let mut q = QueryCounts::default();
        if self.script == TpcbScript::SelectOnly {
            q.count(
                &conn
                    .execute(self.slot[SELECT_BALANCE], &[Param::Int(aid)])
                    .await?,
            );
            return Ok(TxnOutcome {
                kind: 0,
                queries: q,
                ..Default::default()
            });
        }
        let bid = rng.gen_range(1..=self.branches);
        let tid = rng.gen_range(1..=self.tellers);
        let delta = rng.gen_range(-5000..=5000i64);
        q.count(&conn.execute(self.slot[BEGIN], &[]).await?);
        q.count(
            &conn
                .execute(
                    self.slot[UPDATE_ACCOUNTS],
                    &[Param::Int(delta), Param::Int(aid)],
                )
                .await?,
        );
        q.count(
            &conn
                .execute(self.slot[SELECT_BALANCE], &[Param::Int(aid)])
                .await?,
        );
        if self.script == TpcbScript::TpcbLike {
            q.count(
                &conn
                    .execute(
                        self.slot[UPDATE_TELLERS],
                        &[Param::Int(delta), Param::Int(tid)],
                    )
                    .await?,
            );
            q.count(
                &conn
                    .execute(
                        self.slot[UPDATE_BRANCHES],
                        &[Param::Int(delta), Param::Int(bid)],
                    )
                    .await?,
            );
        }
        let history = [
            Param::Int(tid),
            Param::Int(bid),
            Param::Int(aid),
            Param::Int(delta),
        ];
        q.count(&conn.execute(self.slot[INSERT_HISTORY], &history).await?);
        q.count(&conn.execute(self.slot[END], &[]).await?);
        Ok(TxnOutcome {
            kind: 0,
            queries: q,
            ..Default::default()
        })
    }
}

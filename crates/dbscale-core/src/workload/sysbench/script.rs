//! The events, statement for statement as sysbench's Lua scripts send them, with the random
//! draws in sysbench's order.

use std::sync::Arc;

use rand::rngs::SmallRng;

use super::plan::{Kind, Plan, BEGIN, COMMIT, KINDS};
use super::random::{push_digit_groups, uniform, Distribution, UniqueIds, C_GROUPS, PAD_GROUPS};
use super::{Options, Test};
use crate::driver::{Connection, DbError, Param};
use crate::stats::counts::QueryCounts;
use crate::workload::TxnOutcome;

/// One client's state: options, where its statements are, and reused parameter buffers.
pub struct SysbenchClient {
    test: Test,
    o: Options,
    dist: Distribution,
    unique_ids: Arc<UniqueIds>,
    transactions: bool,
    globals: usize,
    block: usize,
    slot: [usize; KINDS],
    c: String,
    pad: String,
    values: Vec<Param<'static>>,
    /// `select_random_*`: this client's slice of k, `[rmin, rmax]`.
    slice: (u32, u32),
}

impl SysbenchClient {
    pub fn new(
        test: Test,
        o: &Options,
        dist: Distribution,
        unique_ids: Arc<UniqueIds>,
        client_id: u32,
        clients: u32,
    ) -> Self {
        let plan = Plan::new(test, o);
        // select_random_*.lua: rlen = table_size / threads; thread i draws from its own slice.
        let rlen = f64::from(o.table_size) / f64::from(clients.max(1));
        let rmin = rlen * f64::from(client_id % clients.max(1));
        Self {
            test,
            o: o.clone(),
            dist,
            unique_ids,
            transactions: plan.transactions,
            globals: plan.globals(),
            block: plan.kinds.len(),
            slot: plan.slots(),
            c: String::with_capacity(120),
            pad: String::with_capacity(60),
            values: Vec::with_capacity(2 * o.number_of_ranges.max(o.random_points) as usize),
            slice: (rmin as u32, (rmin + rlen) as u32),
        }
    }

    /// Index of `kind` on table `t` in the prepared list.
    #[inline]
    fn index(&self, kind: Kind, t: u32) -> usize {
        self.globals + (t as usize - 1) * self.block + self.slot[kind as usize]
    }

    #[inline]
    fn table(&self, rng: &mut SmallRng) -> u32 {
        uniform(rng, 1, self.o.tables)
    }

    #[inline]
    fn id(&self, rng: &mut SmallRng) -> u32 {
        self.dist.sample(rng, 1, self.o.table_size)
    }

    /// Runs one event. Errors leave the transaction to the engine, which rolls back and restarts
    /// the event when the error is one sysbench ignores.
    pub async fn run(
        &mut self,
        conn: &mut Connection,
        rng: &mut SmallRng,
    ) -> Result<TxnOutcome, DbError> {
        let mut q = QueryCounts::default();
        match self.test {
            Test::ReadOnly | Test::ReadWrite | Test::WriteOnly => {
                self.oltp(conn, rng, &mut q).await?
            }
            Test::PointSelect => self.point_selects(conn, rng, &mut q, 1).await?,
            Test::Insert => self.insert(conn, rng, &mut q).await?,
            Test::Delete => {
                let t = self.table(rng);
                let id = self.id(rng);
                let outcome = conn
                    .execute(self.index(Kind::Delete, t), &[Param::Int(id.into())])
                    .await?;
                q.count(&outcome);
            }
            Test::UpdateIndex => self.index_updates(conn, rng, &mut q).await?,
            Test::UpdateNonIndex => self.non_index_updates(conn, rng, &mut q).await?,
            Test::RandomPoints | Test::RandomRanges => {
                self.random_select(conn, rng, &mut q).await?
            }
        }
        Ok(TxnOutcome {
            kind: 0,
            queries: q,
            ..Default::default()
        })
    }

    /// `oltp_read_only`, `oltp_read_write`, `oltp_write_only`.
    async fn oltp(
        &mut self,
        conn: &mut Connection,
        rng: &mut SmallRng,
        q: &mut QueryCounts,
    ) -> Result<(), DbError> {
        if self.transactions {
            q.count(&conn.execute(BEGIN, &[]).await?);
        }
        if self.test != Test::WriteOnly {
            self.point_selects(conn, rng, q, self.o.point_selects)
                .await?;
            if self.o.range_selects {
                for (kind, n) in [
                    (Kind::SimpleRange, self.o.simple_ranges),
                    (Kind::SumRange, self.o.sum_ranges),
                    (Kind::OrderRange, self.o.order_ranges),
                    (Kind::DistinctRange, self.o.distinct_ranges),
                ] {
                    self.ranges(conn, rng, q, kind, n).await?;
                }
            }
        }
        if self.test != Test::ReadOnly {
            self.index_updates(conn, rng, q).await?;
            self.non_index_updates(conn, rng, q).await?;
            self.delete_inserts(conn, rng, q).await?;
        }
        if self.transactions {
            q.count(&conn.execute(COMMIT, &[]).await?);
        }
        Ok(())
    }

    async fn point_selects(
        &mut self,
        conn: &mut Connection,
        rng: &mut SmallRng,
        q: &mut QueryCounts,
        n: u32,
    ) -> Result<(), DbError> {
        let index = self.index(Kind::PointSelect, self.table(rng));
        for _ in 0..n {
            let id = self.id(rng);
            q.count(&conn.execute(index, &[Param::Int(id.into())]).await?);
        }
        Ok(())
    }

    async fn ranges(
        &mut self,
        conn: &mut Connection,
        rng: &mut SmallRng,
        q: &mut QueryCounts,
        kind: Kind,
        n: u32,
    ) -> Result<(), DbError> {
        let index = self.index(kind, self.table(rng));
        for _ in 0..n {
            let from = i64::from(self.id(rng));
            let to = from + i64::from(self.o.range_size) - 1;
            q.count(
                &conn
                    .execute(index, &[Param::Int(from), Param::Int(to)])
                    .await?,
            );
        }
        Ok(())
    }

    async fn index_updates(
        &mut self,
        conn: &mut Connection,
        rng: &mut SmallRng,
        q: &mut QueryCounts,
    ) -> Result<(), DbError> {
        let index = self.index(Kind::IndexUpdate, self.table(rng));
        for _ in 0..self.o.index_updates {
            let id = self.id(rng);
            q.count(&conn.execute(index, &[Param::Int(id.into())]).await?);
        }
        Ok(())
    }

    async fn non_index_updates(
        &mut self,
        conn: &mut Connection,
        rng: &mut SmallRng,
        q: &mut QueryCounts,
    ) -> Result<(), DbError> {
        let index = self.index(Kind::NonIndexUpdate, self.table(rng));
        for _ in 0..self.o.non_index_updates {
            self.c.clear();
            push_digit_groups(&mut self.c, C_GROUPS, rng);
            let id = self.id(rng);
            let params = [Param::Text(&self.c), Param::Int(id.into())];
            q.count(&conn.execute(index, &params).await?);
        }
        Ok(())
    }

    /// DELETE a row, then INSERT it again under the same id with fresh k, c and pad.
    async fn delete_inserts(
        &mut self,
        conn: &mut Connection,
        rng: &mut SmallRng,
        q: &mut QueryCounts,
    ) -> Result<(), DbError> {
        let t = self.table(rng);
        let (delete, insert) = (self.index(Kind::Delete, t), self.index(Kind::Insert, t));
        for _ in 0..self.o.delete_inserts {
            let id = i64::from(self.id(rng));
            let k = i64::from(self.id(rng));
            self.c.clear();
            push_digit_groups(&mut self.c, C_GROUPS, rng);
            self.pad.clear();
            push_digit_groups(&mut self.pad, PAD_GROUPS, rng);
            q.count(&conn.execute(delete, &[Param::Int(id)]).await?);
            let row = [
                Param::Int(id),
                Param::Int(k),
                Param::Text(&self.c),
                Param::Text(&self.pad),
            ];
            q.count(&conn.execute(insert, &row).await?);
        }
        Ok(())
    }

    /// `oltp_insert`: auto-increment ids, or ids from the run's unique sequence as signed INTs.
    async fn insert(
        &mut self,
        conn: &mut Connection,
        rng: &mut SmallRng,
        q: &mut QueryCounts,
    ) -> Result<(), DbError> {
        let index = self.index(Kind::InsertOnly, self.table(rng));
        let k = i64::from(self.id(rng));
        self.c.clear();
        push_digit_groups(&mut self.c, C_GROUPS, rng);
        self.pad.clear();
        push_digit_groups(&mut self.pad, PAD_GROUPS, rng);
        let (c, pad) = (Param::Text(&self.c), Param::Text(&self.pad));
        let outcome = if self.o.auto_inc {
            conn.execute(index, &[Param::Int(k), c, pad]).await?
        } else {
            let id = i64::from(self.unique_ids.next()) - 2_147_483_648;
            conn.execute(index, &[Param::Int(id), Param::Int(k), c, pad])
                .await?
        };
        q.count(&outcome);
        Ok(())
    }

    /// `select_random_points` and `select_random_ranges` on sbtest1, within this client's slice.
    async fn random_select(
        &mut self,
        conn: &mut Connection,
        rng: &mut SmallRng,
        q: &mut QueryCounts,
    ) -> Result<(), DbError> {
        let (rmin, rmax) = self.slice;
        self.values.clear();
        if self.test == Test::RandomPoints {
            for _ in 0..self.o.random_points {
                let v = self.dist.sample(rng, rmin, rmax);
                self.values.push(Param::Int(v.into()));
            }
        } else {
            for _ in 0..self.o.number_of_ranges {
                let v = i64::from(self.dist.sample(rng, rmin, rmax));
                self.values.push(Param::Int(v));
                self.values.push(Param::Int(v + i64::from(self.o.delta)));
            }
        }
        let kind = if self.test == Test::RandomPoints {
            Kind::RandomPoints
        } else {
            Kind::RandomRanges
        };
        q.count(&conn.execute(self.index(kind, 1), &self.values).await?);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::WorkloadConfig;
    use crate::driver::Dialect;
    use crate::workload::sysbench::Sysbench;

    #[test]
    fn statement_indexes_match_the_prepared_list() {
        let config = WorkloadConfig {
            name: "oltp_read_write".into(),
            params: [("tables".to_string(), serde_json::Value::from(3))]
                .into_iter()
                .collect(),
            ..Default::default()
        };
        let w = Sysbench::from_config(&config).unwrap().unwrap();
        let sql = w.statements(Dialect::Mysql).unwrap();
        let client = w.client(0, 1);
        for t in 1..=3 {
            assert_eq!(
                sql[client.index(Kind::PointSelect, t)].sql,
                format!("SELECT c FROM sbtest{t} WHERE id=?")
            );
            assert_eq!(
                sql[client.index(Kind::Delete, t)].sql,
                format!("DELETE FROM sbtest{t} WHERE id=?")
            );
        }
    }

    #[test]
    fn random_selects_split_k_between_clients() {
        let config = WorkloadConfig {
            name: "select_random_points".into(),
            params: [("table_size".to_string(), serde_json::Value::from(1000))]
                .into_iter()
                .collect(),
            ..Default::default()
        };
        let w = Sysbench::from_config(&config).unwrap().unwrap();
        assert_eq!(w.client(0, 4).slice, (0, 250));
        assert_eq!(w.client(3, 4).slice, (750, 1000));
    }
}

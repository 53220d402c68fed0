//! One analytic stream of a CH-benCHmark run: the chosen queries over and over, stream `k`
//! starting at the `k`-th of them (as the benchmark's query streams do), one query per
//! transaction of its type.

use rand::rngs::SmallRng;

use super::queries::query;
use crate::driver::{Connection, DbError};
use crate::workload::tpch::streams::run_query;
use crate::workload::TxnOutcome;

pub struct ChStream {
    order: Vec<usize>,
    next: usize,
    /// The type index of TPC-C's first query type: query `n` is type `first_type + n - 1`.
    first_type: usize,
    /// The type of the query under way (also when it fails).
    kind: usize,
}

impl ChStream {
    pub fn new(queries: &[usize], stream: u32, first_type: usize) -> Self {
        let start = stream as usize % queries.len().max(1);
        Self {
            order: queries.to_vec(),
            next: start,
            first_type,
            kind: first_type,
        }
    }

    pub fn kind(&self) -> usize {
        self.kind
    }

    /// The query the stream runs next.
    pub fn next_query(&self) -> usize {
        self.order[self.next]
    }

    /// The stream's next query: its rows are read and dropped; a failed query is the engine's
    /// to count, and the stream goes on with the next one.
    pub async fn run(
        &mut self,
        conn: &mut Connection,
        _rng: &mut SmallRng,
    ) -> Result<TxnOutcome, DbError> {
        let number = self.order[self.next];
        self.next = (self.next + 1) % self.order.len();
        self.kind = self.first_type + number - 1;
        run_query(conn, query(number), self.kind).await
    }
}

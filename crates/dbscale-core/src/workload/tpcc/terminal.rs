//! One TPC-C terminal: its home warehouse and district, its deck of transaction types (5.2.4.2:
//! each pass through the deck in a new random order), keying and think times (5.2.5), and the
//! statement helpers the transactions share.

use std::sync::Arc;
use std::time::Duration;

use rand::rngs::SmallRng;
use rand::Rng;

use super::random::{self, NurandConstants};
use super::{delivery, new_order, payment};
use crate::driver::{Connection, DbError, Param, QueryOutcome, Rows};
use crate::stats::counts::QueryCounts;
use crate::workload::{Tally, TxnOutcome};

pub const NEW_ORDER: usize = 0;
pub const PAYMENT: usize = 1;
pub const ORDER_STATUS: usize = 2;
pub const DELIVERY: usize = 3;
pub const STOCK_LEVEL: usize = 4;

/// Keying times (5.2.5.2) and mean think times (5.2.5.4) in seconds, by type.
const KEYING_S: [f64; 5] = [18.0, 3.0, 2.0, 2.0, 2.0];
const THINK_MEAN_S: [f64; 5] = [12.0, 12.0, 10.0, 5.0, 5.0];

/// Audit counters in a transaction's tally.
pub const ROLLED_BACK: usize = 0;
pub const ORDER_LINES: usize = 1;
pub const REMOTE_LINES: usize = 2;
pub const REMOTE_PAYMENTS: usize = 3;
pub const BY_LAST_NAME: usize = 4;
pub const SKIPPED_DELIVERIES: usize = 5;

/// What every terminal of a run shares.
#[derive(Debug)]
pub struct RunShape {
    /// Warehouses loaded (remote warehouses are drawn from all of them).
    pub warehouses: i64,
    /// Warehouses with terminals.
    pub active: i64,
    pub constants: NurandConstants,
    pub wait: bool,
    /// One pass of the deck, by type.
    pub deck: Vec<usize>,
}

pub struct TpccClient {
    shape: Arc<RunShape>,
    pub home_w: i64,
    pub home_d: i64,
    deck: Vec<usize>,
    next_card: usize,
    kind: usize,
}

impl TpccClient {
    /// Terminal `id`: warehouses round-robin over the active ones, then districts, so ten
    /// terminals per warehouse cover its ten districts.
    pub fn new(shape: Arc<RunShape>, id: u32) -> Self {
        let id = i64::from(id);
        let home_w = id % shape.active + 1;
        let home_d = (id / shape.active) % 10 + 1;
        let deck = shape.deck.clone();
        let next_card = deck.len();
        Self {
            shape,
            home_w,
            home_d,
            deck,
            next_card,
            kind: NEW_ORDER,
        }
    }

    pub fn shape(&self) -> &RunShape {
        &self.shape
    }

    /// The type of the transaction under way (chosen by `before`).
    pub fn kind(&self) -> usize {
        self.kind
    }

    /// Deals the next transaction type and returns its keying time (zero without waits).
    pub fn before(&mut self, rng: &mut SmallRng) -> Duration {
        if self.next_card == self.deck.len() {
            for i in (1..self.deck.len()).rev() {
                self.deck.swap(i, rng.gen_range(0..=i));
            }
            self.next_card = 0;
        }
        self.kind = self.deck[self.next_card];
        self.next_card += 1;
        if self.shape.wait {
            Duration::from_secs_f64(KEYING_S[self.kind])
        } else {
            Duration::ZERO
        }
    }

    /// The think time after a transaction: -ln(r) x mean, at most 10 x mean (5.2.5.4).
    pub fn after(&mut self, rng: &mut SmallRng) -> Duration {
        if !self.shape.wait {
            return Duration::ZERO;
        }
        let mean = THINK_MEAN_S[self.kind];
        let r: f64 = rng.gen_range(f64::MIN_POSITIVE..1.0);
        Duration::from_secs_f64((-r.ln() * mean).min(10.0 * mean))
    }

    pub async fn run(
        &mut self,
        conn: &mut Connection,
        rng: &mut SmallRng,
    ) -> Result<TxnOutcome, DbError> {
        let mut txn = Txn {
            conn,
            queries: QueryCounts::default(),
            tally: Tally::default(),
        };
        match self.kind {
            NEW_ORDER => new_order::run(self, &mut txn, rng).await?,
            PAYMENT => payment::payment(self, &mut txn, rng).await?,
            ORDER_STATUS => payment::order_status(self, &mut txn, rng).await?,
            DELIVERY => delivery::delivery(self, &mut txn, rng).await?,
            STOCK_LEVEL => delivery::stock_level(self, &mut txn, rng).await?,
            _ => unreachable!("decks hold the five types only"),
        }
        Ok(TxnOutcome {
            kind: self.kind,
            queries: txn.queries,
            tally: txn.tally,
        })
    }

    /// A district of the home warehouse, uniform.
    pub fn any_district(&self, rng: &mut SmallRng) -> i64 {
        rng.gen_range(1..=10)
    }

    /// A warehouse other than the home one, uniform (the home one when there is no other).
    pub fn remote_warehouse(&self, rng: &mut SmallRng) -> i64 {
        if self.shape.warehouses < 2 {
            return self.home_w;
        }
        let other = rng.gen_range(1..self.shape.warehouses);
        if other >= self.home_w {
            other + 1
        } else {
            other
        }
    }

    /// NURand(1023, 1, 3000) with the run's C.
    pub fn customer_id(&self, rng: &mut SmallRng) -> i64 {
        random::nurand(rng, random::A_CUSTOMER, self.shape.constants.c_id, 1, 3000)
    }

    /// A run-time last name (NURand(255, 0, 999) with the run's C).
    pub fn last_name(&self, rng: &mut SmallRng, out: &mut String) {
        let n = random::last_name_number(rng, self.shape.constants.c_last);
        random::last_name(n, out);
    }
}

/// A transaction in progress: the connection, its statement counts and its audit tally.
pub struct Txn<'a> {
    pub conn: &'a mut Connection,
    pub queries: QueryCounts,
    pub tally: Tally,
}

impl Txn<'_> {
    pub async fn exec(
        &mut self,
        index: usize,
        params: &[Param<'_>],
    ) -> Result<QueryOutcome, DbError> {
        let outcome = self.conn.execute(index, params).await?;
        self.queries.count(&outcome);
        Ok(outcome)
    }

    pub async fn fetch(&mut self, index: usize, params: &[Param<'_>]) -> Result<Rows, DbError> {
        let rows = self.conn.fetch(index, params).await?;
        self.queries.read += 1;
        self.queries.total += 1;
        Ok(rows)
    }

    /// The one row a key lookup must find; a missing row is an error naming the lookup.
    pub async fn fetch_one(
        &mut self,
        index: usize,
        params: &[Param<'_>],
        what: &str,
    ) -> Result<Vec<Option<String>>, DbError> {
        let mut rows = self.fetch(index, params).await?;
        if rows.is_empty() {
            return Err(missing(what));
        }
        Ok(rows.swap_remove(0))
    }
}

/// A row the data must have is not there: the tables are not (consistently) loaded.
pub fn missing(what: &str) -> DbError {
    DbError::sql(
        "02000",
        format!("TPC-C data has no {what}; is it loaded (and for as many warehouses)?"),
    )
}

/// Column `i` of a row as an integer (0 for NULL or garbage).
pub fn int_at(row: &[Option<String>], i: usize) -> i64 {
    row.get(i)
        .and_then(|v| v.as_deref())
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

/// Column `i` as a decimal in units of 10^-scale (0 for NULL).
pub fn units_at(row: &[Option<String>], i: usize, scale: u8) -> i64 {
    row.get(i)
        .and_then(|v| v.as_deref())
        .map_or(0, |v| parse_units(v, scale))
}

pub fn text_at(row: &[Option<String>], i: usize) -> &str {
    row.get(i).and_then(|v| v.as_deref()).unwrap_or("")
}

/// "12.3" at scale 2 is 1230; extra digits are cut, as they cannot occur in the columns read.
pub fn parse_units(text: &str, scale: u8) -> i64 {
    let text = text.trim();
    let (negative, text) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    let mut units: i64 = whole.parse().unwrap_or(0);
    let digits = fraction.as_bytes();
    for i in 0..usize::from(scale) {
        let digit = digits
            .get(i)
            .map_or(0, |b| i64::from(b.wrapping_sub(b'0')).min(9));
        units = units * 10 + digit;
    }
    if negative {
        -units
    } else {
        units
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn shape(active: i64, wait: bool) -> Arc<RunShape> {
        Arc::new(RunShape {
            warehouses: active,
            active,
            constants: NurandConstants {
                c_last: 1,
                c_id: 2,
                ol_i_id: 3,
            },
            wait,
            deck: [
                vec![NEW_ORDER; 45],
                vec![PAYMENT; 43],
                vec![ORDER_STATUS; 4],
                vec![DELIVERY; 4],
                vec![STOCK_LEVEL; 4],
            ]
            .concat(),
        })
    }

    #[test]
    fn each_pass_of_the_deck_deals_the_mix_exactly() {
        let mut client = TpccClient::new(shape(2, false), 0);
        let mut rng = SmallRng::seed_from_u64(5);
        let mut counts = [0; 5];
        for _ in 0..300 {
            assert_eq!(client.before(&mut rng), Duration::ZERO);
            counts[client.kind] += 1;
        }
        assert_eq!(counts, [135, 129, 12, 12, 12]);
    }

    #[test]
    fn terminals_cover_warehouses_then_districts() {
        let shape = shape(3, true);
        let homes: Vec<(i64, i64)> = (0..30)
            .map(|id| {
                let c = TpccClient::new(shape.clone(), id);
                (c.home_w, c.home_d)
            })
            .collect();
        assert_eq!(homes[0], (1, 1));
        assert_eq!(homes[2], (3, 1));
        assert_eq!(homes[3], (1, 2));
        let mut sorted = homes.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), 30, "every (warehouse, district) once");
    }

    #[test]
    fn waits_follow_the_spec() {
        let mut client = TpccClient::new(shape(1, true), 0);
        let mut rng = SmallRng::seed_from_u64(1);
        let mut think = Duration::ZERO;
        let mut payments = 0;
        for _ in 0..2000 {
            let keying = client.before(&mut rng);
            assert_eq!(keying.as_secs_f64(), KEYING_S[client.kind]);
            let t = client.after(&mut rng);
            assert!(t.as_secs_f64() <= 10.0 * THINK_MEAN_S[client.kind]);
            if client.kind == PAYMENT {
                think += t;
                payments += 1;
            }
        }
        let mean = think.as_secs_f64() / f64::from(payments);
        assert!((10.5..13.5).contains(&mean), "{mean}");
        assert!(client.remote_warehouse(&mut rng) == 1);
    }

    #[test]
    fn decimals_parse_to_units() {
        assert_eq!(parse_units("12.3", 2), 1230);
        assert_eq!(parse_units("-10.00", 2), -1000);
        assert_eq!(parse_units("0.1234", 4), 1234);
        assert_eq!(parse_units("7", 2), 700);
    }
}

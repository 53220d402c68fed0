//! One client's operations as YCSB's `CoreWorkload.doTransaction` makes them: an operation drawn
//! from the mix, a key number from the request distribution (never one whose insert has not
//! finished), its key name, and the statement, autocommitted as the JDBC binding runs it.

use std::sync::Arc;

use rand::rngs::SmallRng;
use rand::Rng;

use super::generators::{uniform, Hotspot, ScrambledZipfian, SkewedLatest, Zipfian};
use super::keys::{field_value, key_name, InsertSequence};
use super::options::{Operation, Options, Request, OPERATIONS};
use super::statements::Layout;
use crate::driver::{Connection, DbError, Param};
use crate::stats::counts::QueryCounts;
use crate::workload::TxnOutcome;

/// Draws past the readable range before a key is taken from it uniformly instead (a bound, so a
/// range sized for far more inserts than the run makes cannot spin a client).
const MAX_REDRAWS: u32 = 1_000;

/// `keychooser`: how key numbers are drawn for reads, updates and scans.
#[derive(Debug, Clone)]
pub enum KeyChooser {
    Uniform { lower: u64, upper: u64 },
    Zipfian(ScrambledZipfian),
    Latest(SkewedLatest),
    Hotspot(Hotspot),
}

impl KeyChooser {
    /// CoreWorkload's chooser for keys `first..first + existing`, with the inserts to come.
    pub fn new(o: &Options, first: u64, existing: u64) -> Self {
        let last = first + existing.max(1) - 1;
        match o.request {
            Request::Uniform => KeyChooser::Uniform {
                lower: first,
                upper: last,
            },
            Request::Zipfian => KeyChooser::Zipfian(ScrambledZipfian::new(
                first,
                last + 1 + o.expected_new_keys(),
                o.zipfian_constant,
            )),
            Request::Latest => KeyChooser::Latest(SkewedLatest::new(last, o.zipfian_constant)),
            Request::Hotspot => {
                KeyChooser::Hotspot(Hotspot::new(first, last, o.hot_data, o.hot_ops))
            }
        }
    }

    #[inline]
    fn draw(&mut self, rng: &mut SmallRng, latest: u64) -> u64 {
        match self {
            KeyChooser::Uniform { lower, upper } => uniform(rng, *lower, *upper),
            KeyChooser::Zipfian(z) => z.next(rng),
            KeyChooser::Latest(l) => l.next(rng, latest),
            KeyChooser::Hotspot(h) => h.next(rng),
        }
    }
}

/// Scan lengths: uniform or Zipfian between the shortest and the longest.
#[derive(Debug, Clone)]
enum ScanLength {
    Uniform(u64, u64),
    Zipfian(Zipfian),
}

/// One client's generators and reused buffers.
pub struct YcsbClient {
    o: Arc<Options>,
    layout: Layout,
    chooser: KeyChooser,
    scan_length: ScanLength,
    inserts: Arc<InsertSequence>,
    first_key: u64,
    key: String,
    values: Vec<String>,
    /// The operation under way (its type, also when it fails).
    kind: usize,
}

impl YcsbClient {
    pub fn new(o: Arc<Options>, chooser: KeyChooser, inserts: Arc<InsertSequence>) -> Self {
        let scan_length = if o.scan_zipfian {
            ScanLength::Zipfian(Zipfian::new(
                o.min_scan,
                o.max_scan,
                o.zipfian_constant,
                None,
            ))
        } else {
            ScanLength::Uniform(o.min_scan, o.max_scan)
        };
        let width = o.field_length as usize;
        Self {
            layout: Layout::new(o.field_count),
            values: (0..o.field_count)
                .map(|_| String::with_capacity(width))
                .collect(),
            first_key: o.insert_start,
            key: String::with_capacity(32),
            kind: 0,
            o,
            chooser,
            scan_length,
            inserts,
        }
    }

    /// The operation the mix gives the draw `u` (`DiscreteGenerator`).
    #[inline]
    pub fn operation_at(mix: &[f64; 5], u: f64) -> Operation {
        let mut rest = u;
        let mut chosen = Operation::Read;
        for (op, &share) in OPERATIONS.iter().zip(mix) {
            if share > 0.0 {
                chosen = *op;
                if rest < share {
                    return chosen;
                }
                rest -= share;
            }
        }
        chosen // rounding left a sliver past the last share
    }

    /// The type of the operation under way or last run.
    pub fn kind(&self) -> usize {
        self.kind
    }

    /// `nextKeynum()`: a key number whose row exists.
    #[inline]
    fn key_number(&mut self, rng: &mut SmallRng) -> u64 {
        let latest = self.inserts.last();
        for _ in 0..MAX_REDRAWS {
            let k = self.chooser.draw(rng, latest);
            if k <= latest {
                return k;
            }
        }
        uniform(rng, self.first_key, latest.max(self.first_key))
    }

    #[inline]
    fn name_key(&mut self, number: u64) {
        key_name(
            &mut self.key,
            number,
            self.o.ordered_inserts,
            self.o.zero_padding,
        );
    }

    fn field(&self, rng: &mut SmallRng) -> usize {
        uniform(rng, 0, u64::from(self.o.field_count) - 1) as usize
    }

    /// Runs one operation as one transaction of its type.
    pub async fn run(
        &mut self,
        conn: &mut Connection,
        rng: &mut SmallRng,
    ) -> Result<TxnOutcome, DbError> {
        let mut q = QueryCounts::default();
        let op = Self::operation_at(&self.o.mix, rng.gen());
        self.kind = op as usize;
        match op {
            Operation::Read => {
                let k = self.key_number(rng);
                self.name_key(k);
                self.read(conn, rng, &mut q).await?;
            }
            Operation::Update => {
                let k = self.key_number(rng);
                self.name_key(k);
                self.update(conn, rng, &mut q).await?;
            }
            Operation::Insert => self.insert(conn, rng, &mut q).await?,
            Operation::Scan => {
                let k = self.key_number(rng);
                self.name_key(k);
                let length = match &mut self.scan_length {
                    ScanLength::Uniform(least, most) => uniform(rng, *least, *most),
                    ScanLength::Zipfian(z) => z.next(rng),
                };
                let index = if self.o.read_all_fields {
                    self.layout.scan_all()
                } else {
                    self.layout.scan_field(self.field(rng))
                };
                let params = [Param::Text(&self.key), Param::Int(length as i64)];
                q.count(&conn.execute(index, &params).await?);
            }
            Operation::ReadModifyWrite => {
                let k = self.key_number(rng);
                self.name_key(k);
                self.read(conn, rng, &mut q).await?;
                self.update(conn, rng, &mut q).await?;
            }
        }
        Ok(TxnOutcome {
            kind: op as usize,
            queries: q,
            ..Default::default()
        })
    }

    async fn read(
        &mut self,
        conn: &mut Connection,
        rng: &mut SmallRng,
        q: &mut QueryCounts,
    ) -> Result<(), DbError> {
        let index = if self.o.read_all_fields {
            Layout::READ_ALL
        } else {
            self.layout.read_field(self.field(rng))
        };
        q.count(&conn.execute(index, &[Param::Text(&self.key)]).await?);
        Ok(())
    }

    async fn update(
        &mut self,
        conn: &mut Connection,
        rng: &mut SmallRng,
        q: &mut QueryCounts,
    ) -> Result<(), DbError> {
        let length = self.o.field_length as usize;
        let outcome = if self.o.write_all_fields {
            for value in &mut self.values {
                field_value(value, length, rng);
            }
            let mut params: Vec<Param<'_>> = self.values.iter().map(|v| Param::Text(v)).collect();
            params.push(Param::Text(&self.key));
            conn.execute(self.layout.update_all(), &params).await?
        } else {
            let field = self.field(rng);
            field_value(&mut self.values[0], length, rng);
            let params = [Param::Text(&self.values[0]), Param::Text(&self.key)];
            conn.execute(self.layout.update_field(field), &params)
                .await?
        };
        q.count(&outcome);
        Ok(())
    }

    async fn insert(
        &mut self,
        conn: &mut Connection,
        rng: &mut SmallRng,
        q: &mut QueryCounts,
    ) -> Result<(), DbError> {
        let number = self.inserts.next();
        self.name_key(number);
        let length = self.o.field_length as usize;
        for value in &mut self.values {
            field_value(value, length, rng);
        }
        let mut params = Vec::with_capacity(self.values.len() + 1);
        params.push(Param::Text(&self.key));
        params.extend(self.values.iter().map(|v| Param::Text(v)));
        let outcome = conn.execute(self.layout.insert(), &params).await;
        // Acknowledged either way, as YCSB does: a failed insert must not stop the readable
        // range from growing past it.
        self.inserts.acknowledge(number);
        q.count(&outcome?);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn the_mix_is_drawn_within_a_third_of_a_point() {
        let mix = [0.5, 0.05, 0.05, 0.35, 0.05];
        let mut rng = SmallRng::seed_from_u64(9);
        let draws = 100_000;
        let mut counts = [0u32; 5];
        for _ in 0..draws {
            counts[YcsbClient::operation_at(&mix, rng.gen()) as usize] += 1;
        }
        for (i, (&n, &share)) in counts.iter().zip(&mix).enumerate() {
            let got = f64::from(n) / f64::from(draws);
            assert!(
                (got - share).abs() < 0.003,
                "operation {i}: {got} against {share}"
            );
        }
    }

    #[test]
    fn a_zero_share_is_never_drawn() {
        // Workloads A and B update and never insert (CockroachDB #24287 was the opposite).
        let a = [0.5, 0.5, 0.0, 0.0, 0.0];
        for u in [0.0, 0.25, 0.49999, 0.5, 0.75, 0.999_999_9, 1.0] {
            let op = YcsbClient::operation_at(&a, u);
            assert!(
                matches!(op, Operation::Read | Operation::Update),
                "{u}: {op:?}"
            );
        }
        assert_eq!(YcsbClient::operation_at(&a, 0.7), Operation::Update);
    }
}

//! The rows `sysbench … prepare` writes, generated in batches, and their encoding for
//! PostgreSQL's binary `COPY`. (MySQL targets bind the same batches as statement parameters.)

use rand::rngs::SmallRng;

use super::random::{push_digit_groups, C_GROUPS, PAD_GROUPS};
use super::Sysbench;

/// Lengths of sysbench's `c` (10 digit groups) and `pad` (5 groups) values.
const C_LEN: usize = 119;
const PAD_LEN: usize = 59;

/// Start of a binary COPY stream: signature, flags (no OIDs), header extension length.
pub(super) const COPY_BINARY_HEADER: &[u8] = b"PGCOPY\n\xff\r\n\0\0\0\0\0\0\0\0\0";
/// End of a binary COPY stream: a field count of -1.
pub(super) const COPY_BINARY_TRAILER: &[u8] = &(-1i16).to_be_bytes();
/// Columns per row in the COPY: id, k, c, pad.
const COPY_FIELDS: [u8; 2] = 4i16.to_be_bytes();
/// Field lengths in the COPY: INTEGER, and the fixed lengths of c and pad.
const INT_FIELD: [u8; 4] = 4i32.to_be_bytes();
const C_FIELD: [u8; 4] = (C_LEN as i32).to_be_bytes();
const PAD_FIELD: [u8; 4] = (PAD_LEN as i32).to_be_bytes();

/// Generated rows: (id, k) pairs, and every row's c and pad back to back in one buffer.
#[derive(Default)]
pub(super) struct RowBatch {
    pub rows: Vec<(u32, u32)>,
    text: String,
}

impl Sysbench {
    /// Rows `from..=to` as sysbench makes them: c, pad, then k from the default distribution
    /// (`sb_rand(1, table_size)`); the id is the row number.
    pub(super) fn fill_batch(&self, batch: &mut RowBatch, from: u32, to: u32, rng: &mut SmallRng) {
        batch.rows.clear();
        batch.text.clear();
        for id in from..=to {
            push_digit_groups(&mut batch.text, C_GROUPS, rng);
            push_digit_groups(&mut batch.text, PAD_GROUPS, rng);
            let k = self.distribution.sample(rng, 1, self.options.table_size);
            batch.rows.push((id, k));
        }
    }
}

impl RowBatch {
    pub fn c(&self, row: usize) -> &str {
        let at = row * (C_LEN + PAD_LEN);
        &self.text[at..at + C_LEN]
    }

    pub fn pad(&self, row: usize) -> &str {
        let at = row * (C_LEN + PAD_LEN) + C_LEN;
        &self.text[at..at + PAD_LEN]
    }

    /// Appends the rows as binary COPY tuples: a field count, then each field as a length and
    /// its bytes (INTEGER big-endian, CHAR as its text). The server parses no text for them,
    /// which saves it about a sixth of its CPU against the text format.
    pub fn copy_binary(&self, out: &mut Vec<u8>) {
        out.reserve(self.rows.len() * (2 + 4 * 4 + 4 + 4 + C_LEN + PAD_LEN));
        for (i, &(id, k)) in self.rows.iter().enumerate() {
            out.extend_from_slice(&COPY_FIELDS);
            // Ids and k are at most i32::MAX (option parsing ensures it), so their u32 bytes
            // are the INTEGER's.
            for value in [id, k] {
                out.extend_from_slice(&INT_FIELD);
                out.extend_from_slice(&value.to_be_bytes());
            }
            for (len, text) in [(C_FIELD, self.c(i)), (PAD_FIELD, self.pad(i))] {
                out.extend_from_slice(&len);
                out.extend_from_slice(text.as_bytes());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::sysbench::tests::read_write;
    use rand::SeedableRng;

    /// Rows `from..=to` of an oltp_read_write load with `table_size` rows.
    fn batch(table_size: u32, from: u32, to: u32) -> RowBatch {
        let mut rng = SmallRng::seed_from_u64(u64::from(from));
        let mut batch = RowBatch::default();
        read_write(&[("table_size", table_size.into())]).fill_batch(&mut batch, from, to, &mut rng);
        batch
    }

    #[test]
    fn rows_have_sysbench_shapes() {
        let batch = batch(1000, 41, 43);
        assert_eq!(
            batch.rows.iter().map(|r| r.0).collect::<Vec<_>>(),
            [41, 42, 43]
        );
        assert!(batch.rows.iter().all(|r| (1..=1000).contains(&r.1)));
        for i in 0..3 {
            let (c, pad) = (batch.c(i), batch.pad(i));
            assert_eq!((c.len(), c.matches('-').count()), (119, 9), "{c}");
            assert_eq!((pad.len(), pad.matches('-').count()), (59, 4), "{pad}");
        }
    }

    /// Decodes the tuples back field by field, as the server reads them.
    #[test]
    fn copy_binary_tuples_decode_to_the_rows() {
        let batch = batch(100, 7, 8);
        let mut out = Vec::new();
        batch.copy_binary(&mut out);
        let mut at = 0;
        let mut take = |n: usize| {
            at += n;
            &out[at - n..at]
        };
        for (i, &(id, k)) in batch.rows.iter().enumerate() {
            assert_eq!(take(2), 4i16.to_be_bytes());
            for int in [id, k] {
                assert_eq!(take(4), 4i32.to_be_bytes());
                assert_eq!(take(4), int.to_be_bytes());
            }
            for text in [batch.c(i), batch.pad(i)] {
                let len = i32::from_be_bytes(take(4).try_into().unwrap());
                assert_eq!(take(len as usize), text.as_bytes());
            }
        }
        assert_eq!(at, out.len());
        assert_eq!(COPY_BINARY_HEADER.len(), 19);
        assert_eq!(COPY_BINARY_TRAILER, [0xff, 0xff]);
    }
}

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
const COPY_FIELDS: i16 = 4;

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
        const INT_LEN: [u8; 4] = 4i32.to_be_bytes();
        out.reserve(self.rows.len() * (2 + 4 * 4 + 4 + 4 + C_LEN + PAD_LEN));
        for (i, &(id, k)) in self.rows.iter().enumerate() {
            out.extend_from_slice(&COPY_FIELDS.to_be_bytes());
            // Ids and k are at most i32::MAX (option parsing ensures it), so their u32 bytes
            // are the INTEGER's.
            for value in [id, k] {
                out.extend_from_slice(&INT_LEN);
                out.extend_from_slice(&value.to_be_bytes());
            }
            for text in [self.c(i), self.pad(i)] {
                out.extend_from_slice(&text_len(text));
                out.extend_from_slice(text.as_bytes());
            }
        }
    }
}

fn text_len(text: &str) -> [u8; 4] {
    // c and pad are 119 and 59 bytes long.
    i32::try_from(text.len())
        .expect("c and pad are short")
        .to_be_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn workload(params: &[(&str, serde_json::Value)]) -> Sysbench {
        super::super::tests::workload("oltp_read_write", params).unwrap()
    }

    #[test]
    fn rows_have_sysbench_shapes() {
        let mut rng = SmallRng::seed_from_u64(3);
        let w = workload(&[("table_size", 1000.into())]);
        let mut batch = RowBatch::default();
        w.fill_batch(&mut batch, 41, 43, &mut rng);
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
        let mut rng = SmallRng::seed_from_u64(5);
        let w = workload(&[("table_size", 100.into())]);
        let mut batch = RowBatch::default();
        w.fill_batch(&mut batch, 7, 8, &mut rng);
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

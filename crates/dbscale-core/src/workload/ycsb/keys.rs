//! Rows as YCSB writes them: key names from key numbers (`CoreWorkload.buildKeyName`), field
//! values of random characters (`RandomByteIterator`), and the run's shared sequence of inserted
//! keys (`AcknowledgedCounterGenerator`: reads never pick a key whose insert has not finished).

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use rand::rngs::SmallRng;
use rand::Rng;

use super::generators::fnvhash64;

/// `user<n>`, `n` the key number (ordered) or its FNV hash (hashed), left-padded with zeros to
/// `zero_padding` digits; written into `out`, which is cleared first.
#[inline]
pub fn key_name(out: &mut String, key_number: u64, ordered: bool, zero_padding: usize) {
    out.clear();
    out.push_str("user");
    let n = if ordered {
        key_number
    } else {
        fnvhash64(key_number)
    };
    let mut digits = itoa::Buffer::new();
    let text = digits.format(n);
    for _ in text.len()..zero_padding {
        out.push('0');
    }
    out.push_str(text);
}

/// A field value of `length` characters as `RandomByteIterator` makes them: six characters from
/// each random 32-bit draw, from ' ' up by 5, 6 or 7 of its bits.
pub fn field_value(out: &mut String, length: usize, rng: &mut SmallRng) {
    const SHAPES: [(u32, u32); 6] = [(0, 31), (5, 63), (10, 95), (15, 31), (20, 63), (25, 95)];
    out.clear();
    while out.len() < length {
        let bits: u32 = rng.gen();
        for &(shift, mask) in SHAPES.iter().take(length - out.len()) {
            out.push(char::from(b' ' + ((bits >> shift) & mask) as u8));
        }
    }
}

/// The run's inserted key numbers, shared by all its clients: the next one to insert, and the
/// highest below which every insert has finished (the newest key a read may choose).
#[derive(Debug)]
pub struct InsertSequence {
    next: AtomicU64,
    acknowledged: AtomicU64,
    /// Inserts finished out of order, above the contiguous limit.
    pending: Mutex<BTreeSet<u64>>,
}

impl InsertSequence {
    /// Key numbers below `first` exist already.
    pub fn new(first: u64) -> Self {
        Self {
            next: AtomicU64::new(first),
            acknowledged: AtomicU64::new(first.saturating_sub(1)),
            pending: Mutex::new(BTreeSet::new()),
        }
    }

    pub fn next(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    /// The highest key number every insert up to which has finished (`lastValue()`).
    #[inline]
    pub fn last(&self) -> u64 {
        self.acknowledged.load(Ordering::Acquire)
    }

    /// `key` was inserted (or its insert failed: YCSB acknowledges either way, so one failure
    /// does not freeze the readable range).
    pub fn acknowledge(&self, key: u64) {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        let mut limit = self.acknowledged.load(Ordering::Acquire);
        if key <= limit {
            return;
        }
        pending.insert(key);
        while pending.remove(&(limit + 1)) {
            limit += 1;
        }
        self.acknowledged.store(limit, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn keys_are_ycsbs() {
        let mut key = String::new();
        key_name(&mut key, 0, false, 1);
        assert_eq!(key, "user6284781860667377211");
        key_name(&mut key, 1, false, 1);
        assert_eq!(key, "user8517097267634966620");
        key_name(&mut key, 7, true, 1);
        assert_eq!(key, "user7");
        key_name(&mut key, 7, true, 5);
        assert_eq!(key, "user00007");
    }

    #[test]
    fn field_values_have_the_length_and_the_characters() {
        let mut rng = SmallRng::seed_from_u64(1);
        let mut value = String::new();
        for length in [1, 5, 6, 7, 100] {
            field_value(&mut value, length, &mut rng);
            assert_eq!(value.len(), length);
            assert!(
                value.bytes().all(|b| (b' '..=b' ' + 95).contains(&b)),
                "{value:?}"
            );
        }
    }

    #[test]
    fn the_readable_range_waits_for_inserts_in_order() {
        let s = InsertSequence::new(100);
        assert_eq!(s.last(), 99);
        let (a, b, c) = (s.next(), s.next(), s.next());
        assert_eq!((a, b, c), (100, 101, 102));
        s.acknowledge(b);
        assert_eq!(s.last(), 99, "101 finished, 100 not yet");
        s.acknowledge(a);
        assert_eq!(s.last(), 101);
        s.acknowledge(c);
        assert_eq!(s.last(), 102);
    }
}

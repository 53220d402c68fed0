//! TPC-C's random functions (clause 2.1.6 and 4.3.2): NURand with its constants, the C-delta
//! rule between load and run, last names from syllables, and the random strings of the data.

use rand::rngs::SmallRng;
use rand::{Rng, RngCore};

/// NURand's A for C_LAST, C_ID and OL_I_ID (2.1.6).
pub const A_LAST: i64 = 255;
pub const A_CUSTOMER: i64 = 1023;
pub const A_ITEM: i64 = 8191;

/// The C constants of NURand: one for each A.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NurandConstants {
    pub c_last: i64,
    pub c_id: i64,
    pub ol_i_id: i64,
}

impl NurandConstants {
    /// Fresh load-time constants, each uniform in `[0, A]`.
    pub fn for_load(rng: &mut SmallRng) -> Self {
        Self {
            c_last: rng.gen_range(0..=A_LAST),
            c_id: rng.gen_range(0..=A_CUSTOMER),
            ol_i_id: rng.gen_range(0..=A_ITEM),
        }
    }

    /// Run-time constants for data loaded with `load` (2.1.6.1): C_LAST differs from the load's by
    /// a delta in [65, 119] other than 96 and 112; C_ID and OL_I_ID are drawn afresh.
    pub fn for_run(load: &NurandConstants, rng: &mut SmallRng) -> Self {
        let candidates: Vec<i64> = (0..=A_LAST)
            .filter(|c| c_delta_is_valid(load.c_last, *c))
            .collect();
        Self {
            c_last: candidates[rng.gen_range(0..candidates.len())],
            c_id: rng.gen_range(0..=A_CUSTOMER),
            ol_i_id: rng.gen_range(0..=A_ITEM),
        }
    }
}

/// Whether a run-time C_LAST may follow a load-time one (2.1.6.1).
pub fn c_delta_is_valid(load: i64, run: i64) -> bool {
    let delta = (load - run).abs();
    (65..=119).contains(&delta) && delta != 96 && delta != 112
}

/// `NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x`.
#[inline]
pub fn nurand(rng: &mut SmallRng, a: i64, c: i64, x: i64, y: i64) -> i64 {
    (((rng.gen_range(0..=a) | rng.gen_range(x..=y)) + c) % (y - x + 1)) + x
}

const SYLLABLES: [&str; 10] = [
    "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
];

/// The last name of number `n` in [0, 999]: its three digits pick syllables (371 ->
/// PRICALLYOUGHT).
pub fn last_name(n: i64, out: &mut String) {
    out.clear();
    for digit in [n / 100, (n / 10) % 10, n % 10] {
        out.push_str(SYLLABLES[digit as usize]);
    }
}

/// A run-time C_LAST's number: NURand(255, 0, 999).
pub fn last_name_number(rng: &mut SmallRng, c_last: i64) -> i64 {
    nurand(rng, A_LAST, c_last, 0, 999)
}

const ALPHANUMERIC: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/// An a-string (4.3.2.2): random alphanumeric characters, length uniform in [min, max]. Each
/// 64-bit draw gives ten 6-bit indexes; the two of 64 that fall outside the alphabet are skipped,
/// so every character stays uniform (a loader writes tens of millions of them).
pub fn push_astring(rng: &mut SmallRng, min: usize, max: usize, out: &mut String) {
    push_uniform(rng, min, max, ALPHANUMERIC, out);
}

/// An n-string: random digits, length uniform in [min, max].
pub fn push_nstring(rng: &mut SmallRng, min: usize, max: usize, out: &mut String) {
    push_uniform(rng, min, max, b"0123456789", out);
}

/// Characters drawn uniformly from `alphabet` (at most 64 ASCII characters).
fn push_uniform(rng: &mut SmallRng, min: usize, max: usize, alphabet: &[u8], out: &mut String) {
    debug_assert!(alphabet.len() <= 64 && alphabet.is_ascii());
    let bits_per_char = usize::BITS - (alphabet.len() - 1).leading_zeros();
    let mask = (1u64 << bits_per_char) - 1;
    let per_draw = 64 / bits_per_char;
    let mut left = rng.gen_range(min..=max);
    let mut chunk = [0u8; 64];
    while left > 0 {
        let mut filled = 0;
        while filled < left.min(chunk.len()) {
            let mut bits = rng.next_u64();
            for _ in 0..per_draw {
                let index = (bits & mask) as usize;
                bits >>= bits_per_char;
                if index < alphabet.len() {
                    chunk[filled] = alphabet[index];
                    filled += 1;
                    if filled == left.min(chunk.len()) {
                        break;
                    }
                }
            }
        }
        out.push_str(std::str::from_utf8(&chunk[..filled]).expect("ASCII alphabet"));
        left -= filled;
    }
}

/// A zip code (4.3.2.7): four random digits then "11111".
pub fn push_zip(rng: &mut SmallRng, out: &mut String) {
    push_nstring(rng, 4, 4, out);
    out.push_str("11111");
}

/// I_DATA and S_DATA (4.3.3.1): an a-string of 26-50 characters; in 10% of rows "ORIGINAL"
/// replaces eight characters at a random position.
pub fn push_data(rng: &mut SmallRng, out: &mut String) {
    let start = out.len();
    push_astring(rng, 26, 50, out);
    if rng.gen_range(0..10) == 0 {
        let len = out.len() - start;
        let at = start + rng.gen_range(0..=len - 8);
        out.replace_range(at..at + 8, "ORIGINAL");
    }
}

/// A permutation of 1..=n (the customer ids of a district's orders, 4.3.3.1).
pub fn permutation(rng: &mut SmallRng, n: i64) -> Vec<i64> {
    let mut ids: Vec<i64> = (1..=n).collect();
    for i in (1..ids.len()).rev() {
        ids.swap(i, rng.gen_range(0..=i));
    }
    ids
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn last_names_follow_the_spec_examples() {
        let mut name = String::new();
        last_name(371, &mut name);
        assert_eq!(name, "PRICALLYOUGHT");
        last_name(40, &mut name);
        assert_eq!(name, "BARPRESBAR");
        last_name(999, &mut name);
        assert_eq!(name, "EINGEINGEING");
    }

    #[test]
    fn c_delta_rule_excludes_the_forbidden_values() {
        assert!(c_delta_is_valid(100, 35));
        assert!(c_delta_is_valid(0, 119));
        assert!(!c_delta_is_valid(0, 120));
        assert!(!c_delta_is_valid(0, 64));
        assert!(!c_delta_is_valid(200, 104), "delta 96");
        assert!(!c_delta_is_valid(0, 112));
        let mut rng = SmallRng::seed_from_u64(7);
        for _ in 0..200 {
            let load = NurandConstants::for_load(&mut rng);
            let run = NurandConstants::for_run(&load, &mut rng);
            assert!(
                c_delta_is_valid(load.c_last, run.c_last),
                "{load:?} {run:?}"
            );
            assert!((0..=A_CUSTOMER).contains(&run.c_id));
            assert!((0..=A_ITEM).contains(&run.ol_i_id));
        }
    }

    #[test]
    fn nurand_stays_in_range_and_is_skewed() {
        let mut rng = SmallRng::seed_from_u64(1);
        let mut counts = vec![0u32; 3000];
        for _ in 0..300_000 {
            let v = nurand(&mut rng, A_CUSTOMER, 123, 1, 3000);
            assert!((1..=3000).contains(&v));
            counts[(v - 1) as usize] += 1;
        }
        let max = *counts.iter().max().unwrap();
        let min = *counts.iter().min().unwrap();
        assert!(max > 4 * min.max(1), "non-uniform: max {max}, min {min}");
    }

    #[test]
    fn random_characters_are_uniform_over_their_alphabet() {
        let mut rng = SmallRng::seed_from_u64(5);
        let mut s = String::new();
        for _ in 0..2_000 {
            push_astring(&mut rng, 100, 100, &mut s);
        }
        assert_eq!(s.len(), 200_000);
        for c in ALPHANUMERIC {
            let n = s.bytes().filter(|b| b == c).count();
            // Expected 3,226 each; 5 standard deviations is about 280.
            assert!((2_900..3_550).contains(&n), "{} x {n}", *c as char);
        }
        s.clear();
        push_nstring(&mut rng, 1, 70, &mut s);
        assert!((1..=70).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_digit()));
    }

    #[test]
    fn strings_have_their_lengths_and_original_is_a_tenth() {
        let mut rng = SmallRng::seed_from_u64(3);
        let mut s = String::new();
        let mut original = 0;
        for _ in 0..20_000 {
            s.clear();
            push_data(&mut rng, &mut s);
            assert!((26..=50).contains(&s.len()));
            original += usize::from(s.contains("ORIGINAL"));
        }
        assert!((1_700..2_300).contains(&original), "{original}");
        s.clear();
        push_zip(&mut rng, &mut s);
        assert!(s.len() == 9 && s.ends_with("11111"));
        let p = permutation(&mut rng, 3000);
        let mut sorted = p.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (1..=3000).collect::<Vec<_>>());
    }
}

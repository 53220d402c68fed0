//! pgbench's `permute(i, size, seed)`: a pseudorandom bijection of `[0, size)` chosen by `seed`.
//! It is a specified algorithm, so the same arguments give pgbench's values on every machine:
//! six rounds of multiply-xor-rotate on the lower and upper halves and a random offset, drawn
//! from PostgreSQL's generator (xoroshiro128**, seeded by two splitmix64 steps).

/// PostgreSQL's `pg_prng_state`: xoroshiro128**.
struct PgPrng {
    s0: u64,
    s1: u64,
}

/// Knuth's LCG constants, PostgreSQL's replacement for an all-zero state.
const ZERO_STATE_REPLACEMENT: (u64, u64) = (0x5851_F42D_4C95_7F2D, 0x1405_7B7E_F767_814F);

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut val = *state;
    val = (val ^ (val >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    val = (val ^ (val >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    val ^ (val >> 31)
}

impl PgPrng {
    fn seeded(mut seed: u64) -> Self {
        let (s0, s1) = (splitmix64(&mut seed), splitmix64(&mut seed));
        if s0 == 0 && s1 == 0 {
            let (s0, s1) = ZERO_STATE_REPLACEMENT;
            return Self { s0, s1 };
        }
        Self { s0, s1 }
    }

    fn next_u64(&mut self) -> u64 {
        let (s0, mut s1) = (self.s0, self.s1);
        let val = s0.wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        s1 ^= s0;
        self.s0 = s0.rotate_left(24) ^ s1 ^ (s1 << 16);
        self.s1 = s1.rotate_left(37);
        val
    }

    /// Uniform in `[min, max]` by bitmask rejection (`pg_prng_uint64_range`).
    fn range(&mut self, min: u64, max: u64) -> u64 {
        if max <= min {
            return min;
        }
        let span = max - min;
        let shift = span.leading_zeros();
        loop {
            let val = self.next_u64() >> shift;
            if val <= span {
                return min + val;
            }
        }
    }
}

/// pgbench's `:default_seed` for `--random-seed=seed` and `clients` clients: its base sequence
/// seeds one generator per client first, then draws the hash functions' default seed.
pub fn default_seed(seed: u64, clients: u32) -> i64 {
    let mut base = PgPrng::seeded(seed);
    for _ in 0..clients {
        base.next_u64();
    }
    base.next_u64() as i64
}

/// Where `value` lands in the permutation of `[0, size)` that `seed` picks (0 when `size` < 2).
pub fn permute(value: i64, size: i64, seed: i64) -> i64 {
    if size < 2 {
        return 0;
    }
    let mut prng = PgPrng::seeded(seed as u64);
    let size = size as u64;
    let mut v = (value as u64) % size;
    // Work modulo the largest power of two not above the size.
    let mask_len = 63 - size.leading_zeros();
    let mask = (1u64 << mask_len) - 1;
    let scramble = |x: u64, m: u64, r: u64| {
        let x = (x.wrapping_mul(m) ^ r) & mask;
        ((x << 1) & mask) | (x >> (mask_len - 1))
    };
    for _ in 0..6 {
        let (m, r) = ((prng.next_u64() & mask) | 1, prng.next_u64() & mask);
        if v <= mask {
            v = scramble(v, m, r);
        }
        let (m, r) = ((prng.next_u64() & mask) | 1, prng.next_u64() & mask);
        let t = size - 1 - v;
        if t <= mask {
            v = size - 1 - scramble(t, m, r);
        }
        let r = prng.range(0, size - 1);
        v = (v + r) % size;
    }
    v as i64
}

#[cfg(test)]
mod tests {
    use super::{default_seed, permute};

    #[test]
    fn default_seed_as_pgbench_draws_it() {
        // pgbench 15 --random-seed=1234: hash(10) with -c 1 and -c 2 used these seeds.
        assert_eq!(default_seed(1234, 1), -5_870_543_891_441_561_991);
        assert_eq!(default_seed(1234, 2), 3_267_962_276_587_403_167);
    }

    #[test]
    fn pgbench_pinned_values() {
        // pgbench's own test (001_pgbench_with_server.pl) pins these on every architecture.
        let size = i64::MAX - 10;
        let expected = [
            520382784483822430,
            1143715004660802862,
            447293596416496998,
            916527772266572956,
            2763809008686028849,
            8648551549198294572,
            4542876852200565125,
        ];
        for (k, want) in expected.iter().enumerate() {
            assert_eq!(
                permute(size - 1 - k as i64, size, 5432),
                *want,
                "size-{}",
                k + 1
            );
        }
        assert_eq!((permute(0, 2, 5431), permute(1, 2, 5431)), (0, 1));
        assert_eq!((permute(0, 2, 5433), permute(1, 2, 5433)), (1, 0));
        assert_eq!(permute(7, 1, 3), 0);
    }

    #[test]
    fn a_bijection_of_every_small_size() {
        for size in 2..200i64 {
            let mut seen: Vec<i64> = (0..size).map(|i| permute(i, size, 42)).collect();
            assert_eq!(permute(size + 3, size, 42), permute(3, size, 42));
            seen.sort_unstable();
            assert_eq!(seen, (0..size).collect::<Vec<_>>(), "size {size}");
        }
    }
}

//! YCSB's number generators (`site.ycsb.generator` of YCSB 0.17), with its arithmetic and its
//! constants: FNV-1 64-bit hashing of key numbers, the Zipfian generator of Gray et al. ("Quickly
//! generating billion-record synthetic databases") that YCSB uses, the scrambled Zipfian that
//! spreads the popular items over the key space (what `requestdistribution=zipfian` means in
//! YCSB), the skewed-latest generator of workload D, the hotspot generator and the uniform one.
//! The uniform source is the engine's per-client generator.

use rand::rngs::SmallRng;
use rand::Rng;

/// YCSB's `ZipfianGenerator.ZIPFIAN_CONSTANT`.
pub const ZIPFIAN_CONSTANT: f64 = 0.99;
/// `ScrambledZipfianGenerator.ITEM_COUNT`: the scrambled generator draws ranks from this many
/// items and folds them onto the key range by hashing.
pub const SCRAMBLED_ITEM_COUNT: u64 = 10_000_000_000;
/// `ScrambledZipfianGenerator.ZETAN`: zeta(10^10 + 1, 0.99), precomputed by YCSB.
pub const SCRAMBLED_ZETAN: f64 = 26.469_028_201_783_02;

const FNV_OFFSET_BASIS_64: u64 = 0xCBF2_9CE4_8422_2325;
const FNV_PRIME_64: u64 = 1_099_511_628_211;

/// `Utils.fnvhash64`: FNV-1 over the number's 8 bytes, low byte first, as a non-negative Java
/// long (`Math.abs` of the signed result).
pub fn fnvhash64(value: u64) -> u64 {
    let mut val = value;
    let mut hash = FNV_OFFSET_BASIS_64;
    for _ in 0..8 {
        hash ^= val & 0xff;
        hash = hash.wrapping_mul(FNV_PRIME_64);
        val >>= 8;
    }
    (hash as i64).unsigned_abs()
}

/// sum_{i=from}^{to-1} 1/(i+1)^theta added to `start`: `ZipfianGenerator.zeta(st, n, theta,
/// initialsum)`. Beyond a million terms the rest is the Euler-Maclaurin estimate (exact to about
/// 1e-12 relative there), so a zeta over 10^10 items takes milliseconds rather than minutes.
pub fn zeta(from: u64, to: u64, theta: f64, start: f64) -> f64 {
    const EXACT_TERMS: u64 = 1_000_000;
    let exact_end = to.min(from.saturating_add(EXACT_TERMS));
    let mut sum = start;
    for i in from..exact_end {
        sum += 1.0 / ((i + 1) as f64).powf(theta);
    }
    if exact_end < to {
        // Terms k = a..=b of k^-theta, with a = exact_end + 1 and b = to.
        let (a, b) = ((exact_end + 1) as f64, to as f64);
        let f = |k: f64| k.powf(-theta);
        let df = |k: f64| -theta * k.powf(-theta - 1.0);
        let integral = if (theta - 1.0).abs() < 1e-12 {
            b.ln() - a.ln()
        } else {
            (b.powf(1.0 - theta) - a.powf(1.0 - theta)) / (1.0 - theta)
        };
        sum += integral + (f(a) + f(b)) / 2.0 + (df(b) - df(a)) / 12.0;
    }
    sum
}

/// `ZipfianGenerator`: item ranks from `base` up, rank 0 the most popular.
#[derive(Debug, Clone)]
pub struct Zipfian {
    items: u64,
    base: u64,
    theta: f64,
    alpha: f64,
    zeta2theta: f64,
    zetan: f64,
    eta: f64,
    count_for_zeta: u64,
}

impl Zipfian {
    /// Items `min..=max` with the constant `theta`; `zetan` when known (YCSB passes the scrambled
    /// generator's precomputed one), else computed.
    pub fn new(min: u64, max: u64, theta: f64, zetan: Option<f64>) -> Self {
        let items = max - min + 1;
        let zetan = zetan.unwrap_or_else(|| zeta(0, items, theta, 0.0));
        let zeta2theta = zeta(0, 2, theta, 0.0);
        let mut z = Self {
            items,
            base: min,
            theta,
            alpha: 1.0 / (1.0 - theta),
            zeta2theta,
            zetan,
            eta: 0.0,
            count_for_zeta: items,
        };
        z.eta = z.eta_for(zetan);
        z
    }

    /// YCSB computes eta from the item count it was built with, also after zetan grows with
    /// the count (`nextLong`); kept so, as the draws must be YCSB's.
    fn eta_for(&self, zetan: f64) -> f64 {
        (1.0 - (2.0 / self.items as f64).powf(1.0 - self.theta)) / (1.0 - self.zeta2theta / zetan)
    }

    /// The next rank of `item_count` items (`nextLong(itemcount)`); a larger count than before
    /// extends zeta incrementally, as the latest generator's growing key range needs.
    #[inline]
    pub fn next_of(&mut self, rng: &mut SmallRng, item_count: u64) -> u64 {
        if item_count > self.count_for_zeta {
            self.zetan = zeta(self.count_for_zeta, item_count, self.theta, self.zetan);
            self.count_for_zeta = item_count;
            self.eta = self.eta_for(self.zetan);
        }
        let u: f64 = rng.gen();
        self.rank_at(u, item_count)
    }

    /// The rank YCSB's inversion gives the uniform draw `u`.
    #[inline]
    pub fn rank_at(&self, u: f64, item_count: u64) -> u64 {
        let uz = u * self.zetan;
        if uz < 1.0 {
            return self.base;
        }
        if uz < 1.0 + 0.5f64.powf(self.theta) {
            return self.base + 1;
        }
        self.base + (item_count as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as u64
    }

    #[inline]
    pub fn next(&mut self, rng: &mut SmallRng) -> u64 {
        self.next_of(rng, self.items)
    }

    /// The uniform draw below which the rank is less than `rank` (for `rank >= 2`): the
    /// inversion's bounds, so tests can state each rank's exact probability under YCSB's method.
    pub fn draw_below(&self, rank: u64, item_count: u64) -> f64 {
        let x = (rank as f64 / item_count as f64).powf(1.0 / self.alpha);
        (1.0 + (x - 1.0) / self.eta).clamp(0.0, 1.0)
    }

    pub fn zetan(&self) -> f64 {
        self.zetan
    }
}

/// `ScrambledZipfianGenerator(min, max)`: a Zipfian rank of 10^10 items hashed onto `min..=max`,
/// so popular keys are scattered rather than clustered at the start.
#[derive(Debug, Clone)]
pub struct ScrambledZipfian {
    min: u64,
    item_count: u64,
    ranks: Zipfian,
}

impl ScrambledZipfian {
    pub fn new(min: u64, max: u64, theta: f64) -> Self {
        // YCSB's precomputed zetan holds for its own constant only; another one computes it.
        let zetan = (theta == ZIPFIAN_CONSTANT).then_some(SCRAMBLED_ZETAN);
        Self {
            min,
            item_count: max - min + 1,
            ranks: Zipfian::new(0, SCRAMBLED_ITEM_COUNT, theta, zetan),
        }
    }

    #[inline]
    pub fn next(&mut self, rng: &mut SmallRng) -> u64 {
        self.min + fnvhash64(self.ranks.next(rng)) % self.item_count
    }

    pub fn ranks(&self) -> &Zipfian {
        &self.ranks
    }

    pub fn item_count(&self) -> u64 {
        self.item_count
    }
}

/// `SkewedLatestGenerator`: the newest key the most popular (workload D); `latest` is the
/// highest acknowledged insert when the draw is made.
#[derive(Debug, Clone)]
pub struct SkewedLatest {
    ranks: Zipfian,
}

impl SkewedLatest {
    pub fn new(latest: u64, theta: f64) -> Self {
        Self {
            ranks: Zipfian::new(0, latest.max(1) - 1, theta, None),
        }
    }

    #[inline]
    pub fn next(&mut self, rng: &mut SmallRng, latest: u64) -> u64 {
        latest.saturating_sub(self.ranks.next_of(rng, latest.max(1)))
    }
}

/// `HotspotIntegerGenerator`: `hot_ops` of the draws fall on the first `hot_data` of the range.
#[derive(Debug, Clone, Copy)]
pub struct Hotspot {
    lower: u64,
    hot_interval: u64,
    cold_interval: u64,
    hot_ops: f64,
}

impl Hotspot {
    pub fn new(lower: u64, upper: u64, hot_data: f64, hot_ops: f64) -> Self {
        let interval = upper - lower + 1;
        let hot_interval = (interval as f64 * hot_data) as u64;
        Self {
            lower,
            hot_interval,
            cold_interval: interval - hot_interval,
            hot_ops,
        }
    }

    #[inline]
    pub fn next(&self, rng: &mut SmallRng) -> u64 {
        let hot = rng.gen::<f64>() < self.hot_ops;
        if (hot && self.hot_interval > 0) || self.cold_interval == 0 {
            self.lower + rng.gen_range(0..self.hot_interval)
        } else {
            self.lower + self.hot_interval + rng.gen_range(0..self.cold_interval)
        }
    }
}

/// `UniformLongGenerator(lower, upper)`, both ends included.
#[inline]
pub fn uniform(rng: &mut SmallRng, lower: u64, upper: u64) -> u64 {
    rng.gen_range(lower..=upper)
}

#[cfg(test)]
#[path = "generators_tests.rs"]
mod tests;

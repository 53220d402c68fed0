//! sysbench's random numbers, with the arithmetic of its `src/sb_rand.c`: the five `--rand-type`
//! distributions (`special` from release 1.0.20, where it is the default; `zipfian` from master),
//! the `#`-template digit strings of the `c` and `pad` columns, and the unique-id sequence
//! `oltp_insert` uses without auto-increment. The uniform source is the engine's generator.

use std::sync::atomic::{AtomicU32, Ordering};

use rand::rngs::SmallRng;
use rand::Rng;

/// `--rand-type` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RandType {
    Uniform,
    Gaussian,
    Special,
    Pareto,
    Zipfian,
}

impl RandType {
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "uniform" => RandType::Uniform,
            "gaussian" => RandType::Gaussian,
            "special" => RandType::Special,
            "pareto" => RandType::Pareto,
            "zipfian" => RandType::Zipfian,
            _ => return None,
        })
    }
}

/// The options behind sysbench's default generator (`sysbench.rand.default`, `sb_rand`).
#[derive(Debug, Clone, Copy)]
pub struct DistributionOptions {
    pub kind: RandType,
    pub spec_iter: u32,
    pub spec_pct: u32,
    pub spec_res: u32,
    pub pareto_h: f64,
    pub zipfian_exp: f64,
}

/// The default generator with its constants computed once, as `sb_rand_init` does.
#[derive(Debug, Clone, Copy)]
pub struct Distribution {
    kind: RandType,
    iter: u32,
    iter_mult: f64,
    pct_mult: f64,
    pct_2_mult: f64,
    res_mult: f64,
    pareto_power: f64,
    zipf_exp: f64,
    zipf_s: f64,
    zipf_h_integral_x1: f64,
}

impl Distribution {
    pub fn new(o: DistributionOptions) -> Result<Self, String> {
        if o.spec_iter < 1 {
            return Err("rand_spec_iter must be at least 1".into());
        }
        if o.spec_pct > 100 || o.spec_res > 100 {
            return Err("rand_spec_pct and rand_spec_res are percentages, 0-100".into());
        }
        if o.pareto_h.is_nan() || o.pareto_h <= 0.0 || o.pareto_h >= 1.0 {
            return Err(format!(
                "rand_pareto_h must be between 0 and 1, got {}",
                o.pareto_h
            ));
        }
        if o.zipfian_exp.is_nan() || o.zipfian_exp < 0.0 {
            return Err(format!(
                "rand_zipfian_exp must be >= 0, got {}",
                o.zipfian_exp
            ));
        }
        let e = o.zipfian_exp;
        Ok(Self {
            kind: o.kind,
            iter: o.spec_iter,
            iter_mult: 1.0 / f64::from(o.spec_iter),
            pct_mult: f64::from(o.spec_pct) / 100.0,
            pct_2_mult: f64::from(o.spec_pct) / 200.0,
            res_mult: 100.0 / (100.0 - f64::from(o.spec_res)),
            pareto_power: o.pareto_h.ln() / (1.0 - o.pareto_h).ln(),
            zipf_exp: e,
            zipf_s: 2.0 - h_integral_inverse(h_integral(2.5, e) - h(2.0, e), e),
            zipf_h_integral_x1: h_integral(1.5, e) - 1.0,
        })
    }

    /// A number in `[a, b]` from the configured distribution (`sb_rand_default`).
    #[inline]
    pub fn sample(&self, rng: &mut SmallRng, a: u32, b: u32) -> u32 {
        match self.kind {
            RandType::Uniform => uniform(rng, a, b),
            RandType::Gaussian => self.gaussian(rng, a, b),
            RandType::Special => self.special(rng, a, b),
            RandType::Pareto => self.pareto(rng, a, b),
            RandType::Zipfian => self.zipfian(rng, a, b),
        }
    }

    /// The mean of `rand_spec_iter` uniform draws over the range.
    fn gaussian(&self, rng: &mut SmallRng, a: u32, b: u32) -> u32 {
        let t = f64::from(b - a + 1);
        let sum: f64 = (0..self.iter).map(|_| rng.gen::<f64>() * t).sum();
        a + (sum * self.iter_mult) as u32
    }

    /// 1.0.20's default: `rand_spec_res` % of the values fall uniformly into a window of
    /// `rand_spec_pct` % of the range around its middle, the rest are `gaussian`. Like the C code,
    /// the window draw reuses the first uniform number, so values start a quarter into the window.
    fn special(&self, rng: &mut SmallRng, a: u32, b: u32) -> u32 {
        let t = f64::from(b - a);
        let range_size = t * self.res_mult;
        let rnd = rng.gen::<f64>();
        let res = rnd * range_size;
        if res < t {
            let sum: f64 = (0..self.iter).map(|_| rng.gen::<f64>()).sum();
            return (f64::from(a) + sum * t * self.iter_mult) as u32;
        }
        let d = t * self.pct_mult;
        let res = rnd * (d + 1.0) + t / 2.0 - t * self.pct_2_mult;
        a + res as u32
    }

    fn pareto(&self, rng: &mut SmallRng, a: u32, b: u32) -> u32 {
        let u: f64 = rng.gen();
        a + (f64::from(b - a + 1) * u.powf(self.pareto_power)) as u32
    }

    /// Rejection-inversion sampling of a bounded Zipf distribution (sysbench master, after
    /// Apache Commons RNG's `RejectionInversionZipfSampler`).
    fn zipfian(&self, rng: &mut SmallRng, a: u32, b: u32) -> u32 {
        let n = b - a + 1;
        let e = self.zipf_exp;
        let h_integral_n = h_integral(f64::from(n) + 0.5, e);
        loop {
            let u = h_integral_n + rng.gen::<f64>() * (self.zipf_h_integral_x1 - h_integral_n);
            let x = h_integral_inverse(u, e);
            let k = ((x + 0.5) as u32).clamp(1, n);
            if f64::from(k) - x <= self.zipf_s
                || u >= h_integral(f64::from(k) + 0.5, e) - h(f64::from(k), e)
            {
                return a + k - 1;
            }
        }
    }
}

/// `sb_rand_uniform`: every integer in `[a, b]` equally likely.
#[inline]
pub fn uniform(rng: &mut SmallRng, a: u32, b: u32) -> u32 {
    (f64::from(a) + rng.gen::<f64>() * f64::from(b - a + 1)) as u32
}

/// H(x) = (x^(1-e) - 1) / (1-e), or ln x for e = 1.
fn h_integral(x: f64, e: f64) -> f64 {
    let log_x = x.ln();
    helper2((1.0 - e) * log_x) * log_x
}

/// h(x) = x^-e.
fn h(x: f64, e: f64) -> f64 {
    (-e * x.ln()).exp()
}

fn h_integral_inverse(x: f64, e: f64) -> f64 {
    let t = (x * (1.0 - e)).max(-1.0);
    (helper1(t) * x).exp()
}

/// ln(1 + x) / x, by Taylor series near 0.
fn helper1(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * ((1.0 / 3.0) - 0.25 * x))
    }
}

/// (e^x - 1) / x, by Taylor series near 0.
fn helper2(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x * (1.0 / 3.0) * (1.0 + 0.25 * x))
    }
}

/// Groups of 11 random digits: 10 for `c` (119 characters), 5 for `pad` (59).
pub const C_GROUPS: usize = 10;
pub const PAD_GROUPS: usize = 5;
const GROUP_DIGITS: usize = 11;
const GROUP_SPAN: u64 = 100_000_000_000;

/// Writes sysbench's `###########-###########-…` template with `groups` groups into `out`.
/// Each group is one uniform draw over its 10^11 values: the same strings as digit-by-digit
/// generation, at a fraction of the cost (prepare writes millions of them).
#[inline]
pub fn push_digit_groups(out: &mut String, groups: usize, rng: &mut SmallRng) {
    assert!(groups <= C_GROUPS, "at most {C_GROUPS} digit groups");
    let mut text = [b'-'; C_GROUPS * (GROUP_DIGITS + 1)];
    for group in text.chunks_exact_mut(GROUP_DIGITS + 1).take(groups) {
        let mut value = rng.gen_range(0..GROUP_SPAN);
        // Two digits per division, from the right; the odd one left over goes first.
        let mut end = GROUP_DIGITS;
        while end >= 2 {
            let pair = 2 * (value % 100) as usize;
            value /= 100;
            group[end - 2..end].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
            end -= 2;
        }
        group[0] = b'0' + value as u8;
    }
    let len = (groups * (GROUP_DIGITS + 1)).saturating_sub(1);
    out.push_str(std::str::from_utf8(&text[..len]).expect("ASCII digits and dashes"));
}

/// "00", "01", … "99" back to back.
const DIGIT_PAIRS: [u8; 200] = {
    let mut pairs = [0u8; 200];
    let mut i = 0;
    while i < 100 {
        pairs[2 * i] = b'0' + (i / 10) as u8;
        pairs[2 * i + 1] = b'0' + (i % 10) as u8;
        i += 1;
    }
    pairs
};

/// `sysbench.rand.unique()`: a permutation of the 32-bit integers, shared by every client so
/// that ids never repeat within a run (preshing's RandomSequence, as in sb_rand.c).
#[derive(Debug)]
pub struct UniqueIds {
    index: AtomicU32,
    offset: u32,
}

const UNIQUE_PRIME: u32 = 4_294_967_291;

fn permute(x: u32) -> u32 {
    if x >= UNIQUE_PRIME {
        return x;
    }
    let residue = ((u64::from(x) * u64::from(x)) % u64::from(UNIQUE_PRIME)) as u32;
    if x <= UNIQUE_PRIME / 2 {
        residue
    } else {
        UNIQUE_PRIME - residue
    }
}

impl UniqueIds {
    pub fn new(index: u32, offset: u32) -> Self {
        Self {
            index: AtomicU32::new(permute(permute(index).wrapping_add(0x682f_0161))),
            offset: permute(permute(offset).wrapping_add(0x4679_0905)),
        }
    }

    pub fn next(&self) -> u32 {
        let index = self.index.fetch_add(1, Ordering::Relaxed);
        permute(permute(index).wrapping_add(self.offset) ^ 0x5bf0_3635)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn dist(kind: RandType) -> Distribution {
        Distribution::new(DistributionOptions {
            kind,
            spec_iter: 12,
            spec_pct: 1,
            spec_res: 75,
            pareto_h: 0.2,
            zipfian_exp: 0.8,
        })
        .unwrap()
    }

    fn samples(kind: RandType, a: u32, b: u32, n: usize) -> Vec<u32> {
        let d = dist(kind);
        let mut rng = SmallRng::seed_from_u64(7);
        (0..n).map(|_| d.sample(&mut rng, a, b)).collect()
    }

    #[test]
    fn every_distribution_stays_in_range() {
        for kind in [
            RandType::Uniform,
            RandType::Gaussian,
            RandType::Special,
            RandType::Pareto,
            RandType::Zipfian,
        ] {
            for (a, b) in [(1, 1), (1, 2), (1, 10_000), (500, 600)] {
                let s = samples(kind, a, b, 20_000);
                assert!(s.iter().all(|v| (a..=b).contains(v)), "{kind:?} {a}..{b}");
            }
        }
    }

    #[test]
    fn special_puts_three_quarters_in_the_middle_percent() {
        let s = samples(RandType::Special, 1, 10_000, 200_000);
        // The window is [1 + 4999.5 - 50, 1 + 4999.5 + 50]: 1% of the range around the middle.
        let middle = s.iter().filter(|&&v| (4950..=5051).contains(&v)).count() as f64;
        let share = middle / s.len() as f64;
        // 75% land there directly, plus the gaussian's small share of that window (~1.3%).
        assert!((0.75..0.78).contains(&share), "{share}");
    }

    #[test]
    fn uniform_is_flat_and_gaussian_is_centred() {
        let s = samples(RandType::Uniform, 1, 10, 100_000);
        for v in 1..=10 {
            let n = s.iter().filter(|&&x| x == v).count();
            assert!((9_400..10_600).contains(&n), "{v}: {n}");
        }
        let g = samples(RandType::Gaussian, 1, 10_000, 50_000);
        let mean = g.iter().map(|&v| f64::from(v)).sum::<f64>() / g.len() as f64;
        assert!((mean - 5000.5).abs() < 30.0, "{mean}");
        let tails = g.iter().filter(|&&v| !(2000..=8000).contains(&v)).count();
        assert!(tails < g.len() / 100, "{tails}");
    }

    #[test]
    fn pareto_and_zipfian_favour_the_low_end() {
        // Pareto with h = 0.2: 80% of the values in the lowest 20% of the range.
        let p = samples(RandType::Pareto, 1, 10_000, 100_000);
        let low = p.iter().filter(|&&v| v <= 2_000).count() as f64 / p.len() as f64;
        assert!((0.78..0.82).contains(&low), "{low}");
        // Zipf with s = 0.8 over 100 values: P(1) = 1 / sum(k^-0.8) ~= 0.0737.
        let z = samples(RandType::Zipfian, 1, 100, 200_000);
        let ones = z.iter().filter(|&&v| v == 1).count() as f64 / z.len() as f64;
        let norm: f64 = (1..=100).map(|k| f64::from(k).powf(-0.8)).sum();
        assert!(
            (ones - 1.0 / norm).abs() < 0.004,
            "{ones} vs {}",
            1.0 / norm
        );
    }

    #[test]
    fn bad_options_are_refused() {
        let mut o = DistributionOptions {
            kind: RandType::Special,
            spec_iter: 0,
            spec_pct: 1,
            spec_res: 75,
            pareto_h: 0.2,
            zipfian_exp: 0.8,
        };
        assert!(Distribution::new(o).is_err());
        o.spec_iter = 12;
        o.pareto_h = 1.0;
        assert!(Distribution::new(o).is_err());
        assert_eq!(RandType::parse("special"), Some(RandType::Special));
        assert_eq!(RandType::parse("normal"), None);
    }

    #[test]
    fn digit_groups_have_sysbench_shapes() {
        let mut rng = SmallRng::seed_from_u64(1);
        let mut c = String::new();
        push_digit_groups(&mut c, C_GROUPS, &mut rng);
        assert_eq!(c.len(), 119);
        let groups: Vec<&str> = c.split('-').collect();
        assert_eq!(groups.len(), 10);
        assert!(groups
            .iter()
            .all(|g| g.len() == 11 && g.bytes().all(|b| b.is_ascii_digit())));
        let mut pad = String::new();
        push_digit_groups(&mut pad, PAD_GROUPS, &mut rng);
        assert_eq!(pad.len(), 59);
        assert_eq!(pad.matches('-').count(), 4);
        // Each group is its draw, zero-padded to 11 digits.
        let (mut a, mut b) = (SmallRng::seed_from_u64(9), SmallRng::seed_from_u64(9));
        let mut groups = String::new();
        push_digit_groups(&mut groups, 3, &mut a);
        let expected: Vec<String> = (0..3)
            .map(|_| format!("{:011}", b.gen_range(0..GROUP_SPAN)))
            .collect();
        assert_eq!(groups, expected.join("-"));
    }

    #[test]
    fn unique_ids_do_not_repeat() {
        let ids = UniqueIds::new(12345, 678);
        let mut seen: Vec<u32> = (0..100_000).map(|_| ids.next()).collect();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), 100_000);
    }
}

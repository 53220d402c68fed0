//! The generators against YCSB's constants and against the frequencies their method implies,
//! by chi-square on large samples with fixed seeds.

use rand::SeedableRng;

use super::*;

/// The upper tail of the chi-square law with `df` degrees of freedom at `x`, by the
/// Wilson-Hilferty cube-root normal approximation (good to a few percent of p at df >= 30).
pub(crate) fn chi_square_p(x: f64, df: f64) -> f64 {
    let h = 2.0 / (9.0 * df);
    let z = ((x / df).powf(1.0 / 3.0) - (1.0 - h)) / h.sqrt();
    0.5 * erfc(z / std::f64::consts::SQRT_2)
}

/// erfc by Abramowitz and Stegun 7.1.26 (absolute error under 1.5e-7).
fn erfc(x: f64) -> f64 {
    if x < 0.0 {
        return 2.0 - erfc(-x);
    }
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    poly * (-x * x).exp()
}

/// Pearson's statistic of observed counts against expected probabilities, and its p-value.
pub(crate) fn chi_square(observed: &[u64], expected: &[f64]) -> (f64, f64) {
    let n: u64 = observed.iter().sum();
    let stat: f64 = observed
        .iter()
        .zip(expected)
        .map(|(&o, &p)| {
            let e = p * n as f64;
            (o as f64 - e).powi(2) / e
        })
        .sum();
    (stat, chi_square_p(stat, (observed.len() - 1) as f64))
}

fn rng(seed: u64) -> SmallRng {
    SmallRng::seed_from_u64(seed)
}

#[test]
fn fnv_hash_gives_ycsbs_first_keys() {
    // The keys YCSB's load writes first (`insertorder=hashed`): user<fnvhash64(keynum)>.
    assert_eq!(fnvhash64(0), 6_284_781_860_667_377_211);
    assert_eq!(fnvhash64(1), 8_517_097_267_634_966_620);
    assert_eq!(fnvhash64(2), 1_820_151_046_732_198_393);
}

#[test]
fn zeta_reproduces_the_scrambled_constant() {
    let z = zeta(0, SCRAMBLED_ITEM_COUNT + 1, ZIPFIAN_CONSTANT, 0.0);
    assert!(
        (z - SCRAMBLED_ZETAN).abs() / SCRAMBLED_ZETAN < 1e-9,
        "{z} against {SCRAMBLED_ZETAN}"
    );
    // Incremental: zeta over 10 items from zeta over 4 is the sum over 10.
    let direct = zeta(0, 10, 0.8, 0.0);
    assert!((zeta(4, 10, 0.8, zeta(0, 4, 0.8, 0.0)) - direct).abs() < 1e-12);
}

/// The probability YCSB's method gives each rank of a Zipfian over `items` items.
fn rank_probabilities(z: &Zipfian, items: u64, ranks: u64) -> Vec<f64> {
    let first = 1.0 / z.zetan();
    let second = 0.5f64.powf(ZIPFIAN_CONSTANT) / z.zetan();
    (0..ranks)
        .map(|r| match r {
            0 => first,
            1 => second,
            _ => z.draw_below(r + 1, items) - z.draw_below(r, items),
        })
        .collect()
}

#[test]
fn zipfian_ranks_follow_the_method_and_the_law() {
    let items = 1_000;
    let mut z = Zipfian::new(0, items - 1, ZIPFIAN_CONSTANT, None);
    let expected = rank_probabilities(&z, items, items);
    assert!((expected.iter().sum::<f64>() - 1.0).abs() < 1e-9);
    let mut counts = vec![0u64; items as usize];
    let mut r = rng(7);
    for _ in 0..1_000_000 {
        counts[z.next(&mut r) as usize] += 1;
    }
    let (stat, p) = chi_square(&counts, &expected);
    assert!(p > 0.001, "chi-square {stat:.0} on 999 df, p {p}");
    // The method is Gray et al.'s approximation of zipf(0.99): the two first ranks are exact, the
    // third 17% above the law, and from the tenth on every rank within 4% of 1/(k^theta zeta(n)).
    for (k, &p) in expected.iter().enumerate() {
        let law = 1.0 / ((k + 1) as f64).powf(ZIPFIAN_CONSTANT) / z.zetan();
        let off = (p / law - 1.0).abs();
        let bound = match k {
            0 | 1 => 1e-12,
            2 => 0.18,
            3..=9 => 0.11,
            _ => 0.04,
        };
        assert!(off < bound, "rank {k}: {p} against {law}");
    }
}

#[test]
fn scrambled_keys_follow_the_hashed_ranks() {
    let keys = 1_000u64;
    let mut g = ScrambledZipfian::new(0, keys - 1, ZIPFIAN_CONSTANT);
    let items = SCRAMBLED_ITEM_COUNT + 1;
    // The first two million ranks mapped exactly; the rest (their hashes spread evenly over the
    // keys, each far below one count of the sample) shared out equally.
    const EXACT: u64 = 2_000_000;
    let mut expected = vec![0.0; keys as usize];
    for (rank, p) in rank_probabilities(g.ranks(), items, EXACT)
        .into_iter()
        .enumerate()
    {
        expected[(fnvhash64(rank as u64) % keys) as usize] += p;
    }
    let rest = 1.0 - expected.iter().sum::<f64>();
    assert!(rest > 0.3 && rest < 0.5, "{rest}");
    for e in &mut expected {
        *e += rest / keys as f64;
    }
    let mut counts = vec![0u64; keys as usize];
    let mut r = rng(11);
    for _ in 0..1_000_000 {
        counts[g.next(&mut r) as usize] += 1;
    }
    let (stat, p) = chi_square(&counts, &expected);
    assert!(p > 0.001, "chi-square {stat:.0} on 999 df, p {p}");
    // And the test can fail: the same draws against a flat law are refused outright.
    let flat = vec![1.0 / keys as f64; keys as usize];
    assert!(chi_square(&counts, &flat).1 < 1e-9);
}

#[test]
fn latest_favours_the_newest_keys() {
    let latest = 100_000;
    let mut g = SkewedLatest::new(latest, ZIPFIAN_CONSTANT);
    let mut r = rng(3);
    let draws = 100_000;
    let newest = (0..draws)
        .filter(|_| g.next(&mut r, latest) >= latest - latest / 100)
        .count();
    assert!(newest * 2 > draws, "{newest} of {draws} in the newest 1%");
    // Inserts move the head along: the newest key is drawn most once the range grew.
    let mut hits = 0;
    for _ in 0..10_000 {
        hits += u32::from(g.next(&mut r, latest + 500) == latest + 500);
    }
    assert!(hits > 10_000 / 40, "{hits}");
}

#[test]
fn hotspot_sends_its_share_to_the_hot_set() {
    let h = Hotspot::new(0, 9_999, 0.2, 0.8);
    let mut r = rng(5);
    let draws = 200_000;
    let hot = (0..draws).filter(|_| h.next(&mut r) < 2_000).count();
    let share = hot as f64 / draws as f64;
    // 80% on the hot fifth.
    assert!((share - 0.8).abs() < 0.005, "{share}");
}

//! The open load model's arrival schedule: Poisson arrivals at a fixed mean rate, shared by the
//! clients of one thread (a free client takes the next slot). Latency is measured from a slot's
//! intended time, so a slow server cannot hide behind a late start (no coordinated omission).

use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

pub struct ArrivalSchedule {
    next: Instant,
    mean_gap_s: f64,
    rng: SmallRng,
}

impl ArrivalSchedule {
    pub fn new(start: Instant, rate_per_s: f64, seed: u64) -> Self {
        let mut schedule = Self {
            next: start,
            mean_gap_s: 1.0 / rate_per_s,
            rng: SmallRng::seed_from_u64(seed),
        };
        // The first arrival is one random gap after the start, like every other.
        schedule.next = start + schedule.gap();
        schedule
    }

    fn gap(&mut self) -> Duration {
        // Exponential inter-arrival time; 1 - u lies in (0, 1], so the log is finite.
        let u: f64 = self.rng.gen();
        Duration::from_secs_f64(-(1.0 - u).ln() * self.mean_gap_s)
    }

    /// Takes the next slot: its intended start time.
    pub fn take(&mut self) -> Instant {
        let slot = self.next;
        let gap = self.gap();
        self.next += gap;
        slot
    }

    /// Slots still scheduled before `deadline` that nobody took; consumes them.
    pub fn count_remaining_before(&mut self, deadline: Instant) -> u64 {
        let mut n = 0;
        while self.next < deadline {
            n += 1;
            self.take();
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_rate_matches_the_target() {
        let start = Instant::now();
        let mut s = ArrivalSchedule::new(start, 1000.0, 7);
        let n = s.count_remaining_before(start + Duration::from_secs(100));
        // 100000 expected; Poisson sd ~316, so 1% is over 3 sd.
        assert!((99_000..=101_000).contains(&n), "{n}");
    }

    #[test]
    fn gaps_are_exponential() {
        let start = Instant::now();
        let mut s = ArrivalSchedule::new(start, 100.0, 11);
        let mut prev = s.take();
        let gaps: Vec<f64> = (0..20_000)
            .map(|_| {
                let t = s.take();
                let g = (t - prev).as_secs_f64();
                prev = t;
                g
            })
            .collect();
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64;
        // Exponential: standard deviation equals the mean.
        assert!((mean - 0.01).abs() < 0.0005, "{mean}");
        assert!(
            (var.sqrt() / mean - 1.0).abs() < 0.05,
            "{}",
            var.sqrt() / mean
        );
    }
}

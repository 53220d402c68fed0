//! `dbscale micro cpu`: iterations per second of the kernels (kernels.rs) on one thread and on
//! every CPU at once, each thread checking every iteration's checksum against the variant's
//! expected value. Not CoreMark: its kernels are of the same kinds, its scores are not
//! comparable with CoreMark's.

use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::kernels::iteration;
use crate::Error;

/// Distinct data sets the iterations cycle through.
pub const VARIANTS: u32 = 8;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CpuConfig {
    /// Threads; 0 means one per CPU the process may run on.
    #[serde(default)]
    pub threads: usize,
    /// How long each measurement runs.
    pub seconds: f64,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CpuScore {
    pub threads: usize,
    pub iterations: u64,
    pub seconds: f64,
    pub iterations_per_s: f64,
    pub per_thread: Vec<u64>,
}

/// The expected checksum of each variant (computed once, then every iteration is checked).
pub fn expected() -> Vec<u16> {
    (0..VARIANTS).map(iteration).collect()
}

/// Runs the kernels on `threads` threads for `seconds`; an error if a checksum is ever wrong.
pub fn run(config: &CpuConfig) -> Result<CpuScore, Error> {
    if !(0.01..=3600.0).contains(&config.seconds) {
        return Err(Error::Config(format!(
            "a CPU measurement lasts from 0.01 to 3600 s, got {}",
            config.seconds
        )));
    }
    let threads = match config.threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    };
    let expected = expected();
    let duration = Duration::from_secs_f64(config.seconds);
    let start = Instant::now();
    let counts: Vec<Result<u64, Error>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| scope.spawn(|| iterate(&expected, start, duration)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(Error::Internal("a CPU thread panicked".into())))
            })
            .collect()
    });
    let seconds = start.elapsed().as_secs_f64();
    let per_thread = counts.into_iter().collect::<Result<Vec<u64>, Error>>()?;
    let iterations = per_thread.iter().sum();
    Ok(CpuScore {
        threads,
        iterations,
        seconds,
        iterations_per_s: iterations as f64 / seconds,
        per_thread,
    })
}

/// One thread's iterations until `duration` has passed since `start`.
fn iterate(expected: &[u16], start: Instant, duration: Duration) -> Result<u64, Error> {
    let mut done = 0u64;
    while start.elapsed() < duration {
        // A batch between clock reads keeps the clock's cost out of the score.
        for _ in 0..16 {
            let variant = (done % u64::from(VARIANTS)) as u32;
            let sum = iteration(variant);
            if sum != expected[variant as usize] {
                return Err(Error::Internal(format!(
                    "CPU kernel checksum mismatch on variant {variant}: {sum:#06x} instead of \
                     {:#06x} (a miscompiled build or a faulty CPU)",
                    expected[variant as usize]
                )));
            }
            done += 1;
        }
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_thread_runs_and_the_rate_adds_up() {
        let score = run(&CpuConfig {
            threads: 2,
            seconds: 0.2,
        })
        .unwrap();
        assert_eq!(score.per_thread.len(), 2);
        assert!(score.per_thread.iter().all(|&n| n >= 16));
        assert_eq!(score.iterations, score.per_thread.iter().sum::<u64>());
        assert!((score.iterations_per_s * score.seconds - score.iterations as f64).abs() < 1.0);
    }

    #[test]
    fn silly_durations_are_refused() {
        for seconds in [0.0, -1.0, 1e9] {
            assert!(run(&CpuConfig {
                threads: 1,
                seconds
            })
            .is_err());
        }
    }
}

//! Stretches without a successful transaction, per node and over the whole target, to the
//! millisecond: what a node's loss, a failover or a restart cost. Every success moves its
//! node's (and the target's) "last success" forward with one atomic `fetch_max`; a move of
//! [`GAP_MIN`] or more is a gap, kept in a short list (the longest ones when it fills up).
//! The stretch before the first success and after the last are the result's
//! `first_success_s` and `last_success_s`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::stats::result::{Gap, NodeAvailability};

/// The shortest stretch without a success that is kept.
pub const GAP_MIN: Duration = Duration::from_millis(100);
/// Gaps kept per node (the longest, when there are more).
const GAPS_KEPT: usize = 1000;
/// `first` before any success; `last` starts at 0, so both store nanoseconds plus one.
const NONE: u64 = u64::MAX;

pub struct Availability {
    epoch: Instant,
    /// Per node, then one for the whole target: nanoseconds since `epoch`, plus one.
    first: Vec<AtomicU64>,
    last: Vec<AtomicU64>,
    gaps: Vec<Mutex<Vec<(u64, u64)>>>,
}

impl Availability {
    pub fn new(nodes: usize) -> Self {
        let slots = nodes + 1;
        Self {
            epoch: Instant::now(),
            first: (0..slots).map(|_| AtomicU64::new(NONE)).collect(),
            last: (0..slots).map(|_| AtomicU64::new(0)).collect(),
            gaps: (0..slots).map(|_| Mutex::new(Vec::new())).collect(),
        }
    }

    /// A transaction on `node` succeeded at `at` (in the measured window).
    pub fn success(&self, node: usize, at: Instant) {
        let ns = at.saturating_duration_since(self.epoch).as_nanos() as u64 + 1;
        let whole = self.first.len() - 1;
        for slot in [node.min(whole - 1), whole] {
            self.first[slot].fetch_min(ns, Ordering::Relaxed);
            let before = self.last[slot].fetch_max(ns, Ordering::Relaxed);
            if before != 0 && ns > before && ns - before >= GAP_MIN.as_nanos() as u64 {
                keep(
                    &mut self.gaps[slot].lock().expect("gaps lock"),
                    (before, ns),
                );
            }
        }
    }

    /// Each node's figures (then the whole target's) in seconds from `start`.
    pub fn figures(&self, start: Instant) -> Vec<NodeAvailability> {
        let offset = |ns: u64| -> Option<f64> {
            (ns != NONE && ns != 0).then(|| {
                let at = self.epoch + Duration::from_nanos(ns - 1);
                signed_seconds(at, start)
            })
        };
        (0..self.first.len())
            .map(|slot| {
                let mut gaps: Vec<Gap> = self.gaps[slot]
                    .lock()
                    .expect("gaps lock")
                    .iter()
                    .filter_map(|&(from, to)| {
                        Some(Gap {
                            from_s: offset(from)?,
                            to_s: offset(to)?,
                        })
                    })
                    .collect();
                gaps.sort_by(|a, b| a.from_s.total_cmp(&b.from_s));
                NodeAvailability {
                    first_success_s: offset(self.first[slot].load(Ordering::Relaxed)),
                    last_success_s: offset(self.last[slot].load(Ordering::Relaxed)),
                    gaps,
                }
            })
            .collect()
    }
}

fn signed_seconds(at: Instant, start: Instant) -> f64 {
    if at >= start {
        (at - start).as_secs_f64()
    } else {
        -(start - at).as_secs_f64()
    }
}

/// Adds `gap`, dropping the shortest when the list is full.
fn keep(gaps: &mut Vec<(u64, u64)>, gap: (u64, u64)) {
    if gaps.len() < GAPS_KEPT {
        gaps.push(gap);
        return;
    }
    let length = |g: &(u64, u64)| g.1 - g.0;
    if let Some((i, shortest)) = gaps.iter().enumerate().min_by_key(|(_, g)| length(g)) {
        if length(shortest) < length(&gap) {
            gaps[i] = gap;
        }
    }
}

/// The stretches in which no worker of a scaled-out run had a success: the intersection of
/// the workers' gap lists, each also open before its first success and after its last.
pub fn intersect(parts: &[&NodeAvailability], duration_s: f64) -> NodeAvailability {
    let spans = |a: &NodeAvailability| -> Vec<(f64, f64)> {
        let Some(first) = a.first_success_s else {
            return vec![(f64::NEG_INFINITY, f64::INFINITY)];
        };
        let mut out = vec![(f64::NEG_INFINITY, first)];
        out.extend(a.gaps.iter().map(|g| (g.from_s, g.to_s)));
        out.push((a.last_success_s.unwrap_or(duration_s), f64::INFINITY));
        out
    };
    let mut common = vec![(f64::NEG_INFINITY, f64::INFINITY)];
    for part in parts {
        let theirs = spans(part);
        let mut next = Vec::new();
        for &(a0, a1) in &common {
            for &(b0, b1) in &theirs {
                let (from, to) = (a0.max(b0), a1.min(b1));
                if to > from {
                    next.push((from, to));
                }
            }
        }
        common = next;
    }
    let first = parts
        .iter()
        .filter_map(|p| p.first_success_s)
        .reduce(f64::min);
    let last = parts
        .iter()
        .filter_map(|p| p.last_success_s)
        .reduce(f64::max);
    let gap_min = GAP_MIN.as_secs_f64();
    NodeAvailability {
        first_success_s: first,
        last_success_s: last,
        gaps: common
            .into_iter()
            .filter(|(from, to)| from.is_finite() && to.is_finite() && to - from >= gap_min)
            .map(|(from_s, to_s)| Gap { from_s, to_s })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pause_on_one_node_is_its_gap_and_not_the_targets() {
        let tracker = Availability::new(2);
        let start = tracker.epoch;
        let ms = |n: u64| start + Duration::from_millis(n);
        for t in (0..1000).step_by(10) {
            tracker.success(1, ms(t));
            if !(300..700).contains(&t) {
                tracker.success(0, ms(t));
            }
        }
        let figures = tracker.figures(start);
        assert_eq!(figures.len(), 3);
        let node0 = &figures[0];
        assert_eq!(node0.gaps.len(), 1);
        assert!((node0.gaps[0].from_s - 0.29).abs() < 1e-9);
        assert!((node0.gaps[0].to_s - 0.70).abs() < 1e-9);
        assert!(figures[1].gaps.is_empty() && figures[2].gaps.is_empty());
        assert_eq!(figures[2].first_success_s, Some(0.0));
        assert!((figures[2].last_success_s.unwrap() - 0.99).abs() < 1e-9);
    }

    #[test]
    fn a_full_list_keeps_the_longest_gaps() {
        let mut gaps: Vec<(u64, u64)> = (0..GAPS_KEPT as u64)
            .map(|i| (i * 10, i * 10 + 5))
            .collect();
        keep(&mut gaps, (1, 1_000_000));
        assert_eq!(gaps.len(), GAPS_KEPT);
        assert!(gaps.contains(&(1, 1_000_000)));
        keep(&mut gaps, (0, 1));
        assert!(!gaps.contains(&(0, 1)));
    }

    #[test]
    fn workers_are_down_together_only_where_their_gaps_overlap() {
        let gap = |from_s, to_s| Gap { from_s, to_s };
        let a = NodeAvailability {
            first_success_s: Some(0.0),
            last_success_s: Some(10.0),
            gaps: vec![gap(2.0, 5.0)],
        };
        let b = NodeAvailability {
            first_success_s: Some(0.5),
            last_success_s: Some(9.0),
            gaps: vec![gap(3.0, 6.0)],
        };
        let merged = intersect(&[&a, &b], 10.0);
        assert_eq!(merged.gaps.len(), 1);
        assert_eq!((merged.gaps[0].from_s, merged.gaps[0].to_s), (3.0, 5.0));
        assert_eq!(merged.first_success_s, Some(0.0));
        assert_eq!(merged.last_success_s, Some(10.0));
    }
}

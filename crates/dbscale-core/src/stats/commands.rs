//! Per-command latencies of scripts, as pgbench's `-r` reports them: for each command of each
//! script, how often it ran, its mean and largest latency, and how often it failed. Sums, not
//! histograms: a client keeps one tally per command, and tallies add up exactly across clients,
//! threads and workers.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::latency::LatencyHistogram;

/// One command's running sums.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CommandTally {
    pub count: u64,
    pub sum_us: f64,
    pub max_us: f64,
    pub failures: u64,
}

impl CommandTally {
    #[inline]
    pub fn add(&mut self, micros: f64) {
        self.count += 1;
        self.sum_us += micros;
        self.max_us = self.max_us.max(micros);
    }

    /// The sums as a result keeps them (milliseconds), read back exactly to merge workers.
    pub fn from_ms(count: u64, failures: u64, sum_ms: f64, max_ms: Option<f64>) -> Self {
        Self {
            count,
            sum_us: sum_ms * 1000.0,
            max_us: max_ms.unwrap_or(0.0) * 1000.0,
            failures,
        }
    }

    pub fn mean_ms(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum_us / self.count as f64 / 1000.0)
    }

    pub fn max_ms(&self) -> Option<f64> {
        (self.count > 0).then(|| self.max_us / 1000.0)
    }

    pub fn merge(&mut self, other: &CommandTally) {
        self.count += other.count;
        self.sum_us += other.sum_us;
        self.max_us = self.max_us.max(other.max_us);
        self.failures += other.failures;
    }
}

/// Adds `more` into `into`, index by index (growing `into` when it is shorter).
pub fn merge_tallies(into: &mut Vec<CommandTally>, more: &[CommandTally]) {
    if into.len() < more.len() {
        into.resize(more.len(), CommandTally::default());
    }
    for (sum, tally) in into.iter_mut().zip(more) {
        sum.merge(tally);
    }
}

/// Where a command is: its script, its line, its first line of text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandPlace {
    pub script: String,
    pub line: u32,
    pub text: String,
}

/// One command's figures in the result.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct CommandLatency {
    pub script: String,
    pub line: u32,
    pub command: String,
    pub count: u64,
    pub failures: u64,
    pub mean_ms: Option<f64>,
    pub max_ms: Option<f64>,
    /// Total time in the command, kept so workers' figures merge exactly.
    pub sum_ms: f64,
}

impl CommandLatency {
    pub fn of(place: &CommandPlace, tally: &CommandTally) -> Self {
        Self {
            script: place.script.clone(),
            line: place.line,
            command: place.text.clone(),
            count: tally.count,
            failures: tally.failures,
            mean_ms: tally.mean_ms(),
            max_ms: tally.max_ms(),
            sum_ms: tally.sum_us / 1000.0,
        }
    }

    /// The sums back, to merge workers' results.
    pub fn tally(&self) -> CommandTally {
        CommandTally::from_ms(self.count, self.failures, self.sum_ms, self.max_ms)
    }
}

/// One statement of a built-in workload as the clients timed it (`statement_timing`): from
/// sending it to its whole answer, failures apart.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct StatementLatency {
    /// The workload's name for it (e.g. `update_accounts`).
    pub name: String,
    pub index: u32,
    pub sql: String,
    #[serde(flatten)]
    pub figures: StatementFigures,
}

/// A statement's counts, times and histogram (base64 HDR, as the run's own).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct StatementFigures {
    pub count: u64,
    pub failures: u64,
    pub mean_ms: Option<f64>,
    pub max_ms: Option<f64>,
    pub sum_ms: f64,
    pub p50_ms: Option<f64>,
    pub p95_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    pub histogram: String,
}

impl StatementFigures {
    pub fn of(tally: &CommandTally, histogram: &LatencyHistogram) -> Self {
        let at = |q: f64| (tally.count > 0).then(|| histogram.quantile_ms(q));
        Self {
            count: tally.count,
            failures: tally.failures,
            mean_ms: tally.mean_ms(),
            max_ms: tally.max_ms(),
            sum_ms: tally.sum_us / 1000.0,
            p50_ms: at(0.5),
            p95_ms: at(0.95),
            p99_ms: at(0.99),
            histogram: histogram.to_base64(),
        }
    }

    /// The sums back, to merge workers' results.
    pub fn tally(&self) -> CommandTally {
        CommandTally::from_ms(self.count, self.failures, self.sum_ms, self.max_ms)
    }
}

/// Each statement's sums and histogram, merged over threads or workers.
#[derive(Debug, Clone, Default)]
pub struct StatementSums {
    pub tallies: Vec<CommandTally>,
    pub histograms: Vec<LatencyHistogram>,
}

impl StatementSums {
    pub fn add(&mut self, index: usize, tally: &CommandTally, histogram: &LatencyHistogram) {
        if self.tallies.len() <= index {
            self.tallies.resize(index + 1, CommandTally::default());
            self.histograms
                .resize_with(index + 1, LatencyHistogram::new);
        }
        self.tallies[index].merge(tally);
        self.histograms[index].merge(histogram);
    }

    pub fn merge(&mut self, other: &StatementSums) {
        for (index, (tally, histogram)) in other.tallies.iter().zip(&other.histograms).enumerate() {
            self.add(index, tally, histogram);
        }
    }

    /// The result's list: every statement that ran or failed, named as the workload names it.
    pub fn latencies(&self, statements: &[(String, String)]) -> Vec<StatementLatency> {
        self.tallies
            .iter()
            .zip(&self.histograms)
            .enumerate()
            .filter(|(_, (t, _))| t.count > 0 || t.failures > 0)
            .map(|(index, (tally, histogram))| {
                let (name, sql) = statements.get(index).cloned().unwrap_or_default();
                StatementLatency {
                    name,
                    index: index as u32,
                    sql,
                    figures: StatementFigures::of(tally, histogram),
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tallies_merge_exactly_and_round_trip() {
        let mut a = vec![CommandTally::default(); 2];
        a[0].add(100.0);
        a[0].add(300.0);
        let mut b = vec![CommandTally::default(); 3];
        b[0].add(500.0);
        b[2].failures = 2;
        merge_tallies(&mut a, &b);
        assert_eq!(
            (a.len(), a[0].count, a[0].sum_us, a[0].max_us),
            (3, 3, 900.0, 500.0)
        );
        assert_eq!(a[2].failures, 2);
        let place = CommandPlace {
            script: "s.sql".into(),
            line: 4,
            text: "SELECT 1;".into(),
        };
        let figures = CommandLatency::of(&place, &a[0]);
        assert_eq!((figures.mean_ms, figures.max_ms), (Some(0.3), Some(0.5)));
        assert_eq!(figures.tally(), a[0]);
        assert_eq!(CommandLatency::of(&place, &a[1]).mean_ms, None);
    }
}

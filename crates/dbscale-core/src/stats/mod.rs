//! Measurement: HDR latency histograms, per-interval snapshots and the run result they feed.

pub mod commands;
pub mod counts;
pub mod interval;
pub mod latency;
pub mod result;
pub mod stored;
pub mod tpcc;

pub use interval::{IntervalMerger, IntervalSnapshot, IntervalStats};
pub use latency::{LatencyHistogram, LatencySummary};
pub use result::RunResult;
pub use stored::{CountsAbove, HistogramFigures};

//! Measurement: HDR latency histograms, per-interval snapshots and the run result they feed.

pub mod interval;
pub mod latency;
pub mod result;

pub use interval::{IntervalMerger, IntervalSnapshot, IntervalStats};
pub use latency::{LatencyHistogram, LatencySummary};
pub use result::RunResult;

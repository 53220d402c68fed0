//! Latency histograms: microsecond resolution, 3 significant digits, exact merging, and the HDR
//! V2 compressed (base64) serialization other HDR tools read.

use base64::Engine as _;
use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Highest value tracked: one hour in microseconds. Larger values are clamped and counted.
const MAX_US: u64 = 3_600_000_000;
const SIGNIFICANT_DIGITS: u8 = 3;

/// A latency histogram in microseconds.
#[derive(Debug, Clone)]
pub struct LatencyHistogram {
    histogram: Histogram<u64>,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    pub fn new() -> Self {
        let histogram = Histogram::new_with_bounds(1, MAX_US, SIGNIFICANT_DIGITS)
            .expect("static histogram bounds are valid");
        Self { histogram }
    }

    /// Records one value; zero is recorded as 1 us, values past an hour as an hour.
    #[inline]
    pub fn record_us(&mut self, micros: u64) {
        let value = micros.clamp(1, MAX_US);
        // Cannot fail: the value is within the bounds.
        let _ = self.histogram.record(value);
    }

    pub fn merge(&mut self, other: &LatencyHistogram) {
        // Cannot fail: both share the same bounds.
        let _ = self.histogram.add(&other.histogram);
    }

    pub fn count(&self) -> u64 {
        self.histogram.len()
    }

    /// Values over `limit_us` (to the histogram's precision: 3 significant digits).
    pub fn count_above_us(&self, limit_us: u64) -> u64 {
        let limit = limit_us.clamp(1, MAX_US);
        let within = self.histogram.count_between(0, limit);
        self.histogram.len().saturating_sub(within)
    }

    pub fn is_empty(&self) -> bool {
        self.histogram.is_empty()
    }

    pub fn reset(&mut self) {
        self.histogram.reset();
    }

    /// Value at `quantile` (0..=1) in milliseconds.
    pub fn quantile_ms(&self, quantile: f64) -> f64 {
        self.histogram.value_at_quantile(quantile) as f64 / 1000.0
    }

    pub fn mean_ms(&self) -> f64 {
        self.histogram.mean() / 1000.0
    }

    pub fn max_ms(&self) -> f64 {
        self.histogram.max() as f64 / 1000.0
    }

    pub fn min_ms(&self) -> f64 {
        self.histogram.min() as f64 / 1000.0
    }

    pub fn stddev_ms(&self) -> f64 {
        self.histogram.stdev() / 1000.0
    }

    /// The summary reported for a run, or `None` when nothing was recorded.
    pub fn summary(&self) -> Option<LatencySummary> {
        if self.is_empty() {
            return None;
        }
        let h = &self.histogram;
        let ms = |v: u64| v as f64 / 1000.0;
        Some(LatencySummary {
            count: h.len(),
            min: ms(h.min()),
            mean: h.mean() / 1000.0,
            stddev: h.stdev() / 1000.0,
            p50: ms(h.value_at_quantile(0.50)),
            p90: ms(h.value_at_quantile(0.90)),
            p95: ms(h.value_at_quantile(0.95)),
            p99: ms(h.value_at_quantile(0.99)),
            p999: ms(h.value_at_quantile(0.999)),
            max: ms(h.max()),
        })
    }

    /// HDR V2 deflate-compressed encoding in base64 (the `HISTF…` form HdrHistogram tools read).
    pub fn to_base64(&self) -> String {
        let mut bytes = Vec::new();
        V2DeflateSerializer::new()
            .serialize(&self.histogram, &mut bytes)
            .expect("serializing into memory cannot fail");
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    /// Decodes [`LatencyHistogram::to_base64`] output.
    pub fn from_base64(text: &str) -> Result<Self, String> {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(text.trim())
            .map_err(|e| format!("histogram is not base64: {e}"))?;
        let decoded: Histogram<u64> = hdrhistogram::serialization::Deserializer::new()
            .deserialize(&mut bytes.as_slice())
            .map_err(|e| format!("histogram does not decode: {e:?}"))?;
        if decoded.sigfig() != SIGNIFICANT_DIGITS {
            return Err(format!(
                "histogram recorded with {} significant digits, dbscale's have {SIGNIFICANT_DIGITS}",
                decoded.sigfig()
            ));
        }
        let mut histogram = Self::new();
        histogram
            .histogram
            .add(&decoded)
            .map_err(|e| format!("histogram out of range: {e:?}"))?;
        Ok(histogram)
    }
}

/// Latency figures in milliseconds.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct LatencySummary {
    pub count: u64,
    pub min: f64,
    pub mean: f64,
    pub stddev: f64,
    pub p50: f64,
    pub p90: f64,
    pub p95: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_within_three_significant_digits() {
        let mut h = LatencyHistogram::new();
        for us in 1..=10_000u64 {
            h.record_us(us);
        }
        let s = h.summary().unwrap();
        assert_eq!(s.count, 10_000);
        assert!((s.p50 - 5.0).abs() / 5.0 < 0.001, "p50 {}", s.p50);
        assert!((s.p99 - 9.9).abs() / 9.9 < 0.001, "p99 {}", s.p99);
        assert!((s.max - 10.0).abs() / 10.0 < 0.001);
    }

    #[test]
    fn merge_equals_recording_everything_in_one() {
        let (mut a, mut b, mut all) = (
            LatencyHistogram::new(),
            LatencyHistogram::new(),
            LatencyHistogram::new(),
        );
        for v in 0..5000u64 {
            let x = (v * 7919) % 100_000 + 1;
            if v % 2 == 0 {
                a.record_us(x)
            } else {
                b.record_us(x)
            }
            all.record_us(x);
        }
        a.merge(&b);
        assert_eq!(a.summary(), all.summary());
    }

    #[test]
    fn base64_round_trip_keeps_every_count() {
        let mut h = LatencyHistogram::new();
        for v in [1u64, 10, 100, 1000, 123_456, 3_000_000] {
            h.record_us(v);
        }
        let text = h.to_base64();
        assert!(
            text.starts_with("HISTF"),
            "V2 deflate encoding, got {}",
            &text[..8]
        );
        let back = LatencyHistogram::from_base64(&text).unwrap();
        assert_eq!(back.summary(), h.summary());
    }

    #[test]
    fn out_of_range_values_are_clamped_not_lost() {
        let mut h = LatencyHistogram::new();
        h.record_us(0);
        h.record_us(u64::MAX);
        assert_eq!(h.count(), 2);
    }
}

//! Stored latency histograms read back: decoded, merged exactly and read. The statistics of a
//! point (several runs) and of one run's per-type latencies come from here, so every figure is
//! read from histograms the way a run reports its own, never averaged.

use schemars::JsonSchema;
use serde::Serialize;

use super::latency::LatencyHistogram;
use crate::Error;

/// Figures of a merged histogram in milliseconds; `values` follow the quantiles asked for.
/// An empty histogram has a count of zero and no figures.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct HistogramFigures {
    pub count: u64,
    pub min: Option<f64>,
    pub mean: Option<f64>,
    pub stddev: Option<f64>,
    pub max: Option<f64>,
    /// The quantiles asked for; `values` follow them.
    pub quantiles: Vec<f64>,
    pub values: Vec<Option<f64>>,
}

/// One stored histogram's count and the counts over each limit asked for.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct CountsAbove {
    pub count: u64,
    /// Values over each limit, in the limits' order.
    pub above: Vec<u64>,
}

/// Each encoded histogram's count and its counts over `limits_ms` (a capacity level's seconds
/// against its latency objectives).
pub fn counts_above<'a>(
    blobs: impl IntoIterator<Item = &'a str>,
    limits_ms: &[f64],
) -> Result<Vec<CountsAbove>, Error> {
    if let Some(bad) = limits_ms.iter().find(|l| !(l.is_finite() && **l > 0.0)) {
        return Err(Error::Config(format!(
            "latency limit {bad} ms is not positive"
        )));
    }
    let limits_us: Vec<u64> = limits_ms.iter().map(|ms| (ms * 1000.0) as u64).collect();
    blobs
        .into_iter()
        .enumerate()
        .map(|(index, blob)| {
            let histogram = LatencyHistogram::from_base64(blob)
                .map_err(|e| Error::Histogram(format!("stored histogram {}: {e}", index + 1)))?;
            Ok(CountsAbove {
                count: histogram.count(),
                above: limits_us
                    .iter()
                    .map(|&l| histogram.count_above_us(l))
                    .collect(),
            })
        })
        .collect()
}

/// The exact sum of encoded histograms (base64 HDR V2 deflate, dbscale's bounds and precision).
pub fn merge_encoded<'a>(
    blobs: impl IntoIterator<Item = &'a str>,
) -> Result<LatencyHistogram, Error> {
    let mut merged = LatencyHistogram::new();
    for (index, blob) in blobs.into_iter().enumerate() {
        let histogram = LatencyHistogram::from_base64(blob)
            .map_err(|e| Error::Histogram(format!("stored histogram {}: {e}", index + 1)))?;
        merged.merge(&histogram);
    }
    Ok(merged)
}

/// Count, min, mean, stddev, max and the values at `quantiles` (each within 0..=1).
pub fn figures(histogram: &LatencyHistogram, quantiles: &[f64]) -> Result<HistogramFigures, Error> {
    if let Some(bad) = quantiles.iter().find(|q| !(0.0..=1.0).contains(*q)) {
        return Err(Error::Config(format!("quantile {bad} is outside 0..=1")));
    }
    let present = !histogram.is_empty();
    let some = |value: f64| present.then_some(value);
    Ok(HistogramFigures {
        count: histogram.count(),
        min: some(histogram.min_ms()),
        mean: some(histogram.mean_ms()),
        stddev: some(histogram.stddev_ms()),
        max: some(histogram.max_ms()),
        quantiles: quantiles.to_vec(),
        values: quantiles
            .iter()
            .map(|&q| some(histogram.quantile_ms(q)))
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recorded(values: impl IntoIterator<Item = u64>) -> LatencyHistogram {
        let mut histogram = LatencyHistogram::new();
        for value in values {
            histogram.record_us(value);
        }
        histogram
    }

    #[test]
    fn counts_above_each_limit() {
        let a = recorded(1..=1000); // 1 us .. 1 ms
        let b = recorded([5_000, 20_000, 50_000]);
        let counts = counts_above(
            [a.to_base64().as_str(), b.to_base64().as_str()],
            &[0.5, 10.0],
        )
        .unwrap();
        assert_eq!(counts[0].count, 1000);
        assert!((499..=501).contains(&counts[0].above[0]), "{:?}", counts[0]);
        assert_eq!(counts[0].above[1], 0);
        assert_eq!(counts[1].above, vec![3, 2]);
        assert!(counts_above([a.to_base64().as_str()], &[0.0]).is_err());
    }

    #[test]
    fn merging_stored_histograms_equals_recording_into_one() {
        let a = recorded((1..=500).map(|v| v * 13));
        let b = recorded((1..=700).map(|v| v * 29 + 5));
        let all = recorded(
            (1..=500)
                .map(|v| v * 13)
                .chain((1..=700).map(|v| v * 29 + 5)),
        );
        let merged = merge_encoded([a.to_base64().as_str(), b.to_base64().as_str()]).unwrap();
        assert_eq!(merged.summary(), all.summary());
    }

    #[test]
    fn figures_match_the_run_summary() {
        let histogram = recorded(1..=10_000);
        let summary = histogram.summary().unwrap();
        let read = figures(&histogram, &[0.5, 0.95, 0.99, 0.999]).unwrap();
        assert_eq!(read.count, summary.count);
        assert_eq!(read.min, Some(summary.min));
        assert_eq!(read.mean, Some(summary.mean));
        assert_eq!(read.stddev, Some(summary.stddev));
        assert_eq!(read.max, Some(summary.max));
        let expected = [summary.p50, summary.p95, summary.p99, summary.p999];
        assert_eq!(read.values, expected.map(Some).to_vec());
    }

    #[test]
    fn an_empty_merge_has_no_figures() {
        let read = figures(&merge_encoded([]).unwrap(), &[0.5]).unwrap();
        assert_eq!(read.count, 0);
        assert_eq!((read.min, read.max, read.values[0]), (None, None, None));
    }

    #[test]
    fn a_damaged_blob_is_a_histogram_error_naming_it() {
        let good = recorded([10, 20]).to_base64();
        let error = merge_encoded([good.as_str(), "not a histogram"]).unwrap_err();
        assert_eq!(error.kind(), "histogram");
        assert!(error.to_string().contains("stored histogram 2"), "{error}");
    }

    #[test]
    fn quantiles_outside_zero_to_one_are_refused() {
        assert!(figures(&LatencyHistogram::new(), &[1.5]).is_err());
    }
}

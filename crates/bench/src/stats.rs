//! Percentiles: HDR histograms for recording, and the summary numbers a report carries.
//!
//! Every duration is recorded in nanoseconds into an HDR histogram with 3 significant digits
//! (a recorded value is off by at most 0.1%), from 1 ns to an hour, so a presign (hundreds of
//! nanoseconds) and a GET over a long link (hundreds of milliseconds) share one code path and
//! a run of any length costs the same memory.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// The largest duration recorded: longer ones are clamped (and show as the maximum).
const HIGHEST_NS: u64 = 3_600_000_000_000;

/// One distribution of durations.
#[derive(Clone)]
pub struct Durations(Histogram<u64>);

impl Default for Durations {
    fn default() -> Self {
        Self::new()
    }
}

impl Durations {
    /// An empty distribution.
    pub fn new() -> Self {
        // The bounds are constants that hdrhistogram accepts; a failure would be a bug here.
        #[allow(clippy::expect_used)]
        let h = Histogram::new_with_bounds(1, HIGHEST_NS, 3).expect("valid histogram bounds");
        Self(h)
    }

    /// Adds one duration in nanoseconds (0 counts as 1 ns; over an hour counts as an hour).
    pub fn record(&mut self, ns: u64) {
        self.0.saturating_record(ns.clamp(1, HIGHEST_NS));
    }

    /// Adds every value of `other`.
    pub fn merge(&mut self, other: &Durations) {
        // Same bounds on both sides: adding cannot fail.
        let _ = self.0.add(&other.0);
    }

    /// How many values were recorded.
    pub fn len(&self) -> u64 {
        self.0.len()
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The value at quantile `q` (0..=1), in nanoseconds: the smallest recorded value such that
    /// a fraction `q` of all values is at or below it (nearest rank), within 0.1%.
    pub fn quantile_ns(&self, q: f64) -> u64 {
        if self.0.is_empty() {
            return 0;
        }
        self.0.value_at_quantile(q)
    }

    /// The summary a report carries, in milliseconds.
    pub fn summary(&self) -> Summary {
        let ms = |ns: u64| ns as f64 / 1e6;
        Summary {
            count: self.len(),
            mean: if self.is_empty() {
                0.0
            } else {
                self.0.mean() / 1e6
            },
            min: ms(if self.is_empty() { 0 } else { self.0.min() }),
            p25: ms(self.quantile_ns(0.25)),
            p50: ms(self.quantile_ns(0.50)),
            p75: ms(self.quantile_ns(0.75)),
            p90: ms(self.quantile_ns(0.90)),
            p99: ms(self.quantile_ns(0.99)),
            p999: ms(self.quantile_ns(0.999)),
            max: ms(if self.is_empty() { 0 } else { self.0.max() }),
        }
    }

    /// The cumulative distribution for plots: `(milliseconds, fraction at or below)` at each
    /// recorded bucket, ascending.
    pub fn cdf(&self) -> Vec<(f64, f64)> {
        let total = self.len() as f64;
        if total == 0.0 {
            return Vec::new();
        }
        let mut seen = 0u64;
        self.0
            .iter_recorded()
            .map(|v| {
                seen += v.count_at_value();
                (v.value_iterated_to() as f64 / 1e6, seen as f64 / total)
            })
            .collect()
    }

    /// Counts per logarithmic bucket for a histogram plot: `(upper bound ms, count)`, ten
    /// buckets per factor of ten, empty buckets left out.
    pub fn log_buckets(&self) -> Vec<(f64, u64)> {
        let mut out: Vec<(f64, u64)> = Vec::new();
        for v in self.0.iter_recorded() {
            let ms = v.value_iterated_to() as f64 / 1e6;
            let upper = 10f64.powf((ms.log10() * 10.0).ceil() / 10.0);
            match out.last_mut() {
                Some((u, c)) if (*u - upper).abs() < upper * 1e-9 => *c += v.count_at_value(),
                _ => out.push((upper, v.count_at_value())),
            }
        }
        out
    }
}

/// A distribution in milliseconds: what the JSON report's `latency_ms` and `ttfb_ms` hold.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Values recorded.
    pub count: u64,
    /// Arithmetic mean.
    pub mean: f64,
    /// Smallest value.
    pub min: f64,
    /// 25th percentile.
    pub p25: f64,
    /// Median.
    pub p50: f64,
    /// 75th percentile.
    pub p75: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// 99.9th percentile.
    pub p999: f64,
    /// Largest value.
    pub max: f64,
}

impl Summary {
    /// The named percentiles in report order, for tables and comparisons.
    pub fn named(&self) -> [(&'static str, f64); 8] {
        [
            ("p25", self.p25),
            ("p50", self.p50),
            ("p75", self.p75),
            ("p90", self.p90),
            ("p99", self.p99),
            ("p99.9", self.p999),
            ("max", self.max),
            ("mean", self.mean),
        ]
    }
}

/// The exact nearest-rank percentile of `sorted` (ascending): the value at rank `ceil(q * n)`.
/// The reference the HDR figures are tested against.
pub fn exact_quantile(sorted: &[u64], q: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// HDR's percentiles equal the exact nearest-rank ones within its 0.1% precision, for
    /// several shapes of data: uniform, heavy-tailed, constant, two clusters, tiny samples.
    #[test]
    fn percentiles_match_exact_computation() {
        let mut rng = fastrand::Rng::with_seed(7);
        let shapes: Vec<(&str, Vec<u64>)> = vec![
            (
                "uniform",
                (0..100_000).map(|_| rng.u64(1_000..50_000_000)).collect(),
            ),
            (
                "pareto",
                (0..50_000)
                    .map(|_| (200_000.0 / (1.0 - rng.f64()).powf(1.0 / 1.5)) as u64)
                    .collect(),
            ),
            ("constant", vec![123_456; 1000]),
            (
                "bimodal",
                (0..20_000)
                    .map(|i| {
                        if i % 10 == 0 {
                            rng.u64(90_000_000..110_000_000)
                        } else {
                            rng.u64(200_000..300_000)
                        }
                    })
                    .collect(),
            ),
            ("one", vec![5_000]),
            ("three", vec![3, 1_000_000, 7_000]),
        ];
        for (name, mut values) in shapes {
            let mut d = Durations::new();
            for v in &values {
                d.record(*v);
            }
            values.sort_unstable();
            for q in [0.0, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 1.0] {
                let exact = exact_quantile(&values, q);
                let hdr = d.quantile_ns(q);
                let err = (hdr as f64 - exact as f64).abs() / exact as f64;
                assert!(
                    err <= 0.001,
                    "{name} q={q}: hdr {hdr} vs exact {exact} ({err:e})"
                );
            }
            let s = d.summary();
            assert_eq!(s.count, values.len() as u64);
            let exact_max = *values.last().unwrap_or(&0) as f64 / 1e6;
            assert!((s.max - exact_max).abs() <= exact_max * 0.001, "{name} max");
        }
    }

    #[test]
    fn exact_quantile_is_nearest_rank() {
        let v = [10, 20, 30, 40];
        assert_eq!(exact_quantile(&v, 0.25), 10);
        assert_eq!(exact_quantile(&v, 0.26), 20);
        assert_eq!(exact_quantile(&v, 0.5), 20);
        assert_eq!(exact_quantile(&v, 0.75), 30);
        assert_eq!(exact_quantile(&v, 0.99), 40);
        assert_eq!(exact_quantile(&v, 0.0), 10);
        assert_eq!(exact_quantile(&[], 0.5), 0);
    }

    #[test]
    fn merge_cdf_and_buckets_account_for_every_value() {
        let mut a = Durations::new();
        let mut b = Durations::new();
        for i in 1..=500u64 {
            a.record(i * 1_000);
            b.record(i * 1_000_000);
        }
        a.merge(&b);
        assert_eq!(a.len(), 1000);
        let cdf = a.cdf();
        assert!(cdf.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1));
        assert!((cdf.last().map_or(0.0, |c| c.1) - 1.0).abs() < 1e-12);
        let buckets = a.log_buckets();
        assert_eq!(buckets.iter().map(|b| b.1).sum::<u64>(), 1000);
        assert!(buckets.windows(2).all(|w| w[0].0 < w[1].0));
        // Zero and out-of-range values are clamped, not lost.
        a.record(0);
        a.record(u64::MAX);
        assert_eq!(a.len(), 1002);
    }
}

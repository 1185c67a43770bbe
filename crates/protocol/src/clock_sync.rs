//! Clock synchronization: each peer's clock offset from timestamped round
//! trips, by the stream-based scheme of Zachary Booth Simpson ("A
//! Stream-based Time Synchronization Technique for Networked Computer
//! Games", 2000).
//!
//! Every [`Timing`](crate::packet::Timing) message carries the sender's
//! clock and echoes the newest one it received from us, with how long it
//! held it. One echo gives one [`ClockSample`] by the NTP arithmetic: with
//! `t0` our send time, `t1`/`t2` the peer's receive and send times and `t3`
//! our receive time, the round trip is `(t3 − t0) − (t2 − t1)`, the latency
//! half of it, and the offset `((t1 − t0) + (t2 − t3)) / 2`. A sample is
//! only as good as its path was symmetric: a datagram held up by a queue
//! or by jitter on one leg skews its offset by half the extra delay. So
//! [`OffsetEstimator::estimate`] keeps the last samples, takes the median
//! latency, drops every sample whose latency is more than one standard
//! deviation above that median, and averages the offsets of the rest.
//!
//! Invariants: integer microseconds only; at least [`MIN_SAMPLES`] samples
//! before any estimate; the window holds the newest `cap` samples; the
//! estimate is a pure function of the samples held, in any order.

use crate::delay::SampleWindow;
use crate::time::Instant;

/// Samples needed before an offset is estimated.
pub const MIN_SAMPLES: usize = 5;

/// One round trip's reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockSample {
    /// Half the round trip, without the time the peer held the ping.
    pub latency_micros: i64,
    /// The peer's clock minus ours.
    pub offset_micros: i64,
}

impl ClockSample {
    /// The sample of a ping sent at our `t0`, received by the peer at its
    /// `t1`, answered at its `t2` and received back at our `t3`. `None`
    /// when the times are impossible (the answer arrived before the ping
    /// left, or the peer claims to have held it longer than the round
    /// trip).
    pub fn from_round_trip(t0: Instant, t1: u64, t2: u64, t3: Instant) -> Option<ClockSample> {
        let (t0, t3) = (i128::from(t0.as_micros()), i128::from(t3.as_micros()));
        let (t1, t2) = (i128::from(t1), i128::from(t2));
        let held = t2 - t1;
        let round_trip = (t3 - t0) - held;
        if held < 0 || round_trip < 0 {
            return None;
        }
        let offset = ((t1 - t0) + (t2 - t3)) / 2;
        Some(ClockSample {
            latency_micros: i64::try_from(round_trip / 2).ok()?,
            offset_micros: i64::try_from(offset).ok()?,
        })
    }
}

/// A peer's clock offset, estimated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockEstimate {
    /// The peer's clock minus ours, in microseconds.
    pub offset_micros: i64,
    /// The median one-way latency of the samples.
    pub latency_micros: i64,
    /// Samples averaged (those not dropped as delayed).
    pub used: u32,
    /// Samples held.
    pub held: u32,
}

/// The newest clock samples of one peer.
#[derive(Debug, Clone)]
pub struct OffsetEstimator {
    latencies: SampleWindow,
    offsets: SampleWindow,
}

impl OffsetEstimator {
    /// An estimator keeping the newest `cap` samples.
    pub fn new(cap: u32) -> OffsetEstimator {
        OffsetEstimator {
            latencies: SampleWindow::new(cap),
            offsets: SampleWindow::new(cap),
        }
    }

    /// Adds a sample, evicting the oldest when full.
    pub fn record(&mut self, s: ClockSample) {
        self.latencies.push(s.latency_micros);
        self.offsets.push(s.offset_micros);
    }

    /// Samples held.
    pub fn len(&self) -> usize {
        self.latencies.len()
    }

    /// Whether no sample is held.
    pub fn is_empty(&self) -> bool {
        self.latencies.is_empty()
    }

    /// The offset, once [`MIN_SAMPLES`] samples are held.
    pub fn estimate(&self) -> Option<ClockEstimate> {
        let n = self.latencies.len();
        if n < MIN_SAMPLES {
            return None;
        }
        let median = self.latencies.quantile(500)?;
        let pairs: Vec<(i64, i64)> = self
            .latencies
            .values()
            .iter()
            .copied()
            .zip(self.offsets.values().iter().copied())
            .collect();
        let mean = pairs.iter().map(|&(l, _)| i128::from(l)).sum::<i128>() / n as i128;
        let variance = pairs
            .iter()
            .map(|&(l, _)| (i128::from(l) - mean).pow(2))
            .sum::<i128>()
            / n as i128;
        let sigma = u64::try_from(variance).unwrap_or(u64::MAX).isqrt();
        let limit = i128::from(median) + i128::from(sigma);
        let kept: Vec<i64> = pairs
            .iter()
            .filter(|&&(l, _)| i128::from(l) <= limit)
            .map(|&(_, o)| o)
            .collect();
        // The median itself always passes, so `kept` is never empty.
        let sum: i128 = kept.iter().map(|&o| i128::from(o)).sum();
        let count = kept.len().max(1) as i128;
        Some(ClockEstimate {
            offset_micros: i64::try_from(sum.div_euclid(count)).unwrap_or(0),
            latency_micros: median,
            used: kept.len() as u32,
            held: n as u32,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ntp_arithmetic() {
        // The peer's clock is 1 000 000 µs ahead; 30 ms out, 50 ms back,
        // held 5 ms.
        let s =
            ClockSample::from_round_trip(Instant(10_000), 1_040_000, 1_045_000, Instant(95_000))
                .unwrap();
        assert_eq!(s.latency_micros, 40_000);
        // Asymmetry of 20 ms skews the offset by half of it.
        assert_eq!(s.offset_micros, 990_000);
        assert_eq!(
            ClockSample::from_round_trip(Instant(100), 0, 500, Instant(200)),
            None,
            "held longer than the round trip"
        );
    }

    #[test]
    fn delayed_samples_are_dropped_before_averaging() {
        let mut e = OffsetEstimator::new(32);
        for i in 0..4 {
            e.record(ClockSample {
                latency_micros: 50_000 + i,
                offset_micros: 7_000,
            });
        }
        assert_eq!(e.estimate(), None, "fewer than five samples");
        for i in 0..8 {
            e.record(ClockSample {
                latency_micros: 50_000 + i,
                offset_micros: 7_000 + 2 * (i % 2) - 1,
            });
        }
        // Two samples held up by 400 ms of queueing on the way back: their
        // offsets are 200 ms off.
        for _ in 0..2 {
            e.record(ClockSample {
                latency_micros: 250_000,
                offset_micros: -193_000,
            });
        }
        let est = e.estimate().unwrap();
        assert_eq!(est.held, 14);
        assert_eq!(est.used, 12);
        assert_eq!(est.offset_micros, 7_000);
        assert_eq!(est.latency_micros, 50_003);
    }
}

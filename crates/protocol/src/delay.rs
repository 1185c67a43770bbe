//! The adaptive playout delay, in whole frames, and the sliding sample
//! windows it (and time sync) is computed from.
//!
//! The delay D means: at the local clock's tick of frame k, frames up to
//! k − D are due. Each remote input's *lateness* is its first arrival time
//! minus the local tick time of its frame; D targets a high quantile of the
//! recent lateness (default the 98th percentile of the last 256 arrivals)
//! plus a safety margin, so a run of lost packets, each costing one tick until
//! the next redundant copy, rarely starves the buffer.
//!
//! Invariants: integer arithmetic only; D stays in `min..=max`; D grows at
//! once (to the target, and by at least one frame on an underrun) and shrinks
//! by one frame at most every `shrink_every` ticks, so a brief calm does not
//! undo the protection a loss burst bought.

/// A fixed-size window of the most recent signed samples.
#[derive(Debug, Clone)]
pub struct SampleWindow {
    samples: Vec<i64>,
    next: usize,
    cap: usize,
}

impl SampleWindow {
    /// A window keeping the last `cap` samples (at least one).
    pub fn new(cap: u32) -> SampleWindow {
        SampleWindow {
            samples: Vec::new(),
            next: 0,
            cap: cap.max(1) as usize,
        }
    }

    /// Adds a sample, evicting the oldest when full.
    pub fn push(&mut self, v: i64) {
        if self.samples.len() < self.cap {
            self.samples.push(v);
        } else {
            self.samples[self.next] = v;
        }
        self.next = (self.next + 1) % self.cap;
    }

    /// How many samples are held.
    pub fn len(&self) -> usize {
        self.samples.len()
    }

    /// The samples held, in no particular order (two windows of the same
    /// size fed together hold their samples at the same indices).
    pub fn values(&self) -> &[i64] {
        &self.samples
    }

    /// Whether no sample is held.
    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    /// The `permille`/1000 quantile (nearest rank, rounding up), if any sample.
    pub fn quantile(&self, permille: u32) -> Option<i64> {
        if self.samples.is_empty() {
            return None;
        }
        let n = self.samples.len();
        let rank = (n * permille.min(1000) as usize).div_ceil(1000).clamp(1, n);
        let mut copy = self.samples.clone();
        let (_, v, _) = copy.select_nth_unstable(rank - 1);
        Some(*v)
    }
}

/// Settings of a [`PlayoutDelay`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DelaySettings {
    /// Tick length in microseconds.
    pub tick_micros: u64,
    /// The delay before any sample, in microseconds (rounded up to frames).
    pub initial_micros: u64,
    /// Whether the delay adapts; when `false` it stays at the initial value.
    pub adaptive: bool,
    /// The lateness quantile targeted, in permille (e.g. 980).
    pub quantile_permille: u32,
    /// Frames added to the quantile's frame count.
    pub margin_frames: u32,
    /// Lateness samples kept.
    pub window: u32,
    /// The smallest delay, in frames (at least 1).
    pub min_frames: u32,
    /// The largest delay, in frames.
    pub max_frames: u32,
    /// Ticks the target must stay below the delay before it drops a frame.
    pub shrink_every: u32,
}

/// The adaptive playout delay.
#[derive(Debug, Clone)]
pub struct PlayoutDelay {
    settings: DelaySettings,
    lateness: SampleWindow,
    current: u32,
    below_for: u32,
}

impl PlayoutDelay {
    /// A delay at its initial value.
    pub fn new(settings: DelaySettings) -> PlayoutDelay {
        let min = settings.min_frames.max(1);
        let max = settings.max_frames.max(min);
        let settings = DelaySettings {
            min_frames: min,
            max_frames: max,
            ..settings
        };
        let initial =
            frames_for(settings.initial_micros as i64, settings.tick_micros).clamp(min, max);
        PlayoutDelay {
            settings,
            lateness: SampleWindow::new(settings.window),
            current: initial,
            below_for: 0,
        }
    }

    /// The delay now, in frames.
    pub fn frames(&self) -> u32 {
        self.current
    }

    /// Records one remote input's lateness in microseconds.
    pub fn record(&mut self, lateness_micros: i64) {
        self.lateness.push(lateness_micros);
    }

    /// The `permille`/1000 quantile of the lateness samples, in
    /// microseconds, once any was recorded.
    pub fn lateness_quantile(&self, permille: u32) -> Option<i64> {
        self.lateness.quantile(permille)
    }

    /// The delay the samples call for, in frames.
    pub fn target(&self) -> u32 {
        let s = &self.settings;
        match self.lateness.quantile(s.quantile_permille) {
            Some(q) => {
                (frames_for(q, s.tick_micros) + s.margin_frames).clamp(s.min_frames, s.max_frames)
            }
            None => self.current,
        }
    }

    /// Once per tick: grows at once to a higher target, shrinks by one frame
    /// after the target has stayed lower for `shrink_every` ticks.
    pub fn on_tick(&mut self) {
        if !self.settings.adaptive {
            return;
        }
        let t = self.target();
        if t > self.current {
            self.current = t;
            self.below_for = 0;
        } else if t < self.current {
            self.below_for += 1;
            if self.below_for >= self.settings.shrink_every {
                self.current -= 1;
                self.below_for = 0;
            }
        } else {
            self.below_for = 0;
        }
    }

    /// A due frame was missing an input: grow by at least one frame now.
    pub fn on_underrun(&mut self) {
        if !self.settings.adaptive {
            return;
        }
        self.current = (self.current + 1)
            .max(self.target())
            .min(self.settings.max_frames);
        self.below_for = 0;
    }
}

/// Whole frames covering `micros` (negative counts as zero).
pub fn frames_for(micros: i64, tick_micros: u64) -> u32 {
    let m = micros.max(0) as u64;
    u32::try_from(m.div_ceil(tick_micros.max(1))).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> DelaySettings {
        DelaySettings {
            tick_micros: 16_667,
            initial_micros: 100_000,
            adaptive: true,
            quantile_permille: 980,
            margin_frames: 1,
            window: 100,
            min_frames: 1,
            max_frames: 100,
            shrink_every: 3,
        }
    }

    #[test]
    fn quantile_nearest_rank() {
        let mut w = SampleWindow::new(100);
        for v in 1..=100 {
            w.push(v);
        }
        assert_eq!(w.quantile(980), Some(98));
        assert_eq!(w.quantile(500), Some(50));
        assert_eq!(w.quantile(1000), Some(100));
        w.push(1000);
        assert_eq!(w.quantile(0), Some(2));
    }

    #[test]
    fn grows_at_once_and_shrinks_slowly() {
        let mut d = PlayoutDelay::new(settings());
        assert_eq!(d.frames(), 6);
        for _ in 0..100 {
            d.record(200_000);
        }
        d.on_tick();
        assert_eq!(d.frames(), 13);
        for _ in 0..100 {
            d.record(10_000);
        }
        d.on_tick();
        d.on_tick();
        assert_eq!(d.frames(), 13);
        d.on_tick();
        assert_eq!(d.frames(), 12);
        d.on_underrun();
        assert_eq!(d.frames(), 13);
    }
}

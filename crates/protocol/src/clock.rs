//! The frame clock: when each local frame is sampled, and how its tick
//! length stretches or shrinks to stay aligned with the peers' clocks.
//!
//! Every peer samples frame k at its own tick k. Peers start ticking when the
//! handshake completes, so their clocks start apart by up to a one-way
//! latency plus handshake retries. The session measures how far ahead of
//! each peer this clock runs (from timestamped pings, see
//! [`crate::clock_sync`]) and hands the mean to [`FrameClock::balance`].
//! The clock never jumps; it changes its tick length:
//!
//! - within a quarter tick: nominal;
//! - up to [`BALANCE_DEADBAND_FRAMES`] (3) frames off: by `nudge_permille`
//!   (2%), the fine alignment that keeps a lockstep peer's delay short;
//! - beyond: by 1.1% per frame off, growing to 10% (a 1.1× period, as GGRS's
//!   apps stretch) at [`BALANCE_CAP_FRAMES`] (9) frames and staying there.
//!
//! Invariants: integer microseconds only; the tick length stays within
//! `nominal × (1000 ± 100) / 1000`; tick times are recorded for the last
//! [`TICK_HISTORY`] frames and extrapolated beyond.

use crate::time::Instant;

/// Frames whose tick time is remembered.
pub const TICK_HISTORY: u32 = 1024;

/// Frames of misalignment the fine nudge handles; beyond it the tick
/// stretches harder.
pub const BALANCE_DEADBAND_FRAMES: u64 = 3;

/// Frames of misalignment at which the stretch reaches its largest, 10%.
pub const BALANCE_CAP_FRAMES: u64 = 9;

/// The largest stretch, in permille of the nominal tick.
pub const MAX_STRETCH_PERMILLE: i64 = 100;

/// The local frame clock.
#[derive(Debug, Clone)]
pub struct FrameClock {
    nominal: u64,
    nudge_permille: i64,
    stretch_permille: i64,
    started: bool,
    /// The first frame sampled (0, or a rejoining process's first).
    first_frame: u32,
    next_tick_at: Instant,
    next_frame: u32,
    times: Vec<Instant>,
}

impl FrameClock {
    /// A stopped clock with ticks of `nominal` microseconds.
    pub fn new(nominal: u64, nudge_permille: u32) -> FrameClock {
        FrameClock {
            nominal: nominal.max(1),
            nudge_permille: i64::from(nudge_permille).min(MAX_STRETCH_PERMILLE),
            stretch_permille: 0,
            started: false,
            first_frame: 0,
            next_tick_at: Instant::ZERO,
            next_frame: 0,
            times: vec![Instant::ZERO; TICK_HISTORY as usize],
        }
    }

    /// Starts ticking: frame 0 is due at `now`.
    pub fn start(&mut self, now: Instant) {
        if !self.started {
            self.started = true;
            self.next_tick_at = now;
        }
    }

    /// Starts ticking at `frame` instead of 0 (a process rejoining a running
    /// match): `frame` is due at `now`.
    pub fn start_at(&mut self, now: Instant, frame: u32) {
        if !self.started {
            self.next_frame = frame;
            self.first_frame = frame;
            self.start(now);
        }
    }

    /// Whether the clock runs.
    pub fn started(&self) -> bool {
        self.started
    }

    /// When the next tick is due.
    pub fn next_tick_at(&self) -> Instant {
        self.next_tick_at
    }

    /// The frame the next tick samples.
    pub fn next_frame(&self) -> u32 {
        self.next_frame
    }

    /// The current tick length in microseconds.
    pub fn interval(&self) -> u64 {
        let n = self.nominal as i64;
        (n * (1000 + self.stretch_permille) / 1000) as u64
    }

    /// The current stretch of the tick, in permille: positive slower,
    /// negative faster, 0 nominal.
    pub fn stretch_permille(&self) -> i64 {
        self.stretch_permille
    }

    /// Sets the tick length the stretch applies to, in microseconds (the
    /// pace of the match, [`crate::pace`]); the tick already due keeps its
    /// time.
    pub fn set_nominal(&mut self, micros: u64) {
        self.nominal = micros.max(1);
    }

    /// Takes the due tick: records its time and returns its frame.
    pub fn advance(&mut self) -> u32 {
        let f = self.next_frame;
        self.times[(f % TICK_HISTORY) as usize] = self.next_tick_at;
        self.next_tick_at = self.next_tick_at.plus(self.interval());
        self.next_frame += 1;
        f
    }

    /// Whether this clock has ticked `frame` (a rejoining process never
    /// ticks the frames before its first).
    pub fn ticked(&self, frame: u32) -> bool {
        self.started && (self.first_frame..self.next_frame).contains(&frame)
    }

    /// The local tick time of `frame`: recorded if recent, else extrapolated
    /// at the nominal rate.
    pub fn tick_time(&self, frame: u32) -> Instant {
        if frame < self.next_frame && self.next_frame - frame <= TICK_HISTORY {
            return self.times[(frame % TICK_HISTORY) as usize];
        }
        let ahead = i64::from(frame) - i64::from(self.next_frame);
        let t = self.next_tick_at.as_micros() as i64 + ahead * self.nominal as i64;
        Instant(t.max(0) as u64)
    }

    /// Sets the tick length from how far ahead of its peers this clock
    /// runs, in microseconds (positive: the peers tick each frame later
    /// than we do, so we slow down).
    pub fn balance(&mut self, ahead_micros: i64) {
        let n = self.nominal as i64;
        let off = ahead_micros.unsigned_abs().min(i64::MAX as u64) as i64;
        let deadband = BALANCE_DEADBAND_FRAMES as i64 * n;
        let cap = BALANCE_CAP_FRAMES as i64 * n;
        let magnitude = if off <= n / 4 {
            0
        } else if off < deadband {
            self.nudge_permille
        } else {
            (off.min(cap) * MAX_STRETCH_PERMILLE / cap).max(self.nudge_permille)
        };
        self.stretch_permille = if ahead_micros < 0 {
            -magnitude
        } else {
            magnitude
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stretch_follows_the_gears() {
        let mut c = FrameClock::new(10_000, 20);
        let stretch = |c: &mut FrameClock, ahead: i64| {
            c.balance(ahead);
            c.stretch_permille()
        };
        assert_eq!(stretch(&mut c, 2_000), 0, "within a quarter tick");
        assert_eq!(stretch(&mut c, 2_600), 20);
        assert_eq!(stretch(&mut c, -29_000), -20, "inside the deadband");
        assert_eq!(stretch(&mut c, 30_000), 33, "3 of 9 frames: a third of 10%");
        assert_eq!(stretch(&mut c, 90_000), 100);
        assert_eq!(stretch(&mut c, -5_000_000), -100, "capped at 9 frames");
        assert_eq!(c.interval(), 9_000);
        c.balance(90_000);
        assert_eq!(c.interval(), 11_000);
    }

    #[test]
    fn ticks_are_recorded_and_extrapolated() {
        let mut c = FrameClock::new(1_000, 20);
        c.start(Instant(5_000));
        assert_eq!(c.advance(), 0);
        c.balance(-1_000_000);
        assert_eq!(c.advance(), 1);
        assert_eq!(c.tick_time(0), Instant(5_000));
        assert_eq!(c.tick_time(1), Instant(6_000));
        assert_eq!(c.next_tick_at(), Instant(6_900));
        assert_eq!(c.tick_time(4), Instant(8_900));
    }
}

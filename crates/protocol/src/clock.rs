//! The frame clock: when each local frame is sampled, and the few-percent
//! nudge of the tick rate that keeps peers' frame clocks aligned.
//!
//! Every peer samples frame k at its own tick k. Peers start ticking when the
//! handshake completes, so their clocks differ by up to a one-way latency
//! plus handshake retries. Rather than skipping frames when ahead (GGRS's
//! "wait recommendation"), the clock stretches or shortens its tick by
//! `nudge_permille` while the mean offset to the peers exceeds a quarter
//! tick. Offsets are estimated from each peer's median input lateness minus
//! half its median round-trip time.
//!
//! Invariants: integer microseconds only; the tick length stays within
//! `nominal × (1000 ± nudge) / 1000`; tick times are recorded for the last
//! [`TICK_HISTORY`] frames and extrapolated beyond.

use crate::time::Instant;

/// Frames whose tick time is remembered.
pub const TICK_HISTORY: u32 = 1024;

/// The local frame clock.
#[derive(Debug, Clone)]
pub struct FrameClock {
    nominal: u64,
    nudge_permille: u64,
    rate: i8,
    started: bool,
    next_tick_at: Instant,
    next_frame: u32,
    times: Vec<Instant>,
}

impl FrameClock {
    /// A stopped clock with ticks of `nominal` microseconds.
    pub fn new(nominal: u64, nudge_permille: u32) -> FrameClock {
        FrameClock {
            nominal: nominal.max(1),
            nudge_permille: u64::from(nudge_permille.min(500)),
            rate: 0,
            started: false,
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
        let n = self.nominal;
        match self.rate {
            r if r > 0 => n * (1000 + self.nudge_permille) / 1000,
            r if r < 0 => n * (1000 - self.nudge_permille) / 1000,
            _ => n,
        }
    }

    /// The current nudge: +1 slower, −1 faster, 0 nominal.
    pub fn rate(&self) -> i8 {
        self.rate
    }

    /// Takes the due tick: records its time and returns its frame.
    pub fn advance(&mut self) -> u32 {
        let f = self.next_frame;
        self.times[(f % TICK_HISTORY) as usize] = self.next_tick_at;
        self.next_tick_at = self.next_tick_at.plus(self.interval());
        self.next_frame += 1;
        f
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

    /// Sets the nudge from the mean offset to the peers (positive: the peers
    /// tick each frame later than we do, so we slow down).
    pub fn nudge(&mut self, mean_offset_micros: i64) {
        let dead = (self.nominal / 4) as i64;
        self.rate = if mean_offset_micros > dead {
            1
        } else if mean_offset_micros < -dead {
            -1
        } else {
            0
        };
    }
}

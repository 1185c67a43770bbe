//! The pace of the match: how long a tick lasts on every seat. A seat
//! whose machine cannot step a frame within a tick would stall everyone
//! (its inputs come late, every other seat waits for them, again and
//! again); instead the match slows down for every seat together, as Age of
//! Empires' "speed control" lengthened its turns for the slowest machine
//! (Bettner & Terrano, "1500 Archers on a 28.8", GDC 2001).
//!
//! Each seat measures what stepping a frame costs it (the app reports it,
//! [`Session::report_step_cost`](crate::session::Session::report_step_cost))
//! and sends the 90th percentile of its recent costs in its Timing
//! messages. The host turns the largest cost any seat reports into a
//! number of *pace steps*, each lengthening the tick by
//! [`PACE_STEP_PERMILLE`] of the nominal tick, with
//! [`PACE_HEADROOM_PERMILLE`] of headroom over the cost; every seat
//! switches to it at the same frame the host planned, as with the input
//! delay of rollback mode (the plan rides in its Timing messages).
//!
//! The pace decides *when* frames are sampled and stepped, never what they
//! hold: a seat that switches late (its plan lost) hitches, it does not
//! desync. Frames keep their number; the game's tick (its `dt`) does not
//! change, the match runs in slow motion.
//!
//! Invariants: integer arithmetic only; the pace stays in
//! `0..=MAX_PACE_STEPS`; 0 is the nominal tick.

use crate::delay::SampleWindow;

/// How much one pace step lengthens the tick, in permille of the nominal
/// tick.
pub const PACE_STEP_PERMILLE: u64 = 50;

/// The most pace steps: a tick at most 4 times the nominal one.
pub const MAX_PACE_STEPS: u32 = 60;

/// The tick the pace leaves over a seat's step cost, in permille of the
/// cost: room for the session, the network and the app's own work.
pub const PACE_HEADROOM_PERMILLE: u64 = 1250;

/// Step costs a seat keeps to report its 90th percentile.
pub const STEP_COST_WINDOW: u32 = 64;

/// The tick length at `steps` pace steps over `nominal` microseconds.
pub fn tick_micros(nominal: u64, steps: u32) -> u64 {
    nominal * (1000 + PACE_STEP_PERMILLE * u64::from(steps.min(MAX_PACE_STEPS))) / 1000
}

/// The fewest pace steps whose tick covers a step costing `cost_micros`
/// with the headroom, at most [`MAX_PACE_STEPS`].
pub fn steps_for(cost_micros: u64, nominal: u64) -> u32 {
    let wanted = cost_micros.saturating_mul(PACE_HEADROOM_PERMILLE) / 1000;
    (0..=MAX_PACE_STEPS)
        .find(|&s| tick_micros(nominal, s) >= wanted)
        .unwrap_or(MAX_PACE_STEPS)
}

/// A seat's recent step costs.
#[derive(Debug, Clone)]
pub struct StepCosts {
    window: SampleWindow,
}

impl Default for StepCosts {
    fn default() -> StepCosts {
        StepCosts {
            window: SampleWindow::new(STEP_COST_WINDOW),
        }
    }
}

impl StepCosts {
    /// Records what stepping one frame cost, in microseconds.
    pub fn record(&mut self, micros: u64) {
        self.window.push(i64::try_from(micros).unwrap_or(i64::MAX));
    }

    /// The 90th percentile of the recent costs (0 before any), what the
    /// seat reports.
    pub fn reported(&self) -> u32 {
        self.window
            .quantile(900)
            .map_or(0, |c| u32::try_from(c.max(0)).unwrap_or(u32::MAX))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_slower_than_the_tick_slows_the_pace() {
        let tick = 50_000;
        assert_eq!(steps_for(0, tick), 0);
        // 40 ms of a 50 ms tick, with 25% headroom: exactly the tick.
        assert_eq!(steps_for(40_000, tick), 0);
        // 80 ms: 100 ms wanted, 20 steps of 5%.
        assert_eq!(steps_for(80_000, tick), 20);
        assert_eq!(tick_micros(tick, 20), 100_000);
        assert_eq!(steps_for(10_000_000, tick), MAX_PACE_STEPS);
        assert_eq!(tick_micros(tick, MAX_PACE_STEPS), 200_000);
    }

    #[test]
    fn the_report_is_the_ninetieth_percentile() {
        let mut c = StepCosts::default();
        assert_eq!(c.reported(), 0);
        for i in 1..=100 {
            c.record(i * 1000);
        }
        // The window keeps the last 64: 37..=100 ms.
        assert_eq!(c.reported(), 94_000);
    }
}

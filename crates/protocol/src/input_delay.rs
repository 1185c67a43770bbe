//! The input delay of a rollback session — frames between sampling a local
//! input and stepping its frame — and the agreement that gives every seat
//! the same delay from the same frame.
//!
//! Each peer works out the delay it wants from the lateness of the remote
//! inputs it receives ([`wanted_delay`]) and sends it in its
//! [`Timing`](crate::packet::Timing) messages. The host (the lowest seat
//! still playing) takes the largest delay any seat wants, its own included.
//! When that target is above the delay promised, or has stayed below it for
//! a while, the host plans a change ([`DelaySchedule::decide`]): the new
//! delay and a frame far enough ahead for the plan to reach every peer
//! first. Every Timing message the host sends carries its newest plan until
//! a newer one replaces it; a peer adopts the newest plan it hears
//! ([`DelaySchedule::adopt`]) and switches when its clock samples the plan's
//! frame, or at once if the plan arrives late.
//!
//! Inputs travel labelled with their frame, so a delay only decides *when*
//! frames are stepped, never what they hold: two peers on different delays
//! still step the same frames with the same inputs. A late plan costs a
//! hitch, never a desync; the agreement is there so that every player
//! waits as long as every other.
//!
//! Invariants: the delay in force only changes at a planned frame; a plan
//! is replaced only by one for a later frame; shrinking goes one frame at a
//! time, after the target stayed lower for `shrink_after` ticks, so a calm
//! moment does not undo what a burst of lateness called for.

use crate::delay::frames_for;

/// The delay a peer wants, in frames, from the lateness of the remote
/// inputs it received (`median` and `p98`, microseconds, `None` before
/// any): enough that the median input arrives within half the prediction
/// `window` and the 98th percentile within the whole window, kept in
/// `min..=max`.
pub fn wanted_delay(
    median: Option<i64>,
    p98: Option<i64>,
    tick_micros: u64,
    window: u32,
    min: u32,
    max: u32,
) -> u32 {
    let (Some(median), Some(p98)) = (median, p98) else {
        return min.min(max);
    };
    let typical = frames_for(median, tick_micros).saturating_sub(window / 2);
    let tail = (frames_for(p98, tick_micros) + 1).saturating_sub(window);
    typical.max(tail).clamp(min.min(max), max)
}

/// The delay in force and the newest plan to change it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DelaySchedule {
    current: u32,
    plan: Option<(u32, u32)>,
    below_for: u32,
}

impl DelaySchedule {
    /// `initial` frames from the start, no plan.
    pub fn new(initial: u32) -> DelaySchedule {
        DelaySchedule {
            current: initial,
            plan: None,
            below_for: 0,
        }
    }

    /// The delay in force.
    pub fn current(&self) -> u32 {
        self.current
    }

    /// The newest plan, `(frame, delay)`, whether in force yet or not.
    pub fn plan(&self) -> Option<(u32, u32)> {
        self.plan
    }

    /// The delay once every plan known is in force.
    pub fn promised(&self) -> u32 {
        self.plan.map_or(self.current, |(_, d)| d)
    }

    /// Called as the clock samples `frame`: puts the plan in force once its
    /// frame is reached. Returns the delay in force.
    pub fn on_tick(&mut self, frame: u32) -> u32 {
        if let Some((at, delay)) = self.plan {
            if frame >= at {
                self.current = delay;
            }
        }
        self.current
    }

    /// Takes the host's plan: the newest by frame wins. Returns whether it
    /// was new.
    pub fn adopt(&mut self, frame: u32, delay: u32) -> bool {
        if self.plan.is_some_and(|(at, _)| at >= frame) {
            return false;
        }
        self.plan = Some((frame, delay));
        true
    }

    /// The host, once per tick: plans a change toward `target` (the largest
    /// delay any seat wants) from frame `next_frame + lead`, growing at
    /// once and shrinking one frame after `shrink_after` ticks below.
    /// Returns the new plan, if one was made.
    pub fn decide(
        &mut self,
        target: u32,
        next_frame: u32,
        lead: u32,
        shrink_after: u32,
    ) -> Option<(u32, u32)> {
        let promised = self.promised();
        let change = if target > promised {
            self.below_for = 0;
            Some(target)
        } else if target < promised {
            self.below_for += 1;
            (self.below_for >= shrink_after).then(|| {
                self.below_for = 0;
                promised - 1
            })
        } else {
            self.below_for = 0;
            None
        };
        let delay = change?;
        let frame = next_frame.saturating_add(lead);
        self.adopt(frame, delay).then_some((frame, delay))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wanted_delay_leaves_the_window_to_jitter() {
        let tick = 16_667;
        assert_eq!(wanted_delay(None, None, tick, 8, 0, 60), 0);
        // 25 ms one way: predicted within the window, no delay.
        assert_eq!(wanted_delay(Some(25_000), Some(30_000), tick, 8, 0, 60), 0);
        // 100 ms one way (6 frames): 2 frames of delay keep the median
        // rollback at 4.
        assert_eq!(
            wanted_delay(Some(100_000), Some(110_000), tick, 8, 0, 60),
            2
        );
        // Heavy jitter: the 98th percentile decides.
        assert_eq!(wanted_delay(Some(40_000), Some(250_000), tick, 8, 0, 60), 8);
        // 1 s one way: as good as lockstep, within the cap.
        assert_eq!(
            wanted_delay(Some(1_000_000), Some(1_100_000), tick, 8, 0, 30),
            30
        );
    }

    #[test]
    fn the_host_grows_at_once_and_shrinks_slowly() {
        let mut s = DelaySchedule::new(0);
        assert_eq!(s.decide(3, 100, 30, 4), Some((130, 3)));
        assert_eq!(s.on_tick(129), 0);
        assert_eq!(s.on_tick(130), 3);
        assert_eq!(s.decide(1, 140, 30, 4), None);
        assert_eq!(s.decide(1, 141, 30, 4), None);
        assert_eq!(s.decide(1, 142, 30, 4), None);
        assert_eq!(s.decide(1, 143, 30, 4), Some((173, 2)));
        assert_eq!(s.promised(), 2);
        assert_eq!(s.current(), 3);
    }

    #[test]
    fn a_peer_keeps_the_newest_plan() {
        let mut s = DelaySchedule::new(0);
        assert!(s.adopt(50, 4));
        assert!(!s.adopt(50, 4), "a repeat");
        assert!(!s.adopt(40, 9), "an older plan");
        // Heard after its frame: in force at the next tick.
        assert_eq!(s.on_tick(70), 4);
    }
}

//! A value every seat switches to at the same frame, planned by the host:
//! the input delay of rollback mode ([`crate::input_delay`]) and the pace
//! of the match ([`crate::pace`]).
//!
//! The host (the lowest seat still playing) works out a target each tick
//! and, when it is above the value promised, or has stayed below it for a
//! while, plans a change ([`Schedule::decide`]): the new value and a frame
//! far enough ahead for the plan to reach every peer first. Every Timing
//! message the host sends carries its newest plan until a newer one
//! replaces it; a peer adopts the newest plan it hears ([`Schedule::adopt`])
//! and switches when its clock reaches the plan's frame, or at once if the
//! plan arrives late.
//!
//! Invariants: the value in force only changes at a planned frame; a plan
//! is replaced only by one for a later frame; growing goes at once to the
//! target, shrinking one step at a time after the target stayed lower for
//! `shrink_after` ticks, so a calm moment does not undo what a burst called
//! for.

/// The value in force and the newest plan to change it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    current: u32,
    plan: Option<(u32, u32)>,
    below_for: u32,
}

impl Schedule {
    /// `initial` from the start, no plan.
    pub fn new(initial: u32) -> Schedule {
        Schedule {
            current: initial,
            plan: None,
            below_for: 0,
        }
    }

    /// The value in force.
    pub fn current(&self) -> u32 {
        self.current
    }

    /// The newest plan, `(frame, value)`, whether in force yet or not.
    pub fn plan(&self) -> Option<(u32, u32)> {
        self.plan
    }

    /// The value once every plan known is in force.
    pub fn promised(&self) -> u32 {
        self.plan.map_or(self.current, |(_, d)| d)
    }

    /// Called as the clock samples `frame`: puts the plan in force once its
    /// frame is reached. Returns the value in force.
    pub fn on_tick(&mut self, frame: u32) -> u32 {
        if let Some((at, value)) = self.plan {
            if frame >= at {
                self.current = value;
            }
        }
        self.current
    }

    /// Takes the host's plan: the newest by frame wins. Returns whether it
    /// was new.
    pub fn adopt(&mut self, frame: u32, value: u32) -> bool {
        if self.plan.is_some_and(|(at, _)| at >= frame) {
            return false;
        }
        self.plan = Some((frame, value));
        true
    }

    /// The host, once per tick: plans a change toward `target` (the largest
    /// value any seat wants) from frame `next_frame + lead`, growing at
    /// once and shrinking by one after `shrink_after` ticks below.
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
        let value = change?;
        let frame = next_frame.saturating_add(lead);
        self.adopt(frame, value).then_some((frame, value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_grows_at_once_and_shrinks_slowly() {
        let mut s = Schedule::new(0);
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
        let mut s = Schedule::new(0);
        assert!(s.adopt(50, 4));
        assert!(!s.adopt(50, 4), "a repeat");
        assert!(!s.adopt(40, 9), "an older plan");
        // Heard after its frame: in force at the next tick.
        assert_eq!(s.on_tick(70), 4);
    }
}

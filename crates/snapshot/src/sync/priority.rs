//! [`PriorityAccumulator`]: which bodies a state synchronization packet
//! carries. Every frame each body's priority grows by a weight for what it
//! is (a player's body most, bodies players act on next, moving bodies,
//! bodies at rest least); a packet takes the highest first, as many as fit
//! its bit budget, skipping any that does not fit; a body's priority goes
//! back to zero only when it is sent, so every body is sent eventually and
//! the important ones often.
//!
//! Invariants: the order is total and the same on every machine (ties go
//! to the lower slot); priorities saturate instead of wrapping.

use crate::bodies::Role;

/// How much a body's priority grows each frame, by what it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Weights {
    /// A player's own body (1 000 000: sent every packet).
    pub player: u64,
    /// A body a player acts on (100).
    pub interacting: u64,
    /// Any other moving body (10).
    pub moving: u64,
    /// A body at rest (1).
    pub at_rest: u64,
}

impl Default for Weights {
    fn default() -> Weights {
        Weights {
            player: 1_000_000,
            interacting: 100,
            moving: 10,
            at_rest: 1,
        }
    }
}

impl Weights {
    /// The weight of a body with `role`, at rest or not.
    pub fn of(&self, role: Role, at_rest: bool) -> u64 {
        match role {
            Role::Player => self.player,
            Role::Interacting => self.interacting,
            Role::Free if at_rest => self.at_rest,
            Role::Free => self.moving,
        }
    }
}

/// Consecutive bodies that may not fit before a packet is closed.
const MAX_MISSES: u32 = 8;

/// Every body's accumulated priority.
#[derive(Debug, Clone)]
pub struct PriorityAccumulator {
    weights: Weights,
    priority: Vec<u64>,
}

impl PriorityAccumulator {
    /// Zero priority for `slots` bodies.
    pub fn new(slots: usize, weights: Weights) -> PriorityAccumulator {
        PriorityAccumulator {
            weights,
            priority: vec![0; slots],
        }
    }

    /// Body `slot`'s priority now.
    pub fn priority(&self, slot: usize) -> u64 {
        self.priority.get(slot).copied().unwrap_or(0)
    }

    /// One frame passes: each body's priority grows by its weight
    /// (`bodies[i]`: its role and whether it rests; `None`: removed, which
    /// never grows).
    pub fn accumulate(&mut self, bodies: &[Option<(Role, bool)>]) {
        for (p, b) in self.priority.iter_mut().zip(bodies) {
            if let Some((role, at_rest)) = b {
                *p = p.saturating_add(self.weights.of(*role, *at_rest));
            }
        }
    }

    /// The bodies for one packet: highest priority first, each taken if
    /// `cost(slot)` bits still fit in `budget_bits` (stopping after a few
    /// that do not); the bodies taken go back to zero priority. Bodies
    /// with zero priority are never taken.
    pub fn select(&mut self, budget_bits: u64, mut cost: impl FnMut(usize) -> u64) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.priority.len())
            .filter(|&i| self.priority[i] > 0)
            .collect();
        order.sort_by(|&a, &b| self.priority[b].cmp(&self.priority[a]).then(a.cmp(&b)));
        let mut left = budget_bits;
        let mut taken = Vec::new();
        let mut misses = 0;
        for slot in order {
            let bits = cost(slot);
            if bits <= left {
                left -= bits;
                taken.push(slot);
                self.priority[slot] = 0;
                misses = 0;
            } else {
                misses += 1;
                if misses >= MAX_MISSES {
                    break;
                }
            }
        }
        taken
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn players_first_resting_last_and_priority_resets_only_when_sent() {
        let mut acc = PriorityAccumulator::new(4, Weights::default());
        let bodies = [
            Some((Role::Free, true)),
            Some((Role::Player, false)),
            Some((Role::Free, false)),
            Some((Role::Interacting, false)),
        ];
        acc.accumulate(&bodies);
        // Room for two: the player and the interacting body.
        assert_eq!(acc.select(20, |_| 10), vec![1, 3]);
        assert_eq!((acc.priority(0), acc.priority(2)), (1, 10));
        acc.accumulate(&bodies);
        // The interacting body grew back to 100, the moving one has 20,
        // the one at rest 2: room for three takes them in that order.
        assert_eq!(acc.select(30, |_| 10), vec![1, 3, 2]);
        // The body at rest waited longest: it goes once it is alone.
        assert_eq!(acc.priority(0), 2);
        assert_eq!(acc.select(10, |s| if s == 0 { 10 } else { 100 }), vec![0]);
    }
}

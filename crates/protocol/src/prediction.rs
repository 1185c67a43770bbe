//! The frames a rollback session stepped ahead of the confirmed ones: for
//! each, the inputs it was stepped with (real where they had arrived,
//! predicted where not) and, once the app reports it, its checksum, held
//! back from the checksum exchange until the frame is confirmed.
//!
//! Invariants:
//! - The frames held are consecutive from [`Predictions::first`], which the
//!   session keeps equal to the playout buffer's next release (the oldest
//!   unconfirmed frame): every frame before it was stepped with every
//!   player's real input.
//! - A frame leaves from the front once confirmed, or from the back when a
//!   rollback undoes it; a checksum held here never reaches the checksum
//!   book unless its frame's inputs all turned out as predicted.

use std::collections::VecDeque;

use lockstep_fx::Checksum;

#[derive(Debug, Clone)]
struct Predicted<I> {
    inputs: Vec<I>,
    checksum: Option<Checksum>,
}

/// Frames stepped with predicted inputs, oldest first.
#[derive(Debug, Clone)]
pub struct Predictions<I> {
    first: u32,
    frames: VecDeque<Predicted<I>>,
}

impl<I: Clone + PartialEq> Predictions<I> {
    /// None held; the next one pushed will be `first`.
    pub fn new(first: u32) -> Predictions<I> {
        Predictions {
            first,
            frames: VecDeque::new(),
        }
    }

    /// The oldest frame held (or the next to be pushed, when none is).
    pub fn first(&self) -> u32 {
        self.first
    }

    /// Frames held.
    pub fn len(&self) -> u32 {
        self.frames.len() as u32
    }

    /// Whether none is held.
    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    /// Forgets every frame; the next one pushed will be `first`.
    pub fn reset(&mut self, first: u32) {
        self.frames.clear();
        self.first = first;
    }

    /// Records that `frame` was stepped with `inputs`: the one after the
    /// newest held, or any frame when none is held (it starts the run).
    /// Refused (`false`) otherwise.
    pub fn push(&mut self, frame: u32, inputs: Vec<I>) -> bool {
        if self.frames.is_empty() {
            self.first = frame;
        } else if frame != self.first + self.len() {
            return false;
        }
        self.frames.push_back(Predicted {
            inputs,
            checksum: None,
        });
        true
    }

    /// Holds the app's checksum of `frame` until it is confirmed. `false`
    /// if `frame` is not held.
    pub fn set_checksum(&mut self, frame: u32, checksum: Checksum) -> bool {
        let Some(i) = frame.checked_sub(self.first) else {
            return false;
        };
        match self.frames.get_mut(i as usize) {
            Some(p) => {
                p.checksum = Some(checksum);
                true
            }
            None => false,
        }
    }

    /// The first frame stepped with an input that `known(frame, seat)`
    /// now says was different (known inputs only: an input still missing
    /// proves nothing).
    pub fn first_wrong(&self, known: impl Fn(u32, usize) -> Option<I>) -> Option<u32> {
        self.frames.iter().enumerate().find_map(|(i, p)| {
            let frame = self.first + i as u32;
            p.inputs
                .iter()
                .enumerate()
                .any(|(seat, used)| known(frame, seat).is_some_and(|k| k != *used))
                .then_some(frame)
        })
    }

    /// Forgets `frame` and every later one (a rollback undid them).
    pub fn truncate_from(&mut self, frame: u32) {
        let keep = frame.saturating_sub(self.first) as usize;
        self.frames.truncate(keep);
    }

    /// Takes the oldest frame out, confirmed: its frame and the checksum
    /// the app reported for it, if it did yet.
    pub fn confirm_first(&mut self) -> Option<(u32, Option<Checksum>)> {
        let p = self.frames.pop_front()?;
        let frame = self.first;
        self.first += 1;
        Some((frame, p.checksum))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wrong_prediction_is_found_and_undone() {
        let mut p = Predictions::new(10);
        assert!(p.push(10, vec![1, 5]));
        assert!(p.push(11, vec![1, 5]));
        assert!(!p.push(13, vec![1, 5]));
        assert!(p.push(12, vec![2, 5]));
        assert!(p.set_checksum(11, Checksum::from_bytes([7; 32])));
        assert!(!p.set_checksum(13, Checksum::from_bytes([7; 32])));
        // Seat 1 really held 5, then 6 from frame 11 on.
        let real = |f: u32, seat: usize| (seat == 1).then_some(if f < 11 { 5 } else { 6 });
        assert_eq!(p.first_wrong(real), Some(11));
        p.truncate_from(11);
        assert_eq!(p.len(), 1);
        assert_eq!(p.confirm_first(), Some((10, None)));
        assert_eq!(p.first(), 11);
        assert!(p.is_empty());
    }
}

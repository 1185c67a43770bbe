//! The send window of local inputs: every input not yet acked by some peer,
//! which each packet to that peer repeats in full (the redundancy that lets
//! lockstep over UDP never wait for a resend — Glenn Fiedler, "Deterministic
//! Lockstep", 2014).
//!
//! Invariants:
//! - The window holds consecutive frames `base..next_frame()`; inputs are
//!   pushed in frame order with no gap.
//! - A peer's ack is the newest frame it holds with every earlier frame, so
//!   what it still needs is always the suffix after its ack: packets carry
//!   `ack + 1 ..= newest`, and a receiver never sees a gap.
//! - Trimming drops only frames every live peer has acked.

use std::collections::VecDeque;

/// Why a local input was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum InputError {
    /// The session did not ask for this frame's input (see `Event::InputNeeded`).
    #[error("input for frame {got} but the session asked for {expected:?}")]
    UnexpectedFrame {
        /// The frame passed.
        got: u32,
        /// The frame asked for, if any.
        expected: Option<u32>,
    },
}

/// Local inputs from the oldest unacked frame on.
#[derive(Debug, Clone)]
pub struct SendWindow<I> {
    base: u32,
    inputs: VecDeque<I>,
}

impl<I: Clone> Default for SendWindow<I> {
    fn default() -> Self {
        SendWindow {
            base: 0,
            inputs: VecDeque::new(),
        }
    }
}

impl<I: Clone> SendWindow<I> {
    /// An empty window starting at frame 0.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty window whose first input is for `frame` (a process rejoining
    /// a running match).
    pub fn starting_at(frame: u32) -> Self {
        SendWindow {
            base: frame,
            inputs: VecDeque::new(),
        }
    }

    /// The frame the next pushed input belongs to.
    pub fn next_frame(&self) -> u32 {
        self.base + self.inputs.len() as u32
    }

    /// The oldest frame still held.
    #[cfg(test)]
    fn base(&self) -> u32 {
        self.base
    }

    /// Appends the input for [`SendWindow::next_frame`].
    pub fn push(&mut self, frame: u32, input: I) -> Result<(), InputError> {
        if frame != self.next_frame() {
            return Err(InputError::UnexpectedFrame {
                got: frame,
                expected: Some(self.next_frame()),
            });
        }
        self.inputs.push_back(input);
        Ok(())
    }

    /// Frames a peer that acked `acked` still needs: `(first frame, count)`.
    pub fn unacked_span(&self, acked: Option<u32>) -> (u32, u32) {
        let first = acked.map_or(0, |a| a.saturating_add(1)).max(self.base);
        (first, self.next_frame().saturating_sub(first))
    }

    /// Up to `max` inputs from `first` on, oldest first.
    pub fn inputs_from(&self, first: u32, max: u32) -> Vec<I> {
        let start = first.saturating_sub(self.base) as usize;
        self.inputs
            .iter()
            .skip(start)
            .take(max as usize)
            .cloned()
            .collect()
    }

    /// Drops every frame up to and including `through`.
    pub fn trim_through(&mut self, through: u32) {
        while self.base <= through && !self.inputs.is_empty() {
            self.inputs.pop_front();
            self.base += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acks_slide_the_window() {
        let mut w = SendWindow::new();
        for f in 0..10u32 {
            w.push(f, f as u8).unwrap();
        }
        assert_eq!(
            w.push(3, 0),
            Err(InputError::UnexpectedFrame {
                got: 3,
                expected: Some(10)
            })
        );
        assert_eq!(w.unacked_span(None), (0, 10));
        assert_eq!(w.unacked_span(Some(6)), (7, 3));
        assert_eq!(w.inputs_from(7, 255), vec![7, 8, 9]);
        w.trim_through(6);
        assert_eq!(w.base(), 7);
        assert_eq!(w.unacked_span(Some(2)), (7, 3));
        assert_eq!(w.inputs_from(8, 1), vec![8]);
    }
}

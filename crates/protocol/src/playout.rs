//! The playout buffer: every player's received inputs by frame, released to
//! the game one whole frame at a time.
//!
//! Invariants:
//! - Each player's inputs are held for consecutive frames from `base`; a run
//!   that would leave a gap is refused, so "received through frame f" (the
//!   ack) always means every frame up to f is here.
//! - Frame n is released only when every player's input for n is present, in
//!   increasing order, each exactly once (replays after a resync excepted).
//! - Released frames stay `history` frames for re-simulation after a resync;
//!   older ones are dropped.
//! - Pacing (which frames are due) and the adaptive delay live in the session
//!   and in [`crate::delay`]; this buffer only knows what is complete.

use crate::player::PlayerSet;
use std::collections::VecDeque;

/// Why a run of received inputs was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RunError {
    /// The run starts after the first missing frame.
    #[error("inputs from frame {first} leave a gap after frame {through:?}")]
    Gap {
        /// First frame of the run.
        first: u32,
        /// The newest frame held for that player.
        through: Option<u32>,
    },
}

/// Every player's inputs from `base` on.
#[derive(Debug, Clone)]
pub struct PlayoutBuffer<I> {
    base: u32,
    next_release: u32,
    history: u32,
    inputs: Vec<VecDeque<I>>,
}

impl<I: Clone> PlayoutBuffer<I> {
    /// An empty buffer for `players` players that keeps `history` released
    /// frames for replays.
    pub fn new(players: usize, history: u32) -> Self {
        PlayoutBuffer {
            base: 0,
            next_release: 0,
            history,
            inputs: (0..players).map(|_| VecDeque::new()).collect(),
        }
    }

    /// The next frame to release.
    pub fn next_release(&self) -> u32 {
        self.next_release
    }

    /// The newest frame held for `player` with every earlier frame.
    pub fn through(&self, player: usize) -> Option<u32> {
        let len = self.inputs.get(player).map_or(0, |q| q.len() as u32);
        if len > 0 {
            Some(self.base + len - 1)
        } else {
            self.base.checked_sub(1)
        }
    }

    /// Adds `run` (inputs for frames `first..`) from `player`. Returns the
    /// frames that were new, as `(first new frame, count)`.
    pub fn insert_run(
        &mut self,
        player: usize,
        first: u32,
        run: &[I],
    ) -> Result<(u32, u32), RunError> {
        let through = self.through(player);
        let next = through.map_or(0, |t| t + 1);
        if first > next {
            return Err(RunError::Gap { first, through });
        }
        let Some(q) = self.inputs.get_mut(player) else {
            return Ok((next, 0));
        };
        let skip = (next - first) as usize;
        let mut added = 0u32;
        for input in run.iter().skip(skip) {
            q.push_back(input.clone());
            added += 1;
        }
        Ok((next, added))
    }

    /// Whether every player's input for `frame` is here.
    pub fn is_complete(&self, frame: u32) -> bool {
        self.missing(frame).is_empty() && frame >= self.base
    }

    /// The players whose input for `frame` is missing.
    pub fn missing(&self, frame: u32) -> PlayerSet {
        let mut set = PlayerSet::EMPTY;
        for p in 0..self.inputs.len() {
            if self.through(p).is_none_or(|t| t < frame) {
                set.insert(crate::player::PlayerId(p as u8));
            }
        }
        set
    }

    /// Every player's input for `frame`, if held.
    pub fn frame_inputs(&self, frame: u32) -> Option<Vec<I>> {
        let i = frame.checked_sub(self.base)? as usize;
        self.inputs.iter().map(|q| q.get(i).cloned()).collect()
    }

    /// Releases [`PlayoutBuffer::next_release`] if it is complete.
    pub fn release(&mut self) -> Option<(u32, Vec<I>)> {
        let frame = self.next_release;
        let inputs = self.frame_inputs(frame)?;
        self.next_release += 1;
        self.trim();
        Some((frame, inputs))
    }

    /// Moves the release point forward to `frame` (after loading a state
    /// that already includes the frames before it), dropping what is older.
    pub fn skip_to(&mut self, frame: u32) {
        if frame > self.next_release {
            self.next_release = frame;
            self.trim();
        }
    }

    fn trim(&mut self) {
        let keep_from = self.next_release.saturating_sub(self.history);
        while self.base < keep_from {
            for q in &mut self.inputs {
                q.pop_front();
            }
            self.base += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_only_complete_frames() {
        let mut b = PlayoutBuffer::new(2, 4);
        assert_eq!(b.insert_run(0, 0, &[1, 2, 3]), Ok((0, 3)));
        assert_eq!(b.release(), None);
        assert_eq!(b.insert_run(1, 0, &[7]), Ok((0, 1)));
        assert_eq!(b.insert_run(1, 0, &[7, 8]), Ok((1, 1)));
        assert_eq!(
            b.insert_run(1, 5, &[9]),
            Err(RunError::Gap {
                first: 5,
                through: Some(1)
            })
        );
        assert_eq!(b.release(), Some((0, vec![1, 7])));
        assert_eq!(b.release(), Some((1, vec![2, 8])));
        assert_eq!(b.release(), None);
        assert_eq!(
            b.missing(2).iter().collect::<Vec<_>>(),
            vec![crate::player::PlayerId(1)]
        );
    }

    #[test]
    fn skip_counts_skipped_frames_as_received() {
        let mut b = PlayoutBuffer::<u8>::new(2, 0);
        b.insert_run(0, 0, &[1, 2]).unwrap();
        b.skip_to(10);
        assert_eq!(b.through(0), Some(9));
        assert_eq!(b.through(1), Some(9));
        assert_eq!(b.insert_run(1, 10, &[5]), Ok((10, 1)));
        assert_eq!(b.insert_run(0, 3, &[0; 8]), Ok((10, 1)));
        assert_eq!(b.release(), Some((10, vec![0, 5])));
    }
}

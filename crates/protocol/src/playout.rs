//! The playout buffer: every seat's received inputs by frame, released to
//! the game one whole frame at a time.
//!
//! Invariants:
//! - Each seat's inputs are held for consecutive frames from `base`; a run
//!   that would leave a gap is refused, so "received through frame f" (the
//!   ack) always means every frame up to f is here.
//! - Frame n is released only when every seat's input for n is present, in
//!   increasing order, each exactly once (replays after a resync excepted).
//! - Released frames stay `history` frames for re-simulation after a resync;
//!   older ones are dropped. The history only grows.
//! - A seat that left ends at an agreed frame: from the frame after it, its
//!   input is the game's absent input, and nothing more is taken from it.
//! - Pacing (which frames are due) and the adaptive delay live in the session
//!   and in [`crate::delay`]; this buffer only knows what is complete.

use crate::seat::SeatSet;
use std::collections::VecDeque;

/// Why a run of received inputs was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RunError {
    /// The run starts after the first missing frame.
    #[error("inputs from frame {first} leave a gap after frame {through:?}")]
    Gap {
        /// First frame of the run.
        first: u32,
        /// The newest frame held for that seat.
        through: Option<u32>,
    },
}

/// Every seat's inputs from `base` on.
#[derive(Debug, Clone)]
pub struct PlayoutBuffer<I> {
    base: u32,
    next_release: u32,
    history: u32,
    inputs: Vec<VecDeque<I>>,
    ended: Vec<Option<(u32, I)>>,
}

impl<I: Clone> PlayoutBuffer<I> {
    /// An empty buffer for `seats` seats that keeps `history` released
    /// frames for replays.
    pub fn new(seats: usize, history: u32) -> Self {
        PlayoutBuffer {
            base: 0,
            next_release: 0,
            history,
            inputs: (0..seats).map(|_| VecDeque::new()).collect(),
            ended: vec![None; seats],
        }
    }

    /// Keeps at least `frames` released frames from now on (a longer history
    /// only grows: frames already dropped do not come back).
    pub fn keep_at_least(&mut self, frames: u32) {
        self.history = self.history.max(frames);
    }

    /// Released frames kept for replays.
    pub fn history(&self) -> u32 {
        self.history
    }

    /// The next frame to release.
    pub fn next_release(&self) -> u32 {
        self.next_release
    }

    /// Ends `seat` after frame `last` (`None`: before frame 0):
    /// its input for every later frame is `absent`. Refused (`false`) unless
    /// its inputs through `last` are held, or were released already.
    pub fn end_seat(&mut self, seat: usize, last: Option<u32>, absent: I) -> bool {
        if seat >= self.inputs.len() || self.through(seat) < last {
            return false;
        }
        let first_absent = last.map_or(0, |l| l + 1);
        if first_absent >= self.base {
            let keep = (first_absent - self.base) as usize;
            self.inputs[seat].truncate(keep);
        }
        self.ended[seat] = Some((first_absent, absent));
        true
    }

    /// Reopens ended `seat` from `frame`: its input stays absent
    /// for the frames before `frame` and is taken from it again from
    /// `frame` on. Refused (`false`) if the seat has not ended or `frame` was
    /// already released.
    pub fn reopen_seat(&mut self, seat: usize, frame: u32) -> bool {
        let Some(Some((first_absent, absent))) = self.ended.get(seat).cloned() else {
            return false;
        };
        if frame < first_absent.max(self.next_release) {
            return false;
        }
        let next = self.through(seat).map_or(0, |t| t + 1).max(self.base);
        for _ in next..frame {
            self.inputs[seat].push_back(absent.clone());
        }
        self.ended[seat] = None;
        true
    }

    /// The first frame `seat` is absent from, if it ended.
    pub fn seat_end(&self, seat: usize) -> Option<u32> {
        self.ended
            .get(seat)
            .and_then(|e| e.as_ref().map(|(f, _)| *f))
    }

    /// `seat`'s newest inputs held, at most `max`, with the frame of the
    /// first (empty: none held).
    pub fn tail(&self, seat: usize, max: u32) -> (u32, Vec<I>) {
        let Some(q) = self.inputs.get(seat) else {
            return (0, Vec::new());
        };
        let n = q.len().min(max as usize);
        let first = self.base + (q.len() - n) as u32;
        (first, q.iter().skip(q.len() - n).cloned().collect())
    }

    /// The newest frame held for `seat` with every earlier frame.
    pub fn through(&self, seat: usize) -> Option<u32> {
        let len = self.inputs.get(seat).map_or(0, |q| q.len() as u32);
        if len > 0 {
            Some(self.base + len - 1)
        } else {
            self.base.checked_sub(1)
        }
    }

    /// Adds `run` (inputs for frames `first..`) from `seat`. Returns the
    /// frames that were new, as `(first new frame, count)`.
    pub fn insert_run(
        &mut self,
        seat: usize,
        first: u32,
        run: &[I],
    ) -> Result<(u32, u32), RunError> {
        let through = self.through(seat);
        let next = through.map_or(0, |t| t + 1);
        if let Some(end) = self.seat_end(seat) {
            // Only frames before the seat's end are still taken.
            let keep = end.saturating_sub(first).min(run.len() as u32) as usize;
            if first > next || keep == 0 {
                return Ok((next, 0));
            }
            let run = &run[..keep];
            let Some(q) = self.inputs.get_mut(seat) else {
                return Ok((next, 0));
            };
            let skip = (next - first) as usize;
            let added = run.len().saturating_sub(skip) as u32;
            q.extend(run.iter().skip(skip).cloned());
            return Ok((next, added));
        }
        if first > next {
            return Err(RunError::Gap { first, through });
        }
        let Some(q) = self.inputs.get_mut(seat) else {
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

    /// Whether every seat's input for `frame` is here.
    pub fn is_complete(&self, frame: u32) -> bool {
        self.missing(frame).is_empty() && frame >= self.base
    }

    /// The seats whose input for `frame` is missing.
    pub fn missing(&self, frame: u32) -> SeatSet {
        let mut set = SeatSet::EMPTY;
        for p in 0..self.inputs.len() {
            if self.seat_end(p).is_some_and(|end| frame >= end) {
                continue;
            }
            if self.through(p).is_none_or(|t| t < frame) {
                set.insert(crate::seat::SeatId(p as u8));
            }
        }
        set
    }

    /// Every seat's input for `frame`, if held.
    pub fn frame_inputs(&self, frame: u32) -> Option<Vec<I>> {
        let i = frame.checked_sub(self.base)? as usize;
        self.inputs
            .iter()
            .zip(&self.ended)
            .map(|(q, end)| match end {
                Some((end, absent)) if frame >= *end => Some(absent.clone()),
                _ => q.get(i).cloned(),
            })
            .collect()
    }

    /// `seat`'s input for `frame`: held, or the absent input of a seat
    /// that ended before it; `None` when it has not arrived (or is older
    /// than the history kept).
    pub fn input(&self, seat: usize, frame: u32) -> Option<I> {
        match self.ended.get(seat)? {
            Some((end, absent)) if frame >= *end => Some(absent.clone()),
            _ => self.inputs[seat]
                .get(frame.checked_sub(self.base)? as usize)
                .cloned(),
        }
    }

    /// Every seat's input for `frame` as far as it is known, and a
    /// prediction for the rest: a missing input is `repeat` of that seat's
    /// newest one held (`none` when nothing is held). The prediction is
    /// what most games see most often — a seat keeps holding what they
    /// held — and costs nothing to make; `repeat` drops what must not be
    /// repeated (one-shot commands, see `Input::repeat`).
    pub fn predict(&self, frame: u32, none: &I, repeat: impl Fn(&I) -> I) -> Vec<I> {
        (0..self.inputs.len())
            .map(|p| {
                self.input(p, frame)
                    .or_else(|| self.inputs[p].back().map(&repeat))
                    .unwrap_or_else(|| none.clone())
            })
            .collect()
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
    /// Every seat then counts as received through `frame - 1` (the frames
    /// before it are never released again; `filler` stands in for the
    /// inputs that never arrived), so later runs from `frame` on fit.
    pub fn skip_to(&mut self, frame: u32, filler: I) {
        if frame <= self.next_release {
            return;
        }
        self.next_release = frame;
        for p in 0..self.inputs.len() {
            if self.seat_end(p).is_some() {
                continue;
            }
            let next = self.through(p).map_or(0, |t| t + 1).max(self.base);
            for _ in next..frame {
                self.inputs[p].push_back(filler.clone());
            }
        }
        self.trim();
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
    fn a_longer_history_keeps_more_and_never_shrinks() {
        let mut b = PlayoutBuffer::new(1, 2);
        b.insert_run(0, 0, &[0u8, 1, 2, 3, 4, 5, 6, 7, 8, 9])
            .unwrap();
        for _ in 0..4 {
            b.release();
        }
        assert_eq!(b.frame_inputs(1), None);
        assert_eq!(b.frame_inputs(2), Some(vec![2]));
        b.keep_at_least(5);
        b.keep_at_least(3);
        assert_eq!(b.history(), 5);
        for _ in 0..4 {
            b.release();
        }
        assert_eq!(b.frame_inputs(2), None, "dropped frames do not come back");
        assert_eq!(b.frame_inputs(3), Some(vec![3]));
    }

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
            vec![crate::seat::SeatId(1)]
        );
    }

    #[test]
    fn an_ended_seat_plays_its_absent_input_after_its_last_frame() {
        let mut b = PlayoutBuffer::new(3, 8);
        b.insert_run(0, 0, &[1, 1, 1, 1, 1]).unwrap();
        b.insert_run(1, 0, &[2, 2, 2, 2, 2]).unwrap();
        b.insert_run(2, 0, &[3, 3, 3]).unwrap();
        assert!(!b.end_seat(2, Some(3), 0), "frame 3 of seat 2 is not held");
        assert_eq!(b.tail(2, 2), (1, vec![3, 3]));
        assert!(b.end_seat(2, Some(1), 0));
        assert_eq!(b.seat_end(2), Some(2));
        let released: Vec<_> = std::iter::from_fn(|| b.release()).collect();
        assert_eq!(
            released,
            vec![
                (0, vec![1, 2, 3]),
                (1, vec![1, 2, 3]),
                (2, vec![1, 2, 0]),
                (3, vec![1, 2, 0]),
                (4, vec![1, 2, 0]),
            ]
        );
        // Nothing more is taken from the seat.
        assert_eq!(b.insert_run(2, 2, &[9, 9]).map(|(_, n)| n), Ok(0));
        assert!(b.missing(5).iter().all(|p| p.0 != 2));
    }

    #[test]
    fn a_missing_input_is_predicted_to_repeat_the_newest() {
        let mut b = PlayoutBuffer::new(3, 8);
        b.insert_run(0, 0, &[1, 2, 3]).unwrap();
        b.insert_run(1, 0, &[7]).unwrap();
        assert_eq!(b.predict(1, &0, |i| *i), vec![2, 7, 0]);
        assert_eq!(b.predict(5, &0, |i| *i), vec![3, 7, 0]);
        assert!(b.end_seat(1, Some(0), 9));
        assert_eq!(b.input(1, 3), Some(9));
        assert_eq!(b.predict(3, &0, |i| *i), vec![3, 9, 0]);
        assert_eq!(b.input(2, 0), None);
    }

    #[test]
    fn skip_counts_skipped_frames_as_received() {
        let mut b = PlayoutBuffer::<u8>::new(2, 0);
        b.insert_run(0, 0, &[1, 2]).unwrap();
        b.skip_to(10, 0);
        assert_eq!(b.through(0), Some(9));
        assert_eq!(b.through(1), Some(9));
        assert_eq!(b.insert_run(1, 10, &[5]), Ok((10, 1)));
        assert_eq!(b.insert_run(0, 3, &[0; 8]), Ok((10, 1)));
        assert_eq!(b.release(), Some((10, vec![0, 5])));
    }
}

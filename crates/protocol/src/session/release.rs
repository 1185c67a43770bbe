//! What the app steps, and when: frames are handed out in order, a delay
//! after their tick, either once every player's input is here (lockstep)
//! or at once with the missing inputs predicted (rollback); a prediction
//! proved wrong rolls the app back to the first wrong frame.
//!
//! One release path serves both modes: lockstep is rollback with a
//! prediction window of zero frames and the adaptive playout delay as its
//! delay. The frames handed out fall into three runs:
//!
//! - before `playout.next_release()`: *confirmed*, stepped with every real
//!   input; only these have their checksums compared and reach the log;
//! - from there to `next_step`: *predicted*, held in `predictions` with
//!   the inputs they were stepped with, at most `max_prediction` of them;
//! - from `next_step` on: not stepped yet.
//!
//! Invariants: a frame is stepped only once the local input for it is in
//! (the local input is never predicted); frames are handed out in order
//! from the engine's next frame, and after [`Event::Rollback`] from the
//! rolled-back frame; a rollback never reaches a confirmed frame, except
//! the sync test's, which re-steps confirmed frames with their own inputs.

use super::{Event, Mode, Phase, Session};
use crate::input::Input;

impl<I: Input> Session<I> {
    /// Frames between sampling a frame and stepping it: the playout delay
    /// in lockstep, the agreed input delay in rollback.
    pub(super) fn step_delay(&self) -> u32 {
        match self.cfg.mode {
            Mode::Lockstep => self.delay.frames(),
            Mode::Rollback(_) => self.input_delay.current(),
        }
    }

    /// The newest frame due: frames up to it may be stepped now.
    pub(super) fn due_frame(&self) -> Option<u32> {
        let newest = self.clock.next_frame().checked_sub(1)?;
        newest.checked_sub(self.step_delay())
    }

    /// Whether frame `f` can be stepped now as far as inputs go: a
    /// confirmed frame stepped again, the next confirmed frame once
    /// complete, or a prediction inside the window (and never ahead of the
    /// local input).
    fn steppable(&self, f: u32) -> bool {
        let confirmed = self.playout.next_release();
        let local = self.playout.through(self.cfg.local.index());
        if local.is_none_or(|l| f > l) || self.cfg.match_frames.is_some_and(|n| f >= n) {
            return false;
        }
        f < confirmed
            || (self.predictions.is_empty() && self.playout.is_complete(f))
            || f - confirmed < self.cfg.mode.max_prediction()
    }

    /// At a tick: whether a due frame waits for a remote input (a stall;
    /// waiting for the local input, which the app adds right after the
    /// tick, is not one).
    pub(super) fn stalled(&self) -> bool {
        let f = self.next_step;
        let local = self.playout.through(self.cfg.local.index());
        self.due_frame().is_some_and(|due| f <= due)
            && local.is_some_and(|l| f <= l)
            && !self.steppable(f)
    }

    /// Rolls back to the first wrong prediction (or the sync test's frame),
    /// confirms what arrived, and hands out every frame that is due and can
    /// be stepped.
    pub(super) fn try_release(&mut self) {
        if self.awaiting_state || self.phase == Phase::Closed {
            // A rejoining process steps nothing before the host's state; a
            // closed session (it left, or lost its quorum) nothing at all.
            return;
        }
        let playout = &self.playout;
        let wrong = self.predictions.first_wrong(|f, p| playout.input(p, f));
        let forced = self.forced_rollback.take();
        let mut redo_until = match (wrong, forced) {
            (None, None) => None,
            (a, b) => {
                let to = a.into_iter().chain(b).min().unwrap_or(self.next_step);
                let until = self.next_step;
                self.predictions.truncate_from(to);
                self.next_step = to;
                self.stats.rollbacks += 1;
                self.events.push_back(Event::Rollback { frame: to });
                Some(until)
            }
        };
        while !self.predictions.is_empty() && self.playout.is_complete(self.predictions.first()) {
            // Every input of the oldest prediction arrived and matched (a
            // mismatch rolled it back above): it is confirmed as stepped.
            let _ = self.playout.release();
            if let Some((frame, Some(checksum))) = self.predictions.confirm_first() {
                if self.record_own_checksum(frame, checksum) {
                    // A held state was loaded: what was being stepped again
                    // is stepped from it instead.
                    redo_until = None;
                }
            }
        }
        let Some(due) = self.due_frame() else {
            return;
        };
        loop {
            let f = self.next_step;
            if self.resync.held.as_ref().is_some_and(|held| f > held.frame) {
                // A held state waits for its frame's checksum: nothing after
                // that frame is handed out before the load (a checksum of
                // a later frame would reach the exchange after the load,
                // under the new epoch, and be taken for a new desync).
                break;
            }
            let redo = redo_until.is_some_and(|until| f < until);
            if (!redo && (f > due || self.release_budget == 0)) || !self.steppable(f) {
                break;
            }
            let confirmed = self.playout.next_release();
            let (inputs, predicted) = if f < confirmed {
                match self.playout.frame_inputs(f) {
                    Some(inputs) => (inputs, false),
                    None => break,
                }
            } else if self.predictions.is_empty() && self.playout.is_complete(f) {
                match self.playout.release() {
                    Some((_, inputs)) => (inputs, false),
                    None => break,
                }
            } else {
                let inputs = self.playout.predict(f, &I::default(), I::repeat);
                self.predictions.push(f, inputs.clone());
                (inputs, true)
            };
            if redo {
                self.stats.frames_rolled_back += 1;
            } else {
                self.release_budget -= 1;
                self.stats.frames_released += 1;
                if predicted {
                    self.stats.frames_predicted += 1;
                }
            }
            self.next_step = f + 1;
            self.last_released = Some(f);
            self.events.push_back(Event::Frame {
                frame: f,
                inputs,
                resimulated: redo,
                predicted,
            });
        }
    }

    /// The sync test: asks the next release to roll back
    /// `sync_test_frames` frames, no further than the oldest frame not yet
    /// compared clean (the app may have forgotten the states before it)
    /// nor the oldest frame whose inputs are still held.
    pub(super) fn force_sync_test_rollback(&mut self) {
        let Mode::Rollback(r) = self.cfg.mode else {
            return;
        };
        if r.sync_test_frames == 0 || self.awaiting_state {
            return;
        }
        let floor = [
            self.book.newest_clean().map_or(0, |c| c + 1),
            self.resync.load_frame.map_or(0, |l| l + 1),
            self.playout
                .next_release()
                .saturating_sub(self.cfg.input_history_frames),
        ]
        .into_iter()
        .max()
        .unwrap_or(0);
        let to = self.next_step.saturating_sub(r.sync_test_frames).max(floor);
        if to < self.next_step {
            self.forced_rollback = Some(to);
        }
    }
}

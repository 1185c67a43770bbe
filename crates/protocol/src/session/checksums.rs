//! The checksum exchange as the session runs it: recording this peer's
//! checksum of each stepped frame, and acting on the verdicts of the
//! [`ChecksumBook`](crate::checksum_book::ChecksumBook) (a desync, who drifted,
//! who resyncs; a dispute goes to `integrity.rs`).

use super::{CallError, Event, Session};
use crate::checksum_book::Verdict;
use crate::input::Input;
use crate::time::Instant;
use lockstep_fx::Checksum;

impl<I: Input> Session<I> {
    pub(super) fn on_verdict(&mut self, now: Instant, v: Option<Verdict>) {
        match v {
            None => {}
            Some(Verdict::Desync {
                frame,
                authority,
                drifted,
            }) => {
                let local_drifted = drifted.contains(self.cfg.local);
                self.note_desync(frame, drifted);
                self.events.push_back(Event::Desync {
                    frame,
                    authority: Some(authority),
                    drifted,
                    local_drifted,
                });
                if local_drifted && !self.recurring(frame) {
                    self.begin_resync(now, authority, frame);
                }
            }
            Some(Verdict::Disputed { frame, seats }) => self.begin_dispute(now, frame, seats),
        }
    }

    /// This peer's checksum of the state after `frame`, once stepped. It must
    /// be BLAKE3 of the exact saved-state bytes (as `lockstep_fx::StateWriter`
    /// produces), so a resync can verify a transferred state.
    ///
    /// The checksum of a predicted frame is held back until the frame is
    /// confirmed (its inputs all arrive as predicted); it is dropped if the
    /// frame is rolled back. Only confirmed frames are compared, so a
    /// misprediction is never taken for a desync.
    pub fn report_checksum(&mut self, frame: u32, checksum: Checksum) -> Result<(), CallError> {
        if self.last_released.is_none_or(|r| frame > r) {
            return Err(CallError::NotReleased {
                frame,
                released: self.last_released,
            });
        }
        if frame >= self.playout.next_release() {
            self.predictions.set_checksum(frame, checksum);
            return Ok(());
        }
        self.record_own_checksum(frame, checksum);
        Ok(())
    }

    /// Enters this peer's checksum of confirmed frame `frame` into the
    /// comparison; then loads a held resync state that waited for it.
    /// Returns whether it did.
    pub(super) fn record_own_checksum(&mut self, frame: u32, checksum: Checksum) -> bool {
        self.own_newest = Some(self.own_newest.map_or(frame, |n| n.max(frame)));
        if frame % self.cfg.full_checksum_every == 0 {
            for p in &mut self.peers {
                p.full_due = Some((frame, checksum));
            }
        }
        let v = self.book.record_own(frame, checksum);
        let now = self.now;
        self.on_verdict(now, v);
        self.raise_state_request();
        self.load_when_reached()
    }
}

//! What the session does for the snapshot fall-back: it carries snapshot
//! parts and acks between two seats like any routed message (the session
//! never looks inside; they surface as [`Event::SnapshotPart`](crate::Event::SnapshotPart) and
//! [`Event::SnapshotAck`](crate::Event::SnapshotAck)), and lets a peer whose resync failed try again
//! later ([`Session::retry_resync`]).

use super::{CallError, Phase, Session};
use crate::input::Input;
use crate::packet::{Message, SnapshotAck, SnapshotPart};
use crate::seat::SeatId;
use crate::time::Instant;

impl<I: Input> Session<I> {
    fn snapshot_peer(&self, to: SeatId) -> Result<(), CallError> {
        let ok = self.phase == Phase::Running
            && to != self.cfg.local
            && self
                .peers
                .get(to.index())
                .is_some_and(|p| !p.gone && p.token.is_some());
        if ok {
            Ok(())
        } else {
            Err(CallError::NotConnected { peer: to })
        }
    }

    /// Sends `part` of a snapshot stream to `to` (it asked for the stream
    /// with a [`SnapshotAck`]). Goes out at the next
    /// [`Session::poll_transmit`].
    ///
    /// # Errors
    ///
    /// [`CallError::NotConnected`] unless `to` is a connected seat of a
    /// running match.
    pub fn send_snapshot_part(&mut self, to: SeatId, part: SnapshotPart) -> Result<(), CallError> {
        self.snapshot_peer(to)?;
        self.send_routed(to, Message::SnapshotPart(part));
        Ok(())
    }

    /// Sends `ack` to `to`: asks it for a snapshot stream, acks the newest
    /// snapshot decoded, or ends the stream.
    ///
    /// # Errors
    ///
    /// [`CallError::NotConnected`] unless `to` is a connected seat of a
    /// running match.
    pub fn send_snapshot_ack(&mut self, to: SeatId, ack: SnapshotAck) -> Result<(), CallError> {
        self.snapshot_peer(to)?;
        self.send_routed(to, Message::SnapshotAck(ack));
        Ok(())
    }

    /// Whether checksum comparisons stopped because resync failed
    /// ([`Event::ResyncFailed`](crate::Event::ResyncFailed)) and no retry is under way.
    pub fn resync_failed(&self) -> bool {
        self.book.gave_up()
    }

    /// After [`Event::ResyncFailed`](crate::Event::ResyncFailed), asks `authority` for its state again
    /// with a fresh count of attempts: the state is loaded as in any
    /// resync ([`Event::LoadState`](crate::Event::LoadState)), comparisons resume after it, and if
    /// the checksums then agree for `resync_stable_frames` frames the
    /// resync held; if they differ again the attempts run out as before
    /// and [`Event::ResyncFailed`](crate::Event::ResyncFailed) comes again.
    ///
    /// # Errors
    ///
    /// [`CallError::NotConnected`] unless `authority` is a connected seat
    /// of a running match; [`CallError::ResyncNotFailed`] unless resync had
    /// failed.
    pub fn retry_resync(&mut self, now: Instant, authority: SeatId) -> Result<(), CallError> {
        self.now = self.now.max(now);
        self.snapshot_peer(authority)?;
        if !self.book.gave_up() {
            return Err(CallError::ResyncNotFailed);
        }
        self.book.resume();
        self.resync.attempts = 0;
        self.integrity.forget_desyncs();
        self.resync.load_frame = None;
        let frame = self.last_released.unwrap_or(0);
        self.begin_resync(now, authority, frame);
        Ok(())
    }
}

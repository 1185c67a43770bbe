//! A peer's snapshot part: the [`SnapshotServer`] it serves streams from
//! and the [`Fallback`] it may show them through, and how that part reacts
//! to what the session and the relay report — the match starting, a resync
//! failing, parts and acks arriving, spectators joining and leaving, frames
//! stepped. The peer hands each reaction what it needs; this part never
//! sees the peer.
//!
//! Invariant: a peer whose own state drifted serves nothing (its state is
//! not worth serving) until it is back in lockstep.

use std::collections::VecDeque;

use lockstep_protocol::packet::{SnapshotAck, SnapshotPart};
use lockstep_protocol::spectate::{Relay, SpectatorId};
use lockstep_protocol::{Input, Instant, ResyncFailure, SeatId, Session};

use crate::event::{FallbackReason, PeerEvent};
use crate::fallback::Fallback;
use crate::snapshot_server::{Receiver, SnapshotServer};

/// Everything snapshot-related of one peer.
pub(crate) struct Snapshots<G> {
    pub(crate) server: SnapshotServer<G>,
    pub(crate) fallback: Fallback,
}

impl<G> Snapshots<G> {
    /// The match started: a viewer goes on snapshots from `authority`.
    pub(crate) fn on_started(
        &mut self,
        now: Instant,
        authority: SeatId,
        events: &mut VecDeque<PeerEvent>,
    ) {
        if self.fallback.is_viewer() {
            self.fallback
                .enter(now, authority, FallbackReason::Viewer, events);
        }
    }

    /// Resync failed: follow `authority`'s snapshots (or retry later).
    pub(crate) fn on_resync_failed(
        &mut self,
        now: Instant,
        authority: SeatId,
        reason: ResyncFailure,
        events: &mut VecDeque<PeerEvent>,
    ) {
        self.fallback
            .on_resync_failed(now, authority, reason, events);
    }

    /// A snapshot part from seat `from`; `reference` is the peer's frame.
    pub(crate) fn on_part(
        &mut self,
        now: Instant,
        from: SeatId,
        part: SnapshotPart,
        reference: u32,
    ) {
        self.fallback.on_part(now, from, part, reference);
    }

    /// A receiver's ack; `reference` is the peer's frame.
    pub(crate) fn on_ack(
        &mut self,
        now: Instant,
        from: Receiver,
        ack: SnapshotAck,
        reference: u32,
    ) {
        if self.fallback.serves() {
            self.server.on_ack(now, from, ack, reference);
        }
    }

    /// A spectator joined (`watches_snapshots`: for snapshots) or left.
    pub(crate) fn on_spectator(
        &mut self,
        now: Instant,
        spectator: SpectatorId,
        joined: bool,
        watches_snapshots: bool,
    ) {
        if joined && watches_snapshots {
            self.server.start(now, Receiver::Spectator(spectator), 0);
        } else if !joined {
            self.server.stop(Receiver::Spectator(spectator));
        }
    }

    /// The peer stepped `frame` for the first time (`last`: the match's
    /// last frame) and its game is `game`.
    pub(crate) fn on_frame(&mut self, now: Instant, frame: u32, last: bool, game: &G) {
        if self.fallback.serves() {
            self.server.on_frame(now, frame, last, game);
        }
    }

    /// Sends what is due — acks, resync retries, the parts served — and
    /// returns whether the peer came back to lockstep just now.
    pub(crate) fn poll<I: Input>(
        &mut self,
        now: Instant,
        session: &mut Session<I>,
        relay: &mut Relay<I>,
        events: &mut VecDeque<PeerEvent>,
    ) -> bool {
        let returns = self.fallback.returns;
        self.fallback.poll(now, session, events);
        for (to, part) in self.server.drain() {
            match to {
                Receiver::Seat(seat) => {
                    let _ = session.send_snapshot_part(seat, part);
                }
                Receiver::Spectator(w) => {
                    relay.send_snapshot_part(w, part);
                }
            }
        }
        self.fallback.returns > returns
    }
}

//! [`SnapshotSpectator`]: watches a match through one seat's relay without
//! simulating it — a browser overlay, a caster's view, a machine too slow
//! for the game. It asks the relay for a snapshot stream instead of the
//! inputs and an exact state, and shows the snapshots interpolated: the
//! same receiving path ([`SnapshotView`]) a peer uses when it falls back
//! to snapshots.
//!
//! Invariants: it reads no clock and owns no socket (sans-IO, like
//! [`Peer`](crate::Peer)); it sends nothing but its handshake, acks and a
//! goodbye; the initial baseline is the game's own state before frame 0,
//! built from the match setup, so it needs the game's code but never
//! steps it.

use std::collections::VecDeque;
use std::marker::PhantomData;

use lockstep_protocol::Instant;
use lockstep_protocol::seal::{Identity, PublicKey};
use lockstep_protocol::spectate::{
    SpectateConfig, SpectatorSession, SpectatorSessionEvent, SpectatorSessionStats,
};
use lockstep_sim::{Game, Match};
use lockstep_snapshot::interpolate::Pose;
use lockstep_snapshot::{Bodies, bodies};

use crate::error::PeerError;
use crate::snapshot_server::SnapshotSettings;
use crate::snapshot_view::{SnapshotView, ViewStats};

/// What a snapshot spectator tells its app, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SnapshotSpectatorEvent {
    /// The relay answered the handshake.
    Connected,
    /// The snapshot of `frame` arrived and decoded.
    Snapshot {
        /// Its frame.
        frame: u32,
    },
    /// The relay plays another game, seat count or tick.
    Incompatible,
    /// The relay said goodbye or went silent.
    RelayLost,
}

impl std::fmt::Display for SnapshotSpectatorEvent {
    /// One line for a person (see [`PeerEvent`](crate::PeerEvent)'s text).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SnapshotSpectatorEvent::Connected => write!(f, "connected to the host (snapshots)"),
            SnapshotSpectatorEvent::Snapshot { frame } => write!(f, "snapshot of frame {frame}"),
            SnapshotSpectatorEvent::Incompatible => write!(f, "the host plays another game"),
            SnapshotSpectatorEvent::RelayLost => write!(f, "the host went away"),
        }
    }
}

/// A spectator of a match of `G` that shows snapshots.
pub struct SnapshotSpectator<G: Game> {
    spectator: SpectatorSession<G::Input>,
    view: SnapshotView,
    events: VecDeque<SnapshotSpectatorEvent>,
    game: PhantomData<fn() -> G>,
}

impl<G: Game> core::fmt::Debug for SnapshotSpectator<G> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SnapshotSpectator")
            .field("view", self.view.stats())
            .finish_non_exhaustive()
    }
}

impl<G: Game + Bodies> SnapshotSpectator<G> {
    /// A spectator of the match `setup` of `G` with `config` (the seats'),
    /// token `token` (random, never 0), starting at `now`; the relay must
    /// serve snapshots with the same `settings`.
    pub fn new(
        config: &G::Config,
        setup: Match,
        spectate: SpectateConfig,
        settings: SnapshotSettings,
        token: u32,
        now: Instant,
    ) -> Result<SnapshotSpectator<G>, PeerError> {
        if spectate.seats != setup.seats {
            return Err(PeerError::Seats {
                session: spectate.seats,
                setup: setup.seats,
            });
        }
        let game = G::new(config, &setup)?;
        let bounds = settings.bounds(game.snapshot_bounds());
        let initial = bodies::quantize(&game, &bounds);
        let tick = spectate.tick_micros;
        Ok(SnapshotSpectator {
            spectator: SpectatorSession::snapshots(spectate, token, now),
            view: SnapshotView::new(0, initial, bounds, tick, settings.view_mode()),
            events: VecDeque::new(),
            game: PhantomData,
        })
    }
}

impl<G: Game> SnapshotSpectator<G> {
    /// The same spectator, sealing its packets with keys agreed between
    /// `identity` (its key pair for the match) and the relay's public key
    /// `relay`, as the match setup gave them.
    pub fn sealed(
        mut self,
        identity: &Identity,
        relay: PublicKey,
    ) -> Result<SnapshotSpectator<G>, PeerError> {
        self.spectator = self.spectator.sealed(identity, relay)?;
        Ok(self)
    }

    /// Feeds a datagram received from the relay.
    pub fn handle_datagram(&mut self, now: Instant, bytes: &[u8]) {
        self.spectator.handle_datagram(now, bytes);
        self.answer(now);
    }

    /// Runs the timers once `now` reaches [`SnapshotSpectator::poll_timeout`].
    pub fn handle_timeout(&mut self, now: Instant) {
        self.spectator.handle_timeout(now);
        self.answer(now);
    }

    /// The next datagram for the relay.
    #[must_use]
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Vec<u8>> {
        self.spectator.poll_transmit(now)
    }

    /// When [`SnapshotSpectator::handle_timeout`] next needs calling.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        // At least every keepalive, so acks keep the relay's slot.
        Some(self.spectator.poll_timeout()?.min(self.view.ack_at()))
    }

    /// The next thing that happened, in order.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<SnapshotSpectatorEvent> {
        self.events.pop_front()
    }

    /// What to draw at `now`: every body slot's pose, interpolated a
    /// playout delay behind the snapshots (`None` until the first).
    pub fn poses(&self, now: Instant) -> Option<Vec<Pose>> {
        self.view.poses(now)
    }

    /// The newest snapshot: its frame and its poses, not interpolated.
    pub fn newest_snapshot(&self) -> Option<(u32, Vec<Pose>)> {
        self.view.newest()
    }

    /// The receiving side (counters, the clock and its delay).
    pub fn view(&self) -> &SnapshotView {
        &self.view
    }

    /// What arrived, counted.
    pub fn stats(&self) -> &ViewStats {
        self.view.stats()
    }

    /// The connection's counters.
    pub fn connection_stats(&self) -> &SpectatorSessionStats {
        self.spectator.stats()
    }

    /// Ends the stream and says goodbye to the relay.
    pub fn disconnect(&mut self) {
        let _ = self.spectator.send_snapshot_ack(self.view.goodbye());
        self.spectator.disconnect();
    }

    fn answer(&mut self, now: Instant) {
        while let Some(event) = self.spectator.poll_event() {
            match event {
                SpectatorSessionEvent::Connected => {
                    self.events.push_back(SnapshotSpectatorEvent::Connected)
                }
                SpectatorSessionEvent::SnapshotPart(part) => {
                    let reference = self.spectator.reference_frame();
                    let before = self.view.stats().snapshots;
                    self.view.on_part(now, part, reference);
                    if self.view.stats().snapshots > before {
                        if let Some((frame, _)) = self.view.newest() {
                            self.events
                                .push_back(SnapshotSpectatorEvent::Snapshot { frame });
                        }
                    }
                }
                SpectatorSessionEvent::Incompatible => {
                    self.events.push_back(SnapshotSpectatorEvent::Incompatible)
                }
                // It steps nothing, so it has no checksum to give.
                SpectatorSessionEvent::Asked { frame } => self.spectator.answer(frame, None),
                SpectatorSessionEvent::RelayLost => {
                    self.events.push_back(SnapshotSpectatorEvent::RelayLost)
                }
                // Asked for snapshots: no state or frames come.
                SpectatorSessionEvent::LoadState { .. }
                | SpectatorSessionEvent::Frame { .. }
                | SpectatorSessionEvent::Settled { .. } => {}
            }
        }
        if let Some(ack) = self.view.ack(now) {
            self.spectator.send_snapshot_ack(ack);
        }
    }
}

//! A [`Peer`]'s snapshot side: serving snapshot streams (to seats that
//! fell back and to spectators watching snapshots, see
//! [`crate::snapshot_server`]) and its own fall-back (see
//! [`crate::fallback`]), wired to the session and the relay. Enabled by
//! [`Peer::enable_snapshots`] for a game that exposes its bodies
//! ([`Bodies`]); a peer without it serves no snapshots and, when resync
//! fails, only reports it.

use std::io::Write;

use lockstep_protocol::packet::{SnapshotAck, SnapshotPart};
use lockstep_protocol::watch::WatcherId;
use lockstep_protocol::{Instant, PlayerId, ResyncFailure};
use lockstep_sim::Game;
use lockstep_sim::replay::Note;
use lockstep_snapshot::interpolate::Pose;
use lockstep_snapshot::{Bodies, bodies};

use crate::event::FallbackReason;
use crate::fallback::Fallback;
use crate::peer::{Peer, PeerError};
use crate::snapshot_server::{Receiver, ServerStats, SnapshotServer, SnapshotSettings};
use crate::snapshot_view::ViewStats;

/// Everything snapshot-related of one peer.
pub(crate) struct Snapshots<G> {
    pub(crate) server: SnapshotServer<G>,
    pub(crate) fallback: Fallback,
}

/// A peer's snapshot counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SnapshotStats {
    /// What it served.
    pub served: ServerStats,
    /// What it received while on snapshots (the current fall-back, or
    /// the last one).
    pub received: ViewStats,
    /// Times it switched to snapshots.
    pub switches: u64,
    /// Times it came back to lockstep.
    pub returns: u64,
}

impl<G: Game + Bodies, W: Write> Peer<G, W> {
    /// Lets this peer serve snapshot streams and fall back to them: a
    /// seat whose resync fails (or, with `settings.viewer`, every seat of
    /// this process from the start) shows the authority's snapshots, and
    /// spectators may watch snapshots through this peer's relay. Call
    /// before the match starts, with the same settings on every peer.
    ///
    /// # Errors
    ///
    /// [`PeerError::InitialState`] if the game's own initial state does
    /// not decode.
    pub fn enable_snapshots(&mut self, settings: SnapshotSettings) -> Result<(), PeerError> {
        let initial = G::decode(&self.initial_state)?;
        let bounds = settings.bounds(initial.snapshot_bounds());
        let bodies = bodies::quantize(&initial, &bounds);
        let tick = self.session.config().tick_micros;
        self.snapshots = Some(Snapshots {
            server: SnapshotServer::new(settings, bounds, bodies.clone(), bodies::quantize::<G>),
            fallback: Fallback::new(settings, bounds, bodies, tick),
        });
        Ok(())
    }
}

impl<G: Game, W: Write> Peer<G, W> {
    /// Whether this peer shows snapshots instead of its own simulation.
    pub fn is_on_snapshots(&self) -> bool {
        self.snapshots.as_ref().is_some_and(|s| s.fallback.is_on())
    }

    /// The seat whose snapshots this peer shows, while on snapshots.
    pub fn snapshot_authority(&self) -> Option<PlayerId> {
        self.snapshots.as_ref()?.fallback.authority()
    }

    /// What to draw at `now` while on snapshots: every body slot's pose,
    /// interpolated a playout delay behind the snapshots received (`None`
    /// in lockstep, where the app draws [`Peer::game`], and until the
    /// first snapshot arrives).
    pub fn snapshot_view(&self, now: Instant) -> Option<Vec<Pose>> {
        self.snapshots.as_ref()?.fallback.poses(now)
    }

    /// The newest snapshot received while on snapshots: its frame and the
    /// poses it holds, not interpolated.
    pub fn newest_snapshot(&self) -> Option<(u32, Vec<Pose>)> {
        self.snapshots.as_ref()?.fallback.view()?.newest()
    }

    /// The snapshot counters (`None` until [`Peer::enable_snapshots`]).
    pub fn snapshot_stats(&self) -> Option<SnapshotStats> {
        let s = self.snapshots.as_ref()?;
        Some(SnapshotStats {
            served: *s.server.stats(),
            received: s.fallback.view_stats(),
            switches: s.fallback.switches,
            returns: s.fallback.returns,
        })
    }

    /// The seat to take snapshots from when no desync named one: the
    /// lowest other seat.
    fn default_authority(&self) -> PlayerId {
        let me = self.seat();
        PlayerId(if me.0 == 0 { 1 } else { 0 })
    }

    pub(crate) fn snapshots_on_started(&mut self, now: Instant) {
        let authority = self.default_authority();
        if let Some(s) = &mut self.snapshots {
            if s.fallback.is_viewer() {
                s.fallback
                    .enter(now, authority, FallbackReason::Viewer, &mut self.events);
            }
        }
    }

    pub(crate) fn snapshots_on_resync_failed(&mut self, now: Instant, reason: ResyncFailure) {
        let authority = self
            .desync
            .and_then(|(_, a)| a)
            .unwrap_or_else(|| self.default_authority());
        if let Some(s) = &mut self.snapshots {
            s.fallback
                .on_resync_failed(now, authority, reason, &mut self.events);
        }
    }

    pub(crate) fn snapshots_on_part(&mut self, now: Instant, from: PlayerId, part: SnapshotPart) {
        let reference = self.engine.frame();
        if let Some(s) = &mut self.snapshots {
            s.fallback.on_part(now, from, part, reference);
        }
    }

    pub(crate) fn snapshots_on_ack(&mut self, now: Instant, from: Receiver, ack: SnapshotAck) {
        let reference = self.engine.frame();
        if let Some(s) = &mut self.snapshots {
            // A peer whose own state drifted has no state worth serving.
            if s.fallback.serves() {
                s.server.on_ack(now, from, ack, reference);
            }
        }
    }

    pub(crate) fn snapshots_on_watcher(&mut self, now: Instant, watcher: WatcherId, joined: bool) {
        let snapshot_watcher = joined && self.relay.snapshot_watchers().contains(&watcher);
        if let Some(s) = &mut self.snapshots {
            if snapshot_watcher {
                s.server.start(now, Receiver::Watcher(watcher), 0);
            } else if !joined {
                s.server.stop(Receiver::Watcher(watcher));
            }
        }
    }

    pub(crate) fn snapshots_on_frame(&mut self, now: Instant, frame: u32) {
        if let Some(s) = &mut self.snapshots {
            if s.fallback.serves() {
                s.server.on_frame(now, frame, self.engine.game());
            }
        }
    }

    pub(crate) fn snapshots_poll(&mut self, now: Instant) {
        let Some(s) = &mut self.snapshots else {
            return;
        };
        let returns = s.fallback.returns;
        s.fallback.poll(now, &mut self.session, &mut self.events);
        let back = s.fallback.returns > returns;
        for (to, part) in s.server.drain() {
            match to {
                Receiver::Seat(seat) => {
                    let _ = self.session.send_snapshot_part(seat, part);
                }
                Receiver::Watcher(w) => {
                    self.relay.send_snapshot_part(w, part);
                }
            }
        }
        if back {
            // Its checksums are compared again: the log says from where.
            let from = self.session.newest_clean().unwrap_or(0);
            self.note(&Note::Checked { from });
        }
    }
}

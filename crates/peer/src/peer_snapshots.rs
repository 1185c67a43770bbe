//! A [`Peer`]'s snapshot API: serving snapshot streams (to seats that
//! fell back and to spectators watching snapshots, see
//! [`crate::snapshot_server`]) and its own fall-back (see
//! [`crate::fallback`]), how the app turns them on and reads them. The
//! part itself and its reactions are [`crate::snapshots`]. Enabled by
//! [`Peer::enable_snapshots`] for a game that exposes its bodies
//! ([`Bodies`]); a peer without it serves no snapshots and, when resync
//! fails, only reports it.

use std::io::Write;

use lockstep_protocol::{Instant, SeatId};
use lockstep_sim::Game;
use lockstep_snapshot::interpolate::Pose;
use lockstep_snapshot::{Bodies, bodies};

use crate::error::PeerError;
use crate::fallback::Fallback;
use crate::peer::Peer;
use crate::snapshot_server::{ServerStats, SnapshotServer, SnapshotSettings};
use crate::snapshot_view::ViewStats;
use crate::snapshots::Snapshots;

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
            server: SnapshotServer::new(
                settings,
                bounds,
                bodies.clone(),
                bodies::quantize::<G>,
                tick,
            ),
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
    pub fn snapshot_authority(&self) -> Option<SeatId> {
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
    pub(crate) fn default_authority(&self) -> SeatId {
        let me = self.seat();
        SeatId(if me.0 == 0 { 1 } else { 0 })
    }
}

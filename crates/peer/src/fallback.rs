//! [`Fallback`]: a peer that lockstep cannot hold shows the authority's
//! snapshots instead of its own simulation.
//!
//! The states: *in lockstep* (the app draws the peer's game), and *on
//! snapshots* (the app draws [`Peer::snapshot_view`](crate::Peer::snapshot_view)).
//! A peer goes on snapshots when its session gives up resync
//! ([`PeerEvent::ResyncFailed`], after `resync_max_attempts` failed
//! attempts) or, as a viewer, as soon as the match starts; it reports the
//! switch ([`PeerEvent::SwitchedToSnapshots`]) and asks the authority for
//! a stream (a [`SnapshotAck`](lockstep_protocol::packet::SnapshotAck)
//! naming a new stream id). Meanwhile it keeps playing: it samples and
//! sends its inputs and steps every frame, so its seat stays in the match.
//! Every `retry_after_micros` it tries resync again
//! ([`Session::retry_resync`]); once a state was loaded and the checksums
//! then agree for `resync_stable_frames` frames, the resync held: it ends
//! the stream and returns to lockstep ([`PeerEvent::BackToLockstep`]). A
//! viewer never retries.
//!
//! Invariants: at most one stream at a time, from one authority; parts
//! from any other seat are ignored; each fall-back uses a new stream id,
//! so the authority starts over from the initial state.

use std::collections::VecDeque;

use lockstep_protocol::packet::SnapshotPart;
use lockstep_protocol::{Input, Instant, ResyncFailure, SeatId, Session};
use lockstep_snapshot::interpolate::Pose;
use lockstep_snapshot::{Bounds, QuantBody};

use crate::event::{FallbackReason, PeerEvent};
use crate::snapshot_server::SnapshotSettings;
use crate::snapshot_view::{SnapshotView, ViewStats};

/// A peer on snapshots.
#[derive(Debug, Clone)]
struct OnSnapshots {
    authority: SeatId,
    view: SnapshotView,
    /// When to try resync again (`None`: a retry is under way).
    retry_at: Option<Instant>,
    /// The frame of a state loaded since the last retry.
    healed: Option<u32>,
}

/// The fall-back state of one peer.
#[derive(Debug, Clone)]
pub(crate) struct Fallback {
    settings: SnapshotSettings,
    bounds: Bounds,
    initial: Vec<QuantBody>,
    tick_micros: u64,
    on: Option<OnSnapshots>,
    next_stream: u8,
    /// Switches to snapshots and back, counted.
    pub(crate) switches: u64,
    pub(crate) returns: u64,
    /// What the last fall-back received (kept after it ends).
    last_received: ViewStats,
}

impl Fallback {
    pub(crate) fn new(
        settings: SnapshotSettings,
        bounds: Bounds,
        initial: Vec<QuantBody>,
        tick_micros: u64,
    ) -> Fallback {
        Fallback {
            settings,
            bounds,
            initial,
            tick_micros,
            on: None,
            next_stream: 0,
            switches: 0,
            returns: 0,
            last_received: ViewStats::default(),
        }
    }

    /// Whether this peer is a viewer.
    pub(crate) fn is_viewer(&self) -> bool {
        self.settings.viewer
    }

    /// Whether this peer's own state is worth serving: not while it shows
    /// snapshots because its state drifted (a viewer's state is fine).
    pub(crate) fn serves(&self) -> bool {
        self.on.is_none() || self.settings.viewer
    }

    /// Whether the peer shows snapshots.
    pub(crate) fn is_on(&self) -> bool {
        self.on.is_some()
    }

    /// The seat the snapshots come from, while on snapshots.
    pub(crate) fn authority(&self) -> Option<SeatId> {
        self.on.as_ref().map(|o| o.authority)
    }

    /// What the current (or else the last) fall-back received.
    pub(crate) fn view_stats(&self) -> ViewStats {
        self.on
            .as_ref()
            .map_or(self.last_received, |o| *o.view.stats())
    }

    pub(crate) fn view(&self) -> Option<&SnapshotView> {
        self.on.as_ref().map(|o| &o.view)
    }

    /// Goes on snapshots from `authority`.
    pub(crate) fn enter(
        &mut self,
        now: Instant,
        authority: SeatId,
        reason: FallbackReason,
        events: &mut VecDeque<PeerEvent>,
    ) {
        if self.on.is_some() {
            return;
        }
        let stream = self.next_stream;
        self.next_stream = self.next_stream.wrapping_add(1);
        let view = SnapshotView::new(
            stream,
            self.initial.clone(),
            self.bounds,
            self.tick_micros,
            self.settings.view_mode(),
        );
        let retry_at = (!self.settings.viewer).then(|| now.plus(self.settings.retry_after_micros));
        self.on = Some(OnSnapshots {
            authority,
            view,
            retry_at,
            healed: None,
        });
        self.switches += 1;
        events.push_back(PeerEvent::SwitchedToSnapshots { authority, reason });
    }

    /// Resync failed: go on snapshots, or (on them already) retry later.
    pub(crate) fn on_resync_failed(
        &mut self,
        now: Instant,
        authority: SeatId,
        reason: ResyncFailure,
        events: &mut VecDeque<PeerEvent>,
    ) {
        match &mut self.on {
            Some(on) => {
                on.healed = None;
                if !self.settings.viewer {
                    on.retry_at = Some(now.plus(self.settings.retry_after_micros));
                }
            }
            None => self.enter(now, authority, FallbackReason::ResyncFailed(reason), events),
        }
    }

    /// The authority's state after `frame` was loaded.
    pub(crate) fn on_healed(&mut self, frame: u32) {
        if let Some(on) = &mut self.on {
            on.healed = Some(frame);
        }
    }

    /// A snapshot part from `from`; `reference` is this peer's frame.
    pub(crate) fn on_part(
        &mut self,
        now: Instant,
        from: SeatId,
        part: SnapshotPart,
        reference: u32,
    ) {
        if let Some(on) = self.on.as_mut().filter(|o| o.authority == from) {
            on.view.on_part(now, part, reference);
        }
    }

    /// What to draw at `now` while on snapshots.
    pub(crate) fn poses(&self, now: Instant) -> Option<Vec<Pose>> {
        self.on.as_ref()?.view.poses(now)
    }

    /// Sends the acks due, retries resync when due, and returns to
    /// lockstep once a resync held.
    pub(crate) fn poll<I: Input>(
        &mut self,
        now: Instant,
        session: &mut Session<I>,
        events: &mut VecDeque<PeerEvent>,
    ) {
        let Some(on) = &mut self.on else {
            return;
        };
        let stable = session.config().resync_stable_frames;
        let held = on.healed.is_some_and(|h| {
            !session.resync_failed() && session.newest_clean().is_some_and(|c| c >= h + stable)
        });
        if held && !self.settings.viewer {
            let _ = session.send_snapshot_ack(on.authority, on.view.goodbye());
            let frame = session.newest_clean().unwrap_or(0);
            self.last_received = *on.view.stats();
            self.on = None;
            self.returns += 1;
            events.push_back(PeerEvent::BackToLockstep { frame });
            return;
        }
        if on.retry_at.is_some_and(|t| now >= t) {
            on.retry_at = if session.resync_failed() {
                match session.retry_resync(now, on.authority) {
                    Ok(()) => None,
                    Err(_) => Some(now.plus(self.settings.retry_after_micros)),
                }
            } else {
                // A resync is under way on its own: look again later.
                Some(now.plus(self.settings.retry_after_micros))
            };
        }
        if let Some(ack) = on.view.ack(now) {
            let _ = session.send_snapshot_ack(on.authority, ack);
        }
    }
}

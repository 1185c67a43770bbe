//! [`SnapshotView`]: the receiving end of a snapshot stream, shared by a
//! peer that fell back to snapshots and a spectator watching snapshots.
//! Parts come in, are put together ([`Reassembly`]) and decoded against
//! the acked baselines ([`SnapshotReceiver`]); the snapshots feed an
//! interpolation buffer whose delay follows the measured send interval and
//! jitter ([`ViewClock`]); the acks to send come out.
//!
//! Invariants: only parts of the current stream are taken; a payload that
//! does not decode is dropped and counted, never trusted; an ack is due
//! after every snapshot decoded and at least every [`KEEPALIVE_MICROS`]
//! (the first ones ask for the stream).

use lockstep_protocol::Instant;
use lockstep_protocol::packet::{SnapshotAck, SnapshotPart};
use lockstep_protocol::seq::wire_frame;
use lockstep_protocol::snapshot_parts::Reassembly;
use lockstep_snapshot::interpolate::{Interpolator, Pose, ViewClock, ViewMode};
use lockstep_snapshot::stream::SnapshotReceiver;
use lockstep_snapshot::{Bounds, QuantBody};

/// An ack goes out at least this often (250 ms), asking for the stream
/// until it flows and keeping the sender's slot alive after.
pub const KEEPALIVE_MICROS: u64 = 250_000;
/// Extrapolation past the newest snapshot is capped at this (250 ms).
const MAX_EXTRAPOLATION_MICROS: u64 = 250_000;

/// What a snapshot view received, counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ViewStats {
    /// Parts taken.
    pub parts: u64,
    /// Parts refused (another stream, stale, inconsistent).
    pub parts_refused: u64,
    /// Snapshots decoded.
    pub snapshots: u64,
    /// Payload bytes of the snapshots decoded.
    pub snapshot_bytes: u64,
    /// Payloads that did not decode (a baseline missing, damaged bytes).
    pub undecodable: u64,
}

/// The receiving end of one snapshot stream.
#[derive(Debug, Clone)]
pub struct SnapshotView {
    stream: u8,
    reassembly: Reassembly,
    receiver: SnapshotReceiver,
    buffer: Interpolator,
    clock: ViewClock,
    newest: Option<(u32, Vec<QuantBody>)>,
    ack_due: bool,
    last_ack: Option<Instant>,
    bounds: Bounds,
    stats: ViewStats,
}

impl SnapshotView {
    /// A view of stream `stream`, whose snapshots start from `initial`
    /// quantized with `bounds`, frames `tick_micros` apart, drawn in
    /// `mode` (one that needs velocity only if the bounds carry it).
    pub fn new(
        stream: u8,
        initial: Vec<QuantBody>,
        bounds: Bounds,
        tick_micros: u64,
        mode: ViewMode,
    ) -> SnapshotView {
        SnapshotView {
            stream,
            reassembly: Reassembly::new(stream),
            receiver: SnapshotReceiver::new(initial, bounds),
            buffer: Interpolator::new(bounds, tick_micros, mode, MAX_EXTRAPOLATION_MICROS),
            clock: ViewClock::new(tick_micros, 120),
            newest: None,
            ack_due: true,
            last_ack: None,
            bounds,
            stats: ViewStats::default(),
        }
    }

    /// The stream.
    pub fn stream(&self) -> u8 {
        self.stream
    }

    /// The counters.
    pub fn stats(&self) -> &ViewStats {
        &self.stats
    }

    /// The clock (send interval, jitter, delay).
    pub fn clock(&self) -> &ViewClock {
        &self.clock
    }

    /// How the view is drawn.
    pub fn mode(&self) -> ViewMode {
        self.buffer.mode()
    }

    /// Takes a part received at `now`; `reference` is a frame near the
    /// sender's (the receiver's own frame) to restore its 16-bit frame.
    /// `true` when it completed a snapshot that decoded.
    pub fn on_part(&mut self, now: Instant, part: SnapshotPart, reference: u32) -> bool {
        let done = match self.reassembly.on_part(part, reference) {
            Ok(done) => {
                self.stats.parts += 1;
                done
            }
            Err(_) => {
                self.stats.parts_refused += 1;
                return false;
            }
        };
        let Some((frame, payload)) = done else {
            return false;
        };
        match self.receiver.decode(frame, &payload) {
            Ok(bodies) => {
                self.stats.snapshots += 1;
                self.stats.snapshot_bytes += payload.len() as u64;
                self.clock.on_snapshot(frame, now.as_micros());
                self.buffer.push(frame, bodies.clone());
                if self.newest.as_ref().is_none_or(|(f, _)| frame > *f) {
                    self.newest = Some((frame, bodies));
                }
                self.ack_due = true;
                true
            }
            Err(_) => {
                self.stats.undecodable += 1;
                false
            }
        }
    }

    /// The ack to send at `now`, if one is due.
    pub fn ack(&mut self, now: Instant) -> Option<SnapshotAck> {
        let keepalive = self
            .last_ack
            .is_none_or(|t| now.since(t) >= KEEPALIVE_MICROS);
        if !self.ack_due && !keepalive {
            return None;
        }
        self.ack_due = false;
        self.last_ack = Some(now);
        Some(SnapshotAck {
            stream: self.stream,
            newest: self.receiver.newest().map(wire_frame),
            done: false,
        })
    }

    /// When the next ack is due (a keepalive at the latest).
    pub fn ack_at(&self) -> Instant {
        match self.last_ack {
            Some(t) if !self.ack_due => t.plus(KEEPALIVE_MICROS),
            _ => Instant::ZERO,
        }
    }

    /// The ack that ends the stream.
    pub fn goodbye(&self) -> SnapshotAck {
        SnapshotAck {
            stream: self.stream,
            newest: self.receiver.newest().map(wire_frame),
            done: true,
        }
    }

    /// The newest snapshot decoded: its frame and every body's pose (the
    /// quantized state as it is, not interpolated).
    pub fn newest(&self) -> Option<(u32, Vec<Pose>)> {
        let (frame, bodies) = self.newest.as_ref()?;
        let poses = bodies
            .iter()
            .map(|b| Pose {
                position: b.position(&self.bounds),
                orientation: b.orientation(&self.bounds),
                visible: b.present,
            })
            .collect();
        Some((*frame, poses))
    }

    /// What to draw at `now`: the scene a playout delay behind the newest
    /// snapshots, interpolated (`None` until the first snapshot).
    pub fn poses(&self, now: Instant) -> Option<Vec<Pose>> {
        let t = self.clock.view_time(now.as_micros(), self.buffer.mode())?;
        self.buffer.sample(t)
    }

    /// The scene at `time_micros` on the sender's timeline (frame `f` at
    /// `f` ticks), interpolated from the snapshots held: what
    /// [`SnapshotView::poses`] draws when the clock shows that time (a
    /// measurement compares it with the exact state of a frame).
    pub fn poses_at(&self, time_micros: u64) -> Option<Vec<Pose>> {
        self.buffer.sample(time_micros)
    }
}

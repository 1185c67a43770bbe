//! [`SnapshotServer`]: a peer's service of snapshot streams, to seats that
//! fell back to snapshots and to spectators watching snapshots. Each
//! receiver has its own stream ([`SnapshotSender`]: its acked baselines);
//! every `every` frames the peer's game is quantized once and coded for
//! each receiver, and the payloads are cut into parts for the wire.
//!
//! Invariants: a stream starts when a receiver asks (a [`SnapshotAck`]
//! naming a stream id it does not have yet, or a spectator joining for
//! snapshots) and ends when it says it is done or falls silent for
//! [`SnapshotSettings::timeout_micros`]; a new stream id starts over from
//! the initial state; acks are taken only for frames of the current stream
//! that were sent.

use std::collections::BTreeMap;

use lockstep_protocol::packet::{
    IPV4_UDP_HEADER_BYTES, SNAPSHOT_PART_HEADER_BYTES, SnapshotAck, SnapshotPart,
};
use lockstep_protocol::seal::TAG_BYTES;
use lockstep_protocol::seq::unwrap_frame;
use lockstep_protocol::snapshot_parts::split;
use lockstep_protocol::spectate::SpectatorId;
use lockstep_protocol::{Instant, SeatId};
use lockstep_snapshot::interpolate::ViewMode;
use lockstep_snapshot::stream::{Budget, SnapshotSender};
use lockstep_snapshot::{Bounds, Level, QuantBody};

/// How snapshot streams are sent and shown; a sender and its receivers
/// must agree on `velocity` (the receiver refuses the stream otherwise).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SnapshotSettings {
    /// A snapshot every this many frames (1: 60 Hz at a 60 Hz tick).
    pub every: u32,
    /// Send linear velocities (for Hermite or extrapolated views).
    pub velocity: bool,
    /// The codec ([`Level::Scaled`]: moving bodies' residuals in steps
    /// that follow their speed).
    pub level: Level,
    /// Each stream's rate cap, every header of its datagrams included
    /// (IPv4 and UDP, the packet's, the seal's tag): 256 000 bit/s; `None`
    /// sends every snapshot. Under it, a snapshot the credit cannot pay
    /// for is held back, and the receiver interpolates over the gap (see
    /// [`Budget`]); the match's last snapshot always goes.
    pub budget_bits_per_second: Option<u64>,
    /// How the receiver draws ([`ViewMode::Linear`]; a mode that needs
    /// velocity falls back to linear when `velocity` is off).
    pub mode: ViewMode,
    /// A receiver silent this long is dropped (3 s).
    pub timeout_micros: u64,
    /// A peer that fell back tries resync again this long after falling
    /// back or after a failed retry (10 s).
    pub retry_after_micros: u64,
    /// The peer is a viewer: it shows the authority's snapshots from the
    /// start and never tries to return to its own simulation's view.
    pub viewer: bool,
}

impl Default for SnapshotSettings {
    fn default() -> SnapshotSettings {
        SnapshotSettings {
            every: 1,
            velocity: false,
            level: Level::Scaled,
            budget_bits_per_second: Some(256_000),
            mode: ViewMode::Linear,
            timeout_micros: 3_000_000,
            retry_after_micros: 10_000_000,
            viewer: false,
        }
    }
}

impl SnapshotSettings {
    /// The bounds a stream uses, from the game's: no angular velocity,
    /// and linear velocity only if `velocity`.
    pub fn bounds(&self, game: Bounds) -> Bounds {
        if self.velocity {
            Bounds {
                angular_bits: 0,
                ..game
            }
        } else {
            game.positional()
        }
    }

    /// The budget of one stream of frames `tick_micros` apart: every
    /// snapshot is one datagram's headers beyond its payload (a payload
    /// over [`SNAPSHOT_PART_BYTES`](lockstep_protocol::packet::SNAPSHOT_PART_BYTES)
    /// takes more, which the budget does not
    /// count).
    pub fn budget(&self, tick_micros: u64) -> Option<Budget> {
        let overhead = SNAPSHOT_PART_HEADER_BYTES + TAG_BYTES as u64 + IPV4_UDP_HEADER_BYTES;
        self.budget_bits_per_second
            .map(|rate| Budget::new(rate, overhead * 8, tick_micros))
    }

    /// The mode a receiver draws in.
    pub fn view_mode(&self) -> ViewMode {
        if self.velocity {
            self.mode
        } else {
            ViewMode::Linear
        }
    }
}

/// Who a stream goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Receiver {
    /// A seat that fell back to snapshots.
    Seat(SeatId),
    /// A spectator watching snapshots.
    Spectator(SpectatorId),
}

/// One receiver's stream.
#[derive(Debug, Clone)]
struct Stream {
    id: u8,
    sender: SnapshotSender,
    last_heard: Instant,
}

/// What the server sent, counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServerStats {
    /// Snapshots coded (one per receiver per snapshot frame).
    pub snapshots: u64,
    /// Their payload bytes.
    pub bytes: u64,
    /// Parts handed to the wire.
    pub parts: u64,
    /// Payloads too large for [`MAX_SNAPSHOT_PARTS`](lockstep_protocol::packet::MAX_SNAPSHOT_PARTS) parts (not sent).
    pub too_large: u64,
    /// Snapshots the budget held back (see
    /// [`SnapshotSettings::budget_bits_per_second`]).
    pub held_back: u64,
}

/// A peer's snapshot streams.
pub(crate) struct SnapshotServer<G> {
    settings: SnapshotSettings,
    bounds: Bounds,
    initial: Vec<QuantBody>,
    quantize: fn(&G, &Bounds) -> Vec<QuantBody>,
    tick_micros: u64,
    streams: BTreeMap<Receiver, Stream>,
    out: Vec<(Receiver, SnapshotPart)>,
    stats: ServerStats,
}

impl<G> SnapshotServer<G> {
    /// Streams of `initial`-shaped snapshots quantized with `bounds`, read
    /// from the game by `quantize`, of frames `tick_micros` apart.
    pub(crate) fn new(
        settings: SnapshotSettings,
        bounds: Bounds,
        initial: Vec<QuantBody>,
        quantize: fn(&G, &Bounds) -> Vec<QuantBody>,
        tick_micros: u64,
    ) -> SnapshotServer<G> {
        SnapshotServer {
            settings,
            bounds,
            initial,
            quantize,
            tick_micros,
            streams: BTreeMap::new(),
            out: Vec::new(),
            stats: ServerStats::default(),
        }
    }

    pub(crate) fn stats(&self) -> &ServerStats {
        &self.stats
    }

    /// Starts (or restarts) stream `id` to `to`.
    pub(crate) fn start(&mut self, now: Instant, to: Receiver, id: u8) {
        let sender = SnapshotSender::new(self.initial.clone(), self.bounds, self.settings.level)
            .budget(self.settings.budget(self.tick_micros));
        self.streams.insert(
            to,
            Stream {
                id,
                sender,
                last_heard: now,
            },
        );
    }

    /// Ends the stream to `to`.
    pub(crate) fn stop(&mut self, to: Receiver) {
        self.streams.remove(&to);
    }

    /// Takes `from`'s ack; `reference` is this peer's frame (to restore
    /// the 16-bit frame).
    pub(crate) fn on_ack(
        &mut self,
        now: Instant,
        from: Receiver,
        ack: SnapshotAck,
        reference: u32,
    ) {
        if ack.done {
            self.streams.remove(&from);
            return;
        }
        if self.streams.get(&from).is_none_or(|s| s.id != ack.stream) {
            self.start(now, from, ack.stream);
        }
        let Some(s) = self.streams.get_mut(&from) else {
            return;
        };
        s.last_heard = now;
        if let Some(frame) = ack.newest.and_then(|f| unwrap_frame(f, reference)) {
            s.sender.on_ack(frame);
        }
    }

    /// This peer stepped `frame` (for the first time) and its game is
    /// `game`: on a snapshot frame, code it for every receiver. The match's
    /// `last` frame is always coded, and its parts go twice: no later
    /// snapshot would make up for it if it were lost, and a receiver would
    /// never see the end.
    pub(crate) fn on_frame(&mut self, now: Instant, frame: u32, last: bool, game: &G) {
        let timeout = self.settings.timeout_micros;
        self.streams
            .retain(|_, s| now.since(s.last_heard) <= timeout);
        if self.streams.is_empty() || (frame % self.settings.every.max(1) != 0 && !last) {
            return;
        }
        let bodies = (self.quantize)(game, &self.bounds);
        for (to, s) in &mut self.streams {
            let coded = if last {
                Some(s.sender.encode(frame, bodies.clone()))
            } else {
                s.sender.offer(frame, bodies.clone())
            };
            let Some((payload, sent)) = coded else {
                self.stats.held_back += 1;
                continue;
            };
            self.stats.snapshots += 1;
            self.stats.bytes += sent.bytes;
            match split(s.id, frame, &payload) {
                Some(parts) => {
                    let copies = if last { 2 } else { 1 };
                    self.stats.parts += copies * parts.len() as u64;
                    if last {
                        self.out.extend(parts.iter().map(|p| (*to, p.clone())));
                    }
                    self.out.extend(parts.into_iter().map(|p| (*to, p)));
                }
                None => self.stats.too_large += 1,
            }
        }
    }

    /// The parts to send now.
    pub(crate) fn drain(&mut self) -> Vec<(Receiver, SnapshotPart)> {
        std::mem::take(&mut self.out)
    }
}

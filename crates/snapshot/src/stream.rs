//! A snapshot stream between one sender and one receiver, with acked
//! baselines: [`SnapshotSender`] codes each snapshot against the newest one
//! the receiver acked (and predicts from the acked one before it, and
//! starts from the models that baseline's coding ended with), or against
//! the initial state both sides know; [`SnapshotReceiver`] decodes it
//! against the same snapshots and says which frame to ack. The bytes
//! travel however the app likes (the protocol's snapshot messages cut them
//! into datagrams); this module only needs frame numbers and acks.
//!
//! A payload, bit-packed:
//!
//! ```text
//! level u3 | velocity bool
//!   | has base bool [base age r(1..=255) (8 bits): frames back
//!   |                | has previous bool [previous is the frame before bool
//!   |                |                    [span r(2..=255) (8 bits): frames before the base]]
//!   |                | models bool: the coding starts from the base's models]
//! (zero padding to a byte) | the snapshot coded at `level`
//! ```
//!
//! Invariants: the sender codes only against frames the receiver acked
//! (or the initial state) within [`WINDOW`] frames of the snapshot, and
//! from a baseline's models only within [`MODELS_WINDOW`]` / 2` frames;
//! the receiver keeps every frame it decoded within `WINDOW` (and a
//! margin) of its newest, and the models of those within `MODELS_WINDOW`,
//! so an acked baseline is always there; what the sender keeps of a
//! snapshot is what the receiver decodes (a lossy level's coarser bodies,
//! not the game's), so both predict from the same values; every snapshot
//! has the initial state's body count; a payload naming a baseline or
//! models the receiver lacks is refused with a [`SnapshotError`], never a
//! panic.

use std::collections::VecDeque;

use lockstep_codec::bits::{BitReader, BitStream, BitWriter};

use crate::delta::{self, Decoded};
use crate::error::SnapshotError;
use crate::ladder::{Level, Reference};
use crate::predicted::Models;
use crate::quantize::{Bounds, QuantBody};

/// How far back (frames) a baseline may be.
pub const WINDOW: u32 = 255;
/// How many of its newest frames a receiver keeps the models of; a sender
/// starts from a baseline's models only when the baseline is at most half
/// this old.
pub const MODELS_WINDOW: u32 = 64;
/// Frames a receiver keeps beyond the window, for late payloads.
const MARGIN: u32 = 32;

/// A snapshot either end keeps: its frame, what the receiver decodes of
/// it, the models its coding ended with (dropped once too old to start
/// from) and, at the sender, whether the receiver acked it.
#[derive(Debug, Clone)]
struct Kept {
    frame: u32,
    bodies: Vec<QuantBody>,
    models: Option<Models>,
    acked: bool,
}

impl Kept {
    fn new(frame: u32, decoded: Decoded) -> Kept {
        Kept {
            frame,
            bodies: decoded.bodies,
            models: Some(decoded.models),
            acked: false,
        }
    }
}

/// Drops the models of the snapshots in `held` (in frame order) more than
/// [`MODELS_WINDOW`] frames older than `newest`.
fn forget_models(held: &mut VecDeque<Kept>, newest: u32) {
    for h in held.iter_mut() {
        if newest.saturating_sub(h.frame) <= MODELS_WINDOW {
            break;
        }
        h.models = None;
    }
}

/// A cap on what a stream sends, as a token bucket: every frame adds
/// `bits_per_second` worth of credit (up to `burst_bits`), every snapshot
/// sent takes its payload and its `overhead_bits`. A snapshot offered
/// when the credit left cannot pay for it is not sent
/// ([`SnapshotSender::offer`]): the receiver interpolates over the longer
/// gap, and the next snapshot, coded against the same acked baseline, has
/// the credit of both frames. One that could never fit goes once the
/// credit is full, and overdraws it by at most one burst.
///
/// (Sending every snapshot coarser instead, or leaving some bodies to the
/// receiver's prediction, was measured and dropped: both make the
/// baselines of later snapshots wrong, predictions from wrong baselines
/// miss by more, and under a tight budget the errors grew without bound.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// The stream's average rate, its overhead included.
    pub bits_per_second: u64,
    /// What each snapshot costs beyond its payload: the headers of the
    /// datagram that carries it.
    pub overhead_bits: u64,
    /// The most credit kept: how far one snapshot may go over the average
    /// after quieter ones.
    pub burst_bits: u64,
    /// One frame, in µs (a snapshot `n` frames after the last adds `n`
    /// frames of credit).
    pub tick_micros: u64,
}

impl Budget {
    /// `bits_per_second` at one frame of `tick_micros`, each snapshot
    /// `overhead_bits` beyond its payload, with a tenth of a second of
    /// burst.
    pub fn new(bits_per_second: u64, overhead_bits: u64, tick_micros: u64) -> Budget {
        Budget {
            bits_per_second,
            overhead_bits,
            burst_bits: bits_per_second / 10,
            tick_micros,
        }
    }

    /// The credit `frames` frames add.
    fn credit(&self, frames: u32) -> i64 {
        let bits =
            u128::from(self.bits_per_second) * u128::from(frames) * u128::from(self.tick_micros)
                / 1_000_000;
        bits.min(i64::MAX as u128) as i64
    }

    fn burst(&self) -> i64 {
        self.burst_bits.min(i64::MAX as u64) as i64
    }

    fn overhead(&self) -> i64 {
        self.overhead_bits.min(i64::MAX as u64) as i64
    }
}

/// The sender's side of a stream.
#[derive(Debug, Clone)]
pub struct SnapshotSender {
    bounds: Bounds,
    level: Level,
    carry_models: bool,
    budget: Option<Budget>,
    /// The budget's credit, in bits (negative after a snapshot too large
    /// for it).
    credit: i64,
    /// The newest frame the budget's credit was counted to.
    credited: Option<u32>,
    initial: Vec<QuantBody>,
    /// Snapshots sent, oldest first.
    sent: VecDeque<Kept>,
}

/// What one payload cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sent {
    /// The payload's length in bytes.
    pub bytes: u64,
    /// The baseline's frame (`None`: the initial state).
    pub base: Option<u32>,
}

impl SnapshotSender {
    /// A sender of snapshots of `initial.len()` bodies coded at `level`
    /// with `bounds`; `initial` is the quantized state both sides start
    /// from (the game's state before frame 0).
    pub fn new(initial: Vec<QuantBody>, bounds: Bounds, level: Level) -> SnapshotSender {
        SnapshotSender {
            bounds,
            level,
            carry_models: true,
            budget: None,
            credit: 0,
            credited: None,
            initial,
            sent: VecDeque::new(),
        }
    }

    /// The same sender, starting each snapshot's coding from fresh models
    /// (`false`) instead of its baseline's (`true`, the default).
    pub fn carry_models(mut self, carry: bool) -> SnapshotSender {
        self.carry_models = carry;
        self
    }

    /// The same sender, under `budget` (`None`: no cap, the default); its
    /// credit starts full.
    pub fn budget(mut self, budget: Option<Budget>) -> SnapshotSender {
        self.budget = budget;
        self.credit = budget.map_or(0, |b| b.burst_bits.min(i64::MAX as u64) as i64);
        self
    }

    /// The bounds snapshots are quantized with.
    pub fn bounds(&self) -> &Bounds {
        &self.bounds
    }

    /// The newest frame the receiver acked, if any is still usable.
    pub fn newest_acked(&self) -> Option<u32> {
        self.sent.iter().rev().find(|k| k.acked).map(|k| k.frame)
    }

    /// The snapshot of `frame` as the receiver decodes it, if it was sent
    /// and is still kept (within [`WINDOW`] frames of the newest).
    pub fn snapshot(&self, frame: u32) -> Option<&[QuantBody]> {
        let i = self.sent.binary_search_by_key(&frame, |k| k.frame).ok()?;
        Some(&self.sent[i].bodies)
    }

    /// The receiver holds the snapshot of `frame`.
    pub fn on_ack(&mut self, frame: u32) {
        if let Some(k) = self.sent.iter_mut().find(|k| k.frame == frame) {
            k.acked = true;
        }
    }

    /// Codes `bodies`, the snapshot of `frame` (later than any sent), and
    /// gives the payload, whatever the budget's credit (which it takes).
    pub fn encode(&mut self, frame: u32, bodies: Vec<QuantBody>) -> (Vec<u8>, Sent) {
        self.code(frame, bodies, true)
            .expect("a snapshot that must go is always coded")
    }

    /// Offers `bodies`, the snapshot of `frame` (later than any sent): its
    /// payload, or `None` when the budget's credit cannot pay for it (see
    /// [`Budget`]; without a budget, always the payload).
    pub fn offer(&mut self, frame: u32, bodies: Vec<QuantBody>) -> Option<(Vec<u8>, Sent)> {
        self.code(frame, bodies, false)
    }

    fn code(&mut self, frame: u32, bodies: Vec<QuantBody>, must: bool) -> Option<(Vec<u8>, Sent)> {
        if let Some(budget) = self.budget {
            let elapsed = self.credited.map_or(1, |f| frame.saturating_sub(f));
            self.credited = Some(frame);
            self.credit = self
                .credit
                .saturating_add(budget.credit(elapsed))
                .min(budget.burst());
        }
        // Forget what is too old to be a baseline.
        while self
            .sent
            .front()
            .is_some_and(|k| frame.saturating_sub(k.frame) > WINDOW)
        {
            self.sent.pop_front();
        }
        forget_models(&mut self.sent, frame);
        let mut acked = self
            .sent
            .iter()
            .rev()
            .filter(|k| k.acked && k.frame < frame && k.bodies.len() == bodies.len());
        let base = acked.next();
        let previous = acked.next();
        let mut reference = Reference::base(&self.initial);
        if let Some(b) = base {
            let age = frame - b.frame;
            reference.base = &b.bodies;
            reference.base_age = age;
            reference.previous = previous.map(|p| (p.bodies.as_slice(), b.frame - p.frame));
            reference.models = b.models.as_ref().filter(|_| {
                self.carry_models && self.level.has_models() && age <= MODELS_WINDOW / 2
            });
        }
        let mut payload = header(self.level, &self.bounds, &reference);
        let (body, decoded) = delta::encode(self.level, &reference, &bodies, &self.bounds);
        payload.extend_from_slice(&body);
        if let Some(budget) = self.budget {
            let cost = payload.len() as i64 * 8 + budget.overhead();
            if cost > self.credit && self.credit < budget.burst() && !must {
                return None;
            }
            self.credit = (self.credit - cost).max(-budget.burst());
        }
        let sent = Sent {
            bytes: payload.len() as u64,
            base: base.map(|b| b.frame),
        };
        self.sent.push_back(Kept::new(frame, decoded));
        Some((payload, sent))
    }
}

/// A payload's header for a snapshot coded at `level` against
/// `reference` (see the module's layout).
fn header(level: Level, bounds: &Bounds, reference: &Reference<'_>) -> Vec<u8> {
    let mut w = BitWriter::new();
    let mut id = level.id();
    let _ = w.ranged(&mut id, 0, 7, "level");
    let mut velocity = bounds.velocity_bits > 0;
    let _ = w.bool(&mut velocity);
    let mut has_base = reference.base_age > 0;
    let _ = w.bool(&mut has_base);
    if has_base {
        let mut age = reference.base_age;
        let _ = w.ranged(&mut age, 1, WINDOW, "base age");
        let mut has_previous = reference.previous.is_some();
        let _ = w.bool(&mut has_previous);
        if let Some((_, span)) = reference.previous {
            let mut next = span == 1;
            let _ = w.bool(&mut next);
            if !next {
                let mut span = span;
                let _ = w.ranged(&mut span, 2, WINDOW, "previous span");
            }
        }
        let mut carried = reference.models.is_some();
        let _ = w.bool(&mut carried);
    }
    w.finish()
}

/// The receiver's side of a stream.
#[derive(Debug, Clone)]
pub struct SnapshotReceiver {
    bounds: Bounds,
    initial: Vec<QuantBody>,
    /// Snapshots decoded, by frame.
    held: VecDeque<Kept>,
}

impl SnapshotReceiver {
    /// A receiver of a stream whose initial state is `initial`.
    pub fn new(initial: Vec<QuantBody>, bounds: Bounds) -> SnapshotReceiver {
        SnapshotReceiver {
            bounds,
            initial,
            held: VecDeque::new(),
        }
    }

    /// The bounds snapshots are quantized with.
    pub fn bounds(&self) -> &Bounds {
        &self.bounds
    }

    /// The newest frame decoded.
    pub fn newest(&self) -> Option<u32> {
        self.held.back().map(|h| h.frame)
    }

    fn held(&self, frame: u32) -> Option<&Kept> {
        let i = self.held.binary_search_by_key(&frame, |h| h.frame).ok()?;
        Some(&self.held[i])
    }

    /// The snapshot of `frame`, if held.
    pub fn get(&self, frame: u32) -> Option<&[QuantBody]> {
        self.held(frame).map(|h| h.bodies.as_slice())
    }

    /// Decodes the payload of `frame`; on success the frame is held (ack
    /// it) and its bodies returned. A frame already held is decoded again
    /// only to check it (its bodies are returned as held).
    pub fn decode(&mut self, frame: u32, payload: &[u8]) -> Result<Vec<QuantBody>, SnapshotError> {
        let mut r = BitReader::new(payload);
        let (mut level, mut has_base, mut velocity) = (0u32, false, false);
        r.ranged(&mut level, 0, 7, "level")?;
        r.bool(&mut velocity)?;
        if velocity != (self.bounds.velocity_bits > 0) {
            return Err(SnapshotError::OutOfRange {
                what: "velocity flag (the stream's settings differ)",
            });
        }
        r.bool(&mut has_base)?;
        let level = Level::from_id(level).ok_or(SnapshotError::OutOfRange { what: "level" })?;
        let mut reference = Reference::base(&self.initial);
        if has_base {
            let (mut age, mut has_previous, mut carried) = (0u32, false, false);
            r.ranged(&mut age, 1, WINDOW, "base age")?;
            r.bool(&mut has_previous)?;
            let bf = frame
                .checked_sub(age)
                .ok_or(SnapshotError::OutOfRange { what: "base age" })?;
            let base = self
                .held(bf)
                .ok_or(SnapshotError::MissingBaseline { frame: bf })?;
            reference = Reference {
                base: &base.bodies,
                base_age: age,
                previous: None,
                models: None,
            };
            if has_previous {
                let (mut next, mut span) = (false, 1u32);
                r.bool(&mut next)?;
                if !next {
                    r.ranged(&mut span, 2, WINDOW, "previous span")?;
                }
                let pf = bf.checked_sub(span).ok_or(SnapshotError::OutOfRange {
                    what: "previous span",
                })?;
                let previous = self
                    .get(pf)
                    .ok_or(SnapshotError::MissingBaseline { frame: pf })?;
                reference.previous = Some((previous, span));
            }
            r.bool(&mut carried)?;
            if carried {
                let models = base
                    .models
                    .as_ref()
                    .filter(|_| level.has_models())
                    .ok_or(SnapshotError::MissingBaseline { frame: bf })?;
                reference.models = Some(models);
            }
        }
        r.align()?;
        let at = (r.bit_position() / 8) as usize;
        let decoded = delta::decode(
            level,
            &reference,
            &payload[at.min(payload.len())..],
            &self.bounds,
        )?;
        let bodies = decoded.bodies.clone();
        if self.held(frame).is_none() {
            let i = self.held.partition_point(|h| h.frame < frame);
            self.held.insert(i, Kept::new(frame, decoded));
            let newest = self.newest().unwrap_or(frame);
            while self
                .held
                .front()
                .is_some_and(|h| newest.saturating_sub(h.frame) > WINDOW + MARGIN)
            {
                self.held.pop_front();
            }
            forget_models(&mut self.held, newest);
        }
        Ok(bodies)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lockstep_fx::{Fx, Quat, Vec3};

    fn scene(t: i32) -> Vec<QuantBody> {
        let b = Bounds::cubes().positional();
        (0..50)
            .map(|i| {
                let p = Vec3::new(
                    Fx::from_int(i - 25),
                    Fx::ONE,
                    Fx::from_ratio(i64::from(t * i), 100),
                );
                QuantBody::at(p, Quat::IDENTITY, &b)
            })
            .collect()
    }

    #[test]
    fn acked_baselines_are_used_and_lost_payloads_do_not_matter() {
        let bounds = Bounds::cubes().positional();
        let mut tx = SnapshotSender::new(scene(0), bounds, Level::RangeCoded);
        let mut rx = SnapshotReceiver::new(scene(0), bounds);
        let mut sizes = Vec::new();
        for f in 1..40u32 {
            let (payload, sent) = tx.encode(f, scene(f as i32));
            sizes.push(sent.bytes);
            if f % 4 == 0 {
                continue; // lost
            }
            let got = rx.decode(f, &payload).unwrap();
            assert_eq!(got, scene(f as i32));
            if f % 3 != 0 {
                tx.on_ack(f); // some acks lost too
            }
        }
        assert!(tx.newest_acked().is_some());
        // Coded against acked baselines, frame 39 costs under half of what
        // it costs against the initial state.
        let mut fresh = SnapshotSender::new(scene(0), bounds, Level::RangeCoded);
        let alone = fresh.encode(39, scene(39)).1.bytes;
        assert!(sizes[38] * 2 < alone, "{} vs {alone}", sizes[38]);
    }

    #[test]
    fn a_payload_against_a_baseline_not_held_is_refused() {
        let bounds = Bounds::cubes().positional();
        let mut tx = SnapshotSender::new(scene(0), bounds, Level::Predicted);
        let mut rx = SnapshotReceiver::new(scene(0), bounds);
        let (p1, _) = tx.encode(1, scene(1));
        tx.on_ack(1); // acked, but this receiver never saw it
        let (p2, sent) = tx.encode(2, scene(2));
        assert_eq!(sent.base, Some(1));
        assert_eq!(
            rx.decode(2, &p2),
            Err(SnapshotError::MissingBaseline { frame: 1 })
        );
        assert!(rx.decode(1, &p1).is_ok());
        assert!(rx.decode(2, &p2).is_ok());
    }

    #[test]
    fn a_budget_holds_snapshots_back_and_keeps_the_rate() {
        let bounds = Bounds::cubes().positional();
        // 50 bodies sliding cost about 15 bytes a snapshot: with 8 bytes of
        // overhead each, 11 kbit/s at 60 a second; 6 kbit/s is half that.
        let budget = Budget::new(6_000, 64, 16_667);
        let mut tx = SnapshotSender::new(scene(0), bounds, Level::Scaled).budget(Some(budget));
        let mut rx = SnapshotReceiver::new(scene(0), bounds);
        let (mut sent_bits, mut sent, mut held) = (0u64, 0u32, 0u32);
        for f in 1..=600u32 {
            let Some((payload, _)) = tx.offer(f, scene(f as i32)) else {
                held += 1;
                continue;
            };
            sent += 1;
            sent_bits += payload.len() as u64 * 8 + 64;
            let got = rx.decode(f, &payload).unwrap();
            assert_eq!(got, tx.snapshot(f).unwrap());
            tx.on_ack(f);
        }
        assert!(held > 100 && sent > 100, "{sent} sent, {held} held back");
        // 10 s at 6 kbit/s, and the burst the credit started with.
        assert!(sent_bits <= 60_000 + budget.burst_bits, "{sent_bits}");
        // The last snapshot of a match goes whatever the credit.
        let (payload, _) = tx.encode(601, scene(601));
        assert!(rx.decode(601, &payload).is_ok());
    }
}

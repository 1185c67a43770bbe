//! The state synchronization packet and both ends of it: a
//! [`SyncSender`] picks bodies by priority under a bit budget and codes
//! each against its own baseline — the newest state of that body the
//! receiver acked — and a [`SyncReceiver`] decodes them against the same
//! baselines and acks the packets it got.
//!
//! A packet, bit-packed after whatever header the app puts before it:
//!
//! ```text
//! count (bits_for(slots)) | per body: slot (bits_for(slots - 1))
//!   | baseline age: magnitude class code, 0 = none (coded in full)
//!   | the body against its baseline (the predicted codec's body coding)
//! ```
//!
//! Invariants: a body is coded only against a state of it that the
//! receiver acked, within [`WINDOW`] frames; the receiver keeps every
//! packet it decoded within the window (and a margin), so the baseline is
//! there; a packet naming one it lacks is refused ([`SnapshotError`]),
//! never a panic.

use std::collections::VecDeque;

use lockstep_codec::bits::{BitMeasurer, BitReader, BitStream, BitWriter, bits_for};

use super::priority::{PriorityAccumulator, Weights};
use crate::bodies::Role;
use crate::coder::Packed;
use crate::error::SnapshotError;
use crate::predicted::{Models, Motion, serialize_body};
use crate::quantize::{Bounds, QuantBody};

/// How far back (frames) a body's baseline may be.
pub const WINDOW: u32 = 255;
/// Frames a receiver keeps beyond the window, for late packets.
const MARGIN: u32 = 32;

/// What a receiver tells its sender: the newest packet's frame and which
/// of the 32 before it arrived (bit `i`: frame `newest − 1 − i`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SyncAck {
    /// The newest frame received.
    pub newest: u32,
    /// The 32 frames before it.
    pub mask: u32,
}

/// Settings shared by both ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyncSettings {
    /// The quantization both sides apply ([`Bounds::synced`]).
    pub bounds: Bounds,
    /// The budget (256 000 bit/s).
    pub bits_per_second: u64,
    /// The tick.
    pub tick_micros: u64,
    /// The priority weights.
    pub weights: Weights,
}

impl SyncSettings {
    /// 256 kbit/s at `tick_micros`, quantized with `bounds`.
    pub fn new(bounds: Bounds, tick_micros: u64) -> SyncSettings {
        SyncSettings {
            bounds,
            bits_per_second: 256_000,
            tick_micros,
            weights: Weights::default(),
        }
    }

    /// The bits one packet (one per tick) may hold.
    pub fn packet_bits(&self) -> u64 {
        self.bits_per_second * self.tick_micros / 1_000_000
    }
}

/// One body in a packet: its slot, its baseline's age (0: none) and the
/// baseline.
#[derive(Debug, Clone, Copy)]
struct Entry {
    slot: u32,
    age: u32,
    base: QuantBody,
}

/// Codes one body entry (slot, baseline age, body) of a packet for
/// `slots` bodies.
fn serialize_entry<S: BitStream>(
    s: &mut S,
    models: &mut Models,
    slots: u32,
    entry: &mut Entry,
    body: &mut QuantBody,
    bounds: &Bounds,
) -> Result<(), SnapshotError> {
    s.ranged(&mut entry.slot, 0, slots.saturating_sub(1), "slot")?;
    s.ranged(&mut entry.age, 0, WINDOW, "baseline age")?;
    let base = entry.base;
    let mut costs = [0u64; 4];
    serialize_body(
        &mut Packed { stream: s },
        models,
        &base,
        Motion::NONE,
        body,
        bounds,
        &mut costs,
    )
}

/// The sending end.
#[derive(Debug, Clone)]
pub struct SyncSender {
    settings: SyncSettings,
    slots: u32,
    accumulator: PriorityAccumulator,
    /// Per packet sent: its frame and the bodies it carried.
    sent: VecDeque<(u32, Vec<(u32, QuantBody)>)>,
    /// Per body, the newest state of it the receiver acked.
    baselines: Vec<Option<(u32, QuantBody)>>,
}

impl SyncSender {
    /// A sender of `slots` bodies.
    pub fn new(slots: u32, settings: SyncSettings) -> SyncSender {
        SyncSender {
            settings,
            slots,
            accumulator: PriorityAccumulator::new(slots as usize, settings.weights),
            sent: VecDeque::new(),
            baselines: vec![None; slots as usize],
        }
    }

    /// Body `slot`'s accumulated priority.
    pub fn priority(&self, slot: u32) -> u64 {
        self.accumulator.priority(slot as usize)
    }

    /// The receiver's ack: the packets it names become baselines.
    pub fn on_ack(&mut self, ack: SyncAck) {
        let got = |f: u32| {
            f == ack.newest
                || (f < ack.newest
                    && ack.newest - f <= 32
                    && ack.mask >> (ack.newest - f - 1) & 1 == 1)
        };
        for (frame, bodies) in &self.sent {
            if !got(*frame) {
                continue;
            }
            for (slot, body) in bodies {
                let b = &mut self.baselines[*slot as usize];
                if b.is_none_or(|(f, _)| f < *frame) {
                    *b = Some((*frame, *body));
                }
            }
        }
    }

    /// The packet of `frame` for `bodies` (each slot's quantized state and
    /// role, `None` if removed): priorities grow, the bodies that fit
    /// `packet_bits() − reserved_bits` are coded. Gives the bytes and the
    /// slots carried.
    pub fn write(
        &mut self,
        frame: u32,
        bodies: &[Option<(QuantBody, Role)>],
        reserved_bits: u64,
    ) -> (Vec<u8>, Vec<u32>) {
        let n = self.slots as usize;
        let roles: Vec<Option<(Role, bool)>> = (0..n)
            .map(|i| {
                bodies
                    .get(i)
                    .copied()
                    .flatten()
                    .map(|(q, r)| (r, q.at_rest))
            })
            .collect();
        self.accumulator.accumulate(&roles);
        // Baselines older than the window are no longer usable.
        for b in &mut self.baselines {
            if b.is_some_and(|(f, _)| frame.saturating_sub(f) > WINDOW) {
                *b = None;
            }
        }
        let bounds = self.settings.bounds;
        let count_bits = u64::from(bits_for(u64::from(self.slots)));
        let budget = self
            .settings
            .packet_bits()
            .saturating_sub(reserved_bits)
            .saturating_sub(count_bits + 8);
        let mut models = Models::new();
        let baselines = &self.baselines;
        let slots = self.slots;
        let entry = |slot: usize| -> (Entry, QuantBody) {
            let now = bodies
                .get(slot)
                .copied()
                .flatten()
                .map_or(QuantBody::ABSENT, |b| b.0);
            let (age, base) = match baselines[slot] {
                Some((f, b)) => (frame - f, b),
                None => (0, QuantBody::ABSENT),
            };
            let slot = slot as u32;
            (Entry { slot, age, base }, now)
        };
        // Measured one by one in the order chosen, with the models as
        // they will be when the entry is written.
        let mut trial = models.clone();
        let mut used = 0u64;
        let chosen = self.accumulator.select(budget, |slot| {
            let (mut e, mut body) = entry(slot);
            let mut m = BitMeasurer::new();
            let mut probe = trial.clone();
            let _ = serialize_entry(&mut m, &mut probe, slots, &mut e, &mut body, &bounds);
            // The accumulator takes this entry exactly when it fits what is
            // left: then keep its models for the next measurement (a refused
            // one leaves `trial` as it was).
            if used + m.bits() <= budget {
                used += m.bits();
                trial = probe;
            }
            m.bits()
        });
        let mut w = BitWriter::new();
        let mut count = chosen.len() as u32;
        let _ = w.ranged(&mut count, 0, self.slots, "count");
        let mut carried = Vec::with_capacity(chosen.len());
        for &slot in &chosen {
            let (mut e, mut body) = entry(slot);
            let _ = serialize_entry(&mut w, &mut models, slots, &mut e, &mut body, &bounds);
            carried.push((slot as u32, body));
        }
        self.sent.push_back((frame, carried));
        while self
            .sent
            .front()
            .is_some_and(|(f, _)| frame.saturating_sub(*f) > WINDOW)
        {
            self.sent.pop_front();
        }
        (w.finish(), chosen.iter().map(|&s| s as u32).collect())
    }
}

/// The receiving end.
#[derive(Debug, Clone)]
pub struct SyncReceiver {
    bounds: Bounds,
    slots: u32,
    /// Packets decoded, by frame: the bodies each carried, by slot.
    held: VecDeque<(u32, Vec<(u32, QuantBody)>)>,
}

impl SyncReceiver {
    /// A receiver of `slots` bodies quantized with `bounds`.
    pub fn new(slots: u32, bounds: Bounds) -> SyncReceiver {
        SyncReceiver {
            bounds,
            slots,
            held: VecDeque::new(),
        }
    }

    fn state(&self, frame: u32, slot: u32) -> Option<QuantBody> {
        let i = self.held.binary_search_by_key(&frame, |(f, _)| *f).ok()?;
        let bodies = &self.held[i].1;
        let j = bodies.binary_search_by_key(&slot, |(s, _)| *s).ok()?;
        Some(bodies[j].1)
    }

    /// What to ack now.
    pub fn ack(&self) -> Option<SyncAck> {
        let newest = self.held.back()?.0;
        let mut mask = 0u32;
        for (f, _) in &self.held {
            if *f < newest && newest - f <= 32 {
                mask |= 1 << (newest - f - 1);
            }
        }
        Some(SyncAck { newest, mask })
    }

    /// Decodes the packet of `frame` (after the app's header): the bodies
    /// it carries, by slot, in the order sent.
    pub fn decode(
        &mut self,
        frame: u32,
        bytes: &[u8],
    ) -> Result<Vec<(u32, QuantBody)>, SnapshotError> {
        let mut r = BitReader::new(bytes);
        let mut count = 0u32;
        r.ranged(&mut count, 0, self.slots, "count")?;
        let mut models = Models::new();
        let mut out: Vec<(u32, QuantBody)> = Vec::with_capacity(count as usize);
        for _ in 0..count {
            let (mut slot, mut age) = (0u32, 0u32);
            r.ranged(&mut slot, 0, self.slots.saturating_sub(1), "slot")?;
            r.ranged(&mut age, 0, WINDOW, "baseline age")?;
            let base = if age == 0 {
                QuantBody::ABSENT
            } else {
                let bf = frame.checked_sub(age).ok_or(SnapshotError::OutOfRange {
                    what: "baseline age",
                })?;
                self.state(bf, slot)
                    .ok_or(SnapshotError::MissingBaseline { frame: bf })?
            };
            let mut body = base;
            let mut costs = [0u64; 4];
            serialize_body(
                &mut Packed { stream: &mut r },
                &mut models,
                &base,
                Motion::NONE,
                &mut body,
                &self.bounds,
                &mut costs,
            )?;
            out.push((slot, body));
        }
        r.finish()?;
        if self.held.binary_search_by_key(&frame, |(f, _)| *f).is_err() {
            let mut sorted = out.clone();
            sorted.sort_by_key(|(s, _)| *s);
            sorted.dedup_by_key(|(s, _)| *s);
            let i = self.held.partition_point(|(f, _)| *f < frame);
            self.held.insert(i, (frame, sorted));
            let newest = self.held.back().map_or(frame, |(f, _)| *f);
            while self
                .held
                .front()
                .is_some_and(|(f, _)| newest.saturating_sub(*f) > WINDOW + MARGIN)
            {
                self.held.pop_front();
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lockstep_fx::{Fx, Quat, Vec3};

    fn scene(t: i32, bounds: &Bounds) -> Vec<Option<(QuantBody, Role)>> {
        (0..300)
            .map(|i| {
                let moving = i % 3 == 0;
                let x = Fx::from_ratio(i64::from(i * 100 + if moving { t * 7 } else { 0 }), 100);
                let q = QuantBody::at(Vec3::new(x, Fx::ONE, Fx::ZERO), Quat::IDENTITY, bounds);
                let role = if i == 0 { Role::Player } else { Role::Free };
                Some((
                    QuantBody {
                        at_rest: !moving,
                        ..q
                    },
                    role,
                ))
            })
            .collect()
    }

    #[test]
    fn packets_respect_the_budget_and_round_trip_against_per_body_baselines() {
        let bounds = Bounds::cubes().synced();
        let settings = SyncSettings::new(bounds, 16_667);
        let mut tx = SyncSender::new(300, settings);
        let mut rx = SyncReceiver::new(300, bounds);
        let mut seen = [false; 300];
        for f in 1..120u32 {
            let bodies = scene(f as i32, &bounds);
            let (bytes, carried) = tx.write(f, &bodies, 64);
            assert!(
                bytes.len() as u64 * 8 <= settings.packet_bits() - 64 + 8,
                "{}",
                bytes.len()
            );
            // The player's body is in every packet.
            assert_eq!(carried.first(), Some(&0));
            if f % 5 == 0 {
                continue; // lost
            }
            let got = rx.decode(f, &bytes).unwrap();
            for (slot, body) in &got {
                assert_eq!(Some(*body), bodies[*slot as usize].map(|b| b.0));
                seen[*slot as usize] = true;
            }
            if f % 7 != 0 {
                tx.on_ack(rx.ack().unwrap());
            }
        }
        // Every body got its turn, the resting ones too.
        assert!(seen.iter().all(|s| *s));
    }
}

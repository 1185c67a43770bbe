//! A snapshot stream between one sender and one receiver, with acked
//! baselines: [`SnapshotSender`] codes each snapshot against the newest one
//! the receiver acked (and predicts from the acked one before it), or
//! against the initial state both sides know; [`SnapshotReceiver`] decodes
//! it against the same snapshots and says which frame to ack. The bytes
//! travel however the app likes (the protocol's snapshot messages cut them
//! into datagrams); this module only needs frame numbers and acks.
//!
//! A payload, bit-packed:
//!
//! ```text
//! level u3 | velocity bool | body count u20
//!          | has base bool [base age u8: frames back, 1..=255]
//!          | has previous bool [span u8: frames before the base, 1..=255]
//! (zero padding to a byte) | the snapshot coded at `level`
//! ```
//!
//! Invariants: the sender codes only against frames the receiver acked
//! (or the initial state) within [`WINDOW`] frames of the snapshot; the
//! receiver keeps every frame it decoded within `WINDOW` (and a margin) of
//! its newest, so an acked baseline is always there; a payload naming a
//! baseline the receiver lacks, or with another body count, is refused
//! with a [`SnapshotError`], never a panic.

use std::collections::VecDeque;

use lockstep_codec::bits::{BitReader, BitStream, BitWriter};

use crate::delta;
use crate::error::SnapshotError;
use crate::ladder::{Level, Reference};
use crate::quantize::{Bounds, QuantBody};

/// How far back (frames) a baseline may be.
pub const WINDOW: u32 = 255;
/// Most body slots a stream carries.
pub const MAX_BODIES: u32 = (1 << 20) - 1;
/// Frames a receiver keeps beyond the window, for late payloads.
const MARGIN: u32 = 32;

/// The sender's side of a stream.
#[derive(Debug, Clone)]
pub struct SnapshotSender {
    bounds: Bounds,
    level: Level,
    initial: Vec<QuantBody>,
    /// Snapshots sent, oldest first, and whether each was acked.
    sent: VecDeque<(u32, Vec<QuantBody>, bool)>,
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
            initial,
            sent: VecDeque::new(),
        }
    }

    /// The bounds snapshots are quantized with.
    pub fn bounds(&self) -> &Bounds {
        &self.bounds
    }

    /// The newest frame the receiver acked, if any is still usable.
    pub fn newest_acked(&self) -> Option<u32> {
        self.sent
            .iter()
            .rev()
            .find(|(_, _, a)| *a)
            .map(|(f, _, _)| *f)
    }

    /// The receiver holds the snapshot of `frame`.
    pub fn on_ack(&mut self, frame: u32) {
        if let Some(s) = self.sent.iter_mut().find(|(f, _, _)| *f == frame) {
            s.2 = true;
        }
    }

    /// Codes `bodies`, the snapshot of `frame` (later than any sent), and
    /// gives the payload.
    pub fn encode(&mut self, frame: u32, bodies: Vec<QuantBody>) -> (Vec<u8>, Sent) {
        // Forget what is too old to be a baseline, keeping acked ones.
        while self
            .sent
            .front()
            .is_some_and(|(f, _, _)| frame.saturating_sub(*f) > WINDOW)
        {
            self.sent.pop_front();
        }
        let mut acked = self
            .sent
            .iter()
            .rev()
            .filter(|(f, b, a)| *a && *f < frame && b.len() == bodies.len());
        let base = acked.next();
        let previous = acked.next();
        let mut header = BitWriter::new();
        let mut level = self.level.id();
        let mut count = (bodies.len() as u32).min(MAX_BODIES);
        let _ = header.ranged(&mut level, 0, 7, "level");
        let mut velocity = self.bounds.velocity_bits > 0;
        let _ = header.bool(&mut velocity);
        let _ = header.ranged(&mut count, 0, MAX_BODIES, "body count");
        let mut has_base = base.is_some();
        let _ = header.bool(&mut has_base);
        let mut reference = Reference::base(&self.initial);
        if let Some((bf, bb, _)) = base {
            let mut age = frame - bf;
            let _ = header.ranged(&mut age, 1, WINDOW, "base age");
            reference = Reference {
                base: bb,
                base_age: age,
                previous: None,
            };
            let mut has_previous = previous.is_some();
            let _ = header.bool(&mut has_previous);
            if let Some((pf, pb, _)) = previous {
                let mut span = bf - pf;
                let _ = header.ranged(&mut span, 1, WINDOW, "previous span");
                reference.previous = Some((pb, span));
            }
        }
        let mut payload = header.finish();
        let body = delta::encode(self.level, &reference, &bodies, &self.bounds);
        payload.extend_from_slice(&body);
        let sent = Sent {
            bytes: payload.len() as u64,
            base: base.map(|(f, _, _)| *f),
        };
        self.sent.push_back((frame, bodies, false));
        (payload, sent)
    }
}

/// The receiver's side of a stream.
#[derive(Debug, Clone)]
pub struct SnapshotReceiver {
    bounds: Bounds,
    initial: Vec<QuantBody>,
    /// Snapshots decoded, by frame.
    held: VecDeque<(u32, Vec<QuantBody>)>,
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
        self.held.back().map(|(f, _)| *f)
    }

    /// The snapshot of `frame`, if held.
    pub fn get(&self, frame: u32) -> Option<&[QuantBody]> {
        let i = self.held.binary_search_by_key(&frame, |(f, _)| *f).ok()?;
        Some(&self.held[i].1)
    }

    /// Decodes the payload of `frame`; on success the frame is held (ack
    /// it) and its bodies returned. A frame already held is decoded again
    /// only to check it (its bodies are returned as held).
    pub fn decode(&mut self, frame: u32, payload: &[u8]) -> Result<Vec<QuantBody>, SnapshotError> {
        let mut r = BitReader::new(payload);
        let (mut level, mut count, mut has_base, mut velocity) = (0u32, 0u32, false, false);
        r.ranged(&mut level, 0, 7, "level")?;
        r.bool(&mut velocity)?;
        if velocity != (self.bounds.velocity_bits > 0) {
            return Err(SnapshotError::OutOfRange {
                what: "velocity flag (the stream's settings differ)",
            });
        }
        r.ranged(&mut count, 0, MAX_BODIES, "body count")?;
        r.bool(&mut has_base)?;
        let level = Level::from_id(level).ok_or(SnapshotError::OutOfRange { what: "level" })?;
        let mut reference = Reference::base(&self.initial);
        if has_base {
            let (mut age, mut has_previous) = (0u32, false);
            r.ranged(&mut age, 1, WINDOW, "base age")?;
            r.bool(&mut has_previous)?;
            let bf = frame
                .checked_sub(age)
                .ok_or(SnapshotError::OutOfRange { what: "base age" })?;
            let base = self
                .get(bf)
                .ok_or(SnapshotError::MissingBaseline { frame: bf })?;
            reference = Reference {
                base,
                base_age: age,
                previous: None,
            };
            if has_previous {
                let mut span = 0u32;
                r.ranged(&mut span, 1, WINDOW, "previous span")?;
                let pf = bf.checked_sub(span).ok_or(SnapshotError::OutOfRange {
                    what: "previous span",
                })?;
                let previous = self
                    .get(pf)
                    .ok_or(SnapshotError::MissingBaseline { frame: pf })?;
                reference.previous = Some((previous, span));
            }
        }
        r.align()?;
        let at = (r.bit_position() / 8) as usize;
        if u64::from(count) != reference.base.len() as u64 {
            return Err(SnapshotError::BodyCount {
                found: u64::from(count),
                expected: reference.base.len() as u64,
            });
        }
        let bodies = delta::decode(
            level,
            &reference,
            &payload[at.min(payload.len())..],
            &self.bounds,
        )?;
        if self.get(frame).is_none() {
            let i = self.held.partition_point(|(f, _)| *f < frame);
            self.held.insert(i, (frame, bodies.clone()));
            let newest = self.newest().unwrap_or(frame);
            while self
                .held
                .front()
                .is_some_and(|(f, _)| newest.saturating_sub(*f) > WINDOW + MARGIN)
            {
                self.held.pop_front();
            }
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
}

//! The snapshot codec: every body of a scene, coded against a
//! [`Reference`] the receiver already holds (the newest snapshot it acked,
//! or the initial state both sides know). One `serialize` function per
//! family writes, reads and measures, at the [`Level`]s of the compression
//! ladder, so each technique's saving can be measured on its own. This
//! module holds the entry points and the three classic bit-packed levels;
//! [`crate::predicted`] holds the three that predict from motion.
//!
//! Layout at [`Level::Relative`]:
//!
//! ```text
//! index mode bool | changed bodies: bitset (one bit per body)
//!                 |                 or count + relative gaps (1–8: 1+3 bits,
//!                 |                 9–40: 01+5 bits, else 00 + an index)
//! per changed body: at_rest bool [present bool, if at rest; absent: done]
//!   | position: unchanged bool | [small (|d| ≤ 15: 1 + 3×5) | large (|d| ≤ 511:
//!   |           01 + 3×10) | absolute (00 + bounded codes)]
//!   | orientation: unchanged bool | [same largest and |d| ≤ 15: 1 + 3×5 |
//!   |           0 + largest u2 + 3 × orientation_bits]
//!   | [velocity: 3 × velocity_bits]     if not at rest and velocity_bits > 0
//!   | [angular: 3 × angular_bits]       if not at rest and angular_bits > 0
//! ```
//!
//! Invariants: decoding needs only the reference and the bounds; a body
//! not listed as changed is the baseline's; every read is range-checked,
//! so untrusted bytes give a [`SnapshotError`], never a panic or an
//! allocation beyond the baseline's size.

use lockstep_codec::bits::{BitError, BitMeasurer, BitReader, BitStream, BitWriter, bits_for};

use crate::coder::Packed;
use crate::error::SnapshotError;
use crate::ladder::{Breakdown, Level, Reference};
use crate::predicted::{self, Models};
use crate::quantize::{Bounds, QuantBody, SmallestThree};
use crate::range::{RangeCost, RangeDecoder, RangeEncoder};

/// Bits of a gap's class prefix and payload: 1–8, 9–40, or an index.
const SMALL_GAP: u32 = 8;
const MEDIUM_GAP: u32 = 40;
/// Relative position and orientation steps.
const SMALL_DELTA: i64 = 15;
const LARGE_DELTA: i64 = 511;

/// A snapshot as the receiver decodes it: its bodies, and the models its
/// coding ended with (what the coding of a snapshot against this one can
/// start from; fresh models at the levels without any).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    /// Every body slot.
    pub bodies: Vec<QuantBody>,
    /// The coder's models at the end.
    pub models: Models,
}

/// The models a coding against `reference` at `level` starts from.
fn starting_models(level: Level, reference: &Reference<'_>) -> Models {
    match reference.models {
        Some(m) if level.has_models() => m.clone(),
        _ => Models::new(),
    }
}

/// Encodes `current` against `reference` (same length) at `level`, and
/// gives the bytes and what the receiver will decode from them: the same
/// bodies, except at [`Level::Scaled`], where moving bodies are what its
/// coarser residuals make of them.
pub fn encode(
    level: Level,
    reference: &Reference<'_>,
    current: &[QuantBody],
    bounds: &Bounds,
) -> (Vec<u8>, Decoded) {
    let mut cur = current.to_vec();
    let mut models = starting_models(level, reference);
    let scaled = level == Level::Scaled;
    let bytes = match level {
        Level::RangeCoded | Level::Scaled => {
            let mut e = RangeEncoder::new();
            let _ = predicted::serialize(
                &mut e,
                reference,
                &mut cur,
                bounds,
                None,
                &mut models,
                scaled,
            );
            e.finish()
        }
        Level::Predicted => {
            let mut w = BitWriter::new();
            let _ = predicted::serialize(
                &mut Packed { stream: &mut w },
                reference,
                &mut cur,
                bounds,
                None,
                &mut models,
                false,
            );
            w.finish()
        }
        _ => {
            let mut w = BitWriter::new();
            let _ = serialize(&mut w, level, reference.base, &mut cur, bounds, None);
            w.finish()
        }
    };
    (
        bytes,
        Decoded {
            bodies: cur,
            models,
        },
    )
}

/// Bits `current` takes against `reference` at `level`, and where they go
/// (for the range-coded levels, by the models' `-log2 p`: within a few
/// bytes of [`encode`]'s length).
pub fn measure(
    level: Level,
    reference: &Reference<'_>,
    current: &[QuantBody],
    bounds: &Bounds,
) -> Breakdown {
    let mut cur = current.to_vec();
    let mut models = starting_models(level, reference);
    let mut b = Breakdown::default();
    match level {
        Level::RangeCoded | Level::Scaled => {
            let _ = predicted::serialize(
                &mut RangeCost::default(),
                reference,
                &mut cur,
                bounds,
                Some(&mut b),
                &mut models,
                level == Level::Scaled,
            );
        }
        Level::Predicted => {
            let mut m = BitMeasurer::new();
            let _ = predicted::serialize(
                &mut Packed { stream: &mut m },
                reference,
                &mut cur,
                bounds,
                Some(&mut b),
                &mut models,
                false,
            );
        }
        _ => {
            let mut m = BitMeasurer::new();
            let _ = serialize(
                &mut m,
                level,
                reference.base,
                &mut cur,
                bounds,
                Some(&mut b),
            );
        }
    }
    b
}

/// Decodes a snapshot coded against `reference` at `level`.
pub fn decode(
    level: Level,
    reference: &Reference<'_>,
    bytes: &[u8],
    bounds: &Bounds,
) -> Result<Decoded, SnapshotError> {
    let mut cur = reference.base.to_vec();
    let mut models = starting_models(level, reference);
    match level {
        Level::RangeCoded | Level::Scaled => {
            let mut d = RangeDecoder::new(bytes);
            predicted::serialize(
                &mut d,
                reference,
                &mut cur,
                bounds,
                None,
                &mut models,
                level == Level::Scaled,
            )?;
            d.finish()?;
        }
        Level::Predicted => {
            let mut r = BitReader::new(bytes);
            predicted::serialize(
                &mut Packed { stream: &mut r },
                reference,
                &mut cur,
                bounds,
                None,
                &mut models,
                false,
            )?;
            r.finish()?;
        }
        _ => {
            let mut r = BitReader::new(bytes);
            serialize(&mut r, level, reference.base, &mut cur, bounds, None)?;
            r.finish()?;
        }
    }
    Ok(Decoded {
        bodies: cur,
        models,
    })
}

/// Writes, reads or measures `current` against `baseline` at one of the
/// classic levels ([`Level::Absolute`], [`Level::Delta`],
/// [`Level::Relative`]; the predicted levels are refused). When reading,
/// `current` must start as a copy of `baseline`.
pub fn serialize<S: BitStream>(
    s: &mut S,
    level: Level,
    baseline: &[QuantBody],
    current: &mut [QuantBody],
    bounds: &Bounds,
    breakdown: Option<&mut Breakdown>,
) -> Result<(), BitError> {
    if matches!(level, Level::Predicted | Level::RangeCoded | Level::Scaled) {
        return Err(BitError::OutOfRange {
            bit: s.bit_position(),
            what: "classic level",
        });
    }
    let n = baseline.len().min(current.len());
    let mut parts = Breakdown::default();
    let start = s.bit_position();
    let changed: Vec<usize> = match level {
        Level::Absolute => (0..n).collect(),
        _ => serialize_index(s, baseline, current, n)?,
    };
    parts.index_bits = s.bit_position() - start;
    parts.bodies = changed.len() as u64;
    for i in changed {
        let base = baseline[i];
        let body = &mut current[i];
        let at = s.bit_position();
        s.bool(&mut body.at_rest)?;
        if body.at_rest {
            s.bool(&mut body.present)?;
        } else if S::READING {
            body.present = true;
        }
        parts.other_bits += s.bit_position() - at;
        if !body.present {
            if S::READING {
                *body = QuantBody::ABSENT;
            }
            continue;
        }
        let at = s.bit_position();
        if level == Level::Relative {
            serialize_relative_position(s, &base, body, bounds)?;
        } else {
            serialize_position(s, body, bounds)?;
        }
        parts.position_bits += s.bit_position() - at;
        let at = s.bit_position();
        if level == Level::Relative {
            serialize_relative_orientation(s, &base, body, bounds)?;
        } else {
            serialize_orientation(s, &mut body.orientation, bounds)?;
        }
        parts.orientation_bits += s.bit_position() - at;
        let at = s.bit_position();
        serialize_velocities(s, body, bounds)?;
        parts.other_bits += s.bit_position() - at;
    }
    if let Some(b) = breakdown {
        b.add(&parts);
    }
    Ok(())
}

/// The velocities of a body in full: the codes of zero when at rest (not
/// sent), else the components the bounds send.
fn serialize_velocities<S: BitStream>(
    s: &mut S,
    body: &mut QuantBody,
    bounds: &Bounds,
) -> Result<(), BitError> {
    if body.at_rest {
        if S::READING {
            body.velocity = [bounds.velocity_code(lockstep_fx::Fx::ZERO); 3];
            body.angular = [bounds.angular_code(lockstep_fx::Fx::ZERO); 3];
        }
        return Ok(());
    }
    let vmax = bounds.velocity_max();
    for v in &mut body.velocity {
        if vmax > 0 {
            s.ranged(v, 0, vmax, "velocity")?;
        } else if S::READING {
            *v = 0;
        }
    }
    let wmax = bounds.angular_max();
    for w in &mut body.angular {
        if wmax > 0 {
            s.ranged(w, 0, wmax, "angular velocity")?;
        } else if S::READING {
            *w = 0;
        }
    }
    Ok(())
}

/// Which bodies changed: a bitset, or a count and relative gaps, whichever
/// is shorter (a writer picks; the first bit says which).
fn serialize_index<S: BitStream>(
    s: &mut S,
    baseline: &[QuantBody],
    current: &[QuantBody],
    n: usize,
) -> Result<Vec<usize>, BitError> {
    let index_bits = bits_for(n as u64);
    let mut changed: Vec<usize> = if S::READING {
        Vec::new()
    } else {
        (0..n).filter(|&i| baseline[i] != current[i]).collect()
    };
    let mut relative = !S::READING && gaps_bits(&changed, index_bits) < n as u64;
    s.bool(&mut relative)?;
    if !relative {
        for i in 0..n {
            let mut c = !S::READING && baseline[i] != current[i];
            s.bool(&mut c)?;
            if S::READING && c {
                changed.push(i);
            }
        }
        return Ok(changed);
    }
    let mut count = changed.len() as u32;
    s.ranged(&mut count, 0, n as u32, "changed count")?;
    if S::READING {
        changed = Vec::with_capacity(count as usize);
    }
    let mut prev: i64 = -1;
    for k in 0..count as usize {
        let mut gap = if S::READING {
            0
        } else {
            (changed[k] as i64 - prev) as u32
        };
        let mut small = gap <= SMALL_GAP;
        s.bool(&mut small)?;
        if small {
            s.ranged(&mut gap, 1, SMALL_GAP, "gap")?;
        } else {
            let mut medium = gap <= MEDIUM_GAP;
            s.bool(&mut medium)?;
            if medium {
                s.ranged(&mut gap, SMALL_GAP + 1, MEDIUM_GAP, "gap")?;
            } else {
                let mut v = u64::from(gap);
                s.bits(&mut v, index_bits)?;
                gap = v as u32;
            }
        }
        let i = prev + i64::from(gap);
        if gap == 0 || i >= n as i64 {
            return Err(BitError::OutOfRange {
                bit: s.bit_position(),
                what: "changed body index",
            });
        }
        if S::READING {
            changed.push(i as usize);
        }
        prev = i;
    }
    Ok(changed)
}

/// Bits the relative-gap index coding takes for `changed`.
fn gaps_bits(changed: &[usize], index_bits: u32) -> u64 {
    let mut bits = u64::from(index_bits);
    let mut prev: i64 = -1;
    for &i in changed {
        let gap = (i as i64 - prev) as u32;
        bits += if gap <= SMALL_GAP {
            1 + 3
        } else if gap <= MEDIUM_GAP {
            2 + 5
        } else {
            2 + u64::from(index_bits)
        };
        prev = i as i64;
    }
    bits
}

fn serialize_position<S: BitStream>(
    s: &mut S,
    body: &mut QuantBody,
    bounds: &Bounds,
) -> Result<(), BitError> {
    let max = bounds.position_max();
    for (v, m) in body.position.iter_mut().zip(max) {
        s.ranged(v, 0, m, "position")?;
    }
    Ok(())
}

fn serialize_orientation<S: BitStream>(
    s: &mut S,
    o: &mut SmallestThree,
    bounds: &Bounds,
) -> Result<(), BitError> {
    let mut largest = u32::from(o.largest);
    s.ranged(&mut largest, 0, 3, "largest component")?;
    o.largest = largest as u8;
    let max = bounds.orientation_max();
    for v in &mut o.rest {
        s.ranged(v, 0, max, "orientation")?;
    }
    Ok(())
}

/// Three signed deltas of at most `limit` in magnitude, each as
/// `d + limit` in `bits_for(2·limit)` bits.
fn serialize_deltas<S: BitStream>(
    s: &mut S,
    deltas: &mut [i64; 3],
    limit: i64,
) -> Result<(), BitError> {
    for d in deltas.iter_mut() {
        let mut v = (*d + limit) as u32;
        s.ranged(&mut v, 0, (2 * limit) as u32, "delta")?;
        *d = i64::from(v) - limit;
    }
    Ok(())
}

fn apply(base: &[u32; 3], d: &[i64; 3], max: [u32; 3]) -> Option<[u32; 3]> {
    let mut out = [0u32; 3];
    for k in 0..3 {
        let v = i64::from(base[k]) + d[k];
        if v < 0 || v > i64::from(max[k]) {
            return None;
        }
        out[k] = v as u32;
    }
    Some(out)
}

fn serialize_relative_position<S: BitStream>(
    s: &mut S,
    base: &QuantBody,
    body: &mut QuantBody,
    bounds: &Bounds,
) -> Result<(), BitError> {
    let max = bounds.position_max();
    let mut deltas = [0i64; 3];
    for (k, d) in deltas.iter_mut().enumerate() {
        *d = i64::from(body.position[k]) - i64::from(base.position[k]);
    }
    let largest = deltas.iter().map(|d| d.abs()).max().unwrap_or(0);
    let mut unchanged = largest == 0;
    s.bool(&mut unchanged)?;
    if unchanged {
        body.position = base.position;
        return Ok(());
    }
    let mut small = largest <= SMALL_DELTA;
    s.bool(&mut small)?;
    let limit = if small {
        SMALL_DELTA
    } else {
        let mut large = largest <= LARGE_DELTA;
        s.bool(&mut large)?;
        if !large {
            return serialize_position(s, body, bounds);
        }
        LARGE_DELTA
    };
    serialize_deltas(s, &mut deltas, limit)?;
    body.position = apply(&base.position, &deltas, max).ok_or(BitError::OutOfRange {
        bit: s.bit_position(),
        what: "relative position",
    })?;
    Ok(())
}

fn serialize_relative_orientation<S: BitStream>(
    s: &mut S,
    base: &QuantBody,
    body: &mut QuantBody,
    bounds: &Bounds,
) -> Result<(), BitError> {
    let mut unchanged = body.orientation == base.orientation;
    s.bool(&mut unchanged)?;
    if unchanged {
        body.orientation = base.orientation;
        return Ok(());
    }
    let mut deltas = [0i64; 3];
    for (k, d) in deltas.iter_mut().enumerate() {
        *d = i64::from(body.orientation.rest[k]) - i64::from(base.orientation.rest[k]);
    }
    let mut small = body.orientation.largest == base.orientation.largest
        && deltas.iter().all(|d| d.abs() <= SMALL_DELTA);
    s.bool(&mut small)?;
    if !small {
        return serialize_orientation(s, &mut body.orientation, bounds);
    }
    serialize_deltas(s, &mut deltas, SMALL_DELTA)?;
    let max = bounds.orientation_max();
    body.orientation.largest = base.orientation.largest;
    body.orientation.rest =
        apply(&base.orientation.rest, &deltas, [max; 3]).ok_or(BitError::OutOfRange {
            bit: s.bit_position(),
            what: "relative orientation",
        })?;
    Ok(())
}

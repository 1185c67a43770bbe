//! The predicted codec ([`Level::Predicted`](crate::Level::Predicted),
//! bit-packed; [`Level::RangeCoded`](crate::Level::RangeCoded), the same
//! symbols range-coded; [`Level::Scaled`](crate::Level::Scaled), range-coded
//! and lossy for moving bodies): what the receiver can foresee from the
//! two newest snapshots it acked is not sent again.
//!
//! The method, per snapshot, against a baseline `b` (age `a` frames) and
//! the acked snapshot before it, `b1` (`s` frames before `b`):
//!
//! 1. *Which bodies changed.* A body is *moving* if it is awake in `b` or
//!    changed from `b1` to `b`. Each moving body gets one decision
//!    ("changed?", in a context of whether it moved from `b1` to `b`); the
//!    few resting bodies that changed (woken up) are listed as a count and
//!    gaps among the resting bodies.
//! 2. *Where they are.* Each position component is predicted as
//!    `b + (b − b1) · a / s` (the motion from `b1` to `b` carried forward,
//!    rounded half away from zero, clamped into the box) and the residual
//!    sent; orientation components likewise, when the largest component
//!    is the same in `b1`, `b` and now (otherwise all of it is sent).
//! 3. *How a residual is sent.* Its magnitude class `k` (the bit length of
//!    `|r|`, 0 for zero) is coded as a step up or down from an estimate
//!    `k0`, then its sign and its `k − 1` bits below the leading one. `k0`
//!    is a running average of the classes coded so far in the same group
//!    (horizontal or vertical position, orientation, velocities) and for
//!    the same predicted-motion class, so both sides track it.
//!
//! At [`Level::Scaled`](crate::Level::Scaled) two more things: a changed
//! body that is exactly where it is predicted (position, orientation and
//! the baseline's flags: `predict`) is sent as one "as predicted"
//! decision, and an awake body's residuals are sent in steps that grow
//! with its speed (`step_for`): `r` becomes `round(r / step)`, and the
//! receiver's value, the prediction plus that many steps, is within half
//! a step of the truth — an eighth of how far the body moves in a frame —
//! which is what the sender keeps too, so both go on predicting from the
//! same values. Bodies at rest and bodies moving under about 1 m/s are
//! sent exactly.
//!
//! Every decision has its own adaptive model, selected by the group, the
//! predicted-motion class and where in the binarization it is: the bit
//! packer spends one bit on each, the range coder what its model says. A
//! snapshot's coding starts from fresh [`Models`] or from those its
//! baseline's coding ended with ([`Reference::models`]): the receiver
//! decoded the baseline, so it holds them too, and a lost packet cannot
//! leave the two sides with different models.
//!
//! Invariants: decoding needs only the reference and the bounds; every
//! decoded code is checked against its range, so hostile bytes give a
//! [`SnapshotError`] and never a panic; the work is linear in the bodies.

use lockstep_codec::bits::bits_for;

use crate::coder::{Coder, Prob};
use crate::error::SnapshotError;
use crate::ladder::{Breakdown, Reference};
use crate::quantize::{Bounds, QuantBody, SmallestThree};

/// Predicted-motion classes kept apart by the models.
const MOTION_CLASSES: usize = 12;
/// The largest magnitude class any field can have (24-bit codes).
const MAX_CLASS: usize = 25;

/// Residual groups, each with its own models and estimates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Group {
    Horizontal = 0,
    Vertical = 1,
    Orientation = 2,
    Velocity = 3,
    Angular = 4,
    Count = 5,
}
const GROUPS: usize = 6;

/// The models of one magnitude binarization.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ClassModel {
    same: [Prob; MAX_CLASS],
    up: [Prob; MAX_CLASS],
    stop_up: [Prob; MAX_CLASS],
    stop_down: [Prob; MAX_CLASS],
    sign: Prob,
    /// The first bit below the leading one, per class.
    high: [Prob; MAX_CLASS],
    /// Running estimate of the class, in 1/16.
    estimate: i32,
}

impl ClassModel {
    fn new(estimate: u32) -> ClassModel {
        ClassModel {
            same: [Prob::default(); MAX_CLASS],
            up: [Prob::default(); MAX_CLASS],
            stop_up: [Prob::default(); MAX_CLASS],
            stop_down: [Prob::default(); MAX_CLASS],
            sign: Prob::default(),
            high: [Prob::default(); MAX_CLASS],
            estimate: (estimate as i32) << 4,
        }
    }
}

/// Every adaptive model of the predicted codec: what a coder has learnt
/// of a stream's statistics. A snapshot's coding starts from fresh models,
/// or from the models its baseline's coding ended with (both sides hold
/// those: the receiver decoded the baseline), and ends with models the
/// next snapshot can start from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Models {
    classes: Vec<ClassModel>,
    changed: [Prob; 2],
    as_predicted: [Prob; 2],
    at_rest: [Prob; 2],
    present: Prob,
    position_same: [Prob; 2],
    orientation_same: [Prob; 2],
    same_largest: [Prob; 2],
}

impl Default for Models {
    fn default() -> Models {
        Models::new()
    }
}

impl Models {
    /// Fresh models: every decision equiprobable, every estimate at its
    /// start.
    pub fn new() -> Models {
        let mut classes = Vec::with_capacity(GROUPS * MOTION_CLASSES);
        for g in 0..GROUPS {
            for kv in 0..MOTION_CLASSES {
                // A component predicted to move `kv` bits most often misses
                // by about that much; the counts of the index start small.
                let start = if g == Group::Count as usize { 3 } else { kv };
                classes.push(ClassModel::new(start as u32));
            }
        }
        Models {
            classes,
            changed: [Prob::default(); 2],
            as_predicted: [Prob::default(); 2],
            at_rest: [Prob::default(); 2],
            present: Prob::default(),
            position_same: [Prob::default(); 2],
            orientation_same: [Prob::default(); 2],
            same_largest: [Prob::default(); 2],
        }
    }

    fn class(&mut self, group: Group, motion: u32) -> &mut ClassModel {
        let i = group as usize * MOTION_CLASSES + (motion as usize).min(MOTION_CLASSES - 1);
        &mut self.classes[i]
    }
}

/// `x · num / den` rounded half away from zero (`den > 0`).
fn times_ratio(x: i64, num: i64, den: i64) -> i64 {
    let p = i128::from(x) * i128::from(num);
    let d = i128::from(den.max(1));
    let q = if p >= 0 {
        (p + d / 2) / d
    } else {
        (p - d / 2) / d
    };
    q.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

/// The class of a magnitude: its bit length.
fn class_of(m: u64) -> u32 {
    64 - m.leading_zeros()
}

/// Codes a non-negative `v` below `2^max_class` with model `m`.
fn magnitude<C: Coder>(
    c: &mut C,
    m: &mut ClassModel,
    max_class: u32,
    v: &mut u64,
) -> Result<u32, SnapshotError> {
    let max_class = max_class.min(MAX_CLASS as u32 - 1);
    let k0 = (((m.estimate + 8) >> 4).max(0) as u32).min(max_class);
    let mut k = if C::READING { 0 } else { class_of(*v) };
    if k > max_class {
        return Err(SnapshotError::OutOfRange { what: "magnitude" });
    }
    let mut same = k == k0;
    c.decide(&mut m.same[k0 as usize], &mut same)?;
    if same {
        k = k0;
    } else {
        let mut up = k > k0;
        if k0 == 0 {
            up = true;
        } else if k0 == max_class {
            up = false;
        } else {
            c.decide(&mut m.up[k0 as usize], &mut up)?;
        }
        if up {
            let mut j = k0 + 1;
            loop {
                if j == max_class {
                    k = j;
                    break;
                }
                let mut stop = k == j;
                c.decide(&mut m.stop_up[j as usize], &mut stop)?;
                if stop {
                    k = j;
                    break;
                }
                j += 1;
            }
        } else {
            let mut j = k0 - 1;
            loop {
                if j == 0 {
                    k = 0;
                    break;
                }
                let mut stop = k == j;
                c.decide(&mut m.stop_down[j as usize], &mut stop)?;
                if stop {
                    k = j;
                    break;
                }
                j -= 1;
            }
        }
    }
    m.estimate += ((k as i32) * 16 - m.estimate) >> 2;
    if k == 0 {
        *v = 0;
        return Ok(0);
    }
    let top = 1u64 << (k - 1);
    let mut low = if C::READING { 0 } else { (*v - top) as u32 };
    if k >= 2 {
        // The bit below the leading one leans toward 0 (smaller
        // magnitudes are likelier): modelled; the rest raw.
        let mut high = (low >> (k - 2)) & 1 == 1;
        c.decide(&mut m.high[k as usize], &mut high)?;
        let mut rest = low & ((1 << (k - 2)) - 1);
        c.raw(&mut rest, k - 2)?;
        low = (u32::from(high) << (k - 2)) | rest;
    }
    *v = top | u64::from(low);
    Ok(k)
}

/// Codes a signed residual `r` with `|r| < 2^max_class`.
fn residual<C: Coder>(
    c: &mut C,
    m: &mut ClassModel,
    max_class: u32,
    r: &mut i64,
) -> Result<(), SnapshotError> {
    let mut mag = r.unsigned_abs();
    let k = magnitude(c, m, max_class, &mut mag)?;
    if k == 0 {
        *r = 0;
        return Ok(());
    }
    let mut negative = *r < 0;
    c.decide(&mut m.sign, &mut negative)?;
    let v = mag as i64;
    *r = if negative { -v } else { v };
    Ok(())
}

/// A code's field: its residual group, the class of its predicted move,
/// the prediction, the step its residual is sent in, its largest value
/// and its name for errors.
#[derive(Debug, Clone, Copy)]
struct Field {
    group: Group,
    motion: u32,
    pred: u32,
    step: u32,
    max: u32,
    what: &'static str,
}

/// `r / step` rounded half away from zero, then moved toward zero until
/// `pred + q · step` lies in `0..=max` (`pred` does, so `q = 0` always
/// fits).
fn quantize_residual(r: i64, step: u32, pred: u32, max: u32) -> i64 {
    let s = i64::from(step.max(1));
    let q = if r >= 0 {
        (r + s / 2) / s
    } else {
        -((-r + s / 2) / s)
    };
    let (pred, max) = (i64::from(pred), i64::from(max));
    q.min((max - pred) / s).max(-(pred / s))
}

/// Codes `code` in `0..=field.max` as a residual from `field.pred` in
/// steps of `field.step`; `code` becomes what the receiver decodes (the
/// prediction plus the residual as sent: within half a step of it, or
/// within a step where the box's edge cuts the steps off).
fn predicted_code<C: Coder>(
    c: &mut C,
    models: &mut Models,
    field: Field,
    code: &mut u32,
) -> Result<(), SnapshotError> {
    let Field {
        group,
        motion,
        pred,
        step,
        max,
        what,
    } = field;
    let step = step.max(1);
    let mut q = if C::READING {
        0
    } else {
        quantize_residual(i64::from(*code) - i64::from(pred), step, pred, max)
    };
    residual(
        c,
        models.class(group, motion),
        bits_for(u64::from(max)),
        &mut q,
    )?;
    let v = i64::from(pred) + q * i64::from(step);
    if !(0..=i64::from(max)).contains(&v) {
        return Err(SnapshotError::OutOfRange { what });
    }
    *code = v as u32;
    Ok(())
}

/// A code in `0..=max` in full.
fn absolute<C: Coder>(
    c: &mut C,
    max: u32,
    code: &mut u32,
    what: &'static str,
) -> Result<(), SnapshotError> {
    c.raw(code, bits_for(u64::from(max)))?;
    if *code > max {
        return Err(SnapshotError::OutOfRange { what });
    }
    Ok(())
}

/// The motion carried forward for three components, clamped to `0..=max`,
/// and the class of the largest predicted move.
fn carry(
    base: &[u32; 3],
    before: Option<&[u32; 3]>,
    age: u32,
    span: u32,
    max: [u32; 3],
) -> ([u32; 3], [u32; 3]) {
    let mut pred = *base;
    let mut motion = [0u32; 3];
    if let Some(b1) = before {
        for k in 0..3 {
            let d = times_ratio(
                i64::from(base[k]) - i64::from(b1[k]),
                i64::from(age),
                i64::from(span),
            );
            let p = (i64::from(base[k]) + d).clamp(0, i64::from(max[k]));
            pred[k] = p as u32;
            motion[k] = class_of(d.unsigned_abs());
        }
    }
    (pred, motion)
}

/// Writes, reads or measures `current` against `reference`, with `models`
/// as the coding starts (fresh, or the baseline's) and ends; `scaled`
/// sends moving bodies' residuals in steps that grow with their speed,
/// and a body exactly as predicted in one decision.
/// When reading, `current` must start as a copy of the baseline; when
/// writing, it ends as what the receiver decodes.
pub(crate) fn serialize<C: Coder>(
    c: &mut C,
    reference: &Reference<'_>,
    current: &mut [QuantBody],
    bounds: &Bounds,
    breakdown: Option<&mut Breakdown>,
    models: &mut Models,
    scaled: bool,
) -> Result<(), SnapshotError> {
    let base = reference.base;
    let n = base.len();
    if current.len() != n {
        return Err(SnapshotError::BodyCount {
            found: current.len() as u64,
            expected: n as u64,
        });
    }
    let age = reference.base_age;
    let previous = reference
        .previous
        .filter(|(p, span)| p.len() == n && *span > 0 && age > 0);
    let mut costs = [0u64; 4]; // index, position, orientation, other
    let start = c.cost();

    // 1. Which bodies changed.
    let moved = |i: usize| previous.is_some_and(|(p, _)| p[i] != base[i]);
    let moving = |i: usize| base[i].present && (!base[i].at_rest || moved(i));
    let mut changed = vec![false; n];
    if !C::READING {
        for (i, flag) in changed.iter_mut().enumerate() {
            *flag = base[i] != current[i];
        }
    }
    let resting: Vec<usize> = (0..n).filter(|&i| !moving(i)).collect();
    let mut woken = resting.iter().filter(|&&i| changed[i]).count() as u64;
    let count_bits = bits_for(n as u64);
    magnitude(c, models.class(Group::Count, 0), count_bits, &mut woken)?;
    if woken > resting.len() as u64 {
        return Err(SnapshotError::OutOfRange {
            what: "woken bodies",
        });
    }
    let mut at = 0usize; // position in `resting`
    for _ in 0..woken {
        let mut gap = if C::READING {
            0
        } else {
            let next = (at..resting.len())
                .find(|&k| changed[resting[k]])
                .unwrap_or(resting.len());
            (next - at) as u64
        };
        magnitude(c, models.class(Group::Count, 1), count_bits, &mut gap)?;
        let k = at as u64 + gap;
        if k >= resting.len() as u64 {
            return Err(SnapshotError::OutOfRange { what: "woken body" });
        }
        changed[resting[k as usize]] = true;
        at = k as usize + 1;
    }
    for (i, flag) in changed.iter_mut().enumerate() {
        if moving(i) {
            let ctx = usize::from(!moved(i));
            c.decide(&mut models.changed[ctx], flag)?;
        }
    }
    costs[0] = c.cost() - start;

    // 2. The changed bodies.
    let span = previous.map_or(1, |(_, s)| s);
    for i in (0..n).filter(|&i| changed[i]) {
        let before = previous.map(|(p, _)| p[i]).filter(|p| p.present);
        // With `scaled`, a body that is exactly where it is predicted to
        // be (a sender's budget may leave bodies there) says so alone.
        if let Some(p) = before.filter(|_| scaled && age > 0) {
            let guess = predict(&base[i], Some(&p), age, span, bounds);
            if guess != base[i] {
                let at = c.cost();
                let mut as_predicted = !C::READING && current[i] == guess;
                let ctx = usize::from(moved(i));
                c.decide(&mut models.as_predicted[ctx], &mut as_predicted)?;
                costs[3] += c.cost() - at;
                if as_predicted {
                    current[i] = guess;
                    continue;
                }
            }
        }
        let motion = Motion {
            before,
            age,
            span,
            scaled,
        };
        serialize_body(
            c,
            models,
            &base[i],
            motion,
            &mut current[i],
            bounds,
            &mut costs,
        )?;
    }
    if let Some(out) = breakdown {
        let bits = |x: u64| (x + 128) / 256;
        out.add(&Breakdown {
            bodies: changed.iter().filter(|c| **c).count() as u64,
            index_bits: bits(costs[0]),
            position_bits: bits(costs[1]),
            orientation_bits: bits(costs[2]),
            other_bits: bits(costs[3]),
        });
    }
    Ok(())
}

/// What a body's motion before its baseline was: the acked snapshot
/// before it (if the body was there), and the frames in between.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Motion {
    /// The body in the acked snapshot before the baseline.
    pub before: Option<QuantBody>,
    /// Frames from the baseline to the snapshot coded (0: unknown).
    pub age: u32,
    /// Frames from `before` to the baseline.
    pub span: u32,
    /// Residuals of a moving body are sent in steps that grow with its
    /// speed (see [`step_for`]); `false`: exactly.
    pub scaled: bool,
}

impl Motion {
    /// Nothing to predict from.
    pub const NONE: Motion = Motion {
        before: None,
        age: 0,
        span: 1,
        scaled: false,
    };
}

/// Where the receiver will predict body `b` (the baseline's) to be
/// `age` frames later from its motion since `before` (`span` frames
/// earlier): positions and, while the same component stays largest,
/// orientations carried forward; otherwise the baseline's values. A
/// sender that must leave a moving body out of a snapshot sends this
/// instead, which costs next to nothing (every residual zero).
pub(crate) fn predict(
    b: &QuantBody,
    before: Option<&QuantBody>,
    age: u32,
    span: u32,
    bounds: &Bounds,
) -> QuantBody {
    let mut out = *b;
    let Some(p) = before.filter(|p| p.present && b.present && age > 0 && span > 0) else {
        return out;
    };
    out.position = carry(
        &b.position,
        Some(&p.position),
        age,
        span,
        bounds.position_max(),
    )
    .0;
    if p.orientation.largest == b.orientation.largest {
        let omax = bounds.orientation_max();
        out.orientation.rest = carry(
            &b.orientation.rest,
            Some(&p.orientation.rest),
            age,
            span,
            [omax; 3],
        )
        .0;
    }
    out
}

/// Moves per frame of fewer than `2^FINE_CLASS` codes keep residuals in
/// single steps.
const FINE_CLASS: u32 = 3;

/// The step a moving field's residuals are sent in: 1 while it moves less
/// than 8 codes a frame (about 1 m/s at 512 steps per metre and 60 Hz),
/// then doubling with each doubling of its speed, so that what is lost
/// (half a step) stays within an eighth of how far it moves in a frame.
/// `base` and `before` are the field's codes in the baseline and in the
/// acked snapshot `span` frames before it. (The speed is read off values
/// that were themselves sent in such steps: at an eighth, the error they
/// carry cannot feed back into larger steps; at a half it would, and the
/// steps would grow without bound.)
fn step_for(base: &[u32; 3], before: &[u32; 3], span: u32) -> u32 {
    let fastest = (0..3)
        .map(|k| base[k].abs_diff(before[k]) / span.max(1))
        .max()
        .unwrap_or(0);
    1 << class_of(u64::from(fastest))
        .saturating_sub(FINE_CLASS)
        .min(24)
}

/// Writes, reads or measures one body against its baseline `b` (absent:
/// coded in full), predicting from `motion`; adds what it spent to
/// `costs` (index, position, orientation, other).
pub(crate) fn serialize_body<C: Coder>(
    c: &mut C,
    models: &mut Models,
    b: &QuantBody,
    motion: Motion,
    body: &mut QuantBody,
    bounds: &Bounds,
    costs: &mut [u64; 4],
) -> Result<(), SnapshotError> {
    let b = *b;
    let Motion {
        before,
        age,
        span,
        scaled,
    } = motion;
    let before = before.filter(|_| age > 0 && span > 0);
    let pmax = bounds.position_max();
    let omax = bounds.orientation_max();
    let at = c.cost();
    c.decide(
        &mut models.at_rest[usize::from(b.at_rest)],
        &mut body.at_rest,
    )?;
    if body.at_rest {
        c.decide(&mut models.present, &mut body.present)?;
    } else if C::READING {
        body.present = true;
    }
    costs[3] += c.cost() - at;
    if !body.present {
        if C::READING {
            *body = QuantBody::ABSENT;
        }
        return Ok(());
    }
    let ctx = usize::from(before.is_some_and(|p| p != b));
    // A body at rest is sent exactly; a moving one, with `scaled`, in
    // steps that follow its speed.
    let coarse = scaled && !body.at_rest;
    // Position.
    let at = c.cost();
    if b.present {
        let mut same = body.position == b.position;
        c.decide(&mut models.position_same[ctx], &mut same)?;
        if same {
            body.position = b.position;
        } else {
            let (pred, motion) = carry(
                &b.position,
                before.as_ref().map(|p| &p.position),
                age,
                span,
                pmax,
            );
            let step = match before {
                Some(p) if coarse => step_for(&b.position, &p.position, span),
                _ => 1,
            };
            for k in 0..3 {
                let group = if k == 1 {
                    Group::Vertical
                } else {
                    Group::Horizontal
                };
                predicted_code(
                    c,
                    models,
                    Field {
                        group,
                        motion: motion[k],
                        pred: pred[k],
                        step,
                        max: pmax[k],
                        what: "position",
                    },
                    &mut body.position[k],
                )?;
            }
        }
    } else {
        for (code, max) in body.position.iter_mut().zip(pmax) {
            absolute(c, max, code, "position")?;
        }
    }
    costs[1] += c.cost() - at;
    // Orientation.
    let at = c.cost();
    let mut same = b.present && body.orientation == b.orientation;
    if b.present {
        c.decide(&mut models.orientation_same[ctx], &mut same)?;
    }
    if same {
        body.orientation = b.orientation;
    } else {
        let mut same_largest = b.present && body.orientation.largest == b.orientation.largest;
        if b.present {
            c.decide(&mut models.same_largest[ctx], &mut same_largest)?;
        }
        // How fast the components turned, while the same one was largest.
        let turned = before
            .filter(|p| p.orientation.largest == b.orientation.largest)
            .map(|p| p.orientation.rest);
        let step = match turned {
            Some(p) if coarse => step_for(&b.orientation.rest, &p, span),
            _ => 1,
        };
        if same_largest {
            let (pred, motion) = carry(&b.orientation.rest, turned.as_ref(), age, span, [omax; 3]);
            body.orientation.largest = b.orientation.largest;
            for k in 0..3 {
                predicted_code(
                    c,
                    models,
                    Field {
                        group: Group::Orientation,
                        motion: motion[k],
                        pred: pred[k],
                        step,
                        max: omax,
                        what: "orientation",
                    },
                    &mut body.orientation.rest[k],
                )?;
            }
        } else if b.present {
            // Another component took over: predict the baseline's
            // rotation written with the new largest one.
            let mut other = u32::from(body.orientation.largest);
            other -= u32::from(other > u32::from(b.orientation.largest));
            c.raw(&mut other, 2)?;
            if other > 2 {
                return Err(SnapshotError::OutOfRange {
                    what: "largest component",
                });
            }
            let largest = other + u32::from(other >= u32::from(b.orientation.largest));
            body.orientation.largest = largest as u8;
            let pred =
                SmallestThree::with_largest(b.orientation.to_quat(bounds), largest as u8, bounds);
            for k in 0..3 {
                predicted_code(
                    c,
                    models,
                    Field {
                        group: Group::Orientation,
                        motion: MOTION_CLASSES as u32 - 1,
                        pred: pred.rest[k],
                        step,
                        max: omax,
                        what: "orientation",
                    },
                    &mut body.orientation.rest[k],
                )?;
            }
        } else {
            let mut largest = u32::from(body.orientation.largest);
            c.raw(&mut largest, 2)?;
            body.orientation.largest = largest as u8;
            for k in 0..3 {
                absolute(c, omax, &mut body.orientation.rest[k], "orientation")?;
            }
        }
    }
    costs[2] += c.cost() - at;
    // Velocities, against the baseline's.
    let at = c.cost();
    if body.at_rest {
        if C::READING {
            body.velocity = [bounds.velocity_code(lockstep_fx::Fx::ZERO); 3];
            body.angular = [bounds.angular_code(lockstep_fx::Fx::ZERO); 3];
        }
    } else {
        for (group, max, codes, was) in [
            (
                Group::Velocity,
                bounds.velocity_max(),
                &mut body.velocity,
                b.velocity,
            ),
            (
                Group::Angular,
                bounds.angular_max(),
                &mut body.angular,
                b.angular,
            ),
        ] {
            for k in 0..3 {
                if max == 0 {
                    if C::READING {
                        codes[k] = 0;
                    }
                    continue;
                }
                let pred = was[k].min(max);
                predicted_code(
                    c,
                    models,
                    Field {
                        group,
                        motion: 0,
                        pred,
                        step: 1,
                        max,
                        what: "velocity",
                    },
                    &mut codes[k],
                )?;
            }
        }
    }
    costs[3] += c.cost() - at;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coder::Packed;
    use lockstep_codec::bits::{BitReader, BitWriter};

    #[test]
    fn magnitudes_round_trip() {
        let values: Vec<u64> = (0..3000u64).map(|i| (i * 7919) % (1 << (i % 18))).collect();
        let mut w = BitWriter::new();
        let mut m = ClassModel::new(3);
        for v in &values {
            magnitude(&mut Packed { stream: &mut w }, &mut m, 18, &mut v.clone()).unwrap();
        }
        let bytes = w.finish();
        let mut r = BitReader::new(&bytes);
        let mut m = ClassModel::new(3);
        for v in &values {
            let mut got = 0;
            magnitude(&mut Packed { stream: &mut r }, &mut m, 18, &mut got).unwrap();
            assert_eq!(got, *v);
        }
    }
}

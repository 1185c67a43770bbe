//! Quantization of one rigid body's visible state: bounded positions (a
//! fixed number of steps per metre inside the scene's box), smallest-three
//! orientations, linear and angular velocity in fixed steps (or not at all),
//! an at-rest bit, and whether the body exists.
//!
//! Invariants: everything is integer arithmetic on `Fx` (the same bits on
//! every machine); quantizing clamps into range instead of wrapping, so any
//! body gets a valid code; dequantizing a code and quantizing it again gives
//! the same code (the quantized state is a fixed point), which is what lets
//! sender and receiver keep identical baselines.

use lockstep_fx::{Fx, Quat, Vec3};

use crate::body::BodyState;

/// 1/√2 in `Fx`: the largest a smallest-three component can be.
const FRAC_1_SQRT2: Fx = Fx::lit("0.7071067811865476");

/// The scene's box and resolutions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    /// The lowest corner of the box positions are clamped into.
    pub min: Vec3,
    /// The highest corner.
    pub max: Vec3,
    /// Position steps per metre (512: under a millimetre of error).
    pub steps_per_metre: u32,
    /// Bits per smallest-three component (9).
    pub orientation_bits: u32,
    /// Linear velocity is clamped to ±this many m/s (32).
    pub max_speed: u32,
    /// Bits per velocity component (11; 0: velocity is not part of the
    /// snapshot, as for a viewer that only interpolates).
    pub velocity_bits: u32,
    /// Angular velocity is clamped to ±this many rad/s (32).
    pub max_spin: u32,
    /// Bits per angular velocity component (0: not sent, as for a viewer;
    /// state synchronization sends it).
    pub angular_bits: u32,
}

impl Bounds {
    /// The cube demo's field and the space its cubes are blown into: x and
    /// z in ±64 m, y from −1 to 31 m, 512 steps per metre (17 + 15 + 17
    /// bits), 9-bit orientation components, 11-bit velocity components
    /// within ±32 m/s.
    pub fn cubes() -> Bounds {
        Bounds {
            min: Vec3::new(Fx::from_int(-64), Fx::from_int(-1), Fx::from_int(-64)),
            max: Vec3::new(Fx::from_int(64), Fx::from_int(31), Fx::from_int(64)),
            steps_per_metre: 512,
            orientation_bits: 9,
            max_speed: 32,
            velocity_bits: 11,
            max_spin: 32,
            angular_bits: 0,
        }
    }

    /// The same box for state synchronization, where both sides simulate
    /// from the quantized state: 4 096 steps per metre, 15-bit orientation
    /// components, 11-bit linear and angular velocity components.
    pub fn synced(self) -> Bounds {
        Bounds {
            steps_per_metre: 4096,
            orientation_bits: 15,
            velocity_bits: 11,
            angular_bits: 11,
            ..self
        }
    }

    /// The same box for a viewer that only interpolates: no velocities.
    pub fn positional(self) -> Bounds {
        Bounds {
            velocity_bits: 0,
            angular_bits: 0,
            ..self
        }
    }

    /// The largest position code on each axis.
    pub fn position_max(&self) -> [u32; 3] {
        let span = |lo: Fx, hi: Fx| {
            let metres = hi.saturating_sub(lo);
            ((metres.to_bits().max(0) as u128 * u128::from(self.steps_per_metre)) >> 32) as u32
        };
        [
            span(self.min.x, self.max.x),
            span(self.min.y, self.max.y),
            span(self.min.z, self.max.z),
        ]
    }

    /// The largest orientation component code.
    pub fn orientation_max(&self) -> u32 {
        (1u32 << self.orientation_bits.clamp(2, 16)) - 1
    }

    /// The largest velocity component code (0 when velocity is not sent).
    pub fn velocity_max(&self) -> u32 {
        if self.velocity_bits == 0 {
            return 0;
        }
        (1u32 << self.velocity_bits.clamp(2, 24)) - 1
    }

    /// The code of a velocity component: `round(v / step) + half`, with
    /// `half = velocity_max / 2` steps of `max_speed / half` on each side, so
    /// zero is exact.
    pub fn velocity_code(&self, v: Fx) -> u32 {
        let half = self.velocity_max() / 2;
        symmetric_code(v, Fx::from_int(self.max_speed.min(1 << 30) as i32), half)
    }

    /// The velocity component of a code.
    pub fn velocity_of(&self, code: u32) -> Fx {
        let half = self.velocity_max() / 2;
        symmetric_value(code, Fx::from_int(self.max_speed.min(1 << 30) as i32), half)
    }

    /// The largest angular velocity component code (0 when not sent).
    pub fn angular_max(&self) -> u32 {
        if self.angular_bits == 0 {
            return 0;
        }
        (1u32 << self.angular_bits.clamp(2, 24)) - 1
    }

    /// The code of an angular velocity component (zero exact).
    pub fn angular_code(&self, w: Fx) -> u32 {
        let half = self.angular_max() / 2;
        symmetric_code(w, Fx::from_int(self.max_spin.min(1 << 30) as i32), half)
    }

    /// The angular velocity component of a code.
    pub fn angular_of(&self, code: u32) -> Fx {
        let half = self.angular_max() / 2;
        symmetric_value(code, Fx::from_int(self.max_spin.min(1 << 30) as i32), half)
    }
}

/// `round(v · half / range) + half`, clamped to `0..=2·half`.
fn symmetric_code(v: Fx, range: Fx, half: u32) -> u32 {
    if half == 0 || range.to_bits() <= 0 {
        return 0;
    }
    let num = i128::from(v.to_bits()) * i128::from(half);
    let den = i128::from(range.to_bits());
    // Round half away from zero.
    let q = if num >= 0 {
        (num + den / 2) / den
    } else {
        (num - den / 2) / den
    };
    (q + i128::from(half)).clamp(0, 2 * i128::from(half)) as u32
}

/// The value of a [`symmetric_code`].
fn symmetric_value(code: u32, range: Fx, half: u32) -> Fx {
    if half == 0 {
        return Fx::ZERO;
    }
    let steps = i64::from(code.min(2 * half)) - i64::from(half);
    Fx::from_bits((i128::from(range.to_bits()) * i128::from(steps) / i128::from(half)) as i64)
}

/// A quaternion as its three smallest components and the index of the
/// largest, which is made non-negative (q and −q are the same rotation) and
/// rebuilt from the unit length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct SmallestThree {
    /// Which component was largest: 0 = w, 1 = x, 2 = y, 3 = z.
    pub largest: u8,
    /// The other three, in w-x-y-z order, each mapped from ±1/√2 onto
    /// `0..=2·(orientation_max / 2)` with zero at the middle code.
    pub rest: [u32; 3],
}

/// One body's quantized state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct QuantBody {
    /// Position codes, steps from the box's lowest corner.
    pub position: [u32; 3],
    /// Orientation.
    pub orientation: SmallestThree,
    /// Linear velocity codes (the code of 0 m/s when at rest; 0 when the
    /// bounds send no velocity).
    pub velocity: [u32; 3],
    /// Angular velocity codes (likewise).
    pub angular: [u32; 3],
    /// Asleep: not moving, velocities not sent.
    pub at_rest: bool,
    /// The body exists (a removed body's slot is [`QuantBody::ABSENT`]).
    pub present: bool,
}

/// Rounds `x · num / 2^32` to the nearest integer, for `x ≥ 0`.
fn scale_round(x: i64, num: u64) -> u64 {
    ((x.max(0) as u128 * u128::from(num) + (1u128 << 31)) >> 32) as u64
}

fn quantize_range(v: Fx, lo: Fx, steps_per_unit: u64, max: u32) -> u32 {
    let off = v.saturating_sub(lo).to_bits();
    scale_round(off, steps_per_unit).min(u64::from(max)) as u32
}

fn dequantize_range(code: u32, lo: Fx, steps_per_unit: u64) -> Fx {
    lo.saturating_add(Fx::from_ratio(i64::from(code), steps_per_unit as i64))
}

impl SmallestThree {
    /// Encodes `q` (normalized first) with `bounds.orientation_bits` bits per
    /// component.
    pub fn from_quat(q: Quat, bounds: &Bounds) -> SmallestThree {
        let q = q.normalize();
        let c = [q.w, q.x, q.y, q.z];
        let mut largest = 0;
        for i in 1..4 {
            if c[i].abs() > c[largest].abs() {
                largest = i;
            }
        }
        SmallestThree::with_largest(q, largest as u8, bounds)
    }

    /// Codes `q` (unit length) as if component `largest` (0 = w … 3 = z)
    /// were the largest: the others are clamped into ±1/√2. Exact for the
    /// true largest; for a close second, a prediction of the code the
    /// rotation has once that component takes over.
    pub fn with_largest(q: Quat, largest: u8, bounds: &Bounds) -> SmallestThree {
        let c = [q.w, q.x, q.y, q.z];
        let largest = usize::from(largest.min(3));
        let flip = c[largest].is_negative();
        let max = bounds.orientation_max();
        let mut rest = [0u32; 3];
        let mut k = 0;
        for (i, v) in c.iter().enumerate() {
            if i == largest {
                continue;
            }
            let v = if flip { v.saturating_neg() } else { *v };
            rest[k] = symmetric_code(v, FRAC_1_SQRT2, max / 2);
            k += 1;
        }
        SmallestThree {
            largest: largest as u8,
            rest,
        }
    }

    /// The quaternion this code stands for.
    pub fn to_quat(self, bounds: &Bounds) -> Quat {
        let half = bounds.orientation_max() / 2;
        let comp = |code: u32| symmetric_value(code, FRAC_1_SQRT2, half);
        let small = [comp(self.rest[0]), comp(self.rest[1]), comp(self.rest[2])];
        let sum = small
            .iter()
            .fold(Fx::ZERO, |a, v| a.saturating_add(v.saturating_mul(*v)));
        let big = Fx::ONE.saturating_sub(sum).max(Fx::ZERO).sqrt();
        let mut c = [Fx::ZERO; 4];
        let mut k = 0;
        for (i, slot) in c.iter_mut().enumerate() {
            if i == usize::from(self.largest.min(3)) {
                *slot = big;
            } else {
                *slot = small[k];
                k += 1;
            }
        }
        Quat {
            w: c[0],
            x: c[1],
            y: c[2],
            z: c[3],
        }
        .normalize()
    }
}

impl QuantBody {
    /// The slot of a removed body: at rest, not present, every code 0.
    pub const ABSENT: QuantBody = QuantBody {
        position: [0; 3],
        orientation: SmallestThree {
            largest: 0,
            rest: [0; 3],
        },
        velocity: [0; 3],
        angular: [0; 3],
        at_rest: true,
        present: false,
    };

    /// Quantizes a body's state. A body at rest gets the codes of zero
    /// velocities.
    pub fn new(state: &BodyState, bounds: &Bounds) -> QuantBody {
        let pmax = bounds.position_max();
        let spm = u64::from(bounds.steps_per_metre);
        let (position, v, w) = (
            state.position,
            state.linear_velocity,
            state.angular_velocity,
        );
        let vel = |v: Fx| bounds.velocity_code(v);
        let ang = |w: Fx| bounds.angular_code(w);
        let (zv, zw) = (vel(Fx::ZERO), ang(Fx::ZERO));
        QuantBody {
            position: [
                quantize_range(position.x, bounds.min.x, spm, pmax[0]),
                quantize_range(position.y, bounds.min.y, spm, pmax[1]),
                quantize_range(position.z, bounds.min.z, spm, pmax[2]),
            ],
            orientation: SmallestThree::from_quat(state.orientation, bounds),
            velocity: if state.at_rest {
                [zv; 3]
            } else {
                [vel(v.x), vel(v.y), vel(v.z)]
            },
            angular: if state.at_rest {
                [zw; 3]
            } else {
                [ang(w.x), ang(w.y), ang(w.z)]
            },
            at_rest: state.at_rest,
            present: true,
        }
    }

    /// A body at `position` with `orientation`, at rest (tests, examples).
    pub fn at(position: Vec3, orientation: Quat, bounds: &Bounds) -> QuantBody {
        QuantBody::new(
            &BodyState {
                position,
                orientation,
                linear_velocity: Vec3::ZERO,
                angular_velocity: Vec3::ZERO,
                at_rest: true,
            },
            bounds,
        )
    }

    /// The state this code stands for.
    pub fn state(&self, bounds: &Bounds) -> BodyState {
        BodyState {
            position: self.position(bounds),
            orientation: self.orientation(bounds),
            linear_velocity: self.velocity(bounds),
            angular_velocity: self.angular_velocity(bounds),
            at_rest: self.at_rest,
        }
    }

    /// The position this code stands for.
    pub fn position(&self, bounds: &Bounds) -> Vec3 {
        let spm = u64::from(bounds.steps_per_metre);
        Vec3::new(
            dequantize_range(self.position[0], bounds.min.x, spm),
            dequantize_range(self.position[1], bounds.min.y, spm),
            dequantize_range(self.position[2], bounds.min.z, spm),
        )
    }

    /// The orientation this code stands for.
    pub fn orientation(&self, bounds: &Bounds) -> Quat {
        self.orientation.to_quat(bounds)
    }

    /// The linear velocity this code stands for.
    pub fn velocity(&self, bounds: &Bounds) -> Vec3 {
        Vec3::new(
            bounds.velocity_of(self.velocity[0]),
            bounds.velocity_of(self.velocity[1]),
            bounds.velocity_of(self.velocity[2]),
        )
    }

    /// The angular velocity this code stands for.
    pub fn angular_velocity(&self, bounds: &Bounds) -> Vec3 {
        Vec3::new(
            bounds.angular_of(self.angular[0]),
            bounds.angular_of(self.angular[1]),
            bounds.angular_of(self.angular[2]),
        )
    }
}

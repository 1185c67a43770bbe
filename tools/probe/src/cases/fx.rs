//! The `lockstep-fx` battery: a large seeded set of inputs pushed through
//! every `fx` operation, with every result written to the hasher.
//!
//! Inputs come from [`Rng`] (itself under test) in three magnitudes — any bit
//! pattern, values within ±2^15 and within ±4 — so saturation, the fast and
//! slow division paths, range reduction and the small-angle paths all run.
//! Each function is one case; changing an input set changes its digest, which
//! is fine as long as all builds agree.

use lockstep_fx::{Canonical, Fx, Mat3, Quat, Rng, StateReader, StateWriter, Vec3};

use super::Writer;

/// Samples per case: enough to reach the edge paths, small enough for qemu.
const SAMPLES: u32 = 100_000;

/// An input of one of three magnitudes, chosen by the generator.
fn any_fx(rng: &mut Rng) -> Fx {
    let bits = rng.next_u64() as i64;
    Fx::from_bits(match rng.below(3) {
        0 => bits,
        1 => bits >> 16,
        _ => bits >> 29,
    })
}

/// A vector of moderate size (within ±2^15 per component).
fn any_vec3(rng: &mut Rng) -> Vec3 {
    let mut c = || Fx::from_bits((rng.next_u64() as i64) >> 16);
    Vec3::new(c(), c(), c())
}

/// A unit quaternion from a random axis and angle.
fn any_rotation(rng: &mut Rng) -> Quat {
    let axis = any_vec3(rng).normalize_or_zero();
    let angle = Fx::from_bits((rng.next_u64() as i64) >> 29);
    Quat::from_axis_angle(axis, angle)
}

/// Writes an optional value as a presence byte and the value.
fn write_opt(w: &mut Writer, v: Option<Fx>) {
    w.write_bool(v.is_some());
    w.write_fx(v.unwrap_or(Fx::ZERO));
}

/// Bit patterns at the edges of the scalar operations: the range ends, the
/// 64-bit division fast path's bounds (±2^31 raw), one LSB, one and a half.
const EDGES: [i64; 14] = [
    i64::MIN,
    i64::MIN + 1,
    i64::MAX,
    -(1 << 31) - 1,
    -(1 << 31),
    (1 << 31) - 1,
    1 << 31,
    -1,
    0,
    1,
    2,
    1 << 32,
    -(1 << 32),
    3 << 31,
];

/// Scalar arithmetic, rounding, conversions and all three overflow policies,
/// on every pair of edge values and then on seeded random pairs.
pub fn scalar(w: &mut Writer) {
    let mut inputs = Rng::new(1, 1);
    let edge_pairs = EDGES.iter().flat_map(|a| {
        EDGES
            .iter()
            .map(move |b| (Fx::from_bits(*a), Fx::from_bits(*b)))
    });
    let random_pairs = (0..SAMPLES).map(|_| (any_fx(&mut inputs), any_fx(&mut inputs)));
    // A second stream for the per-pair extras (shifts, integer factors).
    let mut rng = Rng::new(1, 2);
    for (a, b) in edge_pairs.chain(random_pairs) {
        let n = rng.next_u32() as i32 as i64;
        for v in [a + b, a - b, a * b, a / b, -a, a.abs(), a.signum()] {
            w.write_fx(v);
        }
        for v in [
            a.floor(),
            a.ceil(),
            a.round(),
            a.fract(),
            a.min(b),
            a.max(b),
        ] {
            w.write_fx(v);
        }
        w.write_i32(a.to_int_floor());
        w.write_i32(a.to_int_round());
        w.write_fx(a.mul_int(n));
        w.write_fx(a.div_int(n >> (rng.below(32))));
        w.write_fx(a.scale_pow2(rng.range_i32(-70, 70)));
        w.write_fx(a.wrapping_add(b));
        w.write_fx(a.wrapping_sub(b));
        write_opt(w, a.checked_add(b));
        write_opt(w, a.checked_sub(b));
        write_opt(w, a.checked_mul(b));
        write_opt(w, a.checked_div(b));
        w.write_fx(a.mul_add_mul(b, b, a));
        w.write_fx(Fx::from_ratio(a.to_bits(), n));
        w.write_fx(a.clamp(-b.abs(), b.abs()));
    }
}

/// Square roots across the whole positive range, and negatives.
pub fn sqrt(w: &mut Writer) {
    let mut rng = Rng::new(2, 2);
    for _ in 0..SAMPLES {
        let a = any_fx(&mut rng);
        w.write_fx(a.sqrt());
        w.write_fx(a.abs().sqrt());
        write_opt(w, a.checked_sqrt());
    }
    for bits in [
        0,
        1,
        2,
        3,
        4,
        i64::MAX,
        i64::MAX - 1,
        1 << 62,
        (1 << 32) - 1,
    ] {
        w.write_fx(Fx::from_bits(bits).sqrt());
    }
}

/// sin, cos, sin_cos (large angles included), atan2 in every quadrant and
/// ratio, atan, asin and acos (inside and outside [-1, 1]).
pub fn trig(w: &mut Writer) {
    let mut rng = Rng::new(3, 3);
    for _ in 0..SAMPLES {
        let (a, b) = (any_fx(&mut rng), any_fx(&mut rng));
        let (s, c) = a.sin_cos();
        for v in [a.sin(), a.cos(), s, c, a.atan2(b), b.atan2(a), a.atan()] {
            w.write_fx(v);
        }
        let unit = Fx::from_bits((rng.next_u64() as i64) >> 30);
        for v in [unit.asin(), unit.acos(), a.asin(), a.acos()] {
            w.write_fx(v);
        }
    }
    let edges = [
        Fx::ZERO,
        Fx::EPSILON,
        Fx::ONE,
        Fx::FRAC_PI_2,
        Fx::PI,
        Fx::TAU,
        Fx::MAX,
        Fx::MIN,
    ];
    for a in edges {
        for b in edges {
            w.write_fx(a.atan2(b));
            w.write_fx((-a).atan2(b));
        }
        w.write_fx(a.sin());
        w.write_fx(a.cos());
    }
}

/// `Vec3` products, lengths, normalisation and tangent bases.
pub fn vec3(w: &mut Writer) {
    let mut rng = Rng::new(4, 4);
    for _ in 0..SAMPLES {
        let (a, b) = (any_vec3(&mut rng), any_vec3(&mut rng));
        let t = any_fx(&mut rng);
        w.write_fx(a.dot(b));
        w.write_vec3(a.cross(b));
        w.write_fx(a.length());
        w.write_fx(a.length_squared());
        w.write_vec3(a.normalize_or_zero());
        w.write_fx(a.distance(b));
        w.write_vec3(a.lerp(b, t));
        w.write_vec3(a.mul_elem(b) + a * t - b);
        let (t1, t2) = a.normalize_or_zero().any_orthonormal_pair();
        w.write_vec3(t1);
        w.write_vec3(t2);
        // Long vectors take the exact 128-bit length path.
        let long = Vec3::new(any_fx(&mut rng), any_fx(&mut rng), any_fx(&mut rng));
        w.write_fx(long.length());
        w.write_vec3(long.normalize_or_zero());
    }
}

/// The four-lane products of `lockstep_fx::lanes` (the portable lanes, the
/// reference of the solver's lane kernels): each lane's product, dot
/// product, sum and maximum, with the scalar products written beside them,
/// so a build whose lanes disagree with its scalar code also disagrees here.
pub fn lanes(w: &mut Writer) {
    use lockstep_fx::lanes::{FxLanes, Portable};
    use lockstep_fx::wide::wrapping;
    let mut rng = Rng::new(9, 9);
    let raw = |rng: &mut Rng| -> [i64; 4] { core::array::from_fn(|_| any_fx(rng).to_bits()) };
    for _ in 0..SAMPLES / 4 {
        let (a, b, c) = (
            Portable(raw(&mut rng)),
            Portable(raw(&mut rng)),
            Portable(raw(&mut rng)),
        );
        for lane in [
            a.mul(b),
            Portable::dot([a, b, c], [c, a, b]),
            a.add(b).max(c),
            a.sub(c),
        ] {
            for x in lane.0 {
                w.write_fx(Fx::from_bits(x));
            }
        }
        let fx = |p: Portable, i: usize| Fx::from_bits(p.0[i]);
        for i in 0..4 {
            w.write_fx(wrapping::mul(fx(a, i), fx(b, i)));
        }
    }
}

/// Quaternion products, normalisation, rotation and integration.
pub fn quat(w: &mut Writer) {
    let mut rng = Rng::new(5, 5);
    let dt = Fx::from_ratio(1, 60);
    let mut orientation = Quat::IDENTITY;
    for _ in 0..SAMPLES {
        let (p, q) = (any_rotation(&mut rng), any_rotation(&mut rng));
        let v = any_vec3(&mut rng);
        w.write_quat(p * q);
        w.write_quat(p.conjugate());
        w.write_fx(p.dot(q));
        w.write_fx(p.length());
        w.write_vec3(p.rotate(v));
        w.write_vec3(p.inverse_rotate(v));
        // A body spinning for SAMPLES frames accumulates every rounding.
        orientation = orientation.integrate(v.normalize_or_zero() * Fx::from_int(3), dt);
        w.write_quat(orientation);
        let raw = Quat::from_wxyz(any_fx(&mut rng), v.x, v.y, v.z);
        w.write_quat(raw.normalize());
    }
}

/// Rotation matrices, products, inverses and world-space inertia.
pub fn mat3(w: &mut Writer) {
    let mut rng = Rng::new(6, 6);
    for _ in 0..SAMPLES / 4 {
        let r = Mat3::from_quat(any_rotation(&mut rng));
        let m = Mat3::from_rows(any_vec3(&mut rng), any_vec3(&mut rng), any_vec3(&mut rng));
        let v = any_vec3(&mut rng);
        let d = any_vec3(&mut rng).abs();
        w.write_mat3(&r);
        w.write_mat3(&(r * m));
        w.write_mat3(&m.transpose());
        w.write_vec3(m * v);
        w.write_vec3(m.transpose_mul_vec3(v));
        w.write_fx(m.determinant());
        w.write_bool(m.inverse().is_some());
        w.write_mat3(&m.inverse().unwrap_or(Mat3::ZERO));
        w.write_mat3(&r.rotate_diagonal(d));
        w.write_mat3(&(Mat3::skew(v) + m - Mat3::from_diagonal(d).scale(v.x)));
    }
}

/// The generator's streams and derived operations.
pub fn rng(w: &mut Writer) {
    w.write_u32(Rng::VERSION);
    for frame in 0..256u64 {
        let mut r = Rng::for_frame(0x5eed_1234_abcd_0001, frame);
        w.write_u64(r.next_u64());
        w.write_u32(r.below(frame as u32));
        w.write_i32(r.range_i32(-1000, 1000));
        w.write_fx(r.fx_range(Fx::NEG_ONE, Fx::ONE));
        w.write_bool(r.chance(1, 3));
        let mut order: Vec<u32> = (0..frame as u32 % 64).collect();
        r.shuffle(&mut order);
        for i in order {
            w.write_u32(i);
        }
        r.encode(w);
    }
}

/// Decimal text out and in, and snapshots decoded back and re-encoded.
pub fn text_and_snapshots(w: &mut Writer) {
    let mut rng = Rng::new(7, 7);
    for _ in 0..SAMPLES / 4 {
        let a = any_fx(&mut rng);
        let text = format!("{a} {a:.3} {a:.19}");
        w.write_bytes(text.as_bytes());
        let parsed = format!("{a:.19}").parse::<Fx>().unwrap_or(Fx::ZERO);
        w.write_fx(parsed);
        let v = any_vec3(&mut rng);
        let q = any_rotation(&mut rng);
        let mut snap = StateWriter::buffer();
        v.encode(&mut snap);
        q.encode(&mut snap);
        let mut r = StateReader::new(snap.bytes());
        let back = (Vec3::decode(&mut r), Quat::decode(&mut r));
        w.write_bool(back == (Ok(v), Ok(q)));
        w.write_bytes(snap.bytes());
    }
}

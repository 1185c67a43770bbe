//! Every codec round-trips within its quantization bound, the delta codec
//! round-trips exactly at every level, and untrusted bytes never panic.

use lockstep_fx::{Fx, Quat, Vec3};
use lockstep_snapshot::delta::{self, Level};
use lockstep_snapshot::{Bounds, QuantBody};
use proptest::prelude::*;

fn fx(milli: i32) -> Fx {
    Fx::from_ratio(i64::from(milli), 1000)
}

fn quat(w: i32, x: i32, y: i32, z: i32) -> Option<Quat> {
    if [w, x, y, z].iter().all(|c| c.abs() < 10) {
        return None;
    }
    Some(
        Quat {
            w: fx(w),
            x: fx(x),
            y: fx(y),
            z: fx(z),
        }
        .normalize(),
    )
}

/// The largest component difference between `a` and `b`, up to sign.
fn quat_error(a: Quat, b: Quat) -> Fx {
    let d = |s: bool| {
        let f = |x: Fx, y: Fx| {
            if s {
                x.saturating_add(y).abs()
            } else {
                x.saturating_sub(y).abs()
            }
        };
        f(a.w, b.w)
            .max(f(a.x, b.x))
            .max(f(a.y, b.y))
            .max(f(a.z, b.z))
    };
    d(false).min(d(true))
}

fn body(rng: &mut lockstep_fx::Rng, bounds: &Bounds) -> QuantBody {
    let r = |rng: &mut lockstep_fx::Rng, lo: i32, hi: i32| fx(rng.range_i32(lo, hi));
    let q = Quat {
        w: r(rng, -1000, 1000),
        x: r(rng, -1000, 1000),
        y: r(rng, -1000, 1000),
        z: r(rng, -1000, 1000),
    };
    let q = if q.w.is_zero() && q.x.is_zero() {
        Quat::IDENTITY
    } else {
        q
    };
    QuantBody::new(
        Vec3::new(
            r(rng, -30_000, 30_000),
            r(rng, 0, 14_000),
            r(rng, -30_000, 30_000),
        ),
        q,
        Vec3::new(
            r(rng, -20_000, 20_000),
            r(rng, -20_000, 20_000),
            r(rng, -20_000, 20_000),
        ),
        rng.below(3) == 0,
        bounds,
    )
}

/// A baseline and a snapshot where some bodies moved a little, some a lot,
/// some not at all.
fn pair(seed: u64, n: usize) -> (Vec<QuantBody>, Vec<QuantBody>) {
    let bounds = Bounds::cubes();
    let mut rng = lockstep_fx::Rng::new(seed, 3);
    let base: Vec<QuantBody> = (0..n).map(|_| body(&mut rng, &bounds)).collect();
    let cur = base
        .iter()
        .map(|b| match rng.below(4) {
            0 => *b,
            1 => body(&mut rng, &bounds),
            _ => {
                let mut c = *b;
                for p in &mut c.position {
                    *p = (*p + rng.below(20))
                        .saturating_sub(10)
                        .min(bounds.position_max()[1]);
                }
                c.orientation.rest[0] = c.orientation.rest[0].saturating_sub(rng.below(8));
                c
            }
        })
        .collect();
    (base, cur)
}

proptest! {
    #[test]
    fn positions_round_trip_within_half_a_step(x in -31_000i32..31_000, y in -900i32..14_000, z in -31_000i32..31_000) {
        let bounds = Bounds::cubes();
        let p = Vec3::new(fx(x), fx(y), fx(z));
        let q = QuantBody::new(p, Quat::IDENTITY, Vec3::ZERO, true, &bounds);
        let back = q.position(&bounds);
        // Half a step of 1/512 m, plus the rounding of Fx division.
        let bound = Fx::from_ratio(1, 1024).saturating_add(Fx::from_bits(2));
        for (a, b) in [(p.x, back.x), (p.y, back.y), (p.z, back.z)] {
            prop_assert!(a.saturating_sub(b).abs() <= bound, "{a:?} vs {b:?}");
        }
        // A decoded code codes to itself.
        let again = QuantBody::new(back, Quat::IDENTITY, Vec3::ZERO, true, &bounds);
        prop_assert_eq!(again.position, q.position);
    }

    #[test]
    fn orientations_round_trip_within_the_smallest_three_bound(w in -1000i32..1000, x in -1000i32..1000, y in -1000i32..1000, z in -1000i32..1000) {
        let Some(q) = quat(w, x, y, z) else { return Ok(()) };
        let bounds = Bounds::cubes();
        let code = QuantBody::new(Vec3::ZERO, q, Vec3::ZERO, true, &bounds);
        let back = code.orientation(&bounds);
        // A 9-bit component step is √2/511 ≈ 0.00277; half of it on each
        // small component, and the rebuilt largest one, stay under 0.004.
        prop_assert!(quat_error(q, back) <= Fx::lit("0.004"), "{q:?} vs {back:?}");
    }

    #[test]
    fn velocities_round_trip_within_half_a_step(vx in -31_000i32..31_000, vy in -31_000i32..31_000) {
        let bounds = Bounds::cubes();
        let v = Vec3::new(fx(vx), fx(vy), Fx::ZERO);
        let code = QuantBody::new(Vec3::ZERO, Quat::IDENTITY, v, false, &bounds);
        let back = code.velocity(&bounds);
        // 64 m/s over 2 047 steps: half a step is under 16 mm/s.
        let bound = Fx::lit("0.016");
        prop_assert!(v.x.saturating_sub(back.x).abs() <= bound);
        prop_assert!(v.y.saturating_sub(back.y).abs() <= bound);
    }

    #[test]
    fn snapshots_round_trip_exactly_at_every_level(seed in 0u64..10_000, n in 0usize..200) {
        let bounds = Bounds::cubes();
        let (base, cur) = pair(seed, n);
        for level in [Level::Absolute, Level::Delta, Level::Relative] {
            let bytes = delta::encode(level, &base, &cur, &bounds);
            let back = delta::decode(level, &base, &bytes, &bounds).unwrap();
            prop_assert_eq!(&back, &cur, "{:?}", level);
            let bits = delta::measure(level, &base, &cur, &bounds).total();
            prop_assert_eq!(bits.div_ceil(8), bytes.len() as u64);
        }
    }

    #[test]
    fn untrusted_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400), seed in 0u64..100) {
        let bounds = Bounds::cubes();
        let (base, _) = pair(seed, 50);
        for level in [Level::Absolute, Level::Delta, Level::Relative] {
            let _ = delta::decode(level, &base, &bytes, &bounds);
        }
    }
}

#[test]
fn an_unchanged_snapshot_costs_a_few_bits() {
    let bounds = Bounds::cubes();
    let (base, _) = pair(1, 900);
    let bits = delta::measure(Level::Relative, &base, &base, &bounds).total();
    // The index mode bit, and a count of zero changed bodies.
    assert!(bits <= 12, "{bits}");
}

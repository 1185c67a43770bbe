//! Every codec round-trips within its quantization bound, the delta codec
//! round-trips exactly at every level, and untrusted bytes never panic.

use lockstep_fx::{Fx, Quat, Vec3};
use lockstep_snapshot::delta;
use lockstep_snapshot::{BodyState, Bounds, QuantBody};
use lockstep_snapshot::{Level, Reference};
use proptest::prelude::*;

fn state(position: Vec3, orientation: Quat, linear_velocity: Vec3, at_rest: bool) -> BodyState {
    BodyState {
        position,
        orientation,
        linear_velocity,
        angular_velocity: Vec3::new(linear_velocity.z, linear_velocity.x, linear_velocity.y),
        at_rest,
    }
}

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
    if rng.below(40) == 0 {
        return QuantBody::ABSENT;
    }
    QuantBody::new(
        &state(
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
        ),
        bounds,
    )
}

/// Moves some of `from`'s bodies a little, replaces some, keeps the rest.
fn step(rng: &mut lockstep_fx::Rng, from: &[QuantBody], bounds: &Bounds) -> Vec<QuantBody> {
    from.iter()
        .map(|b| match rng.below(4) {
            0 => *b,
            1 => body(rng, bounds),
            _ if !b.present => *b,
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
        .collect()
}

/// A baseline and a snapshot where some bodies moved a little, some a lot,
/// some not at all.
fn pair(seed: u64, n: usize) -> (Vec<QuantBody>, Vec<QuantBody>) {
    let (_, base, cur) = triple(seed, n, &Bounds::cubes());
    (base, cur)
}

/// An older acked snapshot, the baseline after it, and the snapshot.
fn triple(
    seed: u64,
    n: usize,
    bounds: &Bounds,
) -> (Vec<QuantBody>, Vec<QuantBody>, Vec<QuantBody>) {
    let mut rng = lockstep_fx::Rng::new(seed, 3);
    let older: Vec<QuantBody> = (0..n).map(|_| body(&mut rng, bounds)).collect();
    let base = step(&mut rng, &older, bounds);
    let cur = step(&mut rng, &base, bounds);
    (older, base, cur)
}

proptest! {
    #[test]
    fn positions_round_trip_within_half_a_step(x in -31_000i32..31_000, y in -900i32..14_000, z in -31_000i32..31_000) {
        let bounds = Bounds::cubes();
        let p = Vec3::new(fx(x), fx(y), fx(z));
        let q = QuantBody::at(p, Quat::IDENTITY, &bounds);
        let back = q.position(&bounds);
        // Half a step of 1/512 m, plus the rounding of Fx division.
        let bound = Fx::from_ratio(1, 1024).saturating_add(Fx::from_bits(2));
        for (a, b) in [(p.x, back.x), (p.y, back.y), (p.z, back.z)] {
            prop_assert!(a.saturating_sub(b).abs() <= bound, "{a:?} vs {b:?}");
        }
        // A decoded code codes to itself.
        let again = QuantBody::at(back, Quat::IDENTITY, &bounds);
        prop_assert_eq!(again.position, q.position);
    }

    #[test]
    fn orientations_round_trip_within_the_smallest_three_bound(w in -1000i32..1000, x in -1000i32..1000, y in -1000i32..1000, z in -1000i32..1000) {
        let Some(q) = quat(w, x, y, z) else { return Ok(()) };
        let bounds = Bounds::cubes();
        let code = QuantBody::at(Vec3::ZERO, q, &bounds);
        let back = code.orientation(&bounds);
        // A 9-bit component step is √2/511 ≈ 0.00277; half of it on each
        // small component, and the rebuilt largest one, stay under 0.004.
        prop_assert!(quat_error(q, back) <= Fx::lit("0.004"), "{q:?} vs {back:?}");
    }

    #[test]
    fn velocities_round_trip_within_half_a_step(vx in -31_000i32..31_000, vy in -31_000i32..31_000) {
        let bounds = Bounds::cubes();
        let v = Vec3::new(fx(vx), fx(vy), Fx::ZERO);
        let bounds = bounds.synced();
        let code = QuantBody::new(&state(Vec3::ZERO, Quat::IDENTITY, v, false), &bounds);
        let back = code.velocity(&bounds);
        let spin = code.angular_velocity(&bounds);
        // 64 m/s (or rad/s) over 2 047 steps: half a step is under 16 mm/s.
        let bound = Fx::lit("0.016");
        prop_assert!(v.x.saturating_sub(back.x).abs() <= bound);
        prop_assert!(v.y.saturating_sub(back.y).abs() <= bound);
        prop_assert!(v.x.saturating_sub(spin.y).abs() <= bound);
        // At rest, both are exactly zero.
        let rest = QuantBody::new(&state(Vec3::ZERO, Quat::IDENTITY, v, true), &bounds);
        prop_assert_eq!(rest.velocity(&bounds), Vec3::ZERO);
        prop_assert_eq!(rest.angular_velocity(&bounds), Vec3::ZERO);
    }

    #[test]
    fn synced_positions_and_orientations_are_finer(x in -31_000i32..31_000, w in -1000i32..1000, y in -1000i32..1000) {
        let Some(q) = quat(w, 300, y, -200) else { return Ok(()) };
        let bounds = Bounds::cubes().synced();
        let p = Vec3::new(fx(x), fx(1), fx(-x));
        let code = QuantBody::at(p, q, &bounds);
        // 4 096 steps per metre; 15-bit components.
        let bound = Fx::from_ratio(1, 8192).saturating_add(Fx::from_bits(2));
        prop_assert!(p.x.saturating_sub(code.position(&bounds).x).abs() <= bound);
        prop_assert!(quat_error(q, code.orientation(&bounds)) <= Fx::lit("0.0001"));
    }

    #[test]
    fn snapshots_round_trip_at_every_level(seed in 0u64..10_000, n in 0usize..200, age in 1u32..12, span in 1u32..6, synced in any::<bool>()) {
        let bounds = if synced { Bounds::cubes().synced() } else { Bounds::cubes() };
        let (older, base, cur) = triple(seed, n, &bounds);
        // The models a stream would carry: those of coding the baseline.
        let warm = delta::encode(Level::RangeCoded, &Reference::base(&older), &base, &bounds).1.models;
        for reference in [
            Reference::base(&base),
            Reference { base: &base, base_age: age, previous: Some((&older, span)), models: None },
            Reference { base: &base, base_age: age, previous: Some((&older, span)), models: Some(&warm) },
        ] {
            for level in Level::ALL {
                let (bytes, coded) = delta::encode(level, &reference, &cur, &bounds);
                let back = delta::decode(level, &reference, &bytes, &bounds).unwrap();
                prop_assert_eq!(&back, &coded, "{:?}", level);
                if level == Level::Scaled {
                    // Lossy for moving bodies: within half a step that
                    // follows the speed (at most an eighth of a frame's
                    // move; a step at the box's edges), exact for the
                    // others.
                    for i in 0..n {
                        let (c, got) = (&cur[i], &back.bodies[i]);
                        let fast = |a: &[u32; 3], b: &[u32; 3]| {
                            (0..3).map(|k| a[k].abs_diff(b[k])).max().unwrap_or(0)
                        };
                        let moving = reference.previous.is_some() && !c.at_rest && base[i].present && older[i].present;
                        let slack = if moving {
                            let p = fast(&base[i].position, &older[i].position) / span / 4;
                            let o = fast(&base[i].orientation.rest, &older[i].orientation.rest) / span / 4;
                            p.max(o)
                        } else {
                            0
                        };
                        prop_assert_eq!((c.at_rest, c.present), (got.at_rest, got.present));
                        prop_assert!(fast(&c.position, &got.position) <= slack, "{:?} vs {:?}", c, got);
                        if c.orientation.largest == got.orientation.largest {
                            prop_assert!(fast(&c.orientation.rest, &got.orientation.rest) <= slack);
                        } else {
                            prop_assert!(slack > 0);
                        }
                    }
                } else {
                    prop_assert_eq!(&back.bodies, &cur, "{:?}", level);
                }
                let bits = delta::measure(level, &reference, &cur, &bounds).total();
                if level.has_models() {
                    // The models' estimate is within 1% and a few bytes.
                    prop_assert!(bits.abs_diff(bytes.len() as u64 * 8) <= 48 + bits / 100, "{} vs {}", bits, bytes.len());
                } else {
                    prop_assert_eq!(bits.div_ceil(8), bytes.len() as u64);
                }
            }
        }
    }

    #[test]
    fn untrusted_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400), seed in 0u64..100) {
        let bounds = Bounds::cubes();
        let (older, base, _) = triple(seed, 50, &bounds);
        let reference = Reference { base: &base, base_age: 3, previous: Some((&older, 2)), models: None };
        for level in Level::ALL {
            if let Ok(snap) = delta::decode(level, &reference, &bytes, &bounds) {
                // Whatever decodes is a snapshot the encoder reproduces.
                let (again, coded) = delta::encode(level, &reference, &snap.bodies, &bounds);
                prop_assert_eq!(&coded.bodies, &snap.bodies);
                prop_assert_eq!(delta::decode(level, &reference, &again, &bounds).unwrap(), coded);
            }
        }
    }
}

#[test]
fn an_unchanged_snapshot_costs_a_few_bits() {
    let bounds = Bounds::cubes();
    let (base, _) = pair(1, 900);
    let bits = delta::measure(Level::Relative, &Reference::base(&base), &base, &bounds).total();
    // The index mode bit, and a count of zero changed bodies.
    assert!(bits <= 12, "{bits}");
}

#[test]
fn motion_carried_forward_costs_less_than_the_plain_difference() {
    // 200 bodies sliding at constant speeds: the predicted codec sends
    // almost nothing but "as expected".
    let bounds = Bounds::cubes().positional();
    let at = |f: i32| -> Vec<QuantBody> {
        (0..200)
            .map(|i| {
                let p = Vec3::new(fx(i * 100 + f * (i % 7) * 10), fx(500), fx(-i * 50));
                QuantBody::new(&state(p, Quat::IDENTITY, Vec3::ZERO, false), &bounds)
            })
            .collect()
    };
    let (older, base, cur) = (at(0), at(6), at(12));
    let reference = Reference {
        base: &base,
        base_age: 6,
        previous: Some((&older, 6)),
        models: None,
    };
    let relative = delta::measure(Level::Relative, &reference, &cur, &bounds).total();
    let predicted = delta::measure(Level::Predicted, &reference, &cur, &bounds).total();
    let coded = delta::encode(Level::RangeCoded, &reference, &cur, &bounds)
        .0
        .len() as u64
        * 8;
    assert!(predicted * 3 < relative, "{predicted} vs {relative}");
    assert!(coded < predicted, "{coded} vs {predicted}");
}

proptest! {
    // Whole streams: fewer cases, each a few dozen snapshots.
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn a_stream_round_trips_whatever_is_lost_and_acked(seed in 0u64..5_000, n in 1usize..60, loss in 0u32..60, ack_loss in 0u32..60, scaled in any::<bool>()) {
        use lockstep_snapshot::stream::{SnapshotReceiver, SnapshotSender};
        let bounds = Bounds::cubes();
        let level = if scaled { Level::Scaled } else { Level::RangeCoded };
        let mut rng = lockstep_fx::Rng::new(seed, 9);
        let mut scene: Vec<QuantBody> = (0..n).map(|_| body(&mut rng, &bounds)).collect();
        let mut tx = SnapshotSender::new(scene.clone(), bounds, level);
        let mut rx = SnapshotReceiver::new(scene.clone(), bounds);
        for f in 1..30u32 {
            scene = step(&mut rng, &scene, &bounds);
            let (payload, _) = tx.encode(f, scene.clone());
            let sent = tx.snapshot(f).unwrap().to_vec();
            if !scaled {
                prop_assert_eq!(&sent, &scene);
            }
            if rng.below(100) < loss {
                continue;
            }
            prop_assert_eq!(rx.decode(f, &payload).unwrap(), sent);
            if rng.below(100) >= ack_loss {
                tx.on_ack(f);
            }
        }
    }

    #[test]
    fn state_sync_packets_round_trip_against_per_body_baselines(seed in 0u64..5_000, n in 1u32..80, loss in 0u32..50) {
        use lockstep_snapshot::Role;
        use lockstep_snapshot::sync::{SyncReceiver, SyncSender, SyncSettings};
        let bounds = Bounds::cubes().synced();
        let mut rng = lockstep_fx::Rng::new(seed, 10);
        let mut scene: Vec<QuantBody> = (0..n).map(|_| body(&mut rng, &bounds)).collect();
        let mut tx = SyncSender::new(n, SyncSettings::new(bounds, 16_667));
        let mut rx = SyncReceiver::new(n, bounds);
        for f in 1..25u32 {
            scene = step(&mut rng, &scene, &bounds);
            let roles: Vec<Option<(QuantBody, Role)>> = scene
                .iter()
                .enumerate()
                .map(|(i, b)| b.present.then_some((*b, if i == 0 { Role::Player } else { Role::Free })))
                .collect();
            let (bytes, carried) = tx.write(f, &roles, 0);
            prop_assert!(bytes.len() as u64 * 8 <= SyncSettings::new(bounds, 16_667).packet_bits() + 8);
            if rng.below(100) < loss {
                continue;
            }
            let got = rx.decode(f, &bytes).unwrap();
            prop_assert_eq!(got.len(), carried.len());
            for (slot, b) in got {
                prop_assert_eq!(b, scene[slot as usize]);
            }
            if let Some(ack) = rx.ack() {
                if rng.below(100) >= loss {
                    tx.on_ack(ack);
                }
            }
        }
    }
}

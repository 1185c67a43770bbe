//! The state decoder on hostile input: typed errors, never a panic.

use lockstep_fx::{Fx, Quat, Rng, Vec3};
use lockstep_physics::{BodyBuilder, Shape, StateError, World, WorldSettings, scenes};

#[test]
fn truncations_and_bit_flips_never_panic() {
    let mut world = scenes::smash().build();
    for _ in 0..30 {
        world.step();
    }
    let bytes = world.save();
    for len in (0..bytes.len()).step_by(7) {
        assert!(
            World::decode(&bytes[..len]).is_err(),
            "a prefix of {len} bytes decoded"
        );
    }
    let mut rng = Rng::new(99, 0);
    for _ in 0..2000 {
        let mut b = bytes.clone();
        let i = rng.below(b.len() as u32) as usize;
        b[i] ^= 1 << rng.below(8);
        // Either an error or a world that steps without panicking.
        if let Ok(mut w) = World::decode(&b) {
            w.step();
        }
    }
}

#[test]
fn wrong_version_is_named() {
    let mut bytes = scenes::stack_sleep().build().save();
    bytes[0] = 0xEE;
    assert!(matches!(
        World::decode(&bytes),
        Err(StateError::Version { .. })
    ));
}

#[test]
fn a_world_reads_back_from_the_middle_of_a_larger_state() {
    let world = scenes::stack_sleep().build();
    let mut w = lockstep_fx::StateWriter::buffer();
    w.write_u32(7);
    world.encode(&mut w);
    w.write_u32(9);
    let bytes = w.into_inner();
    let mut r = lockstep_fx::StateReader::new(&bytes);
    assert_eq!(r.read_u32(), Ok(7));
    let back = World::read(&mut r).unwrap();
    assert_eq!(r.read_u32(), Ok(9));
    r.finish().unwrap();
    assert_eq!(back.save(), world.save());
    // The whole-buffer decode refuses what follows the world.
    assert!(World::decode(&bytes[4..]).is_err());
}

/// A world of the ground and one sphere built by `body` from a locked
/// sphere, with `force` applied.
fn one_sphere(body: impl FnOnce(BodyBuilder) -> BodyBuilder, force: Vec3) -> World {
    let mut world = World::new(WorldSettings::default());
    world
        .add_body(BodyBuilder::fixed(Shape::HalfSpace))
        .unwrap();
    let sphere = BodyBuilder::dynamic(Shape::Sphere { radius: Fx::ONE }).position(Vec3::new(
        Fx::ZERO,
        Fx::from_int(3),
        Fx::ZERO,
    ));
    let h = world.add_body(body(sphere)).unwrap();
    world.apply_force(h, force);
    world
}

/// `a` and `b` differ in one place: `b` holds `extra` more bytes. Returns
/// where `b`'s extra bytes start.
fn insertion(a: &[u8], b: &[u8], extra: usize) -> usize {
    assert_eq!(b.len(), a.len() + extra);
    (0..=a.len())
        .find(|&q| b[..q] == a[..q] && b[q + extra..] == a[q..])
        .expect("one insertion")
}

#[test]
fn plain_body_fields_are_left_out_and_read_back() {
    // Every field that may be left out, at its plain value...
    let plain = one_sphere(|b| b.lock_rotation(), Vec3::ZERO);
    // ...and not: a sphere that can turn (inertia, arm orientation),
    // turned, spinning, pushed, damped, bouncy and lighter.
    let half = Fx::lit("0.5");
    let full = one_sphere(
        |b| {
            b.orientation(Quat::from_axis_angle(Vec3::Y, half))
                .angular_velocity(Vec3::new(Fx::ZERO, Fx::ONE, Fx::ZERO))
                .damping(half, half)
                .restitution(half)
                .gravity_scale(half)
        },
        Vec3::new(Fx::ONE, Fx::ZERO, Fx::ZERO),
    );
    let (short, long) = (plain.save(), full.save());
    // Inertia 24, arm orientation 32, orientation 32, angular velocity
    // 24, force and torque 48, damping 16, restitution 8, gravity scale 8.
    assert_eq!(long.len() - short.len(), 192);
    for mut world in [plain, full] {
        let bytes = world.save();
        let mut back = World::decode(&bytes).unwrap();
        assert_eq!(back.save(), bytes);
        for _ in 0..20 {
            world.step();
            back.step();
            assert_eq!(back.save(), world.save());
        }
    }
}

#[test]
fn a_plain_field_written_out_or_a_moving_height_lock_is_refused() {
    let plain = one_sphere(|b| b.lock_rotation(), Vec3::ZERO).save();
    let bouncy = one_sphere(|b| b.lock_rotation().restitution(Fx::ONE), Vec3::ZERO).save();
    // The sphere's restitution is the only difference: its plain byte, and
    // the 8 bytes of the field written out.
    let byte = (0..plain.len())
        .find(|&i| plain[i] != bouncy[i])
        .expect("the plain bytes differ");
    let mut same_byte = bouncy.clone();
    same_byte[byte] = plain[byte];
    let at = insertion(&plain, &same_byte, 8);
    let mut zero = bouncy.clone();
    zero[at..at + 8].fill(0);
    assert_eq!(
        World::decode(&zero).err(),
        Some(StateError::Invalid(
            "a body field at its plain value must be left out"
        ))
    );
    // The last bit says the height is free: cleared, the falling sphere
    // would be locked in height with a vertical velocity.
    let mut falling = one_sphere(|b| b.lock_rotation(), Vec3::ZERO);
    falling.step();
    let falling = falling.save();
    let mut locked = falling.clone();
    locked[byte] &= !0x80;
    assert_eq!(
        World::decode(&locked).err(),
        Some(StateError::Invalid(
            "only a dynamic body is locked in height, with no vertical velocity"
        ))
    );
    // Cleared for a static body: refused too. (A static body's gravity
    // scale is written out when it is not one: the first difference is the
    // plain byte.)
    let fixed = |scale: Fx| {
        let mut w = World::new(WorldSettings::default());
        w.add_body(BodyBuilder::fixed(Shape::HalfSpace).gravity_scale(scale))
            .unwrap();
        w.save()
    };
    let (one, half) = (fixed(Fx::ONE), fixed(Fx::HALF));
    let ground_byte = (0..one.len()).find(|&i| one[i] != half[i]).unwrap();
    assert_eq!(one[ground_byte], 0xff, "every field plain");
    let mut ground = one.clone();
    ground[ground_byte] &= !0x80;
    assert_eq!(
        World::decode(&ground).err(),
        Some(StateError::Invalid(
            "only a dynamic body is locked in height, with no vertical velocity"
        ))
    );
}

#[test]
fn a_body_locked_in_height_keeps_it_and_reads_back() {
    let mut world = World::new(WorldSettings::default());
    // A low box the sphere runs into: its top edge, below the sphere's
    // centre, meets it on its lower half, so the normal leaves the plane.
    world
        .add_body(
            BodyBuilder::fixed(Shape::box_with_size(Vec3::new(
                Fx::ONE,
                Fx::lit("0.3"),
                Fx::from_int(4),
            )))
            .position(Vec3::new(Fx::from_int(2), Fx::lit("0.15"), Fx::ZERO)),
        )
        .unwrap();
    let y = Fx::lit("0.5");
    let unit = BodyBuilder::dynamic(Shape::Sphere { radius: Fx::HALF })
        .lock_rotation()
        .lock_height()
        .position(Vec3::new(Fx::ZERO, y, Fx::ZERO))
        .linear_velocity(Vec3::new(Fx::from_int(3), Fx::from_int(5), Fx::ZERO));
    let h = world.add_body(unit).unwrap();
    let body = |w: &World| w.body(h).unwrap().clone();
    assert!(body(&world).is_height_locked());
    assert_eq!(
        body(&world).linear_velocity().y,
        Fx::ZERO,
        "dropped at creation"
    );
    world.apply_force(h, Vec3::new(Fx::ZERO, Fx::from_int(100), Fx::ZERO));
    world.apply_impulse(h, Vec3::new(Fx::ZERO, Fx::ONE, Fx::ZERO), Vec3::ZERO);
    let mut tilted = false;
    for frame in 0..90 {
        if frame == 40 {
            world.set_linear_velocity(h, Vec3::new(Fx::from_int(4), Fx::from_int(-2), Fx::ZERO));
        }
        world.step();
        tilted |= world.contacts().any(|c| !c.normal.y.is_zero());
        let b = body(&world);
        assert_eq!(
            b.position().y,
            y,
            "frame {frame}: no gravity, force or contact lifts it"
        );
        assert_eq!(b.linear_velocity().y, Fx::ZERO);
        // It reads back, and steps on the same.
        let bytes = world.save();
        assert_eq!(World::decode(&bytes).unwrap().save(), bytes);
    }
    assert!(tilted, "the sphere met the box's edge");
    // The box stopped it, across the plane.
    assert!(body(&world).position().x < Fx::from_int(2));
}

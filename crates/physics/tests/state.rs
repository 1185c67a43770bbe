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
fn a_plain_field_written_out_or_an_unknown_plain_bit_is_refused() {
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
    let mut unknown = plain.clone();
    unknown[byte] |= 0x80;
    assert_eq!(
        World::decode(&unknown).err(),
        Some(StateError::Invalid("unknown plain-field bits"))
    );
}

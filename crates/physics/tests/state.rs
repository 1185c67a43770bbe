//! The state decoder on hostile input: typed errors, never a panic.

use lockstep_fx::Rng;
use lockstep_physics::{StateError, World, scenes};

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

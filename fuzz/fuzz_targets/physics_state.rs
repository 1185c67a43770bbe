//! Decodes arbitrary bytes as a physics world snapshot: never panics; a world
//! that decodes re-encodes to the same bytes and survives a few steps.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lockstep_physics::World;

fuzz_target!(|data: &[u8]| {
    if let Ok(mut world) = World::decode(data) {
        assert_eq!(world.save(), data);
        for _ in 0..3 {
            world.step();
        }
    }
});

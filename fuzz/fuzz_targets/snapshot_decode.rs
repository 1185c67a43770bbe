//! Feeds arbitrary bytes to the snapshot decoder at every level, against a
//! fixed baseline: nothing may panic, and whatever decodes must encode back
//! to a snapshot that decodes the same.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lockstep_fx::{Fx, Quat, Vec3};
use lockstep_snapshot::delta::{self, Level};
use lockstep_snapshot::{Bounds, QuantBody};

fuzz_target!(|data: &[u8]| {
    let bounds = Bounds::cubes();
    let baseline: Vec<QuantBody> = (0..40)
        .map(|i| {
            let p = Vec3::new(
                Fx::from_int(i - 20),
                Fx::from_int(i % 7),
                Fx::from_int(20 - i),
            );
            QuantBody::new(p, Quat::IDENTITY, Vec3::ZERO, i % 3 == 0, &bounds)
        })
        .collect();
    for level in [Level::Absolute, Level::Delta, Level::Relative] {
        if let Ok(snap) = delta::decode(level, &baseline, data, &bounds) {
            let again = delta::encode(level, &baseline, &snap, &bounds);
            assert_eq!(
                delta::decode(level, &baseline, &again, &bounds).ok(),
                Some(snap)
            );
        }
    }
});

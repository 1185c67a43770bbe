//! Feeds arbitrary bytes to the snapshot decoder at every level (the
//! classic bit-packed ones, the predicted one and the range-coded one),
//! against a baseline and an older acked snapshot to predict from: nothing
//! may panic, and whatever decodes must encode back to a snapshot that
//! decodes the same.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lockstep_fx::{Fx, Quat, Vec3};
use lockstep_snapshot::delta;
use lockstep_snapshot::{BodyState, Bounds, QuantBody};
use lockstep_snapshot::{Level, Reference};

fn scene(t: i32, bounds: &Bounds) -> Vec<QuantBody> {
    (0..40)
        .map(|i| {
            if i == 7 {
                return QuantBody::ABSENT;
            }
            let p = Vec3::new(
                Fx::from_int(i - 20),
                Fx::from_int(i % 7),
                Fx::from_ratio(i64::from(20 * 100 - i * 100 + t * i), 100),
            );
            let q = Quat::from_axis_angle(
                Vec3::new(Fx::ZERO, Fx::ONE, Fx::ZERO),
                Fx::from_ratio(i64::from(t + i), 10),
            );
            let state = BodyState {
                position: p,
                orientation: q,
                linear_velocity: Vec3::new(Fx::from_int(i % 5), Fx::ZERO, Fx::ONE),
                angular_velocity: Vec3::new(Fx::ONE, Fx::ZERO, Fx::from_int(-(i % 3))),
                at_rest: i % 3 == 0,
            };
            QuantBody::new(&state, bounds)
        })
        .collect()
}

fuzz_target!(|data: &[u8]| {
    for bounds in [
        Bounds::cubes(),
        Bounds::cubes().positional(),
        Bounds::cubes().synced(),
    ] {
        let (older, base) = (scene(0, &bounds), scene(3, &bounds));
        let warm = delta::encode(Level::RangeCoded, &Reference::base(&older), &base, &bounds)
            .1
            .models;
        for models in [None, Some(&warm)] {
            for reference in [
                Reference::base(&base),
                Reference {
                    base: &base,
                    base_age: 2,
                    previous: Some((&older, 3)),
                    models,
                },
            ] {
                for level in Level::ALL {
                    if let Ok(snap) = delta::decode(level, &reference, data, &bounds) {
                        // Whatever decodes, the encoder codes back to
                        // itself (a lossy level's residuals are already on
                        // its steps).
                        let (again, coded) = delta::encode(level, &reference, &snap.bodies, &bounds);
                        assert_eq!(coded.bodies, snap.bodies);
                        assert_eq!(
                            delta::decode(level, &reference, &again, &bounds).ok(),
                            Some(coded)
                        );
                    }
                }
            }
        }
    }
});

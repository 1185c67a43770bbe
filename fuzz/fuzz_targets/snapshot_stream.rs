//! Feeds arbitrary payloads to a snapshot stream's receiver
//! (`lockstep_snapshot::stream::SnapshotReceiver::decode`), one that holds
//! a few acked baselines: nothing may panic, and a payload that decodes
//! gives a snapshot of the stream's body count.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lockstep_fx::{Fx, Quat, Vec3};
use lockstep_snapshot::stream::{SnapshotReceiver, SnapshotSender};
use lockstep_snapshot::{Bounds, Level, QuantBody};

fn scene(t: i32, bounds: &Bounds) -> Vec<QuantBody> {
    (0..30)
        .map(|i| {
            let p = Vec3::new(
                Fx::from_int(i - 15),
                Fx::ONE,
                Fx::from_ratio(i64::from(t * i), 50),
            );
            QuantBody::at(p, Quat::IDENTITY, bounds)
        })
        .collect()
}

fuzz_target!(|data: &[u8]| {
    let bounds = Bounds::cubes().positional();
    let mut tx = SnapshotSender::new(scene(0, &bounds), bounds, Level::RangeCoded);
    let mut rx = SnapshotReceiver::new(scene(0, &bounds), bounds);
    for f in 1..4u32 {
        let (payload, _) = tx.encode(f, scene(f as i32, &bounds));
        rx.decode(f, &payload).unwrap();
        tx.on_ack(f);
    }
    // The first two bytes pick the frame the payload claims to be.
    let (frame, payload) = match data {
        [a, b, rest @ ..] => (u32::from(u16::from_le_bytes([*a, *b])), rest),
        _ => (4, data),
    };
    if let Ok(bodies) = rx.decode(frame, payload) {
        assert_eq!(bodies.len(), 30);
    }
});

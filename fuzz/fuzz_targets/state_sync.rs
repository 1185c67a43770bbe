//! Feeds arbitrary bytes to a state synchronization receiver
//! (`lockstep_snapshot::sync::SyncReceiver::decode`) that holds per-body
//! baselines from earlier packets: nothing may panic, and every body a
//! packet that decodes carries names a slot in range.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lockstep_fx::{Fx, Quat, Vec3};
use lockstep_snapshot::sync::{SyncReceiver, SyncSender, SyncSettings};
use lockstep_snapshot::{Bounds, QuantBody, Role};

fuzz_target!(|data: &[u8]| {
    let bounds = Bounds::cubes().synced();
    let mut tx = SyncSender::new(20, SyncSettings::new(bounds, 16_667));
    let mut rx = SyncReceiver::new(20, bounds);
    for f in 1..4u32 {
        let bodies: Vec<Option<(QuantBody, Role)>> = (0..20)
            .map(|i| {
                let p = Vec3::new(
                    Fx::from_int(i),
                    Fx::ONE,
                    Fx::from_ratio(i64::from(f as i32 * i), 10),
                );
                let q = QuantBody::at(p, Quat::IDENTITY, &bounds);
                Some((
                    QuantBody {
                        at_rest: i % 2 == 0,
                        ..q
                    },
                    Role::Free,
                ))
            })
            .collect();
        let (bytes, _) = tx.write(f, &bodies, 0);
        rx.decode(f, &bytes).unwrap();
        tx.on_ack(rx.ack().unwrap());
    }
    if let Ok(bodies) = rx.decode(4, data) {
        assert!(bodies.iter().all(|(slot, _)| *slot < 20));
    }
});

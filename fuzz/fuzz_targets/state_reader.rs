//! Feeds arbitrary bytes to `StateReader` through every canonical type and a
//! byte-driven sequence of primitive reads: nothing may panic, and whatever
//! decodes must re-encode to the bytes it came from.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lockstep_fx::{Canonical, Checksum, Fx, Mat3, Quat, Rng, StateReader, Vec3};

fn round_trip<T: Canonical + PartialEq + core::fmt::Debug>(data: &[u8]) {
    if let Ok(v) = T::from_canonical(data) {
        assert_eq!(v.to_canonical(), data);
    }
}

fuzz_target!(|data: &[u8]| {
    round_trip::<Fx>(data);
    round_trip::<Vec3>(data);
    round_trip::<Quat>(data);
    round_trip::<Mat3>(data);
    round_trip::<Rng>(data);
    round_trip::<Checksum>(data);

    // The first byte chooses the reads; the rest is their input.
    let Some((ops, rest)) = data.split_first() else {
        return;
    };
    let mut r = StateReader::new(rest);
    for i in 0..16u32 {
        let op = (ops.rotate_left(i)) % 8;
        let ok = match op {
            0 => r.read_u8().is_ok(),
            1 => r.read_bool().is_ok(),
            2 => r.read_u16().is_ok(),
            3 => r.read_u32().is_ok(),
            4 => r.read_u64().is_ok(),
            5 => r.read_bytes().is_ok(),
            6 => r.read_len(24).is_ok(),
            _ => r.read_quat().is_ok(),
        };
        if !ok {
            break;
        }
    }
    let _ = r.finish();
});

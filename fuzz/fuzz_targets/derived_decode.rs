//! Feeds arbitrary bytes to decoders made by `#[derive(Canonical)]`: the
//! shipped games' settings, the RTS order, and a local type with every
//! shape the derive handles (nested structs, enums with and without fields,
//! explicit tags, arrays, `Vec` with and without a maximum, `Option`, a
//! skipped field). Nothing may panic, and whatever decodes must re-encode
//! to the bytes it came from.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lockstep_derive::Canonical;
use lockstep_fx::{Canonical, Fx, Rng, Vec3};
use lockstep_games::cubes::CubesConfig;
use lockstep_games::rts::{Order, RtsConfig};

#[derive(Debug, Canonical)]
enum Shape {
    Empty,
    Sphere(Fx),
    Box {
        half: Vec3,
        hollow: bool,
    },
    #[canonical(tag = 200)]
    Many(#[canonical(max_len = 8)] Vec<Shape>),
}

#[derive(Debug, Canonical)]
#[canonical(entity = "thing", ids(id))]
struct Thing {
    id: u32,
    corners: [i16; 3],
    shape: Option<Shape>,
    #[canonical(max_len = 4)]
    tags: Vec<u8>,
    rng: Rng,
    #[canonical(skip)]
    _cache: u64,
}

fn round_trip<T: Canonical>(data: &[u8]) {
    if let Ok(v) = T::from_canonical(data) {
        assert_eq!(v.to_canonical(), data);
    }
}

fuzz_target!(|data: &[u8]| {
    round_trip::<CubesConfig>(data);
    round_trip::<RtsConfig>(data);
    round_trip::<Order>(data);
    round_trip::<Vec<Order>>(data);
    round_trip::<Thing>(data);
    round_trip::<Vec<Thing>>(data);
});

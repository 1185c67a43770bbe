//! Feeds arbitrary bytes to decoders made by `#[derive(Canonical)]`: the
//! shipped games' settings, the RTS order, and a local type with every
//! shape the derive handles (nested structs, enums with and without fields,
//! explicit tags, arrays, `Vec` with and without a maximum, `Option`, a
//! skipped field). Nothing may panic, and whatever decodes must re-encode
//! to the bytes it came from. The same bytes go to a reader made by
//! `#[derive(Command)]` (every packing: ranged, signed, `bool`, nested, a
//! unit variant): nothing may panic, and a command read must write bits
//! that read back as itself, in the bits it was read from.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lockstep_codec::Command as _;
use lockstep_codec::bits::{BitMeasurer, BitReader, BitStream, BitWriter};
use lockstep_derive::{Canonical, Command};
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Command)]
struct Aim(#[command(range = -180..=179)] i16, bool);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Command)]
enum Drive {
    Stop,
    Move {
        #[command(range = 0..=1023)]
        x: u16,
        #[command(range = -512..=511)]
        z: i32,
        run: bool,
    },
    Aim(Aim),
    Stamp {
        #[command(range = 1_000_000..=1_000_999)]
        at: u64,
    },
}

fn read_command(data: &[u8]) {
    let mut r = BitReader::new(data);
    let Ok(c) = Drive::read(&mut r) else {
        return;
    };
    let mut copy = c;
    let mut m = BitMeasurer::new();
    copy.serialize(&mut m).unwrap();
    assert_eq!(m.bits(), r.bit_position());
    assert!(m.bits() <= u64::from(Drive::MAX_BITS));
    let mut w = BitWriter::new();
    copy.serialize(&mut w).unwrap();
    assert_eq!(Drive::read(&mut BitReader::new(&w.finish())), Ok(c));
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
    read_command(data);
});

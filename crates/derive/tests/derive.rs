//! `#[derive(Canonical)]` against hand-written encoders: the same bytes and
//! labels, exact round trips of every shape (named, tuple and unit structs,
//! enums with and without fields, arrays, `Vec`, `Option`, nesting), typed
//! errors for truncated, oversized and garbage input, and no panic on any
//! bytes.

use lockstep_derive::Canonical;
use lockstep_fx::{
    Canonical, Checksum, DecodeError, Fx, Mark, Mat3, Quat, Rng, Sink, StateReader, StateWriter,
    Vec3,
};
use proptest::prelude::*;

#[derive(Debug, Clone, PartialEq, Eq, Canonical)]
#[canonical(prefix = "unit")]
struct UnitRules {
    radius: Fx,
    hp: u32,
    give_up_frames: u16,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Canonical)]
enum Order {
    #[default]
    Idle,
    Move {
        #[canonical(name = "target x")]
        x: Fx,
        #[canonical(name = "target z")]
        z: Fx,
        blocked: u32,
    },
    Hold(u8, i16),
}

#[derive(Debug, Clone, PartialEq, Eq, Canonical)]
struct Building {
    position: [Fx; 2],
    size: Vec3,
}

#[derive(Debug, Clone, PartialEq, Eq, Canonical)]
struct Settings {
    map_size: Fx,
    units_per_player: u32,
    #[canonical(flatten)]
    unit: UnitRules,
    #[canonical(max_len = 4)]
    buildings: Vec<Building>,
    spare: Option<Order>,
    flags: [bool; 3],
    #[canonical(skip)]
    cache: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Canonical)]
#[canonical(entity = "unit", ids(id))]
struct Unit {
    id: u32,
    owner: u8,
    order: Order,
}

#[derive(Debug, Clone, PartialEq, Eq, Canonical)]
struct Pair(i8, i64);

#[derive(Debug, Clone, PartialEq, Eq, Canonical)]
struct Nothing;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Canonical)]
enum Explicit {
    A = 3,
    B,
    #[canonical(tag = 200)]
    C,
}

#[derive(Debug, Clone, PartialEq, Eq, Canonical)]
struct Everything {
    a: u8,
    b: bool,
    c: u16,
    d: u64,
    e: i32,
    f: Quat,
    g: Mat3,
    h: Checksum,
    i: Vec<Vec<u32>>,
    j: Option<Box3>,
    k: Pair,
    l: Nothing,
    m: Explicit,
}

#[derive(Debug, Clone, PartialEq, Eq, Canonical)]
struct Box3 {
    min: Vec3,
    max: Vec3,
}

#[derive(Debug, Clone, PartialEq, Canonical)]
struct Generic<T> {
    items: Vec<T>,
    first: Option<T>,
}

fn settings() -> Settings {
    Settings {
        map_size: Fx::from_int(64),
        units_per_player: 12,
        unit: UnitRules {
            radius: Fx::HALF,
            hp: 100,
            give_up_frames: 30,
        },
        buildings: vec![
            Building {
                position: [Fx::ONE, -Fx::from_int(7)],
                size: Vec3::new(Fx::from_int(2), Fx::from_int(3), Fx::from_int(4)),
            },
            Building {
                position: [Fx::ZERO, Fx::lit("0.25")],
                size: Vec3::splat(Fx::ONE),
            },
        ],
        spare: Some(Order::Move {
            x: Fx::lit("-1.5"),
            z: Fx::from_int(9),
            blocked: 2,
        }),
        flags: [true, false, true],
        cache: 0,
    }
}

/// `Settings` written by hand, the way the games wrote their settings.
fn settings_by_hand<S: Sink>(s: &Settings, w: &mut StateWriter<S>) {
    w.field("map size", &s.map_size);
    w.field("units per player", &s.units_per_player);
    w.field("unit radius", &s.unit.radius);
    w.field("unit hp", &s.unit.hp);
    w.field("unit give up frames", &s.unit.give_up_frames);
    w.label::<u32>("buildings");
    w.write_len(s.buildings.len());
    for b in &s.buildings {
        w.field("position", &b.position);
        w.field("size", &b.size);
    }
    w.label::<u8>("spare");
    match s.spare {
        None => w.write_u8(0),
        Some(Order::Idle) => w.write_raw(&[1, 0]),
        Some(Order::Move { x, z, blocked }) => {
            w.write_raw(&[1, 1]);
            w.field("target x", &x);
            w.field("target z", &z);
            w.field("blocked", &blocked);
        }
        Some(Order::Hold(a, b)) => {
            w.write_raw(&[1, 2]);
            w.field("0", &a);
            w.field("1", &b);
        }
    }
    w.field("flags", &s.flags);
}

/// A sink that records the labels, as `StateMap` does.
#[derive(Default)]
struct Labels {
    bytes: Vec<u8>,
    marks: Vec<(String, usize)>,
}

impl Sink for Labels {
    const READS_MARKS: bool = true;

    fn put(&mut self, bytes: &[u8]) {
        self.bytes.extend_from_slice(bytes);
    }
    fn mark(&mut self, mark: Mark<'_>) {
        let text = match mark {
            Mark::Entity { kind, ids } => format!("{kind} {ids:?}"),
            Mark::Field { name, .. } => name.to_string(),
            Mark::EndEntity => "end".to_string(),
            Mark::Length => "length".to_string(),
        };
        self.marks.push((text, self.bytes.len()));
    }
}

fn labels(f: impl FnOnce(&mut StateWriter<Labels>)) -> Labels {
    let mut w = StateWriter::new(Labels::default());
    f(&mut w);
    w.into_inner()
}

#[test]
fn derived_bytes_and_labels_equal_the_hand_written_ones() {
    let s = settings();
    let derived = labels(|w| s.encode(w));
    let by_hand = labels(|w| settings_by_hand(&s, w));
    assert_eq!(derived.bytes, by_hand.bytes);
    assert_eq!(s.to_canonical(), by_hand.bytes);
    assert_eq!(s.checksum(), {
        let mut w = StateWriter::hasher();
        settings_by_hand(&s, &mut w);
        w.checksum()
    });
    // Where each label lands. The derive's extra empty labels (a `Vec`'s
    // items each start with their own, an `Option` field's tag) are dropped
    // by a map keeping the last label at each offset, as `StateMap` does.
    let landed = |l: &Labels| {
        let mut out: Vec<(String, usize)> = Vec::new();
        for (name, at) in &l.marks {
            if out.last().is_some_and(|(_, last)| last == at) {
                out.pop();
            }
            out.push((name.clone(), *at));
        }
        out
    };
    assert_eq!(landed(&derived), landed(&by_hand));
}

#[test]
fn a_small_struct_has_exactly_these_bytes() {
    let u = UnitRules {
        radius: Fx::from_bits(0x0102_0304_0506_0708),
        hp: 0x0a0b_0c0d,
        give_up_frames: 0xeeff,
    };
    assert_eq!(
        u.to_canonical(),
        [
            0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, 0x0d, 0x0c, 0x0b, 0x0a, 0xff, 0xee
        ]
    );
    assert_eq!(UnitRules::MIN_BYTES, 14);
    let l = labels(|w| u.encode(w));
    let names: Vec<&str> = l.marks.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["unit radius", "unit hp", "unit give up frames"]);
}

#[test]
fn enums_write_their_tag_first() {
    assert_eq!(Order::Idle.to_canonical(), [0]);
    assert_eq!(Order::Hold(7, -2).to_canonical(), [2, 7, 0xfe, 0xff]);
    let m = Order::Move {
        x: Fx::ONE,
        z: Fx::ZERO,
        blocked: 5,
    };
    let mut want = vec![1];
    want.extend_from_slice(&Fx::ONE.to_bits().to_le_bytes());
    want.extend_from_slice(&[0; 8]);
    want.extend_from_slice(&5u32.to_le_bytes());
    assert_eq!(m.to_canonical(), want);
    assert_eq!(Order::MIN_BYTES, 1);
    assert_eq!(Explicit::A.to_canonical(), [3]);
    assert_eq!(Explicit::B.to_canonical(), [4]);
    assert_eq!(Explicit::C.to_canonical(), [200]);
    for bad in [0u8, 2, 5, 199, 201, 255] {
        assert_eq!(
            Explicit::from_canonical(&[bad]),
            Err(DecodeError::Invalid {
                offset: 0,
                what: "Explicit tag (no such variant)"
            })
        );
    }
    assert!(matches!(
        Order::from_canonical(&[3]),
        Err(DecodeError::Invalid { offset: 0, .. })
    ));
}

#[test]
fn entities_are_marked_with_their_ids() {
    let u = Unit {
        id: 17,
        owner: 1,
        order: Order::Idle,
    };
    let l = labels(|w| u.encode(w));
    let names: Vec<&str> = l.marks.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["unit [17]", "id", "owner", "order", "end"]);
    assert_eq!(u.to_canonical(), [17, 0, 0, 0, 1, 0]);
    assert_eq!(Unit::MIN_BYTES, 6);
}

#[test]
fn every_shape_round_trips() {
    let s = settings();
    assert_eq!(Settings::from_canonical(&s.to_canonical()), Ok(s.clone()));
    // A skipped field is not state: it comes back as its default.
    let cached = Settings { cache: 99, ..s };
    assert_eq!(cached.to_canonical(), settings().to_canonical());
    assert_eq!(
        Settings::from_canonical(&cached.to_canonical()).map(|s| s.cache),
        Ok(0)
    );

    let e = Everything {
        a: 0xfe,
        b: true,
        c: 0xbeef,
        d: u64::MAX - 3,
        e: -77,
        f: Quat::from_wxyz(Fx::ONE, Fx::HALF, -Fx::HALF, Fx::ZERO),
        g: Mat3::IDENTITY,
        h: Checksum::from_bytes([9; 32]),
        i: vec![vec![], vec![1, 2, 3], vec![u32::MAX]],
        j: Some(Box3 {
            min: Vec3::splat(-Fx::ONE),
            max: Vec3::splat(Fx::ONE),
        }),
        k: Pair(-128, i64::MIN),
        l: Nothing,
        m: Explicit::C,
    };
    assert_eq!(Everything::from_canonical(&e.to_canonical()), Ok(e.clone()));
    let none = Everything { j: None, ..e };
    assert_eq!(Everything::from_canonical(&none.to_canonical()), Ok(none));
    assert_eq!(Nothing.to_canonical(), Vec::<u8>::new());

    let g = Generic {
        items: vec![Rng::new(5, 1), Rng::new(6, 1)],
        first: Some(Rng::new(7, 1)),
    };
    let back = Generic::<Rng>::from_canonical(&g.to_canonical()).unwrap();
    assert_eq!(back.to_canonical(), g.to_canonical());
}

#[test]
fn truncated_input_is_an_error_at_every_length() {
    let bytes = settings().to_canonical();
    for len in 0..bytes.len() {
        assert!(
            Settings::from_canonical(&bytes[..len]).is_err(),
            "prefix of {len}"
        );
    }
    let mut long = bytes.clone();
    long.push(0);
    assert!(matches!(
        Settings::from_canonical(&long),
        Err(DecodeError::TrailingBytes { extra: 1, .. })
    ));
}

#[test]
fn lengths_are_bounded_by_the_field_and_the_input() {
    let mut s = settings();
    let one = s.buildings[0].clone();
    s.buildings = vec![one; 5];
    // Five buildings encode, but the field refuses more than four.
    let bytes = s.to_canonical();
    let at = 8 + 4 + 8 + 4 + 2;
    assert_eq!(
        Settings::from_canonical(&bytes),
        Err(DecodeError::Invalid {
            offset: at,
            what: "length (above the field's maximum)"
        })
    );
    // A length longer than the input is refused before allocating.
    let mut huge = bytes[..at as usize].to_vec();
    huge.extend_from_slice(&3u32.to_le_bytes());
    huge.extend_from_slice(&[0; 40 * 2 + 39]);
    assert!(matches!(
        Settings::from_canonical(&huge),
        Err(DecodeError::Invalid { offset, .. }) if offset == at
    ));
    assert_eq!(Building::MIN_BYTES, 40);
    assert_eq!(Settings::MIN_BYTES, 8 + 4 + 14 + 4 + 1 + 3);
}

#[test]
fn bad_bools_and_option_tags_are_errors() {
    let mut bytes = settings().to_canonical();
    let flags = bytes.len() - 3;
    bytes[flags] = 2;
    assert!(matches!(
        Settings::from_canonical(&bytes),
        Err(DecodeError::Invalid { what: "bool", .. })
    ));
    assert!(matches!(
        Option::<u8>::from_canonical(&[2, 0]),
        Err(DecodeError::Invalid {
            offset: 0,
            what: "option tag (must be 0 or 1)"
        })
    ));
    assert_eq!(Option::<u8>::from_canonical(&[1, 9]), Ok(Some(9)));
    assert_eq!(<[u16; 2]>::from_canonical(&[1, 0, 2, 0]), Ok([1, 2]));
}

#[test]
fn generic_encodings_match_the_writer_calls() {
    let v: Vec<u32> = vec![1, 2];
    let mut w = StateWriter::buffer();
    w.write_len(2);
    w.write_u32(1);
    w.write_u32(2);
    assert_eq!(v.to_canonical(), w.bytes());
    let mut r = StateReader::new(w.bytes());
    assert_eq!(
        lockstep_fx::decode_vec::<u32>(&mut r, 1),
        Err(DecodeError::Invalid {
            offset: 0,
            what: "length (above the field's maximum)"
        })
    );
    assert_eq!(Vec::<u32>::MIN_BYTES, 4);
    assert_eq!(<[Fx; 3]>::MIN_BYTES, 24);
    assert_eq!(Option::<Vec3>::MIN_BYTES, 1);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn garbage_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        // Any outcome but a panic; whatever decodes re-encodes to the input.
        if let Ok(s) = Settings::from_canonical(&bytes) {
            prop_assert_eq!(s.to_canonical(), bytes.clone());
        }
        if let Ok(e) = Everything::from_canonical(&bytes) {
            prop_assert_eq!(e.to_canonical(), bytes.clone());
        }
        if let Ok(u) = Vec::<Unit>::from_canonical(&bytes) {
            prop_assert_eq!(u.to_canonical(), bytes.clone());
        }
    }

    #[test]
    fn flipped_bytes_never_panic(at in 0usize..200, byte in any::<u8>()) {
        let mut bytes = settings().to_canonical();
        let i = at % bytes.len();
        bytes[i] = byte;
        if let Ok(s) = Settings::from_canonical(&bytes) {
            prop_assert_eq!(s.to_canonical(), bytes);
        }
    }

    #[test]
    fn orders_round_trip(tag in 0u8..3, x in any::<i64>(), z in any::<i64>(), n in any::<u32>()) {
        let o = match tag {
            0 => Order::Idle,
            1 => Order::Move { x: Fx::from_bits(x), z: Fx::from_bits(z), blocked: n },
            _ => Order::Hold(n as u8, x as i16),
        };
        prop_assert_eq!(Order::from_canonical(&o.to_canonical()), Ok(o));
        let unit = Unit { id: n, owner: tag, order: o };
        let units = vec![unit.clone(), unit];
        prop_assert_eq!(Vec::<Unit>::from_canonical(&units.to_canonical()), Ok(units));
    }
}

/// A state whose own fields come after lists of entities.
#[derive(Debug, Clone, PartialEq, Eq, Canonical)]
struct Skirmish {
    tanks: Vec<Unit>,
    losses: u32,
    shells: Vec<Unit>,
    turn: u16,
}

#[test]
fn fields_after_a_list_of_entities_are_marked_after_the_list_ends() {
    let unit = |id| Unit {
        id,
        owner: 0,
        order: Order::Idle,
    };
    let s = Skirmish {
        tanks: vec![unit(1), unit(2)],
        losses: 3,
        shells: vec![unit(9)],
        turn: 4,
    };
    let l = labels(|w| s.encode(w));
    let names: Vec<&str> = l.marks.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "tanks", "length", "unit [1]", "id", "owner", "order", "end", "unit [2]", "id",
            "owner", "order", "end", "losses", "shells", "length", "unit [9]", "id", "owner",
            "order", "end", "turn"
        ]
    );
    // Labels change no byte.
    assert_eq!(l.bytes, s.to_canonical());
}

//! `#[derive(Command)]` against hand-written packing: the same bits, exact
//! round trips of every shape, refusals of every out-of-range value, and no
//! panic on any bits.

use lockstep_codec::Command;
use lockstep_codec::bits::{BitError, BitMeasurer, BitReader, BitStream, BitWriter};
use lockstep_derive::Command;
use proptest::prelude::*;

/// An order as a small skirmish packs it by hand: a move bit, a unit in
/// two bits, then the cell if it moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Command)]
enum Order {
    Stop {
        #[command(range = 0..=3)]
        unit: u8,
    },
    Move {
        #[command(range = 0..=3)]
        unit: u8,
        #[command(range = 0..=63)]
        x: u8,
        #[command(range = 0..=63)]
        y: u8,
    },
}

fn by_hand<S: BitStream>(order: &Order, s: &mut S) -> Result<(), BitError> {
    let (mut moving, mut unit, mut x, mut y) = match *order {
        Order::Move { unit, x, y } => (true, unit, x, y),
        Order::Stop { unit } => (false, unit, 0, 0),
    };
    s.bool(&mut moving)?;
    let mut field = |v: &mut u8, max: u32, what| {
        let mut n = u32::from(*v);
        s.ranged(&mut n, 0, max, what).map(|()| *v = n as u8)
    };
    field(&mut unit, 3, "unit")?;
    if moving {
        field(&mut x, 63, "x")?;
        field(&mut y, 63, "y")?;
    }
    Ok(())
}

/// Every shape: a tuple struct, signed ranges, bools, a nested command, a
/// one-variant enum, a unit variant, a `u64` range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Command)]
struct Aim(#[command(range = -180..=179)] i16, bool);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Command)]
enum Only {
    This {
        #[command(range = 1_000_000..=1_000_999)]
        stamp: u64,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Command)]
enum Turret {
    Hold,
    Fire { aim: Aim, only: Only },
    Reload(#[command(range = 1..=5)] u32),
}

fn bits<C: Command>(c: &C) -> u64 {
    let mut m = BitMeasurer::new();
    c.clone().serialize(&mut m).unwrap();
    m.bits()
}

fn round_trip<C: Command>(c: &C) -> C {
    let mut w = BitWriter::new();
    c.clone().serialize(&mut w).unwrap();
    let bytes = w.finish();
    let mut r = BitReader::new(&bytes);
    let back = C::read(&mut r).unwrap();
    // Reading into a value through `serialize` gives the same.
    let mut into = back.clone();
    into.serialize(&mut BitReader::new(&bytes)).unwrap();
    assert_eq!(into, back);
    back
}

#[test]
fn the_derived_bits_are_the_hand_written_ones() {
    for order in [
        Order::Stop { unit: 2 },
        Order::Move {
            unit: 3,
            x: 63,
            y: 0,
        },
        Order::Move {
            unit: 0,
            x: 17,
            y: 42,
        },
    ] {
        let mut derived = BitWriter::new();
        order.clone().serialize(&mut derived).unwrap();
        let mut hand = BitWriter::new();
        by_hand(&order, &mut hand).unwrap();
        assert_eq!(derived.finish(), hand.finish(), "{order:?}");
        assert_eq!(round_trip(&order), order);
    }
    assert_eq!(Order::MAX_BITS, 1 + 2 + 6 + 6);
    assert_eq!(bits(&Order::Stop { unit: 1 }), 3);
}

#[test]
fn every_shape_round_trips_in_its_bits() {
    let fire = Turret::Fire {
        aim: Aim(-180, true),
        only: Only::This { stamp: 1_000_999 },
    };
    for t in [Turret::Hold, fire, Turret::Reload(5), Turret::Reload(1)] {
        assert_eq!(round_trip(&t), t);
    }
    // A 2-bit tag; an aim of 9 + 1 bits; a one-variant enum has no tag, its
    // stamp 10 bits.
    assert_eq!(Aim::MAX_BITS, 10);
    assert_eq!(Only::MAX_BITS, 10);
    assert_eq!(Turret::MAX_BITS, 2 + 10 + 10);
    assert_eq!(bits(&Turret::Hold), 2);
    assert_eq!(bits(&Turret::Reload(3)), 2 + 3);
    assert_eq!(
        Turret::schema(),
        "Turret; variant 0..=2; Hold; Fire { aim (Aim; 0 -180..=179, 1 bool), only (Only; variant 0..=0; This { stamp 1000000..=1000999 }) }; Reload { 0 1..=5 }"
    );
}

#[test]
fn values_outside_their_range_are_refused_on_read_and_clamped_on_write() {
    // Variant 3 of three, a unit of 4: written by hand, refused.
    let mut w = BitWriter::new();
    let mut tag = 3u64;
    w.bits(&mut tag, 2).unwrap();
    let bytes = w.finish();
    assert!(matches!(
        Turret::read(&mut BitReader::new(&bytes)),
        Err(BitError::OutOfRange {
            what: "Turret variant",
            ..
        })
    ));
    let mut w = BitWriter::new();
    let (mut tag, mut count) = (2u64, 7u64);
    w.bits(&mut tag, 2).unwrap();
    w.bits(&mut count, 3).unwrap();
    let bytes = w.finish();
    assert!(matches!(
        Turret::read(&mut BitReader::new(&bytes)),
        Err(BitError::OutOfRange { what: "0", .. })
    ));
    // A caller's value beyond the range goes out clamped, and decodes.
    assert_eq!(round_trip(&Turret::Reload(99)), Turret::Reload(5));
    assert_eq!(round_trip(&Aim(500, false)), Aim(179, false));
}

proptest! {
    #[test]
    fn any_bits_read_canonically_or_are_refused(bytes in proptest::collection::vec(any::<u8>(), 0..8)) {
        if let Ok(t) = Turret::read(&mut BitReader::new(&bytes)) {
            // What was read writes back to the bits it came from.
            let mut w = BitWriter::new();
            t.clone().serialize(&mut w).unwrap();
            let again = w.finish();
            let n = again.len();
            prop_assert!(bytes.len() >= n);
            prop_assert_eq!(Turret::read(&mut BitReader::new(&again)), Ok(t));
        }
    }

    #[test]
    fn orders_in_range_round_trip(unit in 0u8..4, x in 0u8..64, y in 0u8..64, moving: bool) {
        let order = if moving { Order::Move { unit, x, y } } else { Order::Stop { unit } };
        prop_assert_eq!(round_trip(&order), order);
        prop_assert!(bits(&order) <= u64::from(Order::MAX_BITS));
    }
}

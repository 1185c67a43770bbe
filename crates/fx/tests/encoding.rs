//! Canonical encoding: byte-exact little-endian layout, checksum = BLAKE3 of
//! the saved-state bytes, exact round trips, and typed errors (never a panic) on
//! short, invalid or trailing input.

use lockstep_fx::{
    ByteCounter, Canonical, Checksum, DecodeError, FrameHasher, Fx, Mark, Mat3, Quat, Sink,
    StateReader, StateWriter, Vec3,
};
use proptest::prelude::*;

fn write_sample<S: lockstep_fx::Sink>(w: &mut StateWriter<S>) {
    w.write_u8(0xab);
    w.write_bool(true);
    w.write_u16(0x0102);
    w.write_u32(0x0304_0506);
    w.write_i32(-2);
    w.write_u64(0x0708_090a_0b0c_0d0e);
    w.write_fx(Fx::NEG_ONE);
    w.write_bytes(b"hi");
    w.write_vec3(Vec3::from_ints(1, 2, 3));
    w.write_quat(Quat::IDENTITY);
}

/// Keeps the bytes and counts the labels it is given; reads labels when
/// `READS`.
#[derive(Default)]
struct LabelCount<const READS: bool> {
    bytes: Vec<u8>,
    labels: u32,
}

impl<const READS: bool> Sink for LabelCount<READS> {
    const READS_MARKS: bool = READS;

    fn put(&mut self, bytes: &[u8]) {
        self.bytes.extend_from_slice(bytes);
    }

    fn mark(&mut self, _mark: Mark<'_>) {
        self.labels += 1;
    }
}

#[test]
fn only_a_sink_that_reads_labels_is_given_them() {
    fn labelled<S: Sink>(w: &mut StateWriter<S>) {
        w.entity("body", &[3]);
        w.field("position", &Vec3::from_ints(1, 2, 3));
        w.label::<u32>("count");
        w.write_u32(7);
    }
    let mut reads = StateWriter::new(LabelCount::<true>::default());
    labelled(&mut reads);
    let mut ignores = StateWriter::new(LabelCount::<false>::default());
    labelled(&mut ignores);
    assert_eq!(reads.sink().labels, 3);
    // A sink that says it reads none is never given one, in a state of any
    // size: it cannot depend on them by mistake.
    assert_eq!(ignores.sink().labels, 0);
    assert_eq!(reads.sink().bytes, ignores.sink().bytes);
}

#[test]
fn layout_is_little_endian_field_by_field() {
    let mut w = StateWriter::buffer();
    write_sample(&mut w);
    let b = w.bytes();
    assert_eq!(
        &b[..24],
        &[
            0xab, 1, 0x02, 0x01, 0x06, 0x05, 0x04, 0x03, 0xfe, 0xff, 0xff, 0xff, 0x0e, 0x0d, 0x0c,
            0x0b, 0x0a, 0x09, 0x08, 0x07, 0, 0, 0, 0
        ]
    );
    // Fx::NEG_ONE = -2^32: low word 0, high word -1.
    assert_eq!(&b[24..28], &[0xff, 0xff, 0xff, 0xff]);
    // Length prefix is a u32, never a usize.
    assert_eq!(&b[28..34], &[2, 0, 0, 0, b'h', b'i']);
    assert_eq!(b.len(), 34 + 24 + 32);

    let mut counter = StateWriter::new(ByteCounter::default());
    write_sample(&mut counter);
    assert_eq!(counter.sink().0, b.len() as u64);
}

#[test]
fn checksum_is_blake3_of_the_saved_bytes() {
    let mut buf = StateWriter::buffer();
    let mut hash = StateWriter::hasher();
    write_sample(&mut buf);
    write_sample(&mut hash);
    let sum = hash.checksum();
    assert_eq!(sum, Checksum::of(buf.bytes()));
    assert_eq!(sum.to_string().len(), 64, "hex form is 64 digits: {sum}");
    assert_eq!(sum.to_string().parse::<Checksum>(), Ok(sum));
    assert!(sum.to_string().starts_with(&sum.short().to_string()));
    assert!("xyz".parse::<Checksum>().is_err());
    assert!("zz".repeat(32).parse::<Checksum>().is_err());
    // BLAKE3 of the empty input (from the BLAKE3 test vectors).
    assert_eq!(
        StateWriter::hasher().checksum().to_string(),
        "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"
    );
}

#[test]
fn reads_back_what_was_written() {
    let mut w = StateWriter::buffer();
    write_sample(&mut w);
    let mut r = StateReader::new(w.bytes());
    assert_eq!(r.read_u8(), Ok(0xab));
    assert_eq!(r.read_bool(), Ok(true));
    assert_eq!(r.read_u16(), Ok(0x0102));
    assert_eq!(r.read_u32(), Ok(0x0304_0506));
    assert_eq!(r.read_i32(), Ok(-2));
    assert_eq!(r.read_u64(), Ok(0x0708_090a_0b0c_0d0e));
    assert_eq!(r.read_fx(), Ok(Fx::NEG_ONE));
    assert_eq!(r.read_bytes(), Ok(&b"hi"[..]));
    assert_eq!(r.read_vec3(), Ok(Vec3::from_ints(1, 2, 3)));
    assert_eq!(r.read_quat(), Ok(Quat::IDENTITY));
    assert_eq!(r.finish(), Ok(()));
}

#[test]
fn errors_say_where() {
    let mut r = StateReader::new(&[1, 2, 3]);
    assert_eq!(
        r.read_u32(),
        Err(DecodeError::UnexpectedEnd {
            offset: 0,
            needed: 1
        })
    );
    let mut r = StateReader::new(&[7]);
    assert_eq!(
        r.read_bool(),
        Err(DecodeError::Invalid {
            offset: 0,
            what: "bool"
        })
    );
    // A length claiming more than the input holds is rejected before any
    // allocation.
    let mut r = StateReader::new(&[0xff, 0xff, 0xff, 0xff, 0]);
    assert!(matches!(
        r.read_bytes(),
        Err(DecodeError::Invalid { offset: 0, .. })
    ));
    assert_eq!(
        Fx::from_canonical(&[0; 9]),
        Err(DecodeError::TrailingBytes {
            offset: 8,
            extra: 1
        })
    );
    let e = DecodeError::UnexpectedEnd {
        offset: 5,
        needed: 3,
    };
    assert_eq!(e.to_string(), "input ends at byte 5: 3 more byte(s) needed");
}

#[test]
fn canonical_types_round_trip() {
    let m = Mat3::from_quat(Quat::from_wxyz(Fx::HALF, Fx::HALF, Fx::HALF, Fx::HALF));
    assert_eq!(Mat3::from_canonical(&m.to_canonical()), Ok(m));
    assert_eq!(m.checksum(), Checksum::of(&m.to_canonical()));
    let c = Checksum::of(b"x");
    assert_eq!(Checksum::from_canonical(&c.to_canonical()), Ok(c));
}

proptest! {
    #[test]
    fn reader_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64), ops in proptest::collection::vec(0u8..9, 0..16)) {
        let mut r = StateReader::new(&bytes);
        for op in ops {
            let _ = match op {
                0 => r.read_u8().map(|_| ()),
                1 => r.read_bool().map(|_| ()),
                2 => r.read_u16().map(|_| ()),
                3 => r.read_u32().map(|_| ()),
                4 => r.read_u64().map(|_| ()),
                5 => r.read_bytes().map(|_| ()),
                6 => r.read_vec3().map(|_| ()),
                7 => r.read_quat().map(|_| ()),
                _ => r.read_len(8).map(|_| ()),
            };
        }
    }

    #[test]
    fn vec3_round_trips(x in any::<i64>(), y in any::<i64>(), z in any::<i64>()) {
        let v = Vec3::new(Fx::from_bits(x), Fx::from_bits(y), Fx::from_bits(z));
        prop_assert_eq!(Vec3::from_canonical(&v.to_canonical()), Ok(v));
    }
}

/// The bytes of encoding each item alone, one after another.
fn one_by_one<T: Canonical>(items: &[T]) -> Vec<u8> {
    let mut w = StateWriter::buffer();
    for item in items {
        item.encode(&mut w);
    }
    w.into_inner()
}

/// The bytes of `Vec<T>`'s encoding without its length prefix.
fn as_vec<T: Canonical + Clone>(items: &[T]) -> Vec<u8> {
    items.to_vec().to_canonical()[4..].to_vec()
}

proptest! {
    /// Integers and `Fx` encode a slice in blocks; the bytes are those of
    /// encoding the items one by one, on both sides of a block's size.
    #[test]
    fn slices_encode_as_their_items_one_by_one(
        bytes in proptest::collection::vec(any::<u8>(), 0..1500),
        words in proptest::collection::vec(any::<i16>(), 0..700),
        ints in proptest::collection::vec(any::<u32>(), 0..300),
        longs in proptest::collection::vec(any::<i64>(), 0..200),
        flags in proptest::collection::vec(any::<bool>(), 0..40),
    ) {
        prop_assert_eq!(as_vec(&bytes), one_by_one(&bytes));
        prop_assert_eq!(as_vec(&words), one_by_one(&words));
        prop_assert_eq!(as_vec(&ints), one_by_one(&ints));
        prop_assert_eq!(as_vec(&longs), one_by_one(&longs));
        let fx: Vec<Fx> = longs.iter().map(|&v| Fx::from_bits(v)).collect();
        prop_assert_eq!(as_vec(&fx), one_by_one(&fx));
        prop_assert_eq!(as_vec(&flags), one_by_one(&flags));
        let array: [u32; 3] = [ints.first().copied().unwrap_or(1), 2, 3];
        prop_assert_eq!(array.to_canonical(), one_by_one(&array));
    }
}

proptest! {
    /// The hashing sink buffers writes; whatever their sizes, the digest is
    /// BLAKE3 of the concatenation.
    #[test]
    fn buffered_hash_equals_one_shot(sizes in proptest::collection::vec(0usize..40_000, 0..8)) {
        let mut hash = StateWriter::hasher();
        let mut all = Vec::new();
        for (i, n) in sizes.into_iter().enumerate() {
            let chunk: Vec<u8> = (0..n).map(|j| (i * 31 + j) as u8).collect();
            hash.write_raw(&chunk);
            all.extend_from_slice(&chunk);
            prop_assert_eq!(hash.checksum(), Checksum::of(&all));
        }
    }
}

#[test]
fn per_seat_lists_carry_a_byte_count_and_refuse_what_the_bytes_cannot_hold() {
    use lockstep_fx::PerSeat;
    let lists = PerSeat(vec![vec![1u32, 2], vec![], vec![7]]);
    let bytes = lists.to_canonical();
    // The count, then each list's u32 length and items.
    assert_eq!(bytes[0], 3);
    assert_eq!(bytes.len(), 1 + (4 + 8) + 4 + (4 + 4));
    assert_eq!(PerSeat::<Vec<u32>>::from_canonical(&bytes), Ok(lists));
    // A count the rest cannot hold is refused before allocating.
    assert!(PerSeat::<Vec<u32>>::from_canonical(&[200, 0, 0, 0, 0]).is_err());
    for cut in 0..bytes.len() {
        assert!(PerSeat::<Vec<u32>>::from_canonical(&bytes[..cut]).is_err());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Whatever the states hashed before, a frame hasher's checksum is
    /// BLAKE3 of this state's bytes: states that grow, shrink and change a
    /// few bytes at a time, around the 16 KiB pieces it caches.
    #[test]
    fn a_frame_hasher_always_gives_plain_blake3(
        start in 0usize..100_000,
        edits in proptest::collection::vec((0usize..100_000, any::<u8>(), -20_000i32..20_000), 1..12),
    ) {
        let mut hasher = FrameHasher::new();
        let mut state = vec![0x5a; start];
        for (at, byte, grow) in edits {
            let len = (state.len() as i64 + i64::from(grow)).clamp(0, 120_000) as usize;
            state.resize(len, byte);
            if let Some(b) = state.get_mut(at) {
                *b = byte;
            }
            let c = hasher.checksum(|w| w.write_raw(&state));
            prop_assert_eq!(c, Checksum::of(&state));
        }
    }
}

//! Canonical state encoding: explicit little-endian field bytes in a defined
//! order, written to a [`Sink`] that is either a [`HashSink`] (the per-frame
//! BLAKE3 checksum, no allocation) or a byte buffer (an exact saved state).
//!
//! Invariants:
//! - Every value is written as fixed-width little-endian bytes chosen by the
//!   caller's method (`u32`, `i64`, ...), never from memory layout, and there is
//!   no `usize` method: lengths go through [`StateWriter::write_len`], which
//!   writes a `u32`. The same call sequence therefore yields the same bytes on
//!   every target, big- or little-endian, 32- or 64-bit.
//! - The checksum of a state is BLAKE3 of exactly the bytes its saved state holds,
//!   so a checksum can always be recomputed from a saved state.
//! - [`StateReader`] is safe on untrusted bytes: every read is bounds-checked and
//!   returns a typed [`DecodeError`] carrying the byte offset; nothing panics.
//! - The generic encodings are fixed here once: a `Vec<T>` is a `u32` length
//!   then its items, an `Option<T>` a `0`/`1` byte then the value if any, an
//!   array `[T; N]` its `N` items with no length. `#[derive(Canonical)]`
//!   (the `lockstep-derive` crate) composes these and nothing else.

use crate::{Checksum, Fx, Mat3, Quat, Rng, Vec2, Vec3};

/// Where a [`StateWriter`] puts its bytes.
///
/// A sink is `Send` so that a large state may write the first part of a
/// long run of records into it on a thread of `fork_join`'s pool while the
/// other parts are written into plain buffers elsewhere, then put after it
/// in order (see [`Sink::READS_MARKS`]).
pub trait Sink: Send {
    /// Whether this sink reads labels: only then does a [`StateWriter`]
    /// call [`Sink::mark`] at all, and only then is a state written in one
    /// run (a state writes a long run of records in parts on several
    /// threads only into a sink that reads none, as the parts written into
    /// plain buffers carry no labels). The bytes are the same either way.
    /// Every sink says which it is, so a sink that maps fields cannot get
    /// its labels in a small state and lose them in a large one.
    const READS_MARKS: bool;

    /// Appends `bytes`.
    fn put(&mut self, bytes: &[u8]);

    /// Labels the bytes that follow (see [`Mark`]); called only on a sink
    /// whose [`Sink::READS_MARKS`] is true (the sinks that map fields for
    /// diagnosis), so the others pay nothing for labels.
    #[inline]
    fn mark(&mut self, mark: Mark<'_>) {
        let _ = mark;
    }
}

/// A label a state encoding gives the bytes that follow it, so a diagnosis
/// tool can say which entity and field two states disagree on. Labels are
/// not part of the encoding: the bytes, and so the checksum, are the same
/// with or without them.
///
/// Entities nest: an entity mark opens an entity inside the one open, and
/// [`Mark::EndEntity`] closes it, so the fields written after a list of
/// entities belong to the entity (and the field) around the list again. An
/// encoder that never ends its entities (each mark then simply follows the
/// last) labels as before.
#[derive(Debug, Clone, Copy)]
pub enum Mark<'a> {
    /// The fields that follow belong to this entity, e.g. `("body", [17])`
    /// or `("contact", [3, 9])`, until it ends or the next entity mark.
    Entity {
        /// What kind of entity.
        kind: &'static str,
        /// Its identity within that kind.
        ids: &'a [u32],
    },
    /// The bytes that follow, up to the next mark, hold this field.
    Field {
        /// The field's name.
        name: &'static str,
        /// Renders the field's bytes as text.
        show: fn(&[u8]) -> String,
    },
    /// The entity opened last ends: what follows belongs to the entity and
    /// the field that were open when it began.
    EndEntity,
    /// The next four bytes are a list's length ([`StateWriter::write_len`]):
    /// a field that holds only them (its items carry labels of their own)
    /// is shown as that number.
    Length,
}

/// Renders bytes written by `T::encode` as `T`'s `Debug` text, or as hex if
/// they do not decode.
fn show<T: Canonical + core::fmt::Debug>(bytes: &[u8]) -> String {
    match T::from_canonical(bytes) {
        Ok(v) => format!("{v:?}"),
        Err(_) => bytes.iter().map(|b| format!("{b:02x}")).collect(),
    }
}

/// Bytes a [`HashSink`] gathers before handing them to BLAKE3: 64 chunks of
/// 1 KiB. BLAKE3 hashes whole chunks several at a time with SIMD (16 at once
/// with AVX-512), but `Hasher::update` always keeps the last chunk it is
/// given and compresses it on its own, block by block: one chunk in 16 with
/// a 16 KiB buffer, which cost a third of the hashing time on x86_64 with
/// AVX2; one in 64 here.
const HASH_BUFFER: usize = 64 * 1024;

/// A BLAKE3 hasher behind an inline buffer. State is written a few bytes at a
/// time; hashing each small write on its own would cost more than the hash,
/// so writes are gathered and hashed many chunks at a time. Never allocates.
#[derive(Clone)]
pub struct HashSink {
    hasher: blake3::Hasher,
    buf: [u8; HASH_BUFFER],
    len: usize,
}

impl HashSink {
    /// An empty hasher.
    pub fn new() -> HashSink {
        HashSink {
            hasher: blake3::Hasher::new(),
            buf: [0; HASH_BUFFER],
            len: 0,
        }
    }

    /// The digest of everything written so far (the sink stays usable).
    pub fn checksum(&self) -> Checksum {
        let mut h = self.hasher.clone();
        h.update(&self.buf[..self.len]);
        Checksum::from_bytes(*h.finalize().as_bytes())
    }
}

impl Default for HashSink {
    fn default() -> HashSink {
        HashSink::new()
    }
}

impl core::fmt::Debug for HashSink {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("HashSink")
            .field("buffered", &self.len)
            .finish_non_exhaustive()
    }
}

impl Sink for HashSink {
    const READS_MARKS: bool = false;

    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        if bytes.len() <= HASH_BUFFER - self.len {
            self.buf[self.len..self.len + bytes.len()].copy_from_slice(bytes);
            self.len += bytes.len();
            return;
        }
        self.hasher.update(&self.buf[..self.len]);
        self.len = 0;
        if bytes.len() >= HASH_BUFFER {
            self.hasher.update(bytes);
        } else {
            self.buf[..bytes.len()].copy_from_slice(bytes);
            self.len = bytes.len();
        }
    }
}

impl Sink for Vec<u8> {
    const READS_MARKS: bool = false;

    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
}

/// Counts bytes without storing them (to size a saved state or a report).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct ByteCounter(pub u64);

impl Sink for ByteCounter {
    const READS_MARKS: bool = false;

    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        self.0 = self.0.wrapping_add(bytes.len() as u64);
    }
}

/// Writes state fields canonically into a [`Sink`].
#[derive(Debug, Clone)]
pub struct StateWriter<S: Sink> {
    sink: S,
}

impl StateWriter<HashSink> {
    /// A writer that hashes what it is given, for a [`Checksum`].
    pub fn hasher() -> Self {
        StateWriter::new(HashSink::new())
    }

    /// The BLAKE3 checksum of everything written so far.
    pub fn checksum(&self) -> Checksum {
        self.sink.checksum()
    }
}

impl StateWriter<Vec<u8>> {
    /// A writer that records into a byte buffer, for an exact saved state.
    pub fn buffer() -> Self {
        StateWriter::new(Vec::new())
    }

    /// The bytes written so far.
    pub fn bytes(&self) -> &[u8] {
        &self.sink
    }
}

impl<S: Sink> StateWriter<S> {
    /// A writer into `sink`.
    pub fn new(sink: S) -> Self {
        StateWriter { sink }
    }

    /// Gives back the sink.
    pub fn into_inner(self) -> S {
        self.sink
    }

    /// The sink, e.g. to read a [`ByteCounter`].
    pub fn sink(&self) -> &S {
        &self.sink
    }

    /// Starts the fields of an entity (a [`Mark::Entity`] label).
    #[inline]
    pub fn entity(&mut self, kind: &'static str, ids: &[u32]) {
        if S::READS_MARKS {
            self.sink.mark(Mark::Entity { kind, ids });
        }
    }

    /// Ends the entity begun last (a [`Mark::EndEntity`] label): the
    /// fields written next belong to the entity around it again.
    #[inline]
    pub fn end_entity(&mut self) {
        if S::READS_MARKS {
            self.sink.mark(Mark::EndEntity);
        }
    }

    /// Writes `value` as a named field: a [`Mark::Field`] label, then the
    /// value's canonical bytes.
    #[inline]
    pub fn field<T: Canonical + core::fmt::Debug>(&mut self, name: &'static str, value: &T) {
        self.label::<T>(name);
        value.encode(self);
    }

    /// Labels the bytes that follow as field `name` without writing them,
    /// for a field written by a sequence of calls.
    #[inline]
    pub fn label<T: Canonical + core::fmt::Debug>(&mut self, name: &'static str) {
        if S::READS_MARKS {
            self.sink.mark(Mark::Field {
                name,
                show: show::<T>,
            });
        }
    }

    /// Writes raw bytes as they are (no length prefix).
    #[inline]
    pub fn write_raw(&mut self, bytes: &[u8]) {
        self.sink.put(bytes);
    }

    /// Writes one byte.
    #[inline]
    pub fn write_u8(&mut self, v: u8) {
        self.sink.put(&[v]);
    }

    /// Writes a `bool` as one byte, `0` or `1`.
    #[inline]
    pub fn write_bool(&mut self, v: bool) {
        self.write_u8(v as u8);
    }

    /// Writes a `u16`, little-endian.
    #[inline]
    pub fn write_u16(&mut self, v: u16) {
        self.sink.put(&v.to_le_bytes());
    }

    /// Writes a `u32`, little-endian.
    #[inline]
    pub fn write_u32(&mut self, v: u32) {
        self.sink.put(&v.to_le_bytes());
    }

    /// Writes a `u64`, little-endian.
    #[inline]
    pub fn write_u64(&mut self, v: u64) {
        self.sink.put(&v.to_le_bytes());
    }

    /// Writes an `i32`, little-endian two's complement.
    #[inline]
    pub fn write_i32(&mut self, v: i32) {
        self.sink.put(&v.to_le_bytes());
    }

    /// Writes an `i8` as one two's complement byte.
    #[inline]
    pub fn write_i8(&mut self, v: i8) {
        self.sink.put(&v.to_le_bytes());
    }

    /// Writes an `i16`, little-endian two's complement.
    #[inline]
    pub fn write_i16(&mut self, v: i16) {
        self.sink.put(&v.to_le_bytes());
    }

    /// Writes an `i64`, little-endian two's complement.
    #[inline]
    pub fn write_i64(&mut self, v: i64) {
        self.sink.put(&v.to_le_bytes());
    }

    /// Writes a collection length as a `u32`. A canonical state never holds a
    /// collection of more than `u32::MAX` items (i686 could not even address
    /// it); passing a larger length is a caller bug, and it is written as
    /// `u32::MAX`, so the encoding then no longer decodes to the same value.
    #[inline]
    pub fn write_len(&mut self, len: usize) {
        if S::READS_MARKS {
            self.sink.mark(Mark::Length);
        }
        self.write_u32(u32::try_from(len).unwrap_or(u32::MAX));
    }

    /// Writes a length-prefixed byte string.
    #[inline]
    pub fn write_bytes(&mut self, bytes: &[u8]) {
        self.write_len(bytes.len());
        self.sink.put(bytes);
    }

    /// Writes an [`Fx`] as its 8 raw bytes.
    #[inline]
    pub fn write_fx(&mut self, v: Fx) {
        self.write_i64(v.to_bits());
    }

    /// Writes a [`Vec2`] as `x`, `y`.
    #[inline]
    pub fn write_vec2(&mut self, v: Vec2) {
        self.write_fx(v.x);
        self.write_fx(v.y);
    }

    /// Writes a [`Vec3`] as `x`, `y`, `z`.
    #[inline]
    pub fn write_vec3(&mut self, v: Vec3) {
        let mut b = [0u8; 24];
        b[0..8].copy_from_slice(&v.x.to_bits().to_le_bytes());
        b[8..16].copy_from_slice(&v.y.to_bits().to_le_bytes());
        b[16..24].copy_from_slice(&v.z.to_bits().to_le_bytes());
        self.sink.put(&b);
    }

    /// Writes a [`Quat`] as `w`, `x`, `y`, `z`.
    #[inline]
    pub fn write_quat(&mut self, q: Quat) {
        let mut b = [0u8; 32];
        b[0..8].copy_from_slice(&q.w.to_bits().to_le_bytes());
        b[8..16].copy_from_slice(&q.x.to_bits().to_le_bytes());
        b[16..24].copy_from_slice(&q.y.to_bits().to_le_bytes());
        b[24..32].copy_from_slice(&q.z.to_bits().to_le_bytes());
        self.sink.put(&b);
    }

    /// Writes a [`Mat3`] row by row.
    #[inline]
    pub fn write_mat3(&mut self, m: &Mat3) {
        for row in m.rows {
            self.write_vec3(row);
        }
    }
}

/// Why a [`StateReader`] could not decode its input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The input ended inside a field.
    #[error("input ends at byte {offset}: {needed} more byte(s) needed")]
    UnexpectedEnd {
        /// Byte offset where the field starts.
        offset: u64,
        /// Bytes the field still needs beyond the end.
        needed: u64,
    },
    /// A field holds a value its type does not allow.
    #[error("invalid {what} at byte {offset}")]
    Invalid {
        /// Byte offset of the field.
        offset: u64,
        /// What was being read.
        what: &'static str,
    },
    /// Bytes remain after the last field.
    #[error("{extra} unexpected trailing byte(s) at byte {offset}")]
    TrailingBytes {
        /// Byte offset of the first extra byte.
        offset: u64,
        /// How many bytes remain.
        extra: u64,
    },
}

/// Reads fields written by a [`StateWriter`] back, in the same order.
#[derive(Debug, Clone)]
pub struct StateReader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> StateReader<'a> {
    /// A reader over `bytes`, starting at the first byte.
    pub fn new(bytes: &'a [u8]) -> Self {
        StateReader { bytes, pos: 0 }
    }

    /// Byte offset of the next read.
    pub fn offset(&self) -> u64 {
        self.pos as u64
    }

    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    /// Succeeds only if every byte has been read.
    pub fn finish(&self) -> Result<(), DecodeError> {
        match self.remaining() {
            0 => Ok(()),
            extra => Err(DecodeError::TrailingBytes {
                offset: self.offset(),
                extra: extra as u64,
            }),
        }
    }

    /// Takes the next `n` bytes.
    #[inline]
    pub fn read_raw(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        if n > self.remaining() {
            return Err(DecodeError::UnexpectedEnd {
                offset: self.offset(),
                needed: (n - self.remaining()) as u64,
            });
        }
        let out = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    #[inline]
    fn array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.read_raw(N)?);
        Ok(out)
    }

    /// Reads one byte.
    #[inline]
    pub fn read_u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.array::<1>()?[0])
    }

    /// Reads a `bool`; any byte other than `0` or `1` is [`DecodeError::Invalid`].
    #[inline]
    pub fn read_bool(&mut self) -> Result<bool, DecodeError> {
        let offset = self.offset();
        match self.read_u8()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(DecodeError::Invalid {
                offset,
                what: "bool",
            }),
        }
    }

    /// Reads a little-endian `u16`.
    #[inline]
    pub fn read_u16(&mut self) -> Result<u16, DecodeError> {
        Ok(u16::from_le_bytes(self.array()?))
    }

    /// Reads a little-endian `u32`.
    #[inline]
    pub fn read_u32(&mut self) -> Result<u32, DecodeError> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    /// Reads a little-endian `u64`.
    #[inline]
    pub fn read_u64(&mut self) -> Result<u64, DecodeError> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    /// Reads a little-endian `i32`.
    #[inline]
    pub fn read_i32(&mut self) -> Result<i32, DecodeError> {
        Ok(i32::from_le_bytes(self.array()?))
    }

    /// Reads a two's complement `i8`.
    #[inline]
    pub fn read_i8(&mut self) -> Result<i8, DecodeError> {
        Ok(i8::from_le_bytes(self.array()?))
    }

    /// Reads a little-endian `i16`.
    #[inline]
    pub fn read_i16(&mut self) -> Result<i16, DecodeError> {
        Ok(i16::from_le_bytes(self.array()?))
    }

    /// Reads a little-endian `i64`.
    #[inline]
    pub fn read_i64(&mut self) -> Result<i64, DecodeError> {
        Ok(i64::from_le_bytes(self.array()?))
    }

    /// Reads a length written by [`StateWriter::write_len`], rejecting one that
    /// claims more items than there are bytes left (each item is at least
    /// `min_item_bytes` long), so a hostile length cannot trigger a huge
    /// allocation.
    pub fn read_len(&mut self, min_item_bytes: u32) -> Result<usize, DecodeError> {
        let offset = self.offset();
        let len = self.read_u32()?;
        let need = u64::from(len) * u64::from(min_item_bytes.max(1));
        if need > self.remaining() as u64 {
            return Err(DecodeError::Invalid {
                offset,
                what: "length (longer than the input)",
            });
        }
        Ok(len as usize)
    }

    /// Reads a byte string written by [`StateWriter::write_bytes`].
    pub fn read_bytes(&mut self) -> Result<&'a [u8], DecodeError> {
        let len = self.read_len(1)?;
        self.read_raw(len)
    }

    /// Reads an [`Fx`].
    #[inline]
    pub fn read_fx(&mut self) -> Result<Fx, DecodeError> {
        Ok(Fx::from_bits(self.read_i64()?))
    }

    /// Reads a [`Vec2`].
    #[inline]
    pub fn read_vec2(&mut self) -> Result<Vec2, DecodeError> {
        Ok(Vec2::new(self.read_fx()?, self.read_fx()?))
    }

    /// Reads a [`Vec3`].
    #[inline]
    pub fn read_vec3(&mut self) -> Result<Vec3, DecodeError> {
        Ok(Vec3::new(self.read_fx()?, self.read_fx()?, self.read_fx()?))
    }

    /// Reads a [`Quat`] (`w`, `x`, `y`, `z`).
    #[inline]
    pub fn read_quat(&mut self) -> Result<Quat, DecodeError> {
        let w = self.read_fx()?;
        let x = self.read_fx()?;
        let y = self.read_fx()?;
        let z = self.read_fx()?;
        Ok(Quat::from_wxyz(w, x, y, z))
    }

    /// Reads a [`Mat3`] row by row.
    #[inline]
    pub fn read_mat3(&mut self) -> Result<Mat3, DecodeError> {
        Ok(Mat3::from_rows(
            self.read_vec3()?,
            self.read_vec3()?,
            self.read_vec3()?,
        ))
    }
}

/// A value with a canonical encoding: `encode` writes it, `decode` reads it
/// back exactly, so `decode(encode(x)) == x` and the bytes are the same on every
/// target.
pub trait Canonical: Sized {
    /// A lower bound on the bytes any value's encoding takes. A decoder
    /// refuses a collection length that would need more bytes than remain
    /// (see [`StateReader::read_len`]), so the bound must never exceed a
    /// real encoding's size; `0` (the default) is always safe, but lets a
    /// hostile length reserve up to one item per remaining byte.
    const MIN_BYTES: u32 = 0;

    /// Writes `self`.
    fn encode<S: Sink>(&self, w: &mut StateWriter<S>);

    /// Writes `items` one after another: the bytes of calling
    /// [`encode`](Canonical::encode) on each, in order. Integers override it
    /// to hand the sink whole blocks instead of one value at a time (a
    /// game's grid of a million bytes is one call, not a million).
    fn encode_all<S: Sink>(items: &[Self], w: &mut StateWriter<S>) {
        for item in items {
            item.encode(w);
        }
    }

    /// Reads a value written by `encode`.
    fn decode(r: &mut StateReader<'_>) -> Result<Self, DecodeError>;

    /// The BLAKE3 checksum of the encoding.
    fn checksum(&self) -> Checksum {
        let mut w = StateWriter::hasher();
        self.encode(&mut w);
        w.checksum()
    }

    /// The encoding as bytes (an exact saved state).
    fn to_canonical(&self) -> Vec<u8> {
        let mut w = StateWriter::buffer();
        self.encode(&mut w);
        w.into_inner()
    }

    /// Decodes a whole encoding, rejecting trailing bytes.
    fn from_canonical(bytes: &[u8]) -> Result<Self, DecodeError> {
        let mut r = StateReader::new(bytes);
        let v = Self::decode(&mut r)?;
        r.finish()?;
        Ok(v)
    }
}

/// Writes each item's `SIZE` bytes, as its `encode` would one at a time,
/// gathered into blocks of up to 512 bytes ([`Canonical::encode_all`] for
/// integers and [`Fx`]).
#[inline]
fn write_blocks<T, S: Sink, const SIZE: usize>(
    items: &[T],
    w: &mut StateWriter<S>,
    bytes_of: impl Fn(&T) -> [u8; SIZE],
) {
    const BLOCK: usize = 512;
    let mut block = [0u8; BLOCK];
    for chunk in items.chunks(BLOCK / SIZE) {
        for (bytes, v) in block.chunks_exact_mut(SIZE).zip(chunk) {
            bytes.copy_from_slice(&bytes_of(v));
        }
        w.write_raw(&block[..chunk.len() * SIZE]);
    }
}

macro_rules! canonical_int {
    ($($t:ty => $write:ident, $read:ident;)*) => {$(
        impl Canonical for $t {
            const MIN_BYTES: u32 = core::mem::size_of::<$t>() as u32;
            fn encode<S: Sink>(&self, w: &mut StateWriter<S>) {
                w.$write(*self);
            }
            fn encode_all<S: Sink>(items: &[Self], w: &mut StateWriter<S>) {
                write_blocks(items, w, |v| v.to_le_bytes());
            }
            fn decode(r: &mut StateReader<'_>) -> Result<Self, DecodeError> {
                r.$read()
            }
        }
    )*};
}

canonical_int! {
    u8 => write_u8, read_u8;
    u16 => write_u16, read_u16;
    u32 => write_u32, read_u32;
    u64 => write_u64, read_u64;
    i8 => write_i8, read_i8;
    i16 => write_i16, read_i16;
    i32 => write_i32, read_i32;
    i64 => write_i64, read_i64;
}

impl Canonical for bool {
    const MIN_BYTES: u32 = 1;
    fn encode<S: Sink>(&self, w: &mut StateWriter<S>) {
        w.write_bool(*self);
    }
    fn decode(r: &mut StateReader<'_>) -> Result<Self, DecodeError> {
        r.read_bool()
    }
}

impl Canonical for Fx {
    const MIN_BYTES: u32 = 8;
    fn encode<S: Sink>(&self, w: &mut StateWriter<S>) {
        w.write_fx(*self);
    }
    fn encode_all<S: Sink>(items: &[Self], w: &mut StateWriter<S>) {
        write_blocks(items, w, |v| v.to_bits().to_le_bytes());
    }
    fn decode(r: &mut StateReader<'_>) -> Result<Self, DecodeError> {
        r.read_fx()
    }
}

impl Canonical for Vec2 {
    const MIN_BYTES: u32 = 16;
    fn encode<S: Sink>(&self, w: &mut StateWriter<S>) {
        w.write_vec2(*self);
    }
    fn decode(r: &mut StateReader<'_>) -> Result<Self, DecodeError> {
        r.read_vec2()
    }
}

impl Canonical for Vec3 {
    const MIN_BYTES: u32 = 24;
    fn encode<S: Sink>(&self, w: &mut StateWriter<S>) {
        w.write_vec3(*self);
    }
    fn decode(r: &mut StateReader<'_>) -> Result<Self, DecodeError> {
        r.read_vec3()
    }
}

impl Canonical for Quat {
    const MIN_BYTES: u32 = 32;
    fn encode<S: Sink>(&self, w: &mut StateWriter<S>) {
        w.write_quat(*self);
    }
    fn decode(r: &mut StateReader<'_>) -> Result<Self, DecodeError> {
        r.read_quat()
    }
}

impl Canonical for Mat3 {
    const MIN_BYTES: u32 = 72;
    fn encode<S: Sink>(&self, w: &mut StateWriter<S>) {
        w.write_mat3(self);
    }
    fn decode(r: &mut StateReader<'_>) -> Result<Self, DecodeError> {
        r.read_mat3()
    }
}

impl Canonical for Rng {
    const MIN_BYTES: u32 = 16;
    /// The state word then the increment.
    fn encode<S: Sink>(&self, w: &mut StateWriter<S>) {
        let (state, inc) = self.to_state();
        w.write_u64(state);
        w.write_u64(inc);
    }
    /// Rejects an even increment, which no generator has.
    fn decode(r: &mut StateReader<'_>) -> Result<Self, DecodeError> {
        let state = r.read_u64()?;
        let offset = r.offset();
        let inc = r.read_u64()?;
        if inc & 1 == 0 {
            return Err(DecodeError::Invalid {
                offset,
                what: "rng increment (must be odd)",
            });
        }
        Ok(Rng::from_state(state, inc))
    }
}

impl Canonical for Checksum {
    const MIN_BYTES: u32 = 32;
    fn encode<S: Sink>(&self, w: &mut StateWriter<S>) {
        w.write_raw(self.as_bytes());
    }
    fn decode(r: &mut StateReader<'_>) -> Result<Self, DecodeError> {
        let mut b = [0u8; 32];
        b.copy_from_slice(r.read_raw(32)?);
        Ok(Checksum::from_bytes(b))
    }
}

/// A `u32` length, then the items in order.
impl<T: Canonical> Canonical for Vec<T> {
    const MIN_BYTES: u32 = 4;
    fn encode<S: Sink>(&self, w: &mut StateWriter<S>) {
        w.write_len(self.len());
        T::encode_all(self, w);
    }
    fn decode(r: &mut StateReader<'_>) -> Result<Self, DecodeError> {
        decode_vec(r, u32::MAX)
    }
}

/// Reads a `Vec<T>` written by its [`Canonical`] encoding, refusing a length
/// above `max_len` or one whose items (each at least [`Canonical::MIN_BYTES`]
/// long) cannot fit in the bytes left, before allocating anything.
pub fn decode_vec<T: Canonical>(
    r: &mut StateReader<'_>,
    max_len: u32,
) -> Result<Vec<T>, DecodeError> {
    let offset = r.offset();
    let len = r.read_len(T::MIN_BYTES)?;
    if len as u64 > u64::from(max_len) {
        return Err(DecodeError::Invalid {
            offset,
            what: "length (above the field's maximum)",
        });
    }
    let mut items = Vec::with_capacity(len);
    for _ in 0..len {
        items.push(T::decode(r)?);
    }
    Ok(items)
}

/// One value per seat of a match (at most 255): a `u8` count, then each
/// value under a `seat N` entity label, so a diff names the seat. What a
/// game keeps per seat (selections, held items) derives through it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PerSeat<T>(pub Vec<T>);

impl<T> core::ops::Deref for PerSeat<T> {
    type Target = Vec<T>;
    fn deref(&self) -> &Vec<T> {
        &self.0
    }
}

impl<T> core::ops::DerefMut for PerSeat<T> {
    fn deref_mut(&mut self) -> &mut Vec<T> {
        &mut self.0
    }
}

impl<T: Canonical> Canonical for PerSeat<T> {
    const MIN_BYTES: u32 = 1;
    fn encode<S: Sink>(&self, w: &mut StateWriter<S>) {
        // A match has at most 8 seats: a list past 255 (a game bug) is cut
        // there, and reads back cut.
        w.write_u8(self.0.len().min(usize::from(u8::MAX)) as u8);
        for (seat, item) in self.0.iter().take(usize::from(u8::MAX)).enumerate() {
            w.entity("seat", &[seat as u32]);
            item.encode(w);
        }
    }
    fn decode(r: &mut StateReader<'_>) -> Result<Self, DecodeError> {
        let offset = r.offset();
        let n = usize::from(r.read_u8()?);
        if n.saturating_mul(T::MIN_BYTES as usize) > r.remaining() {
            return Err(DecodeError::Invalid {
                offset,
                what: "seat count (more than the bytes left hold)",
            });
        }
        let mut items = Vec::with_capacity(n);
        for _ in 0..n {
            items.push(T::decode(r)?);
        }
        Ok(PerSeat(items))
    }
}

/// A byte, `0` for `None` or `1` for `Some`, then the value if any.
impl<T: Canonical> Canonical for Option<T> {
    const MIN_BYTES: u32 = 1;
    fn encode<S: Sink>(&self, w: &mut StateWriter<S>) {
        match self {
            None => w.write_u8(0),
            Some(v) => {
                w.write_u8(1);
                v.encode(w);
            }
        }
    }
    fn decode(r: &mut StateReader<'_>) -> Result<Self, DecodeError> {
        let offset = r.offset();
        match r.read_u8()? {
            0 => Ok(None),
            1 => Ok(Some(T::decode(r)?)),
            _ => Err(DecodeError::Invalid {
                offset,
                what: "option tag (must be 0 or 1)",
            }),
        }
    }
}

/// The `N` items in order, with no length (the type fixes it).
impl<T: Canonical, const N: usize> Canonical for [T; N] {
    const MIN_BYTES: u32 = if N > u32::MAX as usize {
        T::MIN_BYTES.saturating_mul(u32::MAX)
    } else {
        T::MIN_BYTES.saturating_mul(N as u32)
    };
    fn encode<S: Sink>(&self, w: &mut StateWriter<S>) {
        T::encode_all(self, w);
    }
    fn decode(r: &mut StateReader<'_>) -> Result<Self, DecodeError> {
        let offset = r.offset();
        let mut items = Vec::with_capacity(N);
        for _ in 0..N {
            items.push(T::decode(r)?);
        }
        // `items` holds exactly `N` values, so this cannot fail; the error
        // only keeps the decoder free of a panic path.
        items.try_into().map_err(|_| DecodeError::Invalid {
            offset,
            what: "array",
        })
    }
}

//! Every datagram on the wire, in four rooms: the clear [`Header`] and the
//! limits (`header.rs`, all that `seal.rs` reads), the fields messages share
//! (`field.rs`), the messages — between seats (`message.rs`) and between a
//! relay and its spectator (`spectate.rs`) — and the whole [`Packet`] with its
//! canonical encode and decode (`codec.rs`). Each type has one `serialize`
//! that writes, reads and measures it (see [`crate::bits`]);
//! `protocol/SPEC.md` draws the same layouts bit by bit.
//!
//! Invariants:
//! - Decoding untrusted bytes never panics: every error is a
//!   [`DecodeError`], and only the canonical encoding of a valid packet
//!   decodes.
//! - Frame numbers travel as their low 16 bits and sequence numbers are 16
//!   bits; [`crate::seq`] restores and orders them across wraparound.
//! - No `usize` on the wire: every length is an explicitly sized field.

mod codec;
mod field;
pub(crate) mod header;
mod message;
mod spectate;

pub use codec::{Message, Packet, Routed};
pub use field::{DecodeError, ShortChecksums};
pub use header::{
    Header, IPV4_UDP_HEADER_BYTES, KIND_VALUES, Kind, MAX_DATAGRAM, PROTOCOL_ID, VERSION,
    header_bytes, peek_seq,
};
pub use message::*;
pub use spectate::*;

/// The largest packet the protocol builds: a sealed datagram adds a
/// [`crate::seal::TAG_BYTES`]-byte tag and must still fit [`MAX_DATAGRAM`].
pub const MAX_PACKET: usize = MAX_DATAGRAM - crate::seal::TAG_BYTES;

/// The most inputs one packet carries (the count field is 8 bits).
pub const MAX_INPUTS_PER_PACKET: u32 = 255;

/// The most short checksums one report carries.
pub const MAX_SHORT_CHECKSUMS: u32 = 4;

/// Bytes of state in every resync chunk but the last.
pub const CHUNK_BYTES: u32 = 1024;

/// The largest resync payload: 65 535 chunks.
pub const MAX_PAYLOAD_BYTES: u32 = CHUNK_BYTES * 65_535;

/// The largest uncompressed state a resync may announce (64 MiB): the
/// engine's one limit on an exact state, [`lockstep_codec::deflate::MAX_STATE_BYTES`].
pub const MAX_STATE_BYTES: u32 = lockstep_codec::deflate::MAX_STATE_BYTES;

/// The most bytes of a snapshot payload one [`SnapshotPart`] carries.
pub const SNAPSHOT_PART_BYTES: u32 = 1100;

/// The most parts one snapshot payload is cut into.
pub const MAX_SNAPSHOT_PARTS: u32 = 64;

/// The bytes of a [`SnapshotPart`] packet before its data: the routed
/// header (7) and the part's fields (6) — what a snapshot stream's rate
/// adds to its payloads for every part, besides the seal's tag and the
/// IP and UDP headers.
pub const SNAPSHOT_PART_HEADER_BYTES: u64 = 13;

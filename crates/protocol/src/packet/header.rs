//! The clear part of every datagram: the kind, the packet number and the
//! routing fields ([`Header`]), readable before (or without) opening a
//! sealed datagram, and the numbers that bound a datagram. `seal.rs` uses
//! this file alone: what it authenticates in clear is exactly these bytes.
//!
//! Invariants: the header of a kind has a fixed length
//! ([`Kind::header_bytes`]); the packet number sits at bits 4–19 of every
//! kind; a kind is 4 bits and value 12 is never one (the lobby's setup
//! messages use it).

use crate::seat::SeatId;

/// The protocol id every handshake starts with ("LKSP" read as big-endian).
pub const PROTOCOL_ID: u32 = 0x4C4B_5350;

/// The wire-format version in the handshake.
pub const VERSION: u8 = 10;

/// Bytes of IPv4 (20) and UDP (8) header each datagram costs on the wire
/// beyond its payload: what a bandwidth budget (a 28.8 kbit/s modem) has
/// to count.
pub const IPV4_UDP_HEADER_BYTES: u64 = 28;

/// The largest datagram the decoder accepts, in bytes (fits a 1 280-byte IPv6
/// minimum MTU with room for IP and UDP headers).
pub const MAX_DATAGRAM: usize = 1200;

/// Bytes of the clear header of a packet whose kind is `kind` (its first
/// four bits), `None` for a value that is no kind. See [`Kind::header_bytes`].
pub fn header_bytes(kind: u8) -> Option<usize> {
    Kind::from_wire(kind).map(Kind::header_bytes)
}

/// The 16-bit packet number every packet carries right after its kind
/// (bits 4–19), read without decoding the rest; `None` if too short.
pub fn peek_seq(bytes: &[u8]) -> Option<u16> {
    let b = bytes.get(..3)?;
    Some(u16::from(b[0] >> 4) | u16::from(b[1]) << 4 | u16::from(b[2] & 0x0f) << 12)
}

/// What a runtime may read of a datagram before (or without) opening it:
/// the fields of the clear header that say where it belongs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// The packet's kind.
    pub kind: Kind,
    /// The low 16 bits of its packet number.
    pub seq: u16,
    /// The seat it names (none in a [`SpectateHello`](super::SpectateHello)).
    pub seat: Option<SeatId>,
}

impl Header {
    /// Reads the clear header of `bytes`, sealed or not; `None` if they
    /// are too short or of no kind. Nothing read here is authenticated
    /// until the datagram opens.
    pub fn peek(bytes: &[u8]) -> Option<Header> {
        let kind = Kind::from_wire(*bytes.first()? & 0x0f)?;
        let seq = peek_seq(bytes)?;
        let seat = match kind {
            Kind::SpectateHello => None,
            _ => Some(SeatId((*bytes.get(2)? >> 4) & 0x07)),
        };
        Some(Header { kind, seq, seat })
    }
}

/// The kind of a packet, its first 4 bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Kind {
    /// [`Hello`](super::Hello).
    Hello = 0,
    /// [`InputsMsg`](super::InputsMsg).
    Inputs = 1,
    /// [`ChecksumMsg`](super::ChecksumMsg).
    Checksum = 2,
    /// [`ResyncRequest`](super::ResyncRequest).
    ResyncRequest = 3,
    /// [`ResyncChunk`](super::ResyncChunk).
    ResyncChunk = 4,
    /// [`ResyncAck`](super::ResyncAck).
    ResyncAck = 5,
    /// [`Disconnect`](super::Disconnect).
    Disconnect = 6,
    /// [`SeatDrop`](super::SeatDrop) and [`SeatReturn`](super::SeatReturn): a seat leaving or coming back.
    Seat = 7,
    /// [`SpectateHello`](super::SpectateHello).
    SpectateHello = 8,
    /// [`Feed`](super::Feed).
    Feed = 9,
    /// [`FeedAck`](super::FeedAck).
    FeedAck = 10,
    /// [`SnapshotPart`](super::SnapshotPart) and [`SnapshotAck`](super::SnapshotAck): the snapshot stream.
    Snapshot = 11,
    /// [`Timing`](super::Timing). (12 is no kind: the match-setup messages of
    /// `lockstep-lobby` start with a byte whose low four bits read 12.)
    Timing = 13,
    /// [`Evidence`](super::Evidence) and [`Invalid`](super::Invalid): what the seats tell each other about
    /// the match's integrity.
    Integrity = 14,
}

/// Kind values the 4-bit field can hold: counters by kind have this many
/// slots.
pub const KIND_VALUES: usize = 16;

impl Kind {
    /// The kind whose wire value is `value`, if any.
    pub fn from_wire(value: u8) -> Option<Kind> {
        Kind::ALL.iter().copied().find(|k| *k as u8 == value)
    }

    /// Bytes of the packet's clear header: the kind, the packet number and
    /// the routing fields, padded to a byte boundary. A sealed datagram
    /// leaves these in clear (as associated data) and encrypts the rest.
    pub const fn header_bytes(self) -> usize {
        match self {
            // kind 4 + seq 16 + seat 3, padded.
            Kind::Hello => 3,
            // kind 4 + seq 16, padded.
            Kind::SpectateHello => 3,
            // kind 4 + seq 16 + seat 3 + token 32, padded.
            _ => 7,
        }
    }

    /// Every kind, in wire order.
    pub const ALL: [Kind; 14] = [
        Kind::Hello,
        Kind::Inputs,
        Kind::Checksum,
        Kind::ResyncRequest,
        Kind::ResyncChunk,
        Kind::ResyncAck,
        Kind::Disconnect,
        Kind::Seat,
        Kind::SpectateHello,
        Kind::Feed,
        Kind::FeedAck,
        Kind::Snapshot,
        Kind::Timing,
        Kind::Integrity,
    ];

    /// A short lowercase name (file names, reports).
    pub const fn name(self) -> &'static str {
        match self {
            Kind::Hello => "hello",
            Kind::Inputs => "inputs",
            Kind::Checksum => "checksum",
            Kind::ResyncRequest => "resync_request",
            Kind::ResyncChunk => "resync_chunk",
            Kind::ResyncAck => "resync_ack",
            Kind::Disconnect => "disconnect",
            Kind::Seat => "seat",
            Kind::SpectateHello => "spectate_hello",
            Kind::Feed => "feed",
            Kind::FeedAck => "feed_ack",
            Kind::Snapshot => "snapshot",
            Kind::Timing => "timing",
            Kind::Integrity => "integrity",
        }
    }
}

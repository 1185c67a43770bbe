//! A whole datagram: [`Packet`] (a handshake or a [`Routed`] message), its
//! kind dispatch, and the canonical encode and decode.
//!
//! Invariants:
//! - [`Packet::decode`] is safe on untrusted bytes: it refuses empty and
//!   oversized datagrams, checks every range, and returns a typed
//!   [`DecodeError`]; it never panics and allocates at most a few times the
//!   datagram's size.
//! - Encoding is canonical: a decoder re-encodes what it read and refuses the
//!   datagram unless the bytes are identical, so each value has exactly one
//!   encoding (no stray padding bits, no "changed" flag on an unchanged input,
//!   no trailing bytes).

use super::field::{DecodeError, ser_player};
use super::header::{Kind, MAX_DATAGRAM};
use super::message::*;
use super::spectate::*;
use crate::bits::{BitError, BitMeasurer, BitReader, BitStream, BitWriter};
use crate::input::Input;
use crate::seat::SeatId;

/// A datagram.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Packet<I> {
    /// Handshake between two seats (kind 0).
    Hello(Hello),
    /// Handshake between a spectator and the seat relaying to it (kind 8).
    SpectateHello(SpectateHello),
    /// Everything after a handshake (kinds 1–7, 9–11, 13 and 14).
    Routed(Routed<I>),
}

/// A post-handshake packet: header plus one message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Routed<I> {
    /// The sender's seat.
    pub sender: SeatId,
    /// The receiver's session token.
    pub token: u32,
    /// The sender's packet sequence number toward this receiver.
    pub seq: u16,
    /// The message.
    pub message: Message<I>,
}

/// The messages after the handshake.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message<I> {
    /// Kind 1: redundant inputs, the input ack and short checksums.
    Inputs(InputsMsg<I>),
    /// Kind 2: one frame's full checksum.
    Checksum(ChecksumMsg),
    /// Kind 3: a drifted peer asks the authority for its state.
    ResyncRequest(ResyncRequest),
    /// Kind 4: one fragment of a state transfer.
    ResyncChunk(ResyncChunk),
    /// Kind 5: which fragments of a transfer arrived.
    ResyncAck(ResyncAck),
    /// Kind 6: the sender leaves the session.
    Disconnect(Disconnect),
    /// Kind 7, variant 0: the sender has dropped a seat that went silent or
    /// left, and says how far it holds that seat's inputs (with the inputs),
    /// so the remaining peers agree on the seat's last frame.
    SeatDrop(SeatDrop<I>),
    /// Kind 7, variant 1: a dropped seat returns (its restarted process
    /// rejoins) and plays again from a frame the host chose.
    SeatReturn(SeatReturn),
    /// Kind 9: a relay's released frames (every seat's inputs) and settled
    /// short checksums, to a spectator.
    Feed(Feed<I>),
    /// Kind 10: a spectator's ack of the feed.
    FeedAck(FeedAck),
    /// Kind 11, variant 0: one part of a compressed snapshot, from the
    /// authority to a peer that fell back to snapshots, or from a relay to
    /// a spectator watching snapshots.
    SnapshotPart(SnapshotPart),
    /// Kind 11, variant 1: the snapshot receiver's ack, which also asks
    /// for the stream and ends it.
    SnapshotAck(SnapshotAck),
    /// Kind 13: clock synchronization (timestamps, echoes and the sender's
    /// newest tick) and the rollback input delay the peers agree on.
    Timing(Timing),
    /// Kind 14, variant 0: in a dispute (a desync no strict majority
    /// decides), what the sender found when it stepped the disputed frames
    /// again from the last agreed state.
    Evidence(Evidence),
    /// Kind 14, variant 1: the match is invalid from a frame on (every
    /// seat stops), or plays on unchecked.
    Invalid(Invalid),
}

impl<I> Message<I> {
    /// The message's kind.
    pub const fn kind(&self) -> Kind {
        match self {
            Message::Inputs(_) => Kind::Inputs,
            Message::Checksum(_) => Kind::Checksum,
            Message::ResyncRequest(_) => Kind::ResyncRequest,
            Message::ResyncChunk(_) => Kind::ResyncChunk,
            Message::ResyncAck(_) => Kind::ResyncAck,
            Message::Disconnect(_) => Kind::Disconnect,
            Message::SeatDrop(_) | Message::SeatReturn(_) => Kind::Seat,
            Message::Feed(_) => Kind::Feed,
            Message::FeedAck(_) => Kind::FeedAck,
            Message::SnapshotPart(_) | Message::SnapshotAck(_) => Kind::Snapshot,
            Message::Timing(_) => Kind::Timing,
            Message::Evidence(_) | Message::Invalid(_) => Kind::Integrity,
        }
    }
}

impl<I: Input> Packet<I> {
    /// The packet's kind.
    pub const fn kind(&self) -> Kind {
        match self {
            Packet::Hello(_) => Kind::Hello,
            Packet::SpectateHello(_) => Kind::SpectateHello,
            Packet::Routed(r) => r.message.kind(),
        }
    }

    /// Sets the packet number the header carries.
    pub fn set_seq(&mut self, seq: u16) {
        match self {
            Packet::Hello(h) => h.seq = seq,
            Packet::SpectateHello(h) => h.seq = seq,
            Packet::Routed(r) => r.seq = seq,
        }
    }

    /// The seat the header names: the sender's, except in a spectator's
    /// packets to its relay, where it is the relay's (the seat watched
    /// through). A [`SpectateHello`] names none.
    pub const fn seat(&self) -> Option<SeatId> {
        match self {
            Packet::Hello(h) => Some(h.sender),
            Packet::SpectateHello(_) => None,
            Packet::Routed(r) => Some(r.sender),
        }
    }

    /// Serializes the whole packet: kind, then the kind's fields.
    pub fn serialize<S: BitStream>(&mut self, s: &mut S) -> Result<(), DecodeError> {
        let mut kind = u32::from(self.kind() as u8);
        s.ranged(&mut kind, 0, 15, "packet kind")?;
        let Some(kind) = Kind::from_wire(kind as u8) else {
            return Err(BitError::OutOfRange {
                bit: 0,
                what: "packet kind",
            }
            .into());
        };
        if !S::READING {
            return self.serialize_body(s);
        }
        *self = match kind {
            Kind::Hello => Packet::Hello(Hello::default()),
            Kind::SpectateHello => Packet::SpectateHello(SpectateHello::default()),
            k => Packet::Routed(Routed {
                sender: SeatId(0),
                token: 0,
                seq: 0,
                message: match k {
                    Kind::Inputs => Message::Inputs(InputsMsg::default()),
                    Kind::Checksum => Message::Checksum(ChecksumMsg::default()),
                    Kind::ResyncRequest => Message::ResyncRequest(ResyncRequest::default()),
                    Kind::ResyncChunk => Message::ResyncChunk(ResyncChunk::default()),
                    Kind::ResyncAck => Message::ResyncAck(ResyncAck::default()),
                    Kind::Seat => Message::SeatDrop(SeatDrop::default()),
                    Kind::Feed => Message::Feed(Feed::default()),
                    Kind::FeedAck => Message::FeedAck(FeedAck::default()),
                    Kind::Snapshot => Message::SnapshotPart(SnapshotPart::default()),
                    Kind::Timing => Message::Timing(Timing::default()),
                    Kind::Integrity => Message::Evidence(Evidence::default()),
                    _ => Message::Disconnect(Disconnect::default()),
                },
            }),
        };
        self.serialize_body(s)
    }

    /// The header after the kind (the packet number, then the kind's
    /// routing fields, zero bits to a byte boundary: the part a sealed
    /// datagram leaves in clear), then the body.
    fn serialize_body<S: BitStream>(&mut self, s: &mut S) -> Result<(), DecodeError> {
        match self {
            Packet::Hello(h) => {
                s.u16(&mut h.seq)?;
                ser_player(s, &mut h.sender)?;
                s.align()?;
                h.serialize(s)
            }
            Packet::SpectateHello(h) => {
                s.u16(&mut h.seq)?;
                s.align()?;
                h.serialize(s)
            }
            Packet::Routed(r) => {
                s.u16(&mut r.seq)?;
                ser_player(s, &mut r.sender)?;
                s.u32(&mut r.token)?;
                s.align()?;
                match &mut r.message {
                    Message::Inputs(m) => m.serialize(s),
                    Message::Checksum(m) => m.serialize(s),
                    Message::ResyncRequest(m) => m.serialize(s),
                    Message::ResyncChunk(m) => m.serialize(s),
                    Message::ResyncAck(m) => m.serialize(s),
                    Message::Disconnect(m) => m.serialize(s),
                    Message::Feed(m) => m.serialize(s),
                    Message::FeedAck(m) => m.serialize(s),
                    Message::Timing(m) => m.serialize(s),
                    Message::SnapshotPart(_) | Message::SnapshotAck(_) => {
                        let mut ack = matches!(r.message, Message::SnapshotAck(_));
                        s.bool(&mut ack)?;
                        if S::READING && ack {
                            r.message = Message::SnapshotAck(SnapshotAck::default());
                        }
                        match &mut r.message {
                            Message::SnapshotPart(m) => m.serialize(s),
                            Message::SnapshotAck(m) => m.serialize(s),
                            _ => Ok(()),
                        }
                    }
                    Message::Evidence(_) | Message::Invalid(_) => {
                        let mut variant = u32::from(matches!(r.message, Message::Invalid(_)));
                        s.ranged(&mut variant, 0, 1, "integrity variant")?;
                        if S::READING && variant == 1 {
                            r.message = Message::Invalid(Invalid::default());
                        }
                        match &mut r.message {
                            Message::Evidence(m) => m.serialize(s),
                            Message::Invalid(m) => m.serialize(s),
                            _ => Ok(()),
                        }
                    }
                    Message::SeatDrop(_) | Message::SeatReturn(_) => {
                        let mut returning = matches!(r.message, Message::SeatReturn(_));
                        s.bool(&mut returning)?;
                        if S::READING && returning {
                            r.message = Message::SeatReturn(SeatReturn::default());
                        }
                        match &mut r.message {
                            Message::SeatReturn(m) => m.serialize(s),
                            Message::SeatDrop(m) => m.serialize(s),
                            _ => Ok(()),
                        }
                    }
                }
            }
        }
    }

    /// The packet's bytes.
    ///
    /// A packet built with out-of-range fields (e.g. more than
    /// [`MAX_INPUTS_PER_PACKET`](super::MAX_INPUTS_PER_PACKET) inputs) encodes clamped and will not decode
    /// back to itself; the session never builds one.
    pub fn encode(&self) -> Vec<u8> {
        let mut w = BitWriter::new();
        let _ = self.clone().serialize(&mut w);
        w.finish()
    }

    /// Bits the packet takes before padding.
    pub fn measure_bits(&self) -> u64 {
        let mut m = BitMeasurer::new();
        let _ = self.clone().serialize(&mut m);
        m.bits()
    }

    /// Decodes a datagram, refusing anything but the canonical encoding of a
    /// valid packet.
    pub fn decode(bytes: &[u8]) -> Result<Packet<I>, DecodeError> {
        if bytes.is_empty() {
            return Err(DecodeError::Empty);
        }
        if bytes.len() > MAX_DATAGRAM {
            return Err(DecodeError::Oversized {
                len: bytes.len() as u64,
                max: MAX_DATAGRAM as u64,
            });
        }
        let mut r = BitReader::new(bytes);
        let mut p = Packet::Hello(Hello::default());
        p.serialize(&mut r)?;
        r.finish()?;
        if p.encode() != bytes {
            return Err(DecodeError::NonCanonical);
        }
        Ok(p)
    }
}

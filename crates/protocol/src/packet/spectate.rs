//! The messages between a seat's relay and a spectator: the spectator
//! handshake ([`SpectateHello`]), the feed of released frames and its ack
//! (with the arbiter's question and answer), and the parts and acks of the
//! snapshot stream.
//!
//! Invariant: as for every message, one serializer per type reads, writes
//! and measures it, and checks every range when reading.

use super::field::{
    DecodeError, ShortChecksums, ser_greeting, ser_optional_checksums, ser_optional_u16,
    ser_players,
};
use super::{MAX_INPUTS_PER_PACKET, MAX_SNAPSHOT_PARTS, SNAPSHOT_PART_BYTES};
use crate::bits::{BitError, BitStream};
use crate::input::Input;

/// One part of a snapshot payload (the payload is opaque here: the
/// `lockstep-snapshot` stream codes it against acked baselines). A payload
/// is cut into `parts` parts of [`SNAPSHOT_PART_BYTES`] bytes, the last
/// one shorter; a receiver uses it once every part arrived.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SnapshotPart {
    /// The stream, as the receiver named it in its ack.
    pub stream: u8,
    /// Low 16 bits of the snapshot's frame.
    pub frame: u16,
    /// This part's index, below `parts`.
    pub index: u8,
    /// Parts in the payload, `1..=MAX_SNAPSHOT_PARTS`.
    pub parts: u8,
    /// This part's bytes, `1..=SNAPSHOT_PART_BYTES` of them.
    pub data: Vec<u8>,
}

/// A snapshot receiver's ack: the stream it wants, the newest snapshot it
/// decoded (a baseline the sender may code against), or that it wants no
/// more.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SnapshotAck {
    /// The stream wanted (a new id starts the stream over, against the
    /// initial state).
    pub stream: u8,
    /// Low 16 bits of the newest frame decoded in this stream, if any.
    pub newest: Option<u16>,
    /// The receiver is done: stop sending.
    pub done: bool,
}

/// The spectator handshake, sent both ways until each side holds the
/// other's token: by the spectator to the seat it watches through (the
/// relay), and by the relay in reply. It names no seat: a spectator has none.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SpectateHello {
    /// The sender's packet number toward the receiver (low 16 bits).
    pub seq: u16,
    /// The hash of the game's input schema ([`Input::schema_hash`]).
    pub schema_hash: u64,
    /// How many players the match has, `2..=8`.
    pub seats: u8,
    /// The tick length in microseconds.
    pub tick_micros: u32,
    /// The sender's token (never 0): every later packet to the sender must
    /// carry it.
    pub token: u32,
    /// The receiver's token as the sender knows it, 0 if not yet known.
    pub echo: u32,
    /// From the relay: its newest released frame, in full (the spectator
    /// restores the 16-bit frames of later packets against it). From a
    /// spectator: the stream it asks for, [`SpectateHello::INPUTS`] or
    /// [`SpectateHello::SNAPSHOTS`].
    pub frame: u32,
}

impl SpectateHello {
    /// A spectator's `frame`: it asks for every frame's inputs and an exact
    /// state, and simulates.
    pub const INPUTS: u32 = 0;
    /// A spectator's `frame`: it asks for compressed snapshots to show
    /// interpolated, and does not simulate.
    pub const SNAPSHOTS: u32 = 1;
}

/// Released frames for a spectator: every seat's inputs for frames
/// `first_frame ..` (the ones the spectator has not acked, oldest first), and
/// the relay's newest settled short checksums.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Feed<I> {
    /// Seats in the match (`2..=8`): how many input runs follow.
    pub seats: u8,
    /// Low 16 bits of the first frame carried (0 when none is).
    pub first_frame: u16,
    /// Per seat, its inputs for the frames carried; every run has the same
    /// length, at most [`MAX_INPUTS_PER_PACKET`]. Each run is coded as the
    /// inputs message codes its run.
    pub inputs: Vec<Vec<I>>,
    /// Short checksums of the newest frames every seat agreed on.
    pub checksums: Option<ShortChecksums>,
    /// To the match's arbiter during a dispute: low 16 bits of the frame
    /// whose checksum the seats want from it.
    pub ask: Option<u16>,
}

impl<I> Feed<I> {
    /// Frames carried.
    pub fn frames(&self) -> u32 {
        self.inputs.first().map_or(0, |run| run.len() as u32)
    }
}

/// A spectator's ack of its feed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FeedAck {
    /// Low 16 bits of the first frame the spectator lacks: it holds every
    /// frame from its state up to the one before.
    pub next_frame: u16,
    /// The spectator's state disagreed with a settled checksum: it asks for
    /// the relay's state again.
    pub want_state: bool,
    /// The answer to the feed's [`Feed::ask`], repeated while it is asked.
    pub answer: Option<ArbiterAnswer>,
}

/// An arbiter's answer to "your checksum of this frame?".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ArbiterAnswer {
    /// Low 16 bits of the frame asked about.
    pub frame: u16,
    /// The short checksum of its state after that frame, or `None` when it
    /// did not step it (before its state, or no longer remembered).
    pub short: Option<u64>,
}

impl SpectateHello {
    /// Serializes the body after the header (see `SPEC.md`).
    pub fn serialize<S: BitStream>(&mut self, s: &mut S) -> Result<(), DecodeError> {
        ser_greeting(
            s,
            &mut self.schema_hash,
            &mut self.seats,
            &mut self.tick_micros,
            &mut self.token,
            &mut self.echo,
        )?;
        s.u32(&mut self.frame)?;
        Ok(())
    }
}

impl<I: Input> Feed<I> {
    /// Serializes the message.
    pub fn serialize<S: BitStream>(&mut self, s: &mut S) -> Result<(), DecodeError> {
        ser_players(s, &mut self.seats)?;
        let mut count = self.frames();
        s.ranged(&mut count, 0, MAX_INPUTS_PER_PACKET, "frame count")?;
        if S::READING {
            self.inputs = (0..self.seats).map(|_| Vec::new()).collect();
        }
        if count == 0 {
            if S::READING {
                self.first_frame = 0;
            }
        } else {
            s.u16(&mut self.first_frame)?;
            for run in self.inputs.iter_mut().take(usize::from(self.seats)) {
                crate::input::serialize_run(s, run, count)?;
            }
        }
        ser_optional_checksums(s, &mut self.checksums)?;
        ser_optional_u16(s, &mut self.ask)
    }
}

impl SnapshotPart {
    /// Serializes the message (after the variant bit).
    pub fn serialize<S: BitStream>(&mut self, s: &mut S) -> Result<(), DecodeError> {
        s.u8(&mut self.stream)?;
        s.u16(&mut self.frame)?;
        let mut parts = u32::from(self.parts);
        s.ranged(&mut parts, 1, MAX_SNAPSHOT_PARTS, "snapshot parts")?;
        self.parts = parts as u8;
        let at = s.bit_position();
        let mut index = u32::from(self.index);
        s.ranged(&mut index, 0, MAX_SNAPSHOT_PARTS - 1, "snapshot part index")?;
        if index >= parts {
            return Err(BitError::OutOfRange {
                bit: at,
                what: "snapshot part index",
            }
            .into());
        }
        self.index = index as u8;
        let mut len = self.data.len() as u32;
        s.ranged(&mut len, 1, SNAPSHOT_PART_BYTES, "snapshot part length")?;
        s.align()?;
        s.bytes(&mut self.data, len as usize)?;
        Ok(())
    }
}

impl SnapshotAck {
    /// Serializes the message (after the variant bit).
    pub fn serialize<S: BitStream>(&mut self, s: &mut S) -> Result<(), DecodeError> {
        s.u8(&mut self.stream)?;
        ser_optional_u16(s, &mut self.newest)?;
        s.bool(&mut self.done)?;
        Ok(())
    }
}

impl FeedAck {
    /// Serializes the message.
    pub fn serialize<S: BitStream>(&mut self, s: &mut S) -> Result<(), DecodeError> {
        s.u16(&mut self.next_frame)?;
        s.bool(&mut self.want_state)?;
        let mut has = self.answer.is_some();
        s.bool(&mut has)?;
        self.answer = if has {
            let mut a = self.answer.unwrap_or_default();
            s.u16(&mut a.frame)?;
            let mut known = a.short.is_some();
            s.bool(&mut known)?;
            a.short = if known {
                let mut short = a.short.unwrap_or(0);
                s.u64(&mut short)?;
                Some(short)
            } else {
                None
            };
            Some(a)
        } else {
            None
        };
        Ok(())
    }
}

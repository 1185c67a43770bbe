//! The messages seats send each other: the handshake ([`Hello`]), inputs
//! and checksums, state transfers, goodbyes, seats leaving and coming back,
//! clock synchronization, and the evidence and verdicts of a dispute —
//! each with its one `serialize` (`protocol/SPEC.md` §2 draws them).
//!
//! Invariant: a message's serializer starts after the routed header and
//! ends on the last bit of its body; the codec pads and checks the rest.

use super::field::{
    DecodeError, ShortChecksums, ser_greeting, ser_input_run, ser_optional_checksums, ser_player,
};
use super::{CHUNK_BYTES, MAX_PAYLOAD_BYTES, MAX_STATE_BYTES};
use crate::bits::{BitError, BitStream};
use crate::input::Input;
use crate::seal::PublicKey;
use crate::seat::{MAX_SEATS, SeatId, SeatSet};
use lockstep_fx::Checksum;

/// The handshake: sent until the peer has echoed our token.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Hello {
    /// The sender's packet number toward the receiver (low 16 bits): every
    /// packet, handshakes included, draws from one count per receiver, so a
    /// sealed session never repeats a nonce.
    pub seq: u16,
    /// The sender's seat.
    pub sender: SeatId,
    /// The hash of the game's input schema ([`Input::schema_hash`]).
    pub schema_hash: u64,
    /// How many players the sender expects, `2..=8`.
    pub seats: u8,
    /// The sender's tick length in microseconds.
    pub tick_micros: u32,
    /// The sender's session token (never 0): every later packet to the sender
    /// must carry it.
    pub token: u32,
    /// The receiver's token as the sender knows it, 0 if not yet known.
    pub echo: u32,
    /// The sender already holds the receiver's echo of its token: the
    /// handshake is complete on its side and this Hello needs no reply.
    pub ready: bool,
}

/// What a disputed seat found when it stepped the disputed frames again
/// from the last state every seat agreed on, with the same inputs, and
/// compared the results with its own first run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Finding {
    /// Every frame gave the same checksum again: the seat is
    /// self-consistent (its bug, if it has one, is not in evidence).
    #[default]
    Consistent,
    /// Frame `frame` (low 16 bits) gave another checksum the second time:
    /// the seat's run cannot be trusted, and it is at fault.
    Inconsistent {
        /// Low 16 bits of the first frame that differed from the first run.
        frame: u16,
    },
    /// The seat could not step the frames again (it no longer holds them).
    Unknown,
}

/// A disputed seat's finding, sent to every other live seat until that
/// seat's own Evidence says it heard it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Evidence {
    /// Low 16 bits of the disputed frame (the first whose checksums
    /// differed, as the sender saw it).
    pub frame: u16,
    /// What the sender found.
    pub finding: Finding,
    /// The seats whose finding on this dispute the sender holds (its own
    /// bit included).
    pub heard: SeatSet,
    /// The arbiter's word, once the sender holds it (the seat whose relay
    /// serves the arbiter learns it from the arbiter, every other seat
    /// from that seat and echoes it): the disputed seats whose checksum of
    /// the disputed frame equals the arbiter's (empty: it could not tell,
    /// or matched nobody).
    pub arbiter: Option<SeatSet>,
}

/// Why a match is invalid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Cause {
    /// A drifted seat could not be brought back (its resync failed).
    #[default]
    Unhealable,
    /// A seat keeps drifting: its game is not deterministic.
    Nondeterministic,
    /// Seats disagree and no evidence says which one drifted.
    Unattributed,
}

/// The match is invalid from `first_frame` on: the seats no longer prove
/// that they play the same match. Sent to every other live seat, each of
/// which passes it on, until that seat sent one back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Invalid {
    /// Low 16 bits of the first frame whose checksums differed.
    pub first_frame: u16,
    /// Why.
    pub cause: Cause,
    /// The seat found at fault, if one was.
    pub seat: Option<SeatId>,
    /// The match plays on unchecked (its policy says so) instead of
    /// stopping: every frame from `first_frame` on is unchecked.
    pub play_on: bool,
}

/// Clock synchronization between two seats, sent every
/// `timing_interval_micros` each way (see [`crate::clock_sync`]): the
/// sender's clock, the echo of the newest [`Timing`] it received from the
/// receiver, its newest tick, and, in rollback, the input delay it wants
/// and the one the host decided.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Timing {
    /// The sender's clock when it sent this, in microseconds.
    pub time: u64,
    /// The newest `time` the sender has received from the receiver, with
    /// how long it held it before sending this.
    pub echo: Option<Echo>,
    /// The sender's newest tick: low 16 bits of the frame it sampled, and
    /// when by its clock (absent before its frame clock starts).
    pub tick: Option<TickStamp>,
    /// The input delay the sender asks for, in frames (rollback with an
    /// adaptive delay; 0 otherwise).
    pub wanted_delay: u8,
    /// From the host: the input delay every seat uses from a frame on.
    pub delay: Option<DelayPlan>,
    /// What stepping a frame costs the sender, in microseconds (the 90th
    /// percentile of its recent steps; 0 before any).
    pub step_cost: u32,
    /// From the host: the pace every seat keeps from a frame on.
    pub pace: Option<PacePlan>,
}

/// The host's plan for the pace of the match ([`crate::pace`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PacePlan {
    /// Low 16 bits of the first frame ticked at the new pace.
    pub frame: u16,
    /// Pace steps over the nominal tick (at most
    /// [`MAX_PACE_STEPS`](crate::pace::MAX_PACE_STEPS)).
    pub steps: u8,
}

/// An echoed timestamp.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Echo {
    /// The receiver's `time` being echoed.
    pub time: u64,
    /// Microseconds between the echoed message's arrival and this one's
    /// departure.
    pub held: u32,
}

/// When a peer sampled a frame, by its own clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TickStamp {
    /// Low 16 bits of the frame.
    pub frame: u16,
    /// The sender's clock at that tick, in microseconds.
    pub time: u64,
}

/// The host's decision: from `frame` on, every seat steps frame n at its
/// tick n + `delay`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DelayPlan {
    /// Low 16 bits of the first frame sampled with the new delay.
    pub frame: u16,
    /// The input delay in frames.
    pub delay: u8,
}

/// Redundant inputs with the ack and the newest short checksums.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct InputsMsg<I> {
    /// Low 16 bits of the newest frame the sender has received from the
    /// receiver (every earlier frame included), if any.
    pub ack: Option<u16>,
    /// Low 16 bits of the frame of `inputs[0]` (0 when `inputs` is empty).
    pub first_frame: u16,
    /// The sender's inputs not yet acked by the receiver, oldest first, at
    /// most [`MAX_INPUTS_PER_PACKET`](super::MAX_INPUTS_PER_PACKET). Sent as the first in full, then per
    /// input one bit "changed" and, if set, the input.
    pub inputs: Vec<I>,
    /// The sender's newest short checksums.
    pub checksums: Option<ShortChecksums>,
}

/// A full 32-byte checksum of one frame.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ChecksumMsg {
    /// The sender's resync epoch.
    pub epoch: u8,
    /// Low 16 bits of the frame.
    pub frame: u16,
    /// The checksum of the state after that frame.
    pub checksum: Checksum,
}

/// A drifted peer's request for the authority's state.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ResyncRequest {
    /// The requester's attempt number; chunks and acks echo it.
    pub id: u8,
    /// Low 16 bits of the first frame found to differ.
    pub desync_frame: u16,
    /// What the state is for.
    pub purpose: Purpose,
}

/// What a requested state is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Purpose {
    /// To load: the state after the authority's newest frame (a returning
    /// seat's).
    #[default]
    Load,
    /// To heal a drifted seat: the state after the authority's newest
    /// frame, followed by the authority's full checksums of the frames from
    /// `checks_from` (low 16 bits) up to it, so the drifted seat's replay
    /// log records the match's trajectory instead of its own.
    Heal {
        /// Low 16 bits of the first frame whose checksum is wanted.
        checks_from: u16,
    },
    /// To compare, not load: the state after exactly `desync_frame`, for
    /// the report of a dispute nobody could be blamed for.
    Compare,
}

/// One fragment of a state transfer. The payload is split into
/// [`CHUNK_BYTES`]-byte chunks, the last one shorter; chunk lengths follow
/// from `payload_len` and are not sent.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ResyncChunk {
    /// The request this answers.
    pub id: u8,
    /// Low 16 bits of the frame whose end state this is.
    pub frame: u16,
    /// Whether the payload is deflate-compressed.
    pub compressed: bool,
    /// Length of the payload once decompressed, `1..=MAX_STATE_BYTES`
    /// (equal to `payload_len` when not compressed): the state, then
    /// `checks` full checksums.
    pub state_len: u32,
    /// Length of the payload on the wire, `1..=MAX_PAYLOAD_BYTES`.
    pub payload_len: u32,
    /// This chunk's index, below [`ResyncChunk::chunk_count`].
    pub index: u16,
    /// The full checksum of the state: present in chunk 0 only.
    pub checksum: Option<Checksum>,
    /// How many of the authority's full checksums follow the state in the
    /// unpacked payload (for the frames up to `frame`, oldest first; a
    /// heal's, see [`Purpose::Heal`]): present in chunk 0 only, 0 in the
    /// others.
    pub checks: u16,
    /// This chunk's bytes.
    pub data: Vec<u8>,
}

impl ResyncChunk {
    /// Chunks in a payload of `payload_len` bytes.
    pub const fn count_for(payload_len: u32) -> u32 {
        payload_len.div_ceil(CHUNK_BYTES)
    }

    /// Chunks in this transfer.
    pub const fn chunk_count(&self) -> u32 {
        Self::count_for(self.payload_len)
    }

    /// The length of chunk `index` of a `payload_len`-byte payload.
    pub const fn len_of(payload_len: u32, index: u32) -> u32 {
        let start = index.saturating_mul(CHUNK_BYTES);
        let left = payload_len.saturating_sub(start);
        if left < CHUNK_BYTES {
            left
        } else {
            CHUNK_BYTES
        }
    }
}

/// Selective ack of a state transfer's chunks.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ResyncAck {
    /// The request id being acked.
    pub id: u8,
    /// Every chunk below this index has arrived (the chunk count once all have).
    pub next_missing: u16,
    /// Bit `i`: chunk `next_missing + 1 + i` has arrived.
    pub received: u32,
}

/// Why a peer leaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Disconnect {
    /// 0: the player quit; 1: the session gave up (timeout, failed resync);
    /// other values are reserved and read as an error.
    pub reason: u8,
}

/// A remaining peer's report on a dropped seat. Every remaining peer sends
/// one to every other until each has heard it; the seat's last frame is the
/// newest frame any of them holds, and the inputs carried let the others
/// reach it.
///
/// Sent to the dropped seat itself (`seat` is the receiver's, `heard`
/// empty, no inputs) it is a *notice*: the sender dropped the receiver and
/// takes nothing more from it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SeatDrop<I> {
    /// The seat dropped.
    pub seat: SeatId,
    /// The session token of the seat's process the sender dropped (a seat
    /// that came back runs a new process with a new token): a report on an
    /// earlier process of the seat is stale.
    pub token: u32,
    /// The remaining seats whose report on `seat` the sender has received.
    pub heard: SeatSet,
    /// Low 16 bits of the frame of `inputs[0]` (0 when `inputs` is empty).
    pub first_frame: u16,
    /// The dropped seat's newest inputs the sender holds, oldest first, the
    /// last one for the newest frame it holds (empty: it holds none). Coded
    /// as the inputs message codes its run.
    pub inputs: Vec<I>,
}

/// A dropped seat's return: the host announces it to every remaining peer
/// and to the returning process, each of which echoes it back as its ack.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SeatReturn {
    /// The seat returning.
    pub seat: SeatId,
    /// Low 16 bits of the first frame the seat plays again.
    pub frame: u16,
    /// The returning process's session token.
    pub token: u32,
    /// The other seats the host plays with the absent input at `frame`
    /// (dropped, not back by then): the returning process must not wait
    /// for their inputs. Only the host's own announcement to the returning
    /// process needs it; the others know.
    pub absent: SeatSet,
    /// The returning process's public key, in a sealed session (the host
    /// heard it at match setup and vouches for it).
    pub key: Option<PublicKey>,
}

impl Hello {
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
        s.bool(&mut self.ready)?;
        Ok(())
    }
}

impl<I: Input> InputsMsg<I> {
    /// Serializes the message after the routed header.
    pub fn serialize<S: BitStream>(&mut self, s: &mut S) -> Result<(), DecodeError> {
        let mut has_ack = self.ack.is_some();
        s.bool(&mut has_ack)?;
        if has_ack {
            let mut a = self.ack.unwrap_or(0);
            s.u16(&mut a)?;
            self.ack = Some(a);
        } else {
            self.ack = None;
        }
        ser_input_run(s, &mut self.first_frame, &mut self.inputs)?;
        ser_optional_checksums(s, &mut self.checksums)
    }
}

impl SeatReturn {
    /// Serializes the message (after the variant bit).
    pub fn serialize<S: BitStream>(&mut self, s: &mut S) -> Result<(), DecodeError> {
        let mut v = u32::from(self.seat.0);
        s.ranged(&mut v, 0, u32::from(MAX_SEATS) - 1, "returning seat")?;
        self.seat = SeatId(v as u8);
        s.u16(&mut self.frame)?;
        s.u32(&mut self.token)?;
        s.u8(&mut self.absent.0)?;
        let mut has_key = self.key.is_some();
        s.bool(&mut has_key)?;
        if has_key {
            let mut key = self.key.map_or([0; 32], |k| k.0);
            for chunk in key.chunks_exact_mut(8) {
                let mut w = u64::from_le_bytes(<[u8; 8]>::try_from(&*chunk).unwrap_or_default());
                s.u64(&mut w)?;
                chunk.copy_from_slice(&w.to_le_bytes());
            }
            self.key = Some(PublicKey(key));
        } else {
            self.key = None;
        }
        Ok(())
    }
}

impl<I: Input> SeatDrop<I> {
    /// Serializes the message (after the variant bit).
    pub fn serialize<S: BitStream>(&mut self, s: &mut S) -> Result<(), DecodeError> {
        let mut v = u32::from(self.seat.0);
        s.ranged(&mut v, 0, u32::from(MAX_SEATS) - 1, "dropped seat")?;
        self.seat = SeatId(v as u8);
        s.u32(&mut self.token)?;
        s.u8(&mut self.heard.0)?;
        ser_input_run(s, &mut self.first_frame, &mut self.inputs)
    }
}

impl ChecksumMsg {
    /// Serializes the message.
    pub fn serialize<S: BitStream>(&mut self, s: &mut S) -> Result<(), DecodeError> {
        s.u8(&mut self.epoch)?;
        s.u16(&mut self.frame)?;
        s.checksum(&mut self.checksum)?;
        Ok(())
    }
}

impl ResyncRequest {
    /// Serializes the message.
    pub fn serialize<S: BitStream>(&mut self, s: &mut S) -> Result<(), DecodeError> {
        s.u8(&mut self.id)?;
        s.u16(&mut self.desync_frame)?;
        let mut purpose = match self.purpose {
            Purpose::Load => 0,
            Purpose::Heal { .. } => 1,
            Purpose::Compare => 2,
        };
        s.ranged(&mut purpose, 0, 2, "resync purpose")?;
        self.purpose = match purpose {
            0 => Purpose::Load,
            1 => {
                let mut from = match self.purpose {
                    Purpose::Heal { checks_from } => checks_from,
                    _ => 0,
                };
                s.u16(&mut from)?;
                Purpose::Heal { checks_from: from }
            }
            _ => Purpose::Compare,
        };
        Ok(())
    }
}

impl ResyncChunk {
    /// Serializes the message.
    pub fn serialize<S: BitStream>(&mut self, s: &mut S) -> Result<(), DecodeError> {
        s.u8(&mut self.id)?;
        s.u16(&mut self.frame)?;
        s.bool(&mut self.compressed)?;
        s.ranged(&mut self.state_len, 1, MAX_STATE_BYTES, "state length")?;
        s.ranged(
            &mut self.payload_len,
            1,
            MAX_PAYLOAD_BYTES,
            "payload length",
        )?;
        let at = s.bit_position();
        if !self.compressed && self.payload_len != self.state_len {
            return Err(BitError::OutOfRange {
                bit: at,
                what: "uncompressed payload length",
            }
            .into());
        }
        s.u16(&mut self.index)?;
        if u32::from(self.index) >= self.chunk_count() {
            return Err(BitError::OutOfRange {
                bit: at,
                what: "chunk index",
            }
            .into());
        }
        if self.index == 0 {
            let mut c = self.checksum.unwrap_or_default();
            s.checksum(&mut c)?;
            self.checksum = Some(c);
            let at = s.bit_position();
            s.u16(&mut self.checks)?;
            // The checksums follow a state of at least one byte.
            if u32::from(self.checks) * 32 >= self.state_len {
                return Err(BitError::OutOfRange {
                    bit: at,
                    what: "checksums after the state",
                }
                .into());
            }
        } else if S::READING {
            self.checksum = None;
            self.checks = 0;
        }
        let len = Self::len_of(self.payload_len, u32::from(self.index));
        s.align()?;
        s.bytes(&mut self.data, len as usize)?;
        Ok(())
    }
}

impl ResyncAck {
    /// Serializes the message.
    pub fn serialize<S: BitStream>(&mut self, s: &mut S) -> Result<(), DecodeError> {
        s.u8(&mut self.id)?;
        s.u16(&mut self.next_missing)?;
        s.u32(&mut self.received)?;
        Ok(())
    }
}

impl Timing {
    /// Serializes the message.
    pub fn serialize<S: BitStream>(&mut self, s: &mut S) -> Result<(), DecodeError> {
        s.u64(&mut self.time)?;
        let mut has_echo = self.echo.is_some();
        s.bool(&mut has_echo)?;
        self.echo = if has_echo {
            let mut e = self.echo.unwrap_or_default();
            s.u64(&mut e.time)?;
            s.u32(&mut e.held)?;
            Some(e)
        } else {
            None
        };
        let mut has_tick = self.tick.is_some();
        s.bool(&mut has_tick)?;
        self.tick = if has_tick {
            let mut t = self.tick.unwrap_or_default();
            s.u16(&mut t.frame)?;
            s.u64(&mut t.time)?;
            Some(t)
        } else {
            None
        };
        s.u8(&mut self.wanted_delay)?;
        let mut has_plan = self.delay.is_some();
        s.bool(&mut has_plan)?;
        self.delay = if has_plan {
            let mut d = self.delay.unwrap_or_default();
            s.u16(&mut d.frame)?;
            s.u8(&mut d.delay)?;
            Some(d)
        } else {
            None
        };
        s.u32(&mut self.step_cost)?;
        let mut has_pace = self.pace.is_some();
        s.bool(&mut has_pace)?;
        self.pace = if has_pace {
            let mut p = self.pace.unwrap_or_default();
            s.u16(&mut p.frame)?;
            let mut steps = u32::from(p.steps);
            s.ranged(&mut steps, 0, crate::pace::MAX_PACE_STEPS, "pace steps")?;
            p.steps = steps as u8;
            Some(p)
        } else {
            None
        };
        Ok(())
    }
}

impl Evidence {
    /// Serializes the message (after the variant field).
    pub fn serialize<S: BitStream>(&mut self, s: &mut S) -> Result<(), DecodeError> {
        s.u16(&mut self.frame)?;
        let mut finding = match self.finding {
            Finding::Consistent => 0,
            Finding::Inconsistent { .. } => 1,
            Finding::Unknown => 2,
        };
        s.ranged(&mut finding, 0, 2, "finding")?;
        self.finding = match finding {
            0 => Finding::Consistent,
            1 => {
                let mut frame = match self.finding {
                    Finding::Inconsistent { frame } => frame,
                    _ => 0,
                };
                s.u16(&mut frame)?;
                Finding::Inconsistent { frame }
            }
            _ => Finding::Unknown,
        };
        s.u8(&mut self.heard.0)?;
        let mut has = self.arbiter.is_some();
        s.bool(&mut has)?;
        self.arbiter = if has {
            let mut set = self.arbiter.unwrap_or_default();
            s.u8(&mut set.0)?;
            Some(set)
        } else {
            None
        };
        Ok(())
    }
}

impl Invalid {
    /// Serializes the message (after the variant field).
    pub fn serialize<S: BitStream>(&mut self, s: &mut S) -> Result<(), DecodeError> {
        s.u16(&mut self.first_frame)?;
        let mut cause = match self.cause {
            Cause::Unhealable => 0,
            Cause::Nondeterministic => 1,
            Cause::Unattributed => 2,
        };
        s.ranged(&mut cause, 0, 2, "invalid cause")?;
        self.cause = match cause {
            0 => Cause::Unhealable,
            1 => Cause::Nondeterministic,
            _ => Cause::Unattributed,
        };
        let mut has_seat = self.seat.is_some();
        s.bool(&mut has_seat)?;
        self.seat = if has_seat {
            let mut seat = self.seat.unwrap_or_default();
            ser_player(s, &mut seat)?;
            Some(seat)
        } else {
            None
        };
        s.bool(&mut self.play_on)?;
        Ok(())
    }
}

impl Disconnect {
    /// Serializes the message.
    pub fn serialize<S: BitStream>(&mut self, s: &mut S) -> Result<(), DecodeError> {
        let mut r = u32::from(self.reason);
        s.ranged(&mut r, 0, 1, "disconnect reason")?;
        self.reason = r as u8;
        Ok(())
    }
}

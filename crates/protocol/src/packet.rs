//! Every datagram on the wire: [`Packet`] and its messages, each with one
//! `serialize` function that writes, reads and measures it (see
//! [`crate::bits`]). `protocol/SPEC.md` draws the same layouts bit by bit.
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
//! - Frame numbers travel as their low 16 bits and sequence numbers are 16
//!   bits; [`crate::seq`] restores and orders them across wraparound.
//! - No `usize` on the wire: every length is an explicitly sized field.

use crate::bits::{BitError, BitMeasurer, BitReader, BitStream, BitWriter};
use crate::input::Input;
use crate::player::{MAX_PLAYERS, PlayerId, PlayerSet};
use crate::seal::PublicKey;
use lockstep_fx::Checksum;

/// The protocol id every handshake starts with ("LKSP" read as big-endian).
pub const PROTOCOL_ID: u32 = 0x4C4B_5350;
/// The wire-format version in the handshake.
pub const VERSION: u8 = 8;
/// The largest datagram the decoder accepts, in bytes (fits a 1 280-byte IPv6
/// minimum MTU with room for IP and UDP headers).
pub const MAX_DATAGRAM: usize = 1200;
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
/// The largest uncompressed state a resync may announce (64 MiB).
pub const MAX_STATE_BYTES: u32 = 64 << 20;
/// The most bytes of a snapshot payload one [`SnapshotPart`] carries.
pub const SNAPSHOT_PART_BYTES: u32 = 1100;
/// The most parts one snapshot payload is cut into.
pub const MAX_SNAPSHOT_PARTS: u32 = 64;

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
    /// The seat it names (none in a [`WatchHello`]).
    pub seat: Option<PlayerId>,
}

impl Header {
    /// Reads the clear header of `bytes`, sealed or not; `None` if they
    /// are too short or of no kind. Nothing read here is authenticated
    /// until the datagram opens.
    pub fn peek(bytes: &[u8]) -> Option<Header> {
        let kind = Kind::from_wire(*bytes.first()? & 0x0f)?;
        let seq = peek_seq(bytes)?;
        let seat = match kind {
            Kind::WatchHello => None,
            _ => Some(PlayerId((*bytes.get(2)? >> 4) & 0x07)),
        };
        Some(Header { kind, seq, seat })
    }
}

/// Why a datagram was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// No bytes at all.
    #[error("empty datagram")]
    Empty,
    /// More bytes than [`MAX_DATAGRAM`].
    #[error("datagram of {len} bytes exceeds the {max}-byte limit")]
    Oversized {
        /// Its length.
        len: u64,
        /// The limit.
        max: u64,
    },
    /// A field could not be read (truncated, out of range, bad padding).
    #[error(transparent)]
    Bits(#[from] BitError),
    /// The handshake's protocol id is not [`PROTOCOL_ID`].
    #[error("protocol id {found:#010x} is not lockstep's")]
    WrongProtocol {
        /// The id found.
        found: u32,
    },
    /// The handshake's version is not [`VERSION`].
    #[error("wire version {found}, expected {expected}")]
    WrongVersion {
        /// The version found.
        found: u8,
        /// The version this build speaks.
        expected: u8,
    },
    /// The bytes decode, but re-encoding the result gives different bytes.
    #[error("non-canonical encoding")]
    NonCanonical,
}

/// A datagram.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Packet<I> {
    /// Handshake between two seats (kind 0).
    Hello(Hello),
    /// Handshake between a spectator and the seat relaying to it (kind 8).
    WatchHello(WatchHello),
    /// Everything after a handshake (kinds 1–7, 9–11, 13 and 14).
    Routed(Routed<I>),
}

/// The handshake: sent until the peer has echoed our token.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Hello {
    /// The sender's packet number toward the receiver (low 16 bits): every
    /// packet, handshakes included, draws from one count per receiver, so a
    /// sealed session never repeats a nonce.
    pub seq: u16,
    /// The sender's seat.
    pub sender: PlayerId,
    /// The hash of the game's input schema ([`Input::schema_hash`]).
    pub schema_hash: u64,
    /// How many players the sender expects, `2..=8`.
    pub players: u8,
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

/// A post-handshake packet: header plus one message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Routed<I> {
    /// The sender's seat.
    pub sender: PlayerId,
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
    pub heard: PlayerSet,
    /// The arbiter's word, once the sender holds it (the seat whose relay
    /// serves the arbiter learns it from the arbiter, every other seat
    /// from that seat and echoes it): the disputed seats whose checksum of
    /// the disputed frame equals the arbiter's (empty: it could not tell,
    /// or matched nobody).
    pub arbiter: Option<PlayerSet>,
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
    pub seat: Option<PlayerId>,
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
pub struct WatchHello {
    /// The sender's packet number toward the receiver (low 16 bits).
    pub seq: u16,
    /// The hash of the game's input schema ([`Input::schema_hash`]).
    pub schema_hash: u64,
    /// How many players the match has, `2..=8`.
    pub players: u8,
    /// The tick length in microseconds.
    pub tick_micros: u32,
    /// The sender's token (never 0): every later packet to the sender must
    /// carry it.
    pub token: u32,
    /// The receiver's token as the sender knows it, 0 if not yet known.
    pub echo: u32,
    /// From the relay: its newest released frame, in full (the spectator
    /// restores the 16-bit frames of later packets against it). From a
    /// spectator: the stream it asks for, [`WatchHello::INPUTS`] or
    /// [`WatchHello::SNAPSHOTS`].
    pub frame: u32,
}

impl WatchHello {
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
    /// Players in the match (`2..=8`): how many input runs follow.
    pub players: u8,
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

/// Redundant inputs with the ack and the newest short checksums.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct InputsMsg<I> {
    /// Low 16 bits of the newest frame the sender has received from the
    /// receiver (every earlier frame included), if any.
    pub ack: Option<u16>,
    /// Low 16 bits of the frame of `inputs[0]` (0 when `inputs` is empty).
    pub first_frame: u16,
    /// The sender's inputs not yet acked by the receiver, oldest first, at
    /// most [`MAX_INPUTS_PER_PACKET`]. Sent as the first in full, then per
    /// input one bit "changed" and, if set, the input.
    pub inputs: Vec<I>,
    /// The sender's newest short checksums.
    pub checksums: Option<ShortChecksums>,
}

/// The sender's short checksums of consecutive frames ending at `newest`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ShortChecksums {
    /// The sender's resync epoch (how many states it has loaded, mod 256).
    pub epoch: u8,
    /// Low 16 bits of the newest frame reported.
    pub newest: u16,
    /// `1..=MAX_SHORT_CHECKSUMS` short checksums, oldest first, for frames
    /// `newest - len + 1 ..= newest`.
    pub shorts: Vec<u64>,
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
    pub seat: PlayerId,
    /// The session token of the seat's process the sender dropped (a seat
    /// that came back runs a new process with a new token): a report on an
    /// earlier process of the seat is stale.
    pub token: u32,
    /// The remaining seats whose report on `seat` the sender has received.
    pub heard: PlayerSet,
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
    pub seat: PlayerId,
    /// Low 16 bits of the first frame the seat plays again.
    pub frame: u16,
    /// The returning process's session token.
    pub token: u32,
    /// The other seats the host plays with the absent input at `frame`
    /// (dropped, not back by then): the returning process must not wait
    /// for their inputs. Only the host's own announcement to the returning
    /// process needs it; the others know.
    pub absent: PlayerSet,
    /// The returning process's public key, in a sealed session (the host
    /// heard it at match setup and vouches for it).
    pub key: Option<PublicKey>,
}

fn ser_player<S: BitStream>(s: &mut S, p: &mut PlayerId) -> Result<(), BitError> {
    let mut v = u32::from(p.0);
    s.ranged(&mut v, 0, u32::from(MAX_PLAYERS) - 1, "sender seat")?;
    p.0 = v as u8;
    Ok(())
}

/// The protocol id and version every handshake carries after its kind (and
/// seat): anything else is not this protocol, or not this version of it.
fn ser_identity<S: BitStream>(s: &mut S) -> Result<(), DecodeError> {
    let mut id = PROTOCOL_ID;
    s.u32(&mut id)?;
    if id != PROTOCOL_ID {
        return Err(DecodeError::WrongProtocol { found: id });
    }
    let mut version = VERSION;
    s.u8(&mut version)?;
    if version != VERSION {
        return Err(DecodeError::WrongVersion {
            found: version,
            expected: VERSION,
        });
    }
    Ok(())
}

fn ser_players<S: BitStream>(s: &mut S, players: &mut u8) -> Result<(), DecodeError> {
    let mut n = u32::from(*players);
    s.ranged(&mut n, 2, u32::from(MAX_PLAYERS), "player count")?;
    *players = n as u8;
    Ok(())
}

impl Hello {
    /// Serializes the body after the header (see `SPEC.md`).
    pub fn serialize<S: BitStream>(&mut self, s: &mut S) -> Result<(), DecodeError> {
        ser_identity(s)?;
        s.u64(&mut self.schema_hash)?;
        ser_players(s, &mut self.players)?;
        s.u32(&mut self.tick_micros)?;
        s.u32(&mut self.token)?;
        s.u32(&mut self.echo)?;
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

/// A presence bit, then the short checksums if present.
fn ser_optional_checksums<S: BitStream>(
    s: &mut S,
    checksums: &mut Option<ShortChecksums>,
) -> Result<(), DecodeError> {
    let mut present = checksums.is_some();
    s.bool(&mut present)?;
    if present {
        let mut c = checksums.take().unwrap_or_default();
        c.serialize(s)?;
        *checksums = Some(c);
    } else {
        *checksums = None;
    }
    Ok(())
}

/// A run of one player's inputs for consecutive frames: a count (at most
/// [`MAX_INPUTS_PER_PACKET`]), and if any, the first frame's low 16 bits,
/// the first input in full, then per input one bit "changed" and, if set,
/// the input.
fn ser_input_run<I: Input, S: BitStream>(
    s: &mut S,
    first_frame: &mut u16,
    inputs: &mut Vec<I>,
) -> Result<(), DecodeError> {
    let mut count = inputs.len() as u32;
    s.ranged(&mut count, 0, MAX_INPUTS_PER_PACKET, "input count")?;
    if count == 0 {
        if S::READING {
            *first_frame = 0;
            inputs.clear();
        }
        return Ok(());
    }
    s.u16(first_frame)?;
    crate::input::serialize_run(s, inputs, count)?;
    Ok(())
}

impl SeatReturn {
    /// Serializes the message (after the variant bit).
    pub fn serialize<S: BitStream>(&mut self, s: &mut S) -> Result<(), DecodeError> {
        let mut v = u32::from(self.seat.0);
        s.ranged(&mut v, 0, u32::from(MAX_PLAYERS) - 1, "returning seat")?;
        self.seat = PlayerId(v as u8);
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
        s.ranged(&mut v, 0, u32::from(MAX_PLAYERS) - 1, "dropped seat")?;
        self.seat = PlayerId(v as u8);
        s.u32(&mut self.token)?;
        s.u8(&mut self.heard.0)?;
        ser_input_run(s, &mut self.first_frame, &mut self.inputs)
    }
}

impl ShortChecksums {
    /// Serializes the report.
    pub fn serialize<S: BitStream>(&mut self, s: &mut S) -> Result<(), DecodeError> {
        s.u8(&mut self.epoch)?;
        s.u16(&mut self.newest)?;
        let mut n = self.shorts.len() as u32;
        s.ranged(&mut n, 1, MAX_SHORT_CHECKSUMS, "short checksum count")?;
        if S::READING {
            self.shorts = vec![0; n as usize];
        }
        for v in self.shorts.iter_mut().take(n as usize) {
            s.u64(v)?;
        }
        Ok(())
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

impl WatchHello {
    /// Serializes the body after the header (see `SPEC.md`).
    pub fn serialize<S: BitStream>(&mut self, s: &mut S) -> Result<(), DecodeError> {
        ser_identity(s)?;
        s.u64(&mut self.schema_hash)?;
        ser_players(s, &mut self.players)?;
        s.u32(&mut self.tick_micros)?;
        s.u32(&mut self.token)?;
        s.u32(&mut self.echo)?;
        s.u32(&mut self.frame)?;
        Ok(())
    }
}

impl<I: Input> Feed<I> {
    /// Serializes the message.
    pub fn serialize<S: BitStream>(&mut self, s: &mut S) -> Result<(), DecodeError> {
        ser_players(s, &mut self.players)?;
        let mut count = self.frames();
        s.ranged(&mut count, 0, MAX_INPUTS_PER_PACKET, "frame count")?;
        if S::READING {
            self.inputs = (0..self.players).map(|_| Vec::new()).collect();
        }
        if count == 0 {
            if S::READING {
                self.first_frame = 0;
            }
        } else {
            s.u16(&mut self.first_frame)?;
            for run in self.inputs.iter_mut().take(usize::from(self.players)) {
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
        let mut has = self.newest.is_some();
        s.bool(&mut has)?;
        if has {
            let mut f = self.newest.unwrap_or(0);
            s.u16(&mut f)?;
            self.newest = Some(f);
        } else {
            self.newest = None;
        }
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

/// An optional 16-bit field: a presence bit, then the value.
fn ser_optional_u16<S: BitStream>(s: &mut S, v: &mut Option<u16>) -> Result<(), DecodeError> {
    let mut has = v.is_some();
    s.bool(&mut has)?;
    *v = if has {
        let mut x = v.unwrap_or(0);
        s.u16(&mut x)?;
        Some(x)
    } else {
        None
    };
    Ok(())
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

/// The kind of a packet, its first 4 bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Kind {
    /// [`Hello`].
    Hello = 0,
    /// [`InputsMsg`].
    Inputs = 1,
    /// [`ChecksumMsg`].
    Checksum = 2,
    /// [`ResyncRequest`].
    ResyncRequest = 3,
    /// [`ResyncChunk`].
    ResyncChunk = 4,
    /// [`ResyncAck`].
    ResyncAck = 5,
    /// [`Disconnect`].
    Disconnect = 6,
    /// [`SeatDrop`] and [`SeatReturn`]: a seat leaving or coming back.
    Seat = 7,
    /// [`WatchHello`].
    WatchHello = 8,
    /// [`Feed`].
    Feed = 9,
    /// [`FeedAck`].
    FeedAck = 10,
    /// [`SnapshotPart`] and [`SnapshotAck`]: the snapshot stream.
    Snapshot = 11,
    /// [`Timing`]. (12 is no kind: the match-setup messages of
    /// `lockstep-lobby` start with a byte whose low four bits read 12.)
    Timing = 13,
    /// [`Evidence`] and [`Invalid`]: what the seats tell each other about
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
            Kind::WatchHello => 3,
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
        Kind::WatchHello,
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
            Kind::WatchHello => "watch_hello",
            Kind::Feed => "feed",
            Kind::FeedAck => "feed_ack",
            Kind::Snapshot => "snapshot",
            Kind::Timing => "timing",
            Kind::Integrity => "integrity",
        }
    }
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
            Packet::WatchHello(_) => Kind::WatchHello,
            Packet::Routed(r) => r.message.kind(),
        }
    }

    /// Sets the packet number the header carries.
    pub fn set_seq(&mut self, seq: u16) {
        match self {
            Packet::Hello(h) => h.seq = seq,
            Packet::WatchHello(h) => h.seq = seq,
            Packet::Routed(r) => r.seq = seq,
        }
    }

    /// The seat the header names: the sender's, except in a spectator's
    /// packets to its relay, where it is the relay's (the seat watched
    /// through). A [`WatchHello`] names none.
    pub const fn seat(&self) -> Option<PlayerId> {
        match self {
            Packet::Hello(h) => Some(h.sender),
            Packet::WatchHello(_) => None,
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
            Kind::WatchHello => Packet::WatchHello(WatchHello::default()),
            k => Packet::Routed(Routed {
                sender: PlayerId(0),
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
            Packet::WatchHello(h) => {
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
    /// [`MAX_INPUTS_PER_PACKET`] inputs) encodes clamped and will not decode
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

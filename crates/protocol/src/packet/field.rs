//! The fields several messages share, each with one serializer: the
//! seat number, the greeting both handshakes open with (protocol id,
//! version, schema, seat count, tick, tokens), a run of one seat's inputs,
//! short checksums, an optional 16-bit frame — and [`DecodeError`], what
//! any of them refuses.
//!
//! Invariants: every serializer reads, writes and measures with the same
//! code (see [`crate::bits`]), checks each range when reading, and writes
//! no `usize`.

use super::header::{PROTOCOL_ID, VERSION};
use super::{MAX_INPUTS_PER_PACKET, MAX_SHORT_CHECKSUMS};
use crate::bits::{BitError, BitStream};
use crate::input::Input;
use crate::seat::{MAX_SEATS, SeatId};

/// Why a datagram was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// No bytes at all.
    #[error("empty datagram")]
    Empty,
    /// More bytes than [`MAX_DATAGRAM`](super::MAX_DATAGRAM).
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

pub(super) fn ser_player<S: BitStream>(s: &mut S, p: &mut SeatId) -> Result<(), BitError> {
    let mut v = u32::from(p.0);
    s.ranged(&mut v, 0, u32::from(MAX_SEATS) - 1, "sender seat")?;
    p.0 = v as u8;
    Ok(())
}

/// The greeting both handshakes ([`super::Hello`], [`super::SpectateHello`])
/// open with after their header: the protocol id and version (anything
/// else is not this protocol, or not this version of it), the input
/// schema's hash, the seat count, the tick length, the sender's token and
/// its echo of the receiver's.
pub(super) fn ser_greeting<S: BitStream>(
    s: &mut S,
    schema_hash: &mut u64,
    seats: &mut u8,
    tick_micros: &mut u32,
    token: &mut u32,
    echo: &mut u32,
) -> Result<(), DecodeError> {
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
    s.u64(schema_hash)?;
    ser_players(s, seats)?;
    s.u32(tick_micros)?;
    s.u32(token)?;
    s.u32(echo)?;
    Ok(())
}

pub(super) fn ser_players<S: BitStream>(s: &mut S, seats: &mut u8) -> Result<(), DecodeError> {
    let mut n = u32::from(*seats);
    s.ranged(&mut n, 2, u32::from(MAX_SEATS), "seat count")?;
    *seats = n as u8;
    Ok(())
}

/// A presence bit, then the short checksums if present.
pub(super) fn ser_optional_checksums<S: BitStream>(
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
pub(super) fn ser_input_run<I: Input, S: BitStream>(
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

/// An optional 16-bit field: a presence bit, then the value.
pub(super) fn ser_optional_u16<S: BitStream>(
    s: &mut S,
    v: &mut Option<u16>,
) -> Result<(), DecodeError> {
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

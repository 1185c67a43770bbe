//! The frame every reach message shares: its first byte (the [`Kind`]),
//! the format's [`VERSION`], the fixed-size address encoding, and
//! [`WireError`]. `message.rs` builds the messages on these.
//!
//! The first byte of a reach message has `1111` in its low four bits, a
//! value no session packet (kinds 0–14 but 12) and no match-setup message
//! (`LKSJ`, whose first byte reads 12) starts with: one socket carries all
//! three, and [`is_reach`] tells them apart by that byte alone. The high
//! four bits are the message's kind. Every message but the relay's two
//! data frames ([`Kind::Send`], [`Kind::Deliver`]) has the version next.
//!
//! Invariants: decoding never panics and never reads past the bytes it
//! was given; an address is always [`ADDRESS_BYTES`] long on the wire and
//! decodes only from its one canonical form.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use lockstep_fx::{DecodeError, Sink, StateReader, StateWriter};

/// The reach format's version: the second byte of every message but the
/// relay's data frames.
pub const VERSION: u8 = 1;

/// Bytes of an address on the wire: a family byte (4 or 6), 16 bytes of
/// address (an IPv4 address in the first four, the rest zero) and the port.
pub const ADDRESS_BYTES: usize = 19;

/// A request to the rendezvous is padded to this many bytes, so that no
/// answer to it is larger than what it sent.
pub const REQUEST_BYTES: usize = 512;

/// The largest datagram a member hands the relay to forward, and the
/// largest it delivers: a session datagram (1 200 bytes) and the data
/// frame's 3.
pub const MAX_FRAME: usize = 1203;

/// Bytes before the payload of a relay data frame: the kind and a member.
pub const DATA_HEADER_BYTES: usize = 3;

/// The kind of a reach message: the high four bits of its first byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Kind {
    /// A member checks a direct path to another ([`Probe`](crate::Probe)).
    Probe = 0,
    /// The answer to a probe, from the address it reached.
    ProbeAck = 1,
    /// A host files its match under its codes, or refreshes it.
    Register = 2,
    /// A process asks for the match filed under a code.
    Lookup = 3,
    /// A member asks what changed in its match.
    Poll = 4,
    /// The rendezvous's answer to the three requests above.
    Answer = 5,
    /// The rendezvous tells members of a match about a new or changed one.
    Introduce = 6,
    /// The rendezvous refuses a request.
    RendezvousRefused = 7,
    /// A member asks the relay for (or refreshes) its place in an allocation.
    Allocate = 8,
    /// The relay's cookie for an address it has not proven.
    RelayChallenge = 9,
    /// The relay holds the member's place.
    Allocated = 10,
    /// A member hands the relay a datagram for another member.
    Send = 11,
    /// The relay hands a member a datagram from another.
    Deliver = 12,
    /// The relay refuses a request or a datagram.
    RelayRefused = 13,
}

impl Kind {
    /// Every kind, in wire order.
    pub const ALL: [Kind; 14] = [
        Kind::Probe,
        Kind::ProbeAck,
        Kind::Register,
        Kind::Lookup,
        Kind::Poll,
        Kind::Answer,
        Kind::Introduce,
        Kind::RendezvousRefused,
        Kind::Allocate,
        Kind::RelayChallenge,
        Kind::Allocated,
        Kind::Send,
        Kind::Deliver,
        Kind::RelayRefused,
    ];

    /// The message's first byte.
    pub const fn byte(self) -> u8 {
        ((self as u8) << 4) | 0x0f
    }

    /// The kind a first byte names, if any.
    pub fn from_byte(byte: u8) -> Option<Kind> {
        if byte & 0x0f != 0x0f {
            return None;
        }
        Kind::ALL.get(usize::from(byte >> 4)).copied()
    }
}

/// Whether `bytes` are a reach message (by their first byte): neither a
/// session packet nor a match-setup message.
pub fn is_reach(bytes: &[u8]) -> bool {
    bytes.first().is_some_and(|b| b & 0x0f == 0x0f)
}

/// Why bytes are not a reach message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// The first byte names no reach message.
    #[error("not a reach message")]
    NotReach,
    /// Another version of the format.
    #[error("reach format version {0}, this build speaks {VERSION}")]
    Version(u8),
    /// A field is missing, out of range or not canonical.
    #[error("malformed {kind:?}: {source}")]
    Malformed {
        /// The message.
        kind: Kind,
        /// What was wrong, and where.
        source: DecodeError,
    },
    /// A count or length beyond what the format allows.
    #[error("malformed {kind:?}: {what} beyond its bound")]
    Bound {
        /// The message.
        kind: Kind,
        /// The field.
        what: &'static str,
    },
}

/// Writes `addr` in its [`ADDRESS_BYTES`] form (an IPv6 scope id is not
/// carried).
pub(crate) fn write_address<S: Sink>(w: &mut StateWriter<S>, addr: SocketAddr) {
    let mut ip = [0u8; 16];
    let family = match addr.ip() {
        IpAddr::V4(v4) => {
            ip[..4].copy_from_slice(&v4.octets());
            4
        }
        IpAddr::V6(v6) => {
            ip = v6.octets();
            6
        }
    };
    w.write_u8(family);
    w.write_raw(&ip);
    w.write_u16(addr.port());
}

/// Reads an address written by [`write_address`].
pub(crate) fn read_address(r: &mut StateReader<'_>) -> Result<SocketAddr, DecodeError> {
    let at = r.offset();
    let family = r.read_u8()?;
    let raw = r.read_raw(16)?;
    let port = r.read_u16()?;
    let mut ip = [0u8; 16];
    ip.copy_from_slice(raw);
    let invalid = DecodeError::Invalid {
        offset: at,
        what: "address",
    };
    let ip: IpAddr = match family {
        4 if ip[4..].iter().all(|b| *b == 0) => Ipv4Addr::new(ip[0], ip[1], ip[2], ip[3]).into(),
        6 => Ipv6Addr::from(ip).into(),
        _ => return Err(invalid),
    };
    Ok(SocketAddr::new(ip, port))
}

/// Reads `N` bytes.
pub(crate) fn read_array<const N: usize>(r: &mut StateReader<'_>) -> Result<[u8; N], DecodeError> {
    let mut out = [0u8; N];
    out.copy_from_slice(r.read_raw(N)?);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reach_bytes_are_neither_session_nor_setup() {
        for kind in Kind::ALL {
            assert_eq!(Kind::from_byte(kind.byte()), Some(kind));
            assert!(is_reach(&[kind.byte()]));
        }
        // Session kinds 0..=14 and the setup magic's 'L' (low bits 12).
        for first in 0u8..=255 {
            let low = first & 0x0f;
            assert_eq!(is_reach(&[first]), low == 15, "{first:#x}");
        }
        assert!(!is_reach(b"LKSJ"));
        assert!(!is_reach(&[]));
        assert_eq!(Kind::from_byte(0xef), None);
    }

    #[test]
    fn addresses_round_trip_in_one_form() {
        for text in ["10.0.0.1:7000", "[2001:db8::7]:1", "0.0.0.0:0"] {
            let addr: SocketAddr = text.parse().unwrap();
            let mut w = StateWriter::buffer();
            write_address(&mut w, addr);
            assert_eq!(w.bytes().len(), ADDRESS_BYTES);
            let mut r = StateReader::new(w.bytes());
            assert_eq!(read_address(&mut r).unwrap(), addr);
        }
        // An IPv4 address with bytes after its four is not canonical.
        let mut bytes = [0u8; ADDRESS_BYTES];
        bytes[0] = 4;
        bytes[9] = 1;
        assert!(read_address(&mut StateReader::new(&bytes)).is_err());
        bytes[0] = 5;
        assert!(read_address(&mut StateReader::new(&bytes)).is_err());
    }
}

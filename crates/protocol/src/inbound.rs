//! What every receiver — a seat's session, a relay, a spectator — does
//! first with a datagram: open it (in a sealed match) and decode it,
//! counting in [`Dropped`] what it refuses and why.
//!
//! Invariants: untrusted bytes never panic here; a datagram is either
//! returned as a [`Packet`] or counted once under one reason.

use crate::input::Input;
use crate::packet::{MAX_DATAGRAM, Packet};
use crate::seal::{Link, SealError};
use crate::stats::Dropped;

/// How a receiver opens a datagram from one sender.
pub(crate) enum Opening<'a> {
    /// The match is not sealed: the datagram is the packet.
    Plain,
    /// The match is sealed: it opens with this pair's link, or (`None`: no
    /// key known for the sender) not at all.
    Sealed(Option<&'a mut Link>),
}

/// The packet inside `bytes`, and whether its number is the newest opened
/// from that sender (a plain datagram always counts as newest); `None`
/// when it does not open or decode, counted in `dropped`.
pub(crate) fn open_packet<I: Input>(
    opening: Opening<'_>,
    bytes: &[u8],
    dropped: &mut Dropped,
) -> Option<(Packet<I>, bool)> {
    let mut opened = [0u8; MAX_DATAGRAM];
    let (bytes, newest) = match opening {
        Opening::Plain => (bytes, true),
        Opening::Sealed(None) => {
            dropped.unknown_sender += 1;
            return None;
        }
        Opening::Sealed(Some(link)) => match link.open(bytes, &mut opened) {
            Ok(o) => (o.packet, o.newest),
            Err(SealError::Forged) => {
                dropped.unauthenticated += 1;
                return None;
            }
            Err(_) => {
                dropped.malformed += 1;
                return None;
            }
        },
    };
    match Packet::<I>::decode(bytes) {
        Ok(p) => Some((p, newest)),
        Err(e) => {
            dropped.count(&e);
            None
        }
    }
}

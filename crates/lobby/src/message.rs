//! The setup messages a host and the processes that join it exchange before
//! (and beside) the session: [`Message`], its wire encoding, and the typed
//! aborts (the refusals it carries are `refusal.rs`'s, the roster
//! `roster.rs`'s, the encoding's building blocks `wire.rs`'s).
//!
//! The exchange (drawn in `protocol/SPEC.md` §7):
//!
//! ```text
//! joiner                                        host
//!   Join (1 200 bytes, no cookie)        ───►
//!                                        ◄───   Challenge (cookie, host key)   ≤ 64 bytes
//!   Join (1 200 bytes, with the cookie   ───►   the address is proven: it can receive
//!         and SPAKE2 message A)
//!                                        ◄───   CodeProof (B, the host's confirmation)
//!   Join (… and the joiner's             ───►   the invitation is proven
//!         confirmation)
//!                                        ◄───   Waiting | Roster | Refused
//!   Join (repeated while waiting)        ───►   keeps the offered seat
//!                                        ◄───   Roster (once every seat is taken),
//!                                               tagged under the exchange's key
//! ```
//!
//! (A door left open, a rejoin and the arbiter skip the invitation's two
//! steps: see `invite.rs`.)
//!
//! A host answers an address it has not proven with a challenge (or a
//! refusal of the version) and nothing else, one answer per `Join`, each
//! shorter than the `Join`: whatever a forged source address makes the host
//! send, it sent more itself.
//!
//! Invariants: every message starts with [`MAGIC`], whose first byte reads
//! as a packet kind no session sends, so setup and session traffic cannot
//! be confused; a [`Join`] is exactly [`JOIN_BYTES`] long (zero padding);
//! decoding untrusted bytes never panics, and every length read is bounded
//! by the bytes that remain; `decode(encode(m)) == m`.

use lockstep_fx::{StateReader, StateWriter};
use lockstep_protocol::SeatId;
use lockstep_protocol::seal::PublicKey;

pub use crate::refusal::{Refusal, RosterProblem};
use crate::refusal::{read_refusal, write_refusal};
pub use crate::roster::Roster;
pub use crate::wire::{MAGIC, MAX_DETAIL_BYTES, MessageError, VERSION};
use crate::wire::{bad, read_array, read_key, read_text, write_text};

/// A [`Join`] is padded to this many bytes (the largest datagram), so that
/// every answer to an unproven address is smaller than what it sent.
pub const JOIN_BYTES: usize = lockstep_protocol::packet::MAX_DATAGRAM;
/// Bytes of a [`Cookie`].
pub const COOKIE_BYTES: usize = 20;
/// Bytes of a SPAKE2 message: a side's byte, then a point of Ed25519.
pub const PAKE_BYTES: usize = 33;
/// Bytes of a confirmation or a roster's tag (keyed BLAKE3).
pub const MAC_BYTES: usize = 32;

/// What a joiner asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    /// An empty seat of a match not yet started.
    Seat,
    /// A seat that was dropped from the running match, by the process that
    /// proves it holds that seat's key pair ([`SeatClaim`]).
    Rejoin,
    /// No seat: watch through the host.
    Spectate,
    /// No seat: watch through the host as the match's arbiter, the
    /// spectator whose checksum breaks the seats' ties (only in a match
    /// whose settings take one, and one at a time).
    Arbitrate,
}

impl Want {
    /// Its byte on the wire.
    pub fn byte(self) -> u8 {
        match self {
            Want::Seat => 0,
            Want::Rejoin => 1,
            Want::Spectate => 2,
            Want::Arbitrate => 3,
        }
    }

    fn from_byte(b: u8) -> Option<Want> {
        Some(match b {
            0 => Want::Seat,
            1 => Want::Rejoin,
            2 => Want::Spectate,
            3 => Want::Arbitrate,
            _ => return None,
        })
    }
}

/// The host's proof of an address: a keyed MAC over the address, the
/// joiner's key and a time slot, which only the host can make and check
/// (see [`crate::cookie`]). Holding one proves the address received the
/// host's challenge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cookie(pub [u8; COOKIE_BYTES]);

/// A restarted process's claim to a seat: the seat's key as the match bound
/// it, and a proof that the claimant holds its secret — a MAC, under the
/// key only that secret and the host's can compute
/// ([`lockstep_protocol::seal::proof_key`]), over the claimant's new key and
/// its cookie ([`SeatClaim::make`], [`SeatClaim::verify`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeatClaim {
    /// The seat's key as bound in the running match.
    pub seat_key: PublicKey,
    /// The MAC.
    pub proof: [u8; 32],
}

/// A joiner's proof of its invitation (`invite.rs`): its SPAKE2 message,
/// and once the host proved the code back, its own confirmation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InviteProof {
    /// The joiner's SPAKE2 message.
    pub msg: [u8; PAKE_BYTES],
    /// Its confirmation, for the cookie this `Join` carries.
    pub confirm: Option<[u8; MAC_BYTES]>,
}

/// A joiner's request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Join {
    /// What it asks for.
    pub want: Want,
    /// The wire protocol version it speaks (`lockstep_protocol::packet::VERSION`).
    pub protocol: u8,
    /// The key pair it will play (or watch) with: its public half.
    pub key: PublicKey,
    /// The host's cookie for this address and key, once challenged.
    pub cookie: Option<Cookie>,
    /// A rejoin's claim to its seat.
    pub claim: Option<SeatClaim>,
    /// The proof of its invitation (a door that takes a code).
    pub invite: Option<InviteProof>,
}

/// Why the host called the match off for the processes it seated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Abort {
    /// The host itself cannot play (its replay log cannot be written, its
    /// game refused the settings...).
    HostFailed {
        /// What failed, for a person.
        detail: String,
    },
    /// A seated joiner cannot play the roster.
    JoinerRefused {
        /// Its seat.
        seat: SeatId,
        /// Its refusal.
        refusal: Box<Refusal>,
    },
    /// Not every seat completed its handshake in time.
    NotEveryoneArrived,
}

impl core::fmt::Display for Abort {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Abort::HostFailed { detail } => write!(f, "the host cannot play: {detail}"),
            Abort::JoinerRefused { seat, refusal } => {
                write!(f, "{seat} cannot play the match: {refusal}")
            }
            Abort::NotEveryoneArrived => write!(f, "not every seat arrived in time"),
        }
    }
}

/// A setup message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    /// A joiner's request.
    Join(Join),
    /// The host's answer to an unproven address: ask again with this
    /// cookie. Carries the host's public key (a restarted process needs it
    /// for its seat claim; a wrong one only makes the claim fail).
    Challenge {
        /// The cookie.
        cookie: Cookie,
        /// The host's public key.
        host_key: PublicKey,
    },
    /// The joiner has seat `seat`; `joined` of `seats` seats are taken.
    /// A joiner keeps its offered seat by asking again while it waits.
    Waiting {
        /// The joiner's seat.
        seat: SeatId,
        /// Seats taken, the host's included.
        joined: u8,
        /// Seats in the match.
        seats: u8,
    },
    /// The host's half of an invitation's proof, to a proven address that
    /// sent its SPAKE2 message: its own message and its confirmation that
    /// it holds the code, made for `cookie`.
    CodeProof {
        /// The cookie the confirmation was made for (the one the `Join`
        /// carried).
        cookie: Cookie,
        /// The host's SPAKE2 message.
        answer: [u8; PAKE_BYTES],
        /// The host's confirmation.
        confirm: [u8; MAC_BYTES],
    },
    /// The match, tagged (when the joiner proved an invitation or a key)
    /// under the key the two share, so nobody on the path can change it.
    Roster {
        /// The roster.
        roster: Box<Roster>,
        /// Its tag.
        tag: Option<[u8; MAC_BYTES]>,
    },
    /// No: why.
    Refused(Refusal),
    /// The host called the match off.
    Abort(Abort),
}

/// Whether `bytes` look like a setup message (its magic), as opposed to a
/// session packet.
pub fn is_setup(bytes: &[u8]) -> bool {
    bytes.starts_with(&MAGIC)
}

const TAG_JOIN: u8 = 1;
const TAG_CHALLENGE: u8 = 2;
const TAG_WAITING: u8 = 3;
const TAG_ROSTER: u8 = 4;
const TAG_REFUSED: u8 = 5;
const TAG_ABORT: u8 = 6;
const TAG_CODE_PROOF: u8 = 7;

impl Message {
    /// The message's bytes (a [`Join`] padded to [`JOIN_BYTES`]).
    pub fn encode(&self) -> Vec<u8> {
        let mut w = StateWriter::buffer();
        w.write_raw(&MAGIC);
        w.write_u8(VERSION);
        match self {
            Message::Join(j) => {
                w.write_u8(TAG_JOIN);
                w.write_u8(j.want.byte());
                w.write_u8(j.protocol);
                w.write_raw(&j.key.0);
                w.write_bool(j.cookie.is_some());
                if let Some(c) = &j.cookie {
                    w.write_raw(&c.0);
                }
                w.write_bool(j.claim.is_some());
                if let Some(c) = &j.claim {
                    w.write_raw(&c.seat_key.0);
                    w.write_raw(&c.proof);
                }
                w.write_bool(j.invite.is_some());
                if let Some(i) = &j.invite {
                    w.write_raw(&i.msg);
                    w.write_bool(i.confirm.is_some());
                    if let Some(c) = &i.confirm {
                        w.write_raw(c);
                    }
                }
            }
            Message::Challenge { cookie, host_key } => {
                w.write_u8(TAG_CHALLENGE);
                w.write_raw(&cookie.0);
                w.write_raw(&host_key.0);
            }
            Message::Waiting {
                seat,
                joined,
                seats,
            } => {
                w.write_u8(TAG_WAITING);
                w.write_u8(seat.0);
                w.write_u8(*joined);
                w.write_u8(*seats);
            }
            Message::CodeProof {
                cookie,
                answer,
                confirm,
            } => {
                w.write_u8(TAG_CODE_PROOF);
                w.write_raw(&cookie.0);
                w.write_raw(answer);
                w.write_raw(confirm);
            }
            Message::Roster { roster, tag } => {
                w.write_u8(TAG_ROSTER);
                roster.write(&mut w);
                w.write_bool(tag.is_some());
                if let Some(t) = tag {
                    w.write_raw(t);
                }
            }
            Message::Refused(r) => {
                w.write_u8(TAG_REFUSED);
                write_refusal(&mut w, r);
            }
            Message::Abort(a) => {
                w.write_u8(TAG_ABORT);
                match a {
                    Abort::HostFailed { detail } => {
                        w.write_u8(0);
                        write_text(&mut w, detail);
                    }
                    Abort::JoinerRefused { seat, refusal } => {
                        w.write_u8(1);
                        w.write_u8(seat.0);
                        write_refusal(&mut w, refusal);
                    }
                    Abort::NotEveryoneArrived => w.write_u8(2),
                }
            }
        }
        let mut bytes = w.bytes().to_vec();
        if matches!(self, Message::Join(_)) {
            bytes.resize(JOIN_BYTES, 0);
        }
        bytes
    }

    /// Reads a setup message from untrusted bytes.
    pub fn decode(bytes: &[u8]) -> Result<Message, MessageError> {
        if !is_setup(bytes) {
            return Err(MessageError::NotSetup);
        }
        let mut r = StateReader::new(&bytes[MAGIC.len()..]);
        let version = r.read_u8()?;
        if version != VERSION {
            return Err(MessageError::Version(version));
        }
        let msg = match r.read_u8()? {
            TAG_JOIN => {
                let want = Want::from_byte(r.read_u8()?).ok_or_else(|| bad("unknown request"))?;
                let protocol = r.read_u8()?;
                let key = read_key(&mut r)?;
                let cookie = match r.read_bool()? {
                    true => Some(Cookie(read_array(&mut r)?)),
                    false => None,
                };
                let claim = match r.read_bool()? {
                    true => Some(SeatClaim {
                        seat_key: read_key(&mut r)?,
                        proof: read_array(&mut r)?,
                    }),
                    false => None,
                };
                let invite = match r.read_bool()? {
                    true => Some(InviteProof {
                        msg: read_array(&mut r)?,
                        confirm: match r.read_bool()? {
                            true => Some(read_array(&mut r)?),
                            false => None,
                        },
                    }),
                    false => None,
                };
                // The padding is zeros and makes the request full size.
                if bytes.len() != JOIN_BYTES || r.read_raw(r.remaining())?.iter().any(|b| *b != 0) {
                    return Err(bad("join padding"));
                }
                return Ok(Message::Join(Join {
                    want,
                    protocol,
                    key,
                    cookie,
                    claim,
                    invite,
                }));
            }
            TAG_CHALLENGE => Message::Challenge {
                cookie: Cookie(read_array(&mut r)?),
                host_key: read_key(&mut r)?,
            },
            TAG_WAITING => Message::Waiting {
                seat: SeatId(r.read_u8()?),
                joined: r.read_u8()?,
                seats: r.read_u8()?,
            },
            TAG_ROSTER => Message::Roster {
                roster: Box::new(Roster::read(&mut r)?),
                tag: match r.read_bool()? {
                    true => Some(read_array(&mut r)?),
                    false => None,
                },
            },
            TAG_CODE_PROOF => Message::CodeProof {
                cookie: Cookie(read_array(&mut r)?),
                answer: read_array(&mut r)?,
                confirm: read_array(&mut r)?,
            },
            TAG_REFUSED => Message::Refused(read_refusal(&mut r)?),
            TAG_ABORT => Message::Abort(match r.read_u8()? {
                0 => Abort::HostFailed {
                    detail: read_text(&mut r)?,
                },
                1 => Abort::JoinerRefused {
                    seat: SeatId(r.read_u8()?),
                    refusal: Box::new(read_refusal(&mut r)?),
                },
                2 => Abort::NotEveryoneArrived,
                _ => return Err(bad("unknown abort")),
            }),
            _ => return Err(bad("unknown message")),
        };
        r.finish()?;
        Ok(msg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::MatchSettings;
    use lockstep_fx::Checksum;
    use lockstep_sim::Match;

    fn roster(seat: Option<SeatId>) -> Roster {
        let setup = Match {
            seats: 3,
            seed: 99,
            tick_rate: 60,
        };
        let spectator = seat.is_none();
        Roster {
            game: "cubes".into(),
            game_version: 3,
            config: vec![1, 2, 3, 4],
            config_hash: Checksum::of(&[1, 2, 3, 4]),
            setup,
            seat,
            rejoin: false,
            addresses: if spectator {
                Vec::new()
            } else {
                vec![
                    None,
                    Some("127.0.0.1:4000".parse().unwrap()),
                    Some("[fe80::1%3]:5000".parse().unwrap()),
                ]
            },
            keys: if spectator {
                vec![PublicKey([1; 32])]
            } else {
                vec![PublicKey([1; 32]), PublicKey([2; 32]), PublicKey([3; 32])]
            },
            settings: MatchSettings::new(&setup),
        }
    }

    fn all_messages() -> Vec<Message> {
        let join = Join {
            want: Want::Rejoin,
            protocol: 6,
            key: PublicKey([9; 32]),
            cookie: Some(Cookie([7; COOKIE_BYTES])),
            claim: Some(SeatClaim {
                seat_key: PublicKey([5; 32]),
                proof: [6; 32],
            }),
            invite: None,
        };
        let mut out = vec![
            Message::Join(join.clone()),
            Message::Join(Join {
                want: Want::Spectate,
                cookie: None,
                claim: None,
                ..join.clone()
            }),
            Message::Join(Join {
                want: Want::Seat,
                claim: None,
                invite: Some(InviteProof {
                    msg: [0x41; PAKE_BYTES],
                    confirm: None,
                }),
                ..join.clone()
            }),
            Message::Join(Join {
                want: Want::Spectate,
                claim: None,
                invite: Some(InviteProof {
                    msg: [0x41; PAKE_BYTES],
                    confirm: Some([8; MAC_BYTES]),
                }),
                ..join
            }),
            Message::CodeProof {
                cookie: Cookie([3; COOKIE_BYTES]),
                answer: [0x42; PAKE_BYTES],
                confirm: [9; MAC_BYTES],
            },
            Message::Challenge {
                cookie: Cookie([3; COOKIE_BYTES]),
                host_key: PublicKey([4; 32]),
            },
            Message::Waiting {
                seat: SeatId(1),
                joined: 2,
                seats: 4,
            },
            Message::Roster {
                roster: Box::new(roster(Some(SeatId(2)))),
                tag: Some([0xee; MAC_BYTES]),
            },
            Message::Roster {
                roster: Box::new(roster(None)),
                tag: None,
            },
            Message::Abort(Abort::HostFailed {
                detail: "cannot write the log: é".into(),
            }),
            Message::Abort(Abort::JoinerRefused {
                seat: SeatId(2),
                refusal: Box::new(Refusal::Roster {
                    problem: RosterProblem::GameVersion,
                    detail: "cubes 3 here".into(),
                }),
            }),
            Message::Abort(Abort::NotEveryoneArrived),
        ];
        for r in [
            Refusal::Version { ours: 4, theirs: 3 },
            Refusal::Full,
            Refusal::Started,
            Refusal::NotStarted,
            Refusal::Ended,
            Refusal::KeyInUse,
            Refusal::NoSuchSeat,
            Refusal::NotDropped { seat: SeatId(1) },
            Refusal::BadProof,
            Refusal::SpectatorsFull,
            Refusal::NoArbiter,
            Refusal::InviteNeeded,
            Refusal::BadInvite,
            Refusal::TooManyGuesses,
        ] {
            out.push(Message::Refused(r));
        }
        out
    }

    #[test]
    fn messages_round_trip() {
        for m in all_messages() {
            let bytes = m.encode();
            assert!(bytes.len() <= JOIN_BYTES);
            assert_eq!(Message::decode(&bytes), Ok(m));
        }
    }

    #[test]
    fn a_join_is_full_size_and_what_an_unproven_address_gets_is_smaller() {
        let join = Message::Join(Join {
            want: Want::Seat,
            protocol: 6,
            key: PublicKey([9; 32]),
            cookie: None,
            claim: None,
            invite: None,
        })
        .encode();
        assert_eq!(join.len(), JOIN_BYTES);
        let challenge = Message::Challenge {
            cookie: Cookie([3; COOKIE_BYTES]),
            host_key: PublicKey([4; 32]),
        }
        .encode();
        assert!(challenge.len() * 16 < join.len(), "{}", challenge.len());
        let version = Message::Refused(Refusal::Version { ours: 4, theirs: 3 }).encode();
        assert!(version.len() * 16 < join.len());
        // A short join is refused: it would let a forged address amplify.
        assert!(Message::decode(&join[..100]).is_err());
    }

    #[test]
    fn long_text_is_cut_at_a_character_boundary() {
        let long = "é".repeat(MAX_DETAIL_BYTES);
        let m = Message::Abort(Abort::HostFailed { detail: long });
        let Ok(Message::Abort(Abort::HostFailed { detail })) = Message::decode(&m.encode()) else {
            panic!("did not decode");
        };
        assert_eq!(detail.len(), MAX_DETAIL_BYTES);
    }

    #[test]
    fn every_truncation_and_corruption_is_an_error_not_a_panic() {
        for m in all_messages() {
            let bytes = m.encode();
            let end = if matches!(m, Message::Join(_)) {
                120
            } else {
                bytes.len()
            };
            for n in 0..end.min(bytes.len()) {
                assert!(Message::decode(&bytes[..n]).is_err(), "{m:?} cut at {n}");
            }
            for i in 0..end.min(bytes.len()) {
                for bit in 0..8 {
                    let mut b = bytes.clone();
                    b[i] ^= 1 << bit;
                    let _ = Message::decode(&b);
                }
            }
        }
        assert_eq!(Message::decode(b"hello"), Err(MessageError::NotSetup));
    }

    #[test]
    fn the_session_decoder_never_takes_a_setup_message() {
        use lockstep_protocol::Packet;
        use lockstep_protocol::input::Buttons;
        for m in all_messages() {
            assert!(Packet::<Buttons>::decode(&m.encode()).is_err());
        }
    }
}

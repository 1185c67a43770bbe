//! The setup messages a host and the processes that join it exchange before
//! (and beside) the session: [`Message`], its wire encoding, and the typed
//! refusals and aborts.
//!
//! The exchange (drawn in `protocol/SPEC.md` §7):
//!
//! ```text
//! joiner                                        host
//!   Join (1 200 bytes, no cookie)        ───►
//!                                        ◄───   Challenge (cookie, host key)   ≤ 64 bytes
//!   Join (1 200 bytes, with the cookie)  ───►   the address is proven: it can receive
//!                                        ◄───   Waiting | Roster | Refused
//!   Join (repeated while waiting)        ───►   keeps the offered seat
//!                                        ◄───   Roster (once every seat is taken)
//! ```
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

pub use crate::roster::Roster;
use lockstep_fx::{DecodeError, Sink, StateReader, StateWriter};
use lockstep_protocol::seal::PublicKey;

/// The first bytes of every setup message ("LKSJ").
pub const MAGIC: [u8; 4] = *b"LKSJ";
/// The setup format's version.
pub const VERSION: u8 = 4;
/// A [`Join`] is padded to this many bytes (the largest datagram), so that
/// every answer to an unproven address is smaller than what it sent.
pub const JOIN_BYTES: usize = lockstep_protocol::packet::MAX_DATAGRAM;
/// Bytes of a [`Cookie`].
pub const COOKIE_BYTES: usize = 20;
/// Longest text a refusal or abort carries (longer text is cut).
pub const MAX_DETAIL_BYTES: usize = 200;

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
}

/// Why a request was not granted (host to joiner), or a roster not played
/// (joiner to host).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Another setup format or wire protocol.
    Version {
        /// The version the refusing side speaks.
        ours: u8,
        /// The version it was asked to speak.
        theirs: u8,
    },
    /// Every seat is offered (ask again: an offer whose joiner goes silent
    /// lapses).
    Full,
    /// The match has started: no new seats (rejoin a dropped seat, or watch).
    Started,
    /// The match has not started yet: nothing to rejoin or watch (ask again).
    NotStarted,
    /// The match is over.
    Ended,
    /// This key already holds another seat.
    KeyInUse,
    /// A rejoin names a key no seat of the match is bound to.
    NoSuchSeat,
    /// A rejoin's seat is still in the match: it has not been dropped (yet).
    NotDropped {
        /// The seat.
        seat: u8,
    },
    /// A rejoin's proof does not verify.
    BadProof,
    /// Too many spectators are being admitted (ask again).
    SpectatorsFull,
    /// The joiner cannot play the roster the host sent.
    Roster {
        /// Why.
        problem: RosterProblem,
        /// Details, for a person.
        detail: String,
    },
}

impl Refusal {
    /// Whether asking again later may succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            Refusal::Full
                | Refusal::NotStarted
                | Refusal::NotDropped { .. }
                | Refusal::SpectatorsFull
        )
    }
}

impl core::fmt::Display for Refusal {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Refusal::Version { ours, theirs } => {
                write!(f, "version {theirs} asked, version {ours} spoken")
            }
            Refusal::Full => write!(f, "every seat is offered"),
            Refusal::Started => write!(f, "the match has started (rejoin a dropped seat or watch)"),
            Refusal::NotStarted => write!(f, "the match has not started yet"),
            Refusal::Ended => write!(f, "the match is over"),
            Refusal::KeyInUse => write!(f, "this key already holds another seat"),
            Refusal::NoSuchSeat => write!(f, "no seat of the match is bound to this key"),
            Refusal::NotDropped { seat } => write!(f, "seat {seat} is still in the match"),
            Refusal::BadProof => write!(f, "the proof of the seat's key does not verify"),
            Refusal::SpectatorsFull => write!(f, "too many spectators are joining"),
            Refusal::Roster { problem, detail } => write!(f, "{problem}: {detail}"),
        }
    }
}

/// Why a joiner cannot play a roster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RosterProblem {
    /// It does not know the game.
    UnknownGame,
    /// It has another version of the game.
    GameVersion,
    /// The settings do not hash to the roster's hash, or do not decode.
    Settings,
    /// The roster binds another key to the joiner's seat.
    WrongKey,
    /// The roster is inconsistent (a seat out of range, keys missing).
    Malformed,
    /// This process cannot start its seat (its replay log cannot be
    /// written, its game refuses the match).
    Local,
}

impl core::fmt::Display for RosterProblem {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            RosterProblem::UnknownGame => "unknown game",
            RosterProblem::GameVersion => "another version of the game",
            RosterProblem::Settings => "settings that do not decode or hash differently",
            RosterProblem::WrongKey => "the roster binds another key to our seat",
            RosterProblem::Malformed => "an inconsistent roster",
            RosterProblem::Local => "this process cannot start its seat",
        })
    }
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
        seat: u8,
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
                write!(f, "seat {seat} cannot play the match: {refusal}")
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
    /// The joiner has seat `seat`; `joined` of `players` seats are taken.
    /// A joiner keeps its offered seat by asking again while it waits.
    Waiting {
        /// The joiner's seat.
        seat: u8,
        /// Seats taken, the host's included.
        joined: u8,
        /// Seats in the match.
        players: u8,
    },
    /// The match.
    Roster(Box<Roster>),
    /// No: why.
    Refused(Refusal),
    /// The host called the match off.
    Abort(Abort),
}

/// Why bytes are not a setup message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MessageError {
    /// Not a setup message at all.
    #[error("not a match-setup message")]
    NotSetup,
    /// Another version of the setup format.
    #[error("match-setup version {0}, this build speaks {VERSION}")]
    Version(u8),
    /// A field is missing, out of range or not canonical.
    #[error("malformed match-setup message: {0}")]
    Malformed(String),
}

impl From<DecodeError> for MessageError {
    fn from(e: DecodeError) -> MessageError {
        MessageError::Malformed(e.to_string())
    }
}

pub(crate) fn bad(what: &str) -> MessageError {
    MessageError::Malformed(what.to_string())
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

impl Message {
    /// The message's bytes (a [`Join`] padded to [`JOIN_BYTES`]).
    pub fn encode(&self) -> Vec<u8> {
        let mut w = StateWriter::buffer();
        w.write_raw(&MAGIC);
        w.write_u8(VERSION);
        match self {
            Message::Join(j) => {
                w.write_u8(TAG_JOIN);
                w.write_u8(match j.want {
                    Want::Seat => 0,
                    Want::Rejoin => 1,
                    Want::Spectate => 2,
                });
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
            }
            Message::Challenge { cookie, host_key } => {
                w.write_u8(TAG_CHALLENGE);
                w.write_raw(&cookie.0);
                w.write_raw(&host_key.0);
            }
            Message::Waiting {
                seat,
                joined,
                players,
            } => {
                w.write_u8(TAG_WAITING);
                w.write_u8(*seat);
                w.write_u8(*joined);
                w.write_u8(*players);
            }
            Message::Roster(r) => {
                w.write_u8(TAG_ROSTER);
                r.write(&mut w);
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
                        w.write_u8(*seat);
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
                let want = match r.read_u8()? {
                    0 => Want::Seat,
                    1 => Want::Rejoin,
                    2 => Want::Spectate,
                    _ => return Err(bad("unknown request")),
                };
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
                }));
            }
            TAG_CHALLENGE => Message::Challenge {
                cookie: Cookie(read_array(&mut r)?),
                host_key: read_key(&mut r)?,
            },
            TAG_WAITING => Message::Waiting {
                seat: r.read_u8()?,
                joined: r.read_u8()?,
                players: r.read_u8()?,
            },
            TAG_ROSTER => Message::Roster(Box::new(Roster::read(&mut r)?)),
            TAG_REFUSED => Message::Refused(read_refusal(&mut r)?),
            TAG_ABORT => Message::Abort(match r.read_u8()? {
                0 => Abort::HostFailed {
                    detail: read_text(&mut r)?,
                },
                1 => Abort::JoinerRefused {
                    seat: r.read_u8()?,
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

pub(crate) fn read_array<const N: usize>(r: &mut StateReader<'_>) -> Result<[u8; N], MessageError> {
    r.read_raw(N)?.try_into().map_err(|_| bad("array"))
}

pub(crate) fn read_key(r: &mut StateReader<'_>) -> Result<PublicKey, MessageError> {
    Ok(PublicKey(read_array(r)?))
}

/// Text cut to [`MAX_DETAIL_BYTES`] at a character boundary.
fn cut(text: &str) -> &str {
    let mut end = text.len().min(MAX_DETAIL_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

pub(crate) fn write_text<S: Sink>(w: &mut StateWriter<S>, text: &str) {
    w.write_bytes(cut(text).as_bytes());
}

pub(crate) fn read_text(r: &mut StateReader<'_>) -> Result<String, MessageError> {
    let bytes = r.read_bytes()?;
    if bytes.len() > MAX_DETAIL_BYTES {
        return Err(bad("text too long"));
    }
    String::from_utf8(bytes.to_vec()).map_err(|_| bad("text"))
}

fn write_refusal<S: Sink>(w: &mut StateWriter<S>, r: &Refusal) {
    match r {
        Refusal::Version { ours, theirs } => {
            w.write_u8(0);
            w.write_u8(*ours);
            w.write_u8(*theirs);
        }
        Refusal::Full => w.write_u8(1),
        Refusal::Started => w.write_u8(2),
        Refusal::NotStarted => w.write_u8(3),
        Refusal::Ended => w.write_u8(4),
        Refusal::KeyInUse => w.write_u8(5),
        Refusal::NoSuchSeat => w.write_u8(6),
        Refusal::NotDropped { seat } => {
            w.write_u8(7);
            w.write_u8(*seat);
        }
        Refusal::BadProof => w.write_u8(8),
        Refusal::SpectatorsFull => w.write_u8(9),
        Refusal::Roster { problem, detail } => {
            w.write_u8(10);
            w.write_u8(match problem {
                RosterProblem::UnknownGame => 0,
                RosterProblem::GameVersion => 1,
                RosterProblem::Settings => 2,
                RosterProblem::WrongKey => 3,
                RosterProblem::Malformed => 4,
                RosterProblem::Local => 5,
            });
            write_text(w, detail);
        }
    }
}

fn read_refusal(r: &mut StateReader<'_>) -> Result<Refusal, MessageError> {
    Ok(match r.read_u8()? {
        0 => Refusal::Version {
            ours: r.read_u8()?,
            theirs: r.read_u8()?,
        },
        1 => Refusal::Full,
        2 => Refusal::Started,
        3 => Refusal::NotStarted,
        4 => Refusal::Ended,
        5 => Refusal::KeyInUse,
        6 => Refusal::NoSuchSeat,
        7 => Refusal::NotDropped { seat: r.read_u8()? },
        8 => Refusal::BadProof,
        9 => Refusal::SpectatorsFull,
        10 => Refusal::Roster {
            problem: match r.read_u8()? {
                0 => RosterProblem::UnknownGame,
                1 => RosterProblem::GameVersion,
                2 => RosterProblem::Settings,
                3 => RosterProblem::WrongKey,
                4 => RosterProblem::Malformed,
                5 => RosterProblem::Local,
                _ => return Err(bad("unknown roster problem")),
            },
            detail: read_text(r)?,
        },
        _ => return Err(bad("unknown refusal")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::MatchSettings;
    use lockstep_fx::Checksum;
    use lockstep_sim::Match;

    fn roster(seat: Option<u8>) -> Roster {
        let setup = Match {
            players: 3,
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
        };
        let mut out = vec![
            Message::Join(join.clone()),
            Message::Join(Join {
                want: Want::Spectate,
                cookie: None,
                claim: None,
                ..join
            }),
            Message::Challenge {
                cookie: Cookie([3; COOKIE_BYTES]),
                host_key: PublicKey([4; 32]),
            },
            Message::Waiting {
                seat: 1,
                joined: 2,
                players: 4,
            },
            Message::Roster(Box::new(roster(Some(2)))),
            Message::Roster(Box::new(roster(None))),
            Message::Abort(Abort::HostFailed {
                detail: "cannot write the log: é".into(),
            }),
            Message::Abort(Abort::JoinerRefused {
                seat: 2,
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
            Refusal::NotDropped { seat: 1 },
            Refusal::BadProof,
            Refusal::SpectatorsFull,
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

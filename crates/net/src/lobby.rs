//! The match-setup messages exchanged before a session starts, and the
//! host's bookkeeping of who sits where ([`Seating`]).
//!
//! A joiner sends [`Join`] (padded to [`JOIN_BYTES`]) to the host until it
//! gets an answer: [`Lobby::Waiting`] while seats are still empty,
//! [`Lobby::Roster`] once every seat is taken (the game, its encoded
//! settings and their hash, the match, the joiner's seat, every seat's
//! address and public key), or [`Lobby::Refused`] with a reason. A joiner
//! that cannot play the roster (unknown game, other version, settings that
//! do not decode or hash differently, a roster that binds another key to
//! its seat) answers with a [`Lobby::Refused`] of its own, so both sides
//! print why.
//!
//! Keys: every process draws an X25519 key pair for the match and sends
//! its public key in its `Join`; the host's roster binds each seat to one
//! key (the host's own at seat 0, which is also the key spectators seal
//! with), and every session packet after setup is sealed with keys agreed
//! from them (`lockstep_protocol::seal`). The roster is the root of trust:
//! a joiner believes the host it chose to join, and checks that the roster
//! gives its own seat its own key. These messages themselves travel in
//! clear; someone who can rewrite the setup exchange on the path could
//! substitute keys, as with any unauthenticated key exchange.
//!
//! Invariants: every message starts with [`MAGIC`], whose first byte `L`
//! (0x4C) reads as packet kind 12 to the session's decoder, a kind no
//! session sends, so the two kinds of traffic cannot be confused; the host
//! sends an unconfirmed address at most one message per `Join` received,
//! never longer than [`JOIN_BYTES`], so a forged source address gets no
//! more bytes than it sent; decoding untrusted bytes never panics.

use std::net::SocketAddr;

use lockstep_fx::{Checksum, DecodeError, StateReader, StateWriter};
use lockstep_protocol::seal::PublicKey;
use lockstep_protocol::{InputDelay, Mode, Rollback};
use lockstep_sim::Match;

/// The first bytes of every setup message ("LKSJ").
pub const MAGIC: [u8; 4] = *b"LKSJ";
/// The setup format's version.
pub const VERSION: u8 = 3;
/// A [`Join`] is padded to this many bytes (the largest datagram), so every
/// answer fits the bytes the joiner spent.
pub const JOIN_BYTES: usize = lockstep_protocol::packet::MAX_DATAGRAM;

/// What a joiner asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    /// An empty seat of a match not yet started.
    Seat,
    /// A seat that was dropped from the running match (the joiner is that
    /// seat's restarted process).
    Rejoin,
    /// No seat: watch through the host.
    Spectate,
}

/// A joiner's request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Join {
    /// What it asks for.
    pub want: Want,
    /// The wire protocol version it speaks.
    pub protocol: u8,
    /// Its public key for the match.
    pub key: PublicKey,
}

/// Everything a joiner needs to play or watch the match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Roster {
    /// The game's id.
    pub game: String,
    /// The game's version.
    pub game_version: u32,
    /// The game's settings, canonically encoded.
    pub config: Vec<u8>,
    /// BLAKE3 of `config`.
    pub config_hash: Checksum,
    /// Players, seed, tick rate.
    pub setup: Match,
    /// Frames the match lasts.
    pub frames: u32,
    /// The joiner's seat (`None`: it watches).
    pub seat: Option<u8>,
    /// The joiner rejoins a running match in `seat`.
    pub rejoin: bool,
    /// Every seat's address as the host knows it; the host's own is `None`
    /// (the joiner reaches it at the address it joined).
    pub addresses: Vec<Option<SocketAddr>>,
    /// Whether session packets are sealed (the host decides; off only for
    /// tests on a trusted network).
    pub sealed: bool,
    /// Every seat's public key, the host's at seat 0 (spectators seal with
    /// it too).
    pub keys: Vec<PublicKey>,
    /// Lockstep or rollback, and rollback's settings: every seat plays the
    /// host's.
    pub mode: Mode,
}

/// A setup message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lobby {
    /// A joiner's request.
    Join(Join),
    /// The joiner has seat `seat`; `joined` of `players` seats are taken.
    Waiting {
        /// The joiner's seat.
        seat: u8,
        /// Seats taken, the host's included.
        joined: u8,
        /// Seats in the match.
        players: u8,
    },
    /// The match.
    Roster(Roster),
    /// No: why.
    Refused(String),
}

/// Why bytes are not a setup message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LobbyError {
    /// Not a setup message at all.
    #[error("not a match-setup message")]
    NotLobby,
    /// Another version of the setup format.
    #[error("match-setup version {0}, this build speaks {VERSION}")]
    Version(u8),
    /// A field is missing or out of range.
    #[error("malformed match-setup message: {0}")]
    Malformed(String),
}

impl From<DecodeError> for LobbyError {
    fn from(e: DecodeError) -> LobbyError {
        LobbyError::Malformed(e.to_string())
    }
}

/// Whether `bytes` look like a setup message (its magic), as opposed to a
/// session packet.
pub fn is_lobby(bytes: &[u8]) -> bool {
    bytes.starts_with(&MAGIC)
}

const TAG_JOIN: u8 = 1;
const TAG_WAITING: u8 = 2;
const TAG_ROSTER: u8 = 3;
const TAG_REFUSED: u8 = 4;

impl Lobby {
    /// The message's bytes (a [`Join`] padded to [`JOIN_BYTES`]).
    pub fn encode(&self) -> Vec<u8> {
        let mut w = StateWriter::buffer();
        w.write_raw(&MAGIC);
        w.write_u8(VERSION);
        match self {
            Lobby::Join(j) => {
                w.write_u8(TAG_JOIN);
                w.write_u8(match j.want {
                    Want::Seat => 0,
                    Want::Rejoin => 1,
                    Want::Spectate => 2,
                });
                w.write_u8(j.protocol);
                w.write_raw(&j.key.0);
            }
            Lobby::Waiting {
                seat,
                joined,
                players,
            } => {
                w.write_u8(TAG_WAITING);
                w.write_u8(*seat);
                w.write_u8(*joined);
                w.write_u8(*players);
            }
            Lobby::Roster(r) => {
                w.write_u8(TAG_ROSTER);
                w.write_bytes(r.game.as_bytes());
                w.write_u32(r.game_version);
                w.write_bytes(&r.config);
                w.write_raw(r.config_hash.as_bytes());
                w.write_u8(r.setup.players);
                w.write_u64(r.setup.seed);
                w.write_u16(r.setup.tick_rate);
                w.write_u32(r.frames);
                w.write_u8(r.seat.unwrap_or(u8::MAX));
                w.write_bool(r.rejoin);
                w.write_u8(r.addresses.len() as u8);
                for a in &r.addresses {
                    let text = a.map(|a| a.to_string()).unwrap_or_default();
                    w.write_bytes(text.as_bytes());
                }
                w.write_bool(r.sealed);
                for k in &r.keys {
                    w.write_raw(&k.0);
                }
                write_mode(&mut w, &r.mode);
            }
            Lobby::Refused(reason) => {
                w.write_u8(TAG_REFUSED);
                let cut: String = reason.chars().take(400).collect();
                w.write_bytes(cut.as_bytes());
            }
        }
        let mut bytes = w.bytes().to_vec();
        if matches!(self, Lobby::Join(_)) {
            bytes.resize(JOIN_BYTES, 0);
        }
        bytes
    }

    /// Reads a setup message from untrusted bytes.
    pub fn decode(bytes: &[u8]) -> Result<Lobby, LobbyError> {
        if !is_lobby(bytes) {
            return Err(LobbyError::NotLobby);
        }
        let mut r = StateReader::new(&bytes[MAGIC.len()..]);
        let version = r.read_u8()?;
        if version != VERSION {
            return Err(LobbyError::Version(version));
        }
        let bad = |what: &str| LobbyError::Malformed(what.to_string());
        let msg = match r.read_u8()? {
            TAG_JOIN => {
                let want = match r.read_u8()? {
                    0 => Want::Seat,
                    1 => Want::Rejoin,
                    2 => Want::Spectate,
                    _ => return Err(bad("unknown request")),
                };
                let protocol = r.read_u8()?;
                let key = PublicKey(r.read_raw(32)?.try_into().map_err(|_| bad("key"))?);
                // The padding is zeros and makes the request full size.
                if bytes.len() != JOIN_BYTES || r.read_raw(r.remaining())?.iter().any(|b| *b != 0) {
                    return Err(bad("join padding"));
                }
                return Ok(Lobby::Join(Join {
                    want,
                    protocol,
                    key,
                }));
            }
            TAG_WAITING => Lobby::Waiting {
                seat: r.read_u8()?,
                joined: r.read_u8()?,
                players: r.read_u8()?,
            },
            TAG_ROSTER => {
                let game = text(r.read_bytes()?)?;
                let game_version = r.read_u32()?;
                let config = r.read_bytes()?.to_vec();
                let hash: [u8; 32] = r.read_raw(32)?.try_into().map_err(|_| bad("config hash"))?;
                let players = r.read_u8()?;
                let seed = r.read_u64()?;
                let tick_rate = r.read_u16()?;
                let frames = r.read_u32()?;
                let seat = match r.read_u8()? {
                    u8::MAX => None,
                    s if s < players => Some(s),
                    _ => return Err(bad("seat beyond the player count")),
                };
                let rejoin = r.read_bool()?;
                let n = r.read_u8()?;
                if n != players || !(2..=8).contains(&players) {
                    return Err(bad("address count"));
                }
                let mut addresses = Vec::new();
                for _ in 0..n {
                    let t = text(r.read_bytes()?)?;
                    addresses.push(if t.is_empty() {
                        None
                    } else {
                        Some(t.parse().map_err(|_| bad("address"))?)
                    });
                }
                let sealed = r.read_bool()?;
                let mut keys = Vec::new();
                for _ in 0..n {
                    keys.push(PublicKey(
                        r.read_raw(32)?.try_into().map_err(|_| bad("key"))?,
                    ));
                }
                let mode = read_mode(&mut r).ok_or(bad("mode"))?;
                Lobby::Roster(Roster {
                    game,
                    game_version,
                    config,
                    config_hash: Checksum::from_bytes(hash),
                    setup: Match {
                        players,
                        seed,
                        tick_rate,
                    },
                    frames,
                    seat,
                    rejoin,
                    addresses,
                    sealed,
                    keys,
                    mode,
                })
            }
            TAG_REFUSED => Lobby::Refused(text(r.read_bytes()?)?),
            _ => return Err(bad("unknown message")),
        };
        r.finish()?;
        Ok(msg)
    }
}

fn text(bytes: &[u8]) -> Result<String, LobbyError> {
    String::from_utf8(bytes.to_vec()).map_err(|_| LobbyError::Malformed("text".into()))
}

/// The host's seating: which address holds which seat.
#[derive(Debug, Clone)]
pub struct Seating {
    addresses: Vec<Option<SocketAddr>>,
}

impl Seating {
    /// `players` seats, the host in seat 0.
    pub fn new(players: u8) -> Seating {
        Seating {
            addresses: vec![None; usize::from(players)],
        }
    }

    /// Seats taken, the host's included.
    pub fn joined(&self) -> u8 {
        1 + self.addresses.iter().skip(1).flatten().count() as u8
    }

    /// Whether every seat is taken.
    pub fn full(&self) -> bool {
        usize::from(self.joined()) == self.addresses.len()
    }

    /// The seat of `addr`, if it has one.
    pub fn seat_of(&self, addr: SocketAddr) -> Option<u8> {
        self.addresses
            .iter()
            .position(|a| *a == Some(addr))
            .map(|s| s as u8)
    }

    /// Seats `addr` in the first empty seat (or finds its seat).
    pub fn take(&mut self, addr: SocketAddr) -> Option<u8> {
        if let Some(s) = self.seat_of(addr) {
            return Some(s);
        }
        let free = self.addresses.iter().skip(1).position(Option::is_none)? + 1;
        self.addresses[free] = Some(addr);
        Some(free as u8)
    }

    /// Gives `seat` to `addr` (a restarted process taking its seat back).
    pub fn reseat(&mut self, seat: u8, addr: SocketAddr) {
        if let Some(a) = self.addresses.get_mut(usize::from(seat)) {
            *a = Some(addr);
        }
    }

    /// Every seat's address, the host's `None`.
    pub fn addresses(&self) -> &[Option<SocketAddr>] {
        &self.addresses
    }
}

/// Writes a match's mode: 0 for lockstep; 1, the prediction window, and
/// the input delay (0 and its frames for a fixed one, 1 and its bounds
/// for an adaptive one) for rollback. The sync test is for tests only and
/// never travels.
fn write_mode<S: lockstep_fx::Sink>(w: &mut StateWriter<S>, mode: &Mode) {
    match mode {
        Mode::Lockstep => w.write_u8(0),
        Mode::Rollback(r) => {
            w.write_u8(1);
            w.write_u32(r.max_prediction);
            match r.input_delay {
                InputDelay::Fixed(d) => {
                    w.write_u8(0);
                    w.write_u32(d);
                }
                InputDelay::Adaptive { min, max } => {
                    w.write_u8(1);
                    w.write_u32(min);
                    w.write_u32(max);
                }
            }
        }
    }
}

/// Reads what [`write_mode`] wrote; `None` for anything else (the session
/// checks the ranges when it starts).
fn read_mode(r: &mut StateReader<'_>) -> Option<Mode> {
    Some(match r.read_u8().ok()? {
        0 => Mode::Lockstep,
        1 => {
            let max_prediction = r.read_u32().ok()?;
            let input_delay = match r.read_u8().ok()? {
                0 => InputDelay::Fixed(r.read_u32().ok()?),
                1 => InputDelay::Adaptive {
                    min: r.read_u32().ok()?,
                    max: r.read_u32().ok()?,
                },
                _ => return None,
            };
            Mode::Rollback(Rollback {
                max_prediction,
                input_delay,
                sync_test_frames: 0,
            })
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roster() -> Roster {
        Roster {
            game: "cubes".into(),
            game_version: 3,
            config: vec![1, 2, 3, 4],
            config_hash: Checksum::of(&[1, 2, 3, 4]),
            setup: Match {
                players: 3,
                seed: 99,
                tick_rate: 60,
            },
            frames: 1200,
            seat: Some(2),
            rejoin: false,
            addresses: vec![
                None,
                Some("127.0.0.1:4000".parse().unwrap()),
                Some("[::1]:5000".parse().unwrap()),
            ],
            sealed: true,
            keys: vec![PublicKey([1; 32]), PublicKey([2; 32]), PublicKey([3; 32])],
            mode: Mode::Rollback(Rollback {
                max_prediction: 8,
                input_delay: InputDelay::Adaptive { min: 1, max: 30 },
                sync_test_frames: 0,
            }),
        }
    }

    #[test]
    fn messages_round_trip() {
        for m in [
            Lobby::Join(Join {
                want: Want::Rejoin,
                protocol: 3,
                key: PublicKey([9; 32]),
            }),
            Lobby::Waiting {
                seat: 1,
                joined: 2,
                players: 4,
            },
            Lobby::Roster(roster()),
            Lobby::Roster(Roster {
                mode: Mode::Lockstep,
                ..roster()
            }),
            Lobby::Roster(Roster {
                mode: Mode::Rollback(Rollback {
                    input_delay: InputDelay::Fixed(2),
                    ..Rollback::DEFAULT
                }),
                ..roster()
            }),
            Lobby::Refused("the match is full".into()),
        ] {
            let bytes = m.encode();
            assert!(bytes.len() <= JOIN_BYTES);
            assert_eq!(Lobby::decode(&bytes), Ok(m));
        }
    }

    #[test]
    fn a_join_is_full_size_and_answers_fit_it() {
        let join = Lobby::Join(Join {
            want: Want::Seat,
            protocol: 3,
            key: PublicKey([9; 32]),
        })
        .encode();
        assert_eq!(join.len(), JOIN_BYTES);
        assert!(Lobby::Roster(roster()).encode().len() < join.len());
        // A short join is refused: it would let a forged address amplify.
        assert!(Lobby::decode(&join[..100]).is_err());
    }

    /// The largest rosters the shipped games give (8 seats, every address
    /// the longest IPv6 text, every key) still answer a join with fewer
    /// bytes than it spent.
    #[test]
    fn the_largest_rosters_fit_in_less_than_a_join() {
        use lockstep_fx::Canonical;
        use lockstep_games::Demo;
        let long: SocketAddr = "[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff%4294967295]:65535"
            .parse()
            .unwrap_or_else(|_| {
                "[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535"
                    .parse()
                    .unwrap()
            });
        for config in [
            lockstep_games::cubes::Cubes::default_config().to_snapshot(),
            lockstep_games::rts::Rts::default_config().to_snapshot(),
        ] {
            let r = Roster {
                config_hash: Checksum::of(&config),
                config,
                setup: Match {
                    players: 8,
                    seed: u64::MAX,
                    tick_rate: 240,
                },
                addresses: vec![Some(long); 8],
                keys: vec![PublicKey([0xff; 32]); 8],
                mode: Mode::Rollback(Rollback {
                    input_delay: InputDelay::Adaptive {
                        min: u32::MAX,
                        max: u32::MAX,
                    },
                    ..Rollback::DEFAULT
                }),
                ..roster()
            };
            let n = Lobby::Roster(r).encode().len();
            assert!(n < JOIN_BYTES, "a roster of {n} bytes");
        }
    }

    #[test]
    fn every_truncation_and_corruption_is_an_error_not_a_panic() {
        let bytes = Lobby::Roster(roster()).encode();
        for n in 0..bytes.len() {
            assert!(Lobby::decode(&bytes[..n]).is_err());
        }
        for i in 0..bytes.len() {
            for bit in 0..8 {
                let mut b = bytes.clone();
                b[i] ^= 1 << bit;
                let _ = Lobby::decode(&b);
            }
        }
        assert_eq!(Lobby::decode(b"hello"), Err(LobbyError::NotLobby));
    }

    #[test]
    fn the_session_decoder_never_takes_a_setup_message() {
        use lockstep_protocol::Packet;
        use lockstep_protocol::input::Buttons;
        for m in [Lobby::Roster(roster()), Lobby::Refused("x".into())] {
            assert!(Packet::<Buttons>::decode(&m.encode()).is_err());
        }
    }

    #[test]
    fn seats_fill_in_order_and_addresses_keep_theirs() {
        let mut s = Seating::new(3);
        let a: SocketAddr = "127.0.0.1:1".parse().unwrap();
        let b: SocketAddr = "127.0.0.1:2".parse().unwrap();
        let c: SocketAddr = "127.0.0.1:3".parse().unwrap();
        assert_eq!(s.take(a), Some(1));
        assert_eq!(s.take(a), Some(1));
        assert!(!s.full());
        assert_eq!(s.take(b), Some(2));
        assert!(s.full());
        assert_eq!(s.take(c), None);
        s.reseat(2, c);
        assert_eq!(s.seat_of(c), Some(2));
        assert_eq!(s.seat_of(b), None);
    }
}

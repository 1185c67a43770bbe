//! [`Roster`]: everything a joiner needs to play or watch the match — the
//! game and its settings, the match, its seat, every seat's address and
//! key, the match settings — its encoding, and [`Roster::accept`], the
//! joiner's check that this build can play it.
//!
//! Invariants: a seat's roster names every seat's address and key; a
//! spectator's names no address and only the host's key; decoding untrusted
//! bytes never panics (`protocol/SPEC.md` §7).

use lockstep_protocol::SeatId;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV6};

use lockstep_fx::{Canonical, Checksum, Sink, StateReader, StateWriter};
use lockstep_protocol::seal::PublicKey;
use lockstep_sim::{Game, Match};

use crate::refusal::{Refusal, RosterProblem};
use crate::settings::MatchSettings;
use crate::wire::{MessageError, bad, read_array, read_key, read_text, write_text};

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
    /// Seats, seed, tick rate.
    pub setup: Match,
    /// The joiner's seat (`None`: it watches).
    pub seat: Option<SeatId>,
    /// The joiner takes back a dropped seat of the running match.
    pub rejoin: bool,
    /// Every seat's address as the host knows it, the host's own `None`
    /// (reached at the address joined). Empty in a spectator's roster:
    /// spectators learn no seat's address.
    pub addresses: Vec<Option<SocketAddr>>,
    /// Every seat's public key (a spectator's roster holds only the host's,
    /// which its relay seals with).
    pub keys: Vec<PublicKey>,
    /// How the match is played: its length, sealing, and every seat's
    /// session, log and relay settings (the host's choices).
    pub settings: MatchSettings,
}

/// Writes an address: 4 and the IPv4 octets, or 6, the IPv6 octets and the
/// scope id; then the port.
fn write_addr<S: Sink>(w: &mut StateWriter<S>, addr: &SocketAddr) {
    match addr {
        SocketAddr::V4(a) => {
            w.write_u8(4);
            w.write_raw(&a.ip().octets());
        }
        SocketAddr::V6(a) => {
            w.write_u8(6);
            w.write_raw(&a.ip().octets());
            w.write_u32(a.scope_id());
        }
    }
    w.write_u16(addr.port());
}

fn read_addr(r: &mut StateReader<'_>) -> Result<SocketAddr, MessageError> {
    Ok(match r.read_u8()? {
        4 => {
            let ip: [u8; 4] = read_array(r)?;
            SocketAddr::new(IpAddr::V4(Ipv4Addr::from(ip)), r.read_u16()?)
        }
        6 => {
            let ip: [u8; 16] = read_array(r)?;
            let scope = r.read_u32()?;
            let port = r.read_u16()?;
            SocketAddr::V6(SocketAddrV6::new(Ipv6Addr::from(ip), port, 0, scope))
        }
        _ => return Err(bad("address family")),
    })
}

impl Roster {
    /// The roster's bytes as a `Roster` message carries them after its
    /// tag byte: what the roster's own tag covers.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = StateWriter::buffer();
        self.write(&mut w);
        w.bytes().to_vec()
    }

    /// Writes the roster's fields (after the message's tag).
    pub(crate) fn write<S: Sink>(&self, w: &mut StateWriter<S>) {
        let r = self;
        write_text(w, &r.game);
        w.write_u32(r.game_version);
        w.write_bytes(&r.config);
        w.write_raw(r.config_hash.as_bytes());
        w.write_u8(r.setup.seats);
        w.write_u64(r.setup.seed);
        w.write_u16(r.setup.tick_rate);
        w.write_u8(r.seat.map_or(u8::MAX, |s| s.0));
        w.write_bool(r.rejoin);
        w.write_u8(r.addresses.len() as u8);
        for a in &r.addresses {
            w.write_bool(a.is_some());
            if let Some(a) = a {
                write_addr(w, a);
            }
        }
        w.write_u8(r.keys.len() as u8);
        for k in &r.keys {
            w.write_raw(&k.0);
        }
        r.settings.write(w);
    }

    /// Reads what [`Roster::write`] wrote.
    pub(crate) fn read(r: &mut StateReader<'_>) -> Result<Roster, MessageError> {
        let game = read_text(r)?;
        let game_version = r.read_u32()?;
        let config = r.read_bytes()?.to_vec();
        let config_hash = Checksum::from_bytes(read_array(r)?);
        let seats = r.read_u8()?;
        if !(2..=lockstep_protocol::seat::MAX_SEATS).contains(&seats) {
            return Err(bad("seat count"));
        }
        let setup = Match {
            seats,
            seed: r.read_u64()?,
            tick_rate: r.read_u16()?,
        };
        let seat = match r.read_u8()? {
            u8::MAX => None,
            s if s < seats => Some(s),
            _ => return Err(bad("seat beyond the seat count")),
        };
        let rejoin = r.read_bool()?;
        let n = r.read_u8()?;
        // A seat's roster names every seat's address; a spectator's none.
        if (seat.is_some() && n != seats) || (seat.is_none() && n != 0) {
            return Err(bad("address count"));
        }
        let mut addresses = Vec::with_capacity(usize::from(n));
        for _ in 0..n {
            addresses.push(match r.read_bool()? {
                true => Some(read_addr(r)?),
                false => None,
            });
        }
        let k = r.read_u8()?;
        // A seat's roster holds every seat's key; a spectator's the host's.
        if (seat.is_some() && k != seats) || (seat.is_none() && k != 1) {
            return Err(bad("key count"));
        }
        let mut keys = Vec::with_capacity(usize::from(k));
        for _ in 0..k {
            keys.push(read_key(r)?);
        }
        let settings = MatchSettings::read(r, &setup)?;
        Ok(Roster {
            game,
            game_version,
            config,
            config_hash,
            setup,
            seat: seat.map(SeatId),
            rejoin,
            addresses,
            keys,
            settings,
        })
    }
}

impl Roster {
    /// Checks that this build can play `roster` as `G`, and decodes its
    /// settings.
    pub fn accept<G: Game>(&self) -> Result<G::Config, Refusal> {
        let roster = self;
        let refuse = |problem, detail: String| Refusal::Roster { problem, detail };
        if roster.game != G::ID {
            return Err(refuse(
                RosterProblem::UnknownGame,
                format!("the host plays {}, this endpoint {}", roster.game, G::ID),
            ));
        }
        if roster.game_version != G::VERSION {
            return Err(refuse(
                RosterProblem::GameVersion,
                format!(
                    "{} version {} here, the host plays version {}",
                    G::ID,
                    G::VERSION,
                    roster.game_version
                ),
            ));
        }
        if Checksum::of(&roster.config) != roster.config_hash {
            return Err(refuse(
                RosterProblem::Settings,
                "the settings do not match their hash".into(),
            ));
        }
        let config = <G::Config as Canonical>::from_canonical(&roster.config).map_err(|e| {
            refuse(
                RosterProblem::Settings,
                format!("the host's {} settings do not decode here: {e}", G::ID),
            )
        })?;
        if Checksum::of(&config.to_canonical()) != roster.config_hash {
            return Err(refuse(
                RosterProblem::Settings,
                "the settings re-encode to another hash here".into(),
            ));
        }
        Ok(config)
    }
}

#[cfg(test)]
mod size_tests {
    use super::*;
    use crate::message::{JOIN_BYTES, Message};
    use lockstep_fx::Canonical;
    use lockstep_games::Demo;

    /// The largest rosters the shipped games give (8 seats, every address
    /// an IPv6 one with a scope, every setting at its widest) fit one
    /// datagram.
    #[test]
    fn the_largest_rosters_fit_one_datagram() {
        let long: SocketAddr = "[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff%4294967295]:65535"
            .parse()
            .unwrap_or_else(|_| {
                "[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535"
                    .parse()
                    .unwrap()
            });
        for config in [
            lockstep_games::cubes::Cubes::default_config().to_canonical(),
            lockstep_games::rts::Rts::default_config().to_canonical(),
        ] {
            let setup = Match {
                seats: 8,
                seed: u64::MAX,
                tick_rate: 240,
            };
            let r = Roster {
                game: "x".repeat(32),
                game_version: u32::MAX,
                config_hash: Checksum::of(&config),
                config,
                setup,
                seat: Some(SeatId(7)),
                rejoin: true,
                addresses: vec![Some(long); 8],
                keys: vec![PublicKey([0xff; 32]); 8],
                settings: MatchSettings::new(&setup).mode(lockstep_protocol::Mode::ROLLBACK),
            };
            let n = Message::Roster {
                roster: Box::new(r),
                tag: Some([0xff; crate::message::MAC_BYTES]),
            }
            .encode()
            .len();
            assert!(n <= JOIN_BYTES, "a roster of {n} bytes");
        }
    }
}

//! [`HostSetup`]: the host's side of the match setup, sans-IO. It proves
//! addresses with cookies, offers seats, binds one key per seat, sends the
//! roster once every seat is taken, and — while the match runs — takes
//! dropped seats back from the processes that prove they hold them, and
//! admits spectators.
//!
//! The rules a stranger cannot bend:
//! - An address the host has not proven gets a [`Message::Challenge`] (or a
//!   version refusal) and nothing else: one answer per `Join`, each shorter
//!   than the `Join`, and no state is kept for it.
//! - Reaching the port is not an invitation: a door that takes a code
//!   ([`Invites`]) admits only a request that proves it (`invite.rs`); one
//!   without a proof is refused ([`Refusal::InviteNeeded`], smaller than
//!   the `Join`), and each source has a bounded number of proofs tried
//!   (`guesses.rs`). The roster of a joiner that proved a code or a key is
//!   tagged under the key the two share.
//! - A seat is offered only to a proven address, and only while its joiner
//!   keeps asking: an offer not renewed for
//!   [`SetupTiming::offer_timeout_micros`] is withdrawn, and the match
//!   starts only once every offer was renewed at least once (an address
//!   that answered one challenge and fell silent never starts it).
//! - One key per seat: a key that holds a seat cannot take another.
//! - A dropped seat is given back only to a process that proves it holds
//!   the key the match bound to it ([`SeatClaim`](crate::message::SeatClaim)),
//!   and only once the match has dropped it.
//! - Spectators learn no seat's address. A spectator's admission is pending
//!   until its first authenticated packet reaches the relay
//!   ([`HostSetup::spectator_joined`]) and lapses after
//!   [`SetupTiming::spectator_admit_micros`]; at most
//!   [`SetupTiming::max_pending_spectators`] are pending at once.
//!
//! Invariants: no clock, no socket, no randomness (the cookie secret comes
//! in); the seats' keys are distinct; the host's seat is 0.

use lockstep_protocol::SeatId;
use std::collections::{BTreeMap, VecDeque};
use std::net::SocketAddr;

use lockstep_fx::{Canonical, Checksum};
use lockstep_protocol::seal::{Identity, PublicKey, proof_key};
use lockstep_protocol::spectate::SpectatorId;
use lockstep_protocol::{Instant, SeatSet};
use lockstep_sim::{Game, Match};

use crate::Datagram;
use crate::cookie::CookieJar;
use crate::guesses::{Exchange, Guesses};
use crate::invite::{Invite, Invites, SetupKey, host_answer, same_mac};
use crate::message::{Abort, Cookie, Join, Message, Refusal, Roster, Want};
use crate::settings::MatchSettings;
use crate::source::Source;

/// The BLAKE3 context that derives the secret of the host's invitation
/// answers from its cookie secret.
const INVITE_SECRET_CONTEXT: &str = "lockstep setup v6 2026-12 invite answers";

/// The match a host offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offer {
    /// The game's id.
    pub game: String,
    /// The game's version.
    pub game_version: u32,
    /// The game's settings, canonically encoded.
    pub config: Vec<u8>,
    /// Seats, seed, tick rate.
    pub setup: Match,
    /// How the match is played.
    pub settings: MatchSettings,
}

impl Offer {
    /// A match of `G` with `config`.
    pub fn of<G: Game>(config: &G::Config, setup: Match, settings: MatchSettings) -> Offer {
        Offer {
            game: G::ID.to_string(),
            game_version: G::VERSION,
            config: config.to_canonical(),
            setup,
            settings,
        }
    }
}

/// How long the setup waits for people, and how many it waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SetupTiming {
    /// An offered seat whose joiner has not asked again for this long is
    /// withdrawn (3 s; a waiting joiner asks twice a second).
    pub offer_timeout_micros: u64,
    /// A spectator admitted but not heard on the relay for this long is
    /// forgotten (3 s).
    pub spectator_admit_micros: u64,
    /// Spectators admitted and not yet heard on the relay, at most (16).
    pub max_pending_spectators: u32,
    /// Times an abort is sent to each seated joiner (3, 100 ms apart).
    pub abort_sends: u32,
}

impl Default for SetupTiming {
    fn default() -> SetupTiming {
        SetupTiming {
            offer_timeout_micros: 3_000_000,
            spectator_admit_micros: 3_000_000,
            max_pending_spectators: 16,
            abort_sends: 3,
        }
    }
}

/// What the host setup tells its endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostEvent {
    /// A proven address was offered seat `seat`.
    SeatOffered {
        /// The seat.
        seat: SeatId,
        /// The joiner's address.
        from: SocketAddr,
    },
    /// An offer was withdrawn: its joiner stopped asking.
    SeatFreed {
        /// The seat.
        seat: SeatId,
    },
    /// Every seat is taken and the rosters went out: the match can start
    /// ([`HostSetup::addresses`], [`HostSetup::keys`]).
    Seated,
    /// A seated joiner cannot play the roster; the match is called off.
    RosterRefused {
        /// Its seat.
        seat: SeatId,
        /// Why.
        refusal: Refusal,
    },
    /// A dropped seat's restarted process proved it holds the seat's key:
    /// the seat is bound to `key` (bind it in the session:
    /// `Peer::expect_return`) and reached at `from`.
    Rejoining {
        /// The seat.
        seat: SeatId,
        /// The process's address.
        from: SocketAddr,
        /// Its new public key.
        key: PublicKey,
    },
    /// A spectator was admitted: let the relay take its packets under
    /// `key` (`Peer::admit_spectator`) and route `from` to `spectator`; an
    /// arbiter is named so too (`Peer::name_arbiter`).
    SpectatorAdmitted {
        /// The spectator's id.
        spectator: SpectatorId,
        /// Its address.
        from: SocketAddr,
        /// Its public key.
        key: PublicKey,
        /// It is the match's arbiter.
        arbiter: bool,
    },
    /// An admitted spectator never spoke to the relay in time: forget it
    /// (revoke its key, stop routing its address).
    SpectatorExpired {
        /// The spectator's id.
        spectator: SpectatorId,
    },
    /// A proven address was refused for good (refusals that say "ask
    /// again" are not reported).
    Refused {
        /// The address.
        from: SocketAddr,
        /// Why.
        refusal: Refusal,
    },
}

impl core::fmt::Display for HostEvent {
    /// One line for a person, the one every front end shows.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            HostEvent::SeatOffered { seat, from } => write!(f, "{seat} joined from {from}"),
            HostEvent::SeatFreed { seat } => write!(
                f,
                "{seat}'s joiner went silent before the match: the seat is free again"
            ),
            HostEvent::Seated => write!(f, "every seat is taken: the match starts"),
            HostEvent::RosterRefused { seat, refusal } => {
                write!(f, "{seat} cannot play the match: {refusal}")
            }
            HostEvent::Rejoining { seat, from, .. } => write!(f, "{seat} rejoins from {from}"),
            HostEvent::SpectatorAdmitted {
                spectator, from, ..
            } => write!(f, "spectator {} admitted from {from}", spectator.0),
            HostEvent::SpectatorExpired { spectator } => {
                write!(f, "spectator {} never arrived", spectator.0)
            }
            HostEvent::Refused { from, refusal } => write!(f, "refused {from}: {refusal}"),
        }
    }
}

/// The host setup's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SetupStats {
    /// Setup datagrams received.
    pub received: u64,
    /// Setup datagrams that did not decode.
    pub malformed: u64,
    /// Challenges sent to unproven addresses.
    pub challenges: u64,
    /// Requests refused.
    pub refused: u64,
    /// SPAKE2 answers given (each lets its asker test one guess of a
    /// code).
    pub code_proofs: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Seat {
    Host,
    Empty,
    Offered {
        addr: SocketAddr,
        key: PublicKey,
        heard: Instant,
        /// Proven requests heard for this offer.
        asks: u32,
        /// The key of its invitation's exchange, which tags its roster.
        invite: Option<SetupKey>,
    },
    Bound {
        addr: SocketAddr,
        key: PublicKey,
        /// The key that tags its roster: its invitation's, or its claim's.
        invite: Option<SetupKey>,
    },
}

impl Seat {
    fn addr(&self) -> Option<SocketAddr> {
        match self {
            Seat::Offered { addr, .. } | Seat::Bound { addr, .. } => Some(*addr),
            _ => None,
        }
    }

    fn key(&self) -> Option<PublicKey> {
        match self {
            Seat::Offered { key, .. } | Seat::Bound { key, .. } => Some(*key),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Seating,
    Running,
    Ended,
}

#[derive(Debug, Clone)]
struct SpectatorSlot {
    addr: SocketAddr,
    key: PublicKey,
    /// It is the match's arbiter.
    arbiter: bool,
    /// Until it is heard on the relay: when the admission lapses.
    pending_until: Option<Instant>,
    /// The key that tags its roster.
    invite: Option<SetupKey>,
}

/// The host's side of the match setup. See the module documentation.
#[derive(Debug)]
pub struct HostSetup {
    offer: Offer,
    config_hash: Checksum,
    identity: Identity,
    jar: CookieJar,
    invites: Invites,
    /// The secret the host's invitation answers are derived from.
    invite_secret: [u8; 32],
    guesses: Guesses,
    timing: SetupTiming,
    seats: Vec<Seat>,
    phase: Phase,
    dropped: SeatSet,
    /// Too near the match's end for a seat to come back.
    returns_closed: bool,
    spectators: BTreeMap<SpectatorId, SpectatorSlot>,
    next_spectator: u32,
    /// An abort being repeated: the message, the sends left, when next.
    aborting: Option<(Abort, u32, Instant)>,
    events: VecDeque<HostEvent>,
    out: VecDeque<Datagram>,
    stats: SetupStats,
}

impl HostSetup {
    /// A setup offering `offer`, the host playing seat 0 with `identity`,
    /// proving addresses with cookies made from `cookie_secret` (32 random
    /// bytes, from which its invitation answers are derived too), seating
    /// and admitting whom `invites` say.
    pub fn new(
        offer: Offer,
        identity: Identity,
        cookie_secret: [u8; 32],
        invites: Invites,
        timing: SetupTiming,
    ) -> HostSetup {
        let mut seats = vec![Seat::Empty; usize::from(offer.setup.seats)];
        seats[0] = Seat::Host;
        HostSetup {
            config_hash: Checksum::of(&offer.config),
            offer,
            identity,
            jar: CookieJar::new(cookie_secret),
            invites,
            invite_secret: blake3::derive_key(INVITE_SECRET_CONTEXT, &cookie_secret),
            guesses: Guesses::default(),
            timing,
            seats,
            phase: Phase::Seating,
            dropped: SeatSet::EMPTY,
            returns_closed: false,
            spectators: BTreeMap::new(),
            next_spectator: 0,
            aborting: None,
            events: VecDeque::new(),
            out: VecDeque::new(),
            stats: SetupStats::default(),
        }
    }

    /// The match offered.
    pub fn offer(&self) -> &Offer {
        &self.offer
    }

    /// The host's key pair.
    pub fn identity(&self) -> &Identity {
        &self.identity
    }

    /// The counters.
    pub fn stats(&self) -> &SetupStats {
        &self.stats
    }

    /// Who may sit and who may watch.
    pub fn invites(&self) -> &Invites {
        &self.invites
    }

    /// Whether every seat is taken (the match runs or ran).
    pub fn is_seated(&self) -> bool {
        self.phase != Phase::Seating
    }

    /// Seats taken, the host's included.
    pub fn joined(&self) -> u8 {
        self.seats
            .iter()
            .filter(|s| !matches!(s, Seat::Empty))
            .count() as u8
    }

    /// Every seat's address, the host's `None`.
    pub fn addresses(&self) -> Vec<Option<SocketAddr>> {
        self.seats.iter().map(Seat::addr).collect()
    }

    /// Every seat's public key as now bound (the host's at seat 0).
    pub fn keys(&self) -> Vec<PublicKey> {
        self.seats
            .iter()
            .map(|s| s.key().unwrap_or_else(|| self.identity.public()))
            .collect()
    }

    /// The match dropped `seat` (from the `Peer`'s events): a process
    /// proving it holds the seat's key may take it back.
    pub fn seat_dropped(&mut self, seat: SeatId) {
        self.dropped.insert(seat);
    }

    /// `seat` plays again (its return completed in the session).
    pub fn seat_returned(&mut self, seat: SeatId) {
        self.dropped.0 &= !(1u8.checked_shl(u32::from(seat.0)).unwrap_or(0));
    }

    /// Spectator `spectator` completed its handshake with the relay: its
    /// admission no longer lapses.
    pub fn spectator_joined(&mut self, spectator: SpectatorId) {
        if let Some(s) = self.spectators.get_mut(&spectator) {
            s.pending_until = None;
        }
    }

    /// Spectator `spectator` left the relay.
    pub fn spectator_left(&mut self, spectator: SpectatorId) {
        self.spectators.remove(&spectator);
    }

    /// The match is too near its end for a dropped seat to come back in
    /// time: later rejoins are refused as [`Refusal::Ended`] (spectators
    /// are still admitted).
    pub fn close_returns(&mut self) {
        self.returns_closed = true;
    }

    /// The match is over: every later request is refused.
    pub fn end(&mut self) {
        self.phase = Phase::Ended;
    }

    /// Calls the match off: every seated joiner is told why (a few times,
    /// in case of loss), and every later request is refused.
    pub fn abort(&mut self, now: Instant, reason: Abort) {
        self.phase = Phase::Ended;
        self.aborting = Some((reason, self.timing.abort_sends.max(1), now));
    }

    /// Feeds a setup datagram from `from`.
    pub fn handle_datagram(&mut self, now: Instant, from: SocketAddr, bytes: &[u8]) {
        self.stats.received += 1;
        let msg = match Message::decode(bytes) {
            Ok(m) => m,
            Err(_) => {
                self.stats.malformed += 1;
                return;
            }
        };
        match msg {
            Message::Join(j) => self.on_join(now, from, j),
            // Only a seated joiner's refusal of its roster counts.
            Message::Refused(refusal) if self.phase != Phase::Ended => {
                let seat = self
                    .seats
                    .iter()
                    .position(|s| matches!(s, Seat::Bound { addr, .. } if *addr == from));
                if let Some(seat) = seat {
                    let seat = seat as u8;
                    self.events.push_back(HostEvent::RosterRefused {
                        seat: SeatId(seat),
                        refusal: refusal.clone(),
                    });
                    self.abort(
                        now,
                        Abort::JoinerRefused {
                            seat: SeatId(seat),
                            refusal: Box::new(refusal),
                        },
                    );
                }
            }
            _ => {}
        }
    }

    fn reply(&mut self, to: SocketAddr, msg: Message) {
        self.out.push_back(Datagram {
            to,
            bytes: msg.encode(),
        });
    }

    fn refuse(&mut self, to: SocketAddr, refusal: Refusal) {
        self.stats.refused += 1;
        // A joiner told to ask again does, twice a second: one event for
        // the final answers only.
        if !refusal.is_retryable() {
            self.events.push_back(HostEvent::Refused {
                from: to,
                refusal: refusal.clone(),
            });
        }
        self.reply(to, Message::Refused(refusal));
    }

    fn on_join(&mut self, now: Instant, from: SocketAddr, j: Join) {
        let wire = lockstep_protocol::packet::VERSION;
        if j.protocol != wire {
            // Smaller than the Join it answers, like a challenge.
            self.stats.refused += 1;
            self.reply(
                from,
                Message::Refused(Refusal::Version {
                    ours: wire,
                    theirs: j.protocol,
                }),
            );
            return;
        }
        let proven = j
            .cookie
            .is_some_and(|c| self.jar.check(now, from, &j.key, &c));
        if !proven {
            self.stats.challenges += 1;
            let cookie = self.jar.issue(now, from, &j.key);
            let host_key = self.identity.public();
            self.reply(from, Message::Challenge { cookie, host_key });
            return;
        }
        // `proven` holds a cookie.
        let Some(cookie) = j.cookie else {
            return;
        };
        match (self.phase, j.want) {
            (Phase::Ended, _) => self.refuse(from, Refusal::Ended),
            (Phase::Seating, Want::Seat) => {
                if let Some(invite) = self.invited(now, from, &j, &cookie) {
                    self.seat_join(now, from, j.key, invite);
                }
            }
            (Phase::Seating, Want::Spectate) => {
                // Told to wait only once invited: a stranger hears no
                // more than that it is not.
                if self.invited(now, from, &j, &cookie).is_some() {
                    self.refuse(from, Refusal::NotStarted);
                }
            }
            (Phase::Seating, _) => self.refuse(from, Refusal::NotStarted),
            (Phase::Running, Want::Seat) => {
                let seat = self.seats.iter().position(
                    |s| matches!(s, Seat::Bound { addr, key, .. } if *addr == from && *key == j.key),
                );
                match seat {
                    // Its roster was lost: again, to the same proof.
                    Some(seat) => {
                        if self.invited(now, from, &j, &cookie).is_some() {
                            self.send_roster(from, Some(SeatId(seat as u8)), false);
                        }
                    }
                    None => self.refuse(from, Refusal::Started),
                }
            }
            (Phase::Running, Want::Rejoin) => self.rejoin(from, &j),
            (Phase::Running, Want::Spectate) => {
                if let Some(invite) = self.invited(now, from, &j, &cookie) {
                    self.spectate(now, from, j.key, false, invite);
                }
            }
            (Phase::Running, Want::Arbitrate) => self.spectate(now, from, j.key, true, None),
        }
    }

    /// Whether `j` (from the proven address `from`, with `cookie`) proves
    /// the invitation its door takes: `Some(None)` through an open door,
    /// `Some(Some(key))` with the exchange's key once the joiner confirmed
    /// it; `None` when it was answered instead (the host's half of the
    /// proof, or a refusal).
    fn invited(
        &mut self,
        now: Instant,
        from: SocketAddr,
        j: &Join,
        cookie: &Cookie,
    ) -> Option<Option<SetupKey>> {
        let code = match self.invites.door(j.want) {
            Some(Invite::Code(code)) => *code,
            _ => return Some(None),
        };
        let Some(proof) = j.invite else {
            self.refuse(from, Refusal::InviteNeeded);
            return None;
        };
        let source = Source::of(from);
        let exchange = match self.guesses.recall(now, source, &proof.msg) {
            Some(e) => e,
            None => {
                if !self.guesses.charge(now, source) {
                    self.refuse(from, Refusal::TooManyGuesses);
                    return None;
                }
                let host = self.identity.public();
                let Some((answer, key)) = host_answer(
                    &code,
                    &self.invite_secret,
                    &host,
                    &j.key,
                    j.want,
                    &proof.msg,
                ) else {
                    self.refuse(from, Refusal::BadInvite);
                    return None;
                };
                let e = Exchange {
                    asked: proof.msg,
                    answer,
                    key,
                };
                self.guesses.remember(source, e.clone());
                e
            }
        };
        let host = self.identity.public();
        match proof.confirm {
            None => {
                self.stats.code_proofs += 1;
                let confirm = exchange.key.host_confirms(&host, &j.key, cookie, j.want);
                self.reply(
                    from,
                    Message::CodeProof {
                        cookie: *cookie,
                        answer: exchange.answer,
                        confirm,
                    },
                );
                None
            }
            Some(c) => {
                let expected = exchange.key.joiner_confirms(&host, &j.key, cookie, j.want);
                if same_mac(&expected, &c) {
                    Some(Some(exchange.key))
                } else {
                    self.refuse(from, Refusal::BadInvite);
                    None
                }
            }
        }
    }

    fn seat_join(
        &mut self,
        now: Instant,
        from: SocketAddr,
        key: PublicKey,
        invite: Option<SetupKey>,
    ) {
        let own = self.seats.iter().position(|s| s.addr() == Some(from));
        let key_elsewhere = key == self.identity.public()
            || self
                .seats
                .iter()
                .enumerate()
                .any(|(i, s)| Some(i) != own && s.key() == Some(key));
        if key_elsewhere {
            self.refuse(from, Refusal::KeyInUse);
            return;
        }
        let (seat, asks) = match own {
            // A joiner asking again keeps its seat (a new process at the
            // same address takes it over with its own key).
            Some(seat) => match self.seats[seat] {
                Seat::Offered { key: k, asks, .. } if k == key => (seat, asks + 1),
                _ => (seat, 1),
            },
            None => match self.seats.iter().position(|s| *s == Seat::Empty) {
                Some(seat) => {
                    self.events.push_back(HostEvent::SeatOffered {
                        seat: SeatId(seat as u8),
                        from,
                    });
                    (seat, 1)
                }
                None => {
                    self.refuse(from, Refusal::Full);
                    return;
                }
            },
        };
        self.seats[seat] = Seat::Offered {
            addr: from,
            key,
            heard: now,
            asks,
            invite,
        };
        let ready = |s: &Seat| match s {
            Seat::Empty => false,
            Seat::Offered { asks, .. } => *asks >= 2,
            _ => true,
        };
        if self.seats.iter().all(ready) {
            self.start();
        } else {
            let joined = self.joined();
            self.reply(
                from,
                Message::Waiting {
                    seat: SeatId(seat as u8),
                    joined,
                    seats: self.offer.setup.seats,
                },
            );
        }
    }

    /// Every seat is taken: bind them and send every joiner its roster.
    fn start(&mut self) {
        self.phase = Phase::Running;
        for s in &mut self.seats {
            if let Seat::Offered {
                addr, key, invite, ..
            } = s
            {
                *s = Seat::Bound {
                    addr: *addr,
                    key: *key,
                    invite: invite.take(),
                };
            }
        }
        for seat in 1..self.seats.len() {
            if let Some(addr) = self.seats[seat].addr() {
                self.send_roster(addr, Some(SeatId(seat as u8)), false);
            }
        }
        self.events.push_back(HostEvent::Seated);
    }

    fn roster(&self, seat: Option<SeatId>, rejoin: bool) -> Roster {
        let spectator = seat.is_none();
        Roster {
            game: self.offer.game.clone(),
            game_version: self.offer.game_version,
            config: self.offer.config.clone(),
            config_hash: self.config_hash,
            setup: self.offer.setup,
            seat,
            rejoin,
            addresses: if spectator {
                Vec::new()
            } else {
                self.addresses()
            },
            keys: if spectator {
                vec![self.identity.public()]
            } else {
                self.keys()
            },
            settings: self.offer.settings.clone(),
        }
    }

    /// Sends `to` its roster, tagged under the key it proved (that of its
    /// seat, or of the spectator at `to`).
    fn send_roster(&mut self, to: SocketAddr, seat: Option<SeatId>, rejoin: bool) {
        let roster = self.roster(seat, rejoin);
        let key = match seat {
            Some(s) => match self.seats.get(s.index()) {
                Some(Seat::Offered { invite, .. } | Seat::Bound { invite, .. }) => invite.as_ref(),
                _ => None,
            },
            None => self
                .spectators
                .values()
                .find(|w| w.addr == to)
                .and_then(|w| w.invite.as_ref()),
        };
        let tag = key.map(|k| k.roster_tag(&roster.to_bytes()));
        self.reply(
            to,
            Message::Roster {
                roster: Box::new(roster),
                tag,
            },
        );
    }

    fn rejoin(&mut self, from: SocketAddr, j: &Join) {
        if self.returns_closed {
            self.refuse(from, Refusal::Ended);
            return;
        }
        let (Some(claim), Some(cookie)) = (j.claim, j.cookie) else {
            self.refuse(from, Refusal::NoSuchSeat);
            return;
        };
        let seat = self
            .seats
            .iter()
            .position(|s| matches!(s, Seat::Bound { key, .. } if *key == claim.seat_key));
        let Some(seat) = seat else {
            // Asked again after the rebinding below: the same process.
            let again = self.seats.iter().position(
                |s| matches!(s, Seat::Bound { addr, key, .. } if *addr == from && *key == j.key),
            );
            match again {
                Some(seat) => self.send_roster(from, Some(SeatId(seat as u8)), true),
                None => self.refuse(from, Refusal::NoSuchSeat),
            }
            return;
        };
        if !claim.verify(&self.identity, &j.key, &cookie) {
            self.refuse(from, Refusal::BadProof);
            return;
        }
        let id = lockstep_protocol::SeatId(seat as u8);
        if !self.dropped.contains(id) {
            self.refuse(
                from,
                Refusal::NotDropped {
                    seat: SeatId(seat as u8),
                },
            );
            return;
        }
        let key_elsewhere = j.key == self.identity.public()
            || self
                .seats
                .iter()
                .enumerate()
                .any(|(i, s)| i != seat && s.key() == Some(j.key));
        if key_elsewhere {
            self.refuse(from, Refusal::KeyInUse);
            return;
        }
        // The roster of a seat taken back is tagged under the claim's key,
        // which only the seat's key pair and the host's can compute.
        let invite = proof_key(&self.identity, &claim.seat_key)
            .ok()
            .map(SetupKey::new);
        self.seats[seat] = Seat::Bound {
            addr: from,
            key: j.key,
            invite,
        };
        self.events.push_back(HostEvent::Rejoining {
            seat: SeatId(seat as u8),
            from,
            key: j.key,
        });
        self.send_roster(from, Some(SeatId(seat as u8)), true);
    }

    fn spectate(
        &mut self,
        now: Instant,
        from: SocketAddr,
        key: PublicKey,
        arbiter: bool,
        invite: Option<SetupKey>,
    ) {
        let known = self
            .spectators
            .iter()
            .find(|(_, s)| s.addr == from)
            .map(|(w, s)| (*w, s.key == key && s.arbiter == arbiter));
        match known {
            Some((_, true)) => {
                self.send_roster(from, None, false);
                return;
            }
            Some((old, false)) => {
                // A new process at the same address: the old one is gone.
                self.spectators.remove(&old);
                self.events
                    .push_back(HostEvent::SpectatorExpired { spectator: old });
            }
            None => {}
        }
        let pending = self
            .spectators
            .values()
            .filter(|s| s.pending_until.is_some())
            .count() as u32;
        if pending >= self.timing.max_pending_spectators {
            self.refuse(from, Refusal::SpectatorsFull);
            return;
        }
        let taken = self.spectators.values().any(|s| s.arbiter);
        if arbiter && (!self.offer.settings.arbiter || taken) {
            self.refuse(from, Refusal::NoArbiter);
            return;
        }
        let spectator = SpectatorId(self.next_spectator);
        self.next_spectator = self.next_spectator.wrapping_add(1);
        self.spectators.insert(
            spectator,
            SpectatorSlot {
                addr: from,
                key,
                arbiter,
                pending_until: Some(now.plus(self.timing.spectator_admit_micros)),
                invite,
            },
        );
        self.events.push_back(HostEvent::SpectatorAdmitted {
            spectator,
            from,
            key,
            arbiter,
        });
        self.send_roster(from, None, false);
    }

    /// Withdraws lapsed offers and admissions, repeats an abort.
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.phase == Phase::Seating {
            for seat in 1..self.seats.len() {
                if let Seat::Offered { heard, .. } = self.seats[seat] {
                    if now.since(heard) >= self.timing.offer_timeout_micros {
                        self.seats[seat] = Seat::Empty;
                        self.events.push_back(HostEvent::SeatFreed {
                            seat: SeatId(seat as u8),
                        });
                    }
                }
            }
        }
        let lapsed: Vec<SpectatorId> = self
            .spectators
            .iter()
            .filter(|(_, s)| s.pending_until.is_some_and(|t| now >= t))
            .map(|(w, _)| *w)
            .collect();
        for spectator in lapsed {
            self.spectators.remove(&spectator);
            self.events
                .push_back(HostEvent::SpectatorExpired { spectator });
        }
        if let Some((reason, left, at)) = self.aborting.take() {
            if now >= at {
                let to: Vec<SocketAddr> = self.seats.iter().filter_map(Seat::addr).collect();
                for addr in to {
                    self.reply(addr, Message::Abort(reason.clone()));
                }
                if left > 1 {
                    self.aborting = Some((reason, left - 1, now.plus(100_000)));
                }
            } else {
                self.aborting = Some((reason, left, at));
            }
        }
    }

    /// Whether an abort is still being sent.
    pub fn is_aborting(&self) -> bool {
        self.aborting.is_some()
    }

    /// When [`HostSetup::handle_timeout`] is next due, if ever.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let offers = self.seats.iter().filter_map(|s| match s {
            Seat::Offered { heard, .. } if self.phase == Phase::Seating => {
                Some(heard.plus(self.timing.offer_timeout_micros))
            }
            _ => None,
        });
        let admissions = self.spectators.values().filter_map(|s| s.pending_until);
        let abort = self.aborting.as_ref().map(|(_, _, at)| *at);
        offers.chain(admissions).chain(abort).min()
    }

    /// The next datagram to send.
    pub fn poll_transmit(&mut self) -> Option<Datagram> {
        self.out.pop_front()
    }

    /// The next thing that happened.
    pub fn poll_event(&mut self) -> Option<HostEvent> {
        self.events.pop_front()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::SeatClaim;

    fn addr(port: u16) -> SocketAddr {
        SocketAddr::from(([10, 0, 0, 1], port))
    }

    fn setup(seats: u8) -> HostSetup {
        let m = Match {
            seats,
            seed: 1,
            tick_rate: 60,
        };
        let offer = Offer {
            game: "g".into(),
            game_version: 1,
            config: vec![1, 2, 3],
            setup: m,
            settings: MatchSettings::new(&m),
        };
        HostSetup::new(
            offer,
            Identity::from_secret([1; 32]),
            [9; 32],
            Invites::OPEN,
            SetupTiming::default(),
        )
    }

    fn join(want: Want, key: PublicKey) -> Join {
        Join {
            want,
            protocol: lockstep_protocol::packet::VERSION,
            key,
            cookie: None,
            claim: None,
            invite: None,
        }
    }

    /// Sends `j` from `from`, answering the challenge first if asked; gives
    /// the answers.
    fn ask(h: &mut HostSetup, now: Instant, from: SocketAddr, mut j: Join) -> Vec<Message> {
        h.handle_datagram(now, from, &Message::Join(j.clone()).encode());
        let mut out: Vec<Message> = std::iter::from_fn(|| h.poll_transmit())
            .map(|d| Message::decode(&d.bytes).unwrap())
            .collect();
        if let Some(Message::Challenge { cookie, .. }) = out.first() {
            j.cookie = Some(*cookie);
            h.handle_datagram(now, from, &Message::Join(j).encode());
            out = std::iter::from_fn(|| h.poll_transmit())
                .map(|d| Message::decode(&d.bytes).unwrap())
                .collect();
        }
        out
    }

    fn key(b: u8) -> PublicKey {
        Identity::from_secret([b; 32]).public()
    }

    #[test]
    fn an_unproven_address_gets_a_challenge_and_nothing_is_kept() {
        let mut h = setup(2);
        let j = join(Want::Seat, key(2));
        h.handle_datagram(Instant::ZERO, addr(1), &Message::Join(j).encode());
        let d = h.poll_transmit().unwrap();
        assert!(matches!(
            Message::decode(&d.bytes),
            Ok(Message::Challenge { .. })
        ));
        assert!(d.bytes.len() < crate::message::JOIN_BYTES / 16);
        assert_eq!(h.joined(), 1);
        assert_eq!(h.poll_event(), None);
    }

    #[test]
    fn the_match_starts_once_every_offer_was_renewed() {
        let mut h = setup(2);
        let t = Instant::from_micros(1_000_000);
        let answers = ask(&mut h, t, addr(1), join(Want::Seat, key(2)));
        assert_eq!(
            answers,
            vec![Message::Waiting {
                seat: SeatId(1),
                joined: 2,
                seats: 2
            }]
        );
        assert!(!h.is_seated());
        let answers = ask(&mut h, t.plus(250_000), addr(1), join(Want::Seat, key(2)));
        assert!(
            matches!(answers[..], [Message::Roster { roster: ref r, .. }] if r.seat == Some(SeatId(1)))
        );
        assert!(h.is_seated());
    }

    #[test]
    fn a_silent_offer_lapses_and_a_key_holds_one_seat() {
        let mut h = setup(3);
        let t = Instant::from_micros(1_000_000);
        ask(&mut h, t, addr(1), join(Want::Seat, key(2)));
        // The same key from another address: refused.
        let again = ask(&mut h, t, addr(2), join(Want::Seat, key(2)));
        assert_eq!(again, vec![Message::Refused(Refusal::KeyInUse)]);
        let later = t.plus(SetupTiming::default().offer_timeout_micros);
        assert!(h.poll_timeout().is_some_and(|d| d <= later));
        h.handle_timeout(later);
        let events: Vec<HostEvent> = std::iter::from_fn(|| h.poll_event()).collect();
        assert!(events.contains(&HostEvent::SeatFreed { seat: SeatId(1) }));
        assert_eq!(h.joined(), 1);
    }

    #[test]
    fn a_rejoin_is_granted_only_with_the_seat_key_and_after_the_drop() {
        let mut h = setup(2);
        let t = Instant::from_micros(1_000_000);
        let seat_id = Identity::from_secret([2; 32]);
        ask(&mut h, t, addr(1), join(Want::Seat, seat_id.public()));
        ask(&mut h, t, addr(1), join(Want::Seat, seat_id.public()));
        assert!(h.is_seated());
        let fresh = Identity::from_secret([3; 32]);
        let host_key = h.identity().public();
        let claim_join = |cookie| {
            let claim = SeatClaim::make(&seat_id, &host_key, &fresh.public(), &cookie).unwrap();
            Join {
                cookie: Some(cookie),
                claim: Some(claim),
                ..join(Want::Rejoin, fresh.public())
            }
        };
        let cookie = h.jar.issue(t, addr(5), &fresh.public());
        // Before the drop: ask again later.
        let a = ask(&mut h, t, addr(5), claim_join(cookie));
        assert_eq!(
            a,
            vec![Message::Refused(Refusal::NotDropped { seat: SeatId(1) })]
        );
        h.seat_dropped(SeatId(1));
        // A proof made for another key does not verify.
        let mut forged = claim_join(cookie);
        forged.key = key(7);
        forged.cookie = Some(h.jar.issue(t, addr(6), &key(7)));
        let a = ask(&mut h, t, addr(6), forged);
        assert_eq!(a, vec![Message::Refused(Refusal::BadProof)]);
        let a = ask(&mut h, t, addr(5), claim_join(cookie));
        assert!(
            matches!(a[..], [Message::Roster { roster: ref r, .. }] if r.rejoin && r.seat == Some(SeatId(1)))
        );
        assert_eq!(h.keys()[1], fresh.public());
        assert_eq!(h.addresses()[1], Some(addr(5)));
    }

    #[test]
    fn spectators_are_pending_within_a_bound_and_learn_no_addresses() {
        let mut h = setup(2);
        let t = Instant::from_micros(1_000_000);
        ask(&mut h, t, addr(1), join(Want::Seat, key(2)));
        ask(&mut h, t, addr(1), join(Want::Seat, key(2)));
        let max = SetupTiming::default().max_pending_spectators;
        for i in 0..max {
            let a = ask(
                &mut h,
                t,
                addr(100 + i as u16),
                join(Want::Spectate, key(50 + i as u8)),
            );
            assert!(
                matches!(a[..], [Message::Roster { roster: ref r, .. }] if r.addresses.is_empty() && r.keys.len() == 1)
            );
        }
        let full = ask(&mut h, t, addr(99), join(Want::Spectate, key(40)));
        assert_eq!(full, vec![Message::Refused(Refusal::SpectatorsFull)]);
        let events: Vec<HostEvent> = std::iter::from_fn(|| h.poll_event()).collect();
        let admitted: Vec<SpectatorId> = events
            .iter()
            .filter_map(|e| match e {
                HostEvent::SpectatorAdmitted { spectator, .. } => Some(*spectator),
                _ => None,
            })
            .collect();
        assert_eq!(admitted.len() as u32, max);
        // One arrives on the relay; the rest lapse.
        h.spectator_joined(admitted[0]);
        h.handle_timeout(t.plus(SetupTiming::default().spectator_admit_micros));
        let expired = std::iter::from_fn(|| h.poll_event())
            .filter(|e| matches!(e, HostEvent::SpectatorExpired { .. }))
            .count() as u32;
        assert_eq!(expired, max - 1);
        let a = ask(
            &mut h,
            t.plus(4_000_000),
            addr(99),
            join(Want::Spectate, key(40)),
        );
        assert!(matches!(a[..], [Message::Roster { .. }]));
    }

    #[test]
    fn one_arbiter_and_only_in_a_match_that_takes_one() {
        let t = Instant::from_micros(1_000_000);
        let mut h = setup(2);
        ask(&mut h, t, addr(1), join(Want::Seat, key(2)));
        ask(&mut h, t, addr(1), join(Want::Seat, key(2)));
        let a = ask(&mut h, t, addr(50), join(Want::Arbitrate, key(50)));
        assert_eq!(a, vec![Message::Refused(Refusal::NoArbiter)]);

        let mut h = setup(2);
        h.offer.settings.arbiter = true;
        ask(&mut h, t, addr(1), join(Want::Seat, key(2)));
        ask(&mut h, t, addr(1), join(Want::Seat, key(2)));
        let a = ask(&mut h, t, addr(50), join(Want::Arbitrate, key(50)));
        assert!(matches!(a[..], [Message::Roster { roster: ref r, .. }] if r.seat.is_none()));
        let b = ask(&mut h, t, addr(51), join(Want::Arbitrate, key(51)));
        assert_eq!(b, vec![Message::Refused(Refusal::NoArbiter)]);
        // A plain spectator is still welcome.
        let c = ask(&mut h, t, addr(52), join(Want::Spectate, key(52)));
        assert!(matches!(c[..], [Message::Roster { .. }]));
        let arbiters: Vec<bool> = std::iter::from_fn(|| h.poll_event())
            .filter_map(|e| match e {
                HostEvent::SpectatorAdmitted { arbiter, .. } => Some(arbiter),
                _ => None,
            })
            .collect();
        assert_eq!(arbiters, [true, false]);
    }
}

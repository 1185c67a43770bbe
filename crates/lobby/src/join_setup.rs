//! [`JoinSetup`]: a joiner's side of the match setup, sans-IO. It asks the
//! host for a seat, a dropped seat back, or a place to watch; answers the
//! host's challenge with the cookie; proves its invitation (a match code)
//! and has the host prove it back; keeps an offered seat by asking again
//! while it waits; checks the roster is tagged under the key it shares
//! with the host and binds its own key to its seat; and gives up, with a
//! typed reason, when the host does not answer, refuses, cannot prove the
//! code, or calls the match off.
//!
//! A joiner given a code trusts nothing the host says about the match
//! until the host proved it holds that code: a party in the host's place
//! (a rendezvous that points elsewhere, someone on the path who answers
//! first) cannot, and the setup fails naming it
//! ([`JoinFailure::HostUnproven`]).
//!
//! Invariants: it talks to the host's address only and ignores every other
//! sender; every wait is bounded ([`JoinTiming`]); after the roster it
//! still hears the host's abort, and stays quiet otherwise; it draws no
//! randomness (its exchange's comes from the bytes its caller passes).

use lockstep_protocol::SeatId;
use std::collections::VecDeque;
use std::net::SocketAddr;

use lockstep_protocol::Instant;
use lockstep_protocol::seal::{Identity, PublicKey};

use lockstep_protocol::seal::proof_key;

use crate::Datagram;
use crate::invite::{ExchangeError, Invite, JoinerExchange, SetupKey, same_mac};
use crate::message::{
    Abort, Cookie, InviteProof, Join, MAC_BYTES, Message, Refusal, Roster, RosterProblem,
    SeatClaim, Want,
};

/// How long a joiner waits, and how often it asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JoinTiming {
    /// A request is repeated this often until answered, and while waiting
    /// for the other seats (250 ms).
    pub resend_micros: u64,
    /// The joiner gives up when the host has said nothing for this long
    /// (5 s).
    pub answer_timeout_micros: u64,
    /// Answers that say "ask again" are followed for at most this long
    /// (30 s): a rejoin waits this long for its seat to be dropped.
    pub retry_for_micros: u64,
    /// Times a refusal of the roster is sent to the host (3, 100 ms apart).
    pub refusal_sends: u32,
}

impl Default for JoinTiming {
    fn default() -> JoinTiming {
        JoinTiming {
            resend_micros: 250_000,
            answer_timeout_micros: 5_000_000,
            retry_for_micros: 30_000_000,
            refusal_sends: 3,
        }
    }
}

/// Why a joiner gave up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JoinFailure {
    /// The host said nothing for this long.
    NoAnswer {
        /// Microseconds waited.
        micros: u64,
    },
    /// The host refused (for good, or for longer than the joiner waits).
    Refused(Refusal),
    /// The host called the match off.
    Aborted(Abort),
    /// This joiner cannot play the roster (and told the host).
    Unplayable(Refusal),
    /// The host did not prove what the joiner was told to expect of it:
    /// whoever answers at that address is not the host that made the code
    /// (or the code is wrong).
    HostUnproven(Unproven),
}

/// How a host failed to prove itself to a joiner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unproven {
    /// Its proof of the code does not verify: the code is wrong, or
    /// another party answers in the host's place.
    WrongProof,
    /// It answered without proving the code: it takes no codes (an open
    /// lobby), or it is not the host that made this one.
    NoProof,
    /// The roster does not carry the tag of the key the joiner shares with
    /// the host: it was changed on the way.
    Roster,
}

impl core::fmt::Display for Unproven {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            Unproven::WrongProof => {
                "its proof of the code does not verify: the code is wrong, or another party answers in the host's place"
            }
            Unproven::NoProof => {
                "it answered without proving the code: it takes no codes, or it is not the host that made this one"
            }
            Unproven::Roster => "the roster is not the host's: it was changed on the way",
        })
    }
}

impl core::fmt::Display for JoinFailure {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            JoinFailure::NoAnswer { micros } => write!(
                f,
                "the host did not answer within {} s",
                micros.div_ceil(1_000_000)
            ),
            JoinFailure::Refused(r) => write!(f, "the host refused: {r}"),
            JoinFailure::Aborted(a) => write!(f, "the host called the match off: {a}"),
            JoinFailure::Unplayable(r) => write!(f, "cannot play the host's match: {r}"),
            JoinFailure::HostUnproven(why) => write!(f, "not the invited host: {why}"),
        }
    }
}

/// What the joiner's setup tells its endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JoinEvent {
    /// The host proved our address (its challenge came back).
    Challenged,
    /// The host proved it holds the match code we were given.
    HostProven,
    /// We hold seat `seat`; `joined` of `seats` seats are taken.
    Waiting {
        /// Our seat.
        seat: SeatId,
        /// Seats taken.
        joined: u8,
        /// Seats in the match.
        seats: u8,
    },
    /// The host said "ask again" (the first time for each reason).
    AskingAgain(Refusal),
    /// The match: play (or watch) it.
    Roster(Box<Roster>),
    /// The setup failed.
    Failed(JoinFailure),
}

impl core::fmt::Display for JoinEvent {
    /// One line for a person, the one every front end shows.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            JoinEvent::Challenged => write!(f, "the host asked for proof of address"),
            JoinEvent::HostProven => write!(f, "the host proved it holds the match code"),
            JoinEvent::Waiting {
                seat,
                joined,
                seats,
            } => write!(f, "{seat}: {joined} of {seats} seats taken, waiting"),
            JoinEvent::AskingAgain(r) => write!(f, "the host says {r}: asking again"),
            JoinEvent::Roster(r) => write!(f, "the roster: {}", r.game),
            JoinEvent::Failed(why) => write!(f, "{why}"),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    Asking,
    Seated,
    Refusing { sends: u32, next: Instant },
    Done,
}

/// A joiner's side of the match setup. See the module documentation.
#[derive(Debug)]
pub struct JoinSetup {
    host: SocketAddr,
    want: Want,
    identity: Identity,
    claim_as: Option<Identity>,
    invite: Invite,
    /// The caller's randomness for the invitation's exchanges.
    random: [u8; 32],
    /// Exchanges started (each draws its own scalar).
    attempts: u32,
    exchange: Option<JoinerExchange>,
    timing: JoinTiming,
    cookie: Option<Cookie>,
    /// The cookie before the current one (a host's answer may be made for
    /// it).
    previous_cookie: Option<Cookie>,
    host_key: Option<PublicKey>,
    state: State,
    roster: Option<Box<Roster>>,
    refusal: Option<Refusal>,
    /// Why the setup failed, once it did.
    failure: Option<JoinFailure>,
    last_heard: Instant,
    next_send: Instant,
    asking_again: Option<(Refusal, Instant)>,
    waiting: Option<(SeatId, u8, u8)>,
    events: VecDeque<JoinEvent>,
    out: VecDeque<Datagram>,
}

impl JoinSetup {
    /// A request for `want` to the host at `host`, made at `now` by a
    /// process playing with `identity`, invited as `invite` says: with a
    /// [`Invite::Code`], the request proves it and the host must prove it
    /// back; [`Invite::Open`] for an open door (a rejoin and the arbiter
    /// prove a key instead). `random` is 32 random bytes for the
    /// invitation's exchange (the caller draws them; unused without a
    /// code). A rejoin is made with [`JoinSetup::rejoin`].
    pub fn new(
        now: Instant,
        host: SocketAddr,
        want: Want,
        invite: Invite,
        identity: Identity,
        random: [u8; 32],
        timing: JoinTiming,
    ) -> JoinSetup {
        let invite = match want {
            Want::Seat | Want::Spectate => invite,
            Want::Rejoin | Want::Arbitrate => Invite::Open,
        };
        JoinSetup {
            host,
            want,
            identity,
            claim_as: None,
            invite,
            random,
            attempts: 0,
            exchange: None,
            timing,
            cookie: None,
            previous_cookie: None,
            host_key: None,
            state: State::Asking,
            roster: None,
            refusal: None,
            failure: None,
            last_heard: now,
            next_send: now,
            asking_again: None,
            waiting: None,
            events: VecDeque::new(),
            out: VecDeque::new(),
        }
    }

    /// A rejoin to the host at `host`, made at `now` by a process playing
    /// with `identity` (a fresh key pair): claims the seat bound to
    /// `seat`'s key (the key pair the seat's earlier process played with),
    /// proving possession of it. No code is needed: the key is the proof.
    pub fn rejoin(
        now: Instant,
        host: SocketAddr,
        identity: Identity,
        seat: Identity,
        timing: JoinTiming,
    ) -> JoinSetup {
        let mut j = JoinSetup::new(
            now,
            host,
            Want::Rejoin,
            Invite::Open,
            identity,
            [0; 32],
            timing,
        );
        j.claim_as = Some(seat);
        j
    }

    /// The host's address.
    pub fn host(&self) -> SocketAddr {
        self.host
    }

    /// The key pair this process plays with.
    pub fn identity(&self) -> &Identity {
        &self.identity
    }

    /// The roster, once received.
    pub fn roster(&self) -> Option<&Roster> {
        self.roster.as_deref()
    }

    /// Whether the setup failed or ended.
    pub fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// Tells the host this process will not play the roster, and why; the
    /// setup then fails with [`JoinFailure::Unplayable`].
    pub fn refuse(&mut self, now: Instant, refusal: Refusal) {
        self.refusal = Some(refusal);
        self.state = State::Refusing {
            sends: self.timing.refusal_sends.max(1),
            next: now,
        };
        self.handle_timeout(now);
    }

    fn fail(&mut self, why: JoinFailure) {
        self.state = State::Done;
        self.failure = Some(why.clone());
        self.events.push_back(JoinEvent::Failed(why));
    }

    /// Why the setup failed (the host called the match off, ...), if it
    /// did: an endpoint built from this setup after its events were read
    /// elsewhere learns it here.
    pub fn failure(&self) -> Option<&JoinFailure> {
        self.failure.as_ref()
    }

    fn request(&self) -> Option<Message> {
        let claim = match (&self.claim_as, &self.host_key, &self.cookie) {
            (Some(seat), Some(host_key), Some(cookie)) => {
                SeatClaim::make(seat, host_key, &self.identity.public(), cookie).ok()
            }
            _ => None,
        };
        // A rejoin without its claim would only be refused: wait for the
        // challenge that brings the cookie and the host's key.
        if self.want == Want::Rejoin && self.cookie.is_some() && claim.is_none() {
            return None;
        }
        let me = self.identity.public();
        let invite = match (&self.exchange, &self.cookie) {
            (Some(e), Some(cookie)) => Some(InviteProof {
                msg: *e.message(),
                confirm: e
                    .key()
                    .map(|k| k.joiner_confirms(e.host(), &me, cookie, self.want)),
            }),
            _ => None,
        };
        Some(Message::Join(Join {
            want: self.want,
            protocol: lockstep_protocol::packet::VERSION,
            key: me,
            cookie: self.cookie,
            claim,
            invite,
        }))
    }

    /// The key the roster must be tagged under: the invitation's exchange's,
    /// or a rejoin's claim's; `None` when nothing was proven (an open door,
    /// the arbiter).
    fn roster_key(&self) -> Option<SetupKey> {
        if let Some(e) = &self.exchange {
            return e.key().cloned();
        }
        match (&self.claim_as, &self.host_key) {
            (Some(seat), Some(host)) => proof_key(seat, host).ok().map(SetupKey::new),
            _ => None,
        }
    }

    /// Whether the host still owes the proof of our code.
    fn proof_owed(&self) -> bool {
        matches!(self.invite, Invite::Code(_))
            && self.exchange.as_ref().is_none_or(|e| e.key().is_none())
    }

    fn on_code_proof(
        &mut self,
        now: Instant,
        cookie: Cookie,
        answer: &[u8; crate::message::PAKE_BYTES],
        confirm: &[u8; MAC_BYTES],
    ) {
        let me = self.identity.public();
        let ours = Some(cookie) == self.cookie || Some(cookie) == self.previous_cookie;
        let Some(e) = self.exchange.as_mut().filter(|_| ours) else {
            return;
        };
        let first = e.key().is_none();
        match e.finish(&me, self.want, answer, &cookie, confirm) {
            Ok(true) => {
                if first {
                    self.events.push_back(JoinEvent::HostProven);
                }
                self.send_request(now);
            }
            Ok(false) => {}
            Err(ExchangeError::Malformed | ExchangeError::WrongProof) => {
                self.fail(JoinFailure::HostUnproven(Unproven::WrongProof));
            }
        }
    }

    fn send_request(&mut self, now: Instant) {
        if let Some(m) = self.request() {
            self.out.push_back(Datagram {
                to: self.host,
                bytes: m.encode(),
            });
        }
        self.next_send = now.plus(self.timing.resend_micros);
    }

    /// Feeds a setup datagram from `from` (anything but the host is
    /// ignored).
    pub fn handle_datagram(&mut self, now: Instant, from: SocketAddr, bytes: &[u8]) {
        if from != self.host || self.state == State::Done {
            return;
        }
        let Ok(msg) = Message::decode(bytes) else {
            return;
        };
        self.last_heard = now;
        match msg {
            Message::Abort(a) => self.fail(JoinFailure::Aborted(a)),
            _ if self.state != State::Asking => {}
            Message::Challenge { cookie, host_key } => {
                // An exchange under way binds the host's key: a challenge
                // naming another is not from the host it is proving.
                if self
                    .exchange
                    .as_ref()
                    .is_some_and(|e| *e.host() != host_key)
                {
                    return;
                }
                let first = self.cookie.is_none();
                if self.cookie != Some(cookie) {
                    self.previous_cookie = self.cookie.replace(cookie);
                }
                self.host_key = Some(host_key);
                if first {
                    self.events.push_back(JoinEvent::Challenged);
                }
                if let (Invite::Code(code), None) = (&self.invite, &self.exchange) {
                    self.exchange = Some(JoinerExchange::start(
                        code,
                        &self.random,
                        self.attempts,
                        &self.identity.public(),
                        &host_key,
                    ));
                    self.attempts += 1;
                }
                self.send_request(now);
            }
            Message::CodeProof {
                cookie,
                answer,
                confirm,
            } => self.on_code_proof(now, cookie, &answer, &confirm),
            Message::Waiting { .. } | Message::Roster { .. } if self.proof_owed() => {
                self.fail(JoinFailure::HostUnproven(Unproven::NoProof));
            }
            Message::Waiting {
                seat,
                joined,
                seats,
            } => {
                self.asking_again = None;
                if self.waiting != Some((seat, joined, seats)) {
                    self.waiting = Some((seat, joined, seats));
                    self.events.push_back(JoinEvent::Waiting {
                        seat,
                        joined,
                        seats,
                    });
                }
            }
            Message::Roster { roster, tag } => {
                if let Some(key) = self.roster_key() {
                    let proven =
                        tag.is_some_and(|t| same_mac(&key.roster_tag(&roster.to_bytes()), &t));
                    if !proven {
                        self.fail(JoinFailure::HostUnproven(Unproven::Roster));
                        return;
                    }
                }
                self.on_roster(now, roster);
            }
            Message::Refused(r) if r.is_retryable() => {
                let since = match &self.asking_again {
                    Some((last, since)) if *last == r => *since,
                    _ => {
                        self.events.push_back(JoinEvent::AskingAgain(r.clone()));
                        now
                    }
                };
                if now.since(since) >= self.timing.retry_for_micros {
                    self.fail(JoinFailure::Refused(r));
                } else {
                    self.asking_again = Some((r, since));
                }
            }
            Message::Refused(r) => self.fail(JoinFailure::Refused(r)),
            Message::Join(_) => {}
        }
    }

    fn on_roster(&mut self, now: Instant, r: Box<Roster>) {
        let keys_fit = match r.seat {
            Some(s) => r.keys.len() == usize::from(r.setup.seats) && s.index() < r.keys.len(),
            None => r.keys.len() == 1,
        };
        let wanted = match self.want {
            Want::Spectate | Want::Arbitrate => r.seat.is_none(),
            Want::Seat => r.seat.is_some() && !r.rejoin,
            Want::Rejoin => r.seat.is_some() && r.rejoin,
        };
        if !keys_fit || !wanted {
            self.refuse(
                now,
                Refusal::Roster {
                    problem: RosterProblem::Malformed,
                    detail: "the roster does not answer the request".into(),
                },
            );
            return;
        }
        // A seat must be bound to our key: another key would mean someone
        // else speaks for us.
        if let Some(s) = r.seat {
            if r.keys[s.index()] != self.identity.public() {
                self.refuse(
                    now,
                    Refusal::Roster {
                        problem: RosterProblem::WrongKey,
                        detail: s.to_string(),
                    },
                );
                return;
            }
        }
        self.state = State::Seated;
        self.roster = Some(r.clone());
        self.events.push_back(JoinEvent::Roster(r));
    }

    /// Repeats the request, gives up on silence, repeats a refusal.
    pub fn handle_timeout(&mut self, now: Instant) {
        match self.state.clone() {
            State::Asking => {
                if now.since(self.last_heard) >= self.timing.answer_timeout_micros {
                    self.fail(JoinFailure::NoAnswer {
                        micros: self.timing.answer_timeout_micros,
                    });
                } else if now >= self.next_send {
                    self.send_request(now);
                }
            }
            State::Refusing { sends, next } if now >= next => {
                if let Some(r) = self.refusal.clone() {
                    self.out.push_back(Datagram {
                        to: self.host,
                        bytes: Message::Refused(r.clone()).encode(),
                    });
                    if sends > 1 {
                        self.state = State::Refusing {
                            sends: sends - 1,
                            next: now.plus(100_000),
                        };
                    } else {
                        self.fail(JoinFailure::Unplayable(r));
                    }
                }
            }
            _ => {}
        }
    }

    /// When [`JoinSetup::handle_timeout`] is next due, if ever.
    pub fn poll_timeout(&self) -> Option<Instant> {
        match &self.state {
            State::Asking => Some(
                self.next_send
                    .min(self.last_heard.plus(self.timing.answer_timeout_micros)),
            ),
            State::Refusing { next, .. } => Some(*next),
            _ => None,
        }
    }

    /// The next datagram to send.
    pub fn poll_transmit(&mut self) -> Option<Datagram> {
        self.out.pop_front()
    }

    /// The next thing that happened.
    pub fn poll_event(&mut self) -> Option<JoinEvent> {
        self.events.pop_front()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{COOKIE_BYTES, Refusal};

    fn host() -> SocketAddr {
        SocketAddr::from(([10, 0, 0, 1], 7000))
    }

    fn events(j: &mut JoinSetup) -> Vec<JoinEvent> {
        std::iter::from_fn(|| j.poll_event()).collect()
    }

    #[test]
    fn a_silent_host_is_given_up_on_in_bounded_time() {
        let t = JoinTiming::default();
        let mut j = JoinSetup::new(
            Instant::ZERO,
            host(),
            Want::Seat,
            Invite::Open,
            Identity::from_secret([1; 32]),
            [0; 32],
            t,
        );
        let mut now = Instant::ZERO;
        let mut sent = 0;
        while !j.is_done() {
            now = j.poll_timeout().unwrap();
            j.handle_timeout(now);
            sent += std::iter::from_fn(|| j.poll_transmit()).count();
        }
        assert_eq!(now.as_micros(), t.answer_timeout_micros);
        assert_eq!(sent as u64, t.answer_timeout_micros / t.resend_micros);
        assert_eq!(
            events(&mut j),
            vec![JoinEvent::Failed(JoinFailure::NoAnswer {
                micros: t.answer_timeout_micros
            })]
        );
    }

    #[test]
    fn answers_from_anyone_but_the_host_change_nothing() {
        let mut j = JoinSetup::new(
            Instant::ZERO,
            host(),
            Want::Seat,
            Invite::Open,
            Identity::from_secret([1; 32]),
            [0; 32],
            JoinTiming::default(),
        );
        let abort = Message::Abort(crate::message::Abort::NotEveryoneArrived).encode();
        j.handle_datagram(
            Instant::ZERO,
            SocketAddr::from(([10, 0, 0, 9], 7000)),
            &abort,
        );
        assert!(events(&mut j).is_empty());
        j.handle_datagram(Instant::ZERO, host(), &abort);
        assert!(j.is_done());
    }

    #[test]
    fn a_retryable_refusal_is_followed_for_a_bounded_time() {
        let t = JoinTiming::default();
        let mut j = JoinSetup::new(
            Instant::ZERO,
            host(),
            Want::Spectate,
            Invite::Open,
            Identity::from_secret([1; 32]),
            [0; 32],
            t,
        );
        let refused = Message::Refused(Refusal::SpectatorsFull).encode();
        let mut now = Instant::ZERO;
        while !j.is_done() {
            j.handle_datagram(now, host(), &refused);
            now = now.plus(t.resend_micros);
            j.handle_timeout(now);
        }
        let e = events(&mut j);
        assert_eq!(e[0], JoinEvent::AskingAgain(Refusal::SpectatorsFull));
        assert_eq!(
            e.last(),
            Some(&JoinEvent::Failed(JoinFailure::Refused(
                Refusal::SpectatorsFull
            )))
        );
        assert!(
            now.as_micros() >= t.retry_for_micros
                && now.as_micros() <= t.retry_for_micros + t.resend_micros
        );
    }

    #[test]
    fn a_rejoin_sends_its_claim_only_with_the_cookie() {
        let seat = Identity::from_secret([2; 32]);
        let mut j = JoinSetup::rejoin(
            Instant::ZERO,
            host(),
            Identity::from_secret([1; 32]),
            seat.clone(),
            JoinTiming::default(),
        );
        j.handle_timeout(Instant::ZERO);
        let first = Message::decode(&j.poll_transmit().unwrap().bytes).unwrap();
        assert!(matches!(
            first,
            Message::Join(Join {
                claim: None,
                cookie: None,
                ..
            })
        ));
        let host_key = Identity::from_secret([3; 32]).public();
        let challenge = Message::Challenge {
            cookie: Cookie([4; COOKIE_BYTES]),
            host_key,
        };
        j.handle_datagram(Instant::ZERO, host(), &challenge.encode());
        let second = Message::decode(&j.poll_transmit().unwrap().bytes).unwrap();
        let Message::Join(Join {
            claim: Some(c),
            cookie: Some(cookie),
            key,
            ..
        }) = second
        else {
            panic!("{second:?}");
        };
        assert_eq!(c.seat_key, seat.public());
        assert!(c.verify(&Identity::from_secret([3; 32]), &key, &cookie));
    }
}

//! [`SeatEndpoint`]: one seat's process, by socket address — the host's
//! (its [`HostSetup`] seats the joiners, then keeps answering rejoins and
//! spectators) or a joiner's (built from its roster). It creates the seat's
//! [`Peer`] once the match is agreed, routes datagrams between addresses
//! and parties ([`Router`]), wires the setup's decisions into the peer
//! (a returning seat's key, a spectator's key) and the peer's into the
//! setup (a dropped seat may be claimed back), and ends the match — once,
//! with a typed [`MatchEnd`] — when it is over, stopped or failed.
//!
//! A joiner whose seat loses the quorum (it heard too few of the others:
//! they dropped it) takes the seat back by itself when the app gave it a
//! spare key pair: its log ends where it stopped, and a new peer rejoins
//! the match through the host with a claim to the seat. Any other stop
//! (the match found invalid) keeps the peer running until it owes nobody
//! a message — every live seat heard why — so no seat ends alone and
//! leaves the others to time it out and play on.
//!
//! Invariants: no clock, no socket, no randomness; every wait is bounded
//! ([`SeatTiming`]); [`MatchEvent::Ended`] is the last event; the log is
//! finished (its frames written) before the end is raised.

use std::collections::VecDeque;
use std::io::Write;
use std::net::SocketAddr;

use lockstep_peer::{Node, Party, Peer, PeerStats, StopReason};
use lockstep_protocol::seal::Identity;
use lockstep_protocol::{Commanded, Input, Instant, SeatId, Security};
use lockstep_sim::{Game, Match};

use crate::Datagram;
use crate::endpoint::{Endpoint, Joining};
use crate::event::{LinkStatus, MatchEnd, MatchEvent};
use crate::host_setup::HostSetup;
use crate::invite::Invites;
use crate::join_setup::{JoinEvent, JoinSetup};
use crate::message::{Abort, Refusal, Roster, RosterProblem};
use crate::router::{Route, Router};
use crate::seat_plan::{SeatLog, SeatPlan, SeatTiming};
use crate::settings::MatchSettings;

mod react;

/// The largest median round trip from `p` to another seat.
fn worst_rtt<G: Game, W: Write>(p: &Peer<G, W>) -> Option<u64> {
    let s = p.session();
    let local = s.config().local;
    (0..s.config().seats)
        .map(SeatId)
        .filter(|q| *q != local)
        .filter_map(|q| s.rtt_micros(q))
        .max()
}

/// Frames a seat taken back needs before the match's end, besides two
/// round trips: the margin the host gives before its first frame (30) and
/// time to receive and load the host's state.
const RETURN_FRAMES: u32 = 120;

enum Role {
    Host(Box<HostSetup>),
    Joined(Box<JoinSetup>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// The setup runs; no peer yet (or between a lost quorum and the
    /// rejoin's roster).
    Setup,
    /// The peer plays.
    Playing,
    /// The last frame was played and compared: lingering until then.
    Lingering(Instant),
    /// The peer stopped: it runs on (telling the others why, serving the
    /// states a report compares) through its `linger` and until it owes
    /// nothing, or until `until`.
    Stopping {
        linger: Option<Instant>,
        until: Instant,
    },
    /// The host is repeating an abort; the end follows it.
    Aborting,
    /// Over.
    Ended,
}

/// One seat's process. See the module documentation.
pub struct SeatEndpoint<G: Game, W: Write> {
    role: Role,
    config: G::Config,
    setup: Match,
    settings: MatchSettings,
    plan: SeatPlan<G, W>,
    identity: Identity,
    timing: SeatTiming,
    peer: Option<Peer<G, SeatLog<W>>>,
    router: Router,
    input: Option<G::Input>,
    phase: Phase,
    started_at: Option<Instant>,
    progress: (u32, Instant),
    stopped: Option<StopReason>,
    abort: Option<Abort>,
    desyncs: u64,
    finished_log: Option<W>,
    log_error: Option<String>,
    last_stats: PeerStats,
    last_status: LinkStatus,
    events: VecDeque<MatchEvent>,
    out: VecDeque<Datagram>,
}

impl<G: Game, W: Write> core::fmt::Debug for SeatEndpoint<G, W> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SeatEndpoint")
            .field("phase", &self.phase)
            .field("peer", &self.peer)
            .finish_non_exhaustive()
    }
}

impl<G: Game, W: Write> SeatEndpoint<G, W> {
    /// The host of a match of `G` with `config` on `setup`, played as
    /// `settings` say, seating and admitting whom `invites` say; the host
    /// plays seat 0 with `identity` and proves joiners' addresses with
    /// cookies made from `cookie_secret`.
    #[allow(clippy::too_many_arguments)]
    pub fn host(
        now: Instant,
        config: G::Config,
        setup: Match,
        settings: MatchSettings,
        invites: Invites,
        identity: Identity,
        cookie_secret: [u8; 32],
        plan: SeatPlan<G, W>,
        timing: SeatTiming,
    ) -> SeatEndpoint<G, W> {
        let offer = crate::host_setup::Offer::of::<G>(&config, setup, settings.clone());
        let host = HostSetup::new(
            offer,
            identity.clone(),
            cookie_secret,
            invites,
            crate::host_setup::SetupTiming::default(),
        );
        SeatEndpoint::with(
            Role::Host(Box::new(host)),
            config,
            setup,
            settings,
            plan,
            identity,
            timing,
            SeatId(0),
            now,
        )
    }

    /// The joiner whose setup `joining` received a roster of `G`: checks
    /// the roster (game, version, settings and their hash) and starts the
    /// seat's peer. A roster this process cannot play is refused to the
    /// host, and `joining` comes back (drive it until it closes, so the
    /// refusal goes out) with the reason.
    pub fn from_roster(
        now: Instant,
        joining: Joining,
        plan: SeatPlan<G, W>,
        timing: SeatTiming,
    ) -> Result<SeatEndpoint<G, W>, (Box<Joining>, Refusal)> {
        let mut joining = joining;
        let Some(roster) = joining.setup.roster().cloned() else {
            let r = Refusal::Roster {
                problem: RosterProblem::Malformed,
                detail: "no roster yet".into(),
            };
            return Err((Box::new(joining), r));
        };
        let accepted = roster.accept::<G>().and_then(|c| match roster.seat {
            Some(seat) => Ok((c, seat)),
            None => Err(Refusal::Roster {
                problem: RosterProblem::Malformed,
                detail: "a spectator's roster".into(),
            }),
        });
        let (config, seat) = match accepted {
            Ok(x) => x,
            Err(r) => {
                joining.setup.refuse(now, r.clone());
                return Err((Box::new(joining), r));
            }
        };
        let identity = joining.setup.identity().clone();
        let host = joining.setup.host();
        let mut me = SeatEndpoint::with(
            Role::Joined(Box::new(joining.setup)),
            config,
            roster.setup,
            roster.settings.clone(),
            plan,
            identity,
            timing,
            seat,
            now,
        );
        // The host may have called the match off in the very datagrams
        // that brought the roster (its abort follows the roster at once
        // when its own seat cannot start): the match ends here.
        if let Role::Joined(setup) = &me.role {
            if let Some(why) = setup.failure().cloned() {
                me.on_join_event(now, JoinEvent::Failed(why));
                return Ok(me);
            }
        }
        let addresses = Self::roster_addresses(&roster, host);
        if let Err(detail) = me.start_peer(now, seat, roster.rejoin, &roster.keys, addresses) {
            let r = Refusal::Roster {
                problem: RosterProblem::Local,
                detail,
            };
            let Role::Joined(setup) = me.role else {
                unreachable!("a joiner's role");
            };
            let mut joining = Joining::new(*setup);
            joining.setup.refuse(now, r.clone());
            return Err((Box::new(joining), r));
        }
        Ok(me)
    }
}

impl<G: Game, W: Write> SeatEndpoint<G, W> {
    /// A seat in its setup, no peer yet.
    #[allow(clippy::too_many_arguments)]
    fn with(
        role: Role,
        config: G::Config,
        setup: Match,
        settings: MatchSettings,
        plan: SeatPlan<G, W>,
        identity: Identity,
        timing: SeatTiming,
        seat: SeatId,
        now: Instant,
    ) -> SeatEndpoint<G, W> {
        SeatEndpoint {
            role,
            config,
            setup,
            settings,
            plan,
            identity,
            timing,
            peer: None,
            router: Router::default(),
            input: None,
            phase: Phase::Setup,
            started_at: None,
            progress: (0, now),
            stopped: None,
            abort: None,
            desyncs: 0,
            finished_log: None,
            log_error: None,
            last_stats: PeerStats::default(),
            last_status: LinkStatus {
                seat: Some(seat),
                ..LinkStatus::default()
            },
            events: VecDeque::new(),
            out: VecDeque::new(),
        }
    }

    /// The seat's peer, once the match is agreed (its game, its session).
    pub fn peer(&self) -> Option<&Peer<G, SeatLog<W>>> {
        self.peer.as_ref()
    }

    /// The seat's peer, to set its input or read its game mutably.
    pub fn peer_mut(&mut self) -> Option<&mut Peer<G, SeatLog<W>>> {
        self.peer.as_mut()
    }

    /// The host's setup (`None` on a joiner).
    pub fn host_setup(&self) -> Option<&HostSetup> {
        match &self.role {
            Role::Host(h) => Some(h),
            Role::Joined(_) => None,
        }
    }

    /// The match: seats, seed, tick rate.
    pub fn setup(&self) -> &Match {
        &self.setup
    }

    /// How the match is played.
    pub fn settings(&self) -> &MatchSettings {
        &self.settings
    }

    /// The key pair this process plays the seat with now (a seat taken
    /// back after a lost quorum plays under a new one).
    pub fn identity(&self) -> &Identity {
        &self.identity
    }

    /// The game's settings.
    pub fn config(&self) -> &G::Config {
        &self.config
    }

    /// Sets the input the local player holds now (sampled once per frame;
    /// retires the bot), for this peer and any later one.
    pub fn set_input(&mut self, input: G::Input) {
        if let Some(p) = &mut self.peer {
            p.set_input(input.clone());
        }
        self.input = Some(input);
    }

    /// Leaves the match now (the player closed the window): the seat says
    /// goodbye and the match ends for this process with [`MatchEnd::Left`].
    pub fn leave(&mut self, now: Instant) {
        let frame = self.peer.as_ref().map_or(0, |p| p.frame());
        self.end(now, MatchEnd::Left { frame });
    }

    /// The peer's counters (the last peer's, once it retired).
    pub fn peer_stats(&self) -> PeerStats {
        match &self.peer {
            Some(p) => p.stats().clone(),
            None => self.last_stats.clone(),
        }
    }

    /// The replay log, once the match ended (finished: every settled frame
    /// written, and its end); `None` if none was kept.
    pub fn take_log(&mut self) -> Option<W> {
        self.finished_log.take()
    }

    /// Why the replay log stopped following the match, if it did.
    pub fn log_error(&self) -> Option<&str> {
        self.log_error.as_deref()
    }

    fn start_peer(
        &mut self,
        now: Instant,
        seat: SeatId,
        rejoin: bool,
        keys: &[lockstep_protocol::seal::PublicKey],
        mut addresses: Vec<Option<SocketAddr>>,
    ) -> Result<(), String> {
        let security = if self.settings.sealed {
            Security::Sealed {
                identity: self.identity.clone(),
                seats: keys.to_vec(),
            }
        } else {
            Security::Plain
        };
        let settings = self
            .settings
            .for_seat(&self.setup, seat, self.plan.token, security, rejoin);
        let log = match (rejoin, self.plan.log.take()) {
            (false, Some(open)) => {
                SeatLog::Log(open().map_err(|e| format!("cannot open the replay log: {e}"))?)
            }
            _ => SeatLog::Discard,
        };
        let mut peer =
            Peer::new(&self.config, self.setup, settings, log).map_err(|e| e.to_string())?;
        peer.set_threads(self.plan.threads);
        if let Some(make) = &mut self.plan.bot {
            peer.set_bot(make(seat.0, &self.setup));
        }
        if let Some(input) = &mut self.input {
            // Commands issued before this peer go with its first frame,
            // and with no later peer's.
            let held = input.repeat();
            peer.set_input(std::mem::replace(input, held));
        }
        if let Some(prepare) = &mut self.plan.prepare {
            prepare(&mut peer)?;
        }
        if let Some(own) = addresses.get_mut(seat.index()) {
            *own = None;
        }
        self.router = Router::seats(addresses);
        self.progress = (peer.frame(), now);
        self.peer = Some(peer);
        self.phase = Phase::Playing;
        self.started_at = Some(now);
        Ok(())
    }

    /// A joiner's roster as the table of addresses: the host's entry is
    /// the address it was joined at.
    fn roster_addresses(roster: &Roster, host: SocketAddr) -> Vec<Option<SocketAddr>> {
        let mut addresses = roster.addresses.clone();
        if let Some(first) = addresses.first_mut() {
            *first = Some(host);
        }
        addresses
    }

    fn pump(&mut self, now: Instant) {
        loop {
            let event = match &mut self.role {
                Role::Host(h) => h.poll_event().map(Ok),
                Role::Joined(j) => j.poll_event().map(Err),
            };
            match event {
                Some(Ok(e)) => self.on_host_event(now, e),
                Some(Err(e)) => self.on_join_event(now, e),
                None => break,
            }
        }
        loop {
            let d = match &mut self.role {
                Role::Host(h) => h.poll_transmit(),
                Role::Joined(j) => j.poll_transmit(),
            };
            match d {
                Some(d) => self.out.push_back(d),
                None => break,
            }
        }
        while let Some(e) = self.peer.as_mut().and_then(|p| p.poll_event()) {
            self.on_peer_event(now, e);
        }
        self.check(now);
    }

    /// Phase changes that time or the peer's state bring.
    fn check(&mut self, now: Instant) {
        match self.phase {
            Phase::Playing => {
                let Some(p) = &self.peer else {
                    return;
                };
                let frame = p.frame();
                if frame != self.progress.0 {
                    self.progress = (frame, now);
                }
                let session = p.session();
                if let Role::Host(h) = &mut self.role {
                    // A seat taken back plays again a round trip and a
                    // margin after the host hears it, then needs the
                    // host's state: too near the end, it would come back
                    // to a match that is over.
                    let tick = session.config().tick_micros.max(1);
                    let rtt = worst_rtt(p).unwrap_or(0) / tick;
                    let needed = RETURN_FRAMES + 2 * rtt as u32;
                    if frame.saturating_add(needed) >= self.settings.frames {
                        h.close_returns();
                    }
                }
                if session.is_finished() {
                    self.phase = Phase::Lingering(now.plus(self.timing.linger_micros));
                } else if session.is_stopped() {
                    // The match was found invalid and the peer has not
                    // stopped yet: it waits for another seat's state to
                    // put in its report. Bounded: a seat that left does
                    // not answer. The peer stops itself (its report says
                    // the state did not come), so its stop reaches the app
                    // as every seat's does.
                    if now.since(self.progress.1) >= self.timing.stop_micros {
                        if let Some(p) = &mut self.peer {
                            p.stop_waiting();
                        }
                        while let Some(e) = self.peer.as_mut().and_then(|p| p.poll_event()) {
                            self.on_peer_event(now, e);
                        }
                        // A peer that was not waiting does not stop here:
                        // the match still ends, within the bound.
                        if self.stopped.is_none() {
                            let first_frame = self
                                .peer
                                .as_ref()
                                .and_then(|p| p.session().invalidation())
                                .map_or(frame, |i| i.first_frame);
                            self.end(
                                now,
                                MatchEnd::Stopped(StopReason::MatchInvalid {
                                    first_frame,
                                    report: None,
                                }),
                            );
                        }
                    }
                } else if !session.is_running() {
                    let host = matches!(self.role, Role::Host(_));
                    let limit = if host {
                        self.timing.host_start_micros
                    } else {
                        self.timing.join_start_micros
                    };
                    let since = self.started_at.unwrap_or(now);
                    if now.since(since) >= limit {
                        if host {
                            self.call_off(now, Abort::NotEveryoneArrived);
                        } else {
                            let stopped = self.stopped.clone();
                            self.end_stopped_or(now, stopped, MatchEnd::HostVanished);
                        }
                    }
                } else if now.since(self.progress.1) >= self.timing.stall_micros {
                    self.end(now, MatchEnd::Stuck { frame });
                }
            }
            Phase::Stopping { linger, until } => {
                let owes = self
                    .peer
                    .as_ref()
                    .is_some_and(|p| p.session().poll_timeout().is_some());
                // A state request for another seat's report may still be
                // on its way: linger before leaving, even owing nothing.
                let lingering = linger.is_some_and(|l| now < l);
                if linger.is_some() && !lingering {
                    self.phase = Phase::Stopping {
                        linger: None,
                        until,
                    };
                }
                let done = !owes && !lingering;
                // `stopped` is set before this phase begins.
                if let Some(reason) = self.stopped.clone().filter(|_| now >= until || done) {
                    self.end(now, MatchEnd::Stopped(reason));
                }
            }
            Phase::Lingering(until) if now >= until => {
                self.end(
                    now,
                    MatchEnd::Finished {
                        frames: self.settings.frames,
                    },
                );
            }
            Phase::Aborting => {
                let done = match &self.role {
                    Role::Host(h) => !h.is_aborting(),
                    Role::Joined(_) => true,
                };
                if done {
                    let reason = self.abort.clone().unwrap_or(Abort::NotEveryoneArrived);
                    self.end(now, MatchEnd::Aborted(reason));
                }
            }
            _ => {}
        }
    }

    fn status_of(&self, p: &Peer<G, SeatLog<W>>) -> LinkStatus {
        let s = p.session();
        let local = s.config().local;
        LinkStatus {
            seat: Some(local),
            frame: p.frame(),
            rtt_micros: worst_rtt(p),
            delay_frames: s.delay_frames(),
            rolled_back: s.stats().frames_rolled_back,
            stalls: s.stats().stall_ticks,
            desyncs: self.desyncs,
            healed: p.stats().states_loaded,
            checked: 0,
            checksum: p.newest_checksum().map(|(_, c)| c.short()),
            dropped: s.stats().dropped.total()
                + p.relay().stats().dropped.total()
                + self.router.stray(),
            spectators: p.relay().spectators() as u64,
            lost_permille: {
                let (sent, lost) = s.measured_loss();
                lost * 1000 / sent.max(1)
            },
            ..LinkStatus::default()
        }
    }
}

/// Orders: a game whose input is [`Orders`](lockstep_protocol::Orders)
/// takes commands from the app at any moment (see
/// [`Peer::issue`](lockstep_peer::Peer::issue)).
impl<G: Game, W: Write> SeatEndpoint<G, W>
where
    G::Input: Commanded,
{
    /// Issues `command` for the next frame this seat samples; before the
    /// match starts it waits for the first frame. Gives it back when that
    /// frame is full (issue it again next frame).
    pub fn issue(
        &mut self,
        command: <G::Input as Commanded>::Command,
    ) -> Result<(), <G::Input as Commanded>::Command> {
        match &mut self.peer {
            Some(p) => p.issue(command),
            None => self
                .input
                .get_or_insert_with(G::Input::default)
                .push_command(command),
        }
    }

    /// Sets the held part of the input (retires the bot), keeping the
    /// commands issued since the last frame.
    pub fn set_held(&mut self, held: <G::Input as Commanded>::Held) {
        if let Some(p) = &mut self.peer {
            p.set_held(held.clone());
        }
        *self.input.get_or_insert_with(G::Input::default).held_mut() = held;
    }
}

impl<G: Game, W: Write> Endpoint for SeatEndpoint<G, W> {
    fn handle_datagram(&mut self, now: Instant, from: SocketAddr, bytes: &[u8]) {
        if self.phase == Phase::Ended {
            return;
        }
        match self.router.route(from, bytes) {
            Route::Setup => match &mut self.role {
                Role::Host(h) => h.handle_datagram(now, from, bytes),
                Role::Joined(j) => j.handle_datagram(now, from, bytes),
            },
            Route::Party(party) => match &mut self.peer {
                Some(p) => {
                    Node::handle_datagram(p, now, party, bytes);
                }
                None => self.router.count_stray(),
            },
            Route::Moving(seat) => {
                if let Some(p) = &mut self.peer {
                    if Node::handle_datagram(p, now, Party::Seat(seat), bytes) {
                        self.router.move_seat(seat, from);
                    }
                }
            }
            Route::Stray => {}
        }
        self.pump(now);
    }

    fn handle_timeout(&mut self, now: Instant) {
        if self.phase == Phase::Ended {
            return;
        }
        match &mut self.role {
            Role::Host(h) => {
                if h.poll_timeout().is_some_and(|t| t <= now) {
                    h.handle_timeout(now);
                }
            }
            Role::Joined(j) => {
                if j.poll_timeout().is_some_and(|t| t <= now) {
                    j.handle_timeout(now);
                }
            }
        }
        if let Some(p) = &mut self.peer {
            if p.poll_timeout().is_some_and(|t| t <= now) {
                p.handle_timeout(now);
            }
        }
        self.pump(now);
    }

    fn spent(&mut self, micros: u64) {
        if let Some(p) = &mut self.peer {
            p.spent(micros);
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        if self.phase == Phase::Ended {
            return None;
        }
        let setup = match &self.role {
            Role::Host(h) => h.poll_timeout(),
            Role::Joined(j) => j.poll_timeout(),
        };
        let peer = self.peer.as_ref().and_then(|p| p.poll_timeout());
        let own = match self.phase {
            Phase::Playing => match &self.peer {
                Some(p) if p.session().is_stopped() => {
                    Some(self.progress.1.plus(self.timing.stop_micros))
                }
                Some(p) if !p.session().is_running() => {
                    let limit = match self.role {
                        Role::Host(_) => self.timing.host_start_micros,
                        Role::Joined(_) => self.timing.join_start_micros,
                    };
                    self.started_at.map(|t| t.plus(limit))
                }
                Some(_) => Some(self.progress.1.plus(self.timing.stall_micros)),
                None => None,
            },
            Phase::Lingering(until) => Some(until),
            Phase::Stopping { linger, until } => Some(linger.map_or(until, |l| l.min(until))),
            _ => None,
        };
        [setup, peer, own].into_iter().flatten().min()
    }

    fn poll_transmit(&mut self, now: Instant) -> Option<Datagram> {
        if let Some(d) = self.out.pop_front() {
            return Some(d);
        }
        let p = self.peer.as_mut()?;
        while let Some((party, bytes)) = Node::poll_transmit(p, now) {
            if let Some(to) = self.router.address(party) {
                return Some(Datagram { to, bytes });
            }
        }
        None
    }

    fn poll_event(&mut self) -> Option<MatchEvent> {
        self.events.pop_front()
    }

    fn status(&self) -> LinkStatus {
        match &self.peer {
            Some(p) => self.status_of(p),
            None => self.last_status.clone(),
        }
    }

    fn is_closed(&self) -> bool {
        self.phase == Phase::Ended && self.out.is_empty()
    }
}

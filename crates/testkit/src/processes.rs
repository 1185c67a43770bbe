//! [`Lan`]: whole processes of a match on the simulated network — the
//! lobby included. Each node has a socket address and runs one endpoint of
//! `lockstep-lobby` (the host's seat, a joiner that turns into its seat
//! once its roster arrives, a spectator), exactly as the UDP runtime runs
//! it, or a scripted [`Stranger`] (a squatter, a forger, a silent
//! spectator) that sends setup messages and counts what comes back.
//!
//! Invariants: a run is a pure function of its seed and the calls made
//! (every key pair, token and cookie secret is drawn from the seeded
//! generator; time jumps to the next timeout or delivery); the harness only
//! moves datagrams and time and starts or kills processes on cue: every
//! decision is the endpoints' own; traffic is counted per pair of nodes at
//! send time (before loss), so a ratio of bytes out to bytes in is what a
//! node's socket would have done.

use std::net::{Ipv4Addr, SocketAddr};

use lockstep_fx::Rng;
use lockstep_games::Demo;
use lockstep_lobby::{
    Endpoint, Invite, Invites, JoinEvent, JoinSetup, JoinTiming, Joining, MatchEnd, MatchEvent,
    MatchSettings, Message, SeatClaim, SeatEndpoint, SeatPlan, SeatTiming, SpectateEndpoint, Want,
};
use lockstep_peer::Spectator;
use lockstep_protocol::Instant;
use lockstep_protocol::SeatId;
use lockstep_protocol::seal::Identity;
use lockstep_sim::Match;

use crate::netsim::{LinkConfig, Network};

/// The address of node `i`.
pub fn address(i: usize) -> SocketAddr {
    SocketAddr::from((
        Ipv4Addr::new(10, 0, (i / 250) as u8, (i % 250) as u8 + 1),
        7000,
    ))
}

fn node_of(addr: SocketAddr) -> Option<usize> {
    match addr {
        SocketAddr::V4(a) if a.port() == 7000 && a.ip().octets()[..2] == [10, 0] => {
            let o = a.ip().octets();
            Some(usize::from(o[2]) * 250 + usize::from(o[3]).checked_sub(1)?)
        }
        _ => None,
    }
}

/// What a scripted stranger does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stranger {
    /// Sends a `Join` of this kind every `every_micros`, never answering
    /// a challenge: an address that never completes (a forged source).
    Spray {
        /// What it asks for.
        want: Want,
        /// How often.
        every_micros: u64,
        /// How many at most.
        count: u32,
    },
    /// Answers the host's challenge once, as a real joiner would, then
    /// falls silent: it holds what it was given only as long as the host
    /// lets a silent address hold it.
    OnceThenSilent {
        /// What it asks for.
        want: Want,
    },
    /// Claims a seat back with `seat_key`'s public key but a key pair of
    /// its own: it cannot prove the seat is its.
    ForgedClaim {
        /// The seat's public key it claims.
        seat_key: lockstep_protocol::seal::PublicKey,
    },
}

#[derive(Debug)]
struct StrangerState {
    script: Stranger,
    identity: Identity,
    sent: u32,
    next_at: Instant,
    answered: bool,
    heard: Vec<Message>,
}

#[allow(clippy::large_enum_variant)]
enum Proc<G: Demo> {
    Joining(Box<Joining>, SeatRole),
    Seat(SeatEndpoint<G, Vec<u8>>),
    Spectating(SpectateEndpoint<Spectator<G>>),
    Stranger(StrangerState),
    /// The process is gone (killed, or its endpoint closed).
    Gone,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SeatRole {
    Seat,
    Spectator,
}

/// One node's record of a run.
#[derive(Debug, Clone, Default)]
pub struct NodeRun {
    /// Every event but frames stepped, with when it happened.
    pub events: Vec<(Instant, MatchEvent)>,
    /// Frames stepped (a seat) or seen: stepped or loaded (a spectator).
    pub frames: u32,
    /// How its match ended.
    pub end: Option<MatchEnd>,
    /// The replay log it kept (a seat).
    pub log: Option<Vec<u8>>,
    /// Its seat, once it had one.
    pub seat: Option<SeatId>,
    /// The setup messages a stranger received.
    pub heard: Vec<Message>,
}

/// Processes of one match on a simulated network. See the module
/// documentation.
pub struct Lan<G: Demo> {
    net: Network,
    procs: Vec<Proc<G>>,
    runs: Vec<NodeRun>,
    identities: Vec<Option<Identity>>,
    /// Bytes sent, by (from, to) node.
    traffic: Vec<Vec<u64>>,
    /// Per node: paused until then (like SIGSTOP: no timers, nothing
    /// sent), with the datagrams that reached it meanwhile, as its
    /// socket's buffer holds them.
    paused: Vec<Option<Paused>>,
    rng: Rng,
    now: Instant,
    timing: SeatTiming,
    invites: Invites,
}

const MAX_NODES: usize = 64;

/// A paused process: when it wakes, and what reached it meanwhile.
type Paused = (Instant, Vec<(SocketAddr, Vec<u8>)>);

/// Datagrams a paused process's socket holds; later ones are lost, as a
/// full receive buffer drops them.
pub const SOCKET_BUFFER_DATAGRAMS: usize = 2048;

impl<G: Demo> Lan<G> {
    /// A host (node 0) of a match of `G` with `config` on `setup`, played
    /// as `settings` say, on a network whose every link is `link`; the
    /// run is seeded by `seed`. Seats and spectators are invited by codes
    /// drawn from the seed ([`Lan::invites`]), which [`Lan::join`] and
    /// [`Lan::spectate`] use.
    pub fn host(
        seed: u64,
        link: LinkConfig,
        config: G::Config,
        setup: Match,
        settings: MatchSettings,
    ) -> Lan<G> {
        let mut rng = Rng::new(seed, 0x0063_6f64);
        let mut random = [0u8; 16];
        for chunk in random.chunks_exact_mut(4) {
            chunk.copy_from_slice(&rng.next_u32().to_le_bytes());
        }
        Lan::host_inviting(
            seed,
            link,
            config,
            setup,
            settings,
            Invites::from_random(random),
        )
    }

    /// [`Lan::host`] whose seats and spectators are invited as `invites`
    /// say ([`Invites::OPEN`]: a LAN lobby).
    pub fn host_inviting(
        seed: u64,
        link: LinkConfig,
        config: G::Config,
        setup: Match,
        settings: MatchSettings,
        invites: Invites,
    ) -> Lan<G> {
        let mut rng = Rng::new(seed, 0x006c_616e);
        let net = Network::new(seed, MAX_NODES as u8, link);
        let identity = identity(&mut rng);
        let mut secret = [0u8; 32];
        fill(&mut rng, &mut secret);
        let timing = SeatTiming::default();
        let plan = plan::<G>(&mut rng, None);
        let host = SeatEndpoint::host(
            Instant::ZERO,
            config,
            setup,
            settings,
            invites,
            identity.clone(),
            secret,
            plan,
            timing,
        );
        let mut lan = Lan {
            net,
            procs: Vec::new(),
            runs: Vec::new(),
            identities: Vec::new(),
            traffic: vec![vec![0; MAX_NODES]; MAX_NODES],
            paused: Vec::new(),
            rng,
            now: Instant::ZERO,
            timing,
            invites,
        };
        lan.push(Proc::Seat(host), Some(identity));
        lan.runs[0].seat = Some(SeatId(0));
        lan
    }

    fn push(&mut self, p: Proc<G>, identity: Option<Identity>) -> usize {
        assert!(self.procs.len() < MAX_NODES, "at most {MAX_NODES} nodes");
        self.procs.push(p);
        self.runs.push(NodeRun::default());
        self.paused.push(None);
        self.identities.push(identity);
        self.procs.len() - 1
    }

    /// The virtual time now.
    pub fn now(&self) -> Instant {
        self.now
    }

    /// Who the host seats and admits.
    pub fn invites(&self) -> &Invites {
        &self.invites
    }

    /// Replaces the link from node `from` to node `to`.
    pub fn set_link(&mut self, from: usize, to: usize, link: LinkConfig) {
        self.net
            .set_link(SeatId(from as u8), SeatId(to as u8), link);
    }

    /// Starts a joiner asking the host for a seat with the seat code;
    /// gives its node.
    pub fn join(&mut self) -> usize {
        self.join_invited(self.invites.seat)
    }

    /// Starts a joiner asking the host for a seat, invited as `invite`
    /// says (another code, none); gives its node.
    pub fn join_invited(&mut self, invite: Invite) -> usize {
        let identity = identity(&mut self.rng);
        let setup = self.ask(Want::Seat, invite, identity.clone());
        self.push(
            Proc::Joining(Box::new(Joining::new(setup)), SeatRole::Seat),
            Some(identity),
        )
    }

    /// Starts a spectator with the spectator code; gives its node.
    pub fn spectate(&mut self) -> usize {
        self.watch(Want::Spectate, self.invites.spectate)
    }

    /// Starts a spectator invited as `invite` says; gives its node.
    pub fn spectate_invited(&mut self, invite: Invite) -> usize {
        self.watch(Want::Spectate, invite)
    }

    /// Starts a spectator that asks to be the match's arbiter; gives its
    /// node.
    pub fn arbitrate(&mut self) -> usize {
        self.watch(Want::Arbitrate, Invite::Open)
    }

    fn ask(&mut self, want: Want, invite: Invite, identity: Identity) -> JoinSetup {
        let mut random = [0u8; 32];
        fill(&mut self.rng, &mut random);
        JoinSetup::new(
            self.now,
            address(0),
            want,
            invite,
            identity,
            random,
            JoinTiming::default(),
        )
    }

    fn watch(&mut self, want: Want, invite: Invite) -> usize {
        let identity = identity(&mut self.rng);
        let setup = self.ask(want, invite, identity);
        self.push(
            Proc::Joining(Box::new(Joining::new(setup)), SeatRole::Spectator),
            None,
        )
    }

    /// Restarts the seat of node `node` (killed before) as a new process
    /// at a new node, claiming the seat back with the key pair the seat was
    /// bound to; gives the new node.
    pub fn rejoin(&mut self, node: usize) -> usize {
        let old = self.identities[node]
            .clone()
            .expect("a seat's node has its key pair");
        let fresh = identity(&mut self.rng);
        let setup = JoinSetup::rejoin(
            self.now,
            address(0),
            fresh.clone(),
            old,
            JoinTiming::default(),
        );
        self.push(
            Proc::Joining(Box::new(Joining::new(setup)), SeatRole::Seat),
            Some(fresh),
        )
    }

    /// Starts a scripted stranger; gives its node.
    pub fn stranger(&mut self, script: Stranger) -> usize {
        let identity = identity(&mut self.rng);
        let now = self.now;
        self.push(
            Proc::Stranger(StrangerState {
                script,
                identity,
                sent: 0,
                next_at: now,
                answered: false,
                heard: Vec::new(),
            }),
            None,
        )
    }

    /// Kills the process of node `node`: it sends and receives nothing
    /// more.
    pub fn kill(&mut self, node: usize) {
        if let Some(p) = self.procs.get_mut(node) {
            *p = Proc::Gone;
        }
    }

    /// Pauses node `node`'s process for `micros` (as SIGSTOP, then
    /// SIGCONT): it runs no timer and sends nothing; what reaches it is
    /// held, up to [`SOCKET_BUFFER_DATAGRAMS`], and handed to it in order
    /// when it wakes.
    pub fn pause(&mut self, node: usize, micros: u64) {
        if let Some(p) = self.paused.get_mut(node) {
            *p = Some((self.now.plus(micros), Vec::new()));
        }
    }

    /// The key pair node `node` plays with (a seat).
    pub fn identity_of(&self, node: usize) -> Option<&Identity> {
        self.identities.get(node)?.as_ref()
    }

    /// What node `node` did so far.
    pub fn run_of(&self, node: usize) -> &NodeRun {
        &self.runs[node]
    }

    /// Bytes node `from` sent node `to` so far.
    pub fn bytes(&self, from: usize, to: usize) -> u64 {
        self.traffic[from][to]
    }

    /// The next frame node `node` steps (a seat), if it has a peer.
    pub fn frame_of(&self, node: usize) -> Option<u32> {
        match &self.procs[node] {
            Proc::Seat(s) => s.peer().map(|p| p.frame()),
            _ => None,
        }
    }

    /// Whether node `node`'s process still runs.
    pub fn is_running(&self, node: usize) -> bool {
        !matches!(self.procs[node], Proc::Gone)
    }

    /// Runs until `done` says so, every endpoint closed, or `until`
    /// (virtual time) passes; gives whether `done` said so.
    pub fn run_until(&mut self, until: Instant, mut done: impl FnMut(&Lan<G>) -> bool) -> bool {
        loop {
            if done(self) {
                return true;
            }
            if self.now >= until || self.procs.iter().all(|p| matches!(p, Proc::Gone)) {
                return false;
            }
            while let Some(d) = self.net.pop_due(self.now) {
                let (to, from) = (d.to.index(), address(d.from.index()));
                if let Some((_, held)) = self.paused[to].as_mut() {
                    if held.len() < SOCKET_BUFFER_DATAGRAMS {
                        held.push((from, d.bytes));
                    }
                    continue;
                }
                self.deliver(to, from, &d.bytes);
            }
            for i in 0..self.procs.len() {
                if let Some((wake, _)) = &self.paused[i] {
                    if self.now < *wake {
                        continue;
                    }
                    if let Some((_, held)) = self.paused[i].take() {
                        for (from, bytes) in held {
                            self.deliver(i, from, &bytes);
                        }
                    }
                }
                self.tick(i);
            }
            let next = self
                .procs
                .iter()
                .zip(&self.paused)
                .filter_map(|(p, paused)| match paused {
                    Some((wake, _)) => Some(*wake),
                    None => poll_timeout(p),
                })
                .chain(self.net.next_delivery())
                .min()
                .unwrap_or(until);
            self.now = if next > self.now {
                next.min(until)
            } else {
                self.now.plus(1)
            };
        }
    }

    fn deliver(&mut self, to: usize, from: SocketAddr, bytes: &[u8]) {
        // A `Faulty` game's fault strikes the node whose number it names.
        crate::faulty::enter(to as u8);
        self.deliver_to(to, from, bytes);
        crate::faulty::leave();
    }

    fn deliver_to(&mut self, to: usize, from: SocketAddr, bytes: &[u8]) {
        let now = self.now;
        match &mut self.procs[to] {
            Proc::Joining(j, _) => j.handle_datagram(now, from, bytes),
            Proc::Seat(s) => s.handle_datagram(now, from, bytes),
            Proc::Spectating(w) => w.handle_datagram(now, from, bytes),
            Proc::Stranger(s) => {
                if let Ok(m) = Message::decode(bytes) {
                    s.heard.push(m.clone());
                    self.runs[to].heard.push(m);
                }
                return;
            }
            Proc::Gone => return,
        }
        self.drain(to);
    }

    fn tick(&mut self, i: usize) {
        crate::faulty::enter(i as u8);
        self.tick_node(i);
        crate::faulty::leave();
    }

    fn tick_node(&mut self, i: usize) {
        let now = self.now;
        match &mut self.procs[i] {
            Proc::Joining(j, _) => {
                if j.poll_timeout().is_some_and(|t| t <= now) {
                    j.handle_timeout(now);
                }
            }
            Proc::Seat(s) => {
                if s.poll_timeout().is_some_and(|t| t <= now) {
                    s.handle_timeout(now);
                }
            }
            Proc::Spectating(w) => {
                if w.poll_timeout().is_some_and(|t| t <= now) {
                    w.handle_timeout(now);
                }
            }
            Proc::Stranger(s) => {
                if let Some(bytes) = stranger_turn(now, s) {
                    self.send(i, 0, bytes);
                }
                return;
            }
            Proc::Gone => return,
        }
        self.drain(i);
    }

    fn send(&mut self, from: usize, to: usize, bytes: Vec<u8>) {
        self.traffic[from][to] += bytes.len() as u64;
        self.net
            .send(self.now, SeatId(from as u8), SeatId(to as u8), bytes);
    }

    /// Takes what node `i` did: its events, its datagrams; turns a joiner
    /// with its roster into its seat or spectator; retires a closed one.
    fn drain(&mut self, i: usize) {
        let now = self.now;
        let mut out = Vec::new();
        let mut roster = false;
        let closed = {
            let endpoint: &mut dyn Endpoint = match &mut self.procs[i] {
                Proc::Joining(j, _) => j.as_mut(),
                Proc::Seat(s) => s,
                Proc::Spectating(w) => w,
                _ => return,
            };
            while let Some(e) = endpoint.poll_event() {
                let run = &mut self.runs[i];
                match e {
                    MatchEvent::Peer(lockstep_peer::PeerEvent::Stepped { frame, .. }) => {
                        run.frames = run.frames.max(frame + 1);
                    }
                    MatchEvent::Spectator(lockstep_peer::SpectatorEvent::Stepped {
                        frame, ..
                    }) => run.frames = run.frames.max(frame + 1),
                    MatchEvent::Spectator(lockstep_peer::SpectatorEvent::Loaded {
                        frame, ..
                    }) => {
                        run.frames = run.frames.max(frame + 1);
                        run.events.push((now, e));
                    }
                    MatchEvent::Ended(end) => {
                        run.end = Some(end.clone());
                        run.events.push((now, MatchEvent::Ended(end)));
                    }
                    MatchEvent::Join(JoinEvent::Roster(r)) => {
                        roster = true;
                        run.seat = r.seat;
                        run.events
                            .push((now, MatchEvent::Join(JoinEvent::Roster(r))));
                    }
                    other => run.events.push((now, other)),
                }
            }
            while let Some(d) = endpoint.poll_transmit(now) {
                out.push(d);
            }
            endpoint.is_closed()
        };
        for d in out {
            if let Some(to) = node_of(d.to) {
                self.send(i, to, d.bytes);
            }
        }
        if roster {
            self.take_roster(i);
        }
        if closed {
            if let Proc::Seat(s) = &mut self.procs[i] {
                self.runs[i].log = s.take_log();
            }
            self.procs[i] = Proc::Gone;
        }
    }

    fn take_roster(&mut self, i: usize) {
        let now = self.now;
        let Proc::Joining(_, role) = &self.procs[i] else {
            return;
        };
        let role = *role;
        let Proc::Joining(joining, _) = std::mem::replace(&mut self.procs[i], Proc::Gone) else {
            return;
        };
        let token = self.rng.next_u32() | 1;
        let spare = Some(identity(&mut self.rng));
        self.procs[i] = match role {
            SeatRole::Seat => {
                let plan = plan::<G>(&mut self.rng, spare);
                match SeatEndpoint::from_roster(now, *joining, plan, self.timing) {
                    Ok(s) => Proc::Seat(s),
                    Err((j, _)) => Proc::Joining(j, role),
                }
            }
            SeatRole::Spectator => match SpectateEndpoint::from_roster(now, *joining, token) {
                Ok(w) => Proc::Spectating(w),
                Err((j, _)) => Proc::Joining(j, role),
            },
        };
        self.drain(i);
    }
}

fn poll_timeout<G: Demo>(p: &Proc<G>) -> Option<Instant> {
    match p {
        Proc::Joining(j, _) => j.poll_timeout(),
        Proc::Seat(s) => s.poll_timeout(),
        Proc::Spectating(w) => w.poll_timeout(),
        Proc::Stranger(s) => match s.script {
            Stranger::Spray {
                every_micros: _,
                count,
                ..
            } if s.sent >= count => None,
            Stranger::OnceThenSilent { .. } | Stranger::ForgedClaim { .. } if s.answered => None,
            _ => Some(s.next_at),
        },
        Proc::Gone => None,
    }
}

/// What a stranger sends at `now`, if anything.
fn stranger_turn(now: Instant, s: &mut StrangerState) -> Option<Vec<u8>> {
    let challenge = s.heard.iter().rev().find_map(|m| match m {
        Message::Challenge { cookie, host_key } => Some((*cookie, *host_key)),
        _ => None,
    });
    let join = |want, cookie, claim| {
        Message::Join(lockstep_lobby::message::Join {
            want,
            protocol: lockstep_protocol::packet::VERSION,
            key: s.identity.public(),
            cookie,
            claim,
            invite: None,
        })
        .encode()
    };
    match s.script.clone() {
        Stranger::Spray {
            want,
            every_micros,
            count,
        } => {
            if s.sent >= count || now < s.next_at {
                return None;
            }
            s.sent += 1;
            s.next_at = now.plus(every_micros);
            Some(join(want, None, None))
        }
        Stranger::OnceThenSilent { want } => {
            if s.answered || now < s.next_at {
                return None;
            }
            match challenge {
                Some((cookie, _)) => {
                    s.answered = true;
                    Some(join(want, Some(cookie), None))
                }
                None if s.sent == 0 => {
                    s.sent = 1;
                    s.next_at = now.plus(250_000);
                    Some(join(want, None, None))
                }
                None => {
                    s.next_at = now.plus(250_000);
                    None
                }
            }
        }
        Stranger::ForgedClaim { seat_key } => {
            if s.answered || now < s.next_at {
                return None;
            }
            match challenge {
                Some((cookie, host_key)) => {
                    s.answered = true;
                    // A claim made with its own key pair, presented as the
                    // seat's: the proof cannot verify.
                    let mut claim =
                        SeatClaim::make(&s.identity, &host_key, &s.identity.public(), &cookie)
                            .ok()?;
                    claim.seat_key = seat_key;
                    Some(join(Want::Rejoin, Some(cookie), Some(claim)))
                }
                None if s.sent == 0 => {
                    s.sent = 1;
                    s.next_at = now.plus(250_000);
                    Some(join(Want::Rejoin, None, None))
                }
                None => {
                    s.next_at = now.plus(250_000);
                    None
                }
            }
        }
    }
}

fn fill(rng: &mut Rng, out: &mut [u8; 32]) {
    for chunk in out.chunks_exact_mut(4) {
        chunk.copy_from_slice(&rng.next_u32().to_le_bytes());
    }
}

/// A seeded key pair (tests only: real processes draw theirs from the
/// operating system).
fn identity(rng: &mut Rng) -> Identity {
    let mut secret = [0u8; 32];
    fill(rng, &mut secret);
    Identity::from_secret(secret)
}

/// A seat played by its bot, recording to memory.
fn plan<G: Demo>(rng: &mut Rng, spare: Option<Identity>) -> SeatPlan<G, Vec<u8>> {
    let mut plan = SeatPlan::new(rng.next_u32() | 1);
    plan.bot = Some(Box::new(|seat, m: &Match| Box::new(G::bot(seat, m.seed))));
    plan.log = Some(Box::new(|| Ok(Vec::new())));
    plan.spare_identity = spare;
    plan
}

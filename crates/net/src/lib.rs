//! The UDP runtime of lockstep: plays a match between processes over real
//! sockets.
//!
//! It decides nothing. The match setup, the routing of addresses to seats
//! and spectators, membership and the end of the match are sans-IO state
//! machines of `lockstep-lobby` and `lockstep-peer` — the same ones the
//! testkit drives over its simulated network. This crate moves their
//! datagrams through a non-blocking UDP socket made with socket2
//! ([`Socket`]), shapes what it sends with a seeded link conditioner
//! ([`conditioner`], since `tc netem` is not always available), reads the
//! clock, draws the process's randomness ([`entropy`]), and hands the app
//! every typed event: each `PeerEvent` with its full payload (a desync's
//! whole report), the setup's events, a [`LinkStatus`] now and then, and
//! how the match ended ([`MatchEnd`]).
//!
//! A game drives its seat from the loop it already has: once per frame,
//! [`SeatRuntime::poll`] (or [`Runtime::poll`]) does what is due — the
//! datagrams that arrived, the frames due, what to send — and returns at
//! once with the events it raised. No async runtime, no thread. A host:
//!
//! ```no_run
//! use std::time::{Duration, Instant};
//! use lockstep_games::Demo;
//! use lockstep_games::cubes::Cubes;
//! use lockstep_net::conditioner::LinkShape;
//! use lockstep_net::{MatchEvent, MatchSettings, PeerEvent, SeatPlan, SeatRuntime, Socket, entropy};
//! use lockstep_sim::Match;
//!
//! let socket = Socket::open("0.0.0.0:7000".parse().unwrap(), LinkShape::PERFECT, 1).unwrap();
//! let setup = Match { seats: 2, seed: 1, tick_rate: 60 };
//! let settings = MatchSettings::new(&setup).frames(600);
//! let mut plan = SeatPlan::<Cubes, Vec<u8>>::new(entropy::token().unwrap());
//! plan.bot = Some(Box::new(|seat, m: &Match| Box::new(Cubes::bot(seat, m.seed))));
//! plan.log = Some(Box::new(|| Ok(Vec::new())));
//! // A seat code and a spectator code, drawn here: give them to whom
//! // you invite (`Invites::OPEN` for a LAN party that takes anyone).
//! let invites = entropy::invites().unwrap();
//! println!("seat code {:?}", invites.seat.code());
//! let host =
//!     lockstep_net::host(socket, Cubes::default_config(), setup, settings, invites, plan)
//!         .unwrap();
//! let mut seat = SeatRuntime::seat(host);
//! let tick = Duration::from_micros(16_667);
//! let start = Instant::now();
//! let mut ticks = 0;
//! while !seat.is_finished() {
//!     for event in seat.poll() {
//!         match event {
//!             MatchEvent::Peer(PeerEvent::Stepped { frame, .. }) => { let _ = frame; }
//!             MatchEvent::Ended(end) => println!("{end}"),
//!             other => println!("{other}"),
//!         }
//!     }
//!     // Read the keys into `seat.endpoint_mut()`, draw `seat.endpoint()`'s game...
//!     ticks += 1;
//!     std::thread::sleep((start + tick * ticks).saturating_duration_since(Instant::now()));
//! }
//! ```
//!
//! A joiner asks with [`join`] and plays the seat the roster gives with
//! [`SeatRuntime::joining`]. A program built around tokio awaits
//! [`Runtime::next_event`] instead (cancel-safe, so it may sit in a
//! `select!`): a joiner waits for the roster ([`Runtime::roster`]), then
//! plays it with [`Runtime::play`] (or watches with [`Runtime::spectate`]).
//! `crates/net/examples/skirmish/` is a whole game of its own, driven from
//! a plain 60 Hz loop. A match between homes behind NATs is found by its
//! code instead of an address: [`reach::register`] files a host's codes at
//! a rendezvous, [`reach::find`] gives a joiner the address to join, and
//! the socket's reach layer carries the match (punched direct paths, or the
//! relay).

pub mod conditioner;
pub mod entropy;
pub mod reach;
mod runtime;
mod seat;
pub mod service;
mod socket;

use std::io::Write;
use std::net::SocketAddr;
use std::time::Duration;

pub use lockstep_lobby::{
    Abort, Endpoint, HostEvent, Invite, Invites, JoinEvent, JoinFailure, JoinSetup, JoinTiming,
    Joining, LinkStatus, MatchCode, MatchEnd, MatchEvent, MatchSettings, Refusal, Roster,
    RosterProblem, SeatEndpoint, SeatLog, SeatPlan, SeatTiming, SpectateEndpoint, Unproven, Want,
};
pub use lockstep_peer::{
    DesyncPolicy, FallbackReason, PeerEvent, SnapshotSpectatorEvent, SpectatorEvent, StopReason,
};
pub use lockstep_protocol::{
    Cause, InputDelay, Invalidation, LeaveReason, Mode, ResyncFailure, Rollback, SeatEvent, SeatId,
    SeatSet,
};
pub use lockstep_sim::desync::{DesyncReport, Diagnosis};
pub use runtime::{LoopCost, Runtime};
pub use seat::SeatRuntime;
pub use socket::{Socket, Traffic, bind, canonical};

use lockstep_peer::{Bodies, SnapshotSettings, SnapshotSpectator, Spectator};
use lockstep_sim::{Game, Match};

use entropy::NoEntropy;

/// How often a [`MatchEvent::Status`] is raised by the helpers below.
pub const STATUS_EVERY: Duration = Duration::from_secs(1);

/// Hosts a match of `G` with `config` on `setup`, played as `settings`
/// say, at seat 0 with `plan`: seats and admits whom `invites` say (draw
/// codes with [`entropy::invites`]), then plays. The key pair and the
/// cookie secret are drawn from the operating system.
pub fn host<G: Game, W: Write>(
    socket: Socket,
    config: G::Config,
    setup: Match,
    settings: MatchSettings,
    invites: Invites,
    plan: SeatPlan<G, W>,
) -> Result<Runtime<SeatEndpoint<G, W>>, NoEntropy> {
    let now = socket.now();
    let endpoint = SeatEndpoint::host(
        now,
        config,
        setup,
        settings,
        invites,
        entropy::identity()?,
        entropy::secret()?,
        plan,
        SeatTiming::default(),
    );
    Ok(Runtime::new(socket, endpoint, STATUS_EVERY))
}

/// Asks the host at `host` for `want`, invited as `invite` says (the
/// code the host gave; [`Invite::Open`] for a host that takes anyone),
/// under a key pair and with randomness drawn from the operating system.
/// Wait for the roster ([`Runtime::roster`]), then [`Runtime::play`] or
/// [`Runtime::spectate`] it. A rejoin needs the seat's earlier key pair:
/// pass a [`JoinSetup::rejoin`] to [`Runtime::new`] instead.
pub fn join(
    socket: Socket,
    host: SocketAddr,
    want: Want,
    invite: Invite,
) -> Result<Runtime<Joining>, NoEntropy> {
    let now = socket.now();
    let setup = JoinSetup::new(
        now,
        host,
        want,
        invite,
        entropy::identity()?,
        entropy::secret()?,
        JoinTiming::default(),
    );
    Ok(Runtime::new(socket, Joining::new(setup), STATUS_EVERY))
}

/// A joiner's runtime whose roster cannot be played: the runtime (drive it
/// until it returns `None`, so the refusal reaches the host) and why.
pub type Unplayable = (Box<Runtime<Joining>>, Refusal);

impl Runtime<Joining> {
    /// Runs the setup until the roster arrives, handing every other event
    /// to `on_event`; `Err` with how it ended when it failed instead.
    pub async fn roster(
        &mut self,
        mut on_event: impl FnMut(&MatchEvent),
    ) -> Result<Box<Roster>, MatchEnd> {
        while let Some(event) = self.next_event().await {
            match event {
                MatchEvent::Join(JoinEvent::Roster(r)) => return Ok(r),
                MatchEvent::Ended(end) => return Err(end),
                other => on_event(&other),
            }
        }
        Err(MatchEnd::SetupFailed(JoinFailure::NoAnswer { micros: 0 }))
    }

    fn into_next<E2, F>(self, make: F) -> Result<Runtime<E2>, Unplayable>
    where
        E2: Endpoint,
        F: FnOnce(lockstep_protocol::Instant, Joining) -> Result<E2, (Box<Joining>, Refusal)>,
    {
        let every = Duration::from_micros(self.status_every_micros());
        let (socket, joining) = self.into_parts();
        match make(socket.now(), joining) {
            Ok(e) => Ok(Runtime::new(socket, e, every)),
            Err((joining, refusal)) => {
                Err((Box::new(Runtime::new(socket, *joining, every)), refusal))
            }
        }
    }

    /// Plays the seat the roster gives, as `G`, with `plan`.
    pub fn play<G: Game, W: Write>(
        self,
        plan: SeatPlan<G, W>,
        timing: SeatTiming,
    ) -> Result<Runtime<SeatEndpoint<G, W>>, Unplayable> {
        self.into_next(|now, j| SeatEndpoint::from_roster(now, j, plan, timing))
    }

    /// Watches the match the roster describes, as `G`: steps it and checks
    /// every checksum the seats settled on.
    pub fn spectate<G: Game>(
        self,
        token: u32,
    ) -> Result<Runtime<SpectateEndpoint<Spectator<G>>>, Unplayable> {
        self.into_next(|now, j| SpectateEndpoint::from_roster(now, j, token))
    }

    /// Watches the match by the relay's snapshots (with the relay's
    /// `snapshots` settings) instead of simulating it.
    pub fn spectate_snapshots<G: Game + Bodies>(
        self,
        token: u32,
        snapshots: SnapshotSettings,
    ) -> Result<Runtime<SpectateEndpoint<SnapshotSpectator<G>>>, Unplayable> {
        self.into_next(|now, j| SpectateEndpoint::snapshots_from_roster(now, j, token, snapshots))
    }
}

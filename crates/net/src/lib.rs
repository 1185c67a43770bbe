//! The UDP runtime of lockstep: plays a match between processes over real
//! sockets.
//!
//! It decides nothing. The match setup, the routing of addresses to seats
//! and spectators, membership and the end of the match are sans-IO state
//! machines of `lockstep-lobby` and `lockstep-peer` — the same ones the
//! testkit drives over its simulated network. This crate moves their
//! datagrams through a tokio UDP socket made with socket2 ([`Socket`]),
//! shapes what it sends with a seeded link conditioner ([`conditioner`],
//! since `tc netem` is not always available), reads the clock, draws the
//! process's randomness ([`entropy`]), and hands the app every typed event
//! ([`Runtime::next_event`]): each `PeerEvent` with its full payload (a
//! desync's whole report), the setup's events, a [`LinkStatus`] now and
//! then, and how the match ended ([`MatchEnd`]).
//!
//! Each process runs one current-thread tokio runtime. A host:
//!
//! ```no_run
//! use std::time::Duration;
//! use lockstep_games::Demo;
//! use lockstep_games::cubes::Cubes;
//! use lockstep_net::conditioner::LinkShape;
//! use lockstep_net::{MatchEvent, MatchSettings, SeatPlan, Socket, entropy};
//! use lockstep_sim::Match;
//!
//! let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
//! rt.block_on(async {
//!     let socket = Socket::open("0.0.0.0:7000".parse().unwrap(), LinkShape::PERFECT, 1).unwrap();
//!     let setup = Match { seats: 2, seed: 1, tick_rate: 60 };
//!     let settings = MatchSettings::new(&setup).frames(600);
//!     let mut plan = SeatPlan::<Cubes, Vec<u8>>::new(entropy::token().unwrap());
//!     plan.bot = Some(Box::new(|seat, m: &Match| Box::new(Cubes::bot(seat, m.seed))));
//!     plan.log = Some(Box::new(|| Ok(Vec::new())));
//!     let mut host = lockstep_net::host(socket, Cubes::default_config(), setup, settings, plan)
//!         .unwrap();
//!     while let Some(event) = host.next_event().await {
//!         match event {
//!             MatchEvent::Peer(e) => println!("{e:?}"),
//!             MatchEvent::Ended(end) => println!("{end}"),
//!             _ => {}
//!         }
//!     }
//! });
//! ```
//!
//! A joiner asks with [`join`], waits for the roster
//! ([`Runtime::roster`]), then plays it with [`Runtime::play`] (or watches
//! with [`Runtime::spectate`]). `crates/net/examples/skirmish/` is a whole
//! game of its own played this way. A match between homes behind NATs is
//! found by its code instead of an address: [`reach::register`] files a
//! host's codes at a rendezvous, [`reach::find`] gives a joiner the
//! address to join, and the socket's reach layer carries the match
//! (punched direct paths, or the relay).

pub mod conditioner;
pub mod entropy;
pub mod reach;
mod runtime;
pub mod service;
mod socket;

use std::io::Write;
use std::net::SocketAddr;
use std::time::Duration;

pub use lockstep_lobby::{
    Abort, Endpoint, HostEvent, JoinEvent, JoinFailure, JoinSetup, JoinTiming, Joining, LinkStatus,
    MatchEnd, MatchEvent, MatchSettings, Refusal, Roster, RosterProblem, SeatEndpoint, SeatLog,
    SeatPlan, SeatTiming, SpectateEndpoint, Want,
};
pub use lockstep_peer::{PeerEvent, SnapshotSpectatorEvent, SpectatorEvent, StopReason};
pub use lockstep_protocol::{InputDelay, Mode, Rollback};
pub use lockstep_sim::desync::{DesyncReport, Diagnosis};
pub use runtime::{LoopCost, Runtime};
pub use socket::{Socket, Traffic, bind, canonical};

use lockstep_peer::{Bodies, SnapshotSettings, SnapshotSpectator, Spectator};
use lockstep_sim::{Game, Match};

use entropy::NoEntropy;

/// How often a [`MatchEvent::Status`] is raised by the helpers below.
pub const STATUS_EVERY: Duration = Duration::from_secs(1);

/// Hosts a match of `G` with `config` on `setup`, played as `settings`
/// say, at seat 0 with `plan`: seats the joiners, then plays. The key pair
/// and the cookie secret are drawn from the operating system.
pub fn host<G: Game, W: Write>(
    socket: Socket,
    config: G::Config,
    setup: Match,
    settings: MatchSettings,
    plan: SeatPlan<G, W>,
) -> Result<Runtime<SeatEndpoint<G, W>>, NoEntropy> {
    let now = socket.now();
    let endpoint = SeatEndpoint::host(
        now,
        config,
        setup,
        settings,
        entropy::identity()?,
        entropy::secret()?,
        plan,
        SeatTiming::default(),
    );
    Ok(Runtime::new(socket, endpoint, STATUS_EVERY))
}

/// Asks the host at `host` for `want`, under a key pair drawn from the
/// operating system. Wait for the roster ([`Runtime::roster`]), then
/// [`Runtime::play`] or [`Runtime::spectate`] it. A rejoin needs the
/// seat's earlier key pair: pass a [`JoinSetup`] made with
/// [`JoinSetup::claiming`] to [`Runtime::new`] instead.
pub fn join(socket: Socket, host: SocketAddr, want: Want) -> Result<Runtime<Joining>, NoEntropy> {
    let now = socket.now();
    let setup = JoinSetup::new(now, host, want, entropy::identity()?, JoinTiming::default());
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

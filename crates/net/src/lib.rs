//! The UDP runtime of lockstep: plays a match between processes over real
//! sockets.
//!
//! It holds no protocol logic. A [`Peer`](lockstep_peer::Peer) or a
//! [`Spectator`](lockstep_peer::Spectator) decides everything; this crate
//! moves their datagrams through a tokio UDP socket made with socket2
//! ([`endpoint`]), shapes what it sends with a seeded link conditioner
//! ([`conditioner`], since `tc netem` is not always available), reads the
//! clock, and maps addresses to seats and spectators ([`driver`]). Before a
//! session exists, a host and its joiners agree on the match with a few
//! setup messages ([`lobby`]): the game, its settings and their hash, the
//! seed, every seat's address and public key. Every session packet after
//! that is sealed (authenticated and encrypted with keys each pair agrees
//! from those public keys) unless the host turns it off.
//!
//! Each process runs one current-thread tokio runtime:
//!
//! ```no_run
//! use lockstep_games::Demo;
//! use lockstep_games::cubes::Cubes;
//! use lockstep_net::conditioner::LinkShape;
//! use lockstep_net::driver::{self, Offer, Player, RunSettings};
//! use lockstep_net::endpoint::Endpoint;
//! use lockstep_sim::Match;
//!
//! let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
//! rt.block_on(async {
//!     let ep = Endpoint::open("0.0.0.0:7000".parse().unwrap(), LinkShape::PERFECT, 1).unwrap();
//!     let setup = Match { players: 2, seed: 1, tick_rate: 60 };
//!     let offer = Offer::<Cubes> { config: Cubes::default_config(), setup, frames: 600 };
//!     let player = Player {
//!         bot: Box::new(Cubes::bot(0, setup.seed)),
//!         log: Vec::new(),
//!         controls: None,
//!         prepare: None,
//!     };
//!     let settings = RunSettings::new(42).unwrap();
//!     let (summary, _log) = driver::host(ep, offer, player, settings, &mut |line| {
//!         println!("{line:?}")
//!     })
//!     .await
//!     .unwrap();
//!     println!("{summary:?}");
//! });
//! ```

pub mod conditioner;
pub mod driver;
pub mod endpoint;
pub mod lobby;

/// The session modes a host offers in its roster
/// ([`driver::RunSettings::mode`]).
pub use lockstep_protocol::{InputDelay, Mode, Rollback};

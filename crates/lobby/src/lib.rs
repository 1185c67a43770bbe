//! Sans-IO match setup for lockstep: how processes that know only each
//! other's addresses agree on a match and keep it — who sits where, under
//! which key, who may take a dropped seat back, who may watch — and which
//! address is which seat or spectator once it runs.
//!
//! Like the session and the `Peer`, nothing here owns a socket, reads a
//! clock or draws randomness: datagrams and time come in as arguments
//! (with the socket address they came from), datagrams and typed events
//! come out of poll methods. The UDP runtime (`lockstep-net`) drives these
//! state machines over real sockets; the testkit drives the same ones over
//! its simulated network, lossy lobby and all.
//!
//! The parts, one file each:
//! - `message.rs`: the setup messages ([`Message`]) and their encoding:
//!   `Join`, the host's `Challenge`, `Waiting`, typed [`Refusal`]s and
//!   [`Abort`]s;
//! - `roster.rs`: the [`Roster`] and a joiner's check of it;
//! - `cookie.rs`: [`CookieJar`], the stateless proof that an address can
//!   receive (nothing larger than a request goes to an unproven address);
//! - `invite.rs`: [`Invites`], who may sit and who may watch, and the
//!   proof of an invitation (SPAKE2 with a [`MatchCode`]) that a joiner
//!   and the host give each other;
//! - `source.rs` and `guesses.rs`: what a request is counted against (an
//!   address, an IPv6 /64) and how many invitations each source may try;
//! - `claim.rs`: a restarted process's proof that it holds its seat's key
//!   ([`SeatClaim`]);
//! - `settings.rs`: [`MatchSettings`], the host's choices every seat plays;
//! - `host_setup.rs`: [`HostSetup`], the host's side (seats, keys, rosters,
//!   rejoins, spectator admission, the match's one arbiter);
//! - `join_setup.rs`: [`JoinSetup`], a joiner's side;
//! - `router.rs`: [`Router`], addresses to seats and spectators;
//! - `endpoint.rs`: [`Endpoint`], what a runtime drives, and [`Joining`];
//! - `seat.rs`: [`SeatEndpoint`], a seat's process (setup, router, `Peer`);
//! - `seat_plan.rs`: what the app gives it ([`SeatPlan`]) and its waits
//!   ([`SeatTiming`]);
//! - `spectate.rs`: [`SpectateEndpoint`], a spectator's process;
//! - `event.rs`: [`MatchEvent`], [`LinkStatus`], [`MatchEnd`].
//!
//! # Example
//!
//! A host and a joiner of the cube demo set a match up and play it, their
//! datagrams passed by hand on virtual time.
//!
//! ```
//! use std::net::SocketAddr;
//! use lockstep_games::Demo;
//! use lockstep_games::cubes::Cubes;
//! use lockstep_lobby::{
//!     Endpoint, Invite, Invites, JoinEvent, JoinSetup, JoinTiming, Joining, MatchEnd, MatchEvent,
//!     MatchSettings, SeatEndpoint, SeatPlan, SeatTiming, Want,
//! };
//! use lockstep_protocol::Instant;
//! use lockstep_protocol::seal::Identity;
//! use lockstep_sim::Match;
//!
//! let host_addr: SocketAddr = "10.0.0.1:7000".parse().unwrap();
//! let join_addr: SocketAddr = "10.0.0.2:7000".parse().unwrap();
//! let setup = Match { seats: 2, seed: 7, tick_rate: 60 };
//! let settings = MatchSettings::new(&setup).frames(30);
//! let mut now = Instant::ZERO;
//! let mut plan = SeatPlan::<Cubes, Vec<u8>>::new(11);
//! plan.bot = Some(Box::new(|seat, m: &Match| Box::new(Cubes::bot(seat, m.seed))));
//! // The host draws its codes (here from fixed bytes) and hands the seat
//! // code to whoever it invites.
//! let invites = Invites::from_random([5; 16]);
//! let Invite::Code(seat_code) = invites.seat else { unreachable!() };
//! let mut host = SeatEndpoint::host(
//!     now, Cubes::default_config(), setup, settings, invites,
//!     Identity::from_secret([1; 32]), [2; 32], plan, SeatTiming::default(),
//! );
//! let ask = JoinSetup::new(
//!     now, host_addr, Want::Seat, Invite::Code(seat_code),
//!     Identity::from_secret([3; 32]), [4; 32], JoinTiming::default(),
//! );
//! let mut joining = Joining::new(ask);
//! // The joiner asks until it has its roster.
//! let mut roster = false;
//! while !roster {
//!     joining.handle_timeout(now);
//!     while let Some(d) = joining.poll_transmit(now) {
//!         host.handle_datagram(now, join_addr, &d.bytes);
//!     }
//!     while let Some(d) = host.poll_transmit(now) {
//!         joining.handle_datagram(now, host_addr, &d.bytes);
//!     }
//!     while let Some(e) = joining.poll_event() {
//!         roster |= matches!(e, MatchEvent::Join(JoinEvent::Roster(_)));
//!     }
//!     now = now.plus(10_000);
//! }
//! let mut plan = SeatPlan::<Cubes, Vec<u8>>::new(12);
//! plan.bot = Some(Box::new(|seat, m: &Match| Box::new(Cubes::bot(seat, m.seed))));
//! let mut joiner = SeatEndpoint::from_roster(now, joining, plan, SeatTiming::default())
//!     .map_err(|(_, why)| why)
//!     .unwrap();
//! // Both play to the end.
//! let mut ends = Vec::new();
//! while ends.len() < 2 {
//!     for (me, addr, other) in [(&mut host as &mut dyn Endpoint, host_addr, 1), (&mut joiner, join_addr, 0)] {
//!         me.handle_timeout(now);
//!         while let Some(e) = me.poll_event() {
//!             if let MatchEvent::Ended(end) = e {
//!                 ends.push(end);
//!             }
//!         }
//!         let _ = (addr, other);
//!     }
//!     while let Some(d) = host.poll_transmit(now) {
//!         joiner.handle_datagram(now, host_addr, &d.bytes);
//!     }
//!     while let Some(d) = joiner.poll_transmit(now) {
//!         host.handle_datagram(now, join_addr, &d.bytes);
//!     }
//!     now = now.plus(1_000);
//! }
//! assert!(ends.iter().all(|e| *e == MatchEnd::Finished { frames: 30 }));
//! ```
#![deny(clippy::float_arithmetic)]

mod claim;
pub mod cookie;
mod endpoint;
mod event;
mod guesses;
mod host_setup;
pub mod invite;
mod join_setup;
pub mod message;
mod refusal;
mod roster;
mod router;
mod seat;
mod seat_plan;
mod settings;
mod source;
mod spectate;
mod wire;

use std::net::SocketAddr;

pub use cookie::CookieJar;
pub use endpoint::{Endpoint, Joining};
pub use event::{LinkStatus, MatchEnd, MatchEvent};
pub use host_setup::{HostEvent, HostSetup, Offer, SetupStats, SetupTiming};
pub use invite::{Invite, Invites};
pub use join_setup::{JoinEvent, JoinFailure, JoinSetup, JoinTiming, Unproven};
/// The code that invites a person into a match (its home is the rendezvous
/// crate, which files matches under its public part).
pub use lockstep_rendezvous::{CodeError, CodeId, MatchCode};
pub use message::{Abort, Message, Refusal, RosterProblem, SeatClaim, Want};
pub use roster::Roster;
pub use router::{Route, Router};
pub use seat::SeatEndpoint;
pub use seat_plan::{BotMaker, LogOpener, Preparation, SeatLog, SeatPlan, SeatTiming};
pub use settings::MatchSettings;
pub use source::Source;
pub use spectate::{SpectateEndpoint, Spectating};

/// A datagram to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Datagram {
    /// Where to.
    pub to: SocketAddr,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

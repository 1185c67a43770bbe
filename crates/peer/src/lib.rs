//! The seam of lockstep: [`Peer`] plays a [`Game`](lockstep_sim::Game)
//! through the lockstep protocol.
//!
//! A peer owns a protocol [`Session`](lockstep_protocol::Session) and an
//! [`Engine`](lockstep_sim::Engine), and answers every session event itself:
//! it samples the local input (held by the app with [`Peer::set_input`], or
//! chosen by a [`Bot`](lockstep_sim::Bot)), steps each frame once every
//! player's input for it is there, reports the checksum, serves its exact
//! state to a drifted peer, and when it drifted itself, diagnoses the
//! desync, loads the authority's state and re-simulates the frames since.
//! No seat is the authority by its number: when no majority decides (two
//! seats, a tie), each disputed peer steps the disputed frames again and
//! the seat whose second run disagrees with its first is the one healed;
//! with no such evidence nobody is. It records the match to a replay log
//! as it plays; a frame is logged once the peers' checksums of it agree,
//! and a healed peer logs the authority's checksums of the frames it got
//! wrong, so every peer's log of a match verifies and holds the same
//! checksums. When a seat vanishes, the others
//! agree on its last frame and play on ([`SeatEvent::Dropped`]) if they
//! are a quorum of the match; a seat left in a minority stops instead
//! ([`PeerEvent::Stopped`] with [`StopReason::LostQuorum`]), its log ending
//! at the last frame a quorum settled, and a seat left alone plays on
//! unchecked only if the match allows it ([`Peer::unchecked_from`]). A
//! restarted process for a dropped seat (`rejoin` in the session settings)
//! takes it back ([`SeatEvent::Returned`]), loads the host's state and
//! steps on.
//!
//! When a desync cannot be healed (a resync that fails again and again, a
//! game that keeps drifting, seats that disagree with no evidence either
//! way) the match's [`DesyncPolicy`] decides. By default every seat stops
//! ([`PeerEvent::Stopped`] with [`StopReason::MatchInvalid`], the report
//! saying what differed). A match may instead play on unchecked
//! ([`Peer::unchecked_from`]), or fall back to snapshots: with
//! [`Peer::enable_snapshots`] (a game that exposes its bodies,
//! [`Bodies`]), the drifted peer asks the authority for a compressed snapshot stream,
//! reports the switch ([`PeerEvent::SwitchedToSnapshots`]), and the app
//! draws [`Peer::snapshot_view`] instead of [`Peer::game`]; it keeps
//! sending its inputs and stepping, retries resync now and then, and comes
//! back ([`PeerEvent::BackToLockstep`]) once a loaded state holds. A peer
//! configured as a viewer shows the snapshots from the start.
//!
//! Every peer is also a relay for spectators: a [`Spectator`] joins through
//! one seat (the app passes its datagrams to [`Peer::handle_spectator_datagram`]
//! and sends what [`Peer::poll_spectator_transmit`] gives), receives the state
//! of a frame every seat agreed on, then steps every frame the relay streams
//! and checks the checksums the seats settled on. It cannot send inputs. A
//! [`SnapshotSpectator`] watches by snapshots instead, without simulating.
//!
//! Like the session, a peer is sans-IO: the app (or the `net` runtime)
//! moves datagrams and time, in the same call order as the session's:
//!
//! 1. [`Peer::handle_datagram`] for each datagram received;
//! 2. [`Peer::handle_timeout`] once `now` reaches [`Peer::poll_timeout`];
//! 3. drain [`Peer::poll_event`] ([`PeerEvent`]: frames stepped, desyncs,
//!    heals with their live desync report, seats joining and leaving);
//! 4. drain [`Peer::poll_transmit`] and send each datagram;
//! 5. wait for the next datagram or timeout.
//!
//! # Example
//!
//! Two peers of the cube demo, played by bots, on a perfect network; each
//! records the match, and the two logs agree frame for frame.
//!
//! ```
//! use lockstep_games::Demo;
//! use lockstep_games::cubes::Cubes;
//! use lockstep_peer::{Peer, PeerEvent, PeerSettings};
//! use lockstep_protocol::{Instant, SeatId};
//! use lockstep_sim::Match;
//! use lockstep_sim::replay;
//!
//! let setup = Match { seats: 2, seed: 7, tick_rate: 60 };
//! let config = Cubes::default_config();
//! let mut peers: Vec<Peer<Cubes, Vec<u8>>> = (0..2u8)
//!     .map(|seat| {
//!         let settings = PeerSettings::new(&setup, SeatId(seat), 100 + u32::from(seat));
//!         let mut peer = Peer::new(&config, setup, settings, Vec::new()).unwrap();
//!         peer.set_bot(Box::new(Cubes::bot(seat, setup.seed)));
//!         peer
//!     })
//!     .collect();
//! let mut now = Instant::ZERO;
//! while peers.iter().any(|p| p.frame() < 60) {
//!     for i in 0..2 {
//!         if peers[i].poll_timeout().is_some_and(|t| t <= now) {
//!             peers[i].handle_timeout(now);
//!         }
//!         while let Some(event) = peers[i].poll_event() {
//!             if let PeerEvent::Desync { frame, .. } = event {
//!                 panic!("desync at frame {frame}");
//!             }
//!         }
//!         while let Some(t) = peers[i].poll_transmit(now) {
//!             peers[t.to.index()].handle_datagram(now, SeatId(i as u8), &t.bytes);
//!         }
//!     }
//!     now = now.plus(1_000); // 1 ms of virtual time
//! }
//! let logs: Vec<Vec<u8>> = peers.into_iter().map(|p| p.finish().unwrap().unwrap()).collect();
//! let a = replay::read::<<Cubes as lockstep_sim::Game>::Input>(&logs[0]).unwrap();
//! let b = replay::read::<<Cubes as lockstep_sim::Game>::Input>(&logs[1]).unwrap();
//! assert!(a.frames() >= 60);
//! assert_eq!(a.frames(), b.frames());
//! assert!((0..a.frames()).all(|f| a.check(f) == b.check(f)));
//! ```
//!
//! # Modules
//!
//! `peer.rs` ([`Peer`], its settings and counters), `event.rs`
//! ([`PeerEvent`]), `stop.rs` ([`StopReason`], [`DesyncPolicy`]),
//! `membership.rs` (stopping on a lost quorum, playing alone),
//! `history.rs` (unsettled frames, the states kept of them, and the replay
//! log), `diagnose.rs` (re-simulation: self-checks and the live desync
//! report), `integrity.rs` (disputes, the desync policy and the stop on a
//! match found invalid), `spectator.rs`
//! ([`Spectator`]); the snapshot side: `peer_snapshots.rs` (what
//! [`Peer::enable_snapshots`] wires), `snapshot_server.rs` (the streams a
//! peer serves, [`SnapshotSettings`]), `fallback.rs` (lockstep ↔
//! snapshots), `snapshot_view.rs` ([`SnapshotView`], the receiving end) and
//! `snapshot_spectator.rs` ([`SnapshotSpectator`]).
#![deny(clippy::float_arithmetic)]

mod diagnose;
mod error;
mod event;
mod fallback;
mod heals;
mod history;
mod integrity;
mod membership;
mod node;
mod peer;
mod peer_snapshots;
mod resync;
mod settings;
mod snapshot_server;
mod snapshot_spectator;
mod snapshot_view;
mod snapshots;
mod spectator;
mod stats;
mod stop;

pub use error::PeerError;
pub use event::{FallbackReason, PeerEvent};
pub use lockstep_protocol::Input;
pub use lockstep_protocol::{LeaveReason, SeatEvent};
pub use lockstep_snapshot::Bodies;
pub use lockstep_snapshot::interpolate::{Pose, ViewMode};
pub use node::{Node, Party};
pub use peer::Peer;
pub use peer_snapshots::SnapshotStats;
pub use settings::PeerSettings;
pub use snapshot_server::{Receiver, ServerStats, SnapshotSettings};
pub use snapshot_spectator::{SnapshotSpectator, SnapshotSpectatorEvent};
pub use snapshot_view::{SnapshotView, ViewStats};
pub use spectator::{Spectator, SpectatorEvent, SpectatorStats};
pub use stats::PeerStats;
pub use stop::{DesyncPolicy, StopReason};

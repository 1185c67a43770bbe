//! Sans-IO lockstep protocol: redundant delta-bit inputs with acks, an
//! adaptive playout buffer, checksum exchange and exact-state resync, clock
//! synchronization, and a rollback mode (prediction, rollback, an agreed
//! input delay), for 2 to 8 peers in a mesh.
//!
//! Nothing here owns a socket or reads a clock. A [`Session`] is a state
//! machine in the style of `quinn-proto`: datagrams and the current time go
//! in as arguments, datagrams and [`Event`]s come out of poll methods, and
//! the same calls give the same results on every run — which is what lets
//! a simulated network (the `lockstep-testkit` crate) play a minute of a
//! 2-second-latency, 25%-loss match in a fraction of a second of wall time.
//!
//! # Call order
//!
//! One [`Session`] per peer. The app maps its peers' addresses to seats
//! ([`SeatId`]) and repeats, whenever a datagram arrives or the timeout
//! passes:
//!
//! 1. [`Session::handle_datagram`]`(now, from, bytes)` for each datagram
//!    received;
//! 2. [`Session::handle_timeout`]`(now)` once `now >=`
//!    [`Session::poll_timeout`] (at each tick it releases due frames and
//!    asks for the next local input);
//! 3. drain [`Session::poll_event`], answering each event before taking the
//!    next:
//!    - [`Event::InputNeeded`] → [`Session::add_local_input`]`(frame, input)`;
//!    - [`Event::Frame`] → step the game, then
//!      [`Session::report_checksum`]`(frame, checksum)` before the next
//!      call into the session (in rollback mode a frame may be `predicted`);
//!    - [`Event::Rollback`] (rollback mode) → restore the state saved before
//!      `frame`; the [`Event::Frame`]s that follow step it and the later
//!      frames again;
//!    - [`Event::StateRequested`] → [`Session::provide_state`]`(now, frame,
//!      snapshot)`, where `frame` is the newest frame whose checksum was
//!      reported (the last frame stepped, which can be older than
//!      [`Session::last_released`] while frames are queued behind the
//!      event) and `snapshot` the state after it; answering later, after
//!      stepping more frames, works too (with the then-newest frame);
//!    - [`Event::LoadState`] → replace the game state (the re-simulated
//!      [`Event::Frame`]s, `resimulated: true`, follow);
//!    - [`Event::Disputed`] → step the disputed frames again from the
//!      newest state compared clean and [`Session::report_self_check`]
//!      whether they gave the same checksums;
//!    - [`Event::StateWanted`] → [`Session::provide_state_at`]`(now,
//!      frame, snapshot)`, the state after exactly that frame, if held;
//!    - [`Event::ResyncFailed`] → apply the match's policy: stop it or
//!      play on unchecked ([`Session::invalidate`]), or fall back to
//!      snapshots;
//!    - [`Event::LostQuorum`] → this seat's side of a split match is not
//!      a quorum: the session has closed (it steps and sends nothing more);
//!      keep only what [`Session::newest_clean`] settled, and take the
//!      seat back with a new session (`rejoin`) or end;
//!    - the rest ([`Event::Desync`], [`Event::Seat`],
//!      [`Event::Invalidated`], [`Event::PlayingAlone`], ...) are for the
//!      app to show or act on;
//! 4. drain [`Session::poll_transmit`]`(now)` and send each datagram;
//! 5. wait until [`Session::poll_timeout`] or the next datagram.
//!
//! The game's checksum must be BLAKE3 of exactly its snapshot bytes (what
//! `lockstep_fx::StateWriter` gives when the same fields feed the hasher and
//! the buffer): the resync verifies a transferred state against it.
//!
//! # Example
//!
//! Two peers on a perfect network, passing datagrams by hand:
//!
//! ```
//! use lockstep_protocol::{Config, Event, Instant, SeatId, Session};
//! use lockstep_protocol::input::Buttons;
//!
//! let mut peers: Vec<Session<Buttons>> = (0..2)
//!     .map(|i| Session::new(Config::new(2, SeatId(i)), 1000 + u32::from(i)).unwrap())
//!     .collect();
//! let mut frames = [0u32; 2];
//! let mut now = Instant::ZERO;
//! while frames.iter().any(|&f| f < 30) {
//!     for i in 0..2 {
//!         peers[i].handle_timeout(now);
//!         while let Some(event) = peers[i].poll_event() {
//!             match event {
//!                 Event::InputNeeded { frame } => {
//!                     peers[i].add_local_input(frame, Buttons(frame as u8 & 3)).unwrap()
//!                 }
//!                 Event::Frame { frame, .. } => frames[i] = frame,
//!                 _ => {}
//!             }
//!         }
//!         while let Some(t) = peers[i].poll_transmit(now) {
//!             peers[t.to.index()].handle_datagram(now, SeatId(i as u8), &t.bytes);
//!         }
//!     }
//!     now = now.plus(1_000);
//! }
//! assert!(peers[0].stats().dropped.total() == 0);
//! ```
//!
//! # Modules
//!
//! Public: [`bits`] and [`input`] (the bit packer and the `Input` trait,
//! from `lockstep-codec`), [`seq`] (wraparound-safe sequence numbers),
//! [`packet`] (the wire format, drawn in `protocol/SPEC.md`), [`seal`]
//! (authenticated encryption of every packet with per-pair keys),
//! [`clock_sync`] (peers' clock offsets from timestamped round trips),
//! [`session`] (the state machine), [`spectate`] (spectators: the relay a seat
//! runs for them and the spectator's side), [`snapshot_parts`] (snapshot
//! payloads cut into datagrams and put back together, for the snapshot
//! fall-back and spectators watching snapshots), [`pace`] (how long every
//! seat's tick lasts, slowed for a seat too slow for it), [`seat`] and
//! [`stats`].
//!
//! Inside the session, one file each: `send_window.rs` (the inputs sent redundantly until acked),
//! `playout.rs` and `delay.rs` (the playout buffer and its adaptive
//! delay), `clock.rs` (the frame clock and how its tick stretches),
//! `prediction.rs` (frames stepped ahead of the confirmed ones, rollback
//! mode), `input_delay.rs` (the input delay rollback wants),
//! `schedule.rs` (a value the host plans and every seat switches to at one
//! frame: the input delay, the pace), `checksum_book.rs`
//! (desync detection and the authority verdict), `state_transfer.rs` (state
//! transfers), `seat_drop.rs` (agreeing on a departed seat's last frame),
//! `quorum.rs` (which side of a split match plays on, which frames are
//! settled), `inbound.rs` (opening and decoding a datagram) and `time.rs`.
//! The `Peer` of `lockstep-peer` drives a session with a real game; tests
//! and experiments run them over the simulated network of
//! `lockstep-testkit`.
#![deny(clippy::float_arithmetic)]

pub use lockstep_codec::bits;
mod checksum_book;
mod clock;
pub mod clock_sync;
mod delay;
mod inbound;
mod input_delay;
pub use lockstep_codec::input;
pub use lockstep_codec::orders;
pub mod pace;
pub mod packet;
mod playout;
mod prediction;
mod quorum;
mod schedule;
pub mod seal;
pub mod seat;
mod seat_drop;
mod send_window;
pub mod seq;
pub mod session;
pub mod snapshot_parts;
pub mod spectate;
mod state_transfer;
pub mod stats;
mod time;

pub use bits::{BitError, BitMeasurer, BitReader, BitStream, BitWriter};
pub use checksum_book::SelfCheck;
pub use input::{Input, schema_hash};
pub use orders::{Command, Commanded, Orders};
pub use packet::{Cause, DecodeError, Packet};
pub use seat::{SeatId, SeatSet};
pub use session::{
    CallError, Config, ConfigError, Event, InputDelay, Invalidation, LeaveReason, MAX_TURN_FRAMES,
    Mode, ResyncFailure, Rollback, SeatEvent, Security, Session, TimeoutReason, Transmit,
};
pub use stats::Stats;
pub use time::Instant;

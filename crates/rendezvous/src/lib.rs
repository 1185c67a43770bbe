//! How players behind NATs find each other, sans-IO: the match code a
//! person reads aloud, the rendezvous that files a match under the code's
//! public part and introduces the processes that look it up, the relay
//! that forwards the sealed datagrams no direct path carries, and the
//! reach layer a member's process runs between its socket and its match.
//!
//! ```text
//!   host ──Register──► rendezvous ◄──Lookup── joiner        (codes' public parts only)
//!        ◄─Introduce──            ──Answer──►                (tickets, the match's key,
//!                                                             each other's addresses)
//!   host ◄════════ Probe / ProbeAck, both at once ════════► joiner    (hole punching)
//!   host ◄──────────── sealed session, direct ────────────► joiner    (direct wins)
//!   host ◄─Deliver/Send─► relay ◄─Send/Deliver─► joiner               (or relayed)
//! ```
//!
//! Like the rest of lockstep's decisions, nothing here owns a socket,
//! reads a clock or draws randomness: datagrams, time and random bytes
//! come in as arguments; datagrams and events come out of `poll_*`
//! methods. `lockstep-net` drives [`Reach`] inside a process's socket;
//! `lockstep rendezvous` and `lockstep relay` drive [`Rendezvous`] and
//! [`Relay`].
//!
//! The parts, one file each:
//! - `code.rs`: [`MatchCode`], the ten-symbol invitation, and its public
//!   part [`CodeId`], all a rendezvous ever sees of it;
//! - `wire.rs`: the frame every reach message shares (the kind byte, the
//!   version, addresses) and [`WireError`]; `message.rs`: the messages
//!   ([`Message`]) and their encoding;
//! - `ids.rs`: [`MatchId`], [`MemberId`], [`Role`], [`MatchKey`], [`Owner`];
//! - `ticket.rs`: [`Ticket`], a member's proof for the relay, minted and
//!   checked with a [`TicketKey`] the rendezvous and its relays share;
//! - `budget.rs`: token buckets ([`Budget`]) and the bounded table of
//!   request sources ([`Sources`]); `draw.rs`: random bytes from a seed;
//!   `traffic.rs`: bytes in and out per kind ([`Traffic`]);
//! - `store/`: where the rendezvous keeps its matches ([`Store`]): in
//!   memory ([`MemoryStore`]) or, with the `redis` feature, in Redis
//!   (`RedisStore`, shared by several rendezvous processes);
//! - `rendezvous.rs`: [`Rendezvous`]; `relay.rs`: [`Relay`];
//! - `reach/`: [`Reach`], a member's side (the rendezvous asked, the
//!   relay's place, punching, mapped addresses).
#![deny(clippy::float_arithmetic)]

mod budget;
pub mod code;
mod draw;
mod ids;
pub mod message;
pub mod reach;
mod relay;
mod rendezvous;
pub mod store;
mod ticket;
mod traffic;
pub mod wire;

use std::net::SocketAddr;

pub use budget::{Budget, Rate, Sources, source_of};
pub use code::{CodeError, CodeId, MatchCode};
pub use draw::Draw;
pub use ids::{MatchId, MatchKey, MemberId, Owner, Role};
pub use message::{Answer, Entry, Message, Probe, Refusal, Register, RelayRefusal};
pub use reach::{
    Inbound, Path, Reach, ReachEvent, ReachStats, ReachTiming, mapped, member_of, role_word,
};
pub use relay::{Relay, RelayConfig, RelayStats};
pub use rendezvous::{Rendezvous, RendezvousConfig, RendezvousStats};
#[cfg(feature = "redis")]
pub use store::RedisStore;
pub use store::{MatchRecord, MemoryStore, Store, StoreError};
pub use ticket::{NO_RELAY, TICKET_BYTES, Ticket, TicketError, TicketKey};
pub use traffic::{Count, Traffic};
pub use wire::{Kind, WireError, is_reach};

/// A datagram to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transmit {
    /// Where to.
    pub to: SocketAddr,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

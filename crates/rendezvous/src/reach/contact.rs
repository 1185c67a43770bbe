//! [`Contact`]: what a member knows of another member's direct paths — the
//! addresses it may be reached at (the ones the rendezvous listed and the
//! ones a probe came from), the one direct path proven (if any), whether
//! it is still alive, and the punching that looks for one.
//!
//! A direct path is proven by a round trip: a probe this member sent to a
//! candidate address came back answered (a `ProbeAck` tagged under the
//! match's key) from that address. Punching sends a probe to every
//! candidate every `probe_every`, for `punch_micros`; the other member does
//! the same at the same time (the rendezvous told both at once), so each
//! side's NAT has an outgoing entry for the other's address when the
//! other's probe arrives. A proven path is kept alive by the traffic on it
//! (a probe goes when nothing else was sent for `keepalive`, and is
//! answered); one that brings nothing for `dead` is given up, and punching
//! starts again.
//!
//! Invariants: at most [`MAX_KNOWN`] candidate addresses; a path is direct
//! only after a round trip on it; every wait is bounded.

use std::net::SocketAddr;

use crate::ids::{MemberId, Role};

/// Candidate addresses kept per contact.
pub const MAX_KNOWN: usize = 8;

/// How a contact is reached now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Path {
    /// Straight to this address.
    Direct(SocketAddr),
    /// Through the match's relay.
    Relayed,
}

/// A proven direct path and its liveness.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Direct {
    pub(crate) address: SocketAddr,
    /// When a datagram last came from it.
    pub(crate) heard: u64,
    /// When a datagram last went to it.
    pub(crate) sent: u64,
}

/// Punching in progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Punch {
    pub(crate) until: u64,
    pub(crate) next: u64,
}

/// Another member. See the module documentation.
#[derive(Debug, Clone)]
pub struct Contact {
    pub(crate) member: MemberId,
    pub(crate) role: Option<Role>,
    /// The newest change of its entry applied.
    pub(crate) seq: Option<u16>,
    /// Where it may be reached directly.
    pub(crate) candidates: Vec<SocketAddr>,
    /// Addresses a probe of it came from: datagrams from them are its.
    pub(crate) seen: Vec<SocketAddr>,
    pub(crate) direct: Option<Direct>,
    pub(crate) punch: Option<Punch>,
    /// When punching last gave up without a path (for the event).
    pub(crate) failed: bool,
}

impl Contact {
    pub(crate) fn new(member: MemberId, role: Option<Role>) -> Contact {
        Contact {
            member,
            role,
            seq: None,
            candidates: Vec::new(),
            seen: Vec::new(),
            direct: None,
            punch: None,
            failed: false,
        }
    }

    /// How it is reached now.
    pub fn path(&self) -> Path {
        match self.direct {
            Some(d) => Path::Direct(d.address),
            None => Path::Relayed,
        }
    }

    /// Its member number.
    pub fn member(&self) -> MemberId {
        self.member
    }

    /// Its role, once the rendezvous said.
    pub fn role(&self) -> Option<Role> {
        self.role
    }

    /// Adds `address` to the candidates (the oldest learned goes first when
    /// full); whether it was new.
    pub(crate) fn learn(&mut self, address: SocketAddr) -> bool {
        if self.candidates.contains(&address) {
            return false;
        }
        if self.candidates.len() >= MAX_KNOWN {
            self.candidates.remove(0);
        }
        self.candidates.push(address);
        true
    }

    /// Notes that a probe of this member came from `address`.
    pub(crate) fn saw(&mut self, address: SocketAddr) {
        if self.seen.contains(&address) {
            return;
        }
        if self.seen.len() >= MAX_KNOWN {
            self.seen.remove(0);
        }
        self.seen.push(address);
    }

    /// Starts (or extends) punching at `now` for `micros`.
    pub(crate) fn punch(&mut self, now: u64, micros: u64) {
        let until = now.saturating_add(micros);
        self.failed = false;
        match &mut self.punch {
            Some(p) => {
                p.until = p.until.max(until);
                p.next = now;
            }
            None => self.punch = Some(Punch { until, next: now }),
        }
    }

    /// Whether datagrams from `address` are this member's.
    pub(crate) fn owns(&self, address: SocketAddr) -> bool {
        self.direct.is_some_and(|d| d.address == address) || self.seen.contains(&address)
    }
}

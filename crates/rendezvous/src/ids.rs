//! The names a match and its members go by at the rendezvous and the
//! relay: [`MatchId`], [`MemberId`], [`Role`], and the two secrets the
//! rendezvous hands out, [`MatchKey`] (shared by a match's members) and
//! [`Owner`] (a host's proof that a registration is its own).
//!
//! None of these is the match code's secret, which never reaches the
//! rendezvous. They travel in clear between a member and the rendezvous:
//! they keep parties off the path out (a stranger cannot refresh a
//! registration, steer a member's probes or take its place at the relay),
//! while what proves a peer is the seal of the session and the key
//! exchange of the setup, end to end.

use core::fmt;

/// The rendezvous's name for a registered match (drawn at random when it is
/// first filed): the allocation a relay keeps its members under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MatchId(pub u64);

impl fmt::Display for MatchId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

/// A process in a match, as the rendezvous numbered it: the host is 0,
/// each process that looked the match up the next number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MemberId(pub u16);

impl MemberId {
    /// The host's.
    pub const HOST: MemberId = MemberId(0);
}

impl fmt::Display for MemberId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "member {}", self.0)
    }
}

/// What a member came for: the door its code opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Role {
    /// The process that registered the match.
    Host,
    /// A process that looked it up by its seat code: it talks to the host
    /// and to the other seats.
    Seat,
    /// A process that looked it up by its spectator code: it talks to the
    /// host alone.
    Spectator,
}

impl Role {
    pub(crate) fn to_wire(self) -> u8 {
        match self {
            Role::Host => 0,
            Role::Seat => 1,
            Role::Spectator => 2,
        }
    }

    pub(crate) fn from_wire(value: u8) -> Option<Role> {
        match value {
            0 => Some(Role::Host),
            1 => Some(Role::Seat),
            2 => Some(Role::Spectator),
            _ => None,
        }
    }

    /// Whether a member of role `self` tries paths to a member of role
    /// `other`: the host to everyone, seats to each other, spectators to
    /// the host alone.
    pub fn talks_to(self, other: Role) -> bool {
        matches!(
            (self, other),
            (Role::Host, _) | (_, Role::Host) | (Role::Seat, Role::Seat)
        )
    }
}

/// A secret the rendezvous draws for a match and gives each member: probes
/// between members carry a tag under it, so a party that never saw it
/// cannot answer a probe in a member's place.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct MatchKey(pub [u8; 16]);

impl fmt::Debug for MatchKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("MatchKey(..)")
    }
}

/// A host's registration secret, drawn by the host: a registration is
/// refreshed (and its codes kept) only by the process that presents the
/// same one.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Owner(pub [u8; 16]);

impl fmt::Debug for Owner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Owner(..)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spectators_talk_to_the_host_alone() {
        assert!(Role::Seat.talks_to(Role::Seat));
        assert!(Role::Seat.talks_to(Role::Host));
        assert!(Role::Host.talks_to(Role::Spectator));
        assert!(!Role::Spectator.talks_to(Role::Seat));
        assert!(!Role::Spectator.talks_to(Role::Spectator));
        for r in [Role::Host, Role::Seat, Role::Spectator] {
            assert_eq!(Role::from_wire(r.to_wire()), Some(r));
        }
        assert_eq!(Role::from_wire(3), None);
    }
}

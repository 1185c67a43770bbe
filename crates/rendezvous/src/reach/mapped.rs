//! Mapped addresses: how the process above the reach layer names the
//! other members of its match. Each member gets one stable address, made
//! up in a unique-local IPv6 prefix no real peer uses
//! (`fd6c:6b73:7470:6d00::/64`, "lkstpm", the member's number in the last
//! 16 bits, port 1). The match setup, the router and the session address
//! a member by it from start to end; the reach layer alone knows which
//! path it stands for now — a direct address, or the relay — and moves it
//! from one to the other without the session noticing (iroh's magic socket
//! maps its peers the same way).
//!
//! Invariants: [`mapped`] and [`member_of`] are inverses; no address a
//! socket reports is in the prefix (it is never routed: a datagram is sent
//! to it only by mistake, and then the operating system refuses it).

use std::net::{Ipv6Addr, SocketAddr, SocketAddrV6};

use crate::ids::MemberId;

/// The first 64 bits of every mapped address.
const PREFIX: [u16; 4] = [0xfd6c, 0x6b73, 0x7470, 0x6d00];
/// The port of every mapped address.
const PORT: u16 = 1;

/// The address member `member` goes by.
pub fn mapped(member: MemberId) -> SocketAddr {
    let [a, b, c, d] = PREFIX;
    SocketAddr::V6(SocketAddrV6::new(
        Ipv6Addr::new(a, b, c, d, 0, 0, 0, member.0),
        PORT,
        0,
        0,
    ))
}

/// The member `addr` names, if it is a mapped address.
pub fn member_of(addr: SocketAddr) -> Option<MemberId> {
    let SocketAddr::V6(v6) = addr else {
        return None;
    };
    let s = v6.ip().segments();
    (s[..4] == PREFIX && s[4..7] == [0, 0, 0] && v6.port() == PORT).then_some(MemberId(s[7]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mapped_addresses_name_their_member_and_nothing_else() {
        for m in [0, 1, 7, 65535] {
            assert_eq!(member_of(mapped(MemberId(m))), Some(MemberId(m)));
        }
        assert_eq!(member_of("10.0.0.1:1".parse().unwrap()), None);
        assert_eq!(
            member_of("[fd6c:6b73:7470:6d00::1]:2".parse().unwrap()),
            None
        );
        assert_eq!(
            member_of("[fd6c:6b73:7470:6d00:1::1]:1".parse().unwrap()),
            None
        );
        assert_eq!(
            mapped(MemberId(3)).to_string(),
            "[fd6c:6b73:7470:6d00::3]:1"
        );
    }
}

//! [`Source`]: what a request is counted against when the host limits
//! how much one sender may ask — an IPv4 address, or an IPv6 /64 prefix
//! (the block one subscriber is usually given, where every address is
//! free to take). Ports never count: they cost nothing to change.
//!
//! Invariant: an IPv4 address seen through a dual-stack socket (as an
//! IPv4-mapped IPv6 address) is the same source as the IPv4 address.

use std::net::{IpAddr, SocketAddr};

/// An IPv4 address or an IPv6 /64 prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Source {
    /// An IPv4 address.
    V4([u8; 4]),
    /// The first 64 bits of an IPv6 address.
    V6([u8; 8]),
}

impl Source {
    /// The source of a datagram from `addr`.
    pub fn of(addr: SocketAddr) -> Source {
        match addr.ip() {
            IpAddr::V4(a) => Source::V4(a.octets()),
            IpAddr::V6(a) => match a.to_ipv4_mapped() {
                Some(v4) => Source::V4(v4.octets()),
                None => {
                    let mut prefix = [0u8; 8];
                    prefix.copy_from_slice(&a.octets()[..8]);
                    Source::V6(prefix)
                }
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_and_the_low_half_of_an_ipv6_address_do_not_count() {
        let a = |s: &str| Source::of(s.parse().unwrap());
        assert_eq!(a("10.0.0.1:1"), a("10.0.0.1:2"));
        assert_ne!(a("10.0.0.1:1"), a("10.0.0.2:1"));
        assert_eq!(a("[::ffff:10.0.0.1]:9"), a("10.0.0.1:1"));
        assert_eq!(a("[2001:db8:1:2::1]:1"), a("[2001:db8:1:2:ffff::9]:7"));
        assert_ne!(a("[2001:db8:1:2::1]:1"), a("[2001:db8:1:3::1]:1"));
    }
}

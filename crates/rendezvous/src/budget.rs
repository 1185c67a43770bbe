//! [`Budget`]: a token bucket in integers, and [`Sources`], one budget per
//! source of requests in a table of bounded size. The rendezvous limits
//! each source's requests with them; the relay each member's packets and
//! bytes.
//!
//! A budget holds up to `burst` units and earns `rate` units a second;
//! it is kept in millionths of a unit so that a microsecond earns whole
//! numbers: no float, no division on the hot path.
//!
//! Invariants: a budget never holds more than its burst; a clock that goes
//! backwards earns nothing; a full [`Sources`] table first forgets the
//! sources whose budget is whole again (they carry no information), and
//! refuses a new source only when none is.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};

/// How fast a budget refills and how much it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    /// Units earned per second.
    pub per_second: u64,
    /// Units held at most.
    pub burst: u64,
}

/// A token bucket. See the module documentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// Millionths of a unit held.
    held: u64,
    /// When it was last topped up, in microseconds.
    at: u64,
}

impl Budget {
    /// A full budget at `now`.
    pub fn full(rate: Rate, now: u64) -> Budget {
        Budget {
            held: rate.burst.saturating_mul(1_000_000),
            at: now,
        }
    }

    fn top_up(&mut self, rate: Rate, now: u64) {
        let earned = now.saturating_sub(self.at).saturating_mul(rate.per_second);
        self.held = self
            .held
            .saturating_add(earned)
            .min(rate.burst.saturating_mul(1_000_000));
        self.at = self.at.max(now);
    }

    /// Spends `units` if the budget holds them at `now`.
    pub fn spend(&mut self, rate: Rate, now: u64, units: u64) -> bool {
        self.top_up(rate, now);
        let cost = units.saturating_mul(1_000_000);
        if cost > self.held {
            return false;
        }
        self.held -= cost;
        true
    }

    /// Whether it is whole again at `now` (nothing spent is still owed).
    pub fn is_full(&self, rate: Rate, now: u64) -> bool {
        let mut b = *self;
        b.top_up(rate, now);
        b.held >= rate.burst.saturating_mul(1_000_000)
    }
}

/// What a request is counted against: its IPv4 address, or its IPv6 /64
/// (one subscriber's prefix, so a host cannot dodge its budget by drawing
/// new addresses).
pub fn source_of(addr: SocketAddr) -> IpAddr {
    match addr.ip() {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.into(),
            None => {
                let mut o = v6.octets();
                o[8..].fill(0);
                IpAddr::from(o)
            }
        },
        v4 => v4,
    }
}

/// One budget per source, at most `capacity` sources. See the module
/// documentation.
#[derive(Debug, Clone)]
pub struct Sources {
    rate: Rate,
    capacity: usize,
    budgets: HashMap<IpAddr, Budget>,
}

impl Sources {
    /// A table of up to `capacity` sources, each with `rate`.
    pub fn new(rate: Rate, capacity: usize) -> Sources {
        Sources {
            rate,
            capacity,
            budgets: HashMap::new(),
        }
    }

    /// Spends one request of `from`'s source at `now`: `false` when its
    /// budget is spent, or it is new and the table is full of sources that
    /// still owe.
    pub fn allow(&mut self, now: u64, from: SocketAddr) -> bool {
        let source = source_of(from);
        if !self.budgets.contains_key(&source) && self.budgets.len() >= self.capacity {
            let rate = self.rate;
            self.budgets.retain(|_, b| !b.is_full(rate, now));
            if self.budgets.len() >= self.capacity {
                return false;
            }
        }
        let rate = self.rate;
        self.budgets
            .entry(source)
            .or_insert_with(|| Budget::full(rate, now))
            .spend(rate, now, 1)
    }

    /// Sources tracked now.
    pub fn len(&self) -> usize {
        self.budgets.len()
    }

    /// Whether no source is tracked.
    pub fn is_empty(&self) -> bool {
        self.budgets.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RATE: Rate = Rate {
        per_second: 2,
        burst: 4,
    };

    #[test]
    fn a_budget_spends_its_burst_then_its_rate() {
        let mut b = Budget::full(RATE, 0);
        for _ in 0..4 {
            assert!(b.spend(RATE, 0, 1));
        }
        assert!(!b.spend(RATE, 0, 1));
        assert!(!b.spend(RATE, 499_999, 1));
        assert!(b.spend(RATE, 500_000, 1));
        // A clock that goes back earns nothing.
        assert!(!b.spend(RATE, 0, 1));
        assert!(b.is_full(RATE, 10_000_000));
        assert!(!b.spend(RATE, 10_000_000, 5));
    }

    #[test]
    fn sources_are_bounded_and_forget_the_settled_first() {
        let mut s = Sources::new(RATE, 2);
        let a: SocketAddr = "10.0.0.1:1".parse().unwrap();
        let b: SocketAddr = "10.0.0.2:1".parse().unwrap();
        let c: SocketAddr = "10.0.0.3:1".parse().unwrap();
        assert!(s.allow(0, a));
        assert!(s.allow(0, b));
        // Both still owe: a third source waits.
        assert!(!s.allow(0, c));
        // Later both are whole again and forgotten for the newcomer.
        assert!(s.allow(5_000_000, c));
        assert_eq!(s.len(), 1);
    }

    #[test]
    fn one_ipv6_prefix_is_one_source() {
        let a: SocketAddr = "[2001:db8:1:2:aaaa::1]:5".parse().unwrap();
        let b: SocketAddr = "[2001:db8:1:2:bbbb::9]:6".parse().unwrap();
        assert_eq!(source_of(a), source_of(b));
        let mapped: SocketAddr = "[::ffff:10.0.0.1]:5".parse().unwrap();
        assert_eq!(source_of(mapped), "10.0.0.1".parse::<IpAddr>().unwrap());
    }
}

//! A small world on virtual time for the reach layer's tests: a public
//! network with a rendezvous and a relay, and homes each behind a NAT
//! that behaves as Linux's masquerade does — port-preserving and
//! endpoint-independent in its mapping (`Nat::Eim`), or a new port for
//! every destination (`Nat::Symmetric`, `masquerade random`), both
//! filtering by address and port (conntrack). Each home runs one
//! [`Reach`] and a little app that sends a numbered datagram to every
//! member it talks to every 16 ms, as a session would.

#![allow(dead_code)]

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use lockstep_rendezvous::{
    CodeId, Inbound, MemberId, MemoryStore, Owner, Reach, ReachEvent, ReachTiming, Relay,
    RelayConfig, Rendezvous, RendezvousConfig, Transmit, mapped, member_of,
};

/// Microseconds since the UNIX epoch at the world's start (tickets expire
/// by the wall clock).
pub const EPOCH: u64 = 1_800_000_000_000_000;
/// One-way latency of every hop.
pub const HOP: u64 = 10_000;
/// The app's send interval.
pub const TICK: u64 = 16_000;

pub fn rendezvous_addr() -> SocketAddr {
    "1.0.0.1:7700".parse().unwrap()
}

pub fn relay_addr() -> SocketAddr {
    "1.0.0.2:7701".parse().unwrap()
}

/// How a home's NAT maps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nat {
    /// One public port per inside address, its own port when free.
    Eim,
    /// One public port per inside address and destination.
    Symmetric,
}

#[derive(Debug)]
struct Router {
    kind: Nat,
    public: IpAddr,
    /// (inside address, destination if symmetric) → public port.
    out: HashMap<(SocketAddr, Option<SocketAddr>), u16>,
    /// public port → (inside address, destinations it sent to).
    inbound: HashMap<u16, (SocketAddr, Vec<SocketAddr>)>,
    next_port: u16,
    preserve: bool,
}

impl Router {
    fn translate_out(&mut self, from: SocketAddr, to: SocketAddr) -> SocketAddr {
        let key = match self.kind {
            Nat::Eim => (from, None),
            Nat::Symmetric => (from, Some(to)),
        };
        let port = match self.out.get(&key) {
            Some(p) => *p,
            None => {
                let port = if self.preserve
                    && self.kind == Nat::Eim
                    && !self.inbound.contains_key(&from.port())
                {
                    from.port()
                } else {
                    loop {
                        self.next_port = self.next_port.wrapping_add(7).max(20_000);
                        if !self.inbound.contains_key(&self.next_port) {
                            break self.next_port;
                        }
                    }
                };
                self.out.insert(key, port);
                self.inbound.insert(port, (from, Vec::new()));
                port
            }
        };
        let entry = self.inbound.get_mut(&port).expect("mapped");
        if !entry.1.contains(&to) {
            entry.1.push(to);
        }
        SocketAddr::new(self.public, port)
    }

    /// Address- and port-dependent filtering: only from where it sent.
    fn translate_in(&self, from: SocketAddr, port: u16) -> Option<SocketAddr> {
        let (inside, sent) = self.inbound.get(&port)?;
        sent.contains(&from).then_some(*inside)
    }

    /// Forgets every mapping; later ones take new ports.
    fn rebind(&mut self) {
        self.out.clear();
        self.inbound.clear();
        self.preserve = false;
        self.next_port = self.next_port.wrapping_add(1000);
    }
}

/// One process in a home: its reach layer and its app.
#[derive(Debug)]
pub struct Home {
    pub reach: Reach,
    pub inside: SocketAddr,
    router: usize,
    pub events: Vec<ReachEvent>,
    /// Datagrams the app received, by the address they came from.
    pub received: BTreeMap<SocketAddr, u32>,
    pub sending: bool,
    next_send: u64,
    count: u32,
}

/// A datagram on its way: when it arrives, its order of sending, from, to,
/// its bytes.
type InFlight = Reverse<(u64, u64, SocketAddr, SocketAddr, Vec<u8>)>;

#[derive(Debug)]
pub struct World {
    pub now: u64,
    pub rendezvous: Rendezvous<MemoryStore>,
    pub relay: Relay,
    pub relay_up: bool,
    pub rendezvous_up: bool,
    routers: Vec<Router>,
    pub homes: Vec<Home>,
    queue: BinaryHeap<InFlight>,
    seq: u64,
    pub timing: ReachTiming,
}

pub fn secret() -> [u8; 32] {
    [42; 32]
}

impl World {
    pub fn new() -> World {
        let config = RendezvousConfig {
            relay: Some(relay_addr()),
            ..RendezvousConfig::default()
        };
        World {
            now: 0,
            rendezvous: Rendezvous::new(config, &secret(), [1; 32], MemoryStore::new(1024)),
            relay: Relay::new(RelayConfig::new(relay_addr()), &secret(), [2; 32]),
            relay_up: true,
            rendezvous_up: true,
            routers: Vec::new(),
            homes: Vec::new(),
            queue: BinaryHeap::new(),
            seq: 0,
            timing: ReachTiming::default(),
        }
    }

    fn add_home(&mut self, nat: Nat, make: impl FnOnce(u64, Vec<SocketAddr>) -> Reach) -> usize {
        let n = self.routers.len();
        self.routers.push(Router {
            kind: nat,
            public: IpAddr::V4(Ipv4Addr::new(2, 0, 0, n as u8 + 1)),
            out: HashMap::new(),
            inbound: HashMap::new(),
            next_port: 30_000,
            preserve: true,
        });
        let inside = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(192, 168, n as u8 + 1, 2)), 5000);
        self.homes.push(Home {
            reach: make(self.now, vec![inside]),
            inside,
            router: n,
            events: Vec::new(),
            received: BTreeMap::new(),
            sending: true,
            next_send: self.now,
            count: 0,
        });
        self.homes.len() - 1
    }

    /// A host behind `nat` registering `codes`.
    pub fn host(&mut self, nat: Nat, codes: Vec<CodeId>) -> usize {
        let timing = self.timing;
        let owner = Owner([self.homes.len() as u8 + 1; 16]);
        self.add_home(nat, |now, locals| {
            Reach::host(now, rendezvous_addr(), locals, owner, codes, timing)
        })
    }

    /// A process behind `nat` looking up `code`.
    pub fn join(&mut self, nat: Nat, code: CodeId) -> usize {
        let timing = self.timing;
        self.add_home(nat, |now, locals| {
            Reach::join(now, rendezvous_addr(), locals, code, timing)
        })
    }

    /// The NAT of home `h` forgets its mappings and uses new ports.
    pub fn rebind(&mut self, h: usize) {
        let r = self.homes[h].router;
        self.routers[r].rebind();
    }

    /// The relay forgets everything (a restart), down for `micros`.
    pub fn restart_relay(&mut self) {
        self.relay = Relay::new(RelayConfig::new(relay_addr()), &secret(), [3; 32]);
    }

    fn put(&mut self, at: u64, from: SocketAddr, t: Transmit) {
        self.seq += 1;
        self.queue
            .push(Reverse((at, self.seq, from, t.to, t.bytes)));
    }

    /// Sends from home `h`'s socket.
    fn send_from_home(&mut self, h: usize, t: Transmit) {
        let inside = self.homes[h].inside;
        let r = self.homes[h].router;
        let public = self.routers[r].translate_out(inside, t.to);
        let at = self.now + HOP;
        self.put(at, public, t);
    }

    fn deliver(&mut self, from: SocketAddr, to: SocketAddr, bytes: Vec<u8>) {
        let now = self.now;
        if to == rendezvous_addr() {
            if self.rendezvous_up {
                self.rendezvous.handle_datagram(EPOCH + now, from, &bytes);
            }
            return;
        }
        if to == relay_addr() {
            if self.relay_up {
                self.relay.handle_datagram(EPOCH + now, from, &bytes);
            }
            return;
        }
        let Some(r) = self.routers.iter().position(|r| r.public == to.ip()) else {
            return;
        };
        let Some(inside) = self.routers[r].translate_in(from, to.port()) else {
            return;
        };
        let Some(h) = self.homes.iter().position(|h| h.inside == inside) else {
            return;
        };
        let home = &mut self.homes[h];
        if let Inbound::Pass { from, bytes } = home.reach.handle_datagram(now, from, &bytes) {
            if bytes.starts_with(b"app") {
                *home.received.entry(from).or_default() += 1;
            }
        }
    }

    fn next_time(&self) -> u64 {
        let mut next = u64::MAX;
        if let Some(Reverse((at, ..))) = self.queue.peek() {
            next = next.min(*at);
        }
        for h in &self.homes {
            if let Some(t) = h.reach.poll_timeout() {
                next = next.min(t);
            }
            if h.sending && h.reach.me().is_some() {
                next = next.min(h.next_send);
            }
        }
        if let Some(t) = self.rendezvous.poll_timeout() {
            next = next.min(t.saturating_sub(EPOCH));
        }
        if let Some(t) = self.relay.poll_timeout() {
            next = next.min(t.saturating_sub(EPOCH));
        }
        next.max(self.now)
    }

    /// Runs the world until `until` (microseconds of virtual time).
    pub fn run_until(&mut self, until: u64) {
        loop {
            let next = self.next_time();
            if next > until {
                self.now = until;
                return;
            }
            self.now = next;
            while let Some(Reverse((at, ..))) = self.queue.peek() {
                if *at > self.now {
                    break;
                }
                let Reverse((_, _, from, to, bytes)) = self.queue.pop().expect("peeked");
                self.deliver(from, to, bytes);
            }
            let now = self.now;
            self.rendezvous.handle_timeout(EPOCH + now);
            self.relay.handle_timeout(EPOCH + now);
            for h in 0..self.homes.len() {
                let home = &mut self.homes[h];
                if home.reach.poll_timeout().is_some_and(|t| t <= now) {
                    home.reach.handle_timeout(now);
                }
                let mut out = Vec::new();
                if home.sending && home.reach.me().is_some() && home.next_send <= now {
                    home.next_send = now + TICK;
                    home.count += 1;
                    let me = home.reach.me().expect("member").0;
                    let targets: Vec<MemberId> = home
                        .reach
                        .contacts()
                        .map(|c| c.member())
                        .filter(|m| *m != me)
                        .collect();
                    for m in targets {
                        let bytes = format!("app {}", home.count).into_bytes();
                        if let Some(t) = home.reach.send(now, mapped(m), bytes) {
                            out.push(t);
                        }
                    }
                }
                while let Some(e) = home.reach.poll_event() {
                    home.events.push(e);
                }
                while let Some(t) = home.reach.poll_transmit() {
                    out.push(t);
                }
                for t in out {
                    self.send_from_home(h, t);
                }
            }
            while let Some(t) = self.rendezvous.poll_transmit() {
                self.put(now + HOP, rendezvous_addr(), t);
            }
            while let Some(t) = self.relay.poll_transmit() {
                self.put(now + HOP, relay_addr(), t);
            }
        }
    }

    /// Datagrams home `h`'s app received from member `m`.
    pub fn received(&self, h: usize, m: MemberId) -> u32 {
        self.homes[h].received.get(&mapped(m)).copied().unwrap_or(0)
    }

    /// Home `h`'s member number.
    pub fn member(&self, h: usize) -> MemberId {
        self.homes[h].reach.me().expect("a member").0
    }

    /// Datagrams from anything but a mapped address (should be none).
    pub fn unmapped(&self, h: usize) -> u32 {
        self.homes[h]
            .received
            .iter()
            .filter(|(a, _)| member_of(**a).is_none())
            .map(|(_, n)| *n)
            .sum()
    }
}

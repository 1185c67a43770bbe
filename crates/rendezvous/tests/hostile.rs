//! The rendezvous and the relay under a spray of hostile datagrams: random
//! bytes, reach messages with random fields, well-formed requests from a
//! crowd of (forged) sources. Neither panics, their state stays within its
//! bounds, and no datagram is answered with more bytes than it carried —
//! the anti-amplification ratio, measured for every kind of request and
//! printed (`cargo test -p lockstep-rendezvous --test hostile --
//! --nocapture`).

use std::net::SocketAddr;

use lockstep_rendezvous::message::{COOKIE_BYTES, Lookup};
use lockstep_rendezvous::{
    CodeId, Kind, MatchId, MemberId, MemoryStore, Message, Owner, Register, Relay, RelayConfig,
    Rendezvous, RendezvousConfig, TicketKey, Traffic,
};

const T0: u64 = 1_800_000_000_000_000;

/// SplitMix64: the spray's seeded randomness.
struct Seeded(u64);

impl Seeded {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }

    fn source(&mut self) -> SocketAddr {
        // A crowd: a few thousand addresses, some IPv6.
        let n = self.below(6000);
        if n % 5 == 0 {
            SocketAddr::new(
                format!("2001:db8:{:x}::{:x}", n % 300, n).parse().unwrap(),
                (n % 60000) as u16 + 1,
            )
        } else {
            SocketAddr::from(([10, (n >> 8) as u8, n as u8, 1], (n % 60000) as u16 + 1))
        }
    }
}

fn relay_addr() -> SocketAddr {
    "1.0.0.2:7701".parse().unwrap()
}

/// A random datagram: garbage, a reach message with a random body, or a
/// well-formed message with random fields.
fn hostile(rng: &mut Seeded, tickets: &TicketKey) -> Vec<u8> {
    match rng.below(6) {
        0 => {
            let n = rng.below(1300) as usize;
            rng.bytes(n)
        }
        1 => {
            let kind = Kind::ALL[rng.below(Kind::ALL.len() as u64) as usize];
            // Version 1, or any other.
            let version = if rng.below(2) == 0 {
                1
            } else {
                rng.next() as u8
            };
            let mut b = vec![kind.byte(), version];
            let n = rng.below(600) as usize;
            b.extend(rng.bytes(n));
            b
        }
        2 => Message::Register(Register {
            owner: Owner([rng.below(4) as u8; 16]),
            codes: vec![CodeId::new(rng.below(64) as u32).unwrap()],
            locals: vec![],
            after: rng.next() as u16,
        })
        .encode(),
        3 => Message::Lookup(Lookup {
            code: CodeId::new(rng.below(64) as u32).unwrap(),
            locals: vec![],
        })
        .encode(),
        4 => {
            let t = tickets.mint(
                MatchId(rng.below(50)),
                MemberId(rng.below(40) as u16),
                relay_addr(),
                T0 / 1_000_000 + rng.below(120),
            );
            match rng.below(3) {
                0 => Message::Poll {
                    ticket: t,
                    after: 0,
                }
                .encode(),
                _ => Message::Allocate {
                    ticket: t,
                    cookie: (rng.below(2) == 0).then(|| {
                        let mut c = [0u8; COOKIE_BYTES];
                        c.copy_from_slice(&rng.bytes(COOKIE_BYTES));
                        c
                    }),
                }
                .encode(),
            }
        }
        _ => {
            let n = rng.below(1300) as usize;
            let payload = rng.bytes(n);
            Message::Send {
                to: MemberId(rng.below(40) as u16),
                payload: &payload,
            }
            .encode()
        }
    }
}

fn print_ratios(name: &str, traffic: &Traffic, kinds: &[Kind]) {
    println!("{name}: bytes answered per byte received, by request");
    println!("| request | received | bytes in | bytes answered | ratio | with sent to others |");
    println!("|---|---|---|---|---|---|");
    for k in kinds {
        let r = traffic.received[*k as usize];
        let a = traffic.answered[*k as usize];
        let c = traffic.caused[*k as usize];
        println!(
            "| {k:?} | {} | {} | {} | {}.{:03} | {} B |",
            r.datagrams,
            r.bytes,
            a.bytes,
            traffic.answer_ratio_permille(*k).unwrap_or(0) / 1000,
            traffic.answer_ratio_permille(*k).unwrap_or(0) % 1000,
            c.bytes
        );
    }
}

#[test]
fn the_rendezvous_survives_a_spray_and_never_amplifies() {
    let config = RendezvousConfig {
        relay: Some(relay_addr()),
        sources: 2_000,
        ..RendezvousConfig::default()
    };
    let mut r = Rendezvous::new(config, &[1; 32], [2; 32], MemoryStore::new(32));
    let tickets = TicketKey::new(&[1; 32]);
    let mut rng = Seeded(7);
    let mut now = T0;
    for _ in 0..50_000 {
        now += rng.below(2_000);
        let from = rng.source();
        let bytes = hostile(&mut rng, &tickets);
        r.handle_datagram(now, from, &bytes);
        if r.poll_timeout().is_some_and(|t| t <= now) {
            r.handle_timeout(now);
        }
        let mut back = 0;
        while let Some(t) = r.poll_transmit() {
            if t.to == from {
                back += t.bytes.len();
            }
        }
        assert!(
            back <= bytes.len(),
            "{back} bytes answered {} from {from}",
            bytes.len()
        );
        assert!(r.store().len() <= 32);
    }
    let t = &r.stats().traffic;
    print_ratios("rendezvous", t, &[Kind::Register, Kind::Lookup, Kind::Poll]);
    for k in [Kind::Register, Kind::Lookup, Kind::Poll] {
        assert!(t.received[k as usize].datagrams > 1000, "{k:?} was sprayed");
        assert!(t.answer_ratio_permille(k).unwrap() <= 1000, "{k:?}");
    }
    assert!(r.stats().registered > 0 && r.stats().enrolled > 0);
}

#[test]
fn the_relay_survives_a_spray_and_never_amplifies() {
    let mut config = RelayConfig::new(relay_addr());
    config.max_allocations = 20;
    config.max_members = 8;
    let mut r = Relay::new(config, &[1; 32], [2; 32]);
    let tickets = TicketKey::new(&[1; 32]);
    let mut rng = Seeded(9);
    let mut now = T0;
    // Some sources answer their challenges, so places exist to send from.
    let mut cookies: Vec<(SocketAddr, Vec<u8>)> = Vec::new();
    for i in 0..50_000u32 {
        now += rng.below(2_000);
        let (from, bytes) = match cookies.pop() {
            Some(c) if i % 3 == 0 => c,
            _ => (rng.source(), hostile(&mut rng, &tickets)),
        };
        r.handle_datagram(now, from, &bytes);
        if r.poll_timeout().is_some_and(|t| t <= now) {
            r.handle_timeout(now);
        }
        let mut back = 0;
        while let Some(t) = r.poll_transmit() {
            if t.to == from {
                back += t.bytes.len();
            }
            if let (Ok(Message::RelayChallenge { cookie }), Ok(Message::Allocate { ticket, .. })) =
                (Message::decode(&t.bytes), Message::decode(&bytes))
            {
                let again = Message::Allocate {
                    ticket,
                    cookie: Some(cookie),
                };
                cookies.push((from, again.encode()));
            }
        }
        assert!(
            back <= bytes.len(),
            "{back} bytes answered {} from {from}",
            bytes.len()
        );
        assert!(r.allocations() <= 20 && r.places() <= 20 * 8);
    }
    let kinds = [Kind::Allocate, Kind::Send];
    print_ratios("relay", &r.stats().traffic, &kinds);
    for k in kinds {
        assert!(
            r.stats().traffic.answer_ratio_permille(k).unwrap() <= 1000,
            "{k:?}"
        );
    }
    assert!(r.stats().placed > 0, "{:?}", r.stats());
    assert!(r.stats().forwarded.datagrams > 0, "{:?}", r.stats());
}

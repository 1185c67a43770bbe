//! A rendezvous, a relay and a member's reach layer fed arbitrary
//! datagrams (the input cut into datagrams by a length byte each, each
//! from one of a few addresses, some of them the rendezvous's and the
//! relay's). Nothing may panic, and no datagram is answered to its sender
//! with more bytes than it carried.
#![no_main]

use std::net::SocketAddr;

use libfuzzer_sys::fuzz_target;
use lockstep_rendezvous::{
    CodeId, MemoryStore, Reach, ReachTiming, Relay, RelayConfig, Rendezvous, RendezvousConfig,
};

fuzz_target!(|data: &[u8]| {
    let rendezvous_addr: SocketAddr = "1.0.0.1:7700".parse().unwrap();
    let relay_addr: SocketAddr = "1.0.0.2:7701".parse().unwrap();
    let config = RendezvousConfig {
        relay: Some(relay_addr),
        ..RendezvousConfig::default()
    };
    let mut rendezvous = Rendezvous::new(config, &[1; 32], [2; 32], MemoryStore::new(8));
    let mut relay = Relay::new(RelayConfig::new(relay_addr), &[1; 32], [3; 32]);
    let mut reach = Reach::join(
        0,
        rendezvous_addr,
        vec![],
        CodeId::new(5).unwrap(),
        ReachTiming::default(),
    );
    let sources = [
        rendezvous_addr,
        relay_addr,
        SocketAddr::from(([10, 0, 0, 1], 1)),
        SocketAddr::from(([10, 0, 0, 2], 2)),
    ];
    let mut rest = data;
    let mut now = 1_800_000_000_000_000u64;
    while let Some((&head, tail)) = rest.split_first() {
        let n = usize::from(head).min(tail.len()) * 5;
        let n = n.min(tail.len());
        let (datagram, after) = tail.split_at(n);
        rest = after;
        let from = sources[usize::from(head) % sources.len()];
        now += 10_000;
        for (node, answered) in [
            (0, {
                rendezvous.handle_datagram(now, from, datagram);
                rendezvous.handle_timeout(now);
                std::iter::from_fn(|| rendezvous.poll_transmit())
                    .filter(|t| t.to == from)
                    .map(|t| t.bytes.len())
                    .sum::<usize>()
            }),
            (1, {
                relay.handle_datagram(now, from, datagram);
                relay.handle_timeout(now);
                std::iter::from_fn(|| relay.poll_transmit())
                    .filter(|t| t.to == from)
                    .map(|t| t.bytes.len())
                    .sum::<usize>()
            }),
        ] {
            assert!(answered <= datagram.len(), "node {node} amplified");
        }
        let _ = reach.handle_datagram(now, from, datagram);
        reach.handle_timeout(now);
        while reach.poll_transmit().is_some() {}
        while reach.poll_event().is_some() {}
    }
});

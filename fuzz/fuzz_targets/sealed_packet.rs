//! Sealed sessions, relays and spectators fed arbitrary bytes: as they
//! arrive (a forger without the keys: every datagram must be refused and
//! counted, nothing may panic), and sealed under the genuine pair key with a
//! packet number taken from the input (the decoders behind the seal, reached
//! by bytes that authenticate).
#![no_main]

use libfuzzer_sys::fuzz_target;
use lockstep_protocol::input::Buttons;
use lockstep_protocol::seal::{Identity, Link, PairKeys, PublicKey};
use lockstep_protocol::watch::{Relay, WatchConfig, Watcher, WatcherId};
use lockstep_protocol::{Config, Instant, PlayerId, Security, Session};

fn ids() -> Vec<Identity> {
    (0..3u8).map(|s| Identity::from_secret([0x51 + s; 32])).collect()
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let ids = ids();
    let keys: Vec<PublicKey> = ids.iter().map(Identity::public).collect();
    let mut cfg = Config::new(3, PlayerId(0));
    cfg.security = Security::Sealed {
        identity: ids[0].clone(),
        seats: keys.clone(),
    };
    let mut s = Session::<Buttons>::new(cfg, 0x1234_5678).unwrap();
    let watch = WatchConfig::new(3, 16_667);
    let mut relay = Relay::<Buttons>::new(watch.clone(), PlayerId(0), 7).sealed(ids[0].clone());
    relay.admit(WatcherId(1), keys[2]).unwrap();
    relay.push_frame(0, &[Buttons(1), Buttons(2), Buttons(3)]);
    let mut watcher = Watcher::<Buttons>::new(watch, 0x5eed, Instant(0))
        .sealed(&ids[2], keys[0])
        .unwrap();
    let bytes = if mode & 1 == 0 {
        // A forger's bytes: never taken.
        rest.to_vec()
    } else {
        // Sealed by seat 1 for seat 0 (and by the spectator for the relay,
        // by the relay for the spectator) as packet number `seq`.
        let Some((seq, plain)) = rest.split_first_chunk::<2>() else {
            return;
        };
        let seq = u64::from(u16::from_le_bytes(*seq));
        let mut sealed = plain.to_vec();
        let link = Link::new(PairKeys::agree(&ids[1], &keys[0]).unwrap(), 0);
        if link.seal(seq, &mut sealed).is_err() {
            return;
        }
        sealed
    };
    let before = s.stats().dropped.total();
    let taken = s.handle_datagram(Instant(1), PlayerId(1), &bytes);
    if mode & 1 == 0 {
        assert!(!taken && s.stats().dropped.total() == before + 1);
    } else {
        assert!(taken || s.stats().dropped.total() == before + 1);
    }
    while s.poll_event().is_some() {}
    while s.poll_transmit(Instant(10)).is_some() {}
    relay.handle_datagram(Instant(1), WatcherId(1), &bytes);
    while relay.poll_event().is_some() {}
    while relay.poll_transmit(Instant(20_000)).is_some() {}
    watcher.handle_datagram(Instant(1), &bytes);
    while watcher.poll_event().is_some() {}
    while watcher.poll_transmit(Instant(20_000)).is_some() {}
});

//! Sealed sessions, relays and spectators fed arbitrary bytes: as they
//! arrive (a forger without the keys: every datagram must be refused and
//! counted, nothing may panic), and sealed under the genuine pair key with a
//! packet number taken from the input (the decoders behind the seal, reached
//! by bytes that authenticate). The first byte picks the receiver and the
//! mode; one key agreement per run keeps the runs fast.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use lockstep_protocol::input::Buttons;
use lockstep_protocol::seal::{Identity, Link, PairKeys, PublicKey};
use lockstep_protocol::spectate::{Relay, SpectateConfig, SpectatorId, SpectatorSession};
use lockstep_protocol::{Config, Instant, SeatId, Security, Session};

/// Seat 0 (the receiver, and the relay), seat 1 (the genuine sender) and a
/// spectator.
fn ids() -> &'static [Identity; 3] {
    static IDS: OnceLock<[Identity; 3]> = OnceLock::new();
    IDS.get_or_init(|| [0x51, 0x52, 0x53].map(|b| Identity::from_secret([b; 32])))
}

/// The genuine senders' links to the receiver: seat 1 → seat 0, the
/// spectator → the relay, the relay → the spectator.
fn senders() -> &'static [Link; 3] {
    static LINKS: OnceLock<[Link; 3]> = OnceLock::new();
    LINKS.get_or_init(|| {
        let [a, b, w] = ids();
        let link = |from: &Identity, to: &Identity| {
            Link::new(PairKeys::agree(from, &to.public()).unwrap(), 0)
        };
        [link(b, a), link(w, a), link(a, w)]
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let [a, b, w] = ids();
    let receiver = usize::from(mode >> 1) % 3;
    let bytes = if mode & 1 == 0 {
        // A forger's bytes.
        rest.to_vec()
    } else {
        let Some((seq, plain)) = rest.split_first_chunk::<2>() else {
            return;
        };
        let mut sealed = plain.to_vec();
        let seq = u64::from(u16::from_le_bytes(*seq));
        if senders()[receiver].seal(seq, &mut sealed).is_err() {
            return;
        }
        sealed
    };
    let spectate = SpectateConfig::new(2, 16_667);
    match receiver {
        0 => {
            let keys: Vec<PublicKey> = vec![a.public(), b.public()];
            let mut cfg = Config::new(2, SeatId(0));
            cfg.security = Security::Sealed {
                identity: a.clone(),
                seats: keys,
            };
            let mut s = Session::<Buttons>::new(cfg, 0x1234_5678).unwrap();
            let before = s.stats().dropped.total();
            let taken = s.handle_datagram(Instant(1), SeatId(1), &bytes);
            let dropped = s.stats().dropped.total() > before;
            if mode & 1 == 0 {
                assert!(!taken && dropped, "forged bytes were taken");
            } else {
                assert!(taken || dropped);
            }
            while s.poll_event().is_some() {}
            while s.poll_transmit(Instant(10)).is_some() {}
        }
        1 => {
            let mut relay = Relay::<Buttons>::new(spectate, SeatId(0), 7).sealed(a.clone());
            relay.admit(SpectatorId(1), w.public()).unwrap();
            relay.push_frame(0, &[Buttons(1), Buttons(2)]);
            relay.handle_datagram(Instant(1), SpectatorId(1), &bytes);
            if mode & 1 == 0 {
                assert_eq!(relay.spectators(), 0, "forged bytes opened a slot");
            }
            while relay.poll_event().is_some() {}
            while relay.poll_transmit(Instant(20_000)).is_some() {}
        }
        _ => {
            let mut spectator = SpectatorSession::<Buttons>::new(spectate, 0x5eed, Instant(0))
                .sealed(w, a.public())
                .unwrap();
            spectator.handle_datagram(Instant(1), &bytes);
            if mode & 1 == 0 {
                assert_eq!(
                    spectator.stats().dropped.total(),
                    1,
                    "forged bytes were taken"
                );
            }
            while spectator.poll_event().is_some() {}
            while spectator.poll_transmit(Instant(20_000)).is_some() {}
        }
    }
});

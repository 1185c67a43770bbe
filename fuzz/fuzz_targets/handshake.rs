//! The handshake's decoders on arbitrary bytes: the match-setup messages
//! a host and its joiners exchange (`lockstep_net::lobby`, which carry the
//! public keys), and sealed sessions that have not started yet taking the
//! bytes as a Hello. Nothing may panic; a setup message that decodes
//! encodes back to one that decodes to the same; a session takes nothing
//! that does not open under the claimed seat's key.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lockstep_net::lobby::Lobby;
use lockstep_protocol::input::Buttons;
use lockstep_protocol::seal::{Identity, PublicKey};
use lockstep_protocol::{Config, Instant, PlayerId, Security, Session};

fuzz_target!(|data: &[u8]| {
    if let Ok(m) = Lobby::decode(data) {
        assert_eq!(Lobby::decode(&m.encode()), Ok(m));
    }
    let ids: Vec<Identity> = (0..2u8)
        .map(|s| Identity::from_secret([0x61 + s; 32]))
        .collect();
    let keys: Vec<PublicKey> = ids.iter().map(Identity::public).collect();
    let mut cfg = Config::new(2, PlayerId(0));
    cfg.security = Security::Sealed {
        identity: ids[0].clone(),
        seats: keys,
    };
    let mut s = Session::<Buttons>::new(cfg, 0x1234_5678).unwrap();
    while s.poll_transmit(Instant(0)).is_some() {}
    assert!(!s.handle_datagram(Instant(1), PlayerId(1), data));
    assert!(!s.is_running());
    while s.poll_event().is_some() {}
    // Nothing is sent in answer to bytes that did not open.
    assert!(s.poll_transmit(Instant(1)).is_none());
});

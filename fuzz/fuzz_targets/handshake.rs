//! The handshake's decoders on arbitrary bytes: the match-setup messages
//! a host and its joiners exchange (`lockstep_lobby::Message`, which carry
//! the public keys), a host's setup taking them from an address it has not
//! proven, and sealed sessions that have not started yet taking the bytes
//! as a Hello. Nothing may panic; a setup message that decodes encodes back
//! to one that decodes to the same; the host answers an unproven address
//! with fewer bytes than it sent; a session takes nothing that does not
//! open under the claimed seat's key.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lockstep_lobby::message::Message;
use lockstep_lobby::{HostSetup, Invites, MatchSettings, Offer, SetupTiming};
use lockstep_protocol::input::Buttons;
use lockstep_protocol::seal::{Identity, PublicKey};
use lockstep_protocol::{Config, Instant, SeatId, Security, Session};
use lockstep_sim::Match;

fuzz_target!(|data: &[u8]| {
    if let Ok(m) = Message::decode(data) {
        assert_eq!(Message::decode(&m.encode()), Ok(m));
    }
    let setup = Match::default();
    let offer = Offer {
        game: "g".into(),
        game_version: 1,
        config: vec![1],
        setup,
        settings: MatchSettings::new(&setup),
    };
    let mut host = HostSetup::new(
        offer,
        Identity::from_secret([0x71; 32]),
        [0x72; 32],
        Invites::from_random([0x73; 16]),
        SetupTiming::default(),
    );
    let from = std::net::SocketAddr::from(([10, 0, 0, 9], 4000));
    host.handle_datagram(Instant(5), from, data);
    host.handle_datagram(Instant(6), from, data);
    let answered: usize = std::iter::from_fn(|| host.poll_transmit())
        .map(|d| d.bytes.len())
        .sum();
    assert!(
        answered <= 2 * data.len(),
        "{answered} bytes out for {} in",
        data.len()
    );
    assert!(!host.is_seated());
    let ids: Vec<Identity> = (0..2u8)
        .map(|s| Identity::from_secret([0x61 + s; 32]))
        .collect();
    let keys: Vec<PublicKey> = ids.iter().map(Identity::public).collect();
    let mut cfg = Config::new(2, SeatId(0));
    cfg.security = Security::Sealed {
        identity: ids[0].clone(),
        seats: keys,
    };
    let mut s = Session::<Buttons>::new(cfg, 0x1234_5678).unwrap();
    while s.poll_transmit(Instant(0)).is_some() {}
    assert!(!s.handle_datagram(Instant(1), SeatId(1), data));
    assert!(!s.is_running());
    while s.poll_event().is_some() {}
    // Nothing is sent in answer to bytes that did not open.
    assert!(s.poll_transmit(Instant(1)).is_none());
});

//! Feeds arbitrary bytes to `lockstep_protocol::Packet::decode` and to a
//! running session: nothing may panic, whatever decodes must re-encode to the
//! bytes it came from, and a session must count every datagram it refuses.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lockstep_protocol::input::Buttons;
use lockstep_protocol::{Config, Instant, Packet, PlayerId, Session};

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = Packet::<Buttons>::decode(data) {
        assert_eq!(p.encode(), data);
    }
    // The same bytes through a session's front door, from each seat.
    let mut s = Session::<Buttons>::new(Config::new(3, PlayerId(0)), 0x1234_5678).unwrap();
    for from in 0..3u8 {
        let before = s.stats().dropped.total();
        s.handle_datagram(Instant(u64::from(from)), PlayerId(from), data);
        let dropped = s.stats().dropped.total() > before;
        let accepted = Packet::<Buttons>::decode(data).is_ok_and(|p| p.sender() == PlayerId(from) && from != 0);
        assert!(dropped || accepted);
    }
    while s.poll_event().is_some() {}
    while s.poll_transmit(Instant(10)).is_some() {}
});

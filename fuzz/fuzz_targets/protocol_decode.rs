//! Feeds arbitrary bytes to `lockstep_protocol::Packet::decode` (every kind,
//! the integrity messages of kind 14 included), to a running session in
//! each mode (lockstep and rollback), to a session that stopped (the match
//! found invalid), to a spectator relay and to a spectator, and as packets
//! of an input that carries commands (`Orders`): nothing may panic, a
//! stopped session steps nothing,
//! whatever decodes must re-encode to the bytes it came from, and a session
//! must count every datagram it refuses.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lockstep_protocol::bits::{BitError, BitStream};
use lockstep_protocol::input::Buttons;
use lockstep_protocol::spectate::{Relay, SpectateConfig, SpectatorId, SpectatorSession};
use lockstep_protocol::{
    Cause, Config, Event, Instant, Invalidation, Mode, Packet, SeatId, Session,
};
use lockstep_protocol::{Command, Orders};

/// A 12-bit command, for packets whose inputs carry commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Go(u16);

impl Command for Go {
    const MAX_BITS: u32 = 12;
    fn schema() -> &'static str {
        "fuzz Go: u12"
    }
    fn serialize<S: BitStream>(&mut self, s: &mut S) -> Result<(), BitError> {
        let mut v = u32::from(self.0);
        s.ranged(&mut v, 0, 4095, "go")?;
        self.0 = v as u16;
        Ok(())
    }

    fn read<S: BitStream>(s: &mut S) -> Result<Go, BitError> {
        let mut c = Go(0);
        c.serialize(s)?;
        Ok(c)
    }
}

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = Packet::<Buttons>::decode(data) {
        assert_eq!(p.encode(), data);
    }
    if let Ok(p) = Packet::<Orders<Buttons, Go>>::decode(data) {
        assert_eq!(p.encode(), data);
    }
    // The same bytes through a session's front door, from each seat, in
    // each mode.
    for mode in [Mode::Lockstep, Mode::ROLLBACK] {
        let mut cfg = Config::new(3, SeatId(0));
        cfg.mode = mode;
        let mut s = Session::<Buttons>::new(cfg, 0x1234_5678).unwrap();
        for from in 0..3u8 {
            let before = s.stats().dropped.total();
            s.handle_datagram(Instant(u64::from(from)), SeatId(from), data);
            let dropped = s.stats().dropped.total() > before;
            let accepted = Packet::<Buttons>::decode(data)
                .is_ok_and(|p| p.seat() == Some(SeatId(from)) && from != 0);
            assert!(dropped || accepted);
        }
        while s.poll_event().is_some() {}
        while s.poll_transmit(Instant(10)).is_some() {}
    }
    // And through a session that found the match invalid (it stopped):
    // whatever arrives, it steps nothing and sends only what it owes.
    let mut s = Session::<Buttons>::new(Config::new(3, SeatId(0)), 0x1234_5678).unwrap();
    let invalid = Invalidation {
        first_frame: 7,
        cause: Cause::Unattributed,
        seat: None,
        play_on: false,
    };
    s.invalidate(Instant(0), invalid).unwrap();
    for from in 0..3u8 {
        s.handle_datagram(Instant(u64::from(from)), SeatId(from), data);
    }
    while let Some(e) = s.poll_event() {
        assert!(!matches!(
            e,
            Event::Frame { .. } | Event::InputNeeded { .. }
        ));
    }
    while s.poll_transmit(Instant(10)).is_some() {}
    // And through the spectator paths.
    let cfg = SpectateConfig::new(3, 16_667);
    let mut relay = Relay::<Buttons>::new(cfg.clone(), SeatId(0), 7);
    relay.push_frame(0, &[Buttons(1), Buttons(2), Buttons(3)]);
    relay.handle_datagram(Instant(1), SpectatorId(1), data);
    while relay.poll_event().is_some() {}
    while relay.poll_transmit(Instant(20_000)).is_some() {}
    let mut spectator = SpectatorSession::<Buttons>::new(cfg, 0x5eed, Instant(0));
    spectator.handle_datagram(Instant(1), data);
    while spectator.poll_event().is_some() {}
    while spectator.poll_transmit(Instant(20_000)).is_some() {}
});

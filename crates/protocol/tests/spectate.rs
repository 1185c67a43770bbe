//! The spectator stream on its own: a relay and a spectator over a lossy,
//! duplicating link on virtual time. The spectator must receive the exact
//! settled state, then every frame's inputs in order, and the settled
//! checksums; a spectator's packets must never reach a seat's inputs, and
//! hostile bytes are dropped and counted.

use lockstep_fx::{Checksum, Rng};
use lockstep_protocol::input::Buttons;
use lockstep_protocol::packet::{InputsMsg, Message, Packet, Routed};
use lockstep_protocol::spectate::{
    Relay, RelayEvent, SpectateConfig, SpectatorId, SpectatorLeft, SpectatorSession,
    SpectatorSessionEvent,
};
use lockstep_protocol::{Config, Instant, SeatId, Session};

const TICK: u64 = 16_667;
const W: SpectatorId = SpectatorId(5);

/// The match the relay serves: frame `f`'s inputs and the "state" after it.
fn inputs(f: u32) -> Vec<Buttons> {
    (0..3u8).map(|seat| Buttons::scripted(seat, f)).collect()
}

fn state(f: u32) -> Vec<u8> {
    (0..3000u32)
        .map(|i| (i.wrapping_mul(f + 7) >> 3) as u8)
        .collect()
}

/// A relay at seat 2 playing a 3-seat match, a spectator joining at
/// `join_at`, both over a link dropping `loss_pct`% and duplicating 5% of
/// datagrams with 30 ms one way. Frames settle 10 frames after release.
struct Rig {
    relay: Relay<Buttons>,
    spectator: Option<SpectatorSession<Buttons>>,
    rng: Rng,
    loss_pct: u32,
    /// (arrival, to the spectator?, bytes)
    wire: Vec<(Instant, bool, Vec<u8>)>,
    released: u32,
    watched: Vec<SpectatorSessionEvent<Buttons>>,
    relay_events: Vec<RelayEvent>,
}

impl Rig {
    fn new(loss_pct: u32) -> Rig {
        Rig {
            relay: Relay::new(SpectateConfig::new(3, TICK), SeatId(2), 99),
            spectator: None,
            rng: Rng::new(7, 1),
            loss_pct,
            wire: Vec::new(),
            released: 0,
            watched: Vec::new(),
            relay_events: Vec::new(),
        }
    }

    fn send(&mut self, now: Instant, to_spectator: bool, bytes: Vec<u8>) {
        let copies = if self.rng.below(100) < 5 { 2 } else { 1 };
        for _ in 0..copies {
            if self.rng.below(100) < self.loss_pct {
                continue;
            }
            let delay = 30_000 + u64::from(self.rng.below(5_000));
            self.wire
                .push((now.plus(delay), to_spectator, bytes.clone()));
        }
    }

    /// Runs until `until` (µs), releasing a frame per tick.
    fn run(&mut self, until: u64, join_at: u32) {
        let mut now = Instant::ZERO;
        while now.as_micros() < until {
            if now.as_micros() >= u64::from(self.released) * TICK {
                let f = self.released;
                self.relay.push_frame(f, &inputs(f));
                if let Some(s) = f.checked_sub(10) {
                    self.relay.settle(s, Checksum::of(&state(s)));
                }
                self.released += 1;
                if f == join_at {
                    self.spectator = Some(SpectatorSession::new(
                        SpectateConfig::new(3, TICK),
                        0xabc,
                        now,
                    ));
                }
            }
            let due: Vec<_> = {
                let (due, later): (Vec<_>, Vec<_>) =
                    self.wire.drain(..).partition(|(at, _, _)| *at <= now);
                self.wire = later;
                due
            };
            for (_, to_spectator, bytes) in due {
                if to_spectator {
                    if let Some(w) = self.spectator.as_mut() {
                        w.handle_datagram(now, &bytes);
                    }
                } else {
                    self.relay.handle_datagram(now, W, &bytes);
                }
            }
            if self.relay.poll_timeout().is_some_and(|t| t <= now) {
                self.relay.handle_timeout(now);
            }
            if self.relay.wants_state() {
                let s = self.released - 11;
                assert!(self.relay.provide_state(now, s, &state(s)));
            }
            while let Some(e) = self.relay.poll_event() {
                self.relay_events.push(e);
            }
            while let Some(t) = self.relay.poll_transmit(now) {
                assert_eq!(t.to, W);
                self.send(now, true, t.bytes);
            }
            if let Some(w) = self.spectator.as_mut() {
                if w.poll_timeout().is_some_and(|t| t <= now) {
                    w.handle_timeout(now);
                }
                while let Some(e) = w.poll_event() {
                    self.watched.push(e);
                }
                let mut out = Vec::new();
                while let Some(bytes) = w.poll_transmit(now) {
                    out.push(bytes);
                }
                for bytes in out {
                    self.send(now, false, bytes);
                }
            }
            now = now.plus(500);
        }
    }
}

fn check_stream(rig: &Rig) -> (u32, u32, usize) {
    let mut loaded = None;
    let mut next = 0;
    let mut settled = 0;
    for e in &rig.watched {
        match e {
            SpectatorSessionEvent::LoadState { frame, state: s } => {
                assert_eq!(*s, state(*frame), "the state of frame {frame}");
                loaded = Some(*frame);
                next = frame + 1;
            }
            SpectatorSessionEvent::Frame { frame, inputs: i } => {
                assert!(loaded.is_some(), "a frame before the state");
                assert_eq!(*frame, next, "frames in order");
                assert_eq!(*i, inputs(*frame));
                next += 1;
            }
            SpectatorSessionEvent::Settled { frame, short } => {
                assert_eq!(*short, Checksum::of(&state(*frame)).short().0);
                settled += 1;
            }
            SpectatorSessionEvent::Connected => {}
            other => panic!("unexpected {other:?}"),
        }
    }
    (loaded.expect("a state arrived"), next, settled)
}

#[test]
fn a_spectator_gets_the_state_then_every_frame_in_order_over_a_lossy_link() {
    for loss in [0, 10, 25] {
        let mut rig = Rig::new(loss);
        rig.run(20_000_000, 300);
        let (loaded, next, settled) = check_stream(&rig);
        assert!((280..=340).contains(&loaded), "{loss}%: loaded {loaded}");
        // Within a few round trips of the relay's newest frame.
        assert!(
            next + 30 >= rig.released,
            "{loss}%: at {next} of {}",
            rig.released
        );
        assert!(settled >= 500, "{loss}%: {settled} settled checksums");
        assert_eq!(rig.relay_events, vec![RelayEvent::Joined { spectator: W }]);
        assert_eq!(rig.relay.stats().states_served, 1);
    }
}

#[test]
fn a_silent_spectator_is_dropped_and_the_relay_forgets_its_frames() {
    let mut rig = Rig::new(0);
    rig.run(10_000_000, 100);
    // The spectator goes away without a word.
    rig.spectator = None;
    rig.run(20_000_000, u32::MAX);
    assert!(
        rig.relay_events.contains(&RelayEvent::Left {
            spectator: W,
            reason: SpectatorLeft::TimedOut
        }),
        "{:?}",
        rig.relay_events
    );
    assert_eq!(rig.relay.spectators(), 0);
}

#[test]
fn a_spectator_cannot_send_inputs_and_hostile_bytes_are_counted() {
    let mut rig = Rig::new(0);
    rig.run(5_000_000, 100);
    let before = rig.relay.stats().dropped;
    // The spectator's genuine packets name the relay's seat and its token:
    // take one and make it an inputs message.
    let w = rig.spectator.as_mut().unwrap();
    let genuine = loop {
        if let Some(b) = w.poll_transmit(Instant(6_000_000)) {
            break b;
        }
        w.request_state();
    };
    let Ok(Packet::Routed(r)) = Packet::<Buttons>::decode(&genuine) else {
        panic!("a routed packet");
    };
    let forged = Packet::Routed(Routed {
        seq: r.seq.wrapping_add(1),
        message: Message::Inputs(InputsMsg {
            ack: None,
            first_frame: 200,
            inputs: vec![Buttons(63)],
            checksums: None,
        }),
        ..r
    });
    rig.relay
        .handle_datagram(Instant(6_000_000), W, &forged.encode());
    assert_eq!(rig.relay.stats().dropped.invalid, before.invalid + 1);
    // Garbage, a wrong token and a wrong seat.
    rig.relay
        .handle_datagram(Instant(6_000_000), W, &[0xff; 40]);
    let mut wrong = Packet::<Buttons>::decode(&genuine).unwrap();
    if let Packet::Routed(r) = &mut wrong {
        r.token ^= 1;
    }
    rig.relay
        .handle_datagram(Instant(6_000_000), W, &wrong.encode());
    let after = rig.relay.stats().dropped;
    assert_eq!(after.wrong_token, before.wrong_token + 1);
    assert!(after.total() >= before.total() + 3);
    // A session takes nothing from the spectator stream.
    let mut session = Session::<Buttons>::new(Config::new(3, SeatId(0)), 5).unwrap();
    session.handle_datagram(Instant(0), SeatId(2), &genuine);
    let hello = SpectatorSession::<Buttons>::new(SpectateConfig::new(3, TICK), 9, Instant(0))
        .poll_transmit(Instant(0))
        .unwrap();
    session.handle_datagram(Instant(0), SeatId(1), &hello);
    assert_eq!(session.stats().dropped.total(), 2);
    assert!(session.poll_event().is_none());
}

#[test]
fn a_spectator_of_another_game_or_tick_is_refused() {
    let mut relay = Relay::<Buttons>::new(SpectateConfig::new(3, TICK), SeatId(0), 1);
    for cfg in [
        SpectateConfig::new(4, TICK),
        SpectateConfig::new(3, TICK + 1),
    ] {
        let hello = SpectatorSession::<Buttons>::new(cfg, 9, Instant(0))
            .poll_transmit(Instant(0))
            .unwrap();
        relay.handle_datagram(Instant(0), W, &hello);
    }
    assert_eq!(relay.stats().dropped.incompatible, 2);
    assert_eq!(relay.spectators(), 0);
    assert!(relay.poll_transmit(Instant(0)).is_none());
}

#[test]
fn a_relay_serves_at_most_its_spectator_slots() {
    let mut cfg = SpectateConfig::new(3, TICK);
    cfg.max_spectators = 2;
    let mut relay = Relay::<Buttons>::new(cfg.clone(), SeatId(0), 1);
    for id in 0..5u32 {
        let hello = SpectatorSession::<Buttons>::new(cfg.clone(), 100 + id, Instant(0))
            .poll_transmit(Instant(0))
            .unwrap();
        relay.handle_datagram(Instant(0), SpectatorId(id), &hello);
    }
    assert_eq!(relay.spectators(), 2);
    assert_eq!(relay.stats().dropped.unexpected, 3);
    // One reply per accepted hello, each the size of the hello.
    let mut replies = 0;
    while let Some(t) = relay.poll_transmit(Instant(0)) {
        assert!(t.to.0 < 2);
        replies += 1;
    }
    assert_eq!(replies, 2);
}

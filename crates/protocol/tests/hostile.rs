//! Random, truncated, oversized, replayed, stale, wrong-token, spoofed and
//! non-canonical datagrams are dropped and counted, never panic, and leave
//! the session playing; sequence numbers wrap around safely.

use lockstep_fx::Rng;
use lockstep_protocol::bits::{BitStream, BitWriter};
use lockstep_protocol::input::Buttons;
use lockstep_protocol::packet::{Message, Packet, Routed};
use lockstep_protocol::{
    Config, Event, Instant, LeaveReason, SeatEvent, SeatId, Session, Transmit,
};
use proptest::prelude::*;

type S = Session<Buttons>;

/// Two sessions on a perfect, instant network, stepped one millisecond at a
/// time; every datagram peer 1 sends peer 0 is also kept.
struct Pair {
    s: Vec<S>,
    now: Instant,
    to_zero: Vec<Vec<u8>>,
    frames: [u32; 2],
    cut_zero_to_one: bool,
    events: Vec<(usize, Event<Buttons>)>,
}

impl Pair {
    fn new() -> Pair {
        let s = (0..2)
            .map(|i| S::new(Config::new(2, SeatId(i)), 77 + u32::from(i)).unwrap())
            .collect();
        Pair {
            s,
            now: Instant::ZERO,
            to_zero: Vec::new(),
            frames: [0; 2],
            cut_zero_to_one: false,
            events: Vec::new(),
        }
    }

    fn step(&mut self) {
        for i in 0..2 {
            self.s[i].handle_timeout(self.now);
            while let Some(e) = self.s[i].poll_event() {
                match e {
                    Event::InputNeeded { frame } => self.s[i]
                        .add_local_input(frame, Buttons::scripted(i as u8, frame))
                        .unwrap(),
                    Event::Frame { frame, .. } => self.frames[i] = frame,
                    other => self.events.push((i, other)),
                }
            }
            let mut out: Vec<Transmit> = Vec::new();
            while let Some(t) = self.s[i].poll_transmit(self.now) {
                out.push(t);
            }
            for t in out {
                if i == 1 {
                    self.to_zero.push(t.bytes.clone());
                }
                if i == 0 && self.cut_zero_to_one {
                    continue;
                }
                self.s[t.to.index()].handle_datagram(self.now, SeatId(i as u8), &t.bytes);
            }
        }
        self.now = self.now.plus(1_000);
    }

    fn run_ms(&mut self, ms: u32) {
        for _ in 0..ms {
            self.step();
        }
    }

    fn inject(&mut self, from: u8, bytes: &[u8]) {
        self.s[0].handle_datagram(self.now, SeatId(from), bytes);
    }
}

#[test]
fn hostile_datagrams_are_dropped_and_counted() {
    let mut p = Pair::new();
    p.run_ms(1500);
    assert!(p.frames[0] > 10);
    let base = p.s[0].stats().dropped;
    assert_eq!(base.total(), 0);

    // Random bytes of random lengths.
    let mut rng = Rng::new(1, 2);
    for _ in 0..2000 {
        let len = rng.below(1400) as usize;
        let bytes: Vec<u8> = (0..len).map(|_| rng.next_u32() as u8).collect();
        p.inject(1, &bytes);
    }
    let d = p.s[0].stats().dropped;
    assert_eq!(d.total(), 2000, "{d:?}");
    assert!(
        d.oversized > 0 && d.malformed > 0 && d.empty + d.wrong_token + d.wrong_protocol > 0,
        "{d:?}"
    );

    // Truncations of real packets.
    let real: Vec<Vec<u8>> = p.to_zero.iter().rev().take(20).cloned().collect();
    let mut n = 0;
    for pkt in &real {
        for cut in 0..pkt.len() {
            p.inject(1, &pkt[..cut]);
            n += 1;
        }
    }
    assert_eq!(p.s[0].stats().dropped.total(), 2000 + n);

    // Oversized.
    p.inject(1, &[0u8; 1201]);
    assert_eq!(p.s[0].stats().dropped.oversized, d.oversized + 1);

    // Replayed: a packet peer 0 already accepted.
    let before = p.s[0].stats().dropped;
    let last = p.to_zero.last().unwrap().clone();
    p.inject(1, &last);
    assert_eq!(p.s[0].stats().dropped.duplicate, before.duplicate + 1);

    // Stale: a packet more than 64 sequence numbers old.
    let old = p
        .to_zero
        .iter()
        .find(|b| matches!(Packet::<Buttons>::decode(b), Ok(Packet::Routed(_))))
        .unwrap()
        .clone();
    p.inject(1, &old);
    assert_eq!(p.s[0].stats().dropped.too_old, before.too_old + 1);

    // Wrong token: a valid packet addressed to another session.
    let Ok(Packet::Routed(mut r)) = Packet::<Buttons>::decode(&last) else {
        panic!()
    };
    r.token ^= 1;
    r.seq = r.seq.wrapping_add(1);
    p.inject(1, &Packet::Routed(r.clone()).encode());
    assert_eq!(p.s[0].stats().dropped.wrong_token, before.wrong_token + 1);

    // Spoofed: claims seat 1, arrives from seat 0's own address... or seat 5.
    p.inject(0, &last);
    p.inject(5, &last);
    assert_eq!(
        p.s[0].stats().dropped.unknown_sender,
        before.unknown_sender + 2
    );

    // Non-canonical: an unchanged input sent with its "changed" flag set.
    let mut w = BitWriter::new();
    let (mut kind, mut sender, mut token, mut seq) = (1u64, 1u64, 77u64, 9u64);
    w.bits(&mut kind, 4).unwrap();
    w.bits(&mut seq, 16).unwrap();
    w.bits(&mut sender, 3).unwrap();
    w.bits(&mut token, 32).unwrap();
    w.align().unwrap();
    for (mut v, n) in [
        (0u64, 1u32),
        (2, 8),
        (0, 16),
        (5, 6),
        (1, 1),
        (5, 6),
        (0, 1),
    ] {
        w.bits(&mut v, n).unwrap();
    }
    let bytes = w.finish();
    p.inject(1, &bytes);
    assert_eq!(
        p.s[0].stats().dropped.non_canonical,
        before.non_canonical + 1
    );

    // And the match goes on.
    let f = p.frames;
    p.run_ms(300);
    assert!(p.frames[0] > f[0] + 10 && p.frames[1] > f[1] + 10);
}

/// Peer 0's datagrams stop reaching peer 1: peer 1 hears nothing for 2 s
/// and times peer 0 out; peer 0 still hears peer 1 but its inputs go unacked
/// past the cap, and it times peer 1 out.
#[test]
fn silence_and_unacked_inputs_time_out() {
    use lockstep_protocol::TimeoutReason;
    let mut p = Pair::new();
    p.run_ms(1000);
    p.events.clear();
    p.cut_zero_to_one = true;
    let cut = p.now;
    p.run_ms(4000);
    let timeouts: Vec<_> = p
        .events
        .iter()
        .filter_map(|(i, e)| match e {
            Event::Seat(SeatEvent::Left {
                seat: peer,
                reason: LeaveReason::TimedOut(reason),
            }) => Some((*i, *peer, *reason)),
            _ => None,
        })
        .collect();
    assert_eq!(
        timeouts,
        vec![
            (1, SeatId(0), TimeoutReason::Silent),
            (0, SeatId(1), TimeoutReason::TooManyUnacked)
        ],
        "{:?} after the cut at {cut:?}",
        p.events
    );
}

/// A handshake for another game (another input schema) is refused and
/// reported once.
#[test]
fn incompatible_handshake_is_refused() {
    use lockstep_protocol::packet::Hello;
    let mut p = Pair::new();
    let hello = Hello {
        seq: 7,
        sender: SeatId(1),
        schema_hash: 42,
        seats: 2,
        tick_micros: 16_667,
        token: 5,
        echo: 0,
        ready: false,
    };
    for _ in 0..3 {
        p.inject(1, &Packet::<Buttons>::Hello(hello.clone()).encode());
    }
    assert_eq!(p.s[0].stats().dropped.incompatible, 3);
    let mut incompatible = 0;
    while let Some(e) = p.s[0].poll_event() {
        incompatible += usize::from(matches!(
            e,
            Event::Seat(SeatEvent::Incompatible { seat: SeatId(1) })
        ));
    }
    assert_eq!(incompatible, 1);
}

#[test]
fn sequence_numbers_wrap_around() {
    let mut p = Pair::new();
    p.s = (0..2)
        .map(|i| {
            let mut cfg = Config::new(2, SeatId(i));
            cfg.initial_seq = 65_500;
            S::new(cfg, 77 + u32::from(i)).unwrap()
        })
        .collect();
    p.run_ms(10_000);
    assert!(p.frames.iter().all(|&f| f >= 550), "{:?}", p.frames);
    for s in &p.s {
        // Well past 65 535: the sequence wrapped.
        assert!(s.stats().sent_total().packets > 100);
        let d = s.stats().dropped;
        assert_eq!(d.total(), d.duplicate, "{d:?}");
    }
    assert!(
        !p.events
            .iter()
            .any(|(_, e)| matches!(e, Event::Desync { .. })),
        "{:?}",
        p.events
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]

    /// The decoder never panics, and whatever it accepts re-encodes to the
    /// same bytes.
    #[test]
    fn decode_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..1300)) {
        if let Ok(p) = Packet::<Buttons>::decode(&bytes) {
            prop_assert_eq!(p.encode(), bytes);
        }
    }

    /// Any inputs packet round-trips.
    #[test]
    fn inputs_round_trip(
        seq in any::<u16>(),
        token in any::<u32>(),
        ack in proptest::option::of(any::<u16>()),
        first in any::<u16>(),
        inputs in proptest::collection::vec(0u8..64, 0..=255),
        sums in proptest::option::of((any::<u8>(), any::<u16>(), proptest::collection::vec(any::<u64>(), 1..=4))),
    ) {
        use lockstep_protocol::packet::{InputsMsg, ShortChecksums};
        let msg = InputsMsg {
            ack,
            first_frame: if inputs.is_empty() { 0 } else { first },
            inputs: inputs.into_iter().map(Buttons).collect(),
            checksums: sums.map(|(epoch, newest, shorts)| ShortChecksums { epoch, newest, shorts }),
        };
        let p = Packet::Routed(Routed { sender: SeatId(3), token, seq, message: Message::Inputs(msg) });
        let bytes = p.encode();
        prop_assert_eq!(Packet::<Buttons>::decode(&bytes), Ok(p.clone()));
        prop_assert_eq!(p.measure_bits().div_ceil(8), bytes.len() as u64);
    }
}

/// Seat-drop reports that name the sender itself or a seat outside the
/// match are refused and counted, and so is a notice naming the receiver
/// that carries inputs (a notice says "I dropped you" and nothing else); a
/// forged notice without inputs is taken like a goodbye and cancelled by
/// the sender's next genuine packet. The match goes on.
#[test]
fn impossible_seat_drop_reports_are_refused() {
    use lockstep_protocol::SeatSet;
    use lockstep_protocol::packet::SeatDrop;
    let mut p = Pair::new();
    p.run_ms(1000);
    let Ok(Packet::Routed(genuine)) = Packet::<Buttons>::decode(p.to_zero.last().unwrap()) else {
        panic!("a routed packet");
    };
    let before = p.s[0].stats().dropped;
    let forged = [
        (1u8, vec![Buttons(1)]),
        (5, vec![Buttons(1)]),
        (0, vec![Buttons(1)]),
        (0, vec![]),
    ];
    for (i, (seat, inputs)) in forged.into_iter().enumerate() {
        let forged = Packet::Routed(Routed {
            seq: genuine.seq.wrapping_add(1 + i as u16),
            message: Message::SeatDrop(SeatDrop {
                seat: SeatId(seat),
                // Seat 0's session token: the notices name its process.
                token: 77,
                heard: SeatSet(0b11),
                first_frame: 0,
                inputs,
            }),
            ..genuine.clone()
        });
        p.inject(1, &forged.encode());
    }
    let after = p.s[0].stats().dropped;
    assert_eq!(after.unexpected, before.unexpected + 2);
    assert_eq!(after.invalid, before.invalid + 1);
    let frame = p.frames[0];
    p.run_ms(3000);
    assert!(p.frames[0] > frame + 150, "the match goes on");
    assert!(
        !p.events.iter().any(|(_, e)| matches!(
            e,
            Event::Seat(SeatEvent::Dropped { .. })
                | Event::Seat(SeatEvent::Left {
                    reason: LeaveReason::TimedOut(_),
                    ..
                })
                | Event::LostQuorum { .. }
        )),
        "{:?}",
        p.events
    );
}

/// The newest genuine routed packet peer 1 sent peer 0.
fn last_routed(p: &Pair) -> Routed<Buttons> {
    p.to_zero
        .iter()
        .rev()
        .find_map(|b| match Packet::<Buttons>::decode(b) {
            Ok(Packet::Routed(r)) => Some(r),
            _ => None,
        })
        .expect("a routed packet")
}

fn disconnects(p: &Pair) -> usize {
    p.events
        .iter()
        .filter(|(_, e)| {
            matches!(
                e,
                Event::Seat(SeatEvent::Left {
                    reason: LeaveReason::Disconnected,
                    ..
                }) | Event::Seat(SeatEvent::Left {
                    reason: LeaveReason::TimedOut(_),
                    ..
                })
            )
        })
        .count()
}

/// After the start, a Hello from a connected seat that contradicts the
/// agreed match (another seat count, tick or schema) is ignored and
/// counted; the match goes on past the silence timeout.
#[test]
fn a_contradicting_hello_does_not_end_a_running_match() {
    use lockstep_protocol::packet::Hello;
    let mut p = Pair::new();
    p.run_ms(1000);
    use lockstep_protocol::Input;
    let ours = Buttons::schema_hash();
    for (seats, tick, schema) in [(3, 16_667, ours), (2, 10_000, ours), (2, 16_667, 42)] {
        let hello = Hello {
            seq: 7,
            sender: SeatId(1),
            schema_hash: schema,
            seats,
            tick_micros: tick,
            token: 78,
            echo: 77,
            ready: true,
        };
        p.inject(1, &Packet::<Buttons>::Hello(hello).encode());
    }
    assert_eq!(p.s[0].stats().dropped.contradicting, 3);
    let frame = p.frames[0];
    p.run_ms(3000);
    assert!(p.frames[0] > frame + 150, "the match goes on");
    assert_eq!(disconnects(&p), 0, "{:?}", p.events);
    assert!(
        !p.events
            .iter()
            .any(|(_, e)| matches!(e, Event::Seat(SeatEvent::Incompatible { .. })))
    );
}

/// A genuine packet whose sequence number was pushed far ahead (a flipped
/// bit of an old packet) is refused without moving the window; later
/// genuine packets are still accepted.
#[test]
fn a_sequence_number_pushed_ahead_does_not_end_the_match() {
    let mut p = Pair::new();
    p.run_ms(1000);
    let genuine = last_routed(&p);
    for jump in [1000u16, 0x4000, 0x7fff] {
        let forged = Packet::Routed(Routed {
            seq: genuine.seq.wrapping_add(jump),
            ..genuine.clone()
        });
        p.inject(1, &forged.encode());
    }
    assert_eq!(p.s[0].stats().dropped.too_far, 3);
    let frame = p.frames[0];
    p.run_ms(3000);
    assert!(p.frames[0] > frame + 150, "the match goes on");
    assert_eq!(p.s[0].stats().dropped.too_old, 0);
    assert_eq!(disconnects(&p), 0, "{:?}", p.events);
}

/// A forged Disconnect is cancelled by the peer's next genuine packet; a
/// real goodbye (the peer closes and goes silent) is taken within the
/// grace period.
#[test]
fn a_disconnect_is_confirmed_by_silence() {
    use lockstep_protocol::packet::Disconnect;
    let mut p = Pair::new();
    p.run_ms(1000);
    let genuine = last_routed(&p);
    let forged = Packet::Routed(Routed {
        seq: genuine.seq.wrapping_add(1),
        message: Message::Disconnect(Disconnect { reason: 0 }),
        ..genuine
    });
    p.inject(1, &forged.encode());
    assert!(
        p.s[0]
            .poll_timeout()
            .is_some_and(|t| t <= p.now.plus(250_000))
    );
    let frame = p.frames[0];
    p.run_ms(3000);
    assert!(p.frames[0] > frame + 150, "the match goes on");
    assert_eq!(disconnects(&p), 0, "{:?}", p.events);

    let now = p.now;
    p.s[1].disconnect(now);
    let bye = p.s[1].poll_transmit(now).expect("the goodbye");
    p.inject(1, &bye.bytes);
    p.cut_zero_to_one = true;
    let mut waited = 0;
    while disconnects(&p) == 0 && waited < 1000 {
        p.run_ms(1);
        waited += 1;
    }
    assert!(
        p.events.iter().any(|(i, e)| *i == 0
            && matches!(
                e,
                Event::Seat(SeatEvent::Left {
                    seat: SeatId(1),
                    reason: LeaveReason::Disconnected
                })
            )),
        "{:?}",
        p.events
    );
    assert!(waited <= 250 + 17, "taken after {waited} ms");
}

/// A "rejoin" (a Hello with a new token) for a seat that is still connected
/// is refused: the seat keeps its session, the match goes on.
#[test]
fn a_rejoin_for_a_connected_seat_is_refused() {
    use lockstep_protocol::Input;
    use lockstep_protocol::packet::Hello;
    let mut p = Pair::new();
    p.run_ms(1000);
    let before = p.s[0].stats().dropped.wrong_token;
    let hello = Hello {
        seq: 7,
        sender: SeatId(1),
        schema_hash: Buttons::schema_hash(),
        seats: 2,
        tick_micros: 16_667,
        token: 0xdead,
        echo: 0,
        ready: false,
    };
    p.inject(1, &Packet::<Buttons>::Hello(hello).encode());
    assert_eq!(p.s[0].stats().dropped.wrong_token, before + 1);
    let frame = p.frames[0];
    p.run_ms(1000);
    assert!(p.frames[0] > frame + 50, "the match goes on");
    assert!(
        !p.events.iter().any(|(_, e)| matches!(
            e,
            Event::Seat(SeatEvent::Returned { .. }) | Event::Seat(SeatEvent::Dropped { .. })
        )),
        "{:?}",
        p.events
    );
}

/// A forged Disconnect whose sequence number is pushed ahead (up to the
/// largest jump the window takes) cannot be cancelled at once by a newer
/// packet, but the peer is not silent: its genuine packets keep postponing
/// the goodbye until one passes it. A goodbye older than a packet already
/// taken is refused outright. Neither moves the sequence window.
#[test]
fn a_forged_disconnect_pushed_ahead_does_not_end_the_match() {
    use lockstep_protocol::packet::Disconnect;
    for jump in [2u16, 20, 40, 64, 90, 96] {
        let mut p = Pair::new();
        p.run_ms(1000);
        let genuine = last_routed(&p);
        let forged = Packet::Routed(Routed {
            seq: genuine.seq.wrapping_add(jump),
            message: Message::Disconnect(Disconnect { reason: 0 }),
            ..genuine.clone()
        });
        p.inject(1, &forged.encode());
        assert_eq!(p.s[0].stats().dropped.total(), 0, "jump {jump}");
        let frame = p.frames[0];
        p.run_ms(3000);
        assert!(p.frames[0] > frame + 150, "jump {jump}: the match goes on");
        assert_eq!(disconnects(&p), 0, "jump {jump}: {:?}", p.events);
        assert_eq!(p.s[0].stats().dropped.too_old, 0, "jump {jump}");
    }

    // A copy of a genuine packet two ahead is taken (its content is
    // harmless), leaving one sequence unseen behind it; a goodbye with that
    // sequence is older than a packet taken, so it is refused.
    let mut p = Pair::new();
    p.run_ms(1000);
    let genuine = last_routed(&p);
    let ahead = Packet::Routed(Routed {
        seq: genuine.seq.wrapping_add(2),
        ..genuine.clone()
    });
    p.inject(1, &ahead.encode());
    let stale = Packet::Routed(Routed {
        seq: genuine.seq.wrapping_add(1),
        message: Message::Disconnect(Disconnect { reason: 0 }),
        ..genuine
    });
    p.inject(1, &stale.encode());
    assert_eq!(p.s[0].stats().dropped.invalid, 1);
    p.run_ms(1000);
    assert_eq!(disconnects(&p), 0, "{:?}", p.events);
}

//! The resync's request/answer contract, for an app that drives a session
//! itself: it answers `StateRequested` the moment it sees it, with the state
//! after the newest frame it has stepped — even when frames released in the
//! same call are still queued behind the request — or later, after stepping
//! more, with the then-newest. Swept over one-way delays from 0 to 40 ms, a
//! real desync always heals. With two seats the desync is a dispute: each
//! app steps the disputed frames again and reports whether its second run
//! agrees with its first; the seat whose state was changed outside the
//! simulation disagrees with itself and is the one healed.

use std::collections::BTreeMap;

use lockstep_fx::Checksum;
use lockstep_protocol::input::Buttons;
use lockstep_protocol::{Config, Event, Instant, SeatId, SelfCheck, Session};

/// A tiny deterministic game: the frame and one accumulator.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Toy {
    frame: u32,
    acc: u64,
}

impl Toy {
    fn step(&mut self, frame: u32, inputs: &[Buttons]) {
        let sum: u64 = inputs.iter().map(|b| u64::from(b.0)).sum();
        self.acc = self
            .acc
            .wrapping_mul(31)
            .wrapping_add(sum + u64::from(frame));
        self.frame = frame;
    }
    fn bytes(&self) -> Vec<u8> {
        let mut b = self.frame.to_le_bytes().to_vec();
        b.extend_from_slice(&self.acc.to_le_bytes());
        b
    }
    fn load(bytes: &[u8]) -> Toy {
        Toy {
            frame: u32::from_le_bytes(bytes[..4].try_into().unwrap()),
            acc: u64::from_le_bytes(bytes[4..12].try_into().unwrap()),
        }
    }
}

/// One frame as an app stepped it: its inputs, the state after it, and
/// its checksum.
type Stepped = (Vec<Buttons>, Toy, Checksum);

struct Outcome {
    loads: usize,
    failed: bool,
    checksums: [BTreeMap<u32, Checksum>; 2],
    loaded_frame: u32,
    /// Each session's input history at the end, in frames.
    history: [u32; 2],
}

/// When the app answers `StateRequested`: `None` the moment it sees the
/// event; `Some(d)` once `d` µs have passed, after stepping whatever the
/// session released meanwhile.
fn play(one_way_micros: u64, flip_at: u32, answer_after: Option<u64>) -> Outcome {
    let mut s: Vec<Session<Buttons>> = (0..2)
        .map(|i| Session::new(Config::new(2, SeatId(i)), 900 + u32::from(i)).unwrap())
        .collect();
    let mut games = [Toy { frame: 0, acc: 0 }; 2];
    // Per seat, every frame stepped: its inputs, the state after it and
    // its checksum (for the self-check a dispute asks for).
    let mut runs: [BTreeMap<u32, Stepped>; 2] = Default::default();
    let mut stepped: [Option<u32>; 2] = [None; 2];
    let mut asked: [Option<Instant>; 2] = [None; 2];
    let mut net: BTreeMap<(u64, u64), (usize, u8, Vec<u8>)> = BTreeMap::new();
    let mut sent = 0u64;
    let mut out = Outcome {
        loads: 0,
        failed: false,
        checksums: [BTreeMap::new(), BTreeMap::new()],
        loaded_frame: 0,
        history: [0; 2],
    };
    let mut now = Instant::ZERO;
    while now.as_micros() < 12_000_000 {
        let due: Vec<_> = net
            .range(..=(now.as_micros(), u64::MAX))
            .map(|(k, _)| *k)
            .collect();
        for k in due {
            let (to, from, bytes) = net.remove(&k).unwrap();
            s[to].handle_datagram(now, SeatId(from), &bytes);
        }
        for i in 0..2 {
            if s[i].poll_timeout().is_some_and(|t| t <= now) {
                s[i].handle_timeout(now);
            }
            while let Some(e) = s[i].poll_event() {
                match e {
                    Event::InputNeeded { frame } => s[i]
                        .add_local_input(frame, Buttons::scripted(i as u8, frame))
                        .unwrap(),
                    Event::Frame { frame, inputs, .. } => {
                        games[i].step(frame, &inputs);
                        if i == 1 && frame == flip_at && out.loads == 0 {
                            games[i].acc ^= 1;
                        }
                        let c = Checksum::of(&games[i].bytes());
                        runs[i].insert(frame, (inputs, games[i], c));
                        out.checksums[i].insert(frame, c);
                        stepped[i] = Some(frame);
                        s[i].report_checksum(frame, c).unwrap();
                    }
                    Event::StateRequested if answer_after.is_some() => asked[i] = Some(now),
                    Event::StateRequested => {
                        // Answer at once, with what this app has stepped.
                        let frame = stepped[i].expect("stepped a frame");
                        s[i].provide_state(now, frame, &games[i].bytes())
                            .expect("the state after the newest frame stepped is accepted");
                    }
                    Event::LoadState { frame, state, .. } => {
                        games[i] = Toy::load(&state);
                        stepped[i] = Some(frame);
                        out.checksums[i].insert(frame, Checksum::of(&state));
                        out.loads += 1;
                        out.loaded_frame = frame;
                    }
                    Event::Disputed { frame, .. } => {
                        // Step the disputed frames again from the newest
                        // state compared clean.
                        let clean = s[i].newest_clean().expect("a clean frame");
                        let mut g = runs[i][&clean].1;
                        let mut check = SelfCheck::Consistent;
                        for f in clean + 1..=frame {
                            let (inputs, _, first) = &runs[i][&f];
                            g.step(f, inputs);
                            if Checksum::of(&g.bytes()) != *first {
                                check = SelfCheck::Inconsistent { frame: f };
                                break;
                            }
                        }
                        s[i].report_self_check(now, frame, check).unwrap();
                    }
                    Event::ResyncFailed { .. } => out.failed = true,
                    _ => {}
                }
            }
            if let (Some(at), Some(d)) = (asked[i], answer_after) {
                if now.since(at) >= d {
                    asked[i] = None;
                    let frame = stepped[i].expect("stepped a frame");
                    s[i].provide_state(now, frame, &games[i].bytes())
                        .expect("a late answer with the newest frame stepped is accepted");
                }
            }
            while let Some(t) = s[i].poll_transmit(now) {
                sent += 1;
                net.insert(
                    (now.as_micros() + one_way_micros, sent),
                    (t.to.index(), i as u8, t.bytes),
                );
            }
        }
        now = now.plus(1_000);
    }
    out.history = [s[0].history_frames(), s[1].history_frames()];
    out
}

fn assert_heals(ms: u64, o: &Outcome) {
    assert!(!o.failed, "{ms} ms: resync failed");
    assert_eq!(o.loads, 1, "{ms} ms: {} loads", o.loads);
    let common: Vec<u32> = o.checksums[0]
        .keys()
        .filter(|f| o.checksums[1].contains_key(f))
        .copied()
        .collect();
    assert!(common.len() > 500, "{ms} ms: only {} frames", common.len());
    for f in common.iter().filter(|&&f| f >= o.loaded_frame) {
        assert_eq!(
            o.checksums[0][f], o.checksums[1][f],
            "{ms} ms: frame {f} differs after the load"
        );
    }
}

#[test]
fn an_app_answering_state_requests_at_once_heals_at_every_delay() {
    for ms in 0..=40u64 {
        assert_heals(ms, &play(ms * 1000, 120, None));
    }
}

/// The request stays pending: an app that steps the frames queued behind
/// the event first, or answers tens of milliseconds later, still heals.
#[test]
fn an_app_answering_state_requests_late_heals_at_every_delay() {
    for ms in 0..=40u64 {
        for after in [0, 30_000, 200_000] {
            assert_heals(ms, &play(ms * 1000, 120, Some(after)));
        }
    }
}

/// On a slow path the input history covers ten round trips, so a transfer
/// that takes several rounds of lost chunks can still be brought up to date;
/// on a fast one it stays at the configured 600 frames.
#[test]
fn the_input_history_follows_the_round_trip() {
    let fast = play(20_000, 120, None);
    assert_eq!(fast.history, [600, 600]);
    let slow = play(800_000, 120, None);
    assert_heals(800, &slow);
    // 1.6 s round trips at 60 Hz: 96 frames each.
    for h in slow.history {
        assert!((950..=1000).contains(&h), "history {h} frames");
    }
}

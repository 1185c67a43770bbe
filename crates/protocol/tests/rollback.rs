//! Rollback mode at the session level, with a toy app whose state is a
//! running hash of every input it stepped: frames come in order, a
//! misprediction rolls the app back to the first wrong frame, a right
//! prediction is confirmed without one, the prediction window bounds how
//! far ahead a peer steps, and only confirmed frames are compared.

use std::collections::{BTreeMap, VecDeque};

use lockstep_fx::Checksum;
use lockstep_protocol::input::Buttons;
use lockstep_protocol::{Config, Event, InputDelay, Instant, Mode, Rollback, SeatId, Session};

/// What the app steps: a hash chain over the frames' inputs.
#[derive(Default)]
struct App {
    state: u64,
    next: u32,
    /// The state before each frame stepped and not yet confirmed.
    before: BTreeMap<u32, u64>,
    rollbacks: Vec<u32>,
    predicted: u32,
    out_of_order: u32,
}

impl App {
    fn step(&mut self, frame: u32, inputs: &[Buttons]) -> Checksum {
        if frame != self.next {
            self.out_of_order += 1;
        }
        self.before.insert(frame, self.state);
        for b in inputs {
            self.state = self
                .state
                .wrapping_mul(0x100_0000_01b3)
                .wrapping_add(u64::from(b.0) + 1);
        }
        self.next = frame + 1;
        Checksum::of(&self.state.to_le_bytes())
    }

    fn rollback(&mut self, frame: u32) {
        self.rollbacks.push(frame);
        self.state = self.before[&frame];
        self.next = frame;
    }
}

/// Two sessions, `latency_ms` each way, stepped a millisecond at a time;
/// seat `i`'s input at frame `f` is `input(i, f)`.
struct Pair {
    s: Vec<Session<Buttons>>,
    apps: [App; 2],
    now: Instant,
    latency: u64,
    wire: VecDeque<(Instant, usize, usize, Vec<u8>)>,
    cut: [bool; 2],
    desyncs: u32,
    input: fn(usize, u32) -> u8,
}

impl Pair {
    fn new(mode: Mode, latency_ms: u64, input: fn(usize, u32) -> u8) -> Pair {
        let s = (0..2)
            .map(|i| {
                let mut c = Config::new(2, SeatId(i));
                c.mode = mode;
                Session::new(c, 900 + u32::from(i)).unwrap()
            })
            .collect();
        Pair {
            s,
            apps: [App::default(), App::default()],
            now: Instant::ZERO,
            latency: latency_ms * 1000,
            wire: VecDeque::new(),
            cut: [false; 2],
            desyncs: 0,
            input,
        }
    }

    fn step(&mut self) {
        while self.wire.front().is_some_and(|(at, ..)| *at <= self.now) {
            if let Some((_, from, to, bytes)) = self.wire.pop_front() {
                self.s[to].handle_datagram(self.now, SeatId(from as u8), &bytes);
                self.answer(to);
            }
        }
        for i in 0..2 {
            self.s[i].handle_timeout(self.now);
            self.answer(i);
            while let Some(t) = self.s[i].poll_transmit(self.now) {
                if !self.cut[i] {
                    let at = self.now.plus(self.latency);
                    self.wire.push_back((at, i, t.to.index(), t.bytes));
                }
            }
        }
        self.now = self.now.plus(1_000);
    }

    fn answer(&mut self, i: usize) {
        while let Some(e) = self.s[i].poll_event() {
            match e {
                Event::InputNeeded { frame } => {
                    let b = Buttons((self.input)(i, frame));
                    self.s[i].add_local_input(frame, b).unwrap();
                }
                Event::Frame {
                    frame,
                    inputs,
                    predicted,
                    ..
                } => {
                    let c = self.apps[i].step(frame, &inputs);
                    self.apps[i].predicted += u32::from(predicted);
                    self.s[i].report_checksum(frame, c).unwrap();
                }
                Event::Rollback { frame } => self.apps[i].rollback(frame),
                Event::Desync { .. } => self.desyncs += 1,
                _ => {}
            }
        }
    }

    fn run_ms(&mut self, ms: u32) {
        for _ in 0..ms {
            self.step();
        }
    }
}

fn rollback(delay: u32) -> Mode {
    Mode::Rollback(Rollback {
        input_delay: InputDelay::Fixed(delay),
        ..Rollback::DEFAULT
    })
}

/// Seat 1 changes its buttons every 7 frames; seat 0 every 11.
fn changing(seat: usize, frame: u32) -> u8 {
    if seat == 1 {
        (frame / 7 % 4) as u8
    } else {
        (frame / 11 % 3) as u8
    }
}

#[test]
fn a_misprediction_rolls_back_to_the_first_wrong_frame_and_the_peers_agree() {
    let mut p = Pair::new(rollback(0), 50, changing);
    p.run_ms(5_000);
    assert_eq!(p.desyncs, 0);
    for (i, app) in p.apps.iter().enumerate() {
        assert_eq!(
            app.out_of_order, 0,
            "seat {i} was handed a frame out of order"
        );
        // About one misprediction per change of the other seat's input.
        assert!(
            app.rollbacks.len() > 20,
            "seat {i}: {} rollbacks",
            app.rollbacks.len()
        );
        assert!(app.predicted > 200, "seat {i}");
        let stats = p.s[i].stats();
        assert_eq!(stats.rollbacks, app.rollbacks.len() as u64);
        // The other seat changes its input at multiples of 7 (or 11): the
        // first wrong frame is where the change is.
        let period = if i == 0 { 7 } else { 11 };
        assert!(
            app.rollbacks.iter().all(|f| f % period == 0),
            "seat {i}: {:?}",
            app.rollbacks
        );
    }
    // Both stepped the same confirmed history: compare the hash chains at
    // the newest frame both confirmed.
    let both = p.s[0]
        .confirmed_before()
        .min(p.s[1].confirmed_before())
        .min(p.apps[0].next.min(p.apps[1].next));
    let at = |i: usize| p.apps[i].before.get(&both).copied();
    assert!(both > 250);
    assert_eq!(at(0), at(1));
    assert!(p.s[0].newest_clean().is_some_and(|c| c + 10 >= both));
}

#[test]
fn a_right_prediction_is_confirmed_without_a_rollback() {
    // Seat 1 holds its buttons the whole match: every prediction of it
    // (repeat the newest) is right.
    let mut p = Pair::new(rollback(0), 50, |seat, frame| {
        if seat == 1 { 3 } else { (frame % 5) as u8 }
    });
    p.run_ms(3_000);
    assert_eq!(p.desyncs, 0);
    assert!(p.apps[0].predicted > 100);
    // Before seat 1's first input arrives there is nothing to repeat: the
    // first frames are predicted with the default input, and rolled back
    // once, to frame 0. Never again.
    assert_eq!(p.apps[0].rollbacks, vec![0]);
    assert!(p.s[0].newest_clean().is_some());
}

#[test]
fn the_prediction_window_bounds_how_far_ahead_a_peer_steps() {
    let mut p = Pair::new(rollback(0), 20, changing);
    p.run_ms(1_000);
    let stalls = p.s[0].stats().stall_ticks;
    // Seat 1 goes silent for half a second: seat 0 steps at most 8 frames
    // past the newest it confirmed, and stalls.
    p.cut[1] = true;
    for _ in 0..500 {
        p.step();
        let s = &p.s[0];
        assert!(s.next_step() <= s.confirmed_before() + 8);
    }
    assert!(p.s[0].stats().stall_ticks > stalls + 20);
    p.cut[1] = false;
    p.run_ms(2_000);
    assert_eq!(p.desyncs, 0);
    assert!(p.s[0].next_step() >= p.s[0].next_local_frame().saturating_sub(2));
}

#[test]
fn lockstep_never_predicts_and_is_the_default() {
    assert_eq!(Config::new(2, SeatId(0)).mode, Mode::Lockstep);
    let mut p = Pair::new(Mode::Lockstep, 50, changing);
    p.run_ms(3_000);
    assert_eq!(p.desyncs, 0);
    for app in &p.apps {
        assert_eq!(app.predicted, 0);
        assert!(app.rollbacks.is_empty());
    }
}

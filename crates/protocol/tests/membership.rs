//! Membership at the session level, on virtual time: the side of a split
//! match that is a quorum drops the others and plays on, a seat left in a
//! minority stops (`Event::LostQuorum`) and never settles a frame the
//! majority plays otherwise, a paused seat learns on waking that it was
//! dropped, a seat alone plays on unchecked only if the match allows it,
//! and a restarted process takes back a seat only once the majority has
//! dropped it.
//!
//! The app is a toy: its state is a running hash of every input it
//! stepped, so two seats that stepped a frame with other inputs hold other
//! checksums for it.

use std::collections::BTreeMap;

use lockstep_fx::Checksum;
use lockstep_protocol::input::Buttons;
use lockstep_protocol::{
    Config, Event, InputDelay, Instant, LeaveReason, Mode, Rollback, SeatEvent, SeatId, SeatSet,
    Session, TimeoutReason,
};

type S = Session<Buttons>;

#[derive(Default)]
struct App {
    state: u64,
    /// The state after each frame stepped (the newest try).
    after: BTreeMap<u32, u64>,
    checksums: BTreeMap<u32, Checksum>,
    /// The frames stepped after the session closed (must stay empty).
    stepped_after_stop: u32,
}

impl App {
    fn checksum(state: u64) -> Checksum {
        Checksum::of(&state.to_le_bytes())
    }

    fn step(&mut self, frame: u32, inputs: &[Buttons]) -> Checksum {
        let mut state = match frame.checked_sub(1) {
            Some(f) => self.after.get(&f).copied().unwrap_or(self.state),
            None => 0,
        };
        for b in inputs {
            state = state
                .wrapping_mul(0x100_0000_01b3)
                .wrapping_add(u64::from(b.0) + 1);
        }
        self.state = state;
        self.after.insert(frame, state);
        let c = App::checksum(state);
        self.checksums.insert(frame, c);
        c
    }
}

/// What reached a paused seat: sender and bytes, in arrival order.
type Backlog = Vec<(usize, Vec<u8>)>;

/// One process in a seat.
struct Seat {
    s: S,
    app: App,
    closed: bool,
}

/// Sessions on a network with a fixed one-way latency, cuttable links,
/// and seats that can be paused (they take no timeouts and send nothing;
/// what reaches them queues and is handled when they wake).
struct Mesh {
    seats: Vec<Seat>,
    now: Instant,
    latency: u64,
    wire: BTreeMap<(Instant, u64), (usize, usize, Vec<u8>)>,
    sent: u64,
    /// `cut[from][to]`: datagrams on that link are lost.
    cut: Vec<Vec<bool>>,
    paused: Vec<Option<Backlog>>,
    events: Vec<(Instant, usize, Event<Buttons>)>,
}

impl Mesh {
    fn new(seats: u8, latency_ms: u64, cfg: impl Fn(&mut Config)) -> Mesh {
        let n = usize::from(seats);
        let seats = (0..seats)
            .map(|i| {
                let mut c = Config::new(seats, SeatId(i));
                cfg(&mut c);
                Seat {
                    s: S::new(c, 500 + u32::from(i)).unwrap(),
                    app: App::default(),
                    closed: false,
                }
            })
            .collect();
        Mesh {
            seats,
            now: Instant::ZERO,
            latency: latency_ms * 1000,
            wire: BTreeMap::new(),
            sent: 0,
            cut: vec![vec![false; n]; n],
            paused: vec![None; n],
            events: Vec::new(),
        }
    }

    /// Cuts (or mends) every link between `a` and the others.
    fn isolate(&mut self, side: &[usize], cut: bool) {
        let n = self.seats.len();
        for from in 0..n {
            for to in 0..n {
                if side.contains(&from) != side.contains(&to) {
                    self.cut[from][to] = cut;
                }
            }
        }
    }

    fn answer(&mut self, i: usize) {
        let now = self.now;
        let seat = &mut self.seats[i];
        while let Some(e) = seat.s.poll_event() {
            match e {
                Event::InputNeeded { frame } => {
                    let b = Buttons::scripted(i as u8, frame);
                    seat.s.add_local_input(frame, b).unwrap();
                }
                Event::Frame { frame, inputs, .. } => {
                    if seat.closed {
                        seat.app.stepped_after_stop += 1;
                    }
                    let c = seat.app.step(frame, &inputs);
                    seat.s.report_checksum(frame, c).unwrap();
                }
                Event::Rollback { .. } => {}
                Event::StateRequested => {
                    if let Some(f) = seat.s.newest_reported() {
                        let state = seat.app.after[&f];
                        seat.s.provide_state(now, f, &state.to_le_bytes()).unwrap();
                    }
                }
                Event::LoadState { frame, state, .. } => {
                    let v = u64::from_le_bytes(state[..8].try_into().unwrap());
                    seat.app.state = v;
                    seat.app.after.insert(frame, v);
                    seat.app.checksums.insert(frame, App::checksum(v));
                }
                other => {
                    if matches!(other, Event::LostQuorum { .. }) {
                        seat.closed = true;
                    }
                    self.events.push((now, i, other));
                }
            }
        }
        // Keep the toy's memory small: the frames a resync can reach.
        while seat.app.after.len() > 2000 {
            seat.app.after.pop_first();
        }
    }

    fn transmit(&mut self, i: usize) {
        while let Some(t) = self.seats[i].s.poll_transmit(self.now) {
            let to = t.to.index();
            self.sent += 1;
            if !self.cut[i][to] {
                let at = self.now.plus(self.latency);
                self.wire.insert((at, self.sent), (i, to, t.bytes));
            }
        }
    }

    fn deliver(&mut self, from: usize, to: usize, bytes: &[u8]) {
        self.seats[to]
            .s
            .handle_datagram(self.now, SeatId(from as u8), bytes);
        self.answer(to);
        self.transmit(to);
    }

    /// Runs until `until`, jumping from one due timeout or delivery to
    /// the next.
    fn run_until(&mut self, until: Instant) {
        loop {
            while let Some(entry) = self.wire.first_entry() {
                if entry.key().0 > self.now {
                    break;
                }
                let (from, to, bytes) = entry.remove();
                match &mut self.paused[to] {
                    Some(queue) => queue.push((from, bytes)),
                    None => self.deliver(from, to, &bytes),
                }
            }
            for i in 0..self.seats.len() {
                if self.paused[i].is_some() {
                    continue;
                }
                if self.seats[i]
                    .s
                    .poll_timeout()
                    .is_some_and(|t| t <= self.now)
                {
                    self.seats[i].s.handle_timeout(self.now);
                }
                self.answer(i);
                self.transmit(i);
            }
            let next = (0..self.seats.len())
                .filter(|&i| self.paused[i].is_none())
                .filter_map(|i| self.seats[i].s.poll_timeout())
                .chain(self.wire.keys().next().map(|k| k.0))
                .min()
                .unwrap_or(until);
            if self.now >= until {
                return;
            }
            self.now = next.max(self.now.plus(1)).min(until);
        }
    }

    fn run_ms(&mut self, ms: u64) {
        let until = self.now.plus(ms * 1000);
        self.run_until(until);
    }

    fn pause(&mut self, i: usize) {
        self.paused[i] = Some(Vec::new());
    }

    /// Wakes seat `i`: what queued up is handled first, then its timers.
    fn wake(&mut self, i: usize) {
        for (from, bytes) in self.paused[i].take().unwrap_or_default() {
            self.deliver(from, i, &bytes);
        }
    }

    fn lost_quorum(&self, i: usize) -> Option<(u32, SeatSet, SeatSet)> {
        self.events.iter().find_map(|(_, s, e)| match e {
            Event::LostQuorum { frame, live, heard } if *s == i => Some((*frame, *live, *heard)),
            _ => None,
        })
    }

    fn dropped(&self, i: usize) -> Vec<(SeatId, Option<u32>)> {
        self.events
            .iter()
            .filter_map(|(_, s, e)| match e {
                Event::Seat(SeatEvent::Dropped { seat, last_frame }) if *s == i => {
                    Some((*seat, *last_frame))
                }
                _ => None,
            })
            .collect()
    }

    /// Every pair of seats agrees on every frame both settled: no minority
    /// ever settles a frame the majority plays otherwise.
    fn assert_settled_frames_agree(&self) {
        for (i, a) in self.seats.iter().enumerate() {
            for (j, b) in self.seats.iter().enumerate().skip(i + 1) {
                let through = a.s.newest_clean().min(b.s.newest_clean());
                let Some(through) = through else { continue };
                for f in 0..=through {
                    let (x, y) = (a.app.checksums.get(&f), b.app.checksums.get(&f));
                    if let (Some(x), Some(y)) = (x, y) {
                        assert_eq!(x, y, "seats {i} and {j} settled frame {f} differently");
                    }
                }
            }
        }
        for (i, seat) in self.seats.iter().enumerate() {
            assert_eq!(
                seat.app.stepped_after_stop, 0,
                "seat {i} stepped after it stopped"
            );
        }
    }

    fn frame(&self, i: usize) -> u32 {
        self.seats[i].s.next_step()
    }
}

fn set(seats: &[u8]) -> SeatSet {
    let mut s = SeatSet::EMPTY;
    for &p in seats {
        s.insert(SeatId(p));
    }
    s
}

#[test]
fn of_two_seats_cut_apart_the_joiner_stops_and_the_host_plays_on_unchecked() {
    let mut m = Mesh::new(2, 20, |_| {});
    m.run_ms(2_000);
    m.isolate(&[1], true);
    m.run_ms(4_000);
    let (frame, live, heard) = m.lost_quorum(1).expect("seat 1 stops");
    assert_eq!((live, heard), (set(&[0, 1]), set(&[1])));
    assert_eq!(m.frame(1), frame, "nothing stepped after the stop");
    assert_eq!(m.lost_quorum(0), None);
    let dropped = m.dropped(0);
    assert_eq!(dropped.len(), 1);
    assert_eq!(dropped[0].0, SeatId(1));
    let from = m.seats[0].s.unchecked_from().expect("seat 0 plays alone");
    assert!(
        m.events
            .iter()
            .any(|(_, s, e)| *s == 0 && *e == Event::PlayingAlone { from })
    );
    assert_eq!(m.seats[0].s.live(), set(&[0]));
    let before = m.frame(0);
    m.isolate(&[1], false);
    m.run_ms(1_000);
    assert!(m.frame(0) > before + 50, "the host plays on");
    assert_eq!(m.frame(1), frame);
    m.assert_settled_frames_agree();
}

#[test]
fn without_play_on_alone_the_tie_breaker_stops_too() {
    let mut m = Mesh::new(2, 20, |c| c.play_on_alone = false);
    m.run_ms(2_000);
    m.isolate(&[1], true);
    m.run_ms(4_000);
    let (_, live, heard) = m
        .lost_quorum(0)
        .expect("seat 0 stops: alone is no quorum here");
    assert_eq!((live, heard), (set(&[0, 1]), set(&[0])));
    assert!(m.lost_quorum(1).is_some());
    assert!(m.dropped(0).is_empty());
    m.assert_settled_frames_agree();
}

#[test]
fn a_paused_joiner_learns_on_waking_that_it_was_dropped_and_stops() {
    let mut m = Mesh::new(2, 20, |_| {});
    m.run_ms(2_000);
    m.pause(1);
    m.run_ms(10_000);
    assert_eq!(m.dropped(0).len(), 1, "the host dropped the sleeper");
    let woke = m.now;
    m.wake(1);
    m.run_ms(1_000);
    // It drops the host at once: the host answers its first packets with a
    // notice naming it, and its clock, catching up ten seconds of ticks,
    // leaves more inputs unacked than the cap.
    let timed_out: Vec<_> = m
        .events
        .iter()
        .filter_map(|(at, s, e)| match e {
            Event::Seat(SeatEvent::Left {
                seat: peer,
                reason: LeaveReason::TimedOut(reason),
            }) if *s == 1 => Some((*at, *peer, *reason)),
            _ => None,
        })
        .collect();
    assert_eq!(timed_out.len(), 1, "{timed_out:?}");
    let (at, peer, reason) = timed_out[0];
    assert_eq!(peer, SeatId(0));
    assert!(matches!(
        reason,
        TimeoutReason::DroppedUs | TimeoutReason::TooManyUnacked
    ));
    assert!(
        at.since(woke) < 500_000,
        "within the goodbye grace of waking"
    );
    let (_, live, heard) = m.lost_quorum(1).expect("the sleeper stops");
    assert_eq!((live, heard), (set(&[0, 1]), set(&[1])));
    m.assert_settled_frames_agree();
}

#[test]
fn a_seat_dropped_while_it_slept_is_told_so_by_a_notice() {
    // Paused for 2.5 s: long enough to be dropped, too short for its
    // catching-up clock to leave 180 inputs unacked. Three seats: the two
    // others each answer its packets with a notice naming it.
    let mut m = Mesh::new(3, 20, |_| {});
    m.run_ms(2_000);
    m.pause(2);
    m.run_ms(2_500);
    assert_eq!(m.dropped(0).len(), 1);
    m.wake(2);
    m.run_ms(1_000);
    let reasons: Vec<_> = m
        .events
        .iter()
        .filter_map(|(_, s, e)| match e {
            Event::Seat(SeatEvent::Left {
                seat: peer,
                reason: LeaveReason::TimedOut(reason),
            }) if *s == 2 => Some((*peer, *reason)),
            _ => None,
        })
        .collect();
    assert!(!reasons.is_empty());
    assert!(
        reasons.iter().all(|(_, r)| *r == TimeoutReason::DroppedUs),
        "{reasons:?}"
    );
    let (_, live, heard) = m.lost_quorum(2).expect("the sleeper stops");
    assert_eq!((live, heard), (set(&[0, 1, 2]), set(&[2])));
    assert!(m.lost_quorum(0).is_none() && m.lost_quorum(1).is_none());
    m.assert_settled_frames_agree();
}

#[test]
fn a_partition_of_four_into_two_halves_leaves_the_half_with_seat_0() {
    let mut m = Mesh::new(4, 20, |_| {});
    m.run_ms(2_000);
    m.isolate(&[0, 1], true);
    m.run_ms(5_000);
    for i in [2, 3] {
        let (_, live, heard) = m.lost_quorum(i).expect("the half without seat 0 stops");
        assert_eq!(live, set(&[0, 1, 2, 3]));
        assert_eq!(heard, set(&[2, 3]).intersection(heard));
        assert!(heard.contains(SeatId(i as u8)));
    }
    for i in [0, 1] {
        assert_eq!(m.lost_quorum(i), None);
        let mut dropped: Vec<SeatId> = m.dropped(i).into_iter().map(|(s, _)| s).collect();
        dropped.sort();
        assert_eq!(dropped, vec![SeatId(2), SeatId(3)]);
        assert_eq!(m.seats[i].s.live(), set(&[0, 1]));
    }
    // Both dropping seats agree on each dropped seat's last frame.
    assert_eq!(
        m.dropped(0).into_iter().collect::<BTreeMap<_, _>>(),
        m.dropped(1).into_iter().collect::<BTreeMap<_, _>>()
    );
    let before = m.frame(0);
    m.isolate(&[0, 1], false);
    m.run_ms(1_000);
    assert!(m.frame(0) > before + 50);
    m.assert_settled_frames_agree();
}

#[test]
fn of_three_seats_the_two_that_hear_each_other_play_on_without_the_host() {
    let mut m = Mesh::new(3, 20, |_| {});
    m.run_ms(2_000);
    m.isolate(&[0], true);
    m.run_ms(5_000);
    let (_, live, heard) = m
        .lost_quorum(0)
        .expect("seat 0 alone is a minority of three");
    assert_eq!((live, heard), (set(&[0, 1, 2]), set(&[0])));
    for i in [1, 2] {
        assert_eq!(m.lost_quorum(i), None);
        assert_eq!(m.seats[i].s.live(), set(&[1, 2]));
        assert_eq!(
            m.seats[i].s.unchecked_from(),
            None,
            "two seats still check each other"
        );
    }
    let before = m.frame(1);
    m.run_ms(1_000);
    assert!(m.frame(1) > before + 50);
    m.assert_settled_frames_agree();
}

#[test]
fn successive_drops_count_against_the_seats_live_before_each() {
    // Four seats: seat 3 is cut off and dropped by the three others; then
    // seat 2 is: {0, 1} holds two of the three seats then live.
    let mut m = Mesh::new(4, 20, |_| {});
    m.run_ms(2_000);
    m.isolate(&[3], true);
    m.run_ms(5_000);
    assert!(m.lost_quorum(3).is_some());
    assert_eq!(m.seats[0].s.live(), set(&[0, 1, 2]));
    m.isolate(&[2], true);
    m.run_ms(5_000);
    let (_, live, heard) = m
        .lost_quorum(2)
        .expect("seat 2 alone is a minority of three");
    assert_eq!((live, heard), (set(&[0, 1, 2]), set(&[2])));
    for i in [0, 1] {
        assert_eq!(m.lost_quorum(i), None);
        assert_eq!(m.seats[i].s.live(), set(&[0, 1]));
    }
    // And then seat 0 alone, the tie-breaker of the two left, plays on.
    m.isolate(&[1], true);
    m.run_ms(5_000);
    assert!(m.lost_quorum(1).is_some());
    assert_eq!(m.lost_quorum(0), None);
    assert!(m.seats[0].s.unchecked_from().is_some());
    m.assert_settled_frames_agree();
}

#[test]
fn when_only_one_direction_fails_one_quorum_plays_on() {
    // Seat 2 stops hearing seat 0; seat 0 still hears seat 2. Seat 1 still
    // hears seat 0, so it does not join seat 2's drop of it: seat 2, its
    // drop unjoined, is the seat cut off and gives up; seats 0 and 1 drop
    // it and play on.
    let mut m = Mesh::new(3, 20, |_| {});
    m.run_ms(2_000);
    m.cut[0][2] = true;
    m.run_ms(8_000);
    let stopped: Vec<usize> = (0..3).filter(|&i| m.lost_quorum(i).is_some()).collect();
    assert_eq!(stopped, vec![2], "{:?}", m.events);
    let (_, _, heard) = m.lost_quorum(2).unwrap();
    assert_eq!(heard, set(&[2]), "nobody joined its drop of seat 0");
    for i in [0, 1] {
        assert_eq!(m.seats[i].s.live(), set(&[0, 1]));
    }
    let before = m.frame(0);
    m.run_ms(1_000);
    assert!(m.frame(0) > before + 50);
    m.assert_settled_frames_agree();
}

#[test]
fn a_link_lost_between_two_of_five_seats_costs_one_seat_not_the_match() {
    // Seats 3 and 4 stop hearing each other both ways; the other three hear
    // everyone. Seat 3's drop of seat 4 is joined (the lower seat's word is
    // taken); seat 4's drop of seat 3 is not, so seat 4 alone leaves and
    // the rest play on.
    let mut m = Mesh::new(5, 20, |_| {});
    m.run_ms(2_000);
    m.cut[3][4] = true;
    m.cut[4][3] = true;
    m.run_ms(8_000);
    for i in [0, 1, 2] {
        assert_eq!(m.lost_quorum(i), None, "{:?}", m.events);
    }
    let stopped: Vec<usize> = (0..5).filter(|&i| m.lost_quorum(i).is_some()).collect();
    assert_eq!(stopped, vec![4], "{:?}", m.events);
    for i in 0..4 {
        assert_eq!(m.seats[i].s.live(), set(&[0, 1, 2, 3]));
    }
    let before = m.frame(0);
    m.run_ms(1_000);
    assert!(m.frame(0) > before + 50, "the rest play on");
    m.assert_settled_frames_agree();
}

#[test]
fn a_seat_that_said_goodbye_has_no_say() {
    // The host of two quits: the joiner is the only voter left and plays
    // on alone (its frames unchecked), instead of losing a quorum.
    let mut m = Mesh::new(2, 20, |_| {});
    m.run_ms(2_000);
    let now = m.now;
    m.seats[0].s.disconnect(now);
    m.transmit(0);
    m.run_ms(3_000);
    assert_eq!(m.lost_quorum(1), None);
    assert!(m.events.iter().any(|(_, s, e)| *s == 1
        && matches!(
            e,
            Event::Seat(SeatEvent::Left {
                seat: SeatId(0),
                reason: LeaveReason::Disconnected
            })
        )));
    assert!(m.seats[1].s.unchecked_from().is_some());
    assert!(m.frame(1) > 200);
}

#[test]
fn in_rollback_mode_a_minority_stops_instead_of_predicting_forever() {
    let rollback = Mode::Rollback(Rollback {
        input_delay: InputDelay::Fixed(2),
        ..Rollback::DEFAULT
    });
    let mut m = Mesh::new(2, 20, |c| c.mode = rollback);
    m.run_ms(2_000);
    m.isolate(&[1], true);
    let mut most_ahead = 0;
    for _ in 0..40 {
        m.run_ms(100);
        let s = &m.seats[1].s;
        most_ahead = most_ahead.max(s.next_step() - s.confirmed_before());
    }
    assert!(
        most_ahead <= 8,
        "at most the prediction window: {most_ahead}"
    );
    let (frame, _, _) = m.lost_quorum(1).expect("seat 1 stops");
    assert_eq!(m.frame(1), frame);
    assert!(m.seats[1].s.newest_clean() < Some(m.seats[1].s.confirmed_before()));
    assert!(m.lost_quorum(0).is_none());
    m.assert_settled_frames_agree();
}

#[test]
fn a_restarted_process_takes_back_a_seat_only_once_the_majority_dropped_it() {
    // Seat 1 stops hearing seat 0 and loses its quorum while seat 0 still
    // hears it; seat 0 drops seat 1 only when that silence times out. The
    // new process of seat 1 greets seat 0 at once: refused (wrong token)
    // until the drop, then taken back.
    let mut m = Mesh::new(2, 20, |_| {});
    m.run_ms(2_000);
    m.cut[0][1] = true;
    while m.lost_quorum(1).is_none() {
        m.run_ms(50);
    }
    assert!(m.dropped(0).is_empty(), "seat 0 has not dropped seat 1 yet");
    let mut c = Config::new(2, SeatId(1));
    c.rejoin = true;
    m.seats[1] = Seat {
        s: S::new(c, 9_999).unwrap(),
        app: App::default(),
        closed: false,
    };
    m.cut[0][1] = false;
    m.run_ms(300);
    let refused = m.seats[0].s.stats().dropped.wrong_token;
    assert!(refused > 0, "greetings before the drop are refused");
    assert!(
        !m.events
            .iter()
            .any(|(_, _, e)| matches!(e, Event::Seat(SeatEvent::Returned { .. })))
    );
    m.run_ms(4_000);
    let dropped_at = m
        .events
        .iter()
        .find(|(_, s, e)| *s == 0 && matches!(e, Event::Seat(SeatEvent::Dropped { .. })))
        .map(|(at, ..)| *at)
        .expect("seat 0 dropped seat 1");
    let returned: Vec<_> = m
        .events
        .iter()
        .filter_map(|(at, s, e)| match e {
            Event::Seat(SeatEvent::Returned { seat, frame }) => Some((*at, *s, *seat, *frame)),
            _ => None,
        })
        .collect();
    assert_eq!(returned.len(), 2, "{returned:?}");
    assert!(
        returned
            .iter()
            .all(|(at, _, seat, _)| *at > dropped_at && *seat == SeatId(1))
    );
    assert_eq!(m.seats[0].s.live(), set(&[0, 1]));
    assert_eq!(m.seats[0].s.unchecked_from(), None, "checked again");
    let back = returned[0].3;
    m.run_ms(2_000);
    assert!(m.frame(1) > back + 60, "the new process plays on");
    assert!(m.seats[1].s.newest_clean() > Some(back));
    m.assert_settled_frames_agree();
}

#[test]
fn two_seats_cut_off_together_both_take_their_seats_back() {
    // {2, 3} lose the match to {0, 1}; their restarted processes greet the
    // host once the partition heals. Whichever returns first learns from
    // the host that the other is absent, and takes it back in turn.
    let mut m = Mesh::new(4, 20, |_| {});
    m.run_ms(2_000);
    m.isolate(&[0, 1], true);
    m.run_ms(5_000);
    assert!(m.lost_quorum(2).is_some() && m.lost_quorum(3).is_some());
    assert_eq!(m.seats[0].s.live(), set(&[0, 1]));
    for i in [2u8, 3] {
        let mut c = Config::new(4, SeatId(i));
        c.rejoin = true;
        m.seats[usize::from(i)] = Seat {
            s: S::new(c, 7_000 + u32::from(i)).unwrap(),
            app: App::default(),
            closed: false,
        };
    }
    m.isolate(&[0, 1], false);
    m.run_ms(4_000);
    let returned: Vec<_> = m
        .events
        .iter()
        .filter_map(|(_, s, e)| match e {
            Event::Seat(SeatEvent::Returned { seat, frame }) => Some((*s, *seat, *frame)),
            _ => None,
        })
        .collect();
    // Each return is seen by the host, the other seat of the majority, the
    // returning process, and the other returning process once it is back.
    for seat in [SeatId(2), SeatId(3)] {
        let seen: Vec<usize> = returned
            .iter()
            .filter(|r| r.1 == seat)
            .map(|r| r.0)
            .collect();
        assert!(
            seen.contains(&0) && seen.contains(&1) && seen.contains(&seat.index()),
            "{returned:?}"
        );
    }
    for i in 0..4 {
        assert_eq!(m.seats[i].s.live(), set(&[0, 1, 2, 3]), "seat {i}");
    }
    let frames: Vec<u32> = (0..4).map(|i| m.frame(i)).collect();
    m.run_ms(1_000);
    for (i, before) in frames.into_iter().enumerate() {
        assert!(m.frame(i) > before + 50, "seat {i} plays on");
    }
    m.assert_settled_frames_agree();
}

#[test]
fn no_seat_is_taken_back_from_a_frame_past_the_match_end() {
    // The same drop and restart as above, in matches of several lengths
    // ending near the drop: a return is announced only from a frame the
    // match still plays.
    let mut refused = 0;
    for frames in (200..=420).step_by(20) {
        let mut m = Mesh::new(2, 20, |c| c.match_frames = Some(frames));
        m.run_ms(2_000);
        m.cut[0][1] = true;
        m.cut[1][0] = true;
        while m.lost_quorum(1).is_none() && m.frame(0) < frames {
            m.run_ms(50);
        }
        let mut c = Config::new(2, SeatId(1));
        c.rejoin = true;
        c.match_frames = Some(frames);
        m.seats[1] = Seat {
            s: S::new(c, 9_999).unwrap(),
            app: App::default(),
            closed: false,
        };
        m.cut[0][1] = false;
        m.cut[1][0] = false;
        m.run_ms(6_000);
        let back: Vec<u32> = m
            .events
            .iter()
            .filter_map(|(_, _, e)| match e {
                Event::Seat(SeatEvent::Returned { frame, .. }) => Some(*frame),
                _ => None,
            })
            .collect();
        assert!(back.iter().all(|f| *f < frames), "{frames}: {back:?}");
        if back.is_empty() {
            refused += 1;
        }
    }
    assert!(refused > 0, "some match ended too soon for a return");
}

//! Disputes and the end of a match, at the session: two seats disagree,
//! each reports what its second run of the disputed frames found (its
//! Evidence may be lost on the way), the fault is attributed by evidence
//! or nobody is blamed; a match declared invalid reaches every seat, and a
//! stopped session steps, samples and sends nothing but what it owes.

use std::collections::BTreeMap;

use lockstep_fx::{Checksum, Rng};
use lockstep_protocol::input::Buttons;
use lockstep_protocol::packet::{Kind, Packet};
use lockstep_protocol::{
    Cause, Config, Event, Instant, Invalidation, ResyncFailure, SeatId, SelfCheck, Session,
};

/// Two sessions on a 20 ms link that loses a share of the integrity
/// messages; seat `wrong`'s app computes another checksum from frame 100
/// on, and answers a dispute with `check`.
struct Pair {
    s: Vec<Session<Buttons>>,
    now: Instant,
    wire: BTreeMap<(u64, u64), (usize, u8, Vec<u8>)>,
    sent: u64,
    rng: Rng,
    /// Per mille of integrity messages lost.
    lose_permille: u32,
    events: Vec<Vec<Event<Buttons>>>,
    stepped_after_stop: [u32; 2],
    sent_after_stop: [Vec<Kind>; 2],
}

impl Pair {
    fn new(lose_permille: u32) -> Pair {
        Pair {
            s: (0..2)
                .map(|i| Session::new(Config::new(2, SeatId(i)), 50 + u32::from(i)).unwrap())
                .collect(),
            now: Instant::ZERO,
            wire: BTreeMap::new(),
            sent: 0,
            rng: Rng::new(3, 4),
            lose_permille,
            events: vec![Vec::new(), Vec::new()],
            stepped_after_stop: [0; 2],
            sent_after_stop: [Vec::new(), Vec::new()],
        }
    }

    fn run(&mut self, until_ms: u64, wrong: usize, check: [SelfCheck; 2]) {
        while self.now.as_micros() < until_ms * 1000 {
            let due: Vec<_> = self
                .wire
                .range(..=(self.now.as_micros(), u64::MAX))
                .map(|(k, _)| *k)
                .collect();
            for k in due {
                let (to, from, bytes) = self.wire.remove(&k).unwrap();
                self.s[to].handle_datagram(self.now, SeatId(from), &bytes);
            }
            for (i, ours) in check.into_iter().enumerate() {
                if self.s[i].poll_timeout().is_some_and(|t| t <= self.now) {
                    self.s[i].handle_timeout(self.now);
                }
                while let Some(e) = self.s[i].poll_event() {
                    match &e {
                        Event::InputNeeded { frame } => {
                            self.s[i].add_local_input(*frame, Buttons(1)).unwrap();
                        }
                        Event::Frame { frame, .. } => {
                            if self.s[i].is_stopped() {
                                self.stepped_after_stop[i] += 1;
                            }
                            let bad = i == wrong && *frame >= 100;
                            let c = Checksum::of(&[u8::from(bad), *frame as u8]);
                            self.s[i].report_checksum(*frame, c).unwrap();
                        }
                        Event::StateRequested => {
                            // The state is the two bytes its checksum hashes.
                            let f = self.s[i].newest_reported().unwrap();
                            let bad = i == wrong && f >= 100;
                            let state = [u8::from(bad), f as u8];
                            self.s[i].provide_state(self.now, f, &state).unwrap();
                        }
                        Event::Disputed { frame, .. } => {
                            self.s[i].report_self_check(self.now, *frame, ours).unwrap();
                        }
                        Event::ResyncFailed {
                            reason: ResyncFailure::Unattributed { frame },
                        } => {
                            let inv = Invalidation {
                                first_frame: *frame,
                                cause: Cause::Unattributed,
                                seat: None,
                                play_on: false,
                            };
                            self.s[i].invalidate(self.now, inv).unwrap();
                        }
                        _ => {}
                    }
                    self.events[i].push(e);
                }
                while let Some(t) = self.s[i].poll_transmit(self.now) {
                    let kind = Packet::<Buttons>::decode(&t.bytes).map(|p| p.kind());
                    if self.s[i].is_stopped() {
                        self.sent_after_stop[i].push(kind.unwrap());
                    }
                    if kind == Ok(Kind::Integrity) && self.rng.below(1000) < self.lose_permille {
                        continue;
                    }
                    self.sent += 1;
                    self.wire.insert(
                        (self.now.as_micros() + 20_000, self.sent),
                        (t.to.index(), i as u8, t.bytes),
                    );
                }
            }
            self.now = self.now.plus(1_000);
        }
    }

    fn happened(&self, i: usize, f: impl Fn(&Event<Buttons>) -> bool) -> bool {
        self.events[i].iter().any(f)
    }
}

/// Seat 0 disagrees with itself (its second run differs): it is the one
/// that drifted and asks seat 1 for its state, even with half the
/// evidence lost on the way.
#[test]
fn the_seat_whose_second_run_disagrees_is_the_one_that_drifted() {
    let mut p = Pair::new(500);
    let check = [
        SelfCheck::Inconsistent { frame: 100 },
        SelfCheck::Consistent,
    ];
    p.run(3_000, 0, check);
    for i in 0..2 {
        assert!(
            p.happened(i, |e| matches!(
                e,
                Event::Desync {
                    authority: Some(SeatId(1)),
                    local_drifted,
                    ..
                } if *local_drifted == (i == 0)
            )),
            "seat {i}: {:?}",
            p.events[i]
                .iter()
                .filter(|e| !matches!(e, Event::Frame { .. } | Event::InputNeeded { .. }))
                .collect::<Vec<_>>()
        );
    }
    assert!(p.happened(0, |e| matches!(e, Event::LoadState { .. })));
    assert!(!p.happened(1, |e| matches!(e, Event::LoadState { .. })));
}

/// Both seats consistent: nobody is blamed, nobody is overwritten; the
/// seat that declares the match invalid stops, the other learns it and
/// stops too; a stopped session steps and samples nothing and sends only
/// Invalid, and only until the other seat has answered.
#[test]
fn with_no_evidence_nobody_is_overwritten_and_every_seat_stops() {
    let mut p = Pair::new(200);
    p.run(4_000, 0, [SelfCheck::Consistent, SelfCheck::Consistent]);
    for i in 0..2 {
        assert!(p.s[i].is_stopped(), "seat {i} still plays");
        assert!(p.happened(i, |e| matches!(
            e,
            Event::ResyncFailed {
                reason: ResyncFailure::Unattributed { frame: 100 }
            }
        )));
        assert!(!p.happened(i, |e| matches!(e, Event::LoadState { .. })));
        assert_eq!(p.s[i].invalidation().map(|v| v.first_frame), Some(100));
        assert_eq!(p.stepped_after_stop[i], 0);
        assert!(
            p.sent_after_stop[i].iter().all(|k| *k == Kind::Integrity),
            "{:?}",
            p.sent_after_stop[i]
        );
        // Both know: nothing is owed any more.
        assert_eq!(p.s[i].poll_timeout(), None);
    }
}

//! A match never lies, on virtual time: a desync is blamed by evidence,
//! never by seat number; one that cannot be healed stops every seat
//! (under the default policy) with `MatchInvalid`; a healed seat's replay
//! log records the match's trajectory, so every log of a healed match
//! verifies.

use lockstep_games::Demo;
use lockstep_games::cubes::{Cubes, CubesConfig};
use lockstep_peer::{DesyncPolicy, PeerEvent, SpectatorEvent, StopReason};
use lockstep_protocol::{Cause, ResyncFailure, SeatId};
use lockstep_sim::replay::{self, Note, ReplayLog, RunOptions, StopCause};
use lockstep_testkit::faulty::{Fault, Faulty, Recurring};
use lockstep_testkit::mesh::{self, Condition, Flip, Run, Scenario};
use lockstep_testkit::netsim::LinkConfig;
use lockstep_testkit::verdict;

type Game = Faulty<Cubes>;

fn small() -> CubesConfig {
    let mut c = Cubes::default_config();
    c.field.grid = 5;
    c
}

/// A 900-frame match of `seats` seats with `fault` in one seat's game,
/// played on until every frame settled (within two minutes).
fn faulty_scenario(seats: u8, link: LinkConfig, fault: Fault, policy: DesyncPolicy) -> Scenario {
    let mut s = Scenario::new(seats, 60 + u64::from(seats), link, 900);
    s.fault = Some(fault);
    s.policy = policy;
    s.settle = true;
    s.max_micros = 120_000_000;
    s
}

fn faulty(seats: u8, link: LinkConfig, fault: Fault, policy: DesyncPolicy) -> Run {
    mesh::run::<Game>(&faulty_scenario(seats, link, fault, policy), &small())
}

fn recurring(seat: u8, kind: Recurring) -> Fault {
    Fault {
        seat,
        kind,
        from_frame: 200,
        every: 45,
        until_frame: u32::MAX,
    }
}

/// The notes of seat `seat`'s log.
fn notes_of(run: &Run, seat: usize) -> Vec<Note> {
    log_of(run, seat)
        .notes()
        .iter()
        .map(|n| n.note.clone())
        .collect()
}

fn log_of(run: &Run, seat: usize) -> ReplayLog<<Cubes as lockstep_sim::Game>::Input> {
    replay::read(run.peers[seat].log.as_ref().expect("a log")).unwrap()
}

/// Every log of a match found invalid ends with a note saying so, at the
/// first divergent frame its seat knows of or later (frames compared
/// clean before the divergence was seen are logged).
fn logs_say_invalid(run: &Run) {
    for seat in 0..run.peers.len() {
        let log = log_of(run, seat);
        match log.stop() {
            Some(StopCause::MatchInvalid { first_frame }) => {
                let stopped = run.peers[seat].stopped.as_ref().map(StopReason::frame);
                assert_eq!(Some(*first_frame), stopped, "seat {seat}");
            }
            other => panic!("seat {seat}'s log stops with {other:?}"),
        }
    }
}

/// Every log verifies on its own and all hold the same checksums.
fn logs_verify(run: &Run) {
    for (seat, p) in run.peers.iter().enumerate() {
        let bytes = p
            .log
            .as_ref()
            .unwrap_or_else(|| panic!("seat {seat} has no log"));
        let log = replay::read::<<Cubes as lockstep_sim::Game>::Input>(bytes).unwrap();
        let outcome = replay::run::<Cubes>(&log, &RunOptions::default(), |_| {}).unwrap();
        assert!(
            outcome.verified(),
            "seat {seat}'s log: {:?}",
            outcome.first_mismatch
        );
    }
    let checks: Vec<Vec<_>> = run
        .peers
        .iter()
        .map(|p| {
            let log = replay::read::<<Cubes as lockstep_sim::Game>::Input>(p.log.as_ref().unwrap())
                .unwrap();
            (0..log.frames()).map(|f| log.check(f)).collect()
        })
        .collect();
    for c in &checks[1..] {
        let n = c.len().min(checks[0].len());
        assert_eq!(c[..n], checks[0][..n]);
    }
}

fn stopped_invalid(run: &Run) -> Vec<u32> {
    run.peers
        .iter()
        .enumerate()
        .map(|(seat, p)| match &p.stopped {
            Some(StopReason::MatchInvalid { first_frame, .. }) => *first_frame,
            other => panic!("seat {seat} ended {other:?}"),
        })
        .collect()
}

/// Virtual time from the first desync anywhere to the last seat's stop.
fn time_to_invalid(run: &Run) -> u64 {
    let first = run
        .events(|e| {
            matches!(e, PeerEvent::Desync { .. } | PeerEvent::ResyncFailed { .. }).then_some(())
        })
        .iter()
        .map(|(_, t, _)| *t)
        .min()
        .expect("a desync");
    let last = run
        .events(|e| matches!(e, PeerEvent::Stopped(_)).then_some(()))
        .iter()
        .map(|(_, t, _)| *t)
        .max()
        .expect("a stop");
    last.since(first)
}

/// A hash-order-like bug on seat 0 of two: its second run of the disputed
/// frames disagrees with its first, so it is the one healed (never seat
/// 1); it keeps drifting, so after three desyncs the match stops on both
/// seats, seconds after the first.
#[test]
fn a_recurring_self_inconsistent_bug_on_seat_0_stops_the_match_and_never_overwrites_seat_1() {
    let run = faulty(
        2,
        Condition::GOOD.link(),
        recurring(0, Recurring::SelfInconsistent),
        DesyncPolicy::Stop,
    );
    let frames = stopped_invalid(&run);
    assert_eq!(frames[0], frames[1]);
    assert_eq!(
        run.peers[1].stats.states_loaded, 0,
        "seat 1 was overwritten"
    );
    assert!(run.peers[0].stats.states_loaded >= 1);
    let failed = run.events(|e| match e {
        PeerEvent::ResyncFailed { reason } => Some(*reason),
        _ => None,
    });
    assert!(
        matches!(
            failed[..],
            [(SeatId(0), _, ResyncFailure::Recurring { desyncs: 3, .. })]
        ),
        "{failed:?}"
    );
    let inv = run.peers[1].invalidation.expect("seat 1 heard it");
    assert_eq!(
        (inv.cause, inv.seat),
        (Cause::Nondeterministic, Some(SeatId(0)))
    );
    // The faulty seat's report says which fields kept differing.
    let Some(StopReason::MatchInvalid {
        report: Some(report),
        ..
    }) = &run.peers[0].stopped
    else {
        panic!("seat 0 has no report");
    };
    let text = report.report.to_text();
    assert!(text.contains("fields that kept differing"), "{text}");
    // Every report of the match, heals and stops, names fields or says
    // what it could not compare; the honest seat stops with one too.
    let reports = run.events(|e| match e {
        PeerEvent::Healed {
            diagnosis: Some(d), ..
        }
        | PeerEvent::Stopped(StopReason::MatchInvalid {
            report: Some(d), ..
        }) => Some(d.report.clone()),
        _ => None,
    });
    assert!(reports.len() >= 3, "{reports:?}");
    for (_, _, r) in &reports {
        crate::lobby::assert_explained(r);
    }
    assert!(matches!(
        &run.peers[1].stopped,
        Some(StopReason::MatchInvalid {
            report: Some(_),
            ..
        })
    ));
    let micros = time_to_invalid(&run);
    assert!(micros < 10_000_000, "{micros} µs to MatchInvalid");
    logs_verify(&run);
    logs_say_invalid(&run);
    // Seat 0's log says which frames were healed (twice).
    let heals = log_of(&run, 0)
        .notes()
        .iter()
        .filter(|n| matches!(n.note, Note::Healed { .. }))
        .count();
    assert_eq!(heals, 2);
}

/// An `f32`-like bug consistent on seat 0's machine: both seats step the
/// disputed frames again and get their own result again. Nothing
/// attributes the fault, so nobody is overwritten: the match stops at the
/// first desync with both states compared.
#[test]
fn a_self_consistent_bug_between_two_seats_stops_with_both_states_and_overwrites_nobody() {
    let run = faulty(
        2,
        Condition::GOOD.link(),
        recurring(0, Recurring::SelfConsistent),
        DesyncPolicy::Stop,
    );
    stopped_invalid(&run);
    assert!(run.peers.iter().all(|p| p.stats.states_loaded == 0));
    for p in &run.peers {
        let Some(StopReason::MatchInvalid {
            report: Some(report),
            ..
        }) = &p.stopped
        else {
            panic!("no report: {:?}", p.stopped);
        };
        let text = report.report.to_text();
        assert!(text.contains("cannot tell which seat drifted"), "{text}");
        assert!(!report.report.after.is_empty(), "{text}");
        assert!(!text.contains("authority is seat 0"), "{text}");
    }
    assert_eq!(
        run.peers[0].invalidation.map(|i| i.cause),
        Some(Cause::Unattributed)
    );
    logs_verify(&run);
    logs_say_invalid(&run);
}

/// With three seats a majority decides; the seat that keeps drifting is
/// healed twice and then flagged as not deterministic.
#[test]
fn a_seat_that_keeps_drifting_among_three_is_flagged_and_every_seat_stops() {
    let run = faulty(
        3,
        Condition::GOOD.link(),
        recurring(2, Recurring::SelfConsistent),
        DesyncPolicy::Stop,
    );
    stopped_invalid(&run);
    assert_eq!(run.peers[2].stats.states_loaded, 2);
    assert!(run.peers[..2].iter().all(|p| p.stats.states_loaded == 0));
    assert_eq!(
        run.peers[0].invalidation.map(|i| (i.cause, i.seat)),
        Some((Cause::Nondeterministic, Some(SeatId(2))))
    );
    logs_verify(&run);
    logs_say_invalid(&run);
}

/// `Continue`: the match plays on, and every seat knows its frames from
/// the first divergent one are unchecked.
#[test]
fn under_continue_the_match_plays_on_unchecked() {
    let run = faulty(
        2,
        Condition::GOOD.link(),
        recurring(0, Recurring::SelfConsistent),
        DesyncPolicy::Continue,
    );
    assert!(run.peers.iter().all(|p| p.stopped.is_none()));
    assert!(run.common_frames() >= 900);
    let from: Vec<u32> = run
        .peers
        .iter()
        .map(|p| {
            let inv = p.invalidation.expect("unchecked");
            assert!(inv.play_on);
            inv.first_frame
        })
        .collect();
    assert_eq!(from[0], from[1]);
    // Every log says from which frame nothing was compared.
    for seat in 0..2 {
        let notes = notes_of(&run, seat);
        assert!(
            notes
                .iter()
                .any(|n| matches!(n, Note::Unchecked { from, .. } if *from == from_0(&run))),
            "{notes:?}"
        );
    }
}

fn from_0(run: &Run) -> u32 {
    run.peers[0].invalidation.map_or(0, |i| i.first_frame)
}

/// A one-off nondeterminism on seat 0 of two: evidence blames seat 0, which
/// loads seat 1's state; its log records the match's checksums for the
/// frames it got wrong, so both logs verify and agree.
#[test]
fn a_healed_seats_log_records_the_healed_trajectory() {
    let once = Fault {
        seat: 0,
        kind: Recurring::SelfInconsistent,
        from_frame: 300,
        every: u32::MAX,
        until_frame: 301,
    };
    for link in [LinkConfig::ideal(1_000), Condition::POOR.link()] {
        let run = faulty(2, link, once, DesyncPolicy::Stop);
        assert!(run.peers.iter().all(|p| p.stopped.is_none()));
        assert_eq!(run.peers[0].stats.states_loaded, 1);
        assert_eq!(run.peers[1].stats.states_loaded, 0);
        verdict::check::<Cubes>(&run, 900).unwrap();
        logs_verify(&run);
        // Seat 0's log says which frames it got wrong and took from seat 1.
        let notes = notes_of(&run, 0);
        assert!(
            matches!(notes[..], [Note::Healed { first: 300, loaded }] if loaded >= 300),
            "{notes:?}"
        );
        assert!(log_of(&run, 1).notes().is_empty());
    }
}

/// A bit flipped in seat 0's state (outside the simulation) of a two-seat
/// match: seat 0's second run disagrees with its first, so seat 0 is
/// healed — the host is no authority by rule any more.
#[test]
fn the_host_flipped_in_a_two_seat_match_is_the_one_healed() {
    let mut s = Scenario::new(2, 41, LinkConfig::ideal(1_000), 900);
    s.flip = Some(Flip {
        seat: SeatId(0),
        frame: 200,
        entity: "body 5".into(),
        field: "position".into(),
        bit: 20,
        repeat: false,
    });
    let run = mesh::run::<Cubes>(&s, &small());
    assert_eq!(run.peers[0].stats.states_loaded, 1);
    assert_eq!(run.peers[1].stats.states_loaded, 0);
    let healed = run.events(|e| match e {
        PeerEvent::Healed { diagnosis, .. } => Some(diagnosis.clone()),
        _ => None,
    });
    let report = healed[0].2.as_ref().expect("a report").report.to_text();
    assert!(
        report.contains("changed outside the simulation by the app"),
        "{report}"
    );
    verdict::check::<Cubes>(&run, 900).unwrap();
}

/// An `f32`-like one-off on seat 0 of two, consistent on its machine, in a
/// match with an arbiter (a spectator stepping the confirmed inputs on its
/// own): the self-checks cannot tell the seats apart, the arbiter's
/// checksum can. Seat 0 is healed to seat 1's state, whichever seat's
/// relay serves the arbiter; seat 1 is never overwritten and both logs
/// verify.
#[test]
fn with_an_arbiter_a_self_consistent_bug_on_seat_0_is_healed_to_seat_1() {
    let once = Fault {
        seat: 0,
        kind: Recurring::SelfConsistent,
        from_frame: 300,
        every: u32::MAX,
        until_frame: 301,
    };
    for (relay, link) in [
        (0, LinkConfig::ideal(1_000)),
        (1, LinkConfig::ideal(1_000)),
        (0, Condition::POOR.link()),
    ] {
        let relay = SeatId(relay);
        let mut s = faulty_scenario(2, link, once, DesyncPolicy::Stop);
        s.spectate = Some((relay, 60));
        s.session.arbiter = Some(relay);
        let run = mesh::run::<Game>(&s, &small());
        assert!(
            run.peers.iter().all(|p| p.stopped.is_none()),
            "relay {relay:?}: {:?}",
            run.peers.iter().map(|p| &p.stopped).collect::<Vec<_>>()
        );
        assert_eq!(run.peers[0].stats.states_loaded, 1, "relay {relay:?}");
        assert_eq!(run.peers[1].stats.states_loaded, 0, "relay {relay:?}");
        let spectator = run.spectator.as_ref().expect("the arbiter ran");
        let answered: Vec<u32> = spectator
            .events
            .iter()
            .filter_map(|(_, e)| match e {
                SpectatorEvent::Arbitrated {
                    frame,
                    short: Some(_),
                } => Some(*frame),
                _ => None,
            })
            .collect();
        assert_eq!(answered, [300], "relay {relay:?}");
        verdict::check::<Cubes>(&run, 900).unwrap();
        logs_verify(&run);
        let notes = notes_of(&run, 0);
        assert!(
            matches!(notes[..], [Note::Healed { first: 300, .. }]),
            "{notes:?}"
        );
    }
}

/// A match that names an arbiter that never connected: the arbiter's seat
/// answers "no word" at once, and the dispute ends as without an arbiter —
/// the match stops, nobody overwritten.
#[test]
fn an_arbiter_that_is_not_there_changes_nothing() {
    let mut s = faulty_scenario(
        2,
        Condition::GOOD.link(),
        recurring(0, Recurring::SelfConsistent),
        DesyncPolicy::Stop,
    );
    s.session.arbiter = Some(SeatId(1));
    let run = mesh::run::<Game>(&s, &small());
    stopped_invalid(&run);
    assert!(run.peers.iter().all(|p| p.stats.states_loaded == 0));
    assert_eq!(
        run.peers[0].invalidation.map(|i| i.cause),
        Some(Cause::Unattributed)
    );
    assert!(
        time_to_invalid(&run) < 3_000_000,
        "{}",
        time_to_invalid(&run)
    );
}

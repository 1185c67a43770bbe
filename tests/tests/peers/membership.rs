//! Membership with a quorum, with real peers over the simulated network:
//! a seat paused as by SIGSTOP, a host that dies, a network split in two.
//! The side holding a quorum plays on; a seat left in a minority stops
//! (`StopReason::LostQuorum`) and its log ends at the last frame a quorum
//! settled; its restarted process takes the seat back. No two logs part
//! without saying so (the verdict).

use lockstep_games::Demo;
use lockstep_games::cubes::{Cubes, CubesConfig};
use lockstep_games::rts::{Rts, RtsConfig};
use lockstep_peer::{PeerEvent, SeatEvent, StopReason};
use lockstep_protocol::{SeatId, SeatSet};
use lockstep_sim::Game;
use lockstep_sim::replay;
use lockstep_testkit::mesh::{self, Condition, Partition, Pause, PeerRun, Run, Scenario};
use lockstep_testkit::verdict;

fn tiny_cubes() -> CubesConfig {
    let mut c = Cubes::default_config();
    c.field.grid = 5;
    c
}

fn tiny_rts() -> RtsConfig {
    let mut c = Rts::default_config();
    c.units_per_player = 8;
    c
}

fn set(seats: &[u8]) -> SeatSet {
    let mut s = SeatSet::EMPTY;
    for &p in seats {
        s.insert(SeatId(p));
    }
    s
}

/// A short match (10 s of 60 Hz) on a good network.
fn scenario(seats: u8, seed: u64) -> Scenario {
    Scenario::new(seats, seed, Condition::GOOD.link(), 600)
}

/// A match long enough (20 s) for a seat cut off for 10 s to come back and
/// play a few seconds.
fn long_scenario(seats: u8, seed: u64) -> Scenario {
    Scenario::new(seats, seed, Condition::GOOD.link(), 1200)
}

/// The process that took `seat` back played on: it stepped two seconds of
/// frames at least and did not stop.
fn came_back(run: &Run, seat: usize) {
    let p = &run.peers[seat];
    assert!(
        p.rejoined && p.stopped.is_none(),
        "seat {seat}: {:?}",
        p.stopped
    );
    assert!(
        p.checksums.len() >= 120,
        "seat {seat} stepped {} frames",
        p.checksums.len()
    );
}

fn judge<G: Game>(run: &Run, frames: u32) {
    if let Err(e) = verdict::check::<G>(run, frames) {
        panic!("{e}");
    }
}

/// The frames a process's log holds.
fn logged<G: Game>(p: &PeerRun) -> u32 {
    replay::read::<G::Input>(p.log.as_ref().expect("a log"))
        .expect("the log reads")
        .frames()
}

/// The quorum a stopped process lost: the seats that counted and those it
/// still heard, and where its log ends.
fn lost(p: &PeerRun) -> (u32, SeatSet, SeatSet) {
    match &p.stopped {
        Some(StopReason::LostQuorum { frame, live, heard }) => (*frame, *live, *heard),
        other => panic!("expected a lost quorum, got {other:?}"),
    }
}

/// The processes that stopped, with their seats.
fn stopped(run: &Run) -> Vec<(SeatId, &PeerRun)> {
    run.processes()
        .filter(|(_, p)| p.stopped.is_some())
        .collect()
}

#[test]
fn a_joiner_paused_for_10_s_stops_on_waking_and_takes_its_seat_back() {
    let mut s = long_scenario(2, 51);
    s.pause = Some(Pause {
        seat: SeatId(1),
        frame: 120,
        micros: 10_000_000,
    });
    s.restart_stopped = true;
    let run = mesh::run::<Cubes>(&s, &tiny_cubes());
    judge::<Cubes>(&run, 1200);
    // The host dropped the sleeper and played on alone, unchecked, until
    // the seat came back.
    let host = &run.peers[0];
    assert_eq!(host.stopped, None);
    assert_eq!(host.unchecked_from.len(), 1, "{:?}", host.unchecked_from);
    assert!(
        run.events(|e| matches!(
            e,
            PeerEvent::Seat(SeatEvent::Dropped {
                seat: SeatId(1),
                ..
            })
        )
        .then_some(()))
            .len()
            == 1
    );
    // The sleeper woke up and stopped: it did not play on alone.
    let gone = stopped(&run);
    assert_eq!(gone.len(), 1);
    let (seat, sleeper) = gone[0];
    assert_eq!(seat, SeatId(1));
    let (frame, live, heard) = lost(sleeper);
    assert_eq!((live, heard), (set(&[0, 1]), set(&[1])));
    assert_eq!(
        logged::<Cubes>(sleeper),
        frame,
        "its log ends where it stopped"
    );
    assert!(frame >= 100, "it logged what was settled before the pause");
    // Its restarted process took the seat back and played to the end.
    came_back(&run, 1);
}

#[test]
fn an_rts_seat_of_four_paused_for_10_s_stops_on_waking_and_the_others_play_on() {
    let mut s = scenario(4, 52);
    s.pause = Some(Pause {
        seat: SeatId(3),
        frame: 120,
        micros: 10_000_000,
    });
    let run = mesh::run::<Rts>(&s, &tiny_rts());
    judge::<Rts>(&run, 600);
    let gone = stopped(&run);
    assert_eq!(gone.len(), 1);
    assert_eq!(gone[0].0, SeatId(3));
    let (frame, live, heard) = lost(gone[0].1);
    assert_eq!(live, set(&[0, 1, 2, 3]));
    assert!(heard.len() <= 2 && heard.contains(SeatId(3)), "{heard:?}");
    assert_eq!(logged::<Rts>(gone[0].1), frame);
    for p in &run.peers[..3] {
        assert_eq!(p.stopped, None);
        assert!(
            p.unchecked_from.is_empty(),
            "three seats still check each other"
        );
        assert!(logged::<Rts>(p) >= 599);
    }
}

#[test]
fn the_joiner_of_a_host_that_died_stops_instead_of_playing_on() {
    let mut s = scenario(2, 53);
    s.vanish = Some((SeatId(0), 120));
    let run = mesh::run::<Cubes>(&s, &tiny_cubes());
    judge::<Cubes>(&run, 600);
    let joiner = &run.peers[1];
    let (frame, live, heard) = lost(joiner);
    assert_eq!((live, heard), (set(&[0, 1]), set(&[1])));
    assert!(frame <= 200, "it stopped where the host died, at {frame}");
    assert_eq!(logged::<Cubes>(joiner), frame);
    assert!(joiner.unchecked_from.is_empty());
    assert_eq!(run.remaining().count(), 0, "nobody plays on");
}

#[test]
fn a_partition_of_four_into_two_halves_for_10_s_leaves_the_half_with_seat_0() {
    let mut s = long_scenario(4, 54);
    s.partition = Some(Partition {
        side: set(&[0, 1]),
        frame: 120,
        micros: 10_000_000,
    });
    s.restart_stopped = true;
    let run = mesh::run::<Rts>(&s, &tiny_rts());
    judge::<Rts>(&run, 1200);
    let gone = stopped(&run);
    let mut seats: Vec<SeatId> = gone.iter().map(|(s, _)| *s).collect();
    seats.sort();
    assert_eq!(seats, vec![SeatId(2), SeatId(3)]);
    for (_, p) in &gone {
        let (frame, live, heard) = lost(p);
        assert_eq!(live, set(&[0, 1, 2, 3]));
        assert_eq!(heard.intersection(set(&[0, 1])), SeatSet::EMPTY);
        assert_eq!(logged::<Rts>(p), frame);
    }
    for p in &run.peers[..2] {
        assert_eq!(p.stopped, None);
        assert!(p.unchecked_from.is_empty());
    }
    // Once the network healed, both restarted processes took their seats
    // back (one after the other) and played to the end.
    came_back(&run, 2);
    came_back(&run, 3);
}

#[test]
fn three_seats_split_one_against_two_leave_the_two_playing_without_the_host() {
    let mut s = long_scenario(3, 55);
    s.partition = Some(Partition {
        side: set(&[0]),
        frame: 120,
        micros: 10_000_000,
    });
    s.restart_stopped = true;
    let run = mesh::run::<Cubes>(&s, &tiny_cubes());
    judge::<Cubes>(&run, 1200);
    let gone = stopped(&run);
    assert_eq!(gone.len(), 1);
    assert_eq!(gone[0].0, SeatId(0));
    let (frame, live, heard) = lost(gone[0].1);
    assert_eq!((live, heard), (set(&[0, 1, 2]), set(&[0])));
    assert_eq!(logged::<Cubes>(gone[0].1), frame);
    for p in &run.peers[1..] {
        assert_eq!(p.stopped, None);
        assert!(p.unchecked_from.is_empty());
    }
    // The former host's restarted process came back through seat 1, the
    // host now.
    came_back(&run, 0);
    let returned = run.events(|e| match e {
        PeerEvent::Seat(SeatEvent::Returned { seat, .. }) => Some(*seat),
        _ => None,
    });
    assert!(
        returned.iter().all(|(_, _, s)| *s == SeatId(0)) && returned.len() == 3,
        "{returned:?}"
    );
}

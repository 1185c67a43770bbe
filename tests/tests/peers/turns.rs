//! Communication turns (`Config::turn_frames`): the inputs of a turn travel
//! in one packet per peer, in lockstep and in rollback mode, and the
//! matches agree exactly as with a packet at every tick, with a fraction
//! of the packets. And the pace of a match (`lockstep_protocol`'s `pace`):
//! a seat too slow for the tick slows every seat down together.

use lockstep_games::Demo;
use lockstep_games::rts::{Rts, RtsConfig};
use lockstep_protocol::packet::Kind;
use lockstep_protocol::{InputDelay, Mode, Rollback};
use lockstep_sim::Game;
use lockstep_testkit::mesh::{self, Condition, Run, Scenario};
use lockstep_testkit::verdict;

fn small_rts() -> RtsConfig {
    let mut c = Rts::default_config();
    c.units_per_player = 24;
    c
}

fn play(seats: u8, turn: u32, mode: Mode, frames: u32) -> Run {
    let mut s = Scenario::new(seats, 40 + u64::from(turn), Condition::GOOD.link(), frames);
    s.session.turn_frames = turn;
    s.session.mode = mode;
    mesh::run::<Rts>(&s, &small_rts())
}

fn assert_agree<G: Game>(run: &Run, frames: u32) {
    if let Err(e) = verdict::check::<G>(run, frames) {
        panic!("{e}");
    }
}

/// Inputs packets seat 0 sent.
fn inputs_packets(run: &Run) -> u64 {
    run.peers[0].session.sent[Kind::Inputs as usize].packets
}

#[test]
fn turns_of_four_frames_send_a_quarter_of_the_inputs_packets_and_agree() {
    let frames = 600;
    let every = play(4, 1, Mode::Lockstep, frames);
    let turns = play(4, 4, Mode::Lockstep, frames);
    assert_agree::<Rts>(&every, frames);
    assert_agree::<Rts>(&turns, frames);
    let (a, b) = (inputs_packets(&every), inputs_packets(&turns));
    // Three peers, one packet per turn each (the run lasts a little past
    // `frames` while the last checksums are compared).
    assert!(b * 4 <= a + 3 * 8, "{b} packets with turns against {a}");
    assert!(b * 4 + 3 * 8 >= a, "{b} packets with turns against {a}");
    // A turn is sampled at its first tick, all four frames at once.
    let sampled = &turns.peers[0].sampled_at;
    for k in 10..(frames / 4 - 10) {
        let first = sampled[&(4 * k)];
        for j in 1..4 {
            assert_eq!(sampled[&(4 * k + j)], first, "frame {}", 4 * k + j);
        }
        assert!(sampled[&(4 * k + 4)] > first);
    }
    // A command waits for the next turn (two ticks on average) but the
    // delay only covers the trip, without the margin of a frame sampled
    // every tick, so it is applied about as soon.
    let median = |r: &Run| {
        let mut l = r.peers[0].command_latency_micros(60, 1_000);
        l.sort_unstable();
        l[l.len() / 2]
    };
    let tick = 16_667;
    assert!(
        median(&turns) <= median(&every) + tick,
        "{} µs with turns against {} µs every tick",
        median(&turns),
        median(&every)
    );
}

#[test]
fn rollback_matches_agree_with_turns() {
    let mode = Mode::Rollback(Rollback {
        input_delay: InputDelay::Adaptive { min: 0, max: 12 },
        ..Rollback::DEFAULT
    });
    let run = play(2, 3, mode, 480);
    assert_agree::<Rts>(&run, 480);
    assert!(run.peers[0].stats.rollbacks > 0 || run.peers[1].stats.rollbacks > 0);
}

#[test]
fn a_turn_out_of_range_is_refused() {
    let mut c = lockstep_protocol::Config::new(2, lockstep_protocol::SeatId(0));
    for bad in [0, lockstep_protocol::MAX_TURN_FRAMES + 1] {
        c.turn_frames = bad;
        let refused =
            lockstep_protocol::Session::<lockstep_protocol::input::Buttons>::new(c.clone(), 7)
                .err()
                .map(|e| e.to_string());
        assert_eq!(refused.as_deref(), Some("turn_frames is out of range"));
    }
}

/// A 4-seat match at 20 Hz in which seat 2 takes 80 ms to step a frame
/// (the tick is 50 ms), reporting its step cost or not.
fn slow_seat(reports: bool) -> Run {
    let frames = 360;
    let mut s = Scenario::new(4, 77, Condition::GOOD.link(), frames);
    s.setup.tick_rate = 20;
    s.session.tick_micros = 50_000;
    s.session.turn_frames = 2;
    s.warmup_frames = 120;
    s.slow = Some(mesh::Slow {
        seat: lockstep_protocol::SeatId(2),
        step_micros: 80_000,
        reports,
    });
    s.max_micros = 120_000_000;
    let run = mesh::run::<Rts>(&s, &small_rts());
    assert_agree::<Rts>(&run, frames);
    run
}

#[test]
fn a_slow_seat_slows_the_pace_for_everyone_instead_of_stalling_the_match() {
    let without = slow_seat(false);
    let with = slow_seat(true);
    for (seat, p) in with.peers.iter().enumerate() {
        // 80 ms with a quarter of headroom: a 100 ms tick, 20 steps of 5%.
        assert_eq!(p.session.pace_steps, 20, "seat {seat}");
    }
    assert!(without.peers.iter().all(|p| p.session.pace_steps == 0));
    // Without the pace the slow seat's clock falls further and further
    // behind: its inputs come later each time, and the other seats' delay
    // grows by seconds; with it, the delay stays a few frames.
    let worst = |r: &Run| {
        r.peers
            .iter()
            .map(|p| p.session.max_delay_frames)
            .max()
            .unwrap_or(0)
    };
    assert!(
        worst(&with) * 4 < worst(&without),
        "a delay of {} frames with the pace against {} without",
        worst(&with),
        worst(&without)
    );
    assert!(
        with.stalls_after_warmup() * 4 < without.stalls_after_warmup(),
        "{} stalls with the pace against {} without",
        with.stalls_after_warmup(),
        without.stalls_after_warmup()
    );
}

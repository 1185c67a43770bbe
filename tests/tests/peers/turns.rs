//! Communication turns (`Config::turn_frames`): the inputs of a turn travel
//! in one packet per peer, in lockstep and in rollback mode, and the
//! matches agree exactly as with a packet at every tick, with a fraction
//! of the packets.

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
    // The playout delay covers the turn's wait.
    let delay = |r: &Run| r.peers[0].delay_frames.last().map_or(0, |d| d.1);
    assert!(
        delay(&turns) >= delay(&every) + 2,
        "{} against {}",
        delay(&turns),
        delay(&every)
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

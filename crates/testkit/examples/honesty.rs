//! How fast a match that cannot be healed stops, measured on virtual time:
//! a cube match (25 cubes) whose seat 0 (of two) or seat 2 (of three)
//! steps one frame in every 45 wrongly from frame 200, under the default
//! `Stop` policy, on three network conditions, over several seeds. For
//! each case: how the match ended on every seat, the virtual time from
//! its first desync to the last seat's stop (median and worst), the states
//! loaded by the faulty seat and by the others (always 0: nobody honest is
//! overwritten), and whether every log verified.
//!
//! `cargo run --release -p lockstep-testkit --features figures --example honesty -- [seeds]`

// A report: floats only format measured times, nothing flows back.
#![allow(clippy::float_arithmetic)]

use lockstep_games::Demo;
use lockstep_games::cubes::Cubes;
use lockstep_peer::{DesyncPolicy, PeerEvent, StopReason};
use lockstep_protocol::SeatId;
use lockstep_testkit::faulty::{Fault, Faulty, Recurring};
use lockstep_testkit::mesh::{self, Condition, Run, Scenario};
use lockstep_testkit::verdict;

/// Virtual time from the first desync anywhere to the last seat's stop.
fn to_invalid(run: &Run) -> Option<u64> {
    let first = run
        .events(|e| {
            matches!(e, PeerEvent::Desync { .. } | PeerEvent::ResyncFailed { .. }).then_some(())
        })
        .iter()
        .map(|(_, t, _)| *t)
        .min()?;
    let last = run
        .events(|e| matches!(e, PeerEvent::Stopped(_)).then_some(()))
        .iter()
        .map(|(_, t, _)| *t)
        .max()?;
    Some(last.since(first))
}

fn main() {
    let seeds: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(8);
    let mut config = Cubes::default_config();
    config.field.grid = 5;
    println!(
        "| seats | bug | network | stopped (all seats, MatchInvalid) | first desync → stop, median s | worst s | faulty seat loaded | others loaded | logs verify |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for (seats, seat) in [(2u8, 0u8), (3, 2)] {
        for (kind, name) in [
            (Recurring::SelfInconsistent, "self-inconsistent"),
            (Recurring::SelfConsistent, "self-consistent"),
        ] {
            for cond in [Condition::GOOD, Condition::POOR, Condition::AWFUL] {
                let mut times = Vec::new();
                let (mut stopped, mut faulty_loaded, mut others_loaded, mut verified) =
                    (0, 0, 0, 0);
                for seed in 0..seeds {
                    let mut s = Scenario::new(seats, 900 + seed, cond.link(), 1800);
                    s.fault = Some(Fault {
                        seat,
                        kind,
                        from_frame: 200,
                        every: 45,
                        until_frame: u32::MAX,
                    });
                    s.policy = DesyncPolicy::Stop;
                    s.max_micros = 300_000_000;
                    let run = mesh::run::<Faulty<Cubes>>(&s, &config);
                    let all = run
                        .peers
                        .iter()
                        .all(|p| matches!(p.stopped, Some(StopReason::MatchInvalid { .. })));
                    stopped += u32::from(all);
                    if let Some(t) = to_invalid(&run) {
                        times.push(t);
                    }
                    for (i, p) in run.peers.iter().enumerate() {
                        if SeatId(i as u8) == SeatId(seat) {
                            faulty_loaded += p.stats.states_loaded;
                        } else {
                            others_loaded += p.stats.states_loaded;
                        }
                    }
                    let ok = verdict::check::<Cubes>(&run, 1800);
                    verified += u32::from(ok.is_ok());
                }
                times.sort_unstable();
                let secs = |t: u64| t as f64 / 1e6;
                println!(
                    "| {seats} (bug on seat {seat}) | {name} | {} | {stopped}/{seeds} | {:.2} | {:.2} | {faulty_loaded} | {others_loaded} | {verified}/{seeds} |",
                    cond.name,
                    secs(times.get(times.len() / 2).copied().unwrap_or(0)),
                    secs(times.last().copied().unwrap_or(0)),
                );
            }
        }
    }
}

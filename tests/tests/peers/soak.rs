//! A sample of the soak (`lockstep_testkit::soak`): a few of its seeded
//! matches — either game, lockstep and rollback, up to 8 seats, networks up
//! to 2 s round trips and 25% loss, corrupted datagrams, clocks apart,
//! flipped bits, a paused seat and a partition — each must pass its
//! verdict. The full run of thousands is
//! `cargo run --release -p lockstep-testkit --example soak`.

use lockstep_testkit::soak;

#[test]
fn a_sample_of_soak_matches_passes() {
    let seeds = (0..SAMPLE).chain([PARTITIONED]);
    let plans: Vec<soak::Plan> = seeds.clone().map(soak::plan).collect();
    assert!(plans.iter().any(|p| p.scenario.pause.is_some()));
    assert!(plans.iter().any(|p| p.scenario.partition.is_some()));
    for seed in seeds {
        let o = soak::play(&soak::plan(seed));
        assert!(
            o.passed(),
            "soak seed {seed} ({} seats of {}, rollback {}): {:?}, {} false desync reports, \
             {} nondeterministic frames, {} refused calls",
            o.plan.scenario.setup.seats,
            soak::game_name(o.plan.game),
            o.plan.rollback(),
            o.failure.map(|f| f.to_string()),
            o.false_reports,
            o.nondeterministic,
            o.refused_calls
        );
    }
}

/// Matches in the sample: the first seeds cover both games and modes,
/// flips, corruption, long round trips and a paused seat (seed 8)...
const SAMPLE: u64 = 12;

/// ... and this one a partition (the host of two cut off for 10 s).
const PARTITIONED: u64 = 14;

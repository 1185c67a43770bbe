//! The lobby soak: plays `--matches N` seeded matches of whole processes
//! (`lockstep_testkit::lobby_soak`: either game, 2–4 seats, lockstep or
//! rollback, each set up through the host's lobby over a network up to a
//! 1 s round trip with 25% loss, duplication and reordering; in half of
//! them a joiner's process killed mid-match and its seat taken back at
//! once by a new process; a spectator in a third) on `--threads T`
//! threads, and prints a table. Exits non-zero if any match failed.
//!
//! ```sh
//! cargo run --release -p lockstep-testkit --example lobby-soak -- --matches 2000
//! ```

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use lockstep_testkit::lobby_soak::{self, LobbyOutcome};

fn main() {
    let mut matches = 500u64;
    let mut first = 0u64;
    let mut threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().and_then(|v| v.parse::<u64>().ok());
        match (flag.as_str(), value) {
            ("--matches", Some(v)) => matches = v,
            ("--first", Some(v)) => first = v,
            ("--threads", Some(v)) => threads = v.max(1) as usize,
            _ => {
                eprintln!(
                    "lobby-soak [--matches N (500)] [--first SEED (0)] [--threads T (cores)]"
                );
                std::process::exit(2);
            }
        }
    }
    let next = AtomicU64::new(first);
    let outcomes = Mutex::new(Vec::<LobbyOutcome>::new());
    let start = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                loop {
                    let seed = next.fetch_add(1, Ordering::Relaxed);
                    if seed >= first + matches {
                        break;
                    }
                    let outcome = lobby_soak::play(&lobby_soak::plan(seed));
                    if let Some(why) = &outcome.failure {
                        println!("seed {seed}: FAILED: {why}");
                    }
                    outcomes
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push(outcome);
                }
            });
        }
    });
    let outcomes = outcomes.into_inner().unwrap_or_else(|e| e.into_inner());
    let count = |f: &dyn Fn(&LobbyOutcome) -> bool| outcomes.iter().filter(|o| f(o)).count();
    let failed = count(&|o| !o.passed());
    println!();
    println!("| lobby soak | matches |");
    println!("|---|---:|");
    println!("| played | {} |", outcomes.len());
    println!("| failed | {failed} |");
    println!(
        "| with a seat killed and taken back | {} |",
        count(&|o| o.plan.kill_at.is_some())
    );
    println!("| ... taken back | {} |", count(&|o| o.rejoined));
    println!("| with a spectator | {} |", count(&|o| o.plan.spectator));
    println!(
        "| round trip ≥ 400 ms | {} |",
        count(&|o| o.plan.link.latency_micros >= 200_000)
    );
    println!(
        "| lossy (> 5%) | {} |",
        count(&|o| !matches!(
            o.plan.link.loss,
            lockstep_testkit::netsim::Loss::None
                | lockstep_testkit::netsim::Loss::Random(0..=50_000)
        ))
    );
    println!(
        "| virtual time | {} s |",
        outcomes.iter().map(|o| o.micros).sum::<u64>() / 1_000_000
    );
    println!("| wall time | {:.1} s |", start.elapsed().as_secs_f64());
    if failed > 0 {
        std::process::exit(1);
    }
}

//! The soak: plays `--matches N` seeded matches (`lockstep_testkit::soak`:
//! either game, lockstep or rollback, 2–8 seats, networks up to 2 s round
//! trips and 25% loss with jitter, duplication, reordering and corrupted
//! datagrams, clocks set apart, a flipped bit in about a third, a seat
//! paused or the network split in two in half of the others, a recurring
//! nondeterminism in one seat's game in a quarter of the rest, half of
//! those watched by an arbiter) on `--threads T` threads,
//! and prints a table: matches, failures by kind, desyncs reported and
//! healed, frames predicted and rolled back, the membership faults —
//! matches with a pause or a partition, processes that lost the quorum
//! and stopped, restarted processes that took their seat back, seats that
//! played alone, seats stranded — and the honesty figures: matches with a
//! nondeterministic seat, those with an arbiter and the disputes it
//! answered, matches found invalid (every seat stopped) and
//! the longest time from a first desync to the last seat's stop, honest
//! seats overwritten (always 0), and the peak live state bytes (the most
//! any seat's unsettled history held). `--each` also prints every match's
//! peak live state bytes, one line a match.
//!
//! ```sh
//! cargo run --release -p lockstep-testkit --example soak -- --matches 10000
//! ```
//!
//! Each match is a pure function of its seed (`--first S` moves the
//! seeds); a failing seed is printed with what failed, so it can be played
//! again alone. Exits non-zero if any match failed.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use lockstep_testkit::soak::{self, Outcome, SoakGame};

struct Args {
    matches: u64,
    first: u64,
    threads: usize,
    each: bool,
}

fn args() -> Result<Args, String> {
    let mut a = Args {
        matches: 1000,
        first: 0,
        threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        each: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = |name: &str| -> Result<u64, String> {
            let v = it.next().ok_or(format!("{name} needs a number"))?;
            v.parse()
                .map_err(|_| format!("{name}: `{v}` is not a number"))
        };
        match flag.as_str() {
            "--matches" => a.matches = value("--matches")?,
            "--first" => a.first = value("--first")?,
            "--threads" => a.threads = value("--threads")?.max(1) as usize,
            "--each" => a.each = true,
            "--help" | "-h" => {
                println!(
                    "soak [--matches N (1000)] [--first SEED (0)] [--threads T (cores)] [--each]: \
                     plays seeds SEED..SEED+N and prints a table (--each: a line a match with \
                     its peak live state bytes); exits 1 if any failed"
                );
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Ok(a)
}

#[derive(Default, Clone, Copy)]
struct Row {
    matches: u64,
    failed: u64,
    unhealed: u64,
    bad_logs: u64,
    false_reports: u64,
    nondeterministic: u64,
    flipped: u64,
    desyncs: u64,
    healed: u64,
    longest_heal_micros: u64,
    frames: u64,
    predicted: u64,
    rolled_back: u64,
    seats: u64,
    paused: u64,
    partitioned: u64,
    lost_quorum: u64,
    rejoined: u64,
    alone: u64,
    stranded: u64,
    faulty: u64,
    invalid: u64,
    longest_invalid_micros: u64,
    overwritten: u64,
    peak_state_bytes: u64,
    arbitrated: u64,
    arbiter_answers: u64,
}

impl Row {
    fn add(&mut self, o: &Outcome) {
        use lockstep_testkit::verdict::Failure;
        self.matches += 1;
        self.failed += u64::from(!o.passed());
        self.unhealed += u64::from(matches!(
            o.failure,
            Some(Failure::Disagree { .. } | Failure::TooFewFrames { .. })
        ));
        self.bad_logs += u64::from(matches!(
            o.failure,
            Some(
                Failure::NoLog { .. }
                    | Failure::BadLog { .. }
                    | Failure::LogsDiffer { .. }
                    | Failure::Unannounced { .. }
            )
        ));
        self.false_reports += u64::from(o.false_reports);
        self.nondeterministic += o.nondeterministic;
        self.flipped += u64::from(o.flipped);
        self.desyncs += u64::from(o.desyncs);
        self.healed += u64::from(o.healed);
        self.longest_heal_micros = self.longest_heal_micros.max(o.longest_heal_micros);
        self.frames += u64::from(o.frames);
        self.predicted += o.frames_predicted;
        self.rolled_back += o.frames_rolled_back;
        self.seats += u64::from(o.plan.scenario.setup.seats);
        self.paused += u64::from(o.plan.scenario.pause.is_some());
        self.partitioned += u64::from(o.plan.scenario.partition.is_some());
        self.lost_quorum += u64::from(o.lost_quorum);
        self.rejoined += u64::from(o.rejoined);
        self.alone += u64::from(o.alone);
        self.stranded += u64::from(o.stranded);
        self.faulty += u64::from(o.plan.scenario.fault.is_some());
        self.invalid += u64::from(o.invalid);
        self.longest_invalid_micros = self.longest_invalid_micros.max(o.invalid_after_micros);
        self.overwritten += u64::from(o.overwritten);
        self.peak_state_bytes = self.peak_state_bytes.max(o.peak_state_bytes);
        self.arbitrated += u64::from(o.plan.scenario.session.arbiter.is_some());
        self.arbiter_answers += u64::from(o.arbiter_answers);
    }
}

fn main() {
    let a = match args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("soak: {e}");
            std::process::exit(2);
        }
    };
    let started = Instant::now();
    let next = AtomicU64::new(a.first);
    let end = a.first + a.matches;
    let rows = Mutex::new([[Row::default(); 2]; 2]);
    let failures = Mutex::new(Vec::new());
    let done = AtomicU64::new(0);
    std::thread::scope(|scope| {
        for _ in 0..a.threads {
            scope.spawn(|| {
                loop {
                    let seed = next.fetch_add(1, Ordering::Relaxed);
                    if seed >= end {
                        break;
                    }
                    let o = soak::play(&soak::plan(seed));
                    if a.each {
                        println!(
                            "seed {seed}: {} {} seats, peak live state {} bytes",
                            soak::game_name(o.plan.game),
                            o.plan.scenario.setup.seats,
                            o.peak_state_bytes
                        );
                    }
                    let g = usize::from(o.plan.game == SoakGame::Rts);
                    let m = usize::from(o.plan.rollback());
                    if let Ok(mut r) = rows.lock() {
                        r[g][m].add(&o);
                    }
                    if !o.passed() {
                        let line = format!(
                            "seed {seed}: {} {} seats, {}: {:?}, false reports {}, \
                             nondeterministic {}, refused {}, stranded {}, overwritten {}, \
                             not stopped {}",
                            soak::game_name(o.plan.game),
                            o.plan.scenario.setup.seats,
                            if o.plan.rollback() {
                                "rollback"
                            } else {
                                "lockstep"
                            },
                            o.failure.as_ref().map(|f| f.to_string()),
                            o.false_reports,
                            o.nondeterministic,
                            o.refused_calls,
                            o.stranded,
                            o.overwritten,
                            o.not_stopped,
                        );
                        eprintln!("{line}");
                        if let Ok(mut f) = failures.lock() {
                            f.push(line);
                        }
                    }
                    let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                    if n % 250 == 0 {
                        eprintln!(
                            "{n}/{} matches, {} s",
                            a.matches,
                            started.elapsed().as_secs()
                        );
                    }
                }
            });
        }
    });
    let rows = rows.into_inner().unwrap_or_default();
    println!(
        "| game | mode | matches | seats | failed | unhealed | bad logs | false desync reports | \
         nondeterministic | flipped | desyncs reported | healed | longest heal s | frames | predicted | \
         rolled back | paused | partitioned | lost quorum | rejoined | alone | stranded | \
         faulty | with arbiter | arbiter answers | invalid | longest to invalid s | overwritten | peak state KiB |"
    );
    println!(
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    );
    let mut total = Row::default();
    for (g, game) in ["cubes", "rts"].iter().enumerate() {
        for (m, mode) in ["lockstep", "rollback"].iter().enumerate() {
            let r = rows[g][m];
            print_row(game, mode, &r);
            total.longest_heal_micros = total.longest_heal_micros.max(r.longest_heal_micros);
            total.longest_invalid_micros =
                total.longest_invalid_micros.max(r.longest_invalid_micros);
            total.peak_state_bytes = total.peak_state_bytes.max(r.peak_state_bytes);
            for (t, v) in [
                (&mut total.matches, r.matches),
                (&mut total.failed, r.failed),
                (&mut total.unhealed, r.unhealed),
                (&mut total.bad_logs, r.bad_logs),
                (&mut total.false_reports, r.false_reports),
                (&mut total.nondeterministic, r.nondeterministic),
                (&mut total.flipped, r.flipped),
                (&mut total.desyncs, r.desyncs),
                (&mut total.healed, r.healed),
                (&mut total.frames, r.frames),
                (&mut total.predicted, r.predicted),
                (&mut total.rolled_back, r.rolled_back),
                (&mut total.seats, r.seats),
                (&mut total.paused, r.paused),
                (&mut total.partitioned, r.partitioned),
                (&mut total.lost_quorum, r.lost_quorum),
                (&mut total.rejoined, r.rejoined),
                (&mut total.alone, r.alone),
                (&mut total.stranded, r.stranded),
                (&mut total.faulty, r.faulty),
                (&mut total.arbitrated, r.arbitrated),
                (&mut total.arbiter_answers, r.arbiter_answers),
                (&mut total.invalid, r.invalid),
                (&mut total.overwritten, r.overwritten),
            ] {
                *t += v;
            }
        }
    }
    print_row("all", "all", &total);
    println!(
        "\n{} matches (seeds {}..{}) in {} s on {} threads",
        a.matches,
        a.first,
        end,
        started.elapsed().as_secs(),
        a.threads
    );
    if total.failed > 0 {
        std::process::exit(1);
    }
}

/// One table row (floats only for the printed averages and seconds).
#[allow(clippy::float_arithmetic)]
fn print_row(game: &str, mode: &str, r: &Row) {
    println!(
        "| {game} | {mode} | {} | {:.1} | {} | {} | {} | {} | {} | {} | {} | {} | {:.1} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.1} | {} | {} |",
        r.matches,
        r.seats as f64 / r.matches.max(1) as f64,
        r.failed,
        r.unhealed,
        r.bad_logs,
        r.false_reports,
        r.nondeterministic,
        r.flipped,
        r.desyncs,
        r.healed,
        r.longest_heal_micros as f64 / 1e6,
        r.frames,
        r.predicted,
        r.rolled_back,
        r.paused,
        r.partitioned,
        r.lost_quorum,
        r.rejoined,
        r.alone,
        r.stranded,
        r.faulty,
        r.arbitrated,
        r.arbiter_answers,
        r.invalid,
        r.longest_invalid_micros as f64 / 1e6,
        r.overwritten,
        r.peak_state_bytes / 1024
    );
}

//! `lockstep verify`: replay logs and check every frame and every keyframe;
//! with several logs of one match, also check that they agree with each
//! other. Every log named is checked and gets its own `ok` or `FAIL` line,
//! whatever happened to the ones before it (a missing file, another game),
//! followed by the log's notes, one line each (healed and unchecked spans,
//! seats dropped and back, where and why it stopped). A log that stopped
//! early says so on its line; it verifies if every frame it holds does.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use lockstep_sim::desync::first_divergence;
use lockstep_sim::replay::{self, RunOptions};
use lockstep_sim::{Game, GameVersion};

use crate::error::CliError;
use crate::replay::{game_of, incompleteness, read_log};
use crate::threads::FrameThreads;

/// Arguments of `lockstep verify`.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The logs to check.
    #[arg(required = true)]
    pub logs: Vec<PathBuf>,
    #[command(flatten)]
    pub threads: FrameThreads,
}

/// One log's result: whether it verified, its per-frame checks, and a key
/// naming its match (game, settings, seed, seats, tick rate).
pub(crate) struct Verified {
    path: PathBuf,
    game: String,
    good: bool,
    stopped: bool,
    checks: Vec<(u32, u16)>,
    key: [u8; 32],
}

/// Replays and checks one log of a game (a registered game's `verify`),
/// each frame on up to the given number of threads.
pub(crate) type VerifyOp = fn(&Path, usize) -> Result<Verified, CliError>;

/// Runs `lockstep verify`, with `op` giving each log's game's operation:
/// exits non-zero if any log is incomplete, does not replay to its own
/// checksums, or parts from another log of its match.
pub fn run(
    args: &VerifyArgs,
    op: &dyn Fn(&str) -> Result<VerifyOp, CliError>,
) -> Result<ExitCode, CliError> {
    let mut ok = true;
    let mut streams: Vec<Verified> = Vec::new();
    for path in &args.logs {
        let result = game_of(path)
            .and_then(|game| op(&game).map_err(|e| named(path, &e)))
            .and_then(|verify| verify(path, args.threads.count()));
        match result {
            Ok(v) => {
                ok &= v.good;
                streams.push(v);
            }
            Err(e) => {
                // The error names the file.
                outln!("FAIL {e}");
                ok = false;
            }
        }
    }
    // Logs of one match (same game, settings, seed and seats) must agree.
    for (i, a) in streams.iter().enumerate() {
        for b in &streams[i + 1..] {
            if a.game == b.game && a.key == b.key {
                if let Some(frame) = first_divergence(&a.checks, &b.checks) {
                    outln!(
                        "FAIL {} and {} record the same match but part at frame {frame}",
                        a.path.display(),
                        b.path.display()
                    );
                    ok = false;
                }
            }
        }
    }
    if args.logs.len() > 1 {
        let good = streams.iter().filter(|v| v.good).count();
        let stopped = streams.iter().filter(|v| v.stopped).count();
        outln!(
            "{good} of {} logs verified{}{}",
            args.logs.len(),
            if stopped > 0 {
                format!(" ({stopped} stopped early)")
            } else {
                String::new()
            },
            if ok { "" } else { "; verify FAILED" }
        );
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// `error` about the log at `path`, naming it.
fn named(path: &Path, error: &CliError) -> CliError {
    CliError::new(format!("{}: {error}", path.display()))
}

/// Verifies one log: whether it is complete and replays to its checksums (a
/// log that stopped early is complete if its end record is intact).
pub(crate) fn verify_one<G: Game>(path: &Path, threads: usize) -> Result<Verified, CliError> {
    let log = read_log::<G>(path)?;
    let options = RunOptions {
        threads,
        ..RunOptions::default()
    };
    let outcome = replay::run::<G>(&log, &options, |_| {})
        .map_err(|e| CliError::new(format!("{}: {e}", path.display())))?;
    let good = outcome.verified() && log.is_complete();
    let mut problems = Vec::new();
    if let Some(m) = &outcome.first_mismatch {
        problems.push(format!(
            "first bad frame {} (log {}, computed {}); {} frames differ",
            m.frame, m.expected, m.computed, outcome.mismatches
        ));
    }
    if let Some(frame) = outcome.first_bad_keyframe {
        problems.push(format!(
            "{} of {} keyframes are not the replayed state, the first before frame {frame}",
            outcome.bad_keyframes, outcome.keyframes_checked
        ));
    }
    if let Some(what) = incompleteness(&log) {
        problems.push(format!(
            "the log is damaged or incomplete ({what}; see the warning above)"
        ));
    }
    let stopped = match log.stop() {
        Some(_) => format!("; the log stopped early, at frame {}", log.frames()),
        None => String::new(),
    };
    if problems.is_empty() {
        outln!(
            "ok {}: {} {}: {} frames verified ({} against full checksums), {} keyframes checked{stopped}",
            path.display(),
            G::ID,
            GameVersion::of::<G>(G::VERSION),
            outcome.replayed,
            outcome.full_checks,
            outcome.keyframes_checked
        );
    } else {
        outln!("FAIL {}: {}{stopped}", path.display(), problems.join("; "));
    }
    for note in log.notes() {
        outln!("  note: {note}");
    }
    let checks = (0..log.frames())
        .filter_map(|f| log.check(f).map(|c| (f, c.0)))
        .collect();
    let h = log.header();
    let mut key = lockstep_fx::StateWriter::hasher();
    key.write_raw(h.config_hash.as_bytes());
    key.write_u64(h.setup.seed);
    key.write_u8(h.setup.seats);
    key.write_u16(h.setup.tick_rate);
    Ok(Verified {
        path: path.to_path_buf(),
        game: G::ID.to_string(),
        good,
        stopped: log.stop().is_some(),
        checks,
        key: *key.checksum().as_bytes(),
    })
}

//! `lockstep replay`: re-simulate a log, verify every checksum and every
//! keyframe reached, show progress and a summary; seek with `--to`, save
//! the state reached with `--save`, and measure a sync test over the log
//! with `--sync-test`. The log's notes (healed and unchecked spans, seats
//! dropped and back, where and why it stopped early) are printed after the
//! summary, one line each. A damaged or incomplete log replays as far as
//! its valid frames go, and the command then exits non-zero; a log that
//! stopped early and says why is not damaged.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use lockstep_sim::replay::{self, Header, LogEnd, Outcome, ReplayLog, RunOptions};
use lockstep_sim::{Frame, Game, GameVersion, StateFile, SyncTest};

use crate::error::CliError;
use crate::output::{refuse_input, write_file};
use crate::threads::FrameThreads;

/// Arguments of `lockstep replay`.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The replay log.
    pub log: PathBuf,
    /// Stop before this frame, starting from the latest keyframe at or before it.
    #[arg(long)]
    pub to: Option<Frame>,
    /// Save the state reached (the state before the last frame replayed + 1) to this state file.
    #[arg(long)]
    pub save: Option<PathBuf>,
    /// Also replay under a sync test rolling back this many frames every
    /// frame (at most the log's frames), and print its cost beside the plain
    /// replay's.
    #[arg(long, value_name = "DEPTH")]
    pub sync_test: Option<u32>,
    #[command(flatten)]
    pub threads: FrameThreads,
    /// No progress bar.
    #[arg(short, long)]
    pub quiet: bool,
}

/// A progress bar on stderr with frames/s (hidden when stderr is not a terminal).
pub fn progress_bar(len: u64, what: &str) -> ProgressBar {
    let bar = ProgressBar::new(len);
    let style = ProgressStyle::with_template(&format!(
        "{what} {{bar:40}} {{pos}}/{{len}} frames, {{per_sec}} ({{eta}} left)"
    ))
    .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    bar
}

/// Reads a log file as `G`'s, keeping its valid frames: refuses a header
/// `G` refuses (another game or version, a setup it does not play) and
/// skips as damage a keyframe longer than `G` allows for the log's
/// settings ([`replay::read_as`]); says on stderr which records were
/// damaged and where and why an incomplete log ends.
pub fn read_log<G: Game>(path: &Path) -> Result<ReplayLog<G::Input>, CliError> {
    let bytes = read_file(path)?;
    let log = replay::read_as::<G>(&bytes)
        .map_err(|e| CliError::new(format!("{}: {e}", path.display())))?;
    let mut err = std::io::stderr();
    for damage in log.damage() {
        let _ = writeln!(err, "warning: {}: {damage}", path.display());
    }
    if let LogEnd::Truncated {
        offset,
        frame,
        reason,
    } = log.end()
    {
        let _ = writeln!(
            err,
            "warning: {}: the log ends early at byte {offset}, frame {frame}: {reason}; using the {} valid frames",
            path.display(),
            log.frames()
        );
    }
    Ok(log)
}

/// Why a log holds fewer frames than its match, in a few words, if it
/// stopped early and says so.
pub fn stop_of<I: lockstep_sim::Input>(log: &ReplayLog<I>) -> Option<String> {
    log.stop()
        .map(|reason| format!("stopped early at frame {}: {reason}", log.frames()))
}

/// What is wrong with a log that is not complete, in a few words.
pub fn incompleteness<I: lockstep_sim::Input>(log: &ReplayLog<I>) -> Option<String> {
    let mut parts = Vec::new();
    if !log.damage().is_empty() {
        parts.push(format!(
            "{} damaged record(s) skipped, the first at byte {}",
            log.damage().len(),
            log.damage()[0].offset
        ));
    }
    if let LogEnd::Truncated { offset, .. } = log.end() {
        parts.push(format!("its valid data ends at byte {offset}"));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// The file's bytes, or an error naming it.
pub fn read_file(path: &Path) -> Result<Vec<u8>, CliError> {
    std::fs::read(path).map_err(|e| CliError::new(format!("{}: {e}", path.display())))
}

/// The game id a log file is of.
pub fn game_of(path: &Path) -> Result<String, CliError> {
    let bytes = read_file(path)?;
    let header =
        Header::read(&bytes).map_err(|e| CliError::new(format!("{}: {e}", path.display())))?;
    Ok(header.game)
}

/// Runs `lockstep replay`.
/// `replay` of a log of one game (a registered game's operation).
pub(crate) type ReplayOp = fn(&ReplayArgs) -> Result<ExitCode, CliError>;

/// Runs `lockstep replay`, with `op` giving the log's game's operation.
pub fn run(
    args: &ReplayArgs,
    op: impl Fn(&str) -> Result<ReplayOp, CliError>,
) -> Result<ExitCode, CliError> {
    let game = game_of(&args.log)?;
    op(&game)?(args)
}

/// Replays the log of `G` that `args` name.
pub(crate) fn replay<G: Game>(args: &ReplayArgs) -> Result<ExitCode, CliError> {
    if let Some(path) = &args.save {
        refuse_input("--save", path, &[&args.log])?;
    }
    let log = read_log::<G>(&args.log)?;
    if let Some(depth) = args.sync_test {
        // Each frame re-steps `depth` frames: past the log's length that is
        // only more work (it goes back to frame 0 anyway), and quadratic.
        if depth > log.frames() {
            return Err(CliError::new(format!(
                "--sync-test {depth}: deeper than the log's {} frames; give a depth from 0 to {}",
                log.frames(),
                log.frames()
            )));
        }
    }
    let header = log.header();
    let options = RunOptions {
        to: args.to,
        stop_at_mismatch: false,
        config_hash: None,
        threads: args.threads.count(),
    };
    let total = args.to.unwrap_or(log.frames());
    let bar = if args.quiet {
        ProgressBar::hidden()
    } else {
        progress_bar(u64::from(total), "replaying")
    };
    let start = Instant::now();
    let (outcome, engine) = replay::run_with_state::<G>(&log, &options, |_| bar.inc(1))
        .map_err(|e| CliError::new(format!("{}: {e}", args.log.display())))?;
    let seconds = start.elapsed().as_secs_f64();
    bar.finish_and_clear();
    print_summary::<G>(&args.log, header, &outcome, seconds);
    if let Some(path) = &args.save {
        let file = StateFile::of::<G>(engine.save());
        write_file(path, &file.encode())?;
        outln!(
            "saved the state before frame {} to {}",
            engine.frame(),
            path.display()
        );
    }
    if let Some(depth) = args.sync_test {
        sync_test::<G>(&log, depth, seconds, outcome.replayed, args.quiet)?;
    }
    // A replay of part of a log proves only that part.
    if let Some(what) = incompleteness(&log) {
        outln!(
            "DAMAGED: {}: {what}; only the {} valid frames were replayed",
            args.log.display(),
            log.frames()
        );
    }
    Ok(if outcome.verified() && log.is_complete() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn print_summary<G: Game>(path: &Path, header: &Header, outcome: &Outcome, seconds: f64) {
    let tick_rate = f64::from(header.setup.tick_rate.max(1));
    let fps = f64::from(outcome.replayed) / seconds.max(1e-9);
    outln!(
        "{}: {} {}, {} seats, seed {}, {} Hz",
        path.display(),
        G::ID,
        GameVersion::of::<G>(header.game_version),
        header.setup.seats,
        header.setup.seed,
        header.setup.tick_rate
    );
    outln!(
        "replayed frames {}..{} ({} frames) in {seconds:.2} s: {fps:.0} frames/s, {:.1}× real time",
        outcome.start,
        outcome.end,
        outcome.replayed,
        fps / tick_rate
    );
    match &outcome.first_mismatch {
        None => outln!(
            "verified: every frame matches the log ({} against full checksums); final checksum {}",
            outcome.full_checks,
            outcome.final_checksum
        ),
        Some(m) => outln!(
            "MISMATCH: {} frames differ from the log, the first at frame {} (log {}, computed {})",
            outcome.mismatches,
            m.frame,
            m.expected,
            m.computed
        ),
    }
    match outcome.first_bad_keyframe {
        None if outcome.keyframes_checked > 0 => outln!(
            "keyframes: all {} reached are the replayed state",
            outcome.keyframes_checked
        ),
        None => {}
        Some(frame) => outln!(
            "BAD KEYFRAME: {} of {} keyframes are not the replayed state, the first before frame {frame}",
            outcome.bad_keyframes,
            outcome.keyframes_checked
        ),
    }
    for note in &outcome.notes {
        outln!("note: {note}");
    }
}

/// Replays the log under a [`SyncTest`] (depth at most the log's frames,
/// checked by the caller) and prints its cost beside the plain replay's.
fn sync_test<G: Game>(
    log: &ReplayLog<G::Input>,
    depth: u32,
    plain_seconds: f64,
    plain_frames: u32,
    quiet: bool,
) -> Result<(), CliError> {
    let config = replay::check_game::<G>(log.header()).map_err(|e| CliError::new(e.to_string()))?;
    let game = G::new(&config, &log.header().setup).map_err(|e| CliError::new(e.to_string()))?;
    let mut test = SyncTest::new(game, depth);
    let bar = if quiet {
        ProgressBar::hidden()
    } else {
        progress_bar(u64::from(log.frames()), "sync test")
    };
    let start = Instant::now();
    let mut frames = 0u32;
    for frame in 0..log.frames() {
        let Some(inputs) = log.inputs(frame) else {
            break;
        };
        test.advance(inputs)
            .map_err(|e| CliError::new(format!("sync test: {e}")))?;
        frames += 1;
        bar.inc(1);
    }
    bar.finish_and_clear();
    let seconds = start.elapsed().as_secs_f64();
    let plain = plain_seconds * 1000.0 / f64::from(plain_frames.max(1));
    let tested = seconds * 1000.0 / f64::from(frames.max(1));
    outln!(
        "sync test depth {depth}: {frames} frames passed, {} re-simulated; {tested:.3} ms/frame against {plain:.3} plain ({:.2}×)",
        test.resimulated(),
        tested / plain.max(1e-12)
    );
    Ok(())
}

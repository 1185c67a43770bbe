//! `lockstep diff`: compare two state files field by field, or two replay
//! logs of one match: their headers, then the first divergent frame (short
//! checks of every frame and the full checksums both logs hold), the fields
//! that differ before and after it, and a desync report written to a text
//! file. A long list of fields is summarised by entity kind and field, with
//! the full list on `--all`.
//!
//! Exit status: 0 only if the two agree on everything compared *and* the
//! comparison covered both inputs whole; logs of different lengths, or a
//! damaged log, agree at most on a prefix, which is not an agreement —
//! unless the shorter log stopped early and says why (a note): then every
//! frame it holds was compared, and the diff says where and why it stopped.
//! A log whose keyframes are not the states its own checksums describe is
//! not an agreement either, even with itself.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use lockstep_sim::desync::diagnose_logs;
use lockstep_sim::replay::{MAGIC as LOG_MAGIC, ReplayLog};
use lockstep_sim::{FieldDiff, Game, STATE_MAGIC, StateFile, diff_states};

use crate::error::CliError;
use crate::output::{refuse_input, write_file};
use crate::replay::{game_of, incompleteness, read_file, read_log, stop_of};

/// Arguments of `lockstep diff`.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// Left: a replay log or a state file.
    pub left: PathBuf,
    /// Right: of the same kind as the left.
    pub right: PathBuf,
    /// For logs: where to write the desync report (default:
    /// `desync-<frame>.txt` beside the left log). The states before the
    /// divergent frame are written beside it as `.left.state` and `.right.state`.
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// List every differing field (default: counts by entity kind and
    /// field, and the first few fields).
    #[arg(long)]
    pub all: bool,
}

/// Fields listed one by one without `--all`.
const FIELDS_SHOWN: usize = 10;

/// Runs `lockstep diff`: exits 0 if the two agree, 1 if they differ.
/// A registered game's `diff` operations: of two logs, of two state files.
#[derive(Clone, Copy)]
pub(crate) struct DiffOps {
    /// Two logs.
    pub logs: fn(&DiffArgs) -> Result<ExitCode, CliError>,
    /// Two state files.
    pub states: fn(&DiffArgs, &StateFile, &StateFile) -> Result<ExitCode, CliError>,
}

/// Runs `lockstep diff`, with `ops` giving the game's operations.
pub fn run(
    args: &DiffArgs,
    ops: impl Fn(&str) -> Result<DiffOps, CliError>,
) -> Result<ExitCode, CliError> {
    let left = read_file(&args.left)?;
    let right = read_file(&args.right)?;
    let kind = |b: &[u8]| {
        if b.starts_with(&LOG_MAGIC) {
            Some("log")
        } else if b.starts_with(&STATE_MAGIC) {
            Some("state")
        } else {
            None
        }
    };
    match (kind(&left), kind(&right)) {
        (Some("state"), Some("state")) => diff_states_of(args, &left, &right, ops),
        (Some("log"), Some("log")) => {
            let (a, b) = (game_of(&args.left)?, game_of(&args.right)?);
            if a != b {
                return Err(CliError::new(format!(
                    "{} is a {a} log but {} is a {b} log",
                    args.left.display(),
                    args.right.display()
                )));
            }
            (ops(&a)?.logs)(args)
        }
        (None, _) => Err(not_ours(&args.left)),
        (_, None) => Err(not_ours(&args.right)),
        _ => Err(CliError::new(
            "compare a log with a log, or a state file with a state file",
        )),
    }
}

fn not_ours(path: &Path) -> CliError {
    CliError::new(format!(
        "{}: neither a lockstep replay log nor a state file",
        path.display()
    ))
}

fn diff_states_of(
    args: &DiffArgs,
    left: &[u8],
    right: &[u8],
    ops: impl Fn(&str) -> Result<DiffOps, CliError>,
) -> Result<ExitCode, CliError> {
    let open = |path: &Path, bytes: &[u8]| {
        StateFile::decode(bytes).map_err(|e| CliError::new(format!("{}: {e}", path.display())))
    };
    let (l, r) = (open(&args.left, left)?, open(&args.right, right)?);
    if l.game != r.game {
        return Err(CliError::new(format!(
            "{} holds a {} state but {} a {} state",
            args.left.display(),
            l.game,
            args.right.display(),
            r.game
        )));
    }
    (ops(&l.game)?.states)(args, &l, &r)
}

/// Compares two state files of `G`.
pub(crate) fn diff_state_files<G: Game>(
    args: &DiffArgs,
    l: &StateFile,
    r: &StateFile,
) -> Result<ExitCode, CliError> {
    for (path, file) in [(&args.left, l), (&args.right, r)] {
        file.expect::<G>()
            .map_err(|e| CliError::new(format!("{}: {e}", path.display())))?;
    }
    if l.frame() != r.frame() {
        outln!(
            "note: the states are of different frames ({} and {})",
            l.frame(),
            r.frame()
        );
    }
    let diff = diff_states::<G>(&l.state.bytes, &r.state.bytes)
        .map_err(|e| CliError::new(format!("cannot decode a state: {e}")))?;
    print_fields(&diff, args.all, "");
    Ok(if diff.is_empty() && l.frame() == r.frame() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Prints a list of differing fields: the count, then (for more than one)
/// the counts by entity kind and field, then the fields themselves — all of
/// them with `all`, else the first [`FIELDS_SHOWN`].
fn print_fields(diff: &[FieldDiff], all: bool, indent: &str) {
    outln!("{indent}{}", lockstep_sim::diff::count(diff.len()));
    if diff.len() > 1 {
        outln!("{indent}by entity kind and field:");
        for (kind, field, n) in lockstep_sim::diff::summary(diff) {
            let field = if field.is_empty() {
                "(unlabelled bytes)"
            } else {
                field
            };
            outln!("{indent}  {kind} · {field}: {n}");
        }
    }
    let shown = if all {
        diff.len()
    } else {
        FIELDS_SHOWN.min(diff.len())
    };
    if shown < diff.len() {
        outln!(
            "{indent}the first {shown} of {} (--all lists every one):",
            diff.len()
        );
    }
    for d in &diff[..shown] {
        outln!("{indent}  {d}");
    }
}

/// Compares two logs of `G`.
pub(crate) fn diff_logs<G: Game>(args: &DiffArgs) -> Result<ExitCode, CliError> {
    if let Some(path) = &args.report {
        refuse_outputs(path, args)?;
    }
    let left = read_log::<G>(&args.left)?;
    let right = read_log::<G>(&args.right)?;
    let differences = left.header().match_differences(right.header());
    if !differences.is_empty() {
        outln!("the logs are not of the same match; their headers differ:");
        for (field, l, r) in differences {
            outln!("  {field}: {l} ≠ {r}");
        }
        outln!("(frames are compared only between logs of one match)");
        return Ok(ExitCode::FAILURE);
    }
    let sources = [
        args.left.display().to_string(),
        args.right.display().to_string(),
    ];
    let found =
        diagnose_logs::<G>(&left, &right, sources).map_err(|e| CliError::new(e.to_string()))?;
    let Some(desync) = found else {
        return Ok(agreement(args, &left, &right));
    };
    let report = &desync.report;
    let path = args.report.clone().unwrap_or_else(|| {
        args.left
            .with_file_name(format!("desync-{}.txt", report.frame))
    });
    refuse_outputs(&path, args)?;
    for (file, bytes) in desync.files::<G>(&path) {
        write_file(&file, &bytes)?;
    }
    outln!("desync report: {}", report.game);
    outln!("left:  {}", report.sources[0]);
    outln!("right: {}", report.sources[1]);
    for (side, log) in [("left", &left), ("right", &right)] {
        if let Some(stop) = stop_of(log) {
            outln!("{side} {stop}");
        }
    }
    outln!("first divergent frame: {}", report.frame);
    outln!(
        "checksum after frame {}, left:  {}",
        report.frame,
        report.checksums[0]
    );
    outln!(
        "checksum after frame {}, right: {}",
        report.frame,
        report.checksums[1]
    );
    outln!("{}", report.headline());
    for line in &report.not_compared {
        outln!("  not compared: {line}");
    }
    for note in &report.notes {
        outln!("note: {note}");
    }
    outln!("inputs of frame {}:", report.frame);
    for (seat, input) in report.inputs.iter().enumerate() {
        outln!("  seat {seat}: {input}");
    }
    let sections = [
        ("before", report.before_compared, &report.before),
        ("after", report.after_compared, &report.after),
    ];
    for (when, compared, diff) in sections {
        if compared {
            outln!("in the states {when} frame {}:", report.frame);
            print_fields(diff, args.all, "  ");
        }
    }
    outln!(
        "report written to {} (every field; the states before frame {} beside it)",
        path.display(),
        report.frame
    );
    Ok(ExitCode::FAILURE)
}

/// Refuses a report path whose files would overwrite an input.
fn refuse_outputs(report: &Path, args: &DiffArgs) -> Result<(), CliError> {
    let inputs = [args.left.as_path(), args.right.as_path()];
    refuse_input("--report", report, &inputs)?;
    for side in ["left", "right"] {
        refuse_input(
            "--report",
            &report.with_extension(format!("{side}.state")),
            &inputs,
        )?;
    }
    Ok(())
}

/// Two logs with no divergent frame: they agree only if both are whole, each
/// keyframe is the state its own checksums describe, and they are of the
/// same length or the shorter one stopped early and says why; otherwise
/// says how far the comparison got.
fn agreement<I: lockstep_sim::Input>(
    args: &DiffArgs,
    left: &ReplayLog<I>,
    right: &ReplayLog<I>,
) -> ExitCode {
    let common = left.frames().min(right.frames());
    let full = {
        let r: Vec<u32> = right.full_checksums().iter().map(|&(f, _)| f).collect();
        left.full_checksums()
            .iter()
            .filter(|(f, _)| r.binary_search(f).is_ok())
            .count()
    };
    let shorter = if left.frames() < right.frames() {
        Some(left)
    } else {
        (right.frames() < left.frames()).then_some(right)
    };
    let explained = shorter.is_none_or(|log| log.stop().is_some());
    let consistent = [left, right]
        .iter()
        .all(|log| foreign_keyframes(log).is_none());
    if left.is_complete() && right.is_complete() && explained && consistent {
        outln!(
            "no divergence: the logs agree on all {common} frames {}({full} full checksums compared)",
            if shorter.is_some() { "both hold " } else { "" }
        );
        for (path, log) in [(&args.left, left), (&args.right, right)] {
            if let Some(stop) = stop_of(log) {
                outln!("  {} {stop}", path.display());
            }
        }
        return ExitCode::SUCCESS;
    }
    outln!(
        "INCOMPLETE: no divergence in frames 0..{common}, the frames both logs hold ({full} full checksums compared), but that is not all of them:"
    );
    for (path, log) in [(&args.left, left), (&args.right, right)] {
        let what: Vec<String> = [incompleteness(log), stop_of(log), foreign_keyframes(log)]
            .into_iter()
            .flatten()
            .collect();
        let what = if what.is_empty() {
            "complete".to_string()
        } else {
            what.join("; ")
        };
        outln!("  {}: {} frames; {what}", path.display(), log.frames());
    }
    ExitCode::FAILURE
}

/// Whether a log's keyframes contradict its own checksums: a keyframe whose
/// state is not the one the log's checksum of the frame before describes
/// (a state changed outside the simulation, or a crafted keyframe), in a
/// few words.
fn foreign_keyframes<I: lockstep_sim::Input>(log: &ReplayLog<I>) -> Option<String> {
    let foreign: Vec<u32> = log
        .keyframes()
        .iter()
        .filter(|k| {
            let before = k.frame().checked_sub(1).and_then(|f| log.logged(f));
            before.is_some_and(|logged| !logged.matches(&k.checksum()))
        })
        .map(|k| k.frame())
        .collect();
    let first = foreign.first()?;
    Some(format!(
        "{} keyframe(s) are not the state its own checksums describe, the first before frame {first}",
        foreign.len()
    ))
}

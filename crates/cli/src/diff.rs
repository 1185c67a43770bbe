//! `lockstep diff`: compare two state files field by field, or two replay
//! logs of one match: the first divergent frame, the fields that differ
//! before and after it, and a desync report written to a text file.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use lockstep_sim::desync::diagnose_logs;
use lockstep_sim::replay::MAGIC as LOG_MAGIC;
use lockstep_sim::{Game, STATE_MAGIC, StateFile, diff_snapshots};

use crate::CliError;
use crate::games::with_game;
use crate::replay::{game_of, read_file, read_log};

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
}

/// Runs `lockstep diff`: exits 0 if the two agree, 1 if they differ.
pub fn run(args: &DiffArgs) -> Result<ExitCode, CliError> {
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
        (Some("state"), Some("state")) => diff_states(args, &left, &right),
        (Some("log"), Some("log")) => {
            let (a, b) = (game_of(&args.left)?, game_of(&args.right)?);
            if a != b {
                return Err(CliError::new(format!(
                    "{} is a {a} log but {} is a {b} log",
                    args.left.display(),
                    args.right.display()
                )));
            }
            with_game!(a.as_str(), G => diff_logs::<G>(args))
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

fn diff_states(args: &DiffArgs, left: &[u8], right: &[u8]) -> Result<ExitCode, CliError> {
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
    with_game!(l.game.as_str(), G => diff_state_files::<G>(args, &l, &r))
}

fn diff_state_files<G: Game>(
    args: &DiffArgs,
    l: &StateFile,
    r: &StateFile,
) -> Result<ExitCode, CliError> {
    for (path, file) in [(&args.left, l), (&args.right, r)] {
        file.expect::<G>()
            .map_err(|e| CliError::new(format!("{}: {e}", path.display())))?;
    }
    if l.frame() != r.frame() {
        println!(
            "note: the states are of different frames ({} and {})",
            l.frame(),
            r.frame()
        );
    }
    let diff = diff_snapshots::<G>(&l.snapshot.bytes, &r.snapshot.bytes)
        .map_err(|e| CliError::new(format!("cannot decode a state: {e}")))?;
    for d in &diff {
        println!("{d}");
    }
    println!("{}", lockstep_sim::diff::count(diff.len()));
    Ok(if diff.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn diff_logs<G: Game>(args: &DiffArgs) -> Result<ExitCode, CliError> {
    let left = read_log::<G>(&args.left)?;
    let right = read_log::<G>(&args.right)?;
    let sources = [
        args.left.display().to_string(),
        args.right.display().to_string(),
    ];
    let found =
        diagnose_logs::<G>(&left, &right, sources).map_err(|e| CliError::new(e.to_string()))?;
    let Some(desync) = found else {
        println!(
            "no divergence: the logs agree on all {} frames both hold",
            left.frames().min(right.frames())
        );
        return Ok(ExitCode::SUCCESS);
    };
    let report = &desync.report;
    let path = args.report.clone().unwrap_or_else(|| {
        args.left
            .with_file_name(format!("desync-{}.txt", report.frame))
    });
    let text = report.to_text();
    desync
        .write::<G>(&path)
        .map_err(|e| CliError::new(format!("{}: {e}", path.display())))?;
    print!("{text}");
    println!(
        "\nreport written to {} (states before frame {} beside it)",
        path.display(),
        report.frame
    );
    Ok(ExitCode::FAILURE)
}

//! `lockstep`: record, replay, verify, diff and render matches of the shipped
//! games, and benchmark the physics scenes.
//!
//! A thin shell over `lockstep-sim` and `lockstep-games`: every decision a
//! library user would want lives there. Each command prints one clear line
//! and exits non-zero on a bad file or argument.
#![allow(clippy::float_arithmetic)] // reports only: timings and rates

mod bench;
mod diff;
mod games;
mod record;
mod render;
mod replay;
mod verify;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// A one-line error for the user.
#[derive(Debug)]
pub struct CliError(String);

impl CliError {
    /// An error with this message.
    pub fn new(msg: impl Into<String>) -> CliError {
        CliError(msg.into())
    }
}

impl core::fmt::Display for CliError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Deterministic lockstep engine: record, replay, verify and diff matches.
#[derive(Debug, Parser)]
#[command(name = "lockstep", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Record a cubes match played by bots, then replay and verify it (the demo).
    Demo {
        /// Where to write the log.
        #[arg(long, default_value = "target/demo/cubes.log")]
        out: PathBuf,
        /// Frames to play (60 per second).
        #[arg(long, default_value_t = 1800)]
        frames: u32,
    },
    /// Play a match with bots and write its replay log.
    Record(record::RecordArgs),
    /// Re-simulate a log, verifying every checksum.
    Replay(replay::ReplayArgs),
    /// Replay logs and check them; exits non-zero at the first bad frame.
    Verify(verify::VerifyArgs),
    /// Compare two logs or two state files: the first divergent frame and the fields that differ.
    Diff(diff::DiffArgs),
    /// Replay a log and draw frames of it: a PNG, an animated GIF, or a directory of PNGs.
    Render(render::RenderArgs),
    /// Print a table of ms/step for the physics scenes and the games.
    Bench {
        /// Run only benchmarks whose names contain one of these.
        names: Vec<String>,
        /// Runs per benchmark (the median is printed).
        #[arg(long, default_value_t = 3)]
        runs: u32,
        /// Frames per run (default: each scene's own length; 600 for games).
        #[arg(long)]
        frames: Option<u32>,
    },
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return argument_error(&e),
    };
    let result = match cli.command {
        Command::Demo { out, frames } => record::demo(&out, frames),
        Command::Record(args) => record::run(&args),
        Command::Replay(args) => replay::run(&args),
        Command::Verify(args) => verify::run(&args),
        Command::Diff(args) => diff::run(&args),
        Command::Render(args) => render::run(&args),
        Command::Bench {
            names,
            runs,
            frames,
        } => bench::run(&names, runs, frames).map(|()| ExitCode::SUCCESS),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("lockstep: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Help and version go to stdout as clap writes them; a bad argument is one
/// line on stderr (clap's first line, which names the argument) and exit 2.
fn argument_error(e: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            ExitCode::SUCCESS
        }
        _ => {
            let text = e.render().to_string();
            let line = text
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("invalid arguments")
                .trim_start_matches("error: ");
            eprintln!("lockstep: {line} (see `lockstep --help`)");
            ExitCode::from(2)
        }
    }
}

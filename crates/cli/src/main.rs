//! `lockstep`: play matches of the shipped games over UDP (`demo`, `host`,
//! `join`, `spectate`) or in a window (`play`), record, replay, verify,
//! diff and render them, and benchmark the physics scenes.
//!
//! A thin shell over `lockstep-net`, `lockstep-sim` and `lockstep-games`:
//! every decision a library user would want lives there. Each command prints
//! one clear line and exits non-zero on a bad file or argument; its output
//! files are written whole or not at all and never over its inputs, and it
//! ends quietly when its standard output is closed (`output`).
#![allow(clippy::float_arithmetic)] // reports only: timings and rates

/// `println!` for the commands: a closed pipe ends the process quietly
/// instead of panicking ([`output::line()`]).
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::output::line(format_args!($($arg)*))
    };
}

mod bench;
mod demo;
mod diff;
mod error;
mod games;
mod net;
mod output;
mod play;
mod record;
mod render;
mod replay;
mod report;
mod serve;
mod verify;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Deterministic lockstep engine: play matches over UDP, record, replay, verify and diff them.
#[derive(Debug, Parser)]
#[command(name = "lockstep", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Play a networked match on this machine: one process per seat over
    /// loopback UDP with a realistic link, then verify every replay log.
    Demo(demo::DemoArgs),
    /// Host a match over UDP: seat 0, waiting for the others to join.
    Host(net::HostArgs),
    /// Join a match hosted at an address (or rejoin it after a crash).
    Join(net::JoinArgs),
    /// Watch a match hosted at an address, checking every checksum.
    Spectate(net::SpectateArgs),
    /// Watch a match hosted with `--arbiter` as its arbiter: a headless
    /// spectator whose checksum settles the disputes two seats cannot.
    Arbiter(net::ConnectArgs),
    /// Play the cube demo in a window: against bots, or hosting or joining
    /// a match over UDP (arrows push, space blows, Z sticks).
    Play(play::PlayArgs),
    /// Play a match with bots and write its replay log.
    Record(record::RecordArgs),
    /// Re-simulate a log, verifying every checksum.
    Replay(replay::ReplayArgs),
    /// Replay logs and check every one (frames and keyframes); exits non-zero if any fails.
    Verify(verify::VerifyArgs),
    /// Compare two logs or two state files: the first divergent frame and the fields that differ.
    Diff(diff::DiffArgs),
    /// Replay a log and draw frames of it: a PNG, an animated GIF, or a directory of PNGs.
    Render(render::RenderArgs),
    /// Serve the replay viewer (built by `web/build`) to a browser on this machine.
    Serve(serve::ServeArgs),
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
        Command::Demo(args) => demo::run(&args),
        Command::Host(args) => net::host(&args),
        Command::Join(args) => net::join(&args),
        Command::Spectate(args) => net::spectate(&args),
        Command::Arbiter(args) => net::spectate(&net::SpectateArgs::arbiter(args)),
        Command::Play(args) => play::run(&args),
        Command::Record(args) => record::run(&args),
        Command::Replay(args) => replay::run(&args),
        Command::Verify(args) => verify::run(&args),
        Command::Diff(args) => diff::run(&args),
        Command::Render(args) => render::run(&args),
        Command::Serve(args) => serve::run(&args),
        Command::Bench {
            names,
            runs,
            frames,
        } => bench::run(&names, runs, frames).map(|()| ExitCode::SUCCESS),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            say_error(&e.to_string());
            ExitCode::FAILURE
        }
    }
}

/// One line on stderr, `lockstep: ` first; nothing if stderr is closed.
fn say_error(line: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "lockstep: {line}");
}

/// Help and version go to stdout as clap writes them; a bad argument is one
/// line on stderr (clap's first line, which names the argument, or for
/// missing arguments the arguments themselves) and exit 2.
fn argument_error(e: &clap::Error) -> ExitCode {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    match e.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            ExitCode::SUCCESS
        }
        kind => {
            // Clap lists missing arguments on the lines after its first.
            let missing = match e.get(ContextKind::InvalidArg) {
                Some(ContextValue::Strings(names))
                    if kind == ErrorKind::MissingRequiredArgument =>
                {
                    Some(names.join(", "))
                }
                _ => None,
            };
            let line = match missing {
                Some(names) => format!("missing required argument(s): {names}"),
                None => {
                    let text = e.render().to_string();
                    text.lines()
                        .find(|l| !l.trim().is_empty())
                        .unwrap_or("invalid arguments")
                        .trim_start_matches("error: ")
                        .to_string()
                }
            };
            say_error(&format!("{line} (see `lockstep --help`)"));
            ExitCode::from(2)
        }
    }
}

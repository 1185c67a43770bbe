//! The command tree: the subcommands and their arguments as clap parses
//! them, and the dispatch of each to its module with the program's
//! [`Tools`]. Invariants: a bad argument is one line on stderr and exit 2
//! (help and version go to stdout, exit 0); a failed command is one line,
//! the program's name first, and exit 1 (or the command's own status);
//! nothing here panics on what the user typed.

use std::ffi::OsString;
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
#[cfg(feature = "window")]
use lockstep_games::cubes::Cubes;
use lockstep_physics::SolverPath;
#[cfg(feature = "window")]
use lockstep_sim::Game;

#[cfg(feature = "window")]
use crate::play;
use crate::tools::Tools;
use crate::{bench, demo, diff, net, record, render, replay, serve, services, verify};

/// The tools of a lockstep game: play matches over UDP, record, replay,
/// verify and diff them (the program's own name and games are set by its
/// `Tools`).
#[derive(Debug, Parser)]
#[command(name = "lockstep")]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Which code solves the physics contacts: every path gives the same
    /// bits, only the speed differs (default: the fastest this machine
    /// can run).
    #[arg(long, global = true, value_enum)]
    solver_path: Option<SolverPathArg>,
}

/// The command line's names for [`SolverPath`].
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum SolverPathArg {
    /// Every constraint alone (the reference).
    Sequential,
    /// Four constraints at a time, baseline instructions.
    Portable,
    /// Four constraints at a time, AVX2 (x86_64).
    Avx2,
    /// Four constraints at a time, NEON (aarch64).
    Neon,
}

impl SolverPathArg {
    /// The path's name on the command line.
    fn name(self) -> String {
        use clap::ValueEnum;
        self.to_possible_value()
            .map_or_else(String::new, |v| v.get_name().to_owned())
    }

    /// The names of the paths this machine can run.
    fn runnable() -> Vec<String> {
        use clap::ValueEnum;
        SolverPathArg::value_variants()
            .iter()
            .filter(|a| SolverPath::from(**a).is_available())
            .map(|a| a.name())
            .collect()
    }
}

impl From<SolverPathArg> for SolverPath {
    fn from(p: SolverPathArg) -> SolverPath {
        match p {
            SolverPathArg::Sequential => SolverPath::Sequential,
            SolverPathArg::Portable => SolverPath::Portable,
            SolverPathArg::Avx2 => SolverPath::Avx2,
            SolverPathArg::Neon => SolverPath::Neon,
        }
    }
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
    #[cfg(feature = "window")]
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
    /// Run a rendezvous: hosts register match codes with it, joiners find
    /// them by code, and it introduces them so they punch through their
    /// NATs (with --relay-port, a relay in the same process).
    Rendezvous(services::RendezvousArgs),
    /// Run a relay: forwards the sealed datagrams of matches whose
    /// members no direct path joins, on tickets its rendezvous mints.
    Relay(services::RelayArgs),
    /// Print a table of ms/frame for the games (and, asked for, the physics scenes).
    Bench {
        /// Run only these: benchmarks whose names contain one of these
        /// words, `scenes` for every physics scene (default: the games).
        names: Vec<String>,
        /// Runs per benchmark (the median is printed).
        #[arg(long, default_value_t = 3)]
        runs: u32,
        /// Frames per run (default: each scene's own length; 600 for games).
        #[arg(long)]
        frames: Option<u32>,
        /// Threads each frame may use (the physics; with two or more, each
        /// checksum is hashed by the helpers while the next frame steps);
        /// the bits are the same for any count.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..))]
        threads: u16,
    },
}

/// Running the tools: the registry's entry points live with the command
/// tree they run, so the registry itself knows no command.
impl Tools {
    /// Runs the command the process's arguments name and gives its exit
    /// status: what a binary's `main` returns.
    pub fn main(&self) -> ExitCode {
        self.run(std::env::args_os())
    }

    /// Runs the command `args` name (the program's name first, as in
    /// `std::env::args_os`).
    pub fn run<I, T>(&self, args: I) -> ExitCode
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString> + Clone,
    {
        main(self, args)
    }
}

/// Parses `args` (the program's name first) and runs the command they
/// name with `tools`' games; gives the exit status.
fn main<I, T>(tools: &Tools, args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    crate::output::set_program(tools.name());
    let parsed = command_for(tools)
        .try_get_matches_from(args)
        .and_then(|m| Cli::from_arg_matches(&m));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) => return argument_error(&e, tools.name()),
    };
    if let Some(arg) = cli.solver_path {
        if !SolverPath::set_default(arg.into()) {
            crate::output::error_line(&format!(
                "--solver-path: this machine cannot run {} (it can run: {})",
                arg.name(),
                SolverPathArg::runnable().join(", ")
            ));
            return ExitCode::FAILURE;
        }
    }
    // Each command gets from the registry only the operations it needs,
    // so no command module depends on the registry (which depends on them).
    let verify_op = |id: &str| Ok(tools.find(id)?.ops.verify);
    let spectate_op = |id: &str| Ok(tools.find(id)?.ops.spectate);
    let result = match cli.command {
        Command::Demo(args) => {
            let game = |id: Option<&str>| {
                let entry = match id {
                    Some(id) => tools.find(id)?,
                    None => tools.entries().first().ok_or_else(|| tools.unknown(""))?,
                };
                Ok((entry.id, entry.seats))
            };
            demo::run(&args, game, &verify_op)
        }
        Command::Host(mut args) => match tools.named_or_only(args.game.as_deref()) {
            Ok(id) => {
                args.game = Some(id.to_string());
                net::host(&args, |id| {
                    let entry = tools.find(id)?;
                    Ok((entry.ops.host, entry.seats))
                })
            }
            Err(e) => Err(e),
        },
        Command::Join(args) => net::join(&args, |id| Ok(tools.find(id)?.ops.join)),
        Command::Spectate(args) => net::spectate(&args, spectate_op),
        Command::Arbiter(args) => net::spectate(&net::SpectateArgs::arbiter(args), spectate_op),
        #[cfg(feature = "window")]
        Command::Play(args) => play::run(&args, tools.has(Cubes::ID)),
        Command::Record(mut args) => {
            if args.game.is_none() && args.match_file.is_none() {
                match tools.named_or_only(None) {
                    Ok(id) => args.game = Some(id.to_string()),
                    Err(e) => return fail(&e),
                }
            }
            record::run(&args, |id| {
                let entry = tools.find(id)?;
                Ok((entry.ops.record, entry.seats))
            })
        }
        Command::Replay(args) => replay::run(&args, |id| Ok(tools.find(id)?.ops.replay)),
        Command::Verify(args) => verify::run(&args, &verify_op),
        Command::Diff(args) => diff::run(&args, |id| Ok(tools.find(id)?.ops.diff)),
        Command::Render(args) => render::run(&args, |id| tools.render_of(id)),
        Command::Serve(args) => serve::run(&args),
        Command::Rendezvous(args) => services::rendezvous(&args),
        Command::Relay(args) => services::relay(&args),
        Command::Bench {
            names,
            runs,
            frames,
            threads,
        } => {
            let games: Vec<_> = (tools.entries().iter())
                .map(|e| (e.id, e.ops.bench, e.seats))
                .collect();
            let how = bench::Runs {
                runs,
                frames,
                threads: usize::from(threads),
            };
            bench::run(&names, how, &games).map(|()| ExitCode::SUCCESS)
        }
    };
    match result {
        Ok(code) => code,
        Err(e) => fail(&e),
    }
}

/// A failed command: its one line, and exit 1.
fn fail(e: &crate::error::CliError) -> ExitCode {
    crate::output::error_line(&e.to_string());
    ExitCode::FAILURE
}

/// The clap command for `tools`: the program's name, its games named in
/// the help of the arguments that take one, and `play` hidden unless the
/// cube demo's game is registered.
fn command_for(tools: &Tools) -> clap::Command {
    let ids = tools.ids();
    let games = match ids.len() {
        0 => "none registered".to_string(),
        _ => ids.join(" or "),
    };
    let seats = (tools.entries().iter())
        .map(|e| format!("{} for {}", e.seats, e.id))
        .collect::<Vec<_>>()
        .join(", ");
    let first = ids.first().copied().unwrap_or("none");
    let only = if ids.len() == 1 {
        format!(" (default: {first})")
    } else {
        String::new()
    };
    let about = format!(
        "{}: the lockstep tools for {games}: play matches over UDP, record, replay, verify and diff them",
        tools.name()
    );
    #[cfg_attr(not(feature = "window"), allow(unused_mut))]
    let mut cmd = Cli::command()
        .name(tools.name())
        .bin_name(tools.name())
        .about(about)
        .version(tools.version_text())
        .mut_subcommand("record", |c| {
            c.mut_arg("game", |a| {
                a.help(format!(
                    "The game: {games}{only} (or give a match file with --match)"
                ))
            })
            .mut_arg("seats", |a| {
                a.help(format!("Seats, each played by a bot (default: {seats})"))
            })
        })
        .mut_subcommand("host", |c| {
            c.mut_arg("game", |a| a.help(format!("The game: {games}{only}")))
                .mut_arg("seats", |a| {
                    a.help(format!("Seats, each played by a bot (default: {seats})"))
                })
        })
        .mut_subcommand("demo", |c| {
            c.mut_arg("game", |a| {
                a.help(format!("The game: {games} (default: {first})"))
            })
            .mut_arg("seats", |a| {
                a.help(format!("Seats, one process each (default: {seats})"))
            })
        });
    #[cfg(feature = "window")]
    if !tools.has(Cubes::ID) {
        cmd = cmd.mut_subcommand("play", |c| c.hide(true));
    }
    cmd
}

/// Help and version go to stdout as clap writes them; a bad argument is one
/// line on stderr (clap's first line, which names the argument, or for
/// missing arguments the arguments themselves) and exit 2.
fn argument_error(e: &clap::Error, program: &str) -> ExitCode {
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
            crate::output::error_line(&format!("{line} (see `{program} --help`)"));
            ExitCode::from(2)
        }
    }
}

//! The lockstep command-line tools, for the shipped games and for yours:
//! play matches over UDP (`demo`, `host`, `join`, `spectate`, `arbiter`;
//! between homes behind NATs, found by a code through `rendezvous` and
//! `relay`) or in a window (`play`, the cube demo), record, replay, verify,
//! diff and render them, and benchmark the physics scenes and the games.
//!
//! The `lockstep` binary is [`Tools`] with the shipped games registered. A
//! studio gets the same tools for its own game with a binary of a few
//! lines; each game registered is found by its `Game::ID`, the id its
//! logs, state files and rosters carry:
//!
//! ```no_run
//! use lockstep_cli::{GameTools, Tools};
//! # use lockstep_games::cubes::Cubes as Tanks;
//!
//! fn main() -> std::process::ExitCode {
//!     Tools::new("tanks-tools")
//!         .game::<Tanks>() // any `lockstep_games::Demo` game
//!         .main()
//! }
//! ```
//!
//! What a game must implement: [`lockstep_games::Demo`] (a `Game` with a
//! scripted bot and embedded settings) for every command. Two extras are
//! turned on in its [`GameTools`] when it implements their trait:
//! `GameTools::<G>::new().pictures()` (`lockstep_render::Depict`) lets
//! `render` draw it, and `.snapshots()` (`lockstep_snapshot::Bodies`) lets
//! its seats serve snapshot streams and fall back to them, and spectators
//! watch it with `spectate --snapshots`. Without them those commands say
//! what to implement. `examples/own_game` is a whole game and its tools.
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
mod command;
mod demo;
mod diff;
mod error;
mod net;
mod output;
#[cfg(feature = "window")]
mod play;
mod record;
mod render;
mod replay;
mod report;
mod serve;
mod services;
mod threads;
mod tools;
mod verify;

pub use tools::{GameTools, Tools};

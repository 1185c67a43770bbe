//! A studio's own tools binary: the `lockstep` commands (record, replay,
//! verify, diff, bench, host, join, spectate, demo...) for its own game,
//! here the tiny skirmish `squads` of `squads.rs` (derived state, orders
//! as commands, a map on a plane).
//!
//! ```text
//! cargo run -p lockstep-cli --example own_game -- record squads --frames 600 -o squads.log
//! cargo run -p lockstep-cli --example own_game -- verify squads.log
//! ```
//!
//! `squads` implements only `lockstep_games::Demo` (a `Game`, a bot and
//! embedded settings), so `render` and `spectate --snapshots` explain what
//! it would need; implement `lockstep_render::Depict` and
//! `lockstep_snapshot::Bodies` and register it with
//! `GameTools::<Squads>::new().pictures().snapshots()` to get them.

mod squads;

use lockstep_cli::Tools;
use squads::Squads;

fn main() -> std::process::ExitCode {
    Tools::new("squads-tools").game::<Squads>().main()
}

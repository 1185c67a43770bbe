//! A studio's own tools binary: the `lockstep` commands (record, replay,
//! verify, diff, bench, host, join, spectate, demo...) for its own game,
//! here the tiny `runners` game of `runners.rs`.
//!
//! ```text
//! cargo run -p lockstep-cli --example own_game -- record runners --frames 600 -o runners.log
//! cargo run -p lockstep-cli --example own_game -- verify runners.log
//! ```
//!
//! `runners` implements only `lockstep_games::Demo` (a `Game`, a bot and
//! embedded settings), so `render` and `spectate --snapshots` explain what
//! it would need; implement `lockstep_render::Depict` and
//! `lockstep_snapshot::Bodies` and register it with
//! `GameTools::<Runners>::new().pictures().snapshots()` to get them.

mod runners;

use lockstep_cli::Tools;
use runners::Runners;

fn main() -> std::process::ExitCode {
    Tools::new("runners-tools").game::<Runners>().main()
}

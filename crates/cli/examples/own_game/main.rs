//! A studio's own tools binary: the `lockstep` commands (record, replay,
//! verify, diff, bench, host, join, spectate, demo...) for its own game,
//! here the tiny skirmish `squads` of `squads.rs` (derived state, orders
//! as commands, a map on a plane).
//!
//! ```text
//! cargo run -p lockstep-cli --example own_game -- record squads --frames 600 -o squads.log
//! cargo run -p lockstep-cli --example own_game -- verify squads.log
//! cargo run -p lockstep-cli --example own_game -- render squads.log --frames 600 --out squads.png
//! ```
//!
//! `squads` implements `lockstep_games::Demo` (a `Game`, a bot and
//! embedded settings) and `lockstep_render::Depict` (registered with
//! `.pictures()`, so `render` draws it); it has no rigid bodies, so
//! `spectate --snapshots` explains that it would need
//! `lockstep_snapshot::Bodies` and `.snapshots()`.

mod squads;

use lockstep_cli::{GameTools, Tools};
use squads::Squads;

fn main() -> std::process::ExitCode {
    Tools::new("squads-tools")
        .with(GameTools::<Squads>::new().pictures())
        .main()
}

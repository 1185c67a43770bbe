//! `lockstep`: the command-line tools for the shipped games, `cubes`,
//! `gaffer-cubes` (the snapshot article's scene: one seat, recorded and
//! replayed locally) and `rts`, with their pictures and snapshots. A studio's own binary is the
//! same few lines with its own games (see the `lockstep_cli` docs).

use lockstep_cli::{GameTools, Tools};
use lockstep_games::cubes::Cubes;
use lockstep_games::gaffer_cubes::GafferCubes;
use lockstep_games::rts::Rts;

fn main() -> std::process::ExitCode {
    Tools::new("lockstep")
        .with(GameTools::<Cubes>::new().snapshots().pictures())
        .with(
            GameTools::<GafferCubes>::new()
                .snapshots()
                .pictures()
                .seats(1),
        )
        .with(GameTools::<Rts>::new().snapshots().pictures().seats(4))
        .main()
}

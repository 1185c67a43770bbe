//! The games the command line knows, by id: `with_game!(id, G => expr)`
//! runs `expr` with `G` bound to the game type.

/// The ids of the shipped games.
pub const GAMES: [&str; 2] = ["cubes", "rts"];

/// Runs `$body` with `$g` naming the game whose id is `$id`, or returns a
/// [`crate::error::CliError`] naming the known games.
macro_rules! with_game {
    ($id:expr, $g:ident => $body:expr) => {
        match $id {
            "cubes" => {
                type $g = lockstep_games::cubes::Cubes;
                $body
            }
            "rts" => {
                type $g = lockstep_games::rts::Rts;
                $body
            }
            other => Err($crate::error::CliError::new(format!(
                "unknown game `{other}`; known games: {}",
                $crate::games::GAMES.join(", ")
            ))),
        }
    };
}

pub(crate) use with_game;

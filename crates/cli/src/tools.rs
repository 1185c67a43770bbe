//! The games a program's tools know: [`Tools`], the registry a binary
//! builds and runs, and [`GameTools`], what the commands can do with one
//! game.
//!
//! Every command is generic over the game type; the registry erases the
//! type without macros. Registering `G` monomorphizes one function per
//! operation (record, verify, replay, diff, bench, host, join, spectate,
//! and render for a game with pictures) and keeps their pointers in an
//! [`Entry`], found by the id logs, state files and rosters carry
//! (`G::ID`). Invariants: ids are unique (registering an id again
//! replaces its entry, in its place); entries keep the order they were
//! registered in (the first is `demo`'s default game); an operation a
//! game was registered without (pictures, snapshots) is an error naming
//! what to implement, never a panic; and an id no entry has is an error
//! listing the ids registered.

use std::marker::PhantomData;

use lockstep_games::Demo;
use lockstep_peer::Bodies;
use lockstep_render::Depict;

use crate::bench::BenchOp;
use crate::diff::DiffOps;
use crate::error::CliError;
use crate::net::{self, HostOp, JoinOp, NoBodies, SpectateOp, WithBodies};
use crate::record::RecordOp;
use crate::render::RenderOp;
use crate::replay::ReplayOp;
use crate::verify::VerifyOp;
use crate::{bench, diff, record, render, replay, verify};

/// The command-line tools (`record`, `replay`, `verify`, `diff`, `render`,
/// `bench`, `host`, `join`, `spectate`, `arbiter`, `demo`, `serve`) for the
/// games registered with them: what a binary's `main` builds and runs.
///
/// A game needs [`lockstep_games::Demo`] (a `Game` with a bot and embedded
/// settings) for every command but two extras, each turned on in its
/// [`GameTools`]: `render` draws only a game registered with its pictures
/// ([`GameTools::pictures`], `lockstep_render::Depict`), and the seats of a
/// match serve snapshot streams, fall back to them when a resync fails and
/// let `spectate --snapshots` watch only for a game registered with its
/// bodies ([`GameTools::snapshots`], `lockstep_snapshot::Bodies`). `play`,
/// the cube demo's window, is offered when the shipped `cubes` game is
/// registered.
///
/// ```no_run
/// use lockstep_cli::{GameTools, Tools};
/// use lockstep_games::cubes::Cubes;
/// use lockstep_games::rts::Rts;
///
/// fn main() -> std::process::ExitCode {
///     Tools::new("my-tools")
///         .with(GameTools::<Cubes>::new().snapshots().pictures())
///         .game::<Rts>() // no pictures, no snapshots
///         .main()
/// }
/// ```
pub struct Tools {
    name: &'static str,
    version: &'static str,
    games: Vec<Entry>,
}

/// One registered game: its id, its default seats, and its operations.
pub(crate) struct Entry {
    /// The game's `Game::ID`.
    pub id: &'static str,
    /// The seats `record`, `host`, `demo` and `bench` give a match when
    /// `--seats` is not given.
    pub seats: u8,
    /// The operations, monomorphized for the game.
    pub ops: Ops,
}

/// The type-erased operations of one game: each field is a generic
/// command's function, monomorphized for the game when it was registered
/// (its type is declared by the command's module).
pub(crate) struct Ops {
    /// Records a bot match (`record`), at the seats given.
    pub record: RecordOp,
    /// Replays and checks one log (`verify`).
    pub verify: VerifyOp,
    /// `replay`.
    pub replay: ReplayOp,
    /// `diff` of two logs, and of two state files.
    pub diff: DiffOps,
    /// One `bench` row.
    pub bench: BenchOp,
    /// `host`, with the default seats.
    pub host: HostOp,
    /// `join`, once the host's roster names this game.
    pub join: JoinOp,
    /// `spectate` and `arbiter`, once the host's roster names this game.
    pub spectate: SpectateOp,
    /// `render`, for a game registered with its pictures.
    pub render: Option<RenderOp>,
}

/// What the tools can do with the game `G`: every command but `render`,
/// and with [`GameTools::pictures`] and [`GameTools::snapshots`] the
/// extras `G` implements the traits for. Register it with [`Tools::with`].
pub struct GameTools<G> {
    entry: Entry,
    game: PhantomData<fn() -> G>,
}

impl<G: Demo> GameTools<G> {
    /// `G` with the commands every [`Demo`] game gets: no pictures, no
    /// snapshots, 2 seats by default.
    pub fn new() -> GameTools<G> {
        GameTools {
            entry: Entry {
                id: G::ID,
                seats: 2,
                ops: Ops {
                    record: record::record::<G>,
                    verify: verify::verify_one::<G>,
                    replay: replay::replay::<G>,
                    diff: DiffOps {
                        logs: diff::diff_logs::<G>,
                        states: diff::diff_state_files::<G>,
                    },
                    bench: bench::game::<G>,
                    host: net::host_bot::<G, NoBodies>,
                    join: net::join_game::<G, NoBodies>,
                    spectate: net::spectate_game::<G, NoBodies>,
                    render: None,
                },
            },
            game: PhantomData,
        }
    }

    /// The seats a match of `G` has when `--seats` is not given (2 unless
    /// set; a match has 2 to 8 seats over the network).
    pub fn seats(mut self, seats: u8) -> GameTools<G> {
        self.entry.seats = seats;
        self
    }
}

impl<G: Demo> Default for GameTools<G> {
    fn default() -> GameTools<G> {
        GameTools::new()
    }
}

impl<G: Demo + Depict> GameTools<G> {
    /// Lets `render` draw `G` with its [`Depict`] scenes.
    pub fn pictures(mut self) -> GameTools<G> {
        self.entry.ops.render = Some(render::render::<G>);
        self
    }
}

impl<G: Demo + Bodies> GameTools<G> {
    /// Lets the seats of a match of `G` serve snapshot streams of its
    /// [`Bodies`] and fall back to them when a resync fails, and
    /// spectators watch it with `spectate --snapshots`.
    pub fn snapshots(mut self) -> GameTools<G> {
        self.entry.ops.host = net::host_bot::<G, WithBodies>;
        self.entry.ops.join = net::join_game::<G, WithBodies>;
        self.entry.ops.spectate = net::spectate_game::<G, WithBodies>;
        self
    }
}

impl Tools {
    /// Tools with no game yet; `name` is the program's name in its help
    /// (`NAME: the tools of GAME...`) and at the start of its error lines.
    pub fn new(name: &'static str) -> Tools {
        Tools {
            name,
            version: concat!("(lockstep ", env!("CARGO_PKG_VERSION"), ")"),
            games: Vec::new(),
        }
    }

    /// What `--version` prints after the name (default: the lockstep
    /// version it was built on), e.g. `env!("CARGO_PKG_VERSION")` of the
    /// studio's own crate.
    pub fn version(mut self, version: &'static str) -> Tools {
        self.version = version;
        self
    }

    /// Registers `G` with the commands every [`Demo`] game gets
    /// ([`GameTools::new`]).
    pub fn game<G: Demo>(self) -> Tools {
        self.with(GameTools::<G>::new())
    }

    /// Registers a game with the extras its [`GameTools`] turned on; a game
    /// of an id already registered takes its place.
    pub fn with<G>(mut self, game: GameTools<G>) -> Tools {
        match self.games.iter_mut().find(|e| e.id == game.entry.id) {
            Some(e) => *e = game.entry,
            None => self.games.push(game.entry),
        }
        self
    }

    /// The program's name.
    pub(crate) fn name(&self) -> &'static str {
        self.name
    }

    /// What `--version` prints after the name.
    pub(crate) fn version_text(&self) -> &'static str {
        self.version
    }

    /// The registered games, in the order registered.
    pub(crate) fn entries(&self) -> &[Entry] {
        &self.games
    }

    /// The registered games' ids, in the order registered.
    pub(crate) fn ids(&self) -> Vec<&'static str> {
        self.games.iter().map(|e| e.id).collect()
    }

    /// The entry of the game `id`, or an error listing the known games.
    pub(crate) fn find(&self, id: &str) -> Result<&Entry, CliError> {
        self.games
            .iter()
            .find(|e| e.id == id)
            .ok_or_else(|| self.unknown(id))
    }

    /// The game a command names, or without a name the only one
    /// registered; an error listing the games when several are.
    pub(crate) fn named_or_only(&self, id: Option<&str>) -> Result<&'static str, CliError> {
        match (id, self.games.as_slice()) {
            (Some(id), _) => self.find(id).map(|e| e.id),
            (None, [only]) => Ok(only.id),
            (None, _) => Err(CliError::new(format!(
                "name the game: {}",
                match self.ids().join(", ") {
                    ids if ids.is_empty() => "none is registered".to_string(),
                    ids => ids,
                }
            ))),
        }
    }

    /// Whether a game of id `id` is registered.
    #[cfg(feature = "window")]
    pub(crate) fn has(&self, id: &str) -> bool {
        self.games.iter().any(|e| e.id == id)
    }

    /// The error for a game no entry has.
    pub(crate) fn unknown(&self, id: &str) -> CliError {
        let known = match self.ids().join(", ") {
            ids if ids.is_empty() => "none".to_string(),
            ids => ids,
        };
        CliError::new(format!("unknown game `{id}`; known games: {known}"))
    }

    /// `render`'s operation for `id`, or why there is none.
    pub(crate) fn render_of(&self, id: &str) -> Result<RenderOp, CliError> {
        self.find(id)?.ops.render.ok_or_else(|| {
            CliError::new(format!(
                "game `{id}` has no pictures: implement `lockstep_render::Depict` for it and register it with `GameTools::new().pictures()`"
            ))
        })
    }
}

//! `lockstep bench`: a table of ms/step for the physics benchmark scenes and
//! ms/frame for the registered games played by their bots (`game:ID`, and
//! `game:rts-8x1024` when the shipped RTS is registered) (median of several
//! runs, wall clock: a report, not part of any simulation), with what one
//! BLAKE3 checksum of the final state costs and its share of a step (a game
//! frame includes one: the engine checksums every frame).

use std::time::Instant;

use lockstep_games::rts::Rts;
use lockstep_games::{Bots, Demo};
use lockstep_physics::scenes;
use lockstep_sim::{Engine, EngineSettings, Game, Match};

use crate::error::CliError;

/// The name of the RTS row at its largest (8 players × 1 024 units).
const RTS_LARGE: &str = "game:rts-8x1024";

/// One row of the table.
pub(crate) struct Row {
    name: String,
    /// Bytes of canonical state at the end of a run.
    state_bytes: usize,
    frames: u32,
    runs: Vec<f64>,
    /// ms for one checksum of the final state (median of several).
    checksum_ms: f64,
}

impl Row {
    fn print(&self) {
        let mut r = self.runs.clone();
        r.sort_by(f64::total_cmp);
        let median = r[r.len() / 2];
        let (lo, hi) = (r[0], r[r.len() - 1]);
        outln!(
            "{:<16} {:>7} {:>10.3} {:>10.3} {:>10.3} {:>10} {:>8.3} {:>6.1}%",
            self.name,
            self.frames,
            median,
            lo,
            hi,
            self.state_bytes,
            self.checksum_ms,
            self.checksum_ms / median * 100.0
        );
    }
}

/// One `bench` row of a game (a registered game's operation): name, runs,
/// frames, seats.
pub(crate) type BenchOp = fn(&str, u32, u32, u8) -> Result<Row, CliError>;

/// Runs the benchmarks whose names contain one of `filter` (all if empty):
/// the scenes, and a row for each of `games` (id, operation, default seats).
pub fn run(
    filter: &[String],
    runs: u32,
    frames: Option<u32>,
    games: &[(&'static str, BenchOp, u8)],
) -> Result<(), CliError> {
    if runs == 0 {
        return Err(CliError::new("--runs must be at least 1"));
    }
    let wanted = |name: &str| filter.is_empty() || filter.iter().any(|f| name.contains(f.as_str()));
    let mut names: Vec<String> = scenes::NAMES.iter().map(|s| s.to_string()).collect();
    names.extend(games.iter().map(|(id, ..)| format!("game:{id}")));
    if games.iter().any(|&(id, ..)| id == Rts::ID) {
        names.push(RTS_LARGE.to_string());
    }
    let selected: Vec<&String> = names.iter().filter(|n| wanted(n)).collect();
    if selected.is_empty() {
        return Err(CliError::new(format!(
            "no benchmark matches {filter:?}; known: {}",
            names.join(", ")
        )));
    }
    outln!(
        "{:<16} {:>7} {:>10} {:>10} {:>10} {:>10} {:>8} {:>7}",
        "benchmark",
        "frames",
        "ms/step",
        "min",
        "max",
        "state B",
        "hash ms",
        "hash"
    );
    for name in selected {
        let frames_or_600 = frames.unwrap_or(600);
        let row = match name.strip_prefix("game:") {
            _ if name == RTS_LARGE => {
                // The RTS at its largest: 8 players × 1 024 units.
                let mut config = Rts::default_config();
                config.units_per_player = 1024;
                game_with::<Rts>(name, runs, frames_or_600, config, 8)?
            }
            Some(id) => {
                let &(_, bench, seats) = games
                    .iter()
                    .find(|(game, ..)| *game == id)
                    .expect("listed game exists");
                bench(name, runs, frames_or_600, seats)?
            }
            None => scene(name, runs, frames),
        };
        row.print();
    }
    Ok(())
}

fn scene(name: &str, runs: u32, frames: Option<u32>) -> Row {
    let scene = scenes::by_name(name).expect("listed scene exists");
    let frames = frames.unwrap_or(scene.frames);
    let mut state_bytes = 0;
    let mut checksum_ms = 0.0;
    let runs = (0..runs)
        .map(|_| {
            let mut world = scene.build();
            let start = Instant::now();
            for _ in 0..frames {
                world.step();
            }
            let ms = ms_per(start, frames);
            state_bytes = world.save().len();
            checksum_ms = time_checksum(|| {
                std::hint::black_box(world.checksum());
            });
            ms
        })
        .collect();
    Row {
        name: name.to_string(),
        state_bytes,
        frames,
        runs,
        checksum_ms,
    }
}

/// A bot match of `G` with its embedded settings and `seats` seats (a
/// row named `name`).
pub(crate) fn game<G: Demo>(
    name: &str,
    runs: u32,
    frames: u32,
    seats: u8,
) -> Result<Row, CliError> {
    game_with::<G>(name, runs, frames, G::default_config(), seats)
}

/// A bot match of `G` with `config` and `seats` seats, each frame stepped
/// and checksummed by the engine as in a real match.
fn game_with<G: Demo>(
    name: &str,
    runs: u32,
    frames: u32,
    config: G::Config,
    seats: u8,
) -> Result<Row, CliError> {
    let setup = Match {
        seats,
        ..Match::default()
    };
    let mut state_bytes = 0;
    let mut checksum_ms = 0.0;
    let mut times = Vec::new();
    for _ in 0..runs {
        let game = G::new(&config, &setup)
            .map_err(|e| CliError::new(format!("{name}: cannot start the match: {e}")))?;
        let mut engine = Engine::new(game, EngineSettings::default());
        let mut bots = Bots::<G>::new(&setup);
        let start = Instant::now();
        for frame in 0..frames {
            let inputs = bots.inputs(engine.game(), frame);
            engine.advance(&inputs);
        }
        times.push(ms_per(start, frames));
        state_bytes = engine.game().save().len();
        checksum_ms = time_checksum(|| {
            std::hint::black_box(engine.game().checksum());
        });
    }
    Ok(Row {
        name: name.to_string(),
        state_bytes,
        frames,
        runs: times,
        checksum_ms,
    })
}

/// ms per call of `checksum`: the median of 9 timed calls.
fn time_checksum(mut checksum: impl FnMut()) -> f64 {
    let mut times: Vec<f64> = (0..9)
        .map(|_| {
            let t = Instant::now();
            checksum();
            t.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn ms_per(start: Instant, frames: u32) -> f64 {
    start.elapsed().as_secs_f64() * 1000.0 / f64::from(frames.max(1))
}

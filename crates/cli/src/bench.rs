//! `lockstep bench`: a table of ms/step for the physics benchmark scenes and
//! ms/frame for the shipped games played by their bots (median of several
//! runs, wall clock: a report, not part of any simulation), with what one
//! BLAKE3 checksum of the final state costs and its share of a step (a game
//! frame includes one: the engine checksums every frame).

use std::time::Instant;

use lockstep_games::cubes::Cubes;
use lockstep_games::rts::Rts;
use lockstep_games::{Bots, Demo};
use lockstep_physics::scenes;
use lockstep_sim::{Engine, EngineSettings, Match};

use crate::error::CliError;

/// The name of the RTS row at its largest (8 players × 1 024 units).
const RTS_LARGE: &str = "game:rts-8x1024";

/// One row of the table.
struct Row {
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

/// Runs the benchmarks whose names contain one of `filter` (all if empty).
pub fn run(filter: &[String], runs: u32, frames: Option<u32>) -> Result<(), CliError> {
    if runs == 0 {
        return Err(CliError::new("--runs must be at least 1"));
    }
    let wanted = |name: &str| filter.is_empty() || filter.iter().any(|f| name.contains(f.as_str()));
    let mut names: Vec<String> = scenes::NAMES.iter().map(|s| s.to_string()).collect();
    names.extend([
        "game:cubes".to_string(),
        "game:rts".to_string(),
        RTS_LARGE.to_string(),
    ]);
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
        let row = match name.strip_prefix("game:") {
            Some("cubes") => game::<Cubes>(name, runs, frames.unwrap_or(600), None),
            Some("rts") => game::<Rts>(name, runs, frames.unwrap_or(600), None),
            Some(_) => {
                // The RTS at its largest: 8 players × 1 024 units.
                let mut config = Rts::default_config();
                config.units_per_player = 1024;
                game::<Rts>(name, runs, frames.unwrap_or(600), Some((config, 8)))
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

/// A bot match with the embedded settings, 2 players (4 for the RTS), or
/// the given settings and players, each frame stepped and checksummed by
/// the engine as in a real match.
fn game<G: Demo>(name: &str, runs: u32, frames: u32, custom: Option<(G::Config, u8)>) -> Row {
    let (config, seats) = match custom {
        Some((config, seats)) => (config, Some(seats)),
        None => (G::default_config(), None),
    };
    let setup = Match {
        seats: seats.unwrap_or(if G::ID == "rts" { 4 } else { 2 }),
        ..Match::default()
    };
    let mut state_bytes = 0;
    let mut checksum_ms = 0.0;
    let runs = (0..runs)
        .map(|_| {
            let game = G::new(&config, &setup).expect("embedded settings are valid");
            let mut engine = Engine::new(game, EngineSettings::default());
            let mut bots = Bots::<G>::new(&setup);
            let start = Instant::now();
            for frame in 0..frames {
                let inputs = bots.inputs(engine.game(), frame);
                engine.advance(&inputs);
            }
            let ms = ms_per(start, frames);
            state_bytes = engine.game().save().len();
            checksum_ms = time_checksum(|| {
                std::hint::black_box(engine.game().checksum());
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

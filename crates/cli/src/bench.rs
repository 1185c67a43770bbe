//! `lockstep bench`: a table of ms/frame for the registered games played by
//! their bots (`game:ID`, and `game:rts-8x1024` when the shipped RTS is
//! registered) and, when asked (`bench scenes`, or a scene's name), for the
//! physics benchmark scenes (median of several runs, wall clock: a report,
//! not part of any simulation), with what the per-frame BLAKE3 checksum
//! costs and its share of a frame. The scenes are the `scenes` feature.
//!
//! The checksum is taken every frame with a [`FrameHasher`], as the engine
//! does, and timed apart from the step, in two parts, each a mean over the
//! run's frames (the state changing as it really does from frame to
//! frame): `encode ms`, writing the state's canonical bytes, and `hash ms`,
//! the rest of what the frame loop spends on the checksum. `checksum` is
//! the two together as a share of the whole frame (step and checksum).
//! With one thread the rest is hashing the bytes; with two or more, the
//! bytes are hashed by the pool's helpers while they wait between the next
//! frame's shares (as [`lockstep_sim::Engine::advance_deferred`] does), and
//! `hash ms` is only the leaves no helper took. The encoding always runs in
//! the frame loop: the next step changes the state it reads.

use std::time::{Duration, Instant};

use lockstep_fx::{FrameHasher, StateWriter};
#[cfg(feature = "shipped")]
use lockstep_games::rts::Rts;
use lockstep_games::{Bots, Demo};
#[cfg(feature = "scenes")]
use lockstep_physics::scenes;
#[cfg(feature = "shipped")]
use lockstep_sim::Game;
use lockstep_sim::Match;

use crate::error::CliError;

/// The name of the RTS row at its largest (8 players × 1 024 units).
#[cfg(feature = "shipped")]
const RTS_LARGE: &str = "game:rts-8x1024";

/// The filter word that asks for every physics scene.
const SCENES: &str = "scenes";

/// One row of the table.
pub(crate) struct Row {
    name: String,
    /// Bytes of canonical state at the end of a run.
    state_bytes: usize,
    frames: u32,
    /// Each run's mean ms a frame (step and checksum).
    runs: Vec<f64>,
    /// Each run's mean ms a frame of the checksum alone.
    checksums: Vec<f64>,
    /// Each run's mean ms a frame of the checksum's encoding alone.
    encodings: Vec<f64>,
}

impl Row {
    fn new(name: &str, frames: u32) -> Row {
        Row {
            name: name.to_string(),
            state_bytes: 0,
            frames,
            runs: Vec::new(),
            checksums: Vec::new(),
            encodings: Vec::new(),
        }
    }

    /// Adds one run's times.
    fn add(&mut self, mut clock: FrameClock, frames: u32) {
        clock.finish();
        let ms = |d: Duration| d.as_secs_f64() * 1000.0 / f64::from(frames.max(1));
        self.runs.push(ms(clock.step + clock.checksum));
        self.checksums.push(ms(clock.checksum));
        self.encodings.push(ms(clock.encode));
        self.state_bytes = clock.hasher.bytes().len();
    }

    fn print(&self) {
        let sorted = |v: &[f64]| {
            let mut v = v.to_vec();
            v.sort_by(f64::total_cmp);
            v
        };
        let r = sorted(&self.runs);
        let median = r[r.len() / 2];
        let (lo, hi) = (r[0], r[r.len() - 1]);
        // Each figure is its own median over the runs: the checksum's
        // share is its median over the median frame, and `hash ms` is the
        // median checksum less the median encoding.
        let checksum_ms = sorted(&self.checksums)[self.checksums.len() / 2];
        let encode_ms = sorted(&self.encodings)[self.encodings.len() / 2];
        outln!(
            "{:<16} {:>7} {:>10.3} {:>10.3} {:>10.3} {:>10} {:>9.3} {:>8.3} {:>8.1}%",
            self.name,
            self.frames,
            median,
            lo,
            hi,
            self.state_bytes,
            encode_ms,
            (checksum_ms - encode_ms).max(0.0),
            checksum_ms / median * 100.0
        );
    }
}

/// How each benchmark runs.
#[derive(Debug, Clone, Copy)]
pub struct Runs {
    /// Runs per benchmark (the median is printed).
    pub runs: u32,
    /// Frames per run (default: a scene's own length; 600 for games).
    pub frames: Option<u32>,
    /// Threads each frame may use: the world's step, and with two or more
    /// the pool's helpers hashing each checksum while the next frame steps
    /// (machine settings: the bits are the same for any count).
    pub threads: usize,
}

impl Runs {
    /// Frames per run of a game.
    fn game_frames(&self) -> u32 {
        self.frames.unwrap_or(600)
    }
}

/// One `bench` row of a game (a registered game's operation): name, how
/// it runs, seats.
pub(crate) type BenchOp = fn(&str, Runs, u8) -> Result<Row, CliError>;

/// Runs the benchmarks `filter` names, a row for each: with no filter, one
/// for each of `games` (id, operation, default seats); `scenes` names
/// every physics scene; any other word the benchmarks whose names contain
/// it.
pub fn run(
    filter: &[String],
    how: Runs,
    games: &[(&'static str, BenchOp, u8)],
) -> Result<(), CliError> {
    if how.runs == 0 {
        return Err(CliError::new("--runs must be at least 1"));
    }
    let mut names: Vec<String> = games.iter().map(|(id, ..)| format!("game:{id}")).collect();
    #[cfg(feature = "shipped")]
    if games.iter().any(|&(id, ..)| id == Rts::ID) {
        names.push(RTS_LARGE.to_string());
    }
    let game_rows = names.len();
    names.extend(scene_names());
    let wanted = |(i, name): &(usize, &String)| match filter {
        [] => *i < game_rows,
        words => words
            .iter()
            .any(|w| (w == SCENES && *i >= game_rows) || name.contains(w.as_str())),
    };
    let selected: Vec<&String> = names
        .iter()
        .enumerate()
        .filter(wanted)
        .map(|(_, n)| n)
        .collect();
    if selected.is_empty() {
        let scenes = if cfg!(feature = "scenes") {
            format!(", or `{SCENES}` for every physics scene")
        } else {
            " (this build has no physics scenes: the `scenes` feature)".to_string()
        };
        return Err(CliError::new(format!(
            "no benchmark matches {filter:?}; known: {}{scenes}",
            names.join(", ")
        )));
    }
    outln!(
        "{:<16} {:>7} {:>10} {:>10} {:>10} {:>10} {:>9} {:>8} {:>9}",
        "benchmark",
        "frames",
        "ms/frame",
        "min",
        "max",
        "state B",
        "encode ms",
        "hash ms",
        "checksum"
    );
    for name in selected {
        let row = match name.strip_prefix("game:") {
            #[cfg(feature = "shipped")]
            _ if name == RTS_LARGE => {
                // The RTS at its largest: 8 players × 1 024 units.
                let mut config = Rts::default_config();
                config.units_per_player = 1024;
                game_with::<Rts>(name, how, config, 8)?
            }
            Some(id) => {
                let &(_, bench, seats) = games
                    .iter()
                    .find(|(game, ..)| *game == id)
                    .expect("listed game exists");
                bench(name, how, seats)?
            }
            None => scene(name, how),
        };
        row.print();
    }
    Ok(())
}

/// The physics benchmark scenes' names (none without the `scenes` feature).
fn scene_names() -> Vec<String> {
    #[cfg(feature = "scenes")]
    return scenes::NAMES.iter().map(|s| s.to_string()).collect();
    #[cfg(not(feature = "scenes"))]
    return Vec::new();
}

#[cfg(not(feature = "scenes"))]
fn scene(name: &str, _how: Runs) -> Row {
    unreachable!("no scene {name} without the `scenes` feature")
}

#[cfg(feature = "scenes")]
fn scene(name: &str, how: Runs) -> Row {
    let scene = scenes::by_name(name).expect("listed scene exists");
    let frames = how.frames.unwrap_or(scene.frames);
    let mut row = Row::new(name, frames);
    for _ in 0..how.runs {
        let mut world = scene.build();
        world.set_threads(how.threads);
        let mut clock = FrameClock::new(how.threads);
        for _ in 0..frames {
            clock.step(|| world.step());
            clock.checksum(|w| world.encode(w));
        }
        row.add(clock, frames);
    }
    row
}

/// Times a run's steps and checksums apart, and the checksums' encoding
/// within them.
struct FrameClock {
    hasher: FrameHasher,
    step: Duration,
    checksum: Duration,
    encode: Duration,
}

impl FrameClock {
    /// A clock whose hasher may use `threads` threads.
    fn new(threads: usize) -> FrameClock {
        let mut hasher = FrameHasher::new();
        hasher.set_threads(threads);
        FrameClock {
            hasher,
            step: Duration::ZERO,
            checksum: Duration::ZERO,
            encode: Duration::ZERO,
        }
    }

    fn step(&mut self, step: impl FnOnce()) {
        let t = Instant::now();
        step();
        self.step += t.elapsed();
    }

    /// Takes back the last frame's checksum and begins this one's: hashed
    /// at once with one thread, else (a large state) by the pool's helpers
    /// while the next frame steps.
    fn checksum(&mut self, encode: impl FnOnce(&mut StateWriter<Vec<u8>>)) {
        let t = Instant::now();
        std::hint::black_box(self.hasher.collect());
        let spent = &mut self.encode;
        self.hasher.begin(|w| {
            let e = Instant::now();
            encode(w);
            *spent += e.elapsed();
        });
        self.checksum += t.elapsed();
    }

    /// Takes back the last checksum still being hashed, timed.
    fn finish(&mut self) {
        let t = Instant::now();
        std::hint::black_box(self.hasher.collect());
        self.checksum += t.elapsed();
    }
}

/// A bot match of `G` with its embedded settings and `seats` seats (a
/// row named `name`).
pub(crate) fn game<G: Demo>(name: &str, how: Runs, seats: u8) -> Result<Row, CliError> {
    game_with::<G>(name, how, G::default_config(), seats)
}

/// A bot match of `G` with `config` and `seats` seats, each frame stepped
/// and checksummed as the engine does in a real match.
fn game_with<G: Demo>(
    name: &str,
    how: Runs,
    config: G::Config,
    seats: u8,
) -> Result<Row, CliError> {
    let frames = how.game_frames();
    let setup = Match {
        seats,
        ..Match::default()
    };
    let mut row = Row::new(name, frames);
    for _ in 0..how.runs {
        let mut game = G::new(&config, &setup)
            .map_err(|e| CliError::new(format!("{name}: cannot start the match: {e}")))?;
        game.set_threads(how.threads);
        let mut bots = Bots::<G>::new(&setup);
        let mut clock = FrameClock::new(how.threads);
        for frame in 0..frames {
            let inputs = bots.inputs(&game, frame);
            clock.step(|| game.step(frame, &inputs));
            clock.checksum(|w| game.encode(w));
        }
        row.add(clock, frames);
    }
    Ok(row)
}

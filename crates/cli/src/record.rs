//! `lockstep record`: a match played by bots in one process, into a replay
//! log.
//!
//! Everything that can be checked before the match is (the flip's frame,
//! that the log is not the match or settings file); the log is written to a
//! temporary file and put in place once the match is recorded, so a refused
//! argument found late (a seat count, a flipped field that does not
//! exist) leaves an existing log untouched. An interrupted recording
//! (SIGINT, SIGTERM) ends its log after the last whole frame and puts it in
//! place under the name asked for, says so, and exits non-zero: the valid
//! frames are kept, and no temporary file is left behind.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use clap::Args;
use lockstep_games::{Bots, Demo};
use lockstep_sim::replay::{Note, RecordSettings, Recorder, StopCause};
use lockstep_sim::settings_file::{self, MatchFile};
use lockstep_sim::{Game, Match, StateMap};

use crate::error::CliError;
use crate::output::{Pending, refuse_input};
use crate::threads::FrameThreads;

/// Arguments of `lockstep record`.
#[derive(Debug, Args)]
pub struct RecordArgs {
    /// The game (default: the only one registered; or give a match file
    /// with --match).
    pub game: Option<String>,
    /// A match file (TOML): game, frames, keyframe interval, settings file,
    /// and a `[match]` table of seats, seed and tick rate. Flags given on
    /// the command line override it.
    #[arg(long = "match", value_name = "FILE")]
    pub match_file: Option<PathBuf>,
    /// Where to write the log.
    #[arg(short, long)]
    pub out: PathBuf,
    /// Seats, each played by a bot (default: the game's).
    #[arg(long, alias = "players")]
    pub seats: Option<u8>,
    /// The match seed (default 1).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Frames to play (default 3600).
    #[arg(long)]
    pub frames: Option<u32>,
    /// Frames per second (default 60).
    #[arg(long)]
    pub tick_rate: Option<u16>,
    /// The game's settings file (TOML; default: the embedded settings).
    #[arg(long)]
    pub settings: Option<PathBuf>,
    /// A keyframe snapshot every this many frames, for seeking (0: none;
    /// default 600).
    #[arg(long)]
    pub keyframe_interval: Option<u32>,
    /// A full 32-byte checksum every this many frames (others get 16 bits).
    #[arg(long, default_value_t = 60)]
    pub full_checksum_interval: u32,
    /// Deliberately corrupt the state before frame F: flip bit B of a field
    /// of an entity, e.g. `1200:body 17:position:3` (bit defaults to 0). The
    /// flip is not an input, so a replay of the log diverges at frame F; a
    /// keyframe of the corrupted state is logged for `lockstep diff`.
    #[arg(long, value_name = "FRAME:ENTITY:FIELD[:BIT]")]
    pub flip: Option<String>,
    #[command(flatten)]
    pub threads: FrameThreads,
}

/// A parsed `--flip`.
pub(crate) struct Flip {
    frame: u32,
    entity: String,
    field: String,
    bit: u32,
}

fn parse_flip(text: &str) -> Result<Flip, CliError> {
    let bad = || {
        CliError::new(format!(
            "--flip `{text}`: expected FRAME:ENTITY:FIELD[:BIT], e.g. `1200:body 17:position`"
        ))
    };
    let parts: Vec<&str> = text.split(':').collect();
    if !(3..=4).contains(&parts.len()) {
        return Err(bad());
    }
    let frame = parts[0].trim().parse().map_err(|_| bad())?;
    let bit = match parts.get(3) {
        Some(b) => b.trim().parse().map_err(|_| bad())?,
        None => 0,
    };
    if frame == 0 {
        return Err(CliError::new("--flip: the frame must be at least 1"));
    }
    Ok(Flip {
        frame,
        entity: parts[1].trim().to_string(),
        field: parts[2].trim().to_string(),
        bit,
    })
}

/// A match to record: the match file's values, overridden by flags.
pub(crate) struct Plan {
    game: String,
    seats: Option<u8>,
    seed: u64,
    frames: u32,
    tick_rate: u16,
    settings: Option<PathBuf>,
    keyframe_interval: u32,
}

impl Plan {
    fn of(args: &RecordArgs) -> Result<Plan, CliError> {
        let file = match &args.match_file {
            Some(path) => Some(MatchFile::load(path).map_err(|e| CliError::new(e.to_string()))?),
            None => None,
        };
        let game = match (&args.game, &file) {
            (Some(g), _) => g.clone(),
            (None, Some(f)) => f.game.clone(),
            (None, None) => return Err(CliError::new("name a game or give --match FILE")),
        };
        let setup = file.as_ref().map(|f| f.setup);
        Ok(Plan {
            game,
            seats: args.seats.or(setup.map(|s| s.seats)),
            seed: args.seed.or(setup.map(|s| s.seed)).unwrap_or(1),
            frames: args
                .frames
                .or(file.as_ref().map(|f| f.frames))
                .unwrap_or(3600),
            tick_rate: args.tick_rate.or(setup.map(|s| s.tick_rate)).unwrap_or(60),
            settings: args
                .settings
                .clone()
                .or(file.as_ref().and_then(|f| f.settings.clone())),
            keyframe_interval: args
                .keyframe_interval
                .or(file.as_ref().and_then(|f| f.keyframe_interval))
                .unwrap_or(600),
        })
    }
}

/// Runs `lockstep record`.
/// `record` of one game (a registered game's operation), at the seats
/// given.
pub(crate) type RecordOp =
    fn(&Plan, u8, &RecordArgs, Option<&Flip>, &AtomicBool) -> Result<ExitCode, CliError>;

/// Runs `lockstep record`, with `op` giving the game's operation and its
/// default seats.
pub fn run(
    args: &RecordArgs,
    op: impl Fn(&str) -> Result<(RecordOp, u8), CliError>,
) -> Result<ExitCode, CliError> {
    let flip = args.flip.as_deref().map(parse_flip).transpose()?;
    let plan = Plan::of(args)?;
    let (record, default_seats) = op(&plan.game)?;
    let seats = plan.seats.unwrap_or(default_seats);
    if let Some(f) = &flip {
        if f.frame >= plan.frames {
            return Err(CliError::new(format!(
                "--flip: frame {} is past the end of the match (frames 0 to {}); the flip would never happen",
                f.frame,
                plan.frames.saturating_sub(1)
            )));
        }
    }
    let inputs: Vec<&Path> = [args.match_file.as_deref(), plan.settings.as_deref()]
        .into_iter()
        .flatten()
        .collect();
    refuse_input("-o", &args.out, &inputs)?;
    let interrupted = Arc::new(AtomicBool::new(false));
    let flag = interrupted.clone();
    ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst))
        .map_err(|e| CliError::new(format!("cannot watch for interruptions: {e}")))?;
    record(&plan, seats, args, flip.as_ref(), &interrupted)
}

fn load_config<G: Demo>(settings: Option<&Path>) -> Result<G::Config, CliError> {
    match settings {
        Some(path) => settings_file::load(path).map_err(|e| CliError::new(e.to_string())),
        None => Ok(G::default_config()),
    }
}

/// Records the match of `G` that `plan` describes with `seats` seats.
pub(crate) fn record<G: Demo>(
    plan: &Plan,
    seats: u8,
    args: &RecordArgs,
    flip: Option<&Flip>,
    interrupted: &AtomicBool,
) -> Result<ExitCode, CliError> {
    let config = load_config::<G>(plan.settings.as_deref())?;
    let setup = Match {
        seats,
        seed: plan.seed,
        tick_rate: plan.tick_rate,
    };
    let settings = RecordSettings {
        full_checksum_interval: args.full_checksum_interval,
        keyframe_interval: plan.keyframe_interval,
        ..RecordSettings::default()
    };
    let io_err = |e: std::io::Error| CliError::new(format!("{}: {e}", args.out.display()));
    let (pending, file) = Pending::create(&args.out)?;
    let mut recorder = Recorder::<G, _>::new(&config, setup, settings, BufWriter::new(file))
        .map_err(|e| CliError::new(format!("cannot start the match: {e}")))?;
    recorder.set_threads(args.threads.count());
    let mut bots = Bots::<G>::new(&setup);
    let bar = crate::replay::progress_bar(u64::from(plan.frames), "recording");
    let start = Instant::now();
    let mut recorded = plan.frames;
    for frame in 0..plan.frames {
        if interrupted.load(Ordering::SeqCst) {
            recorded = frame;
            break;
        }
        if let Some(f) = flip.filter(|f| f.frame == frame) {
            corrupt::<G, _>(&mut recorder, f)?;
        }
        let inputs = bots.inputs(recorder.engine().game(), frame);
        recorder.advance(&inputs).map_err(io_err)?;
        bar.inc(1);
    }
    bar.finish_and_clear();
    if recorded < plan.frames {
        recorder
            .note(&Note::Stopped {
                reason: StopCause::Interrupted,
            })
            .map_err(io_err)?;
    }
    let seconds = start.elapsed().as_secs_f64();
    let (_, out) = recorder.finish().map_err(io_err)?;
    let file = out.into_inner().map_err(|e| io_err(e.into_error()))?;
    let bytes = file.metadata().map_err(io_err)?.len();
    drop(file);
    pending.commit()?;
    if recorded < plan.frames {
        outln!(
            "interrupted: the log holds the {recorded} frames recorded (0 to {}) of {} asked for → {} ({bytes} bytes)",
            recorded.saturating_sub(1),
            plan.frames,
            args.out.display()
        );
        return Ok(ExitCode::from(INTERRUPTED));
    }
    let per = bytes as f64 / f64::from(plan.frames.max(1)) / f64::from(seats.max(1));
    let game_seconds = f64::from(plan.frames) / f64::from(plan.tick_rate.max(1));
    outln!(
        "recorded {} frames ({game_seconds:.0} s) of {} ({seats} seats, seed {}) in {seconds:.1} s, {:.1}× real time → {} ({bytes} bytes, {per:.2} bytes/frame/seat)",
        plan.frames,
        G::ID,
        plan.seed,
        game_seconds / seconds.max(1e-9),
        args.out.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// The exit status of an interrupted recording: 128 + `SIGINT`, as a shell
/// reports a program that an interrupt ended.
const INTERRUPTED: u8 = 130;

fn corrupt<G: Game, W: Write>(recorder: &mut Recorder<G, W>, flip: &Flip) -> Result<(), CliError> {
    let map = StateMap::of(recorder.engine().game());
    let bytes = map
        .with_flipped_bit(&flip.entity, &flip.field, flip.bit)
        .ok_or_else(|| {
            CliError::new(format!(
                "--flip: no field `{}` of `{}` with a bit {} in the {} state",
                flip.field,
                flip.entity,
                flip.bit,
                G::ID
            ))
        })?;
    let game = G::decode(&bytes).map_err(|e| {
        CliError::new(format!(
            "--flip: the flipped state is not a valid {} state ({e}); pick another field or bit",
            G::ID
        ))
    })?;
    *recorder.game_mut() = game;
    recorder
        .keyframe()
        .map_err(|e| CliError::new(format!("cannot write the keyframe: {e}")))?;
    let _ = writeln!(
        std::io::stderr(),
        "flipped bit {} of `{}` of `{}` before frame {}",
        flip.bit,
        flip.field,
        flip.entity,
        flip.frame
    );
    Ok(())
}

//! `lockstep render`: replay a log and draw chosen frames — one PNG, an
//! animated GIF of a range, or numbered PNGs in a directory — with
//! `--side-by-side` to draw two logs of one match next to each other and
//! outline in red the bodies whose states differ at each frame.
//!
//! Frame `n` is the state before frame `n` is stepped (what `replay --to n`
//! reaches), so a log of `N` frames has states `0..=N`. Each log is sought
//! to the first frame the way `replay --to` does (from its latest keyframe
//! at or before it), then stepped frame by frame; a stepped frame whose
//! checksum differs from the log's is counted and reported. A log is read
//! as its game's (`replay::read_as`), so a header `verify` refuses is
//! refused here before anything is drawn; a damaged log, or one whose
//! replayed frames differ from it, is drawn as far as it goes and the
//! command then exits non-zero, as `verify` does. Every file and argument
//! problem is one line naming it, before any rendering starts where it can
//! be found early.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use clap::Args;
use indicatif::ProgressBar;
use lockstep_render::{Camera, Canvas, Depict, GifWriter, Overlay, Scene, draw_scene, encode};
use lockstep_sim::replay::{self, ReplayLog, RunOptions};
use lockstep_sim::{Engine, Frame, Game};

use crate::error::CliError;
use crate::replay::{game_of, incompleteness, progress_bar, read_log};

/// Arguments of `lockstep render`.
#[derive(Debug, Args)]
pub struct RenderArgs {
    /// The replay log.
    pub log: PathBuf,
    /// The frames to draw: `N`, `A..B` (B excluded), `A..=B`, `A..` or `..B`
    /// (default: the final state).
    #[arg(long)]
    pub frames: Option<String>,
    /// Where to draw them: `x.png` (one frame), `x.gif` (an animation), or a
    /// directory (one `frame-NNNNNN.png` each).
    #[arg(long, short)]
    pub out: PathBuf,
    /// Picture width in pixels.
    #[arg(long, default_value_t = 1280, value_parser = clap::value_parser!(u32).range(16..=8192))]
    pub width: u32,
    /// Picture height in pixels.
    #[arg(long, default_value_t = 720, value_parser = clap::value_parser!(u32).range(16..=8192))]
    pub height: u32,
    /// Draw every Nth frame of the range (GIFs and directories).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..))]
    pub every: u32,
    /// Another log of the same match, drawn on the right; bodies that differ
    /// are outlined in red on both sides.
    #[arg(long, value_name = "OTHER_LOG")]
    pub side_by_side: Option<PathBuf>,
    /// Draw what this seat sees: its fog of war hides the rest (games
    /// without one draw everything).
    #[arg(long)]
    pub seat: Option<u8>,
    /// No text overlay (frame number and checksum).
    #[arg(long)]
    pub no_overlay: bool,
    /// No progress bar.
    #[arg(short, long)]
    pub quiet: bool,
}

/// Where the pictures go.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Output {
    Png(PathBuf),
    Gif(PathBuf),
    Directory(PathBuf),
}

impl Output {
    fn of(path: &Path) -> Result<Output, CliError> {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        let text = path.to_string_lossy();
        match ext.as_deref() {
            _ if path.is_dir() || text.ends_with('/') => Ok(Output::Directory(path.to_path_buf())),
            Some("png") => Ok(Output::Png(path.to_path_buf())),
            Some("gif") => Ok(Output::Gif(path.to_path_buf())),
            None => Ok(Output::Directory(path.to_path_buf())),
            Some(other) => Err(CliError::new(format!(
                "{}: cannot write .{other} files; use .png, .gif or a directory",
                path.display()
            ))),
        }
    }
}

/// The frames asked for: `start..end` (end excluded, `end > start`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameRange {
    /// The first frame drawn.
    pub start: Frame,
    /// One past the last frame drawn.
    pub end: Frame,
}

/// Parses `--frames` for a log whose states are `0..=last`.
pub fn parse_frames(text: Option<&str>, last: Frame) -> Result<FrameRange, CliError> {
    let bad = |why: String| CliError::new(format!("--frames {}: {why}", text.unwrap_or("")));
    let number = |s: &str, default: Frame| -> Result<Frame, CliError> {
        let s = s.trim();
        if s.is_empty() {
            return Ok(default);
        }
        s.parse::<Frame>()
            .map_err(|_| bad(format!("`{s}` is not a frame number")))
    };
    let range = match text {
        None => FrameRange {
            start: last,
            end: last + 1,
        },
        Some(t) => match t.split_once("..") {
            None => {
                let n = number(t, 0)?;
                FrameRange {
                    start: n,
                    end: n.saturating_add(1),
                }
            }
            Some((a, b)) => {
                let start = number(a, 0)?;
                let end = match b.strip_prefix('=') {
                    Some(b) => number(b, last)?.saturating_add(1),
                    None => number(b, last.saturating_add(1))?,
                };
                FrameRange { start, end }
            }
        },
    };
    if range.end <= range.start {
        return Err(bad("the range is empty".into()));
    }
    if range.end > last.saturating_add(1) {
        return Err(bad(format!("the log's states are frames 0..={last}")));
    }
    Ok(range)
}

/// Runs `lockstep render`.
/// `render` of a log of one game (a game registered with its pictures).
pub(crate) type RenderOp = fn(&RenderArgs) -> Result<ExitCode, CliError>;

/// Runs `lockstep render`, with `op` giving the log's game's operation (or
/// why it has none).
pub fn run(
    args: &RenderArgs,
    op: impl Fn(&str) -> Result<RenderOp, CliError>,
) -> Result<ExitCode, CliError> {
    let game = game_of(&args.log)?;
    if let Some(other) = &args.side_by_side {
        let other_game = game_of(other)?;
        if other_game != game {
            return Err(CliError::new(format!(
                "{} is a {game} log but {} is a {other_game} log",
                args.log.display(),
                other.display()
            )));
        }
    }
    op(&game)?(args)
}

/// One log being stepped through the frames drawn.
struct Side<G: Game> {
    path: PathBuf,
    log: ReplayLog<G::Input>,
    /// What is wrong with the log's bytes, if anything (damage, truncation).
    damage: Option<String>,
    engine: Engine<G>,
    /// Frames stepped whose checksum differs from the log's.
    mismatches: u32,
}

impl<G: Game> Side<G> {
    /// The log read from `path`, sought to the state before `frame`.
    fn seek(path: &Path, log: ReplayLog<G::Input>, frame: Frame) -> Result<Side<G>, CliError> {
        let options = RunOptions {
            to: Some(frame),
            ..RunOptions::default()
        };
        let (outcome, engine) = replay::run_with_state::<G>(&log, &options, |_| {})
            .map_err(|e| CliError::new(format!("{}: {e}", path.display())))?;
        if engine.frame() != frame {
            return Err(CliError::new(format!(
                "{}: the log reaches frame {}, not {frame}",
                path.display(),
                engine.frame()
            )));
        }
        Ok(Side {
            path: path.to_path_buf(),
            damage: incompleteness(&log),
            log,
            engine,
            mismatches: outcome.mismatches,
        })
    }

    /// Steps the frame the engine is at, if the log holds it.
    fn step(&mut self) -> Result<(), CliError> {
        let frame = self.engine.frame();
        let (Some(inputs), Some(logged)) = (self.log.inputs(frame), self.log.logged(frame)) else {
            return Err(CliError::new(format!(
                "{}: the log ends before frame {frame}",
                self.path.display()
            )));
        };
        let computed = self.engine.advance(inputs);
        if !logged.matches(&computed) {
            self.mismatches += 1;
        }
        Ok(())
    }

    fn label(&self) -> String {
        self.path.file_name().map_or_else(
            || self.path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        )
    }
}

/// Draws the frames `args` ask for of logs of `G`.
pub(crate) fn render<G: Game + Depict>(args: &RenderArgs) -> Result<ExitCode, CliError> {
    let output = Output::of(&args.out)?;
    let left_log = read_log::<G>(&args.log)?;
    let right_log = match &args.side_by_side {
        Some(other) => Some((other, read_log::<G>(other)?)),
        None => None,
    };
    let last = match &right_log {
        Some((_, log)) => left_log.frames().min(log.frames()),
        None => left_log.frames(),
    };
    let range = parse_frames(args.frames.as_deref(), last)?;
    let drawn: Vec<Frame> = (range.start..range.end)
        .step_by(args.every as usize)
        .collect();
    let drawn = match output {
        Output::Png(_) if range.end - range.start > 1 => {
            return Err(CliError::new(format!(
                "{}: a PNG holds one frame but --frames names {}; write a .gif or a directory",
                args.out.display(),
                range.end - range.start
            )));
        }
        Output::Png(_) => vec![range.start],
        _ => drawn,
    };
    let tick_rate = left_log.header().setup.tick_rate.max(1);

    // Open the output before the replay, so a bad path fails at once.
    let create = |path: &Path| {
        File::create(path).map_err(|e| CliError::new(format!("{}: {e}", path.display())))
    };
    let mut gif = match &output {
        Output::Gif(path) => Some(
            GifWriter::new(BufWriter::new(create(path)?), args.width, args.height)
                .map_err(|e| CliError::new(format!("{}: {e}", path.display())))?,
        ),
        Output::Png(path) => {
            create(path)?;
            None
        }
        Output::Directory(dir) => {
            std::fs::create_dir_all(dir)
                .map_err(|e| CliError::new(format!("{}: {e}", dir.display())))?;
            None
        }
    };

    let mut left = Side::<G>::seek(&args.log, left_log, range.start)?;
    let mut right = match right_log {
        Some((path, log)) => Some(Side::<G>::seek(path, log, range.start)?),
        None => None,
    };
    let panes = if right.is_some() { 2 } else { 1 };
    let pane_width = (args.width / panes).max(1);
    let mut cameras: Option<Camera> = None;
    let mut canvas = Canvas::new(args.width, args.height);
    let mut pane = Canvas::new(pane_width, args.height);
    let bar = if args.quiet || drawn.len() < 2 {
        ProgressBar::hidden()
    } else {
        progress_bar(drawn.len() as u64, "rendering")
    };
    let mut differing_frames = 0u32;
    let mut draw_seconds = 0.0f64;
    // Centiseconds owed to the GIF's timeline: each frame shows for
    // `every / tick_rate` s, rounded so the total stays exact.
    let mut owed = 0.0f64;
    let mut next = drawn.iter().copied().peekable();
    let mut written = 0u32;
    let mut frame = range.start;
    while let Some(&target) = next.peek() {
        while frame < target {
            left.step()?;
            if let Some(r) = right.as_mut() {
                r.step()?;
            }
            frame += 1;
        }
        next.next();
        let started = Instant::now();
        let look = |game: &G| match args.seat {
            Some(seat) => game.seen_by(seat),
            None => game.scene(),
        };
        let mut scene = look(left.engine.game());
        let mut other: Option<Scene> = right.as_ref().map(|r| look(r.engine.game()));
        let mut differing = 0;
        if let Some(o) = other.as_mut() {
            let keys = scene.differing(o);
            differing = keys.len();
            if differing > 0 {
                differing_frames += 1;
            }
            scene.outline(&keys);
            o.outline(&keys);
        }
        let camera =
            *cameras.get_or_insert_with(|| Camera::overview(&scene, pane_width, args.height));
        let sides = std::iter::once((&scene, &left)).chain(other.as_ref().zip(right.as_ref()));
        for (i, (scene, side)) in sides.enumerate() {
            draw_scene(&mut pane, scene, &camera);
            if !args.no_overlay {
                let mut overlay = Overlay::new();
                if panes == 2 {
                    overlay = overlay.line(side.label());
                }
                overlay = overlay
                    .line(format!("{} FRAME {frame}", G::ID))
                    .line(format!(
                        "CHECKSUM {}",
                        side.engine.game().checksum().short()
                    ));
                if let Some(seat) = args.seat {
                    overlay = overlay.line(format!(
                        "AS SEEN BY {}",
                        lockstep_render::player_colour_name(seat)
                    ));
                }
                if panes == 2 {
                    overlay = overlay.line(match differing {
                        1 => "1 BODY DIFFERS".to_string(),
                        n => format!("{n} BODIES DIFFER"),
                    });
                }
                overlay.draw(&mut pane);
            }
            canvas.blit(&pane, i as i64 * i64::from(pane_width), 0);
        }
        let encode_error =
            |path: &Path, e: encode::EncodeError| CliError::new(format!("{}: {e}", path.display()));
        match &output {
            Output::Png(path) => {
                encode::write_png(&canvas, path).map_err(|e| encode_error(path, e))?;
            }
            Output::Directory(dir) => {
                let path = dir.join(format!("frame-{frame:06}.png"));
                encode::write_png(&canvas, &path).map_err(|e| encode_error(&path, e))?;
            }
            Output::Gif(path) => {
                owed += f64::from(args.every) * 100.0 / f64::from(tick_rate);
                let delay = owed.round().max(2.0);
                owed -= delay;
                if let Some(g) = gif.as_mut() {
                    g.frame(&canvas, delay as u16)
                        .map_err(|e| encode_error(path, e))?;
                }
            }
        }
        draw_seconds += started.elapsed().as_secs_f64();
        written += 1;
        bar.inc(1);
    }
    bar.finish_and_clear();
    if let (Some(g), Output::Gif(path)) = (gif, &output) {
        g.finish()
            .and_then(|mut w| {
                std::io::Write::flush(&mut w).map_err(|source| encode::EncodeError::Io {
                    path: path.display().to_string(),
                    source,
                })
            })
            .map_err(|e| CliError::new(format!("{}: {e}", path.display())))?;
    }
    let size = match &output {
        Output::Png(p) | Output::Gif(p) => std::fs::metadata(p).map(|m| m.len()).unwrap_or(0),
        Output::Directory(_) => 0,
    };
    println!(
        "wrote {}: {written} frame{} of {} ({}..{} every {}), {}×{}{}, {:.1} ms/frame drawn and encoded",
        args.out.display(),
        if written == 1 { "" } else { "s" },
        G::ID,
        range.start,
        range.end,
        if matches!(output, Output::Png(_)) {
            1
        } else {
            args.every
        },
        args.width,
        args.height,
        if size > 0 {
            format!(", {:.1} KiB", size as f64 / 1024.0)
        } else {
            String::new()
        },
        draw_seconds * 1000.0 / f64::from(written.max(1)),
    );
    if right.is_some() {
        println!(
            "bodies differ between the two logs in {differing_frames} of the {written} frames drawn"
        );
    }
    // The pictures are drawn either way; a log that does not verify over
    // what was drawn fails the command, as `verify` fails it.
    let mut verified = true;
    for side in std::iter::once(&left).chain(right.as_ref()) {
        if side.mismatches > 0 {
            verified = false;
            outln!(
                "MISMATCH: {}: {} replayed frames differ from the log's checksums (drawn as this build replays them)",
                side.path.display(),
                side.mismatches
            );
        }
        if let Some(what) = &side.damage {
            verified = false;
            outln!(
                "DAMAGED: {}: {what}; only its valid frames were drawn",
                side.path.display()
            );
        }
    }
    Ok(if verified {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_ranges_parse_and_check_against_the_log() {
        let r = |t: &str| parse_frames(Some(t), 100).map(|r| (r.start, r.end));
        assert_eq!(r("5").unwrap(), (5, 6));
        assert_eq!(r("5..10").unwrap(), (5, 10));
        assert_eq!(r("5..=10").unwrap(), (5, 11));
        assert_eq!(r("90..").unwrap(), (90, 101));
        assert_eq!(r("..3").unwrap(), (0, 3));
        assert_eq!(r("100").unwrap(), (100, 101));
        assert_eq!(parse_frames(None, 100).map(|r| r.start).unwrap(), 100);
        for bad in ["101", "5..5", "9..3", "x", "1..y", "0..102", "-1"] {
            assert!(r(bad).is_err(), "{bad}");
        }
        assert!(r("4294967295").is_err());
    }

    #[test]
    fn outputs_are_chosen_by_extension() {
        assert_eq!(
            Output::of(Path::new("a.png")).unwrap(),
            Output::Png("a.png".into())
        );
        assert_eq!(
            Output::of(Path::new("a.GIF")).unwrap(),
            Output::Gif("a.GIF".into())
        );
        assert!(matches!(
            Output::of(Path::new("frames/")).unwrap(),
            Output::Directory(_)
        ));
        assert!(matches!(
            Output::of(Path::new("frames")).unwrap(),
            Output::Directory(_)
        ));
        assert!(Output::of(Path::new("a.jpg")).is_err());
    }
}

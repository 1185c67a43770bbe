//! `lockstep play`: the cube demo in a window (`lockstep-window`), the
//! arrows, space and Z driving this process's cube. The window's buttons
//! are the cube game's input, so a program offers `play` only when it
//! registers the shipped `cubes` game (with its snapshots).
//!
//! Three ways to play:
//! - by default, a local match: seat 0 is the keyboard, every other seat a
//!   bot, stepped at the tick rate on a schedule (`start + n · tick`) and
//!   recorded to a replay log;
//! - `--host [PORT]`: seat 0 of a match over UDP, played through
//!   `lockstep-net` exactly as `lockstep host` plays it, with the window at
//!   the seat's controls instead of the bot;
//! - `--join ADDR --code CODE`: a seat of the match hosted at `ADDR`, with
//!   the seat code its host printed, as `lockstep join`
//!   takes it. Two windows (or a window and `lockstep join`'s bots) play in
//!   lockstep, every seat checking every frame's checksum.
//!
//! The match runs on its own thread and the window on the main one (X11
//! wants its window on the thread that opened it); a [`Screen`] passes the
//! newest picture one way and the held buttons the other. `--bot` lets the
//! seat's bot play instead of the keyboard (to watch a match, and for the
//! tests under Xvfb). When the match is over the window shows its last
//! frame until it is closed (or for `--linger` seconds), and the command
//! prints `match over at frame N`, N being the frame the window shows. A
//! match that cannot be played (a host that does not answer, a port in
//! use) closes the window and ends the command with its one-line error.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use clap::Args;
use lockstep_games::Demo;
use lockstep_games::cubes::{Cubes, CubesConfig, MAX_SEATS};
use lockstep_net::SeatLog;
use lockstep_peer::Peer;
use lockstep_render::Depict;
use lockstep_sim::replay::{RecordSettings, Recorder};
use lockstep_sim::{Bot, Game, Match, settings_file};
use lockstep_window::seat::picture_of;
use lockstep_window::{Ending, GameWindow, Hud, Phase, Picture, Screen, View, WindowSettings};

use crate::error::CliError;
use crate::net::{
    self, BindArgs, Controls, HostArgs, JoinArgs, LinkArgs, LogWriter, ModeArgs, ReachArgs, Seat,
    WithBodies,
};
use crate::output::Pending;
use crate::report::OutputArgs;
use crate::threads::FrameThreads;

/// Arguments of `lockstep play`.
#[derive(Debug, Clone, Args)]
pub struct PlayArgs {
    /// Host a match over UDP on PORT (7777 if none is given; 0: any free
    /// port), seat 0 at this window; the others join with `lockstep play
    /// --join ADDR --code CODE` (or `lockstep join ADDR --code CODE` for a
    /// bot), the seat code printed when it starts.
    #[arg(long, value_name = "PORT", num_args = 0..=1, default_missing_value = "7777", conflicts_with = "join")]
    pub host: Option<u16>,
    /// Join the match hosted at ADDR (e.g. 127.0.0.1:7777; with
    /// --rendezvous: the match code, e.g. 4K7Q-M2XHP9).
    #[arg(long, value_name = "ADDR")]
    pub join: Option<String>,
    /// With `--join`: the seat code the host printed (with --rendezvous,
    /// the code given to `--join` is the one proven).
    #[arg(
        long,
        value_name = "CODE",
        requires = "join",
        conflicts_with = "rendezvous"
    )]
    pub code: Option<lockstep_net::MatchCode>,
    /// With `--host`: an open lobby, no code asked (a LAN party; not with
    /// --rendezvous).
    #[arg(long, requires = "host", conflicts_with = "rendezvous")]
    pub open: bool,
    /// Seats: this window and bots (local, 1 to 4) or windows and bots to
    /// wait for (hosting, 2 to 4). Default 2.
    #[arg(long, alias = "players", conflicts_with = "join")]
    pub seats: Option<u8>,
    /// The match seed.
    #[arg(long, default_value_t = 1, conflicts_with = "join")]
    pub seed: u64,
    /// Frames to play (60 a second).
    #[arg(long, default_value_t = 3600, conflicts_with = "join")]
    pub frames: u32,
    /// The game's settings file (TOML; default: the embedded settings).
    #[arg(long, conflicts_with = "join")]
    pub settings: Option<PathBuf>,
    /// Let the seat's bot play instead of the keyboard.
    #[arg(long)]
    pub bot: bool,
    /// Window width in pixels.
    #[arg(long, default_value_t = 1280, value_parser = clap::value_parser!(u32).range(64..=4096))]
    pub width: u32,
    /// Window height in pixels.
    #[arg(long, default_value_t = 720, value_parser = clap::value_parser!(u32).range(64..=4096))]
    pub height: u32,
    /// Start with the camera that follows your cube (C switches between it
    /// and the overview of the whole field).
    #[arg(long)]
    pub follow: bool,
    /// Where the window's top-left corner goes on the screen, `X,Y` in
    /// pixels (default: where the window manager puts it).
    #[arg(long, value_name = "X,Y", value_parser = parse_position)]
    pub position: Option<(i32, i32)>,
    /// Close the window this many seconds after the match is over (default:
    /// when the player closes it).
    #[arg(long, value_name = "SECONDS")]
    pub linger: Option<u64>,
    /// Write the window's last picture (what it showed when it closed) to
    /// this PNG file.
    #[arg(long, value_name = "PNG")]
    pub screenshot: Option<PathBuf>,
    /// Where to write this seat's replay log (default:
    /// target/play/local.log; hosting target/play/seat-0.log; joined
    /// target/play/seat-N.log, N the seat given).
    #[arg(long)]
    pub log: Option<PathBuf>,
    /// With `--host`: the match's mode (lockstep or rollback).
    #[command(flatten)]
    pub mode: ModeArgs,
    #[command(flatten)]
    pub reach: ReachArgs,
    #[command(flatten)]
    pub link: LinkArgs,
}

/// `X,Y` as a window position.
fn parse_position(text: &str) -> Result<(i32, i32), String> {
    let bad = || format!("`{text}` is not a position X,Y in pixels (e.g. 0,0)");
    let (x, y) = text.split_once(',').ok_or_else(bad)?;
    let x = x.trim().parse().map_err(|_| bad())?;
    let y = y.trim().parse().map_err(|_| bad())?;
    Ok((x, y))
}

/// Runs `lockstep play` (`cubes`: whether the program registers the cube
/// demo, the game the window plays).
pub fn run(args: &PlayArgs, cubes: bool) -> Result<ExitCode, CliError> {
    if !cubes {
        return Err(CliError::new(format!(
            "`play` is the cube demo's window, and this program does not register the `{}` game",
            Cubes::ID
        )));
    }
    let seats = args.seats.unwrap_or(2);
    let fewest = if args.host.is_some() { 2 } else { 1 };
    if !(fewest..=MAX_SEATS).contains(&seats) {
        return Err(CliError::new(format!(
            "--seats {seats}: {} plays {fewest} to {MAX_SEATS} seats",
            if args.host.is_some() {
                "a hosted match"
            } else {
                "a local match"
            }
        )));
    }
    let config = match &args.settings {
        Some(path) => settings_file::load(path).map_err(|e| CliError::new(e.to_string()))?,
        None => Cubes::default_config(),
    };
    let setup = Match {
        seats,
        seed: args.seed,
        tick_rate: 60,
    };
    let title = match (&args.host, &args.join) {
        (Some(_), _) => format!("{} play: cubes, hosting", crate::output::program()),
        (_, Some(addr)) => format!("{} play: cubes, joined at {addr}", crate::output::program()),
        _ => format!("{} play: cubes, local match", crate::output::program()),
    };
    let mut window = GameWindow::open(&WindowSettings {
        title,
        width: args.width,
        height: args.height,
        position: args.position,
        view: if args.follow {
            View::Follow
        } else {
            View::Overview
        },
    })
    .map_err(|e| CliError::new(e.to_string()))?;
    let screen = Screen::new();
    screen.show(backdrop(&config, setup, args)?);
    let (done, outcome) = mpsc::channel();
    let board = screen.clone();
    let plan = args.clone();
    std::thread::Builder::new()
        .name("match".into())
        .spawn(move || {
            let result = match (plan.host, plan.join.clone()) {
                (Some(port), _) => play_host(&plan, port, setup, &board),
                (_, Some(addr)) => play_join(&plan, addr, &board),
                _ => play_local(&plan, &config, setup, &board),
            };
            board.update_hud(|h| h.phase = Phase::Over);
            if result.is_err() {
                // Nothing to show: the error is the command's one line.
                board.dismiss();
            }
            let _ = done.send(result);
        })
        .map_err(|e| CliError::new(format!("cannot start the match thread: {e}")))?;
    let ending = window
        .run(&screen, args.linger.map(Duration::from_secs))
        .map_err(|e| CliError::new(e.to_string()))?;
    let stats = window.stats();
    if let Some(path) = &args.screenshot {
        lockstep_render::encode::write_png(window.picture(), path)
            .map_err(|e| CliError::new(e.to_string()))?;
    }
    drop(window);
    outln!(
        "window: {} pictures drawn at {}×{}, median {:.1} ms each",
        stats.drawn,
        args.width,
        args.height,
        stats.median_draw_ms
    );
    // A seat that leaves says goodbye within a second; one still waiting
    // for players has nothing to finish.
    let wait = match ending {
        Ending::Closed => Duration::from_secs(3),
        Ending::Lingered | Ending::Dismissed => Duration::from_secs(60),
    };
    match outcome.recv_timeout(wait) {
        Ok(result) => result,
        Err(_) => {
            outln!("left before the match began");
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// What the window shows before the first frame: the field (empty for a
/// joiner, who does not know the match yet) and what it waits for.
fn backdrop(config: &CubesConfig, setup: Match, args: &PlayArgs) -> Result<Picture, CliError> {
    let game = Cubes::new(config, &setup)
        .map_err(|e| CliError::new(format!("cannot start the match: {e}")))?;
    let mut scene = game.scene();
    let waiting = match (&args.host, &args.join) {
        (Some(_), _) => "WAITING FOR PLAYERS".to_string(),
        (_, Some(addr)) => {
            scene.solids.clear();
            format!("JOINING {addr}")
        }
        _ => "STARTING".to_string(),
    };
    Ok(Picture {
        scene,
        follow: None,
        hud: Hud {
            game: Cubes::ID.to_string(),
            seats: setup.seats,
            bot: args.bot,
            link: (args.host.is_some() || args.join.is_some()).then(Default::default),
            phase: Phase::Waiting(waiting),
            ..Hud::default()
        },
    })
}

/// A local match against bots, stepped on the tick's schedule and recorded.
fn play_local(
    args: &PlayArgs,
    config: &CubesConfig,
    setup: Match,
    screen: &Screen,
) -> Result<ExitCode, CliError> {
    let path = args
        .log
        .clone()
        .unwrap_or_else(|| PathBuf::from("target/play/local.log"));
    if let Some(settings) = &args.settings {
        crate::output::refuse_input("--log", &path, &[settings.as_path()])?;
    }
    let io_err = |e: std::io::Error| CliError::new(format!("{}: {e}", path.display()));
    let (pending, file) = Pending::create(&path)?;
    let mut recorder = Recorder::<Cubes, _>::new(
        config,
        setup,
        RecordSettings::default(),
        BufWriter::new(file),
    )
    .map_err(|e| CliError::new(format!("cannot start the match: {e}")))?;
    // A local match steps on this machine's cores, as a hosted seat does.
    recorder.set_threads(FrameThreads::default().count());
    // Seat 0 is the keyboard's unless `--bot`; every other seat a bot's.
    let mut bots: Vec<Option<<Cubes as Demo>::Bot>> = (0..setup.seats)
        .map(|s| (s > 0 || args.bot).then(|| Cubes::bot(s, setup.seed)))
        .collect();
    let hud = |frame: u32, checksum: Option<u64>| Hud {
        game: Cubes::ID.to_string(),
        seat: 0,
        seats: setup.seats,
        frame,
        checksum,
        link: None,
        bot: args.bot,
        phase: Phase::Playing,
        note: None,
    };
    let tick = Duration::from_micros(1_000_000 / u64::from(setup.tick_rate));
    let start = Instant::now();
    let mut frame = 0u32;
    while frame < args.frames && !screen.has_left() {
        if let Some(wait) = (start + tick * frame).checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        let held = screen.held();
        let game = recorder.engine().game();
        let inputs: Vec<_> = bots
            .iter_mut()
            .map(|bot| match bot {
                Some(bot) => bot.input(game, frame),
                None => held,
            })
            .collect();
        let checksum = recorder.advance(&inputs).map_err(io_err)?.short().0;
        frame += 1;
        let game = recorder.engine().game();
        screen.show(Picture {
            scene: game.scene(),
            follow: game.camera_target(0),
            hud: hud(frame, Some(checksum)),
        });
    }
    let (_, mut out) = recorder.finish().map_err(io_err)?;
    out.flush().map_err(io_err)?;
    drop(out);
    pending.commit()?;
    say_over(screen, &path);
    Ok(ExitCode::SUCCESS)
}

/// Prints the frame the window shows at the end, and where the log went.
fn say_over(screen: &Screen, log: &Path) {
    let frame = screen.newer_than(0).map_or(0, |(_, p)| p.hud.frame);
    outln!(
        "match over at frame {frame}; replay log written to {}",
        log.display()
    );
}

/// The window at a networked seat's controls.
struct WindowSeat {
    screen: Screen,
    bot: bool,
    shown: Option<(u32, Instant)>,
}

/// How often the overlay's link numbers refresh while no frame is stepped.
const REFRESH: Duration = Duration::from_millis(250);

impl Controls<Cubes> for WindowSeat {
    fn turn(&mut self, peer: &mut Peer<Cubes, SeatLog<LogWriter>>) -> bool {
        if self.screen.has_left() {
            return false;
        }
        if !self.bot {
            peer.set_input(self.screen.held());
        }
        let frame = peer.frame();
        let due = match self.shown {
            Some((f, at)) => f != frame || at.elapsed() >= REFRESH,
            None => true,
        };
        if due {
            self.shown = Some((frame, Instant::now()));
            self.screen.show(picture_of(peer, self.bot));
        }
        true
    }
}

fn window_seat(screen: &Screen, bot: bool) -> Seat<Cubes> {
    let notes = screen.clone();
    Seat {
        controls: Some(Box::new(WindowSeat {
            screen: screen.clone(),
            bot,
            shown: None,
        })),
        on_note: Box::new(move |note| notes.say(note)),
    }
}

fn output() -> OutputArgs {
    OutputArgs {
        machine: false,
        status_every: 1,
    }
}

/// Seat 0 of a match over UDP, hosted as `lockstep host` hosts it.
fn play_host(
    args: &PlayArgs,
    port: u16,
    setup: Match,
    screen: &Screen,
) -> Result<ExitCode, CliError> {
    let log = args
        .log
        .clone()
        .unwrap_or_else(|| PathBuf::from("target/play/seat-0.log"));
    let host = HostArgs {
        game: Some(Cubes::ID.to_string()),
        seats: Some(setup.seats),
        port,
        bind: None,
        settings: args.settings.clone(),
        match_settings: None,
        seed: setup.seed,
        frames: args.frames,
        tick_rate: setup.tick_rate,
        log: log.clone(),
        insecure: false,
        arbiter: false,
        open: args.open,
        public_spectating: false,
        reach: args.reach.clone(),
        threads: FrameThreads::default(),
        mode: args.mode.clone(),
        link: args.link.clone(),
        output: output(),
    };
    let code =
        net::host_game::<Cubes, WithBodies>(&host, setup.seats, window_seat(screen, args.bot))?;
    say_over(screen, &log);
    Ok(code)
}

/// A seat of the match hosted at `addr`, taken as `lockstep join` takes it.
fn play_join(args: &PlayArgs, addr: String, screen: &Screen) -> Result<ExitCode, CliError> {
    let join = JoinArgs {
        host: addr,
        code: args.code,
        rejoin: false,
        key: None,
        log: args.log.clone(),
        reach: args.reach.clone(),
        threads: FrameThreads::default(),
        bind: BindArgs {
            bind: None,
            port: 0,
        },
        link: args.link.clone(),
        output: output(),
    };
    let (code, log) =
        net::join_as::<Cubes, WithBodies>(&join, window_seat(screen, args.bot), "target/play")?;
    say_over(screen, &log);
    Ok(code)
}

//! `lockstep host`, `lockstep join` and `lockstep spectate`: one process
//! per seat (or spectator) playing over UDP with `lockstep-net`, bots at
//! the controls, each seat writing its replay log. `lockstep play` hosts
//! and joins through the same code with a window at the seat ([`Seat`]).
//! Every seat serves snapshot streams and falls back to them when resync
//! fails; `spectate --snapshots` watches by snapshots instead of simulating.
//!
//! Output: human lines by default; with `--machine`, one `key=value` line
//! per status and note (what `lockstep demo` reads from its children).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use lockstep_fx::{Canonical, Checksum};
use lockstep_games::Demo;
use lockstep_net::conditioner::LinkShape;
use lockstep_net::driver::{
    self, Controls, Line, NetError, Offer, Player, RunSettings, Status, Summary,
};
use lockstep_net::endpoint::Endpoint;
use lockstep_net::lobby::{Lobby, Roster, Want};
use lockstep_net::{InputDelay, Mode, Rollback};
use lockstep_peer::{Bodies, SnapshotSettings};
use lockstep_sim::settings_file;
use lockstep_sim::{Game, Match};

use crate::CliError;
use crate::games::with_game;

/// The link conditioner's settings, shared by every networked command.
#[derive(Debug, Clone, Args)]
pub struct LinkArgs {
    /// One-way delay added to every datagram sent, in ms.
    #[arg(long, default_value_t = 0)]
    pub delay: u64,
    /// Extra delay, uniform in 0..=JITTER ms.
    #[arg(long, default_value_t = 0)]
    pub jitter: u64,
    /// Datagrams lost on send, in percent (e.g. 2 or 0.5).
    #[arg(long, default_value = "0", value_parser = parse_percent)]
    pub loss: u32,
    /// Mean length of a loss burst, in datagrams (1: independent).
    #[arg(long, default_value_t = 1)]
    pub burst: u32,
    /// Datagrams sent twice, in percent.
    #[arg(long, default_value = "0", value_parser = parse_percent)]
    pub duplicate: u32,
    /// Datagrams held back so later ones overtake them, in percent.
    #[arg(long, default_value = "0", value_parser = parse_percent)]
    pub reorder: u32,
    /// Seed of the conditioner's choices.
    #[arg(long, default_value_t = 1)]
    pub link_seed: u64,
}

impl LinkArgs {
    fn shape(&self) -> LinkShape {
        LinkShape {
            delay_micros: self.delay * 1000,
            jitter_micros: self.jitter * 1000,
            loss_ppm: self.loss,
            burst: self.burst.max(1),
            duplicate_ppm: self.duplicate,
            reorder_ppm: self.reorder,
        }
    }
}

/// [`parse_percent`] for a value given outside clap.
pub fn parse_percent_arg(text: &str) -> Result<u32, CliError> {
    parse_percent(text).map_err(|e| CliError::new(format!("--loss: {e}")))
}

/// A percentage with up to four decimals, as parts per million.
fn parse_percent(text: &str) -> Result<u32, String> {
    let bad = || format!("`{text}` is not a percentage from 0 to 100");
    let (whole, frac) = text.trim().split_once('.').unwrap_or((text.trim(), ""));
    if frac.len() > 4 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let whole: u32 = whole.parse().map_err(|_| bad())?;
    let frac_ppm: u32 = format!("{frac:0<4}").parse().map_err(|_| bad())?;
    let ppm = whole
        .checked_mul(10_000)
        .and_then(|w| w.checked_add(frac_ppm))
        .ok_or_else(bad)?;
    if ppm > 1_000_000 {
        return Err(bad());
    }
    Ok(ppm)
}

/// How a hosted match steps its frames: lockstep (the default) or rollback.
#[derive(Debug, Clone, Args)]
pub struct ModeArgs {
    /// Play in rollback mode: step each frame at once on predicted inputs
    /// for the players whose inputs have not arrived, and roll back when a
    /// prediction was wrong (default: lockstep, which waits for every
    /// input). Every seat plays the host's mode.
    #[arg(long)]
    pub rollback: bool,
    /// Rollback: frames from sampling an input to stepping its frame, or
    /// `auto` to agree on one from the measured latency (0 to 8 frames).
    #[arg(long, default_value = "auto", value_parser = parse_input_delay)]
    pub input_delay: InputDelay,
    /// Rollback: frames that may be stepped on predictions before waiting
    /// (1 to 64).
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub prediction: u32,
}

impl ModeArgs {
    /// The session mode these ask for.
    pub fn mode(&self) -> Mode {
        if !self.rollback {
            return Mode::Lockstep;
        }
        Mode::Rollback(Rollback {
            max_prediction: self.prediction,
            input_delay: self.input_delay,
            sync_test_frames: 0,
        })
    }

    /// The arguments that ask for the same mode (to start a process with).
    pub fn to_args(&self) -> Vec<String> {
        if !self.rollback {
            return Vec::new();
        }
        let delay = match self.input_delay {
            InputDelay::Fixed(d) => d.to_string(),
            InputDelay::Adaptive { .. } => "auto".into(),
        };
        vec![
            "--rollback".into(),
            "--input-delay".into(),
            delay,
            "--prediction".into(),
            self.prediction.to_string(),
        ]
    }
}

/// `auto` or a number of frames from 0 to 255.
fn parse_input_delay(text: &str) -> Result<InputDelay, String> {
    if text.trim() == "auto" {
        return Ok(Rollback::DEFAULT.input_delay);
    }
    match text.trim().parse::<u8>() {
        Ok(d) => Ok(InputDelay::Fixed(u32::from(d))),
        Err(_) => Err(format!(
            "`{text}` is neither `auto` nor a number of frames from 0 to 255"
        )),
    }
}

/// What every networked command prints and how.
#[derive(Debug, Clone, Args)]
pub struct OutputArgs {
    /// One `key=value` line per status and note, for programs.
    #[arg(long)]
    pub machine: bool,
    /// Seconds between status lines.
    #[arg(long, default_value_t = 1)]
    pub status_every: u64,
}

/// Arguments of `lockstep host`.
#[derive(Debug, Args)]
pub struct HostArgs {
    /// The game: cubes or rts.
    pub game: String,
    /// Seats, each played by a bot (default: 2 for cubes, 4 for rts).
    #[arg(long)]
    pub players: Option<u8>,
    /// The UDP port to listen on (0: any free port; the address is printed).
    #[arg(long, default_value_t = 7777)]
    pub port: u16,
    /// The address to listen on (default: every IPv6 and IPv4 address).
    #[arg(long)]
    pub bind: Option<IpAddr>,
    /// The game's settings file (TOML; default: the embedded settings).
    #[arg(long)]
    pub settings: Option<PathBuf>,
    /// The match seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Frames to play.
    #[arg(long, default_value_t = 1200)]
    pub frames: u32,
    /// Frames per second.
    #[arg(long, default_value_t = 60)]
    pub tick_rate: u16,
    /// Where to write this seat's replay log.
    #[arg(long, default_value = "target/net/seat-0.log")]
    pub log: PathBuf,
    /// Send every packet in clear, unauthenticated (for tests on a trusted
    /// network; by default every session packet is sealed with keys agreed
    /// at setup).
    #[arg(long)]
    pub insecure: bool,
    #[command(flatten)]
    pub mode: ModeArgs,
    #[command(flatten)]
    pub link: LinkArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Arguments of `lockstep join`.
#[derive(Debug, Args)]
pub struct JoinArgs {
    /// The host's address, e.g. 127.0.0.1:7777.
    pub host: String,
    /// Take back a dropped seat of the running match (this process restarts
    /// a seat whose process died).
    #[arg(long)]
    pub rejoin: bool,
    /// Where to write this seat's replay log (default:
    /// target/net/seat-N.log, N the seat given).
    #[arg(long)]
    pub log: Option<PathBuf>,
    #[command(flatten)]
    pub link: LinkArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Arguments of `lockstep spectate`.
#[derive(Debug, Args)]
pub struct SpectateArgs {
    /// The host's address, e.g. 127.0.0.1:7777.
    pub host: String,
    /// Watch compressed snapshots (30 a second, range-coded against acked
    /// baselines, shown interpolated) instead of simulating the match.
    #[arg(long)]
    pub snapshots: bool,
    #[command(flatten)]
    pub link: LinkArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// What a seat's process adds to its bot and its log: an app at the
/// controls (`lockstep play`'s window) and a listener for the notes the
/// loop prints.
pub struct Seat<G: Game> {
    /// The app at the controls (`None`: the bot plays alone).
    pub controls: Option<Box<dyn Controls<G, Box<dyn Write>>>>,
    /// Hears every note, after it is printed.
    pub on_note: Box<dyn FnMut(&str)>,
}

impl<G: Game> Seat<G> {
    /// A seat played by its bot alone.
    pub fn bot() -> Seat<G> {
        Seat {
            controls: None,
            on_note: Box::new(|_| {}),
        }
    }
}

pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, CliError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::new(format!("cannot start the runtime: {e}")))
}

/// A token for this process: not secret (it travels in clear; sealing is
/// what authenticates packets), only distinct between processes and runs.
fn token() -> u32 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let seed = (nanos as u64) ^ (u64::from(std::process::id()) << 32);
    (Checksum::of(&seed.to_le_bytes()).short().0 as u32).max(1)
}

/// The loop's settings, with this process's key pair for the match (drawn
/// once: the key a joiner gives the host is the key it plays with).
fn settings(output: &OutputArgs) -> Result<RunSettings, CliError> {
    let mut s = RunSettings::new(token()).map_err(net_error)?;
    s.status_every = Duration::from_secs(output.status_every.max(1));
    Ok(s)
}

/// Prints a driver line the way `output` asks, and passes notes on to
/// `on_note`.
fn printer<'a>(output: &OutputArgs, on_note: &'a mut dyn FnMut(&str)) -> impl FnMut(Line) + 'a {
    let machine = output.machine;
    move |line| {
        if let Line::Note(n) = &line {
            on_note(n);
        }
        let text = match (&line, machine) {
            (Line::Status(s), true) => machine_status(s),
            (Line::Status(s), false) => human_status(s),
            (Line::Note(n), true) => format!("note {n}"),
            (Line::Note(n), false) => n.clone(),
        };
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{text}");
        let _ = out.flush();
    }
}

/// A status as `status key=value …` (what `lockstep demo` parses).
pub fn machine_status(s: &Status) -> String {
    format!(
        "status seat={} frame={} rtt_ms={} delay={} loss_pm={} up_bps={} down_bps={} stalls={} desyncs={} healed={} checked={} dropped={} rolled_back={} checksum={}",
        s.seat.map_or("spectator".into(), |x| x.to_string()),
        s.frame,
        s.rtt_ms.map_or("-".into(), |r| r.to_string()),
        s.delay_frames,
        s.loss_permille,
        s.up_bps,
        s.down_bps,
        s.stalls,
        s.desyncs,
        s.healed,
        s.checked,
        s.dropped,
        s.rolled_back,
        s.checksum.map_or("-".into(), |c| format!("{:016x}", c.0)),
    )
}

fn human_status(s: &Status) -> String {
    format!(
        "{} frame {:>6} | rtt {:>4} ms | delay {:>3} fr | loss {}.{}% | up {:>5} kbit/s | down {:>5} kbit/s | stalls {:>4} | desyncs {} | checksum {}",
        s.seat.map_or("spectator".into(), |x| format!("seat {x}")),
        s.frame,
        s.rtt_ms.map_or("-".into(), |r| r.to_string()),
        s.delay_frames,
        s.loss_permille / 10,
        s.loss_permille % 10,
        s.up_bps / 1000,
        s.down_bps / 1000,
        s.stalls,
        s.desyncs,
        s.checksum
            .map_or("-".into(), |c| format!("{:08x}", c.0 >> 32)),
    )
}

fn print_summary(output: &OutputArgs, summary: &Summary, log: Option<&Path>) {
    let s = &summary.status;
    let line = format!(
        "done seat={} frame={} sent_bytes={} received_bytes={} seconds={} first_frame_ms={} loop_us_per_frame={} peer_us_per_frame={} desyncs={} healed={} checked={} stalls={} rejoin_bytes={} rejoin_ms={} log={}",
        s.seat.map_or("spectator".into(), |x| x.to_string()),
        s.frame,
        summary.sent_bytes,
        summary.received_bytes,
        summary.seconds,
        summary.first_frame_ms.map_or("-".into(), |m| m.to_string()),
        summary.loop_micros_per_frame,
        summary.peer_micros_per_frame,
        s.desyncs,
        s.healed,
        s.checked,
        s.stalls,
        summary.rejoin.map_or("-".into(), |r| r.0.to_string()),
        summary.rejoin.map_or("-".into(), |r| r.1.to_string()),
        log.map_or("-".into(), |p| p.display().to_string()),
    );
    if output.machine {
        outln!("{line}");
    } else {
        outln!("{}", human_status(s));
        if let Some(p) = log {
            outln!("replay log written to {}", p.display());
        }
    }
}

fn resolve(text: &str) -> Result<SocketAddr, CliError> {
    text.to_socket_addrs()
        .map_err(|e| CliError::new(format!("`{text}` is not an address to reach: {e}")))?
        .next()
        .ok_or_else(|| CliError::new(format!("`{text}` resolves to no address")))
}

fn open(addr: SocketAddr, link: &LinkArgs) -> Result<Endpoint, CliError> {
    Endpoint::open(addr, link.shape(), link.link_seed).map_err(|e| {
        CliError::new(match e.kind() {
            std::io::ErrorKind::AddrInUse => format!("port {} is in use", addr.port()),
            _ => format!("cannot open a UDP socket on {addr}: {e}"),
        })
    })
}

fn create_log(path: &Path) -> Result<BufWriter<File>, CliError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| CliError::new(format!("{}: {e}", dir.display())))?;
    }
    File::create(path)
        .map(BufWriter::new)
        .map_err(|e| CliError::new(format!("{}: {e}", path.display())))
}

fn net_error(e: NetError) -> CliError {
    CliError::new(e.to_string())
}

/// Runs `lockstep host`.
pub fn host(args: &HostArgs) -> Result<ExitCode, CliError> {
    with_game!(args.game.as_str(), G => host_game::<G>(args, Seat::bot()))
}

/// Hosts a match of `G` at seat 0, played by its bot and `seat`.
pub(crate) fn host_game<G: Demo + Bodies>(
    args: &HostArgs,
    mut seat: Seat<G>,
) -> Result<ExitCode, CliError> {
    let config: G::Config = match &args.settings {
        Some(path) => settings_file::load(path).map_err(|e| CliError::new(e.to_string()))?,
        None => G::default_config(),
    };
    let players = args.players.unwrap_or(if G::ID == "rts" { 4 } else { 2 });
    if !(2..=8).contains(&players) {
        return Err(CliError::new(format!(
            "--players {players}: a match has 2 to 8 seats"
        )));
    }
    let setup = Match {
        players,
        seed: args.seed,
        tick_rate: args.tick_rate,
    };
    G::new(&config, &setup).map_err(|e| CliError::new(format!("cannot start the match: {e}")))?;
    let rt = runtime()?;
    rt.block_on(async {
        let ep = match args.bind {
            Some(ip) => open(SocketAddr::new(ip, args.port), &args.link)?,
            None => open(
                SocketAddr::new(Ipv6Addr::UNSPECIFIED.into(), args.port),
                &args.link,
            )
            .or_else(|_| {
                open(
                    SocketAddr::new(Ipv4Addr::UNSPECIFIED.into(), args.port),
                    &args.link,
                )
            })?,
        };
        let local = ep.local_addr().map_err(|e| CliError::new(e.to_string()))?;
        let reach = if local.ip().is_unspecified() {
            SocketAddr::new(Ipv4Addr::LOCALHOST.into(), local.port())
        } else {
            local
        };
        if args.output.machine {
            outln!("listening {reach}");
        } else {
            outln!(
                "hosting {} for {players} players at {reach}: join with `lockstep join {reach}`",
                G::ID
            );
        }
        let _ = std::io::stdout().flush();
        (seat.on_note)(&format!("waiting for players at {reach}"));
        let log: Box<dyn Write> = Box::new(create_log(&args.log)?);
        let offer = Offer::<G> {
            config,
            setup,
            frames: args.frames,
        };
        let player = Player {
            bot: Box::new(G::bot(0, setup.seed)),
            log,
            controls: seat.controls,
            prepare: Some(driver::serve_snapshots(SnapshotSettings::default())),
        };
        let mut print = printer(&args.output, &mut *seat.on_note);
        let mut settings = settings(&args.output)?;
        settings.sealed = !args.insecure;
        settings.mode = args.mode.mode();
        let (summary, log) = driver::host(ep, offer, player, settings, &mut print)
            .await
            .map_err(net_error)?;
        finish_log(log, &args.log)?;
        print_summary(&args.output, &summary, Some(&args.log));
        Ok(ExitCode::SUCCESS)
    })
}

fn finish_log(log: Option<Box<dyn Write>>, path: &Path) -> Result<(), CliError> {
    if let Some(mut w) = log {
        w.flush()
            .map_err(|e| CliError::new(format!("{}: {e}", path.display())))?;
    }
    Ok(())
}

/// Checks that this build can play `roster`, and decodes its settings.
fn accept<G: Game>(roster: &Roster) -> Result<G::Config, String> {
    if roster.game_version != G::VERSION {
        return Err(format!(
            "{} version {} here, the host plays version {}",
            G::ID,
            G::VERSION,
            roster.game_version
        ));
    }
    if Checksum::of(&roster.config) != roster.config_hash {
        return Err("the settings do not match their hash".into());
    }
    let config = <G::Config as Canonical>::from_snapshot(&roster.config)
        .map_err(|e| format!("the host's {} settings do not decode here: {e}", G::ID))?;
    if Checksum::of(&config.to_snapshot()) != roster.config_hash {
        return Err("the settings re-encode to another hash here".into());
    }
    Ok(config)
}

async fn join_roster(
    ep: &mut Endpoint,
    host: SocketAddr,
    want: Want,
    settings: &RunSettings,
    output: &OutputArgs,
) -> Result<Roster, CliError> {
    let mut quiet = |_: &str| {};
    let mut print = printer(output, &mut quiet);
    let roster = driver::join(ep, host, want, settings, &mut print)
        .await
        .map_err(net_error)?;
    if !roster.sealed && !output.machine {
        outln!("note: the host turned encryption off: packets travel in clear");
    }
    Ok(roster)
}

fn unspecified_like(addr: SocketAddr) -> SocketAddr {
    match addr {
        SocketAddr::V4(_) => SocketAddr::new(Ipv4Addr::UNSPECIFIED.into(), 0),
        SocketAddr::V6(_) => SocketAddr::new(Ipv6Addr::UNSPECIFIED.into(), 0),
    }
}

/// Runs `lockstep join`.
pub fn join(args: &JoinArgs) -> Result<ExitCode, CliError> {
    let seated = take_seat(args)?;
    let Seated {
        runtime,
        endpoint,
        host,
        roster,
        settings,
    } = seated;
    runtime.block_on(async {
        with_game!(roster.game.as_str(), G => play_game::<G>(endpoint, host, &roster, settings.clone(), args, Seat::bot()).await)
            .inspect_err(|e| refuse(host, &e.to_string()))
    })
}

/// A joiner with its seat: the runtime its socket lives in, the socket,
/// the host's address and the match.
pub(crate) struct Seated {
    pub runtime: tokio::runtime::Runtime,
    pub endpoint: Endpoint,
    pub host: SocketAddr,
    pub roster: Roster,
    /// The loop's settings, with the key pair the roster bound to the seat.
    pub settings: RunSettings,
}

/// Asks the host `args` names for a seat (or a dropped seat back) and
/// waits for the roster.
pub(crate) fn take_seat(args: &JoinArgs) -> Result<Seated, CliError> {
    let host = resolve(&args.host)?;
    let runtime = runtime()?;
    let settings = settings(&args.output)?;
    let (endpoint, roster) = runtime.block_on(async {
        let mut ep = open(unspecified_like(host), &args.link)?;
        let want = if args.rejoin {
            Want::Rejoin
        } else {
            Want::Seat
        };
        let roster = join_roster(&mut ep, host, want, &settings, &args.output).await?;
        Ok::<_, CliError>((ep, roster))
    })?;
    Ok(Seated {
        runtime,
        endpoint,
        host,
        roster,
        settings,
    })
}

/// Tells the host why this process will not play its roster.
pub(crate) fn refuse(host: SocketAddr, reason: &str) {
    if let Ok(s) = std::net::UdpSocket::bind(unspecified_like(host)) {
        let _ = s.send_to(&Lobby::Refused(reason.to_string()).encode(), host);
    }
}

/// Plays the seat `roster` gives, with its bot and `seat`.
pub(crate) async fn play_game<G: Demo + Bodies>(
    ep: Endpoint,
    host: SocketAddr,
    roster: &Roster,
    settings: RunSettings,
    args: &JoinArgs,
    mut seat: Seat<G>,
) -> Result<ExitCode, CliError> {
    let config = accept::<G>(roster).map_err(CliError::new)?;
    let seat_index = roster
        .seat
        .ok_or_else(|| CliError::new("the host gave no seat"))?;
    if !args.output.machine {
        outln!(
            "seat {seat_index} of {} players of {} (seed {}, {} frames){}",
            roster.setup.players,
            G::ID,
            roster.setup.seed,
            roster.frames,
            if roster.rejoin { ", rejoining" } else { "" }
        );
    }
    let path = args
        .log
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("target/net/seat-{seat_index}.log")));
    // A rejoining process records nothing: a replay log starts at frame 0,
    // which it never saw (the other seats' logs hold the match).
    let log: Box<dyn Write> = if roster.rejoin {
        Box::new(std::io::sink())
    } else {
        Box::new(create_log(&path)?)
    };
    let player = Player {
        bot: Box::new(G::bot(seat_index, roster.setup.seed)),
        log,
        controls: seat.controls,
        prepare: Some(driver::serve_snapshots(SnapshotSettings::default())),
    };
    let mut print = printer(&args.output, &mut *seat.on_note);
    let (summary, log) =
        driver::play::<G, _>(ep, host, roster, &config, player, settings, &mut print)
            .await
            .map_err(net_error)?;
    let written = log.is_some() && !roster.rejoin;
    if let Some(mut w) = log {
        w.flush()
            .map_err(|e| CliError::new(format!("{}: {e}", path.display())))?;
    }
    print_summary(&args.output, &summary, written.then_some(path.as_path()));
    Ok(ExitCode::SUCCESS)
}

/// Runs `lockstep spectate`.
pub fn spectate(args: &SpectateArgs) -> Result<ExitCode, CliError> {
    let host = resolve(&args.host)?;
    let rt = runtime()?;
    rt.block_on(async {
        let mut ep = open(unspecified_like(host), &args.link)?;
        let settings = settings(&args.output)?;
        let roster = join_roster(&mut ep, host, Want::Spectate, &settings, &args.output).await?;
        with_game!(roster.game.as_str(), G => watch_game::<G>(ep, host, &roster, settings.clone(), args).await)
    })
}

async fn watch_game<G: Demo + Bodies>(
    ep: Endpoint,
    host: SocketAddr,
    roster: &Roster,
    settings: RunSettings,
    args: &SpectateArgs,
) -> Result<ExitCode, CliError> {
    let config = accept::<G>(roster).map_err(CliError::new)?;
    let mut quiet = |_: &str| {};
    let mut print = printer(&args.output, &mut quiet);
    let summary = if args.snapshots {
        driver::watch_snapshots::<G>(
            ep,
            host,
            roster,
            &config,
            SnapshotSettings::default(),
            settings,
            &mut print,
        )
        .await
    } else {
        driver::watch::<G>(ep, host, roster, &config, settings, &mut print).await
    }
    .map_err(net_error)?;
    print_summary(&args.output, &summary, None);
    if summary.status.desyncs > 0 {
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::parse_percent;

    #[test]
    fn percentages_parse_without_floats() {
        assert_eq!(parse_percent("2"), Ok(20_000));
        assert_eq!(parse_percent("0.5"), Ok(5_000));
        assert_eq!(parse_percent("100"), Ok(1_000_000));
        assert_eq!(parse_percent("12.3456"), Ok(123_456));
        for bad in ["", "-1", "101", "1.23456", "x", "1e3"] {
            assert!(parse_percent(bad).is_err(), "{bad}");
        }
    }
}

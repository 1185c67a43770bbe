//! `lockstep host`, `lockstep join` and `lockstep spectate`: one process
//! per seat (or spectator) playing over UDP with `lockstep-net`, bots at
//! the controls, each seat writing its replay log. `lockstep play` hosts
//! and joins through the same code with a window at the seat ([`Seat`]).
//! The seats of a game registered with its bodies ([`WithBodies`]) serve
//! snapshot streams and fall back to them when resync fails, and
//! `spectate --snapshots` watches such a game by snapshots instead of
//! simulating; a game registered without ([`NoBodies`]) plays without
//! them, and a spectator asking for them is refused with why.
//!
//! Every line printed is written here, from the typed events the runtime
//! hands out (`lockstep_net::MatchEvent`, see `report.rs`): nothing below
//! this command turns events into text. Output: human lines by default;
//! with `--machine`, one `key=value` line per status and note (what
//! `lockstep demo` reads from its children).
//!
//! Exit status: 0 only when the match ran to its end for this process and
//! nothing it recorded was lost; a seat whose log stopped early, a match
//! that was called off, stopped or invalid, a host that went away, all end
//! non-zero with one line saying why.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use lockstep_games::Demo;
use lockstep_net::{
    Endpoint, Invite, Invites, JoinEvent, JoinFailure, JoinSetup, JoinTiming, Joining, MatchCode,
    MatchEnd, MatchEvent, MatchSettings, Refusal, Roster, Runtime, SeatEndpoint, SeatLog, SeatPlan,
    SeatTiming, Socket, Want, entropy,
};
use lockstep_peer::{Bodies, Peer, PeerEvent, SnapshotSettings, StopReason};
use lockstep_protocol::seal::Identity;
use lockstep_sim::settings_file;
use lockstep_sim::{Game, Match};

use crate::error::CliError;
use crate::report::{OutputArgs, Printer, Report};

mod args;
mod found;

pub use args::{
    BindArgs, ConnectArgs, HostArgs, JoinArgs, LinkArgs, ModeArgs, ReachArgs, SpectateArgs,
    invite_of, parse_percent_arg,
};

/// The replay log's writer in the networked commands.
pub type LogWriter = Box<dyn Write>;

/// An app at a seat's controls, such as a window: handed the seat's peer
/// after every event, it sets the local input and reads what to show.
/// Returning `false` leaves the match (the player closed the window).
pub trait Controls<G: Game> {
    /// One turn at the controls.
    fn turn(&mut self, peer: &mut Peer<G, SeatLog<LogWriter>>) -> bool;
}

/// What a seat's process adds to its bot and its log: an app at the
/// controls (`lockstep play`'s window) and a listener for the notes
/// printed.
pub struct Seat<G: Game> {
    /// The app at the controls (`None`: the bot plays alone).
    pub controls: Option<Box<dyn Controls<G>>>,
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

fn entropy_error(e: entropy::NoEntropy) -> CliError {
    CliError::new(e.to_string())
}

pub(crate) fn resolve(text: &str) -> Result<SocketAddr, CliError> {
    text.to_socket_addrs()
        .map_err(|e| CliError::new(format!("`{text}` is not an address to reach: {e}")))?
        .next()
        .ok_or_else(|| CliError::new(format!("`{text}` resolves to no address")))
}

fn open(addr: SocketAddr, link: &LinkArgs) -> Result<Socket, CliError> {
    Socket::open(addr, link.shape(), link.link_seed).map_err(|e| {
        CliError::new(match e.kind() {
            std::io::ErrorKind::AddrInUse => format!("port {} is in use", addr.port()),
            _ => format!("cannot open a UDP socket on {addr}: {e}"),
        })
    })
}

/// A joiner's socket: `--bind`/`--port`, or any port on every address of
/// the host's family.
fn open_joiner(host: SocketAddr, bind: &BindArgs, link: &LinkArgs) -> Result<Socket, CliError> {
    let ip = bind.bind.unwrap_or(match host {
        SocketAddr::V4(_) => Ipv4Addr::UNSPECIFIED.into(),
        SocketAddr::V6(_) => Ipv6Addr::UNSPECIFIED.into(),
    });
    open(SocketAddr::new(ip, bind.port), link)
}

/// A joiner's socket, the address to join and the invitation to prove:
/// `host` is the host's address and `code` the code given with `--code`,
/// or with `--rendezvous` `host` is the match code the rendezvous finds
/// the host by, and the code proven (the socket then carries the reach
/// layer, and the address is the host's mapped one).
async fn connect(
    host: &str,
    code: Option<MatchCode>,
    reach: &ReachArgs,
    bind: &BindArgs,
    link: &LinkArgs,
    printer: &mut Printer<'_>,
) -> Result<(Socket, SocketAddr, Invite), CliError> {
    match &reach.rendezvous {
        Some(rendezvous) => {
            let code = found::parse_code(host)?;
            let mut socket = open_joiner(resolve(rendezvous)?, bind, link)?;
            let host = found::find(&mut socket, &code, rendezvous, reach.relayed, printer).await?;
            Ok((socket, host, Invite::Code(code)))
        }
        None => {
            let addr = resolve(host)?;
            Ok((open_joiner(addr, bind, link)?, addr, invite_of(code)))
        }
    }
}

/// Creates the replay log at `path` (and its directory).
fn create_log(path: &Path) -> std::io::Result<LogWriter> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    Ok(Box::new(BufWriter::new(File::create(path)?)))
}

/// Whether the matches of a game use snapshot streams: [`WithBodies`] for
/// a game registered with its `Bodies`, [`NoBodies`] otherwise.
pub(crate) trait Snapshots<G: Game> {
    /// What prepares each seat's peer before its first frame.
    fn prepare() -> Option<lockstep_lobby::Preparation<G, LogWriter>>;

    /// Watches the match by snapshots (`spectate --snapshots`) to its end,
    /// into `report`; or refuses the match and says why.
    async fn watch(
        joining: Runtime<Joining>,
        token: u32,
        report: &mut Report,
        printer: &mut Printer<'_>,
    ) -> Result<(), CliError>;
}

/// A game registered without its bodies: no snapshot streams.
pub(crate) enum NoBodies {}

/// A game registered with its `Bodies`: its seats serve snapshot streams
/// and fall back to them, and spectators may watch by snapshots.
pub(crate) enum WithBodies {}

impl<G: Game> Snapshots<G> for NoBodies {
    fn prepare() -> Option<lockstep_lobby::Preparation<G, LogWriter>> {
        None
    }

    async fn watch(
        joining: Runtime<Joining>,
        _token: u32,
        _report: &mut Report,
        _printer: &mut Printer<'_>,
    ) -> Result<(), CliError> {
        let why = format!(
            "game `{}` has no snapshots: implement `lockstep_snapshot::Bodies` for it and register it with `GameTools::new().snapshots()`",
            G::ID
        );
        refuse_game(joining, why).await.map(|_| ())
    }
}

impl<G: Game + Bodies> Snapshots<G> for WithBodies {
    fn prepare() -> Option<lockstep_lobby::Preparation<G, LogWriter>> {
        Some(Box::new(|p| {
            p.enable_snapshots(SnapshotSettings::default())
                .map_err(|e| e.to_string())
        }))
    }

    async fn watch(
        joining: Runtime<Joining>,
        token: u32,
        report: &mut Report,
        printer: &mut Printer<'_>,
    ) -> Result<(), CliError> {
        let mut rt =
            watchable(joining.spectate_snapshots::<G>(token, SnapshotSettings::default())).await?;
        follow(&mut rt, report, printer).await;
        let stats = *rt.endpoint().node().stats();
        // What a snapshot spectator can check: every payload decoded
        // against baselines it acked, in sealed packets that verified.
        printer.note(&format!(
            "{} snapshots decoded against the baselines this spectator acked, {} payload bytes ({} bytes each on average), {} undecodable, {} parts refused",
            stats.snapshots,
            stats.snapshot_bytes,
            stats.snapshot_bytes / stats.snapshots.max(1),
            stats.undecodable,
            stats.parts_refused
        ));
        // What it cannot: snapshots are lossy and carry no checksum.
        printer.note(
            "not checked: snapshots are lossy and carry no checksum, so what was shown was not compared with the seats' simulation (watch without --snapshots to step the match and check every frame)",
        );
        close(&rt, report);
        Ok(())
    }
}

/// The spectator's runtime, or (the host refused it) the refusal sent
/// out and its reason as the error.
async fn watchable<E: Endpoint>(
    made: Result<Runtime<E>, lockstep_net::Unplayable>,
) -> Result<Runtime<E>, CliError> {
    match made {
        Ok(rt) => Ok(rt),
        Err((mut refused, why)) => {
            while refused.next_event().await.is_some() {}
            Err(CliError::new(format!("cannot watch: {why}")))
        }
    }
}

/// Every event of `rt`, to the report and the printer, until its end.
async fn follow<E: Endpoint>(rt: &mut Runtime<E>, report: &mut Report, printer: &mut Printer<'_>) {
    while let Some(event) = rt.next_event().await {
        report.take(rt.now(), &event);
        printer.event(&event);
        found::report_paths(rt.socket_mut(), printer);
    }
}

/// The link's last numbers and the traffic, into the report.
fn close<E: Endpoint>(rt: &Runtime<E>, report: &mut Report) {
    report.final_status(rt.endpoint().status());
    report.set_traffic(rt.socket().traffic(), rt.cost(), 0);
}

/// Runs `lockstep host`.
/// `host` of one game (a registered game's operation), with its default
/// seats.
pub(crate) type HostOp = fn(&HostArgs, u8) -> Result<ExitCode, CliError>;

/// The tokio runtime a networked command's setup ran on, and the setup
/// that got the host's roster: a joiner or spectator goes on with both.
pub(crate) type Setup<'a> = (&'a tokio::runtime::Runtime, Runtime<Joining>);

/// `join` of one game, once the host's roster names it.
pub(crate) type JoinOp =
    fn(Setup<'_>, &Roster, &JoinArgs, Printer<'_>) -> Result<ExitCode, CliError>;

/// `spectate` and `arbiter` of one game, once the host's roster names it.
pub(crate) type SpectateOp =
    fn(Setup<'_>, &SpectateArgs, Printer<'_>) -> Result<ExitCode, CliError>;

/// Runs `lockstep host`, with `op` giving the game's operation and its
/// default seats.
pub fn host(
    args: &HostArgs,
    op: impl Fn(&str) -> Result<(HostOp, u8), CliError>,
) -> Result<ExitCode, CliError> {
    let id = args
        .game
        .as_deref()
        .ok_or_else(|| CliError::new("name the game to host"))?;
    let (host, seats) = op(id)?;
    host(args, seats)
}

/// Hosts a match of `G` played by its bots: `host`'s operation, `seats`
/// seats unless `--seats` says.
pub(crate) fn host_bot<G: Demo, S: Snapshots<G>>(
    args: &HostArgs,
    seats: u8,
) -> Result<ExitCode, CliError> {
    host_game::<G, S>(args, seats, Seat::bot())
}

/// The match settings `args` ask for.
fn match_settings(args: &HostArgs, setup: &Match) -> Result<MatchSettings, CliError> {
    let base = match &args.match_settings {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| CliError::new(format!("{}: {e}", path.display())))?;
            let mut s: MatchSettings = toml::from_str(&text)
                .map_err(|e| CliError::new(format!("{}: {e}", path.display())))?;
            // The tick follows the match's tick rate unless the file says
            // otherwise.
            if !text.contains("tick_micros") {
                let ticked = MatchSettings::new(setup);
                s.peer.session.tick_micros = ticked.peer.session.tick_micros;
                s.peer.spectate.tick_micros = ticked.peer.spectate.tick_micros;
            }
            s
        }
        None => MatchSettings::new(setup),
    };
    let mut s = base.frames(args.frames).sealed(!args.insecure);
    if args.arbiter {
        s = s.arbiter(true);
    }
    if args.mode.rollback || args.match_settings.is_none() {
        s = s.mode(args.mode.mode());
    }
    if let Some(turn) = args.mode.turn {
        let session = &mut s.peer.session;
        session.turn_frames = turn;
        if turn > 1 {
            // A match played in turns is one on a tight budget: the
            // clock-sync ping goes once a second instead of five times, and
            // each packet (one a turn) carries one short checksum.
            session.timing_interval_micros = 1_000_000;
            session.checksum_redundancy = 1;
        }
    }
    Ok(s)
}

/// Hosts a match of `G` at seat 0, played by its bot and `seat`, with
/// `default_seats` seats unless `--seats` says.
pub(crate) fn host_game<G: Demo, S: Snapshots<G>>(
    args: &HostArgs,
    default_seats: u8,
    seat: Seat<G>,
) -> Result<ExitCode, CliError> {
    let config: G::Config = match &args.settings {
        Some(path) => settings_file::load(path).map_err(|e| CliError::new(e.to_string()))?,
        None => G::default_config(),
    };
    let seats = args.seats.unwrap_or(default_seats);
    if !(2..=8).contains(&seats) {
        return Err(CliError::new(format!(
            "--seats {seats}: a match has 2 to 8 seats"
        )));
    }
    let setup = Match {
        seats,
        seed: args.seed,
        tick_rate: args.tick_rate,
    };
    G::new(&config, &setup).map_err(|e| CliError::new(format!("cannot start the match: {e}")))?;
    let settings = match_settings(args, &setup)?;
    let rt = runtime()?;
    rt.block_on(async {
        let socket = match args.bind {
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
        let mut socket = socket;
        let local = socket
            .local_addr()
            .map_err(|e| CliError::new(e.to_string()))?;
        let reach = if local.ip().is_unspecified() {
            SocketAddr::new(Ipv4Addr::LOCALHOST.into(), local.port())
        } else {
            local
        };
        let invites = if args.open {
            Invites::OPEN
        } else {
            entropy::invites().map_err(entropy_error)?
        };
        let invites = if args.public_spectating {
            invites.public_spectating()
        } else {
            invites
        };
        let mut printer = Printer::new(&args.output, seat.on_note);
        let invites = match &args.reach.rendezvous {
            Some(rendezvous) => {
                found::register(
                    &mut socket,
                    rendezvous,
                    args.reach.relayed,
                    invites,
                    &mut printer,
                )
                .await?
            }
            None => invites,
        };
        printer.listening(reach, G::ID, seats, &invites);
        let mut plan = SeatPlan::<G, LogWriter>::new(entropy::token().map_err(entropy_error)?);
        plan.bot = Some(Box::new(|seat, m: &Match| Box::new(G::bot(seat, m.seed))));
        let path = args.log.clone();
        plan.log = Some(Box::new(move || create_log(&path)));
        plan.prepare = S::prepare();
        plan.threads = args.threads.count();
        let mut rt = lockstep_net::host(socket, config, setup, settings, invites, plan)
            .map_err(entropy_error)?;
        rt = with_status_every(rt, &args.output);
        let report = drive(
            &mut rt,
            &mut printer,
            seat.controls,
            None,
            Some(&args.log),
            false,
        )
        .await;
        finish(rt, report, &mut printer, Some(&args.log))
    })
}

fn with_status_every<E: Endpoint>(rt: Runtime<E>, output: &OutputArgs) -> Runtime<E> {
    let (socket, endpoint) = rt.into_parts();
    Runtime::new(
        socket,
        endpoint,
        Duration::from_secs(output.status_every.max(1)),
    )
}

/// Plays a seat's match to its end: prints every event, hands the peer to
/// the controls after each, and keeps the seat's key file (if any) in step
/// with the key pair the seat is bound to.
async fn drive<G: Game>(
    rt: &mut Runtime<SeatEndpoint<G, LogWriter>>,
    printer: &mut Printer<'_>,
    mut controls: Option<Box<dyn Controls<G>>>,
    key_file: Option<&Path>,
    log: Option<&Path>,
    rejoin: bool,
) -> Report {
    // The socket's clock started with the process.
    let mut report = Report::new(lockstep_protocol::Instant::ZERO);
    if rejoin {
        report.rejoining();
    }
    while let Some(event) = rt.next_event().await {
        let now = rt.now();
        if let (
            MatchEvent::Peer(PeerEvent::Stopped(StopReason::MatchInvalid {
                report: Some(d),
                first_frame,
            })),
            Some(log),
        ) = (&event, log)
        {
            let path = log.with_extension(format!("invalid-{first_frame}.txt"));
            let saved = d
                .files::<G>(&path)
                .iter()
                .try_for_each(|(p, bytes)| crate::output::write_file(p, bytes));
            match saved {
                Ok(()) => printer.note(&format!("desync report saved to {}", path.display())),
                Err(e) => printer.note(&format!("cannot save the desync report: {e}")),
            }
        }
        if let (MatchEvent::Join(JoinEvent::Roster(r)), Some(path)) = (&event, key_file) {
            if let Some(seat) = r.seat {
                if let Err(e) = write_key(path, rt.endpoint().identity()) {
                    printer.note(&format!("cannot keep {seat}'s key: {e}"));
                }
            }
        }
        report.take(now, &event);
        printer.event(&event);
        found::report_paths(rt.socket_mut(), printer);
        if let Some(c) = controls.as_mut() {
            let go_on = match rt.endpoint_mut().peer_mut() {
                Some(peer) => c.turn(peer),
                None => true,
            };
            if !go_on {
                rt.endpoint_mut().leave(now);
            }
        }
    }
    report
}

/// The end of a seat's command: the log flushed, the summary printed, the
/// exit status.
fn finish<G: Game>(
    mut rt: Runtime<SeatEndpoint<G, LogWriter>>,
    mut report: Report,
    printer: &mut Printer<'_>,
    log: Option<&Path>,
) -> Result<ExitCode, CliError> {
    let endpoint = rt.endpoint_mut();
    let stats = endpoint.peer_stats();
    let written = match endpoint.take_log() {
        Some(mut w) => match w.flush() {
            Ok(()) => true,
            Err(e) => {
                report.log_failed(format!("{e}"));
                false
            }
        },
        None => false,
    };
    if let Some(e) = rt.endpoint().log_error() {
        report.log_failed(e.to_string());
    }
    report.final_status(rt.endpoint().status());
    report.set_traffic(rt.socket().traffic(), rt.cost(), stats.frames_stepped);
    printer.summary(&report, written.then_some(log).flatten());
    report.exit_status()
}

/// Runs `lockstep join`: the setup until the host's roster, then the seat
/// as the game the roster names (one this program does not know is
/// refused).
pub fn join(
    args: &JoinArgs,
    op: impl Fn(&str) -> Result<JoinOp, CliError>,
) -> Result<ExitCode, CliError> {
    let rt = runtime()?;
    let mut printer = Printer::new(&args.output, Box::new(|_| {}));
    let asked = rt.block_on(asked(args, &mut printer))?;
    let Some((joining, roster)) = asked else {
        return Ok(ExitCode::FAILURE);
    };
    match op(&roster.game) {
        Ok(join) => join((&rt, joining), &roster, args, printer),
        Err(unknown) => rt.block_on(refuse_game(joining, unknown.to_string())),
    }
}

/// Plays the seat `roster` gives, as `G` with its bot, on the runtime the
/// setup ran on: `join`'s operation.
pub(crate) fn join_game<G: Demo, S: Snapshots<G>>(
    (rt, joining): (&tokio::runtime::Runtime, Runtime<Joining>),
    roster: &Roster,
    args: &JoinArgs,
    printer: Printer<'_>,
) -> Result<ExitCode, CliError> {
    let playing = play_joined::<G, S>(joining, roster, args, Seat::bot(), printer, "target/net");
    rt.block_on(playing).map(|(code, _)| code)
}

/// Joins the match hosted at `args.host` and plays its seat as `G` with
/// `seat` at the controls (a roster of another game is refused); the log
/// goes to `args.log`, or `log_dir/seat-N.log`. Gives the exit status and
/// the log's path.
#[cfg(feature = "window")]
pub(crate) fn join_as<G: Demo, S: Snapshots<G>>(
    args: &JoinArgs,
    seat: Seat<G>,
    log_dir: &str,
) -> Result<(ExitCode, PathBuf), CliError> {
    let rt = runtime()?;
    rt.block_on(async {
        let mut printer = Printer::new(&args.output, Box::new(|_| {}));
        let Some((joining, roster)) = asked(args, &mut printer).await? else {
            return Err(CliError::new("the host's answer never came"));
        };
        if roster.game != G::ID {
            let why = format!(
                "this command plays {}; the host plays {}",
                G::ID,
                roster.game
            );
            return refuse_game(joining, why).await.map(|c| (c, PathBuf::new()));
        }
        play_joined::<G, S>(joining, &roster, args, seat, printer, log_dir).await
    })
}

/// Reaches the host `args` names, asks it for a seat ([`ask`]) and runs the
/// setup until its roster; `None` when the setup failed (and said why).
async fn asked(
    args: &JoinArgs,
    printer: &mut Printer<'_>,
) -> Result<Option<(Runtime<Joining>, Box<Roster>)>, CliError> {
    let (socket, host, invite) = connect(
        &args.host,
        args.code,
        &args.reach,
        &args.bind,
        &args.link,
        printer,
    )
    .await?;
    let joining = ask(socket, host, invite, args)?;
    roster_of(joining, printer, &args.output).await
}

/// The joiner's setup: a seat (proving `invite`), or (`--rejoin`) the
/// seat whose key is in `--key`, claimed under a fresh key pair.
fn ask(
    socket: Socket,
    host: SocketAddr,
    invite: Invite,
    args: &JoinArgs,
) -> Result<Runtime<Joining>, CliError> {
    let fresh = entropy::identity().map_err(entropy_error)?;
    let now = socket.now();
    let every = Duration::from_secs(args.output.status_every.max(1));
    let setup = match (&args.key, args.rejoin) {
        (Some(path), true) => {
            let old = read_key(path)?;
            JoinSetup::rejoin(now, host, fresh, old, JoinTiming::default())
        }
        _ => JoinSetup::new(
            now,
            host,
            Want::Seat,
            invite,
            fresh,
            entropy::secret().map_err(entropy_error)?,
            JoinTiming::default(),
        ),
    };
    Ok(Runtime::new(socket, Joining::new(setup), every))
}

/// Runs a joiner's setup until its roster (printing what happens); `None`
/// when the setup failed (and said why).
pub(crate) async fn roster_of(
    mut rt: Runtime<Joining>,
    printer: &mut Printer<'_>,
    output: &OutputArgs,
) -> Result<Option<(Runtime<Joining>, Box<Roster>)>, CliError> {
    let mut report = Report::new(rt.now());
    while let Some(event) = rt.next_event().await {
        if let MatchEvent::Join(JoinEvent::Roster(r)) = &event {
            if !r.settings.sealed && !output.machine {
                outln!("note: the host turned encryption off: packets travel in clear");
            }
            return Ok(Some((rt, r.clone())));
        }
        report.take(rt.now(), &event);
        if let MatchEvent::Ended(end) = &event {
            let hint = match end {
                MatchEnd::SetupFailed(JoinFailure::Refused(Refusal::InviteNeeded)) => {
                    " (give the code the host printed with --code)"
                }
                _ => "",
            };
            return Err(CliError::new(format!("{end}{hint}")));
        }
        printer.event(&event);
    }
    Ok(None)
}

/// Refuses a roster of a game this command does not play, and says why.
async fn refuse_game(mut rt: Runtime<Joining>, why: String) -> Result<ExitCode, CliError> {
    let now = rt.now();
    rt.endpoint_mut().setup_mut().refuse(
        now,
        Refusal::Roster {
            problem: lockstep_lobby::RosterProblem::UnknownGame,
            detail: why.clone(),
        },
    );
    while rt.next_event().await.is_some() {}
    Err(CliError::new(why))
}

/// Plays the seat `roster` gives, as `G`, with its bot and `seat`.
pub(crate) async fn play_joined<G: Demo, S: Snapshots<G>>(
    joining: Runtime<Joining>,
    roster: &Roster,
    args: &JoinArgs,
    seat: Seat<G>,
    mut printer: Printer<'_>,
    log_dir: &str,
) -> Result<(ExitCode, PathBuf), CliError> {
    let seat_index = roster.seat.map_or(0, |s| s.0);
    if !args.output.machine {
        outln!(
            "seat {seat_index} of {} seats of {} (seed {}, {} frames){}",
            roster.setup.seats,
            G::ID,
            roster.setup.seed,
            roster.settings.frames,
            if roster.rejoin { ", rejoining" } else { "" }
        );
    }
    let path = args
        .log
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("{log_dir}/seat-{seat_index}.log")));
    let key_file = args
        .key
        .clone()
        .unwrap_or_else(|| path.with_extension("key"));
    let mut plan = SeatPlan::<G, LogWriter>::new(entropy::token().map_err(entropy_error)?);
    plan.bot = Some(Box::new(|seat, m: &Match| Box::new(G::bot(seat, m.seed))));
    let log_path = path.clone();
    plan.log = Some(Box::new(move || create_log(&log_path)));
    plan.prepare = S::prepare();
    plan.threads = args.threads.count();
    plan.spare_identity = Some(entropy::identity().map_err(entropy_error)?);
    printer.on_note = seat.on_note;
    let every = Duration::from_secs(args.output.status_every.max(1));
    let mut rt = match joining.play::<G, LogWriter>(plan, SeatTiming::default()) {
        Ok(rt) => rt,
        Err((mut refused, why)) => {
            while refused.next_event().await.is_some() {}
            return Err(CliError::new(format!(
                "cannot play the host's match: {why}"
            )));
        }
    };
    write_key(&key_file, rt.endpoint().identity())
        .map_err(|e| CliError::new(format!("{}: {e}", key_file.display())))?;
    if !args.output.machine {
        outln!(
            "seat key kept in {} (after a crash: `{} join {}{} --rejoin --key {}`)",
            key_file.display(),
            crate::output::program(),
            args.host,
            args.reach
                .rendezvous
                .as_ref()
                .map_or(String::new(), |r| format!(" --rendezvous {r}")),
            key_file.display()
        );
    }
    let (socket, endpoint) = rt.into_parts();
    rt = Runtime::new(socket, endpoint, every);
    let report = drive(
        &mut rt,
        &mut printer,
        seat.controls,
        Some(&key_file),
        Some(&path),
        roster.rejoin,
    )
    .await;
    let written_log = (!roster.rejoin).then_some(path.as_path());
    finish(rt, report, &mut printer, written_log).map(|code| (code, path.clone()))
}

/// Keeps `identity` in `path`: the secret as 64 hex digits, readable by
/// this user alone.
fn write_key(path: &Path, identity: &Identity) -> std::io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let hex: String = identity
        .to_secret()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut f = options.open(path)?;
    f.write_all(hex.as_bytes())?;
    f.write_all(b"\n")?;
    f.flush()
}

/// Reads a key file written by [`write_key`].
fn read_key(path: &Path) -> Result<Identity, CliError> {
    let bad = |why: &str| CliError::new(format!("{}: {why}", path.display()));
    let text = std::fs::read_to_string(path).map_err(|e| bad(&e.to_string()))?;
    let text = text.trim();
    if text.len() != 64 || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(bad("not a seat key (64 hex digits)"));
    }
    let mut secret = [0u8; 32];
    for (i, b) in secret.iter_mut().enumerate() {
        *b = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).map_err(|_| bad("not hex"))?;
    }
    Ok(Identity::from_secret(secret))
}

/// Runs `lockstep spectate` (and `arbiter`): the setup until the host's
/// roster, then the match watched as the game the roster names (one this
/// program does not know is refused).
pub fn spectate(
    args: &SpectateArgs,
    op: impl Fn(&str) -> Result<SpectateOp, CliError>,
) -> Result<ExitCode, CliError> {
    let w = &args.connect;
    let rt = runtime()?;
    let mut printer = Printer::new(&w.output, Box::new(|_| {}));
    let asked = rt.block_on(async {
        let (socket, host, invite) =
            connect(&w.host, args.code, &w.reach, &w.bind, &w.link, &mut printer).await?;
        let want = if args.arbiter {
            Want::Arbitrate
        } else {
            Want::Spectate
        };
        let joining = lockstep_net::join(socket, host, want, invite).map_err(entropy_error)?;
        let (socket, endpoint) = joining.into_parts();
        let joining = Runtime::new(
            socket,
            endpoint,
            Duration::from_secs(w.output.status_every.max(1)),
        );
        roster_of(joining, &mut printer, &w.output).await
    })?;
    let Some((joining, roster)) = asked else {
        return Ok(ExitCode::FAILURE);
    };
    match op(&roster.game) {
        Ok(spectate) => spectate((&rt, joining), args, printer),
        Err(unknown) => rt.block_on(refuse_game(joining, unknown.to_string())),
    }
}

/// Watches the match as `G` on the runtime the setup ran on:
/// `spectate`'s operation.
pub(crate) fn spectate_game<G: Game, S: Snapshots<G>>(
    (rt, joining): (&tokio::runtime::Runtime, Runtime<Joining>),
    args: &SpectateArgs,
    printer: Printer<'_>,
) -> Result<ExitCode, CliError> {
    rt.block_on(watch::<G, S>(joining, args, printer))
}

/// Watches the match as `G` to its end: by snapshots with `--snapshots`,
/// else stepping it and checking every checksum.
async fn watch<G: Game, S: Snapshots<G>>(
    joining: Runtime<Joining>,
    args: &SpectateArgs,
    mut printer: Printer<'_>,
) -> Result<ExitCode, CliError> {
    let token = entropy::token().map_err(entropy_error)?;
    let mut report = Report::new(joining.now());
    report.spectator();
    if args.snapshots {
        S::watch(joining, token, &mut report, &mut printer).await?;
    } else {
        let mut rt = watchable(joining.spectate::<G>(token)).await?;
        rt.endpoint_mut().set_threads(args.threads.count());
        follow(&mut rt, &mut report, &mut printer).await;
        close(&rt, &mut report);
    }
    printer.summary(&report, None);
    report.exit_status()
}

//! The loops that play a match over an [`Endpoint`]: [`host`] (seat 0: seats
//! the joiners, then plays and keeps answering late joiners, rejoiners and
//! spectators), [`join`] (asks a host for a seat and gets the [`Roster`]),
//! [`play`] (a seat's match), [`watch`] (a spectator's) and
//! [`watch_snapshots`] (a spectator's that shows snapshots instead of
//! simulating). A seat is played by its bot, or by an app at its
//! [`Controls`] (a window), which the loop hands the `Peer` once per turn.
//!
//! Invariants: the loops only move bytes and time. Every decision about the
//! match is the sans-IO crates' (`Peer`, `Spectator`, the session); the
//! loops map addresses to seats and spectators, and a datagram from an
//! address they cannot place is dropped and counted as stray. Every wait is
//! bounded: a host that never answers, a match that never ends and a
//! goodbye that is never flushed each end in an error or a summary within
//! their timeout.

use std::collections::BTreeMap;
use std::io::Write;
use std::net::SocketAddr;
use std::time::Duration;

use lockstep_fx::ShortChecksum;
use lockstep_peer::{
    Bodies, Peer, PeerEvent, PeerSettings, SnapshotSettings, SnapshotSpectator,
    SnapshotSpectatorEvent, Spectator, SpectatorEvent,
};
use lockstep_protocol::packet::{Header, Kind};
use lockstep_protocol::seal::{Identity, PublicKey};
use lockstep_protocol::watch::WatcherId;
use lockstep_protocol::{Instant, Mode, PlayerId, Security};
use lockstep_sim::{Bot, Game, Match};

use crate::endpoint::Endpoint;
use crate::lobby::{Join, Lobby, Roster, Seating, Want};

/// How a loop runs.
#[derive(Debug, Clone)]
pub struct RunSettings {
    /// How often a [`Line::Status`] is reported.
    pub status_every: Duration,
    /// How long a seat keeps playing after the last frame, so the others
    /// reach it too before it says goodbye (1 s).
    pub linger: Duration,
    /// How long a joiner waits for any answer from the host (5 s).
    pub answer_timeout: Duration,
    /// A session token for this process (random, never 0).
    pub token: u32,
    /// This process's key pair for the match.
    pub identity: Identity,
    /// A host: whether the match's packets are sealed (the default). A
    /// joiner follows the host's roster.
    pub sealed: bool,
    /// A host: lockstep (the default) or rollback. A joiner follows the
    /// host's roster.
    pub mode: Mode,
}

impl RunSettings {
    /// Defaults with `token` and a key pair drawn from the operating
    /// system's random source.
    pub fn new(token: u32) -> Result<RunSettings, NetError> {
        Ok(RunSettings {
            status_every: Duration::from_secs(1),
            linger: Duration::from_secs(1),
            answer_timeout: Duration::from_secs(5),
            token: token.max(1),
            identity: fresh_identity()?,
            sealed: true,
            mode: Mode::Lockstep,
        })
    }
}

/// A key pair whose secret comes from the operating system's random source.
pub fn fresh_identity() -> Result<Identity, NetError> {
    let mut secret = [0u8; 32];
    getrandom::fill(&mut secret)
        .map_err(|e| NetError::Start(format!("no random source for the match keys: {e}")))?;
    Ok(Identity::from_secret(secret))
}

/// The session security a seat plays with, from the roster and its key
/// pair.
fn security(roster_sealed: bool, keys: &[PublicKey], identity: &Identity) -> Security {
    if roster_sealed {
        Security::Sealed {
            identity: identity.clone(),
            seats: keys.to_vec(),
        }
    } else {
        Security::Plain
    }
}

/// Why a loop stopped early.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    /// A socket call failed.
    #[error("socket: {0}")]
    Io(#[from] std::io::Error),
    /// The host did not answer.
    #[error("the host at {addr} did not answer within {secs} s")]
    NoAnswer {
        /// The host's address.
        addr: SocketAddr,
        /// Seconds waited.
        secs: u64,
    },
    /// The host (or a joiner) refused.
    #[error("refused: {0}")]
    Refused(String),
    /// The match could not start.
    #[error("cannot start the match: {0}")]
    Start(String),
    /// The match ran past its time limit.
    #[error("the match did not reach frame {frames} within {secs} s (stuck at frame {at})")]
    Stuck {
        /// The last frame.
        frames: u32,
        /// The frame reached.
        at: u32,
        /// Seconds allowed.
        secs: u64,
    },
}

/// What a seat's or spectator's loop reports as it goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// A periodic status.
    Status(Status),
    /// Something worth a line of its own (a seat joined, left, a desync).
    Note(String),
}

/// One status line's numbers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Status {
    /// The seat (`None`: a spectator).
    pub seat: Option<u8>,
    /// The next frame to step.
    pub frame: u32,
    /// The largest median round trip to a peer, in ms.
    pub rtt_ms: Option<u64>,
    /// The delay in frames: the playout delay in lockstep, the input delay
    /// in rollback.
    pub delay_frames: u32,
    /// Frames stepped again after rollbacks so far (rollback mode).
    pub rolled_back: u64,
    /// Datagrams the link conditioner dropped, per mille of those sent.
    pub loss_permille: u64,
    /// Bits per second sent over the last period.
    pub up_bps: u64,
    /// Bits per second received over the last period.
    pub down_bps: u64,
    /// Stall ticks so far.
    pub stalls: u64,
    /// Desyncs seen so far.
    pub desyncs: u64,
    /// Healed desyncs (states loaded).
    pub healed: u64,
    /// A spectator's settled checksums compared with its own.
    pub checked: u64,
    /// The newest frame's short checksum.
    pub checksum: Option<ShortChecksum>,
    /// Datagrams dropped by the session or relay, and ones from addresses
    /// the loop could not place.
    pub dropped: u64,
    /// Spectators watching through this seat.
    pub watchers: u64,
}

/// How a loop ended.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    /// The last status.
    pub status: Status,
    /// Milliseconds from the start of the loop to the first frame stepped.
    pub first_frame_ms: Option<u64>,
    /// Microseconds per frame stepped spent in the network loop outside
    /// the `Peer`'s calls (receiving, routing by address, the conditioner,
    /// sending): the runtime's own cost.
    pub loop_micros_per_frame: u64,
    /// Microseconds per frame stepped spent inside the `Peer`'s calls (the
    /// game's steps and checksums, the session, the relay).
    pub peer_micros_per_frame: u64,
    /// Bytes sent and received.
    pub sent_bytes: u64,
    /// Bytes received.
    pub received_bytes: u64,
    /// Seconds the loop ran.
    pub seconds: u64,
    /// For a rejoined seat: the state's size and the ms from start to load.
    pub rejoin: Option<(u64, u64)>,
}

/// The match a host offers.
#[derive(Debug, Clone)]
pub struct Offer<G: Game> {
    /// The game's settings.
    pub config: G::Config,
    /// Players, seed, tick rate.
    pub setup: Match,
    /// Frames the match lasts.
    pub frames: u32,
}

/// Who plays a seat, and where its replay log goes.
pub struct Player<G: Game, W: Write> {
    /// The bot at the controls (until [`Player::controls`] sets an input).
    pub bot: Box<dyn Bot<G>>,
    /// The replay log's destination.
    pub log: W,
    /// An app at the seat's controls, such as a window (`None`: the bot
    /// plays alone).
    pub controls: Option<Box<dyn Controls<G, W>>>,
    /// Called once on the seat's [`Peer`] before the match (e.g. to
    /// [`Peer::enable_snapshots`]); an error stops the seat.
    pub prepare: Option<Preparation<G, W>>,
}

/// An app at a seat's controls, such as a window. The loop hands it the
/// peer once per turn, after the peer has handled what arrived, stepped
/// what was due and reported its events.
pub trait Controls<G: Game, W: Write> {
    /// Sets the local input ([`Peer::set_input`], which retires the bot)
    /// and reads what to show ([`Peer::game`], [`Peer::session`]).
    /// Returning `false` leaves the match now (the player closed the
    /// window): the seat says goodbye and the loop ends as after its last
    /// frame.
    fn turn(&mut self, peer: &mut Peer<G, W>) -> bool;
}

/// A [`Player::prepare`] call.
pub type Preparation<G, W> = Box<dyn FnOnce(&mut Peer<G, W>) -> Result<(), String>>;

/// A [`Player::prepare`] that lets the seat serve snapshot streams and
/// fall back to them with `settings`.
pub fn serve_snapshots<G: Game + Bodies, W: Write>(
    settings: SnapshotSettings,
) -> Preparation<G, W> {
    Box::new(move |p: &mut Peer<G, W>| p.enable_snapshots(settings).map_err(|e| e.to_string()))
}

/// Seats the joiners (seat 0 is the host's), then plays seat 0 of the
/// match with `player`.
pub async fn host<G: Game, W: Write>(
    mut ep: Endpoint,
    offer: Offer<G>,
    player: Player<G, W>,
    settings: RunSettings,
    on_line: &mut dyn FnMut(Line),
) -> Result<(Summary, Option<W>), NetError> {
    let sealed = settings.sealed;
    let mode = settings.mode;
    let roster = |seating: &Seating, keys: &[PublicKey], seat: Option<u8>, rejoin: bool| {
        let config = lockstep_fx::Canonical::to_snapshot(&offer.config);
        Roster {
            game: G::ID.to_string(),
            game_version: G::VERSION,
            config_hash: lockstep_fx::Checksum::of(&config),
            config,
            setup: offer.setup,
            frames: offer.frames,
            seat,
            rejoin,
            addresses: seating.addresses().to_vec(),
            sealed,
            keys: keys.to_vec(),
            mode,
        }
    };
    let mut seating = Seating::new(offer.setup.players);
    // Each seat's key as its joiner gave it; a joiner whose roster was lost
    // asks again with the same key.
    let mut keys = vec![settings.identity.public(); usize::from(offer.setup.players)];
    let mut keyed = vec![false; usize::from(offer.setup.players)];
    keyed[0] = true;
    // Seat the joiners.
    while !seating.full() {
        let deadline = ep.now().plus(100_000);
        for (from, bytes) in ep.receive(deadline).await {
            match Lobby::decode(&bytes) {
                Ok(Lobby::Join(j)) => {
                    let answer = match lobby_check(&j) {
                        Err(reason) => Lobby::Refused(reason),
                        Ok(()) if j.want != Want::Seat => Lobby::Refused(
                            "the match has not started: join it, or wait to rejoin or watch".into(),
                        ),
                        Ok(()) => match seating.take(from) {
                            Some(seat)
                                if keyed[usize::from(seat)] && keys[usize::from(seat)] != j.key =>
                            {
                                Lobby::Refused("this address holds a seat under another key".into())
                            }
                            Some(seat) => {
                                if !keyed[usize::from(seat)] {
                                    on_line(Line::Note(format!("seat {seat} joined from {from}")));
                                }
                                keys[usize::from(seat)] = j.key;
                                keyed[usize::from(seat)] = true;
                                if seating.full() {
                                    Lobby::Roster(roster(&seating, &keys, Some(seat), false))
                                } else {
                                    Lobby::Waiting {
                                        seat,
                                        joined: seating.joined(),
                                        players: offer.setup.players,
                                    }
                                }
                            }
                            None => Lobby::Refused("the match is full".into()),
                        },
                    };
                    ep.send(from, answer.encode());
                }
                Ok(Lobby::Refused(reason)) => {
                    on_line(Line::Note(format!("{from} refused the match: {reason}")))
                }
                _ => {}
            }
        }
        ep.flush();
    }
    let seats = seating.addresses().to_vec();
    let mut table = Table::new(seats, None);
    let security = security(sealed, &keys, &settings.identity);
    let mut lobby = HostLobby {
        seating,
        keys,
        roster: Box::new(roster),
    };
    play_loop(
        &mut ep,
        &mut table,
        Some(&mut lobby),
        PlayPlan {
            config: &offer.config,
            setup: offer.setup,
            frames: offer.frames,
            seat: 0,
            rejoin: false,
            security,
            mode,
        },
        player,
        settings,
        on_line,
    )
    .await
}

/// Asks the host at `host` for `want` and waits for the [`Roster`].
pub async fn join(
    ep: &mut Endpoint,
    host: SocketAddr,
    want: Want,
    settings: &RunSettings,
    on_line: &mut dyn FnMut(Line),
) -> Result<Roster, NetError> {
    let own = settings.identity.public();
    let join = Lobby::Join(Join {
        want,
        protocol: lockstep_protocol::packet::VERSION,
        key: own,
    })
    .encode();
    let timeout = settings.answer_timeout.as_micros() as u64;
    let mut heard_at = ep.now();
    let mut waiting = None;
    loop {
        ep.send(host, join.clone());
        ep.flush();
        let deadline = ep.now().plus(100_000);
        while ep.now() < deadline {
            for (from, bytes) in ep.receive(deadline).await {
                if from != host {
                    continue;
                }
                match Lobby::decode(&bytes) {
                    Ok(Lobby::Roster(r)) => {
                        let bound = r
                            .seat
                            .map_or(r.keys.first(), |s| r.keys.get(usize::from(s)));
                        // A seat must be bound to our key: another key means
                        // someone else would speak for us.
                        if r.sealed && r.seat.is_some() && bound != Some(&own) {
                            let why = "the roster binds another key to our seat";
                            ep.send(host, Lobby::Refused(why.into()).encode());
                            ep.flush();
                            return Err(NetError::Refused(why.into()));
                        }
                        return Ok(r);
                    }
                    Ok(Lobby::Refused(reason)) => return Err(NetError::Refused(reason)),
                    Ok(Lobby::Waiting {
                        seat,
                        joined,
                        players,
                    }) => {
                        heard_at = ep.now();
                        if waiting != Some(joined) {
                            waiting = Some(joined);
                            on_line(Line::Note(format!(
                                "seat {seat}: {joined} of {players} seats taken, waiting"
                            )));
                        }
                    }
                    _ => {}
                }
            }
        }
        if ep.now().since(heard_at) > timeout {
            return Err(NetError::NoAnswer {
                addr: host,
                secs: settings.answer_timeout.as_secs(),
            });
        }
    }
}

/// Plays the seat `roster` gives this process, joined at `host`, with
/// `player` at the controls.
pub async fn play<G: Game, W: Write>(
    mut ep: Endpoint,
    host: SocketAddr,
    roster: &Roster,
    config: &G::Config,
    player: Player<G, W>,
    settings: RunSettings,
    on_line: &mut dyn FnMut(Line),
) -> Result<(Summary, Option<W>), NetError> {
    let seat = roster
        .seat
        .ok_or_else(|| NetError::Start("the roster gives no seat".into()))?;
    let mut table = Table::new(roster.addresses.clone(), Some(host));
    play_loop(
        &mut ep,
        &mut table,
        None,
        PlayPlan {
            config,
            setup: roster.setup,
            frames: roster.frames,
            seat,
            rejoin: roster.rejoin,
            security: security(roster.sealed, &roster.keys, &settings.identity),
            mode: roster.mode,
        },
        player,
        settings,
        on_line,
    )
    .await
}

fn lobby_check(j: &Join) -> Result<(), String> {
    if j.protocol != lockstep_protocol::packet::VERSION {
        return Err(format!(
            "wire protocol {}, the host speaks {}",
            j.protocol,
            lockstep_protocol::packet::VERSION
        ));
    }
    Ok(())
}

type RosterFn<'a> = dyn Fn(&Seating, &[PublicKey], Option<u8>, bool) -> Roster + 'a;

/// The host's answers to joiners once the match runs.
struct HostLobby<'a> {
    seating: Seating,
    /// Every seat's key as now bound (a returning process brings a new one).
    keys: Vec<PublicKey>,
    roster: Box<RosterFn<'a>>,
}

/// Which address is which seat or spectator.
struct Table {
    seats: Vec<Option<SocketAddr>>,
    watchers: BTreeMap<SocketAddr, WatcherId>,
    next_watcher: u32,
    /// Seats that came back whose new address is not known here yet.
    returning: Vec<bool>,
    dropped: Vec<bool>,
    stray: u64,
}

impl Table {
    fn new(mut seats: Vec<Option<SocketAddr>>, host: Option<SocketAddr>) -> Table {
        if let (Some(h), Some(first)) = (host, seats.first_mut()) {
            *first = Some(h);
        }
        let n = seats.len();
        Table {
            seats,
            watchers: BTreeMap::new(),
            next_watcher: 0,
            returning: vec![false; n],
            dropped: vec![false; n],
            stray: 0,
        }
    }

    /// Whether a handshake from an unknown address may be seat `seat`'s
    /// restarted process (it moves there once a packet of it is taken).
    fn moving(&self, seat: usize) -> bool {
        self.dropped.get(seat) == Some(&true) || self.returning.get(seat) == Some(&true)
    }

    fn seat_of(&self, addr: SocketAddr) -> Option<u8> {
        self.seats
            .iter()
            .position(|a| *a == Some(addr))
            .map(|s| s as u8)
    }
}

struct PlayPlan<'a, G: Game> {
    config: &'a G::Config,
    setup: Match,
    frames: u32,
    seat: u8,
    rejoin: bool,
    security: Security,
    mode: Mode,
}

/// Most spectator addresses one seat tracks.
const MAX_WATCHER_ADDRESSES: usize = 16;

async fn play_loop<G: Game, W: Write>(
    ep: &mut Endpoint,
    table: &mut Table,
    mut lobby: Option<&mut HostLobby<'_>>,
    plan: PlayPlan<'_, G>,
    player: Player<G, W>,
    settings: RunSettings,
    on_line: &mut dyn FnMut(Line),
) -> Result<(Summary, Option<W>), NetError> {
    let mut ps = PeerSettings::new(&plan.setup, PlayerId(plan.seat), settings.token);
    ps.session.rejoin = plan.rejoin;
    ps.session.mode = plan.mode;
    let sealed = matches!(plan.security, Security::Sealed { .. });
    ps.session.security = plan.security.clone();
    let mut peer = Peer::<G, W>::new(plan.config, plan.setup, ps, player.log)
        .map_err(|e| NetError::Start(e.to_string()))?;
    peer.set_bot(player.bot);
    let mut controls = player.controls;
    if let Some(prepare) = player.prepare {
        prepare(&mut peer).map_err(NetError::Start)?;
    }
    let start = ep.now();
    let status_every = settings.status_every.as_micros() as u64;
    let tick = u64::from(1_000_000 / u32::from(plan.setup.tick_rate.max(1)));
    // A generous bound: three times the match's length, plus a minute.
    let limit = tick * u64::from(plan.frames) * 3 + 60_000_000;
    let mut next_status = start.plus(status_every);
    let mut last = (ep.traffic(), start);
    let mut summary = Summary::default();
    let mut status = Status {
        seat: Some(plan.seat),
        ..Status::default()
    };
    let mut end_at: Option<Instant> = None;
    let mut busy = Duration::ZERO;
    let mut in_peer = Duration::ZERO;
    loop {
        let now = ep.now();
        let mut deadline = now.plus(50_000).min(next_status);
        for t in [peer.poll_timeout(), ep.next_send(), end_at]
            .into_iter()
            .flatten()
        {
            deadline = deadline.min(t);
        }
        let datagrams = ep.receive(deadline).await;
        let clock = std::time::Instant::now();
        let now = ep.now();
        for (from, bytes) in datagrams {
            let call = std::time::Instant::now();
            if crate::lobby::is_lobby(&bytes) {
                // A joiner whose roster was lost asks again; a late joiner,
                // a restarted seat or a spectator asks for the first time.
                match lobby.as_deref_mut() {
                    Some(l) => answer_late_join(ep, table, l, &mut peer, from, &bytes, on_line),
                    None => table.stray += 1,
                }
            } else if let Some(seat) = table.seat_of(from) {
                peer.handle_datagram(now, PlayerId(seat), &bytes);
                in_peer += call.elapsed();
            } else if let Some(w) = table.watchers.get(&from) {
                peer.handle_watcher_datagram(now, *w, &bytes);
                in_peer += call.elapsed();
            } else {
                match Header::peek(&bytes) {
                    // A spectator of a plain match greets first; a sealed
                    // one was placed when it asked the lobby with its key.
                    Some(h)
                        if h.kind == Kind::WatchHello
                            && !sealed
                            && table.watchers.len() < MAX_WATCHER_ADDRESSES =>
                    {
                        let w = WatcherId(table.next_watcher);
                        table.next_watcher += 1;
                        table.watchers.insert(from, w);
                        peer.handle_watcher_datagram(now, w, &bytes);
                    }
                    // A restarted process of a dropped seat greets from a
                    // new address: the seat moves there once a packet from
                    // it is taken (in a sealed match, once it opens under
                    // the returning process's key).
                    Some(Header {
                        kind: Kind::Hello,
                        seat: Some(seat),
                        ..
                    }) if table.moving(seat.index()) => {
                        if peer.handle_datagram(now, seat, &bytes) {
                            table.seats[seat.index()] = Some(from);
                            table.returning[seat.index()] = false;
                        }
                    }
                    _ => table.stray += 1,
                }
            }
        }
        if peer.poll_timeout().is_some_and(|t| t <= now) {
            let call = std::time::Instant::now();
            peer.handle_timeout(now);
            in_peer += call.elapsed();
        }
        while let Some(e) = peer.poll_event() {
            match e {
                PeerEvent::Stepped { .. } => {
                    if summary.first_frame_ms.is_none() {
                        summary.first_frame_ms = Some(now.since(start) / 1000);
                    }
                }
                PeerEvent::RolledBack { .. } => {}
                PeerEvent::NotDeterministic { frame, .. } => on_line(Line::Note(format!(
                    "frame {frame} stepped again with the same inputs gave another checksum: \
                     the game is not deterministic"
                ))),
                PeerEvent::Desync { frame, .. } => {
                    status.desyncs += 1;
                    on_line(Line::Note(format!("desync at frame {frame}")));
                }
                PeerEvent::Healed {
                    frame,
                    state_bytes,
                    diagnosis,
                } => {
                    status.healed += 1;
                    if plan.rejoin && summary.rejoin.is_none() {
                        summary.rejoin = Some((state_bytes, now.since(start) / 1000));
                    }
                    let what = diagnosis
                        .map(|d| format!(": {}", d.report.to_text().lines().next().unwrap_or("")))
                        .unwrap_or_default();
                    on_line(Line::Note(format!(
                        "loaded the state after frame {frame} ({state_bytes} bytes){what}"
                    )));
                }
                PeerEvent::SeatDropped { seat, last_frame } => {
                    if let Some(d) = table.dropped.get_mut(seat.index()) {
                        *d = true;
                    }
                    on_line(Line::Note(format!(
                        "seat {} dropped after frame {}",
                        seat.0,
                        last_frame.map_or("-".into(), |f| f.to_string())
                    )));
                }
                PeerEvent::SeatReturned { seat, frame } => {
                    if let Some(d) = table.dropped.get_mut(seat.index()) {
                        *d = false;
                    }
                    // Its new address is learned from its first packet
                    // taken (the host already has it from the lobby).
                    if let Some(r) = table.returning.get_mut(seat.index()) {
                        *r = lobby.is_none() && seat.0 != plan.seat;
                    }
                    on_line(Line::Note(format!(
                        "seat {} returns at frame {frame}",
                        seat.0
                    )));
                }
                PeerEvent::Left { peer, reason } => {
                    on_line(Line::Note(format!("seat {} left ({reason:?})", peer.0)))
                }
                PeerEvent::ResyncFailed { reason } => {
                    on_line(Line::Note(format!("resync failed: {reason:?}")))
                }
                PeerEvent::Incompatible { peer } => on_line(Line::Note(format!(
                    "seat {} plays another game or version",
                    peer.0
                ))),
                PeerEvent::RecordingStopped { frame, reason } => on_line(Line::Note(format!(
                    "the replay log stopped at frame {frame}: {reason}"
                ))),
                PeerEvent::WatcherJoined { watcher } => {
                    status.watchers += 1;
                    on_line(Line::Note(format!("spectator {} joined", watcher.0)))
                }
                PeerEvent::WatcherLeft { watcher, reason } => {
                    status.watchers = status.watchers.saturating_sub(1);
                    table.watchers.retain(|_, w| *w != watcher);
                    on_line(Line::Note(format!(
                        "spectator {} left ({reason:?})",
                        watcher.0
                    )))
                }
                PeerEvent::WatcherIncompatible { watcher } => {
                    table.watchers.retain(|_, w| *w != watcher);
                }
                PeerEvent::SwitchedToSnapshots { authority, reason } => on_line(Line::Note(
                    format!("showing seat {}'s snapshots ({reason:?})", authority.0),
                )),
                PeerEvent::BackToLockstep { frame } => on_line(Line::Note(format!(
                    "back in lockstep (clean through frame {frame})"
                ))),
                PeerEvent::Stopped(reason) => {
                    on_line(Line::Note(format!("stopped: {reason:?}")));
                    end_at = Some(now);
                }
                PeerEvent::Connected { .. } | PeerEvent::Started => {}
            }
        }
        if let Some(c) = controls.as_mut() {
            if !c.turn(&mut peer) {
                end_at = Some(now);
            }
        }
        send_all(ep, table, &mut peer, now);
        busy += clock.elapsed();
        if now >= next_status {
            next_status = now.plus(status_every);
            fill_status(&mut status, &peer, ep, table, &mut last, now);
            on_line(Line::Status(status.clone()));
        }
        if end_at.is_none() && peer.frame() >= plan.frames {
            end_at = Some(now.plus(settings.linger.as_micros() as u64));
        }
        if end_at.is_some_and(|t| now >= t) {
            break;
        }
        if now.since(start) > limit {
            return Err(NetError::Stuck {
                frames: plan.frames,
                at: peer.frame(),
                secs: limit / 1_000_000,
            });
        }
    }
    peer.disconnect(ep.now());
    send_all(ep, table, &mut peer, ep.now());
    drain_sends(ep).await;
    let now = ep.now();
    fill_status(&mut status, &peer, ep, table, &mut last, now);
    let stepped = peer.stats().frames_stepped.max(1);
    summary.loop_micros_per_frame = busy.saturating_sub(in_peer).as_micros() as u64 / stepped;
    summary.peer_micros_per_frame = in_peer.as_micros() as u64 / stepped;
    summary.status = status;
    let t = ep.traffic();
    summary.sent_bytes = t.sent_bytes;
    summary.received_bytes = t.received_bytes;
    summary.seconds = now.since(start) / 1_000_000;
    let log = peer.finish()?;
    Ok((summary, log))
}

/// Lets the conditioner deliver what it still holds (a goodbye, the last
/// inputs), for at most a second.
async fn drain_sends(ep: &mut Endpoint) {
    let until = ep.now().plus(1_000_000);
    while let Some(t) = ep.next_send() {
        if t > until {
            break;
        }
        let _ = ep.receive(t).await;
        ep.flush();
    }
}

fn send_all<G: Game, W: Write>(
    ep: &mut Endpoint,
    table: &Table,
    peer: &mut Peer<G, W>,
    now: Instant,
) {
    while let Some(t) = peer.poll_transmit(now) {
        if let Some(Some(addr)) = table.seats.get(t.to.index()) {
            ep.send(*addr, t.bytes);
        }
    }
    while let Some(t) = peer.poll_watcher_transmit(now) {
        if let Some((addr, _)) = table.watchers.iter().find(|(_, w)| **w == t.to) {
            ep.send(*addr, t.bytes);
        }
    }
    ep.flush();
}

fn fill_status<G: Game, W: Write>(
    status: &mut Status,
    peer: &Peer<G, W>,
    ep: &Endpoint,
    table: &Table,
    last: &mut (crate::endpoint::Traffic, Instant),
    now: Instant,
) {
    let session = peer.session();
    let players = session.config().players;
    status.frame = peer.frame();
    status.rtt_ms = (0..players)
        .filter(|p| *p != session.config().local.0)
        .filter_map(|p| session.rtt_micros(PlayerId(p)))
        .max()
        .map(|r| r / 1000);
    status.delay_frames = session.delay_frames();
    status.rolled_back = session.stats().frames_rolled_back;
    status.stalls = session.stats().stall_ticks;
    status.checksum = peer.newest_checksum().map(|(_, c)| c.short());
    status.dropped =
        session.stats().dropped.total() + peer.relay().stats().dropped.total() + table.stray;
    let (sent, lost) = ep.conditioned();
    status.loss_permille = lost * 1000 / sent.max(1);
    let t = ep.traffic();
    let micros = now.since(last.1).max(1);
    status.up_bps = (t.sent_bytes - last.0.sent_bytes) * 8 * 1_000_000 / micros;
    status.down_bps = (t.received_bytes - last.0.received_bytes) * 8 * 1_000_000 / micros;
    *last = (t, now);
}

fn answer_late_join<G: Game, W: Write>(
    ep: &mut Endpoint,
    table: &mut Table,
    lobby: &mut HostLobby<'_>,
    peer: &mut Peer<G, W>,
    from: SocketAddr,
    bytes: &[u8],
    on_line: &mut dyn FnMut(Line),
) {
    let Ok(msg) = Lobby::decode(bytes) else {
        table.stray += 1;
        return;
    };
    let j = match msg {
        Lobby::Join(j) => j,
        Lobby::Refused(reason) => {
            on_line(Line::Note(format!("{from} refused the match: {reason}")));
            return;
        }
        _ => {
            table.stray += 1;
            return;
        }
    };
    let roster = |lobby: &HostLobby<'_>, seat: Option<u8>, rejoin: bool| {
        Lobby::Roster((lobby.roster)(&lobby.seating, &lobby.keys, seat, rejoin))
    };
    let answer = match (lobby_check(&j), j.want) {
        (Err(reason), _) => Lobby::Refused(reason),
        (Ok(()), Want::Seat) => match lobby.seating.seat_of(from) {
            // A joiner whose roster was lost asks again.
            Some(seat) if lobby.keys[usize::from(seat)] == j.key => {
                roster(lobby, Some(seat), false)
            }
            Some(_) => Lobby::Refused("this address holds a seat under another key".into()),
            None => Lobby::Refused("the match is full and running".into()),
        },
        (Ok(()), Want::Spectate) => {
            let known = table.watchers.get(&from).copied();
            let id = known.or_else(|| {
                (table.watchers.len() < MAX_WATCHER_ADDRESSES).then(|| {
                    let w = WatcherId(table.next_watcher);
                    table.next_watcher += 1;
                    table.watchers.insert(from, w);
                    w
                })
            });
            match id.map(|w| peer.admit_watcher(w, j.key)) {
                Some(Ok(())) => roster(lobby, None, false),
                Some(Err(e)) => Lobby::Refused(format!("spectator key: {e}")),
                None => Lobby::Refused("too many spectators".into()),
            }
        }
        (Ok(()), Want::Rejoin) => match table.dropped.iter().position(|d| *d) {
            Some(seat) => {
                let seat = seat as u8;
                // In a sealed match the returning process's handshake opens
                // only under the key it gave here.
                let bound = match peer.session().config().security {
                    Security::Plain => Ok(()),
                    Security::Sealed { .. } => peer.expect_return(PlayerId(seat), j.key),
                };
                match bound {
                    Ok(()) => {
                        lobby.keys[usize::from(seat)] = j.key;
                        lobby.seating.reseat(seat, from);
                        table.seats[usize::from(seat)] = Some(from);
                        on_line(Line::Note(format!("seat {seat} rejoins from {from}")));
                        roster(lobby, Some(seat), true)
                    }
                    Err(e) => Lobby::Refused(format!("cannot take seat {seat} back: {e}")),
                }
            }
            None => Lobby::Refused("no dropped seat to rejoin".into()),
        },
    };
    ep.send(from, answer.encode());
}

/// A spectator of either kind, as the watch loops drive it.
trait Watching {
    fn handle_datagram(&mut self, now: Instant, bytes: &[u8]);
    fn handle_timeout(&mut self, now: Instant);
    fn poll_timeout(&self) -> Option<Instant>;
    fn poll_transmit(&mut self, now: Instant) -> Option<Vec<u8>>;
}

impl<G: Game> Watching for Spectator<G> {
    fn handle_datagram(&mut self, now: Instant, bytes: &[u8]) {
        Spectator::handle_datagram(self, now, bytes);
    }
    fn handle_timeout(&mut self, now: Instant) {
        Spectator::handle_timeout(self, now);
    }
    fn poll_timeout(&self) -> Option<Instant> {
        Spectator::poll_timeout(self)
    }
    fn poll_transmit(&mut self, now: Instant) -> Option<Vec<u8>> {
        Spectator::poll_transmit(self, now)
    }
}

impl<G: Game> Watching for SnapshotSpectator<G> {
    fn handle_datagram(&mut self, now: Instant, bytes: &[u8]) {
        SnapshotSpectator::handle_datagram(self, now, bytes);
    }
    fn handle_timeout(&mut self, now: Instant) {
        SnapshotSpectator::handle_timeout(self, now);
    }
    fn poll_timeout(&self) -> Option<Instant> {
        SnapshotSpectator::poll_timeout(self)
    }
    fn poll_transmit(&mut self, now: Instant) -> Option<Vec<u8>> {
        SnapshotSpectator::poll_transmit(self, now)
    }
}

/// Waits for the host's datagrams (until the spectator's timeout, the next
/// send or `next_status`), feeds them to `s` (others are counted as
/// dropped), runs its timers, and gives the time.
async fn receive_from_host<S: Watching>(
    ep: &mut Endpoint,
    host: SocketAddr,
    s: &mut S,
    next_status: Instant,
    status: &mut Status,
) -> Instant {
    let now = ep.now();
    let mut deadline = now.plus(50_000).min(next_status);
    for t in [s.poll_timeout(), ep.next_send()].into_iter().flatten() {
        deadline = deadline.min(t);
    }
    let datagrams = ep.receive(deadline).await;
    let now = ep.now();
    for (from, bytes) in datagrams {
        if from == host {
            s.handle_datagram(now, &bytes);
        } else {
            status.dropped += 1;
        }
    }
    if s.poll_timeout().is_some_and(|t| t <= now) {
        s.handle_timeout(now);
    }
    now
}

/// Sends what `s` has for the host.
fn send_to_host<S: Watching>(ep: &mut Endpoint, host: SocketAddr, s: &mut S, now: Instant) {
    while let Some(bytes) = s.poll_transmit(now) {
        ep.send(host, bytes);
    }
    ep.flush();
}

/// Watches the match `roster` describes through the host at `host` by
/// snapshots: the host streams compressed snapshots (`settings` must be
/// the host's), this process shows them interpolated and never steps the
/// game. A status's `frame` is the newest snapshot's; the loop ends once a
/// snapshot of the match's last frames arrived or the host went away.
pub async fn watch_snapshots<G: Game + Bodies>(
    mut ep: Endpoint,
    host: SocketAddr,
    roster: &Roster,
    config: &G::Config,
    snapshots: SnapshotSettings,
    settings: RunSettings,
    on_line: &mut dyn FnMut(Line),
) -> Result<Summary, NetError> {
    let watch = PeerSettings::new(&roster.setup, PlayerId(0), 1).watch;
    let tick = watch.tick_micros;
    let start = ep.now();
    let mut s = SnapshotSpectator::<G>::new(
        config,
        roster.setup,
        watch,
        snapshots,
        settings.token,
        start,
    )
    .map_err(|e| NetError::Start(e.to_string()))?;
    if roster.sealed {
        s = s
            .sealed(&settings.identity, relay_key(roster)?)
            .map_err(|e| NetError::Start(e.to_string()))?;
    }
    let status_every = settings.status_every.as_micros() as u64;
    let limit = tick * u64::from(roster.frames) * 3 + 60_000_000;
    let last_frame = roster.frames.saturating_sub(snapshots.every.max(1) + 1);
    let mut next_status = start.plus(status_every);
    let mut last = (ep.traffic(), start);
    let mut summary = Summary::default();
    let mut status = Status::default();
    let mut lost = false;
    let mut newest = 0u32;
    while newest < last_frame && !lost {
        let now = receive_from_host(&mut ep, host, &mut s, next_status, &mut status).await;
        while let Some(e) = s.poll_event() {
            match e {
                SnapshotSpectatorEvent::Snapshot { frame } => {
                    newest = newest.max(frame);
                    if summary.first_frame_ms.is_none() {
                        summary.first_frame_ms = Some(now.since(start) / 1000);
                        on_line(Line::Note(format!("first snapshot: frame {frame}")));
                    }
                }
                SnapshotSpectatorEvent::RelayLost => {
                    lost = true;
                    on_line(Line::Note("the host went away".into()));
                }
                SnapshotSpectatorEvent::Incompatible => {
                    return Err(NetError::Start("the host plays another game".into()));
                }
                SnapshotSpectatorEvent::Connected => {
                    on_line(Line::Note("connected to the host (snapshots)".into()))
                }
            }
        }
        send_to_host(&mut ep, host, &mut s, now);
        if now >= next_status {
            next_status = now.plus(status_every);
            status.frame = newest;
            status.delay_frames = (s.view().clock().delay_micros(s.view().mode()) / tick) as u32;
            let t = ep.traffic();
            let micros = now.since(last.1).max(1);
            status.up_bps = (t.sent_bytes - last.0.sent_bytes) * 8 * 1_000_000 / micros;
            status.down_bps = (t.received_bytes - last.0.received_bytes) * 8 * 1_000_000 / micros;
            last = (t, now);
            status.dropped += s.stats().undecodable;
            on_line(Line::Status(status.clone()));
        }
        if now.since(start) > limit {
            return Err(NetError::Stuck {
                frames: roster.frames,
                at: newest,
                secs: limit / 1_000_000,
            });
        }
    }
    s.disconnect();
    let now = ep.now();
    send_to_host(&mut ep, host, &mut s, now);
    drain_sends(&mut ep).await;
    status.frame = newest;
    summary.status = status;
    let t = ep.traffic();
    summary.sent_bytes = t.sent_bytes;
    summary.received_bytes = t.received_bytes;
    summary.seconds = ep.now().since(start) / 1_000_000;
    let v = s.stats();
    on_line(Line::Note(format!(
        "{} snapshots, {} payload bytes ({} bytes each on average), {} undecodable, {} parts refused",
        v.snapshots,
        v.snapshot_bytes,
        v.snapshot_bytes / v.snapshots.max(1),
        v.undecodable,
        v.parts_refused
    )));
    Ok(summary)
}

/// The public key a spectator's relay seals with: the host's, seat 0's.
fn relay_key(roster: &Roster) -> Result<PublicKey, NetError> {
    roster
        .keys
        .first()
        .copied()
        .ok_or_else(|| NetError::Start("the roster names no host key".into()))
}

/// Watches the match `roster` describes through the host at `host`.
pub async fn watch<G: Game>(
    mut ep: Endpoint,
    host: SocketAddr,
    roster: &Roster,
    config: &G::Config,
    settings: RunSettings,
    on_line: &mut dyn FnMut(Line),
) -> Result<Summary, NetError> {
    // The seats' own settings, so the tick agrees to the microsecond.
    let watch = PeerSettings::new(&roster.setup, PlayerId(0), 1).watch;
    let tick = watch.tick_micros;
    let start = ep.now();
    let mut s = Spectator::<G>::new(config, roster.setup, watch, settings.token, start)
        .map_err(|e| NetError::Start(e.to_string()))?;
    if roster.sealed {
        s = s
            .sealed(&settings.identity, relay_key(roster)?)
            .map_err(|e| NetError::Start(e.to_string()))?;
    }
    let status_every = settings.status_every.as_micros() as u64;
    let limit = tick * u64::from(roster.frames) * 3 + 60_000_000;
    let mut next_status = start.plus(status_every);
    let mut last = (ep.traffic(), start);
    let mut summary = Summary::default();
    let mut status = Status::default();
    let mut lost = false;
    while s.frame() < roster.frames && !lost {
        let now = receive_from_host(&mut ep, host, &mut s, next_status, &mut status).await;
        while let Some(e) = s.poll_event() {
            match e {
                SpectatorEvent::Stepped { checksum, .. } => {
                    status.checksum = Some(checksum.short());
                    if summary.first_frame_ms.is_none() {
                        summary.first_frame_ms = Some(now.since(start) / 1000);
                    }
                }
                SpectatorEvent::Loaded { frame, state_bytes } => on_line(Line::Note(format!(
                    "loaded the state after frame {frame} ({state_bytes} bytes)"
                ))),
                SpectatorEvent::Desync { frame } => {
                    status.desyncs += 1;
                    on_line(Line::Note(format!(
                        "desync at frame {frame}: asking for the state again"
                    )));
                }
                SpectatorEvent::RelayLost => {
                    lost = true;
                    on_line(Line::Note("the host went away".into()));
                }
                SpectatorEvent::Incompatible => {
                    return Err(NetError::Start("the host plays another game".into()));
                }
                SpectatorEvent::Connected => on_line(Line::Note("connected to the host".into())),
            }
        }
        send_to_host(&mut ep, host, &mut s, now);
        if now >= next_status {
            next_status = now.plus(status_every);
            status.frame = s.frame();
            let t = ep.traffic();
            let micros = now.since(last.1).max(1);
            status.up_bps = (t.sent_bytes - last.0.sent_bytes) * 8 * 1_000_000 / micros;
            status.down_bps = (t.received_bytes - last.0.received_bytes) * 8 * 1_000_000 / micros;
            last = (t, now);
            status.checked = s.stats().checksums_checked;
            on_line(Line::Status(status.clone()));
        }
        if now.since(start) > limit {
            return Err(NetError::Stuck {
                frames: roster.frames,
                at: s.frame(),
                secs: limit / 1_000_000,
            });
        }
    }
    s.disconnect();
    let now = ep.now();
    send_to_host(&mut ep, host, &mut s, now);
    drain_sends(&mut ep).await;
    status.frame = s.frame();
    status.desyncs = s.stats().checksums_differing;
    status.checked = s.stats().checksums_checked;
    summary.status = status;
    let t = ep.traffic();
    summary.sent_bytes = t.sent_bytes;
    summary.received_bytes = t.received_bytes;
    summary.seconds = ep.now().since(start) / 1_000_000;
    Ok(summary)
}

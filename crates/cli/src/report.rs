//! What the networked commands print, made from the runtime's typed events
//! ([`MatchEvent`]): [`Printer`] turns each event into a line (or, for a
//! desync report, a few), and [`Report`] gathers what the summary and the
//! exit status need. This is the one place events become text.
//!
//! Two forms: human lines by default; with `--machine`, `status k=v …`,
//! `note …` and `done k=v …` lines that `lockstep demo` (and the tests)
//! parse.

use std::net::SocketAddr;
use std::path::Path;
use std::process::ExitCode;

use lockstep_lobby::{Invite, Invites, JoinEvent, LinkStatus, MatchEnd, MatchEvent};
use lockstep_net::{LoopCost, Traffic};
use lockstep_peer::{PeerEvent, SnapshotSpectatorEvent, SpectatorEvent, StopReason};
use lockstep_protocol::Instant;
use lockstep_rendezvous::{MatchCode, Path as ReachPath, ReachEvent, role_word};

use clap::Args;

use crate::error::CliError;

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

/// What a match did, gathered from its events.
#[derive(Debug, Clone)]
pub struct Report {
    started: Instant,
    spectator: bool,
    status: LinkStatus,
    first_frame_ms: Option<u64>,
    rejoining: bool,
    rejoin: Option<(u64, u64)>,
    desyncs: u64,
    end: Option<MatchEnd>,
    log_failures: Vec<String>,
    traffic: Traffic,
    cost: LoopCost,
    frames_stepped: u64,
    seconds: u64,
}

impl Report {
    /// A report of a match whose process started at `started`.
    pub fn new(started: Instant) -> Report {
        Report {
            started,
            spectator: false,
            status: LinkStatus::default(),
            first_frame_ms: None,
            rejoining: false,
            rejoin: None,
            desyncs: 0,
            end: None,
            log_failures: Vec::new(),
            traffic: Traffic::default(),
            cost: LoopCost::default(),
            frames_stepped: 0,
            seconds: 0,
        }
    }

    /// The process takes a dropped seat back.
    pub fn rejoining(&mut self) {
        self.rejoining = true;
    }

    /// The process watches (no seat).
    pub fn spectator(&mut self) {
        self.spectator = true;
    }

    /// Takes in `event`, which happened at `now`.
    pub fn take(&mut self, now: Instant, event: &MatchEvent) {
        let ms = now.since(self.started) / 1000;
        self.seconds = now.since(self.started) / 1_000_000;
        match event {
            MatchEvent::Status(s) => self.status = s.clone(),
            MatchEvent::Peer(PeerEvent::Stepped { frame, .. }) => {
                self.first_frame_ms.get_or_insert(ms);
                self.status.frame = self.status.frame.max(frame + 1);
            }
            MatchEvent::Peer(PeerEvent::Desync { .. }) => self.desyncs += 1,
            MatchEvent::Peer(PeerEvent::Healed { state_bytes, .. })
                if self.rejoining && self.rejoin.is_none() =>
            {
                self.rejoin = Some((*state_bytes, ms));
            }
            MatchEvent::Peer(PeerEvent::RecordingStopped { frame, reason }) => self
                .log_failures
                .push(format!("the replay log stopped at frame {frame}: {reason}")),
            MatchEvent::Join(JoinEvent::Roster(r)) => self.rejoining |= r.rejoin,
            MatchEvent::Spectator(SpectatorEvent::Stepped { .. })
            | MatchEvent::SnapshotSpectator(SnapshotSpectatorEvent::Snapshot { .. }) => {
                self.first_frame_ms.get_or_insert(ms);
            }
            MatchEvent::Spectator(SpectatorEvent::Desync { .. }) => self.desyncs += 1,
            MatchEvent::Ended(end) => self.end = Some(end.clone()),
            _ => {}
        }
    }

    /// The endpoint's status at the end (the traffic figures of the last
    /// status event are kept).
    pub fn final_status(&mut self, s: LinkStatus) {
        let (up, down, loss) = (
            self.status.up_bps,
            self.status.down_bps,
            self.status.loss_permille,
        );
        self.status = LinkStatus {
            up_bps: up,
            down_bps: down,
            loss_permille: loss,
            ..s
        };
    }

    /// The replay log could not be kept whole.
    pub fn log_failed(&mut self, why: String) {
        if !self.log_failures.contains(&why) {
            self.log_failures.push(why);
        }
    }

    /// The socket's traffic and the loop's cost at the end, and the frames
    /// this process stepped.
    pub fn set_traffic(&mut self, traffic: Traffic, cost: LoopCost, frames_stepped: u64) {
        self.traffic = traffic;
        self.cost = cost;
        self.frames_stepped = frames_stepped;
    }

    /// The exit status: success only when the match ran to its end and
    /// nothing recorded was lost (and a spectator saw no checksum differ).
    pub fn exit_status(&self) -> Result<ExitCode, CliError> {
        match &self.end {
            None => Err(CliError::new("the match ended without saying how")),
            Some(end) if !end.is_success() => Err(CliError::new(end.to_string())),
            Some(_) => {
                if let Some(why) = self.log_failures.first() {
                    return Err(CliError::new(why.clone()));
                }
                if self.spectator && self.desyncs > 0 {
                    return Ok(ExitCode::FAILURE);
                }
                Ok(ExitCode::SUCCESS)
            }
        }
    }
}

/// Prints events as lines.
pub struct Printer<'a> {
    machine: bool,
    /// Hears every note after it is printed (`lockstep play`'s window shows
    /// them).
    pub on_note: Box<dyn FnMut(&str) + 'a>,
}

impl<'a> Printer<'a> {
    /// A printer in the form `output` asks for.
    pub fn new(output: &OutputArgs, on_note: Box<dyn FnMut(&str) + 'a>) -> Printer<'a> {
        Printer {
            machine: output.machine,
            on_note,
        }
    }

    /// The host's first lines: where to join it, and with which codes (an
    /// open lobby says that it is one).
    pub fn listening(&mut self, reach: SocketAddr, game: &str, seats: u8, invites: &Invites) {
        let code = |i: &Invite| i.code().map_or("open".to_string(), |c| c.to_string());
        let program = crate::output::program();
        if self.machine {
            outln!(
                "invite seat={} spectate={}",
                code(&invites.seat),
                code(&invites.spectate)
            );
            outln!("listening {reach}");
        } else {
            match invites.seat {
                Invite::Open => {
                    outln!(
                        "hosting {game} for {seats} seats at {reach}, an open lobby: anyone who reaches this port may sit (for a LAN party; without --open only those given the seat code may)"
                    );
                    outln!("  join with `{program} join {reach}`");
                }
                Invite::Code(c) => {
                    outln!("hosting {game} for {seats} seats at {reach}");
                    outln!("  seat code {c}: join with `{program} join {reach} --code {c}`");
                }
            }
            match invites.spectate {
                Invite::Open => outln!("  anyone may watch: `{program} spectate {reach}`"),
                Invite::Code(c) => outln!(
                    "  spectator code {c}: watch with `{program} spectate {reach} --code {c}`"
                ),
            }
        }
        (self.on_note)(&format!(
            "waiting for seats at {reach} (seat code {})",
            code(&invites.seat)
        ));
    }

    /// A host's codes, registered at `rendezvous`, which sees it at
    /// `observed`.
    pub fn registered(&mut self, codes: &[MatchCode; 2], rendezvous: &str, observed: SocketAddr) {
        if self.machine {
            outln!(
                "code seat={} spectate={} rendezvous={rendezvous} observed={observed}",
                codes[0],
                codes[1]
            );
        } else {
            outln!(
                "match code {} (spectators: {}): join with `{} join {} --rendezvous {rendezvous}`",
                codes[0],
                codes[1],
                crate::output::program(),
                codes[0]
            );
        }
        (self.on_note)(&format!("match code {}", codes[0]));
    }

    /// What the reach layer reported: the rendezvous's answer, members,
    /// paths, the relay.
    pub fn reach(&mut self, event: &ReachEvent) {
        if !self.machine {
            self.note(&event.to_string());
            return;
        }
        let line = match event {
            ReachEvent::Joined {
                member,
                role,
                observed,
                ..
            } => format!(
                "reach joined member={} role={} observed={observed}",
                member.0,
                role_word(*role)
            ),
            ReachEvent::Member { member, role } => {
                format!("reach member member={} role={}", member.0, role_word(*role))
            }
            ReachEvent::Path {
                member,
                path: ReachPath::Direct(addr),
            } => format!("reach path member={} via=direct addr={addr}", member.0),
            ReachEvent::Path {
                member,
                path: ReachPath::Relayed,
            } => format!("reach path member={} via=relay", member.0),
            ReachEvent::Relay { observed } => format!("reach relay observed={observed}"),
            ReachEvent::Refused(r) => format!("reach refused {r}"),
            ReachEvent::NoAnswer => "reach no_answer".to_string(),
        };
        outln!("{line}");
        (self.on_note)(&event.to_string());
    }

    /// A line of its own.
    pub fn note(&mut self, text: &str) {
        if self.machine {
            outln!("note {text}");
        } else {
            outln!("{text}");
        }
        (self.on_note)(text);
    }

    /// Prints what `event` says (nothing for the frequent ones).
    pub fn event(&mut self, event: &MatchEvent) {
        match event {
            MatchEvent::Status(s) => {
                outln!(
                    "{}",
                    if self.machine {
                        machine_status(s)
                    } else {
                        human_status(s)
                    }
                );
                return;
            }
            MatchEvent::Peer(
                e @ PeerEvent::Healed {
                    diagnosis: Some(d), ..
                },
            ) => {
                self.note(&format!("{e}; this seat's desync report:"));
                for line in d.report.to_text().lines() {
                    self.note(&format!("  {line}"));
                }
                return;
            }
            MatchEvent::Peer(PeerEvent::Stopped(StopReason::MatchInvalid {
                report: Some(d),
                ..
            })) => {
                self.note("the match is invalid; the desync report:");
                for line in d.report.to_text().lines() {
                    self.note(&format!("  {line}"));
                }
                return;
            }
            _ => {}
        }
        if !event.is_routine() {
            self.note(&event.to_string());
        }
    }

    /// The last lines: the summary (and where the log went).
    pub fn summary(&mut self, r: &Report, log: Option<&Path>) {
        let s = &r.status;
        let stepped = r.frames_stepped.max(1);
        let end = r.end.as_ref().map_or("-".to_string(), end_word);
        let line = format!(
            "done seat={} frame={} sent_bytes={} sent_datagrams={} received_bytes={} seconds={} first_frame_ms={} loop_us_per_frame={} peer_us_per_frame={} desyncs={} healed={} checked={} stalls={} rejoin_bytes={} rejoin_ms={} end={} log={}",
            s.seat.map_or("spectator".into(), |x| x.0.to_string()),
            s.frame,
            r.traffic.sent_bytes,
            r.traffic.sent,
            r.traffic.received_bytes,
            r.seconds,
            r.first_frame_ms.map_or("-".into(), |m| m.to_string()),
            r.cost.loop_micros / stepped,
            r.cost.endpoint_micros / stepped,
            s.desyncs.max(r.desyncs),
            s.healed,
            s.checked,
            s.stalls,
            r.rejoin.map_or("-".into(), |x| x.0.to_string()),
            r.rejoin.map_or("-".into(), |x| x.1.to_string()),
            end,
            log.map_or("-".into(), |p| p.display().to_string()),
        );
        if self.machine {
            outln!("{line}");
        } else {
            outln!("{}", human_status(s));
            for why in &r.log_failures {
                outln!("{why}");
            }
            if let Some(p) = log {
                outln!("replay log written to {}", p.display());
            }
        }
    }
}

/// One word for how a match ended (the `end=` of a `done` line).
fn end_word(end: &MatchEnd) -> String {
    match end {
        MatchEnd::Finished { .. } => "finished",
        MatchEnd::Left { .. } => "left",
        MatchEnd::Stopped(StopReason::LostQuorum { .. }) => "lost_quorum",
        MatchEnd::Stopped(StopReason::MatchInvalid { .. }) => "invalid",
        MatchEnd::SetupFailed(_) => "setup_failed",
        MatchEnd::Aborted(_) => "aborted",
        MatchEnd::HostVanished => "host_vanished",
        MatchEnd::RelayLost { .. } => "relay_lost",
        MatchEnd::Incompatible => "incompatible",
        MatchEnd::Stuck { .. } => "stuck",
    }
    .to_string()
}

/// A status as `status key=value …` (what `lockstep demo` parses).
pub fn machine_status(s: &LinkStatus) -> String {
    format!(
        "status seat={} frame={} rtt_ms={} rtt_us={} delay={} loss_pm={} lost_pm={} up_bps={} down_bps={} stalls={} desyncs={} healed={} checked={} dropped={} rolled_back={} checksum={}",
        s.seat.map_or("spectator".into(), |x| x.0.to_string()),
        s.frame,
        s.rtt_micros.map_or("-".into(), |r| (r / 1000).to_string()),
        s.rtt_micros.map_or("-".into(), |r| r.to_string()),
        s.delay_frames,
        s.loss_permille,
        s.lost_permille,
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

fn human_status(s: &LinkStatus) -> String {
    format!(
        "{} frame {:>6} | rtt {:>4} ms | delay {:>3} fr | lost {}.{}% (injected {}.{}%) | up {:>5} kbit/s | down {:>5} kbit/s | stalls {:>4} | desyncs {} | checksum {}",
        s.seat.map_or("spectator".into(), |x| x.to_string()),
        s.frame,
        s.rtt_micros.map_or("-".into(), |r| (r / 1000).to_string()),
        s.delay_frames,
        s.lost_permille / 10,
        s.lost_permille % 10,
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

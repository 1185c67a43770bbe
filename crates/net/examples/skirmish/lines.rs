//! Every event the runtime yields, as text: one line each, and a desync's
//! whole report. This is the one place events become text, made from the
//! typed values.

use lockstep_net::{HostEvent, JoinEvent, LinkStatus, MatchEnd, MatchEvent};
use lockstep_peer::{PeerEvent, StopReason};
use lockstep_sim::desync::Diagnosis;

/// Prints one event: one line, or a desync report's lines.
pub(crate) fn print_event(event: &MatchEvent) {
    match event {
        MatchEvent::Peer(PeerEvent::Healed {
            frame,
            state_bytes,
            diagnosis,
        }) => {
            println!(
                "healed: loaded the authority's state after frame {frame} ({state_bytes} bytes)"
            );
            print_report(diagnosis.as_deref());
        }
        MatchEvent::Peer(PeerEvent::Stopped(StopReason::MatchInvalid {
            first_frame,
            report,
        })) => {
            println!("stopped: the match is invalid from frame {first_frame}");
            print_report(report.as_deref());
        }
        e => println!("{}", line(e)),
    }
}

/// A desync report: a headline made from its fields, then its whole text.
fn print_report(diagnosis: Option<&Diagnosis>) {
    let Some(d) = diagnosis else {
        println!("  no desync report: this seat's history does not reach the frame");
        return;
    };
    let r = &d.report;
    let fields: Vec<String> = r
        .after
        .iter()
        .map(|f| format!("{} · {}", f.entity, f.field))
        .collect();
    println!(
        "  desync report: frame {}, {} field(s) differ: {}",
        r.frame,
        r.after.len(),
        fields.join(", ")
    );
    for text in r.to_text().lines() {
        println!("  | {text}");
    }
}

fn line(event: &MatchEvent) -> String {
    match event {
        MatchEvent::Host(e) => format!("host: {}", host_line(e)),
        MatchEvent::Join(e) => format!("join: {}", join_line(e)),
        MatchEvent::Peer(e) => peer_line(e),
        MatchEvent::Status(s) => status_line(s),
        MatchEvent::Ended(end) => format!("match over: {end}"),
        // A seat's runtime never raises these; a spectator's would.
        MatchEvent::Spectator(_) | MatchEvent::SnapshotSpectator(_) => format!("{event:?}"),
    }
}

fn host_line(e: &HostEvent) -> String {
    match e {
        HostEvent::SeatOffered { seat, from } => format!("seat {seat} offered to {from}"),
        HostEvent::SeatFreed { seat } => format!("seat {seat} free again (its joiner went silent)"),
        HostEvent::Seated => "every seat is taken: rosters sent".into(),
        HostEvent::RosterRefused { seat, refusal } => {
            format!("seat {seat} refused the roster: {refusal}")
        }
        HostEvent::Rejoining { seat, from, .. } => format!("seat {seat} rejoins from {from}"),
        HostEvent::SpectatorAdmitted {
            spectator, from, ..
        } => {
            format!("spectator {} admitted from {from}", spectator.0)
        }
        HostEvent::SpectatorExpired { spectator } => {
            format!("spectator {} never came", spectator.0)
        }
        HostEvent::Refused { from, refusal } => format!("refused {from}: {refusal}"),
    }
}

fn join_line(e: &JoinEvent) -> String {
    match e {
        JoinEvent::Challenged => "the host proved our address".into(),
        JoinEvent::Waiting {
            seat,
            joined,
            seats,
        } => format!("seat {seat}; {joined} of {seats} seats taken"),
        JoinEvent::AskingAgain(r) => format!("the host says {r}; asking again"),
        JoinEvent::Roster(r) => format!(
            "roster: seat {} of {} seats of {} v{}, seed {}, {} frames at {} Hz, {}",
            r.seat.map_or("-".into(), |s| s.to_string()),
            r.setup.seats,
            r.game,
            r.game_version,
            r.setup.seed,
            r.settings.frames,
            r.setup.tick_rate,
            if r.settings.sealed {
                "sealed"
            } else {
                "in clear"
            }
        ),
        JoinEvent::Failed(f) => format!("failed: {f}"),
    }
}

fn peer_line(e: &PeerEvent) -> String {
    let seats = |s: lockstep_protocol::SeatSet| {
        let v: Vec<String> = s.iter().map(|p| format!("seat {}", p.0)).collect();
        v.join(", ")
    };
    match e {
        PeerEvent::Connected { peer } => format!("connected to seat {}", peer.0),
        PeerEvent::Started => "started: frame 0".into(),
        PeerEvent::Stepped {
            frame,
            checksum,
            resimulated,
            predicted,
        } => format!(
            "frame {frame} {}…{}{}",
            &checksum.to_string()[..16],
            if *resimulated { " (again)" } else { "" },
            if *predicted { " (predicted)" } else { "" }
        ),
        PeerEvent::RolledBack { frame, frames } => {
            format!("rolled back {frames} frames to {frame}")
        }
        PeerEvent::NotDeterministic {
            frame,
            first,
            again,
        } => {
            format!("NOT DETERMINISTIC: frame {frame} gave {first}, then {again}")
        }
        PeerEvent::Desync {
            frame,
            authority,
            drifted,
            local_drifted,
        } => format!(
            "DESYNC at frame {frame}: drifted {}{}; authority {}",
            seats(*drifted),
            if *local_drifted { " (this seat)" } else { "" },
            authority.map_or("none".into(), |a| format!("seat {}", a.0))
        ),
        PeerEvent::Healed { frame, .. } => format!("healed at frame {frame}"),
        PeerEvent::ResyncFailed { reason } => format!("resync failed: {reason:?}"),
        PeerEvent::Left { peer, reason } => format!("seat {} left: {reason:?}", peer.0),
        PeerEvent::SeatDropped { seat, last_frame } => format!(
            "seat {} dropped after frame {}",
            seat.0,
            last_frame.map_or("-".into(), |f| f.to_string())
        ),
        PeerEvent::SeatReturned { seat, frame } => {
            format!("seat {} returns at frame {frame}", seat.0)
        }
        PeerEvent::Incompatible { peer } => format!("seat {} plays another game", peer.0),
        PeerEvent::RecordingStopped { frame, reason } => {
            format!("log stopped at frame {frame}: {reason}")
        }
        PeerEvent::Stopped(reason) => format!("stopped: {}", MatchEnd::Stopped(reason.clone())),
        // Spectators and the snapshot fall-back: none in this example.
        other => format!("{other:?}"),
    }
}

fn status_line(s: &LinkStatus) -> String {
    format!(
        "status: seat {} frame {} rtt {} delay {} desyncs {} healed {} stalls {} dropped {} up {} bit/s down {} bit/s",
        s.seat.map_or("-".into(), |x| x.to_string()),
        s.frame,
        s.rtt_micros.map_or("-".into(), |us| format!("{us} µs")),
        s.delay_frames,
        s.desyncs,
        s.healed,
        s.stalls,
        s.dropped,
        s.up_bps,
        s.down_bps
    )
}

//! Every event the runtime yields, as text: one line each (the event's own
//! `Display` text, with a little more detail where this example wants it),
//! and a desync's whole report.

use lockstep_net::{JoinEvent, LinkStatus, MatchEvent};
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

/// The event's own text (`Display`), with more detail where this example
/// wants it: each frame's checksum, the roster's terms, the status numbers.
fn line(event: &MatchEvent) -> String {
    match event {
        MatchEvent::Peer(PeerEvent::Stepped {
            frame,
            checksum,
            resimulated,
            predicted,
        }) => format!(
            "frame {frame} {}…{}{}",
            &checksum.to_string()[..16],
            if *resimulated { " (again)" } else { "" },
            if *predicted { " (predicted)" } else { "" }
        ),
        MatchEvent::Join(JoinEvent::Roster(r)) => format!(
            "roster: seat {} of {} seats of {} v{}, seed {}, {} frames at {} Hz, {}",
            r.seat.map_or("-".into(), |s| s.0.to_string()),
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
        MatchEvent::Status(s) => status_line(s),
        e => e.to_string(),
    }
}

fn status_line(s: &LinkStatus) -> String {
    format!(
        "status: seat {} frame {} rtt {} delay {} desyncs {} healed {} stalls {} dropped {} up {} bit/s down {} bit/s",
        s.seat.map_or("-".into(), |x| x.0.to_string()),
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

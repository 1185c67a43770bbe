//! A bit flipped in one peer's state is detected within two frames, resynced
//! from the authority, and every checksum agrees again; a peer that keeps
//! drifting makes resync give up with an event.

use lockstep_protocol::harness::{Condition, Note, Report, Scenario, run_particles};
use lockstep_protocol::netsim::LinkConfig;
use lockstep_protocol::session::ResyncFailure;
use lockstep_protocol::{Instant, PlayerId};

const TICK: u64 = 16_667;

struct Outcome {
    report: Report,
    detect_frames: u64,
    resync_frames: u64,
    resync_bytes: u64,
}

/// Flips a bit of `seat`'s state after frame `k`; `drifted` is the seat the
/// verdict must name (the flipped one, except a two-player host, which is the
/// authority by definition).
fn flip(players: u8, link: LinkConfig, seat: u8, drifted: u8, k: u32) -> Outcome {
    let mut s = Scenario::new(players, 40 + u64::from(players), link);
    s.frames = 900;
    s.corrupt_once = Some((PlayerId(seat), k));
    let r = run_particles(&s);
    let flipped_at = r.peers[usize::from(seat)].released_at[&k];
    let desyncs: Vec<_> = r
        .log
        .iter()
        .filter(|l| matches!(l.what, Note::Desync { .. }))
        .collect();
    assert!(!desyncs.is_empty(), "no desync detected: {:?}", r.log);
    for d in &desyncs {
        let Note::Desync {
            frame,
            local_drifted,
        } = d.what
        else {
            unreachable!()
        };
        assert!(
            (k..=k + 2).contains(&frame),
            "desync named frame {frame}, flipped at {k}"
        );
        assert_eq!(local_drifted, d.seat == PlayerId(drifted));
    }
    let first = desyncs.iter().map(|d| d.at).min().unwrap_or(Instant::ZERO);
    let loads: Vec<_> = r
        .log
        .iter()
        .filter(|l| matches!(l.what, Note::Loaded { .. }))
        .collect();
    assert_eq!(loads.len(), 1, "{:?}", r.log);
    assert_eq!(loads[0].seat, PlayerId(drifted));
    let Note::Loaded { frame: loaded, .. } = loads[0].what else {
        unreachable!()
    };
    // Before the flip and from the loaded frame on, every peer agrees; in
    // between, the drifted peer stepped a wrong state.
    assert!(
        r.checksums_agree_outside(k..loaded),
        "checksums differ after the resync"
    );
    assert!(r.common_frames() >= 900);
    let resync_bytes = r.peers.iter().map(|p| p.stats.resync_bytes_sent()).sum();
    let out = Outcome {
        detect_frames: first.since(flipped_at).div_ceil(TICK),
        resync_frames: loads[0].at.since(first).div_ceil(TICK),
        resync_bytes,
        report: r,
    };
    println!(
        "{players} players: flipped seat {seat} at frame {k}; detected {} frame(s) later; \
         state of frame {loaded} loaded {} frame(s) after detection; {} resync bytes",
        out.detect_frames, out.resync_frames, out.resync_bytes
    );
    out
}

/// On a LAN-like link (1 ms one way) detection is within two frames of the
/// flip in time as well as in frame numbers.
#[test]
fn flipped_bit_detected_within_two_frames_and_resynced_two_peers() {
    let o = flip(2, LinkConfig::ideal(1_000), 1, 1, 300);
    assert!(
        o.detect_frames <= 2,
        "detected {} frames after the flip",
        o.detect_frames
    );
}

#[test]
fn flipped_bit_detected_within_two_frames_and_resynced_four_peers() {
    let o = flip(4, LinkConfig::ideal(1_000), 2, 2, 300);
    assert!(
        o.detect_frames <= 2,
        "detected {} frames after the flip",
        o.detect_frames
    );
    assert_eq!(o.report.peers[2].stats.resyncs_completed, 1);
    assert_eq!(o.report.peers[0].stats.resyncs_served, 1);
}

/// The host itself drifting in a two-player match: the host is the
/// authority, so the guest takes the host's state and both agree again.
#[test]
fn host_drift_two_peers() {
    let o = flip(2, LinkConfig::ideal(1_000), 0, 1, 200);
    assert_eq!(o.report.peers[1].stats.resyncs_completed, 1);
}

/// Over condition (a) the frame named is still the flipped one; detection
/// takes the checksum's one-way trip.
#[test]
fn flipped_bit_resynced_over_condition_a() {
    let o = flip(4, Condition::A.link(), 3, 3, 400);
    assert!(o.detect_frames <= 2 + 50_000 / TICK + 1);
}

#[test]
fn repeated_drift_gives_up_with_an_event() {
    let mut s = Scenario::new(2, 5, LinkConfig::ideal(1_000));
    s.frames = 900;
    s.corrupt_always = Some((PlayerId(1), 200));
    let r = run_particles(&s);
    let failed: Vec<_> = r
        .log
        .iter()
        .filter_map(|l| match l.what {
            Note::ResyncFailed(f) => Some((l.seat, f)),
            _ => None,
        })
        .collect();
    assert_eq!(
        failed,
        vec![(PlayerId(1), ResyncFailure::TooManyAttempts { attempts: 3 })],
        "{:?}",
        r.log
    );
    let loads = r
        .log
        .iter()
        .filter(|l| matches!(l.what, Note::Loaded { .. }))
        .count();
    assert_eq!(loads, 3);
}

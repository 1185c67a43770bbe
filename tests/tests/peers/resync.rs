//! Resync through `Peer`: a bit flipped in one peer's state is detected
//! within two frames on a LAN, the authority's state heals it, and every
//! checksum agrees again; a peer that keeps drifting is flagged and the
//! match stops on every seat; burst loss causes no desync.

use lockstep_games::Demo;
use lockstep_games::rts::{Rts, RtsConfig};
use lockstep_peer::{PeerEvent, StopReason};
use lockstep_protocol::{ResyncFailure, SeatId};
use lockstep_testkit::mesh::{self, Condition, Flip, Run, Scenario};
use lockstep_testkit::netsim::{LinkConfig, Loss};

const TICK: u64 = 16_667;

fn small_rts() -> RtsConfig {
    let mut c = Rts::default_config();
    c.units_per_player = 24;
    c
}

fn flip(seats: u8, link: LinkConfig, seat: u8, k: u32, repeat: bool) -> Run {
    let mut s = Scenario::new(seats, 40 + u64::from(seats), link, 900);
    s.flip = Some(Flip {
        seat: SeatId(seat),
        frame: k,
        entity: "body 5".into(),
        field: "position".into(),
        bit: 20,
        repeat,
    });
    mesh::run::<Rts>(&s, &small_rts())
}

/// Frames from the flip to the first desync event anywhere, and the seats
/// that healed (loaded the authority's state).
fn detection(r: &Run) -> (u64, Vec<SeatId>) {
    let at = r.flipped_at.expect("flipped");
    let first = r
        .events(|e| matches!(e, PeerEvent::Desync { .. }).then_some(()))
        .iter()
        .map(|(_, t, _)| *t)
        .min()
        .expect("a desync was detected");
    let healed = r
        .events(|e| matches!(e, PeerEvent::Healed { .. }).then_some(()))
        .iter()
        .map(|(s, _, _)| *s)
        .collect();
    (first.since(at).div_ceil(TICK), healed)
}

#[test]
fn a_flip_is_detected_within_two_frames_and_healed_two_peers() {
    let r = flip(2, LinkConfig::ideal(1_000), 1, 300, false);
    let (frames, healed) = detection(&r);
    assert!(frames <= 2, "detected {frames} frames after the flip");
    assert_eq!(healed, vec![SeatId(1)]);
    assert_eq!(r.first_disagreement(), None);
}

#[test]
fn a_flip_is_detected_within_two_frames_and_healed_four_peers() {
    let r = flip(4, LinkConfig::ideal(1_000), 2, 300, false);
    let (frames, healed) = detection(&r);
    assert!(frames <= 2, "detected {frames} frames after the flip");
    assert_eq!(healed, vec![SeatId(2)]);
    assert_eq!(r.first_disagreement(), None);
    assert_eq!(r.peers[2].session.resyncs_completed, 1);
    assert_eq!(r.peers[0].session.resyncs_served, 1);
}

/// A seat whose state keeps being changed outside the simulation (a
/// flip before every frame) is healed twice, then flagged as drifting
/// again and again: resync gives up with an event and every seat stops.
#[test]
fn a_peer_that_keeps_drifting_gives_up_with_an_event() {
    let r = flip(2, LinkConfig::ideal(1_000), 1, 200, true);
    let failed = r.events(|e| match e {
        PeerEvent::ResyncFailed { reason } => Some(*reason),
        _ => None,
    });
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(failed[0].0, SeatId(1));
    assert!(
        matches!(failed[0].2, ResyncFailure::Recurring { desyncs: 3, .. }),
        "{failed:?}"
    );
    assert_eq!(r.peers[1].stats.states_loaded, 2);
    assert_eq!(r.peers[0].stats.states_loaded, 0);
    assert!(
        r.peers
            .iter()
            .all(|p| matches!(p.stopped, Some(StopReason::MatchInvalid { .. })))
    );
}

/// Burst loss (Gilbert–Elliott, 5% on average in bursts of 4 packets) on a
/// 250 ms round trip: no desync, every checksum agrees.
#[test]
fn burst_loss_causes_no_desync() {
    let link = LinkConfig {
        loss: Loss::bursty(50_000, 4),
        ..Condition::POOR.link()
    };
    let s = Scenario::new(4, 18, link, 900);
    let r = mesh::run::<Rts>(&s, &small_rts());
    assert!(r.common_frames() >= 900);
    assert_eq!(r.first_disagreement(), None);
    assert!(
        r.events(|e| matches!(e, PeerEvent::Desync { .. }).then_some(()))
            .is_empty()
    );
}

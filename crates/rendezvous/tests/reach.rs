//! The reach layer across simulated NATs on virtual time: a rendezvous, a
//! relay and homes behind NATs that map and filter as Linux's masquerade
//! does (`world/`). The same cases as the namespace test of real
//! processes, in milliseconds: which path each pair takes, and that the
//! app's datagrams keep arriving through a rebinding NAT and a relay that
//! restarts.

mod world;

use lockstep_rendezvous::{CodeId, MemberId, Path, ReachEvent, Refusal, Role};
use world::{Nat, World};

fn code(n: u32) -> CodeId {
    CodeId::new(n).unwrap()
}

fn path(w: &World, h: usize, other: usize) -> Option<Path> {
    w.homes[h].reach.path(w.member(other))
}

fn is_direct(p: Option<Path>) -> bool {
    matches!(p, Some(Path::Direct(_)))
}

/// A host and a joiner behind NATs of the given kinds, run for two seconds.
fn pair(host: Nat, joiner: Nat) -> World {
    let mut w = World::new();
    w.host(host, vec![code(1)]);
    w.run_until(100_000);
    w.join(joiner, code(1));
    w.run_until(2_000_000);
    w
}

#[test]
fn two_port_preserving_nats_punch_a_direct_path() {
    let mut w = pair(Nat::Eim, Nat::Eim);
    assert!(is_direct(path(&w, 0, 1)), "{:?}", path(&w, 0, 1));
    assert!(is_direct(path(&w, 1, 0)), "{:?}", path(&w, 1, 0));
    let before = (w.received(0, w.member(1)), w.received(1, MemberId::HOST));
    w.run_until(3_000_000);
    let after = (w.received(0, w.member(1)), w.received(1, MemberId::HOST));
    // A second at 16 ms a datagram, every one of them, direct.
    assert!(
        after.0 - before.0 >= 60 && after.1 - before.1 >= 60,
        "{before:?} {after:?}"
    );
    let direct = w.homes[0].reach.stats();
    assert!(direct.direct_sent > 100, "{direct:?}");
    assert_eq!(w.unmapped(0) + w.unmapped(1), 0);
    // The joiner learned the host first, and both paths went direct once.
    assert!(w.homes[1].events.iter().any(|e| matches!(
        e,
        ReachEvent::Joined {
            role: Role::Seat,
            ..
        }
    )));
}

#[test]
fn a_symmetric_nat_against_a_port_preserving_one_goes_through_the_relay() {
    for (host, joiner) in [(Nat::Eim, Nat::Symmetric), (Nat::Symmetric, Nat::Eim)] {
        let mut w = pair(host, joiner);
        w.run_until(8_000_000);
        assert_eq!(path(&w, 0, 1), Some(Path::Relayed), "{host:?} {joiner:?}");
        assert_eq!(path(&w, 1, 0), Some(Path::Relayed), "{host:?} {joiner:?}");
        // Relayed from the first moment: the app never waited for punching.
        let got = w.received(1, MemberId::HOST);
        assert!(got > 450, "{got} of ~490");
        assert!(w.relay.stats().forwarded.datagrams > 900);
    }
}

#[test]
fn two_symmetric_nats_go_through_the_relay() {
    let mut w = pair(Nat::Symmetric, Nat::Symmetric);
    w.run_until(8_000_000);
    assert_eq!(path(&w, 0, 1), Some(Path::Relayed));
    assert_eq!(path(&w, 1, 0), Some(Path::Relayed));
    assert!(w.received(0, w.member(1)) > 450);
}

#[test]
fn a_nat_that_rebinds_moves_the_pair_to_the_relay_and_back_to_a_direct_path() {
    let mut w = pair(Nat::Eim, Nat::Eim);
    assert!(is_direct(path(&w, 1, 0)));
    let old = path(&w, 0, 1);
    w.rebind(1);
    let before = w.received(0, w.member(1));
    w.run_until(3_500_000);
    // Within the dead-path wait both sides fell back to the relay...
    assert!(w.homes[0].events.iter().any(|e| matches!(
        e,
        ReachEvent::Path {
            path: Path::Relayed,
            ..
        }
    )));
    // ...and the joiner's new address, seen by the rendezvous at its next
    // poll, let them punch again.
    w.run_until(8_000_000);
    let new = path(&w, 0, 1);
    assert!(is_direct(new), "{new:?}");
    assert_ne!(new, old, "the joiner's public port moved");
    // The app lost at most the datagrams of the dead-path wait.
    let got = w.received(0, w.member(1)) - before;
    let sent = (8_000_000 - 2_000_000) / world::TICK as u32;
    assert!(got + 80 >= sent, "{got} of {sent}");
}

#[test]
fn a_relay_that_restarts_is_allocated_again() {
    let mut w = pair(Nat::Symmetric, Nat::Symmetric);
    w.run_until(3_000_000);
    w.relay_up = false;
    w.restart_relay();
    w.run_until(3_200_000);
    w.relay_up = true;
    let before = w.received(1, MemberId::HOST);
    w.run_until(4_000_000);
    let got = w.received(1, MemberId::HOST) - before;
    assert!(got > 40, "{got}: the relay took both places again");
    assert_eq!(w.relay.places(), 2);
}

#[test]
fn seats_meet_each_other_and_a_spectator_meets_the_host_alone() {
    let mut w = World::new();
    w.host(Nat::Eim, vec![code(1), code(2)]);
    w.run_until(100_000);
    let a = w.join(Nat::Eim, code(1));
    let b = w.join(Nat::Symmetric, code(1));
    let s = w.join(Nat::Eim, code(2));
    w.run_until(4_000_000);
    assert_eq!(w.homes[s].reach.me().map(|m| m.1), Some(Role::Spectator));
    let spectator_sees: Vec<MemberId> = w.homes[s].reach.contacts().map(|c| c.member()).collect();
    assert_eq!(spectator_sees, vec![MemberId::HOST]);
    let seat_sees: Vec<MemberId> = w.homes[a].reach.contacts().map(|c| c.member()).collect();
    assert_eq!(seat_sees, vec![MemberId::HOST, w.member(b)]);
    assert_eq!(w.homes[0].reach.contacts().count(), 3);
    // Seats a (port-preserving) and b (symmetric) meet through the relay;
    // a and the host punch.
    assert!(is_direct(path(&w, a, 0)));
    assert!(is_direct(path(&w, s, 0)));
    w.run_until(8_000_000);
    assert_eq!(path(&w, a, b), Some(Path::Relayed));
    for (from, to) in [(a, b), (b, a), (0, s), (s, 0), (0, b)] {
        assert!(w.received(to, w.member(from)) > 100, "{from} → {to}");
    }
    assert_eq!(
        w.received(s, w.member(a)),
        0,
        "a spectator talks to the host alone"
    );
}

#[test]
fn an_unknown_code_is_refused_and_a_silent_rendezvous_is_reported() {
    let mut w = World::new();
    w.host(Nat::Eim, vec![code(1)]);
    let j = w.join(Nat::Eim, code(7));
    w.run_until(1_000_000);
    assert!(w.homes[j].reach.has_failed());
    assert_eq!(
        w.homes[j].events,
        vec![ReachEvent::Refused(Refusal::Unknown(code(7)))]
    );
    // A second host cannot take the first one's code.
    let second = w.host(Nat::Eim, vec![code(1)]);
    w.run_until(2_000_000);
    assert_eq!(
        w.homes[second].events,
        vec![ReachEvent::Refused(Refusal::Taken(code(1)))]
    );
    // A rendezvous that never answers is reported after the last attempt.
    w.rendezvous_up = false;
    let lost = w.join(Nat::Eim, code(1));
    w.run_until(9_000_000);
    assert_eq!(w.homes[lost].events, vec![ReachEvent::NoAnswer]);
    assert!(w.homes[lost].reach.poll_timeout().is_none());
}

#[test]
fn one_side_turning_direct_paths_off_keeps_both_on_the_relay() {
    let mut w = World::new();
    w.host(Nat::Eim, vec![code(1)]);
    w.run_until(100_000);
    w.timing.punch_micros = 0;
    w.join(Nat::Eim, code(1));
    w.run_until(8_000_000);
    assert_eq!(path(&w, 0, 1), Some(Path::Relayed));
    assert_eq!(path(&w, 1, 0), Some(Path::Relayed));
    assert!(w.received(0, w.member(1)) > 450);
    assert_eq!(w.homes[1].reach.stats().probes_sent, 0);
}

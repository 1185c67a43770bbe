//! Invitations between a host's setup and joiners' setups, their
//! datagrams passed by hand: the seat code seats, the spectator code
//! admits a spectator and nothing else, a request without a code is
//! refused with less than it sent, a wrong code and a host without the
//! code are named, a roster changed on the way is caught, and one source
//! cannot try more than its share of guesses.

use std::net::SocketAddr;

use lockstep_lobby::message::{Message, Refusal};
use lockstep_lobby::{
    HostEvent, HostSetup, Invite, Invites, JoinEvent, JoinFailure, JoinSetup, JoinTiming,
    MatchCode, MatchSettings, Offer, SetupTiming, Unproven, Want,
};
use lockstep_protocol::Instant;
use lockstep_protocol::seal::Identity;
use lockstep_sim::Match;

fn host_addr() -> SocketAddr {
    "10.0.0.1:7000".parse().unwrap()
}

fn invites() -> Invites {
    Invites::from_random(*b"sixteen  bytes!!")
}

fn code(i: &Invite) -> MatchCode {
    *i.code().expect("a code")
}

fn host(invites: Invites, secret: u8) -> HostSetup {
    let setup = Match {
        seats: 2,
        seed: 1,
        tick_rate: 60,
    };
    let offer = Offer {
        game: "g".into(),
        game_version: 1,
        config: vec![1, 2, 3],
        setup,
        settings: MatchSettings::new(&setup),
    };
    HostSetup::new(
        offer,
        Identity::from_secret([secret; 32]),
        [9; 32],
        invites,
        SetupTiming::default(),
    )
}

fn joiner(want: Want, invite: Invite, seed: u8) -> JoinSetup {
    JoinSetup::new(
        Instant::ZERO,
        host_addr(),
        want,
        invite,
        Identity::from_secret([seed; 32]),
        [seed ^ 0x55; 32],
        JoinTiming::default(),
    )
}

/// What one exchange did: the joiner's events, the host's, and the bytes
/// each sent the other.
#[derive(Debug, Default)]
struct Run {
    join: Vec<JoinEvent>,
    host: Vec<HostEvent>,
    joiner_sent: usize,
    host_sent: usize,
    heard: Vec<Message>,
}

/// Runs `j` (at `from`) against `h` for `rounds` resend periods, every
/// datagram from the host passed through `tamper`.
fn run(
    h: &mut HostSetup,
    j: &mut JoinSetup,
    from: SocketAddr,
    rounds: u32,
    mut tamper: impl FnMut(Vec<u8>) -> Vec<u8>,
) -> Run {
    let mut out = Run::default();
    let mut now = Instant::from_micros(1_000_000);
    for _ in 0..rounds {
        j.handle_timeout(now);
        for _ in 0..8 {
            let mut moved = false;
            while let Some(d) = j.poll_transmit() {
                out.joiner_sent += d.bytes.len();
                h.handle_datagram(now, from, &d.bytes);
                moved = true;
            }
            while let Some(d) = h.poll_transmit() {
                assert_eq!(d.to, from);
                out.host_sent += d.bytes.len();
                out.heard.push(Message::decode(&d.bytes).unwrap());
                j.handle_datagram(now, host_addr(), &tamper(d.bytes));
                moved = true;
            }
            if !moved {
                break;
            }
        }
        out.join.extend(std::iter::from_fn(|| j.poll_event()));
        out.host.extend(std::iter::from_fn(|| h.poll_event()));
        if j.is_done() {
            break;
        }
        now = now.plus(250_000);
    }
    out
}

fn failure(r: &Run) -> Option<&JoinFailure> {
    r.join.iter().find_map(|e| match e {
        JoinEvent::Failed(f) => Some(f),
        _ => None,
    })
}

#[test]
fn the_seat_code_seats_and_both_sides_prove_it() {
    let inv = invites();
    let mut h = host(inv, 1);
    let mut j = joiner(Want::Seat, Invite::Code(code(&inv.seat)), 2);
    let r = run(&mut h, &mut j, "10.0.0.2:5000".parse().unwrap(), 4, |b| b);
    assert!(r.join.contains(&JoinEvent::HostProven), "{:?}", r.join);
    let roster = j.roster().expect("a roster");
    assert_eq!(roster.seat.map(|s| s.0), Some(1));
    assert!(h.is_seated());
    // The roster came tagged.
    assert!(
        r.heard
            .iter()
            .any(|m| matches!(m, Message::Roster { tag: Some(_), .. }))
    );
    assert_eq!(h.stats().code_proofs, 1, "resends cost no second guess");
}

#[test]
fn the_spectator_code_admits_a_spectator_and_does_not_seat() {
    let inv = invites();
    let mut h = host(inv, 1);
    let mut seat = joiner(Want::Seat, Invite::Code(code(&inv.seat)), 2);
    run(
        &mut h,
        &mut seat,
        "10.0.0.2:5000".parse().unwrap(),
        4,
        |b| b,
    );
    assert!(h.is_seated());
    let mut watcher = joiner(Want::Spectate, Invite::Code(code(&inv.spectate)), 3);
    let r = run(
        &mut h,
        &mut watcher,
        "10.0.0.3:5000".parse().unwrap(),
        4,
        |b| b,
    );
    assert!(
        watcher.roster().is_some_and(|r| r.seat.is_none()),
        "{:?}",
        r.join
    );
    // The spectators' code proves nothing at the seats' door, and the
    // seats' code nothing at the spectators'.
    let mut h = host(inv, 1);
    let mut j = joiner(Want::Seat, Invite::Code(code(&inv.spectate)), 4);
    let r = run(&mut h, &mut j, "10.0.0.4:5000".parse().unwrap(), 4, |b| b);
    assert_eq!(
        failure(&r),
        Some(&JoinFailure::HostUnproven(Unproven::WrongProof))
    );
    assert!(
        !r.host
            .iter()
            .any(|e| matches!(e, HostEvent::SeatOffered { .. }))
    );
}

#[test]
fn a_join_without_the_code_is_refused_with_less_than_it_sent() {
    let inv = invites();
    for want in [Want::Seat, Want::Spectate] {
        let mut h = host(inv, 1);
        let mut j = joiner(want, Invite::Open, 2);
        let r = run(&mut h, &mut j, "10.0.0.2:5000".parse().unwrap(), 4, |b| b);
        assert_eq!(
            failure(&r),
            Some(&JoinFailure::Refused(Refusal::InviteNeeded)),
            "{want:?}"
        );
        assert!(r.host_sent * 8 < r.joiner_sent, "{r:?}");
        assert!(!h.is_seated());
    }
}

#[test]
fn a_wrong_code_and_a_host_without_the_code_are_named() {
    let inv = invites();
    let wrong = MatchCode::parse("0000-000001").unwrap();
    // A joiner with a wrong code: the host's proof does not verify.
    let mut h = host(inv, 1);
    let mut j = joiner(Want::Seat, Invite::Code(wrong), 2);
    let r = run(&mut h, &mut j, "10.0.0.2:5000".parse().unwrap(), 4, |b| b);
    assert_eq!(
        failure(&r),
        Some(&JoinFailure::HostUnproven(Unproven::WrongProof))
    );
    assert!(!h.is_seated());
    // A party in the host's place, with its own codes: the same.
    let mut impostor = host(Invites::from_random([7; 16]), 3);
    let mut j = joiner(Want::Seat, Invite::Code(code(&inv.seat)), 2);
    let r = run(
        &mut impostor,
        &mut j,
        "10.0.0.2:5000".parse().unwrap(),
        4,
        |b| b,
    );
    assert_eq!(
        failure(&r),
        Some(&JoinFailure::HostUnproven(Unproven::WrongProof))
    );
    // One that takes anyone: it never proves the code, and the joiner
    // does not take its word.
    let mut open = host(Invites::OPEN, 3);
    let mut j = joiner(Want::Seat, Invite::Code(code(&inv.seat)), 2);
    let r = run(
        &mut open,
        &mut j,
        "10.0.0.2:5000".parse().unwrap(),
        4,
        |b| b,
    );
    assert_eq!(
        failure(&r),
        Some(&JoinFailure::HostUnproven(Unproven::NoProof))
    );
}

#[test]
fn a_roster_changed_on_the_way_is_caught() {
    let inv = invites();
    let mut h = host(inv, 1);
    let mut j = joiner(Want::Seat, Invite::Code(code(&inv.seat)), 2);
    let r = run(
        &mut h,
        &mut j,
        "10.0.0.2:5000".parse().unwrap(),
        4,
        |bytes| match Message::decode(&bytes) {
            Ok(Message::Roster { mut roster, tag }) => {
                roster.setup.seed ^= 1;
                Message::Roster { roster, tag }.encode()
            }
            _ => bytes,
        },
    );
    assert_eq!(
        failure(&r),
        Some(&JoinFailure::HostUnproven(Unproven::Roster))
    );
    assert!(j.roster().is_none());
}

#[test]
fn one_source_cannot_try_more_than_its_share() {
    let inv = invites();
    let mut h = host(inv, 1);
    let wrong = MatchCode::parse("0000-000001").unwrap();
    // Guesses from one address, each a new process (port and key): the
    // first few are answered, then the source must wait.
    let mut refused_at = None;
    for i in 0..8u16 {
        let mut j = joiner(Want::Seat, Invite::Code(wrong), 10 + i as u8);
        let from = SocketAddr::from(([10, 0, 0, 2], 6000 + i));
        let r = run(&mut h, &mut j, from, 4, |b| b);
        if failure(&r) == Some(&JoinFailure::HostUnproven(Unproven::WrongProof)) {
            continue;
        }
        assert!(
            r.join
                .iter()
                .any(|e| *e == JoinEvent::AskingAgain(Refusal::TooManyGuesses)),
            "{r:?}"
        );
        refused_at.get_or_insert(i);
    }
    assert_eq!(refused_at, Some(5));
    assert_eq!(h.stats().code_proofs, 5);
    // Another address is not held back by the first one's guesses.
    let mut j = joiner(Want::Seat, Invite::Code(code(&inv.seat)), 40);
    run(&mut h, &mut j, "10.0.0.3:5000".parse().unwrap(), 4, |b| b);
    assert!(j.roster().is_some());
}

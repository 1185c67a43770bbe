//! The match setup played by whole processes on the simulated network
//! (`lockstep_testkit::processes`): a lossy lobby, squatters with and
//! without the code, joiners without it or with a wrong one, silent
//! spectators, a late spectator, rejoins from the wrong key and before the
//! drop, addresses that never complete, and a host's abort read with its
//! roster. The endpoints are the ones the UDP runtime drives; only the
//! network is simulated.

use std::net::SocketAddr;

use lockstep_games::Demo;
use lockstep_games::cubes::Cubes;
use lockstep_lobby::{
    Abort, Endpoint, HostEvent, Invite, Invites, JoinEvent, JoinFailure, JoinSetup, JoinTiming,
    Joining, MatchCode, MatchEnd, MatchEvent, MatchSettings, Message, Refusal, SeatEndpoint,
    SeatPlan, SeatTiming, Unproven, Want,
};
use lockstep_protocol::seal::Identity;
use lockstep_protocol::{Instant, SeatId};
use lockstep_sim::Match;
use lockstep_sim::replay;
use lockstep_testkit::netsim::{LinkConfig, Loss};
use lockstep_testkit::processes::{Lan, Stranger};
use lockstep_testkit::soak::cubes_config;

const FRAMES: u32 = 240;

fn link() -> LinkConfig {
    LinkConfig {
        jitter_micros: 10_000,
        ..LinkConfig::ideal(40_000)
    }
}

fn lan(seats: u8, seed: u64, link: LinkConfig) -> Lan<Cubes> {
    let setup = Match {
        seats,
        seed,
        tick_rate: 60,
    };
    let settings = MatchSettings::new(&setup).frames(FRAMES);
    Lan::host(seed, link, cubes_config(), setup, settings)
}

/// [`lan`] whose doors are as `invites` say.
fn lan_inviting(seats: u8, seed: u64, invites: Invites) -> Lan<Cubes> {
    let setup = Match {
        seats,
        seed,
        tick_rate: 60,
    };
    let settings = MatchSettings::new(&setup).frames(FRAMES);
    Lan::host_inviting(seed, link(), cubes_config(), setup, settings, invites)
}

fn secs(s: u64) -> Instant {
    Instant::from_micros(s * 1_000_000)
}

fn ended(lan: &Lan<Cubes>, nodes: &[usize]) -> bool {
    nodes.iter().all(|&n| lan.run_of(n).end.is_some())
}

fn assert_finished(lan: &Lan<Cubes>, nodes: &[usize]) {
    for &n in nodes {
        assert_eq!(
            lan.run_of(n).end,
            Some(MatchEnd::Finished { frames: FRAMES }),
            "node {n}: {:?}",
            lan.run_of(n).events.last()
        );
    }
}

/// Every log of `nodes` reads whole, verifies, holds all the match's
/// frames, and agrees with the others frame for frame.
fn assert_logs_agree(lan: &Lan<Cubes>, nodes: &[usize]) {
    let mut checks: Vec<Vec<_>> = Vec::new();
    for &n in nodes {
        let bytes = lan.run_of(n).log.as_ref().expect("a seat's log");
        let log = replay::read::<<Cubes as lockstep_sim::Game>::Input>(bytes).unwrap();
        assert!(log.is_complete(), "node {n}: {:?}", log.end());
        assert_eq!(log.frames(), FRAMES, "node {n}");
        let outcome = replay::run::<Cubes>(&log, &replay::RunOptions::default(), |_| {}).unwrap();
        assert!(outcome.verified(), "node {n}: {:?}", outcome.first_mismatch);
        checks.push((0..log.frames()).map(|f| log.check(f)).collect());
    }
    assert!(checks.windows(2).all(|w| w[0] == w[1]));
}

fn host_events(lan: &Lan<Cubes>) -> Vec<HostEvent> {
    lan.run_of(0)
        .events
        .iter()
        .filter_map(|(_, e)| match e {
            MatchEvent::Host(h) => Some(h.clone()),
            _ => None,
        })
        .collect()
}

fn refusals<G: Demo>(lan: &Lan<G>, node: usize) -> Vec<Refusal> {
    lan.run_of(node)
        .heard
        .iter()
        .filter_map(|m| match m {
            Message::Refused(r) => Some(r.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn setup_survives_a_lobby_that_loses_duplicates_and_reorders() {
    let lossy = LinkConfig {
        loss: Loss::Random(300_000),
        duplicate_ppm: 100_000,
        reorder_ppm: 100_000,
        reorder_micros: 60_000,
        ..link()
    };
    let mut lan = lan(3, 5, lossy);
    let a = lan.join();
    let b = lan.join();
    let seats = [0, a, b];
    assert!(lan.run_until(secs(120), |l| ended(l, &seats)));
    assert_finished(&lan, &seats);
    assert_logs_agree(&lan, &seats);
}

/// In an open lobby (a LAN party's), an address that answers one
/// challenge and falls silent holds a seat only until its offer lapses.
#[test]
fn a_squatter_cannot_keep_the_real_joiner_out_of_an_open_lobby() {
    let mut lan = lan_inviting(2, 6, Invites::OPEN);
    // One Join from an address that never answers, and one that answers the
    // challenge once and falls silent, both before the real joiner.
    let forged = lan.stranger(Stranger::Spray {
        want: Want::Seat,
        every_micros: 1_000_000,
        count: 1,
    });
    let squatter = lan.stranger(Stranger::OnceThenSilent { want: Want::Seat });
    lan.run_until(secs(1), |_| false);
    let real = lan.join();
    assert!(lan.run_until(secs(60), |l| ended(l, &[0, real])));
    assert_finished(&lan, &[0, real]);
    assert_logs_agree(&lan, &[0, real]);
    let events = host_events(&lan);
    // The squatter was offered the seat, then lost it to silence.
    let offered = events
        .iter()
        .position(|e| matches!(e, HostEvent::SeatOffered { seat: SeatId(1), from } if *from == lockstep_testkit::processes::address(squatter)));
    let freed = events
        .iter()
        .position(|e| matches!(e, HostEvent::SeatFreed { seat: SeatId(1) }));
    assert!(offered.is_some() && freed > offered, "{events:?}");
    // The forged address got a challenge and nothing else.
    assert!(
        lan.run_of(forged)
            .heard
            .iter()
            .all(|m| matches!(m, Message::Challenge { .. }))
    );
    assert!(lan.bytes(0, forged) <= lan.bytes(forged, 0));
}

/// The squat that called matches off: a real address that asks twice for
/// a seat, then never plays. Without the code it is refused at once (as is
/// a joiner with a wrong code, which is told the host did not prove its
/// code); the invited joiner takes the seat and the match plays out.
#[test]
fn without_the_code_nobody_sits_and_a_squat_cannot_call_the_match_off() {
    let mut lan = lan(2, 16, link());
    let squatter = lan.stranger(Stranger::OnceThenSilent { want: Want::Seat });
    let twice = lan.stranger(Stranger::Spray {
        want: Want::Seat,
        every_micros: 250_000,
        count: 2,
    });
    let codeless = lan.join_invited(Invite::Open);
    let wrong = lan.join_invited(Invite::Code(MatchCode::parse("0000-000001").unwrap()));
    lan.run_until(secs(1), |_| false);
    let real = lan.join();
    assert!(lan.run_until(secs(60), |l| ended(l, &[0, real])));
    assert_finished(&lan, &[0, real]);
    assert_logs_agree(&lan, &[0, real]);
    assert!(refusals(&lan, squatter).contains(&Refusal::InviteNeeded));
    assert!(lan.bytes(0, squatter) <= lan.bytes(squatter, 0));
    assert!(lan.bytes(0, twice) <= lan.bytes(twice, 0));
    assert_eq!(
        lan.run_of(codeless).end,
        Some(MatchEnd::SetupFailed(JoinFailure::Refused(
            Refusal::InviteNeeded
        )))
    );
    assert_eq!(
        lan.run_of(wrong).end,
        Some(MatchEnd::SetupFailed(JoinFailure::HostUnproven(
            Unproven::WrongProof
        )))
    );
    // Only the invited joiner was ever offered a seat.
    let offered: Vec<_> = host_events(&lan)
        .into_iter()
        .filter_map(|e| match e {
            HostEvent::SeatOffered { from, .. } => Some(from),
            _ => None,
        })
        .collect();
    assert_eq!(offered, [lockstep_testkit::processes::address(real)]);
}

/// A spectator without the spectators' code is refused; the one with it
/// watches to the end; the seats' code does not admit a spectator.
#[test]
fn spectators_need_their_own_code() {
    let mut lan = lan(2, 17, link());
    let joiner = lan.join();
    assert!(lan.run_until(secs(30), |l| l.frame_of(0).is_some_and(|f| f > 30)));
    let codeless = lan.spectate_invited(Invite::Open);
    let seat_code = lan.spectate_invited(lan.invites().seat);
    let real = lan.spectate();
    assert!(lan.run_until(secs(60), |l| ended(l, &[0, joiner, real])));
    assert_finished(&lan, &[0, joiner, real]);
    assert_eq!(lan.run_of(real).frames, FRAMES);
    assert_eq!(
        lan.run_of(codeless).end,
        Some(MatchEnd::SetupFailed(JoinFailure::Refused(
            Refusal::InviteNeeded
        )))
    );
    assert_eq!(
        lan.run_of(seat_code).end,
        Some(MatchEnd::SetupFailed(JoinFailure::HostUnproven(
            Unproven::WrongProof
        )))
    );
}

#[test]
fn a_real_spectator_is_admitted_after_twenty_silent_ones() {
    // Spectating is public here: the silent ones need no code.
    let invites = Invites::from_random([7; 16]).public_spectating();
    let mut lan = lan_inviting(2, 7, invites);
    let joiner = lan.join();
    assert!(lan.run_until(secs(30), |l| l.frame_of(0).is_some_and(|f| f > 30)));
    let silent: Vec<usize> = (0..20)
        .map(|_| {
            lan.stranger(Stranger::OnceThenSilent {
                want: Want::Spectate,
            })
        })
        .collect();
    lan.run_until(lan.now().plus(500_000), |_| false);
    let real = lan.spectate();
    assert!(lan.run_until(secs(60), |l| ended(l, &[0, joiner, real])));
    assert_finished(&lan, &[0, joiner, real]);
    assert_eq!(lan.run_of(real).frames, FRAMES);
    // The silent ones were admitted up to the bound, then forgotten.
    let events = host_events(&lan);
    let expired = events
        .iter()
        .filter(|e| matches!(e, HostEvent::SpectatorExpired { .. }))
        .count();
    assert!(expired >= 16, "{expired} expired");
    assert!(silent.iter().all(|&s| lan.bytes(s, 0) > 0));
}

#[test]
fn a_late_spectator_watches_the_last_frames() {
    let mut lan = lan(2, 8, link());
    let joiner = lan.join();
    assert!(lan.run_until(secs(30), |l| l.frame_of(0).is_some_and(|f| f > FRAMES - 90)));
    let late = lan.spectate();
    assert!(lan.run_until(secs(60), |l| ended(l, &[0, joiner, late])));
    assert_finished(&lan, &[0, joiner, late]);
    assert_eq!(lan.run_of(late).frames, FRAMES);
}

#[test]
fn a_rejoin_needs_the_seat_key_and_waits_for_the_drop() {
    let mut lan = lan(3, 9, link());
    let a = lan.join();
    let b = lan.join();
    assert!(lan.run_until(secs(30), |l| l.frame_of(b).is_some_and(|f| f > 40)));
    let seat_key = lan.identity_of(b).unwrap().public();
    lan.kill(b);
    // At once, before the others drop the seat: a forger with the seat's
    // public key but not its secret, one with a key of its own, and the
    // seat's real restarted process.
    let forger = lan.stranger(Stranger::ForgedClaim { seat_key });
    let stranger_key = lan.stranger(Stranger::ForgedClaim {
        seat_key: lockstep_protocol::seal::Identity::from_secret([42; 32]).public(),
    });
    let back = lan.rejoin(b);
    assert!(lan.run_until(secs(60), |l| ended(l, &[0, a, back])));
    assert_finished(&lan, &[0, a, back]);
    assert!(refusals(&lan, forger).contains(&Refusal::BadProof));
    assert!(refusals(&lan, stranger_key).contains(&Refusal::NoSuchSeat));
    let asked_again = lan.run_of(back).events.iter().any(|(_, e)| {
        matches!(
            e,
            MatchEvent::Join(JoinEvent::AskingAgain(Refusal::NotDropped { .. }))
        )
    });
    assert!(asked_again, "the rejoin came before the drop");
    assert!(
        host_events(&lan)
            .iter()
            .any(|e| matches!(e, HostEvent::Rejoining { .. }))
    );
    assert_logs_agree(&lan, &[0, a]);
}

#[test]
fn an_address_that_never_completes_gets_no_more_bytes_than_it_sent() {
    let mut lan = lan(2, 10, link());
    let sprays: Vec<usize> = [Want::Seat, Want::Rejoin, Want::Spectate]
        .into_iter()
        .map(|want| {
            lan.stranger(Stranger::Spray {
                want,
                every_micros: 250_000,
                count: u32::MAX,
            })
        })
        .collect();
    let joiner = lan.join();
    assert!(lan.run_until(secs(60), |l| ended(l, &[0, joiner])));
    assert_finished(&lan, &[0, joiner]);
    for s in sprays {
        let (out, inn) = (lan.bytes(0, s), lan.bytes(s, 0));
        eprintln!(
            "node {s}: host sent {out} bytes, received {inn}: {}.{:03}",
            out / inn.max(1),
            out * 1000 / inn.max(1) % 1000
        );
        assert!(inn > 10_000, "it sprayed for the whole match");
        assert!(out <= inn, "{out} out for {inn} in");
    }
}

#[test]
fn a_joiner_whose_host_vanishes_before_the_first_frame_gives_up_in_seconds() {
    let mut lan = lan(2, 12, link());
    let joiner = lan.join();
    let seated = |l: &Lan<Cubes>| {
        l.run_of(0)
            .events
            .iter()
            .any(|(_, e)| matches!(e, MatchEvent::Host(HostEvent::Seated)))
    };
    assert!(lan.run_until(secs(30), seated));
    let gone_at = lan.now();
    lan.kill(0);
    assert!(lan.run_until(secs(60), |l| ended(l, &[joiner])));
    let (at, _) = lan.run_of(joiner).events.last().unwrap().clone();
    assert!(
        matches!(lan.run_of(joiner).end, Some(MatchEnd::HostVanished)),
        "{:?}",
        lan.run_of(joiner).end
    );
    assert!(
        at.since(gone_at) <= 10_000_000,
        "gave up after {} µs",
        at.since(gone_at)
    );
}

/// A lan whose match lasts `frames`.
fn long_lan(seats: u8, seed: u64, frames: u32) -> Lan<Cubes> {
    let setup = Match {
        seats,
        seed,
        tick_rate: 60,
    };
    let settings = MatchSettings::new(&setup).frames(frames);
    Lan::host(seed, link(), cubes_config(), setup, settings)
}

/// A joiner paused for 10 s (as SIGSTOP) then resumed: the others drop it
/// and play on; it stops (it lost the quorum), takes its seat back through
/// the lobby under a fresh key pair, and plays to the end. Its log stops
/// where it stopped and says why; every frame it holds agrees with the
/// host's log.
fn a_paused_joiner_takes_its_seat_back(seats: u8) {
    let frames = 1200;
    let mut lan = long_lan(seats, 20 + u64::from(seats), frames);
    let joiners: Vec<usize> = (1..seats).map(|_| lan.join()).collect();
    let paused = *joiners.last().unwrap();
    assert!(lan.run_until(secs(30), |l| l.frame_of(paused).is_some_and(|f| f > 120)));
    lan.pause(paused, 10_000_000);
    let mut all = vec![0];
    all.extend(&joiners);
    assert!(lan.run_until(secs(120), |l| ended(l, &all)));
    for &n in &all {
        assert_eq!(
            lan.run_of(n).end,
            Some(MatchEnd::Finished { frames }),
            "node {n}"
        );
    }
    let run = lan.run_of(paused);
    let stopped = run.events.iter().any(|(_, e)| {
        matches!(
            e,
            MatchEvent::Peer(lockstep_peer::PeerEvent::Stopped(
                lockstep_peer::StopReason::LostQuorum { .. }
            ))
        )
    });
    let rejoined = run
        .events
        .iter()
        .any(|(_, e)| matches!(e, MatchEvent::Join(JoinEvent::Roster(r)) if r.rejoin));
    assert!(stopped && rejoined, "{:?}", run.events);
    // The paused seat's log: the frames before its stop, agreeing with the
    // host's, and a note saying why it stops there.
    let read = |n: usize| {
        replay::read::<<Cubes as lockstep_sim::Game>::Input>(lan.run_of(n).log.as_ref().unwrap())
            .unwrap()
    };
    let host = read(0);
    let cut = read(paused);
    assert!(cut.frames() < frames);
    assert!(
        matches!(cut.stop(), Some(replay::StopCause::LostQuorum)),
        "{:?}",
        cut.notes()
    );
    assert!((0..cut.frames()).all(|f| cut.check(f) == host.check(f)));
    let others: Vec<usize> = all.iter().copied().filter(|&n| n != paused).collect();
    assert_logs_agree_over(&lan, &others, frames);
}

/// [`assert_logs_agree`] for a match of `frames` frames.
fn assert_logs_agree_over(lan: &Lan<Cubes>, nodes: &[usize], frames: u32) {
    let mut checks: Vec<Vec<_>> = Vec::new();
    for &n in nodes {
        let bytes = lan.run_of(n).log.as_ref().expect("a seat's log");
        let log = replay::read::<<Cubes as lockstep_sim::Game>::Input>(bytes).unwrap();
        assert_eq!(log.frames(), frames, "node {n}");
        let outcome = replay::run::<Cubes>(&log, &replay::RunOptions::default(), |_| {}).unwrap();
        assert!(outcome.verified(), "node {n}: {:?}", outcome.first_mismatch);
        checks.push((0..log.frames()).map(|f| log.check(f)).collect());
    }
    assert!(checks.windows(2).all(|w| w[0] == w[1]));
}

#[test]
fn a_paused_joiner_of_two_takes_its_seat_back() {
    a_paused_joiner_takes_its_seat_back(2);
}

#[test]
fn a_paused_joiner_of_four_takes_its_seat_back() {
    a_paused_joiner_takes_its_seat_back(4);
}

/// A host whose own log cannot be opened sends the roster and its
/// abort together; a joiner whose runtime read both in one batch (the
/// setup's events then gone with the setup's runtime) still ends at
/// once with the host's reason, instead of waiting for a first frame.
#[test]
fn an_abort_read_with_the_roster_ends_the_joiner_at_once() {
    let setup = Match {
        seats: 2,
        seed: 5,
        tick_rate: 60,
    };
    let config = Cubes::default_config();
    let settings = MatchSettings::new(&setup).frames(120);
    let mut plan = SeatPlan::<Cubes, Vec<u8>>::new(1);
    plan.log = Some(Box::new(|| Err(std::io::Error::other("disk full"))));
    let host_addr: SocketAddr = "10.0.0.1:7000".parse().unwrap();
    let join_addr: SocketAddr = "10.0.0.2:7000".parse().unwrap();
    let invites = Invites::from_random([3; 16]);
    let mut host = SeatEndpoint::host(
        Instant::ZERO,
        config,
        setup,
        settings,
        invites,
        Identity::from_secret([1; 32]),
        [9; 32],
        plan,
        SeatTiming::default(),
    );
    let mut join = JoinSetup::new(
        Instant::ZERO,
        host_addr,
        Want::Seat,
        invites.seat,
        Identity::from_secret([2; 32]),
        [4; 32],
        JoinTiming::default(),
    );
    // Shuttle datagrams until the roster arrives: the host sends it
    // and its abort in one go, and the joiner's setup reads both.
    let mut now = Instant::ZERO;
    for _ in 0..400 {
        if join.poll_timeout().is_some_and(|t| t <= now) {
            join.handle_timeout(now);
        }
        while let Some(d) = join.poll_transmit() {
            host.handle_datagram(now, join_addr, &d.bytes);
        }
        if host.poll_timeout().is_some_and(|t| t <= now) {
            host.handle_timeout(now);
        }
        while let Some(d) = host.poll_transmit(now) {
            join.handle_datagram(now, host_addr, &d.bytes);
        }
        if join.roster().is_some() {
            break;
        }
        now = now.plus(50_000);
    }
    assert!(join.roster().is_some(), "the roster arrived");
    // What a runtime's `roster()` returns after: the setup's events are
    // read and dropped with the runtime that drove it.
    while join.poll_event().is_some() {}
    let plan = SeatPlan::<Cubes, Vec<u8>>::new(2);
    let Ok(mut seat) =
        SeatEndpoint::from_roster(now, Joining::new(join), plan, SeatTiming::default())
    else {
        panic!("the roster is playable");
    };
    let end = std::iter::from_fn(|| seat.poll_event()).find_map(|e| match e {
        MatchEvent::Ended(end) => Some(end),
        _ => None,
    });
    assert!(
        matches!(
            end,
            Some(MatchEnd::SetupFailed(JoinFailure::Aborted(
                Abort::HostFailed { .. }
            )))
        ),
        "{end:?}"
    );
    assert!(seat.is_closed());
}

/// A match hosted with an arbiter, seat 0's game wrong once in a way its
/// machine repeats (an `f32`): the two seats' self-checks cannot tell who
/// drifted, the arbiter process that joined through the host can. Seat 0
/// is healed to seat 1's state, both finish, both logs verify and agree;
/// a second process asking to arbitrate is refused.
#[test]
fn an_arbiter_process_settles_a_dispute_two_seats_cannot() {
    use lockstep_peer::{PeerEvent, SpectatorEvent};
    use lockstep_testkit::faulty::{self, Fault, Faulty, Recurring};

    faulty::install(Some(Fault {
        seat: 0,
        kind: Recurring::SelfConsistent,
        from_frame: 120,
        every: u32::MAX,
        until_frame: 121,
    }));
    let setup = Match {
        seats: 2,
        seed: 21,
        tick_rate: 60,
    };
    let settings = MatchSettings::new(&setup).frames(FRAMES).arbiter(true);
    let mut lan: Lan<Faulty<Cubes>> = Lan::host(21, link(), cubes_config(), setup, settings);
    let joiner = lan.join();
    assert!(lan.run_until(secs(30), |l| l.frame_of(0).is_some_and(|f| f > 30)));
    let arbiter = lan.arbitrate();
    lan.run_until(lan.now().plus(500_000), |_| false);
    let second = lan.stranger(Stranger::OnceThenSilent {
        want: Want::Arbitrate,
    });
    let nodes = [0, joiner, arbiter];
    assert!(lan.run_until(secs(60), |l| {
        nodes.iter().all(|&n| l.run_of(n).end.is_some())
    }));
    faulty::install(None);
    for &n in &nodes {
        assert_eq!(
            lan.run_of(n).end,
            Some(MatchEnd::Finished { frames: FRAMES }),
            "node {n}"
        );
    }
    let healed = |n: usize| {
        lan.run_of(n)
            .events
            .iter()
            .filter(|(_, e)| matches!(e, MatchEvent::Peer(PeerEvent::Healed { .. })))
            .count()
    };
    assert_eq!((healed(0), healed(joiner)), (1, 0));
    assert!(lan.run_of(arbiter).events.iter().any(|(_, e)| matches!(
        e,
        MatchEvent::Spectator(SpectatorEvent::Arbitrated {
            frame: 120,
            short: Some(_)
        })
    )));
    assert_eq!(refusals(&lan, second), [Refusal::NoArbiter]);
    let mut checks: Vec<Vec<_>> = Vec::new();
    for n in [0, joiner] {
        let bytes = lan.run_of(n).log.as_ref().expect("a seat's log");
        let log = replay::read::<<Cubes as lockstep_sim::Game>::Input>(bytes).unwrap();
        let outcome = replay::run::<Cubes>(&log, &replay::RunOptions::default(), |_| {}).unwrap();
        assert!(outcome.verified(), "node {n}: {:?}", outcome.first_mismatch);
        checks.push((0..log.frames()).map(|f| log.check(f)).collect());
    }
    assert_eq!(checks[0], checks[1]);
}

/// Says what a report could not compare whenever its checksums differ and
/// no field does: never "0 fields differ" beside two checksums.
pub fn assert_explained(report: &lockstep_sim::desync::DesyncReport) {
    let text = report.to_text();
    // "0 fields differ", not the end of "240 fields differ".
    let zero = text
        .match_indices("0 fields differ")
        .any(|(i, _)| !text[..i].ends_with(|c: char| c.is_ascii_digit()));
    assert!(!zero, "{text}");
    if report.checksums[0] != report.checksums[1] {
        let named = report.after_compared && !report.after.is_empty();
        assert!(named || !report.not_compared.is_empty(), "{text}");
    }
}

/// A bug one machine repeats every time (an `f32`) on the joiner, no
/// arbiter: nothing attributes the dispute, so nobody is overwritten and
/// the match stops. Every seat, the honest host included, hears why
/// (`PeerEvent::Stopped`) before the end, with a report, from the same
/// first frame.
#[test]
fn every_seat_of_an_unattributable_dispute_stops_with_a_report() {
    use lockstep_peer::{PeerEvent, StopReason};
    use lockstep_testkit::faulty::{self, Fault, Faulty, Recurring};

    faulty::install(Some(Fault {
        seat: 1,
        kind: Recurring::SelfConsistent,
        from_frame: 120,
        every: u32::MAX,
        until_frame: 121,
    }));
    let setup = Match {
        seats: 2,
        seed: 23,
        tick_rate: 60,
    };
    let settings = MatchSettings::new(&setup).frames(FRAMES);
    let mut lan: Lan<Faulty<Cubes>> = Lan::host(23, link(), cubes_config(), setup, settings);
    let joiner = lan.join();
    let nodes = [0, joiner];
    assert!(lan.run_until(secs(60), |l| {
        nodes.iter().all(|&n| l.run_of(n).end.is_some())
    }));
    faulty::install(None);
    let mut first_frames = Vec::new();
    for n in nodes {
        let events = &lan.run_of(n).events;
        let stopped = events
            .iter()
            .position(|(_, e)| matches!(e, MatchEvent::Peer(PeerEvent::Stopped(_))));
        let ended = events
            .iter()
            .position(|(_, e)| matches!(e, MatchEvent::Ended(_)));
        let (Some(stopped), Some(ended)) = (stopped, ended) else {
            panic!("node {n}: no stop or no end: {events:?}");
        };
        assert!(stopped < ended, "node {n}");
        let MatchEvent::Peer(PeerEvent::Stopped(StopReason::MatchInvalid {
            first_frame,
            report: Some(report),
        })) = &events[stopped].1
        else {
            panic!("node {n}: {:?}", events[stopped].1);
        };
        assert_explained(&report.report);
        first_frames.push(*first_frame);
        assert!(matches!(
            lan.run_of(n).end,
            Some(MatchEnd::Stopped(StopReason::MatchInvalid { .. }))
        ));
    }
    assert_eq!(first_frames[0], first_frames[1]);
}

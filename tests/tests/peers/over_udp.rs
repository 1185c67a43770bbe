//! A match never lies, over real UDP: a host and a joiner on loopback,
//! each on its own thread with its own tokio runtime (so each is "a
//! process" to [`Faulty`], whose fault lives in a thread-local), playing a
//! cube match in which one seat's game is nondeterministic. Under the
//! default policy both seats end with `MatchInvalid` within seconds, and
//! the honest seat never loads the faulty seat's state.
//!
//! Every wait is bounded by the endpoints' own timeouts and the match's
//! length; the ports are the OS's choice.

use std::net::SocketAddr;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use lockstep_games::Demo;
use lockstep_games::cubes::{Cubes, CubesConfig};
use lockstep_net::conditioner::LinkShape;
use lockstep_net::{
    MatchEnd, MatchEvent, MatchSettings, PeerEvent, Runtime, SeatPlan, SeatTiming, Socket,
    StopReason, Want,
};
use lockstep_sim::Match;
use lockstep_testkit::faulty::{self, Fault, Faulty, Recurring};

type Game = Faulty<Cubes>;

const FRAMES: u32 = 1_200;

fn tiny() -> CubesConfig {
    let mut c = Cubes::default_config();
    c.field.grid = 4;
    c
}

fn socket() -> Socket {
    Socket::open("127.0.0.1:0".parse().unwrap(), LinkShape::PERFECT, 1).unwrap()
}

fn plan(token: u32) -> SeatPlan<Game, Vec<u8>> {
    let mut plan = SeatPlan::new(token);
    plan.bot = Some(Box::new(|seat, m: &Match| {
        Box::new(Game::bot(seat, m.seed))
    }));
    plan.log = Some(Box::new(|| Ok(Vec::new())));
    plan
}

/// How one seat's match went.
#[derive(Debug)]
struct Seen {
    end: Option<MatchEnd>,
    /// Wall time from the seat's first desync event to its end.
    desync_to_end: Option<Duration>,
    states_loaded: u64,
}

async fn play<E: lockstep_net::Endpoint>(
    mut rt: Runtime<E>,
) -> (Option<MatchEnd>, Option<Duration>, Runtime<E>) {
    let (mut end, mut first_desync) = (None, None::<Instant>);
    while let Some(e) = rt.next_event().await {
        match e {
            MatchEvent::Peer(PeerEvent::Desync { .. }) => {
                first_desync.get_or_insert_with(Instant::now);
            }
            MatchEvent::Ended(e) => end = Some(e),
            _ => {}
        }
    }
    (end, first_desync.map(|t| t.elapsed()), rt)
}

fn on_own_runtime<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

/// Plays a two-seat match with `fault` on seat `fault.seat`.
fn duel(fault: Fault) -> [Seen; 2] {
    let setup = Match {
        seats: 2,
        seed: 11,
        tick_rate: 60,
    };
    let settings = MatchSettings::new(&setup).frames(FRAMES);
    let invites = lockstep_net::entropy::invites().unwrap();
    let (addr_tx, addr_rx) = mpsc::channel::<SocketAddr>();
    let host = thread::spawn(move || {
        if fault.seat == 0 {
            faulty::install(Some(fault));
            faulty::enter(0);
        }
        on_own_runtime(async {
            let host_socket = socket();
            addr_tx.send(host_socket.local_addr().unwrap()).unwrap();
            let rt =
                lockstep_net::host(host_socket, tiny(), setup, settings, invites, plan(1)).unwrap();
            let (end, desync_to_end, rt) = play(rt).await;
            Seen {
                end,
                desync_to_end,
                states_loaded: rt.endpoint().peer_stats().states_loaded,
            }
        })
    });
    let joiner = thread::spawn(move || {
        if fault.seat == 1 {
            faulty::install(Some(fault));
            faulty::enter(1);
        }
        let host_addr = addr_rx.recv().unwrap();
        on_own_runtime(async {
            let mut joining =
                lockstep_net::join(socket(), host_addr, Want::Seat, invites.seat).unwrap();
            joining.roster(|_| {}).await.unwrap();
            let seat = joining
                .play::<Game, Vec<u8>>(plan(2), SeatTiming::default())
                .map_err(|(_, why)| why)
                .unwrap();
            let (end, desync_to_end, rt) = play(seat).await;
            Seen {
                end,
                desync_to_end,
                states_loaded: rt.endpoint().peer_stats().states_loaded,
            }
        })
    });
    [host.join().unwrap(), joiner.join().unwrap()]
}

fn invalid(seen: &Seen) -> bool {
    matches!(
        seen.end,
        Some(MatchEnd::Stopped(StopReason::MatchInvalid { .. }))
    )
}

#[test]
fn a_recurring_bug_on_the_host_stops_both_processes_and_the_joiner_is_never_overwritten() {
    // The host disagrees with itself (a hash-order bug): blamed by its own
    // re-run, healed from the joiner's state until the heals recur, then
    // the match is invalid on both seats.
    let seen = duel(Fault {
        seat: 0,
        kind: Recurring::SelfInconsistent,
        from_frame: 120,
        every: 30,
        until_frame: u32::MAX,
    });
    for (seat, s) in seen.iter().enumerate() {
        assert!(invalid(s), "seat {seat}: {s:?}");
        let took = s.desync_to_end.expect("a desync was seen");
        assert!(took < Duration::from_secs(15), "seat {seat}: {s:?}");
    }
    assert_eq!(seen[1].states_loaded, 0, "the honest joiner loaded nothing");
}

#[test]
fn a_self_consistent_bug_between_two_processes_stops_both_and_overwrites_nobody() {
    // The joiner is wrong the same way every time (an `f32` rounding its
    // own way): nothing can tell which seat drifted, so nobody is healed.
    let seen = duel(Fault {
        seat: 1,
        kind: Recurring::SelfConsistent,
        from_frame: 120,
        every: 30,
        until_frame: u32::MAX,
    });
    for (seat, s) in seen.iter().enumerate() {
        assert!(invalid(s), "seat {seat}: {s:?}");
        assert_eq!(s.states_loaded, 0, "seat {seat}: {s:?}");
    }
}

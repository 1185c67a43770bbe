//! The runtime over real UDP sockets on loopback, in one process: a host
//! and a joiner (and a spectator) each driven by its own [`Runtime`] on one
//! current-thread tokio runtime, and the same match driven by polls from a
//! plain loop with no async runtime at all. Every wait is bounded by the
//! endpoints' own timeouts; the ports are the OS's choice.

use std::net::SocketAddr;
use std::time::Duration;

use lockstep_games::Demo;
use lockstep_games::cubes::{Cubes, CubesConfig};
use lockstep_net::conditioner::LinkShape;
use lockstep_net::{
    MatchEnd, MatchEvent, MatchSettings, PeerEvent, Runtime, SeatPlan, SeatRuntime, SeatTiming,
    Socket, Want,
};
use lockstep_sim::Match;

fn tiny() -> CubesConfig {
    let mut c = Cubes::default_config();
    c.field.grid = 4;
    c
}

fn socket() -> Socket {
    Socket::open("127.0.0.1:0".parse().unwrap(), LinkShape::PERFECT, 1).unwrap()
}

fn plan(token: u32) -> SeatPlan<Cubes, Vec<u8>> {
    let mut plan = SeatPlan::new(token);
    plan.bot = Some(Box::new(|seat, m: &Match| {
        Box::new(Cubes::bot(seat, m.seed))
    }));
    plan.log = Some(Box::new(|| Ok(Vec::new())));
    plan
}

/// Drives `rt` to its end; gives how it ended and the frames it stepped.
async fn play<E: lockstep_net::Endpoint>(
    mut rt: Runtime<E>,
) -> (Option<MatchEnd>, u32, Runtime<E>) {
    let mut end = None;
    let mut frames = 0;
    while let Some(e) = rt.next_event().await {
        match e {
            MatchEvent::Peer(PeerEvent::Stepped { frame, .. }) => frames = frames.max(frame + 1),
            MatchEvent::Ended(e) => end = Some(e),
            _ => {}
        }
    }
    (end, frames, rt)
}

#[test]
fn a_host_a_joiner_and_a_spectator_play_over_loopback() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let setup = Match {
            seats: 2,
            seed: 3,
            tick_rate: 60,
        };
        let settings = MatchSettings::new(&setup).frames(180);
        let host_socket = socket();
        let host_addr: SocketAddr = host_socket.local_addr().unwrap();
        let invites = lockstep_net::entropy::invites().unwrap();
        let host =
            lockstep_net::host(host_socket, tiny(), setup, settings, invites, plan(1)).unwrap();
        let seat = async {
            let mut joining =
                lockstep_net::join(socket(), host_addr, Want::Seat, invites.seat).unwrap();
            let roster = joining.roster(|_| {}).await.unwrap();
            assert_eq!(roster.seat, Some(lockstep_protocol::SeatId(1)));
            let seat = joining
                .play::<Cubes, Vec<u8>>(plan(2), SeatTiming::default())
                .map_err(|(_, why)| why)
                .unwrap();
            play(seat).await
        };
        let spectator = async {
            // Asked before the match started: told to ask again, then admitted.
            tokio::time::sleep(Duration::from_millis(200)).await;
            let mut joining =
                lockstep_net::join(socket(), host_addr, Want::Spectate, invites.spectate).unwrap();
            joining.roster(|_| {}).await.unwrap();
            let watch = joining
                .spectate::<Cubes>(3)
                .map_err(|(_, why)| why)
                .unwrap();
            let (end, _, rt) = play(watch).await;
            (end, rt.endpoint().node().frame())
        };
        let (
            (host_end, host_frames, mut host),
            (seat_end, seat_frames, mut seat),
            (watch_end, watched),
        ) = tokio::join!(play(host), seat, spectator);
        assert_eq!(host_end, Some(MatchEnd::Finished { frames: 180 }));
        assert_eq!(seat_end, Some(MatchEnd::Finished { frames: 180 }));
        assert_eq!(watch_end, Some(MatchEnd::Finished { frames: 180 }));
        assert_eq!((host_frames, seat_frames, watched), (180, 180, 180));
        let a = host.endpoint_mut().take_log().unwrap();
        let b = seat.endpoint_mut().take_log().unwrap();
        assert_eq!(a, b, "both seats logged the same match, byte for byte");
    });
}

#[test]
fn two_seats_polled_from_a_plain_loop_play_to_the_end() {
    let setup = Match {
        seats: 2,
        seed: 4,
        tick_rate: 60,
    };
    let settings = MatchSettings::new(&setup).frames(120);
    let host_socket = socket();
    let host_addr: SocketAddr = host_socket.local_addr().unwrap();
    let invites = lockstep_net::entropy::invites().unwrap();
    let host = lockstep_net::host(host_socket, tiny(), setup, settings, invites, plan(1)).unwrap();
    let joining = lockstep_net::join(socket(), host_addr, Want::Seat, invites.seat).unwrap();
    let mut seats = [
        SeatRuntime::seat(host),
        SeatRuntime::joining(joining, plan(2), SeatTiming::default()),
    ];
    let mut ends = [None, None];
    let mut frames = [0, 0];
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while seats.iter().any(|s| !s.is_finished()) {
        assert!(
            std::time::Instant::now() < deadline,
            "the match did not end"
        );
        for (i, seat) in seats.iter_mut().enumerate() {
            for e in seat.poll() {
                match e {
                    MatchEvent::Peer(PeerEvent::Stepped { frame, .. }) => {
                        frames[i] = frames[i].max(frame + 1)
                    }
                    MatchEvent::Ended(end) => ends[i] = Some(end),
                    _ => {}
                }
            }
        }
        // The loop's own pace, as a game's frame would be: the runtime
        // never waits, so nothing here waits on it.
        std::thread::sleep(Duration::from_millis(2));
    }
    let finished = Some(MatchEnd::Finished { frames: 120 });
    assert_eq!(ends, [finished.clone(), finished]);
    assert_eq!(frames, [120, 120]);
    assert!(seats[1].refusal().is_none());
    let [a, b] = seats.map(|mut s| s.take_log().unwrap());
    assert_eq!(a, b, "both seats logged the same match, byte for byte");
}

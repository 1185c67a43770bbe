//! A match found by its code over loopback, in one process: a rendezvous
//! and a relay ([`Services`]), a host that registers its code and a joiner
//! that finds it, each on its own socket with the reach layer inside,
//! playing a short cubes match — once on the direct path punching opens,
//! once through the relay (punching turned off). Every wait is bounded by
//! the state machines' own timeouts; the ports are the OS's choice.

use std::time::Duration;

use lockstep_games::Demo;
use lockstep_games::cubes::{Cubes, CubesConfig};
use lockstep_net::conditioner::LinkShape;
use lockstep_net::service::Services;
use lockstep_net::{
    Invites, MatchEnd, MatchEvent, MatchSettings, PeerEvent, Runtime, SeatPlan, SeatTiming, Socket,
    Want, reach,
};
use lockstep_rendezvous::{
    MemberId, MemoryStore, Path, ReachTiming, Relay, RelayConfig, Rendezvous, RendezvousConfig,
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

/// Plays a 2-seat match found by its code; gives how each side reached
/// the other at the end.
fn found_by_code(timing: ReachTiming) -> (Path, Path, u64) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let secret = [7; 32];
        let relay_socket = socket();
        let relay_addr = relay_socket.local_addr().unwrap();
        let relay = Relay::new(RelayConfig::new(relay_addr), &secret, [8; 32]);
        let rendezvous_socket = socket();
        let rendezvous_addr = rendezvous_socket.local_addr().unwrap();
        let config = RendezvousConfig {
            relay: Some(relay_addr),
            ..RendezvousConfig::default()
        };
        let rendezvous = Rendezvous::new(config, &secret, [9; 32], MemoryStore::new(16));
        let mut services = Services {
            rendezvous: Some((rendezvous_socket, rendezvous)),
            relay: Some((relay_socket, relay)),
        };
        let invites = Invites::from_random([5; 16]);
        let code = *invites.seat.code().unwrap();
        let setup = Match {
            seats: 2,
            seed: 3,
            tick_rate: 60,
        };
        let settings = MatchSettings::new(&setup).frames(180);
        let host = async {
            let mut s = socket();
            reach::register(&mut s, rendezvous_addr, &[code], timing, |_| {})
                .await
                .unwrap();
            let rt = lockstep_net::host(s, tiny(), setup, settings, invites, plan(1)).unwrap();
            play(rt).await
        };
        let seat = async {
            tokio::time::sleep(Duration::from_millis(50)).await;
            let mut s = socket();
            let met = reach::find(&mut s, rendezvous_addr, &code, timing, |_| {})
                .await
                .unwrap();
            assert_eq!(met.member, MemberId(1));
            let mut joining = lockstep_net::join(s, met.host, Want::Seat, invites.seat).unwrap();
            joining.roster(|_| {}).await.unwrap();
            let seat = joining
                .play::<Cubes, Vec<u8>>(plan(2), SeatTiming::default())
                .map_err(|(_, why)| why)
                .unwrap();
            play(seat).await
        };
        let served = async {
            services.run_for(Duration::from_secs(30)).await;
        };
        let both = async { tokio::join!(host, seat) };
        let ((host_end, host_frames, mut host), (seat_end, seat_frames, mut seat)) = tokio::select! {
            done = both => done,
            () = served => panic!("the match did not end within 30 s"),
        };
        assert_eq!(host_end, Some(MatchEnd::Finished { frames: 180 }));
        assert_eq!(seat_end, Some(MatchEnd::Finished { frames: 180 }));
        assert_eq!((host_frames, seat_frames), (180, 180));
        let a = host.endpoint_mut().take_log().unwrap();
        let b = seat.endpoint_mut().take_log().unwrap();
        assert_eq!(a, b, "both seats logged the same match, byte for byte");
        let host_path = host.socket().reach().unwrap().path(MemberId(1)).unwrap();
        let seat_path = seat.socket().reach().unwrap().path(MemberId::HOST).unwrap();
        let relayed = seat.socket().reach().unwrap().stats().relayed_sent;
        (host_path, seat_path, relayed)
    })
}

#[test]
fn a_match_found_by_its_code_plays_on_the_punched_path() {
    let (host, seat, _) = found_by_code(ReachTiming::default());
    assert!(matches!(host, Path::Direct(_)), "{host:?}");
    assert!(matches!(seat, Path::Direct(_)), "{seat:?}");
}

#[test]
fn a_match_found_by_its_code_plays_through_the_relay() {
    let timing = ReachTiming {
        punch_micros: 0,
        ..ReachTiming::default()
    };
    let (host, seat, relayed) = found_by_code(timing);
    assert_eq!((host, seat), (Path::Relayed, Path::Relayed));
    assert!(relayed > 150, "{relayed} datagrams through the relay");
}

//! Two headless Bevy apps find each other by a match code: a rendezvous
//! and a relay run on a thread of their own (`lockstep_net::service`), the
//! host app registers its code (`LockstepPlugin::register`), the joiner app
//! looks it up (`LockstepPlugin::join_code`), and both play a short match
//! of the cube demo on the path the reach layer finds. Both must finish
//! every frame with no desync; the loop and the services are bounded in
//! time; the ports are the OS's choice.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use bevy_app::App;
use lockstep_bevy::{LockstepPlugin, MatchState, StartError};
use lockstep_games::Demo;
use lockstep_games::cubes::{Cubes, CubesConfig};
use lockstep_lobby::MatchCode;
use lockstep_net::conditioner::LinkShape;
use lockstep_net::service::Services;
use lockstep_net::{Invites, MatchEnd, MatchSettings, SeatPlan, Socket};
use lockstep_rendezvous::{MemoryStore, Relay, RelayConfig, Rendezvous, RendezvousConfig};
use lockstep_sim::Match;

const FRAMES: u32 = 120;

fn small() -> CubesConfig {
    let mut c = Cubes::default_config();
    c.field.grid = 4;
    c
}

fn with_bot(mut plan: SeatPlan<Cubes, Vec<u8>>) -> SeatPlan<Cubes, Vec<u8>> {
    plan.log = Some(Box::new(|| Ok(Vec::new())));
    plan.bot = Some(Box::new(|seat, m: &Match| {
        Box::new(Cubes::bot(seat, m.seed))
    }));
    plan
}

/// A rendezvous and its relay on loopback, on a thread of their own until
/// `stop`; gives the rendezvous's address.
fn services(stop: Arc<AtomicBool>) -> (SocketAddr, std::thread::JoinHandle<()>) {
    let (tx, rx) = std::sync::mpsc::channel();
    let thread = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let any: SocketAddr = "127.0.0.1:0".parse().unwrap();
            let relay_socket = Socket::open(any, LinkShape::PERFECT, 1).unwrap();
            let relay_addr = relay_socket.local_addr().unwrap();
            let socket = Socket::open(any, LinkShape::PERFECT, 1).unwrap();
            tx.send(socket.local_addr().unwrap()).unwrap();
            let config = RendezvousConfig {
                relay: Some(relay_addr),
                ..RendezvousConfig::default()
            };
            let mut services = Services {
                rendezvous: Some((
                    socket,
                    Rendezvous::new(config, &[4; 32], [5; 32], MemoryStore::new(8)),
                )),
                relay: Some((
                    relay_socket,
                    Relay::new(RelayConfig::new(relay_addr), &[4; 32], [6; 32]),
                )),
            };
            let until = Instant::now() + Duration::from_secs(60);
            while !stop.load(Ordering::Relaxed) && Instant::now() < until {
                services.run_for(Duration::from_millis(50)).await;
            }
        });
    });
    (rx.recv().unwrap(), thread)
}

#[test]
fn two_apps_find_each_other_by_a_code_and_play() {
    let stop = Arc::new(AtomicBool::new(false));
    let (rendezvous, thread) = services(Arc::clone(&stop));
    let any: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let setup = Match {
        seats: 2,
        seed: 4,
        tick_rate: 60,
    };
    let settings = MatchSettings::new(&setup).frames(FRAMES);
    // Open seats have no code to file.
    let open = LockstepPlugin::<Cubes>::host(any, small(), setup, settings.clone(), Invites::OPEN)
        .unwrap()
        .register(rendezvous);
    assert!(matches!(open, Err(StartError::NoCode)));
    let invites = Invites::from_random([9; 16]);
    let code: MatchCode = *invites.seat.code().unwrap();
    let host = LockstepPlugin::<Cubes>::host(any, small(), setup, settings, invites)
        .unwrap()
        .register(rendezvous)
        .unwrap()
        .plan(with_bot);
    let joiner = LockstepPlugin::<Cubes>::join_code(any, rendezvous, &code)
        .unwrap()
        .plan(with_bot);
    let mut apps = [App::new(), App::new()];
    apps[0].add_plugins(host);
    apps[1].add_plugins(joiner);
    let deadline = Instant::now() + Duration::from_secs(40);
    let running = |a: &App| a.world().resource::<MatchState<Cubes>>().running;
    while apps.iter().any(running) {
        assert!(Instant::now() < deadline, "the match did not end in 40 s");
        for a in &mut apps {
            a.update();
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    for a in &apps {
        let state = a.world().resource::<MatchState<Cubes>>();
        assert_eq!(state.end, Some(MatchEnd::Finished { frames: FRAMES }));
        assert_eq!((state.frame, state.desyncs), (FRAMES, 0));
    }
    stop.store(true, Ordering::Relaxed);
    thread.join().unwrap();
}

//! Runs a bot match of the RTS demo with the default settings and reports
//! its cost: `cargo run --release -p lockstep-games --example rts_match --
//! [frames] [players]`.

use std::time::Instant;

use lockstep_games::Demo;
use lockstep_games::rts::Rts;
use lockstep_sim::{Bot, Game, Match};

fn main() {
    let mut args = std::env::args().skip(1);
    let frames: u32 = args.next().and_then(|a| a.parse().ok()).unwrap_or(3600);
    let players: u8 = args.next().and_then(|a| a.parse().ok()).unwrap_or(4);
    let setup = Match {
        seats: players,
        seed: 7,
        tick_rate: 60,
    };
    let mut game = Rts::new(&Rts::default_config(), &setup).expect("valid setup");
    let mut bots: Vec<_> = (0..players).map(|s| Rts::bot(s, setup.seed)).collect();
    let start_units = game.units().count();
    let t = Instant::now();
    let mut inputs = Vec::new();
    for frame in 0..frames {
        inputs.clear();
        inputs.extend(bots.iter_mut().map(|b| b.input(&game, frame)));
        game.step(frame, &inputs);
        if frame % 600 == 599 {
            let alive: Vec<u32> = (0..players).map(|s| game.units_alive(s)).collect();
            let awake = game.world().bodies().filter(|(_, b)| b.is_awake()).count();
            eprintln!(
                "frame {:5}: alive {alive:?}, awake {awake}, contacts {}, {:?}/frame so far",
                frame + 1,
                game.world().contact_count(),
                t.elapsed() / (frame + 1)
            );
        }
    }
    let elapsed = t.elapsed();
    println!(
        "{frames} frames, {players} players: {:?}/frame ({elapsed:?}), units {start_units} -> {}, checksum {}",
        elapsed / frames.max(1),
        game.units().count(),
        game.checksum()
    );
}

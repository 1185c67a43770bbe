//! Runs a bot match of the cube demo with the default settings and reports
//! its cost: `cargo run --release -p lockstep-games --example cubes_match --
//! [frames] [players] [seed]`.

use std::time::Instant;

use lockstep_games::Demo;
use lockstep_games::cubes::Cubes;
use lockstep_sim::{Bot, Game, Match};

fn main() {
    let mut args = std::env::args().skip(1);
    let frames: u32 = args.next().and_then(|a| a.parse().ok()).unwrap_or(3600);
    let players: u8 = args.next().and_then(|a| a.parse().ok()).unwrap_or(2);
    let seed: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(1);
    let setup = Match {
        seats: players,
        seed,
        tick_rate: 60,
    };
    let mut game = Cubes::new(&Cubes::default_config(), &setup).expect("valid setup");
    let mut bots: Vec<_> = (0..players).map(|s| Cubes::bot(s, setup.seed)).collect();
    let mut inputs = Vec::new();
    let (mut most_attached, mut most_awake) = (0, 0);
    let t = Instant::now();
    for frame in 0..frames {
        inputs.clear();
        inputs.extend(bots.iter_mut().map(|b| b.input(&game, frame)));
        game.step(frame, &inputs);
        let attached: usize = (0..players).map(|s| game.attached(s).len()).sum();
        most_attached = most_attached.max(attached);
        most_awake = most_awake.max(game.awake_cubes());
        if frame % 600 == 599 {
            let attached: Vec<usize> = (0..players).map(|s| game.attached(s).len()).collect();
            eprintln!(
                "frame {:5}: awake cubes {:3}, attached {attached:?}, contacts {:4}, {:?}/frame so far",
                frame + 1,
                game.awake_cubes(),
                game.world().contact_count(),
                t.elapsed() / (frame + 1)
            );
        }
    }
    let elapsed = t.elapsed();
    let t = Instant::now();
    let mut checksum = game.checksum();
    for _ in 1..100 {
        checksum = std::hint::black_box(game.checksum());
    }
    let per_checksum = t.elapsed() / 100;
    eprintln!(
        "state: {} bytes, checksum {per_checksum:?}",
        game.save().len()
    );
    let attached: Vec<usize> = (0..players).map(|s| game.attached(s).len()).collect();
    println!(
        "{frames} frames, {players} players: {:?}/frame ({elapsed:?}); awake cubes at the end {} (most {most_awake}), attached {attached:?} (most {most_attached}); checksum {}",
        elapsed / frames.max(1),
        game.awake_cubes(),
        checksum
    );
}

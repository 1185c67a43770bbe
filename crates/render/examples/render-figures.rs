//! The figures of the renderer, at 1280 × 720 in a release build:
//!
//! - the time to draw one frame (scene built from the state, drawn, overlay)
//!   and to encode it as a PNG, for the 2-player cubes demo and the
//!   8-player RTS (4 096 units), medians over frames spread through 10 s of
//!   a bot match;
//! - the size of a 10 s GIF (600 frames, every 2nd drawn) of each.
//!
//! Drawing is timed twice: on the wall clock, and in CPU time of the
//! drawing thread (Linux's `/proc/thread-self/schedstat`, the nanoseconds
//! the thread actually ran), which a machine busy with other work inflates
//! far less: on our shared 2-core machine the wall-clock median of the same
//! draw varied 2× between runs, the CPU-time median a few percent.
//!
//! `cargo run --release -p lockstep-render --example render-figures`

// A report: floats only format measured times, nothing flows back.
#![allow(clippy::float_arithmetic)]

use std::time::Instant;

/// Nanoseconds this thread has run on a CPU (Linux; `None` elsewhere).
fn cpu_nanos() -> Option<u64> {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

use lockstep_games::cubes::Cubes;
use lockstep_games::rts::Rts;
use lockstep_games::{Bots, Demo};
use lockstep_render::{Camera, Canvas, Depict, GifWriter, Overlay, draw_scene, encode};
use lockstep_sim::Match;

const WIDTH: u32 = 1280;
const HEIGHT: u32 = 720;
const FRAMES: u32 = 600;
const EVERY: u32 = 2;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

/// Plays 10 s of `G` with its bots, drawing every `EVERY`th frame into a
/// GIF; prints the median draw and PNG-encode times and the GIF's size.
fn figures<G: Demo + Depict>(name: &str, seats: u8) {
    let setup = Match {
        seats,
        ..Match::default()
    };
    let mut game = G::new(&G::default_config(), &setup).expect("the default settings are valid");
    let mut bots = Bots::<G>::new(&setup);
    let mut canvas = Canvas::new(WIDTH, HEIGHT);
    let camera = Camera::overview(&game.scene(), WIDTH, HEIGHT);
    let mut gif = GifWriter::new(Vec::new(), WIDTH, HEIGHT).expect("a GIF of this size");
    let (mut draw, mut png, mut gif_frame) = (Vec::new(), Vec::new(), Vec::new());
    let mut draw_cpu = Vec::new();
    let mut png_bytes = 0;
    for frame in 0..FRAMES {
        if frame % EVERY == 0 {
            let (t, cpu) = (Instant::now(), cpu_nanos());
            draw_scene(&mut canvas, &game.scene(), &camera);
            Overlay::new()
                .line(format!("FRAME {frame}"))
                .draw(&mut canvas);
            draw.push(t.elapsed().as_secs_f64() * 1000.0);
            if let (Some(a), Some(b)) = (cpu, cpu_nanos()) {
                draw_cpu.push(b.saturating_sub(a) as f64 / 1e6);
            }
            let t = Instant::now();
            gif.frame(&canvas, 3).expect("in memory");
            gif_frame.push(t.elapsed().as_secs_f64() * 1000.0);
            if frame % 60 == 0 {
                let t = Instant::now();
                png_bytes = encode::png_bytes(&canvas).expect("in memory").len();
                png.push(t.elapsed().as_secs_f64() * 1000.0);
            }
        }
        let inputs = bots.inputs(&game, frame);
        game.step(frame, &inputs);
    }
    let gif_bytes = gif.finish().expect("in memory").len();
    let cpu = if draw_cpu.is_empty() {
        "-".to_string()
    } else {
        format!("{:.1}", median(draw_cpu))
    };
    println!(
        "| {name} | {:.1} | {cpu} | {:.1} | {:.1} | {:.0} KiB | {:.2} MB |",
        median(draw),
        median(png),
        median(gif_frame),
        png_bytes as f64 / 1024.0,
        gif_bytes as f64 / 1e6,
    );
}

fn main() {
    println!("## Render figures at {WIDTH} × {HEIGHT} (medians)\n");
    println!(
        "| scene | draw ms/frame | draw CPU ms/frame | PNG encode ms | GIF frame ms | PNG size (last) | GIF of 10 s ({} frames, every {EVERY}) |",
        FRAMES / EVERY
    );
    println!("|---|---|---|---|---|---|---|");
    figures::<Cubes>("cubes, 2 seats (900 cubes)", 2);
    figures::<Rts>("rts, 8 seats (4 096 units)", 8);
}

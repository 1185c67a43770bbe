//! State synchronization on the recorded cube match: the authority replays
//! the match, quantizing its own bodies every frame, and sends one packet
//! a frame under a 256 kbit/s budget (the players' inputs for the frame
//! and the 3 before it, then the bodies its priority accumulator picks,
//! each against its acked baseline); the receiver runs its own simulation
//! of the same scene, stepped with the inputs in the packets (repeating
//! the last ones it has when a frame's are lost), takes the packets through
//! a jitter buffer 5 frames deep, writes the received states into its
//! simulation and draws the corrections smoothed. The link: 50 ms of
//! latency, ±2 frames of jitter, and 0%, 5% or 25% loss both ways.
//!
//! The table is the divergence of what the receiver draws from the
//! authority's state of the same frame, over every body and frame, and
//! the bandwidth actually sent. Both simulations are the same
//! deterministic integer physics, so a receiver with every frame's inputs
//! never diverges: the rows with one frame of inputs per packet show what
//! the state repairs when inputs are lost (and the row without state what
//! it would be without it), the rows with four what redundancy adds.
//!
//! `cargo run --release -p lockstep-snapshot --example state_sync [LOG] [FRAMES]`
#![allow(clippy::float_arithmetic)] // the table's statistics

mod fixture;

use fixture::{Fixture, JITTER_FRAMES, LATENCY, TICK, link_delay, millimetres};
use lockstep_codec::input::Input;
use lockstep_fx::Rng;
use lockstep_games::cubes::{Cubes, CubesInput};
use lockstep_sim::{Game, Match};
use lockstep_snapshot::interpolate::Pose;
use lockstep_snapshot::smoothing::{Smoother, Smoothing};
use lockstep_snapshot::sync::{
    JitterBuffer, SyncAck, SyncReceiver, SyncSender, SyncSettings, quantize_awake,
};
use lockstep_snapshot::{Bodies, BodiesMut};

const JITTER_BUFFER_FRAMES: u32 = 5;

fn main() {
    let fixture = Fixture::from_args(1200);
    let (config, setup, inputs) = (&fixture.config, fixture.setup, &fixture.inputs);
    let probe = fixture.game();
    println!(
        "state synchronization over {} frames of {} ({} bodies), 256 kbit/s budget, {} ms latency, ±{JITTER_FRAMES} frames jitter, {JITTER_BUFFER_FRAMES}-frame jitter buffer",
        inputs.len(),
        fixture.name,
        probe.body_slots(),
        LATENCY / 1000
    );
    println!(
        "{:<6} {:>11} {:>6} {:>10} {:>10} {:>8} {:>11} {:>6}",
        "loss", "inputs/pkt", "state", "mean mm", "max mm", "kbit/s", "bodies/pkt", "late"
    );
    for (loss, input_frames, state) in [
        (0u32, 1usize, true),
        (5, 1, true),
        (25, 1, true),
        (25, 1, false),
        (5, 4, true),
        (25, 4, true),
    ] {
        let r = run(config, &setup, inputs, loss, input_frames, state);
        println!(
            "{:<6} {:>11} {:>6} {:>10.2} {:>10.1} {:>8.1} {:>11.1} {:>6}",
            format!("{loss}%"),
            input_frames,
            if state { "yes" } else { "no" },
            r.mean_mm,
            r.max_mm,
            r.kbps,
            r.bodies_per_packet,
            r.late
        );
    }
}

struct Outcome {
    mean_mm: f64,
    max_mm: f64,
    kbps: f64,
    bodies_per_packet: f64,
    late: u64,
}

fn pose_of(game: &Cubes, slot: u32) -> Option<Pose> {
    game.body(slot)
        .map(|(b, _)| Pose::new(b.position, b.orientation))
}

fn run(
    config: &<Cubes as Game>::Config,
    setup: &Match,
    inputs: &[Vec<CubesInput>],
    loss: u32,
    input_frames: usize,
    state: bool,
) -> Outcome {
    let mut rng = Rng::new(u64::from(loss), 12);
    let mut authority = Cubes::new(config, setup).expect("its match");
    let mut receiver = Cubes::new(config, setup).expect("its match");
    let bounds = authority.snapshot_bounds().synced();
    let slots = authority.body_slots();
    let mut settings = SyncSettings::new(bounds, TICK);
    if !state {
        settings.bits_per_second = 0;
    }
    let mut tx = SyncSender::new(slots, settings);
    let mut rx = SyncReceiver::new(slots, bounds);
    let mut jitter: JitterBuffer<Vec<u8>> = JitterBuffer::new(TICK, JITTER_BUFFER_FRAMES);
    let mut known_inputs: std::collections::BTreeMap<u32, Vec<CubesInput>> = Default::default();
    let mut smoother = Smoother::new(Smoothing::default(), slots as usize);
    // The frame number and every seat's inputs ride before the bodies.
    let header_bits =
        16 + input_frames as u64 * u64::from(setup.seats) * u64::from(CubesInput::MAX_BITS);
    let mut truth: Vec<Vec<Option<Pose>>> = Vec::new();
    let mut wire: Vec<(u64, u32, Vec<u8>)> = Vec::new();
    let mut acks: Vec<(u64, SyncAck)> = Vec::new();
    let (mut sum, mut max, mut n) = (0.0f64, 0.0f64, 0u64);
    let (mut sent_bits, mut carried) = (0u64, 0u64);
    let mut next = 0u32; // the receiver's next frame
    let mut held_inputs = vec![CubesInput::default(); usize::from(setup.seats)];
    for (f, frame_inputs) in inputs.iter().enumerate() {
        let f = f as u32;
        let now = u64::from(f) * TICK;
        // The authority steps, quantizes, and sends its packet.
        authority.step(f, frame_inputs);
        let states = quantize_awake(&mut authority, &bounds);
        truth.push((0..slots).map(|s| pose_of(&authority, s)).collect());
        acks.retain(|&(at, ack)| {
            if at <= now {
                tx.on_ack(ack);
            }
            at > now
        });
        let (bytes, bodies) = tx.write(f, &states, header_bits);
        sent_bits += header_bits + bytes.len() as u64 * 8;
        carried += bodies.len() as u64;
        if rng.below(100) >= loss {
            wire.push((now + link_delay(&mut rng), f, bytes));
        }
        // The receiver takes what arrived and plays the frames now due.
        wire.retain(|(at, frame, bytes)| {
            if *at <= now {
                jitter.push(*frame, *at, bytes.clone());
                let first = frame.saturating_sub(input_frames as u32 - 1);
                for g in first..=*frame {
                    known_inputs.insert(g, inputs[g as usize].clone());
                }
            }
            *at > now
        });
        let Some(due) = jitter.due_frame(now) else {
            continue;
        };
        while next <= due.min(f) {
            let packet = jitter.take(next, now);
            if let Some(i) = known_inputs.remove(&next) {
                held_inputs = i;
            }
            known_inputs = known_inputs.split_off(&next);
            receiver.step(next, &held_inputs);
            quantize_awake(&mut receiver, &bounds);
            if let Some(bytes) = packet {
                if let Ok(states) = rx.decode(next, &bytes) {
                    for (slot, q) in states {
                        let before = pose_of(&receiver, slot);
                        receiver.set_body(slot, &q.state(&bounds));
                        let after = pose_of(&receiver, slot);
                        if let (Some(b), Some(a)) = (before, after) {
                            smoother.correct(slot as usize, &b, &a);
                        }
                    }
                    if rng.below(100) >= loss {
                        if let Some(ack) = rx.ack() {
                            acks.push((now + link_delay(&mut rng), ack));
                        }
                    }
                }
            }
            smoother.decay();
            for (slot, exact) in truth[next as usize].iter().enumerate() {
                let (Some(exact), Some(pose)) = (exact, pose_of(&receiver, slot as u32)) else {
                    continue;
                };
                let drawn = smoother.shown(slot, &pose);
                let e = millimetres(drawn.position - exact.position);
                sum += e;
                max = max.max(e);
                n += 1;
            }
            next += 1;
        }
    }
    let seconds = inputs.len() as f64 * TICK as f64 / 1e6;
    Outcome {
        mean_mm: sum / n.max(1) as f64,
        max_mm: max,
        kbps: sent_bits as f64 / seconds / 1000.0,
        bodies_per_packet: carried as f64 / inputs.len().max(1) as f64,
        late: jitter.late(),
    }
}

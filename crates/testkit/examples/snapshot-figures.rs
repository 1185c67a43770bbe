//! The snapshot stream measured end to end on two scenes, at 60 snapshots
//! a second, as a spectator watching by snapshots receives it:
//!
//! - `gaffer-cubes`, the snapshot-compression article's scene (one player
//!   cube rolling through 900 small ones along its scripted route);
//! - `cubes`, the cube demo's recorded match
//!   (`fixtures/replays/cubes-2p.log`: two bots pushing, blowing and
//!   rolling up the field).
//!
//! Each snapshot is coded by the stream's sender against the newest
//! snapshot the viewer acked, cut into the protocol's `SnapshotPart`s,
//! sealed as over UDP and sent over a simulated link (the round trip
//! shown, jitter of a tenth of the one-way latency, the loss shown both
//! ways); the viewer is the spectator's own receiving end
//! (`SnapshotView`: reassembly, decoding, its acks, its clock and
//! interpolation). kbit/s counts every byte of every datagram plus 28
//! bytes of IPv4 and UDP headers; the error is what the viewer draws
//! (linear interpolation, its delay) against the exact simulation of the
//! frame it shows, over every body and frame: the mean, the mean over the
//! bodies in motion, and the worst.
//!
//! `cargo run --release -p lockstep-testkit --features figures --example snapshot-figures [-- --frames N]`
//!
//! The first table is the stream as shipped at 3 round trips and 3
//! losses; the second the same stream without its budget (every snapshot
//! sent, 60 a second); the last its steps, one technique at a time, at
//! 100 ms and 1% loss. Every run is seeded: the figures repeat exactly.

// A report: floats only format measured figures, nothing flows back.
#![allow(clippy::float_arithmetic)]

use std::collections::VecDeque;

use lockstep_fx::{Canonical, Fx, Quat, Vec3};
use lockstep_games::cubes::{Cubes, CubesInput};
use lockstep_games::gaffer_cubes::GafferCubes;
use lockstep_games::{Bots, Demo};
use lockstep_peer::{SnapshotSettings, SnapshotView, ViewMode};
use lockstep_protocol::packet::{
    IPV4_UDP_HEADER_BYTES, MAX_DATAGRAM, Message, Packet, Routed, SnapshotAck, SnapshotPart,
};
use lockstep_protocol::seal::{Identity, Link, PairKeys, TAG_BYTES};
use lockstep_protocol::seq::unwrap_frame;
use lockstep_protocol::snapshot_parts::split;
use lockstep_protocol::{Instant, SeatId};
use lockstep_sim::{Game, Match, replay};
use lockstep_snapshot::stream::{Budget, SnapshotSender};
use lockstep_snapshot::{Bodies, Bounds, Level, QuantBody, bodies};
use lockstep_testkit::netsim::{LinkConfig, Loss, Network, PPM};

const TICK: u64 = 16_667;
const SENDER: SeatId = SeatId(0);
const VIEWER: SeatId = SeatId(1);
/// Frames of exact state kept to compare the view with (4 s).
const HISTORY: usize = 240;

fn frames_arg() -> u32 {
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--frames" {
            if let Some(n) = args.next().and_then(|v| v.parse().ok()) {
                return n;
            }
            eprintln!("snapshot-figures: --frames needs a number");
            std::process::exit(2);
        }
    }
    3600
}

/// A scene played frame by frame.
enum Scene {
    Gaffer(Box<GafferCubes>, Bots<GafferCubes>),
    Demo(Box<Cubes>, Vec<Vec<CubesInput>>),
}

impl Scene {
    fn gaffer() -> Scene {
        let setup = Match {
            seats: 1,
            ..Match::default()
        };
        let game = GafferCubes::new(&GafferCubes::default_config(), &setup).expect("the scene");
        Scene::Gaffer(Box::new(game), Bots::new(&setup))
    }

    fn demo(frames: u32) -> Scene {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../fixtures/replays/cubes-2p.log"
        );
        let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let log = replay::read::<CubesInput>(&bytes).expect("a cubes log");
        let header = log.header();
        let config = <Cubes as Game>::Config::from_canonical(&header.config).expect("settings");
        let inputs = (0..frames.min(log.frames()))
            .map(|f| log.inputs(f).expect("logged inputs").to_vec())
            .collect();
        let game = Cubes::new(&config, &header.setup).expect("its match");
        Scene::Demo(Box::new(game), inputs)
    }

    fn name(&self) -> &'static str {
        match self {
            Scene::Gaffer(..) => "gaffer-cubes",
            Scene::Demo(..) => "cubes",
        }
    }

    fn frames(&self, wanted: u32) -> u32 {
        match self {
            Scene::Gaffer(..) => wanted,
            Scene::Demo(_, inputs) => wanted.min(inputs.len() as u32),
        }
    }

    fn bodies(&self) -> &dyn Bodies {
        match self {
            Scene::Gaffer(g, _) => g.as_ref(),
            Scene::Demo(g, _) => g.as_ref(),
        }
    }

    /// Steps frame `frame` (the state after it is snapshot `frame + 1`).
    fn step(&mut self, frame: u32) {
        match self {
            Scene::Gaffer(g, bots) => {
                let inputs = bots.inputs(g, frame);
                g.step(frame, &inputs);
            }
            Scene::Demo(g, inputs) => g.step(frame, &inputs[frame as usize]),
        }
    }
}

/// One body as simulated: where it is, how it is turned, whether it moves.
#[derive(Clone, Copy)]
struct Exact {
    position: [f64; 3],
    orientation: [f64; 4],
    moving: bool,
}

fn metres(x: Fx) -> f64 {
    x.to_bits() as f64 / 4_294_967_296.0
}

fn exact_of(p: Vec3, q: Quat, moving: bool) -> Exact {
    Exact {
        position: [metres(p.x), metres(p.y), metres(p.z)],
        orientation: [metres(q.w), metres(q.x), metres(q.y), metres(q.z)],
        moving,
    }
}

/// What the sender does beyond the baseline codec.
#[derive(Clone, Copy)]
struct Variant {
    name: &'static str,
    level: Level,
    carry: bool,
    /// kbit/s, headers included.
    budget_kbps: Option<u64>,
}

/// The stream as shipped.
fn shipped() -> Variant {
    let s = SnapshotSettings::default();
    Variant {
        name: "shipped",
        level: s.level,
        carry: true,
        budget_kbps: s.budget_bits_per_second.map(|b| b / 1000),
    }
}

/// The stream as shipped without its budget: every snapshot sent, what 60
/// a second costs.
fn every_snapshot() -> Variant {
    Variant {
        name: "every snapshot",
        budget_kbps: None,
        ..shipped()
    }
}

/// The steps, one technique at a time.
fn steps() -> Vec<Variant> {
    let v = |name, level, carry, budget_kbps| Variant {
        name,
        level,
        carry,
        budget_kbps,
    };
    vec![
        v(
            "range-coded, predicted from the acked motion",
            Level::RangeCoded,
            false,
            None,
        ),
        v(
            "+ models carried over from the baseline",
            Level::RangeCoded,
            true,
            None,
        ),
        v(
            "+ residual steps that follow the speed",
            Level::Scaled,
            true,
            None,
        ),
        v(
            "+ budget 256 kbit/s (snapshots held back)",
            Level::Scaled,
            true,
            Some(256),
        ),
        v("+ budget 192 kbit/s", Level::Scaled, true, Some(192)),
    ]
}

/// The bytes every snapshot datagram carries beyond its part's data: IP
/// and UDP, the routed header, the part's fields, the seal's tag.
fn part_overhead_bytes() -> u64 {
    let part = Packet::<CubesInput>::Routed(Routed {
        sender: SENDER,
        token: 1,
        seq: 0,
        message: Message::SnapshotPart(SnapshotPart {
            stream: 0,
            frame: 0,
            index: 0,
            parts: 1,
            data: vec![0],
        }),
    });
    part.encode().len() as u64 - 1 + TAG_BYTES as u64 + IPV4_UDP_HEADER_BYTES
}

/// One stream over one link.
struct Run {
    rtt_ms: u64,
    loss_pct: u32,
    variant: Variant,
    net: Network,
    sender: SnapshotSender,
    view: SnapshotView,
    /// The sender's seal toward the viewer, and its opener of acks.
    tx: Link,
    /// The viewer's.
    rx: Link,
    seq_down: u64,
    seq_up: u64,
    stats: Stats,
}

#[derive(Default)]
struct Stats {
    down_bytes: u64,
    payload_bytes: u64,
    up_bytes: u64,
    snapshots: u64,
    offered: u64,
    base_age: u64,
    based: u64,
    behind_micros: u64,
    shown: u64,
    pos_sum: f64,
    pos_moving_sum: f64,
    pos_max: f64,
    angle_sum: f64,
    angle_max: f64,
    samples: u64,
    moving_samples: u64,
}

fn keys() -> (Link, Link) {
    let (a, b) = (
        Identity::from_secret([11; 32]),
        Identity::from_secret([22; 32]),
    );
    let ab = PairKeys::agree(&a, &b.public()).expect("keys");
    let ba = PairKeys::agree(&b, &a.public()).expect("keys");
    (Link::new(ab, 0), Link::new(ba, 0))
}

impl Run {
    fn new(
        initial: &[QuantBody],
        bounds: Bounds,
        rtt_ms: u64,
        loss_pct: u32,
        variant: Variant,
    ) -> Run {
        let one_way = rtt_ms * 500;
        let jitter = one_way / 10;
        let link = LinkConfig {
            latency_micros: one_way - jitter / 2,
            jitter_micros: jitter,
            loss: if loss_pct == 0 {
                Loss::None
            } else {
                Loss::Random(loss_pct * PPM / 100)
            },
            ..LinkConfig::ideal(0)
        };
        let budget = variant
            .budget_kbps
            .map(|k| Budget::new(k * 1000, part_overhead_bytes() * 8, TICK));
        let sender = SnapshotSender::new(initial.to_vec(), bounds, variant.level)
            .carry_models(variant.carry)
            .budget(budget);
        let (tx, rx) = keys();
        Run {
            rtt_ms,
            loss_pct,
            variant,
            net: Network::new(rtt_ms * 100 + u64::from(loss_pct), 2, link),
            sender,
            view: SnapshotView::new(0, initial.to_vec(), bounds, TICK, ViewMode::Linear),
            tx,
            rx,
            seq_down: 0,
            seq_up: 0,
            stats: Stats::default(),
        }
    }

    fn seal(link: &Link, seq: &mut u64, from: SeatId, message: Message<CubesInput>) -> Vec<u8> {
        let mut bytes = Packet::Routed(Routed {
            sender: from,
            token: 1,
            seq: *seq as u16,
            message,
        })
        .encode();
        link.seal(*seq, &mut bytes).expect("sealed");
        *seq += 1;
        bytes
    }

    /// Takes what arrived by `now`, at the time each arrived.
    fn deliver(&mut self, now: u64, frame: u32) {
        while let Some(at) = self.net.next_delivery().filter(|t| t.as_micros() <= now) {
            let Some(d) = self.net.pop_due(at) else { break };
            let mut buf = [0u8; MAX_DATAGRAM];
            let link = if d.to == VIEWER {
                &mut self.rx
            } else {
                &mut self.tx
            };
            let Ok(opened) = link.open(&d.bytes, &mut buf) else {
                continue;
            };
            let Ok(Packet::Routed(r)) = Packet::<CubesInput>::decode(opened.packet) else {
                continue;
            };
            match r.message {
                Message::SnapshotPart(part) => {
                    self.view.on_part(at, part, frame);
                    if let Some(ack) = self.view.ack(at) {
                        self.send_ack(at, ack);
                    }
                }
                Message::SnapshotAck(ack) => {
                    if let Some(f) = ack.newest.and_then(|w| unwrap_frame(w, frame)) {
                        self.sender.on_ack(f);
                    }
                }
                _ => {}
            }
        }
    }

    fn send_ack(&mut self, at: Instant, ack: SnapshotAck) {
        let bytes = Run::seal(
            &self.rx,
            &mut self.seq_up,
            VIEWER,
            Message::SnapshotAck(ack),
        );
        self.stats.up_bytes += bytes.len() as u64 + IPV4_UDP_HEADER_BYTES;
        self.net.send(at, VIEWER, SENDER, bytes);
    }

    /// Sends the snapshot of `frame`.
    fn send(&mut self, now: u64, frame: u32, snapshot: &[QuantBody]) {
        self.stats.offered += 1;
        let Some((payload, sent)) = self.sender.offer(frame, snapshot.to_vec()) else {
            return;
        };
        self.stats.snapshots += 1;
        self.stats.payload_bytes += payload.len() as u64;
        if let Some(b) = sent.base {
            self.stats.base_age += u64::from(frame - b);
            self.stats.based += 1;
        }
        for part in split(0, frame, &payload).expect("a payload that fits") {
            let bytes = Run::seal(
                &self.tx,
                &mut self.seq_down,
                SENDER,
                Message::SnapshotPart(part),
            );
            self.stats.down_bytes += bytes.len() as u64 + IPV4_UDP_HEADER_BYTES;
            self.net
                .send(Instant::from_micros(now), SENDER, VIEWER, bytes);
        }
        // A keepalive, if one is due.
        if let Some(ack) = self.view.ack(Instant::from_micros(now)) {
            self.send_ack(Instant::from_micros(now), ack);
        }
    }

    /// Compares what the viewer draws at `now` with the exact state of the
    /// frame it shows.
    fn look(&mut self, now: u64, history: &VecDeque<(u32, Vec<Exact>)>) {
        let Some(t) = self.view.clock().view_time(now, ViewMode::Linear) else {
            return;
        };
        let shown = (t / TICK) as u32;
        let Some((_, exact)) = history.iter().find(|(f, _)| *f == shown) else {
            return;
        };
        let Some(poses) = self.view.poses_at(u64::from(shown) * TICK) else {
            return;
        };
        let s = &mut self.stats;
        s.shown += 1;
        s.behind_micros += now - u64::from(shown) * TICK;
        for (pose, e) in poses.iter().zip(exact) {
            let drawn = exact_of(pose.position, pose.orientation, false);
            let d: f64 = (0..3)
                .map(|k| (drawn.position[k] - e.position[k]).powi(2))
                .sum::<f64>()
                .sqrt()
                * 1000.0;
            let dot: f64 = (0..4)
                .map(|k| drawn.orientation[k] * e.orientation[k])
                .sum::<f64>()
                .abs()
                .min(1.0);
            let angle = 2.0 * dot.acos().to_degrees();
            s.pos_sum += d;
            s.pos_max = s.pos_max.max(d);
            s.angle_sum += angle;
            s.angle_max = s.angle_max.max(angle);
            s.samples += 1;
            if e.moving {
                s.pos_moving_sum += d;
                s.moving_samples += 1;
            }
        }
    }
}

/// What one scene gave every run.
struct SceneReport {
    name: &'static str,
    bodies: u32,
    frames: u32,
    changed: f64,
    runs: Vec<Run>,
}

/// Plays `scene` for `frames` frames through every run of `plan`.
fn play(mut scene: Scene, frames: u32, plan: &[(u64, u32, Variant)]) -> SceneReport {
    let frames = scene.frames(frames);
    let bounds = SnapshotSettings::default().bounds(scene.bodies().snapshot_bounds());
    let initial = bodies::quantize(scene.bodies(), &bounds);
    let mut runs: Vec<Run> = plan
        .iter()
        .map(|&(rtt, loss, v)| Run::new(&initial, bounds, rtt, loss, v))
        .collect();
    let mut history: VecDeque<(u32, Vec<Exact>)> = VecDeque::new();
    let mut quantized: VecDeque<Vec<QuantBody>> = VecDeque::from([initial.clone()]);
    let mut changed = 0u64;
    for frame in 1..=frames {
        scene.step(frame - 1);
        let g = scene.bodies();
        let mut exact = Vec::with_capacity(g.body_slots() as usize);
        for slot in 0..g.body_slots() {
            let (b, _) = g.body(slot).expect("no body is removed");
            exact.push(exact_of(b.position, b.orientation, !b.at_rest));
        }
        history.push_back((frame, exact));
        if history.len() > HISTORY {
            history.pop_front();
        }
        let snapshot = bodies::quantize(g, &bounds);
        // Bodies changed against the snapshot 6 frames back (the article's
        // baseline at 100 ms).
        if let Some(base) = quantized.front().filter(|_| quantized.len() == 6) {
            changed += base.iter().zip(&snapshot).filter(|(a, b)| a != b).count() as u64;
        }
        quantized.push_back(snapshot.clone());
        if quantized.len() > 6 {
            quantized.pop_front();
        }
        let now = u64::from(frame) * TICK;
        for run in &mut runs {
            run.deliver(now, frame);
            run.send(now, frame, &snapshot);
            run.look(now, &history);
        }
    }
    SceneReport {
        name: scene.name(),
        bodies: initial.len() as u32,
        frames,
        changed: changed as f64 / f64::from(frames.saturating_sub(6).max(1)),
        runs,
    }
}

fn kbps(bytes: u64, frames: u32) -> f64 {
    bytes as f64 * 8.0 / (f64::from(frames) * TICK as f64 / 1e6) / 1000.0
}

fn row(label: &str, r: &Run, frames: u32) {
    let s = &r.stats;
    let n = |x: u64| x.max(1) as f64;
    println!(
        "| {label} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.0} | {:.2} | {:.2} | {:.1} | {:.2} | {:.1} |",
        kbps(s.down_bytes, frames),
        s.snapshots as f64 * 60.0 / n(s.offered),
        kbps(s.payload_bytes, frames),
        kbps(s.up_bytes, frames),
        s.base_age as f64 / n(s.based),
        s.behind_micros as f64 / n(s.shown) / 1000.0,
        s.pos_sum / n(s.samples),
        s.pos_moving_sum / n(s.moving_samples),
        s.pos_max,
        s.angle_sum / n(s.samples),
        s.angle_max,
    );
}

const COLUMNS: &str = "kbit/s | snapshots/s | payload kbit/s | acks kbit/s | baseline age (frames) | behind ms | mean mm | mean mm, moving | worst mm | mean ° | worst °";

/// The header rule under [`COLUMNS`].
fn rule() -> String {
    "---|".repeat(COLUMNS.split(" | ").count())
}

fn main() {
    let frames = frames_arg();
    let conditions: Vec<(u64, u32)> = [16u64, 100, 250]
        .iter()
        .flat_map(|&rtt| [0u32, 1, 5].map(|loss| (rtt, loss)))
        .collect();
    let mut plan: Vec<(u64, u32, Variant)> = conditions
        .iter()
        .flat_map(|&(rtt, loss)| [(rtt, loss, shipped()), (rtt, loss, every_snapshot())])
        .collect();
    plan.extend(steps().into_iter().map(|v| (100, 1, v)));
    println!(
        "snapshot figures: 60 snapshots a second, {} bytes of headers a datagram (IPv4 + UDP 28, routed header, part fields, tag 16)",
        part_overhead_bytes()
    );
    let reports = [
        play(Scene::gaffer(), frames, &plan),
        play(Scene::demo(frames), frames, &plan),
    ];
    let shipped = shipped();
    println!();
    println!(
        "## The stream as shipped ({:?}, models carried over, budget {})",
        shipped.level,
        shipped
            .budget_kbps
            .map_or("none".to_string(), |k| format!("{k} kbit/s"))
    );
    println!();
    println!("| scene | round trip | loss | {COLUMNS} |");
    println!("|---|---|---|{}", rule());
    for rep in &reports {
        for r in rep.runs.iter().filter(|r| r.variant.name == "shipped") {
            row(
                &format!("{} | {} ms | {}%", rep.name, r.rtt_ms, r.loss_pct),
                r,
                rep.frames,
            );
        }
    }
    println!();
    println!("## Every snapshot sent (the same stream without its budget): what 60 a second costs");
    println!();
    println!("| scene | round trip | loss | {COLUMNS} |");
    println!("|---|---|---|{}", rule());
    for rep in &reports {
        for r in rep
            .runs
            .iter()
            .filter(|r| r.variant.name == "every snapshot")
        {
            row(
                &format!("{} | {} ms | {}%", rep.name, r.rtt_ms, r.loss_pct),
                r,
                rep.frames,
            );
        }
    }
    for rep in &reports {
        println!();
        println!(
            "## The steps on {} ({} bodies, {} frames, {:.1} bodies changed a snapshot against the one 6 frames back), 100 ms, 1% loss",
            rep.name, rep.bodies, rep.frames, rep.changed
        );
        println!();
        println!("| step | {COLUMNS} |");
        println!("|---|{}", rule());
        for r in rep
            .runs
            .iter()
            .filter(|r| !matches!(r.variant.name, "shipped" | "every snapshot"))
        {
            row(r.variant.name, r, rep.frames);
        }
    }
}

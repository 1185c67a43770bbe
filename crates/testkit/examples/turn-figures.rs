//! The modem budget of an RTS match: upload per peer, including IP and UDP
//! headers, and command latency, for communication turns of several
//! lengths, on the simulated network, in the shape of Age of Empires' "1500
//! archers on a 28.8 modem" (Bettner & Terrano, GDC 2001): up to 8 seats,
//! 200 units a player, a 20 Hz tick, sealed packets.
//!
//! `cargo run --release -p lockstep-testkit --features figures --example turn-figures`
//!
//! `-- --seats 2,4,8 --frames 1200 --rtt 100,250 --rows 0,1,2,3,4` chooses
//! the rows (`--rows`: which ways of sending, numbered from 0 as listed in
//! `SETTINGS`); `--slow 80` makes the last seat take 80 ms to step a frame,
//! reporting it so the pace follows (add `--slow-silent` to hide it). Each
//! row is one match played by the RTS bots through `Peer` on the
//! simulated network (1% loss, 5 ms jitter, 1% duplication and
//! reordering). Columns:
//! - *upload*: the most any peer sent, bytes of every datagram plus 28 bytes
//!   of IPv4 and UDP header each, over the match's virtual time;
//! - *inputs B/pkt by part*: the average Inputs datagram split into the clear
//!   header (7 B), the seal's tag (16 B), the inputs' bits, and the rest
//!   (the ack, the first frame, the short checksums, byte padding);
//! - *latency*: seat 0's commands, one issued every 10 ms after the
//!   warm-up, each from its issue to the step of the frame it goes with
//!   (the first frame sampled after it), median and 95th percentile;
//!
//! The every-tick row uses a one-frame safety margin for the playout delay
//! (the default 3 frames is 50 ms at 60 Hz, 150 ms at 20 Hz; lockstep turns
//! sampled at once use none, see `Config::turn_frames`); rows with turns
//! send the clock-sync ping once a second instead of five times and one
//! short checksum per packet (one per turn) instead of two.
//! - *delay frames*: the playout delay seat 0 held longest after the
//!   warm-up; *tick ms*: the
//!   match's pace at the end (50 ms unless a slow seat slowed it);
//! - *desyncs*, *stalls* (ticks after the warm-up without a frame), and
//!   whether every log verifies.

use lockstep_games::Demo;
use lockstep_games::rts::{Rts, RtsConfig};
use lockstep_peer::PeerEvent;
use lockstep_protocol::packet::{IPV4_UDP_HEADER_BYTES, Kind};
use lockstep_protocol::seal::TAG_BYTES;
use lockstep_testkit::mesh::{self, Condition, Run, Scenario};
use lockstep_testkit::verdict;

/// A turn configuration to compare.
struct Setting {
    name: &'static str,
    turn: u32,
    timing_ms: u64,
    /// The playout delay's quantile of lateness, per mille.
    quantile: u32,
}

const SETTINGS: [Setting; 5] = [
    Setting {
        name: "every tick (before)",
        turn: 1,
        timing_ms: 200,
        quantile: 980,
    },
    Setting {
        name: "turn 2 (100 ms)",
        turn: 2,
        timing_ms: 1000,
        quantile: 980,
    },
    Setting {
        name: "turn 3 (150 ms)",
        turn: 3,
        timing_ms: 1000,
        quantile: 980,
    },
    Setting {
        name: "turn 4 (200 ms)",
        turn: 4,
        timing_ms: 1000,
        quantile: 980,
    },
    Setting {
        name: "turn 4, delay at the 90th percentile",
        turn: 4,
        timing_ms: 1000,
        quantile: 900,
    },
];

fn config() -> RtsConfig {
    let mut c = Rts::default_config();
    c.units_per_player = 200;
    c
}

fn list(args: &[String], flag: &str, default: &[u64]) -> Vec<u64> {
    args.iter()
        .position(|a| a == flag)
        .and_then(|i| args.get(i + 1))
        .map(|v| v.split(',').filter_map(|x| x.parse().ok()).collect())
        .unwrap_or_else(|| default.to_vec())
}

#[allow(clippy::float_arithmetic)]
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let seats = list(&args, "--seats", &[2, 4, 8]);
    let frames = list(&args, "--frames", &[1200])[0] as u32;
    let rtts = list(&args, "--rtt", &[100, 250]);
    let rows = list(&args, "--rows", &[0, 1, 2, 3, 4]);
    let slow = list(&args, "--slow", &[0])[0];
    let silent = args.iter().any(|a| a == "--slow-silent");
    let slow = (slow > 0).then_some((slow * 1000, !silent));
    println!(
        "RTS, 200 units a player, 20 Hz, sealed, 1% loss, {frames} frames ({} s) a match.",
        frames / 20
    );
    if let Some((cost, reports)) = slow {
        println!(
            "The last seat steps a frame in {} ms, {}.",
            cost / 1000,
            if reports {
                "and reports it (the pace follows)"
            } else {
                "without reporting it (no pace)"
            }
        );
    }
    println!();
    println!(
        "| seats | RTT ms | sending | upload kbit/s (with IP/UDP) | packets/s | inputs B/pkt: header + tag + inputs + rest | latency ms median / p95 | delay frames | tick ms | desyncs | stalls | logs verify |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    for &rtt in &rtts {
        for &n in &seats {
            for s in rows.iter().filter_map(|&i| SETTINGS.get(i as usize)) {
                let run = play(n as u8, rtt, s, frames, slow);
                row(n, rtt, s, &run, frames);
            }
        }
    }
}

fn play(seats: u8, rtt_ms: u64, s: &Setting, frames: u32, slow: Option<(u64, bool)>) -> Run {
    let cond = Condition {
        name: "modem",
        rtt_ms,
        ..Condition::GOOD
    };
    let mut scenario = Scenario::new(seats, 28_800 + u64::from(seats), cond.link(), frames);
    scenario.setup.tick_rate = 20;
    scenario.warmup_frames = 40;
    scenario.session.tick_micros = 50_000;
    scenario.session.turn_frames = s.turn;
    scenario.session.timing_interval_micros = s.timing_ms * 1000;
    // The playout delay's safety margin is counted in frames (3 by
    // default, 50 ms at 60 Hz): one frame is 50 ms at 20 Hz.
    scenario.session.delay_margin_frames = 1;
    scenario.session.delay_quantile_permille = s.quantile;
    // One short checksum per packet: with turns, one per turn.
    scenario.session.checksum_redundancy = if s.turn > 1 { 1 } else { 2 };
    scenario.slow = slow.map(|(step_micros, reports)| mesh::Slow {
        seat: lockstep_protocol::SeatId(seats - 1),
        step_micros,
        reports,
    });
    mesh::run::<Rts>(&scenario, &config())
}

#[allow(clippy::float_arithmetic)]
fn row(seats: u64, rtt: u64, s: &Setting, run: &Run, frames: u32) {
    let secs = run.end.as_micros() as f64 / 1e6;
    let upload = run
        .peers
        .iter()
        .map(|p| {
            let all = p.session.sent_total();
            (all.bytes + IPV4_UDP_HEADER_BYTES * all.packets) as f64 * 8.0 / 1000.0 / secs
        })
        .fold(0.0, f64::max);
    let p0 = &run.peers[0];
    let packets = p0.session.sent_total().packets as f64 / secs;
    let inputs = p0.session.sent[Kind::Inputs as usize];
    let per = |v: f64| v / inputs.packets.max(1) as f64;
    let bytes = per(inputs.bytes as f64);
    let input_bytes = per(p0.session.input_bits as f64 / 8.0);
    let header = Kind::Inputs.header_bytes() as f64;
    let tag = TAG_BYTES as f64;
    let rest = bytes - header - tag - input_bytes;
    let mut latency: Vec<u64> = p0
        .command_latency_micros(40, 10_000)
        .into_iter()
        .map(|l| l / 1000)
        .collect();
    latency.sort_unstable();
    let q = |k: usize| latency.get(latency.len() * k / 100).copied().unwrap_or(0);
    // The playout delay seat 0 held longest after the warm-up.
    let mut held = std::collections::BTreeMap::<u32, u64>::new();
    let warm = p0.sampled_at.get(&40).copied().unwrap_or_default();
    let ends = p0.delay_frames.iter().skip(1).map(|c| c.0).chain([run.end]);
    for (&(from, d), to) in p0.delay_frames.iter().zip(ends) {
        if to > warm {
            *held.entry(d).or_default() += to.since(from.max(warm));
        }
    }
    let delay = held.iter().max_by_key(|(_, t)| **t).map_or(0, |(d, _)| *d);
    let tick = lockstep_protocol::pace::tick_micros(50_000, p0.session.pace_steps) / 1000;
    let desyncs = run
        .events(|e| matches!(e, PeerEvent::Desync { .. }).then_some(()))
        .len();
    let verified = match verdict::check::<Rts>(run, frames) {
        Ok(()) => "yes".to_string(),
        Err(e) => format!("no: {e}"),
    };
    println!(
        "| {seats} | {rtt} | {} | {upload:.1} | {packets:.1} | {bytes:.1}: {header} + {tag} + {input_bytes:.1} + {rest:.1} | {} / {} | {delay} | {tick} | {desyncs} | {} | {verified} |",
        s.name,
        q(50),
        q(95),
        run.stalls_after_warmup(),
    );
}

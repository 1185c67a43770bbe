//! Prints the figures of the protocol's closing note: stalls, desyncs and
//! bytes per packet on the three network conditions, redundant UDP against a
//! TCP-like transport, resync cost, steady-state input bandwidth at 60 Hz and
//! 100 ms RTT, and the flag overhead of 120 unacked inputs.
//!
//! `cargo run -p lockstep-protocol --release --example netsim-report`

use lockstep_protocol::harness::{Condition, Note, Report, Scenario, run_particles};
use lockstep_protocol::netsim::LinkConfig;
use lockstep_protocol::packet::{InputsMsg, Message, Packet, Routed};
use lockstep_protocol::testgame::{Buttons, scripted};
use lockstep_protocol::{Instant, PlayerId};

const TICK_MICROS: u64 = 16_667;

/// The longest wait between two consecutive first releases of frames after
/// the warm-up, over every peer, in milliseconds: a hitch the player sees.
fn worst_hitch_ms(r: &Report, warmup: u32) -> u64 {
    let mut worst = 0;
    for p in &r.peers {
        let mut prev: Option<Instant> = None;
        for (f, t) in &p.released_at {
            if *f >= warmup {
                if let Some(q) = prev {
                    worst = worst.max(t.since(q));
                }
            }
            prev = Some(*t);
        }
    }
    worst / 1000
}

#[allow(clippy::float_arithmetic)]
fn per(a: u64, b: u64) -> f64 {
    if b == 0 { 0.0 } else { a as f64 / b as f64 }
}

struct Row {
    players: u8,
    cond: Condition,
    tcp: bool,
    r: Report,
    wall_ms: u128,
}

fn run_row(players: u8, cond: Condition, tcp: bool, seed: u64) -> Row {
    let link = if tcp { cond.tcp_link() } else { cond.link() };
    let mut s = Scenario::new(players, seed, link);
    if tcp {
        // A reliable stream needs no redundancy: each input is sent once,
        // and only a long silence ends the match. Bound the run in time.
        s.config.redundant_inputs = false;
        s.config.peer_timeout_micros = 60_000_000;
        s.max_micros = 240_000_000;
    }
    let t = std::time::Instant::now();
    let r = run_particles(&s);
    Row {
        players,
        cond,
        tcp,
        r,
        wall_ms: t.elapsed().as_millis(),
    }
}

#[allow(clippy::float_arithmetic)]
fn print_conditions() {
    println!(
        "## Stalls, desyncs and bytes per packet: 60 s of game time at 60 Hz (3 600 frames)\n"
    );
    println!(
        "Latencies are round trips (one way = half); UDP = redundant inputs, TCP = in-order stream,"
    );
    println!(
        "resend after RTO = 2×RTT, each input sent once. Stalls are ticks at which a due frame waited for a missing input,"
    );
    println!(
        "summed over peers (warm-up = before every peer released frame 120). Hitch = longest gap"
    );
    println!("between two frames after warm-up. Game s = virtual time to play the 3 600 frames");
    println!("(60 s plus the initial delay and every stall).\n");
    println!(
        "| players | condition | transport | frames | game s | desyncs | stalls after warm-up | stalls total | worst hitch ms | max delay frames | bytes/packet | input bytes/packet | inputs/packet | kbit/s per peer | sim wall ms |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let mut seed = 100;
    for players in [2u8, 4] {
        for cond in [Condition::A, Condition::B, Condition::C] {
            for tcp in [false, true] {
                seed += 1;
                let row = run_row(players, cond, tcp, seed);
                let r = &row.r;
                let sent: (u64, u64) = r.peers.iter().fold((0, 0), |a, p| {
                    let t = p.stats.sent_total();
                    (a.0 + t.packets, a.1 + t.bytes)
                });
                let inputs_packets: u64 = r.peers.iter().map(|p| p.stats.sent[1].packets).sum();
                let input_bits: u64 = r.peers.iter().map(|p| p.stats.input_bits).sum();
                let inputs_carried: u64 = r.peers.iter().map(|p| p.stats.inputs_carried).sum();
                let max_delay = r
                    .peers
                    .iter()
                    .map(|p| p.stats.max_delay_frames)
                    .max()
                    .unwrap_or(0);
                let secs = r.end.as_micros() as f64 / 1e6;
                let kbps = sent.1 as f64 * 8.0 / 1000.0 / secs / f64::from(row.players);
                println!(
                    "| {} | {} | {} | {} | {:.1} | {} | {} | {} | {} | {} | {:.1} | {:.1} | {:.1} | {:.1} | {} |",
                    row.players,
                    row.cond.name,
                    if row.tcp { "TCP-like" } else { "UDP redundant" },
                    r.common_frames(),
                    secs,
                    r.desyncs(),
                    r.stalls_after_warmup(),
                    r.stalls(),
                    worst_hitch_ms(r, 120),
                    max_delay,
                    per(sent.1, sent.0),
                    per(input_bits, inputs_packets) / 8.0,
                    per(inputs_carried, inputs_packets),
                    kbps,
                    row.wall_ms,
                );
            }
        }
    }
    println!();
}

fn print_resync() {
    println!("## Resync after one flipped bit\n");
    println!(
        "| players | link | flipped seat @ frame | desync named frame | detected after (frames) | loaded frame | load after detection (frames) | state bytes | resync bytes on the wire | checksums agree after |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let cases: [(u8, &str, LinkConfig, u8); 4] = [
        (2, "LAN 2 ms RTT", LinkConfig::ideal(1_000), 1),
        (4, "LAN 2 ms RTT", LinkConfig::ideal(1_000), 2),
        (2, Condition::A.name, Condition::A.link(), 1),
        (4, Condition::A.name, Condition::A.link(), 3),
    ];
    for (players, name, link, seat) in cases {
        let k = 300;
        let mut s = Scenario::new(players, 7, link);
        s.frames = 900;
        s.corrupt_once = Some((PlayerId(seat), k));
        let r = run_particles(&s);
        let flipped_at = r.peers[usize::from(seat)].released_at[&k];
        let first = r.log.iter().find(|l| matches!(l.what, Note::Desync { .. }));
        let load = r.log.iter().find(|l| matches!(l.what, Note::Loaded { .. }));
        let (Some(first), Some(load)) = (first, load) else {
            println!(
                "| {players} | {name} | {seat} @ {k} | — | not detected or not loaded | | | | | |"
            );
            continue;
        };
        let Note::Desync { frame: named, .. } = first.what else {
            continue;
        };
        let Note::Loaded {
            frame: loaded,
            bytes,
        } = load.what
        else {
            continue;
        };
        let wire: u64 = r.peers.iter().map(|p| p.stats.resync_bytes_sent()).sum();
        println!(
            "| {players} | {name} | {seat} @ {k} | {named} | {} | {loaded} | {} | {bytes} | {wire} | {} |",
            first.at.since(flipped_at).div_ceil(TICK_MICROS),
            load.at.since(first.at).div_ceil(TICK_MICROS),
            r.checksums_agree_outside(k..loaded),
        );
    }
    println!();
}

#[allow(clippy::float_arithmetic)]
fn print_steady_state() {
    println!("## Steady state at 60 Hz and 100 ms RTT (2 peers, no loss)\n");
    let mut s = Scenario::new(2, 3, LinkConfig::ideal(50_000));
    s.frames = 3600;
    let r = run_particles(&s);
    let st = &r.peers[0].stats;
    let inputs = st.sent[1];
    let secs = r.end.as_micros() as f64 / 1e6;
    println!("| figure | value |");
    println!("|---|---|");
    println!(
        "| inputs carried per packet (mean) | {:.1} |",
        per(st.inputs_carried, inputs.packets)
    );
    println!(
        "| input part of a packet (ack, count, frame, inputs, flags) | {:.2} bytes |",
        per(st.input_bits, inputs.packets) / 8.0
    );
    println!(
        "| whole inputs packet (header, inputs, 2 short checksums) | {:.1} bytes |",
        per(inputs.bytes, inputs.packets)
    );
    println!(
        "| all packets sent by one peer | {:.2} kbit/s |",
        st.sent_total().bytes as f64 * 8.0 / 1000.0 / secs
    );
    println!(
        "| of which input parts | {:.2} kbit/s |",
        st.input_bits as f64 / 1000.0 / secs
    );
    println!(
        "| playout delay | {} frames ({} ms) |",
        st.delay_frames,
        u64::from(st.delay_frames) * TICK_MICROS / 1000
    );
    println!();

    println!("## 120 unacked inputs (2 s at 60 Hz), 6-bit buttons\n");
    let raw_bits = 120 * 6;
    let measure = |inputs: Vec<Buttons>| {
        let m = InputsMsg {
            ack: None,
            first_frame: 0,
            inputs,
            checksums: None,
        };
        let header = Packet::<Buttons>::Routed(Routed {
            sender: PlayerId(0),
            token: 1,
            seq: 0,
            message: Message::Inputs(InputsMsg {
                ack: None,
                first_frame: 0,
                inputs: vec![],
                checksums: None,
            }),
        })
        .measure_bits();
        Packet::Routed(Routed {
            sender: PlayerId(0),
            token: 1,
            seq: 0,
            message: Message::Inputs(m),
        })
        .measure_bits()
            - header
            + 8
    };
    let constant = measure(vec![Buttons(7); 120]);
    let scripted_bits = measure((0..120).map(|f| scripted(0, f)).collect());
    let changing = measure((0..120u8).map(|f| Buttons(f % 64)).collect());
    println!("| inputs | encoded bits (count, frame, inputs, flags) | flag bits | bytes |");
    println!("|---|---|---|---|");
    println!("| raw, 120 × 6 bits | {raw_bits} | — | {} |", raw_bits / 8);
    println!(
        "| all equal | {constant} | 119 | {} |",
        constant.div_ceil(8)
    );
    println!(
        "| scripted (a change every 20 frames) | {scripted_bits} | 119 | {} |",
        scripted_bits.div_ceil(8)
    );
    println!(
        "| every input different | {changing} | 119 | {} |",
        changing.div_ceil(8)
    );
    println!(
        "\nFlag overhead: 119 bits = 15 bytes for 120 inputs (the literature's bound: <= 15 bytes).\n"
    );
}

fn main() {
    print_conditions();
    print_resync();
    print_steady_state();
}

//! The network figures of the lockstep protocol, from real matches of the
//! RTS (24 units a player) played through `Peer` on the simulated network:
//! stalls, desyncs and bytes per packet on three conditions, redundant UDP
//! against a TCP-like stream; the cost of a resync after a flipped bit;
//! steady-state bandwidth at 60 Hz; the flag overhead of 120 unacked inputs.
//!
//! `cargo run --release -p lockstep-testkit --features figures --example netsim-report`
//!
//! `-- --steady-state` prints only the steady-state bandwidth, plain and
//! sealed. With `-- --plots DIR` it also writes the charts of these numbers, PNG
//! and SVG: `stalls-vs-loss` (redundant UDP against the TCP-like stream,
//! from the conditions table) and `delay-under-jitter` (the adaptive
//! playout delay over a match, one line per jitter).

use lockstep_games::Demo;
use lockstep_games::rts::{Rts, RtsConfig};
use lockstep_peer::PeerEvent;
use lockstep_protocol::input::Buttons;
use lockstep_protocol::packet::{InputsMsg, Message, Packet, Routed};
use lockstep_protocol::{Instant, SeatId};
use lockstep_render::{Canvas, LineChart, Series, encode, player_colour};
use lockstep_testkit::mesh::{self, Condition, Flip, Run, Scenario};
use lockstep_testkit::netsim::LinkConfig;

const TICK_MICROS: u64 = 16_667;
const FRAMES: u32 = 3600;

fn config() -> RtsConfig {
    let mut c = Rts::default_config();
    c.units_per_player = 24;
    c
}

/// The longest wait between two consecutive first steps of frames after the
/// warm-up, over every peer, in milliseconds: a hitch the player sees.
fn worst_hitch_ms(r: &Run, warmup: u32) -> u64 {
    let mut worst = 0;
    for p in &r.peers {
        let mut prev: Option<Instant> = None;
        for (f, t) in &p.stepped_at {
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

fn desyncs(r: &Run) -> usize {
    r.events(|e| matches!(e, PeerEvent::Desync { .. }).then_some(()))
        .len()
}

/// One row of the conditions table, as the stalls chart needs it.
struct StallPoint {
    seats: u8,
    loss_percent: f64,
    tcp: bool,
    stalls: u64,
}

#[allow(clippy::float_arithmetic)]
fn print_conditions() -> Vec<StallPoint> {
    let mut points = Vec::new();
    println!(
        "## Stalls, desyncs and bytes per packet: 60 s of game time at 60 Hz (3 600 frames)\n"
    );
    println!(
        "Latencies are round trips (one way = half). UDP = redundant inputs; TCP = in-order stream,"
    );
    println!(
        "resend after 2×RTT, each input sent once. Stalls are ticks at which a due frame waited for a"
    );
    println!(
        "missing input, summed over peers (warm-up = before every peer stepped frame 120). Hitch = the"
    );
    println!(
        "longest gap between two frames after warm-up. Game s = virtual time to play the 3 600 frames.\n"
    );
    println!(
        "| seats | condition | transport | frames | game s | desyncs | stalls after warm-up | worst hitch ms | max delay frames | bytes/packet | inputs/packet | kbit/s per peer | wall ms |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let mut seed = 100;
    for seats in [2u8, 4] {
        for cond in [Condition::GOOD, Condition::POOR, Condition::AWFUL] {
            for tcp in [false, true] {
                seed += 1;
                let link = if tcp { cond.tcp_link() } else { cond.link() };
                let mut s = Scenario::new(seats, seed, link, FRAMES);
                if tcp {
                    // A reliable stream needs no redundancy: each input is
                    // sent once, and only a long silence ends the match.
                    s.session.redundant_inputs = false;
                    s.session.peer_timeout_micros = 60_000_000;
                    s.max_micros = 240_000_000;
                }
                let t = std::time::Instant::now();
                let r = mesh::run::<Rts>(&s, &config());
                let wall = t.elapsed().as_millis();
                let (packets, bytes) = r.peers.iter().fold((0, 0), |a, p| {
                    let t = p.session.sent_total();
                    (a.0 + t.packets, a.1 + t.bytes)
                });
                let inputs_packets: u64 = r.peers.iter().map(|p| p.session.sent[1].packets).sum();
                let carried: u64 = r.peers.iter().map(|p| p.session.inputs_carried).sum();
                let max_delay = r
                    .peers
                    .iter()
                    .map(|p| p.session.max_delay_frames)
                    .max()
                    .unwrap_or(0);
                let secs = r.end.as_micros() as f64 / 1e6;
                points.push(StallPoint {
                    seats,
                    loss_percent: f64::from(cond.loss_ppm) / 10_000.0,
                    tcp,
                    stalls: r.stalls_after_warmup(),
                });
                println!(
                    "| {seats} | {} | {} | {} | {secs:.1} | {} | {} | {} | {max_delay} | {:.1} | {:.1} | {:.1} | {wall} |",
                    cond.name,
                    if tcp { "TCP-like" } else { "UDP redundant" },
                    r.common_frames(),
                    desyncs(&r),
                    r.stalls_after_warmup(),
                    worst_hitch_ms(&r, 120),
                    per(bytes, packets),
                    per(carried, inputs_packets),
                    bytes as f64 * 8.0 / 1000.0 / secs / f64::from(seats),
                );
            }
        }
    }
    println!();
    points
}

/// The playout delay of seat 0 over a 2-seat match at 100 ms RTT and no
/// loss, for each one-way jitter: `(jitter ms, [(seconds, frames)])`.
#[allow(clippy::float_arithmetic)]
fn print_delay_under_jitter() -> Vec<(u64, Vec<(f64, f64)>)> {
    println!("## Adaptive playout delay under jitter (2 peers, 100 ms RTT, no loss, 60 s)\n");
    println!(
        "| jitter (one way, uniform) | first delay frames | max delay frames | final delay frames | stalls after warm-up |"
    );
    println!("|---|---|---|---|---|");
    let mut lines = Vec::new();
    for jitter_ms in [0u64, 20, 60, 120] {
        let link = LinkConfig {
            jitter_micros: jitter_ms * 1000,
            ..LinkConfig::ideal(50_000)
        };
        let s = Scenario::new(2, 11, link, FRAMES);
        let r = mesh::run::<Rts>(&s, &config());
        let series: Vec<(f64, f64)> = r.peers[0]
            .delay_frames
            .iter()
            .map(|&(t, d)| (t.as_micros() as f64 / 1e6, f64::from(d)))
            .chain(std::iter::once((
                r.end.as_micros() as f64 / 1e6,
                f64::from(r.peers[0].session.delay_frames),
            )))
            .collect();
        let first = series.first().map_or(0.0, |p| p.1);
        let max = series.iter().map(|p| p.1).fold(0.0, f64::max);
        let last = series.last().map_or(0.0, |p| p.1);
        println!(
            "| {jitter_ms} ms | {first} | {max} | {last} | {} |",
            r.stalls_after_warmup()
        );
        lines.push((jitter_ms, series));
    }
    println!();
    lines
}

/// Writes `chart` as `DIR/NAME.png` and `DIR/NAME.svg`.
fn write_chart(dir: &std::path::Path, name: &str, chart: &LineChart) {
    let (w, h) = (900, 500);
    let mut canvas = Canvas::new(w, h);
    chart.draw(&mut canvas);
    let png = dir.join(format!("{name}.png"));
    let svg = dir.join(format!("{name}.svg"));
    encode::write_png(&canvas, &png).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(&svg, chart.to_svg(w, h)).unwrap_or_else(|e| panic!("{}: {e}", svg.display()));
    println!("wrote {} and {}", png.display(), svg.display());
}

#[allow(clippy::float_arithmetic)]
fn write_plots(dir: &std::path::Path, stalls: &[StallPoint], delays: &[(u64, Vec<(f64, f64)>)]) {
    std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut series = Vec::new();
    for (i, (seats, tcp)) in [(2u8, false), (2, true), (4, false), (4, true)]
        .into_iter()
        .enumerate()
    {
        let points: Vec<(f64, f64)> = stalls
            .iter()
            .filter(|p| p.seats == seats && p.tcp == tcp)
            .map(|p| (p.loss_percent, p.stalls as f64))
            .collect();
        // The redundant-UDP lines lie on top of each other near 0: the
        // legend gives their worst figure, which the plot cannot show.
        let most = points.iter().map(|p| p.1).fold(0.0, f64::max);
        series.push(Series {
            name: format!(
                "{seats} seats, {} (at most {most})",
                if tcp { "TCP-like" } else { "UDP redundant" }
            ),
            colour: player_colour(i as u8),
            points,
            steps: false,
        });
    }
    write_chart(
        dir,
        "stalls-vs-loss",
        &LineChart {
            title: "Stall ticks in 60 s: redundant UDP vs a TCP-like stream".into(),
            x_label: "loss % (round trip 100 ms at 1%, 250 ms at 5%, 2 s at 25%)".into(),
            y_label: "stall ticks".into(),
            series,
        },
    );
    write_chart(
        dir,
        "delay-under-jitter",
        &LineChart {
            title: "Playout delay under jitter (100 ms RTT)".into(),
            x_label: "time s".into(),
            y_label: "delay frames".into(),
            series: delays
                .iter()
                .enumerate()
                .map(|(i, (jitter, points))| Series {
                    name: format!("jitter {jitter} ms"),
                    colour: player_colour(i as u8),
                    points: points.clone(),
                    steps: true,
                })
                .collect(),
        },
    );
}

fn print_resync() {
    println!("## Resync after one flipped bit (body 5's position, bit 20)\n");
    println!(
        "| seats | link | flipped seat @ frame | detected after (frames) | healed after (frames) | state bytes | resync bytes on the wire | report names | peers agree |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    let cases: [(u8, &str, LinkConfig, u8); 4] = [
        (2, "LAN 2 ms RTT", LinkConfig::ideal(1_000), 1),
        (4, "LAN 2 ms RTT", LinkConfig::ideal(1_000), 2),
        (2, Condition::GOOD.name, Condition::GOOD.link(), 1),
        (4, Condition::GOOD.name, Condition::GOOD.link(), 3),
    ];
    for (seats, name, link, seat) in cases {
        let k = 300;
        let mut s = Scenario::new(seats, 7, link, 900);
        s.flip = Some(Flip {
            seat: SeatId(seat),
            frame: k,
            entity: "body 5".into(),
            field: "position".into(),
            bit: 20,
            repeat: false,
        });
        let r = mesh::run::<Rts>(&s, &config());
        let at = r.flipped_at.unwrap_or(Instant::ZERO);
        let frames = |t: Instant| t.since(at).div_ceil(TICK_MICROS);
        let detected = r.events(|e| matches!(e, PeerEvent::Desync { .. }).then_some(()));
        let healed = r.events(|e| match e {
            PeerEvent::Healed {
                state_bytes,
                diagnosis,
                ..
            } => Some((
                *state_bytes,
                diagnosis.as_ref().map(|d| {
                    let f = d.report.before.first().or(d.report.after.first());
                    format!(
                        "frame {}: {}",
                        d.report.frame,
                        f.map(|f| format!("{} · {}", f.entity, f.field))
                            .unwrap_or_default()
                    )
                }),
            )),
            _ => None,
        });
        let wire: u64 = r.peers.iter().map(|p| p.session.resync_bytes_sent()).sum();
        let (Some(d), Some((_, h_at, (bytes, names)))) =
            (detected.iter().map(|d| d.1).min(), healed.first())
        else {
            println!("| {seats} | {name} | {seat} @ {k} | not detected or not healed | | | | | |");
            continue;
        };
        println!(
            "| {seats} | {name} | {seat} @ {k} | {} | {} | {bytes} | {wire} | {} | {} |",
            frames(d),
            frames(*h_at),
            names.clone().unwrap_or_default(),
            r.first_disagreement().is_none(),
        );
    }
    println!();
}

#[allow(clippy::float_arithmetic)]
fn print_steady_state() {
    println!("## Steady state at 60 Hz and 100 ms RTT (2 peers, no loss), plain and sealed\n");
    let run = |sealed: bool| {
        let mut s = Scenario::new(2, 3, LinkConfig::ideal(50_000), FRAMES);
        s.sealed = sealed;
        mesh::run::<Rts>(&s, &config())
    };
    let (plain, sealed) = (run(false), run(true));
    let row = |what: &str, f: &dyn Fn(&mesh::Run) -> String| {
        println!("| {what} | {} | {} |", f(&plain), f(&sealed));
    };
    let secs = |r: &mesh::Run| r.end.as_micros() as f64 / 1e6;
    println!("| figure | plain | sealed |");
    println!("|---|---|---|");
    row("inputs carried per packet (mean)", &|r| {
        let st = &r.peers[0].session;
        format!("{:.1}", per(st.inputs_carried, st.sent[1].packets))
    });
    row(
        "input part of a packet (ack, count, frame, inputs, flags)",
        &|r| {
            let st = &r.peers[0].session;
            format!("{:.2} bytes", per(st.input_bits, st.sent[1].packets) / 8.0)
        },
    );
    row(
        "whole inputs packet (header, inputs, 2 short checksums[, tag])",
        &|r| {
            let st = &r.peers[0].session;
            format!("{:.1} bytes", per(st.sent[1].bytes, st.sent[1].packets))
        },
    );
    row("all packets sent by one peer", &|r| {
        let st = &r.peers[0].session;
        format!(
            "{:.2} kbit/s",
            st.sent_total().bytes as f64 * 8.0 / 1000.0 / secs(r)
        )
    });
    row("of which input parts", &|r| {
        let st = &r.peers[0].session;
        format!("{:.2} kbit/s", st.input_bits as f64 / 1000.0 / secs(r))
    });
    row("handshake: Hellos sent by one peer", &|r| {
        let h = r.peers[0].session.sent[0];
        format!("{} ({} bytes)", h.packets, h.bytes)
    });
    row("playout delay", &|r| {
        let st = &r.peers[0].session;
        format!(
            "{} frames ({} ms)",
            st.delay_frames,
            u64::from(st.delay_frames) * TICK_MICROS / 1000
        )
    });
    row("checksums agree", &|r| {
        (r.first_disagreement().is_none()).to_string()
    });
    println!();

    println!("## 120 unacked inputs (2 s at 60 Hz), 6-bit buttons\n");
    let raw_bits = 120 * 6;
    let measure = |inputs: Vec<Buttons>| {
        let packet = |inputs: Vec<Buttons>| {
            Packet::<Buttons>::Routed(Routed {
                sender: SeatId(0),
                token: 1,
                seq: 0,
                message: Message::Inputs(InputsMsg {
                    ack: None,
                    first_frame: 0,
                    inputs,
                    checksums: None,
                }),
            })
            .measure_bits()
        };
        packet(inputs) - packet(Vec::new()) + 8
    };
    let constant = measure(vec![Buttons(7); 120]);
    let scripted = measure((0..120).map(|f| Buttons::scripted(0, f)).collect());
    let changing = measure((0..120u8).map(|f| Buttons(f % 64)).collect());
    println!("| inputs | encoded bits (count, frame, inputs, flags) | flag bits | bytes |");
    println!("|---|---|---|---|");
    println!("| raw, 120 × 6 bits | {raw_bits} | — | {} |", raw_bits / 8);
    println!(
        "| all equal | {constant} | 119 | {} |",
        constant.div_ceil(8)
    );
    println!(
        "| scripted (a change every 20 frames) | {scripted} | 119 | {} |",
        scripted.div_ceil(8)
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
    let mut args = std::env::args().skip(1);
    let usage = || -> ! {
        eprintln!("usage: netsim-report [--plots DIR | --steady-state]");
        std::process::exit(2)
    };
    let mut plots = None;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--plots" => {
                plots = Some(
                    args.next()
                        .map(std::path::PathBuf::from)
                        .unwrap_or_else(|| usage()),
                )
            }
            "--steady-state" => {
                print_steady_state();
                return;
            }
            _ => usage(),
        }
    }
    let stalls = print_conditions();
    let delays = print_delay_under_jitter();
    print_resync();
    print_steady_state();
    if let Some(dir) = plots {
        write_plots(&dir, &stalls, &delays);
    }
}

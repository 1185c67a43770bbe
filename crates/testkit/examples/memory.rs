//! Peak memory of RTS seats, measured as the process's resident set (Linux
//! `/proc/self/status`) while a match plays on virtual time:
//!
//! - `alone`: two seats of the default RTS (512 units each) at 100 ms round
//!   trips; after 20 s seat 1's process pauses (it sends and hears nothing)
//!   and seat 0 plays on alone for 60 s. Printed: the resident set at the
//!   pause (the steady state of both seats) and its peak after it.
//! - `desync`: eight seats of 1 024 units each (2.3 MB a state) at 2 s
//!   round trips; from 10 s seat 7's game steps one frame in every 30
//!   wrongly ([`faulty`], self-consistent), a desync that resync cannot
//!   heal, for 50 s more, under the `Continue` policy (the worst case for
//!   memory: nothing is compared from the first divergent frame on, so
//!   every seat's unsettled history fills to its bound) and under `Stop`.
//!   Printed: the resident set before the fault and its peak after it.
//!
//! Every seat of a match runs in this one process, so the resident set
//! includes every seat's memory; the difference between the two figures
//! of a scenario is what the faulty or lonely seat added. Each seat's
//! peak live state bytes (the most bytes of game states its history held
//! at once, `PeerStats::peak_state_bytes`) are printed too.
//!
//! `cargo run --release -p lockstep-testkit --features figures --example memory -- [alone|desync|desync-stop]`

use std::collections::VecDeque;

use lockstep_games::Demo;
use lockstep_games::rts::{Rts, RtsConfig};
use lockstep_peer::{DesyncPolicy, Peer, PeerSettings};
use lockstep_protocol::{Instant, SeatId};
use lockstep_sim::Match;
use lockstep_testkit::faulty::{self, Fault, Faulty, Recurring};

type Game = Faulty<Rts>;

/// The process's resident set and its peak so far, in KiB.
fn rss_kib() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn mib(kib: u64) -> u64 {
    kib / 1024
}

struct Mesh {
    peers: Vec<Peer<Game, std::io::Sink>>,
    paused: Vec<bool>,
    wire: VecDeque<(Instant, usize, SeatId, Vec<u8>)>,
    latency: u64,
    now: Instant,
}

impl Mesh {
    fn new(seats: u8, config: &RtsConfig, rtt_micros: u64, policy: DesyncPolicy) -> Mesh {
        let setup = Match {
            seats,
            seed: 11,
            tick_rate: 60,
        };
        let peers = (0..seats)
            .map(|seat| {
                let mut settings = PeerSettings::new(&setup, SeatId(seat), 500 + u32::from(seat));
                settings.desync_policy = policy;
                let mut p = Peer::new(config, setup, settings, std::io::sink()).expect("valid");
                p.set_bot(Box::new(Game::bot(seat, setup.seed)));
                p
            })
            .collect();
        Mesh {
            peers,
            paused: vec![false; usize::from(seats)],
            wire: VecDeque::new(),
            latency: rtt_micros / 2,
            now: Instant::ZERO,
        }
    }

    fn drain(&mut self, i: usize) {
        while self.peers[i].poll_event().is_some() {}
        while let Some(t) = self.peers[i].poll_transmit(self.now) {
            let at = self.now.plus(self.latency);
            self.wire
                .push_back((at, t.to.index(), SeatId(i as u8), t.bytes));
        }
    }

    /// Plays until virtual time `until`, sampling the resident set every
    /// virtual second; returns the largest sample.
    fn play_until(&mut self, until: u64) -> u64 {
        let mut peak = 0;
        let mut next_sample = self.now.as_micros();
        while self.now.as_micros() < until {
            while self.wire.front().is_some_and(|w| w.0 <= self.now) {
                let Some((_, to, from, bytes)) = self.wire.pop_front() else {
                    break;
                };
                if self.paused[to] || self.paused[from.index()] {
                    continue;
                }
                faulty::enter(to as u8);
                self.peers[to].handle_datagram(self.now, from, &bytes);
                faulty::leave();
                self.drain(to);
            }
            for i in 0..self.peers.len() {
                if self.paused[i] {
                    continue;
                }
                if self.peers[i].poll_timeout().is_some_and(|t| t <= self.now) {
                    faulty::enter(i as u8);
                    self.peers[i].handle_timeout(self.now);
                    faulty::leave();
                }
                self.drain(i);
            }
            if self.now.as_micros() >= next_sample {
                peak = peak.max(rss_kib().0);
                next_sample += 1_000_000;
            }
            let next = (0..self.peers.len())
                .filter(|&i| !self.paused[i])
                .filter_map(|i| self.peers[i].poll_timeout())
                .chain(self.wire.front().map(|w| w.0))
                .min()
                .unwrap_or(Instant(until));
            self.now = if next > self.now {
                next
            } else {
                self.now.plus(1)
            };
        }
        peak.max(rss_kib().0)
    }

    /// Each seat's peak live state bytes, in MiB.
    fn peaks(&self) -> Vec<u64> {
        self.peers
            .iter()
            .map(|p| mib(p.stats().peak_state_bytes / 1024))
            .collect()
    }
}

fn alone() {
    faulty::install(None);
    let mut mesh = Mesh::new(2, &Rts::default_config(), 100_000, DesyncPolicy::Stop);
    let steady = mesh.play_until(20_000_000);
    let at_pause = rss_kib().0;
    mesh.paused[1] = true;
    let peak = mesh.play_until(80_000_000);
    println!(
        "alone   rts 2×512, 100 ms: resident {} MiB at the pause (peak before {} MiB), \
         peak {} MiB over 60 s alone (+{} MiB); seat 0 at frame {}",
        mib(at_pause),
        mib(steady),
        mib(peak),
        mib(peak.saturating_sub(at_pause)),
        mesh.peers[0].frame()
    );
    println!("        peak live state MiB per seat: {:?}", mesh.peaks());
}

fn desync(policy: DesyncPolicy) {
    let mut config = Rts::default_config();
    config.units_per_player = 1024;
    faulty::install(Some(Fault {
        seat: 7,
        kind: Recurring::SelfConsistent,
        from_frame: 600,
        every: 30,
        until_frame: u32::MAX,
    }));
    let mut mesh = Mesh::new(8, &config, 2_000_000, policy);
    mesh.play_until(10_000_000);
    let before = rss_kib().0;
    let peak = mesh.play_until(60_000_000);
    faulty::install(None);
    let stats = mesh.peers[7].stats().clone();
    println!(
        "desync  rts 8×1024, 2 s, {policy:?}: resident {} MiB before the fault, peak {} MiB \
         over 50 s (+{} MiB); seat 7 loaded {} states, at frame {}, stopped: {:?}",
        mib(before),
        mib(peak),
        mib(peak.saturating_sub(before)),
        stats.states_loaded,
        mesh.peers[7].frame(),
        mesh.peers[7].stopped().is_some()
    );
    println!("        peak live state MiB per seat: {:?}", mesh.peaks());
}

fn main() {
    let which = std::env::args().nth(1).unwrap_or_else(|| "all".into());
    if which == "alone" || which == "all" {
        alone();
    }
    if which == "desync" || which == "all" {
        desync(DesyncPolicy::Continue);
    }
    if which == "desync-stop" || which == "all" {
        desync(DesyncPolicy::Stop);
    }
}

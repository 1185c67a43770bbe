//! A seeded, virtual-time network for tests and experiments: per-link
//! latency, jitter, random or Gilbert–Elliott burst loss, duplication,
//! reordering and an MTU, or a TCP-like transport (see [`crate::tcp_model`]);
//! links can be cut (a partition), and a node's traffic in flight forgotten
//! (its process was replaced by one with a new socket).
//!
//! Invariants: every decision draws from one `lockstep_fx::Rng` seeded by the
//! caller, in send order, so a run is a pure function of its seed and its
//! sends; deliveries due at the same instant come out in send order (the
//! queue is a `BTreeMap` keyed by time then a send counter); nothing reads a
//! clock. Probabilities are integers in parts per million.

use crate::tcp_model::TcpLink;
use lockstep_fx::Rng;
use lockstep_protocol::{Instant, SeatId};
use std::collections::BTreeMap;

/// One million: probabilities are given in parts per million.
pub const PPM: u32 = 1_000_000;

/// How a link loses datagrams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Loss {
    /// Never.
    None,
    /// Each datagram independently, with this probability (ppm).
    Random(u32),
    /// Gilbert–Elliott: a two-state Markov chain, drawn once per datagram.
    GilbertElliott {
        /// Chance to move from the good to the bad state (ppm).
        good_to_bad: u32,
        /// Chance to move from the bad to the good state (ppm).
        bad_to_good: u32,
        /// Loss chance in the good state (ppm).
        loss_good: u32,
        /// Loss chance in the bad state (ppm).
        loss_bad: u32,
    },
}

impl Loss {
    /// A Gilbert–Elliott chain that loses `mean_ppm` of datagrams on
    /// average in bursts of `mean_burst` datagrams on average (lossless good
    /// state, lossy bad state).
    pub fn bursty(mean_ppm: u32, mean_burst: u32) -> Loss {
        let bad_to_good = PPM / mean_burst.max(1);
        // Stationary bad share π = g/(g+b) = mean ⇒ g = b·mean/(1−mean).
        let m = u64::from(mean_ppm.min(PPM - 1));
        let good_to_bad = (u64::from(bad_to_good) * m / (u64::from(PPM) - m)) as u32;
        Loss::GilbertElliott {
            good_to_bad,
            bad_to_good,
            loss_good: 0,
            loss_bad: PPM,
        }
    }
}

/// Whether the link carries datagrams or models an ordered, reliable stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// UDP-like: each datagram on its own.
    Datagram,
    /// TCP-like: in order, each loss resent after `rto_micros` (no MTU drop,
    /// no duplicates).
    TcpLike {
        /// Retransmission timeout.
        rto_micros: u64,
    },
}

/// One direction of a link between two nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkConfig {
    /// Base one-way latency.
    pub latency_micros: u64,
    /// Extra latency, uniform in `0..=jitter_micros`, drawn per datagram.
    pub jitter_micros: u64,
    /// Loss model.
    pub loss: Loss,
    /// Chance a datagram is delivered twice (ppm); the copy gets its own
    /// latency draw.
    pub duplicate_ppm: u32,
    /// Chance a datagram is held back by `reorder_micros` extra (ppm).
    pub reorder_ppm: u32,
    /// Extra delay of a reordered datagram.
    pub reorder_micros: u64,
    /// Chance a datagram arrives with one bit flipped (ppm): a corrupted
    /// datagram, which the receiver must refuse (unsealed, most do not
    /// decode; sealed, none opens). Nothing is drawn for it at 0, so links
    /// without corruption draw the same as before it existed.
    pub corrupt_ppm: u32,
    /// Datagrams longer than this many bytes are dropped.
    pub mtu: u32,
    /// Datagram or TCP-like.
    pub transport: Transport,
}

impl LinkConfig {
    /// A perfect link with `latency_micros` one-way latency and a 1 200-byte MTU.
    pub const fn ideal(latency_micros: u64) -> LinkConfig {
        LinkConfig {
            latency_micros,
            jitter_micros: 0,
            loss: Loss::None,
            duplicate_ppm: 0,
            reorder_ppm: 0,
            reorder_micros: 0,
            corrupt_ppm: 0,
            mtu: 1200,
            transport: Transport::Datagram,
        }
    }
}

/// A datagram in flight or delivered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Datagram {
    /// Sender.
    pub from: SeatId,
    /// Receiver.
    pub to: SeatId,
    /// Bytes.
    pub bytes: Vec<u8>,
}

/// What the network did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NetStats {
    /// Datagrams handed to [`Network::send`].
    pub sent: u64,
    /// Bytes handed to [`Network::send`].
    pub sent_bytes: u64,
    /// Datagrams delivered (copies included).
    pub delivered: u64,
    /// Datagrams lost (for TCP-like links: transmissions lost and resent).
    pub lost: u64,
    /// Extra copies delivered.
    pub duplicated: u64,
    /// Datagrams held back for reordering.
    pub reordered: u64,
    /// Datagrams delivered with a bit flipped.
    pub corrupted: u64,
    /// Datagrams dropped for exceeding the MTU.
    pub over_mtu: u64,
    /// Datagrams sent on a cut link (a partition), never delivered.
    pub partitioned: u64,
    /// Datagrams in flight to or from a node whose process was replaced.
    pub forgotten: u64,
}

#[derive(Debug, Clone)]
struct Link {
    cfg: LinkConfig,
    bad: bool,
    tcp: TcpLink,
    /// Cut: everything sent on it is lost, and nothing is drawn for it.
    cut: bool,
}

impl Link {
    fn lose(&mut self, rng: &mut Rng) -> bool {
        link_lose(&mut self.bad, self.cfg.loss, rng)
    }

    fn latency(&self, rng: &mut Rng) -> u64 {
        latency_of(&self.cfg, rng)
    }
}

/// A simulated network between `nodes` nodes.
#[derive(Debug, Clone)]
pub struct Network {
    rng: Rng,
    nodes: usize,
    links: Vec<Link>,
    queue: BTreeMap<(Instant, u64), Datagram>,
    counter: u64,
    stats: NetStats,
}

impl Network {
    /// A network whose every directed link has `link`, seeded by `seed`.
    pub fn new(seed: u64, nodes: u8, link: LinkConfig) -> Network {
        let n = usize::from(nodes);
        Network {
            rng: Rng::new(seed, 0x6e65_7473_696d),
            nodes: n,
            links: vec![
                Link {
                    cfg: link,
                    bad: false,
                    tcp: TcpLink::default(),
                    cut: false,
                };
                n * n
            ],
            queue: BTreeMap::new(),
            counter: 0,
            stats: NetStats::default(),
        }
    }

    /// Replaces the settings of the link `from → to`.
    pub fn set_link(&mut self, from: SeatId, to: SeatId, link: LinkConfig) {
        if let Some(l) = self.links.get_mut(from.index() * self.nodes + to.index()) {
            l.cfg = link;
        }
    }

    /// Cuts the link `from → to` (`true`) or mends it: while cut, what is
    /// sent on it is lost (counted as `partitioned`); what is in flight
    /// still arrives.
    pub fn set_cut(&mut self, from: SeatId, to: SeatId, cut: bool) {
        if let Some(l) = self.links.get_mut(from.index() * self.nodes + to.index()) {
            l.cut = cut;
        }
    }

    /// Forgets every datagram in flight to or from `node`: its process was
    /// replaced by a new one with a new socket, which the old one's traffic
    /// never reaches (and whose peers the old one's late datagrams are
    /// taken not to reach either: a dead process's packets are not replayed
    /// to its successor).
    pub fn forget(&mut self, node: SeatId) {
        let before = self.queue.len();
        self.queue.retain(|_, d| d.from != node && d.to != node);
        self.stats.forgotten += (before - self.queue.len()) as u64;
    }

    /// What happened so far.
    pub fn stats(&self) -> NetStats {
        self.stats
    }

    /// Sends `bytes` from `from` to `to` at `now`.
    pub fn send(&mut self, now: Instant, from: SeatId, to: SeatId, bytes: Vec<u8>) {
        self.stats.sent += 1;
        self.stats.sent_bytes += bytes.len() as u64;
        let Some(link) = self.links.get_mut(from.index() * self.nodes + to.index()) else {
            return;
        };
        if link.cut {
            self.stats.partitioned += 1;
            return;
        }
        let rng = &mut self.rng;
        let mut deliveries: Vec<(Instant, Option<u32>)> = Vec::with_capacity(2);
        match link.cfg.transport {
            Transport::TcpLike { rto_micros } => {
                let mut lost = 0;
                let at = link.tcp.schedule(now, rto_micros, |t| {
                    let l = link_lose(&mut link.bad, link.cfg.loss, rng);
                    lost += u64::from(l);
                    (l, t.plus(latency_of(&link.cfg, rng)))
                });
                self.stats.lost += lost;
                deliveries.push((at, None));
            }
            Transport::Datagram => {
                if bytes.len() > link.cfg.mtu as usize {
                    self.stats.over_mtu += 1;
                    return;
                }
                if link.lose(rng) {
                    self.stats.lost += 1;
                    return;
                }
                let copies = if rng.chance(link.cfg.duplicate_ppm, PPM) {
                    2
                } else {
                    1
                };
                self.stats.duplicated += copies - 1;
                for _ in 0..copies {
                    let mut at = now.plus(link.latency(rng));
                    if rng.chance(link.cfg.reorder_ppm, PPM) {
                        self.stats.reordered += 1;
                        at = at.plus(link.cfg.reorder_micros);
                    }
                    let corrupt = link.cfg.corrupt_ppm > 0
                        && !bytes.is_empty()
                        && rng.chance(link.cfg.corrupt_ppm, PPM);
                    let bit = if corrupt {
                        self.stats.corrupted += 1;
                        Some(rng.below((bytes.len() * 8).min(u32::MAX as usize) as u32))
                    } else {
                        None
                    };
                    deliveries.push((at, bit));
                }
            }
        }
        for (at, bit) in deliveries {
            self.counter += 1;
            let mut bytes = bytes.clone();
            if let Some(b) = bit {
                bytes[(b / 8) as usize] ^= 1 << (b % 8);
            }
            self.queue
                .insert((at, self.counter), Datagram { from, to, bytes });
        }
    }

    /// When the next datagram arrives, if any is in flight.
    pub fn next_delivery(&self) -> Option<Instant> {
        self.queue.keys().next().map(|(t, _)| *t)
    }

    /// The next datagram due by `now`.
    pub fn pop_due(&mut self, now: Instant) -> Option<Datagram> {
        let (&key, _) = self.queue.iter().next()?;
        if key.0 > now {
            return None;
        }
        self.stats.delivered += 1;
        self.queue.remove(&key)
    }
}

/// Draws whether the next transmission on a link is lost, stepping its
/// Gilbert–Elliott state.
fn link_lose(bad: &mut bool, loss: Loss, rng: &mut Rng) -> bool {
    match loss {
        Loss::None => false,
        Loss::Random(p) => rng.chance(p, PPM),
        Loss::GilbertElliott {
            good_to_bad,
            bad_to_good,
            loss_good,
            loss_bad,
        } => {
            let flip = if *bad { bad_to_good } else { good_to_bad };
            if rng.chance(flip, PPM) {
                *bad = !*bad;
            }
            rng.chance(if *bad { loss_bad } else { loss_good }, PPM)
        }
    }
}

fn latency_of(cfg: &LinkConfig, rng: &mut Rng) -> u64 {
    let jitter = cfg.jitter_micros.min(u64::from(u32::MAX - 1)) as u32;
    cfg.latency_micros + u64::from(rng.below(jitter + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bursty_loss_hits_its_mean() {
        let mut net = Network::new(
            7,
            2,
            LinkConfig {
                loss: Loss::bursty(250_000, 3),
                ..LinkConfig::ideal(1000)
            },
        );
        for i in 0..100_000u64 {
            net.send(Instant(i), SeatId(0), SeatId(1), vec![1]);
        }
        let lost = net.stats().lost;
        assert!((23_000..27_000).contains(&lost), "{lost}");
    }

    #[test]
    fn same_seed_same_run() {
        let cfg = LinkConfig {
            jitter_micros: 5000,
            loss: Loss::Random(100_000),
            duplicate_ppm: 50_000,
            reorder_ppm: 50_000,
            reorder_micros: 20_000,
            ..LinkConfig::ideal(10_000)
        };
        let run = || {
            let mut net = Network::new(3, 2, cfg);
            let mut out = Vec::new();
            for i in 0..200u64 {
                net.send(Instant(i * 1000), SeatId(0), SeatId(1), vec![i as u8]);
            }
            while let Some(d) = net.pop_due(Instant(u64::MAX)) {
                out.push(d.bytes[0]);
            }
            out
        };
        assert_eq!(run(), run());
        assert!(run().windows(2).any(|w| w[0] > w[1]), "jitter reorders");
    }

    #[test]
    fn a_cut_link_loses_everything_until_mended() {
        let mut net = Network::new(1, 3, LinkConfig::ideal(10));
        net.send(Instant(0), SeatId(0), SeatId(1), vec![1]);
        net.set_cut(SeatId(0), SeatId(1), true);
        net.send(Instant(1), SeatId(0), SeatId(1), vec![2]);
        net.send(Instant(1), SeatId(1), SeatId(0), vec![3]);
        net.set_cut(SeatId(0), SeatId(1), false);
        net.send(Instant(2), SeatId(0), SeatId(1), vec![4]);
        let mut got = Vec::new();
        while let Some(d) = net.pop_due(Instant(100)) {
            got.push(d.bytes[0]);
        }
        assert_eq!(
            got,
            vec![1, 3, 4],
            "in flight before the cut, the other way, after"
        );
        assert_eq!(net.stats().partitioned, 1);
        net.send(Instant(3), SeatId(0), SeatId(2), vec![5]);
        net.send(Instant(3), SeatId(2), SeatId(1), vec![6]);
        net.send(Instant(3), SeatId(0), SeatId(1), vec![7]);
        net.forget(SeatId(2));
        assert_eq!(net.pop_due(Instant(100)).map(|d| d.bytes[0]), Some(7));
        assert_eq!(net.stats().forgotten, 2);
    }

    #[test]
    fn mtu_drops() {
        let mut net = Network::new(
            1,
            2,
            LinkConfig {
                mtu: 10,
                ..LinkConfig::ideal(0)
            },
        );
        net.send(Instant(0), SeatId(0), SeatId(1), vec![0; 11]);
        assert_eq!(net.stats().over_mtu, 1);
        assert_eq!(net.next_delivery(), None);
    }
}

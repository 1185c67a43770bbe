//! [`Conditioner`]: a seeded link conditioner on the send path, standing in
//! for `tc netem`. Every datagram sent is delayed (one-way delay plus
//! uniform jitter), may be lost (independently, or in bursts), duplicated,
//! or held back to arrive after later ones (reordering).
//!
//! Invariants: decisions come only from the seed and the order of sends, so
//! a run's pattern of losses is reproducible for a given send order; a
//! datagram is never delivered before its due time, and datagrams with the
//! same due time leave in send order.

use std::collections::BTreeMap;
use std::net::SocketAddr;

use lockstep_fx::Rng;
use lockstep_protocol::Instant;

/// The shape of a conditioned link; [`LinkShape::PERFECT`] changes nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkShape {
    /// One-way delay in microseconds.
    pub delay_micros: u64,
    /// Jitter: each datagram gets an extra delay uniform in `0..=jitter`.
    pub jitter_micros: u64,
    /// Loss rate in parts per million.
    pub loss_ppm: u32,
    /// Mean length of a loss burst in datagrams (1: independent losses).
    pub burst: u32,
    /// Duplication rate in parts per million.
    pub duplicate_ppm: u32,
    /// Rate, in parts per million, of datagrams held back by an extra
    /// 1–3 delays so that later ones overtake them.
    pub reorder_ppm: u32,
}

impl LinkShape {
    /// A link that delivers everything at once.
    pub const PERFECT: LinkShape = LinkShape {
        delay_micros: 0,
        jitter_micros: 0,
        loss_ppm: 0,
        burst: 1,
        duplicate_ppm: 0,
        reorder_ppm: 0,
    };

    /// The demo's link: 75 ms one way plus up to 10 ms of jitter, 2% loss.
    pub const DEMO: LinkShape = LinkShape {
        delay_micros: 75_000,
        jitter_micros: 10_000,
        loss_ppm: 20_000,
        burst: 1,
        duplicate_ppm: 0,
        reorder_ppm: 0,
    };

    /// Whether the link changes nothing.
    pub fn is_perfect(&self) -> bool {
        *self == LinkShape::PERFECT
    }
}

impl Default for LinkShape {
    fn default() -> LinkShape {
        LinkShape::PERFECT
    }
}

/// The send queue of one socket, shaped by a [`LinkShape`].
#[derive(Debug)]
pub struct Conditioner {
    shape: LinkShape,
    rng: Rng,
    in_burst: bool,
    queue: BTreeMap<(Instant, u64), (SocketAddr, Vec<u8>)>,
    counter: u64,
    lost: u64,
    sent: u64,
}

impl Conditioner {
    /// A conditioner for `shape`, its decisions seeded by `seed`.
    pub fn new(shape: LinkShape, seed: u64) -> Conditioner {
        Conditioner {
            shape,
            rng: Rng::new(seed, 0x636f_6e64),
            in_burst: false,
            queue: BTreeMap::new(),
            counter: 0,
            lost: 0,
            sent: 0,
        }
    }

    /// Datagrams handed in, and how many of them the link lost.
    pub fn counts(&self) -> (u64, u64) {
        (self.sent, self.lost)
    }

    /// Queues `bytes` for `to`, sent at `now`.
    pub fn send(&mut self, now: Instant, to: SocketAddr, bytes: Vec<u8>) {
        self.sent += 1;
        if self.lose() {
            self.lost += 1;
            return;
        }
        let copies = if self.chance(self.shape.duplicate_ppm) {
            2
        } else {
            1
        };
        for _ in 0..copies {
            let mut delay = self.shape.delay_micros;
            if self.shape.jitter_micros > 0 {
                let j = self.shape.jitter_micros.min(u64::from(u32::MAX));
                delay += u64::from(self.rng.below(j as u32 + 1));
            }
            if self.chance(self.shape.reorder_ppm) {
                let extra = self.shape.delay_micros.max(1_000);
                delay += extra * u64::from(1 + self.rng.below(3));
            }
            self.counter += 1;
            self.queue
                .insert((now.plus(delay), self.counter), (to, bytes.clone()));
        }
    }

    /// The next datagram due at `now`, if any.
    pub fn pop_due(&mut self, now: Instant) -> Option<(SocketAddr, Vec<u8>)> {
        let (&key, _) = self.queue.iter().next()?;
        if key.0 > now {
            return None;
        }
        self.queue.remove(&key)
    }

    /// When the next queued datagram is due.
    pub fn next_due(&self) -> Option<Instant> {
        self.queue.keys().next().map(|(t, _)| *t)
    }

    fn chance(&mut self, ppm: u32) -> bool {
        ppm > 0 && self.rng.below(1_000_000) < ppm
    }

    /// Gilbert–Elliott with a mean burst of `burst` datagrams and a mean
    /// loss rate of `loss_ppm`: the bad state is entered at a rate that
    /// keeps the long-run loss at `loss_ppm`, and left with probability
    /// `1 / burst` after each datagram lost in it.
    fn lose(&mut self) -> bool {
        let burst = u64::from(self.shape.burst.max(1));
        if burst == 1 {
            return self.chance(self.shape.loss_ppm);
        }
        if self.in_burst {
            self.in_burst = self.rng.below(burst as u32) != 0;
            return true;
        }
        // Entering rate p so that p·burst / (1 − p + p·burst) = loss.
        let loss = u64::from(self.shape.loss_ppm.min(999_999));
        let enter = loss * 1_000_000 / ((1_000_000 - loss) * burst + loss);
        if self.chance(enter.min(1_000_000) as u32) {
            self.in_burst = self.rng.below(burst as u32) != 0;
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr() -> SocketAddr {
        "127.0.0.1:9".parse().unwrap()
    }

    #[test]
    fn a_perfect_link_delivers_at_once_in_order() {
        let mut c = Conditioner::new(LinkShape::PERFECT, 1);
        for i in 0..10u8 {
            c.send(Instant(5), addr(), vec![i]);
        }
        let got: Vec<u8> = std::iter::from_fn(|| c.pop_due(Instant(5)))
            .map(|(_, b)| b[0])
            .collect();
        assert_eq!(got, (0..10).collect::<Vec<_>>());
    }

    #[test]
    fn loss_and_delay_follow_the_shape() {
        for burst in [1, 4] {
            let shape = LinkShape {
                delay_micros: 50_000,
                jitter_micros: 10_000,
                loss_ppm: 100_000,
                burst,
                ..LinkShape::PERFECT
            };
            let mut c = Conditioner::new(shape, 7);
            for i in 0..20_000u32 {
                c.send(Instant(0), addr(), i.to_le_bytes().to_vec());
            }
            let (sent, lost) = c.counts();
            let rate = lost * 1000 / sent;
            assert!((80..=120).contains(&rate), "burst {burst}: {rate}‰ lost");
            assert!(c.pop_due(Instant(49_999)).is_none());
            assert!(c.next_due().is_some_and(|t| t >= Instant(50_000)));
            let delivered = std::iter::from_fn(|| c.pop_due(Instant(60_000))).count();
            assert_eq!(delivered as u64, sent - lost);
        }
    }

    #[test]
    fn duplicates_and_reordering_happen_at_their_rates() {
        let shape = LinkShape {
            delay_micros: 10_000,
            duplicate_ppm: 50_000,
            reorder_ppm: 50_000,
            ..LinkShape::PERFECT
        };
        let mut c = Conditioner::new(shape, 3);
        for i in 0..10_000u32 {
            c.send(
                Instant(u64::from(i) * 100),
                addr(),
                i.to_le_bytes().to_vec(),
            );
        }
        let got: Vec<u32> = std::iter::from_fn(|| c.pop_due(Instant(u64::MAX / 2)))
            .map(|(_, b)| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        let extra = got.len() - 10_000;
        assert!((400..=600).contains(&extra), "{extra} duplicates");
        let overtaken = got.windows(2).filter(|w| w[1] < w[0]).count();
        assert!(overtaken >= 300, "{overtaken} reordered");
    }
}

//! [`Guesses`]: how many invite exchanges the host runs for one
//! [`Source`], and the exchanges it ran lately.
//!
//! Each SPAKE2 answer the host gives lets its asker test one guess of the
//! code (offline, against that answer): so answers are what is limited.
//! A source may have [`Guesses::BURST`] answers at once, then one more
//! every [`Guesses::INTERVAL_MICROS`] (a generic cell rate: the source's
//! next free time moves on by the interval with each answer, and an answer
//! is allowed while that time is less than a burst ahead of now). An
//! honest joiner needs one answer per process; its resends carry the same
//! message and cost nothing, because the last [`Guesses::BURST`] exchanges
//! of each source are remembered (with their key, so a resend costs no
//! curve arithmetic either): several joiners behind one address (a home's
//! NAT, or processes on one machine) each keep theirs, since a source
//! cannot have more answers than that at once.
//!
//! The bound: a source gets at most `5 + ⌊t / 12 s⌋` answers in any span
//! of `t`, so in an hour one source tests at most 305 guesses of a 30-bit
//! secret (a chance of 2.8·10⁻⁷), and N sources N times that. A source is
//! counted only after its cookie proved it receives at its address, so it
//! cannot spend another source's answers by forging its address: a joiner
//! is limited only by what its own address (or /64) asked. The table holds
//! [`Guesses::MAX_SOURCES`]; when it is full, a source whose budget is whole
//! again is forgotten first (it carries nothing), else the one idle
//! longest (which then starts over with a whole budget: never a refusal
//! for the newcomer).
//!
//! Invariants: no clock (time comes in); memory is bounded by
//! `MAX_SOURCES` records of fixed size.

use std::collections::BTreeMap;

use lockstep_protocol::Instant;

use crate::invite::SetupKey;
use crate::message::PAKE_BYTES;
use crate::source::Source;

/// Exchanges remembered per source: as many as it may have at once.
const RECENT: usize = Guesses::BURST as usize;

/// An exchange the host ran: the joiner's message, the host's answer, and
/// the key both derived.
#[derive(Debug, Clone)]
pub struct Exchange {
    /// The joiner's message.
    pub asked: [u8; PAKE_BYTES],
    /// The host's answer.
    pub answer: [u8; PAKE_BYTES],
    /// The key.
    pub key: SetupKey,
}

#[derive(Debug, Clone)]
struct Record {
    /// When the source's budget is whole again.
    free_at: Instant,
    /// When it last asked.
    touched: Instant,
    /// Its last exchanges, newest first.
    recent: [Option<Exchange>; RECENT],
}

/// The host's count of invite exchanges per source. See the module
/// documentation.
#[derive(Debug, Default)]
pub struct Guesses {
    sources: BTreeMap<Source, Record>,
}

impl Guesses {
    /// Answers a source may have at once.
    pub const BURST: u64 = 5;
    /// One more answer this often (12 s).
    pub const INTERVAL_MICROS: u64 = 12_000_000;
    /// Sources remembered at most.
    pub const MAX_SOURCES: usize = 1024;

    /// An exchange `source` ran lately for the joiner's message `asked`.
    pub fn recall(
        &mut self,
        now: Instant,
        source: Source,
        asked: &[u8; PAKE_BYTES],
    ) -> Option<Exchange> {
        let r = self.sources.get_mut(&source)?;
        r.touched = now;
        r.recent
            .iter()
            .flatten()
            .find(|e| &e.asked == asked)
            .cloned()
    }

    /// Whether `source` may have one more answer now; if so, it is counted.
    pub fn charge(&mut self, now: Instant, source: Source) -> bool {
        let window = Self::BURST * Self::INTERVAL_MICROS;
        if !self.sources.contains_key(&source) {
            self.make_room(now);
            self.sources.insert(
                source,
                Record {
                    free_at: now,
                    touched: now,
                    recent: Default::default(),
                },
            );
        }
        let Some(r) = self.sources.get_mut(&source) else {
            return false;
        };
        r.touched = now;
        let start = r.free_at.max(now);
        if start.since(now) + Self::INTERVAL_MICROS > window {
            return false;
        }
        r.free_at = start.plus(Self::INTERVAL_MICROS);
        true
    }

    /// Remembers an exchange `source` was answered.
    pub fn remember(&mut self, source: Source, exchange: Exchange) {
        if let Some(r) = self.sources.get_mut(&source) {
            r.recent.rotate_right(1);
            r.recent[0] = Some(exchange);
        }
    }

    /// Sources remembered.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.sources.len()
    }

    fn make_room(&mut self, now: Instant) {
        if self.sources.len() < Self::MAX_SOURCES {
            return;
        }
        let whole = self
            .sources
            .iter()
            .find(|(_, r)| r.free_at <= now)
            .map(|(s, _)| *s);
        let evict = whole.or_else(|| {
            self.sources
                .iter()
                .min_by_key(|(_, r)| r.touched)
                .map(|(s, _)| *s)
        });
        if let Some(s) = evict {
            self.sources.remove(&s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v4(i: u32) -> Source {
        Source::V4(i.to_be_bytes())
    }

    #[test]
    fn a_source_gets_its_burst_then_one_an_interval() {
        let mut g = Guesses::default();
        let t = Instant::from_micros(1_000_000);
        for _ in 0..Guesses::BURST {
            assert!(g.charge(t, v4(1)));
        }
        assert!(!g.charge(t, v4(1)));
        // Another source is not touched by the first's spending.
        assert!(g.charge(t, v4(2)));
        assert!(!g.charge(t.plus(Guesses::INTERVAL_MICROS - 1), v4(1)));
        assert!(g.charge(t.plus(Guesses::INTERVAL_MICROS), v4(1)));
        assert!(!g.charge(t.plus(Guesses::INTERVAL_MICROS), v4(1)));
        // Over an hour of asking every second: the bound holds.
        let mut granted = 0u64;
        let mut g = Guesses::default();
        for s in 0..3600u64 {
            granted += u64::from(g.charge(t.plus(s * 1_000_000), v4(3)));
        }
        assert_eq!(
            granted,
            Guesses::BURST + 3599 / (Guesses::INTERVAL_MICROS / 1_000_000)
        );
    }

    #[test]
    fn the_table_is_bounded_and_a_newcomer_is_never_refused() {
        let mut g = Guesses::default();
        let t = Instant::from_micros(1_000_000);
        for i in 0..(Guesses::MAX_SOURCES as u32 + 100) {
            for _ in 0..Guesses::BURST {
                assert!(g.charge(t.plus(u64::from(i)), v4(i)));
            }
            assert!(g.len() <= Guesses::MAX_SOURCES);
        }
        assert!(g.charge(t.plus(5_000), v4(1_000_000)));
    }

    #[test]
    fn a_recent_exchange_is_recalled_by_its_message() {
        let mut g = Guesses::default();
        let t = Instant::from_micros(1);
        assert!(g.charge(t, v4(1)));
        let e = |b: u8| Exchange {
            asked: [b; PAKE_BYTES],
            answer: [b + 1; PAKE_BYTES],
            key: SetupKey::new([b; 32]),
        };
        // As many joiners behind one address as it may have answers at
        // once each keep their exchange.
        for b in 1..=RECENT as u8 {
            g.remember(v4(1), e(b));
        }
        for b in 1..=RECENT as u8 {
            assert!(g.recall(t, v4(1), &[b; PAKE_BYTES]).is_some(), "{b}");
        }
        g.remember(v4(1), e(RECENT as u8 + 1));
        assert!(g.recall(t, v4(1), &[1; PAKE_BYTES]).is_none());
        assert!(g.recall(t, v4(1), &[2; PAKE_BYTES]).is_some());
        assert!(g.recall(t, v4(2), &[2; PAKE_BYTES]).is_none());
    }
}

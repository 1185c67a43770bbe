//! What a mesh run gives back: each peer's side ([`PeerRun`]: checksums,
//! events, counters, its log), the spectator's ([`SpectatorRun`]), and the
//! whole [`Run`] with the questions the verdict asks of it (which processes
//! ran, where two parted, what every seat confirmed).
//!
//! Invariant: read-only once the run is over; every answer is a function
//! of what the peers recorded.

use std::collections::BTreeMap;

use crate::netsim::NetStats;
use lockstep_fx::Checksum;
use lockstep_peer::{PeerEvent, PeerStats, SpectatorEvent, SpectatorStats, StopReason};
use lockstep_protocol::clock_sync::ClockEstimate;
use lockstep_protocol::spectate::SpectatorSessionStats;
use lockstep_protocol::{Instant, Invalidation, SeatId, Stats};

/// One peer's side of a run.
#[derive(Debug, Clone, Default)]
pub struct PeerRun {
    /// The checksum of every frame the peer stepped (a re-simulated frame
    /// replaces the first try).
    pub checksums: BTreeMap<u32, Checksum>,
    /// When the peer first stepped each frame.
    pub stepped_at: BTreeMap<u32, Instant>,
    /// Every event but [`PeerEvent::Stepped`], with when it happened.
    pub events: Vec<(Instant, PeerEvent)>,
    /// The peer's counters.
    pub stats: PeerStats,
    /// The session's counters.
    pub session: Stats,
    /// Stall ticks after every peer stepped the warm-up frame.
    pub stalls_after_warmup: u64,
    /// The replay log the peer recorded (`None` if recording stopped).
    pub log: Option<Vec<u8>>,
    /// Wall-clock time spent inside the peer's calls, in nanoseconds (a
    /// measurement only: nothing in the run depends on it).
    pub busy_nanos: u64,
    /// The playout delay in frames over the run: the first value and every
    /// change, with when it was seen.
    pub delay_frames: Vec<(Instant, u32)>,
    /// When the peer sampled its local input for each frame (its tick).
    pub sampled_at: BTreeMap<u32, Instant>,
    /// Every frame before this one was confirmed at the end (stepped with
    /// every player's real input; in lockstep, every frame stepped).
    pub confirmed_before: u32,
    /// At the end, per seat, that seat's clock offset as this peer
    /// estimated it (its own seat: `None`).
    pub clock_offsets: Vec<Option<ClockEstimate>>,
    /// At the end, per seat, how far ahead of that seat this peer's frame
    /// clock ran, in microseconds.
    pub frame_advantage: Vec<Option<i64>>,
    /// Why the peer stopped before the end, if it did.
    pub stopped: Option<StopReason>,
    /// The threads its frames used at the end.
    pub threads: usize,
    /// At the end, the newest frame a quorum compared clean
    /// ([`Session::newest_clean`](lockstep_protocol::Session::newest_clean)).
    pub settled_through: Option<u32>,
    /// The match's invalidation as the peer knew it at the end.
    pub invalidation: Option<Invalidation>,
    /// The first frame of every span it played alone, unchecked
    /// ([`Peer::unchecked_from`](lockstep_peer::Peer::unchecked_from)).
    pub unchecked_from: Vec<u32>,
    /// This process took its seat back in a running match (it records no
    /// log).
    pub rejoined: bool,
    /// This process vanished (died): it left no finished log.
    pub vanished: bool,
}

impl PeerRun {
    /// Command latency as a player feels it, in microseconds: for commands
    /// given every `every_micros` from the sampling of frame `from` on, the
    /// time from the moment each is given to the step of the first frame
    /// sampled at or after it (the frame the command goes with). A command
    /// given between two samplings waits for the next one, so turns sampled
    /// at once are measured as fairly as frames sampled every tick.
    pub fn command_latency_micros(&self, from: u32, every_micros: u64) -> Vec<u64> {
        let sampled: Vec<(u32, Instant)> = self
            .sampled_at
            .range(from..)
            .map(|(f, at)| (*f, *at))
            .collect();
        let Some(&(_, start)) = sampled.first() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let mut next = 0;
        let mut issued = start;
        loop {
            while sampled.get(next).is_some_and(|(_, at)| *at < issued) {
                next += 1;
            }
            let Some((frame, _)) = sampled.get(next) else {
                break;
            };
            if let Some(stepped) = self.stepped_at.get(frame) {
                out.push(stepped.since(issued));
            }
            issued = issued.plus(every_micros.max(1));
        }
        out
    }

    /// Frames from sampling a local input to first showing its frame, per
    /// frame sampled and stepped (the perceived input latency, in ticks of
    /// `tick_micros`, rounded to the nearest).
    pub fn input_latency_frames(&self, tick_micros: u64) -> Vec<u32> {
        let tick = tick_micros.max(1);
        self.sampled_at
            .iter()
            .filter_map(|(f, sampled)| {
                let shown = self.stepped_at.get(f)?;
                Some(((shown.since(*sampled) + tick / 2) / tick) as u32)
            })
            .collect()
    }
}

/// The spectator's side of a run.
#[derive(Debug, Clone, Default)]
pub struct SpectatorRun {
    /// When it started.
    pub joined_at: Instant,
    /// The frame of the state it loaded first, and when.
    pub loaded: Option<(u32, Instant)>,
    /// The checksum of every frame it stepped.
    pub checksums: BTreeMap<u32, Checksum>,
    /// Every event but [`SpectatorEvent::Stepped`], with when it happened.
    pub events: Vec<(Instant, SpectatorEvent)>,
    /// Its counters.
    pub stats: SpectatorStats,
    /// Its connection's counters.
    pub connection: SpectatorSessionStats,
    /// The threads its frames used at the end.
    pub threads: usize,
}

/// What a run did.
#[derive(Debug, Clone)]
pub struct Run {
    /// Per seat.
    pub peers: Vec<PeerRun>,
    /// The network's counters.
    pub net: NetStats,
    /// Virtual time at the end.
    pub end: Instant,
    /// When the scenario's bit was flipped.
    pub flipped_at: Option<Instant>,
    /// The peer that vanished, if one did (and did not rejoin).
    pub vanished: Option<SeatId>,
    /// The processes replaced by a restarted one (a vanished process, or
    /// one that stopped), oldest first, with their seats; the seat's entry
    /// in `peers` is its newest process.
    pub replaced: Vec<(SeatId, PeerRun)>,
    /// When a seat's restarted process last started.
    pub rejoined_at: Option<Instant>,
    /// Datagrams a paused seat's full socket buffer dropped.
    pub buffer_overflow: u64,
    /// The spectator, if the scenario had one.
    pub spectator: Option<SpectatorRun>,
}

impl Run {
    /// The peers still playing at the end (all but a vanished one and
    /// those that stopped).
    pub fn remaining(&self) -> impl Iterator<Item = &PeerRun> {
        let vanished = self.vanished;
        self.peers
            .iter()
            .enumerate()
            .filter(move |(i, p)| vanished.is_none_or(|v| v.index() != *i) && p.stopped.is_none())
            .map(|(_, p)| p)
    }

    /// Every process that played, with its seat: those replaced first,
    /// then the newest of each seat.
    pub fn processes(&self) -> impl Iterator<Item = (SeatId, &PeerRun)> {
        self.replaced.iter().map(|(s, p)| (*s, p)).chain(
            self.peers
                .iter()
                .enumerate()
                .map(|(i, p)| (SeatId(i as u8), p)),
        )
    }

    /// The first frame two processes that did not vanish hold different
    /// final checksums for, among the frames both confirmed (for one that
    /// stopped, the frames before its stop: what it stepped after the last
    /// frame a quorum settled is no part of the match), with the two seats.
    pub fn first_parting(&self) -> Option<(u32, SeatId, SeatId)> {
        let held: Vec<(SeatId, &PeerRun, u32)> = self
            .processes()
            .filter(|(_, p)| !p.vanished)
            .map(|(s, p)| {
                let end = p
                    .stopped
                    .as_ref()
                    .map_or(p.confirmed_before, |r| r.frame().min(p.confirmed_before));
                (s, p, end)
            })
            .collect();
        let mut first: Option<(u32, SeatId, SeatId)> = None;
        for (i, (sa, a, ea)) in held.iter().enumerate() {
            for (sb, b, eb) in &held[i + 1..] {
                let end = (*ea).min(*eb);
                let parted = a
                    .checksums
                    .range(..end)
                    .find(|(f, c)| b.checksums.get(f).is_some_and(|d| d != *c));
                if let Some((&f, _)) = parted {
                    if first.is_none_or(|(g, _, _)| f < g) {
                        first = Some((f, *sa, *sb));
                    }
                }
            }
        }
        first
    }

    /// The frames every remaining peer stepped.
    pub fn common_frames(&self) -> u32 {
        self.common().len() as u32
    }

    /// The frames every remaining peer stepped and confirmed.
    fn common(&self) -> Vec<u32> {
        let mut all = self.remaining();
        let Some(first) = all.next() else {
            return Vec::new();
        };
        let rest: Vec<&PeerRun> = all.collect();
        let confirmed = rest
            .iter()
            .map(|p| p.confirmed_before)
            .fold(first.confirmed_before, u32::min);
        first
            .checksums
            .keys()
            .filter(|f| **f < confirmed && rest.iter().all(|p| p.checksums.contains_key(f)))
            .copied()
            .collect()
    }

    /// The first frame some remaining peer's final checksum differs from
    /// another's, among the frames all stepped.
    pub fn first_disagreement(&self) -> Option<u32> {
        let first = &self.remaining().next()?.checksums;
        self.common()
            .into_iter()
            .find(|f| self.remaining().any(|p| p.checksums.get(f) != first.get(f)))
    }

    /// Every event `pick` selects, at any process (replaced ones too),
    /// with the seat and time.
    pub fn events<T>(&self, pick: impl Fn(&PeerEvent) -> Option<T>) -> Vec<(SeatId, Instant, T)> {
        let mut out = Vec::new();
        for (seat, p) in self.processes() {
            for (at, e) in &p.events {
                if let Some(t) = pick(e) {
                    out.push((seat, *at, t));
                }
            }
        }
        out
    }

    /// Stall ticks after warm-up, summed over the remaining peers.
    pub fn stalls_after_warmup(&self) -> u64 {
        self.remaining().map(|p| p.stalls_after_warmup).sum()
    }
}

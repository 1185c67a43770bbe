//! Counters a [`Session`](crate::Session) keeps about its traffic, its drops
//! and its playout, for tests, reports and the later CLI.
//!
//! Invariant: counters only grow (they wrap at `u64::MAX`, which no session
//! reaches); `delay_frames` (the current playout delay) and `pace_steps`
//! (the current pace) are not counters.

use crate::packet::{DecodeError, KIND_VALUES, Kind};
use crate::seq::SeqVerdict;

/// Packets and bytes of one kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KindCount {
    /// Datagrams.
    pub packets: u64,
    /// Bytes.
    pub bytes: u64,
}

/// Datagrams dropped, by reason.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Dropped {
    /// Zero-length datagrams.
    pub empty: u64,
    /// Longer than [`crate::packet::MAX_DATAGRAM`].
    pub oversized: u64,
    /// Truncated, out-of-range fields, bad padding, trailing bytes.
    pub malformed: u64,
    /// Decodable but not the canonical encoding.
    pub non_canonical: u64,
    /// Wrong protocol id or wire version.
    pub wrong_protocol: u64,
    /// Carrying a session token that is not this session's (stray or stale).
    pub wrong_token: u64,
    /// A sequence number already received (duplicated or replayed).
    pub duplicate: u64,
    /// A sequence number older than the replay window.
    pub too_old: u64,
    /// A sequence number further ahead than the peer could have sent since
    /// its last accepted packet (a corrupted or forged packet).
    pub too_far: u64,
    /// From a seat that is not a peer, or not from where it claims.
    pub unknown_sender: u64,
    /// A handshake whose input schema, seat count or tick differs.
    pub incompatible: u64,
    /// A handshake from a connected peer, after the start, that contradicts
    /// the agreed match (ignored: the match goes on).
    pub contradicting: u64,
    /// Well-formed but impossible in context (an ack of an unsent frame, a
    /// gap in inputs, an inconsistent resync chunk).
    pub invalid: u64,
    /// Resync traffic that belongs to no current transfer.
    pub unexpected: u64,
    /// From a peer that left or timed out, or after this session closed.
    pub from_gone: u64,
    /// A sealed datagram whose tag did not verify under the sender's pair
    /// key: forged, altered, or sealed for another endpoint.
    pub unauthenticated: u64,
}

impl Dropped {
    /// All drops.
    pub fn total(&self) -> u64 {
        self.empty
            + self.oversized
            + self.malformed
            + self.non_canonical
            + self.wrong_protocol
            + self.wrong_token
            + self.duplicate
            + self.too_old
            + self.too_far
            + self.contradicting
            + self.unknown_sender
            + self.incompatible
            + self.invalid
            + self.unexpected
            + self.from_gone
            + self.unauthenticated
    }

    /// Counts a decode failure.
    pub fn count(&mut self, e: &DecodeError) {
        match e {
            DecodeError::Empty => self.empty += 1,
            DecodeError::Oversized { .. } => self.oversized += 1,
            DecodeError::Bits(_) => self.malformed += 1,
            DecodeError::WrongProtocol { .. } | DecodeError::WrongVersion { .. } => {
                self.wrong_protocol += 1
            }
            DecodeError::NonCanonical => self.non_canonical += 1,
        }
    }

    /// Whether a packet with sequence verdict `v` may be taken: a fresh one
    /// may; a duplicate, too old or too far one is counted here and may not.
    pub fn admit(&mut self, v: SeqVerdict) -> bool {
        match v {
            SeqVerdict::Fresh => return true,
            SeqVerdict::Duplicate => self.duplicate += 1,
            SeqVerdict::TooOld => self.too_old += 1,
            SeqVerdict::TooFar => self.too_far += 1,
        }
        false
    }
}

/// A session's counters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    /// Sent, by [`Kind`] (index `kind as usize`).
    pub sent: [KindCount; KIND_VALUES],
    /// Datagrams handed to `handle_datagram`.
    pub received: KindCount,
    /// Datagrams dropped, by reason.
    pub dropped: Dropped,
    /// Ticks at which a due frame waited for a missing input (in rollback
    /// mode: for the prediction window to move).
    pub stall_ticks: u64,
    /// Frames released for the first time.
    pub frames_released: u64,
    /// Frames released again after loading a resync state.
    pub frames_resimulated: u64,
    /// Frames released for the first time with a predicted input (rollback
    /// mode).
    pub frames_predicted: u64,
    /// Rollbacks: predictions found wrong (and sync-test rollbacks).
    pub rollbacks: u64,
    /// Frames released again after a rollback.
    pub frames_rolled_back: u64,
    /// Bits of the input part (ack, count, frame, inputs and flags) of all
    /// inputs packets sent.
    pub input_bits: u64,
    /// Inputs carried by all inputs packets sent (redundant copies counted).
    pub inputs_carried: u64,
    /// The most inputs one packet carried.
    pub max_inputs_per_packet: u32,
    /// The delay now, in frames: the playout delay (lockstep) or the input
    /// delay (rollback).
    pub delay_frames: u32,
    /// The largest delay so far, in frames.
    pub max_delay_frames: u32,
    /// The pace now, in pace steps over the nominal tick (0: nominal; see
    /// [`crate::pace`]), not a counter.
    pub pace_steps: u32,
    /// States loaded from an authority.
    pub resyncs_completed: u64,
    /// State transfers served to drifted peers.
    pub resyncs_served: u64,
    /// Ticks the frame clock ran slow or fast to stay aligned.
    pub nudged_ticks: u64,
    /// Clock samples taken from timestamped round trips.
    pub clock_samples: u64,
}

impl Stats {
    /// Sent datagrams of every kind.
    pub fn sent_total(&self) -> KindCount {
        self.sent
            .iter()
            .fold(KindCount::default(), |a, k| KindCount {
                packets: a.packets + k.packets,
                bytes: a.bytes + k.bytes,
            })
    }

    /// Sent datagrams of `kind`.
    pub fn sent_of(&self, kind: Kind) -> KindCount {
        self.sent[kind as usize]
    }

    /// Bytes of all resync traffic sent (requests, chunks, acks).
    pub fn resync_bytes_sent(&self) -> u64 {
        [Kind::ResyncRequest, Kind::ResyncChunk, Kind::ResyncAck]
            .iter()
            .map(|k| self.sent[*k as usize].bytes)
            .sum()
    }
}

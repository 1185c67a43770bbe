//! Exact-state transfers for resync: packing a state (deflate when it makes
//! it smaller), cutting it into acked chunks on the authority's side, and
//! reassembling and verifying it on the drifted peer's side.
//!
//! Invariants:
//! - The transferred bytes are the authority's exact saved state after `frame`;
//!   the receiver accepts them only if their BLAKE3 checksum equals the one
//!   announced in chunk 0 (which is the authority's reported checksum for
//!   that frame, since a state's checksum is BLAKE3 of its snapshot bytes).
//!   A heal's payload carries, after the state, the authority's full
//!   checksums of the frames up to `frame` (the last one is the state's own,
//!   and must be).
//! - Every chunk of one transfer must agree on the transfer's header fields;
//!   a chunk that disagrees is refused with a typed [`ResyncError`].
//! - Decompression is bounded by the announced state length
//!   ([`crate::packet::MAX_STATE_BYTES`] at most): a deflate bomb fails
//!   instead of allocating.
//! - A chunk is resent after a retransmission timeout without an ack, or
//!   at once when an ack shows a chunk sent after it (or in the same burst,
//!   at a higher index) arrived while it did not (a fast retransmit, as
//!   TCP's selective acks do): under heavy loss a transfer then takes
//!   about one round trip per round of losses instead of one timeout.
//! - A chunk sent again goes out in one more copy than the last time (at
//!   most four): the path has lost it already, and a transfer is a few
//!   kilobytes, so copies are cheap next to another round trip (at 25%
//!   loss a chunk is still missing after four rounds once in 4 000).

use crate::packet::{CHUNK_BYTES, ResyncAck, ResyncChunk};
use crate::time::Instant;
use lockstep_fx::Checksum;

/// Why a transfer failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ResyncError {
    /// A chunk's header disagrees with earlier chunks of the transfer.
    #[error("chunk {index} disagrees with the transfer's header")]
    InconsistentChunk {
        /// The chunk's index.
        index: u16,
    },
    /// The payload did not decompress to the announced length.
    #[error("state does not decompress to its announced {expected} bytes")]
    Decompress {
        /// The announced length.
        expected: u32,
    },
    /// The reassembled state's checksum is not the announced one.
    #[error("state checksum does not match the announced one")]
    ChecksumMismatch,
}

/// A state ready to send: `(compressed, payload)`.
pub fn pack_state(state: &[u8]) -> (bool, Vec<u8>) {
    lockstep_codec::deflate::pack(state)
}

/// The state inside a payload, checked to be `state_len` bytes.
pub fn unpack_state(
    compressed: bool,
    payload: Vec<u8>,
    state_len: u32,
) -> Result<Vec<u8>, ResyncError> {
    lockstep_codec::deflate::unpack(compressed, &payload, state_len).map_err(|_| {
        ResyncError::Decompress {
            expected: state_len,
        }
    })
}

/// The authority's side of one transfer.
#[derive(Debug, Clone)]
pub struct Outgoing {
    /// The request id it answers.
    pub id: u8,
    /// The frame whose end state is sent.
    pub frame: u32,
    /// When the transfer began or an ack last arrived (a transfer that
    /// hears nothing for long is abandoned by its owner).
    pub heard: Instant,
    checksum: Checksum,
    checks: u16,
    compressed: bool,
    state_len: u32,
    payload: Vec<u8>,
    acked: Vec<bool>,
    sent_at: Vec<Option<Instant>>,
    /// Per chunk, how many times it has been sent (`sent_at` is cleared
    /// when a chunk is presumed lost).
    sends: Vec<u8>,
}

impl Outgoing {
    /// The most copies of one chunk sent at once.
    pub const MAX_COPIES: u8 = 4;

    /// A transfer of `state` (the snapshot after `frame`), answering request
    /// `id`, followed by `checks`: full checksums of the frames up to
    /// `frame`, oldest first (a heal's; empty otherwise, and at most
    /// `u16::MAX` of them, the newest kept).
    pub fn new(id: u8, frame: u32, state: &[u8], checks: &[Checksum], now: Instant) -> Outgoing {
        let checks = &checks[checks.len().saturating_sub(usize::from(u16::MAX))..];
        let mut unpacked = Vec::with_capacity(state.len() + 32 * checks.len());
        unpacked.extend_from_slice(state);
        for c in checks {
            unpacked.extend_from_slice(c.as_bytes());
        }
        let (compressed, payload) = pack_state(&unpacked);
        let count = ResyncChunk::count_for(payload.len() as u32) as usize;
        Outgoing {
            id,
            frame,
            heard: now,
            checksum: Checksum::of(state),
            checks: checks.len() as u16,
            compressed,
            state_len: unpacked.len() as u32,
            payload,
            acked: vec![false; count],
            sent_at: vec![None; count],
            sends: vec![0; count],
        }
    }

    /// Whether the receiver has acked every chunk.
    pub fn done(&self) -> bool {
        self.acked.iter().all(|a| *a)
    }

    /// Chunks never sent, presumed lost, or unacked for `rto_micros` since
    /// sent, at most `max` datagrams (a chunk sent `n` times before comes
    /// in `n + 1` copies, at most [`Outgoing::MAX_COPIES`]).
    pub fn due_chunks(&mut self, now: Instant, rto_micros: u64, max: u32) -> Vec<ResyncChunk> {
        let mut out = Vec::new();
        for i in 0..self.acked.len() {
            let copies = usize::from(self.sends[i].min(Self::MAX_COPIES - 1)) + 1;
            if out.len() + copies > max as usize {
                break;
            }
            let due = !self.acked[i] && self.sent_at[i].is_none_or(|t| now.since(t) >= rto_micros);
            if !due {
                continue;
            }
            self.sent_at[i] = Some(now);
            self.sends[i] = self.sends[i].saturating_add(1);
            let start = i * CHUNK_BYTES as usize;
            let len = ResyncChunk::len_of(self.payload.len() as u32, i as u32) as usize;
            let chunk = ResyncChunk {
                id: self.id,
                frame: self.frame as u16,
                compressed: self.compressed,
                state_len: self.state_len,
                payload_len: self.payload.len() as u32,
                index: i as u16,
                checksum: (i == 0).then_some(self.checksum),
                checks: if i == 0 { self.checks } else { 0 },
                data: self.payload[start..start + len].to_vec(),
            };
            out.extend(std::iter::repeat_n(chunk, copies));
        }
        out
    }

    /// Applies the receiver's selective ack, arrived at `now`.
    pub fn on_ack(&mut self, now: Instant, ack: &ResyncAck) {
        if ack.id != self.id {
            return;
        }
        self.heard = now;
        let below = (ack.next_missing as usize).min(self.acked.len());
        self.acked[..below].iter_mut().for_each(|a| *a = true);
        for bit in 0..32usize {
            if ack.received & (1 << bit) != 0 {
                if let Some(a) = self.acked.get_mut(below + 1 + bit) {
                    *a = true;
                }
            }
        }
        // From the highest index down: the newest send time of an acked
        // chunk above each one. An unacked chunk sent no later than that
        // was overtaken, so it is presumed lost and due again now.
        let mut overtaken_by: Option<Instant> = None;
        for i in (0..self.acked.len()).rev() {
            if self.acked[i] {
                overtaken_by = overtaken_by.max(self.sent_at[i]);
            } else if let (Some(sent), Some(later)) = (self.sent_at[i], overtaken_by) {
                if sent <= later {
                    self.sent_at[i] = None;
                }
            }
        }
    }
}

/// A verified transferred state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Received {
    /// The frame it is the state after.
    pub frame: u32,
    /// Its checksum (BLAKE3 of `state`).
    pub checksum: Checksum,
    /// The exact state.
    pub state: Vec<u8>,
    /// The sender's full checksums of the frames up to `frame`, oldest
    /// first (a heal's; empty otherwise).
    pub checks: Vec<Checksum>,
}

/// The drifted peer's side of one transfer.
#[derive(Debug, Clone)]
pub struct Incoming {
    /// The request id.
    pub id: u8,
    /// The frame, once a chunk has arrived.
    pub frame: Option<u32>,
    header: Option<(bool, u32, u32)>,
    checksum: Option<Checksum>,
    checks: u16,
    chunks: Vec<Option<Vec<u8>>>,
}

impl Incoming {
    /// Waiting for the first chunk of request `id`.
    pub fn new(id: u8) -> Incoming {
        Incoming {
            id,
            frame: None,
            header: None,
            checksum: None,
            checks: 0,
            chunks: Vec::new(),
        }
    }

    /// Stores a chunk whose frame the caller has restored to `frame`.
    pub fn on_chunk(&mut self, chunk: ResyncChunk, frame: u32) -> Result<(), ResyncError> {
        let header = (chunk.compressed, chunk.state_len, chunk.payload_len);
        match self.header {
            None => {
                self.header = Some(header);
                self.frame = Some(frame);
                self.chunks = vec![None; chunk.chunk_count() as usize];
            }
            Some(h) if h == header && self.frame == Some(frame) => {}
            Some(_) => return Err(ResyncError::InconsistentChunk { index: chunk.index }),
        }
        if let Some(c) = chunk.checksum {
            self.checksum = Some(c);
            self.checks = chunk.checks;
        }
        if let Some(slot) = self.chunks.get_mut(chunk.index as usize) {
            *slot = Some(chunk.data);
        }
        Ok(())
    }

    /// The ack describing what has arrived.
    pub fn ack(&self) -> ResyncAck {
        let next_missing = self
            .chunks
            .iter()
            .position(|c| c.is_none())
            .unwrap_or(self.chunks.len());
        let mut received = 0u32;
        for bit in 0..32usize {
            if self
                .chunks
                .get(next_missing + 1 + bit)
                .is_some_and(|c| c.is_some())
            {
                received |= 1 << bit;
            }
        }
        ResyncAck {
            id: self.id,
            next_missing: next_missing as u16,
            received,
        }
    }

    /// Once every chunk is in: the verified state, its frame and checksum,
    /// and the checksums that followed it.
    pub fn finish(&self) -> Option<Result<Received, ResyncError>> {
        let (compressed, state_len, _) = self.header?;
        if self.chunks.iter().any(|c| c.is_none()) {
            return None;
        }
        let frame = self.frame?;
        let checksum = self.checksum?;
        let payload: Vec<u8> = self.chunks.iter().flatten().flatten().copied().collect();
        Some(
            unpack_state(compressed, payload, state_len).and_then(|mut state| {
                // Chunk 0's decoder checked that the checksums leave a
                // state of at least one byte.
                let at = state.len().saturating_sub(32 * usize::from(self.checks));
                let checks: Vec<Checksum> = state[at..]
                    .chunks_exact(32)
                    .map(|c| Checksum::from_bytes(c.try_into().unwrap_or([0; 32])))
                    .collect();
                state.truncate(at);
                let whole = Checksum::of(&state) == checksum;
                if whole && checks.last().is_none_or(|c| *c == checksum) {
                    Ok(Received {
                        frame,
                        checksum,
                        state,
                        checks,
                    })
                } else {
                    Err(ResyncError::ChecksumMismatch)
                }
            }),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transfer_with_loss_and_selective_acks() {
        let state: Vec<u8> = (0..5000u32).map(|i| (i * 7 % 251) as u8).collect();
        let mut out = Outgoing::new(3, 77, &state, &[], Instant(0));
        let mut inc = Incoming::new(3);
        let mut now = Instant(0);
        let mut round = 0;
        while !out.done() {
            for (i, chunk) in out.due_chunks(now, 1000, 100).into_iter().enumerate() {
                // Drop every other chunk in the first round.
                if round == 0 && i % 2 == 1 {
                    continue;
                }
                inc.on_chunk(chunk, 77).unwrap();
            }
            out.on_ack(Instant(0), &inc.ack());
            now = now.plus(1000);
            round += 1;
        }
        let got = inc.finish().unwrap().unwrap();
        assert_eq!((got.frame, got.checksum), (77, Checksum::of(&state)));
        assert_eq!(got.state, state);
        assert!(got.checks.is_empty());
    }

    #[test]
    fn a_heal_carries_the_checksums_of_the_frames_before_the_state() {
        let state: Vec<u8> = (0..3000u32).map(|i| (i * 13 % 251) as u8).collect();
        let earlier: Vec<Checksum> = (0..40u8).map(|b| Checksum::from_bytes([b; 32])).collect();
        let checks: Vec<Checksum> = earlier
            .iter()
            .copied()
            .chain([Checksum::of(&state)])
            .collect();
        let mut out = Outgoing::new(9, 500, &state, &checks, Instant(0));
        let mut inc = Incoming::new(9);
        for chunk in out.due_chunks(Instant(0), 1000, 1000) {
            inc.on_chunk(chunk, 500).unwrap();
        }
        let got = inc.finish().unwrap().unwrap();
        assert_eq!(got.state, state);
        assert_eq!(got.checks, checks);
        // A last checksum that is not the state's is refused.
        let mut out = Outgoing::new(9, 500, &state, &earlier, Instant(0));
        let mut inc = Incoming::new(9);
        for chunk in out.due_chunks(Instant(0), 1000, 1000) {
            inc.on_chunk(chunk, 500).unwrap();
        }
        assert_eq!(inc.finish(), Some(Err(ResyncError::ChecksumMismatch)));
    }

    #[test]
    fn a_resent_chunk_goes_out_in_one_more_copy_each_time() {
        let mut x = 7u32;
        let state: Vec<u8> = (0..3000)
            .map(|_| {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                (x >> 24) as u8
            })
            .collect();
        let mut out = Outgoing::new(1, 5, &state, &[], Instant(0));
        let chunks = out.acked.len();
        assert!(chunks > 1);
        let mut copies = Vec::new();
        for round in 0..6u64 {
            // Nothing is ever acked: every round resends everything.
            let sent = out.due_chunks(Instant(round * 1000), 1000, 1000);
            copies.push(sent.iter().filter(|c| c.index == 0).count());
            assert_eq!(sent.len(), chunks * copies[round as usize]);
        }
        assert_eq!(copies, [1, 2, 3, 4, 4, 4]);
        // The budget counts copies, and a chunk's copies are not split.
        let mut out = Outgoing::new(1, 5, &state, &[], Instant(0));
        out.due_chunks(Instant(0), 1000, 1000);
        let sent = out.due_chunks(Instant(1000), 1000, 3);
        assert_eq!(sent.len(), 2);
        assert!(sent.iter().all(|c| c.index == 0));
    }

    #[test]
    fn incompressible_state_goes_raw() {
        let mut x = 1u32;
        let state: Vec<u8> = (0..300)
            .map(|_| {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                (x >> 16) as u8
            })
            .collect();
        let (compressed, payload) = pack_state(&state);
        assert!(!compressed);
        assert_eq!(payload, state);
        assert_eq!(
            unpack_state(true, vec![0xff; 10], 100),
            Err(ResyncError::Decompress { expected: 100 })
        );
    }
}

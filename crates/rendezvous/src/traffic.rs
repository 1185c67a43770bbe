//! [`Traffic`]: what a rendezvous or a relay received and what it sent
//! back, per kind of message received — the figures its promise is
//! measured by: no answer to a source is larger than what the source sent
//! ([`Traffic::answer_ratio_permille`] at most 1 000 for every kind).
//!
//! Invariants: counters only grow (saturating); a datagram that was not a
//! reach message is counted under [`Traffic::other`].

use crate::wire::Kind;

/// Datagrams and bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Count {
    /// Datagrams.
    pub datagrams: u64,
    /// Bytes.
    pub bytes: u64,
}

impl Count {
    fn add(&mut self, bytes: usize) {
        self.datagrams = self.datagrams.saturating_add(1);
        self.bytes = self.bytes.saturating_add(bytes as u64);
    }
}

/// Traffic by kind of message received. See the module documentation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Traffic {
    /// Received, by kind.
    pub received: [Count; 16],
    /// Sent back to the sender of a message of that kind.
    pub answered: [Count; 16],
    /// Sent to others because of a message of that kind (introductions,
    /// forwarded datagrams).
    pub caused: [Count; 16],
    /// Received that was no reach message, or did not decode.
    pub other: Count,
    /// Received and dropped without an answer, by kind.
    pub dropped: [u64; 16],
}

impl Traffic {
    pub(crate) fn received(&mut self, kind: Option<Kind>, bytes: usize) {
        match kind {
            Some(k) => self.received[k as usize].add(bytes),
            None => self.other.add(bytes),
        }
    }

    pub(crate) fn answered(&mut self, kind: Kind, bytes: usize) {
        self.answered[kind as usize].add(bytes);
    }

    pub(crate) fn caused(&mut self, kind: Kind, bytes: usize) {
        self.caused[kind as usize].add(bytes);
    }

    pub(crate) fn dropped(&mut self, kind: Kind) {
        self.dropped[kind as usize] = self.dropped[kind as usize].saturating_add(1);
    }

    /// Bytes answered per thousand bytes received, for messages of `kind`
    /// (`None` if none was received).
    pub fn answer_ratio_permille(&self, kind: Kind) -> Option<u64> {
        let r = self.received[kind as usize].bytes;
        (r > 0).then(|| self.answered[kind as usize].bytes.saturating_mul(1000) / r)
    }

    /// Bytes sent (answers and to others) per thousand received, for
    /// messages of `kind`.
    pub fn total_ratio_permille(&self, kind: Kind) -> Option<u64> {
        let r = self.received[kind as usize].bytes;
        let out = self.answered[kind as usize]
            .bytes
            .saturating_add(self.caused[kind as usize].bytes);
        (r > 0).then(|| out.saturating_mul(1000) / r)
    }
}

//! Carrying snapshot payloads in datagrams: [`split`] cuts one into
//! [`SnapshotPart`]s, [`Reassembly`] puts the parts back together on the
//! other side. The payloads are opaque here (the `lockstep-snapshot`
//! stream codes them against acked baselines); a payload is usable only
//! whole, so a lost part loses its snapshot, which the stream survives
//! (the next one is coded against an acked baseline).
//!
//! Invariants: a reassembly holds at most [`MAX_PENDING`] incomplete
//! snapshots (the oldest are dropped first) and never more bytes than
//! their announced parts allow; parts of another stream, of a snapshot
//! already completed or older than the newest completed, and parts that
//! contradict the ones held (another part count, another length) are
//! refused.

use std::collections::BTreeMap;

use crate::packet::{MAX_SNAPSHOT_PARTS, SNAPSHOT_PART_BYTES, SnapshotPart};
use crate::seq::{unwrap_frame, wire_frame};

/// Incomplete snapshots a receiver holds at most.
pub const MAX_PENDING: usize = 8;

/// The largest payload one snapshot can have.
pub const MAX_PAYLOAD: usize = (SNAPSHOT_PART_BYTES * MAX_SNAPSHOT_PARTS) as usize;

/// Cuts `payload`, the snapshot of `frame` in stream `stream`, into parts;
/// `None` if it is empty or larger than [`MAX_PAYLOAD`].
pub fn split(stream: u8, frame: u32, payload: &[u8]) -> Option<Vec<SnapshotPart>> {
    if payload.is_empty() || payload.len() > MAX_PAYLOAD {
        return None;
    }
    let chunks: Vec<&[u8]> = payload.chunks(SNAPSHOT_PART_BYTES as usize).collect();
    let parts = chunks.len() as u8;
    Some(
        chunks
            .into_iter()
            .enumerate()
            .map(|(i, data)| SnapshotPart {
                stream,
                frame: wire_frame(frame),
                index: i as u8,
                parts,
                data: data.to_vec(),
            })
            .collect(),
    )
}

/// Why a part was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartRefused {
    /// Another stream's.
    OtherStream,
    /// Its frame cannot be placed, or is not newer than the newest
    /// snapshot completed.
    Stale,
    /// It contradicts the parts held for its snapshot.
    Inconsistent,
}

/// One incomplete snapshot.
#[derive(Debug, Clone)]
struct Pending {
    parts: u8,
    got: Vec<Option<Vec<u8>>>,
}

/// Puts one stream's parts back together.
#[derive(Debug, Clone)]
pub struct Reassembly {
    stream: u8,
    pending: BTreeMap<u32, Pending>,
    newest: Option<u32>,
}

impl Reassembly {
    /// Reassembles stream `stream`.
    pub fn new(stream: u8) -> Reassembly {
        Reassembly {
            stream,
            pending: BTreeMap::new(),
            newest: None,
        }
    }

    /// The stream.
    pub fn stream(&self) -> u8 {
        self.stream
    }

    /// The newest snapshot completed.
    pub fn newest(&self) -> Option<u32> {
        self.newest
    }

    /// Takes `part`, restoring its 16-bit frame against `reference` (a
    /// frame near the sender's, e.g. the receiver's own current frame);
    /// gives the frame and the whole payload once its last part is in.
    pub fn on_part(
        &mut self,
        part: SnapshotPart,
        reference: u32,
    ) -> Result<Option<(u32, Vec<u8>)>, PartRefused> {
        if part.stream != self.stream {
            return Err(PartRefused::OtherStream);
        }
        let reference = self.newest.map_or(reference, |n| n.max(reference));
        let frame = unwrap_frame(part.frame, reference).ok_or(PartRefused::Stale)?;
        if self.newest.is_some_and(|n| frame <= n) {
            return Err(PartRefused::Stale);
        }
        let full = part.index + 1 < part.parts;
        if part.index >= part.parts
            || (full && part.data.len() != SNAPSHOT_PART_BYTES as usize)
            || part.data.is_empty()
        {
            return Err(PartRefused::Inconsistent);
        }
        let entry = self.pending.entry(frame).or_insert_with(|| Pending {
            parts: part.parts,
            got: vec![None; usize::from(part.parts)],
        });
        if entry.parts != part.parts {
            return Err(PartRefused::Inconsistent);
        }
        let slot = &mut entry.got[usize::from(part.index)];
        match slot {
            Some(held) if *held != part.data => return Err(PartRefused::Inconsistent),
            Some(_) => return Ok(None),
            None => *slot = Some(part.data),
        }
        if entry.got.iter().all(Option::is_some) {
            let done = self
                .pending
                .remove(&frame)
                .map(|p| p.got)
                .unwrap_or_default();
            let payload: Vec<u8> = done.into_iter().flatten().flatten().collect();
            self.newest = Some(frame);
            self.pending = self.pending.split_off(&(frame + 1));
            return Ok(Some((frame, payload)));
        }
        while self.pending.len() > MAX_PENDING {
            self.pending.pop_first();
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_in_any_order_make_the_payload_and_stale_ones_are_refused() {
        let payload: Vec<u8> = (0..2500u32).map(|i| i as u8).collect();
        let mut parts = split(3, 70_000, &payload).unwrap();
        assert_eq!(parts.len(), 3);
        parts.reverse();
        let mut r = Reassembly::new(3);
        assert_eq!(r.on_part(parts[0].clone(), 69_990), Ok(None));
        assert_eq!(r.on_part(parts[0].clone(), 69_990), Ok(None)); // a duplicate
        assert_eq!(r.on_part(parts[1].clone(), 69_990), Ok(None));
        assert_eq!(
            r.on_part(parts[2].clone(), 69_990),
            Ok(Some((70_000, payload)))
        );
        assert_eq!(r.on_part(parts[2].clone(), 69_990), Err(PartRefused::Stale));
        let other = split(4, 70_001, &[1, 2, 3]).unwrap();
        assert_eq!(
            r.on_part(other[0].clone(), 69_990),
            Err(PartRefused::OtherStream)
        );
    }

    #[test]
    fn too_large_or_empty_payloads_are_not_split() {
        assert!(split(0, 1, &[]).is_none());
        assert!(split(0, 1, &vec![0; MAX_PAYLOAD + 1]).is_none());
        assert_eq!(
            split(0, 1, &vec![0; MAX_PAYLOAD]).map(|p| p.len()),
            Some(64)
        );
    }
}

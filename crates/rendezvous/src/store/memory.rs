//! [`MemoryStore`]: the rendezvous's matches in its own memory — one
//! process's namespace of codes, bounded by a number of matches.
//!
//! Invariants: it holds at most `capacity` records (a new one past that is
//! refused, [`StoreError::Full`]); a code or record past its expiry is
//! treated as gone at once, and removed by the next sweep.

use std::collections::{BTreeMap, HashMap};

use super::{MatchRecord, Store, StoreError};
use crate::code::CodeId;
use crate::ids::MatchId;

/// How often a sweep is worth it, in microseconds.
const SWEEP_EVERY: u64 = 1_000_000;

/// The matches of one rendezvous process. See the module documentation.
#[derive(Debug, Clone)]
pub struct MemoryStore {
    capacity: usize,
    codes: HashMap<CodeId, (MatchId, u64)>,
    records: HashMap<MatchId, MatchRecord>,
    /// Expiries to check, by time (several records may share one).
    expiries: BTreeMap<(u64, MatchId), ()>,
    next_sweep: u64,
}

impl MemoryStore {
    /// A store of at most `capacity` matches.
    pub fn new(capacity: usize) -> MemoryStore {
        MemoryStore {
            capacity,
            codes: HashMap::new(),
            records: HashMap::new(),
            expiries: BTreeMap::new(),
            next_sweep: 0,
        }
    }

    /// Matches held now (expired ones included until the next sweep).
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// Whether it holds no match.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }
}

impl Store for MemoryStore {
    fn find(&mut self, now: u64, code: CodeId) -> Result<Option<MatchId>, StoreError> {
        Ok(self
            .codes
            .get(&code)
            .filter(|(_, expires)| *expires > now)
            .map(|(id, _)| *id))
    }

    fn file(
        &mut self,
        now: u64,
        code: CodeId,
        id: MatchId,
        expires: u64,
    ) -> Result<MatchId, StoreError> {
        match self.codes.get_mut(&code) {
            Some((holder, until)) if *until > now && *holder != id => Ok(*holder),
            Some(held) => {
                *held = (id, expires);
                Ok(id)
            }
            None => {
                if self.codes.len() >= self.capacity.saturating_mul(2) {
                    return Err(StoreError::Full);
                }
                self.codes.insert(code, (id, expires));
                Ok(id)
            }
        }
    }

    fn change(
        &mut self,
        now: u64,
        id: MatchId,
        change: &mut dyn FnMut(&mut Option<MatchRecord>) -> bool,
    ) -> Result<(), StoreError> {
        let mut record = self.records.get(&id).filter(|r| r.expires > now).cloned();
        let existed = record.is_some();
        if !change(&mut record) {
            return Ok(());
        }
        match record {
            Some(r) => {
                if !existed
                    && self.records.len() >= self.capacity
                    && !self.records.contains_key(&id)
                {
                    return Err(StoreError::Full);
                }
                self.expiries.insert((r.expires, id), ());
                self.records.insert(id, r);
            }
            None => {
                self.records.remove(&id);
            }
        }
        Ok(())
    }

    fn sweep(&mut self, now: u64) {
        self.next_sweep = now.saturating_add(SWEEP_EVERY);
        while let Some((&(at, id), ())) = self.expiries.first_key_value() {
            if at > now {
                break;
            }
            self.expiries.remove(&(at, id));
            if self.records.get(&id).is_some_and(|r| r.expires <= now) {
                self.records.remove(&id);
            }
        }
        self.codes.retain(|_, (_, expires)| *expires > now);
    }

    fn next_sweep(&self) -> Option<u64> {
        Some(self.next_sweep)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::tests::{a_store_files_finds_changes_and_expires, record};

    #[test]
    fn the_memory_store_keeps_the_contract() {
        a_store_files_finds_changes_and_expires(&mut MemoryStore::new(16), 0);
    }

    #[test]
    fn the_memory_store_is_bounded() {
        let mut s = MemoryStore::new(1);
        s.change(0, MatchId(1), &mut |r| {
            *r = Some(record(1, 100));
            true
        })
        .unwrap();
        let refused = s.change(0, MatchId(2), &mut |r| {
            *r = Some(record(2, 100));
            true
        });
        assert_eq!(refused, Err(StoreError::Full));
        s.sweep(100);
        assert!(s.is_empty());
        s.change(100, MatchId(2), &mut |r| {
            *r = Some(record(2, 200));
            true
        })
        .unwrap();
        assert_eq!(s.len(), 1);
    }
}

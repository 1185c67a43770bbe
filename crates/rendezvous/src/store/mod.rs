//! Where the rendezvous keeps its matches: the [`Store`] trait, the
//! [`MatchRecord`] it keeps per match, and its two homes: [`MemoryStore`]
//! (one process's namespace of codes, the default) and, with the `redis`
//! feature, `RedisStore` (several rendezvous processes sharing one
//! namespace of codes through a Redis server).
//!
//! A store does no thinking: it files codes, finds them, and changes one
//! match's record atomically (the rendezvous decides what the change is).
//! Everything it holds expires: a code and its record live until the time
//! the host's last refresh set, so a host that goes away takes its codes
//! with it.
//!
//! Invariants: [`Store::change`] runs its closure on the newest record and
//! stores what it leaves, or nothing, as one step (another rendezvous
//! sharing the store never sees half of it); a record holds at most
//! [`MAX_MEMBERS`] members; a record's encoding decodes to the same record.

use std::net::SocketAddr;

use lockstep_fx::{DecodeError, StateReader, StateWriter};

use crate::code::CodeId;
use crate::ids::{MatchId, MatchKey, MemberId, Owner, Role};
use crate::message::{Entry, MAX_CANDIDATES, MAX_CODES};
use crate::wire::{read_address, read_array, write_address};

mod memory;
#[cfg(feature = "redis")]
pub(crate) mod redis;

pub use memory::MemoryStore;
#[cfg(feature = "redis")]
pub use redis::RedisStore;

/// Members a match holds at once (a member silent for longer than the
/// rendezvous's `member_idle` makes room).
pub const MAX_MEMBERS: usize = 64;

/// A member as the store keeps it: its entry, and when it was last heard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// What the others are told.
    pub entry: Entry,
    /// When the rendezvous last heard it, in microseconds since the UNIX
    /// epoch.
    pub heard: u64,
}

/// One registered match. See the module documentation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatchRecord {
    /// Its id.
    pub id: MatchId,
    /// The key its members tag probes with.
    pub key: MatchKey,
    /// The host's registration secret.
    pub owner: Owner,
    /// Its relay, if the rendezvous hands one out.
    pub relay: Option<SocketAddr>,
    /// Its codes: the seat code's id first, the spectator code's second.
    pub codes: Vec<CodeId>,
    /// When it expires unless refreshed, in microseconds since the UNIX
    /// epoch.
    pub expires: u64,
    /// Its change counter: every change to a member's entry takes the next
    /// value.
    pub seq: u16,
    /// The number the next member gets.
    pub next_member: u16,
    /// Its members, the host's first.
    pub members: Vec<Member>,
}

/// Why a store failed (its server, not the request).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// The store holds as many matches as it may.
    #[error("the store is full")]
    Full,
    /// The store's server failed or could not be reached.
    #[error("the store failed: {0}")]
    Server(String),
    /// A record in the store does not decode.
    #[error("a record in the store does not decode: {0}")]
    Corrupt(DecodeError),
}

/// Where the rendezvous keeps its matches. See the module documentation.
pub trait Store {
    /// The match filed under `code` at `now`, if any.
    fn find(&mut self, now: u64, code: CodeId) -> Result<Option<MatchId>, StoreError>;

    /// Files `code` under `id` until `expires` unless another match holds
    /// it, and gives the match that holds it now.
    fn file(
        &mut self,
        now: u64,
        code: CodeId,
        id: MatchId,
        expires: u64,
    ) -> Result<MatchId, StoreError>;

    /// Runs `change` on match `id`'s record (`None`: no such match) as one
    /// step; if it returns `true`, what it left in the record is stored (a
    /// `None` left removes it), until the record's `expires`.
    fn change(
        &mut self,
        now: u64,
        id: MatchId,
        change: &mut dyn FnMut(&mut Option<MatchRecord>) -> bool,
    ) -> Result<(), StoreError>;

    /// Forgets what expired by `now` (a store whose server expires keys
    /// itself does nothing).
    fn sweep(&mut self, now: u64);

    /// When [`Store::sweep`] is next worth calling.
    fn next_sweep(&self) -> Option<u64>;
}

impl MatchRecord {
    /// The member `member`, if it is in the match.
    pub fn member_mut(&mut self, member: MemberId) -> Option<&mut Member> {
        self.members.iter_mut().find(|m| m.entry.member == member)
    }

    /// The next change number, taken.
    pub fn bump(&mut self) -> u16 {
        self.seq = self.seq.wrapping_add(1);
        self.seq
    }

    /// The role a code gives: the first code is the seat code.
    pub fn role_of(&self, code: CodeId) -> Option<Role> {
        match self.codes.iter().position(|c| *c == code)? {
            0 => Some(Role::Seat),
            _ => Some(Role::Spectator),
        }
    }

    /// Its bytes in a store.
    pub fn encode(&self) -> Vec<u8> {
        let mut w = StateWriter::buffer();
        w.write_u8(RECORD_VERSION);
        w.write_u64(self.id.0);
        w.write_raw(&self.key.0);
        w.write_raw(&self.owner.0);
        w.write_bool(self.relay.is_some());
        if let Some(r) = self.relay {
            write_address(&mut w, r);
        }
        w.write_u8(self.codes.len() as u8);
        for c in &self.codes {
            w.write_u32(c.value());
        }
        w.write_u64(self.expires);
        w.write_u16(self.seq);
        w.write_u16(self.next_member);
        w.write_u8(self.members.len() as u8);
        for m in &self.members {
            w.write_u16(m.entry.member.0);
            w.write_u8(m.entry.role.to_wire());
            w.write_u16(m.entry.seq);
            w.write_u8(m.entry.candidates.len() as u8);
            for c in &m.entry.candidates {
                write_address(&mut w, *c);
            }
            w.write_u64(m.heard);
        }
        w.into_inner()
    }

    /// Reads a record written by [`MatchRecord::encode`].
    pub fn decode(bytes: &[u8]) -> Result<MatchRecord, DecodeError> {
        let mut r = StateReader::new(bytes);
        let invalid = |r: &StateReader<'_>, what| DecodeError::Invalid {
            offset: r.offset(),
            what,
        };
        if r.read_u8()? != RECORD_VERSION {
            return Err(invalid(&r, "record version"));
        }
        let id = MatchId(r.read_u64()?);
        let key = MatchKey(read_array(&mut r)?);
        let owner = Owner(read_array(&mut r)?);
        let relay = if r.read_bool()? {
            Some(read_address(&mut r)?)
        } else {
            None
        };
        let n = usize::from(r.read_u8()?);
        if n > MAX_CODES {
            return Err(invalid(&r, "codes"));
        }
        let mut codes = Vec::with_capacity(n);
        for _ in 0..n {
            codes.push(CodeId::new(r.read_u32()?).ok_or_else(|| invalid(&r, "code"))?);
        }
        let expires = r.read_u64()?;
        let seq = r.read_u16()?;
        let next_member = r.read_u16()?;
        let n = usize::from(r.read_u8()?);
        if n > MAX_MEMBERS {
            return Err(invalid(&r, "members"));
        }
        let mut members = Vec::with_capacity(n);
        for _ in 0..n {
            let member = MemberId(r.read_u16()?);
            let role = Role::from_wire(r.read_u8()?).ok_or_else(|| invalid(&r, "role"))?;
            let seq = r.read_u16()?;
            let k = usize::from(r.read_u8()?);
            if !(1..=MAX_CANDIDATES).contains(&k) {
                return Err(invalid(&r, "candidates"));
            }
            let candidates = (0..k)
                .map(|_| read_address(&mut r))
                .collect::<Result<Vec<_>, _>>()?;
            let heard = r.read_u64()?;
            members.push(Member {
                entry: Entry {
                    member,
                    role,
                    seq,
                    candidates,
                },
                heard,
            });
        }
        r.finish()?;
        Ok(MatchRecord {
            id,
            key,
            owner,
            relay,
            codes,
            expires,
            seq,
            next_member,
            members,
        })
    }
}

/// The version of a record's encoding in a store.
const RECORD_VERSION: u8 = 1;

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn record(id: u64, expires: u64) -> MatchRecord {
        MatchRecord {
            id: MatchId(id),
            key: MatchKey([1; 16]),
            owner: Owner([2; 16]),
            relay: Some("10.0.0.9:7701".parse().unwrap()),
            codes: vec![CodeId::new(5).unwrap(), CodeId::new(6).unwrap()],
            expires,
            seq: 3,
            next_member: 2,
            members: vec![Member {
                entry: Entry {
                    member: MemberId(0),
                    role: Role::Host,
                    seq: 1,
                    candidates: vec!["10.0.0.1:7000".parse().unwrap()],
                },
                heard: 9,
            }],
        }
    }

    #[test]
    fn a_record_round_trips_and_refuses_damage() {
        let r = record(7, 100);
        let bytes = r.encode();
        assert_eq!(MatchRecord::decode(&bytes), Ok(r));
        for cut in 0..bytes.len() {
            assert!(MatchRecord::decode(&bytes[..cut]).is_err());
        }
        let mut extra = bytes.clone();
        extra.push(0);
        assert!(MatchRecord::decode(&extra).is_err());
    }

    /// The behaviour every store must have: run against each, its clock
    /// starting at `t0` microseconds since the UNIX epoch.
    pub(crate) fn a_store_files_finds_changes_and_expires(store: &mut dyn Store, t0: u64) {
        let code = CodeId::new(5).unwrap();
        let other = CodeId::new(6).unwrap();
        let s = |secs: u64| t0 + secs * 1_000_000;
        assert_eq!(store.find(s(0), code), Ok(None));
        assert_eq!(store.file(s(0), code, MatchId(1), s(10)), Ok(MatchId(1)));
        // A second match cannot take the code; the first refreshes it.
        assert_eq!(store.file(s(0), code, MatchId(2), s(10)), Ok(MatchId(1)));
        assert_eq!(store.file(s(1), code, MatchId(1), s(30)), Ok(MatchId(1)));
        assert_eq!(store.find(s(20), code), Ok(Some(MatchId(1))));
        assert_eq!(store.find(s(20), other), Ok(None));
        // Records: created, changed, left alone, expired.
        store
            .change(s(0), MatchId(1), &mut |r| {
                assert!(r.is_none());
                *r = Some(record(1, s(30)));
                true
            })
            .unwrap();
        store
            .change(s(1), MatchId(1), &mut |r| {
                let rec = r.as_mut().unwrap();
                rec.bump();
                true
            })
            .unwrap();
        store
            .change(s(2), MatchId(1), &mut |r| {
                r.as_mut().unwrap().seq = 99;
                false
            })
            .unwrap();
        let mut seen = None;
        store
            .change(s(3), MatchId(1), &mut |r| {
                seen = r.clone();
                false
            })
            .unwrap();
        assert_eq!(seen.map(|r| r.seq), Some(4));
        store.sweep(s(30));
        let mut gone = false;
        store
            .change(s(30), MatchId(1), &mut |r| {
                gone = r.is_none();
                false
            })
            .unwrap();
        assert!(gone, "the record expired");
        assert_eq!(store.find(s(30), code), Ok(None));
        // Once expired, the code is free for another match.
        assert_eq!(store.file(s(30), code, MatchId(2), s(90)), Ok(MatchId(2)));
        // A record removed is gone.
        store
            .change(s(31), MatchId(2), &mut |r| {
                *r = Some(record(2, s(90)));
                true
            })
            .unwrap();
        store
            .change(s(32), MatchId(2), &mut |r| {
                *r = None;
                true
            })
            .unwrap();
        let mut gone = false;
        store
            .change(s(33), MatchId(2), &mut |r| {
                gone = r.is_none();
                false
            })
            .unwrap();
        assert!(gone, "the record was removed");
    }
}

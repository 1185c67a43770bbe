//! The reach messages ([`Message`]) and their encoding: what a member says
//! to the rendezvous (`Register`, `Lookup`, `Poll`) and hears back
//! (`Answer`, `Introduce`, `RendezvousRefused`), what it says to the relay
//! (`Allocate`, `Send`) and hears back (`RelayChallenge`, `Allocated`,
//! `Deliver`, `RelayRefused`), and the probes members check direct paths
//! with (`Probe`, `ProbeAck`). Drawn byte by byte in `protocol/SPEC.md` §8.
//!
//! Sizes are chosen so that no answer is larger than its request: the
//! three rendezvous requests are padded to [`REQUEST_BYTES`] and every
//! answer fits below it (checked by a test over the largest answers); an
//! `Allocate` is longer than any relay answer; a `ProbeAck` is as long as
//! its `Probe`; a `Deliver` as long as its `Send`.
//!
//! Invariants: `decode(encode(m)) == m`; decoding untrusted bytes never
//! panics, every count read is bounded before anything is allocated for
//! it, padding is zeros, and no byte may follow the last field.

use std::net::SocketAddr;

use lockstep_fx::{DecodeError, Sink, StateReader, StateWriter};

use crate::code::CodeId;
use crate::ids::{MatchId, MatchKey, MemberId, Owner, Role};
use crate::ticket::Ticket;
use crate::wire::{
    DATA_HEADER_BYTES, Kind, MAX_FRAME, REQUEST_BYTES, VERSION, WireError, read_address,
    read_array, write_address,
};

/// Codes a match is filed under: its seat code and its spectator code.
pub const MAX_CODES: usize = 2;
/// Local addresses a process offers besides the one the rendezvous sees.
pub const MAX_LOCALS: usize = 4;
/// Addresses of one member: the observed one and its local ones.
pub const MAX_CANDIDATES: usize = 1 + MAX_LOCALS;
/// Members an answer or an introduction carries.
pub const MAX_ENTRIES: usize = 3;
/// Bytes of a probe's tag.
pub const TAG_BYTES: usize = 8;
/// Bytes of the relay's cookie.
pub const COOKIE_BYTES: usize = 20;

/// A member as the rendezvous describes it to the others: where it may be
/// reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Who.
    pub member: MemberId,
    /// Which door it came through.
    pub role: Role,
    /// The match's change counter when this entry last changed.
    pub seq: u16,
    /// Its addresses: the one the rendezvous saw first, then the local
    /// ones it offered (1 to [`MAX_CANDIDATES`]).
    pub candidates: Vec<SocketAddr>,
}

/// A host's registration (or refresh) of its match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Register {
    /// The host's registration secret.
    pub owner: Owner,
    /// The codes' public parts (1 to [`MAX_CODES`]): the first is the seat
    /// code's, a second the spectator code's.
    pub codes: Vec<CodeId>,
    /// The host's local addresses (up to [`MAX_LOCALS`]).
    pub locals: Vec<SocketAddr>,
    /// The newest change the host has seen (entries after it come back).
    pub after: u16,
}

/// A request for the match filed under `code`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lookup {
    /// The code's public part.
    pub code: CodeId,
    /// The asker's local addresses (up to [`MAX_LOCALS`]).
    pub locals: Vec<SocketAddr>,
}

/// What the rendezvous answers a member: its place in the match and what
/// changed in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The member's ticket: its match, its number, its relay.
    pub ticket: Ticket,
    /// Its role.
    pub role: Role,
    /// The match's key for probes.
    pub key: MatchKey,
    /// Where the rendezvous saw this request come from.
    pub observed: SocketAddr,
    /// Seconds the registration lives without a refresh.
    pub ttl_secs: u16,
    /// The newest change these entries hold (ask after it next).
    pub next: u16,
    /// Whether more changes wait (ask again at once).
    pub more: bool,
    /// Members that changed after the change the request named.
    pub entries: Vec<Entry>,
}

/// Why the rendezvous refuses a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// No match is filed under the code (or it expired).
    #[error("no match is filed under code {0}")]
    Unknown(CodeId),
    /// Another host's match is filed under the code: draw another.
    #[error("code {0} is another match's")]
    Taken(CodeId),
    /// The match has as many members as it may.
    #[error("the match has all the members it may")]
    Full,
    /// Too many requests from this source, or the rendezvous is full: ask
    /// again later.
    #[error("the rendezvous is busy")]
    Busy,
    /// The ticket does not verify or expired.
    #[error("the ticket is not good here")]
    BadTicket,
    /// The rendezvous speaks another version of the format.
    #[error("the rendezvous speaks reach version {0}")]
    Version(u8),
    /// The member's match is no longer filed (its host stopped refreshing
    /// it), or the member made room for others.
    #[error("the match is no longer filed here")]
    Gone,
}

/// Why the relay refuses a request or a datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RelayRefusal {
    /// The relay holds no place for this address: allocate (again).
    #[error("no allocation for this address")]
    NoAllocation,
    /// The ticket does not verify, names another relay or expired.
    #[error("the ticket is not good at this relay")]
    BadTicket,
    /// The relay holds as many allocations (or members) as it may.
    #[error("the relay is full")]
    Full,
    /// The relay speaks another version of the format.
    #[error("the relay speaks reach version {0}")]
    Version(u8),
}

/// A probe of a direct path, or its answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Probe {
    /// Who sends it.
    pub from: MemberId,
    /// Who it is for.
    pub to: MemberId,
    /// The prober's number for it (an answer echoes it).
    pub nonce: u32,
    /// A probe: the address it was sent to; an answer: the address the
    /// probe came from.
    pub seen: SocketAddr,
    /// The tag under the match's key ([`MatchKey::tag`]).
    pub tag: [u8; TAG_BYTES],
}

/// A reach message. See the module documentation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message<'a> {
    /// A probe of a direct path.
    Probe(Probe),
    /// Its answer, from the address the probe reached.
    ProbeAck(Probe),
    /// A host files (or refreshes) its match.
    Register(Register),
    /// A process asks for the match under a code.
    Lookup(Lookup),
    /// A member asks what changed.
    Poll {
        /// Its ticket.
        ticket: Ticket,
        /// The newest change it has seen.
        after: u16,
    },
    /// The rendezvous's answer.
    Answer(Answer),
    /// Members that joined or moved, pushed to the others.
    Introduce {
        /// Their match.
        match_id: MatchId,
        /// The newest change these entries hold.
        next: u16,
        /// The members.
        entries: Vec<Entry>,
    },
    /// The rendezvous refuses.
    RendezvousRefused(Refusal),
    /// A member asks the relay for its place (or keeps it).
    Allocate {
        /// Its ticket.
        ticket: Ticket,
        /// The relay's cookie for this address, once challenged.
        cookie: Option<[u8; COOKIE_BYTES]>,
    },
    /// The relay's cookie for an address it has not proven.
    RelayChallenge {
        /// Send it back in the next `Allocate`.
        cookie: [u8; COOKIE_BYTES],
    },
    /// The relay holds the member's place.
    Allocated {
        /// The address the relay sees the member at.
        observed: SocketAddr,
        /// Seconds it keeps the place without hearing from the member.
        idle_secs: u16,
    },
    /// A datagram for member `to`.
    Send {
        /// The member it is for.
        to: MemberId,
        /// The datagram, never read.
        payload: &'a [u8],
    },
    /// A datagram from member `from`.
    Deliver {
        /// The member it came from.
        from: MemberId,
        /// The datagram, as it was sent.
        payload: &'a [u8],
    },
    /// The relay refuses.
    RelayRefused(RelayRefusal),
}

impl MatchKey {
    /// The tag of a probe (`ack`: of its answer) with these fields.
    pub fn tag(
        &self,
        ack: bool,
        from: MemberId,
        to: MemberId,
        nonce: u32,
        seen: SocketAddr,
    ) -> [u8; TAG_BYTES] {
        let key = blake3::derive_key("lockstep reach v1 2026 probe", &self.0);
        let mut w = StateWriter::buffer();
        w.write_bool(ack);
        w.write_u16(from.0);
        w.write_u16(to.0);
        w.write_u32(nonce);
        write_address(&mut w, seen);
        let hash = blake3::keyed_hash(&key, w.bytes());
        let mut tag = [0u8; TAG_BYTES];
        tag.copy_from_slice(&hash.as_bytes()[..TAG_BYTES]);
        tag
    }

    /// Whether `probe`'s tag is this key's (`ack`: as an answer).
    pub fn verifies(&self, ack: bool, probe: &Probe) -> bool {
        let tag = self.tag(ack, probe.from, probe.to, probe.nonce, probe.seen);
        tag.iter()
            .zip(probe.tag.iter())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
    }
}

impl Probe {
    /// A probe (or an answer) tagged under `key`.
    pub fn tagged(
        key: &MatchKey,
        ack: bool,
        from: MemberId,
        to: MemberId,
        nonce: u32,
        seen: SocketAddr,
    ) -> Probe {
        Probe {
            from,
            to,
            nonce,
            seen,
            tag: key.tag(ack, from, to, nonce, seen),
        }
    }
}

fn write_addresses<S: Sink>(w: &mut StateWriter<S>, addrs: &[SocketAddr]) {
    w.write_u8(addrs.len() as u8);
    for a in addrs {
        write_address(w, *a);
    }
}

fn read_addresses(
    r: &mut StateReader<'_>,
    kind: Kind,
    min: usize,
    max: usize,
) -> Result<Vec<SocketAddr>, WireError> {
    let n = usize::from(r.read_u8().map_err(|e| malformed(kind, e))?);
    if n < min || n > max {
        return Err(WireError::Bound {
            kind,
            what: "addresses",
        });
    }
    (0..n)
        .map(|_| read_address(r).map_err(|e| malformed(kind, e)))
        .collect()
}

fn write_entries<S: Sink>(w: &mut StateWriter<S>, entries: &[Entry]) {
    w.write_u8(entries.len() as u8);
    for e in entries {
        w.write_u16(e.member.0);
        w.write_u8(e.role.to_wire());
        w.write_u16(e.seq);
        write_addresses(w, &e.candidates);
    }
}

fn read_entries(r: &mut StateReader<'_>, kind: Kind) -> Result<Vec<Entry>, WireError> {
    let n = usize::from(r.read_u8().map_err(|e| malformed(kind, e))?);
    if n > MAX_ENTRIES {
        return Err(WireError::Bound {
            kind,
            what: "entries",
        });
    }
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let member = MemberId(r.read_u16().map_err(|e| malformed(kind, e))?);
        let role = read_role(r, kind)?;
        let seq = r.read_u16().map_err(|e| malformed(kind, e))?;
        let candidates = read_addresses(r, kind, 1, MAX_CANDIDATES)?;
        out.push(Entry {
            member,
            role,
            seq,
            candidates,
        });
    }
    Ok(out)
}

fn read_role(r: &mut StateReader<'_>, kind: Kind) -> Result<Role, WireError> {
    let at = r.offset();
    let v = r.read_u8().map_err(|e| malformed(kind, e))?;
    Role::from_wire(v).ok_or(WireError::Malformed {
        kind,
        source: DecodeError::Invalid {
            offset: at,
            what: "role",
        },
    })
}

fn malformed(kind: Kind, source: DecodeError) -> WireError {
    WireError::Malformed { kind, source }
}

fn write_probe<S: Sink>(w: &mut StateWriter<S>, p: &Probe) {
    w.write_u16(p.from.0);
    w.write_u16(p.to.0);
    w.write_u32(p.nonce);
    write_address(w, p.seen);
    w.write_raw(&p.tag);
}

fn read_probe(r: &mut StateReader<'_>) -> Result<Probe, DecodeError> {
    Ok(Probe {
        from: MemberId(r.read_u16()?),
        to: MemberId(r.read_u16()?),
        nonce: r.read_u32()?,
        seen: read_address(r)?,
        tag: read_array(r)?,
    })
}

fn refusal_code(r: Refusal) -> (u8, u32) {
    match r {
        Refusal::Unknown(c) => (0, c.value()),
        Refusal::Taken(c) => (1, c.value()),
        Refusal::Full => (2, 0),
        Refusal::Busy => (3, 0),
        Refusal::BadTicket => (4, 0),
        Refusal::Version(v) => (5, u32::from(v)),
        Refusal::Gone => (6, 0),
    }
}

fn relay_refusal_code(r: RelayRefusal) -> u8 {
    match r {
        RelayRefusal::NoAllocation => 0,
        RelayRefusal::BadTicket => 1,
        RelayRefusal::Full => 2,
        RelayRefusal::Version(_) => 3,
    }
}

impl Message<'_> {
    /// The message's kind.
    pub fn kind(&self) -> Kind {
        match self {
            Message::Probe(_) => Kind::Probe,
            Message::ProbeAck(_) => Kind::ProbeAck,
            Message::Register(_) => Kind::Register,
            Message::Lookup(_) => Kind::Lookup,
            Message::Poll { .. } => Kind::Poll,
            Message::Answer(_) => Kind::Answer,
            Message::Introduce { .. } => Kind::Introduce,
            Message::RendezvousRefused(_) => Kind::RendezvousRefused,
            Message::Allocate { .. } => Kind::Allocate,
            Message::RelayChallenge { .. } => Kind::RelayChallenge,
            Message::Allocated { .. } => Kind::Allocated,
            Message::Send { .. } => Kind::Send,
            Message::Deliver { .. } => Kind::Deliver,
            Message::RelayRefused(_) => Kind::RelayRefused,
        }
    }

    /// Its bytes. Counts beyond the format's bounds are cut to them.
    pub fn encode(&self) -> Vec<u8> {
        let kind = self.kind();
        if let Message::Send { to: m, payload } | Message::Deliver { from: m, payload } = self {
            let mut out = Vec::with_capacity(DATA_HEADER_BYTES + payload.len());
            out.push(kind.byte());
            out.extend_from_slice(&m.0.to_le_bytes());
            out.extend_from_slice(payload);
            return out;
        }
        let mut w = StateWriter::buffer();
        w.write_u8(kind.byte());
        w.write_u8(VERSION);
        let mut pad = false;
        match self {
            Message::Probe(p) | Message::ProbeAck(p) => write_probe(&mut w, p),
            Message::Register(reg) => {
                w.write_raw(&reg.owner.0);
                let codes = &reg.codes[..reg.codes.len().min(MAX_CODES)];
                w.write_u8(codes.len() as u8);
                for c in codes {
                    w.write_u32(c.value());
                }
                write_addresses(&mut w, &reg.locals[..reg.locals.len().min(MAX_LOCALS)]);
                w.write_u16(reg.after);
                pad = true;
            }
            Message::Lookup(l) => {
                w.write_u32(l.code.value());
                write_addresses(&mut w, &l.locals[..l.locals.len().min(MAX_LOCALS)]);
                pad = true;
            }
            Message::Poll { ticket, after } => {
                ticket.write(&mut w);
                w.write_u16(*after);
                pad = true;
            }
            Message::Answer(a) => {
                a.ticket.write(&mut w);
                w.write_u8(a.role.to_wire());
                w.write_raw(&a.key.0);
                write_address(&mut w, a.observed);
                w.write_u16(a.ttl_secs);
                w.write_u16(a.next);
                w.write_bool(a.more);
                write_entries(&mut w, &a.entries[..a.entries.len().min(MAX_ENTRIES)]);
            }
            Message::Introduce {
                match_id,
                next,
                entries,
            } => {
                w.write_u64(match_id.0);
                w.write_u16(*next);
                write_entries(&mut w, &entries[..entries.len().min(MAX_ENTRIES)]);
            }
            Message::RendezvousRefused(r) => {
                let (code, value) = refusal_code(*r);
                w.write_u8(code);
                match r {
                    Refusal::Unknown(_) | Refusal::Taken(_) => w.write_u32(value),
                    Refusal::Version(v) => w.write_u8(*v),
                    _ => {}
                }
            }
            Message::Allocate { ticket, cookie } => {
                ticket.write(&mut w);
                w.write_bool(cookie.is_some());
                if let Some(c) = cookie {
                    w.write_raw(c);
                }
            }
            Message::RelayChallenge { cookie } => w.write_raw(cookie),
            Message::Allocated {
                observed,
                idle_secs,
            } => {
                write_address(&mut w, *observed);
                w.write_u16(*idle_secs);
            }
            Message::RelayRefused(r) => {
                w.write_u8(relay_refusal_code(*r));
                if let RelayRefusal::Version(v) = r {
                    w.write_u8(*v);
                }
            }
            Message::Send { .. } | Message::Deliver { .. } => unreachable!("framed above"),
        }
        let mut bytes = w.into_inner();
        if pad && bytes.len() < REQUEST_BYTES {
            bytes.resize(REQUEST_BYTES, 0);
        }
        bytes
    }
}

impl<'a> Message<'a> {
    /// Reads a message from untrusted bytes.
    pub fn decode(bytes: &'a [u8]) -> Result<Message<'a>, WireError> {
        let first = *bytes.first().ok_or(WireError::NotReach)?;
        let kind = Kind::from_byte(first).ok_or(WireError::NotReach)?;
        if let Kind::Send | Kind::Deliver = kind {
            if bytes.len() < DATA_HEADER_BYTES {
                return Err(malformed(
                    kind,
                    DecodeError::UnexpectedEnd {
                        offset: bytes.len() as u64,
                        needed: (DATA_HEADER_BYTES - bytes.len()) as u64,
                    },
                ));
            }
            if bytes.len() > MAX_FRAME {
                return Err(WireError::Bound {
                    kind,
                    what: "payload",
                });
            }
            let member = MemberId(u16::from_le_bytes([bytes[1], bytes[2]]));
            let payload = &bytes[DATA_HEADER_BYTES..];
            return Ok(match kind {
                Kind::Send => Message::Send {
                    to: member,
                    payload,
                },
                _ => Message::Deliver {
                    from: member,
                    payload,
                },
            });
        }
        let mut r = StateReader::new(bytes);
        let m = |e| malformed(kind, e);
        r.read_u8().map_err(m)?;
        let version = r.read_u8().map_err(m)?;
        if version != VERSION {
            return Err(WireError::Version(version));
        }
        let mut padded = false;
        let message = match kind {
            Kind::Probe => Message::Probe(read_probe(&mut r).map_err(m)?),
            Kind::ProbeAck => Message::ProbeAck(read_probe(&mut r).map_err(m)?),
            Kind::Register => {
                let owner = Owner(read_array(&mut r).map_err(m)?);
                let n = usize::from(r.read_u8().map_err(m)?);
                if !(1..=MAX_CODES).contains(&n) {
                    return Err(WireError::Bound {
                        kind,
                        what: "codes",
                    });
                }
                let mut codes = Vec::with_capacity(n);
                for _ in 0..n {
                    let at = r.offset();
                    let v = r.read_u32().map_err(m)?;
                    codes.push(CodeId::new(v).ok_or(malformed(
                        kind,
                        DecodeError::Invalid {
                            offset: at,
                            what: "code id",
                        },
                    ))?);
                }
                let locals = read_addresses(&mut r, kind, 0, MAX_LOCALS)?;
                let after = r.read_u16().map_err(m)?;
                padded = true;
                Message::Register(Register {
                    owner,
                    codes,
                    locals,
                    after,
                })
            }
            Kind::Lookup => {
                let at = r.offset();
                let v = r.read_u32().map_err(m)?;
                let code = CodeId::new(v).ok_or(malformed(
                    kind,
                    DecodeError::Invalid {
                        offset: at,
                        what: "code id",
                    },
                ))?;
                let locals = read_addresses(&mut r, kind, 0, MAX_LOCALS)?;
                padded = true;
                Message::Lookup(Lookup { code, locals })
            }
            Kind::Poll => {
                let ticket = Ticket::read(&mut r).map_err(m)?;
                let after = r.read_u16().map_err(m)?;
                padded = true;
                Message::Poll { ticket, after }
            }
            Kind::Answer => {
                let ticket = Ticket::read(&mut r).map_err(m)?;
                let role = read_role(&mut r, kind)?;
                let key = MatchKey(read_array(&mut r).map_err(m)?);
                let observed = read_address(&mut r).map_err(m)?;
                let ttl_secs = r.read_u16().map_err(m)?;
                let next = r.read_u16().map_err(m)?;
                let more = r.read_bool().map_err(m)?;
                let entries = read_entries(&mut r, kind)?;
                Message::Answer(Answer {
                    ticket,
                    role,
                    key,
                    observed,
                    ttl_secs,
                    next,
                    more,
                    entries,
                })
            }
            Kind::Introduce => {
                let match_id = MatchId(r.read_u64().map_err(m)?);
                let next = r.read_u16().map_err(m)?;
                let entries = read_entries(&mut r, kind)?;
                Message::Introduce {
                    match_id,
                    next,
                    entries,
                }
            }
            Kind::RendezvousRefused => {
                let at = r.offset();
                let code = r.read_u8().map_err(m)?;
                let id = |r: &mut StateReader<'_>| -> Result<CodeId, WireError> {
                    let at = r.offset();
                    let v = r.read_u32().map_err(m)?;
                    CodeId::new(v).ok_or(malformed(
                        kind,
                        DecodeError::Invalid {
                            offset: at,
                            what: "code id",
                        },
                    ))
                };
                Message::RendezvousRefused(match code {
                    0 => Refusal::Unknown(id(&mut r)?),
                    1 => Refusal::Taken(id(&mut r)?),
                    2 => Refusal::Full,
                    3 => Refusal::Busy,
                    4 => Refusal::BadTicket,
                    5 => Refusal::Version(r.read_u8().map_err(m)?),
                    6 => Refusal::Gone,
                    _ => {
                        return Err(malformed(
                            kind,
                            DecodeError::Invalid {
                                offset: at,
                                what: "refusal",
                            },
                        ));
                    }
                })
            }
            Kind::Allocate => {
                let ticket = Ticket::read(&mut r).map_err(m)?;
                let cookie = if r.read_bool().map_err(m)? {
                    Some(read_array(&mut r).map_err(m)?)
                } else {
                    None
                };
                Message::Allocate { ticket, cookie }
            }
            Kind::RelayChallenge => Message::RelayChallenge {
                cookie: read_array(&mut r).map_err(m)?,
            },
            Kind::Allocated => Message::Allocated {
                observed: read_address(&mut r).map_err(m)?,
                idle_secs: r.read_u16().map_err(m)?,
            },
            Kind::RelayRefused => {
                let at = r.offset();
                Message::RelayRefused(match r.read_u8().map_err(m)? {
                    0 => RelayRefusal::NoAllocation,
                    1 => RelayRefusal::BadTicket,
                    2 => RelayRefusal::Full,
                    3 => RelayRefusal::Version(r.read_u8().map_err(m)?),
                    _ => {
                        return Err(malformed(
                            kind,
                            DecodeError::Invalid {
                                offset: at,
                                what: "refusal",
                            },
                        ));
                    }
                })
            }
            Kind::Send | Kind::Deliver => unreachable!("decoded above"),
        };
        if padded {
            if bytes.len() != REQUEST_BYTES {
                return Err(WireError::Bound {
                    kind,
                    what: "padding",
                });
            }
            let rest = r.read_raw(r.remaining()).map_err(m)?;
            if rest.iter().any(|b| *b != 0) {
                return Err(malformed(
                    kind,
                    DecodeError::Invalid {
                        offset: (bytes.len() - rest.len()) as u64,
                        what: "padding",
                    },
                ));
            }
        }
        r.finish().map_err(m)?;
        Ok(message)
    }
}

/// The version byte of bytes that start like a reach message of another
/// version, so the receiver can say which one it speaks.
pub fn version_of(bytes: &[u8]) -> Option<u8> {
    match Kind::from_byte(*bytes.first()?)? {
        Kind::Send | Kind::Deliver => None,
        _ => bytes.get(1).copied(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ticket::{TICKET_BYTES, TicketKey};
    use crate::wire::ADDRESS_BYTES;
    use proptest::prelude::*;

    fn v6(port: u16) -> SocketAddr {
        SocketAddr::new("2001:db8::1".parse().unwrap(), port)
    }

    fn ticket() -> Ticket {
        TicketKey::new(&[1; 32]).mint(MatchId(9), MemberId(1), v6(7701), 100)
    }

    fn full_entry(member: u16) -> Entry {
        Entry {
            member: MemberId(member),
            role: Role::Seat,
            seq: 7,
            candidates: (0..MAX_CANDIDATES as u16).map(v6).collect(),
        }
    }

    fn samples() -> Vec<Message<'static>> {
        let probe = Probe::tagged(
            &MatchKey([3; 16]),
            false,
            MemberId(0),
            MemberId(2),
            77,
            v6(9),
        );
        vec![
            Message::Probe(probe),
            Message::ProbeAck(Probe::tagged(
                &MatchKey([3; 16]),
                true,
                MemberId(2),
                MemberId(0),
                77,
                v6(9),
            )),
            Message::Register(Register {
                owner: Owner([5; 16]),
                codes: vec![
                    CodeId::new(1).unwrap(),
                    CodeId::new(CodeId::LIMIT - 1).unwrap(),
                ],
                locals: (0..MAX_LOCALS as u16).map(v6).collect(),
                after: 3,
            }),
            Message::Lookup(Lookup {
                code: CodeId::new(77).unwrap(),
                locals: vec![],
            }),
            Message::Poll {
                ticket: ticket(),
                after: 65535,
            },
            Message::Answer(Answer {
                ticket: ticket(),
                role: Role::Spectator,
                key: MatchKey([4; 16]),
                observed: v6(5),
                ttl_secs: 30,
                next: 9,
                more: true,
                entries: (0..MAX_ENTRIES as u16).map(full_entry).collect(),
            }),
            Message::Introduce {
                match_id: MatchId(3),
                next: 4,
                entries: (0..MAX_ENTRIES as u16).map(full_entry).collect(),
            },
            Message::RendezvousRefused(Refusal::Taken(CodeId::new(5).unwrap())),
            Message::RendezvousRefused(Refusal::Unknown(CodeId::new(6).unwrap())),
            Message::RendezvousRefused(Refusal::Busy),
            Message::RendezvousRefused(Refusal::Version(1)),
            Message::Allocate {
                ticket: ticket(),
                cookie: Some([6; COOKIE_BYTES]),
            },
            Message::Allocate {
                ticket: ticket(),
                cookie: None,
            },
            Message::RelayChallenge {
                cookie: [7; COOKIE_BYTES],
            },
            Message::Allocated {
                observed: v6(1),
                idle_secs: 30,
            },
            Message::Send {
                to: MemberId(3),
                payload: b"sealed",
            },
            Message::Deliver {
                from: MemberId(4),
                payload: b"",
            },
            Message::RelayRefused(RelayRefusal::NoAllocation),
            Message::RelayRefused(RelayRefusal::Version(1)),
        ]
    }

    #[test]
    fn every_message_round_trips() {
        for m in samples() {
            let bytes = m.encode();
            assert_eq!(Message::decode(&bytes), Ok(m.clone()), "{m:?}");
        }
    }

    #[test]
    fn no_answer_is_larger_than_its_request() {
        let len = |m: &Message<'_>| m.encode().len();
        let all = samples();
        let largest = |kind: Kind| {
            all.iter()
                .filter(|m| m.kind() == kind)
                .map(len)
                .max()
                .unwrap()
        };
        // The largest answers (IPv6 everywhere, every entry full) fit under
        // a request.
        for answer in [Kind::Answer, Kind::Introduce, Kind::RendezvousRefused] {
            assert!(largest(answer) <= REQUEST_BYTES, "{answer:?}");
        }
        // As protocol/SPEC.md §8 says.
        assert_eq!(largest(Kind::Answer), 400);
        for request in [Kind::Register, Kind::Lookup, Kind::Poll] {
            assert_eq!(largest(request), REQUEST_BYTES);
        }
        let smallest_allocate = 2 + TICKET_BYTES + 1;
        for answer in [Kind::RelayChallenge, Kind::Allocated, Kind::RelayRefused] {
            assert!(largest(answer) <= smallest_allocate, "{answer:?}");
        }
        assert_eq!(largest(Kind::Probe), largest(Kind::ProbeAck));
        assert_eq!(largest(Kind::Probe), 2 + 8 + ADDRESS_BYTES + TAG_BYTES);
        assert_eq!(largest(Kind::Probe), 37);
        // A refusal of a data frame is no larger than the smallest one.
        assert!(largest(Kind::RelayRefused) <= DATA_HEADER_BYTES + 1);
        assert_eq!(
            Message::RelayRefused(RelayRefusal::NoAllocation)
                .encode()
                .len(),
            DATA_HEADER_BYTES
        );
    }

    #[test]
    fn damaged_messages_are_refused_by_name() {
        assert_eq!(Message::decode(&[]), Err(WireError::NotReach));
        assert_eq!(Message::decode(b"LKSJ"), Err(WireError::NotReach));
        let mut reg = Message::Lookup(Lookup {
            code: CodeId::new(1).unwrap(),
            locals: vec![],
        })
        .encode();
        reg[1] = 9;
        assert_eq!(Message::decode(&reg), Err(WireError::Version(9)));
        assert_eq!(version_of(&reg), Some(9));
        reg[1] = VERSION;
        *reg.last_mut().unwrap() = 1;
        assert!(matches!(
            Message::decode(&reg),
            Err(WireError::Malformed { .. })
        ));
        reg.pop();
        assert!(matches!(
            Message::decode(&reg),
            Err(WireError::Bound {
                what: "padding",
                ..
            })
        ));
        let mut too_long = vec![Kind::Send.byte(), 0, 0];
        too_long.resize(MAX_FRAME + 1, 0);
        assert!(matches!(
            Message::decode(&too_long),
            Err(WireError::Bound {
                what: "payload",
                ..
            })
        ));
        let mut alloc = Message::Allocated {
            observed: v6(1),
            idle_secs: 3,
        }
        .encode();
        alloc.push(0);
        assert!(matches!(
            Message::decode(&alloc),
            Err(WireError::Malformed {
                source: DecodeError::TrailingBytes { .. },
                ..
            })
        ));
    }

    #[test]
    fn a_probe_tag_binds_every_field_and_the_key() {
        let key = MatchKey([3; 16]);
        let p = Probe::tagged(&key, false, MemberId(0), MemberId(2), 77, v6(9));
        assert!(key.verifies(false, &p));
        assert!(!key.verifies(true, &p));
        assert!(!MatchKey([4; 16]).verifies(false, &p));
        let mut moved = p;
        moved.seen = v6(10);
        assert!(!key.verifies(false, &moved));
    }

    proptest! {
        #[test]
        fn any_bytes_decode_or_are_refused_without_a_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
            if let Ok(m) = Message::decode(&bytes) {
                prop_assert_eq!(m.encode(), bytes);
            }
        }

        #[test]
        fn a_reach_first_byte_with_any_tail_never_panics(kind in 0u8..16, tail in proptest::collection::vec(any::<u8>(), 0..600)) {
            let mut bytes = vec![(kind << 4) | 0x0f, VERSION];
            bytes.extend(tail);
            if let Ok(m) = Message::decode(&bytes) {
                prop_assert_eq!(m.encode(), bytes);
            }
        }
    }
}

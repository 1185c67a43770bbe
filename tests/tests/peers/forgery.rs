//! Sealed sessions under attack. An attacker who sees every packet of a
//! running match — and even its plaintext — decodes real packets, changes
//! their inputs, acks, first frames, sequence numbers and checksums,
//! re-encodes them and injects them from the genuine sender's address. None
//! may be taken: the match must step the same frames to the same checksums
//! as the same match left alone, lose no input, stall no more, and count
//! every forgery by reason. A player who knows every public value of the
//! match (tokens, public keys) but not another pair's private keys cannot
//! speak for another seat either.

use std::collections::{BTreeMap, VecDeque};

use lockstep_fx::{Checksum, Rng};
use lockstep_games::Demo;
use lockstep_games::cubes::{Cubes, CubesConfig, CubesInput};
use lockstep_peer::{Peer, PeerEvent, PeerSettings};
use lockstep_protocol::packet::{MAX_DATAGRAM, Message, Packet};
use lockstep_protocol::seal::{Identity, Link, PairKeys, PublicKey};
use lockstep_protocol::stats::Dropped;
use lockstep_protocol::{Config, Instant, SeatId, Security, Stats};
use lockstep_sim::Match;

type CubesPeer = Peer<Cubes, Vec<u8>>;

/// The cube demo on a 5 × 5 field.
fn tiny_cubes() -> CubesConfig {
    let mut c = Cubes::default_config();
    c.field.grid = 5;
    c
}

fn identity(seed: u8) -> Identity {
    Identity::from_secret([seed; 32])
}

/// A seeded key pair per seat, and the sealed peers of a `seats`-seat
/// cube match.
fn sealed_peers(seats: u8) -> (Vec<Identity>, Vec<CubesPeer>) {
    let setup = Match {
        seats,
        seed: 5,
        tick_rate: 60,
    };
    let ids: Vec<Identity> = (0..seats).map(|s| identity(0x40 + s)).collect();
    let keys: Vec<PublicKey> = ids.iter().map(Identity::public).collect();
    let peers = (0..seats)
        .map(|seat| {
            let mut settings = PeerSettings::new(&setup, SeatId(seat), 1000 + u32::from(seat));
            settings.session = Config {
                security: Security::Sealed {
                    identity: ids[usize::from(seat)].clone(),
                    seats: keys.clone(),
                },
                ..settings.session
            };
            let mut p = Peer::new(&tiny_cubes(), setup, settings, Vec::new()).unwrap();
            p.set_bot(Box::new(Cubes::bot(seat, 5)));
            p
        })
        .collect();
    (ids, peers)
}

/// A datagram on its way: due time, sender, receiver, bytes.
type Flight = (Instant, u8, u8, Vec<u8>);

/// Peers on a 20 ms one-way network, stepped a millisecond at a time.
/// `tap` sees every datagram as it is sent; `attack` runs after each
/// millisecond's deliveries and may inject into the peers.
struct Match3 {
    peers: Vec<CubesPeer>,
    now: Instant,
    wire: VecDeque<Flight>,
    checksums: Vec<BTreeMap<u32, Checksum>>,
}

impl Match3 {
    fn new(peers: Vec<CubesPeer>) -> Match3 {
        let n = peers.len();
        Match3 {
            peers,
            now: Instant::ZERO,
            wire: VecDeque::new(),
            checksums: vec![BTreeMap::new(); n],
        }
    }

    fn run(
        &mut self,
        frames: u32,
        mut tap: impl FnMut(u8, u8, &[u8]),
        mut attack: impl FnMut(&mut [CubesPeer], Instant),
    ) {
        while self.peers.iter().any(|p| p.frame() < frames) {
            assert!(self.now.as_micros() < 60_000_000, "the match stalled");
            while self.wire.front().is_some_and(|f| f.0 <= self.now) {
                let (_, from, to, bytes) = self.wire.pop_front().unwrap();
                self.peers[usize::from(to)].handle_datagram(self.now, SeatId(from), &bytes);
            }
            attack(&mut self.peers, self.now);
            for i in 0..self.peers.len() {
                let p = &mut self.peers[i];
                if p.poll_timeout().is_some_and(|t| t <= self.now) {
                    p.handle_timeout(self.now);
                }
                while let Some(e) = p.poll_event() {
                    if let PeerEvent::Stepped {
                        frame, checksum, ..
                    } = e
                    {
                        self.checksums[i].insert(frame, checksum);
                    }
                }
                while let Some(t) = p.poll_transmit(self.now) {
                    tap(i as u8, t.to.0, &t.bytes);
                    self.wire
                        .push_back((self.now.plus(20_000), i as u8, t.to.0, t.bytes));
                }
            }
            self.now = self.now.plus(1_000);
        }
    }

    fn stats(&self, seat: usize) -> Stats {
        self.peers[seat].session_stats().clone()
    }
}

/// What of `stats` does not depend on injected datagrams.
fn genuine(stats: &Stats) -> Stats {
    Stats {
        received: Default::default(),
        dropped: Dropped::default(),
        ..stats.clone()
    }
}

/// Every way the attacker changes a real inputs packet it decoded.
fn mutations(packet: &Packet<CubesInput>, rng: &mut Rng) -> Vec<Vec<u8>> {
    let Packet::Routed(r) = packet else {
        return Vec::new();
    };
    let Message::Inputs(m) = &r.message else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut push = |f: &dyn Fn(&mut lockstep_protocol::packet::Routed<_>)| {
        let mut x = r.clone();
        f(&mut x);
        out.push(Packet::Routed(x).encode());
    };
    let k = rng.below(m.inputs.len().max(1) as u32) as usize;
    // Another input for one frame: an order issued for someone else.
    push(&|x| {
        if let Message::Inputs(m) = &mut x.message {
            if let Some(i) = m.inputs.get_mut(k) {
                *i = CubesInput::from_bits(i.to_bits() ^ 0b1_0000);
            }
        }
    });
    // An ack of frames never received: the receiver would drop inputs.
    push(&|x| {
        if let Message::Inputs(m) = &mut x.message {
            m.ack = Some(m.ack.unwrap_or(0).wrapping_add(90));
        }
    });
    // The run moved to another first frame.
    push(&|x| {
        if let Message::Inputs(m) = &mut x.message {
            m.first_frame = m.first_frame.wrapping_add(3);
        }
    });
    // A sequence number far ahead: genuine packets would look too old.
    push(&|x| x.seq = x.seq.wrapping_add(20_000));
    // Other short checksums: a false desync.
    push(&|x| {
        if let Message::Inputs(m) = &mut x.message {
            match &mut m.checksums {
                Some(c) => c.shorts[0] ^= 1,
                None => {
                    m.checksums = Some(lockstep_protocol::packet::ShortChecksums {
                        epoch: 0,
                        newest: m.first_frame,
                        shorts: vec![7],
                    })
                }
            }
        }
    });
    out
}

/// The forgeries of one genuine sealed packet from seat 1 to seat 0, whose
/// plaintext the attacker knows (`plain`, at packet number `seq`).
fn forgeries(sealed: &[u8], plain: &[u8], seq: u64, eve: &Link, rng: &mut Rng) -> Vec<Vec<u8>> {
    let Ok(packet) = Packet::<CubesInput>::decode(plain) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for mutated in mutations(&packet, rng) {
        // Re-encoded and sealed with a key the attacker holds.
        let mut resealed = mutated.clone();
        eve.seal(seq, &mut resealed).unwrap();
        out.push(resealed);
        // Re-encoded and sent in clear.
        out.push(mutated.clone());
        // The genuine ciphertext and tag under a changed header (the
        // header is authenticated too).
        let mut spliced = sealed.to_vec();
        spliced[..7].copy_from_slice(&mutated[..7]);
        if spliced != sealed {
            out.push(spliced);
        }
    }
    // Single flipped bits anywhere.
    for _ in 0..4 {
        let mut f = sealed.to_vec();
        let i = rng.below(f.len() as u32) as usize;
        f[i] ^= 1 << rng.below(8);
        out.push(f);
    }
    out
}

#[test]
fn a_hundred_thousand_forged_packets_change_nothing_and_are_counted_by_reason() {
    const FRAMES: u32 = 600;
    // The match left alone.
    let (_, peers) = sealed_peers(2);
    let mut calm = Match3::new(peers);
    calm.run(FRAMES, |_, _, _| {}, |_, _| {});

    // The same match under attack: everything seat 1 sends seat 0 is
    // decoded (the test lends the attacker seat 0's keys for reading only),
    // mutated in every way, and injected from seat 1's address, each
    // genuine packet also replayed as it is, again and again.
    let (ids, peers) = sealed_peers(2);
    let mut reader = Link::new(PairKeys::agree(&ids[0], &ids[1].public()).unwrap(), 0);
    let eve = identity(0xee);
    let eve_link = Link::new(PairKeys::agree(&eve, &ids[0].public()).unwrap(), 0);
    let mut rng = Rng::new(9, 9);
    let seen = std::cell::RefCell::new(Vec::<(Vec<u8>, Vec<u8>, u64)>::new());
    let mut injected = 0u64;
    let mut injected_replays = 0u64;
    let mut attacked = Match3::new(peers);
    attacked.run(
        FRAMES,
        |from, to, bytes| {
            if (from, to) == (1, 0) {
                let mut out = [0u8; MAX_DATAGRAM];
                if let Ok(o) = reader.open(bytes, &mut out) {
                    seen.borrow_mut()
                        .push((bytes.to_vec(), o.packet.to_vec(), o.seq));
                }
            }
        },
        |peers, now| {
            let seen = seen.borrow();
            let Some(newest) = seen.len().checked_sub(1) else {
                return;
            };
            // A fresh forgery batch from one recent genuine packet ...
            let (sealed, plain, seq) = &seen[newest - rng.below(newest.min(8) as u32 + 1) as usize];
            for f in forgeries(sealed, plain, *seq, &eve_link, &mut rng) {
                peers[0].handle_datagram(now, SeatId(1), &f);
                injected += 1;
            }
            // ... and genuine packets replayed verbatim, once delivered (a
            // copy that overtook the original would only be the original,
            // early).
            let delivered = seen.len().saturating_sub(8);
            for _ in 0..8.min(delivered) {
                let (sealed, _, _) = &seen[rng.below(delivered as u32) as usize];
                peers[0].handle_datagram(now, SeatId(1), sealed);
                injected_replays += 1;
            }
        },
    );
    assert!(
        injected + injected_replays >= 100_000,
        "only {injected} forgeries and {injected_replays} replays"
    );

    // Nothing was taken: the same frames, the same checksums, the same
    // inputs released, the same stalls, on both peers.
    for seat in 0..2 {
        let (a, c) = (&attacked.checksums[seat], &calm.checksums[seat]);
        let first = a.iter().zip(c.iter()).find(|(x, y)| x != y);
        assert!(
            a == c,
            "seat {seat} stepped differently: {} vs {} frames, first difference {first:?}",
            a.len(),
            c.len()
        );
        assert_eq!(
            genuine(&attacked.stats(seat)),
            genuine(&calm.stats(seat)),
            "seat {seat}'s session did something else"
        );
    }
    assert!(attacked.checksums[0] == attacked.checksums[1]);
    assert_eq!(attacked.stats(1).dropped, calm.stats(1).dropped);

    // Every injected datagram is counted, and by why it was refused.
    let d = attacked.stats(0).dropped;
    let base = calm.stats(0).dropped;
    let by_reason = [
        ("unauthenticated", d.unauthenticated - base.unauthenticated),
        ("malformed", d.malformed - base.malformed),
        ("duplicate", d.duplicate - base.duplicate),
        ("too_old", d.too_old - base.too_old),
    ];
    let counted: u64 = by_reason.iter().map(|(_, n)| n).sum();
    assert_eq!(
        d.total() - base.total(),
        injected + injected_replays,
        "{by_reason:?}"
    );
    assert_eq!(counted, injected + injected_replays, "{d:?}");
    // Forgeries all fail to open (a clear one too short to hold a tag is
    // malformed, the rest fail authentication); replays open and fall to
    // the sequence window.
    assert_eq!(
        d.unauthenticated - base.unauthenticated + d.malformed - base.malformed,
        injected,
        "{by_reason:?}"
    );
    println!("{injected} forgeries and {injected_replays} replays refused: {by_reason:?}");
}

#[test]
fn a_player_who_knows_every_public_value_cannot_speak_for_another_seat() {
    // Seat 2 is a genuine player: it holds its own secret, every public key
    // and every token, and sees the wire. It tries to slip seat 0 an input
    // "from seat 1", sealed with every key it can compute.
    let (ids, peers) = sealed_peers(3);
    let keys: Vec<PublicKey> = ids.iter().map(Identity::public).collect();
    let mallory = &ids[2];
    let candidate_links: Vec<Link> = keys
        .iter()
        .filter_map(|k| PairKeys::agree(mallory, k).ok())
        .map(|k| Link::new(k, 0))
        .collect();
    let template = std::cell::RefCell::new(None::<(Vec<u8>, u64)>);
    let mut reader = Link::new(PairKeys::agree(&ids[0], &keys[1]).unwrap(), 0);
    let mut tried = 0u64;
    let mut m = Match3::new(peers);
    m.run(
        300,
        |from, to, bytes| {
            // Mallory learns what a seat-1 packet to seat 0 looks like
            // (the test reads it for her: the worst case, known plaintext).
            if (from, to) == (1, 0) {
                let mut out = [0u8; MAX_DATAGRAM];
                if let Ok(o) = reader.open(bytes, &mut out) {
                    *template.borrow_mut() = Some((o.packet.to_vec(), o.seq));
                }
            }
        },
        |peers, now| {
            let Some((plain, seq)) = template.borrow().clone() else {
                return;
            };
            let Ok(Packet::Routed(mut r)) = Packet::<CubesInput>::decode(&plain) else {
                return;
            };
            if let Message::Inputs(msg) = &mut r.message {
                for i in &mut msg.inputs {
                    *i = CubesInput::from_bits(0b10_0000);
                }
            }
            let forged = Packet::Routed(r).encode();
            for link in &candidate_links {
                for s in [seq, seq + 1] {
                    let mut f = forged.clone();
                    link.seal(s, &mut f).unwrap();
                    // From seat 1's address, and from her own.
                    peers[0].handle_datagram(now, SeatId(1), &f);
                    peers[0].handle_datagram(now, SeatId(2), &f);
                    tried += 2;
                }
            }
        },
    );
    assert!(tried > 1000);
    let d = m.stats(0).dropped;
    assert_eq!(d.unauthenticated + d.unknown_sender, tried, "{d:?}");
    // Seat 0 released seat 1's genuine inputs: all three agree.
    assert!(m.checksums[0] == m.checksums[1] && m.checksums[0] == m.checksums[2]);
}

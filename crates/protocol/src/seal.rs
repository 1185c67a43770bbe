//! Sealed datagrams: every packet between two endpoints that hold each
//! other's public key is authenticated and encrypted, so nobody without the
//! pair's private keys can speak for a seat, forge an ack or move a
//! sequence window.
//!
//! The scheme (drawn in `protocol/SPEC.md` §5):
//! - each endpoint holds an [`Identity`], an X25519 key pair drawn for one
//!   match; the match setup tells every endpoint the others' [`PublicKey`]s;
//! - each pair agrees on a shared secret (X25519) and derives one
//!   ChaCha20-Poly1305 key per direction with BLAKE3's key-derivation mode,
//!   over the secret and both public keys in sender → receiver order
//!   ([`PairKeys`]);
//! - a packet's clear header (its kind, 16-bit sequence number and routing
//!   fields, [`crate::packet::header_bytes`]) is the associated data, the
//!   rest of the packet is encrypted in place, and a 16-byte tag follows;
//! - the nonce is the sender's packet number toward that receiver, a `u64`
//!   that only grows (so no nonce repeats under one key); the wire carries
//!   its low 16 bits and the receiver restores the rest against the newest
//!   number that opened ([`crate::seq::widen`]).
//!
//! Invariants: [`Link::open`] allocates nothing and changes nothing unless
//! the tag verifies; a wrong key, a changed header byte, a changed
//! ciphertext byte or a wrongly restored number all fail the same way
//! ([`SealError::Forged`]). The secret half of an [`Identity`] is never
//! printed or compared, and leaves it only through
//! [`Identity::to_secret`], for the app that keeps its seat's key pair
//! across a restart (a key file only that app reads).

use chacha20poly1305::aead::{AeadInPlace, KeyInit};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce, Tag};
use x25519_dalek::StaticSecret;

use crate::packet::header::{MAX_DATAGRAM, header_bytes, peek_seq};
use crate::seq::widen;

/// Bytes a sealed datagram adds to its packet: the Poly1305 tag.
pub const TAG_BYTES: usize = 16;

/// The BLAKE3 key-derivation context of pair keys. Changing the wire format
/// changes this string, so peers of two versions never share a key.
const PAIR_KEY_CONTEXT: &str = "lockstep wire v4 2026-11 pair key (sender, receiver)";

/// An endpoint's public key for one match (X25519, 32 bytes).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PublicKey(pub [u8; 32]);

impl std::fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PublicKey(")?;
        for b in &self.0[..6] {
            write!(f, "{b:02x}")?;
        }
        write!(f, "…)")
    }
}

/// An endpoint's key pair for one match. The app draws the secret from the
/// operating system's random source (tests from a seeded generator); the
/// protocol never draws randomness itself.
#[derive(Clone)]
pub struct Identity {
    secret: StaticSecret,
    public: PublicKey,
}

impl Identity {
    /// The key pair whose secret is `secret` (32 random bytes).
    pub fn from_secret(secret: [u8; 32]) -> Identity {
        let secret = StaticSecret::from(secret);
        let public = PublicKey(x25519_dalek::PublicKey::from(&secret).to_bytes());
        Identity { secret, public }
    }

    /// The public half, which the match setup hands to the other endpoints.
    pub fn public(&self) -> PublicKey {
        self.public
    }

    /// The secret, to keep the key pair across a restart of the process
    /// (a seat's key file, which a restarted process reads to prove it
    /// holds the seat). Nothing else should ever need it.
    pub fn to_secret(&self) -> [u8; 32] {
        self.secret.to_bytes()
    }
}

impl std::fmt::Debug for Identity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Identity")
            .field("public", &self.public)
            .finish_non_exhaustive()
    }
}

/// Two identities are the same when their public keys are (the secret
/// determines the public key).
impl PartialEq for Identity {
    fn eq(&self, other: &Identity) -> bool {
        self.public == other.public
    }
}

impl Eq for Identity {}

/// Why a datagram was not sealed or opened, or keys not agreed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SealError {
    /// The other side's public key is a low-order point: the shared secret
    /// would not depend on our key, so anyone could compute it.
    #[error("the peer's public key is not usable (low-order point)")]
    WeakKey,
    /// Too short to hold a header and a tag, or of an unknown kind.
    #[error("datagram too short or of an unknown kind to be sealed")]
    Malformed,
    /// The tag did not verify: another key, a changed byte, or a replay
    /// from before a restart.
    #[error("authentication tag does not verify")]
    Forged,
}

/// The keys of one pair of endpoints as one side holds them: one to seal
/// what it sends, one to open what it receives.
#[derive(Clone)]
pub struct PairKeys {
    send: ChaCha20Poly1305,
    recv: ChaCha20Poly1305,
}

impl std::fmt::Debug for PairKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PairKeys { .. }")
    }
}

impl PairKeys {
    /// Agrees keys between `local` and the endpoint whose public key is
    /// `remote`. Both sides derive the same two keys, each its own send key
    /// being the other's receive key.
    pub fn agree(local: &Identity, remote: &PublicKey) -> Result<PairKeys, SealError> {
        let shared = local
            .secret
            .diffie_hellman(&x25519_dalek::PublicKey::from(remote.0));
        if !shared.was_contributory() {
            return Err(SealError::WeakKey);
        }
        let key = |from: &PublicKey, to: &PublicKey| {
            let mut material = [0u8; 96];
            material[..32].copy_from_slice(shared.as_bytes());
            material[32..64].copy_from_slice(&from.0);
            material[64..].copy_from_slice(&to.0);
            let k = blake3::derive_key(PAIR_KEY_CONTEXT, &material);
            ChaCha20Poly1305::new(Key::from_slice(&k))
        };
        Ok(PairKeys {
            send: key(&local.public, remote),
            recv: key(remote, &local.public),
        })
    }
}

/// The BLAKE3 key-derivation context of possession proofs.
const PROOF_KEY_CONTEXT: &str = "lockstep setup v4 2026-11 key possession proof";

/// A 32-byte key that only `local` and the holder of `remote`'s secret can
/// compute: the X25519 secret of the pair, derived under its own context so
/// it never equals a pair key. The match setup uses it to let a process
/// prove it holds a seat's key pair without sealing anything with it (a
/// restarted process proves it owns the seat it asks back, while its
/// session runs under a fresh key pair, so no packet number is ever reused
/// under an old key).
pub fn proof_key(local: &Identity, remote: &PublicKey) -> Result<[u8; 32], SealError> {
    let shared = local
        .secret
        .diffie_hellman(&x25519_dalek::PublicKey::from(remote.0));
    if !shared.was_contributory() {
        return Err(SealError::WeakKey);
    }
    let mut material = [0u8; 32];
    material.copy_from_slice(shared.as_bytes());
    Ok(blake3::derive_key(PROOF_KEY_CONTEXT, &material))
}

/// The nonce of packet number `seq`: four zero bytes, then `seq`
/// little-endian. The keys differ per direction, so the two directions'
/// numbers never share a key.
fn nonce(seq: u64) -> Nonce {
    let mut n = [0u8; 12];
    n[4..].copy_from_slice(&seq.to_le_bytes());
    *Nonce::from_slice(&n)
}

/// A datagram that opened: the packet inside and its restored number.
#[derive(Debug, PartialEq, Eq)]
pub struct Opened<'a> {
    /// The packet's bytes, header and body in clear.
    pub packet: &'a [u8],
    /// Its full packet number.
    pub seq: u64,
    /// Whether that number is newer than every one that opened before on
    /// this link (handshakes older than the newest are replays or stale).
    pub newest: bool,
}

/// One sealed link from one side: the pair's keys and the newest packet
/// number that opened, against which the next ones are restored.
#[derive(Debug, Clone)]
pub struct Link {
    keys: PairKeys,
    /// The newest number that opened; before any, the first number the
    /// other side uses.
    newest: u64,
    opened_any: bool,
}

impl Link {
    /// A link over `keys` whose other side numbers its packets from `first`.
    pub fn new(keys: PairKeys, first: u64) -> Link {
        Link {
            keys,
            newest: first,
            opened_any: false,
        }
    }

    /// Seals `packet` (an encoded packet whose sequence field holds the low
    /// 16 bits of `seq`) in place: the body after its clear header is
    /// encrypted and the tag appended.
    pub fn seal(&self, seq: u64, packet: &mut Vec<u8>) -> Result<(), SealError> {
        let header = packet
            .first()
            .and_then(|b| header_bytes(b & 0x0f))
            .filter(|h| *h <= packet.len())
            .ok_or(SealError::Malformed)?;
        let (aad, body) = packet.split_at_mut(header);
        let tag = self
            .keys
            .send
            .encrypt_in_place_detached(&nonce(seq), aad, body)
            .map_err(|_| SealError::Malformed)?;
        packet.extend_from_slice(&tag);
        Ok(())
    }

    /// Opens `datagram` into `out`. Nothing changes (and nothing is
    /// allocated) unless the tag verifies; then the link's newest number
    /// moves forward.
    pub fn open<'a>(
        &mut self,
        datagram: &[u8],
        out: &'a mut [u8; MAX_DATAGRAM],
    ) -> Result<Opened<'a>, SealError> {
        let header = datagram
            .first()
            .and_then(|b| header_bytes(b & 0x0f))
            .ok_or(SealError::Malformed)?;
        if datagram.len() < header + TAG_BYTES || datagram.len() > MAX_DATAGRAM {
            return Err(SealError::Malformed);
        }
        let wire = peek_seq(datagram).ok_or(SealError::Malformed)?;
        let seq = widen(wire, self.newest);
        let len = datagram.len() - TAG_BYTES;
        let (sealed, tag) = datagram.split_at(len);
        let plain = &mut out[..len];
        plain.copy_from_slice(sealed);
        let (aad, body) = plain.split_at_mut(header);
        self.keys
            .recv
            .decrypt_in_place_detached(&nonce(seq), aad, body, Tag::from_slice(tag))
            .map_err(|_| SealError::Forged)?;
        let newest = !self.opened_any || seq > self.newest;
        if newest {
            self.newest = seq;
            self.opened_any = true;
        }
        Ok(Opened {
            packet: &out[..len],
            seq,
            newest,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair() -> (Identity, Identity) {
        (
            Identity::from_secret([7; 32]),
            Identity::from_secret([9; 32]),
        )
    }

    /// A routed-looking packet: kind 1, sequence `seq`, then filler.
    fn packet(seq: u16) -> Vec<u8> {
        let mut p = vec![0u8; 20];
        p[0] = 1 | ((seq as u8 & 0x0f) << 4);
        p[1] = (seq >> 4) as u8;
        p[2] = (seq >> 12) as u8;
        for (i, b) in p.iter_mut().enumerate().skip(7) {
            *b = i as u8;
        }
        p
    }

    #[test]
    fn both_sides_agree_and_each_direction_has_its_own_key() {
        let (a, b) = pair();
        let ab = PairKeys::agree(&a, &b.public()).unwrap();
        let ba = PairKeys::agree(&b, &a.public()).unwrap();
        let to_b = Link::new(ab.clone(), 0);
        let mut at_b = Link::new(ba, 0);
        let mut buf = [0u8; MAX_DATAGRAM];
        let mut p = packet(5);
        let clear = p.clone();
        to_b.seal(5, &mut p).unwrap();
        assert_eq!(p.len(), clear.len() + TAG_BYTES);
        assert_eq!(p[..7], clear[..7], "the header stays in clear");
        assert_ne!(p[7..20], clear[7..], "the body is encrypted");
        let opened = at_b.open(&p, &mut buf).unwrap();
        assert_eq!(opened.packet, &clear[..]);
        assert_eq!((opened.seq, opened.newest), (5, true));
        // A's own receive key is not its send key: its own packet does not
        // open on its side.
        let mut at_a = Link::new(ab, 0);
        assert_eq!(at_a.open(&p, &mut buf), Err(SealError::Forged));
    }

    #[test]
    fn any_changed_byte_or_another_key_fails_and_changes_nothing() {
        let (a, b) = pair();
        let eve = Identity::from_secret([3; 32]);
        let link = Link::new(PairKeys::agree(&a, &b.public()).unwrap(), 0);
        let mut at_b = Link::new(PairKeys::agree(&b, &a.public()).unwrap(), 0);
        let mut p = packet(9);
        link.seal(9, &mut p).unwrap();
        let mut buf = [0u8; MAX_DATAGRAM];
        for i in 0..p.len() {
            for bit in 0..8 {
                let mut q = p.clone();
                q[i] ^= 1 << bit;
                assert!(at_b.open(&q, &mut buf).is_err(), "byte {i} bit {bit}");
            }
        }
        // Eve knows every public key but not A's secret.
        let forged_link = Link::new(PairKeys::agree(&eve, &b.public()).unwrap(), 0);
        let mut f = packet(10);
        forged_link.seal(10, &mut f).unwrap();
        assert_eq!(at_b.open(&f, &mut buf), Err(SealError::Forged));
        // The genuine packet still opens: the failures moved nothing.
        assert_eq!(at_b.open(&p, &mut buf).unwrap().seq, 9);
    }

    #[test]
    fn numbers_are_restored_across_the_16_bit_wrap() {
        let (a, b) = pair();
        let link = Link::new(PairKeys::agree(&a, &b.public()).unwrap(), 0);
        let mut at_b = Link::new(PairKeys::agree(&b, &a.public()).unwrap(), 0);
        let mut buf = [0u8; MAX_DATAGRAM];
        for seq in [1u64, 30_000, 60_000, 65_539, 95_536, 125_536, 131_172] {
            let mut p = packet(seq as u16);
            link.seal(seq, &mut p).unwrap();
            let opened = at_b.open(&p, &mut buf).unwrap();
            assert_eq!((opened.seq, opened.newest), (seq, true));
        }
        // An old packet replayed is restored near the newest and fails.
        let mut old = packet(30_000);
        link.seal(30_000, &mut old).unwrap();
        assert_eq!(at_b.open(&old, &mut buf), Err(SealError::Forged));
    }

    #[test]
    fn low_order_keys_and_short_datagrams_are_refused() {
        let (a, _) = pair();
        assert_eq!(
            PairKeys::agree(&a, &PublicKey([0; 32])).err(),
            Some(SealError::WeakKey)
        );
        let (a, b) = pair();
        let mut at_b = Link::new(PairKeys::agree(&b, &a.public()).unwrap(), 0);
        let mut buf = [0u8; MAX_DATAGRAM];
        for len in 0..7 + TAG_BYTES {
            assert_eq!(
                at_b.open(&vec![1u8; len], &mut buf),
                Err(SealError::Malformed)
            );
        }
        assert_eq!(
            at_b.open(&[0x0f; 40], &mut buf),
            Err(SealError::Malformed),
            "kind 15 is no packet"
        );
    }
}

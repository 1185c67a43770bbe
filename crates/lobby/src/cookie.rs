//! [`CookieJar`]: stateless proof that an address can receive. A host
//! answers a request from an address it has not proven with a cookie — a
//! keyed BLAKE3 MAC over the address, the requester's public key and the
//! current time slot — and keeps nothing. A request that comes back with a
//! cookie that verifies came from a process that received the host's
//! answer at that address: its source was not forged. (QUIC's Retry token
//! and netcode.io's challenge token work the same way.)
//!
//! Invariants: only the holder of the jar's secret can make a cookie that
//! verifies; a cookie is bound to one address and one key, and verifies for
//! one to two slots of [`CookieJar::SLOT_MICROS`] (it carries its slot, and
//! the slot before the current one is still accepted); checking allocates
//! nothing and keeps nothing.

use std::net::SocketAddr;

use lockstep_protocol::Instant;
use lockstep_protocol::seal::PublicKey;

use crate::message::{COOKIE_BYTES, Cookie};

/// The BLAKE3 key-derivation context of the jar's MAC key.
const COOKIE_CONTEXT: &str = "lockstep setup v4 2026-11 address cookie";

/// Makes and checks cookies with one secret.
#[derive(Clone)]
pub struct CookieJar {
    key: [u8; 32],
}

impl core::fmt::Debug for CookieJar {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("CookieJar { .. }")
    }
}

impl CookieJar {
    /// How long one time slot lasts (10 s): a cookie verifies for 10 to
    /// 20 s after it was made.
    pub const SLOT_MICROS: u64 = 10_000_000;

    /// A jar whose MAC key is derived from `secret` (32 random bytes the
    /// app draws; tests seed them).
    pub fn new(secret: [u8; 32]) -> CookieJar {
        CookieJar {
            key: blake3::derive_key(COOKIE_CONTEXT, &secret),
        }
    }

    fn slot(now: Instant) -> u32 {
        (now.as_micros() / Self::SLOT_MICROS) as u32
    }

    fn mac(&self, slot: u32, addr: SocketAddr, key: &PublicKey) -> [u8; COOKIE_BYTES - 4] {
        let mut h = blake3::Hasher::new_keyed(&self.key);
        h.update(&slot.to_le_bytes());
        match addr {
            SocketAddr::V4(a) => {
                h.update(&[4]);
                h.update(&a.ip().octets());
            }
            SocketAddr::V6(a) => {
                h.update(&[6]);
                h.update(&a.ip().octets());
                h.update(&a.scope_id().to_le_bytes());
            }
        }
        h.update(&addr.port().to_le_bytes());
        h.update(&key.0);
        let mut out = [0u8; COOKIE_BYTES - 4];
        out.copy_from_slice(&h.finalize().as_bytes()[..COOKIE_BYTES - 4]);
        out
    }

    /// A cookie for `addr` and `key`, made at `now`.
    pub fn issue(&self, now: Instant, addr: SocketAddr, key: &PublicKey) -> Cookie {
        let slot = Self::slot(now);
        let mut c = [0u8; COOKIE_BYTES];
        c[..4].copy_from_slice(&slot.to_le_bytes());
        c[4..].copy_from_slice(&self.mac(slot, addr, key));
        Cookie(c)
    }

    /// Whether `cookie` was made by this jar for `addr` and `key`, in the
    /// current time slot or the one before.
    pub fn check(&self, now: Instant, addr: SocketAddr, key: &PublicKey, cookie: &Cookie) -> bool {
        let mut slot = [0u8; 4];
        slot.copy_from_slice(&cookie.0[..4]);
        let slot = u32::from_le_bytes(slot);
        let current = Self::slot(now);
        if slot != current && slot.wrapping_add(1) != current {
            return false;
        }
        let mac = self.mac(slot, addr, key);
        // Compared in full, without an early exit on the first difference.
        mac.iter()
            .zip(&cookie.0[4..])
            .fold(0u8, |d, (a, b)| d | (a ^ b))
            == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cookie_verifies_only_for_its_address_key_and_time() {
        let jar = CookieJar::new([7; 32]);
        let a: SocketAddr = "127.0.0.1:4000".parse().unwrap();
        let b: SocketAddr = "127.0.0.1:4001".parse().unwrap();
        let k = PublicKey([1; 32]);
        let t = Instant::from_micros(123_000_000);
        let c = jar.issue(t, a, &k);
        assert!(jar.check(t, a, &k, &c));
        assert!(jar.check(t.plus(CookieJar::SLOT_MICROS), a, &k, &c));
        assert!(!jar.check(t.plus(2 * CookieJar::SLOT_MICROS), a, &k, &c));
        assert!(!jar.check(t, b, &k, &c));
        assert!(!jar.check(t, a, &PublicKey([2; 32]), &c));
        assert!(!CookieJar::new([8; 32]).check(t, a, &k, &c));
        let mut forged = c;
        forged.0[10] ^= 1;
        assert!(!jar.check(t, a, &k, &forged));
    }
}

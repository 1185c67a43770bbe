//! A restarted process's claim to its seat ([`SeatClaim`]): proof that it
//! holds the secret of the key the match bound to the seat, without sealing
//! anything with that key again.
//!
//! Why a proof and not the old key itself: the session numbers every sealed
//! packet under a pair key from 0, so a new process playing under its old
//! key pair would reuse nonces under the same keys. The claimant plays
//! under a fresh key pair instead and proves possession of the old one: a
//! BLAKE3 MAC over its new public key and its cookie, keyed with the secret
//! only the old key pair and the host's can compute
//! ([`lockstep_protocol::seal::proof_key`]). The host, having checked it,
//! binds the seat to the new key and vouches for it to the other seats.
//!
//! Invariants: a claim verifies only for the seat key, the new key and the
//! cookie it was made for (so it cannot be replayed from another address
//! or for another key, and expires with the cookie).

use lockstep_protocol::seal::{Identity, PublicKey, SealError, proof_key};

use crate::message::{Cookie, SeatClaim};

fn mac(key: &[u8; 32], new_key: &PublicKey, cookie: &Cookie) -> [u8; 32] {
    let mut h = blake3::Hasher::new_keyed(key);
    h.update(&new_key.0);
    h.update(&cookie.0);
    *h.finalize().as_bytes()
}

impl SeatClaim {
    /// The claim of the holder of `seat` (the key pair the match bound to
    /// the seat) to play on under `new_key`, for the host whose key is
    /// `host_key`, with the cookie the host gave.
    pub fn make(
        seat: &Identity,
        host_key: &PublicKey,
        new_key: &PublicKey,
        cookie: &Cookie,
    ) -> Result<SeatClaim, SealError> {
        let key = proof_key(seat, host_key)?;
        Ok(SeatClaim {
            seat_key: seat.public(),
            proof: mac(&key, new_key, cookie),
        })
    }

    /// Whether the claim proves possession of `seat_key`'s secret, checked
    /// by the host (`host`) for `new_key` and `cookie`.
    pub fn verify(&self, host: &Identity, new_key: &PublicKey, cookie: &Cookie) -> bool {
        let Ok(key) = proof_key(host, &self.seat_key) else {
            return false;
        };
        let expected = mac(&key, new_key, cookie);
        expected
            .iter()
            .zip(&self.proof)
            .fold(0u8, |d, (a, b)| d | (a ^ b))
            == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::COOKIE_BYTES;

    #[test]
    fn only_the_seat_key_holder_can_claim_and_only_for_its_new_key() {
        let host = Identity::from_secret([1; 32]);
        let seat = Identity::from_secret([2; 32]);
        let thief = Identity::from_secret([3; 32]);
        let new_key = Identity::from_secret([4; 32]).public();
        let cookie = Cookie([5; COOKIE_BYTES]);
        let claim = SeatClaim::make(&seat, &host.public(), &new_key, &cookie).unwrap();
        assert!(claim.verify(&host, &new_key, &cookie));
        // Another key, another cookie, another claimant: nothing verifies.
        assert!(!claim.verify(&host, &thief.public(), &cookie));
        assert!(!claim.verify(&host, &new_key, &Cookie([6; COOKIE_BYTES])));
        let mut forged = SeatClaim::make(&thief, &host.public(), &new_key, &cookie).unwrap();
        forged.seat_key = seat.public();
        assert!(!forged.verify(&host, &new_key, &cookie));
    }
}

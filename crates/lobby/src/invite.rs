//! Who may sit and who may watch: a match's [`Invites`], and the proof of
//! an invitation that a joiner and the host give each other inside the
//! setup exchange.
//!
//! A match has a seat code and a spectator code ([`MatchCode`]s, each
//! [`Invite::Code`]); either door may instead be [`Invite::Open`] (a LAN
//! party's lobby, or spectating made public). A rejoin and the arbiter
//! need no code: they prove a key pair the match pinned (`claim.rs`).
//!
//! The proof is SPAKE2 (Abdalla and Pointcheval's password-authenticated
//! key exchange, RustCrypto's `spake2` on Ed25519) with the code's
//! [`MatchCode::password`], run once the cookie has proven the joiner's
//! address:
//!
//! ```text
//! joiner                                          host
//!   Join (cookie, SPAKE2 message A)      ───►  B derived from its secret, A and the
//!                                              joiner's key: nothing kept but a guess
//!                                              counted against the source
//!                                      ◄───   CodeProof (cookie, B, host confirmation)
//!   checks the host's confirmation: a host (or a party in its place) without the
//!   code cannot make it, and it binds the host's key, the joiner's, the cookie
//!   Join (cookie, A, joiner confirmation) ───►  checks it: only then a seat or a
//!                                              spectator's slot; the roster comes
//!                                      ◄───   tagged under the exchange's key
//! ```
//!
//! Each side's identity in the exchange is its public key, so the key both
//! derive binds the pair: a party that substitutes its own key for the
//! host's in the challenge computes another key and cannot confirm. The
//! key a joiner and the host share once the joiner is entitled
//! ([`SetupKey`]) authenticates the roster, so nobody on the path can
//! change the keys or the settings it carries.
//!
//! Nothing here draws randomness. The host's secret scalar for a joiner is
//! derived from a secret that comes in (the cookie secret, in a context of
//! its own), the joiner's message and key and the door asked for: the same
//! request gets the same answer, so the host keeps nothing per exchange and
//! an answer lost on the way is simply sent again. (The cookie is not part
//! of that derivation: it changes every 10 s slot, and an exchange may span
//! two.) The joiner's comes from the 32 random bytes its caller passes,
//! with a counter so that no attempt reuses another's.
//!
//! Invariants: a code's secret never leaves the process that holds it (the
//! wire carries SPAKE2 messages and MACs, which test one guess each, online);
//! every check compares in full, without an early exit; nothing here panics
//! on bytes from the wire.

use lockstep_protocol::seal::PublicKey;
use lockstep_rendezvous::MatchCode;
use rand_core::{CryptoRng, RngCore};
use spake2::{Ed25519Group, Identity as PakeIdentity, Password, Spake2};

use crate::message::{Cookie, MAC_BYTES, PAKE_BYTES, Want};

/// How a door of the match opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Invite {
    /// To anyone who reaches the port (a LAN party; spectating made
    /// public).
    Open,
    /// To whoever proves knowledge of this code.
    Code(MatchCode),
}

impl Invite {
    /// The code, if the door has one.
    pub fn code(&self) -> Option<&MatchCode> {
        match self {
            Invite::Open => None,
            Invite::Code(c) => Some(c),
        }
    }
}

/// A match's two doors: its seats and its spectators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Invites {
    /// Who may take a seat.
    pub seat: Invite,
    /// Who may watch (the arbiter proves its pinned key instead).
    pub spectate: Invite,
}

impl Invites {
    /// Both doors open: today's LAN lobby, where reaching the port is the
    /// invitation.
    pub const OPEN: Invites = Invites {
        seat: Invite::Open,
        spectate: Invite::Open,
    };

    /// A seat code and a spectator code made from 16 random bytes the
    /// caller draws (8 each: [`MatchCode::from_random`]).
    pub fn from_random(random: [u8; 16]) -> Invites {
        let mut seat = [0u8; 8];
        let mut spectate = [0u8; 8];
        seat.copy_from_slice(&random[..8]);
        spectate.copy_from_slice(&random[8..]);
        let seat = MatchCode::from_random(seat);
        let mut spectate_code = MatchCode::from_random(spectate);
        if spectate_code == seat {
            // One chance in 2⁵⁰: the spectators' code would seat them.
            spectate[0] ^= 1;
            spectate_code = MatchCode::from_random(spectate);
        }
        Invites {
            seat: Invite::Code(seat),
            spectate: Invite::Code(spectate_code),
        }
    }

    /// The same seats, and spectating open to anyone.
    pub fn public_spectating(self) -> Invites {
        Invites {
            spectate: Invite::Open,
            ..self
        }
    }

    /// The door a request for `want` goes through (`None`: a rejoin or the
    /// arbiter, which prove a key instead).
    pub fn door(&self, want: Want) -> Option<&Invite> {
        match want {
            Want::Seat => Some(&self.seat),
            Want::Spectate => Some(&self.spectate),
            Want::Rejoin | Want::Arbitrate => None,
        }
    }
}

/// The BLAKE3 contexts of everything derived here. The version in them
/// follows the setup format's.
const HOST_SCALAR: &str = "lockstep setup v6 2026-12 host invite scalar";
const JOINER_SCALAR: &str = "lockstep setup v6 2026-12 joiner invite scalar";
const HOST_CONFIRMS: &str = "lockstep setup v6 2026-12 host confirms the invite";
const JOINER_CONFIRMS: &str = "lockstep setup v6 2026-12 joiner confirms the invite";
const ROSTER_TAG: &str = "lockstep setup v6 2026-12 roster tag";

/// The key a joiner and the host share once the joiner proved what
/// entitles it: an invite exchange's key, or the proof key of a claimed
/// key pair ([`lockstep_protocol::seal::proof_key`]). It tags the roster.
#[derive(Clone, PartialEq, Eq)]
pub struct SetupKey([u8; 32]);

impl core::fmt::Debug for SetupKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("SetupKey(..)")
    }
}

impl SetupKey {
    /// The key whose bytes are `key` (32 bytes both sides derived).
    pub fn new(key: [u8; 32]) -> SetupKey {
        SetupKey(key)
    }

    fn mac(&self, context: &str, parts: &[&[u8]]) -> [u8; MAC_BYTES] {
        let mut h = blake3::Hasher::new_keyed(&blake3::derive_key(context, &self.0));
        for p in parts {
            h.update(p);
        }
        *h.finalize().as_bytes()
    }

    /// The host's confirmation that it holds the code, for the joiner with
    /// key `joiner` at the address `cookie` proves, asking for `want`.
    pub fn host_confirms(
        &self,
        host: &PublicKey,
        joiner: &PublicKey,
        cookie: &Cookie,
        want: Want,
    ) -> [u8; MAC_BYTES] {
        self.mac(
            HOST_CONFIRMS,
            &[&[want.byte()], &host.0, &joiner.0, &cookie.0],
        )
    }

    /// The joiner's confirmation that it holds the code (the same fields,
    /// another key).
    pub fn joiner_confirms(
        &self,
        host: &PublicKey,
        joiner: &PublicKey,
        cookie: &Cookie,
        want: Want,
    ) -> [u8; MAC_BYTES] {
        self.mac(
            JOINER_CONFIRMS,
            &[&[want.byte()], &host.0, &joiner.0, &cookie.0],
        )
    }

    /// The tag of a roster whose encoding is `roster`.
    pub fn roster_tag(&self, roster: &[u8]) -> [u8; MAC_BYTES] {
        self.mac(ROSTER_TAG, &[roster])
    }
}

/// Whether two MACs are equal, compared in full.
pub fn same_mac(a: &[u8; MAC_BYTES], b: &[u8; MAC_BYTES]) -> bool {
    a.iter().zip(b).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
}

/// A generator of the bytes a SPAKE2 side draws, read from BLAKE3's
/// extendable output over a derived key: the sans-IO stand-in for an
/// operating system's random source. As unpredictable as its key.
struct Drawn(blake3::OutputReader);

impl Drawn {
    fn new(context: &str, key: &[u8; 32], parts: &[&[u8]]) -> Drawn {
        let mut h = blake3::Hasher::new_keyed(&blake3::derive_key(context, key));
        for p in parts {
            h.update(p);
        }
        Drawn(h.finalize_xof())
    }
}

impl RngCore for Drawn {
    fn next_u32(&mut self) -> u32 {
        let mut b = [0u8; 4];
        self.0.fill(&mut b);
        u32::from_le_bytes(b)
    }

    fn next_u64(&mut self) -> u64 {
        let mut b = [0u8; 8];
        self.0.fill(&mut b);
        u64::from_le_bytes(b)
    }

    fn fill_bytes(&mut self, dest: &mut [u8]) {
        self.0.fill(dest);
    }

    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rand_core::Error> {
        self.0.fill(dest);
        Ok(())
    }
}

impl CryptoRng for Drawn {}

/// The identities the exchange binds: each side's public key, labelled.
fn pake_ids(joiner: &PublicKey, host: &PublicKey) -> (PakeIdentity, PakeIdentity) {
    let mut a = b"lockstep joiner ".to_vec();
    a.extend_from_slice(&joiner.0);
    let mut b = b"lockstep host ".to_vec();
    b.extend_from_slice(&host.0);
    (PakeIdentity::new(&a), PakeIdentity::new(&b))
}

fn to_message(bytes: &[u8]) -> Option<[u8; PAKE_BYTES]> {
    bytes.try_into().ok()
}

fn to_key(bytes: &[u8]) -> Option<SetupKey> {
    let key: [u8; 32] = bytes.try_into().ok()?;
    Some(SetupKey(key))
}

/// The host's side of one exchange, for the joiner with key `joiner` that
/// sent `msg` through the door `want` guarded by `code`: the host's
/// message and the key both sides derive, or `None` when `msg` is not a
/// joiner's SPAKE2 message. `secret` is the host's secret of 32 bytes
/// (see the module documentation); the same arguments give the same
/// answer.
pub fn host_answer(
    code: &MatchCode,
    secret: &[u8; 32],
    host: &PublicKey,
    joiner: &PublicKey,
    want: Want,
    msg: &[u8; PAKE_BYTES],
) -> Option<([u8; PAKE_BYTES], SetupKey)> {
    let rng = Drawn::new(
        HOST_SCALAR,
        secret,
        &[&[want.byte()], &host.0, &joiner.0, msg],
    );
    let (id_a, id_b) = pake_ids(joiner, host);
    let (state, answer) = Spake2::<Ed25519Group>::start_b_with_rng(
        &Password::new(code.password()),
        &id_a,
        &id_b,
        rng,
    );
    let key = state.finish(msg).ok()?;
    Some((to_message(&answer)?, to_key(&key)?))
}

/// A joiner's side of one exchange: its message, then (once the host's
/// answer came) the key.
pub struct JoinerExchange {
    state: Option<Spake2<Ed25519Group>>,
    msg: [u8; PAKE_BYTES],
    host: PublicKey,
    /// The host's message and the key, once finished.
    finished: Option<([u8; PAKE_BYTES], SetupKey)>,
}

impl core::fmt::Debug for JoinerExchange {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("JoinerExchange")
            .field("host", &self.host)
            .field("finished", &self.finished.is_some())
            .finish_non_exhaustive()
    }
}

/// Why a host's answer does not prove the code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExchangeError {
    /// Its SPAKE2 message is not one.
    Malformed,
    /// Its confirmation does not verify: it does not hold the code we do.
    WrongProof,
}

impl JoinerExchange {
    /// Attempt `attempt` of the joiner with key `joiner`, holding `code`,
    /// toward the host whose key is `host`, with the caller's 32 random
    /// bytes `random`.
    pub fn start(
        code: &MatchCode,
        random: &[u8; 32],
        attempt: u32,
        joiner: &PublicKey,
        host: &PublicKey,
    ) -> JoinerExchange {
        let rng = Drawn::new(
            JOINER_SCALAR,
            random,
            &[&attempt.to_le_bytes(), &joiner.0, &host.0],
        );
        let (id_a, id_b) = pake_ids(joiner, host);
        let (state, msg) = Spake2::<Ed25519Group>::start_a_with_rng(
            &Password::new(code.password()),
            &id_a,
            &id_b,
            rng,
        );
        let msg = to_message(&msg).unwrap_or([0; PAKE_BYTES]);
        JoinerExchange {
            state: Some(state),
            msg,
            host: *host,
            finished: None,
        }
    }

    /// Our message.
    pub fn message(&self) -> &[u8; PAKE_BYTES] {
        &self.msg
    }

    /// The host key the exchange binds.
    pub fn host(&self) -> &PublicKey {
        &self.host
    }

    /// The key, once the host proved the code.
    pub fn key(&self) -> Option<&SetupKey> {
        self.finished.as_ref().map(|(_, k)| k)
    }

    /// Takes the host's answer `answer` with its `confirm`ation, made for
    /// `cookie`: `Ok(true)` when it proves the code (now, or again),
    /// `Ok(false)` for an answer to finish with that differs from the one
    /// already taken (not the host's: ignore it).
    pub fn finish(
        &mut self,
        joiner: &PublicKey,
        want: Want,
        answer: &[u8; PAKE_BYTES],
        cookie: &Cookie,
        confirm: &[u8; MAC_BYTES],
    ) -> Result<bool, ExchangeError> {
        if let Some((taken, key)) = &self.finished {
            if taken != answer {
                return Ok(false);
            }
            let expected = key.host_confirms(&self.host, joiner, cookie, want);
            return Ok(same_mac(&expected, confirm));
        }
        let Some(state) = self.state.take() else {
            return Err(ExchangeError::Malformed);
        };
        let key = state
            .finish(answer)
            .ok()
            .and_then(|k| to_key(&k))
            .ok_or(ExchangeError::Malformed)?;
        let expected = key.host_confirms(&self.host, joiner, cookie, want);
        if !same_mac(&expected, confirm) {
            return Err(ExchangeError::WrongProof);
        }
        self.finished = Some((*answer, key));
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::COOKIE_BYTES;
    use lockstep_protocol::seal::Identity;

    fn code(text: &str) -> MatchCode {
        MatchCode::parse(text).unwrap()
    }

    fn keys() -> (PublicKey, PublicKey) {
        (
            Identity::from_secret([1; 32]).public(),
            Identity::from_secret([2; 32]).public(),
        )
    }

    #[test]
    fn the_same_code_gives_both_sides_the_same_key_and_confirmations() {
        let (joiner, host) = keys();
        let c = code("4K7Q-M2XHP9");
        let cookie = Cookie([5; COOKIE_BYTES]);
        let mut j = JoinerExchange::start(&c, &[7; 32], 0, &joiner, &host);
        let (answer, key) =
            host_answer(&c, &[9; 32], &host, &joiner, Want::Seat, j.message()).unwrap();
        // The host's answer is a function of its arguments.
        let again = host_answer(&c, &[9; 32], &host, &joiner, Want::Seat, j.message()).unwrap();
        assert_eq!(again.0, answer);
        let confirm = key.host_confirms(&host, &joiner, &cookie, Want::Seat);
        assert_eq!(
            j.finish(&joiner, Want::Seat, &answer, &cookie, &confirm),
            Ok(true)
        );
        assert_eq!(j.key(), Some(&key));
        // The answer again (a resend) still proves; another one is not taken.
        assert_eq!(
            j.finish(&joiner, Want::Seat, &answer, &cookie, &confirm),
            Ok(true)
        );
        let mut other = answer;
        other[5] ^= 1;
        assert_eq!(
            j.finish(&joiner, Want::Seat, &other, &cookie, &confirm),
            Ok(false)
        );
    }

    #[test]
    fn a_host_without_the_code_or_with_another_key_cannot_confirm() {
        let (joiner, host) = keys();
        let cookie = Cookie([5; COOKIE_BYTES]);
        for (host_code, host_key) in [
            (code("4K7Q-M2XHP8"), host),
            (code("4K7Q-M2XHP9"), Identity::from_secret([3; 32]).public()),
        ] {
            let mut j = JoinerExchange::start(&code("4K7Q-M2XHP9"), &[7; 32], 0, &joiner, &host);
            let (answer, key) = host_answer(
                &host_code,
                &[9; 32],
                &host_key,
                &joiner,
                Want::Seat,
                j.message(),
            )
            .unwrap();
            let confirm = key.host_confirms(&host_key, &joiner, &cookie, Want::Seat);
            assert_eq!(
                j.finish(&joiner, Want::Seat, &answer, &cookie, &confirm),
                Err(ExchangeError::WrongProof)
            );
        }
    }

    #[test]
    fn attempts_and_doors_differ() {
        let (joiner, host) = keys();
        let c = code("4K7Q-M2XHP9");
        let a = JoinerExchange::start(&c, &[7; 32], 0, &joiner, &host);
        let b = JoinerExchange::start(&c, &[7; 32], 1, &joiner, &host);
        assert_ne!(a.message(), b.message());
        let seat = host_answer(&c, &[9; 32], &host, &joiner, Want::Seat, a.message()).unwrap();
        let watch = host_answer(&c, &[9; 32], &host, &joiner, Want::Spectate, a.message()).unwrap();
        assert_ne!(seat.0, watch.0);
        // A message that is not a point is refused, not a panic.
        assert!(
            host_answer(
                &c,
                &[9; 32],
                &host,
                &joiner,
                Want::Seat,
                &[0xff; PAKE_BYTES]
            )
            .is_none()
        );
    }

    #[test]
    fn two_codes_drawn_differ() {
        let i = Invites::from_random([0; 16]);
        assert_ne!(i.seat, i.spectate);
        assert!(matches!(i.public_spectating().spectate, Invite::Open));
    }
}

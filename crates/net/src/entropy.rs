//! The randomness a process brings to its match, drawn from the operating
//! system: its key pair, its session token, a host's cookie secret and
//! match codes. The sans-IO crates never draw randomness themselves; the
//! runtime does, here.

use lockstep_lobby::Invites;
use lockstep_protocol::seal::Identity;

/// The operating system's random source failed.
#[derive(Debug, thiserror::Error)]
#[error("no random source: {0}")]
pub struct NoEntropy(String);

/// 32 random bytes.
pub fn secret() -> Result<[u8; 32], NoEntropy> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| NoEntropy(e.to_string()))?;
    Ok(bytes)
}

/// A key pair for one match (or one process's part of it).
pub fn identity() -> Result<Identity, NoEntropy> {
    Ok(Identity::from_secret(secret()?))
}

/// A session token: random, never 0 (it only tells processes apart: it
/// travels in clear).
pub fn token() -> Result<u32, NoEntropy> {
    let mut bytes = [0u8; 4];
    getrandom::fill(&mut bytes).map_err(|e| NoEntropy(e.to_string()))?;
    Ok(u32::from_le_bytes(bytes).max(1))
}

/// A seat code and a spectator code for a match a host offers.
pub fn invites() -> Result<Invites, NoEntropy> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| NoEntropy(e.to_string()))?;
    Ok(Invites::from_random(bytes))
}

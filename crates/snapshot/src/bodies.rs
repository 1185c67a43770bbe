//! What a snapshot carries of a game: [`Bodies`], the small trait a game
//! implements so its rigid bodies can be quantized, streamed and shown
//! without the snapshot crate knowing the game, and [`BodiesMut`] for a
//! receiver that writes received states back into its own simulation
//! (state synchronization).
//!
//! Invariants: a game has a fixed number of body *slots* for a whole match
//! (a slot whose body was removed reports `None`, it is never reused for
//! another body), and slot `i` means the same body on every machine, so a
//! snapshot's bodies line up with its baseline's by index.

use crate::body::BodyState;
use crate::quantize::{Bounds, QuantBody};

/// How much a body matters to someone watching, for the state
/// synchronization's priority accumulator (which sends `Player` bodies
/// first and bodies at rest last).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Role {
    /// A body no player touches.
    Free,
    /// A body a player is acting on (carried, pushed, fighting).
    Interacting,
    /// A player's own body.
    Player,
}

/// A game whose rigid bodies snapshots can carry.
pub trait Bodies {
    /// The box the game's bodies stay in and the resolutions to send them
    /// at (the same for every machine in a match).
    fn snapshot_bounds(&self) -> Bounds;

    /// Body slots, fixed for the match.
    fn body_slots(&self) -> u32;

    /// Slot `slot`'s body and its role, or `None` when it was removed (or
    /// `slot` is out of range).
    fn body(&self, slot: u32) -> Option<(BodyState, Role)>;
}

/// A game whose bodies a receiver can overwrite with the states it
/// received (state synchronization applies the sender's state this way).
pub trait BodiesMut: Bodies {
    /// Sets slot `slot`'s body to `state`: its pose, both velocities, and
    /// whether it sleeps (a body put to rest keeps zero velocities). Does
    /// nothing for a removed body or a slot out of range.
    fn set_body(&mut self, slot: u32, state: &BodyState);
}

/// Every slot of `game`, quantized with `bounds` (removed bodies are
/// [`QuantBody::ABSENT`]).
pub fn quantize<G: Bodies + ?Sized>(game: &G, bounds: &Bounds) -> Vec<QuantBody> {
    (0..game.body_slots())
        .map(|slot| match game.body(slot) {
            Some((state, _)) => QuantBody::new(&state, bounds),
            None => QuantBody::ABSENT,
        })
        .collect()
}

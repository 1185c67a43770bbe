//! The compression ladder's terms, shared by the codec's levels
//! ([`crate::delta`] and [`crate::predicted`]) and the stream: the
//! [`Level`]s, the [`Reference`] a snapshot is coded against, and the
//! [`Breakdown`] of the bits it spent.
//!
//! Invariant: a level's wire id ([`Level::id`]) never changes meaning.

use crate::predicted::Models;
use crate::quantize::QuantBody;

/// How much of the codec to use (the steps of the compression ladder).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Every body, quantized, in absolute codes.
    Absolute,
    /// Only the bodies that changed since the baseline (absolute codes).
    Delta,
    /// Changed bodies with positions and orientations relative to the
    /// baseline, and "unchanged" bits.
    Relative,
    /// The changed bodies predicted from their motion between the two
    /// newest acked snapshots, positions and orientations coded as the
    /// difference from that motion carried forward, in magnitude classes
    /// (bit-packed; see [`crate::predicted`]).
    Predicted,
    /// The same symbols through the adaptive binary range coder, each
    /// decision modelled in its context.
    RangeCoded,
    /// Range-coded, with a moving body's residuals sent in steps that
    /// grow with its speed: lossy within an eighth of how far it moves in
    /// a frame, exact for bodies at rest and slow ones; a body exactly as
    /// predicted in one decision (see [`crate::predicted`]).
    Scaled,
}

impl Level {
    /// Every level, in ladder order.
    pub const ALL: [Level; 6] = [
        Level::Absolute,
        Level::Delta,
        Level::Relative,
        Level::Predicted,
        Level::RangeCoded,
        Level::Scaled,
    ];

    /// Its number on the wire (a stream payload names its level).
    pub const fn id(self) -> u32 {
        match self {
            Level::Absolute => 0,
            Level::Delta => 1,
            Level::Relative => 2,
            Level::Predicted => 3,
            Level::RangeCoded => 4,
            Level::Scaled => 5,
        }
    }

    /// The level numbered `id`.
    pub fn from_id(id: u32) -> Option<Level> {
        Level::ALL.get(id as usize).copied()
    }

    /// Whether the level codes through adaptive models that a snapshot's
    /// coding can take over from its baseline's ([`Reference::models`]).
    pub fn has_models(self) -> bool {
        matches!(self, Level::RangeCoded | Level::Scaled)
    }
}

/// What a snapshot is coded against: the newest snapshot the receiver
/// acked (or the initial state), for the predicted levels the acked
/// snapshot before it, and for the range-coded levels the models the
/// baseline's coding ended with.
#[derive(Debug, Clone, Copy)]
pub struct Reference<'a> {
    /// The baseline: bodies not coded are these.
    pub base: &'a [QuantBody],
    /// Frames from the baseline to the snapshot coded (0 when unknown,
    /// e.g. the initial state: nothing is predicted then).
    pub base_age: u32,
    /// The acked snapshot before the baseline and how many frames before
    /// it, if the receiver holds one.
    pub previous: Option<(&'a [QuantBody], u32)>,
    /// The models the baseline's own coding ended with, to start from
    /// (`None`: fresh models).
    pub models: Option<&'a Models>,
}

impl<'a> Reference<'a> {
    /// Just a baseline, nothing to predict from.
    pub fn base(base: &'a [QuantBody]) -> Reference<'a> {
        Reference {
            base,
            base_age: 0,
            previous: None,
            models: None,
        }
    }
}

/// Bits spent per part of a snapshot, for the ladder's table.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Breakdown {
    /// Bodies coded (changed ones, or all at [`Level::Absolute`]).
    pub bodies: u64,
    /// Bits naming which bodies changed.
    pub index_bits: u64,
    /// Bits of positions.
    pub position_bits: u64,
    /// Bits of orientations.
    pub orientation_bits: u64,
    /// Bits of velocities and at-rest and presence flags.
    pub other_bits: u64,
}

impl Breakdown {
    /// Adds `other` into this one.
    pub fn add(&mut self, other: &Breakdown) {
        self.bodies += other.bodies;
        self.index_bits += other.index_bits;
        self.position_bits += other.position_bits;
        self.orientation_bits += other.orientation_bits;
        self.other_bits += other.other_bits;
    }

    /// Every bit.
    pub fn total(&self) -> u64 {
        self.index_bits + self.position_bits + self.orientation_bits + self.other_bits
    }
}

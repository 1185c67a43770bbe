//! The probe's cases: each is a name and a function that writes values through
//! a canonical [`StateWriter`] (which hashes them with BLAKE3).
//!
//! Adding a case is one line in [`CASES`], `Case::new("name", file::function)`
//! (plus a `mod` line for a new file).
//! Keep each group of cases in its own file. Rules for case code (the
//! determinism rules of `ARCHITECTURE.md`): no floats, and write only fixed-width values through
//! the writer's methods (`write_u32`, `write_fx`, ...): never `usize`, memory
//! layout or native-endian bytes. A case must be cheap (it also runs under
//! qemu) and must not read clocks, the environment or random seeds.

use lockstep_fx::{HashSink, StateWriter};

mod encoding;
mod fx;
mod physics;
mod replay;

/// The hashing writer every case gets: what [`StateWriter::hasher`] returns.
pub type Writer = StateWriter<HashSink>;

/// One determinism case.
pub struct Case {
    /// Name printed before the checksum; one word, unique.
    pub name: &'static str,
    /// Writes the case's values into a fresh [`Writer`].
    pub run: fn(&mut Writer),
}

impl Case {
    /// A case; `const` so that [`CASES`] keeps one line per case.
    pub const fn new(name: &'static str, run: fn(&mut Writer)) -> Case {
        Case { name, run }
    }
}

/// Every case, in output order.
pub const CASES: &[Case] = &[
    Case::new("encoding", encoding::widths),
    Case::new("fx_scalar", fx::scalar),
    Case::new("fx_sqrt", fx::sqrt),
    Case::new("fx_trig", fx::trig),
    Case::new("fx_vec3", fx::vec3),
    Case::new("fx_quat", fx::quat),
    Case::new("fx_mat3", fx::mat3),
    Case::new("fx_lanes", fx::lanes),
    Case::new("fx_rng", fx::rng),
    Case::new("fx_text", fx::text_and_snapshots),
    Case::new("physics_stack_sleep", physics::stack_sleep),
    Case::new("physics_tower_20", physics::tower_20),
    Case::new("physics_pyramid_15", physics::pyramid_15),
    Case::new("physics_cubes_1000", physics::cubes_1000),
    Case::new("physics_smash", physics::smash),
    Case::new("physics_many_pyramids", physics::many_pyramids),
    Case::new("physics_capsules", physics::capsules),
    Case::new("physics_crowd", physics::crowd),
    Case::new("replay_cubes_start", replay::cubes_start),
    Case::new("replay_cubes_keyframe", replay::cubes_keyframe),
    Case::new("replay_rts_start", replay::rts_start),
    Case::new("replay_rts_keyframe", replay::rts_keyframe),
];

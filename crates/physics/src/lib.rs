//! Deterministic fixed-point 3D rigid-body physics for lockstep.
//!
//! A [`World`] holds bodies (dynamic, kinematic, static) with box, sphere,
//! capsule or half-space [`Shape`]s, created through [`BodyBuilder`]s and
//! addressed by [`BodyHandle`]s. [`World::step`] advances one fixed time step
//! with a grid broadphase, exact manifolds with feature ids, and a
//! soft sequential-impulse solver whose constraint order is shuffled every
//! frame by `Rng::for_frame(seed, frame)`; islands of resting bodies sleep.
//!
//! The crate is laid out like rapier's pipeline: `world.rs` is the storage
//! and the API, `pipeline/` the step (collide, solve), `solver/` the
//! constraints and the deterministic partition into islands and batches,
//! `narrowphase/` the manifolds (one file per pair of shapes; box–box in its
//! own directory: separating axes, clipping, reduction, edges).
//!
//! Everything is integer arithmetic on [`lockstep_fx::Fx`], processed in slot
//! and pair order: the same state and the same calls give the same bits on
//! every CPU, with any number of threads ([`World::set_threads`]: islands
//! never share a body, so they can be solved at once), and on any
//! [`SolverPath`] ([`World::set_solver_path`]: constraints that share no
//! body are solved four at a time in vector lanes, AVX2 where the processor
//! has it, with the bits of solving them in turn). [`World::encode`] writes the whole state canonically (for the
//! BLAKE3 checksum or an exact saved state) and [`World::decode`] (or
//! [`World::read`], from anywhere in a larger state) restores it so
//! that stepping on gives the same bytes as the uninterrupted run.
//!
//! ```
//! use lockstep_fx::{Fx, Vec3};
//! use lockstep_physics::{BodyBuilder, Shape, World, WorldSettings};
//!
//! let mut world = World::new(WorldSettings::default());
//! world.add_body(BodyBuilder::fixed(Shape::HalfSpace)).unwrap();
//! let cube = world
//!     .add_body(BodyBuilder::dynamic(Shape::box_with_size(Vec3::splat(Fx::ONE))).position(Vec3::from_ints(0, 3, 0)))
//!     .unwrap();
//! for _ in 0..120 {
//!     world.step();
//! }
//! let y = world.body(cube).unwrap().position().y;
//! assert!((y - Fx::HALF).abs() < Fx::lit("0.01"), "resting at {y}");
//! ```
#![deny(clippy::float_arithmetic, clippy::float_cmp)]

mod aabb;
mod body;
mod broadphase;
mod contact;
mod island;
pub mod narrowphase;
mod pipeline;
mod query;
mod query_index;
#[cfg(feature = "scenes")]
pub mod scenes;
mod scratch;
mod settings;
mod shape;
mod solver;
mod state;
mod world;

pub use aabb::Aabb;
pub use body::{Body, BodyBuilder, BodyHandle, BodyKind};
pub use contact::{ContactInfo, Event};
pub use query::RayHit;
pub use settings::WorldSettings;
pub use shape::{MassProperties, Shape};
pub use solver::SolverPath;
pub use state::{MAX_CONTACT_BYTES, MAX_SLOT_BYTES, STATE_VERSION, StateError};
pub use world::{BodyError, World};

#![doc = include_str!(concat!(env!("OUT_DIR"), "/README.md"))]
//!
//! (This crate holds no code: it is the guide, one module per chapter, so
//! that `cargo doc` renders it and `cargo test` runs every Rust block in it.
//! `build.rs` says how a chapter becomes a module.)

include!(concat!(env!("OUT_DIR"), "/chapters.rs"));

/// The repository's front page: its examples are compiled and run here too,
/// so the README cannot drift from the code.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct FrontDoor;

//! Cross-crate integration tests for lockstep.
//!
//! This crate exists to see every crate at once: tests that exercise several
//! crates together live in `tests/tests/`, and the README's examples compile
//! and run here as doctests, so the README cannot drift from the code.

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct ReadmeExamples;

//! Cross-crate integration tests for lockstep.
//!
//! This crate exists to see every crate at once: tests that exercise several
//! crates together live in `tests/tests/`. (The README's and the guide's
//! examples are compiled and run by the `lockstep-guide` crate, `docs/guide/`.)

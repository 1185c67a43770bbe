//! [`SolverPath`]: which code solves the contact passes, a machine setting
//! like the thread count (every path gives the same bits), and the
//! process-wide default new worlds take.
//!
//! Invariant: a path is used only where [`SolverPath::is_available`] says
//! the processor can run it; the setters refuse the others.

use std::sync::atomic::{AtomicU8, Ordering};

/// Which code solves the passes. Every path gives the same bits; the
/// choice is a machine setting, not state (see [`World::set_solver_path`](crate::World::set_solver_path)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
#[non_exhaustive]
pub enum SolverPath {
    /// Every constraint alone (the reference).
    Sequential = 0,
    /// Runs of linear points in lanes of plain Rust, for the baseline
    /// instruction set of the target: the lane kernels' reference, run on
    /// every architecture by the tests and the cross check (slower than
    /// `Sequential`).
    Portable = 1,
    /// As `Portable`, compiled for AVX2 (x86_64 processors that have it).
    Avx2 = 2,
    /// As `Portable`, on NEON registers (aarch64, whose base instruction
    /// set has it).
    Neon = 3,
}

impl SolverPath {
    /// Whether this machine can run the path.
    pub fn is_available(self) -> bool {
        match self {
            SolverPath::Sequential | SolverPath::Portable => true,
            #[cfg(target_arch = "x86_64")]
            SolverPath::Avx2 => std::arch::is_x86_feature_detected!("avx2"),
            #[cfg(target_arch = "aarch64")]
            SolverPath::Neon => std::arch::is_aarch64_feature_detected!("neon"),
            // An instruction set of another architecture.
            _ => false,
        }
    }

    /// Every path this machine can run, the reference first.
    pub fn available() -> Vec<SolverPath> {
        ALL.into_iter().filter(|p| p.is_available()).collect()
    }

    /// The fastest path this machine can run: AVX2 where the processor
    /// has it, else the sequential one (the portable lanes cost more
    /// instructions than solving each constraint alone: they are the lane
    /// kernels' reference, not a speed-up; on aarch64 the NEON lanes run
    /// more instructions than the sequential path, see the lanes' module).
    pub fn best() -> SolverPath {
        if SolverPath::Avx2.is_available() {
            SolverPath::Avx2
        } else {
            SolverPath::Sequential
        }
    }

    /// The path a new world starts with: the last one given to
    /// [`SolverPath::set_default`] in this process, else [`SolverPath::best`].
    pub fn default_for_new_worlds() -> SolverPath {
        let chosen = usize::from(DEFAULT.load(Ordering::Relaxed));
        ALL.get(chosen).copied().unwrap_or_else(SolverPath::best)
    }

    /// Makes `path` the path of every world created from now on in this
    /// process (a machine setting for a whole program, e.g. to compare the
    /// paths' speed), if this machine can run it; returns whether it did.
    pub fn set_default(path: SolverPath) -> bool {
        let ok = path.is_available();
        if ok {
            DEFAULT.store(path as u8, Ordering::Relaxed);
        }
        ok
    }
}

/// Every path, in discriminant order (so `ALL[p as usize] == p`).
const ALL: [SolverPath; 4] = [
    SolverPath::Sequential,
    SolverPath::Portable,
    SolverPath::Avx2,
    SolverPath::Neon,
];

// `ALL` is in discriminant order, checked when the crate compiles.
const _: () = {
    let mut i = 0;
    while i < ALL.len() {
        assert!(ALL[i] as usize == i);
        i += 1;
    }
};

/// [`SolverPath::set_default`]'s choice (`u8::MAX`: none, take the best).
static DEFAULT: AtomicU8 = AtomicU8::new(u8::MAX);

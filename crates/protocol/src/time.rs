//! Virtual time: the [`Instant`] every time-dependent call takes as `now`.
//!
//! The protocol never reads a clock. Its caller (the `net` runtime, a test,
//! the simulated network of `lockstep-testkit`) passes a monotonic instant, counted in whole
//! microseconds from an origin the caller chooses. Invariant: arithmetic on
//! instants saturates, so a hostile or buggy `now` can never panic or wrap.

use core::fmt;

/// A monotonic instant, in microseconds since an arbitrary origin.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Instant(pub u64);

/// Microseconds in one millisecond.
pub const MICROS_PER_MILLI: u64 = 1_000;
/// Microseconds in one second.
pub const MICROS_PER_SECOND: u64 = 1_000_000;

impl Instant {
    /// The origin.
    pub const ZERO: Instant = Instant(0);

    /// An instant `micros` after the origin.
    pub const fn from_micros(micros: u64) -> Instant {
        Instant(micros)
    }

    /// An instant `millis` after the origin.
    pub const fn from_millis(millis: u64) -> Instant {
        Instant(millis.saturating_mul(MICROS_PER_MILLI))
    }

    /// Microseconds since the origin.
    pub const fn as_micros(self) -> u64 {
        self.0
    }

    /// `self + micros`, saturating.
    pub const fn plus(self, micros: u64) -> Instant {
        Instant(self.0.saturating_add(micros))
    }

    /// Microseconds from `earlier` to `self`, zero if `earlier` is later.
    pub const fn since(self, earlier: Instant) -> u64 {
        self.0.saturating_sub(earlier.0)
    }

    /// Signed microseconds from `other` to `self`.
    pub const fn signed_since(self, other: Instant) -> i64 {
        (self.0 as i128 - other.0 as i128) as i64
    }
}

impl fmt::Debug for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}.{:06}s",
            self.0 / MICROS_PER_SECOND,
            self.0 % MICROS_PER_SECOND
        )
    }
}

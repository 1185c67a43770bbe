//! The `Fx` scalar: a signed Q32.32 fixed-point number stored in an `i64`.
//!
//! Invariants and policies, identical in debug and release on every target:
//! - The value of `Fx(bits)` is exactly `bits / 2^32`; the bit pattern is the
//!   whole state (no hidden flags), so two `Fx` are equal iff their bits are.
//! - `+`, `-`, `*`, `/` and unary `-` **saturate**: a result beyond the range
//!   `[-2^31, 2^31 - 2^-32]` becomes `Fx::MIN` or `Fx::MAX`. Saturation keeps the
//!   sign and order of a runaway value (a body flung out of the world stays far
//!   away on the same side instead of wrapping to the opposite edge), and it never
//!   panics. The `wrapping_*` and `checked_*` methods give the other policies when
//!   a caller wants them explicitly.
//! - `*` rounds to nearest (ties toward +∞); `/` truncates toward zero. Division
//!   by zero saturates to `MAX` or `MIN` by the sign of the dividend (`0 / 0 = 0`).
//! - There is no float constructor. Constants come from integers, ratios or
//!   decimal literals parsed at compile time ([`Fx::lit`]); the lossy
//!   [`Fx::to_f64_lossy`] exists for rendering and reports only.

use core::fmt;
use core::ops::{Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Sub, SubAssign};
use core::str::FromStr;

use crate::Wide;

/// Number of fractional bits.
pub const FRAC_BITS: u32 = 32;

/// A signed Q32.32 fixed-point number: the value of `Fx::from_bits(b)` is
/// exactly `b / 2^32`.
///
/// `+`, `-`, `*`, `/` and unary `-` saturate at [`Fx::MIN`] and [`Fx::MAX`]
/// (identically in debug and release); `*` rounds to nearest, ties toward +∞;
/// `/` truncates toward zero and saturates on division by zero by the sign of
/// the dividend (`0 / 0 = 0`). The `wrapping_*` and `checked_*` methods give
/// the other policies explicitly.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[repr(transparent)]
pub struct Fx(i64);

/// Clamps a 128-bit intermediate into the `i64` range.
#[inline(always)]
const fn saturate_i128(v: i128) -> i64 {
    if v > i64::MAX as i128 {
        i64::MAX
    } else if v < i64::MIN as i128 {
        i64::MIN
    } else {
        v as i64
    }
}

impl Fx {
    /// Zero.
    pub const ZERO: Fx = Fx(0);
    /// One.
    pub const ONE: Fx = Fx(1 << FRAC_BITS);
    /// One half.
    pub const HALF: Fx = Fx(1 << (FRAC_BITS - 1));
    /// Two.
    pub const TWO: Fx = Fx(2 << FRAC_BITS);
    /// Minus one.
    pub const NEG_ONE: Fx = Fx(-(1 << FRAC_BITS));
    /// The largest value, `2^31 - 2^-32`.
    pub const MAX: Fx = Fx(i64::MAX);
    /// The smallest value, `-2^31`.
    pub const MIN: Fx = Fx(i64::MIN);
    /// The smallest positive value, `2^-32` (one LSB).
    pub const EPSILON: Fx = Fx(1);
    /// π rounded to nearest.
    pub const PI: Fx = Fx(13_493_037_705);
    /// π/2 rounded to nearest.
    pub const FRAC_PI_2: Fx = Fx(6_746_518_852);
    /// π/4 rounded to nearest.
    pub const FRAC_PI_4: Fx = Fx(3_373_259_426);
    /// 2π rounded to nearest.
    pub const TAU: Fx = Fx(26_986_075_409);

    /// The number whose raw Q32.32 representation is `bits`.
    #[inline(always)]
    pub const fn from_bits(bits: i64) -> Fx {
        Fx(bits)
    }

    /// The raw Q32.32 representation.
    #[inline(always)]
    pub const fn to_bits(self) -> i64 {
        self.0
    }

    /// The integer `n`, exactly.
    #[inline(always)]
    pub const fn from_int(n: i32) -> Fx {
        Fx((n as i64) << FRAC_BITS)
    }

    /// `num / den` rounded to nearest (ties away from zero), saturating when the
    /// quotient is out of range. `den == 0` saturates by the sign of `num`
    /// (`0 / 0 = 0`), like the `/` operator.
    pub const fn from_ratio(num: i64, den: i64) -> Fx {
        if den == 0 {
            return Fx::div_by_zero(num);
        }
        let n = (num as i128) << FRAC_BITS;
        let d = den as i128;
        let q = n / d;
        let r = n % d;
        // |2r| >= |d| means the remainder is at least half a unit: round away from zero.
        let q = if 2 * r.unsigned_abs() >= d.unsigned_abs() {
            if (n < 0) != (d < 0) { q - 1 } else { q + 1 }
        } else {
            q
        };
        Fx(saturate_i128(q))
    }

    /// Parses a decimal literal at compile time: `const G: Fx = Fx::lit("-9.81");`.
    ///
    /// Accepts an optional sign, digits, and an optional `.` with digits after
    /// it; the value is correctly rounded to the nearest representable number,
    /// ties away from zero, however many digits it has. Meant for constants: a malformed or out-of-range literal
    /// panics, which in a `const` is a compile error. Use [`str::parse`] for
    /// untrusted text.
    pub const fn lit(s: &str) -> Fx {
        match Fx::parse_decimal(s) {
            Ok(v) => v,
            Err(ParseFxError::Empty) => panic!("Fx::lit: empty literal"),
            Err(ParseFxError::InvalidDigit { .. }) => panic!("Fx::lit: invalid character"),
            Err(ParseFxError::OutOfRange) => panic!("Fx::lit: literal out of range"),
        }
    }

    /// The decimal parser behind [`Fx::lit`] and [`FromStr`].
    const fn parse_decimal(s: &str) -> Result<Fx, ParseFxError> {
        // 33 fractional digits decide the rounding exactly: every rounding
        // boundary (an odd multiple of 2^-33) has exactly 33, so digits past
        // them can never move a value across one and are ignored.
        const FRAC_DIGITS: u32 = 33;
        let b = s.as_bytes();
        let mut i = 0;
        let negative = if !b.is_empty() && (b[0] == b'-' || b[0] == b'+') {
            i = 1;
            b[0] == b'-'
        } else {
            false
        };
        let mut int: u128 = 0;
        let mut frac: u128 = 0;
        let mut frac_len: u32 = 0;
        let mut seen_digit = false;
        let mut seen_dot = false;
        while i < b.len() {
            let c = b[i];
            if c == b'.' && !seen_dot {
                seen_dot = true;
            } else if c.is_ascii_digit() {
                seen_digit = true;
                let d = (c - b'0') as u128;
                if !seen_dot {
                    int = int * 10 + d;
                    if int > (1u128 << 32) {
                        return Err(ParseFxError::OutOfRange);
                    }
                } else if frac_len < FRAC_DIGITS {
                    frac = frac * 10 + d;
                    frac_len += 1;
                }
            } else {
                return Err(ParseFxError::InvalidDigit { position: i as u32 });
            }
            i += 1;
        }
        if !seen_digit {
            return Err(ParseFxError::Empty);
        }
        // frac33 / 10^33 · 2^32 = frac33 / (2 · 5^33): exact, and frac33 < 2^110.
        let frac33 = frac * 10u128.pow(FRAC_DIGITS - frac_len);
        let unit = 2 * 5u128.pow(FRAC_DIGITS);
        let mut frac_bits = frac33 / unit;
        // Round to nearest, ties away from zero (the sign is applied after).
        if 2 * (frac33 % unit) >= unit {
            frac_bits += 1;
        }
        let magnitude = (int << FRAC_BITS) + frac_bits;
        if negative {
            if magnitude > 1u128 << 63 {
                return Err(ParseFxError::OutOfRange);
            }
            Ok(Fx((magnitude as i128).wrapping_neg() as i64))
        } else {
            if magnitude > i64::MAX as u128 {
                return Err(ParseFxError::OutOfRange);
            }
            Ok(Fx(magnitude as i64))
        }
    }

    /// The saturated quotient of `num / 0` (`0 / 0 = 0`).
    #[inline(always)]
    const fn div_by_zero(num: i64) -> Fx {
        if num > 0 {
            Fx::MAX
        } else if num < 0 {
            Fx::MIN
        } else {
            Fx::ZERO
        }
    }

    /// Saturating addition (the `+` operator).
    #[inline(always)]
    pub const fn saturating_add(self, rhs: Fx) -> Fx {
        Fx(self.0.saturating_add(rhs.0))
    }

    /// Saturating subtraction (the `-` operator).
    #[inline(always)]
    pub const fn saturating_sub(self, rhs: Fx) -> Fx {
        Fx(self.0.saturating_sub(rhs.0))
    }

    /// Saturating multiplication rounded to nearest (the `*` operator).
    #[inline(always)]
    pub const fn saturating_mul(self, rhs: Fx) -> Fx {
        Wide::product(self, rhs).round_saturating()
    }

    /// Saturating division truncated toward zero (the `/` operator).
    #[inline]
    pub const fn saturating_div(self, rhs: Fx) -> Fx {
        if rhs.0 == 0 {
            return Fx::div_by_zero(self.0);
        }
        // Fast path: when the shifted dividend fits in an i64 above i64::MIN
        // (so that MIN / -1 cannot occur), a 64-bit division gives exactly the
        // same quotient as the 128-bit one.
        if self.0 > -(1 << 31) && self.0 < (1 << 31) {
            return Fx((self.0 << FRAC_BITS) / rhs.0);
        }
        Fx(saturate_i128(
            ((self.0 as i128) << FRAC_BITS) / rhs.0 as i128,
        ))
    }

    /// Saturating negation (the unary `-` operator): `-MIN` is `MAX`.
    #[inline(always)]
    pub const fn saturating_neg(self) -> Fx {
        Fx(self.0.saturating_neg())
    }

    /// Two's-complement wrapping addition.
    #[inline(always)]
    pub const fn wrapping_add(self, rhs: Fx) -> Fx {
        Fx(self.0.wrapping_add(rhs.0))
    }

    /// Two's-complement wrapping subtraction.
    #[inline(always)]
    pub const fn wrapping_sub(self, rhs: Fx) -> Fx {
        Fx(self.0.wrapping_sub(rhs.0))
    }

    /// Addition, `None` on overflow.
    #[inline(always)]
    pub const fn checked_add(self, rhs: Fx) -> Option<Fx> {
        match self.0.checked_add(rhs.0) {
            Some(v) => Some(Fx(v)),
            None => None,
        }
    }

    /// Subtraction, `None` on overflow.
    #[inline(always)]
    pub const fn checked_sub(self, rhs: Fx) -> Option<Fx> {
        match self.0.checked_sub(rhs.0) {
            Some(v) => Some(Fx(v)),
            None => None,
        }
    }

    /// Multiplication rounded to nearest, `None` on overflow.
    #[inline]
    pub const fn checked_mul(self, rhs: Fx) -> Option<Fx> {
        let p = ((self.0 as i128) * (rhs.0 as i128) + (1i128 << (FRAC_BITS - 1))) >> FRAC_BITS;
        if p > i64::MAX as i128 || p < i64::MIN as i128 {
            None
        } else {
            Some(Fx(p as i64))
        }
    }

    /// Division truncated toward zero, `None` on overflow or division by zero.
    #[inline]
    pub const fn checked_div(self, rhs: Fx) -> Option<Fx> {
        if rhs.0 == 0 {
            return None;
        }
        let q = ((self.0 as i128) << FRAC_BITS) / rhs.0 as i128;
        if q > i64::MAX as i128 || q < i64::MIN as i128 {
            None
        } else {
            Some(Fx(q as i64))
        }
    }

    /// `self * n` for an integer `n`, exact unless it saturates.
    #[inline(always)]
    pub const fn mul_int(self, n: i64) -> Fx {
        Fx(self.0.saturating_mul(n))
    }

    /// `self / n` for an integer `n`, truncated toward zero; `n == 0` saturates
    /// like `/`.
    #[inline(always)]
    pub const fn div_int(self, n: i64) -> Fx {
        if n == 0 {
            return Fx::div_by_zero(self.0);
        }
        // MIN / -1 is the only overflow.
        Fx(match self.0.checked_div(n) {
            Some(v) => v,
            None => i64::MAX,
        })
    }

    /// Multiplies by `2^k` (`k` may be negative: an arithmetic shift right,
    /// rounding toward −∞), saturating.
    #[inline]
    pub const fn scale_pow2(self, k: i32) -> Fx {
        if k >= 0 {
            // Shifted in 64 bits: the result is exact when shifting back
            // gives the value again, and it saturates towards the value's
            // sign otherwise (as the 128-bit shift it stands for would).
            let k = if k > 63 { 63 } else { k as u32 };
            let v = self.0.wrapping_shl(k);
            if v >> k == self.0 {
                Fx(v)
            } else if self.0 < 0 {
                Fx::MIN
            } else {
                Fx::MAX
            }
        } else {
            let k = if k < -63 { 63 } else { (-k) as u32 };
            Fx(self.0 >> k)
        }
    }

    /// Absolute value, saturating (`MIN.abs()` is `MAX`).
    #[inline(always)]
    pub const fn abs(self) -> Fx {
        Fx(self.0.saturating_abs())
    }

    /// `-1`, `0` or `1` by the sign.
    #[inline(always)]
    pub const fn signum(self) -> Fx {
        Fx::from_int(self.0.signum() as i32)
    }

    /// `true` if strictly below zero.
    #[inline(always)]
    pub const fn is_negative(self) -> bool {
        self.0 < 0
    }

    /// `true` if strictly above zero.
    #[inline(always)]
    pub const fn is_positive(self) -> bool {
        self.0 > 0
    }

    /// `true` if zero.
    #[inline(always)]
    pub const fn is_zero(self) -> bool {
        self.0 == 0
    }

    /// The largest integer not above `self`.
    #[inline(always)]
    pub const fn floor(self) -> Fx {
        Fx(self.0 & !((1 << FRAC_BITS) - 1))
    }

    /// The smallest integer not below `self`; above the largest integer
    /// (`2^31 - 1`) it gives that integer, as the exact answer is out of range.
    #[inline(always)]
    pub const fn ceil(self) -> Fx {
        Fx(self.0.saturating_add((1 << FRAC_BITS) - 1)).floor()
    }

    /// The nearest integer, ties toward +∞, saturating at the top of the range.
    #[inline(always)]
    pub const fn round(self) -> Fx {
        Fx(self.0.saturating_add(1 << (FRAC_BITS - 1))).floor()
    }

    /// `self - self.floor()`, in `[0, 1)`.
    #[inline(always)]
    pub const fn fract(self) -> Fx {
        Fx(self.0 & ((1 << FRAC_BITS) - 1))
    }

    /// The integer part rounded toward −∞.
    #[inline(always)]
    pub const fn to_int_floor(self) -> i32 {
        (self.0 >> FRAC_BITS) as i32
    }

    /// The integer nearest to `self` (ties toward +∞), as an `i32`.
    #[inline(always)]
    pub const fn to_int_round(self) -> i32 {
        self.round().to_int_floor()
    }

    /// The smaller of two values.
    #[inline(always)]
    pub const fn min(self, other: Fx) -> Fx {
        if other.0 < self.0 { other } else { self }
    }

    /// The larger of two values.
    #[inline(always)]
    pub const fn max(self, other: Fx) -> Fx {
        if other.0 > self.0 { other } else { self }
    }

    /// `self` limited to `[lo, hi]` (`lo` wins if `lo > hi`).
    #[inline(always)]
    pub const fn clamp(self, lo: Fx, hi: Fx) -> Fx {
        self.min(hi).max(lo)
    }

    /// `self * b + c * d` with a single rounding: the two products are summed at
    /// full 128-bit precision before the shift. Used by dot products.
    #[inline(always)]
    pub const fn mul_add_mul(self, b: Fx, c: Fx, d: Fx) -> Fx {
        // Each product lies in [-2^126, 2^126], so only MIN·MIN + MIN·MIN can
        // overflow, and it saturates to MAX either way.
        Wide::product(self, b)
            .saturating_add(Wide::product(c, d))
            .round_saturating()
    }

    /// The value as an `f64`, for rendering and reports only: never feed the
    /// result back into simulated state.
    #[allow(clippy::float_arithmetic)]
    pub fn to_f64_lossy(self) -> f64 {
        self.0 as f64 * (1.0 / 4_294_967_296.0) // lossy, for rendering only
    }
}

/// Why a string is not a valid [`Fx`] decimal literal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ParseFxError {
    /// The text holds no digit.
    #[error("empty number")]
    Empty,
    /// A character other than a sign, digits and one `.`.
    #[error("invalid character at byte {position}")]
    InvalidDigit {
        /// Byte offset of the offending character.
        position: u32,
    },
    /// The value is outside `[-2^31, 2^31)`.
    #[error("number out of range for Q32.32")]
    OutOfRange,
}

impl FromStr for Fx {
    type Err = ParseFxError;
    fn from_str(s: &str) -> Result<Fx, ParseFxError> {
        Fx::parse_decimal(s)
    }
}

impl fmt::Display for Fx {
    /// Exact decimal form. Without a precision: rounded to 10 fractional
    /// digits with trailing zeros trimmed (`1.25`, `-3.0`). With one, exactly
    /// that many digits, rounded to nearest with ties away from zero; every
    /// `Fx` has at most 32 fractional digits, so from `{:.32}` on the text is
    /// exact. Width, fill, alignment, `+` and `0` are honoured as for integers.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // |x| = int + frac / 2^32, and frac / 2^32 = frac · 5^32 / 10^32.
        let mag = self.0.unsigned_abs();
        let mut int = mag >> FRAC_BITS;
        let exact = (mag & ((1 << FRAC_BITS) - 1)) as u128 * 5u128.pow(32);
        let digits = f.precision().unwrap_or(10);
        let (frac, kept) = if digits >= 32 {
            (exact, 32)
        } else {
            let unit = 10u128.pow(32 - digits as u32);
            let mut rounded = exact / unit;
            if 2 * (exact % unit) >= unit {
                rounded += 1;
            }
            let limit = 10u128.pow(digits as u32);
            int += (rounded / limit) as u64;
            (rounded % limit, digits)
        };
        let mut text = int.to_string();
        if digits > 0 {
            let mut frac_text = format!("{frac:0kept$}");
            if f.precision().is_none() {
                let trimmed = frac_text.trim_end_matches('0').len().max(1);
                frac_text.truncate(trimmed);
            }
            text.push('.');
            text.push_str(&frac_text);
            text.extend(core::iter::repeat_n('0', digits - kept));
        }
        let is_zero = int == 0 && frac == 0;
        f.pad_integral(self.0 >= 0 || is_zero, "", &text)
    }
}

impl fmt::Debug for Fx {
    /// The exact decimal value, however many digits it takes (every `Fx`
    /// has at most 32 fractional digits), so values one LSB apart always
    /// print differently.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = format!("{self:.32}");
        let trimmed = text.trim_end_matches('0');
        let trimmed = trimmed
            .strip_suffix('.')
            .map_or(trimmed.to_string(), |t| format!("{t}.0"));
        f.write_str(&trimmed)
    }
}

impl From<i32> for Fx {
    #[inline(always)]
    fn from(n: i32) -> Fx {
        Fx::from_int(n)
    }
}

impl Add for Fx {
    type Output = Fx;
    #[inline(always)]
    fn add(self, rhs: Fx) -> Fx {
        self.saturating_add(rhs)
    }
}

impl Sub for Fx {
    type Output = Fx;
    #[inline(always)]
    fn sub(self, rhs: Fx) -> Fx {
        self.saturating_sub(rhs)
    }
}

impl Mul for Fx {
    type Output = Fx;
    #[inline(always)]
    fn mul(self, rhs: Fx) -> Fx {
        self.saturating_mul(rhs)
    }
}

impl Div for Fx {
    type Output = Fx;
    #[inline(always)]
    fn div(self, rhs: Fx) -> Fx {
        self.saturating_div(rhs)
    }
}

impl Neg for Fx {
    type Output = Fx;
    #[inline(always)]
    fn neg(self) -> Fx {
        self.saturating_neg()
    }
}

impl AddAssign for Fx {
    #[inline(always)]
    fn add_assign(&mut self, rhs: Fx) {
        *self = *self + rhs;
    }
}

impl SubAssign for Fx {
    #[inline(always)]
    fn sub_assign(&mut self, rhs: Fx) {
        *self = *self - rhs;
    }
}

impl MulAssign for Fx {
    #[inline(always)]
    fn mul_assign(&mut self, rhs: Fx) {
        *self = *self * rhs;
    }
}

impl DivAssign for Fx {
    #[inline(always)]
    fn div_assign(&mut self, rhs: Fx) {
        *self = *self / rhs;
    }
}

impl core::iter::Sum for Fx {
    fn sum<I: Iterator<Item = Fx>>(iter: I) -> Fx {
        iter.fold(Fx::ZERO, |a, b| a + b)
    }
}

//! The lane kernel on AVX2: [`FxLanes`] for four `i64` in one 256-bit
//! register, and the kernel compiled for AVX2. With `neon.rs`, this is
//! the physics crate's only unsafe code: vector intrinsics, and the call
//! into a function compiled for an instruction set the processor was
//! checked to have. Nothing here is reachable unless `SolverPath::Avx2`
//! was found available.

use core::arch::x86_64::{
    __m256i, _mm256_add_epi64, _mm256_and_si256, _mm256_blend_epi32, _mm256_blendv_epi8,
    _mm256_cmpgt_epi64, _mm256_loadu_si256, _mm256_mul_epu32, _mm256_set1_epi64x,
    _mm256_setzero_si256, _mm256_slli_epi64, _mm256_srli_epi64, _mm256_storeu_si256,
    _mm256_sub_epi64,
};

use lockstep_fx::lanes::{FxLanes, LANES, Raw};

/// Four lanes in one AVX2 register.
#[derive(Clone, Copy)]
pub(super) struct Avx2(__m256i);

/// Four sums: the part that survives rounding and the low halves (as
/// `Portable`'s sums).
#[derive(Clone, Copy)]
pub(super) struct Avx2Sum {
    hi: __m256i,
    lo: __m256i,
}

// SAFETY (every block below): `Avx2` values are made only inside the two
// kernels below, which run only on a processor with AVX2, and in this
// module's test, after checking that the processor has it.
impl FxLanes for Avx2 {
    type Sum = Avx2Sum;

    #[inline(always)]
    fn from_raw(raw: Raw) -> Avx2 {
        Avx2(unsafe { _mm256_loadu_si256(raw.as_ptr().cast()) })
    }

    #[inline(always)]
    fn to_raw(self) -> Raw {
        let mut out = [0; LANES];
        unsafe { _mm256_storeu_si256(out.as_mut_ptr().cast(), self.0) };
        out
    }

    #[inline(always)]
    fn splat(raw: i64) -> Avx2 {
        Avx2(unsafe { _mm256_set1_epi64x(raw) })
    }

    #[inline(always)]
    fn add(self, o: Avx2) -> Avx2 {
        Avx2(unsafe { _mm256_add_epi64(self.0, o.0) })
    }

    #[inline(always)]
    fn sub(self, o: Avx2) -> Avx2 {
        Avx2(unsafe { _mm256_sub_epi64(self.0, o.0) })
    }

    #[inline(always)]
    fn max(self, o: Avx2) -> Avx2 {
        Avx2::select(o.sub_gt(self), o, self)
    }

    #[inline(always)]
    fn positive(self) -> Avx2 {
        self.sub_gt(Avx2::splat(0))
    }

    #[inline(always)]
    fn select(mask: Avx2, yes: Avx2, no: Avx2) -> Avx2 {
        Avx2(unsafe { _mm256_blendv_epi8(no.0, yes.0, mask.0) })
    }

    #[inline(always)]
    fn sum_zero() -> Avx2Sum {
        let z = unsafe { _mm256_setzero_si256() };
        Avx2Sum { hi: z, lo: z }
    }

    #[inline(always)]
    fn add_product(sum: &mut Avx2Sum, a: Avx2, b: Avx2) {
        // `Portable::add_product`, four lanes per instruction.
        unsafe {
            let (x, y) = (a.0, b.0);
            let z = _mm256_setzero_si256();
            let (xh, yh) = (_mm256_srli_epi64(x, 32), _mm256_srli_epi64(y, 32));
            let hh = _mm256_slli_epi64(_mm256_mul_epu32(xh, yh), 32);
            let x_negative = _mm256_cmpgt_epi64(z, x);
            let y_negative = _mm256_cmpgt_epi64(z, y);
            let hl = _mm256_sub_epi64(
                _mm256_mul_epu32(xh, y),
                _mm256_and_si256(x_negative, _mm256_slli_epi64(y, 32)),
            );
            let lh = _mm256_sub_epi64(
                _mm256_mul_epu32(x, yh),
                _mm256_and_si256(y_negative, _mm256_slli_epi64(x, 32)),
            );
            let ll = _mm256_mul_epu32(x, y);
            let high = _mm256_add_epi64(
                _mm256_add_epi64(hh, hl),
                _mm256_add_epi64(lh, _mm256_srli_epi64(ll, 32)),
            );
            sum.hi = _mm256_add_epi64(sum.hi, high);
            // The low 32 bits of each 64-bit lane of `ll`.
            sum.lo = _mm256_add_epi64(sum.lo, _mm256_blend_epi32(ll, z, 0b1010_1010));
        }
    }

    #[inline(always)]
    fn round(sum: Avx2Sum) -> Avx2 {
        unsafe {
            let half = _mm256_set1_epi64x(1 << 31);
            let carry = _mm256_srli_epi64(_mm256_add_epi64(sum.lo, half), 32);
            Avx2(_mm256_add_epi64(sum.hi, carry))
        }
    }
}

impl Avx2 {
    /// A mask of the lanes where `self > o`.
    #[inline(always)]
    fn sub_gt(self, o: Avx2) -> Avx2 {
        Avx2(unsafe { _mm256_cmpgt_epi64(self.0, o.0) })
    }
}

super::kernel::kernels!(Avx2, "avx2", crate::SolverPath::Avx2);

#[cfg(test)]
mod tests {
    #[test]
    fn avx2_lanes_give_the_portable_bits() {
        // The test runs wherever the crate's tests do; without AVX2 there
        // is nothing to compare.
        if crate::SolverPath::Avx2.is_available() {
            super::super::kernel::tests::give_the_portable_bits::<super::Avx2>();
        }
    }
}

//! The lane kernel on NEON (aarch64): [`FxLanes`] for four `i64` in two
//! 128-bit registers, and the kernel compiled for NEON. Like `avx2.rs`,
//! this is unsafe code only because vector intrinsics are: nothing here is
//! reachable unless `SolverPath::Neon` was found available, as it is on
//! every aarch64 processor that runs Linux (NEON is part of the base
//! instruction set there; the check is made anyway).
//!
//! **The products.** NEON multiplies two 32-bit halves of each 64-bit lane
//! into a 64-bit product (`umull`, two lanes per instruction), so a
//! product takes the four partial products of `Portable::add_product`,
//! with the same two corrections for the signed high halves. The halves
//! are narrowed into 32-bit lanes first (`xtn` for the low halves, `shrn`
//! for the high ones).
//!
//! The cross check's probe steps `crowd` on this path on aarch64 (under
//! qemu) against the portable lanes; this module's test, which compares
//! every operation on extreme values, runs the same way with a static
//! aarch64 build of the crate's tests (`tools/README.md`).

use core::arch::aarch64::{
    int64x2_t, uint32x2_t, uint64x2_t, vaddq_s64, vaddq_u64, vandq_u64, vbslq_s64, vcgtq_s64,
    vcgtzq_s64, vcltzq_s64, vdupq_n_s64, vdupq_n_u64, vld1q_s64, vmovn_u64, vmull_u32,
    vreinterpretq_s64_u64, vreinterpretq_u64_s64, vshlq_n_u64, vshrn_n_u64, vshrq_n_u64, vst1q_s64,
    vsubq_s64, vsubq_u64,
};

use lockstep_fx::lanes::{FxLanes, LANES, Raw};

// SAFETY (every block in this file): the intrinsics need NEON, which is
// part of the aarch64 base instruction set this module is compiled for
// (it exists only there).

/// Four lanes in two NEON registers: lanes 0 and 1, then 2 and 3.
#[derive(Clone, Copy)]
pub(super) struct Neon([int64x2_t; 2]);

/// Four sums: the part that survives rounding and the low halves (as
/// `Portable`'s sums), two lanes to a register.
#[derive(Clone, Copy)]
pub(super) struct NeonSum {
    hi: [uint64x2_t; 2],
    lo: [uint64x2_t; 2],
}

/// `f` on each register of `a` and `b`.
#[inline(always)]
fn pairwise(a: Neon, b: Neon, f: impl Fn(int64x2_t, int64x2_t) -> int64x2_t) -> Neon {
    Neon([f(a.0[0], b.0[0]), f(a.0[1], b.0[1])])
}

/// The low and the high 32-bit halves of each 64-bit lane of `x`.
#[inline(always)]
fn halves(x: uint64x2_t) -> (uint32x2_t, uint32x2_t) {
    unsafe { (vmovn_u64(x), vshrn_n_u64::<32>(x)) }
}

/// `Portable::add_product` on two lanes: adds `x · y`'s surviving bits
/// to `hi` and its low 32 bits to `lo`.
#[inline(always)]
fn add_product2(hi: &mut uint64x2_t, lo: &mut uint64x2_t, x: int64x2_t, y: int64x2_t) {
    unsafe {
        let (ux, uy) = (vreinterpretq_u64_s64(x), vreinterpretq_u64_s64(y));
        let (xl, xh) = halves(ux);
        let (yl, yh) = halves(uy);
        // Only the low 32 bits of the high halves' product survive.
        let hh = vshlq_n_u64::<32>(vmull_u32(xh, yh));
        // A negative half is its unsigned value less 2³²: take back 2³²
        // times the other half where it is (`vcltzq`: all ones there).
        let hl = vsubq_u64(
            vmull_u32(xh, yl),
            vandq_u64(vcltzq_s64(x), vshlq_n_u64::<32>(uy)),
        );
        let lh = vsubq_u64(
            vmull_u32(xl, yh),
            vandq_u64(vcltzq_s64(y), vshlq_n_u64::<32>(ux)),
        );
        let ll = vmull_u32(xl, yl);
        let high = vaddq_u64(vaddq_u64(hh, hl), vaddq_u64(lh, vshrq_n_u64::<32>(ll)));
        *hi = vaddq_u64(*hi, high);
        *lo = vaddq_u64(*lo, vandq_u64(ll, vdupq_n_u64(0xffff_ffff)));
    }
}

impl FxLanes for Neon {
    type Sum = NeonSum;

    #[inline(always)]
    fn from_raw(raw: Raw) -> Neon {
        unsafe { Neon([vld1q_s64(raw.as_ptr()), vld1q_s64(raw[2..].as_ptr())]) }
    }

    #[inline(always)]
    fn to_raw(self) -> Raw {
        let mut out = [0; LANES];
        unsafe {
            vst1q_s64(out.as_mut_ptr(), self.0[0]);
            vst1q_s64(out[2..].as_mut_ptr(), self.0[1]);
        }
        out
    }

    #[inline(always)]
    fn splat(raw: i64) -> Neon {
        let x = unsafe { vdupq_n_s64(raw) };
        Neon([x, x])
    }

    #[inline(always)]
    fn add(self, o: Neon) -> Neon {
        pairwise(self, o, |a, b| unsafe { vaddq_s64(a, b) })
    }

    #[inline(always)]
    fn sub(self, o: Neon) -> Neon {
        pairwise(self, o, |a, b| unsafe { vsubq_s64(a, b) })
    }

    #[inline(always)]
    fn max(self, o: Neon) -> Neon {
        pairwise(self, o, |a, b| unsafe { vbslq_s64(vcgtq_s64(b, a), b, a) })
    }

    #[inline(always)]
    fn positive(self) -> Neon {
        Neon(
            self.0
                .map(|a| unsafe { vreinterpretq_s64_u64(vcgtzq_s64(a)) }),
        )
    }

    #[inline(always)]
    fn select(mask: Neon, yes: Neon, no: Neon) -> Neon {
        let pick =
            |i: usize| unsafe { vbslq_s64(vreinterpretq_u64_s64(mask.0[i]), yes.0[i], no.0[i]) };
        Neon([pick(0), pick(1)])
    }

    #[inline(always)]
    fn sum_zero() -> NeonSum {
        let z = unsafe { vdupq_n_u64(0) };
        NeonSum {
            hi: [z, z],
            lo: [z, z],
        }
    }

    #[inline(always)]
    fn add_product(sum: &mut NeonSum, a: Neon, b: Neon) {
        for i in 0..2 {
            add_product2(&mut sum.hi[i], &mut sum.lo[i], a.0[i], b.0[i]);
        }
    }

    #[inline(always)]
    fn round(sum: NeonSum) -> Neon {
        let round2 = |i: usize| unsafe {
            let carry = vshrq_n_u64::<32>(vaddq_u64(sum.lo[i], vdupq_n_u64(1 << 31)));
            vreinterpretq_s64_u64(vaddq_u64(sum.hi[i], carry))
        };
        Neon([round2(0), round2(1)])
    }
}

super::kernel::kernels!(Neon, "neon", crate::SolverPath::Neon);

#[cfg(test)]
mod tests {
    #[test]
    fn neon_lanes_give_the_portable_bits() {
        assert!(crate::SolverPath::Neon.is_available());
        super::super::kernel::tests::give_the_portable_bits::<super::Neon>();
    }
}

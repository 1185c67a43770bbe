//! The exact solve of a manifold's normal rows, as one block.
//!
//! **Why.** The normal rows of a face contact (up to four points) are
//! coupled through the bodies' turning, and the four corners of a face lie
//! in one plane: a body has only three ways to move them along the normal
//! (lift, and tip about two axes), so the points' effective-mass matrix `K`
//! has rank three. Gauss–Seidel sweeps over such rows converge slowly and
//! leave the first corner a larger share, and in a column of resting cubes
//! the error does not average out: it tips the cubes a little each step,
//! friction turns the tipping into sideways motion, and a few columns of
//! `cubes-1000` swayed ±60 mm for two seconds before they could sleep.
//! Solved as one block, a pass gives each row exactly the impulse that
//! meets its target, the shares of a symmetric load come out equal, and the
//! columns come to rest as soon as the last cube has landed.
//!
//! **What it solves.** For each pass, the impulses that every row of the
//! manifold would reach if it were swept until nothing changed, with the
//! other manifolds held still:
//! - in a soft pass, a row settles where its push-out balances its leak,
//!   `vnᵢ + tᵢ = −c·Kᵢᵢ·λᵢ` with `c = 1/a₂` (`Softness::leak_weight`); a
//!   row still ahead of contact there has a target that lets it close and
//!   an impulse of zero, so the leak does not change it;
//! - in a relaxing pass (or a soft pass where every row is ahead of
//!   contact), a row meets its target, `vnᵢ + tᵢ = 0`, up to a
//!   regularization `c = 2⁻¹⁰` that picks, among the many impulse shares a
//!   flat face allows, the one nearest to equal.
//!
//! That is `(K + c·diag K)·λ' = K·λ − vn − t`, a symmetric positive
//! definite system per kind of pass, factored once a step (`L·D·Lᵀ`) when
//! the constraint is built, and solved in each pass by two substitutions.
//!
//! **When it does not apply** the rows are swept as before: a single
//! point; a solution in which a row would pull (a corner lifting off, or a
//! face still falling towards the other, which the clamped sweeps handle);
//! or a system too badly scaled or too close to singular to factor in `Fx`
//! (bodies of very different sizes, points on top of each other).
//!
//! **Invariants.** Pure `Fx` arithmetic: the same bits on every machine.
//! The matrices are scaled by a power of two (exactly) so that their
//! largest diagonal entry lies in `[1, 2)` before they are factored, which
//! keeps the factors' precision independent of the bodies' masses; the
//! pivots and factors are bounded (`MIN_PIVOT`, `MAX_FACTOR`,
//! `MAX_SHIFT`), so the products wrap nowhere, and each solved value is
//! rounded once, saturating.

use lockstep_fx::Fx;
use lockstep_fx::wide::Wide;
use lockstep_fx::wide::wrapping::{add, mul, sub};

use super::Softness;

/// The rigid rows' regularization: `2⁻¹⁰` of each diagonal entry.
const RIGID_WEIGHT_SHIFT: i32 = -10;

/// The same weight as a number, the least a soft row's weight may be.
const RIGID_WEIGHT: Fx = Fx::from_bits(1 << (32 + RIGID_WEIGHT_SHIFT));

/// The widest power-of-two scaling of a block: beyond it the bodies are so
/// heavy or so light that the rows are swept instead (and an inverse pivot,
/// at most `2^16` scaled, stays below `2^28` unscaled).
const MAX_SHIFT: i32 = 12;

/// The smallest pivot of a scaled matrix that is factored: below it the
/// rows are close to dependent even with the regularization, and are swept.
const MIN_PIVOT: Fx = Fx::from_bits(1 << 16);

/// The largest entry of `L` that is kept (rows that need more are nearly
/// dependent, and are swept).
const MAX_FACTOR: Fx = Fx::from_int(256);

/// Where the entry `(i, j)`, `i ≠ j`, of a symmetric 4×4 matrix is kept in
/// a six-slot array, for the pairs `(0,1) (0,2) (0,3) (1,2) (1,3) (2,3)`
/// (the order of `Constraint::coupling`).
const SLOT: [[usize; 4]; 4] = [[0, 0, 1, 2], [0, 0, 3, 4], [1, 3, 0, 5], [2, 4, 5, 0]];

/// A factored system `L·D·Lᵀ` of up to four rows.
#[derive(Clone, Copy, Debug, Default)]
struct Factors {
    /// The strict lower triangle of `L` (unit diagonal), `(i, j)` with
    /// `j < i` at `SLOT[i][j]`.
    lower: [Fx; 6],
    /// `2^shift / Dᵢ`: the inverse pivots with the matrix's scaling undone,
    /// so a solve takes the unscaled right-hand side.
    inverse_pivots: [Fx; 4],
    /// What the regularization adds to each row's diagonal, unscaled: the
    /// weight of its impulse in the right-hand side.
    leak: [Fx; 4],
}

impl Factors {
    /// Factors `2^shift · (K + diag(extra))`, where `K` has diagonal
    /// `diagonal` and off-diagonal entries `off` (at `SLOT`), all already
    /// scaled by `2^shift` except `extra`; `None` when a pivot is too small
    /// or a factor too large for the bounds of [`Factors::solve`].
    fn new(
        n: usize,
        diagonal: [Fx; 4],
        off: [Fx; 6],
        extra: [Fx; 4],
        shift: i32,
    ) -> Option<Factors> {
        // Every operand is bounded (scaled entries below 2 plus the weight,
        // pivots at least MIN_PIVOT, factors at most MAX_FACTOR), so the
        // wrapping operators give the saturating ones' results.
        let mut f = Factors::default();
        let mut pivots = [Fx::ZERO; 4];
        for j in 0..n {
            // w_p = L_jp · D_p, used by the pivot and by the column below it.
            let mut w = [Fx::ZERO; 4];
            let mut d = add(diagonal[j], extra[j].scale_pow2(shift));
            for p in 0..j {
                w[p] = mul(f.lower[SLOT[j][p]], pivots[p]);
                d = sub(d, mul(f.lower[SLOT[j][p]], w[p]));
            }
            if d < MIN_PIVOT {
                return None;
            }
            pivots[j] = d;
            let inverse = reciprocal(d);
            f.inverse_pivots[j] = inverse.scale_pow2(shift);
            f.leak[j] = extra[j];
            for i in j + 1..n {
                let mut e = off[SLOT[i][j]];
                for p in 0..j {
                    e = sub(e, mul(f.lower[SLOT[i][p]], w[p]));
                }
                let l = mul(e, inverse);
                if l.abs() > MAX_FACTOR {
                    return None;
                }
                f.lower[SLOT[i][j]] = l;
            }
        }
        Some(f)
    }

    /// `y` with `K'·y = x`, `K'` the unscaled system, for `N` rows (a
    /// constant, so the loops unroll and every index is known). Each sum is
    /// taken in Q64.64 (a few products of bounded factors cannot leave it)
    /// and rounded once, saturating.
    #[inline(always)]
    fn solve<const N: usize>(&self, x: &[Fx; 4]) -> [Fx; 4] {
        let mut z = [Fx::ZERO; 4];
        for i in 0..N {
            let mut sum = Wide::from_fx(x[i]);
            for p in 0..i {
                sum = sum.wrapping_sub(Wide::product(self.lower[SLOT[i][p]], z[p]));
            }
            z[i] = sum.round_saturating();
        }
        let mut y = [Fx::ZERO; 4];
        for i in (0..N).rev() {
            let mut sum = Wide::product(z[i], self.inverse_pivots[i]);
            for p in i + 1..N {
                sum = sum.wrapping_sub(Wide::product(self.lower[SLOT[p][i]], y[p]));
            }
            y[i] = sum.round_saturating();
        }
        y
    }
}

/// `1/d` for a pivot `d ≥ MIN_PIVOT`: `⌊(2⁶⁴ − 1) / d⌋` in raw Q32.32 (one
/// 64-bit division, where `Fx`'s divides 128 bits), which is at most
/// `2⁵²`.
fn reciprocal(d: Fx) -> Fx {
    Fx::from_bits((u64::MAX / d.to_bits() as u64) as i64)
}

/// A manifold's normal rows, factored for both kinds of pass.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Block {
    soft: Factors,
    rigid: Factors,
    /// Whether both kinds are factored (two to four rows that factor).
    usable: bool,
}

/// One row as a pass sees it: its target `t` and whether it is soft.
#[derive(Clone, Copy, Debug)]
pub(super) struct RowTarget {
    pub target: Fx,
    pub soft: bool,
}

impl Block {
    /// The block of `n` rows with `K`'s diagonal `diagonal` and
    /// off-diagonal entries `coupling` (in `Constraint::coupling`'s order),
    /// softened by `soft`; unusable for fewer than two rows, or rows that
    /// do not factor.
    pub(super) fn new(n: usize, diagonal: [Fx; 4], coupling: [Fx; 6], soft: Softness) -> Block {
        let unusable = Block::default();
        if !(2..=4).contains(&n) {
            return unusable;
        }
        let largest = diagonal[..n].iter().copied().fold(Fx::ZERO, Fx::max);
        if !largest.is_positive() {
            return unusable;
        }
        // 2^k · largest in [1, 2): the bit above the fraction's top.
        let top = 63 - largest.to_bits().leading_zeros() as i32;
        let k = 32 - top;
        if k.abs() > MAX_SHIFT {
            return unusable;
        }
        let scaled_off = coupling.map(|e| e.scale_pow2(k));
        let scaled = diagonal.map(|d| d.scale_pow2(k));
        let soft_weight = soft.leak_weight.max(RIGID_WEIGHT);
        let soft_extra = diagonal.map(|d| d * soft_weight);
        let rigid_extra = diagonal.map(|d| d.scale_pow2(RIGID_WEIGHT_SHIFT));
        let (Some(soft_factors), Some(rigid)) = (
            Factors::new(n, scaled, scaled_off, soft_extra, k),
            Factors::new(n, scaled, scaled_off, rigid_extra, k),
        ) else {
            return unusable;
        };
        Block {
            soft: soft_factors,
            rigid,
            usable: true,
        }
    }

    /// Takes and gives impulses in units of `2^exponent` N·s instead (a
    /// narrow constraint's, see `products.rs`): the leak weights, which
    /// multiply impulses, scaled up by that, the inverse pivots, which give
    /// impulses, scaled down.
    pub(super) fn rescale_impulses(&mut self, exponent: i32) {
        for f in [&mut self.soft, &mut self.rigid] {
            f.leak = f.leak.map(|l| l.scale_pow2(exponent));
            f.inverse_pivots = f.inverse_pivots.map(|p| p.scale_pow2(-exponent));
        }
    }

    /// The rows' new accumulated impulses, given their normal velocities
    /// `vn`, targets and current impulses `impulse`; `None` when the block
    /// does not apply (see the module documentation) and the rows are to be
    /// swept.
    #[inline]
    pub(super) fn solve(
        &self,
        n: usize,
        vn: &[Fx; 4],
        rows: &[RowTarget; 4],
        impulse: &[Fx; 4],
    ) -> Option<[Fx; 4]> {
        if !self.usable {
            return None;
        }
        let soft = rows[..n].iter().any(|r| r.soft);
        let factors = if soft { &self.soft } else { &self.rigid };
        let mut x = [Fx::ZERO; 4];
        for i in 0..n {
            // Bounded like every product of the passes: a leak weight is
            // below a diagonal entry of a usable block (< 2^17), an impulse
            // below the masses times the speed limit.
            x[i] = add(add(vn[i], rows[i].target), mul(factors.leak[i], impulse[i]));
        }
        let y = match n {
            2 => factors.solve::<2>(&x),
            3 => factors.solve::<3>(&x),
            _ => factors.solve::<4>(&x),
        };
        let mut next = [Fx::ZERO; 4];
        for i in 0..n {
            next[i] = impulse[i] - y[i];
            if next[i].is_negative() {
                return None;
            }
        }
        Some(next)
    }
}

#[cfg(test)]
// Rows are named by index in these checks, as in the equations.
#[allow(clippy::needless_range_loop)]
mod tests {
    use super::*;

    /// `K` of a unit cube of 1 kg (inverse inertia 6) resting on the ground
    /// on its four bottom corners `(±½, ±½)`, in `SLOT` order: diagonal 4,
    /// neighbours 1, opposite corners −2 (rank 3: the twist is free).
    fn cube_on_ground() -> ([Fx; 4], [Fx; 6]) {
        let one = Fx::ONE;
        let two = Fx::from_int(2);
        ([Fx::from_int(4); 4], [one, one, -two, -two, one, one])
    }

    fn rows(target: Fx, soft: bool) -> [RowTarget; 4] {
        [RowTarget { target, soft }; 4]
    }

    /// `K·Δλ` for row `i`.
    fn k_times(diagonal: &[Fx; 4], coupling: &[Fx; 6], d: &[Fx; 4], i: usize) -> Fx {
        (0..4).fold(Fx::ZERO, |s, j| {
            let k = if i == j {
                diagonal[i]
            } else {
                coupling[SLOT[i][j]]
            };
            s + k * d[j]
        })
    }

    #[test]
    fn a_symmetric_load_is_shared_equally_and_meets_its_target() {
        let (diagonal, coupling) = cube_on_ground();
        let block = Block::new(4, diagonal, coupling, Softness::RIGID);
        // A relaxing pass: gravity left every corner sinking at 4 cm/s.
        let vn = [Fx::lit("-0.04"); 4];
        let next = block
            .solve(4, &vn, &rows(Fx::ZERO, false), &[Fx::ZERO; 4])
            .expect("a resting face is solved as a block");
        let spread = next.iter().copied().fold(Fx::MIN, Fx::max)
            - next.iter().copied().fold(Fx::MAX, Fx::min);
        assert!(spread < Fx::from_bits(16), "shares {next:?}");
        for i in 0..4 {
            // Each corner stops, up to the regularization's 2⁻¹⁰.
            let after = vn[i] + k_times(&diagonal, &coupling, &next, i);
            assert!(after.abs() < Fx::lit("0.0001"), "row {i}: {after}");
        }
    }

    #[test]
    fn soft_rows_settle_where_the_leak_balances_the_push() {
        let (diagonal, coupling) = cube_on_ground();
        let soft = Softness::new(Fx::from_int(36), Fx::from_int(5), Fx::from_ratio(1, 240));
        let block = Block::new(4, diagonal, coupling, soft);
        let vn = [
            Fx::lit("-0.04"),
            Fx::lit("-0.03"),
            Fx::lit("-0.05"),
            Fx::lit("-0.04"),
        ];
        let impulse = [Fx::lit("0.01"); 4];
        let target = Fx::lit("-0.002");
        let next = block
            .solve(4, &vn, &rows(target, true), &impulse)
            .expect("pressed rows are solved as a block");
        let change = [0, 1, 2, 3].map(|i| next[i] - impulse[i]);
        for i in 0..4 {
            let settled = vn[i] + k_times(&diagonal, &coupling, &change, i) + target;
            let leak = -(soft.leak_weight * diagonal[i] * next[i]);
            assert!((settled - leak).abs() < Fx::lit("0.00001"), "row {i}");
        }
    }

    #[test]
    fn a_corner_that_would_pull_is_left_to_the_sweeps() {
        let (diagonal, coupling) = cube_on_ground();
        let block = Block::new(4, diagonal, coupling, Softness::RIGID);
        // Three corners sink, one lifts away fast: holding it would pull.
        let vn = [
            Fx::lit("-0.04"),
            Fx::lit("-0.04"),
            Fx::lit("-0.04"),
            Fx::lit("0.5"),
        ];
        assert!(
            block
                .solve(4, &vn, &rows(Fx::ZERO, false), &[Fx::ZERO; 4])
                .is_none()
        );
    }

    #[test]
    fn one_row_or_rows_out_of_scale_are_not_a_block() {
        let (diagonal, coupling) = cube_on_ground();
        let vn = [Fx::lit("-0.04"); 4];
        let one = Block::new(1, diagonal, coupling, Softness::RIGID);
        assert!(
            one.solve(1, &vn, &rows(Fx::ZERO, false), &[Fx::ZERO; 4])
                .is_none()
        );
        // Bodies of about a million tonnes: K far below 2^-12.
        let heavy = Block::new(
            4,
            diagonal.map(|d| d.scale_pow2(-24)),
            coupling.map(|k| k.scale_pow2(-24)),
            Softness::RIGID,
        );
        assert!(
            heavy
                .solve(4, &vn, &rows(Fx::ZERO, false), &[Fx::ZERO; 4])
                .is_none()
        );
    }
}

//! Fog of war: what each player sees ([`Fog`]), on the navigation grid's
//! cells.
//!
//! Every `fog_interval` frames, after the physics step, each player's
//! visible cells are recomputed: the cells whose centre lies within
//! `unit.view` of one of its living units' cells (a disc of cells around
//! the unit's cell, the same disc for every unit). Explored cells are every
//! cell ever visible. A player's view of the match is its fog: a renderer
//! shows the terrain of explored cells and enemy units only in visible
//! ones.
//!
//! Invariants: the fog is simulation state, the same on every seat (all of
//! it is computed by every peer and is part of the checksum); it is a pure
//! function of the units' cells at the update frames and of the fog before
//! (explored only grows); both sets hold one bit per grid cell, in `u64`
//! words, bits past the last cell zero.

use lockstep_derive::Canonical;
use lockstep_fx::Fx;

use super::nav::NavGrid;

/// One player's fog: the cells it sees now and the cells it has seen.
#[derive(Debug, Clone, PartialEq, Eq, Default, Canonical)]
pub struct Fog {
    /// Bit per cell: seen by one of the player's units at the last update.
    #[canonical(max_len = 1024)]
    visible: Vec<u64>,
    /// Bit per cell: ever visible.
    #[canonical(max_len = 1024)]
    explored: Vec<u64>,
}

impl Fog {
    /// A fog over `cells` cells with nothing seen.
    pub fn new(cells: u32) -> Fog {
        let words = cells.div_ceil(64) as usize;
        Fog {
            visible: vec![0; words],
            explored: vec![0; words],
        }
    }

    /// Whether cell `index` is visible now.
    pub fn is_visible(&self, index: u32) -> bool {
        bit(&self.visible, index)
    }

    /// Whether cell `index` has ever been visible.
    pub fn is_explored(&self, index: u32) -> bool {
        bit(&self.explored, index)
    }

    /// Cells visible now.
    pub fn visible_cells(&self) -> u32 {
        self.visible.iter().map(|w| w.count_ones()).sum()
    }

    /// Cells ever visible.
    pub fn explored_cells(&self) -> u32 {
        self.explored.iter().map(|w| w.count_ones()).sum()
    }

    /// Whether the sets cover exactly `cells` cells (for loaded states).
    pub(crate) fn fits(&self, cells: u32) -> bool {
        let words = cells.div_ceil(64) as usize;
        let tail_clear =
            |set: &[u64]| cells % 64 == 0 || set.last().is_some_and(|w| w >> (cells % 64) == 0);
        self.visible.len() == words
            && self.explored.len() == words
            && tail_clear(&self.visible)
            && tail_clear(&self.explored)
    }

    /// Recomputes the visible cells from the cells of the player's units
    /// (each sees `view` around its cell) and adds them to the explored.
    pub(crate) fn update(
        &mut self,
        grid: &NavGrid,
        units: impl Iterator<Item = u32>,
        view: &ViewDisc,
    ) {
        self.visible.iter_mut().for_each(|w| *w = 0);
        let side = grid.side() as i32;
        // Units sharing a cell see the same disc: stamp it once per cell.
        let mut stamped = vec![0u64; self.visible.len()];
        for cell in units {
            let (word, mask) = (cell as usize / 64, 1u64 << (cell % 64));
            match stamped.get_mut(word) {
                Some(w) if *w & mask != 0 => continue,
                Some(w) => *w |= mask,
                None => {}
            }
            let (x, z) = ((cell % grid.side()) as i32, (cell / grid.side()) as i32);
            // Each row of the disc, clipped to the grid, is a run of
            // consecutive cells: whole words at a time.
            for &(dz, first, last) in &view.rows {
                let cz = z + dz;
                let (cx0, cx1) = ((x + first).max(0), (x + last).min(side - 1));
                if (0..side).contains(&cz) && cx0 <= cx1 {
                    let row = (cz * side) as usize;
                    set_run(&mut self.visible, row + cx0 as usize, row + cx1 as usize);
                }
            }
        }
        for (e, v) in self.explored.iter_mut().zip(&self.visible) {
            *e |= v;
        }
    }
}

/// The cells within `view` metres of a cell, centre to centre, on cells of
/// `cell` metres: the disc every unit sees, as rows of cell offsets
/// `(dz, first dx, last dx)` (a disc's row is one run of cells).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ViewDisc {
    rows: Vec<(i32, i32, i32)>,
}

impl ViewDisc {
    pub(crate) fn new(view: Fx, cell: Fx) -> ViewDisc {
        let r = (view / cell).to_int_floor();
        let within = |dx: i32, dz: i32| {
            let (dx, dz) = (cell.mul_int(i64::from(dx)), cell.mul_int(i64::from(dz)));
            dx * dx + dz * dz <= view * view
        };
        let mut rows = Vec::new();
        for dz in -r..=r {
            // The row's cells: those within the view, from the centre
            // outwards on both sides (the distance only grows with |dx|).
            let last = (0..=r).take_while(|&dx| within(dx, dz)).last();
            if let Some(w) = last {
                rows.push((dz, -w, w));
            }
        }
        ViewDisc { rows }
    }

    /// Every cell offset `(dx, dz)` of the disc.
    #[cfg(test)]
    pub(crate) fn offsets(&self) -> impl Iterator<Item = (i32, i32)> + '_ {
        self.rows
            .iter()
            .flat_map(|&(dz, first, last)| (first..=last).map(move |dx| (dx, dz)))
    }
}

/// Sets bits `first ..= last` of `set`.
fn set_run(set: &mut [u64], first: usize, last: usize) {
    let (w0, w1) = (first / 64, last / 64);
    let (low, high) = (!0u64 << (first % 64), !0u64 >> (63 - last % 64));
    if w0 == w1 {
        set[w0] |= low & high;
    } else {
        set[w0] |= low;
        set[w0 + 1..w1].iter_mut().for_each(|w| *w = !0);
        set[w1] |= high;
    }
}

fn bit(set: &[u64], index: u32) -> bool {
    set.get(index as usize / 64)
        .is_some_and(|w| w >> (index % 64) & 1 == 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_view_disc_is_round_and_explored_keeps_what_was_seen() {
        let disc: Vec<_> = ViewDisc::new(Fx::from_int(4), Fx::from_int(2))
            .offsets()
            .collect();
        assert!(disc.contains(&(2, 0)) && disc.contains(&(1, 1)));
        assert!(!disc.contains(&(2, 2)), "2.83 cells > 2");
        assert_eq!(disc.len(), 13);
    }

    /// Stamping the disc's rows a word at a time sets exactly the cells
    /// that setting each offset's cell one by one sets: units near every
    /// edge and corner of the grid, and discs of several sizes.
    #[test]
    fn a_disc_stamped_by_rows_is_the_disc_stamped_cell_by_cell() {
        // The largest grid (256 cells a side), so that a wide disc's rows
        // cross whole words.
        let mut config = <crate::rts::Rts as crate::Demo>::default_config();
        config.map_size = Fx::from_int(512);
        config.cell_size = Fx::from_int(2);
        let grid = NavGrid::new(&config, core::iter::empty());
        let side = grid.side();
        let mut rng = lockstep_fx::Rng::new(0xf06, 1);
        for (k, view) in [1, 3, 7, 16, 40, 150].into_iter().enumerate() {
            let disc = ViewDisc::new(Fx::from_int(view), Fx::from_int(2));
            let mut cells: Vec<u32> = vec![0, side - 1, side * (side - 1), side * side - 1];
            cells.extend((0..40).map(|_| rng.below(side * side)));
            cells.extend((0..side).step_by(7).map(|x| x + side * (k as u32 % side)));
            let mut fog = Fog::new(side * side);
            fog.update(&grid, cells.iter().copied(), &disc);
            let mut expected = Fog::new(side * side).visible;
            for &cell in &cells {
                let (x, z) = ((cell % side) as i32, (cell / side) as i32);
                for (dx, dz) in disc.offsets() {
                    let (cx, cz) = (x + dx, z + dz);
                    if (0..side as i32).contains(&cx) && (0..side as i32).contains(&cz) {
                        let i = (cz * side as i32 + cx) as usize;
                        expected[i / 64] |= 1 << (i % 64);
                    }
                }
            }
            assert_eq!(fog.visible, expected, "view {view}");
            assert!(fog.fits(side * side));
        }
    }

    #[test]
    fn a_fog_reports_its_cells_and_refuses_a_wrong_size() {
        let mut fog = Fog::new(100);
        assert!(fog.fits(100) && !fog.fits(200));
        fog.visible[1] = 1 << 40;
        assert!(!fog.fits(100), "bit 104 is past the last cell");
        fog.visible[1] = 1 << 3;
        assert!(fog.is_visible(67) && !fog.is_explored(67));
        assert_eq!(fog.visible_cells(), 1);
    }

    /// Units sharing a cell are stamped once: the fog is the union of
    /// every unit's disc, the same as stamping each unit alone.
    #[test]
    fn units_in_one_cell_see_what_each_sees_alone() {
        let config = <crate::rts::Rts as crate::Demo>::default_config();
        let grid = NavGrid::new(&config, core::iter::empty());
        let disc = ViewDisc::new(Fx::from_int(6), Fx::from_int(2));
        let side = grid.side();
        let cells = [
            side * 3 + 4,
            side * 3 + 4,
            0,
            side * side - 1,
            side * 3 + 4,
            7,
        ];
        let mut together = Fog::new(side * side);
        together.update(&grid, cells.iter().copied(), &disc);
        let mut apart = Fog::new(side * side);
        for &cell in &cells {
            let mut one = Fog::new(side * side);
            one.update(&grid, core::iter::once(cell), &disc);
            for (a, v) in apart.visible.iter_mut().zip(&one.visible) {
                *a |= v;
            }
        }
        assert_eq!(together.visible, apart.visible);
        assert!(together.visible_cells() > disc.offsets().count() as u32);
    }
}

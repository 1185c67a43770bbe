//! Navigation: the map as a grid of square cells ([`NavGrid`]), which cells
//! an obstacle blocks, and flow fields ([`Flow`]) that lead every cell to a
//! goal around the obstacles.
//!
//! The grid covers the walled map with `cell_size` cells. A cell is blocked
//! when its square overlaps a building's or rock's footprint grown by the
//! unit radius, so a unit whose centre stays in free cells clears every
//! obstacle. A flow field is a shortest-path tree over the free cells,
//! grown from the goal by Dijkstra's algorithm on the 8-connected grid with
//! integer step costs (5 straight, 7 diagonal: 7/5 = 1.4 ≈ √2), a diagonal
//! step only where both cells beside it are free (no cutting corners). Each
//! cell keeps one byte: the neighbour to step to next (see [`Flow::step`]).
//! Every unit ordered to one goal cell reads the same field, so a group's
//! path is computed once, and units spread over the field follow it from
//! wherever they stand. A blocked cell (a unit pushed into an obstacle's
//! margin) points to its cheapest free neighbour.
//!
//! Invariants: everything is integer arithmetic on cell indices, with ties
//! broken by cell index and by the fixed neighbour order [`NEIGHBOURS`], so
//! a field is the same bytes on every machine; the grid is derived from the
//! obstacles' footprints (the game passes its world's, `map::obstacles`)
//! and the settings, rebuilt after a state is loaded, while the fields are
//! state and part of the checksum.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use lockstep_derive::Canonical;
use lockstep_fx::Fx;

use super::config::RtsConfig;

/// The eight neighbours `(dx, dz)` in the order ties are broken: the four
/// straight steps, then the four diagonals.
pub const NEIGHBOURS: [(i32, i32); 8] = [
    (1, 0),
    (0, 1),
    (-1, 0),
    (0, -1),
    (1, 1),
    (-1, 1),
    (-1, -1),
    (1, -1),
];

/// Cost of a straight step; a diagonal step costs [`DIAGONAL`].
const STRAIGHT: u32 = 5;
const DIAGONAL: u32 = 7;

/// A [`Flow`] byte: this cell is the goal.
pub const AT_GOAL: u8 = 8;
/// A [`Flow`] byte: no free path from this cell to the goal.
pub const NO_PATH: u8 = 255;

/// The map's grid of cells and which ones obstacles block.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NavGrid {
    /// Cells along each side.
    side: u32,
    /// Side of a cell (m).
    cell: Fx,
    /// Half the map's side (m): cell `(0, 0)` starts at `(-half, -half)`.
    half: Fx,
    /// One flag per cell, row by row (`z` major).
    blocked: Vec<bool>,
}

impl NavGrid {
    /// The grid of `config`'s map, with the cells blocked by `obstacles`:
    /// footprints `(centre x, centre z, half x, half z)` in metres, each
    /// grown by the unit radius (footprints off the map block nothing).
    pub fn new(config: &RtsConfig, obstacles: impl Iterator<Item = [Fx; 4]>) -> NavGrid {
        let side = config.nav_side();
        let mut grid = NavGrid {
            side,
            cell: config.cell_size,
            half: config.map_size.scale_pow2(-1),
            blocked: vec![false; (side * side) as usize],
        };
        let margin = config.unit.radius;
        for [x, z, hx, hz] in obstacles {
            let (hx, hz) = (hx + margin, hz + margin);
            grid.block(x - hx, z - hz, x + hx, z + hz);
        }
        grid
    }

    /// Blocks every cell whose square overlaps the open rectangle.
    fn block(&mut self, x0: Fx, z0: Fx, x1: Fx, z1: Fx) {
        let first = |v: Fx| self.column(v).to_int_floor();
        let last = |v: Fx| self.column(v).ceil().to_int_floor() - 1;
        let max = self.side as i32 - 1;
        let (cx0, cx1) = (first(x0).max(0), last(x1).min(max));
        let (cz0, cz1) = (first(z0).max(0), last(z1).min(max));
        for z in cz0..=cz1 {
            for x in cx0..=cx1 {
                self.blocked[(z as u32 * self.side + x as u32) as usize] = true;
            }
        }
    }

    /// Cells along each side.
    pub fn side(&self) -> u32 {
        self.side
    }

    /// Side of a cell (m).
    pub fn cell_size(&self) -> Fx {
        self.cell
    }

    /// Cells in the grid.
    pub fn cells(&self) -> u32 {
        self.side * self.side
    }

    /// Whether cell `index` is blocked (cells off the grid are).
    pub fn is_blocked(&self, index: u32) -> bool {
        self.blocked.get(index as usize).copied().unwrap_or(true)
    }

    /// A map coordinate in cells from the grid's edge (not clamped).
    fn column(&self, v: Fx) -> Fx {
        (v + self.half) / self.cell
    }

    /// The cell `(x, z)` of a map point, clamped to the grid.
    pub fn cell_at(&self, x: Fx, z: Fx) -> (u32, u32) {
        let max = self.side as i32 - 1;
        let c = |v: Fx| self.column(v).to_int_floor().clamp(0, max) as u32;
        (c(x), c(z))
    }

    /// Whether a map point lies on the grid (inside the walls).
    pub fn covers(&self, x: Fx, z: Fx) -> bool {
        x.abs() < self.half && z.abs() < self.half
    }

    /// The index of the cell holding a map point.
    pub fn index_at(&self, x: Fx, z: Fx) -> u32 {
        let (cx, cz) = self.cell_at(x, z);
        cz * self.side + cx
    }

    /// The map point at the centre of cell `index`.
    pub fn centre(&self, index: u32) -> (Fx, Fx) {
        let (cx, cz) = (index % self.side, index / self.side);
        let at = |c: u32| self.cell.mul_int(i64::from(c)) + self.cell.scale_pow2(-1) - self.half;
        (at(cx), at(cz))
    }

    /// The neighbour of `index` in direction `d` (an index into
    /// [`NEIGHBOURS`]), if it is on the grid.
    fn neighbour(&self, index: u32, d: usize) -> Option<u32> {
        let (dx, dz) = NEIGHBOURS[d];
        let x = (index % self.side) as i32 + dx;
        let z = (index / self.side) as i32 + dz;
        let on = |v: i32| (0..self.side as i32).contains(&v);
        (on(x) && on(z)).then(|| z as u32 * self.side + x as u32)
    }

    /// Whether a step from free cell `index` in direction `d` stays in free
    /// cells, diagonals not cutting a blocked corner.
    fn can_step(&self, index: u32, d: usize) -> Option<u32> {
        let to = self.neighbour(index, d)?;
        if self.is_blocked(to) {
            return None;
        }
        if d >= 4 {
            // The two cells beside a diagonal step, both on the grid since
            // its target is.
            let (dx, dz) = NEIGHBOURS[d];
            let beside_x = index.wrapping_add_signed(dx);
            let beside_z = index.wrapping_add_signed(dz * self.side as i32);
            if self.is_blocked(beside_x) || self.is_blocked(beside_z) {
                return None;
            }
        }
        Some(to)
    }

    /// The free cell nearest to `index` (itself if free): the first free
    /// cell on growing square rings around it, in index order on each ring;
    /// `None` if every cell is blocked.
    pub fn nearest_free(&self, index: u32) -> Option<u32> {
        if !self.is_blocked(index) {
            return Some(index);
        }
        let (x, z) = ((index % self.side) as i32, (index / self.side) as i32);
        let side = self.side as i32;
        for r in 1..side {
            for cz in (z - r).max(0)..=(z + r).min(side - 1) {
                for cx in (x - r).max(0)..=(x + r).min(side - 1) {
                    let on_ring = (cx - x).abs() == r || (cz - z).abs() == r;
                    let c = (cz * side + cx) as u32;
                    if on_ring && !self.is_blocked(c) {
                        return Some(c);
                    }
                }
            }
        }
        None
    }

    /// Whether a straight walk from `(x0, z0)` to `(x1, z1)` crosses only
    /// free cells: the cells of the segment's supercover (every cell it
    /// touches, both cells where it passes exactly through a corner).
    pub fn clear_line(&self, (x0, z0): (Fx, Fx), (x1, z1): (Fx, Fx)) -> bool {
        let (mut cx, mut cz) = self.cell_at(x0, z0);
        let (tx, tz) = self.cell_at(x1, z1);
        let (dx, dz) = (x1 - x0, z1 - z0);
        let (sx, sz) = (
            if dx.is_negative() { -1 } else { 1 },
            if dz.is_negative() { -1 } else { 1 },
        );
        // Walks cell by cell, stepping across whichever cell edge the
        // segment meets first (compared by cross products, exact in Fx).
        let free = |cx: u32, cz: u32| !self.is_blocked(cz * self.side + cx);
        if !free(cx, cz) {
            return false;
        }
        let limit = 2 * self.side + 2;
        for _ in 0..limit {
            if (cx, cz) == (tx, tz) {
                return true;
            }
            // The next cell edges along x and z.
            let edge = |c: u32, s: i32| -> Fx {
                let e = if s > 0 { c + 1 } else { c };
                self.cell.mul_int(i64::from(e)) - self.half
            };
            let (ex, ez) = (edge(cx, sx), edge(cz, sz));
            // Crossing the x edge first ⇔ (ex - x0)/dx < (ez - z0)/dz,
            // compared without dividing: |ex - x0|·|dz| vs |ez - z0|·|dx|.
            let tx_num = (ex - x0).abs().saturating_mul(dz.abs());
            let tz_num = (ez - z0).abs().saturating_mul(dx.abs());
            let step_x = cx != tx && (cz == tz || tx_num < tz_num);
            let step_z = cz != tz && (cx == tx || tz_num < tx_num);
            let (nx, nz) = match (step_x, step_z) {
                (true, false) => (cx as i32 + sx, cz as i32),
                (false, true) => (cx as i32, cz as i32 + sz),
                // Through a corner: both side cells must be free too.
                _ => {
                    let (nx, nz) = (cx as i32 + sx, cz as i32 + sz);
                    if !free(nx as u32, cz) || !free(cx, nz as u32) {
                        return false;
                    }
                    (nx, nz)
                }
            };
            let (nx, nz) = (nx as u32, nz as u32);
            if !free(nx, nz) {
                return false;
            }
            (cx, cz) = (nx, nz);
        }
        false
    }
}

/// A flow field toward one goal cell: for each cell of the grid, the
/// neighbour to step to next ([`NEIGHBOURS`] index), [`AT_GOAL`] or
/// [`NO_PATH`]. Encoded as entity `flow` identified by its goal cell.
#[derive(Debug, Clone, PartialEq, Eq, Canonical)]
#[canonical(entity = "flow", ids(goal))]
pub struct Flow {
    /// The goal cell's index.
    pub goal: u32,
    /// One byte per cell (see the type's doc).
    #[canonical(name = "steps", max_len = 65536)]
    steps: Vec<u8>,
}

impl Flow {
    /// The field toward free cell `goal` of `grid`.
    pub fn toward(grid: &NavGrid, goal: u32) -> Flow {
        let cells = grid.cells() as usize;
        let mut cost = vec![u32::MAX; cells];
        let mut steps = vec![NO_PATH; cells];
        let mut queue = BinaryHeap::new();
        if (goal as usize) < cells && !grid.is_blocked(goal) {
            cost[goal as usize] = 0;
            steps[goal as usize] = AT_GOAL;
            queue.push(Reverse((0u32, goal)));
        }
        // Dijkstra from the goal; the graph is undirected, so the cheapest
        // way from a cell to the goal is its step toward the neighbour it
        // was reached from. Ties pop in index order.
        while let Some(Reverse((c, at))) = queue.pop() {
            if c > cost[at as usize] {
                continue;
            }
            for (d, &back) in OPPOSITE.iter().enumerate() {
                let Some(to) = grid.can_step(at, d) else {
                    continue;
                };
                let next = c + if d < 4 { STRAIGHT } else { DIAGONAL };
                if next < cost[to as usize] {
                    cost[to as usize] = next;
                    // From `to`, the way back is the opposite direction.
                    steps[to as usize] = back;
                    queue.push(Reverse((next, to)));
                }
            }
        }
        // Blocked cells lead to their cheapest reachable free neighbour.
        for at in 0..grid.cells() {
            if !grid.is_blocked(at) {
                continue;
            }
            let best = (0..NEIGHBOURS.len())
                .filter_map(|d| Some((cost[grid.neighbour(at, d)? as usize], d)))
                .filter(|&(c, _)| c != u32::MAX)
                .min();
            if let Some((_, d)) = best {
                steps[at as usize] = d as u8;
            }
        }
        Flow { goal, steps }
    }

    /// The field toward `goal` among `flows` (kept ascending by goal).
    pub fn find(flows: &[Flow], goal: u32) -> Option<&Flow> {
        let i = flows.binary_search_by_key(&goal, |f| f.goal).ok()?;
        flows.get(i)
    }

    /// The step from cell `index`: a [`NEIGHBOURS`] index, [`AT_GOAL`] or
    /// [`NO_PATH`].
    pub fn step(&self, index: u32) -> u8 {
        self.steps.get(index as usize).copied().unwrap_or(NO_PATH)
    }

    /// Cells the field covers (its grid's).
    pub fn cells(&self) -> u32 {
        self.steps.len() as u32
    }

    /// The cell after `index` on the way to the goal (`None` at the goal or
    /// without a path).
    pub fn next(&self, grid: &NavGrid, index: u32) -> Option<u32> {
        match self.step(index) {
            d if usize::from(d) < NEIGHBOURS.len() => grid.neighbour(index, usize::from(d)),
            _ => None,
        }
    }
}

/// The [`NEIGHBOURS`] index of the step back: `OPPOSITE[d]` undoes `d`.
const OPPOSITE: [u8; 8] = [2, 3, 0, 1, 6, 7, 4, 5];

#[cfg(test)]
mod tests {
    use super::*;

    fn open(side: u32) -> NavGrid {
        NavGrid {
            side,
            cell: Fx::from_int(2),
            half: Fx::from_int(side as i32),
            blocked: vec![false; (side * side) as usize],
        }
    }

    /// Follows the field from `from`; the cells walked.
    fn walk(grid: &NavGrid, flow: &Flow, from: u32) -> Option<Vec<u32>> {
        let mut path = vec![from];
        let mut at = from;
        while flow.step(at) != AT_GOAL {
            at = flow.next(grid, at)?;
            path.push(at);
            if path.len() > grid.cells() as usize {
                return None;
            }
        }
        Some(path)
    }

    #[test]
    fn a_field_leads_around_a_wall_without_cutting_corners() {
        let mut grid = open(10);
        // A wall along x = 5 from z = 0 to z = 7.
        for z in 0..8 {
            grid.blocked[z * 10 + 5] = true;
        }
        let goal = 2 * 10 + 8;
        let flow = Flow::toward(&grid, goal);
        let path = walk(&grid, &flow, 2 * 10 + 1).expect("a path");
        assert!(path.iter().all(|&c| !grid.is_blocked(c)));
        // It passes the wall's end (row 8 or 9).
        assert!(path.iter().any(|&c| c / 10 >= 8 && c % 10 == 5));
        for w in path.windows(2) {
            let (a, b) = (w[0], w[1]);
            let (dx, dz) = (b as i32 % 10 - a as i32 % 10, b as i32 / 10 - a as i32 / 10);
            if dx != 0 && dz != 0 {
                assert!(!grid.is_blocked((a as i32 + dx) as u32));
                assert!(!grid.is_blocked((a as i32 + dz * 10) as u32));
            }
        }
        // A cell inside the wall points out of it.
        assert!(flow.next(&grid, 3 * 10 + 5).is_some());
    }

    #[test]
    fn each_opposite_step_undoes_its_step() {
        for (d, &(dx, dz)) in NEIGHBOURS.iter().enumerate() {
            assert_eq!(NEIGHBOURS[usize::from(OPPOSITE[d])], (-dx, -dz));
        }
    }

    #[test]
    fn a_walled_in_cell_has_no_path_and_the_nearest_free_cell_is_found() {
        let mut grid = open(6);
        for c in [1, 6, 8, 13] {
            grid.blocked[c] = true;
        }
        grid.blocked[7] = true;
        let flow = Flow::toward(&grid, 35);
        assert!(flow.next(&grid, 7).is_some(), "a blocked cell points out");
        assert_eq!(flow.step(0), NO_PATH, "cell 0 is closed in by 1 and 6");
        assert_eq!(grid.nearest_free(7), Some(0));
        assert_eq!(grid.nearest_free(35), Some(35));
    }

    #[test]
    fn lines_through_free_cells_are_clear_and_through_blocked_ones_are_not() {
        let mut grid = open(10);
        grid.blocked[5 * 10 + 5] = true;
        let at = |c: u32| grid.centre(c);
        assert!(grid.clear_line(at(0), at(99 - 9)));
        assert!(!grid.clear_line(at(5 * 10), at(5 * 10 + 9)));
        assert!(
            !grid.clear_line(at(0), at(99)),
            "the diagonal crosses cell 55"
        );
        assert!(grid.clear_line(at(4 * 10), at(4 * 10 + 9)));
    }
}

//! [`Canvas`]: the picture being drawn — an RGB colour buffer and a depth
//! buffer of the same size — and the primitives that fill it: z-buffered
//! triangles, shaded sphere discs, triangles painted without depth (the
//! ground), thick lines, rectangles and copies of other canvases.
//!
//! Coordinates are pixels, x right and y down, with pixel `(x, y)` covering
//! `[x, x + 1) × [y, y + 1)` and sampled at its centre. Depth is stored as
//! the reciprocal of the distance along the view axis (`1 / w`, which is
//! affine across a projected triangle): larger is nearer, 0 is empty.
//! Everything clips to the canvas; no input panics.

/// A colour, 8 bits a channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Rgb(pub u8, pub u8, pub u8);

impl Rgb {
    /// The colour scaled by `k` (clamped to the channel range).
    pub fn scaled(self, k: f32) -> Rgb {
        let c = |v: u8| (f32::from(v) * k).round().clamp(0.0, 255.0) as u8;
        Rgb(c(self.0), c(self.1), c(self.2))
    }

    /// The colour moved a fraction `t` (0 to 1) towards `other`.
    pub fn mix(self, other: Rgb, t: f32) -> Rgb {
        let c = |a: u8, b: u8| {
            (f32::from(a) + (f32::from(b) - f32::from(a)) * t)
                .round()
                .clamp(0.0, 255.0) as u8
        };
        Rgb(c(self.0, other.0), c(self.1, other.1), c(self.2, other.2))
    }
}

/// A point on the canvas with its depth (`1 / w`, larger is nearer).
pub type ScreenPoint = [f32; 3];

/// An RGB picture with a depth buffer.
#[derive(Debug, Clone)]
pub struct Canvas {
    width: u32,
    height: u32,
    colour: Vec<Rgb>,
    depth: Vec<f32>,
}

impl Canvas {
    /// A black canvas of `width × height` pixels (each at least 1), with
    /// nothing drawn in depth.
    pub fn new(width: u32, height: u32) -> Canvas {
        let (width, height) = (width.max(1), height.max(1));
        let n = width as usize * height as usize;
        Canvas {
            width,
            height,
            colour: vec![Rgb(0, 0, 0); n],
            depth: vec![0.0; n],
        }
    }

    /// Width in pixels.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Height in pixels.
    pub fn height(&self) -> u32 {
        self.height
    }

    /// Fills the picture with `colour` and empties the depth buffer.
    pub fn clear(&mut self, colour: Rgb) {
        self.colour.fill(colour);
        self.depth.fill(0.0);
    }

    /// The colour at `(x, y)`, if it is on the canvas.
    pub fn pixel(&self, x: u32, y: u32) -> Option<Rgb> {
        (x < self.width && y < self.height)
            .then(|| self.colour[y as usize * self.width as usize + x as usize])
    }

    /// Every pixel, row by row from the top.
    pub fn pixels(&self) -> &[Rgb] {
        &self.colour
    }

    /// The pixels as `r, g, b` bytes, row by row from the top.
    pub fn rgb_bytes(&self) -> Vec<u8> {
        self.colour.iter().flat_map(|c| [c.0, c.1, c.2]).collect()
    }

    /// Sets one pixel (ignored off the canvas).
    pub fn put(&mut self, x: i64, y: i64, colour: Rgb) {
        if x >= 0 && y >= 0 && x < i64::from(self.width) && y < i64::from(self.height) {
            self.colour[y as usize * self.width as usize + x as usize] = colour;
        }
    }

    /// Fills the rectangle at `(x, y)` of `w × h` pixels.
    pub fn fill_rect(&mut self, x: i64, y: i64, w: i64, h: i64, colour: Rgb) {
        let (x0, x1) = (x.max(0), x.saturating_add(w).min(i64::from(self.width)));
        let (y0, y1) = (y.max(0), y.saturating_add(h).min(i64::from(self.height)));
        if x1 <= x0 {
            return;
        }
        for yy in y0..y1 {
            let row = yy as usize * self.width as usize;
            self.colour[row + x0 as usize..row + x1 as usize].fill(colour);
        }
    }

    /// Copies `other` onto this canvas with its top-left corner at `(x, y)`.
    pub fn blit(&mut self, other: &Canvas, x: i64, y: i64) {
        for oy in 0..other.height {
            for ox in 0..other.width {
                let c = other.colour[oy as usize * other.width as usize + ox as usize];
                self.put(x + i64::from(ox), y + i64::from(oy), c);
            }
        }
    }

    /// Fills a triangle in one colour where it is nearer than what is
    /// already drawn, and records its depth.
    pub fn fill_triangle(&mut self, a: ScreenPoint, b: ScreenPoint, c: ScreenPoint, colour: Rgb) {
        self.raster_triangle(a, b, c, colour, true);
    }

    /// Paints a triangle in one colour over whatever is there, without
    /// reading or writing depth (for the ground, drawn first).
    pub fn paint_triangle(&mut self, a: ScreenPoint, b: ScreenPoint, c: ScreenPoint, colour: Rgb) {
        self.raster_triangle(a, b, c, colour, false);
    }

    fn raster_triangle(
        &mut self,
        a: ScreenPoint,
        b: ScreenPoint,
        c: ScreenPoint,
        colour: Rgb,
        depth_test: bool,
    ) {
        let area = edge(a, b, c);
        if !area.is_finite() || area.abs() < 1e-9 {
            return;
        }
        let min_x = a[0].min(b[0]).min(c[0]).floor().max(0.0);
        let max_x = a[0].max(b[0]).max(c[0]).ceil().min(self.width as f32);
        let min_y = a[1].min(b[1]).min(c[1]).floor().max(0.0);
        let max_y = a[1].max(b[1]).max(c[1]).ceil().min(self.height as f32);
        if min_x >= max_x || min_y >= max_y {
            return;
        }
        let inv_area = 1.0 / area;
        for y in min_y as u32..max_y as u32 {
            let py = y as f32 + 0.5;
            let row = y as usize * self.width as usize;
            for x in min_x as u32..max_x as u32 {
                let p = [x as f32 + 0.5, py, 0.0];
                let wa = edge(b, c, p) * inv_area;
                let wb = edge(c, a, p) * inv_area;
                let wc = edge(a, b, p) * inv_area;
                if wa < 0.0 || wb < 0.0 || wc < 0.0 {
                    continue;
                }
                let i = row + x as usize;
                if depth_test {
                    let z = wa * a[2] + wb * b[2] + wc * c[2];
                    if z <= self.depth[i] {
                        continue;
                    }
                    self.depth[i] = z;
                }
                self.colour[i] = colour;
            }
        }
    }

    /// Fills the disc a sphere projects to: centre `centre` and radius
    /// `radius` in pixels, the sphere's centre at view distance `distance`
    /// and its radius `world_radius` in the world. Each pixel gets
    /// `shade(nx, ny, nz)` of the sphere's normal there in view axes (x right,
    /// y up, z towards the viewer), where it is nearer than what is drawn.
    pub fn fill_sphere(
        &mut self,
        centre: [f32; 2],
        radius: f32,
        distance: f32,
        world_radius: f32,
        shade: impl Fn(f32, f32, f32) -> Rgb,
    ) {
        if !(radius > 0.0 && radius.is_finite() && distance > 0.0) {
            return;
        }
        let min_x = (centre[0] - radius).floor().max(0.0);
        let max_x = (centre[0] + radius).ceil().min(self.width as f32);
        let min_y = (centre[1] - radius).floor().max(0.0);
        let max_y = (centre[1] + radius).ceil().min(self.height as f32);
        if min_x >= max_x || min_y >= max_y {
            return;
        }
        let inv_r = 1.0 / radius;
        for y in min_y as u32..max_y as u32 {
            let ny = -((y as f32 + 0.5) - centre[1]) * inv_r;
            let row = y as usize * self.width as usize;
            for x in min_x as u32..max_x as u32 {
                let nx = ((x as f32 + 0.5) - centre[0]) * inv_r;
                let d2 = nx * nx + ny * ny;
                if d2 > 1.0 {
                    continue;
                }
                let nz = (1.0 - d2).sqrt();
                let z = 1.0 / (distance - world_radius * nz).max(1e-3);
                let i = row + x as usize;
                if z <= self.depth[i] {
                    continue;
                }
                self.depth[i] = z;
                self.colour[i] = shade(nx, ny, nz);
            }
        }
    }

    /// Draws a line `thickness` pixels wide from `a` to `b` over whatever is
    /// there (no depth).
    pub fn line(&mut self, a: [f32; 2], b: [f32; 2], thickness: f32, colour: Rgb) {
        // Only the part on the canvas is stepped along: a line that runs far
        // off it (a grid line from near the eye) costs no more than one
        // across it.
        let margin = thickness.abs().max(1.0) + 1.0;
        let lo = [-margin, -margin];
        let hi = [self.width as f32 + margin, self.height as f32 + margin];
        let Some((a, b)) = clip_segment(a, b, lo, hi) else {
            return;
        };
        let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
        let steps = dx.abs().max(dy.abs()).ceil();
        if !steps.is_finite() || steps > 1e5 {
            return;
        }
        let half = (thickness * 0.5).max(0.5);
        let side = thickness.round().max(1.0) as i64;
        let n = steps as u32;
        for i in 0..=n {
            let t = if n == 0 { 0.0 } else { i as f32 / n as f32 };
            let (x, y) = (a[0] + dx * t - half, a[1] + dy * t - half);
            self.fill_rect(x.round() as i64, y.round() as i64, side, side, colour);
        }
    }
}

/// The part of the segment `a`–`b` inside the rectangle `lo`–`hi`
/// (Liang–Barsky), or `None` if it misses it (or is not finite).
fn clip_segment(
    a: [f32; 2],
    b: [f32; 2],
    lo: [f32; 2],
    hi: [f32; 2],
) -> Option<([f32; 2], [f32; 2])> {
    if !a.iter().chain(&b).all(|v| v.is_finite()) {
        return None;
    }
    let d = [b[0] - a[0], b[1] - a[1]];
    let (mut enter, mut leave) = (0.0f32, 1.0f32);
    for k in 0..2 {
        // Each side: the segment is inside while `p · t <= q`.
        for (p, q) in [(-d[k], a[k] - lo[k]), (d[k], hi[k] - a[k])] {
            if p == 0.0 {
                if q < 0.0 {
                    return None;
                }
            } else if p < 0.0 {
                enter = enter.max(q / p);
            } else {
                leave = leave.min(q / p);
            }
        }
    }
    (enter <= leave).then(|| {
        let at = |t: f32| [a[0] + d[0] * t, a[1] + d[1] * t];
        (at(enter), at(leave))
    })
}

/// Twice the signed area of the triangle `a, b, p` (positive when `p` is
/// to the left of `a → b` in a y-down frame, i.e. clockwise on screen).
fn edge(a: ScreenPoint, b: ScreenPoint, p: ScreenPoint) -> f32 {
    (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0])
}

#[cfg(test)]
mod tests {
    use super::*;

    const RED: Rgb = Rgb(255, 0, 0);
    const BLUE: Rgb = Rgb(0, 0, 255);

    #[test]
    fn a_line_far_off_the_canvas_draws_only_its_visible_part() {
        let mut c = Canvas::new(20, 10);
        // From a million pixels to the left, across the canvas.
        c.line([-1.0e6, 5.0], [30.0, 5.0], 1.0, RED);
        let red_in_row = |y: u32| (0..20).filter(|&x| c.pixel(x, y) == Some(RED)).count();
        assert!(red_in_row(5) >= 19, "{}", red_in_row(5));
        assert_eq!(red_in_row(4) + red_in_row(6), 0);
        // Wholly off the canvas, or not finite: nothing.
        let mut d = Canvas::new(20, 10);
        d.line([-50.0, -5.0], [-10.0, -40.0], 1.0, RED);
        d.line([f32::NAN, 1.0], [5.0, 5.0], 1.0, RED);
        assert!(d.pixels().iter().all(|p| *p == Rgb(0, 0, 0)));
        assert_eq!(
            clip_segment([2.0, 2.0], [8.0, 4.0], [0.0, 0.0], [10.0, 10.0]),
            Some(([2.0, 2.0], [8.0, 4.0]))
        );
    }

    #[test]
    fn nearer_triangle_wins_whatever_the_order_and_winding() {
        let mut c = Canvas::new(20, 20);
        // Far red, then near blue wound the other way.
        c.fill_triangle([0.0, 0.0, 0.1], [20.0, 0.0, 0.1], [0.0, 20.0, 0.1], RED);
        c.fill_triangle([0.0, 0.0, 0.5], [0.0, 20.0, 0.5], [20.0, 0.0, 0.5], BLUE);
        assert_eq!(c.pixel(2, 2), Some(BLUE));
        // A farther one drawn last stays hidden.
        c.fill_triangle([0.0, 0.0, 0.2], [20.0, 0.0, 0.2], [0.0, 20.0, 0.2], RED);
        assert_eq!(c.pixel(2, 2), Some(BLUE));
        assert_eq!(c.pixel(19, 19), Some(Rgb(0, 0, 0)));
    }

    #[test]
    fn degenerate_and_offscreen_shapes_are_ignored() {
        let mut c = Canvas::new(8, 8);
        c.fill_triangle([1.0, 1.0, 1.0], [1.0, 1.0, 1.0], [5.0, 5.0, 1.0], RED);
        c.fill_triangle([f32::NAN, 0.0, 1.0], [3.0, 0.0, 1.0], [0.0, 3.0, 1.0], RED);
        c.fill_triangle(
            [-50.0, -50.0, 1.0],
            [-40.0, -50.0, 1.0],
            [-50.0, -40.0, 1.0],
            RED,
        );
        c.fill_sphere([4.0, 4.0], f32::INFINITY, 1.0, 1.0, |_, _, _| RED);
        c.line([0.0, 0.0], [f32::INFINITY, 3.0], 1.0, RED);
        c.fill_rect(-10, -10, 5, 5, RED);
        c.fill_rect(10, 2, 5, 5, RED);
        c.fill_rect(2, 10, 5, 5, RED);
        c.fill_rect(i64::MAX / 2, 0, 3, 3, RED);
        c.line([9.0, 9.0], [12.0, 3.0], 3.0, RED);
        assert!(c.pixels().iter().all(|&p| p == Rgb(0, 0, 0)));
    }

    #[test]
    fn sphere_disc_is_round_and_shaded_by_its_normal() {
        let mut c = Canvas::new(21, 21);
        c.fill_sphere([10.5, 10.5], 8.0, 10.0, 1.0, |_, _, nz| {
            Rgb(0, 0, (nz * 255.0) as u8)
        });
        let centre = c.pixel(10, 10).unwrap();
        let edge = c.pixel(3, 10).unwrap();
        assert!(centre.2 > 240 && edge.2 < centre.2);
        assert_eq!(c.pixel(0, 0), Some(Rgb(0, 0, 0)));
    }
}

//! Drawing a [`Scene`] through a [`Camera`] onto a [`Canvas`]
//! ([`draw_scene`]), and text boxes on top of a picture ([`Overlay`]).
//!
//! The order: the sky; the ground square, its grid lines and a soft round
//! shadow under every solid, painted without depth (everything stands on or
//! above the ground); then every solid z-buffered — boxes as their visible
//! faces, spheres as shaded discs; last, the red outlines of the solids
//! marked `outlined`, over everything so a differing body is never hidden.
//!
//! Shading is lambert from one fixed light, above and to the left of the
//! default camera, plus an ambient term; the brightness is rounded to one
//! of [`SHADES`] steps, which keeps the number of colours in a picture
//! small (an exact GIF palette, small PNGs) at no visible cost.

use crate::camera::{Camera, add, dot, normalize, scale};
use crate::canvas::{Canvas, Rgb};
use crate::font;
use crate::scene::{Scene, Shape, Solid};

/// Brightness steps of the shading.
pub const SHADES: f32 = 16.0;
/// The colour of the outline of a solid that differs.
pub const OUTLINE: Rgb = Rgb(230, 20, 20);

const AMBIENT: f32 = 0.38;
const DIFFUSE: f32 = 0.62;

/// The direction towards the light (unit, world axes).
fn light() -> [f32; 3] {
    normalize([-0.45, 1.0, 0.55]).unwrap_or([0.0, 1.0, 0.0])
}

/// `colour` lit by lambert shading for a surface facing `cos` (the cosine
/// of the angle between its normal and the light), in [`SHADES`] steps.
fn shade(colour: Rgb, cos: f32) -> Rgb {
    let k = AMBIENT + DIFFUSE * cos.max(0.0);
    colour.scaled((k * SHADES).round() / SHADES)
}

/// Draws `scene` as `camera` sees it, over the whole canvas.
pub fn draw_scene(canvas: &mut Canvas, scene: &Scene, camera: &Camera) {
    canvas.clear(scene.sky);
    if let Some(ground) = &scene.ground {
        let h = ground.half_size;
        // Clipped at the near plane: a camera close to the ground (one
        // that follows a player) has part of it behind the eye.
        let corners = [[-h, 0.0, -h], [h, 0.0, -h], [h, 0.0, h], [-h, 0.0, h]];
        let ground_poly = camera.project_polygon(&corners);
        for i in 2..ground_poly.len() {
            canvas.paint_triangle(
                ground_poly[0],
                ground_poly[i - 1],
                ground_poly[i],
                ground.colour,
            );
        }
        if ground.spacing > 0.0 && h / ground.spacing <= 1000.0 {
            let n = (h / ground.spacing).floor() as i32;
            for i in -n..=n {
                let t = i as f32 * ground.spacing;
                for (from, to) in [([t, 0.0, -h], [t, 0.0, h]), ([-h, 0.0, t], [h, 0.0, t])] {
                    if let Some((a, b)) = camera.project_segment(from, to) {
                        canvas.line([a[0], a[1]], [b[0], b[1]], 1.0, ground.line_colour);
                    }
                }
            }
        }
        let shadow = ground.colour.scaled(0.78);
        for s in &scene.solids {
            draw_shadow(canvas, camera, s, shadow);
        }
    }
    let light = light();
    // The light in view axes, for the sphere discs' per-pixel normals.
    let light_view = [
        dot(light, camera.right),
        dot(light, camera.up),
        -dot(light, camera.forward),
    ];
    for s in &scene.solids {
        match s.shape {
            Shape::Box { half } => draw_box(canvas, camera, s, half, light),
            Shape::Sphere { radius } => {
                let Some(p) = camera.project(s.position) else {
                    continue;
                };
                let distance = 1.0 / p[2];
                let colour = s.colour;
                canvas.fill_sphere(
                    [p[0], p[1]],
                    camera.focal * radius / distance,
                    distance,
                    radius,
                    |nx, ny, nz| {
                        shade(
                            colour,
                            nx * light_view[0] + ny * light_view[1] + nz * light_view[2],
                        )
                    },
                );
            }
        }
    }
    for s in scene.solids.iter().filter(|s| s.outlined) {
        draw_outline(canvas, camera, s);
    }
}

/// The world position of a box corner: local `(x, y, z)` rotated and moved.
fn to_world(s: &Solid, local: [f32; 3]) -> [f32; 3] {
    let r = &s.rotation;
    add(
        s.position,
        [dot(r[0], local), dot(r[1], local), dot(r[2], local)],
    )
}

/// The corners of a box, corner `i` at local `(±x, ±y, ±z)` with bit 0, 1, 2
/// of `i` choosing the plus side.
fn box_corners(s: &Solid, half: [f32; 3]) -> [[f32; 3]; 8] {
    core::array::from_fn(|i| {
        let pick = |bit: usize, h: f32| if i & (1 << bit) != 0 { h } else { -h };
        to_world(s, [pick(0, half[0]), pick(1, half[1]), pick(2, half[2])])
    })
}

fn draw_box(canvas: &mut Canvas, camera: &Camera, s: &Solid, half: [f32; 3], light: [f32; 3]) {
    let corners = box_corners(s, half);
    let projected = corners.map(|c| camera.project(c));
    for (axis, &extent) in half.iter().enumerate() {
        let column = [
            s.rotation[0][axis],
            s.rotation[1][axis],
            s.rotation[2][axis],
        ];
        for side in [false, true] {
            let normal = if side { column } else { scale(column, -1.0) };
            let centre = add(s.position, scale(normal, extent));
            let to_eye = crate::camera::sub(camera.eye, centre);
            if dot(normal, to_eye) <= 0.0 {
                continue;
            }
            // The face's corners in order around it: the other two axes'
            // bits go (0,0), (1,0), (1,1), (0,1).
            let (a, b) = ((axis + 1) % 3, (axis + 2) % 3);
            let fixed = if side { 1 << axis } else { 0 };
            let ring = [0, 1 << a, (1 << a) | (1 << b), 1 << b].map(|bits| bits | fixed);
            let [Some(p0), Some(p1), Some(p2), Some(p3)] = ring.map(|i| projected[i]) else {
                continue;
            };
            let colour = shade(s.colour, dot(normal, light));
            canvas.fill_triangle(p0, p1, p2, colour);
            canvas.fill_triangle(p0, p2, p3, colour);
        }
    }
}

/// A darker patch on the ground under a solid: the disc under a sphere, the
/// footprint (convex hull of the corners dropped to the ground) of a box.
fn draw_shadow(canvas: &mut Canvas, camera: &Camera, s: &Solid, colour: Rgb) {
    const SIDES: usize = 10;
    let outline: Vec<[f32; 2]> = match s.shape {
        Shape::Sphere { radius } => (0..SIDES)
            .map(|i| {
                let angle = i as f32 * core::f32::consts::TAU / SIDES as f32;
                [
                    s.position[0] + radius * angle.cos(),
                    s.position[2] + radius * angle.sin(),
                ]
            })
            .collect(),
        Shape::Box { half } => convex_hull(box_corners(s, half).map(|c| [c[0], c[2]]).to_vec()),
    };
    let on_ground: Vec<Option<[f32; 3]>> = outline
        .iter()
        .map(|p| camera.project([p[0], 0.0, p[1]]))
        .collect();
    let Some(Some(first)) = on_ground.first().copied() else {
        return;
    };
    for pair in on_ground[1..].windows(2) {
        if let [Some(a), Some(b)] = pair {
            canvas.paint_triangle(first, *a, *b, colour);
        }
    }
}

/// The convex hull of `points`, counter-clockwise (Andrew's monotone chain).
fn convex_hull(mut points: Vec<[f32; 2]>) -> Vec<[f32; 2]> {
    points.retain(|p| p[0].is_finite() && p[1].is_finite());
    points.sort_by(|a, b| a[0].total_cmp(&b[0]).then(a[1].total_cmp(&b[1])));
    if points.len() < 3 {
        return points;
    }
    let turn = |o: [f32; 2], a: [f32; 2], b: [f32; 2]| {
        (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])
    };
    let mut hull: Vec<[f32; 2]> = Vec::with_capacity(points.len() * 2);
    for pass in [false, true] {
        let start = hull.len();
        let ordered: Box<dyn Iterator<Item = &[f32; 2]>> = if pass {
            Box::new(points.iter().rev())
        } else {
            Box::new(points.iter())
        };
        for &p in ordered {
            while hull.len() >= start + 2
                && turn(hull[hull.len() - 2], hull[hull.len() - 1], p) <= 0.0
            {
                hull.pop();
            }
            hull.push(p);
        }
        hull.pop();
    }
    hull
}

fn draw_outline(canvas: &mut Canvas, camera: &Camera, s: &Solid) {
    let width = (canvas.height() as f32 / 240.0).max(2.0);
    match s.shape {
        Shape::Box { half } => {
            let projected = box_corners(s, half).map(|c| camera.project(c));
            for i in 0..8usize {
                for bit in 0..3 {
                    let j = i | (1 << bit);
                    if j == i {
                        continue;
                    }
                    if let (Some(a), Some(b)) = (projected[i], projected[j]) {
                        canvas.line([a[0], a[1]], [b[0], b[1]], width, OUTLINE);
                    }
                }
            }
        }
        Shape::Sphere { radius } => {
            let Some(p) = camera.project(s.position) else {
                return;
            };
            let r = camera.focal * radius * p[2] + width;
            const SEGMENTS: u32 = 24;
            for i in 0..SEGMENTS {
                let at = |k: u32| {
                    let angle = k as f32 * core::f32::consts::TAU / SEGMENTS as f32;
                    [p[0] + r * angle.cos(), p[1] + r * angle.sin()]
                };
                canvas.line(at(i), at(i + 1), width, OUTLINE);
            }
        }
    }
}

/// Lines of text in a dark box at the top-left corner of a picture (frame
/// number, checksum, a label).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Overlay {
    lines: Vec<String>,
    scale: Option<u32>,
}

impl Overlay {
    /// An overlay with no text.
    pub fn new() -> Overlay {
        Overlay::default()
    }

    /// Adds a line.
    pub fn line(mut self, text: impl Into<String>) -> Overlay {
        self.lines.push(text.into());
        self
    }

    /// Draws the text at `scale` (pixels per font pixel, at least 1)
    /// instead of scaling it to the canvas.
    pub fn scale(mut self, scale: u32) -> Overlay {
        self.scale = Some(scale.max(1));
        self
    }

    /// Draws the overlay, its text scaled to the canvas (3× at 720 rows)
    /// unless [`Overlay::scale`] set a scale.
    pub fn draw(&self, canvas: &mut Canvas) {
        if self.lines.is_empty() {
            return;
        }
        let scale = self.scale.unwrap_or((canvas.height() / 240).max(1));
        let text = self.lines.join("\n");
        let (w, h) = font::measure(&text, scale);
        let pad = i64::from(2 * scale);
        let margin = i64::from(4 * scale);
        canvas.fill_rect(
            margin,
            margin,
            i64::from(w) + 2 * pad,
            i64::from(h) + pad,
            Rgb(24, 26, 32),
        );
        font::draw_text(
            canvas,
            margin + pad,
            margin + pad,
            scale,
            Rgb(240, 240, 240),
            &text,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::Ground;

    fn cube_scene(outlined: bool) -> Scene {
        Scene {
            solids: vec![
                Solid {
                    key: 1,
                    exact: 0,
                    shape: Shape::Box { half: [1.0; 3] },
                    position: [-2.0, 1.0, 0.0],
                    rotation: [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
                    colour: Rgb(40, 90, 220),
                    outlined,
                },
                Solid {
                    key: 2,
                    exact: 0,
                    shape: Shape::Sphere { radius: 1.0 },
                    position: [2.0, 1.0, 0.0],
                    rotation: [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
                    colour: Rgb(240, 150, 20),
                    outlined: false,
                },
            ],
            ground: Some(Ground {
                half_size: 5.0,
                spacing: 1.0,
                colour: Rgb(180, 190, 170),
                line_colour: Rgb(150, 160, 140),
            }),
            focus: ([-5.0, 0.0, -5.0], [5.0, 2.0, 5.0]),
            sky: Rgb(220, 228, 236),
        }
    }

    fn bluish(p: Rgb) -> bool {
        u32::from(p.2) > u32::from(p.0) + 60 && u32::from(p.2) > u32::from(p.1) + 40
    }

    fn count(canvas: &Canvas, keep: impl Fn(Rgb) -> bool) -> usize {
        canvas.pixels().iter().filter(|&&p| keep(p)).count()
    }

    #[test]
    fn both_solids_appear_in_their_colours_and_shades() {
        let scene = cube_scene(false);
        let mut canvas = Canvas::new(160, 90);
        draw_scene(&mut canvas, &scene, &Camera::overview(&scene, 160, 90));
        let blue = count(&canvas, bluish);
        let orange = count(&canvas, |p| {
            p.0 as u32 > p.2 as u32 + 80 && p.1 as u32 > p.2 as u32 + 40
        });
        assert!(blue > 100 && orange > 100, "blue {blue}, orange {orange}");
        // The box shows at least two faces in different shades.
        let mut shades: Vec<Rgb> = canvas
            .pixels()
            .iter()
            .copied()
            .filter(|&p| bluish(p))
            .collect();
        shades.sort();
        shades.dedup();
        assert!(shades.len() >= 2);
        assert_eq!(count(&canvas, |p| p == OUTLINE), 0);
    }

    #[test]
    fn outlined_solids_are_ringed_in_red() {
        let scene = cube_scene(true);
        let mut canvas = Canvas::new(160, 90);
        draw_scene(&mut canvas, &scene, &Camera::overview(&scene, 160, 90));
        assert!(count(&canvas, |p| p == OUTLINE) > 50);
        Overlay::new().line("FRAME 12").draw(&mut canvas);
        assert_eq!(canvas.pixel(5, 5), Some(Rgb(24, 26, 32)));
    }
}

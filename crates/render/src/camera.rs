//! [`Camera`]: a perspective look-at camera, and [`Camera::overview`], which
//! frames a scene's focus box from a fixed elevated direction so that every
//! frame of a match is seen from the same place.
//!
//! Conventions: the world is y up; the view axes are `right`, `up` and
//! `forward` (unit, orthogonal); a point projects to pixel `(w/2 + f·x/z,
//! h/2 − f·y/z)` with `f` the focal length in pixels and `z` its distance
//! along `forward`. Points closer than [`Camera::NEAR`] do not project.

use crate::scene::Scene;

/// A perspective camera for a canvas of a given size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Camera {
    /// Where the eye is.
    pub eye: [f32; 3],
    /// The view axis pointing right on screen.
    pub right: [f32; 3],
    /// The view axis pointing up on screen.
    pub up: [f32; 3],
    /// The viewing direction.
    pub forward: [f32; 3],
    /// Focal length in pixels.
    pub focal: f32,
    /// The canvas centre in pixels.
    pub centre: [f32; 2],
}

impl Camera {
    /// The nearest distance that projects (m).
    pub const NEAR: f32 = 0.05;
    /// Where polygons and segments are clipped: a little in front of
    /// [`Camera::NEAR`], so that rounding never puts a clipped point behind
    /// it.
    const CLIP: f32 = Self::NEAR * 2.0;

    /// A camera at `eye` looking at `target` with a vertical field of view of
    /// `fov_y` radians, for a `width × height` canvas. `None` if the eye is
    /// on the target or looks straight up or down.
    pub fn look_at(
        eye: [f32; 3],
        target: [f32; 3],
        fov_y: f32,
        width: u32,
        height: u32,
    ) -> Option<Camera> {
        let forward = normalize(sub(target, eye))?;
        let right = normalize(cross(forward, [0.0, 1.0, 0.0]))?;
        let up = cross(right, forward);
        let focal = height as f32 * 0.5 / (fov_y * 0.5).tan();
        Some(Camera {
            eye,
            right,
            up,
            forward,
            focal,
            centre: [width as f32 * 0.5, height as f32 * 0.5],
        })
    }

    /// A camera that sees the whole of `scene`'s focus box from above and to
    /// the south (+z), 50° above the ground, as large as it fits in a
    /// `width × height` canvas.
    pub fn overview(scene: &Scene, width: u32, height: u32) -> Camera {
        let (lo, hi) = scene.focus;
        let target = [
            (lo[0] + hi[0]) * 0.5,
            (lo[1] + hi[1]) * 0.5,
            (lo[2] + hi[2]) * 0.5,
        ];
        let elevation = 50f32.to_radians();
        let towards_eye = [0.0, elevation.sin(), elevation.cos()];
        let fov = 40f32.to_radians();
        let corners: Vec<[f32; 3]> = (0..8)
            .map(|i| {
                [
                    if i & 1 == 0 { lo[0] } else { hi[0] },
                    if i & 2 == 0 { lo[1] } else { hi[1] },
                    if i & 4 == 0 { lo[2] } else { hi[2] },
                ]
            })
            .collect();
        let at = |distance: f32| {
            let eye = add(target, scale(towards_eye, distance));
            Camera::look_at(eye, target, fov, width, height)
        };
        // How far past the canvas edge the farthest corner lands, as a
        // fraction of the half-width or half-height (1 = on the edge).
        let spill = |camera: &Camera| {
            corners
                .iter()
                .map(|&c| match camera.project(c) {
                    Some(p) => ((p[0] - camera.centre[0]).abs() / camera.centre[0])
                        .max((p[1] - camera.centre[1]).abs() / camera.centre[1]),
                    None => f32::INFINITY,
                })
                .fold(0.0, f32::max)
        };
        let size = (0..3).map(|k| hi[k] - lo[k]).fold(1.0, f32::max);
        let (mut near, mut far) = (size * 0.05, size * 20.0);
        for _ in 0..40 {
            let mid = (near + far) * 0.5;
            match at(mid) {
                Some(c) if spill(&c) <= 0.96 => far = mid,
                _ => near = mid,
            }
        }
        at(far).unwrap_or(Camera {
            eye: [0.0, 10.0, 10.0],
            right: [1.0, 0.0, 0.0],
            up: [0.0, 1.0, 0.0],
            forward: [0.0, 0.0, -1.0],
            focal: height as f32,
            centre: [width as f32 * 0.5, height as f32 * 0.5],
        })
    }

    /// The view-space coordinates `(x, y, z)` of a world point.
    pub fn to_view(&self, p: [f32; 3]) -> [f32; 3] {
        let v = sub(p, self.eye);
        [dot(v, self.right), dot(v, self.up), dot(v, self.forward)]
    }

    /// The pixel and depth (`1 / z`) a world point projects to, or `None` if
    /// it is nearer than [`Camera::NEAR`] (or behind the eye).
    pub fn project(&self, p: [f32; 3]) -> Option<[f32; 3]> {
        let [x, y, z] = self.to_view(p);
        (z >= Self::NEAR).then(|| {
            let k = self.focal / z;
            [self.centre[0] + x * k, self.centre[1] - y * k, 1.0 / z]
        })
    }

    /// The part of the flat world polygon `polygon` (corners in order) in
    /// front of the near plane, projected: the polygon clipped against the
    /// plane (Sutherland–Hodgman), so a ground that reaches behind the eye
    /// still covers what is in front of it. Empty if none of it is.
    pub fn project_polygon(&self, polygon: &[[f32; 3]]) -> Vec<[f32; 3]> {
        let depth = |p: [f32; 3]| self.to_view(p)[2] - Self::CLIP;
        let mut kept = Vec::with_capacity(polygon.len() + 1);
        for (i, &a) in polygon.iter().enumerate() {
            let b = polygon[(i + 1) % polygon.len()];
            let (da, db) = (depth(a), depth(b));
            if da >= 0.0 {
                kept.push(a);
            }
            if (da >= 0.0) != (db >= 0.0) {
                kept.push(lerp(a, b, da / (da - db)));
            }
        }
        kept.into_iter().filter_map(|p| self.project(p)).collect()
    }

    /// The part of the world segment `a`–`b` in front of the near plane,
    /// projected; `None` if none of it is.
    pub fn project_segment(&self, a: [f32; 3], b: [f32; 3]) -> Option<([f32; 3], [f32; 3])> {
        let (da, db) = (
            self.to_view(a)[2] - Self::CLIP,
            self.to_view(b)[2] - Self::CLIP,
        );
        let (a, b) = match (da >= 0.0, db >= 0.0) {
            (true, true) => (a, b),
            (false, false) => return None,
            (true, false) => (a, lerp(a, b, da / (da - db))),
            (false, true) => (lerp(a, b, da / (da - db)), b),
        };
        Some((self.project(a)?, self.project(b)?))
    }

    /// The world direction of a view-space direction (`z` towards the eye).
    pub fn to_world_direction(&self, v: [f32; 3]) -> [f32; 3] {
        add(
            add(scale(self.right, v[0]), scale(self.up, v[1])),
            scale(self.forward, -v[2]),
        )
    }
}

/// The point a fraction `t` of the way from `a` to `b`.
pub fn lerp(a: [f32; 3], b: [f32; 3], t: f32) -> [f32; 3] {
    add(a, scale(sub(b, a), t))
}

/// `a + b`.
pub fn add(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

/// `a − b`.
pub fn sub(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

/// `a · k`.
pub fn scale(a: [f32; 3], k: f32) -> [f32; 3] {
    [a[0] * k, a[1] * k, a[2] * k]
}

/// The dot product.
pub fn dot(a: [f32; 3], b: [f32; 3]) -> f32 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// The cross product.
pub fn cross(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// `a` scaled to length 1, or `None` if it is (nearly) zero or not finite.
pub fn normalize(a: [f32; 3]) -> Option<[f32; 3]> {
    let len = dot(a, a).sqrt();
    (len > 1e-6 && len.is_finite()).then(|| scale(a, 1.0 / len))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canvas::Rgb;

    #[test]
    fn the_target_projects_to_the_centre_and_behind_does_not_project() {
        let c = Camera::look_at([0.0, 5.0, 10.0], [0.0, 0.0, 0.0], 1.0, 200, 100).unwrap();
        let p = c.project([0.0, 0.0, 0.0]).unwrap();
        assert!((p[0] - 100.0).abs() < 1e-3 && (p[1] - 50.0).abs() < 1e-3);
        // Right of the target is right on screen; above is up.
        assert!(c.project([1.0, 0.0, 0.0]).unwrap()[0] > 100.0);
        assert!(c.project([0.0, 1.0, 0.0]).unwrap()[1] < 50.0);
        assert!(c.project([0.0, 6.0, 12.0]).is_none());
        assert!(Camera::look_at([0.0; 3], [0.0; 3], 1.0, 10, 10).is_none());
    }

    #[test]
    fn a_ground_reaching_behind_the_eye_is_clipped_not_dropped() {
        let c = Camera::look_at([0.0, 9.0, 11.0], [0.0, 0.0, 0.0], 0.8, 320, 180).unwrap();
        let h = 30.0;
        let ground = [[-h, 0.0, -h], [h, 0.0, -h], [h, 0.0, h], [-h, 0.0, h]];
        assert!(
            ground.iter().any(|&p| c.project(p).is_none()),
            "a corner is behind"
        );
        let poly = c.project_polygon(&ground);
        assert!(poly.len() >= 3, "{poly:?}");
        assert!(
            poly.iter()
                .all(|p| p.iter().all(|v| v.is_finite()) && p[2] > 0.0)
        );
        // The target, in the middle of the canvas, is inside what is left.
        let (xs, ys): (Vec<f32>, Vec<f32>) = poly.iter().map(|p| (p[0], p[1])).unzip();
        let within = |v: &[f32], x: f32| v.iter().any(|&a| a < x) && v.iter().any(|&a| a > x);
        assert!(within(&xs, 160.0) && within(&ys, 90.0));
        // A grid line from behind the eye to in front keeps its front part.
        let (a, b) = c.project_segment([0.0, 0.0, h], [0.0, 0.0, -h]).unwrap();
        assert!(a[1] > b[1], "the near end is lower on screen");
        assert!(
            c.project_segment([0.0, 0.0, 20.0], [5.0, 0.0, 25.0])
                .is_none()
        );
        // Wholly in front: the corners themselves, in order.
        let far = Camera::look_at([0.0, 200.0, 200.0], [0.0; 3], 0.8, 320, 180).unwrap();
        let projected: Vec<[f32; 3]> = ground.iter().filter_map(|&p| far.project(p)).collect();
        assert_eq!(far.project_polygon(&ground), projected);
    }

    #[test]
    fn overview_keeps_the_focus_box_on_the_canvas() {
        let scene = Scene {
            solids: Vec::new(),
            ground: None,
            focus: ([-20.0, 0.0, -20.0], [20.0, 3.0, 20.0]),
            sky: Rgb(0, 0, 0),
        };
        let c = Camera::overview(&scene, 320, 180);
        for corner in [[-20.0, 0.0, -20.0], [20.0, 3.0, 20.0], [20.0, 0.0, -20.0]] {
            let p = c.project(corner).unwrap();
            assert!((0.0..=320.0).contains(&p[0]) && (0.0..=180.0).contains(&p[1]));
        }
    }
}

//! What a picture shows: a [`Scene`] is a list of [`Solid`]s (boxes and
//! spheres placed in the world, in `f32` metres, y up), the ground, and the
//! area a camera should frame. It is built from a game state by
//! [`Depict`](crate::Depict) and knows nothing of games or fixed point.
//!
//! Every solid carries a `key` (which body it is, stable from frame to
//! frame) and an `exact` fingerprint of the fixed-point state it was made
//! from, so two scenes of the same frame of two logs can say which bodies
//! differ ([`Scene::differing`]) without comparing floats.

use std::collections::BTreeMap;

use crate::canvas::Rgb;

/// The form of a solid, in its own frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Shape {
    /// A box with these half extents along its local axes.
    Box {
        /// Half the size along x, y and z.
        half: [f32; 3],
    },
    /// A sphere.
    Sphere {
        /// Its radius.
        radius: f32,
    },
}

/// One body to draw.
#[derive(Debug, Clone, PartialEq)]
pub struct Solid {
    /// Which body this is (the same body has the same key in every frame).
    pub key: u64,
    /// A fingerprint of the body's exact (fixed-point) state: equal keys with
    /// different fingerprints are bodies that differ.
    pub exact: u64,
    /// Its form.
    pub shape: Shape,
    /// Its centre in the world.
    pub position: [f32; 3],
    /// Its orientation as a rotation matrix (rows), local to world.
    pub rotation: [[f32; 3]; 3],
    /// Its base colour, before shading.
    pub colour: Rgb,
    /// Drawn with a red outline on top of everything (a body that differs).
    pub outlined: bool,
}

/// The ground plane `y = 0`, drawn as a square with grid lines.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ground {
    /// Half the side of the square drawn, centred on the origin.
    pub half_size: f32,
    /// Distance between grid lines (no lines if not positive).
    pub spacing: f32,
    /// The ground's colour.
    pub colour: Rgb,
    /// The grid lines' colour.
    pub line_colour: Rgb,
}

/// Everything a picture shows.
#[derive(Debug, Clone, PartialEq)]
pub struct Scene {
    /// The bodies, in the order the state lists them.
    pub solids: Vec<Solid>,
    /// The ground, if the scene has one.
    pub ground: Option<Ground>,
    /// The area a camera should frame: the lower and upper corners of a box
    /// in the world (the playing field, not the bodies' current extent, so
    /// that every frame of a match is framed the same).
    pub focus: ([f32; 3], [f32; 3]),
    /// The background colour.
    pub sky: Rgb,
}

impl Scene {
    /// The keys of the bodies that differ between `self` and `other`: in one
    /// scene and not the other, or with different exact fingerprints.
    /// Ascending.
    pub fn differing(&self, other: &Scene) -> Vec<u64> {
        let mine: BTreeMap<u64, u64> = self.solids.iter().map(|s| (s.key, s.exact)).collect();
        let theirs: BTreeMap<u64, u64> = other.solids.iter().map(|s| (s.key, s.exact)).collect();
        let mut keys: Vec<u64> = mine
            .iter()
            .filter(|(k, e)| theirs.get(k) != Some(e))
            .map(|(k, _)| *k)
            .chain(theirs.keys().filter(|k| !mine.contains_key(k)).copied())
            .collect();
        keys.sort_unstable();
        keys.dedup();
        keys
    }

    /// Marks the solids whose keys are in `keys` (sorted) to be outlined.
    pub fn outline(&mut self, keys: &[u64]) {
        for s in &mut self.solids {
            s.outlined = keys.binary_search(&s.key).is_ok();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn solid(key: u64, exact: u64) -> Solid {
        Solid {
            key,
            exact,
            shape: Shape::Sphere { radius: 1.0 },
            position: [0.0; 3],
            rotation: [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
            colour: Rgb(0, 0, 0),
            outlined: false,
        }
    }

    fn scene(solids: Vec<Solid>) -> Scene {
        Scene {
            solids,
            ground: None,
            focus: ([0.0; 3], [1.0; 3]),
            sky: Rgb(0, 0, 0),
        }
    }

    #[test]
    fn differing_names_changed_missing_and_extra_bodies() {
        let a = scene(vec![solid(1, 10), solid(2, 20), solid(3, 30)]);
        let b = scene(vec![solid(1, 10), solid(2, 21), solid(4, 40)]);
        assert_eq!(a.differing(&b), vec![2, 3, 4]);
        assert_eq!(b.differing(&a), vec![2, 3, 4]);
        assert!(a.differing(&a).is_empty());
        let mut c = a.clone();
        c.outline(&[2, 4]);
        let marked: Vec<bool> = c.solids.iter().map(|s| s.outlined).collect();
        assert_eq!(marked, vec![false, true, false]);
    }
}

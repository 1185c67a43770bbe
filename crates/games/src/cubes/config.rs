//! The cube demo's settings ([`CubesConfig`]): the field of small cubes, the
//! players' cubes and the rules of pushing, lifting, blowing and katamari,
//! read from TOML (see `scenes/cubes.toml`) and stored canonically in every
//! state and replay log.
//!
//! Invariants: a config that passes [`CubesConfig::validate`] builds a valid
//! world for 1 to 4 players (no overlapping bodies, positive masses) and
//! every step stays within its ranges; the encoding (derived) writes every
//! field in declaration order, the nested settings flattened under their
//! prefix (`field grid`), so two peers with different settings differ in
//! their first checksum. Decoding checks only the encoding; the ranges are
//! [`CubesConfig::validate`]'s.

use lockstep_derive::Canonical;
use lockstep_fx::Fx;
use lockstep_sim::{Game, SetupError};

/// The cube demo's settings. Fixed-point values are decimal strings
/// (`"0.5"`) or integers; floats are refused.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, Canonical)]
#[serde(deny_unknown_fields)]
pub struct CubesConfig {
    /// Downward gravity (m/s²).
    pub gravity: Fx,
    /// The field of small cubes.
    #[canonical(flatten)]
    pub field: FieldConfig,
    /// Every player's cube and its controls.
    #[canonical(flatten)]
    pub player: PlayerConfig,
    /// Blowing cubes away (space).
    #[canonical(flatten)]
    pub blow: BlowConfig,
    /// Katamari mode (z).
    #[canonical(flatten)]
    pub katamari: KatamariConfig,
}

/// The grid of small cubes resting on the ground, centred on the origin.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, Canonical)]
#[serde(deny_unknown_fields)]
#[canonical(prefix = "field")]
pub struct FieldConfig {
    /// Cubes per side of the square grid (1 to 64).
    pub grid: u32,
    /// Edge length of a small cube (m).
    pub cube_size: Fx,
    /// Centre-to-centre distance of neighbouring cubes (m), at least
    /// `cube_size`.
    pub spacing: Fx,
    /// Density of the small cubes (kg/m³).
    pub density: Fx,
    /// Friction coefficient of the small cubes and the ground.
    pub friction: Fx,
    /// Linear damping of the small cubes (1/s).
    pub linear_damping: Fx,
    /// Angular damping of the small cubes (1/s).
    pub angular_damping: Fx,
}

/// A player's cube and how the buttons move it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, Canonical)]
#[serde(deny_unknown_fields)]
#[canonical(prefix = "player")]
pub struct PlayerConfig {
    /// Edge length of a player's cube (m).
    pub size: Fx,
    /// Density (kg/m³).
    pub density: Fx,
    /// Friction coefficient.
    pub friction: Fx,
    /// Linear damping (1/s).
    pub linear_damping: Fx,
    /// Angular damping (1/s).
    pub angular_damping: Fx,
    /// Horizontal acceleration of a held arrow (m/s²), applied to the cube
    /// and the cubes stuck to it as one mass.
    pub push: Fx,
    /// Arrows stop pushing along an axis at this speed (m/s).
    pub max_speed: Fx,
    /// Upward acceleration while space is held (m/s²); above `gravity` the
    /// cube rises.
    pub lift: Fx,
    /// Space lifts only while the cube's centre is below this height (m).
    pub hover_height: Fx,
}

/// Space blows the small cubes around a player's cube away.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, Canonical)]
#[serde(deny_unknown_fields)]
#[canonical(prefix = "blow")]
pub struct BlowConfig {
    /// Cubes whose centre is within this distance of the player's centre are
    /// blown (m).
    pub radius: Fx,
    /// Acceleration of a cube next to the player (m/s²), falling linearly to
    /// zero at `radius`.
    pub strength: Fx,
    /// Upward part of the blow direction, per unit of horizontal distance
    /// (0: straight out; 1: out and up at 45°).
    pub upward: Fx,
}

/// While z is held, small cubes that touch a player's cube (or a cube
/// already stuck to it) stick to it: a damped spring pulls each towards the
/// player's centre, and the player takes the opposite impulse.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, Canonical)]
#[serde(deny_unknown_fields)]
#[canonical(prefix = "katamari")]
pub struct KatamariConfig {
    /// Stuck cubes farther than this from the player's centre come off (m).
    pub radius: Fx,
    /// Spring stiffness: acceleration per metre of distance (1/s²).
    pub strength: Fx,
    /// Spring damping of the velocity relative to the player (1/s).
    pub damping: Fx,
    /// Most cubes stuck to one player.
    pub max_cubes: u32,
}

/// A setting out of range: the field and why.
type Invalid = (&'static str, String);

fn in_range(field: &'static str, v: Fx, lo: Fx, hi: Fx, open_lo: bool) -> Result<(), Invalid> {
    let above = if open_lo { v > lo } else { v >= lo };
    if above && v <= hi {
        Ok(())
    } else {
        let open = if open_lo { '(' } else { '[' };
        Err((field, format!("{v} is not in {open}{lo}, {hi}]")))
    }
}

fn positive(field: &'static str, v: Fx, max: i32) -> Result<(), Invalid> {
    in_range(field, v, Fx::ZERO, Fx::from_int(max), true)
}

fn non_negative(field: &'static str, v: Fx, max: i32) -> Result<(), Invalid> {
    in_range(field, v, Fx::ZERO, Fx::from_int(max), false)
}

impl CubesConfig {
    /// Checks every setting against its range (see the module invariants).
    pub fn validate(&self) -> Result<(), SetupError> {
        self.check().map_err(|(field, reason)| SetupError::Setting {
            game: super::Cubes::ID,
            field,
            reason,
        })
    }

    pub(crate) fn check(&self) -> Result<(), Invalid> {
        non_negative("gravity", self.gravity, 100)?;
        let f = &self.field;
        if !(1..=64).contains(&f.grid) {
            return Err(("field.grid", format!("{} is not in 1..=64", f.grid)));
        }
        positive("field.cube_size", f.cube_size, 8)?;
        in_range(
            "field.spacing",
            f.spacing,
            f.cube_size,
            Fx::from_int(64),
            false,
        )?;
        positive("field.density", f.density, 100_000)?;
        non_negative("field.friction", f.friction, 10)?;
        non_negative("field.linear_damping", f.linear_damping, 100)?;
        non_negative("field.angular_damping", f.angular_damping, 100)?;
        let p = &self.player;
        positive("player.size", p.size, 16)?;
        positive("player.density", p.density, 100_000)?;
        non_negative("player.friction", p.friction, 10)?;
        non_negative("player.linear_damping", p.linear_damping, 100)?;
        non_negative("player.angular_damping", p.angular_damping, 100)?;
        non_negative("player.push", p.push, 1000)?;
        non_negative("player.max_speed", p.max_speed, 200)?;
        non_negative("player.lift", p.lift, 1000)?;
        non_negative("player.hover_height", p.hover_height, 1000)?;
        let b = &self.blow;
        non_negative("blow.radius", b.radius, 64)?;
        non_negative("blow.strength", b.strength, 10_000)?;
        non_negative("blow.upward", b.upward, 10)?;
        let k = &self.katamari;
        non_negative("katamari.radius", k.radius, 64)?;
        non_negative("katamari.strength", k.strength, 10_000)?;
        non_negative("katamari.damping", k.damping, 1000)?;
        if k.max_cubes > 4096 {
            return Err((
                "katamari.max_cubes",
                format!("{} is not in 0..=4096", k.max_cubes),
            ));
        }
        Ok(())
    }

    /// Small cubes in the field (`grid²`).
    pub fn cube_count(&self) -> u32 {
        self.field.grid * self.field.grid
    }

    /// Distance from the origin to the centre of the outermost cubes (m).
    pub fn field_half_width(&self) -> Fx {
        self.field
            .spacing
            .mul_int(i64::from(self.field.grid) - 1)
            .scale_pow2(-1)
    }

    /// Distance from the origin to each player's spawn point: one spacing
    /// beyond the edge of the grid, clear of its cubes (m).
    pub fn spawn_distance(&self) -> Fx {
        self.field_half_width()
            + (self.field.cube_size + self.player.size).scale_pow2(-1)
            + self.field.spacing
    }
}

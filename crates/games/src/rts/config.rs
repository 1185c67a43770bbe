//! The RTS settings ([`RtsConfig`]): the map, the spawn layout, the units'
//! rules and the buildings, read from TOML (see `scenes/rts.toml`) and stored
//! canonically in every state and replay log.
//!
//! Invariants: a config that passes [`RtsConfig::validate`] builds a valid
//! world for every supported player count, and every later step stays within
//! its ranges (no division by zero, no command grid overflow); the encoding
//! (derived) writes every field in declaration order, the unit rules
//! flattened under the prefix `unit`, so two peers with different settings
//! differ in their first checksum. Decoding checks only the encoding; the
//! ranges are [`RtsConfig::validate`]'s.

use lockstep_derive::Canonical;
use lockstep_fx::{Fx, Vec3};

use lockstep_sim::{Game, SetupError};

use super::command::MapPoint;

/// The RTS settings. Fixed-point values are decimal strings or integers.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, Canonical)]
#[serde(deny_unknown_fields)]
pub struct RtsConfig {
    /// Side of the square map, centred on the origin (m). Walls close it.
    pub map_size: Fx,
    /// Units each player starts with.
    pub units_per_player: u32,
    /// Distance of each player's base (the centre of its starting grid) from
    /// the map centre (m); bases are evenly spaced on that circle.
    pub spawn_radius: Fx,
    /// Pitch of the square grid a base's units start on (m).
    pub spawn_spacing: Fx,
    /// Friction of the ground, walls, buildings and units.
    pub friction: Fx,
    /// Side of a cell of the navigation and fog grid (m); the map's side
    /// over it (rounded up) is at most 256 cells.
    pub cell_size: Fx,
    /// Rocks scattered over the map by the match seed, off the bases and
    /// the buildings (see `map`).
    pub rocks: u32,
    /// The fog of war is recomputed every this many frames.
    pub fog_interval: u32,
    /// Physics substeps per frame (1 to 8; the engine's default is 4):
    /// each is a pass of the contact solver, and units, spheres on flat
    /// ground, hold with fewer.
    pub substeps: u8,
    /// The units' rules.
    #[canonical(flatten)]
    pub unit: UnitConfig,
    /// Static buildings.
    #[serde(default)]
    pub buildings: Vec<Building>,
}

/// The rules every unit follows.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, Canonical)]
#[serde(deny_unknown_fields)]
#[canonical(prefix = "unit")]
pub struct UnitConfig {
    /// Radius of a unit's sphere (m).
    pub radius: Fx,
    /// Top ground speed (m/s).
    pub speed: Fx,
    /// Hit points at spawn.
    pub hp: u32,
    /// Damage of one attack.
    pub damage: u32,
    /// Attack reach, between the surfaces of two units (m).
    pub range: Fx,
    /// Speed of the missiles units shoot (m/s); 0: a hit lands at once, as
    /// a melee blow.
    pub missile_speed: Fx,
    /// Idle units chase enemies this close (surface to surface, m).
    pub sight: Fx,
    /// A unit lifts the fog this far around it (cell centre to cell
    /// centre, m; at most 32 cells).
    pub view: Fx,
    /// Each unit looks for enemies once every this many frames (attacks and
    /// chases are staggered over these frames by unit id).
    pub attack_interval: u32,
    /// A moving unit this close to its target has arrived (m).
    pub arrive_distance: Fx,
    /// A moving unit slows down linearly within this distance (m).
    pub slow_distance: Fx,
    /// A moving unit held below a quarter of its speed this many frames in a
    /// row (blocked by a crowd or a wall) gives up its order.
    pub give_up_frames: u32,
    /// Linear and angular damping of an idle unit (1/s), so pushed units
    /// come to rest.
    pub damping: Fx,
}

/// A static building: a box standing on the ground.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, Canonical)]
#[serde(deny_unknown_fields)]
#[canonical(prefix = "building")]
pub struct Building {
    /// Centre of its footprint, `[x, z]` (m).
    pub position: [Fx; 2],
    /// Full size `[x, y, z]` (m); `y` is the height.
    pub size: Vec3,
}

/// A setting out of range: the field and why.
type Invalid = (&'static str, String);

impl RtsConfig {
    /// Checks every setting against its range (see the module invariants).
    pub fn validate(&self) -> Result<(), SetupError> {
        self.check().map_err(|(field, reason)| SetupError::Setting {
            game: super::Rts::ID,
            field,
            reason,
        })
    }

    fn check(&self) -> Result<(), Invalid> {
        let u = &self.unit;
        let positive = |field, v: Fx, max: Fx| -> Result<(), Invalid> {
            if v.is_positive() && v <= max {
                Ok(())
            } else {
                Err((field, format!("{v} is not in (0, {max}]")))
            }
        };
        let non_negative = |field, v: Fx, max: Fx| -> Result<(), Invalid> {
            if !v.is_negative() && v <= max {
                Ok(())
            } else {
                Err((field, format!("{v} is not in [0, {max}]")))
            }
        };
        let limit = Fx::from_int(2 * MapPoint::LIMIT);
        positive("map_size", self.map_size, limit)?;
        if !(1..=4096).contains(&self.units_per_player) {
            return Err((
                "units_per_player",
                format!("{} is not in 1..=4096", self.units_per_player),
            ));
        }
        positive("unit.radius", u.radius, Fx::from_int(8))?;
        positive("unit.speed", u.speed, Fx::from_int(50))?;
        non_negative("unit.range", u.range, Fx::from_int(64))?;
        non_negative("unit.missile_speed", u.missile_speed, Fx::from_int(500))?;
        if u.missile_speed.is_positive() && u.missile_speed < Fx::ONE {
            return Err((
                "unit.missile_speed",
                format!("{} is neither 0 nor at least 1", u.missile_speed),
            ));
        }
        non_negative("unit.sight", u.sight, Fx::from_int(64))?;
        if u.sight < u.range {
            return Err(("unit.sight", format!("{} is below unit.range", u.sight)));
        }
        non_negative("unit.arrive_distance", u.arrive_distance, limit)?;
        positive("unit.slow_distance", u.slow_distance, limit)?;
        non_negative("unit.damping", u.damping, Fx::from_int(100))?;
        non_negative("friction", self.friction, Fx::from_int(10))?;
        if u.hp == 0 {
            return Err(("unit.hp", "must be at least 1".into()));
        }
        if !(1..=600).contains(&u.attack_interval) {
            return Err((
                "unit.attack_interval",
                format!("{} is not in 1..=600 frames", u.attack_interval),
            ));
        }
        if u.give_up_frames == 0 {
            return Err(("unit.give_up_frames", "must be at least 1".into()));
        }
        if self.spawn_spacing < u.radius.mul_int(2) {
            return Err((
                "spawn_spacing",
                format!("{} is below the unit diameter", self.spawn_spacing),
            ));
        }
        non_negative("spawn_radius", self.spawn_radius, limit)?;
        let half_map = self.map_size.scale_pow2(-1);
        let reach = self.spawn_radius + self.spawn_half_width() + u.radius;
        if reach >= half_map {
            return Err((
                "spawn_radius",
                format!("bases reach {reach} m from the centre, past the walls at {half_map} m"),
            ));
        }
        positive("cell_size", self.cell_size, Fx::from_int(16))?;
        let cells = self.map_size / self.cell_size;
        if cells > Fx::from_int(256) {
            return Err((
                "cell_size",
                format!("the map is {cells} cells across, more than 256"),
            ));
        }
        if self.rocks > 64 {
            return Err(("rocks", format!("{} is more than 64", self.rocks)));
        }
        if !(1..=8).contains(&self.substeps) {
            return Err(("substeps", format!("{} is not in 1..=8", self.substeps)));
        }
        if !(1..=600).contains(&self.fog_interval) {
            return Err((
                "fog_interval",
                format!("{} is not in 1..=600 frames", self.fog_interval),
            ));
        }
        non_negative("unit.view", u.view, Fx::from_int(64))?;
        // Each unit lifts a disc of cells; 32 cells of radius (3 217
        // cells) bounds the fog's work per unit.
        if u.view > self.cell_size.mul_int(32) {
            return Err((
                "unit.view",
                format!("{} m is more than 32 cells of {} m", u.view, self.cell_size),
            ));
        }
        if self.buildings.len() > 256 {
            return Err(("buildings", "more than 256".into()));
        }
        for b in &self.buildings {
            positive("buildings.size", b.size.min_element(), self.map_size)?;
            positive("buildings.size", b.size.max_element(), self.map_size)?;
            for c in b.position {
                if c.abs() > half_map {
                    return Err(("buildings.position", format!("{c} is off the map")));
                }
            }
        }
        Ok(())
    }

    /// Cells along each side of the navigation grid: the map's side over
    /// `cell_size`, rounded up (at most 256 once validated).
    pub fn nav_side(&self) -> u32 {
        let cells = (self.map_size / self.cell_size).ceil().to_int_floor();
        cells.clamp(1, 256) as u32
    }

    /// Columns (and at most as many rows) of a base's starting grid: the
    /// smallest `n` with `n² ≥ units_per_player`.
    pub(crate) fn spawn_columns(&self) -> u32 {
        let mut n = 1;
        while n * n < self.units_per_player {
            n += 1;
        }
        n
    }

    /// Half the side of a base's starting grid, centre to outer centre (m).
    pub(crate) fn spawn_half_width(&self) -> Fx {
        let cols = i64::from(self.spawn_columns());
        self.spawn_spacing.mul_int(cols - 1).scale_pow2(-1)
    }
}

//! Serde support for human-edited files (feature `serde`): an [`Fx`] reads
//! from a decimal string (`"9.81"`, exact, no float on the way) or an
//! integer, and writes as its exact decimal string; a [`Vec3`] is `[x, y, z]`,
//! a [`Vec2`] `[x, y]`.
//!
//! Floats are refused: a TOML `0.1` is a binary float already rounded by the
//! parser, which is exactly what deterministic settings must not depend on.

use core::fmt;

use serde::de::{self, Deserialize, Deserializer, Visitor};
use serde::ser::{Serialize, Serializer};

use crate::{Fx, Vec2, Vec3};

struct FxVisitor;

impl Visitor<'_> for FxVisitor {
    type Value = Fx;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a fixed-point number as a decimal string (\"0.25\") or an integer")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Fx, E> {
        v.trim()
            .parse()
            .map_err(|e| E::custom(format_args!("`{v}` is not a fixed-point number: {e}")))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Fx, E> {
        i32::try_from(v)
            .map(Fx::from_int)
            .map_err(|_| E::custom(format_args!("{v} is out of range for Q32.32")))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Fx, E> {
        i32::try_from(v)
            .map(Fx::from_int)
            .map_err(|_| E::custom(format_args!("{v} is out of range for Q32.32")))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Fx, E> {
        Err(E::custom(format_args!(
            "write {v} as a string (\"{v}\"): fixed-point settings are exact decimals, not floats"
        )))
    }
}

impl<'de> Deserialize<'de> for Fx {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Fx, D::Error> {
        d.deserialize_any(FxVisitor)
    }
}

impl Serialize for Fx {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&format_args!("{self:?}"))
    }
}

impl<'de> Deserialize<'de> for Vec2 {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Vec2, D::Error> {
        let [x, y] = <[Fx; 2]>::deserialize(d)?;
        Ok(Vec2::new(x, y))
    }
}

impl Serialize for Vec2 {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        [self.x, self.y].serialize(s)
    }
}

impl<'de> Deserialize<'de> for Vec3 {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Vec3, D::Error> {
        let [x, y, z] = <[Fx; 3]>::deserialize(d)?;
        Ok(Vec3::new(x, y, z))
    }
}

impl Serialize for Vec3 {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        [self.x, self.y, self.z].serialize(s)
    }
}

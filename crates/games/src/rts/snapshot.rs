//! The RTS's units as snapshots see them ([`Bodies`], [`BodiesMut`]):
//! slot `s` is unit `s` (units are numbered seat by seat at spawn, so the
//! slots are `players × units_per_player`); a dead unit's slot is empty. A
//! unit some player has selected has the [`Role::Player`], one walking
//! under orders is [`Role::Interacting`], the rest are [`Role::Free`].

use lockstep_fx::{Fx, Vec3};
use lockstep_snapshot::{Bodies, BodiesMut, BodyState, Bounds, Role};

use super::game::Rts;

impl Bodies for Rts {
    /// The walled map, a metre past each wall, up to 15 m high; 512 steps
    /// per metre, 9-bit orientation components, 11-bit velocities within
    /// ±32 m/s.
    fn snapshot_bounds(&self) -> Bounds {
        let half = self
            .config()
            .map_size
            .scale_pow2(-1)
            .saturating_add(Fx::ONE);
        Bounds {
            min: Vec3::new(half.saturating_neg(), Fx::NEG_ONE, half.saturating_neg()),
            max: Vec3::new(half, Fx::from_int(15), half),
            ..Bounds::cubes()
        }
    }

    fn body_slots(&self) -> u32 {
        u32::from(self.players()).saturating_mul(self.config().units_per_player)
    }

    fn body(&self, slot: u32) -> Option<(BodyState, Role)> {
        let (h, selected, ordered) = self.unit_body(slot)?;
        let b = self.world().body(h)?;
        let role = if selected {
            Role::Player
        } else if ordered {
            Role::Interacting
        } else {
            Role::Free
        };
        Some((crate::bodies::state_of(b), role))
    }
}

impl BodiesMut for Rts {
    fn set_body(&mut self, slot: u32, state: &BodyState) {
        if let Some((h, _, _)) = self.unit_body(slot) {
            self.set_body_state(h, state);
        }
    }
}

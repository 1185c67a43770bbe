//! The cube demo's bodies as snapshots see them ([`Bodies`],
//! [`BodiesMut`]): slot `s` for `s` below the player count is seat `s`'s
//! cube, the small cubes follow by cube number. A player's cube has the
//! [`Role::Player`], a cube stuck to one is [`Role::Interacting`], the rest
//! are [`Role::Free`].

use lockstep_physics::BodyHandle;
use lockstep_snapshot::{Bodies, BodiesMut, BodyState, Bounds, Role};

use super::game::Cubes;

impl Cubes {
    fn slot_body(&self, slot: u32) -> Option<BodyHandle> {
        let players = u32::from(self.players());
        if slot < players {
            self.player_body(slot as u8)
        } else {
            self.cube_body(slot - players)
        }
    }

    fn slot_role(&self, slot: u32) -> Role {
        let players = u32::from(self.players());
        if slot < players {
            return Role::Player;
        }
        let cube = slot - players;
        let stuck = (0..self.players()).any(|s| self.attached(s).binary_search(&cube).is_ok());
        if stuck { Role::Interacting } else { Role::Free }
    }
}

impl Bodies for Cubes {
    /// The field and the space cubes are blown into ([`Bounds::cubes`]).
    fn snapshot_bounds(&self) -> Bounds {
        Bounds::cubes()
    }

    fn body_slots(&self) -> u32 {
        u32::from(self.players()) + self.cube_count()
    }

    fn body(&self, slot: u32) -> Option<(BodyState, Role)> {
        let b = self.world().body(self.slot_body(slot)?)?;
        Some((crate::bodies::state_of(b), self.slot_role(slot)))
    }
}

impl BodiesMut for Cubes {
    fn set_body(&mut self, slot: u32, state: &BodyState) {
        let Some(h) = self.slot_body(slot) else {
            return;
        };
        self.set_body_state(h, state);
    }
}

//! The shipped games' pictures ([`Depict`] for `cubes`, `gaffer-cubes` and
//! `rts`), through
//! the games' public accessors only.
//!
//! - `Cubes`: every player's cube in its player's colour, the small cubes
//!   grey, or a pale tint of the player's colour while they are stuck to
//!   that player's cube (katamari); the ground with a 1 m grid; the field
//!   and the spawn points framed.
//! - `GafferCubes`: its cube demo's picture (one player).
//! - `Rts`: every unit a sphere in its owner's colour, the walls,
//!   buildings and rocks stone grey; the ground with a 10 m grid; the
//!   walled map framed. Seen by one seat ([`Depict::seen_by`]), its fog of
//!   war covers the ground: dark where the seat has never looked (terrain
//!   there hidden), dimmed where it looked before but sees nothing now;
//!   enemy units show only in cells it sees. Missiles fly as small dark
//!   boxes on an arc from shooter to target. Units following a flow field
//!   mark the way ahead of them, cell by cell to the goal, with small pale
//!   squares of their owner's colour (a seat's view: its own units' ways).
//!
//! A cubes player is where its cube is ([`Depict::camera_target`], what
//! a following camera looks at); an RTS player has no one place.

use std::collections::{BTreeMap, BTreeSet};

use lockstep_fx::Fx;
use lockstep_games::cubes::Cubes;
use lockstep_games::gaffer_cubes::GafferCubes;
use lockstep_games::rts::{Flow, Fog, NavGrid, Order, Rts};
use lockstep_physics::{BodyHandle, Shape as BodyShape};

use crate::canvas::Rgb;
use crate::depict::{Depict, floats, player_colour, solids};
use crate::scene::{Ground, Scene, Shape, Solid};

const SKY: Rgb = Rgb(214, 224, 234);
const GROUND: Rgb = Rgb(186, 194, 172);
const GRID: Rgb = Rgb(160, 170, 148);
const CUBE: Rgb = Rgb(208, 206, 198);
const STONE: Rgb = Rgb(140, 136, 128);

impl Depict for Cubes {
    fn scene(&self) -> Scene {
        // Each body's colour, and for a stuck cube whose cube it sticks to.
        let mut looks: BTreeMap<BodyHandle, (Rgb, u64)> = BTreeMap::new();
        for seat in 0..self.players() {
            let colour = player_colour(seat);
            if let Some(h) = self.player_body(seat) {
                looks.insert(h, (colour, 0));
            }
            for &cube in self.attached(seat) {
                if let Some(h) = self.cube_body(cube) {
                    let pale = colour.mix(Rgb(255, 255, 255), 0.45);
                    looks.insert(h, (pale, u64::from(seat) + 1));
                }
            }
        }
        let config = self.config();
        let reach = (config.spawn_distance() + config.player.size).to_f64_lossy() as f32;
        Scene {
            solids: solids(self.world(), |h, _| {
                Some(looks.get(&h).copied().unwrap_or((CUBE, 0)))
            }),
            ground: Some(Ground {
                half_size: reach + 3.0,
                spacing: config.field.spacing.to_f64_lossy() as f32,
                colour: GROUND,
                line_colour: GRID,
            }),
            focus: ([-reach, 0.0, -reach], [reach, 1.5, reach]),
            sky: SKY,
        }
    }

    /// The centre of the player's cube.
    fn camera_target(&self, seat: u8) -> Option<[f32; 3]> {
        self.player_position(seat).map(floats)
    }
}

/// The article's scene is the cube demo's field with one player.
impl Depict for GafferCubes {
    fn scene(&self) -> Scene {
        self.cubes().scene()
    }

    fn camera_target(&self, seat: u8) -> Option<[f32; 3]> {
        self.cubes().camera_target(seat)
    }
}

impl Depict for Rts {
    fn scene(&self) -> Scene {
        rts_scene(self, None)
    }

    /// `None`: an RTS player is an army spread over the map.
    fn camera_target(&self, _seat: u8) -> Option<[f32; 3]> {
        None
    }

    fn seen_by(&self, seat: u8) -> Scene {
        rts_scene(self, Some(seat))
    }
}

/// Never looked at: dark.
const UNEXPLORED: Rgb = Rgb(58, 62, 70);
/// Looked at before, not seen now: the ground, dimmed.
const REMEMBERED: Rgb = Rgb(150, 156, 140);
/// Keys of fog tiles (bodies' keys hold a generation below 2³¹).
const FOG_KEY: u64 = 1 << 63;

/// The RTS scene, whole or as `seat` sees it (see the module doc).
fn rts_scene(game: &Rts, seat: Option<u8>) -> Scene {
    let fog = seat.and_then(|s| game.fog(s).map(|f| (s, f)));
    let nav = game.nav();
    let units: BTreeMap<u64, (u8, u32)> = game
        .units()
        .map(|u| (u64::from(u.id), (u.owner, u.hp)))
        .collect();
    let half = game.config().map_size.to_f64_lossy() as f32 * 0.5;
    // A unit's hit points are part of what two logs can disagree on.
    let mut solids = solids(game.world(), |_, body| {
        let p = body.position();
        let cell = nav.index_at(p.x, p.z);
        match body.shape() {
            BodyShape::Sphere { .. } => {
                let &(owner, hp) = units.get(&body.user_data())?;
                let hidden = fog.is_some_and(|(s, f)| owner != s && !f.is_visible(cell));
                (!hidden).then(|| (player_colour(owner), u64::from(hp)))
            }
            // Walls (off the grid) always show; other terrain once explored.
            _ => {
                let hidden = nav.covers(p.x, p.z) && fog.is_some_and(|(_, f)| !f.is_explored(cell));
                (!hidden).then_some((STONE, 0))
            }
        }
    });
    if let Some((_, f)) = fog {
        solids.extend(fog_tiles(nav, f));
    }
    solids.extend(path_marks(game, seat));
    solids.extend(missiles(game, fog));
    Scene {
        solids,
        ground: Some(Ground {
            half_size: half + 2.0,
            spacing: 10.0,
            colour: GROUND,
            line_colour: GRID,
        }),
        focus: ([-half, 0.0, -half], [half, 2.0, half]),
        sky: SKY,
    }
}

/// An axis-aligned box that is drawn but is no body (a fog tile, a path
/// mark): `key` and `exact` as a solid's, its centre and half extents.
fn flat_box(key: u64, exact: u64, position: [f32; 3], half: [f32; 3], colour: Rgb) -> Solid {
    Solid {
        key,
        exact,
        shape: Shape::Box { half },
        position,
        rotation: [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
        colour,
        outlined: false,
    }
}

/// Keys of path marks.
const PATH_KEY: u64 = 1 << 62;
/// Keys of missiles.
const MISSILE_KEY: u64 = 1 << 61;

/// Every missile in flight, a small dark box in its shooter's colour on an
/// arc from where it was shot to its target, as far along as its flight
/// is; in a seat's view only those over cells it sees now (and its own).
fn missiles(game: &Rts, fog: Option<(u8, &Fog)>) -> Vec<Solid> {
    let now = game.world().frame();
    let nav = game.nav();
    game.missiles()
        .iter()
        .enumerate()
        .filter_map(|(i, m)| {
            let target = game.unit(m.target)?;
            // How far along its flight, in [0, 1].
            let flown = now.saturating_sub(u64::from(m.shot)) as i64;
            let flight = i64::from(m.lands - m.shot).max(1);
            let t = Fx::from_int(flown.min(flight) as i32) / Fx::from_int(flight as i32);
            let x = m.x + (target.position.x - m.x) * t;
            let z = m.z + (target.position.z - m.z) * t;
            if let Some((seat, f)) = fog {
                if m.owner != seat && !f.is_visible(nav.index_at(x, z)) {
                    return None;
                }
            }
            let (x, z, t) = (
                x.to_f64_lossy() as f32,
                z.to_f64_lossy() as f32,
                t.to_f64_lossy() as f32,
            );
            let y = 0.8 + 3.0 * t * (1.0 - t);
            Some(flat_box(
                MISSILE_KEY | i as u64,
                0,
                [x, y, z],
                [0.15, 0.15, 0.15],
                player_colour(m.owner).mix(Rgb(0, 0, 0), 0.4),
            ))
        })
        .collect()
}

/// A small flat mark, in a pale tint of the owner's colour, on every cell
/// of the way ahead of each unit that follows a flow field: from its cell,
/// step by step, to the goal (only `seat`'s units when one is given).
fn path_marks(game: &Rts, seat: Option<u8>) -> Vec<Solid> {
    let (nav, flows) = (game.nav(), game.flows());
    let size = nav.cell_size().to_f64_lossy() as f32 * 0.15;
    // (goal, cell) walked already: the rest of that way is marked.
    let mut walked = BTreeSet::new();
    let mut marks = BTreeSet::new();
    for u in game.units() {
        let Order::Move {
            goal: Some(goal), ..
        } = u.order
        else {
            continue;
        };
        if seat.is_some_and(|s| s != u.owner) {
            continue;
        }
        let Some(flow) = Flow::find(flows, goal) else {
            continue;
        };
        let mut at = nav.index_at(u.position.x, u.position.z);
        // A way is at most every cell long.
        for _ in 0..nav.cells() {
            if !walked.insert((goal, at)) {
                break;
            }
            marks.insert((u.owner, at));
            match flow.next(nav, at) {
                Some(next) => at = next,
                None => break,
            }
        }
    }
    marks
        .into_iter()
        .map(|(owner, cell)| {
            let (x, z) = nav.centre(cell);
            flat_box(
                PATH_KEY | u64::from(owner) << 32 | u64::from(cell),
                0,
                [x.to_f64_lossy() as f32, 0.03, z.to_f64_lossy() as f32],
                [size, 0.02, size],
                player_colour(owner).mix(Rgb(255, 255, 255), 0.35),
            )
        })
        .collect()
}

/// Flat tiles over the cells a fog does not show: one box per run of
/// cells in a row with the same state.
fn fog_tiles(nav: &NavGrid, fog: &Fog) -> Vec<Solid> {
    let side = nav.side();
    let cell = nav.cell_size().to_f64_lossy() as f32;
    let state = |i: u32| match (fog.is_visible(i), fog.is_explored(i)) {
        (true, _) => None,
        (false, true) => Some(REMEMBERED),
        (false, false) => Some(UNEXPLORED),
    };
    let mut tiles = Vec::new();
    for z in 0..side {
        let mut x = 0;
        while x < side {
            let look = state(z * side + x);
            let start = x;
            while x < side && state(z * side + x) == look {
                x += 1;
            }
            let Some(colour) = look else {
                continue;
            };
            let (x0, z0) = nav.centre(z * side + start);
            let run = (x - start) as f32;
            let x0 = x0.to_f64_lossy() as f32 - cell * 0.5;
            tiles.push(flat_box(
                FOG_KEY | u64::from(z * side + start),
                u64::from(x - start) << 24 | u64::from(colour.0),
                [x0 + run * cell * 0.5, 0.01, z0.to_f64_lossy() as f32],
                [run * cell * 0.5, 0.01, cell * 0.5],
                colour,
            ));
        }
    }
    tiles
}

#[cfg(test)]
mod tests {
    use super::*;
    use lockstep_games::Demo;
    use lockstep_sim::{Game, Match};

    #[test]
    fn cubes_players_are_coloured_and_the_field_is_grey() {
        let setup = Match {
            seats: 2,
            ..Match::default()
        };
        let game = Cubes::new(&Cubes::default_config(), &setup).unwrap();
        let scene = game.scene();
        assert_eq!(scene.solids.len(), 2 + game.cube_count() as usize);
        let count = |c: Rgb| scene.solids.iter().filter(|s| s.colour == c).count();
        assert_eq!(count(player_colour(0)), 1);
        assert_eq!(count(player_colour(1)), 1);
        assert_eq!(count(CUBE), game.cube_count() as usize);
        assert!(scene.differing(&game.scene()).is_empty());
    }

    #[test]
    fn rts_units_take_their_owners_colours() {
        let mut config = Rts::default_config();
        config.units_per_player = 8;
        let setup = Match {
            seats: 8,
            ..Match::default()
        };
        let game = Rts::new(&config, &setup).unwrap();
        let scene = game.scene();
        for seat in 0..8 {
            let mine = scene
                .solids
                .iter()
                .filter(|s| s.colour == player_colour(seat))
                .count();
            assert_eq!(mine, 8, "seat {seat}");
        }
        assert!(scene.solids.iter().any(|s| s.colour == STONE));
    }

    #[test]
    fn an_rts_seat_sees_its_own_units_and_fog_over_the_rest() {
        let mut config = Rts::default_config();
        config.units_per_player = 8;
        let setup = Match {
            seats: 4,
            ..Match::default()
        };
        let game = Rts::new(&config, &setup).unwrap();
        let seen = game.seen_by(0);
        let count = |scene: &Scene, c: Rgb| scene.solids.iter().filter(|s| s.colour == c).count();
        assert_eq!(count(&seen, player_colour(0)), 8);
        for enemy in 1..4 {
            assert_eq!(count(&seen, player_colour(enemy)), 0, "seat {enemy}");
        }
        assert!(count(&seen, UNEXPLORED) > 0);
        assert_eq!(count(&game.scene(), UNEXPLORED), 0);
        assert!(
            count(&seen, STONE) < count(&game.scene(), STONE),
            "unexplored terrain is hidden"
        );
    }

    #[test]
    fn a_moving_group_marks_its_way_to_the_goal() {
        use lockstep_fx::Fx;
        use lockstep_games::rts::{Command, RtsInput};
        let mut config = Rts::default_config();
        config.units_per_player = 9;
        let setup = Match {
            seats: 2,
            ..Match::default()
        };
        let mut game = Rts::new(&config, &setup).unwrap();
        let (x, z) = game.base(0);
        let r = Fx::from_int(5);
        let mut orders = RtsInput::default();
        orders
            .push(Command::select(x - r, z - r, x + r, z + r))
            .unwrap();
        orders.push(Command::move_to(-x, -z)).unwrap();
        game.step(0, &[orders, RtsInput::default()]);
        let pale = |seat| player_colour(seat).mix(Rgb(255, 255, 255), 0.35);
        let marks = |scene: &Scene, seat| {
            scene
                .solids
                .iter()
                .filter(|s| s.colour == pale(seat))
                .count()
        };
        let whole = game.scene();
        // The way crosses the map: more cells than the map is wide over 2.
        assert!(marks(&whole, 0) > (game.nav().side() / 2) as usize);
        assert_eq!(marks(&whole, 1), 0, "seat 1 gave no order");
        assert_eq!(marks(&game.seen_by(0), 0), marks(&whole, 0));
        assert_eq!(
            marks(&game.seen_by(1), 0),
            0,
            "seat 1 does not see seat 0's ways"
        );
    }
}

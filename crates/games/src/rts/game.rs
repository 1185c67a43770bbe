//! The RTS as a [`Game`]: the match state ([`Rts`]), the frame step, the
//! players' commands and the canonical encoding.
//!
//! A frame runs in six stages, always in this order:
//! 1. each seat's [`Command`]s, seats in order and each seat's in the
//!    order issued (a frame without commands, or a missing seat's input,
//!    carries none); a move computes its goal's flow field unless one is
//!    kept already;
//! 2. the missiles landing this frame, then this frame's share of combat
//!    ([`super::combat`]), then removal of the dead;
//! 3. steering of every unit with a move order, in id order;
//! 4. one physics step;
//! 5. flow fields no unit follows any more are dropped;
//! 6. on frames that are a multiple of `fog_interval`, every seat's fog of
//!    war ([`super::fog`]).
//!
//! Invariants: `step` reads nothing but the state, the frame and the
//! inputs, with `Fx` arithmetic only; the state is exactly what
//! [`Game::encode`] writes (the version, then the fields as
//! `#[derive(Canonical)]` writes them: the settings, each seat's selection
//! with the seat count, each unit, the missiles in flight, the flow fields
//! by goal, each seat's fog, the physics world; the navigation grid is derived from the world
//! and rebuilt on loading), and
//! [`Game::decode`] accepts only states whose units, selections and bodies
//! agree (see [`Rts::check`]), so a loaded state steps like the saved one
//! and hostile bytes give a [`StateError`], never a panic.

use lockstep_derive::Canonical;
use lockstep_fx::{Fx, PerSeat, Sink, StateReader, StateWriter, Vec3};
use lockstep_physics::{Aabb, World};
use lockstep_sim::{Frame, Game, Match, SetupError, StateError, read_version};

use super::combat::{self, Missile, index_of};
use super::command::{Command, RtsInput};
use super::config::RtsConfig;
use super::fog::{Fog, ViewDisc};
use super::map::{self, player_group};
use super::nav::{Flow, NavGrid};
use super::unit::{Order, Unit, UnitView};

/// The most flow fields kept at once; a move to a new goal beyond it
/// shares the field of the kept goal nearest to it.
pub const MAX_FLOWS: usize = 64;

/// An RTS match: 2 to 8 players, each commanding units on one battlefield.
#[derive(Debug, Canonical)]
pub struct Rts {
    #[canonical(flatten)]
    config: RtsConfig,
    /// Per seat: the ids of the selected units, ascending, all its own and
    /// alive (its length is the seat count).
    #[canonical(name = "selection")]
    selections: PerSeat<Vec<u32>>,
    /// Every living unit, ascending by id.
    units: Vec<Unit>,
    /// The missiles in flight, in the order they were shot.
    missiles: Vec<Missile>,
    /// The flow fields some unit follows, ascending by goal cell.
    #[canonical(max_len = 64)]
    flows: Vec<Flow>,
    /// Per seat: its fog of war.
    fog: PerSeat<Fog>,
    #[canonical(flatten)]
    world: World,
    /// The navigation grid (derived from the world's obstacles).
    #[canonical(skip)]
    nav: NavGrid,
    /// The cells a unit sees around its own (derived from the settings).
    #[canonical(skip)]
    view: ViewDisc,
}

impl Rts {
    /// Fewest players.
    pub const MIN_PLAYERS: u8 = 2;
    /// Most players (one collision group each, beside the terrain's).
    pub const MAX_SEATS: u8 = 8;

    /// The settings.
    pub fn config(&self) -> &RtsConfig {
        &self.config
    }

    /// Players in the match.
    pub fn players(&self) -> u8 {
        // A `PerSeat` holds at most 255.
        self.selections.len() as u8
    }

    /// The physics world (bodies for rendering; unit bodies carry the unit
    /// id as user data).
    pub fn world(&self) -> &World {
        &self.world
    }

    /// Every living unit, in id order.
    pub fn units(&self) -> impl Iterator<Item = UnitView> + '_ {
        self.units.iter().filter_map(|u| u.view(&self.world))
    }

    /// A living unit by id.
    pub fn unit(&self, id: u32) -> Option<UnitView> {
        let i = index_of(&self.units, id)?;
        self.units[i].view(&self.world)
    }

    /// The missiles in flight, in the order they were shot.
    pub fn missiles(&self) -> &[Missile] {
        &self.missiles
    }

    /// The navigation grid: cells, and which ones obstacles block.
    pub fn nav(&self) -> &NavGrid {
        &self.nav
    }

    /// The flow fields units follow now, ascending by goal cell.
    pub fn flows(&self) -> &[Flow] {
        &self.flows
    }

    /// `seat`'s fog of war (`None` for an unknown seat).
    pub fn fog(&self, seat: u8) -> Option<&Fog> {
        self.fog.get(usize::from(seat))
    }

    /// Whether `seat` sees the map point `(x, z)` now.
    pub fn sees(&self, seat: u8, x: Fx, z: Fx) -> bool {
        self.fog(seat)
            .is_some_and(|f| f.is_visible(self.nav.index_at(x, z)))
    }

    /// How many units `seat` has left.
    pub fn units_alive(&self, seat: u8) -> u32 {
        self.units.iter().filter(|u| u.owner == seat).count() as u32
    }

    /// The ids `seat` has selected, ascending (empty for an unknown seat).
    pub fn selection(&self, seat: u8) -> &[u32] {
        self.selections
            .get(usize::from(seat))
            .map_or(&[], Vec::as_slice)
    }

    /// The centre `(x, z)` of `seat`'s base (where its units started).
    pub fn base(&self, seat: u8) -> (Fx, Fx) {
        map::base(&self.config, seat, self.players())
    }

    /// Unit `id`'s body and whether some player has it selected or it
    /// walks under orders.
    pub(super) fn unit_body(&self, id: u32) -> Option<(lockstep_physics::BodyHandle, bool, bool)> {
        let i = index_of(&self.units, id)?;
        let u = &self.units[i];
        let selected = self.selections.iter().any(|s| s.binary_search(&id).is_ok());
        let ordered = u.order != Order::Idle;
        Some((u.body, selected, ordered))
    }

    /// Overwrites body `h` with `state` (see [`crate::bodies::set_state`]).
    pub(super) fn set_body_state(
        &mut self,
        h: lockstep_physics::BodyHandle,
        state: &lockstep_snapshot::BodyState,
    ) {
        crate::bodies::set_state(&mut self.world, h, state);
    }

    /// Carries out one player's command.
    fn command(&mut self, seat: u8, command: Command) {
        match command {
            Command::Select { from, to } => {
                let ((x0, z0), (x1, z1)) = (from.to_map(), to.to_map());
                let tall = self.config.map_size;
                let area = Aabb::from_corners(Vec3::new(x0, -tall, z0), Vec3::new(x1, tall, z1));
                let mut ids: Vec<u32> = self
                    .world
                    .query_aabb(&area, player_group(seat))
                    .into_iter()
                    .filter_map(|h| self.world.body(h))
                    .filter_map(|b| index_of(&self.units, u32::try_from(b.user_data()).ok()?))
                    .map(|i| self.units[i].id)
                    .collect();
                ids.sort_unstable();
                ids.dedup();
                self.selections[usize::from(seat)] = ids;
            }
            Command::Move { to } => self.move_selection(seat, to.to_map(), false),
            Command::AttackMove { to } => self.move_selection(seat, to.to_map(), true),
            Command::Stop => {
                for &id in &self.selections[usize::from(seat)] {
                    if let Some(i) = index_of(&self.units, id) {
                        self.units[i].halt(&mut self.world);
                    }
                }
            }
        }
    }

    /// Sends `seat`'s selection to `(x, z)`, keeping the formation: each
    /// unit's target is the point plus its offset from the selection's
    /// centre, kept inside the walls. On an attack-move (`attack`) they stop
    /// to fight enemies in range on the way.
    fn move_selection(&mut self, seat: u8, (x, z): (Fx, Fx), attack: bool) {
        let selected: Vec<(usize, Vec3)> = self.selections[usize::from(seat)]
            .iter()
            .filter_map(|&id| index_of(&self.units, id))
            .filter_map(|i| Some((i, self.world.body(self.units[i].body)?.position())))
            .collect();
        if selected.is_empty() {
            return;
        }
        let n = selected.len() as i64;
        let sum: Vec3 = selected.iter().map(|&(_, p)| p).sum();
        let centre = Vec3::new(sum.x.div_int(n), Fx::ZERO, sum.z.div_int(n));
        let edge = self.config.map_size.scale_pow2(-1) - self.config.unit.radius.mul_int(2);
        let goal = self.flow_to(x, z);
        for (i, p) in selected {
            let (mut tx, mut tz) = (
                (x + p.x - centre.x).clamp(-edge, edge),
                (z + p.z - centre.z).clamp(-edge, edge),
            );
            // A place in the formation inside an obstacle: the goal itself.
            if self.nav.is_blocked(self.nav.index_at(tx, tz)) {
                (tx, tz) = (x.clamp(-edge, edge), z.clamp(-edge, edge));
            }
            self.units[i].order = Order::Move {
                x: tx,
                z: tz,
                goal,
                blocked: 0,
                attack,
                fighting: false,
            };
        }
    }

    /// The goal cell of the flow field toward `(x, z)`, computing the field
    /// if none is kept for it (`None`: no free cell on the map).
    fn flow_to(&mut self, x: Fx, z: Fx) -> Option<u32> {
        let goal = self.nav.nearest_free(self.nav.index_at(x, z))?;
        match self.flows.binary_search_by_key(&goal, |f| f.goal) {
            Ok(_) => Some(goal),
            Err(at) if self.flows.len() < MAX_FLOWS => {
                self.flows.insert(at, Flow::toward(&self.nav, goal));
                Some(goal)
            }
            Err(_) => {
                // Full: the kept goal nearest to this one (ties: lower cell).
                let side = self.nav.side();
                let apart =
                    |g: u32| (g % side).abs_diff(goal % side) + (g / side).abs_diff(goal / side);
                self.flows
                    .iter()
                    .map(|f| f.goal)
                    .min_by_key(|&g| (apart(g), g))
            }
        }
    }

    /// Drops the flow fields no unit follows.
    fn drop_unused_flows(&mut self) {
        if self.flows.is_empty() {
            return;
        }
        let mut used: Vec<u32> = self.units.iter().filter_map(Unit::goal).collect();
        used.sort_unstable();
        used.dedup();
        self.flows.retain(|f| used.binary_search(&f.goal).is_ok());
    }

    /// Recomputes every seat's fog from its units' cells.
    fn update_fog(&mut self) {
        let (nav, world, units) = (&self.nav, &self.world, &self.units);
        for (seat, fog) in self.fog.iter_mut().enumerate() {
            let cells = units
                .iter()
                .filter(|u| usize::from(u.owner) == seat)
                .filter_map(|u| world.body(u.body))
                .map(|b| nav.index_at(b.position().x, b.position().z));
            fog.update(nav, cells, &self.view);
        }
    }

    /// Removes units at 0 hp: their bodies, and their ids from selections.
    fn remove_dead(&mut self) {
        let dead: Vec<_> = self
            .units
            .iter()
            .filter(|u| u.hp == 0)
            .map(|u| u.body)
            .collect();
        self.world.remove_bodies(&dead);
        self.units.retain(|u| u.hp > 0);
        let units = &self.units;
        for s in self.selections.iter_mut() {
            s.retain(|&id| index_of(units, id).is_some());
        }
    }

    /// Builds what is derived from the settings and the world, not state:
    /// the navigation grid and the disc of cells a unit sees.
    fn derive(&mut self) {
        self.nav = NavGrid::new(&self.config, map::obstacles(&self.world));
        self.view = ViewDisc::new(self.config.unit.view, self.config.cell_size);
    }

    /// Checks that decoded parts, with their derived grid, form a state
    /// [`Rts::step`](Game::step) can run: player count, units ascending by
    /// id with their own bodies, flow fields and fog of this map, selections
    /// of living own units, and no unit body without a unit. (The settings
    /// are validated before the grid is built from them.)
    fn check(&self) -> Result<(), String> {
        let players = self.players();
        if !(Self::MIN_PLAYERS..=Self::MAX_SEATS).contains(&players) {
            return Err(format!("{players} players"));
        }
        if !self.units.windows(2).all(|w| w[0].id < w[1].id) {
            return Err("unit ids must ascend".into());
        }
        let half = self.config.map_size;
        for u in &self.units {
            if u.owner >= players || u.hp == 0 || u.hp > self.config.unit.hp {
                return Err(format!("unit {}: owner or hp out of range", u.id));
            }
            if !map::is_unit_body(&self.world, u.body, &self.config, u.owner, u.id) {
                return Err(format!("unit {}: its body is missing or not a unit", u.id));
            }
            if let Order::Move { x, z, .. } = u.order {
                if x.abs() > half || z.abs() > half {
                    return Err(format!("unit {}: target off the map", u.id));
                }
            }
        }
        if let Some(m) = self
            .missiles
            .iter()
            .find(|m| m.owner >= players || m.lands <= m.shot)
        {
            return Err(format!(
                "missile at unit {}: owner or flight out of range",
                m.target
            ));
        }
        let unit_bodies = self
            .world
            .bodies()
            .filter(|(_, b)| {
                b.collision_groups().0 & !(map::TERRAIN_GROUP | map::GROUND_GROUP) != 0
            })
            .count();
        if unit_bodies != self.units.len() {
            return Err("a unit body has no unit".into());
        }
        let cells = self.nav.cells();
        if !self.flows.windows(2).all(|w| w[0].goal < w[1].goal) {
            return Err("flow goals must ascend".into());
        }
        if let Some(f) = self
            .flows
            .iter()
            .find(|f| f.goal >= cells || f.cells() != cells)
        {
            return Err(format!(
                "flow toward cell {}: not a field of this map",
                f.goal
            ));
        }
        for u in &self.units {
            if let Some(g) = u.goal() {
                if Flow::find(&self.flows, g).is_none() {
                    return Err(format!("unit {}: follows a missing flow", u.id));
                }
            }
        }
        if self.fog.len() != self.selections.len() || !self.fog.iter().all(|f| f.fits(cells)) {
            return Err("fog: not one per seat over the map's cells".into());
        }
        for (seat, s) in self.selections.iter().enumerate() {
            let ascending = s.windows(2).all(|w| w[0] < w[1]);
            let own = s.iter().all(|&id| {
                index_of(&self.units, id).is_some_and(|i| usize::from(self.units[i].owner) == seat)
            });
            if !ascending || !own {
                return Err(format!(
                    "selection of seat {seat}: not ascending own living units"
                ));
            }
        }
        Ok(())
    }
}

impl Game for Rts {
    type Input = RtsInput;
    type Config = RtsConfig;
    const ID: &'static str = "rts";
    /// Rules version 5 (rocks, flow fields, the fog of war, missiles and
    /// attack-moves; units that slide, never roll, and keep right when
    /// held up) with the physics' state version.
    const VERSION: u32 = crate::version(5);
    const PHYSICS_VERSION: u16 = lockstep_physics::STATE_VERSION;

    fn new(config: &RtsConfig, setup: &Match) -> Result<Rts, SetupError> {
        setup.check(Self::ID, Self::MIN_PLAYERS..=Self::MAX_SEATS)?;
        config.validate()?;
        let (world, units) = map::build(config, setup).map_err(|e| SetupError::Setting {
            game: Self::ID,
            field: "buildings",
            reason: e.to_string(),
        })?;
        let mut game = Rts {
            config: config.clone(),
            selections: PerSeat(vec![Vec::new(); usize::from(setup.seats)]),
            units,
            missiles: Vec::new(),
            flows: Vec::new(),
            fog: PerSeat(Vec::new()),
            world,
            nav: NavGrid::default(),
            view: ViewDisc::default(),
        };
        game.derive();
        game.fog = PerSeat(vec![Fog::new(game.nav.cells()); usize::from(setup.seats)]);
        game.update_fog();
        Ok(game)
    }

    /// The state before frame 0, plus what a match can add to it (it never
    /// gains a unit or a body): every seat selecting every unit, every unit
    /// on a move, [`MAX_FLOWS`] flow fields over the whole grid, the most
    /// missiles units can keep in flight (each unit shoots at most once a
    /// look, one every `attack_interval` frames, and a missile flies at most
    /// `(2 × radius + range) × tick rate / missile_speed` frames, rounded
    /// up), and every body of the world with its every field and
    /// [`CONTACTS_PER_BODY`](crate::CONTACTS_PER_BODY) contacts.
    fn state_limit(config: &RtsConfig, setup: &Match) -> Result<u32, SetupError> {
        use lockstep_fx::Canonical;
        let start = Rts::new(config, setup)?;
        let units = start.units.len() as u64;
        let rules = &config.unit;
        let on_a_move = Order::Move {
            x: Fx::ZERO,
            z: Fx::ZERO,
            goal: Some(0),
            blocked: 0,
            attack: false,
            fighting: false,
        };
        let order_growth = on_a_move.to_canonical().len() - Order::Idle.to_canonical().len();
        let missiles = if rules.missile_speed.is_positive() {
            let reach = rules.radius.mul_int(2) + rules.range;
            let flight = (reach.mul_int(i64::from(setup.tick_rate)) / rules.missile_speed)
                .to_int_floor()
                .saturating_add(2);
            let per_unit = flight.max(0) as u64 / u64::from(rules.attack_interval.max(1)) + 1;
            units * per_unit
        } else {
            0
        };
        let missile_bytes = Missile {
            owner: 0,
            target: 0,
            x: Fx::ZERO,
            z: Fx::ZERO,
            shot: 0,
            lands: 0,
        }
        .to_canonical()
        .len() as u64;
        // A flow: its goal, its steps' length and one step a cell.
        let flow_bytes = 4 + 4 + u64::from(start.nav.cells());
        let bytes = start.save().len() as u64
            + u64::from(setup.seats) * 4 * units
            + units * order_growth as u64
            + missiles * missile_bytes
            + MAX_FLOWS as u64 * flow_bytes
            + crate::world_limit(start.world.body_count() as u32);
        Ok(crate::state_limit(bytes))
    }

    fn step(&mut self, frame: Frame, inputs: &[RtsInput]) {
        for seat in 0..self.players() {
            if let Some(input) = inputs.get(usize::from(seat)) {
                for &command in input.commands() {
                    self.command(seat, command);
                }
            }
        }
        let (players, rules) = (self.players(), &self.config.unit);
        if combat::fight(
            &self.world,
            &mut self.units,
            &mut self.missiles,
            rules,
            players,
            frame,
        ) {
            self.remove_dead();
        }
        for u in &mut self.units {
            u.steer(&mut self.world, &self.config.unit, &self.nav, &self.flows);
        }
        self.world.step();
        self.drop_unused_flows();
        if frame % self.config.fog_interval.max(1) == 0 {
            self.update_fog();
        }
    }

    fn set_threads(&mut self, threads: usize) {
        self.world.set_threads(threads);
    }

    fn encode<S: Sink>(&self, w: &mut StateWriter<S>) {
        w.entity("rts", &[]);
        w.field("version", &Self::VERSION);
        lockstep_fx::Canonical::encode(self, w);
    }

    fn decode(bytes: &[u8]) -> Result<Rts, StateError> {
        let mut r = StateReader::new(bytes);
        read_version::<Rts>(&mut r)?;
        let mut game = <Rts as lockstep_fx::Canonical>::decode(&mut r)?;
        r.finish()?;
        game.config
            .validate()
            .map_err(|e| StateError::Invalid(e.to_string()))?;
        game.derive();
        game.check().map_err(StateError::Invalid)?;
        Ok(game)
    }
}

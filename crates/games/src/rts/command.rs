//! The RTS input: the [`Command`]s a player issues, one-shot orders that
//! ride in a frame's [`RtsInput`] (`Orders<(), Command>`: nothing held,
//! up to eight commands a frame) and are applied once, on that frame.
//!
//! Map coordinates travel quantized to a [`MapPoint`], a cell of
//! [`MapPoint::CELL`] (0.25 m) on a fixed grid covering `±`[`MapPoint::LIMIT`]
//! metres on both ground axes, independent of the match's map size, so the
//! encoding (and its schema hash) never depends on the settings.
//!
//! Invariants: a command takes at most `Command::MAX_BITS` bits; equal
//! commands write equal bits; reading rejects a cell index above
//! [`MapPoint::MAX_CELL`] (the only patterns writing never produces), so the
//! encoding is canonical.

use lockstep_codec::{BitError, BitStream, Orders};
use lockstep_fx::Fx;

/// A point on the ground, quantized to the command grid: cell `(x, z)` is the
/// map point `((x - ORIGIN) · CELL, (z - ORIGIN) · CELL)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct MapPoint {
    /// Cell index along x, `0..=MAX_CELL`.
    pub x: u16,
    /// Cell index along z, `0..=MAX_CELL`.
    pub z: u16,
}

impl MapPoint {
    /// Side of a cell (m).
    pub const CELL: Fx = Fx::lit("0.25");
    /// The grid covers `-LIMIT..=LIMIT` metres on each axis.
    pub const LIMIT: i32 = 256;
    /// Cells per metre.
    const PER_METRE: i32 = 4;
    /// The cell index of the map origin.
    pub const ORIGIN: u16 = (Self::LIMIT * Self::PER_METRE) as u16;
    /// The highest cell index (the cell of `+LIMIT`).
    pub const MAX_CELL: u16 = 2 * Self::ORIGIN;
    /// Bits per cell index.
    const BITS: u32 = 12;

    /// The cell nearest to the map point `(x, z)`, clamped to the grid.
    pub fn from_map(x: Fx, z: Fx) -> MapPoint {
        let cell = |v: Fx| {
            let i = v.mul_int(i64::from(Self::PER_METRE)).to_int_round();
            let i = i.saturating_add(i32::from(Self::ORIGIN));
            i.clamp(0, i32::from(Self::MAX_CELL)) as u16
        };
        MapPoint {
            x: cell(x),
            z: cell(z),
        }
    }

    /// The map point `(x, z)` of the cell's centre (metres).
    pub fn to_map(self) -> (Fx, Fx) {
        let coord = |c: u16| Self::CELL.mul_int(i64::from(c) - i64::from(Self::ORIGIN));
        (coord(self.x), coord(self.z))
    }

    fn serialize<S: BitStream>(&mut self, s: &mut S, what: &'static str) -> Result<(), BitError> {
        for v in [&mut self.x, &mut self.z] {
            let mut c = u32::from(*v);
            s.ranged(&mut c, 0, u32::from(Self::MAX_CELL), what)?;
            *v = c as u16;
        }
        Ok(())
    }
}

/// A seat's input for one frame: the commands it issued, nothing held.
pub type RtsInput = Orders<(), Command>;

/// What a player tells the game: one command, applied once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum Command {
    /// Replace the selection with the player's own units whose bounds touch
    /// the rectangle spanned by two corners (in any order).
    Select {
        /// One corner.
        from: MapPoint,
        /// The opposite corner.
        to: MapPoint,
    },
    /// Send the selected units to a point, keeping their formation.
    Move {
        /// Where the selection's centre goes.
        to: MapPoint,
    },
    /// Send the selected units to a point like [`Command::Move`], but each
    /// stops to fight every enemy that comes within its range on the way,
    /// and walks on once none is.
    AttackMove {
        /// Where the selection's centre goes.
        to: MapPoint,
    },
    /// The selected units drop their orders and halt (also the value a
    /// command is read into).
    #[default]
    Stop,
}

impl Command {
    /// Tag values, in 2 bits.
    const SELECT: u32 = 0;
    const MOVE: u32 = 1;
    const STOP: u32 = 2;
    const ATTACK_MOVE: u32 = 3;

    /// A select command from map coordinates (quantized to cells).
    pub fn select(x0: Fx, z0: Fx, x1: Fx, z1: Fx) -> Command {
        Command::Select {
            from: MapPoint::from_map(x0, z0),
            to: MapPoint::from_map(x1, z1),
        }
    }

    /// A move command from map coordinates (quantized to a cell).
    pub fn move_to(x: Fx, z: Fx) -> Command {
        Command::Move {
            to: MapPoint::from_map(x, z),
        }
    }

    /// An attack-move command from map coordinates (quantized to a cell).
    pub fn attack_move_to(x: Fx, z: Fx) -> Command {
        Command::AttackMove {
            to: MapPoint::from_map(x, z),
        }
    }
}

impl From<Command> for RtsInput {
    /// A frame's input carrying this one command.
    fn from(command: Command) -> RtsInput {
        let mut input = RtsInput::default();
        let _ = input.push(command);
        input
    }
}

impl lockstep_codec::Command for Command {
    /// A 2-bit tag, then two 12-bit cells per point: 2 + 4 × 12 for a select.
    const MAX_BITS: u32 = 2 + 4 * MapPoint::BITS;

    fn schema() -> &'static str {
        "lockstep-games rts Command v3: tag ranged 0..=3 in 2 bits (0 select, 1 move, 2 stop, \
         3 attack-move); select = from.x, from.z, to.x, to.z; move, attack-move = to.x, to.z; \
         each a cell index ranged 0..=2048 in 12 bits, cell 0.25 m, cell 1024 = 0 m"
    }

    fn serialize<S: BitStream>(&mut self, s: &mut S) -> Result<(), BitError> {
        let mut tag = match self {
            Command::Select { .. } => Self::SELECT,
            Command::Move { .. } => Self::MOVE,
            Command::Stop => Self::STOP,
            Command::AttackMove { .. } => Self::ATTACK_MOVE,
        };
        s.ranged(&mut tag, 0, 3, "rts command tag")?;
        if S::READING {
            *self = match tag {
                Self::SELECT => Command::Select {
                    from: MapPoint::default(),
                    to: MapPoint::default(),
                },
                Self::MOVE => Command::Move {
                    to: MapPoint::default(),
                },
                Self::ATTACK_MOVE => Command::AttackMove {
                    to: MapPoint::default(),
                },
                _ => Command::Stop,
            };
        }
        match self {
            Command::Select { from, to } => {
                from.serialize(s, "rts select corner")?;
                to.serialize(s, "rts select corner")
            }
            Command::Move { to } | Command::AttackMove { to } => to.serialize(s, "rts move target"),
            Command::Stop => Ok(()),
        }
    }

    fn read<S: BitStream>(s: &mut S) -> Result<Command, BitError> {
        let mut c = Command::Stop;
        c.serialize(s)?;
        Ok(c)
    }
}

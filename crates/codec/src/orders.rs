//! Commands beside a held input: [`Orders`], the input of a game driven by
//! orders (move here, attack that, build this) as well as by what a player
//! holds down.
//!
//! A command is issued once and must be applied once, on one frame agreed by
//! every seat. Orders get that from the input stream itself: a seat's
//! commands ride in the input of the frame it samples next, so they travel
//! redundantly with acks, wait in the playout buffer, are applied by every
//! seat on that frame (seats in order, each seat's commands in the order it
//! issued them) and are written to the replay log, exactly as held inputs
//! are.
//!
//! Invariants:
//! - an [`Orders`] holds at most [`MAX_COMMANDS`] commands ([`Orders::push`]
//!   refuses more), so its encoding is bounded by [`Input::MAX_BITS`];
//! - the encoding is the held input, then a 1 bit before each command and
//!   a 0 bit after the last (none after the [`MAX_COMMANDS`]th, where the
//!   count is known): a frame without commands costs the held input and one
//!   bit, and the 1-bit "same as the previous input" coding still makes an
//!   unchanged frame cost one bit in all;
//! - [`Input::repeat`] keeps the held input and drops the commands: a frame
//!   predicted in rollback mode carries no command, and a command is never
//!   applied twice because a prediction repeated it.

use crate::bits::{BitError, BitStream};
use crate::input::{Input, schema_hash};
use core::fmt::Debug;

/// The most commands one seat's input carries for one frame. At 60 frames a
/// second that is 480 commands a second, far beyond what a person issues;
/// a bot that issues more waits for the next frame.
pub const MAX_COMMANDS: usize = 8;

/// A one-shot order a game applies once, on the frame it arrives with.
///
/// `#[derive(Command)]` (`lockstep-derive`) writes all of it for a struct or
/// an enum of ranged integers (`#[command(range = 0..=99)]`), `bool`s and
/// other commands, packed in as few bits as the ranges allow. By hand:
/// `serialize` writes or measures (and may read into a value, the
/// [`BitStream`] way), and `read` makes a value to read into and reads it.
pub trait Command: Clone + PartialEq + Eq + Debug {
    /// The most bits [`Command::serialize`] writes.
    const MAX_BITS: u32;

    /// A description of the encoding, naming every field and width. It goes
    /// into the input's schema hash, so seats that code commands differently
    /// refuse each other at the handshake. Change it with the encoding.
    fn schema() -> &'static str;

    /// Writes or measures the command (see [`BitStream`]); given a reader,
    /// reads a command into `self`.
    fn serialize<S: BitStream>(&mut self, s: &mut S) -> Result<(), BitError>;

    /// Reads a command written by [`Command::serialize`], rejecting every
    /// bit pattern writing never produces.
    fn read<S: BitStream>(s: &mut S) -> Result<Self, BitError>;
}

/// A seat's input for one frame: what it holds, and the commands it issued
/// since the frame before (at most [`MAX_COMMANDS`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Orders<H, C> {
    /// The held input (buttons, a stick, a camera position).
    pub held: H,
    commands: Vec<C>,
}

impl<H, C> Orders<H, C> {
    /// `held`, with no command.
    pub fn new(held: H) -> Orders<H, C> {
        Orders {
            held,
            commands: Vec::new(),
        }
    }

    /// Adds a command after those already issued for this frame, or gives
    /// it back when the frame holds [`MAX_COMMANDS`] already.
    pub fn push(&mut self, command: C) -> Result<(), C> {
        if self.commands.len() >= MAX_COMMANDS {
            return Err(command);
        }
        self.commands.push(command);
        Ok(())
    }

    /// The commands, in the order they were issued.
    pub fn commands(&self) -> &[C] {
        &self.commands
    }
}

/// Nothing held, no command (a command needs no default of its own).
impl<H: Default, C> Default for Orders<H, C> {
    fn default() -> Orders<H, C> {
        Orders::new(H::default())
    }
}

impl<H: Input, C: Command> Input for Orders<H, C> {
    const MAX_BITS: u32 = H::MAX_BITS + MAX_COMMANDS as u32 * (1 + C::MAX_BITS);

    fn schema_hash() -> u64 {
        schema_hash(&format!(
            "lockstep Orders v1: held input of schema {:016x}, then up to {MAX_COMMANDS} commands each after a 1 bit, ended by a 0 bit unless {MAX_COMMANDS}; command: {}",
            H::schema_hash(),
            C::schema()
        ))
    }

    fn serialize<S: BitStream>(&mut self, s: &mut S) -> Result<(), BitError> {
        self.held.serialize(s)?;
        if S::READING {
            self.commands.clear();
        }
        for i in 0..MAX_COMMANDS {
            let mut more = !S::READING && i < self.commands.len();
            s.bool(&mut more)?;
            if !more {
                return Ok(());
            }
            if S::READING {
                self.commands.push(C::read(s)?);
            } else {
                self.commands[i].serialize(s)?;
            }
        }
        Ok(())
    }

    fn absent() -> Self {
        Orders::new(H::absent())
    }

    fn repeat(&self) -> Self {
        Orders::new(self.held.repeat())
    }
}

/// An input that carries [`Command`]s beside a held part: what a peer needs
/// to take commands from the app at any moment and put them in the next
/// frame it samples. [`Orders`] is the implementation; a game names
/// `Orders<MyHeld, MyCommand>` as its input.
pub trait Commanded: Input {
    /// The held part.
    type Held: Clone;
    /// The command.
    type Command;

    /// The held part, to set.
    fn held_mut(&mut self) -> &mut Self::Held;

    /// Adds a command, or gives it back when the frame is full.
    fn push_command(&mut self, command: Self::Command) -> Result<(), Self::Command>;
}

impl<H: Input, C: Command> Commanded for Orders<H, C> {
    type Held = H;
    type Command = C;

    fn held_mut(&mut self) -> &mut H {
        &mut self.held
    }

    fn push_command(&mut self, command: C) -> Result<(), C> {
        self.push(command)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bits::{BitMeasurer, BitReader, BitWriter};
    use crate::input::{Buttons, serialize_after};
    use proptest::prelude::*;

    /// A 10-bit command for the tests.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    struct Go(u16);

    impl Command for Go {
        const MAX_BITS: u32 = 10;
        fn schema() -> &'static str {
            "Go: u10"
        }
        fn serialize<S: BitStream>(&mut self, s: &mut S) -> Result<(), BitError> {
            let mut v = u32::from(self.0);
            s.ranged(&mut v, 0, 1023, "go")?;
            self.0 = v as u16;
            Ok(())
        }
        fn read<S: BitStream>(s: &mut S) -> Result<Go, BitError> {
            let mut go = Go(0);
            go.serialize(s)?;
            Ok(go)
        }
    }

    type In = Orders<Buttons, Go>;

    fn orders(held: u8, commands: &[u16]) -> In {
        let mut o = Orders::new(Buttons(held));
        for &c in commands {
            o.push(Go(c)).unwrap();
        }
        o
    }

    fn bits(o: &In) -> u64 {
        let mut m = BitMeasurer::new();
        o.clone().serialize(&mut m).unwrap();
        m.bits()
    }

    #[test]
    fn a_frame_without_commands_costs_one_bit_beside_the_held_input() {
        assert_eq!(bits(&orders(5, &[])), 6 + 1);
        assert_eq!(bits(&orders(5, &[9])), 6 + 1 + 10 + 1);
        assert_eq!(
            bits(&orders(5, &[1; MAX_COMMANDS])),
            u64::from(In::MAX_BITS)
        );
        // Unchanged from the frame before: one bit in all.
        let prev = orders(5, &[]);
        let mut m = BitMeasurer::new();
        serialize_after(&mut m, &mut orders(5, &[]), Some(&prev)).unwrap();
        assert_eq!(m.bits(), 1);
    }

    #[test]
    fn a_frame_holds_at_most_max_commands_and_gives_the_next_back() {
        let mut o = orders(0, &[0; MAX_COMMANDS]);
        assert_eq!(o.push(Go(7)), Err(Go(7)));
        assert_eq!(o.commands().len(), MAX_COMMANDS);
    }

    #[test]
    fn a_prediction_keeps_the_held_input_and_drops_the_commands() {
        assert_eq!(orders(3, &[1, 2]).repeat(), orders(3, &[]));
        assert_eq!(In::absent(), orders(0, &[]));
    }

    #[test]
    fn the_schema_hash_names_the_held_input_and_the_command() {
        assert_ne!(In::schema_hash(), Buttons::schema_hash());
        assert_eq!(In::schema_hash(), In::schema_hash());
    }

    proptest! {
        #[test]
        fn orders_round_trip_exactly(held in 0u8..64, commands in proptest::collection::vec(0u16..1024, 0..=MAX_COMMANDS)) {
            let o = orders(held, &commands);
            let mut w = BitWriter::new();
            o.clone().serialize(&mut w).unwrap();
            let bytes = w.finish();
            let mut r = BitReader::new(&bytes);
            let mut back = In::default();
            back.serialize(&mut r).unwrap();
            prop_assert_eq!(back, o);
        }

        #[test]
        fn any_bytes_read_as_orders_or_an_error_never_a_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let mut r = BitReader::new(&bytes);
            let mut o = In::default();
            if o.serialize(&mut r).is_ok() {
                prop_assert!(o.commands().len() <= MAX_COMMANDS);
            }
        }
    }
}

//! `#[derive(Canonical)]`: the canonical state encoding of a struct or an
//! enum (the `lockstep_fx::Canonical` trait), written field by field in
//! declaration order, each field through its own type's encoding and under
//! its own diagnosis label. And `#[derive(Command)]`: a command's bit
//! packing for the wire (the `lockstep_codec::Command` trait), from the
//! ranges of its fields (see [`derive@Command`]).
//!
//! This crate owns only the generation of that code; the encodings it
//! composes (integers, `bool`, `Fx`, `Vec3`, `Quat`, `Mat3`, `Rng`,
//! `Checksum`, `[T; N]`, `Vec<T>`, `Option<T>`) are fixed in
//! `lockstep_fx::encoding`, so derived bytes are the bytes a hand-written
//! encoder calling the same writers produces, on every target. Invariants:
//! the generated code writes no `usize`, no float and nothing taken from
//! memory layout (a `usize`, `isize`, `f32` or `f64` field is a compile
//! error); its decoder has no panic path (an unknown tag, a bad `bool` or a
//! too-long `Vec` is a `DecodeError`); and it validates nothing beyond the
//! encoding: ranges and cross-field rules stay in the game's own checks.
//!
//! # The encoding
//!
//! - A struct (named, tuple or unit) writes its fields in declaration order,
//!   each as `w.field(label, &self.field)`: a `Mark::Field` label, then the
//!   value's bytes. Nothing else: no count, no tag, no padding.
//! - An enum writes a `u8` tag, then the variant's fields like a struct's.
//!   Tags follow declaration order from 0, or an integer discriminant
//!   (`A = 3`), or `#[canonical(tag = N)]`; the next variant without one
//!   takes the previous tag plus one, as discriminants do. A tag no variant
//!   has decodes to `DecodeError::Invalid`. The tag carries no label of its
//!   own: it belongs to the label of the field that holds the enum.
//! - `MIN_BYTES` (the fewest bytes a value takes, used to refuse hostile
//!   `Vec` lengths before allocating) is derived from the fields' own.
//!
//! # Labels
//!
//! A field's label is its name with underscores as spaces (`cube_size` →
//! `"cube size"`), or its position (`"0"`) in a tuple struct or variant.
//! Labels are not part of the bytes (the checksum is the same without
//! them); `lockstep_sim::diff` names the fields two states disagree on by
//! them. A nested derived type labels its own fields, so the outer label
//! covers only the bytes written before the first inner one.
//!
//! # Attributes
//!
//! On a struct or an enum:
//! - `#[canonical(prefix = "unit")]`: default labels start with the prefix
//!   and a space (`"unit radius"`), for a settings struct nested in another;
//! - `#[canonical(entity = "unit", ids(id))]` (structs): each value starts
//!   with a `Mark::Entity` of that kind, identified by the listed fields
//!   (each converts to `u32`), so a diff says "unit 17 · hp", and ends with
//!   a `Mark::EndEntity`, so the fields written after a list of units are
//!   labelled as the enclosing value's again ("state · losses", never
//!   "unit 9 · losses").
//!
//! On a variant:
//! - `#[canonical(tag = N)]`: its `u8` tag.
//!
//! On a field:
//! - `#[canonical(name = "target x")]`: the whole label (no prefix);
//! - `#[canonical(flatten)]`: no label of its own, for a nested derived
//!   type whose fields carry theirs;
//! - `#[canonical(max_len = N)]` (a `Vec<T>`): decoding refuses more than
//!   `N` items (the length is always refused if the input cannot hold it);
//! - `#[canonical(skip)]`: not state (a cache, an index derived from the
//!   state): not written, and `Default::default()` on decode, so rebuild it
//!   after decoding if it matters. A state that skips a field it needs to
//!   step identically breaks determinism: skip only what the rest rebuilds.
//!
//! # Example
//!
//! ```
//! use lockstep_derive::Canonical;
//! use lockstep_fx::{Canonical, Fx, StateWriter};
//!
//! #[derive(Debug, Clone, PartialEq, Canonical)]
//! #[canonical(prefix = "unit")]
//! struct UnitRules {
//!     radius: Fx,
//!     hp: u32,
//! }
//!
//! #[derive(Debug, Clone, PartialEq, Canonical)]
//! enum Order {
//!     Idle,
//!     Move { x: Fx, z: Fx },
//! }
//!
//! #[derive(Debug, Clone, PartialEq, Canonical)]
//! struct Settings {
//!     map_size: Fx,
//!     #[canonical(flatten)]
//!     unit: UnitRules,
//!     #[canonical(max_len = 256)]
//!     orders: Vec<Order>,
//!     #[canonical(skip)]
//!     cached_area: Option<Fx>,
//! }
//!
//! let s = Settings {
//!     map_size: Fx::from_int(64),
//!     unit: UnitRules { radius: Fx::HALF, hp: 10 },
//!     orders: vec![Order::Idle, Order::Move { x: Fx::ONE, z: -Fx::ONE }],
//!     cached_area: None,
//! };
//!
//! // The same bytes as the hand-written encoder.
//! let mut w = StateWriter::buffer();
//! w.write_fx(s.map_size);
//! w.write_fx(s.unit.radius);
//! w.write_u32(s.unit.hp);
//! w.write_len(2);
//! w.write_u8(0);
//! w.write_u8(1);
//! w.write_fx(Fx::ONE);
//! w.write_fx(-Fx::ONE);
//! assert_eq!(s.to_canonical(), w.bytes());
//!
//! assert_eq!(Settings::from_canonical(&s.to_canonical()), Ok(s));
//! assert!(Settings::from_canonical(&[1, 2, 3]).is_err());
//! ```

mod attrs;
mod command;
mod expand;

/// Derives `lockstep_fx::Canonical` for a struct or an enum: see the
/// [crate] documentation for the encoding, the labels and the attributes.
#[proc_macro_derive(Canonical, attributes(canonical))]
pub fn derive_canonical(input: proc_macro::TokenStream) -> proc_macro::TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    expand::derive(input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Derives `lockstep_codec::Command` for a struct or an enum: a one-shot
/// order packed in as few bits as its fields' ranges allow.
///
/// Every field is an integer with its inclusive range
/// (`#[command(range = 0..=1023)]`, written as `value - LO` in
/// `bits_for(HI - LO)` bits), a `bool` (one bit), or another `Command`
/// (its own encoding). An enum first writes its variant's index, in
/// declaration order, in as few bits as the variants need (none for one).
/// `MAX_BITS` and `schema()` (every variant, field and range, so the
/// input's schema hash changes with the encoding) are derived; reading
/// refuses every value outside its range, and a value outside its range is
/// written clamped into it. The generated code names `::lockstep_codec`:
/// depend on `lockstep-codec`.
///
/// ```
/// use lockstep_codec::bits::{BitMeasurer, BitReader, BitWriter};
/// use lockstep_codec::Command;
/// use lockstep_derive::Command;
///
/// #[derive(Debug, Clone, Copy, PartialEq, Eq, Command)]
/// enum Order {
///     Stop {
///         #[command(range = 0..=3)]
///         unit: u8,
///     },
///     Move {
///         #[command(range = 0..=3)]
///         unit: u8,
///         #[command(range = 0..=63)]
///         x: u8,
///         #[command(range = -32..=31)]
///         z: i8,
///         run: bool,
///     },
/// }
///
/// // 1 bit of variant, 2 of unit, 6 + 6 of position, 1 of run.
/// assert_eq!(Order::MAX_BITS, 16);
/// let mut order = Order::Move { unit: 2, x: 40, z: -7, run: true };
/// let mut w = BitWriter::new();
/// order.serialize(&mut w).unwrap();
/// let bytes = w.finish();
/// assert_eq!(Order::read(&mut BitReader::new(&bytes)), Ok(order));
/// let mut bits = BitMeasurer::new();
/// Order::Stop { unit: 1 }.serialize(&mut bits).unwrap();
/// assert_eq!(bits.bits(), 3);
/// assert_eq!(Order::schema(), "Order; variant 0..=1; Stop { unit 0..=3 }; Move { unit 0..=3, x 0..=63, z -32..=31, run bool }");
/// ```
#[proc_macro_derive(Command, attributes(command))]
pub fn derive_command(input: proc_macro::TokenStream) -> proc_macro::TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    command::derive(input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

//! A state's canonical bytes with the labels its encoding gave them: which
//! entity and field each byte range holds ([`StateMap`]).
//!
//! Entities nest as the encoding opens and ends them ([`Mark::EndEntity`]):
//! after a list of entities, the fields that follow belong to the entity
//! around the list again, not to its last item. A field that holds nothing
//! but a list's length (its items labelled on their own) shows that length
//! as a number.
//!
//! Invariants: the bytes are exactly the saved-state bytes (labels add nothing
//! to them); every field range lies inside the bytes, ranges are in order and
//! do not overlap; bytes written before any field label belong to an
//! unnamed field, so a difference anywhere is attributed to something.

use core::ops::Range;

use lockstep_fx::{Mark, Sink, StateWriter};

use crate::game::{Game, StateError};

/// Identifies an entity across two states: its kind and its ids.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EntityKey {
    /// What kind of entity ("body", "contact", "unit", …).
    pub kind: &'static str,
    /// Its identity within the kind.
    pub ids: Vec<u32>,
}

impl core::fmt::Display for EntityKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.kind)?;
        for (i, id) in self.ids.iter().enumerate() {
            write!(f, "{}{id}", if i == 0 { " " } else { "–" })?;
        }
        Ok(())
    }
}

/// One labelled field of a state.
#[derive(Debug, Clone)]
pub struct Field {
    /// The entity it belongs to (index into [`StateMap::entities`]).
    pub entity: usize,
    /// Its name (`""` for bytes written before any label).
    pub name: &'static str,
    /// The bytes that hold it.
    pub range: Range<usize>,
    show: fn(&[u8]) -> String,
    /// It began with a list's length ([`Mark::Length`]).
    list: bool,
}

/// A state's bytes and the fields they hold.
#[derive(Debug, Clone, Default)]
pub struct StateMap {
    bytes: Vec<u8>,
    entities: Vec<EntityKey>,
    fields: Vec<Field>,
    /// The entity the next field belongs to (index into `entities`).
    current: usize,
    /// The entities around the open one, innermost last: each with the
    /// field that was open when the next one began.
    around: Vec<(usize, Option<Reopen>)>,
}

/// A field to go on with once the entities inside it end.
#[derive(Debug, Clone, Copy)]
struct Reopen {
    name: &'static str,
    show: fn(&[u8]) -> String,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl StateMap {
    /// Encodes `game` with its labels.
    pub fn of<G: Game>(game: &G) -> StateMap {
        let mut w = StateWriter::new(StateMap::default());
        game.encode(&mut w);
        let mut map = w.into_inner();
        map.close();
        map
    }

    /// Decodes `bytes` as a `G` state and maps it.
    pub fn decode<G: Game>(bytes: &[u8]) -> Result<StateMap, StateError> {
        Ok(StateMap::of(&G::decode(bytes)?))
    }

    /// The canonical bytes (equal to the game's saved state).
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The entities, in encoding order.
    pub fn entities(&self) -> &[EntityKey] {
        &self.entities
    }

    /// The fields, in encoding order.
    pub fn fields(&self) -> &[Field] {
        &self.fields
    }

    /// The entity a field belongs to.
    pub fn entity_of(&self, field: &Field) -> &EntityKey {
        &self.entities[field.entity]
    }

    /// A field's value as text: a field holding only a list's length (its
    /// items labelled on their own) as `length N`.
    pub fn show(&self, field: &Field) -> String {
        let bytes = &self.bytes[field.range.clone()];
        match <[u8; 4]>::try_from(bytes) {
            Ok(len) if field.list => format!("length {}", u32::from_le_bytes(len)),
            _ => (field.show)(bytes),
        }
    }

    /// The field that holds byte `offset`.
    pub fn field_at(&self, offset: usize) -> Option<&Field> {
        let i = self.fields.partition_point(|f| f.range.end <= offset);
        self.fields.get(i).filter(|f| f.range.contains(&offset))
    }

    /// The first field named `field` of the entity displayed as `entity`
    /// (e.g. `"body 17"`, `"position"`).
    pub fn find(&self, entity: &str, field: &str) -> Option<&Field> {
        self.fields
            .iter()
            .find(|f| f.name == field && self.entity_of(f).to_string() == entity)
    }

    /// The state's bytes with bit `bit` of a field flipped (bit 0 is the
    /// least significant bit of the field's first, little-endian byte): a
    /// deliberate corruption, to exercise desync diagnosis. `None` if there
    /// is no such field or bit.
    pub fn with_flipped_bit(&self, entity: &str, field: &str, bit: u32) -> Option<Vec<u8>> {
        let f = self.find(entity, field)?;
        let byte = f.range.start + (bit / 8) as usize;
        if byte >= f.range.end {
            return None;
        }
        let mut bytes = self.bytes.clone();
        bytes[byte] ^= 1 << (bit % 8);
        Some(bytes)
    }

    fn ensure_entity(&mut self) {
        if self.entities.is_empty() {
            self.entities.push(EntityKey {
                kind: "state",
                ids: Vec::new(),
            });
            self.current = 0;
        }
    }

    /// Ends the open field at the current length, dropping it if empty.
    fn close(&mut self) {
        let end = self.bytes.len();
        if let Some(last) = self.fields.last_mut() {
            last.range.end = end;
            if last.range.is_empty() {
                self.fields.pop();
            }
        }
    }

    fn open(&mut self, name: &'static str, show: fn(&[u8]) -> String) {
        self.close();
        self.ensure_entity();
        let start = self.bytes.len();
        self.fields.push(Field {
            entity: self.current,
            name,
            range: start..start,
            show,
            list: false,
        });
    }

    /// The open field, if it has no bytes yet.
    fn open_empty(&mut self) -> Option<&mut Field> {
        self.fields
            .last_mut()
            .filter(|f| f.range.end == self.bytes.len() && f.range.is_empty())
    }
}

impl Sink for StateMap {
    const READS_MARKS: bool = true;

    fn put(&mut self, bytes: &[u8]) {
        if self.fields.is_empty() {
            self.open("", hex);
        }
        self.bytes.extend_from_slice(bytes);
        if let Some(last) = self.fields.last_mut() {
            last.range.end = self.bytes.len();
        }
    }

    fn mark(&mut self, mark: Mark<'_>) {
        match mark {
            Mark::Entity { kind, ids } => {
                self.ensure_entity();
                let open = self
                    .fields
                    .last()
                    .filter(|f| f.entity == self.current)
                    .map(|f| Reopen {
                        name: f.name,
                        show: f.show,
                    });
                self.close();
                self.around.push((self.current, open));
                self.entities.push(EntityKey {
                    kind,
                    ids: ids.to_vec(),
                });
                self.current = self.entities.len() - 1;
                // Bytes written after the entity mark but before a field
                // label belong to an unnamed field of the new entity.
                self.open("", hex);
            }
            Mark::EndEntity => {
                let Some((outer, open)) = self.around.pop() else {
                    return;
                };
                self.current = outer;
                // What follows, up to the next label, belongs to the field
                // the entity began in (dropped if nothing does).
                match open {
                    Some(f) => self.open(f.name, f.show),
                    None => self.open("", hex),
                }
            }
            Mark::Field { name, show } => self.open(name, show),
            Mark::Length => {
                if self.fields.is_empty() {
                    self.open("", hex);
                }
                if let Some(f) = self.open_empty() {
                    f.list = true;
                }
            }
        }
    }
}

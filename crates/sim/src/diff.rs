//! Field-by-field comparison of two states ([`diff`]): which entity and
//! field differ, with both values as text.
//!
//! Fields are matched by (entity, field name, occurrence), not by byte
//! offset, so a body present in only one state, or a contact list one entry
//! longer, shows up as that entity alone and does not shift every field
//! after it. A field in only one state has `None` on the other side.
//! [`summary`] counts the differences by entity kind and field, for a diff
//! too long to read line by line.

use std::collections::BTreeMap;

use crate::fields::{EntityKey, StateMap};
use crate::game::{Game, StateError};

/// One field that differs between two states.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldDiff {
    /// The entity, e.g. `body 17`.
    pub entity: EntityKey,
    /// The field, e.g. `position`.
    pub field: &'static str,
    /// The left state's value, or `None` if it lacks the field.
    pub left: Option<String>,
    /// The right state's value, or `None` if it lacks the field.
    pub right: Option<String>,
}

impl core::fmt::Display for FieldDiff {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let side = |v: &Option<String>| v.clone().unwrap_or_else(|| "(absent)".into());
        let field = if self.field.is_empty() {
            "(unlabelled bytes)"
        } else {
            self.field
        };
        write!(
            f,
            "{} · {}: {} ≠ {}",
            self.entity,
            field,
            side(&self.left),
            side(&self.right)
        )
    }
}

type Key<'a> = (&'a EntityKey, &'static str, u32);

/// Each field's key, in encoding order.
fn keys(map: &StateMap) -> Vec<Key<'_>> {
    let mut seen: BTreeMap<(&EntityKey, &'static str), u32> = BTreeMap::new();
    map.fields()
        .iter()
        .map(|f| {
            let entity = map.entity_of(f);
            let n = seen.entry((entity, f.name)).or_insert(0);
            let key = (entity, f.name, *n);
            *n += 1;
            key
        })
        .collect()
}

/// Every field whose bytes differ between `left` and `right`: the left
/// state's fields in order, then those only the right state has.
pub fn diff(left: &StateMap, right: &StateMap) -> Vec<FieldDiff> {
    let left_keys = keys(left);
    let right_keys = keys(right);
    let mut right_index: BTreeMap<Key<'_>, usize> = right_keys
        .iter()
        .enumerate()
        .map(|(i, &k)| (k, i))
        .collect();
    let mut out = Vec::new();
    for (lf, key) in left.fields().iter().zip(&left_keys) {
        let right_field = right_index.remove(key).map(|i| &right.fields()[i]);
        let same = right_field
            .is_some_and(|rf| left.bytes()[lf.range.clone()] == right.bytes()[rf.range.clone()]);
        if !same {
            out.push(FieldDiff {
                entity: key.0.clone(),
                field: key.1,
                left: Some(left.show(lf)),
                right: right_field.map(|rf| right.show(rf)),
            });
        }
    }
    let mut only_right: Vec<usize> = right_index.into_values().collect();
    only_right.sort_unstable();
    for i in only_right {
        let rf = &right.fields()[i];
        out.push(FieldDiff {
            entity: right.entity_of(rf).clone(),
            field: rf.name,
            left: None,
            right: Some(right.show(rf)),
        });
    }
    out
}

/// "no field differs", "1 field differs" or "n fields differ".
pub fn count(n: usize) -> String {
    match n {
        0 => "no field differs".to_string(),
        1 => "1 field differs".to_string(),
        n => format!("{n} fields differ"),
    }
}

/// How many differing fields each (entity kind, field name) pair has, in
/// that order: the short form of a long diff, e.g. `body · position: 900`.
pub fn summary(diffs: &[FieldDiff]) -> Vec<(&'static str, &'static str, usize)> {
    let mut counts: BTreeMap<(&'static str, &'static str), usize> = BTreeMap::new();
    for d in diffs {
        *counts.entry((d.entity.kind, d.field)).or_insert(0) += 1;
    }
    counts
        .into_iter()
        .map(|((kind, field), n)| (kind, field, n))
        .collect()
}

/// Decodes two saved `G` states and compares them field by field.
pub fn diff_states<G: Game>(left: &[u8], right: &[u8]) -> Result<Vec<FieldDiff>, StateError> {
    Ok(diff(
        &StateMap::decode::<G>(left)?,
        &StateMap::decode::<G>(right)?,
    ))
}

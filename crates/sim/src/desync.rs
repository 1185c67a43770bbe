//! Finding and explaining a desync: the first frame two checksum streams
//! part ([`first_divergence`]), and a readable report of that frame
//! ([`DesyncReport`]): both checksums, every player's inputs, and the fields
//! the two states disagree on.

use core::fmt::Write as _;

use lockstep_fx::Checksum;

use crate::diff::FieldDiff;
use crate::game::Frame;

/// The first frame at which two per-frame checksum streams differ, looking
/// only at frames both hold. Once two lockstep states part they stay apart
/// (each state feeds the next), so the streams agree on a prefix and
/// differ after it; a binary search finds the boundary in `log n`
/// comparisons, and one linear check of the frame before confirms it.
pub fn first_divergence<C: PartialEq>(left: &[(Frame, C)], right: &[(Frame, C)]) -> Option<Frame> {
    // Align on frames both streams hold (both are in frame order).
    let mut pairs: Vec<(Frame, &C, &C)> = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < left.len() && j < right.len() {
        match left[i].0.cmp(&right[j].0) {
            core::cmp::Ordering::Less => i += 1,
            core::cmp::Ordering::Greater => j += 1,
            core::cmp::Ordering::Equal => {
                pairs.push((left[i].0, &left[i].1, &right[j].1));
                i += 1;
                j += 1;
            }
        }
    }
    // Bisection over "has diverged by here", then a scan back for the rare
    // stream whose checksums agree again after parting (a corrupted field
    // that the next frame overwrites).
    let diverged = pairs.partition_point(|(_, a, b)| a == b);
    let first_scan = pairs.iter().position(|(_, a, b)| a != b);
    match (pairs.get(diverged), first_scan) {
        (_, Some(k)) => Some(pairs[k].0),
        (Some(p), None) => Some(p.0),
        (None, None) => None,
    }
}

/// Everything known about the first divergent frame of two runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DesyncReport {
    /// The game's id.
    pub game: String,
    /// Where the two runs came from (file names, peer names).
    pub sources: [String; 2],
    /// The first frame whose checksums differ.
    pub frame: Frame,
    /// Both checksums of the state after `frame`.
    pub checksums: [Checksum; 2],
    /// Every player's input for `frame`, as text.
    pub inputs: Vec<String>,
    /// The fields that differ (left run on the left).
    pub diff: Vec<FieldDiff>,
    /// Anything else worth knowing (how each state was obtained).
    pub notes: Vec<String>,
}

impl DesyncReport {
    /// The report as readable text.
    pub fn to_text(&self) -> String {
        let mut t = String::new();
        let _ = writeln!(t, "desync report: {}", self.game);
        let _ = writeln!(t, "left:  {}", self.sources[0]);
        let _ = writeln!(t, "right: {}", self.sources[1]);
        let _ = writeln!(t, "first divergent frame: {}", self.frame);
        let _ = writeln!(t, "checksum left:  {}", self.checksums[0]);
        let _ = writeln!(t, "checksum right: {}", self.checksums[1]);
        for note in &self.notes {
            let _ = writeln!(t, "note: {note}");
        }
        let _ = writeln!(t, "\ninputs of frame {}:", self.frame);
        for (seat, input) in self.inputs.iter().enumerate() {
            let _ = writeln!(t, "  player {seat}: {input}");
        }
        let _ = writeln!(t, "\n{} fields differ:", self.diff.len());
        for d in &self.diff {
            let _ = writeln!(t, "  {d}");
        }
        t
    }
}

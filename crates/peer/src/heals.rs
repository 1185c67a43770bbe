//! What a seat remembers of the desyncs it was healed of: a short summary
//! of the newest heals' reports and the last report whole, from which the
//! report of a seat that keeps drifting is written when the match is found
//! invalid.
//!
//! Invariant: bounded — at most `HEALS_KEPT` summaries of at most
//! `FIELDS_KEPT` fields each, and one whole report.

use std::collections::{BTreeMap, VecDeque};

use lockstep_sim::desync::{DesyncReport, Diagnosis};

/// Heals remembered for the report of a seat that keeps drifting.
const HEALS_KEPT: usize = 8;

/// Fields remembered of one heal's report.
const FIELDS_KEPT: usize = 32;

/// What one heal's report said: the first frame whose checksums differed
/// and the fields that differed (entity · field), at most `FIELDS_KEPT`.
#[derive(Debug, Clone)]
struct HealSummary {
    frame: u32,
    fields: Vec<String>,
}

impl HealSummary {
    fn of(d: &Diagnosis) -> HealSummary {
        let mut fields: Vec<String> = d
            .report
            .before
            .iter()
            .chain(&d.report.after)
            .map(|f| format!("{} · {}", f.entity, f.field))
            .collect();
        fields.sort();
        fields.dedup();
        fields.truncate(FIELDS_KEPT);
        HealSummary {
            frame: d.report.frame,
            fields,
        }
    }
}

/// The heals a seat remembers.
#[derive(Debug, Clone, Default)]
pub(crate) struct Heals {
    kept: VecDeque<HealSummary>,
    last: Option<Diagnosis>,
}

impl Heals {
    /// A heal whose report is `d`.
    pub(crate) fn record(&mut self, d: &Diagnosis) {
        if self.kept.len() >= HEALS_KEPT {
            self.kept.pop_front();
        }
        self.kept.push_back(HealSummary::of(d));
        self.last = Some(d.clone());
    }

    /// The last heal's report whole.
    pub(crate) fn last(&self) -> Option<&Diagnosis> {
        self.last.as_ref()
    }

    /// The report of a seat that keeps drifting: the desyncs it was healed
    /// of, and the fields that differed in them.
    pub(crate) fn recurring_report(&self, first_frame: u32) -> Option<Diagnosis> {
        let last = self.last.as_ref()?;
        let mut fields: BTreeMap<&str, u32> = BTreeMap::new();
        for h in &self.kept {
            for f in &h.fields {
                *fields.entry(f).or_insert(0) += 1;
            }
        }
        let mut by_count: Vec<(&str, u32)> = fields.into_iter().collect();
        by_count.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        let frames: Vec<String> = self.kept.iter().map(|h| h.frame.to_string()).collect();
        // The report of the last heal (its frame, checksums and fields),
        // headed by what the heals show together.
        let mut report: DesyncReport = last.report.clone();
        report.notes.insert(
            0,
            format!(
                "this seat kept drifting: it was healed of desyncs first seen at frames {} and drifted again at frame {first_frame}; its game is not deterministic, so the match is invalid from frame {first_frame} (the report below is of the last heal)",
                frames.join(", ")
            ),
        );
        let keep: Vec<String> = by_count
            .iter()
            .take(12)
            .map(|(f, n)| format!("{f} ({n}×)"))
            .collect();
        if !keep.is_empty() {
            report.notes.insert(
                1,
                format!("fields that kept differing: {}", keep.join(", ")),
            );
        }
        Some(Diagnosis {
            report,
            states: last.states.clone(),
        })
    }
}

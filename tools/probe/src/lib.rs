//! The probe's library: the determinism cases ([`cases`]) and the report
//! every build of the probe prints — the command-line binary (`main.rs`)
//! on the native targets, and `tools/probe-wasm`'s exported functions on
//! wasm32, where there is no stdout.
//!
//! Invariant: [`report`] is a pure function of the cases selected; it reads
//! nothing of the machine, so every target must return the same text.

use lockstep_fx::{Checksum, StateWriter};

pub mod cases;

use cases::Case;

/// Runs one case on a fresh hashing writer and returns its checksum.
pub fn run_case(case: &Case) -> Checksum {
    let mut w = StateWriter::hasher();
    (case.run)(&mut w);
    w.checksum()
}

/// The compared output: `<case> <64-hex checksum>` per case, in the order
/// given, then `all <64-hex>` over the 32-byte case checksums; one line
/// each, `\n`-terminated.
pub fn report(selected: &[&Case]) -> String {
    let mut all = Vec::with_capacity(selected.len() * 32);
    let mut text = String::new();
    for case in selected {
        let sum = run_case(case);
        all.extend_from_slice(sum.as_bytes());
        text.push_str(&format!("{} {sum}\n", case.name));
    }
    text.push_str(&format!("all {}\n", Checksum::of(&all)));
    text
}

/// Describes the build (never hashed, only checked by the script): the
/// architecture, endianness, pointer width and profile.
pub fn target_line() -> String {
    let endian = if cfg!(target_endian = "big") {
        "big"
    } else {
        "little"
    };
    let profile = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    format!(
        "target arch={} endian={endian} pointer_width={} profile={profile}",
        std::env::consts::ARCH,
        usize::BITS,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use cases::CASES;

    #[test]
    fn cases_are_repeatable() {
        // The physics scenes are long; their repeatability is tested by
        // lockstep-physics' golden tests.
        for case in CASES.iter().filter(|c| !c.name.starts_with("physics_")) {
            assert_eq!(run_case(case), run_case(case), "case `{}`", case.name);
        }
    }

    #[test]
    fn the_report_ends_with_the_digest_over_the_cases() {
        let first = &CASES[0];
        let text = report(&[first]);
        let sum = run_case(first);
        let all = Checksum::of(sum.as_bytes());
        assert_eq!(text, format!("{} {sum}\nall {all}\n", first.name));
    }
}

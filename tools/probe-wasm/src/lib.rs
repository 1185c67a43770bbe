//! `lockstep-probe-wasm`: the determinism probe for `wasm32-unknown-unknown`,
//! where a program has no stdout and no arguments. The module exports four
//! functions and its memory; `run.mjs` (node) calls them and prints what the
//! native probe prints, so `tools/cross-verify` compares the fifth
//! architecture's output byte for byte with the others':
//!
//! - `probe_run() -> u32`: runs every case and keeps the report
//!   (`lockstep_probe::report`); returns its length in bytes;
//! - `probe_output() -> u32`: where the report starts in the memory;
//! - `probe_target() -> u32` and `probe_target_len() -> u32`: the build's
//!   description (`lockstep_probe::target_line`), for stderr.
//!
//! The module imports nothing: no clock, no randomness, no host function
//! can reach the cases. Invariant: the report is computed once, then only
//! read.

use std::sync::OnceLock;

use lockstep_probe::cases::CASES;

static REPORT: OnceLock<String> = OnceLock::new();
static TARGET: OnceLock<String> = OnceLock::new();

fn report() -> &'static str {
    REPORT.get_or_init(|| lockstep_probe::report(&CASES.iter().collect::<Vec<_>>()))
}

fn target() -> &'static str {
    TARGET.get_or_init(lockstep_probe::target_line)
}

/// A wasm32 address: pointers are 32 bits there (on a native build, where
/// these functions are only compiled, the address is cut to 32 bits).
fn address(s: &str) -> u32 {
    s.as_ptr() as usize as u32
}

/// Runs every case; the report's length in bytes.
#[allow(unsafe_code)]
#[unsafe(no_mangle)]
pub extern "C" fn probe_run() -> u32 {
    report().len() as u32
}

/// Where the report starts in the module's memory.
#[allow(unsafe_code)]
#[unsafe(no_mangle)]
pub extern "C" fn probe_output() -> u32 {
    address(report())
}

/// Where the build's description starts in the module's memory.
#[allow(unsafe_code)]
#[unsafe(no_mangle)]
pub extern "C" fn probe_target() -> u32 {
    address(target())
}

/// The build's description's length in bytes.
#[allow(unsafe_code)]
#[unsafe(no_mangle)]
pub extern "C" fn probe_target_len() -> u32 {
    target().len() as u32
}

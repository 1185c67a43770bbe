//! `--threads`: how many threads each frame may use. One option, shared by
//! every command that steps a game (`record`, `replay`, `verify`, `host`,
//! `join`, `spectate`). It is a machine setting: the states, checksums and
//! logs are the same for any count, so each run and each seat chooses its
//! own, and no log or state records it.

use clap::Args;

/// The `--threads` option (see the module documentation).
#[derive(Args, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FrameThreads {
    /// Threads each frame may use: the game's step and its checksum (with
    /// two or more, each checksum is hashed by the helpers while the next
    /// frame steps). The states and checksums are the same for any
    /// count. Default: this machine's cores.
    #[arg(
        long = "threads",
        id = "threads",
        value_name = "THREADS",
        value_parser = clap::value_parser!(u16).range(1..)
    )]
    pub given: Option<u16>,
}

impl FrameThreads {
    /// The count given, else this machine's cores (at least one).
    pub fn count(self) -> usize {
        self.given.map_or_else(
            || std::thread::available_parallelism().map_or(1, usize::from),
            usize::from,
        )
    }
}

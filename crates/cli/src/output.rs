//! Where the commands' output goes, and the two promises it keeps.
//!
//! Standard output: every line goes through [`line()`] (the `outln!` macro).
//! Rust ignores `SIGPIPE`, so a plain `println!` panics once the reader of a
//! pipe has gone (`lockstep diff a.state b.state | head -5`); here a closed
//! pipe ends the process at once, quietly, with status [`PIPE_CLOSED`] —
//! what a shell reports for a program that `SIGPIPE` ended, so `set -o
//! pipefail` does not read a cut-short run as a success.
//!
//! Standard error: a failed command's one line starts with the program's
//! name ([`error_line`]), `lockstep` unless the tools were given another
//! ([`set_program`]).
//!
//! Files: an output is written to a temporary file beside its destination
//! ([`Pending`]) and renamed over it only when the command succeeds, so a
//! failed command leaves an existing file as it was; and an output that
//! would be one of the command's inputs is refused before anything is
//! written ([`refuse_input`]).

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::error::CliError;

/// The exit status when standard output is closed under us: 128 + `SIGPIPE`.
pub const PIPE_CLOSED: i32 = 141;

/// The program's name, set once by the tools that run.
static PROGRAM: OnceLock<String> = OnceLock::new();

/// Names the program for the lines it prints (the first name given stays).
pub fn set_program(name: &str) {
    let _ = PROGRAM.set(name.to_string());
}

/// The program's name: what its error lines start with and its hints name.
pub fn program() -> &'static str {
    PROGRAM.get().map_or("lockstep", String::as_str)
}

/// One line on stderr, the program's name first; nothing if stderr is
/// closed.
pub fn error_line(line: &str) {
    let _ = writeln!(io::stderr(), "{}: {line}", program());
}

/// Writes one line to standard output; ends the process quietly if the
/// pipe is closed, and with one line on stderr on any other write error.
pub fn line(args: core::fmt::Arguments<'_>) {
    let mut out = io::stdout().lock();
    if let Err(e) = out.write_fmt(args).and_then(|()| out.write_all(b"\n")) {
        closed(&e);
    }
}

fn closed(e: &io::Error) -> ! {
    if e.kind() == io::ErrorKind::BrokenPipe {
        std::process::exit(PIPE_CLOSED);
    }
    // stderr may be gone too: nothing more to say then.
    error_line(&format!("cannot write to standard output: {e}"));
    std::process::exit(1);
}

/// Refuses `output` if it is the same file as one of `inputs` (`what` names
/// the option, e.g. `--report`).
pub fn refuse_input(what: &str, output: &Path, inputs: &[&Path]) -> Result<(), CliError> {
    // A file that does not exist yet cannot be an input.
    let Ok(out) = output.canonicalize() else {
        return Ok(());
    };
    for input in inputs {
        if input.canonicalize().is_ok_and(|i| i == out) {
            return Err(CliError::new(format!(
                "{what} {}: that is an input of this command; refusing to overwrite it",
                output.display()
            )));
        }
    }
    Ok(())
}

/// An output file being written: a temporary file beside `path`, renamed
/// over `path` by [`Pending::commit`], removed if dropped before.
#[derive(Debug)]
pub struct Pending {
    temp: PathBuf,
    path: PathBuf,
    committed: bool,
}

impl Pending {
    /// Creates the temporary file for `path` (and `path`'s directory).
    pub fn create(path: &Path) -> Result<(Pending, File), CliError> {
        let err = |e: io::Error| CliError::new(format!("{}: {e}", path.display()));
        let name = path
            .file_name()
            .ok_or_else(|| CliError::new(format!("{}: not a file name", path.display())))?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(err)?;
        }
        let mut temp_name = std::ffi::OsString::from(".");
        temp_name.push(name);
        temp_name.push(format!(".{}.tmp", std::process::id()));
        let temp = path.with_file_name(temp_name);
        let file = File::create(&temp).map_err(err)?;
        let pending = Pending {
            temp,
            path: path.to_path_buf(),
            committed: false,
        };
        Ok((pending, file))
    }

    /// Puts the written file in place.
    pub fn commit(mut self) -> Result<(), CliError> {
        std::fs::rename(&self.temp, &self.path)
            .map_err(|e| CliError::new(format!("{}: {e}", self.path.display())))?;
        self.committed = true;
        Ok(())
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}

/// Writes `bytes` to `path` through a temporary file.
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    let (pending, mut file) = Pending::create(path)?;
    file.write_all(bytes)
        .and_then(|()| file.flush())
        .map_err(|e| CliError::new(format!("{}: {e}", path.display())))?;
    drop(file);
    pending.commit()
}

//! The commands' one error type: a line for the user, printed by `main`
//! before it exits non-zero. Every command turns what went wrong (a bad
//! file, argument or address) into one, naming what it was about.

/// A one-line error for the user.
#[derive(Debug)]
pub struct CliError(String);

impl CliError {
    /// An error with this message.
    pub fn new(msg: impl Into<String>) -> CliError {
        CliError(msg.into())
    }
}

impl core::fmt::Display for CliError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(&self.0)
    }
}

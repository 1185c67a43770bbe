//! `lockstep-probe`: the determinism probe run by `tools/cross-verify`.
//!
//! Every case in [`cases::CASES`] writes values through a fresh canonical
//! [`StateWriter`] into BLAKE3. The probe prints one line per case,
//! `<name> <64-hex checksum>`, then `all <64-hex>`: BLAKE3 over the 32-byte case
//! checksums in order. The same binary built for x86_64, aarch64, s390x
//! (big-endian) and i686 (32-bit), in debug and release and by every supported
//! compiler, must print identical stdout; `tools/cross-verify` diffs it.
//!
//! Usage: `lockstep-probe [--list] [CASE ...]`. With case names, only those
//! cases run (in the order given) and `all` covers just them. A line describing
//! the build target (endianness, pointer width, profile) goes to stderr only,
//! so it never reaches the compared output or the hashes.

use std::io::Write;
use std::process::ExitCode;

use lockstep_probe::cases::{CASES, Case};
use lockstep_probe::{report, target_line};

/// What the command line asked for.
enum Command<'a> {
    /// Print the case names, one per line.
    List,
    /// Print the usage text.
    Help,
    /// Run these cases in this order.
    Run(Vec<&'a Case>),
}

const USAGE: &str = "usage: lockstep-probe [--list] [CASE ...]\n\
    Runs the determinism cases (all, or the named ones) and prints\n\
    `<case> <blake3>` per case and `all <blake3>` over them.";

/// Parses the arguments; an unknown option or case name is an error message.
fn parse(args: &[String]) -> Result<Command<'static>, String> {
    let mut selected = Vec::new();
    for arg in args {
        match arg.as_str() {
            "--list" => return Ok(Command::List),
            "-h" | "--help" => return Ok(Command::Help),
            opt if opt.starts_with('-') => return Err(format!("unknown option `{opt}`")),
            name => match CASES.iter().find(|c| c.name == name) {
                Some(case) => selected.push(case),
                None => return Err(format!("unknown case `{name}` (see --list)")),
            },
        }
    }
    if selected.is_empty() {
        selected.extend(CASES.iter());
    }
    Ok(Command::Run(selected))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let command = match parse(&args) {
        Ok(command) => command,
        Err(msg) => {
            eprintln!("lockstep-probe: {msg}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let written = match command {
        Command::Help => writeln!(out, "{USAGE}"),
        Command::List => CASES
            .iter()
            .try_for_each(|case| writeln!(out, "{}", case.name)),
        Command::Run(selected) => {
            eprintln!("{}", target_line());
            out.write_all(report(&selected).as_bytes())
        }
    };
    match written.and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("lockstep-probe: cannot write output: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn case_names_are_unique_and_printable() {
        for (i, case) in CASES.iter().enumerate() {
            assert!(!case.name.is_empty());
            assert!(case.name != "all", "`all` is the summary line");
            assert!(
                case.name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'),
                "case name `{}` must be one word",
                case.name
            );
            assert!(
                CASES[..i].iter().all(|c| c.name != case.name),
                "duplicate case `{}`",
                case.name
            );
        }
    }

    #[test]
    fn arguments_select_cases() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(matches!(parse(&args(&[])), Ok(Command::Run(v)) if v.len() == CASES.len()));
        assert!(matches!(parse(&args(&["--list"])), Ok(Command::List)));
        assert!(parse(&args(&["no-such-case"])).is_err());
        assert!(parse(&args(&["--bogus"])).is_err());
        let first = CASES[0].name;
        assert!(matches!(parse(&args(&[first])), Ok(Command::Run(v)) if v.len() == 1));
    }
}

//! Loading human-edited settings from TOML through serde, with errors that
//! name the file, the line and column, and the field: a game's scene and
//! rules (its `Config`), and a whole match ([`MatchFile`]: which game, the
//! seats, seed and tick rate, how long, and which scene).
//!
//! Fixed-point values are written as decimal strings (`friction = "0.5"`)
//! or integers; TOML floats are refused (see `lockstep_fx`'s serde support),
//! so nothing a file holds passes through a binary float. A file longer
//! than [`MAX_SETTINGS_BYTES`] is refused before it is read: a scene of the
//! largest settings the shipped games take is a few kilobytes.

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

use crate::game::{Frame, Match};

/// A recorded match described in a file, e.g.
///
/// ```toml
/// game = "cubes"
/// frames = 3600
/// keyframe_interval = 1200
/// settings = "my-scene.toml"   # optional, relative to this file
///
/// [match]
/// seats = 2
/// seed = 1
/// ```
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatchFile {
    /// The game's id.
    pub game: String,
    /// Frames to play.
    pub frames: Frame,
    /// A keyframe every this many frames (`None`: the recorder's default).
    #[serde(default)]
    pub keyframe_interval: Option<u32>,
    /// The game's settings file, relative to the match file (`None`: the
    /// game's embedded default).
    #[serde(default)]
    pub settings: Option<PathBuf>,
    /// Seats, seed and tick rate.
    #[serde(rename = "match", default)]
    pub setup: Match,
}

impl MatchFile {
    /// Loads a match file; a relative `settings` path is resolved against
    /// the match file's folder.
    pub fn load(path: &Path) -> Result<MatchFile, SettingsError> {
        let mut file: MatchFile = load(path)?;
        if let Some(settings) = &file.settings {
            if settings.is_relative() {
                let dir = path.parent().unwrap_or(Path::new(""));
                file.settings = Some(dir.join(settings));
            }
        }
        Ok(file)
    }
}

/// The longest settings or match file read, in bytes (1 MiB).
pub const MAX_SETTINGS_BYTES: u64 = 1 << 20;

/// Why a settings file could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is longer than [`MAX_SETTINGS_BYTES`].
    #[error("{path}: {len} bytes, more than a settings file may hold ({MAX_SETTINGS_BYTES})")]
    TooLong {
        /// The file.
        path: PathBuf,
        /// Its length.
        len: u64,
    },
    /// The text is not valid TOML or does not fit the settings.
    #[error("{path}:{line}:{column}: {message}")]
    Parse {
        /// The file (or `<embedded>` for built-in text).
        path: PathBuf,
        /// 1-based line of the offending text.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong, naming the field.
        message: String,
    },
}

/// Parses `text` (read from `path`, used only in errors).
pub fn parse<T: DeserializeOwned>(text: &str, path: &Path) -> Result<T, SettingsError> {
    toml::from_str(text).map_err(|e| {
        let (line, column) = e
            .span()
            .map_or((1, 1), |span| line_column(text, span.start));
        SettingsError::Parse {
            path: path.to_path_buf(),
            line,
            column,
            message: e.message().trim().to_string(),
        }
    })
}

/// Reads and parses the file at `path`, at most [`MAX_SETTINGS_BYTES`]
/// of it.
pub fn load<T: DeserializeOwned>(path: &Path) -> Result<T, SettingsError> {
    use std::io::Read as _;
    let io = |source| SettingsError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let mut text = String::new();
    // One byte past the limit tells a file that is too long.
    let len = file
        .take(MAX_SETTINGS_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(io)? as u64;
    if len > MAX_SETTINGS_BYTES {
        let len = std::fs::metadata(path).map_or(len, |m| m.len());
        return Err(SettingsError::TooLong {
            path: path.to_path_buf(),
            len,
        });
    }
    parse(&text, path)
}

/// The 1-based line and column (in characters) of byte `offset` of `text`
/// (the parser's spans start on character boundaries).
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;
    use lockstep_fx::Fx;

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Settings {
        friction: Fx,
        count: u32,
    }

    /// A file past the limit is refused without being read whole; one at
    /// the limit is read.
    #[test]
    fn a_file_past_the_limit_is_refused() {
        let dir = std::env::temp_dir().join(format!("lockstep-settings-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("long.toml");
        let mut text = "count = 3\nfriction = \"1\"\n".to_string();
        let pad = MAX_SETTINGS_BYTES as usize - text.len();
        text.push_str(&"#".repeat(pad));
        std::fs::write(&path, &text).unwrap();
        assert!(load::<Settings>(&path).is_ok());
        text.push('#');
        std::fs::write(&path, &text).unwrap();
        let e = load::<Settings>(&path).unwrap_err();
        assert!(
            matches!(e, SettingsError::TooLong { len, .. } if len == MAX_SETTINGS_BYTES + 1),
            "{e}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn errors_name_the_file_line_and_field() {
        let text = "count = 3\nfriction = 0.5\n";
        let e = parse::<Settings>(text, Path::new("scene.toml")).unwrap_err();
        let msg = e.to_string();
        assert!(msg.starts_with("scene.toml:2:"), "{msg}");
        assert!(msg.contains("\"0.5\""), "{msg}");

        let e = parse::<Settings>("count = 3\n", Path::new("a.toml")).unwrap_err();
        assert!(e.to_string().contains("friction"), "{e}");

        let e = parse::<Settings>(
            "count = 3\nfriction = \"1\"\nspeed = 2\n",
            Path::new("a.toml"),
        )
        .unwrap_err();
        assert!(e.to_string().starts_with("a.toml:3:"), "{e}");
        assert!(e.to_string().contains("speed"), "{e}");
    }

    #[test]
    fn match_files_default_what_they_omit() {
        let text = "game = \"cubes\"\nframes = 600\n[match]\nseats = 3\n";
        let m: MatchFile = parse(text, Path::new("m.toml")).unwrap();
        assert_eq!(m.setup.seats, 3);
        assert_eq!(m.setup.seed, Match::default().seed);
        assert_eq!(m.keyframe_interval, None);
        let e = parse::<MatchFile>(
            "game = \"cubes\"\nframes = 1\n[match]\nseat = 3\n",
            Path::new("m.toml"),
        )
        .unwrap_err();
        assert!(e.to_string().starts_with("m.toml:4:"), "{e}");
        assert!(e.to_string().contains("player"), "{e}");
    }

    #[test]
    fn fixed_point_values_are_exact() {
        let s: Settings = parse("count = 1\nfriction = \"0.1\"\n", Path::new("x")).unwrap();
        assert_eq!(s.friction, Fx::lit("0.1"));
    }
}

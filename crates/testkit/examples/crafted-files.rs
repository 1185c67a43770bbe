//! Writes the crafted replay logs of [`lockstep_testkit::crafted`] into a
//! folder, for `tools/crafted-files` to run the `lockstep` tools on:
//!
//! - `bomb.log`: 120 frames of the cube demo's bots and one keyframe whose
//!   data (4 MB) inflates to 4.3 GB;
//! - `swarm.log`: the cube demo's bots with a keyframe before every frame,
//!   each about 1 KiB inflating to 1 MiB of zeros, 4 MB in all;
//! - `five-seats.log`: a cube demo log whose header has five seats (the
//!   game plays four at most), sound records, a keyframe to seek from.
//!
//! `cargo run --release -p lockstep-testkit --example crafted-files -- DIR`

use lockstep_games::cubes::Cubes;
use lockstep_testkit::crafted;

fn main() -> std::process::ExitCode {
    let Some(dir) = std::env::args_os().nth(1).map(std::path::PathBuf::from) else {
        eprintln!("usage: crafted-files DIR");
        return std::process::ExitCode::FAILURE;
    };
    let files = [
        ("bomb.log", crafted::keyframe_bomb::<Cubes>(120, 4 << 20)),
        (
            "swarm.log",
            crafted::keyframe_swarm::<Cubes>(4 << 20, 1 << 20),
        ),
        ("five-seats.log", crafted::refused_setup::<Cubes>(5, 120)),
    ];
    if let Err(e) = std::fs::create_dir_all(&dir) {
        eprintln!("{}: {e}", dir.display());
        return std::process::ExitCode::FAILURE;
    }
    for (name, bytes) in files {
        let path = dir.join(name);
        if let Err(e) = std::fs::write(&path, &bytes) {
            eprintln!("{}: {e}", path.display());
            return std::process::ExitCode::FAILURE;
        }
        println!("{} {}", path.display(), bytes.len());
    }
    std::process::ExitCode::SUCCESS
}

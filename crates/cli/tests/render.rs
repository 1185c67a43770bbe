//! `lockstep render` end to end on the recorded fixture logs: a PNG of one
//! frame with the players' colours in it, a GIF and a directory of frames,
//! two logs side by side with the differing body outlined, and one clear
//! line for every bad argument or file. The checks are loose (sizes,
//! colours present), never pixel-exact.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn lockstep(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lockstep"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn dir(test: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(test);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/replays")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// The one line a failing command prints on stderr.
fn error_line(o: &Output) -> String {
    assert!(!o.status.success(), "expected a failure: {}", text(o));
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "one line expected: {err}");
    lines[0].to_string()
}

/// A decoded PNG: width, height and RGB pixels.
fn decode_png(path: &Path) -> (u32, u32, Vec<[u8; 3]>) {
    let mut decoder =
        png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    decoder.set_transformations(png::Transformations::EXPAND);
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    let pixels = buf[..info.buffer_size()]
        .chunks(channels)
        .map(|p| [p[0], p[1], p[2]])
        .collect();
    (info.width, info.height, pixels)
}

/// Pixels whose hue is near `colour`'s: each channel within a margin of
/// the colour's scaled by the pixel's brightness (shading scales all three).
#[allow(clippy::float_arithmetic)] // a loose test oracle
fn count_like(pixels: &[[u8; 3]], colour: [u8; 3]) -> usize {
    pixels
        .iter()
        .filter(|p| {
            let scale = f64::from(p[0].max(p[1]).max(p[2]))
                / f64::from(colour.iter().max().copied().unwrap());
            scale > 0.3
                && (0..3).all(|i| (f64::from(p[i]) - f64::from(colour[i]) * scale).abs() < 18.0)
        })
        .count()
}

const BLUE: [u8; 3] = [52, 120, 246];
const ORANGE: [u8; 3] = [245, 140, 20];
const GREEN: [u8; 3] = [40, 175, 90];
const RED: [u8; 3] = [230, 20, 20];

#[test]
fn a_png_of_one_frame_shows_the_players() {
    let d = dir("render_png");
    let out = d.join("cubes.png");
    let o = lockstep(&[
        "render",
        &fixture("cubes-2p.log"),
        "--frames",
        "0",
        "--width",
        "320",
        "--height",
        "180",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("wrote"), "{}", text(&o));
    let (w, h, pixels) = decode_png(&out);
    assert_eq!((w, h), (320, 180));
    assert!(count_like(&pixels, BLUE) > 10, "seat 0's cube");
    assert!(count_like(&pixels, ORANGE) > 10, "seat 1's cube");

    let rts = d.join("rts.png");
    let o = lockstep(&[
        "render",
        &fixture("rts-4p.log"),
        "--frames",
        "0",
        "--width",
        "320",
        "--height",
        "180",
        "--no-overlay",
        "-o",
        rts.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let (_, _, pixels) = decode_png(&rts);
    for colour in [BLUE, ORANGE, GREEN] {
        assert!(count_like(&pixels, colour) > 20, "{colour:?}");
    }
}

#[test]
fn a_gif_of_a_range_and_a_directory_of_frames() {
    let d = dir("render_gif");
    let gif = d.join("a.gif");
    let o = lockstep(&[
        "render",
        &fixture("cubes-2p.log"),
        "--frames",
        "0..6",
        "--every",
        "2",
        "--width",
        "160",
        "--height",
        "90",
        "-o",
        gif.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("3 frames"), "{}", text(&o));
    let bytes = std::fs::read(&gif).unwrap();
    assert!(bytes.starts_with(b"GIF89a"));
    assert_eq!(&bytes[6..10], &[160, 0, 90, 0]);

    let frames = d.join("frames");
    let o = lockstep(&[
        "render",
        &fixture("rts-4p.log"),
        "--frames",
        "1200..=1202",
        "--every",
        "1",
        "--width",
        "64",
        "--height",
        "36",
        "-o",
        &format!("{}/", frames.display()),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let mut names: Vec<String> = std::fs::read_dir(&frames)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["frame-001200.png", "frame-001201.png", "frame-001202.png"]
    );
}

#[test]
fn side_by_side_outlines_the_bodies_that_differ() {
    let d = dir("render_side");
    let clean = d.join("clean.log");
    let flipped = d.join("flipped.log");
    for (log, extra) in [(&clean, None), (&flipped, Some("30:body 40:position:28"))] {
        let mut args = vec![
            "record",
            "cubes",
            "--frames",
            "64",
            "--keyframe-interval",
            "60",
            "-o",
            log.to_str().unwrap(),
        ];
        if let Some(flip) = extra {
            args.extend(["--flip", flip]);
        }
        let o = lockstep(&args);
        assert!(o.status.success(), "{}", text(&o));
    }
    let out = d.join("side.png");
    let render = |frame: &str| {
        lockstep(&[
            "render",
            clean.to_str().unwrap(),
            "--side-by-side",
            flipped.to_str().unwrap(),
            "--frames",
            frame,
            "--width",
            "640",
            "--height",
            "240",
            "-o",
            out.to_str().unwrap(),
        ])
    };
    // Frame 62 is replayed from the keyframe of frame 60, which holds the
    // flipped run's state.
    let o = render("62");
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("bodies differ between the two logs in 1 of the 1 frames"),
        "{}",
        text(&o)
    );
    let (w, _, pixels) = decode_png(&out);
    assert_eq!(w, 640);
    assert!(count_like(&pixels, RED) > 20, "outlined in red");
    // Before the flip both sides agree: nothing outlined.
    let o = render("10");
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("in 0 of the 1 frames"), "{}", text(&o));
}

#[test]
fn bad_arguments_and_files_give_one_clear_line() {
    let d = dir("render_errors");
    let log = fixture("cubes-2p.log");
    let png = d.join("x.png");
    let png = png.to_str().unwrap();
    let run = |args: &[&str]| {
        let mut all = vec!["render"];
        all.extend_from_slice(args);
        all.extend(["--width", "32", "--height", "32"]);
        error_line(&lockstep(&all))
    };
    let line = run(&[&log, "--frames", "3601", "-o", png]);
    assert!(
        line.contains("--frames 3601") && line.contains("0..=3600"),
        "{line}"
    );
    let line = run(&[&log, "--frames", "9..3", "-o", png]);
    assert!(line.contains("empty"), "{line}");
    let line = run(&[&log, "--frames", "soon", "-o", png]);
    assert!(line.contains("`soon`"), "{line}");
    let line = run(&[&log, "--frames", "0..10", "-o", png]);
    assert!(line.contains("one frame"), "{line}");
    let line = run(&[&log, "--frames", "0", "-o", "/nonexistent/dir/x.png"]);
    assert!(line.contains("/nonexistent/dir/x.png"), "{line}");
    let line = run(&[&log, "-o", &d.join("x.jpg").to_string_lossy()]);
    assert!(line.contains(".jpg"), "{line}");
    let junk = d.join("junk.log");
    std::fs::write(&junk, b"not a log").unwrap();
    let line = run(&[junk.to_str().unwrap(), "-o", png]);
    assert!(line.contains("junk.log"), "{line}");
    let line = run(&[&log, "--side-by-side", &fixture("rts-4p.log"), "-o", png]);
    assert!(
        line.contains("cubes log") && line.contains("rts log"),
        "{line}"
    );
    let line = run(&[&log, "--every", "0", "-o", png]);
    assert!(line.contains("--every"), "{line}");
}

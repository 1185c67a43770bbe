//! The module's exports: the page writes a log into the module's memory,
//! opens it, verifies it and asks for pictures. Every answer but a picture
//! is a short JSON text the page reads at [`viewer_text`]; a picture is
//! RGBA bytes at the address [`viewer_picture`] returns.
//!
//! Invariant: the module imports nothing (no clock, no randomness, no host
//! function); its state lives in one thread-local (wasm32 without atomics
//! has one thread).

use std::cell::RefCell;

use crate::{Verdict, Viewer};

#[derive(Default)]
struct State {
    input: Vec<u8>,
    viewer: Option<Viewer>,
    text: String,
    rgba: Vec<u8>,
}

thread_local! {
    static STATE: RefCell<State> = RefCell::new(State::default());
}

/// A wasm32 address (pointers are 32 bits there).
fn address(p: *const u8) -> u32 {
    p as usize as u32
}

/// `s` as a JSON string literal.
fn json(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn say(text: String) -> u32 {
    STATE.with_borrow_mut(|s| {
        s.text = text;
        s.text.len() as u32
    })
}

/// Makes room for a log of `len` bytes; the address to write it to.
#[allow(unsafe_code)]
#[unsafe(no_mangle)]
pub extern "C" fn viewer_input(len: u32) -> u32 {
    STATE.with_borrow_mut(|s| {
        s.input.clear();
        s.input.resize(len as usize, 0);
        address(s.input.as_ptr())
    })
}

/// Opens the log written at [`viewer_input`]: `{"game", "version",
/// "frames"}` or
/// `{"error"}`; returns the text's length.
#[allow(unsafe_code)]
#[unsafe(no_mangle)]
pub extern "C" fn viewer_open() -> u32 {
    let text = STATE.with_borrow_mut(|s| {
        let opened = Viewer::open(&s.input);
        s.input = Vec::new();
        match opened {
            Ok(v) => {
                let text = format!(
                    "{{\"game\":{},\"version\":{},\"frames\":{}}}",
                    json(v.game()),
                    json(&v.version()),
                    v.frames()
                );
                s.viewer = Some(v);
                text
            }
            Err(e) => {
                s.viewer = None;
                format!("{{\"error\":{}}}", json(&e))
            }
        }
    });
    say(text)
}

/// Verifies the open log: `{"frames", "replayed", "first_mismatch",
/// "mismatches", "first_bad_keyframe", "damage", "first_bad_frame",
/// "verified"}` or
/// `{"error"}`; returns the text's length.
#[allow(unsafe_code)]
#[unsafe(no_mangle)]
pub extern "C" fn viewer_verify() -> u32 {
    let text = STATE.with_borrow(|s| match s.viewer.as_ref().map(Viewer::verify) {
        Some(Ok(v)) => verdict_json(&v),
        Some(Err(e)) => format!("{{\"error\":{}}}", json(&e)),
        None => "{\"error\":\"no log is open\"}".into(),
    });
    say(text)
}

fn verdict_json(v: &Verdict) -> String {
    let frame = |f: Option<u32>| f.map_or("null".into(), |f| f.to_string());
    format!(
        "{{\"frames\":{},\"replayed\":{},\"first_mismatch\":{},\"mismatches\":{},\"first_bad_keyframe\":{},\"damage\":{},\"first_bad_frame\":{},\"verified\":{}}}",
        v.frames,
        v.replayed,
        frame(v.first_mismatch),
        v.mismatches,
        frame(v.first_bad_keyframe),
        v.damage.as_deref().map_or("null".into(), json),
        frame(v.first_bad_frame()),
        v.verified()
    )
}

/// Indexes up to `n` more frames of the open log (seeks start from the
/// index): the frames indexed so far.
#[allow(unsafe_code)]
#[unsafe(no_mangle)]
pub extern "C" fn viewer_index(n: u32) -> u32 {
    STATE.with_borrow_mut(|s| {
        s.viewer
            .as_mut()
            .and_then(|v| v.index_step(n).ok())
            .unwrap_or(0)
    })
}

/// Where the last answer's JSON text starts.
#[allow(unsafe_code)]
#[unsafe(no_mangle)]
pub extern "C" fn viewer_text() -> u32 {
    STATE.with_borrow(|s| address(s.text.as_ptr()))
}

/// Draws the state before `frame`, `width` × `height`: the address of its
/// RGBA bytes, or 0 when it cannot be drawn (the reason at
/// [`viewer_text`]).
#[allow(unsafe_code)]
#[unsafe(no_mangle)]
pub extern "C" fn viewer_picture(frame: u32, width: u32, height: u32) -> u32 {
    let drawn = STATE.with_borrow_mut(|s| {
        let viewer = s.viewer.as_mut().ok_or("no log is open".to_string())?;
        let canvas = viewer.picture(frame, width.clamp(1, 4096), height.clamp(1, 4096))?;
        s.rgba.clear();
        for p in canvas.pixels() {
            s.rgba.extend_from_slice(&[p.0, p.1, p.2, 255]);
        }
        Ok::<u32, String>(address(s.rgba.as_ptr()))
    });
    match drawn {
        Ok(at) => at,
        Err(e) => {
            say(format!("{{\"error\":{}}}", json(&e)));
            0
        }
    }
}

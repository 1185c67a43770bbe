//! [`Screen`]: what passes between the thread that plays the match and the
//! window's thread. The match side *shows* [`Picture`]s (a scene and the
//! overlay's numbers), *says* notes (a seat joined, a desync) that stay on
//! every picture until the next one, and reads the buttons the player
//! *holds*; the window
//! side reads the newest picture and sets the held buttons, and says when
//! the player *leaves*.
//!
//! Invariants: each side only ever sees the other's newest value (a picture
//! not yet drawn when a newer one arrives is skipped, never queued, so a
//! slow window cannot hold the match back); pictures are numbered in the
//! order they were shown, from 1. A panic on one side does not poison the
//! other: the lock's data stays usable.

use std::sync::{Arc, Mutex, MutexGuard};

use lockstep_games::cubes::CubesInput;
use lockstep_render::Scene;

use crate::hud::{Hud, Phase};

/// One state of the match to draw.
#[derive(Debug, Clone, PartialEq)]
pub struct Picture {
    /// The bodies and the ground.
    pub scene: Scene,
    /// Where the local player is, for the following camera (`None`: no one
    /// to follow; the window shows the overview).
    pub follow: Option<[f32; 3]>,
    /// The overlay's numbers.
    pub hud: Hud,
}

#[derive(Debug, Default)]
struct Shared {
    picture: Option<(u64, Arc<Picture>)>,
    shown: u64,
    note: Option<String>,
    held: CubesInput,
    left: bool,
    dismissed: bool,
}

/// The shared board between the match and the window; clones share it.
#[derive(Debug, Clone, Default)]
pub struct Screen {
    shared: Arc<Mutex<Shared>>,
}

impl Screen {
    /// A screen with nothing shown, no button held.
    pub fn new() -> Screen {
        Screen::default()
    }

    fn lock(&self) -> MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The match side: shows `picture` in place of the one before (with
    /// the latest note, if the picture has none of its own).
    pub fn show(&self, mut picture: Picture) {
        let mut s = self.lock();
        if picture.hud.note.is_none() {
            picture.hud.note = s.note.clone();
        }
        s.shown += 1;
        s.picture = Some((s.shown, Arc::new(picture)));
    }

    /// The match side: puts `note` on the newest picture and every one
    /// after, until the next note.
    pub fn say(&self, note: &str) {
        self.lock().note = Some(note.to_string());
        self.update_hud(|h| h.note = Some(note.to_string()));
    }

    /// The match side: changes the overlay of the newest picture only
    /// (a note, the phase), keeping its scene.
    pub fn update_hud(&self, change: impl FnOnce(&mut Hud)) {
        let mut s = self.lock();
        let Some((_, picture)) = s.picture.as_ref() else {
            return;
        };
        let mut picture = Picture::clone(picture);
        change(&mut picture.hud);
        s.shown += 1;
        s.picture = Some((s.shown, Arc::new(picture)));
    }

    /// The match side: the window should close now (the match could not
    /// be played, and the window has nothing more to show).
    pub fn dismiss(&self) {
        self.lock().dismissed = true;
    }

    /// The window side: whether the match side dismissed the window.
    pub fn is_dismissed(&self) -> bool {
        self.lock().dismissed
    }

    /// The match side: the buttons the player holds now.
    pub fn held(&self) -> CubesInput {
        self.lock().held
    }

    /// The match side: whether the player has left (closed the window).
    pub fn has_left(&self) -> bool {
        self.lock().left
    }

    /// The window side: the newest picture, if it is newer than the one
    /// numbered `seen`, with its number.
    pub fn newer_than(&self, seen: u64) -> Option<(u64, Arc<Picture>)> {
        match &self.lock().picture {
            Some((n, p)) if *n > seen => Some((*n, Arc::clone(p))),
            _ => None,
        }
    }

    /// The window side: whether the newest picture shows a match that is
    /// over.
    pub fn is_over(&self) -> bool {
        matches!(&self.lock().picture, Some((_, p)) if p.hud.phase == Phase::Over)
    }

    /// The window side: the buttons held from now on.
    pub fn hold(&self, input: CubesInput) {
        self.lock().held = input;
    }

    /// The window side: the player leaves the match.
    pub fn leave(&self) {
        let mut s = self.lock();
        s.left = true;
        s.held = CubesInput::NONE;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lockstep_render::Rgb;

    fn picture(frame: u32) -> Picture {
        Picture {
            scene: Scene {
                solids: Vec::new(),
                ground: None,
                focus: ([0.0; 3], [1.0; 3]),
                sky: Rgb(0, 0, 0),
            },
            follow: None,
            hud: Hud {
                frame,
                ..Hud::default()
            },
        }
    }

    #[test]
    fn the_window_sees_only_the_newest_picture_once() {
        let screen = Screen::new();
        let window = screen.clone();
        assert!(window.newer_than(0).is_none());
        screen.show(picture(1));
        screen.show(picture(2));
        let (n, p) = window.newer_than(0).unwrap();
        assert_eq!((n, p.hud.frame), (2, 2));
        assert!(window.newer_than(n).is_none());
        screen.update_hud(|h| h.phase = Phase::Over);
        let (m, p) = window.newer_than(n).unwrap();
        assert!(m > n && p.hud.frame == 2 && window.is_over());
        screen.say("seat 1 joined");
        screen.show(picture(3));
        let (_, p) = window.newer_than(m).unwrap();
        assert_eq!(
            (p.hud.frame, p.hud.note.as_deref()),
            (3, Some("seat 1 joined"))
        );
    }

    #[test]
    fn held_buttons_reach_the_match_until_the_player_leaves() {
        let screen = Screen::new();
        let window = screen.clone();
        window.hold(CubesInput::from_bits(5));
        assert_eq!(screen.held(), CubesInput::from_bits(5));
        assert!(!screen.has_left());
        assert!(!window.is_dismissed());
        screen.dismiss();
        assert!(window.is_dismissed());
        window.leave();
        assert!(screen.has_left());
        assert_eq!(screen.held(), CubesInput::NONE);
    }
}

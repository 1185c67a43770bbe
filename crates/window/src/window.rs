//! [`GameWindow`]: an X11 window (minifb) that draws the [`Screen`]'s newest
//! picture with `lockstep-render`'s software rasteriser and hands the held
//! keys back as the player's buttons.
//!
//! Each turn of [`GameWindow::run`] reads the keyboard into the screen,
//! draws the newest picture if there is one it has not drawn, and presents
//! it; minifb paces the turns to 60 a second. Two cameras ([`View`], C
//! switches): the overview frames the scene's field and is kept while the
//! field stays the same, so the view never jumps as bodies move; the
//! following camera looks down at the local player's cube from behind
//! ([`follow_camera`]). The picture is exactly what `lockstep render`
//! draws for the same state at the same size, with the window's own overlay
//! ([`compose`]).
//!
//! Invariants: the window never waits for the match (a turn with no new
//! picture draws nothing); drawing takes at most half of one core — after
//! a picture that took `d` to draw, the next waits until `2d` after the
//! first began, the newest picture is drawn then and the ones between are
//! skipped — so on a busy machine the window shows fewer frames rather
//! than slowing the match; closing the window or pressing Esc leaves the
//! match ([`Screen::leave`]) before `run` returns.

use std::time::{Duration, Instant};

use lockstep_render::{Camera, Canvas, Overlay, draw_scene};
use minifb::{Key, KeyRepeat, Window, WindowOptions};

use crate::controls::cubes_input;
use crate::screen::{Picture, Screen};

/// Why the window could not be used.
#[derive(Debug, thiserror::Error)]
pub enum WindowError {
    /// No window could be opened (no X display, or no libX11).
    #[error("cannot open a window: {0} (is DISPLAY set to a running X server? Xvfb will do)")]
    Open(String),
    /// Presenting a picture failed.
    #[error("cannot draw in the window: {0}")]
    Present(String),
}

/// The window's size and title.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WindowSettings {
    /// The title bar (and the X window's name, which `xwd -name` finds).
    pub title: String,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Where the window's top-left corner goes on the screen (`None`:
    /// where the window manager puts it).
    pub position: Option<(i32, i32)>,
    /// The camera it starts with.
    pub view: View,
}

/// The camera a window draws through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum View {
    /// The whole field, as `lockstep render` frames it.
    #[default]
    Overview,
    /// Close behind the local player's cube, moving with it (the overview
    /// when a picture has no player to follow).
    Follow,
}

/// A camera 11 m behind (+z) and 9 m above `target`, looking at it with a
/// 45° field of view.
pub fn follow_camera(target: [f32; 3], width: u32, height: u32) -> Option<Camera> {
    let eye = [target[0], target[1] + 9.0, target[2] + 11.0];
    Camera::look_at(eye, target, 45f32.to_radians(), width, height)
}

/// How often the window's buffer is put on screen when no new picture was
/// drawn.
const REPRESENT: Duration = Duration::from_millis(250);

/// How [`GameWindow::run`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// The player closed the window (or pressed Esc).
    Closed,
    /// The match was over and the window had shown its end for the time
    /// asked.
    Lingered,
    /// The match side closed it ([`Screen::dismiss`]).
    Dismissed,
}

/// What drawing cost, for a report.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WindowStats {
    /// Pictures drawn (each a new frame or overlay).
    pub drawn: u64,
    /// The median time to draw one (scene, overlay, packing), in ms.
    pub median_draw_ms: f64,
}

/// An open window.
pub struct GameWindow {
    window: Window,
    canvas: Canvas,
    buffer: Vec<u32>,
    overview: Option<(Focus, Camera)>,
    view: View,
    seen: u64,
    draw_ms: Vec<f32>,
}

/// The box a scene asks to frame.
type Focus = ([f32; 3], [f32; 3]);

impl GameWindow {
    /// Opens a window of `settings`' size (on the X display `DISPLAY` names).
    pub fn open(settings: &WindowSettings) -> Result<GameWindow, WindowError> {
        let (w, h) = (settings.width.max(1), settings.height.max(1));
        let mut window = Window::new(
            &settings.title,
            w as usize,
            h as usize,
            WindowOptions::default(),
        )
        .map_err(|e| WindowError::Open(e.to_string()))?;
        window.set_target_fps(60);
        if let Some((x, y)) = settings.position {
            window.set_position(x as isize, y as isize);
        }
        Ok(GameWindow {
            window,
            canvas: Canvas::new(w, h),
            buffer: vec![0; w as usize * h as usize],
            overview: None,
            view: settings.view,
            seen: 0,
            draw_ms: Vec::new(),
        })
    }

    /// The picture drawn last (what the window shows).
    pub fn picture(&self) -> &Canvas {
        &self.canvas
    }

    /// What drawing has cost so far.
    pub fn stats(&self) -> WindowStats {
        let mut ms = self.draw_ms.clone();
        ms.sort_by(f32::total_cmp);
        WindowStats {
            drawn: ms.len() as u64,
            median_draw_ms: ms.get(ms.len() / 2).map_or(0.0, |m| f64::from(*m)),
        }
    }

    /// Runs until the player closes the window, the match side dismisses
    /// it, or, with `linger`, the match has been over for that long.
    pub fn run(
        &mut self,
        screen: &Screen,
        linger: Option<Duration>,
    ) -> Result<Ending, WindowError> {
        let mut over_since: Option<Instant> = None;
        // When the next picture may be drawn, and when the buffer was last
        // put on screen.
        let mut next_draw = Instant::now();
        let mut presented: Option<Instant> = None;
        loop {
            if !self.window.is_open() || self.window.is_key_down(Key::Escape) {
                screen.leave();
                return Ok(Ending::Closed);
            }
            if screen.is_dismissed() {
                return Ok(Ending::Dismissed);
            }
            screen.hold(cubes_input(|k| self.window.is_key_down(k)));
            if self.window.is_key_pressed(Key::C, KeyRepeat::No) {
                self.view = match self.view {
                    View::Overview => View::Follow,
                    View::Follow => View::Overview,
                };
                // Draw the newest picture again, through the other camera.
                self.seen = 0;
            }
            let fresh = match screen.newer_than(self.seen) {
                Some(new) if Instant::now() >= next_draw => Some(new),
                _ => None,
            };
            let drew = fresh.is_some();
            if let Some((n, picture)) = fresh {
                let started = Instant::now();
                self.seen = n;
                let (w, h) = (self.canvas.width(), self.canvas.height());
                let focus = picture.scene.focus;
                if self.overview.as_ref().is_none_or(|(f, _)| *f != focus) {
                    self.overview = Some((focus, Camera::overview(&picture.scene, w, h)));
                }
                let following = match (self.view, picture.follow) {
                    (View::Follow, Some(target)) => follow_camera(target, w, h),
                    _ => None,
                };
                if let Some(camera) = following.as_ref().or(self.overview.as_ref().map(|o| &o.1)) {
                    compose(&mut self.canvas, &picture, camera);
                }
                to_xrgb(&self.canvas, &mut self.buffer);
                let took = started.elapsed();
                self.draw_ms.push(took.as_secs_f32() * 1000.0);
                next_draw = started + took * 2;
            }
            // The buffer goes to the screen when it changed, and a few
            // times a second anyway (an X server without a compositor
            // forgets a covered window's pixels); in between, only events.
            if drew || presented.is_none_or(|t| t.elapsed() >= REPRESENT) {
                self.window
                    .update_with_buffer(
                        &self.buffer,
                        self.canvas.width() as usize,
                        self.canvas.height() as usize,
                    )
                    .map_err(|e| WindowError::Present(e.to_string()))?;
                presented = Some(Instant::now());
            } else {
                self.window.update();
            }
            if screen.is_over() {
                let since = *over_since.get_or_insert_with(Instant::now);
                if linger.is_some_and(|l| since.elapsed() >= l) {
                    return Ok(Ending::Lingered);
                }
            }
        }
    }
}

/// Draws `picture` on `canvas` through `camera`: the scene as `lockstep
/// render` draws it, then the overlay's lines (2× at 720 rows: the window's
/// overlay has more to say than a picture's, and stays on screen).
pub fn compose(canvas: &mut Canvas, picture: &Picture, camera: &Camera) {
    draw_scene(canvas, &picture.scene, camera);
    let overlay = picture
        .hud
        .lines()
        .into_iter()
        .fold(Overlay::new(), Overlay::line);
    overlay.scale(canvas.height() / 360).draw(canvas);
}

/// The canvas as 0RGB words, row by row (minifb's and X11's 24-bit layout).
pub fn to_xrgb(canvas: &Canvas, buffer: &mut Vec<u32>) {
    buffer.clear();
    buffer.extend(
        canvas
            .pixels()
            .iter()
            .map(|p| (u32::from(p.0) << 16) | (u32::from(p.1) << 8) | u32::from(p.2)),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hud::Hud;
    use lockstep_games::Demo;
    use lockstep_games::cubes::Cubes;
    use lockstep_render::{Depict, Rgb};
    use lockstep_sim::{Game, Match};

    #[test]
    fn the_window_draws_what_render_draws_under_its_overlay() {
        let setup = Match {
            seats: 2,
            ..Match::default()
        };
        let game = Cubes::new(&Cubes::default_config(), &setup).unwrap();
        let picture = Picture {
            scene: game.scene(),
            follow: None,
            hud: Hud {
                game: "cubes".into(),
                seats: 2,
                ..Hud::default()
            },
        };
        let (w, h) = (320, 180);
        let camera = Camera::overview(&picture.scene, w, h);
        let mut window = Canvas::new(w, h);
        compose(&mut window, &picture, &camera);
        let mut render = Canvas::new(w, h);
        draw_scene(&mut render, &picture.scene, &camera);
        // The overlay covers the top-left corner only; the bottom half is
        // the scene, pixel for pixel.
        let half = (w * h / 2) as usize;
        assert_eq!(window.pixels()[half..], render.pixels()[half..]);
        assert_ne!(window.pixels()[..half], render.pixels()[..half]);
    }

    #[test]
    fn the_following_camera_puts_the_players_cube_in_the_middle() {
        let setup = Match {
            seats: 2,
            ..Match::default()
        };
        let game = Cubes::new(&Cubes::default_config(), &setup).unwrap();
        let (w, h) = (320, 180);
        for seat in 0..2 {
            let target = game.camera_target(seat).unwrap();
            let camera = follow_camera(target, w, h).unwrap();
            let mut canvas = Canvas::new(w, h);
            draw_scene(&mut canvas, &game.scene(), &camera);
            let centre = canvas.pixel(w / 2, h / 2).unwrap();
            let colour = lockstep_render::player_colour(seat);
            // Shaded, but the player's own hue: its strongest channel leads.
            let channels = [centre.0, centre.1, centre.2];
            let strongest = [colour.0, colour.1, colour.2]
                .iter()
                .enumerate()
                .max_by_key(|c| *c.1)
                .unwrap()
                .0;
            let (lead, rest) = (channels[strongest], channels.iter().copied().min().unwrap());
            assert!(
                lead > rest.saturating_add(60),
                "seat {seat}: {centre:?} at the centre"
            );
        }
    }

    #[test]
    fn pixels_pack_as_0rgb() {
        let mut canvas = Canvas::new(2, 1);
        canvas.put(0, 0, Rgb(0x12, 0x34, 0x56));
        canvas.put(1, 0, Rgb(255, 0, 1));
        let mut buffer = vec![7; 9];
        to_xrgb(&canvas, &mut buffer);
        assert_eq!(buffer, [0x0012_3456, 0x00ff_0001]);
    }
}

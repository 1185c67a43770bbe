//! An interactive window for the cube demo: the match drawn by
//! `lockstep-render`'s software rasteriser (no GPU), the keyboard read as the
//! local player's buttons, and an overlay of the frame, the link and the
//! checksum agreement.
//!
//! The window and the match run on two threads. Whoever plays the match — a
//! local loop against bots, or the `lockstep` command's networked seat,
//! which hands the window the seat's peer after every event —
//! [`show`](Screen::show)s a [`Picture`] per frame stepped
//! and reads the [`held`](Screen::held) buttons; the window, on the thread
//! that opened it, draws the newest picture at up to 60 frames a second and
//! holds the buttons the keys say. Neither waits for the other, so drawing
//! never delays a frame of the match, and nothing drawn flows back into it:
//! the only thing the window gives the match is the input, which the
//! protocol carries to every seat like any other.
//!
//! The parts, one file each:
//! - [`controls`]: the keys (arrows, space, Z) as a cubes player's buttons;
//! - [`hud`]: [`Hud`], the overlay's numbers, and the text they make;
//! - [`screen`]: [`Screen`], the newest picture one way and the held
//!   buttons the other;
//! - [`seat`]: a networked seat's `Peer` as a picture and link numbers;
//! - [`window`]: [`GameWindow`], the minifb (X11) window that draws (the
//!   overview, or a camera following the local cube) and reads the keys.
//!
//! It needs an X display at run time (`DISPLAY`; Xvfb serves for tests),
//! with `libX11` and `libXcursor`, which minifb loads when the window opens.
//!
//! ```no_run
//! use lockstep_games::Demo;
//! use lockstep_games::cubes::Cubes;
//! use lockstep_render::Depict;
//! use lockstep_sim::{Game, Match};
//! use lockstep_window::{GameWindow, Hud, Picture, Screen, View, WindowSettings};
//!
//! let screen = Screen::new();
//! let settings = WindowSettings {
//!     title: "cubes".into(),
//!     width: 1280,
//!     height: 720,
//!     position: None,
//!     view: View::Follow,
//! };
//! let mut window = GameWindow::open(&settings).expect("an X display");
//! let board = screen.clone();
//! let game_thread = std::thread::spawn(move || {
//!     let setup = Match { seats: 1, ..Match::default() };
//!     let mut game = Cubes::new(&Cubes::default_config(), &setup).unwrap();
//!     for frame in 0..600 {
//!         game.step(frame, &[board.held()]);
//!         let hud = Hud { game: "cubes".into(), seats: 1, frame: frame + 1, ..Hud::default() };
//!         board.show(Picture { scene: game.scene(), follow: game.camera_target(0), hud });
//!         std::thread::sleep(std::time::Duration::from_millis(16));
//!     }
//! });
//! window.run(&screen, None).unwrap();
//! game_thread.join().unwrap();
//! ```
// Floats are fine here: the window is outside the deterministic set and
// nothing it computes flows back into a simulation (see above).
#![allow(clippy::float_arithmetic)]

pub mod controls;
pub mod hud;
pub mod screen;
pub mod seat;
pub mod window;

pub use hud::{Hud, LinkStatus, Phase};
pub use screen::{Picture, Screen};
pub use window::{Ending, GameWindow, View, WindowError, WindowSettings, WindowStats};

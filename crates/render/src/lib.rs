//! Pictures of lockstep matches: a small software rasteriser that draws a
//! game state, PNG and GIF output, and line charts of the experiments.
//!
//! Nothing here is part of the deterministic set. The crate only *reads*
//! game states (through the games' public accessors), converts their
//! fixed-point poses to `f32` and draws them; nothing it computes flows back
//! into a simulation, and its output bytes need not be identical across
//! machines. No crate of the deterministic set, nor `protocol` or `peer`,
//! depends on it.
//!
//! The parts, one file each:
//! - [`scene`]: what to draw — [`Scene`] of [`Solid`]s (boxes and spheres
//!   with a colour and a key), the ground, and the area to frame;
//! - [`depict`]: [`Depict`], turning a `Cubes` or `Rts` state into a
//!   [`Scene`], and the player colours and their names;
//! - [`camera`]: [`Camera`], a perspective look-at camera that frames a
//!   scene;
//! - [`canvas`]: [`Canvas`], a colour and depth buffer with z-buffered
//!   triangles, shaded sphere discs, lines and rectangles;
//! - [`draw`]: [`draw_scene`], the scene through the camera onto a canvas
//!   with lambert shading from a fixed light, and [`Overlay`] text;
//! - [`font`]: a built-in 5 × 7 bitmap font (digits, letters, a little
//!   punctuation);
//! - [`encode`]: PNG files and [`GifWriter`] (exact palettes when a picture
//!   has at most 256 colours, changed-rectangle frames);
//! - [`plot`]: [`LineChart`], drawn to a canvas (PNG) or written as SVG.
//!
//! ```
//! use lockstep_games::Demo;
//! use lockstep_games::cubes::Cubes;
//! use lockstep_render::{Camera, Canvas, Depict, Overlay, draw_scene};
//! use lockstep_sim::{Game, Match};
//!
//! let game = Cubes::new(&Cubes::default_config(), &Match::default()).unwrap();
//! let scene = game.scene();
//! let mut canvas = Canvas::new(160, 90);
//! let camera = Camera::overview(&scene, canvas.width(), canvas.height());
//! draw_scene(&mut canvas, &scene, &camera);
//! Overlay::new().line("FRAME 0").draw(&mut canvas);
//! let png = lockstep_render::encode::png_bytes(&canvas).unwrap();
//! assert!(png.starts_with(b"\x89PNG"));
//! ```
// Floats are fine here: this crate is outside the deterministic set and
// nothing it computes flows back into a simulation (see above).
#![allow(clippy::float_arithmetic)]

pub mod camera;
pub mod canvas;
pub mod depict;
pub mod draw;
pub mod encode;
pub mod font;
pub mod plot;
pub mod scene;
#[cfg(feature = "shipped")]
mod shipped;

pub use camera::Camera;
pub use canvas::{Canvas, Rgb};
pub use depict::{Depict, player_colour, player_colour_name};
pub use draw::{Overlay, draw_scene};
pub use encode::{EncodeError, GifWriter};
pub use plot::{LineChart, Series};
pub use scene::{Ground, Scene, Shape, Solid};

//! The keyboard as a cubes player's six buttons.
//!
//! | key | button | what the cube does |
//! |---|---|---|
//! | ← / → | `left` / `right` | pushed along −x / +x (left / right on screen) |
//! | ↑ / ↓ | `up` / `down` | pushed along −z / +z (away / towards: the camera looks along −z) |
//! | space | `space` | lifts and blows the nearby cubes away |
//! | Z | `z` | katamari: the cubes it touches stick to it |
//!
//! Invariant: the mapping is a pure function of the keys held at the moment
//! of reading ([`cubes_input`]); the session samples it once per frame, so
//! a key pressed and released between two samples is not seen, as in the
//! cube demo the engine comes from.

use lockstep_games::cubes::CubesInput;
use minifb::Key;

/// The keys the window reads, and the button each one holds.
pub const KEYS: [(Key, Button); 6] = [
    (Key::Left, Button::Left),
    (Key::Right, Button::Right),
    (Key::Up, Button::Up),
    (Key::Down, Button::Down),
    (Key::Space, Button::Space),
    (Key::Z, Button::Z),
];

/// One of a cubes player's buttons.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Button {
    /// Push towards −x.
    Left,
    /// Push towards +x.
    Right,
    /// Push towards −z.
    Up,
    /// Push towards +z.
    Down,
    /// Lift and blow.
    Space,
    /// Katamari.
    Z,
}

/// The buttons held while `held(key)` says each key is down.
pub fn cubes_input(held: impl Fn(Key) -> bool) -> CubesInput {
    let mut input = CubesInput::NONE;
    for (key, button) in KEYS {
        if held(key) {
            match button {
                Button::Left => input.left = true,
                Button::Right => input.right = true,
                Button::Up => input.up = true,
                Button::Down => input.down = true,
                Button::Space => input.space = true,
                Button::Z => input.z = true,
            }
        }
    }
    input
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_key_holds_its_own_button_and_others_hold_none() {
        assert_eq!(cubes_input(|_| false), CubesInput::NONE);
        let only = |k: Key| cubes_input(move |held| held == k).to_bits();
        // Bits LSB first: left, right, up, down, space, z.
        assert_eq!(only(Key::Left), 1);
        assert_eq!(only(Key::Right), 2);
        assert_eq!(only(Key::Up), 4);
        assert_eq!(only(Key::Down), 8);
        assert_eq!(only(Key::Space), 16);
        assert_eq!(only(Key::Z), 32);
        for other in [Key::A, Key::W, Key::Escape, Key::Enter, Key::X] {
            assert_eq!(only(other), 0, "{other:?}");
        }
        assert_eq!(cubes_input(|_| true).to_bits(), 63);
    }
}

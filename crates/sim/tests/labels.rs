//! What a diff says about a derived state whose own fields come after lists
//! of entities: those fields are the state's (not the last entity's), and
//! a list's length is a number.

use lockstep_codec::input::Buttons;
use lockstep_derive::Canonical;
use lockstep_fx::{Canonical, Sink, StateWriter, Vec2};
use lockstep_sim::{Frame, Game, Match, SetupError, StateError, diff_states};

#[derive(Debug, Clone, PartialEq, Eq, Canonical)]
#[canonical(entity = "tank", ids(id))]
struct Tank {
    id: u32,
    position: Vec2,
    hp: u16,
}

#[derive(Debug, Clone, PartialEq, Eq, Canonical)]
#[canonical(entity = "shell", ids(id))]
struct Shell {
    id: u32,
    position: Vec2,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, Canonical)]
struct Rules {
    hp: u16,
}

/// A tank skirmish's state: lists of entities, then the state's own fields.
#[derive(Debug, Clone, PartialEq, Eq, Canonical)]
struct Skirmish {
    tanks: Vec<Tank>,
    shells: Vec<Shell>,
    losses: u32,
    frame: u32,
}

impl Game for Skirmish {
    type Input = Buttons;
    type Config = Rules;
    const ID: &'static str = "skirmish";
    const VERSION: u32 = 1;

    fn new(_rules: &Rules, _setup: &Match) -> Result<Skirmish, SetupError> {
        Ok(state(9, 0))
    }
    fn step(&mut self, _frame: Frame, _inputs: &[Buttons]) {}
    fn encode<S: Sink>(&self, w: &mut StateWriter<S>) {
        Canonical::encode(self, w);
    }
    fn decode(bytes: &[u8]) -> Result<Skirmish, StateError> {
        Ok(Skirmish::from_canonical(bytes)?)
    }
}

fn state(tanks: u32, losses: u32) -> Skirmish {
    Skirmish {
        tanks: (0..tanks)
            .map(|id| Tank {
                id,
                position: Vec2::from_ints(id as i32, 0),
                hp: 10,
            })
            .collect(),
        shells: vec![Shell {
            id: 1,
            position: Vec2::ZERO,
        }],
        losses,
        frame: 100,
    }
}

#[test]
fn fields_after_entity_lists_are_the_states_and_lengths_are_numbers() {
    let (a, b) = (state(9, 2), state(11, 3));
    let lines: Vec<String> = diff_states::<Skirmish>(&a.to_canonical(), &b.to_canonical())
        .unwrap()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        lines,
        [
            "state · tanks: length 9 ≠ length 11",
            "state · losses: 2 ≠ 3",
            // The two tanks only one state has.
            "tank 9 · id: (absent) ≠ 9",
            "tank 9 · position: (absent) ≠ Vec2 { x: 9.0, y: 0.0 }",
            "tank 9 · hp: (absent) ≠ 10",
            "tank 10 · id: (absent) ≠ 10",
            "tank 10 · position: (absent) ≠ Vec2 { x: 10.0, y: 0.0 }",
            "tank 10 · hp: (absent) ≠ 10",
        ],
        "{lines:#?}"
    );
}

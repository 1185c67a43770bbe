//! stub
use bevy_app as _;
use bevy_ecs as _;
use lockstep_games as _;
#[test]
fn stub() {}
